//! Build fx, the MCP client the project was specified against (vercel-labs/fx, a Zig
//! program), once, into a cache outside the clone, for the tests that drive it in tmux
//! (docs/testing-clients.md, "fx").
//!
//! The source is the project's fx snapshot in the directory [`source_dir`] names: its
//! `build.sh OUT` installs Zig 0.16.0 from PyPI into a throwaway venv and builds fx from the
//! snapshot's tarball (about 4 minutes on 2 cores). The binary is kept in `$FISKGEN_FX_DIR` when
//! set, otherwise `$XDG_CACHE_HOME/fiskgen-tests/fx` (default `~/.cache/fiskgen-tests/fx`), so a
//! fresh clone on the same machine reuses it. Next to the binary, `fx.stamp` holds a sha256 over
//! the snapshot's `build.sh` and tarball; a build is skipped when the stamp matches and the
//! binary exists. Builds hold an exclusive lock on `fx.lock`, so parallel test threads and
//! processes build fx once. A failed build keeps its output in `fx.build.log`.

use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

use crate::apps::workspace_root;
use crate::cache::{build_and_replace, cached_build};

/// Environment variable naming the cache directory fx is built into.
pub const FX_DIR_VAR: &str = "FISKGEN_FX_DIR";
/// Environment variable naming the directory with fx's `build.sh` and source snapshot.
pub const FX_SOURCE_VAR: &str = "FISKGEN_FX_SOURCE";
/// Where fx's snapshot is, relative to the workspace root.
pub const SOURCE: &str = "../shared/clients/fx";
/// The snapshot's tarball (vercel-labs/fx v0.0.5 at 4a8f765).
pub const SNAPSHOT: &str = "fx-4a8f765.tar.gz";

/// Bumped when the way fx is built changes, so the stamp goes stale.
const STAMP_FORMAT: &str = "fiskgen-tests fx v1";
/// Bound of one build (about 4 minutes on 2 idle cores; the test run shares them).
const BUILD_TIMEOUT: Duration = Duration::from_secs(40 * 60);

/// The directory holding `build.sh` and the snapshot: `$FISKGEN_FX_SOURCE`, or [`SOURCE`]
/// beside the workspace root (the project's directory of client snapshots, next to the clone).
pub fn source_dir() -> PathBuf {
    match std::env::var_os(FX_SOURCE_VAR) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => workspace_root().join(SOURCE),
    }
}

/// The cache directory: `$FISKGEN_FX_DIR`, or `fiskgen-tests/fx` under `$XDG_CACHE_HOME` or
/// `~/.cache` (outside the clone, so a fresh clone reuses the build), or `<workspace
/// root>/target/fx` when there is no home.
pub fn cache_dir() -> PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = var(FX_DIR_VAR) {
        return PathBuf::from(dir);
    }
    let base = var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|home| PathBuf::from(home).join(".cache")));
    match base {
        Some(base) => base.join("fiskgen-tests").join("fx"),
        None => workspace_root().join("target").join("fx"),
    }
}

/// The path of the fx binary, building it first if it is missing or out of date.
pub fn path() -> Result<PathBuf> {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    if let Some(path) = BUILT.get() {
        return Ok(path.clone());
    }
    let path = path_in(&cache_dir(), &source_dir())?;
    Ok(BUILT.get_or_init(|| path).clone())
}

/// Like [`path`], with explicit cache and source directories and without the per-process
/// memo: the stamp is checked on every call.
pub fn path_in(cache: &Path, source: &Path) -> Result<PathBuf> {
    let script = source.join("build.sh");
    let tarball = source.join(SNAPSHOT);
    if !script.is_file() || !tarball.is_file() {
        bail!(
            "fx's snapshot is missing: {} needs build.sh and {SNAPSHOT} (the tests expect the \
             project's shared directory beside the clone, {SOURCE}; set {FX_SOURCE_VAR} to \
             another copy)",
            source.display()
        );
    }
    fs::create_dir_all(cache).with_context(|| format!("creating {}", cache.display()))?;
    let binary = cache.join("fx");

    let stamp = fingerprint(&script, &tarball)?;
    cached_build(cache, "fx", &stamp, &binary, || {
        let log_path = cache.join("fx.build.log");
        build_and_replace(cache, "fx", &binary, |scratch| {
            let built = scratch.join("fx");
            run_build(&script, &built, &log_path)?;
            if !built.is_file() {
                bail!(
                    "{} wrote no {} (its output: {})",
                    script.display(),
                    built.display(),
                    log_path.display()
                );
            }
            Ok(())
        })
    })?;
    Ok(binary)
}

/// The sha256 (hex) of the build script and the snapshot.
pub fn fingerprint(script: &Path, tarball: &Path) -> Result<String> {
    let mut hash = Sha256::new();
    hash.update(STAMP_FORMAT.as_bytes());
    hash.update([0]);
    for file in [script, tarball] {
        let mut reader = File::open(file).with_context(|| format!("opening {}", file.display()))?;
        let mut buffer = vec![0; 1 << 16];
        loop {
            let read = reader
                .read(&mut buffer)
                .with_context(|| format!("reading {}", file.display()))?;
            if read == 0 {
                break;
            }
            hash.update(&buffer[..read]);
        }
        hash.update([0]);
    }
    Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// `bash build.sh OUT`, its output into `log`, in a process group of its own that is killed
/// whole when it outlasts [`BUILD_TIMEOUT`].
fn run_build(script: &Path, out: &Path, log: &Path) -> Result<()> {
    use std::os::unix::process::CommandExt as _;

    let output = File::create(log).with_context(|| format!("creating {}", log.display()))?;
    let errors = output
        .try_clone()
        .with_context(|| format!("opening {}", log.display()))?;
    let mut child = Command::new("bash")
        .arg(script)
        .arg(out)
        .stdin(Stdio::null())
        .stdout(output)
        .stderr(errors)
        .process_group(0)
        .spawn()
        .with_context(|| format!("starting bash {}", script.display()))?;
    let deadline = Instant::now() + BUILD_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().context("waiting for fx's build")? {
            break status;
        }
        if Instant::now() >= deadline {
            // The whole group: bash, pip and zig.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            bail!(
                "building fx did not finish within {BUILD_TIMEOUT:?}; its output:\n{}",
                tail(log)
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    if !status.success() {
        bail!(
            "{} failed ({status}); it needs python3 with venv, PyPI (ziglang==0.16.0) and tar. \
             Its output ({}):\n{}",
            script.display(),
            log.display(),
            tail(log)
        );
    }
    Ok(())
}

/// The last lines of a log file.
fn tail(log: &Path) -> String {
    let text = fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}
