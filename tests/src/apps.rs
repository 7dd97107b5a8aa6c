//! Build the Go applications the tests run, once, into a shared cache.
//!
//! The cache is `$FISKGEN_APPS_DIR` when set, otherwise
//! `<workspace root>/target/fisk-apps`. Binaries land in its `bin/` directory
//! (see [`bin_dir`]). Next to them, `<name>.stamp` holds a sha256 over what the
//! binary was built from (go.mod, go.sum and every `*.go` file of the app; for
//! `nats` and `nats-server`, the module version), and a build is skipped when the stamp matches
//! and the binary exists. Every build holds an exclusive lock on
//! `<name>.lock`, so parallel test threads and processes build each app once.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

use crate::cache::{build_and_replace, cached_build};

/// The natscli module and version that [`App::Nats`] is installed from.
pub const NATS_MODULE: &str = "github.com/nats-io/natscli/nats@v0.5.0";

/// The NATS server module and version that [`App::NatsServer`] is installed from: the server
/// the natscli tests drive (not a fisk application).
pub const NATS_SERVER_MODULE: &str = "github.com/nats-io/nats-server/v2@v2.15.3";

/// The fisk module whose example programs ([`App::FiskCurl`], [`App::FiskPing`]) are built from
/// the module proxy: applications nobody on this project wrote.
pub const FISK_MODULE: &str = "github.com/choria-io/fisk@v0.9.1";

/// Bumped when the way binaries are built changes, so every stamp goes stale.
const STAMP_FORMAT: &str = "fiskgen-tests apps v1";

/// A real fisk application that tests can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum App {
    /// `examples/demo`: the `tasks` demo application (fisk v0.9.1).
    Demo,
    /// The demo's next release (`examples/demo` built with `-tags upgrade`): one command
    /// added, one removed and one flag changed, for drift tests. Binary `tasks-v2`.
    DemoV2,
    /// `tests/apps/fixture`: every fisk value type, tag and command shape; each
    /// leaf prints what fisk parsed as JSON (fisk v0.9.1).
    Fixture,
    /// `tests/apps/oldfisk`: a tiny app on fisk v0.8.1, whose introspection has
    /// no schemas.
    OldFisk,
    /// `tests/apps/conformance`: commands, cheats and tags named like the MCP conformance
    /// suite's fixture tools, prompts and resources (fisk v0.9.1).
    Conformance,
    /// The real `nats` CLI, installed from [`NATS_MODULE`] (fisk v0.9.1).
    Nats,
    /// A real `nats-server` (with JetStream), installed from [`NATS_SERVER_MODULE`], for the
    /// natscli tests to talk to.
    NatsServer,
    /// fisk's own `_examples/curl` ([`FISK_MODULE`]): `get url`, `get file` and `post`, three
    /// small leaves. Binary `fisk-curl`.
    FiskCurl,
    /// fisk's own `_examples/ping` ([`FISK_MODULE`]): a root command with arguments and no
    /// subcommands, so no tools. Binary `fisk-ping`.
    FiskPing,
    /// `tests/apps/otlpsink`: the OpenTelemetry Collector's own OTLP receiver (`otlpreceiver`
    /// from the module proxy), printing every batch of spans it accepts over OTLP/HTTP as a
    /// line of OTLP/JSON, for the telemetry tests (not a fisk application).
    OtlpSink,
}

impl App {
    /// Every application, in declaration order.
    pub const ALL: [App; 10] = [
        App::Demo,
        App::DemoV2,
        App::Fixture,
        App::OldFisk,
        App::Conformance,
        App::Nats,
        App::NatsServer,
        App::FiskCurl,
        App::FiskPing,
        App::OtlpSink,
    ];

