//! Install the pinned MCP clients the acceptance tests drive, once, into a shared directory,
//! and find the servers they test.
//!
//! The clients are pinned in `tests/clients`: `requirements.txt` for the Python SDK (`mcp`),
//! `package.json` with its committed `package-lock.json` for Node 22 (the npm `node`
//! package), the MCP Inspector and the conformance suite. They are installed into
//! `$FISKGEN_TEST_TOOLS_DIR` when set, otherwise `<workspace root>/target/test-tools`:
//!
//! - `venv/`: a virtual environment made with `$FISKGEN_PYTHON` (default `python3`, 3.10 or
//!   newer), filled with `pip install -r requirements.txt`;
//! - `node/`: the two npm files, installed with `npm ci` (`$FISKGEN_NPM`, default `npm`);
//!   [`node_bin`] is its `node_modules/.bin`, holding `node` 22 and the launchers
//!   `mcp-inspector` and `conformance` (put it first on `PATH`: their scripts run `node`).
//!   There is no `npx` in it (the `node` package ships only `node`), and none is needed.
//!
//! Next to each, `<name>.stamp` holds a sha256 over the requirement files (and, for the venv,
//! the interpreter's version); an install is skipped when the stamp matches and the install
//! is complete, and redone from scratch otherwise. Every install holds an exclusive lock on
//! `<name>.lock`, so parallel test threads and processes install each once.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

use crate::apps::workspace_root;
use crate::cache::cached_build;

/// Environment variable naming the directory the clients are installed into.
pub const TOOLS_DIR_VAR: &str = "FISKGEN_TEST_TOOLS_DIR";
/// Environment variable naming the Python interpreter the venv is made with.
pub const PYTHON_VAR: &str = "FISKGEN_PYTHON";
/// Environment variable naming the `npm` that installs the Node clients.
pub const NPM_VAR: &str = "FISKGEN_NPM";
/// Environment variable naming the server binary under test, instead of the built demo.
pub const SERVER_VAR: &str = "FISKGEN_TEST_SERVER";
/// Environment variable naming the server with every built-in tool, instead of the built one.
pub const BUILTINS_SERVER_VAR: &str = "FISKGEN_TEST_BUILTINS_SERVER";

/// The file name of the generated demo server (the golden crate `tests/expected/demo`).
pub const DEMO_SERVER: &str = "tasks-mcp";
/// The file name of the generated server with every built-in tool (the golden crate
/// `tests/expected/builtins`).
pub const BUILTINS_SERVER: &str = "tasks-builtins-mcp";
/// The file name of the generated server searching a hybrid index (the golden crate
/// `tests/expected/hybrid`).
pub const HYBRID_SERVER: &str = "tasks-hybrid-mcp";
/// Environment variable naming the hybrid-index server, instead of the built one.
pub const HYBRID_SERVER_VAR: &str = "FISKGEN_TEST_HYBRID_SERVER";
/// The file name of the generated server behind every authentication scheme (the golden
/// crate `tests/expected/auth`).
pub const AUTH_SERVER: &str = "tasks-auth-mcp";
/// The file name of the generated server of the fixture app (the golden crate
/// `tests/expected/fixture`).
pub const FIXTURE_SERVER: &str = "fixture-mcp";
/// Environment variable naming the fixture app's server, instead of the built one.
pub const FIXTURE_SERVER_VAR: &str = "FISKGEN_TEST_FIXTURE_SERVER";
/// Environment variable naming the authenticated server, instead of the built one.
pub const AUTH_SERVER_VAR: &str = "FISKGEN_TEST_AUTH_SERVER";
/// The file name of the generated server of the conformance fixture app (the golden crate
/// `tests/expected/conformance`).
pub const CONFORMANCE_SERVER: &str = "test-mcp";
/// Environment variable naming the conformance fixture's server, instead of the built one.
pub const CONFORMANCE_SERVER_VAR: &str = "FISKGEN_TEST_CONFORMANCE_SERVER";

