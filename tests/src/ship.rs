//! The tools the shipping tests use, each installed once under a lock and a stamp: cargo-zigbuild
//! (crates.io) and Zig (PyPI's `ziglang`) for portable Linux builds into [`machine_tools_dir`]
//! (kept between runs and checkouts on one machine: compiling cargo-zigbuild is the slow part),
//! actionlint (Go module proxy) for the generated workflows and the official MCP Bundle CLI
//! `mcpb` (npm) into [`clients::tools_dir`]; and the MCP Registry's `server.json` schema, from
//! the registry's Go module (Go's module cache keeps it).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::cache::cached_build;
use crate::clients::{self, fingerprint as stamp, run};

/// The cargo-zigbuild release the portable test builds with.
pub const CARGO_ZIGBUILD: &str = "0.24.1";

/// The Zig release (PyPI's `ziglang`) cargo-zigbuild links with.
pub const ZIGLANG: &str = "0.16.0";

/// The actionlint module the workflow test lints with.
pub const ACTIONLINT_MODULE: &str = "github.com/rhysd/actionlint/cmd/actionlint@v1.7.12";

/// The MCP Registry's Go module, which carries the published `server.json` schemas.
pub const REGISTRY_MODULE: &str = "github.com/modelcontextprotocol/registry@v1.8.9";

/// The schema release generated `server.json` files name (`$schema`), inside
/// [`REGISTRY_MODULE`].
pub const REGISTRY_SCHEMA: &str = "internal/validators/schemas/2025-12-11.json";

/// The registry's `server.json` schema ([`REGISTRY_SCHEMA`]), downloaded with
/// `go mod download` from the Go module proxy into Go's module cache (once per machine).
pub fn registry_schema() -> Result<PathBuf> {
    let cwd = clients::tools_dir();
    fs::create_dir_all(&cwd).with_context(|| format!("creating {}", cwd.display()))?;
    let output = run(
        Command::new("go")
            .args(["mod", "download", "-json", REGISTRY_MODULE])
            // Outside any Go module: nothing to resolve but the module asked for.
            .current_dir(&cwd)
            .env("GOFLAGS", "-mod=mod"),
        &format!("go mod download {REGISTRY_MODULE}"),
    )?;
    let described = String::from_utf8_lossy(&output.stdout);
    // `"Dir": "/root/go/pkg/mod/github.com/...@v1.8.9",` (a path Go leaves unescaped).
    let dir = described
        .lines()
        .find_map(|line| line.trim().strip_prefix("\"Dir\": \""))
        .and_then(|rest| rest.trim_end_matches(',').strip_suffix('"'))
        .with_context(|| format!("go mod download named no directory:\n{described}"))?;
    let schema = Path::new(dir).join(REGISTRY_SCHEMA);
    if !schema.is_file() {
        bail!("{REGISTRY_MODULE} has no {REGISTRY_SCHEMA} (in {dir})");
    }
    Ok(schema)
}

/// Directories to put first on `PATH` for `cargo zigbuild`: cargo-zigbuild's `bin/` and a venv
/// whose `python3` has `ziglang` (cargo-zigbuild runs `python3 -m ziglang` as Zig), installing
/// both first if they are missing or out of date.
pub fn zigbuild_path() -> Result<Vec<PathBuf>> {
    let tools = machine_tools_dir();
    let root = tools.join("zigbuild");
    let bin = root.join("bin");
    let venv = tools.join("zig-venv");
    let python = venv.join("bin").join("python3");
    let version = format!("cargo-zigbuild {CARGO_ZIGBUILD}, ziglang {ZIGLANG}");
    cached_build(
        &tools,
        "zigbuild",
        &stamp(&[], &version)?,
        &bin.join("cargo-zigbuild"),
        || {
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            run(
                Command::new(&cargo)
                    .args(["install", "--locked", "--quiet", "--force"])
                    .arg(format!("cargo-zigbuild@{CARGO_ZIGBUILD}"))
                    .arg("--root")
                    .arg(&root)
                    .env("CARGO_TARGET_DIR", tools.join("zigbuild-target")),
                "cargo install cargo-zigbuild",
            )?;
            if venv.exists() {
                fs::remove_dir_all(&venv)
                    .with_context(|| format!("removing {}", venv.display()))?;
            }
            run(
                Command::new("python3").arg("-m").arg("venv").arg(&venv),
                "python3 -m venv",
            )?;
            run(
                Command::new(&python)
                    .args([
                        "-m",
                        "pip",
                        "install",
                        "--quiet",
                        "--disable-pip-version-check",
                    ])
                    .arg(format!("ziglang=={ZIGLANG}")),
                "pip install ziglang",
            )?;
            run(
                Command::new(&python).args(["-m", "ziglang", "version"]),
                "python3 -m ziglang version",
            )?;
            Ok(())
        },
    )?;
    Ok(vec![bin, venv.join("bin")])
}

