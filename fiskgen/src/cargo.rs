//! Running `cargo build --release` on a generated crate, with progress the way cargo users
//! expect.
//!
//! Cargo's JSON messages (stdout) drive a progress bar: one step per `compiler-artifact`.
//! Compiler diagnostics are rendered by cargo itself (`json-render-diagnostics`) on its stderr:
//! on a terminal, fiskgen reads that stream, drops cargo's own status lines (the bar replaces
//! them) and prints everything else above the bar; elsewhere cargo's stderr is passed through
//! untouched, so logs get cargo's familiar plain lines.

use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, IsTerminal};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;

/// What to build and where.
#[derive(Debug, Clone)]
pub struct CargoBuild {
    /// The generated crate.
    pub crate_dir: PathBuf,
    /// The shared target directory.
    pub target_dir: PathBuf,
    /// The runtime source `fiskgen-runtime` is patched to.
    pub runtime_dir: PathBuf,
    /// The binary target's name.
    pub binary: String,
    /// The target triple and glibc version (the host's by default).
    pub platform: crate::portable::Platform,
    /// The directories kept out of the binary (`--remap-path-prefix`).
    pub remap: crate::portable::Remap,
}

/// Why a build failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CargoError {
    /// Cargo could not be started.
    #[error("cannot run {cargo:?} (set $CARGO or put cargo on PATH): {source}")]
    Spawn {
        /// The program.
        cargo: OsString,
        /// Why.
        source: io::Error,
    },
    /// Reading cargo's output or waiting for it failed.
    #[error("running cargo: {0}")]
    Io(#[from] io::Error),
    /// Cargo exited unsuccessfully.
    #[error("cargo build failed ({status}) for {crate_dir}; its messages are above")]
    Failed {
        /// Cargo's exit status.
        status: String,
        /// The crate.
        crate_dir: String,
    },
    /// Cargo succeeded but reported no binary.
    #[error("cargo built {crate_dir} but reported no binary named {binary}")]
    NoBinary {
        /// The crate.
        crate_dir: String,
        /// The expected binary.
        binary: String,
    },
}

/// `$CARGO`, else `cargo`.
pub fn cargo_program() -> OsString {
    std::env::var_os("CARGO")
        .filter(|cargo| !cargo.is_empty())
        .unwrap_or_else(|| "cargo".into())
}

/// Builds the crate's release binary and returns its path in the target directory.
pub fn build(options: &CargoBuild) -> Result<PathBuf, CargoError> {
    let terminal = io::stderr().is_terminal();
    let cargo = cargo_program();
    let mut command = Command::new(&cargo);
    command
        .arg(options.platform.subcommand())
        .args(crate::portable::target_args(&options.platform))
        .arg("--release")
        .arg("--message-format")
        .arg("json-render-diagnostics")
        .arg("--manifest-path")
        .arg(options.crate_dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&options.target_dir)
        .arg("--config")
        .arg(patch_config(&options.runtime_dir))
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    // A user's RUSTFLAGS would make cargo ignore `build.rustflags`: the remapping is appended
    // to the user's flags instead.
    match options.remap.appended_to(
        std::env::var_os("CARGO_ENCODED_RUSTFLAGS").as_deref(),
        std::env::var_os("RUSTFLAGS").as_deref(),
    ) {
        Some(flags) => {
            command
                .env("CARGO_ENCODED_RUSTFLAGS", flags)
                .env_remove("RUSTFLAGS");
        }
        None => {
            command.arg("--config").arg(options.remap.config());
        }
    }
    if terminal {
        command.arg("--color").arg("always").stderr(Stdio::piped());
    } else {
        command.stderr(Stdio::inherit());
    }
    let mut child = command.spawn().map_err(|source| CargoError::Spawn {
        cargo: cargo.clone(),
        source,
    })?;

    let bar = if terminal {
        let bar = ProgressBar::new(estimate_units(&options.crate_dir));
        let style = ProgressStyle::with_template(
            "{prefix:>12.cyan.bold} [{bar:27}] {pos}/{len}: {wide_msg}",
        )
        .map(|style| style.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.set_prefix("Building");
        bar.enable_steady_tick(Duration::from_millis(200));
        Some(bar)
    } else {
        None
    };

    let stderr_thread = child.stderr.take().map(|stderr| {
        let bar = bar.clone();
        let target = options.target_dir.display().to_string();
        thread::spawn(move || forward_stderr(stderr, bar.as_ref(), &target))
    });

    let mut executable = None;
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines() {
            let line = line?;
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message["reason"] != "compiler-artifact" {
                continue;
            }
            let target = &message["target"];
            let is_binary = target["kind"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|kind| kind == "bin"));
            if is_binary && target["name"] == options.binary.as_str() {
                executable = message["executable"].as_str().map(PathBuf::from);
            }
            if let Some(bar) = &bar {
                if bar.position() + 1 >= bar.length().unwrap_or(0) {
                    bar.set_length(bar.position() + 2);
                }
                bar.inc(1);
                bar.set_message(crate_label(&message));
            }
        }
    }
    let status = child.wait()?;
    if let Some(thread) = stderr_thread {
        let _ = thread.join();
    }
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    if !status.success() {
        return Err(CargoError::Failed {
            status: status.to_string(),
            crate_dir: options.crate_dir.display().to_string(),
        });
    }
    executable.ok_or_else(|| CargoError::NoBinary {
        crate_dir: options.crate_dir.display().to_string(),
        binary: options.binary.clone(),
    })
}

/// What a build shows while it waits for another to finish: a spinner on a terminal, one line
/// elsewhere. Cleared when dropped.
#[derive(Debug)]
pub struct Waiting {
    spinner: Option<ProgressBar>,
}