/// The major version of Node the clients need (the conformance suite and the Inspector).
const NODE_MAJOR: &str = "v22.";

/// Bumped when the way the clients are installed changes, so every stamp goes stale.
const STAMP_FORMAT: &str = "fiskgen-tests clients v1";

/// `tests/clients`: the pinned requirement files, the Python scripts, the conformance
/// baseline.
pub fn clients_dir() -> PathBuf {
    workspace_root().join("tests").join("clients")
}

/// `tests/clients/python`: one Python script per client scenario.
pub fn scripts_dir() -> PathBuf {
    clients_dir().join("python")
}

/// The reviewed conformance baseline, `tests/clients/conformance-expected-failures.yml`.
pub fn expected_failures() -> PathBuf {
    clients_dir().join("conformance-expected-failures.yml")
}

/// The install directory: `$FISKGEN_TEST_TOOLS_DIR`, or `<workspace root>/target/test-tools`.
pub fn tools_dir() -> PathBuf {
    match std::env::var_os(TOOLS_DIR_VAR) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => workspace_root().join("target").join("test-tools"),
    }
}

/// The venv's Python, with the pinned `mcp` client importable, installing it first if it is
/// missing or out of date.
pub fn python() -> Result<PathBuf> {
    static INSTALLED: OnceLock<PathBuf> = OnceLock::new();
    if let Some(path) = INSTALLED.get() {
        return Ok(path.clone());
    }
    let path = python_in(&tools_dir())?;
    Ok(INSTALLED.get_or_init(|| path).clone())
}

/// Like [`python`], with an explicit install directory and without the per-process memo.
pub fn python_in(tools: &Path) -> Result<PathBuf> {
    let requirements = clients_dir().join("requirements.txt");
    let base = base_python();
    let version = run(
        Command::new(&base).arg("--version"),
        &format!("{} --version", base.display()),
    )
    .with_context(|| {
        format!(
            "the client tests need Python 3.10 or newer as `python3` on PATH (or set \
             {PYTHON_VAR})"
        )
    })?;
    let interpreter = format!(
        "{} {}{}",
        base.display(),
        String::from_utf8_lossy(&version.stdout).trim(),
        String::from_utf8_lossy(&version.stderr).trim()
    );
    let stamp = fingerprint(&[&requirements], &interpreter)?;

    let venv = tools.join("venv");
    let python = venv.join("bin").join("python");
    cached_build(tools, "venv", &stamp, &python, || {
        if venv.exists() {
            fs::remove_dir_all(&venv).with_context(|| format!("removing {}", venv.display()))?;
        }
        run(
            Command::new(&base).arg("-m").arg("venv").arg(&venv),
            &format!("{} -m venv {}", base.display(), venv.display()),
        )?;
        run(
            Command::new(&python)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--disable-pip-version-check",
                    "--no-input",
                    "--quiet",
                    "-r",
                ])
                .arg(&requirements)
                .env("PIP_REQUIRE_VIRTUALENV", "1"),
            &format!("pip install -r {}", requirements.display()),
        )?;
        run(
            Command::new(&python).args(["-c", "import mcp, httpx"]),
            "importing mcp and httpx in the new venv",
        )?;
        Ok(())
    })?;
    Ok(python)
}

/// The directory with `node` (22), `mcp-inspector` and `conformance`, installing them first
/// if they are missing or out of date. Put it first on `PATH` when running them.
pub fn node_bin() -> Result<PathBuf> {
    static INSTALLED: OnceLock<PathBuf> = OnceLock::new();
    if let Some(path) = INSTALLED.get() {
        return Ok(path.clone());
    }
    let path = node_bin_in(&tools_dir())?;
    Ok(INSTALLED.get_or_init(|| path).clone())
}

