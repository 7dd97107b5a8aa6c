//! `<binary> knowledge index` and `<binary> knowledge status`: the index seen from the command
//! line (never reachable over MCP).

use std::path::PathBuf;
use std::process::ExitCode;

use rusqlite::Connection;

use super::Knowledge;
use super::error::CommandError;
use super::index::{self, Options};
use super::store;
use crate::spec::app::KnowledgeSpec;

/// `knowledge index [--reindex] [--prune] [PATH...]`: without paths, the configured
/// `harness.knowledge.paths`, with documents no longer found there removed.
pub(crate) fn index(
    spec: &'static KnowledgeSpec,
    identity: &str,
    reindex: bool,
    prune: bool,
    paths: Vec<PathBuf>,
) -> ExitCode {
    let result = (|| {
        let cwd = std::env::current_dir().map_err(CommandError::WorkingDirectory)?;
        let knowledge = Knowledge::open_for_index(spec, identity, &cwd)?;
        let (paths, prune) = if paths.is_empty() {
            if spec.paths.is_empty() {
                return Err(CommandError::NoConfiguredPaths);
            }
            (spec.paths.iter().map(PathBuf::from).collect(), true)
        } else {
            (paths, prune)
        };
        let reindex_command = knowledge.reindex_command();
        let options = Options {
            reindex,
            prune,
            paths: &paths,
            reindex_command: &reindex_command,
        };
        let stats = index::run(
            knowledge.dir(),
            knowledge.embedder(),
            &options,
            &mut |note| eprintln!("note: {note}"),
        )?;
        println!(
            "Indexed {} file{} into {}: {} added, {} updated, {} unchanged, {} removed; {} \
             chunks, {} embedded",
            stats.files,
            if stats.files == 1 { "" } else { "s" },
            knowledge.dir().join(store::DB_FILE).display(),
            stats.added,
            stats.updated,
            stats.unchanged,
            stats.removed,
            stats.chunks,
            stats.embedded
        );
        Ok(())
    })();
    finish(result)
}

/// `knowledge status`: where the index is, its tier and counts.
pub(crate) fn status(spec: &'static KnowledgeSpec, identity: &str) -> ExitCode {
    let result = (|| {
        let cwd = std::env::current_dir().map_err(CommandError::WorkingDirectory)?;
        let knowledge = Knowledge::open_for_index(spec, identity, &cwd)?;
        let path = knowledge.dir().join(store::DB_FILE);
        println!("index: {}", path.display());
        let counted = knowledge.pool.with(counts);
        match counted {
            Err(store::Unavailable::NotBuilt) => {
                println!("status: not built (run: {identity}-mcp knowledge index)");
            }
            Err(store::Unavailable::Failed(error)) => return Err(error.into()),
            Ok(counted) => {
                let (documents, chunks, meta) = counted?;
                println!("documents: {documents}\nchunks: {chunks}");
                println!("format_version: {}", meta.format_version);
                if meta.model.is_empty() {
                    println!("vectors: none (lexical-only index)");
                } else {
                    println!(
                        "vectors: model={} dim={} normalized={}",
                        meta.model, meta.dimension, meta.normalized
                    );
                }
            }
        }
        for line in knowledge.startup_notes() {
            println!("{line}");
        }
        Ok(())
    })();
    finish(result)
}

/// The documents, the chunks and the manifest of an index.
fn counts(conn: &Connection) -> Result<(i64, i64, super::Meta), CommandError> {
    let count = |sql: &str| -> Result<i64, CommandError> {
        conn.query_row(sql, [], |row| row.get(0))
            .map_err(CommandError::Count)
    };
    Ok((
        count("SELECT count(*) FROM documents")?,
        count("SELECT count(*) FROM chunks")?,
        store::read_meta(conn)?,
    ))
}

/// The exit code; an error is printed first.
fn finish(result: Result<(), CommandError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