impl Waiting {
    /// Starts showing that the build waits for `holder` (`another fiskgen build of x-mcp in
    /// /target`).
    pub fn start(holder: &str) -> Self {
        let message = format!("for {holder} to finish");
        if !io::stderr().is_terminal() {
            eprintln!("{:>12} {message}", "Waiting");
            return Self { spinner: None };
        }
        let spinner = ProgressBar::new_spinner();
        let style = ProgressStyle::with_template("{prefix:>12.cyan.bold} {spinner} {wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        spinner.set_style(style);
        spinner.set_prefix("Waiting");
        spinner.set_message(message);
        spinner.enable_steady_tick(Duration::from_millis(200));
        Self {
            spinner: Some(spinner),
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if let Some(spinner) = &self.spinner {
            spinner.finish_and_clear();
        }
    }
}

/// `patch.crates-io.fiskgen-runtime.path="<dir>"`, for `--config`.
fn patch_config(runtime_dir: &Path) -> String {
    let path = runtime_dir.display().to_string();
    let escaped = path.replace('\\', "\\\\").replace('"', "\\\"");
    format!("patch.crates-io.fiskgen-runtime.path=\"{escaped}\"")
}

/// How many artifacts the build will report, roughly: the packages in the crate's lockfile
/// (cargo prunes it to what the crate uses after the first build). The bar grows if needed.
fn estimate_units(crate_dir: &Path) -> u64 {
    std::fs::read_to_string(crate_dir.join("Cargo.lock"))
        .map(|lock| lock.matches("[[package]]").count() as u64)
        .unwrap_or(100)
        .max(1)
}

/// `serde v1.0.228` from a `compiler-artifact` message.
fn crate_label(message: &Value) -> String {
    let name = message["target"]["name"].as_str().unwrap_or_default();
    let id = message["package_id"].as_str().unwrap_or_default();
    // `registry+https://...#serde@1.0.228` or `path+file:///...#0.1.0`.
    let version = id.rsplit(['@', '#']).next().unwrap_or_default();
    if version.is_empty() {
        name.to_string()
    } else {
        format!("{name} v{version}")
    }
}

/// Passes cargo's stderr through above the bar, without cargo's own status lines; cargo's
/// "Blocking waiting for file lock" becomes the bar's message, naming what it waits for.
fn forward_stderr(stderr: impl io::Read, bar: Option<&ProgressBar>, target_dir: &str) {
    for line in BufReader::new(stderr).lines() {
        let Ok(line) = line else { break };
        let plain = strip_ansi(&line);
        if is_status_line(&plain) {
            if let Some(bar) = bar
                && let Some(waiting) = blocking_message(&plain, target_dir)
            {
                bar.set_message(waiting);
            }
            continue;
        }
        match bar {
            Some(bar) => bar.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }
}

/// What the bar says while cargo waits for a lock (`    Blocking waiting for file lock on
/// build directory`): another cargo build using the same target directory (a build of another
/// identity, or an editor's).
fn blocking_message(line: &str, target_dir: &str) -> Option<String> {
    let rest = line
        .trim_start()
        .strip_prefix("Blocking waiting for file lock on ")?;
    Some(format!(
        "waiting for another cargo build to release the {rest} in {target_dir}"
    ))
}

/// Cargo's right-aligned status words (`   Compiling serde v1.0`).
fn is_status_line(line: &str) -> bool {
    const STATUS: &[&str] = &[
        "Compiling",
        "Checking",
        "Fresh",
        "Finished",
        "Building",
        "Blocking",
        "Downloading",
        "Downloaded",
        "Locking",
        "Updating",
        "Adding",
        "Removing",
        "Packaging",
    ];
    let trimmed = line.trim_start();
    line.starts_with(' ')
        && STATUS.iter().any(|word| {
            trimmed
                .strip_prefix(word)
                .is_some_and(|rest| rest.starts_with(' ') || rest.is_empty())
        })
}

/// `line` without ANSI escape sequences.
fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn status_lines_are_recognised_through_colours() {
        assert!(is_status_line(&strip_ansi(
            "\u{1b}[1m\u{1b}[32m   Compiling\u{1b}[0m serde v1.0.228"
        )));
        assert!(is_status_line("    Finished `release` profile"));
        assert!(!is_status_line("error[E0308]: mismatched types"));
        assert!(!is_status_line("  --> src/main.rs:3:5"));
        assert!(!is_status_line("Compiling is not indented here"));
    }

    #[test]
    fn artifacts_are_labelled_by_crate_and_version() {
        let message = json!({
            "package_id": "registry+https://github.com/rust-lang/crates.io-index#serde@1.0.228",
            "target": {"name": "serde"}
        });
        assert_eq!(crate_label(&message), "serde v1.0.228");
        let local = json!({"package_id": "path+file:///x/tasks-mcp#0.1.0", "target": {"name": "tasks-mcp"}});
        assert_eq!(crate_label(&local), "tasks-mcp v0.1.0");
    }

    #[test]
    fn cargo_waiting_for_its_lock_names_the_target_directory() {
        assert_eq!(
            blocking_message(
                &strip_ansi("\u{1b}[1m\u{1b}[36m    Blocking\u{1b}[0m waiting for file lock on build directory"),
                "/c/target"
            )
            .as_deref(),
            Some("waiting for another cargo build to release the build directory in /c/target")
        );
        assert_eq!(blocking_message("   Compiling serde v1", "/t"), None);
    }

    #[test]
    fn the_patch_is_a_toml_assignment() {
        assert_eq!(
            patch_config(Path::new("/c/run \"x\"")),
            r#"patch.crates-io.fiskgen-runtime.path="/c/run \"x\"""#
        );
    }
}