/// Like [`node_bin`], with an explicit install directory and without the per-process memo.
pub fn node_bin_in(tools: &Path) -> Result<PathBuf> {
    let clients = clients_dir();
    let manifest = clients.join("package.json");
    let lock = clients.join("package-lock.json");
    let stamp = fingerprint(&[&manifest, &lock], "")?;

    let dir = tools.join("node");
    let bin = dir.join("node_modules").join(".bin");
    // The last thing `npm ci` links; the others are checked after the install.
    let marker = bin.join("conformance");
    cached_build(tools, "node", &stamp, &marker, || {
        if dir.exists() {
            fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
        }
        fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        for file in [&manifest, &lock] {
            let name = file.file_name().unwrap_or_default();
            fs::copy(file, dir.join(name))
                .with_context(|| format!("copying {} to {}", file.display(), dir.display()))?;
        }
        let npm = std::env::var_os(NPM_VAR)
            .filter(|v| !v.is_empty())
            .map_or_else(|| PathBuf::from("npm"), PathBuf::from);
        run(
            Command::new(&npm)
                .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
                .current_dir(&dir),
            &format!("npm ci in {}", dir.display()),
        )
        .with_context(|| {
            format!("the client tests need npm on PATH (or set {NPM_VAR}) and the npm registry")
        })?;
        for tool in ["node", "mcp-inspector", "conformance"] {
            if !bin.join(tool).is_file() {
                bail!("npm ci in {} installed no {tool}", dir.display());
            }
        }
        let version = run(
            Command::new(bin.join("node")).arg("--version"),
            "node --version",
        )?;
        let version = String::from_utf8_lossy(&version.stdout).trim().to_string();
        if !version.starts_with(NODE_MAJOR) {
            bail!("the npm `node` package installed Node {version}, not {NODE_MAJOR}x");
        }
        Ok(())
    })?;
    Ok(bin)
}

/// The server binary under test: `$FISKGEN_TEST_SERVER`, or `tasks-mcp` (the golden demo
/// crate) in the `debug` directory of [`target_dir`]. Not built here: `cargo build
/// --workspace --bins` builds it (`cargo xtask test` runs that first). The binary must be
/// newer than every source its dep-info file (`tasks-mcp.d`) names, so a stale build fails
/// the tests instead of testing an old server.
pub fn demo_server() -> Result<PathBuf> {
    built_server(DEMO_SERVER, SERVER_VAR)
}

/// The server with every built-in tool: `$FISKGEN_TEST_BUILTINS_SERVER`, or
/// `tasks-builtins-mcp` (the golden crate `tests/expected/builtins`, generated from
/// `tests/fixtures/builtins.yaml`), found and checked for staleness as [`demo_server`].
pub fn builtins_server() -> Result<PathBuf> {
    built_server(BUILTINS_SERVER, BUILTINS_SERVER_VAR)
}

/// The server searching a hybrid index: `$FISKGEN_TEST_HYBRID_SERVER`, or `tasks-hybrid-mcp`
/// (the golden crate `tests/expected/hybrid`, generated from `tests/fixtures/hybrid.yaml`),
/// found and checked for staleness as [`demo_server`].
pub fn hybrid_server() -> Result<PathBuf> {
    built_server(HYBRID_SERVER, HYBRID_SERVER_VAR)
}

/// The server behind every authentication scheme: `$FISKGEN_TEST_AUTH_SERVER`, or
/// `tasks-auth-mcp` (the golden crate `tests/expected/auth`, generated from
/// `tests/fixtures/auth.yaml`), found and checked for staleness as [`demo_server`].
pub fn auth_server() -> Result<PathBuf> {
    built_server(AUTH_SERVER, AUTH_SERVER_VAR)
}

/// The fixture app's server: `$FISKGEN_TEST_FIXTURE_SERVER`, or `fixture-mcp` (the golden crate
/// `tests/expected/fixture`), found and checked for staleness as [`demo_server`].
pub fn fixture_server() -> Result<PathBuf> {
    built_server(FIXTURE_SERVER, FIXTURE_SERVER_VAR)
}

