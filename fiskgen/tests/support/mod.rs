//! What fiskgen's integration tests share: this checkout's `fiskgen` run as a user runs it, its
//! output as text, and the end-to-end tests' warm cache. Each test file includes it
//! (`mod support;`) and uses its part.

// Every test file is its own crate and uses only some of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use fiskgen_tests::apps::workspace_root;

/// Bytes a process wrote, as text.
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// This checkout's `fiskgen`, to be run in `cwd`, with warnings unwrapped, one per line
/// (`COLUMNS=1000`).
pub(crate) fn fiskgen_command(cwd: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fiskgen"));
    command.current_dir(cwd).env("COLUMNS", "1000");
    command
}

/// `fiskgen ARGS` in `cwd`, run to its end.
pub(crate) fn fiskgen(cwd: &Path, args: &[&str]) -> Output {
    fiskgen_command(cwd)
        .args(args)
        .output()
        .expect("fiskgen runs")
}

/// `target/fiskgen-e2e`: the cache (`cache/`) and target directory (`target/`) the end-to-end
/// build tests share, warm after the first of them.
pub(crate) fn e2e() -> PathBuf {
    workspace_root().join("target").join("fiskgen-e2e")
}
