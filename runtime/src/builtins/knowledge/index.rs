//! `<binary> knowledge index`: builds and refreshes the index in Fisk AI's format.
//!
//! Markdown and text files (`.md`, `.markdown`, `.txt`, `.text`) below the given paths are
//! chunked by headings and stored with their SHA-256; a file whose hash is unchanged is skipped,
//! a changed one is replaced whole (the triggers keep `chunks_fts` and `chunks_vec` in step). With
//! embeddings configured the model's dimension is probed first and pinned in `rag_meta`, and a
//! different model, dimension or prefix is refused until `--reindex`. Embedding happens outside
//! the write transaction. One writer at a time (an advisory lock); readers (a running server) are
//! never blocked, thanks to WAL. The directory is created 0700, the file 0600.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use rusqlite::{Connection, OptionalExtension};
use sha2::{Digest, Sha256};

use super::chunk::{self, Chunk};
use super::embeddings::{Embedder, to_blob};
use super::error::IndexError;
use super::store::{self, DB_FILE, LOCK_FILE, VectorIdentity};
use super::walk::walk;
use super::{FORMAT_VERSION, Meta};

/// What one run does.
#[derive(Debug)]
pub(crate) struct Options<'a> {
    /// Drop everything (vectors included) and rebuild.
    pub(crate) reindex: bool,
    /// Remove indexed documents not seen under the paths.
    pub(crate) prune: bool,
    /// Files and directories to walk.
    pub(crate) paths: &'a [PathBuf],
    /// The command that rebuilds, for messages.
    pub(crate) reindex_command: &'a str,
}

/// What one run did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Stats {
    /// Files seen.
    pub(crate) files: usize,
    /// New documents.
    pub(crate) added: usize,
    /// Changed documents.
    pub(crate) updated: usize,
    /// Unchanged documents.
    pub(crate) unchanged: usize,
    /// Documents removed (with `prune`).
    pub(crate) removed: usize,
    /// Chunks of the documents seen.
    pub(crate) chunks: usize,
    /// Chunks embedded in this run.
    pub(crate) embedded: usize,
}

/// Indexes `options.paths` into `dir`, reporting skipped files through `note`.
pub(crate) fn run(
    dir: &Path,
    embedder: Option<&Embedder>,
    options: &Options<'_>,
    note: &mut dyn FnMut(String),
) -> Result<Stats, IndexError> {
    if options.paths.is_empty() {
        return Err(IndexError::NoPaths);
    }
    // Before anything is created: a typo must not leave an empty index behind.
    for path in options.paths {
        std::fs::symlink_metadata(path).map_err(|source| IndexError::Missing {
            path: path.clone(),
            source,
        })?;
    }
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|source| IndexError::CreateDirectory {
            path: dir.to_path_buf(),
            source,
        })?;
    let _lock = lock(&dir.join(LOCK_FILE))?;
    let db_path = dir.join(DB_FILE);
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(&db_path)
        .map_err(|source| IndexError::CreateIndex {
            path: db_path.clone(),
            source,
        })?;
    store::register_vec();
    let fail = |source| IndexError::Database {
        path: db_path.clone(),
        source,
    };
    let mut conn = Connection::open(&db_path).map_err(fail)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .map_err(fail)?;
    conn.execute_batch(
        "PRAGMA auto_vacuum = FULL; PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON;",
    )
    .map_err(fail)?;
    store::verify_fts5(&conn)?;
    let prior: i64 = if store::has_table(&conn, "documents").map_err(IndexError::Schema)? {
        count(&conn, "SELECT count(*) FROM documents")?
    } else {
        0
    };
    if options.reindex {
        conn.execute_batch(RESET).map_err(IndexError::Reset)?;
    } else {
        // Refreshing an older format would write chunks the tools cannot read.
        store::check_format(&conn, options.reindex_command)?;
    }
    conn.execute_batch(SCHEMA).map_err(IndexError::Schema)?;
    enforce_permissions(&db_path)?;
    prepare_vectors(&conn, embedder, options)?;

    let store_dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut stats = Stats::default();
    let mut seen = std::collections::HashSet::new();
    for root in options.paths {
        let mut files = Vec::new();
        walk(root, root, &store_dir, &mut files, note)?;
        for (key, path) in files {
            if !seen.insert(key.clone()) {
                continue;
            }
            ingest(
                &mut conn,
                embedder,
                &key,
                &path,
                options.reindex,
                &mut stats,
                note,
            )?;
        }
    }
    if options.prune && !seen.is_empty() {
        let known: Vec<String> = {
            let mut statement = conn.prepare("SELECT path FROM documents").map_err(fail)?;
            let rows = statement
                .query_map([], |row| row.get::<_, String>(0))
                .map_err(fail)?;
            rows.collect::<Result<_, _>>().map_err(fail)?
        };
        for path in known.into_iter().filter(|path| !seen.contains(path)) {
            let tx = conn.transaction().map_err(fail)?;
            tx.execute(
                "DELETE FROM chunks WHERE document_id IN (SELECT id FROM documents WHERE path = ?1)",
                [&path],
            )
            .map_err(fail)?;
            tx.execute("DELETE FROM documents WHERE path = ?1", [&path])
                .map_err(fail)?;
            tx.commit().map_err(fail)?;
            stats.removed += 1;
        }
    }
    if prior == 0 && stats.files == 0 {
        note("no Markdown or text files found under the given paths".into());
    }
    Ok(stats)
}

