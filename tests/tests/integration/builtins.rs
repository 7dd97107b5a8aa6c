//! The built-in tools (`read_file`, `base64_encode`, `knowledge_*`) of `tasks-builtins-mcp`
//! (the golden crate `tests/expected/builtins`, generated from `tests/fixtures/builtins.yaml`
//! and built by `cargo build --workspace --bins`) with the official Python SDK over HTTP, in
//! both protocol eras. Each test runs one scenario of `tests/clients/python/builtins.py`.
//!
//! The tests share one server (started by the first test that needs it, stopped when the last
//! one holding it ends), running the demo app in a fresh working directory that holds every
//! file the scenarios read, a `corpus/` of Markdown and text, and the knowledge index built
//! from it by `tasks-builtins-mcp knowledge index corpus` before the server starts. It runs
//! with `--max-concurrent-tools 8`, so the eight concurrent searches really run at once. A
//! second server, in a directory without an index, answers `index_not_built`. Every process
//! and every wait is bounded.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use fiskgen_tests::clients;

use super::clients::{Finished, Server, run_bounded};
use tempfile::TempDir;

/// Bound of `tasks-builtins-mcp knowledge index`.
const INDEX_TIMEOUT: Duration = Duration::from_secs(60);
/// Bound of one Python script (each also bounds itself at 60 s).
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(90);

/// The chunks the corpus below is cut into (flow.md 3, storage.md 2, guide/retries.md 1,
/// notes.txt 1).
pub(super) const CORPUS_CHUNKS: usize = 7;

/// The corpus under `corpus/`: each section is one chunk. `.drafts/` (a dot-directory) and
/// `image.png` (not Markdown or text) must not be indexed.
const CORPUS: [(&str, &str); 6] = [
    (
        "flow.md",
        "# Flow control\n\nFlow control keeps producers and consumers in step.\n\n\
         ## Backpressure\n\nBackpressure slows fast producers when the consumer queue fills up. \
         Backpressure is signalled per stream, and backpressure never drops messages.\n\n\
         ## Retries\n\nA publisher retries a failed send three times with exponential delay.\n",
    ),
    (
        "storage.md",
        "# Storage\n\nTasks are stored in a JSON file next to the binary.\n\n## Compaction\n\n\
         Compaction rewrites the store file to drop deleted tasks. Under heavy backpressure, \
         compaction waits.\n",
    ),
    (
        "guide/retries.md",
        "# Retry policy\n\n## Retries and timeouts\n\nRetries happen after a timeout. Retries \
         back off exponentially, and retries stop after five attempts.\n",
    ),
    (
        "notes.txt",
        "Plain notes about the zebra migration, kept as text.\n",
    ),
    (
        ".drafts/hidden.md",
        "# Hidden\n\nBackpressure retries zebra compaction: a draft nobody may see.\n",
    ),
    ("image.png", "backpressure zebra, but not a document\n"),
];

// ---------------------------------------------------------------------------------------
// Bounded processes
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// The servers under test
// ---------------------------------------------------------------------------------------

/// A server in a working directory the test owns (removed after the server stops).
pub(super) struct Served {
    server: Server,
    /// The server's working directory, canonical (as the server sees it).
    root: PathBuf,
    /// A file outside every root.
    outside: PathBuf,
    /// Holds `root` and `outside`; dropped after `server`.
    _base: TempDir,
}

impl Served {
    /// A fresh `<base>/server` with the fixture files (and the corpus, not indexed) and a
    /// secret in `<base>/outside`; the server is started by `serve`.
    pub(super) fn prepare() -> Result<(TempDir, PathBuf, PathBuf)> {
        let base = tempfile::tempdir().context("creating the test directory")?;
        let canonical = base
            .path()
            .canonicalize()
            .context("resolving the test directory")?;
        let root = canonical.join("server");
        let outside = canonical.join("outside").join("secret.txt");
        write_fixture(&root, &outside)?;
        Ok((base, root, outside))
    }