/// `$FISKGEN_TEST_TOOLS_DIR` when set (as for every test tool), else
/// `<user cache dir>/fiskgen-tests` (`$XDG_CACHE_HOME`, else `$HOME/.cache`), shared by every
/// checkout on the machine, else [`clients::tools_dir`].
pub fn machine_tools_dir() -> PathBuf {
    let set = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    if set(clients::TOOLS_DIR_VAR).is_some() {
        return clients::tools_dir();
    }
    set("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| set("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .map_or_else(clients::tools_dir, |cache| cache.join("fiskgen-tests"))
}

/// The `mcpb` CLI, installed with `npm ci` from `tests/clients/mcpb` (its lockfile pins it).
pub fn mcpb() -> Result<PathBuf> {
    let tools = clients::tools_dir();
    let source = clients::clients_dir().join("mcpb");
    let manifest = source.join("package.json");
    let lock = source.join("package-lock.json");
    let dir = tools.join("mcpb");
    let program = dir.join("node_modules").join(".bin").join("mcpb");
    cached_build(
        &tools,
        "mcpb",
        &stamp(&[&manifest, &lock], "")?,
        &program,
        || {
            if dir.exists() {
                fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
            }
            fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            for file in [&manifest, &lock] {
                fs::copy(file, dir.join(file.file_name().unwrap_or_default()))
                    .with_context(|| format!("copying {}", file.display()))?;
            }
            run(
                Command::new("npm")
                    .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
                    .current_dir(&dir),
                "npm ci (mcpb)",
            )?;
            if !program.is_file() {
                bail!("npm ci installed no mcpb in {}", dir.display());
            }
            Ok(())
        },
    )?;
    Ok(program)
}

/// `actionlint`, built with `go install` from the Go module proxy.
pub fn actionlint() -> Result<PathBuf> {
    let tools = clients::tools_dir();
    let bin = tools.join("actionlint-bin");
    let program = bin.join("actionlint");
    cached_build(
        &tools,
        "actionlint",
        &stamp(&[], ACTIONLINT_MODULE)?,
        &program,
        || {
            run(
                Command::new("go")
                    .args(["install", ACTIONLINT_MODULE])
                    .env("GOBIN", &bin)
                    .env("CGO_ENABLED", "0"),
                "go install actionlint",
            )?;
            Ok(())
        },
    )?;
    Ok(program)
}

/// `PATH` with `dirs` in front.
pub fn path_with(dirs: &[PathBuf]) -> Result<std::ffi::OsString> {
    let mut all: Vec<PathBuf> = dirs.to_vec();
    if let Some(path) = std::env::var_os("PATH") {
        all.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(all).context("building PATH")
}

/// The highest `GLIBC_x.y` symbol version `objdump -T` shows in `binary`, as (major, minor).
pub fn highest_glibc(binary: &Path) -> Result<Option<(u32, u32)>> {
    let output = run(
        Command::new("objdump").arg("-T").arg(binary),
        "objdump -T (binutils)",
    )?;
    let text = String::from_utf8_lossy(&output.stdout);
    let mut highest = None;
    for word in text.split(|c: char| c.is_whitespace() || c == '(' || c == ')') {
        let Some(version) = word.strip_prefix("GLIBC_") else {
            continue;
        };
        let mut parts = version.split('.').map(str::parse::<u32>);
        if let (Some(Ok(major)), Some(Ok(minor))) = (parts.next(), parts.next()) {
            highest = highest.max(Some((major, minor)));
        }
    }
    Ok(highest)
}