/// The base schema (docs/builtins.md, "The index"), Fisk AI's format 2, created when missing.
/// `chunks.body` is the section's text alone (the breadcrumb lives in `heading_path`); the
/// stemmed `chunks_fts` and the exact-word `chunks_fts_exact` index both columns, and
/// `chunks_vocab` lists the exact table's words.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS documents (
    id    INTEGER PRIMARY KEY,
    path  TEXT NOT NULL UNIQUE,
    title TEXT,
    mtime INTEGER,
    hash  TEXT
);
CREATE TABLE IF NOT EXISTS chunks (
    id           INTEGER PRIMARY KEY,
    document_id  INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    heading_path TEXT,
    ordinal      INTEGER,
    body         TEXT NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    body,
    heading_path,
    content='chunks',
    content_rowid='id',
    tokenize='porter unicode61'
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts_exact USING fts5(
    body,
    heading_path,
    content='chunks',
    content_rowid='id',
    tokenize='unicode61'
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vocab USING fts5vocab('chunks_fts_exact', 'row');
CREATE TRIGGER IF NOT EXISTS chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, body, heading_path)
    VALUES (new.id, new.body, new.heading_path);
    INSERT INTO chunks_fts_exact(rowid, body, heading_path)
    VALUES (new.id, new.body, new.heading_path);
END;
CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, body, heading_path)
    VALUES ('delete', old.id, old.body, old.heading_path);
    INSERT INTO chunks_fts_exact(chunks_fts_exact, rowid, body, heading_path)
    VALUES ('delete', old.id, old.body, old.heading_path);
END;
CREATE TRIGGER IF NOT EXISTS chunks_au AFTER UPDATE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, body, heading_path)
    VALUES ('delete', old.id, old.body, old.heading_path);
    INSERT INTO chunks_fts_exact(chunks_fts_exact, rowid, body, heading_path)
    VALUES ('delete', old.id, old.body, old.heading_path);
    INSERT INTO chunks_fts(rowid, body, heading_path)
    VALUES (new.id, new.body, new.heading_path);
    INSERT INTO chunks_fts_exact(rowid, body, heading_path)
    VALUES (new.id, new.body, new.heading_path);
END;
CREATE TABLE IF NOT EXISTS rag_meta (key TEXT PRIMARY KEY, value TEXT);
";

/// `--reindex`, run before [`SCHEMA`]: every schema object dropped, triggers first (as Fisk AI
/// does), so an index of any older format (other columns, no exact-word table) is rebuilt
/// from nothing and [`SCHEMA`] stays the one definition.
const RESET: &str = "
DROP TRIGGER IF EXISTS chunks_ai;
DROP TRIGGER IF EXISTS chunks_ad;
DROP TRIGGER IF EXISTS chunks_au;
DROP TRIGGER IF EXISTS chunks_ad_vec;
DROP TABLE IF EXISTS chunks_vocab;
DROP TABLE IF EXISTS chunks_fts;
DROP TABLE IF EXISTS chunks_fts_exact;
DROP TABLE IF EXISTS chunks_vec;
DROP TABLE IF EXISTS chunks;
DROP TABLE IF EXISTS documents;
DROP TABLE IF EXISTS rag_meta;
";

/// The advisory lock that keeps two writers apart.
fn lock(path: &Path) -> Result<File, IndexError> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
        .map_err(|source| IndexError::OpenLock {
            path: path.to_path_buf(),
            source,
        })?;
    // A short grace: a lock just released can linger while a forked child of this process
    // still holds the descriptor (until its exec closes it).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(IndexError::Busy);
            }
            Err(std::fs::TryLockError::Error(source)) => {
                return Err(IndexError::Lock {
                    path: path.to_path_buf(),
                    source,
                });
            }
        }
    }
}