    /// Starts the server in `root` with `extra` flags, exporting no spans (`NO_TELEMETRY=1`:
    /// builtins.yaml enables telemetry, which `telemetry.rs` tests).
    fn serve(base: TempDir, root: PathBuf, outside: PathBuf, extra: &[&str]) -> Result<Served> {
        let server = Server::spawn_env(
            &clients::builtins_server()?,
            &root,
            extra,
            &[("NO_TELEMETRY", "1")],
        )?;
        Ok(Served {
            server,
            root,
            outside,
            _base: base,
        })
    }

    /// Runs `builtins.py --scenario <scenario>` against this server in `mode`; it must pass
    /// and report the protocol version the mode negotiates.
    fn script(&self, scenario: &str, mode: &str, extra: &[&str]) -> Result<Finished> {
        let interpreter = clients::python()?;
        let mut cmd = Command::new(interpreter);
        cmd.arg(clients::scripts_dir().join("builtins.py"))
            .args(["--url", &self.server.url, "--mode", mode])
            .args(["--scenario", scenario])
            .arg("--dir")
            .arg(&self.root)
            .arg("--outside")
            .arg(&self.outside)
            .args(extra)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("PYTHONUNBUFFERED", "1");
        let what = format!("builtins.py --scenario {scenario} --mode {mode} {extra:?}");
        let finished = run_bounded(&mut cmd, SCRIPT_TIMEOUT, &what)?.success()?;
        finished.has_line("PASS")?;
        let negotiated = if mode == "legacy" { "2025-11-25" } else { mode };
        finished.has_line(&format!("protocol: {negotiated}"))?;
        Ok(finished)
    }
}

/// The server the tests share: the fixture, the corpus indexed before it starts.
fn shared() -> Result<Arc<Served>> {
    static SHARED: Mutex<Weak<Served>> = Mutex::new(Weak::new());
    let mut slot = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(served) = slot.upgrade() {
        return Ok(served);
    }
    let (base, root, outside) = Served::prepare()?;
    build_index(&root)?;
    let served = Arc::new(Served::serve(
        base,
        root,
        outside,
        &["--max-concurrent-tools", "8"],
    )?);
    *slot = Arc::downgrade(&served);
    Ok(served)
}

/// Writes the files the scenarios read into `root`, and `outside` (a secret next to it).
fn write_fixture(root: &Path, outside: &Path) -> Result<()> {
    let write = |path: &Path, bytes: &[u8]| -> Result<()> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
    };
    let link = |target: &str, at: &str| -> Result<()> {
        std::os::unix::fs::symlink(target, root.join(at))
            .with_context(|| format!("linking {at} to {target}"))
    };
    write(outside, b"TOP SECRET: outside every root\n")?;
    write(
        &root.join("notes.txt"),
        b"Remember the milk.\nAnd the eggs.\n",
    )?;
    // 108000 bytes: over 64 KiB, so read_file cuts it.
    let big: String = (0..9000).map(|i| format!("line {i:06}\n")).collect();
    write(&root.join("big.log"), big.as_bytes())?;
    write(
        &root.join("utf8.txt"),
        format!("{}\n", "€".repeat(100)).as_bytes(),
    )?;
    write(
        &root.join("blob.bin"),
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00",
    )?;
    write(&root.join("latin1.txt"), b"caf\xe9 au lait\n")?;
    for mode in ["legacy", "2026-07-28"] {
        write(
            &root.join(format!("confirm-{mode}.txt")),
            format!("gated secret for {mode}\n").as_bytes(),
        )?;
    }
    let logo: Vec<u8> = b"\x89PNG\r\n\x1a\n"
        .iter()
        .copied()
        .chain(0..=255u8)
        .collect();
    write(&root.join("data/logo.bin"), &logo)?;
    let pattern = |len: usize| -> Vec<u8> { (0..len).map(|i| (i % 251) as u8).collect() };
    write(&root.join("data/exact.bin"), &pattern(65536))?;
    write(&root.join("data/big.bin"), &pattern(65537))?;
    link("notes.txt", "inside-link.txt")?;
    link("../outside/secret.txt", "escape.txt")?;
    link("../notes.txt", "data/escape.txt")?;
    for fifo in ["fifo", "data/fifo"] {
        let status = Command::new("mkfifo")
            .arg(root.join(fifo))
            .status()
            .context("running mkfifo")?;
        ensure!(status.success(), "mkfifo {fifo}: {status}");
    }
    for (path, text) in CORPUS {
        write(&root.join("corpus").join(path), text.as_bytes())?;
    }
    Ok(())
}