    /// The file name of the application's binary.
    pub fn binary_name(self) -> &'static str {
        match self {
            App::Demo => "tasks",
            App::DemoV2 => "tasks-v2",
            App::Fixture => "fixture",
            App::OldFisk => "oldfisk",
            App::Conformance => "conformance",
            App::Nats => "nats",
            App::NatsServer => "nats-server",
            App::FiskCurl => "fisk-curl",
            App::FiskPing => "fisk-ping",
            App::OtlpSink => "otlpsink",
        }
    }

    /// The module (with version) the binary is installed from with `go install`, for the
    /// applications that are not built from a directory of this repository.
    pub fn module(self) -> Option<&'static str> {
        match self {
            App::Nats => Some(NATS_MODULE),
            App::NatsServer => Some(NATS_SERVER_MODULE),
            App::FiskCurl | App::FiskPing => Some(FISK_MODULE),
            _ => None,
        }
    }

    /// The directory holding the application's Go module, or `None` for
    /// [`App::Nats`] and [`App::NatsServer`], which are installed from the module proxy.
    pub fn source_dir(self) -> Option<PathBuf> {
        let rel = match self {
            App::Demo | App::DemoV2 => "examples/demo",
            App::Fixture => "tests/apps/fixture",
            App::OldFisk => "tests/apps/oldfisk",
            App::Conformance => "tests/apps/conformance",
            App::OtlpSink => "tests/apps/otlpsink",
            App::Nats | App::NatsServer | App::FiskCurl | App::FiskPing => return None,
        };
        Some(workspace_root().join(rel))
    }

    fn index(self) -> usize {
        self as usize
    }

    /// The directory of fisk's example program this application is, inside [`FISK_MODULE`].
    fn fisk_example(self) -> Option<&'static str> {
        match self {
            App::FiskCurl => Some("_examples/curl"),
            App::FiskPing => Some("_examples/ping"),
            _ => None,
        }
    }

    /// Go build tags the application is built with.
    fn build_tags(self) -> &'static str {
        match self {
            App::DemoV2 => "upgrade",
            _ => "",
        }
    }
}

/// The workspace root: the parent of this package's directory.
pub fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir.parent().unwrap_or(manifest_dir).to_path_buf()
}

/// The cache directory: `$FISKGEN_APPS_DIR`, or `<workspace root>/target/fisk-apps`.
pub fn cache_dir() -> PathBuf {
    match std::env::var_os("FISKGEN_APPS_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => workspace_root().join("target").join("fisk-apps"),
    }
}