/// The index and its WAL files private (0600), and never symbolic links.
fn enforce_permissions(db: &Path) -> Result<(), IndexError> {
    for suffix in ["", "-wal", "-shm"] {
        let path = PathBuf::from(format!("{}{suffix}", db.display()));
        let Ok(metadata) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if metadata.file_type().is_symlink() {
            return Err(IndexError::Symlink { path });
        }
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
            .map_err(|source| IndexError::Permissions { path, source })?;
    }
    Ok(())
}

/// One number the index is asked for.
fn count(conn: &Connection, sql: &str) -> Result<i64, IndexError> {
    conn.query_row(sql, [], |row| row.get(0))
        .map_err(IndexError::Count)
}

/// Pins the manifest: the format only (lexical), or the vector identity after probing the
/// model's dimension, refusing a mismatch with an existing index.
fn prepare_vectors(
    conn: &Connection,
    embedder: Option<&Embedder>,
    options: &Options<'_>,
) -> Result<(), IndexError> {
    let Some(embedder) = embedder else {
        store::write_meta(
            conn,
            &Meta {
                format_version: FORMAT_VERSION,
                ..Meta::default()
            },
        )?;
        return Ok(());
    };
    let dimension = embedder.probe_dimension().map_err(IndexError::Probe)?;
    let spec = embedder.spec();
    let desired = Meta {
        format_version: FORMAT_VERSION,
        model: spec.model.to_string(),
        dimension,
        normalized: true,
        query_prefix: spec.query_prefix.to_string(),
        document_prefix: spec.document_prefix.to_string(),
    };
    let meta = store::read_meta(conn)?;
    if !options.reindex && !meta.model.is_empty() {
        if meta.dimension != dimension {
            return Err(IndexError::DimensionChanged {
                built_model: meta.model,
                built: meta.dimension,
                model: desired.model,
                dimension,
                reindex: options.reindex_command.to_string(),
            });
        }
        store::validate_meta(
            &meta,
            Some(VectorIdentity {
                model: spec.model,
                query_prefix: spec.query_prefix,
                document_prefix: spec.document_prefix,
            }),
            options.reindex_command,
        )?;
    }
    if !options.reindex && meta.model.is_empty() && count(conn, "SELECT count(*) FROM chunks")? > 0
    {
        return Err(IndexError::NowVectors {
            model: desired.model,
            reindex: options.reindex_command.to_string(),
        });
    }
    conn.execute_batch(&format!(
        "CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vec USING vec0(
            chunk_id  INTEGER PRIMARY KEY,
            embedding FLOAT[{dimension}]
        );
        CREATE TRIGGER IF NOT EXISTS chunks_ad_vec AFTER DELETE ON chunks BEGIN
            DELETE FROM chunks_vec WHERE chunk_id = old.id;
        END;"
    ))
    .map_err(|source| IndexError::VectorTable { dimension, source })?;
    store::write_meta(conn, &desired)?;
    Ok(())
}