/// `tasks-builtins-mcp knowledge index corpus` in `root`: must index exactly the four
/// documents into `knowledge/knowledge.db`.
pub(super) fn build_index(root: &Path) -> Result<()> {
    let binary = clients::builtins_server()?;
    let mut cmd = Command::new(&binary);
    cmd.args(["knowledge", "index", "corpus"])
        .current_dir(root)
        .env_remove("RUST_LOG");
    let indexed = run_bounded(&mut cmd, INDEX_TIMEOUT, "knowledge index corpus")?.success()?;
    indexed.has_line(&format!(
        "Indexed 4 files into {}: 4 added, 0 updated, 0 unchanged, 0 removed; {CORPUS_CHUNKS} \
         chunks, 0 embedded",
        root.join("knowledge").join("knowledge.db").display()
    ))?;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The tests, in both eras
// ---------------------------------------------------------------------------------------

/// The tests of one protocol era (`mode` as `mcp.Client` takes it).
macro_rules! builtins_in_era {
    ($era:ident, $mode:literal) => {
        mod $era {
            use super::*;

            /// The exact tool set, the built-ins' schemas, one call of each built-in.
            #[test]
            fn every_builtin_is_listed_and_called() -> Result<()> {
                let served = shared()?;
                let run = served.script("tools", $mode, &[])?;
                run.has_line(
                    "tools: task_list task_show note_search store_export read_file \
                     base64_encode knowledge_search knowledge_read knowledge_list \
                     knowledge_enumerate",
                )?
                .has_line("read_file: 'Remember the milk.\\nAnd the eggs.\\n'")?
                .has_line("base64_encode: Zmlzaw==")?
                .has_line("knowledge_search: corpus/flow.md#1")?
                .has_line("knowledge_enumerate: ['corpus/flow.md#1', 'corpus/storage.md#1']")?;
                Ok(())
            }

            /// Whole, cut with the marker, paged, UTF-8 windows, binary refused.
            #[test]
            fn read_file_reads_cuts_pages_and_refuses_binary() -> Result<()> {
                let served = shared()?;
                let run = served.script("read_file", $mode, &[])?;
                run.has_line(
                    "binary: read_file: \"blob.bin\" is not a text file (it contains NUL \
                     bytes); use base64_encode to get its bytes",
                )?
                .has_line("paged: 2 pages rebuild all 108000 bytes")?;
                served
                    .server
                    .wait_for_line(&["read_file big.log offset=40000 length=1000"])?;
                Ok(())
            }

            /// `..`, absolute paths and symlinks out of the root, a FIFO, a directory.
            #[test]
            fn read_file_refuses_paths_outside_and_non_regular_files() -> Result<()> {
                let served = shared()?;
                let run = served.script("confinement", $mode, &[])?;
                run.has_line(
                    "refused: read_file: \"fifo\" is a named pipe (FIFO), not a regular file",
                )?;
                ensure!(
                    !run.stdout.contains("TOP SECRET") && !run.stderr.contains("TOP SECRET"),
                    "the secret outside the root was read: {}",
                    run.report()
                );
                Ok(())
            }

            /// Text and files under data/, the cap, files outside data/.
            #[test]
            fn base64_encode_encodes_text_and_confined_files() -> Result<()> {
                let served = shared()?;
                let run = served.script("base64", $mode, &[])?;
                run.has_line("file: data/exact.bin (65536 bytes) encoded")?
                    .has_line(
                        "refused: base64_encode: \"data/big.bin\" is 65537 bytes; \
                         base64_encode encodes at most 65536 bytes (max_bytes)",
                    )?;
                Ok(())
            }

            /// `confirm: true`: an approved read_file reads the file.
            #[test]
            fn confirmed_read_file_runs_when_approved() -> Result<()> {
                let served = shared()?;
                let file = concat!("confirm-", $mode, ".txt");
                let run = served.script("confirm", $mode, &["--answer", "approve"])?;
                run.has_line(&format!("asked: Command: read_file {file}"))?;
                served
                    .server
                    .wait_for_line(&[&format!("read_file {file}"), "approved"])?;
                served
                    .server
                    .wait_for_line(&[&format!("Ran read_file {file}")])?;
                Ok(())
            }

            /// `confirm: true`: a declined read_file is an error saying so, without the file.
            #[test]
            fn confirmed_read_file_is_refused_when_declined() -> Result<()> {
                let served = shared()?;
                let file = concat!("confirm-", $mode, ".txt");
                let run = served.script("confirm", $mode, &["--answer", "decline"])?;
                run.has_line(&format!(
                    "outcome: Not approved: the user declined to run \"read_file {file}\". This \
                     was their decision, not an error; do not retry, ask how they want to \
                     proceed."
                ))?;
                ensure!(
                    !run.stdout.contains("gated secret"),
                    "the declined call returned the file: {}",
                    run.report()
                );
                served
                    .server
                    .wait_for_line(&[&format!("read_file {file}"), "declined"])?;
                Ok(())
            }

            /// Ranked, cited search results; the cited text; the documents.
            #[test]
            fn knowledge_tools_search_read_and_list_the_index() -> Result<()> {
                let served = shared()?;
                let chunks = CORPUS_CHUNKS.to_string();
                let run = served.script("knowledge", $mode, &["--chunks", &chunks])?;
                run.has_line("backpressure: ['corpus/flow.md#1', 'corpus/storage.md#1']")?;
                Ok(())
            }

            /// `knowledge_enumerate`: the complete set with counts, absence said to be complete,
            /// stems, scopes, exclusion, and syntax it does not have refused with the fix.
            #[test]
            fn knowledge_enumerate_lists_every_matching_document_and_says_so() -> Result<()> {
                let served = shared()?;
                let run = served.script("enumerate", $mode, &[])?;
                run.has_line("backpressure: ['corpus/flow.md#1', 'corpus/storage.md#1']")?
                    .has_line(
                        "stem: 2 documents contain \"retry\" or a related form (retries); 1 \
                         contain it as written.",
                    )?
                    .has_line(
                        "refused: knowledge_enumerate: \"OR\" is not an operator here; \
                         alternatives are not supported; run one query per term and compare",
                    )?;
                served
                    .server
                    .wait_for_line(&["knowledge_enumerate(\"retry\")"])?;
                Ok(())
            }

            /// Eight searches at once all answer, each with its own first result.
            #[test]
            fn eight_concurrent_searches_succeed() -> Result<()> {
                let served = shared()?;
                let run = served.script("concurrent", $mode, &[])?;
                run.has_line("concurrent: 8 searches, each with its expected first result")?;
                Ok(())
            }

            /// Before the index is built: `index_not_built`, a note at start, nothing written.
            #[test]
            fn knowledge_without_an_index_is_not_built() -> Result<()> {
                let (base, root, outside) = Served::prepare()?;
                let served = Served::serve(base, root, outside, &[])?;
                served.script("not_built", $mode, &[])?;
                let log = served.server.log();
                ensure!(
                    log.contains(
                        "note: the knowledge index is not built yet; knowledge_search will \
                         return index_not_built until you run: tasks-builtins-mcp knowledge \
                         index"
                    ),
                    "no index_not_built note at start; the log:\n{log}"
                );
                ensure!(
                    !served.root.join("knowledge").exists(),
                    "the server created the knowledge directory it only reads"
                );
                Ok(())
            }
        }
    };
}

builtins_in_era!(legacy, "legacy");
builtins_in_era!(era_2026_07_28, "2026-07-28");