/// The cache's `bin` directory, created if missing; put it on `PATH` to run the
/// applications by name. It only holds the applications [`path`] has built.
pub fn bin_dir() -> Result<PathBuf> {
    let dir = cache_dir().join("bin");
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

/// The path of `app`'s binary in the cache, building it first if it is missing
/// or out of date.
pub fn path(app: App) -> Result<PathBuf> {
    static BUILT: [OnceLock<PathBuf>; App::ALL.len()] = [const { OnceLock::new() }; App::ALL.len()];
    let slot = &BUILT[app.index()];
    if let Some(path) = slot.get() {
        return Ok(path.clone());
    }
    let path = path_in(&cache_dir(), app)?;
    Ok(slot.get_or_init(|| path).clone())
}

/// Like [`path`], with an explicit cache directory and without the per-process
/// memo: the stamp is checked on every call.
pub fn path_in(cache: &Path, app: App) -> Result<PathBuf> {
    let name = app.binary_name();
    let bin = cache.join("bin");
    fs::create_dir_all(&bin).with_context(|| format!("creating {}", bin.display()))?;
    let binary = bin.join(name);
    let stamp = fingerprint(app)?;
    cached_build(cache, name, &stamp, &binary, || {
        build_and_replace(cache, name, &binary, |scratch| {
            let built = scratch.join(name);
            match app.source_dir() {
                Some(dir) => {
                    let mut cmd = go_command();
                    cmd.args([
                        "build",
                        "-trimpath",
                        "-buildvcs=false",
                        "-tags",
                        app.build_tags(),
                        "-o",
                    ])
                    .arg(&built)
                    .arg(".")
                    .current_dir(&dir);
                    run_go(cmd, &format!("go build in {}", dir.display()))?;
                }
                None if app.fisk_example().is_some() => {
                    let dir = fisk_example_dir(app, cache)?;
                    let mut cmd = go_command();
                    cmd.args(["build", "-trimpath", "-buildvcs=false", "-o"])
                        .arg(&built)
                        .arg(".")
                        .current_dir(&dir);
                    run_go(cmd, &format!("go build in {}", dir.display()))?;
                }
                None => {
                    let module = app.module().with_context(|| {
                        format!("{name} has neither a source directory nor a module")
                    })?;
                    let mut cmd = go_command();
                    cmd.args(["install", "-trimpath", "-buildvcs=false", module])
                        .env("GOBIN", scratch)
                        .current_dir(cache);
                    run_go(cmd, &format!("go install {module}"))?;
                }
            }
            Ok(())
        })
    })?;
    Ok(binary)
}

/// The directory of one of fisk's example programs in the Go module cache, downloaded through
/// the module proxy (`go mod download`) when missing.
fn fisk_example_dir(app: App, cache: &Path) -> Result<PathBuf> {
    let example = app
        .fisk_example()
        .with_context(|| format!("{} is not one of fisk's examples", app.binary_name()))?;
    let mut cmd = go_command();
    cmd.args(["mod", "download", "-json", FISK_MODULE])
        .current_dir(cache);
    let output = run_go(cmd, &format!("go mod download {FISK_MODULE}"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    // `"Dir": "/root/go/pkg/mod/github.com/choria-io/fisk@v0.9.1",`
    let dir = text
        .lines()
        .find_map(|line| line.trim().strip_prefix("\"Dir\": \""))
        .and_then(|rest| rest.strip_suffix("\","))
        .with_context(|| format!("go mod download printed no Dir: {text}"))?;
    Ok(Path::new(dir).join(example))
}

/// The sha256 (hex) of everything `app`'s binary is built from.
pub fn fingerprint(app: App) -> Result<String> {
    let mut hash = Sha256::new();
    hash.update(STAMP_FORMAT.as_bytes());
    hash.update([0]);
    hash.update(app.binary_name().as_bytes());
    hash.update([0]);
    match app.source_dir() {
        None => {
            hash.update(app.module().unwrap_or_default().as_bytes());
            hash.update(app.fisk_example().unwrap_or_default().as_bytes());
        }
        Some(dir) => {
            let mut files = Vec::new();
            collect_sources(&dir, &dir, &mut files)?;
            files.sort();
            if !files.iter().any(|f| f == Path::new("go.mod")) {
                bail!("{} has no go.mod", dir.display());
            }
            for rel in files {
                let full = dir.join(&rel);
                let body =
                    fs::read(&full).with_context(|| format!("reading {}", full.display()))?;
                hash.update(rel.to_string_lossy().as_bytes());
                hash.update([0]);
                hash.update((body.len() as u64).to_le_bytes());
                hash.update(&body);
            }
        }
    }
    Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// go.mod, go.sum and `*.go` files under `dir`, relative to `root`, skipping
/// hidden directories and `testdata`.
fn collect_sources(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let entries = fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("listing {}", dir.display()))?;
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let kind = entry
            .file_type()
            .with_context(|| format!("inspecting {}", path.display()))?;
        if kind.is_dir() {
            if !name.starts_with('.') && name != "testdata" {
                collect_sources(root, &path, out)?;
            }
        } else if name == "go.mod" || name == "go.sum" || name.ends_with(".go") {
            let rel = path
                .strip_prefix(root)
                .with_context(|| format!("relativising {}", path.display()))?;
            out.push(rel.to_path_buf());
        }
    }
    Ok(())
}

/// `go` for a native build that ignores any `go.work` above the app; the
/// caller's GOPATH, GOCACHE, GOPROXY and GOFLAGS are kept.
fn go_command() -> Command {
    let mut cmd = Command::new("go");
    cmd.env("GOWORK", "off")
        .env_remove("GOOS")
        .env_remove("GOARCH");
    cmd
}

fn run_go(mut cmd: Command, what: &str) -> Result<Output> {
    let output = cmd
        .output()
        .with_context(|| format!("{what}: cannot run go (is Go installed and on PATH?)"))?;
    if !output.status.success() {
        bail!(
            "{what} failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(output)
}