/// Adds, replaces or skips one file.
fn ingest(
    conn: &mut Connection,
    embedder: Option<&Embedder>,
    key: &str,
    path: &Path,
    reindex: bool,
    stats: &mut Stats,
    note: &mut dyn FnMut(String),
) -> Result<(), IndexError> {
    let mut data = Vec::new();
    let metadata = File::open(path)
        .and_then(|mut file| {
            file.read_to_end(&mut data)?;
            file.metadata()
        })
        .map_err(|source| IndexError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    let Ok(text) = String::from_utf8(data) else {
        note(format!("skipping non-UTF-8 file {key:?}"));
        return Ok(());
    };
    stats.files += 1;
    let hash: String = Sha256::digest(text.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let fail = |source| IndexError::Document {
        key: key.to_string(),
        source,
    };
    let have: Option<Option<String>> = conn
        .query_row("SELECT hash FROM documents WHERE path = ?1", [key], |row| {
            row.get(0)
        })
        .optional()
        .map_err(fail)?;
    if !reindex && have.as_ref().is_some_and(|h| h.as_deref() == Some(&hash)) {
        stats.unchanged += 1;
        let chunks: i64 = conn
            .query_row(
                "SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id \
                 WHERE d.path = ?1",
                [key],
                |row| row.get(0),
            )
            .map_err(fail)?;
        stats.chunks += usize::try_from(chunks).unwrap_or(0);
        return Ok(());
    }
    let chunks = chunk::chunk_document(&text);
    let vectors = match embedder {
        Some(embedder) if !chunks.is_empty() => {
            let docs: Vec<(&str, String)> = chunks
                .iter()
                .map(|c| (c.heading_path.as_str(), c.folded()))
                .collect();
            let docs: Vec<(&str, &str)> = docs.iter().map(|(h, t)| (*h, t.as_str())).collect();
            let vectors = embedder
                .embed_documents(&docs)
                .map_err(|source| IndexError::Embed {
                    key: key.to_string(),
                    source,
                })?;
            if vectors.len() != chunks.len() {
                return Err(IndexError::VectorCount {
                    key: key.to_string(),
                    vectors: vectors.len(),
                    chunks: chunks.len(),
                });
            }
            Some(vectors)
        }
        _ => None,
    };
    let mtime = metadata
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    store_document(conn, key, mtime, &hash, &text, &chunks, vectors.as_deref()).map_err(fail)?;
    if have.is_some() && !reindex {
        stats.updated += 1;
    } else {
        stats.added += 1;
    }
    stats.chunks += chunks.len();
    if vectors.is_some() {
        stats.embedded += chunks.len();
    }
    Ok(())
}

/// Upserts the document and replaces its chunks (and vectors) in one transaction.
fn store_document(
    conn: &mut Connection,
    key: &str,
    mtime: i64,
    hash: &str,
    text: &str,
    chunks: &[Chunk],
    vectors: Option<&[Vec<f32>]>,
) -> Result<(), rusqlite::Error> {
    let tx = conn.transaction()?;
    let id: i64 = tx.query_row(
        "INSERT INTO documents(path, title, mtime, hash) VALUES(?1, ?2, ?3, ?4) \
         ON CONFLICT(path) DO UPDATE SET title = excluded.title, mtime = excluded.mtime, \
         hash = excluded.hash RETURNING id",
        (key, chunk::document_title(text), mtime, hash),
        |row| row.get(0),
    )?;
    tx.execute("DELETE FROM chunks WHERE document_id = ?1", [id])?;
    for (ordinal, chunk) in chunks.iter().enumerate() {
        let chunk_id: i64 = tx.query_row(
            "INSERT INTO chunks(document_id, heading_path, ordinal, body) \
             VALUES(?1, ?2, ?3, ?4) RETURNING id",
            (id, &chunk.heading_path, ordinal as i64, &chunk.body),
            |row| row.get(0),
        )?;
        if let Some(vector) = vectors.and_then(|v| v.get(ordinal)) {
            tx.execute(
                "INSERT INTO chunks_vec(chunk_id, embedding) VALUES(?1, ?2)",
                (chunk_id, to_blob(vector)),
            )?;
        }
    }
    tx.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_is_incremental_and_searchable() {
        let dir = tempfile::tempdir().expect("temp dir");
        let docs = dir.path().join("docs");
        std::fs::create_dir_all(docs.join(".git")).expect("mkdir");
        std::fs::write(
            docs.join("a.md"),
            "# Flow\n\nBackpressure slows producers.\n",
        )
        .expect("a");
        std::fs::write(docs.join("b.txt"), "plain text about retries\n").expect("b");
        std::fs::write(docs.join("c.png"), "not indexed").expect("c");
        std::fs::write(docs.join(".git/d.md"), "# hidden").expect("d");
        let store = dir.path().join("store");
        let paths = [docs.clone()];
        let options = Options {
            reindex: false,
            prune: true,
            paths: &paths,
            reindex_command: "x knowledge index --reindex",
        };
        let mut notes = Vec::new();
        let stats = run(&store, None, &options, &mut |n| notes.push(n)).expect("index");
        assert_eq!(
            (stats.files, stats.added, stats.chunks),
            (2, 2, 2),
            "{notes:?}"
        );
        let stats = run(&store, None, &options, &mut |n| notes.push(n)).expect("again");
        assert_eq!((stats.unchanged, stats.added, stats.updated), (2, 0, 0));
        std::fs::write(docs.join("a.md"), "# Flow\n\nchanged\n").expect("a");
        std::fs::remove_file(docs.join("b.txt")).expect("rm");
        let stats = run(&store, None, &options, &mut |n| notes.push(n)).expect("update");
        assert_eq!((stats.updated, stats.removed), (1, 1));

        let conn = Connection::open(store.join(DB_FILE)).expect("open");
        let path: String = conn
            .query_row("SELECT path FROM documents", [], |row| row.get(0))
            .expect("one document");
        assert_eq!(path, format!("{}/a.md", docs.display()));
        let hits: i64 = conn
            .query_row(
                "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'changes'",
                [],
                |row| row.get(0),
            )
            .expect("fts");
        assert_eq!(hits, 1, "porter stemming finds 'changed' for 'changes'");
        let mode = std::fs::metadata(store.join(DB_FILE))
            .expect("db")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    /// An index of an older format (format 1: the breadcrumb folded into `content`, no
    /// exact-word table) is refused by a refresh and by the server, with the command that
    /// rebuilds it; `--reindex` rebuilds it as format 2 with both tables filled.
    #[test]
    fn an_older_format_index_is_refused_until_reindexed() {
        let dir = tempfile::tempdir().expect("temp dir");
        let docs = dir.path().join("docs");
        std::fs::create_dir_all(&docs).expect("mkdir");
        std::fs::write(docs.join("a.md"), "# Flow\n\nDeprecated producers.\n").expect("a");
        let store = dir.path().join("store");
        std::fs::create_dir_all(&store).expect("mkdir");
        // What a build of format 1 wrote (docs/builtins.md, "The index").
        let conn = Connection::open(store.join(DB_FILE)).expect("open");
        conn.execute_batch(
            "CREATE TABLE documents (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE,
                 title TEXT, mtime INTEGER, hash TEXT);
             CREATE TABLE chunks (id INTEGER PRIMARY KEY, document_id INTEGER NOT NULL
                 REFERENCES documents(id) ON DELETE CASCADE, heading_path TEXT,
                 ordinal INTEGER, content TEXT NOT NULL);
             CREATE VIRTUAL TABLE chunks_fts USING fts5(content, heading_path,
                 content='chunks', content_rowid='id', tokenize='porter unicode61');
             CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
                 INSERT INTO chunks_fts(rowid, content, heading_path)
                 VALUES (new.id, new.content, new.heading_path);
             END;
             CREATE TABLE rag_meta (key TEXT PRIMARY KEY, value TEXT);
             INSERT INTO documents VALUES (1, 'docs/a.md', 'Flow', 0, 'x');
             INSERT INTO chunks VALUES (1, 1, 'Flow', 0, 'Flow\n\nDeprecated producers.');
             INSERT INTO rag_meta VALUES ('format_version', '1');",
        )
        .expect("a format-1 index");
        drop(conn);
        let paths = [docs.clone()];
        let mut options = Options {
            reindex: false,
            prune: true,
            paths: &paths,
            reindex_command: "x-mcp knowledge index --reindex",
        };
        let mut notes = Vec::new();
        let expected = "knowledge index was built in an older format and cannot be read by this \
                        build: its format_version is 1 and this build writes 2; rebuild it with \
                        'x-mcp knowledge index --reindex'";
        let refused = run(&store, None, &options, &mut |n| notes.push(n))
            .expect_err("a refresh of a format-1 index");
        assert_eq!(refused.to_string(), expected);
        let conn = Connection::open(store.join(DB_FILE)).expect("open");
        assert_eq!(
            store::check_format(&conn, options.reindex_command).map_err(|e| e.to_string()),
            Err(expected.to_string()),
            "serving refuses it with the same text"
        );
        // Without a format_version, the columns tell.
        conn.execute_batch("DELETE FROM rag_meta")
            .expect("no manifest");
        assert!(
            store::check_format(&conn, options.reindex_command).is_err_and(|e| e
                .to_string()
                .contains(
                    "its chunks table has columns (id, document_id, heading_path, ordinal, \
                     content) where this build needs (id, document_id, heading_path, ordinal, \
                     body)"
                )),
        );
        drop(conn);

        options.reindex = true;
        let stats = run(&store, None, &options, &mut |n| notes.push(n)).expect("reindex");
        assert_eq!((stats.files, stats.added), (1, 1), "{notes:?}");
        let conn = Connection::open(store.join(DB_FILE)).expect("open");
        assert_eq!(
            store::read_meta(&conn).expect("meta").format_version,
            FORMAT_VERSION
        );
        store::check_format(&conn, options.reindex_command).expect("format 2 passes the gate");
        let body: String = conn
            .query_row("SELECT body FROM chunks", [], |row| row.get(0))
            .expect("one chunk");
        assert_eq!(
            body, "Deprecated producers.",
            "the breadcrumb stays out of the body"
        );
        let exact: i64 = conn
            .query_row(
                "SELECT count(*) FROM chunks_fts_exact WHERE chunks_fts_exact MATCH 'deprecated'",
                [],
                |row| row.get(0),
            )
            .expect("exact table");
        assert_eq!(exact, 1, "the rebuilt exact-word table holds the chunk");
        // Without the exact-word table, a format-2 manifest is not enough.
        conn.execute_batch("DROP TABLE chunks_vocab").expect("drop");
        assert!(
            store::check_format(&conn, options.reindex_command)
                .is_err_and(|e| e.to_string().contains("its schema is missing chunks_vocab"))
        );
    }
}