/// The server of the conformance fixture app: `$FISKGEN_TEST_CONFORMANCE_SERVER`, or
/// `test-mcp` (the golden crate `tests/expected/conformance`, generated from
/// `tests/fixtures/conformance.yaml`), found and checked for staleness as [`demo_server`].
pub fn conformance_server() -> Result<PathBuf> {
    built_server(CONFORMANCE_SERVER, CONFORMANCE_SERVER_VAR)
}

/// The binary `$<var>`, or `name` in the `debug` directory of [`target_dir`], which must be
/// newer than every source its dep-info file (`<name>.d`) names.
fn built_server(name: &str, var: &str) -> Result<PathBuf> {
    if let Some(path) = std::env::var_os(var).filter(|v| !v.is_empty()) {
        let path = PathBuf::from(path);
        if !path.is_file() {
            bail!("{var}={} is not a file", path.display());
        }
        return Ok(path);
    }
    let path = target_dir().join("debug").join(name);
    let built = match fs::metadata(&path).and_then(|meta| meta.modified()) {
        Ok(built) => built,
        Err(_) => bail!(
            "the server under test, {}, does not exist: build it with `cargo build --workspace \
             --bins` (`cargo xtask test` does that before testing), or point {var} at a \
             generated server binary",
            path.display()
        ),
    };
    // A binary older than its sources would test yesterday's server: check the sources
    // cargo built it from (its dep-info file, `<name>.d`, lists them).
    let dep_info = path.with_extension("d");
    if let Ok(text) = fs::read_to_string(&dep_info) {
        for source in dep_info_sources(&text) {
            let stale = match fs::metadata(&source).and_then(|meta| meta.modified()) {
                Ok(changed) => changed > built,
                Err(_) => true,
            };
            if stale {
                bail!(
                    "the server under test, {}, is older than its source {}: rebuild it with \
                     `cargo build --workspace --bins` (`cargo xtask test` does that before \
                     testing)",
                    path.display(),
                    source.display()
                );
            }
        }
    }
    Ok(path)
}

/// The files a Makefile-style dep-info (`target: dep dep ...`, spaces escaped as `\ `) names.
fn dep_info_sources(text: &str) -> Vec<PathBuf> {
    let Some((_, deps)) = text.lines().next().and_then(|line| line.split_once(": ")) else {
        return Vec::new();
    };
    let mut sources = Vec::new();
    let mut current = String::new();
    let mut chars = deps.chars();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' => current.extend(chars.next()),
            ' ' => {
                if !current.is_empty() {
                    sources.push(PathBuf::from(std::mem::take(&mut current)));
                }
            }
            _ => current.push(ch),
        }
    }
    if !current.is_empty() {
        sources.push(PathBuf::from(current));
    }
    sources
}

/// Cargo's target directory: `$CARGO_TARGET_DIR` (relative to the workspace root when
/// relative), or `<workspace root>/target`.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => workspace_root().join(dir),
        _ => workspace_root().join("target"),
    }
}

/// The interpreter the venv is made with.
fn base_python() -> PathBuf {
    std::env::var_os(PYTHON_VAR)
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from("python3"), PathBuf::from)
}

/// The sha256 (hex) of the files' names and contents, plus `extra`.
pub(crate) fn fingerprint(files: &[&Path], extra: &str) -> Result<String> {
    let mut hash = Sha256::new();
    hash.update(STAMP_FORMAT.as_bytes());
    hash.update([0]);
    for file in files {
        let body = fs::read(file).with_context(|| format!("reading {}", file.display()))?;
        hash.update(file.file_name().unwrap_or_default().as_encoded_bytes());
        hash.update([0]);
        hash.update((body.len() as u64).to_le_bytes());
        hash.update(&body);
    }
    hash.update(extra.as_bytes());
    Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Runs `cmd` to completion; a failure to start or a non-zero exit is an error carrying its
/// output.
pub(crate) fn run(cmd: &mut Command, what: &str) -> Result<Output> {
    let output = cmd
        .output()
        .with_context(|| format!("{what}: cannot start {:?}", cmd.get_program()))?;
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
