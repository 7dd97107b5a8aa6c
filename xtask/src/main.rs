//! Project automation behind the README's two set-up commands.
//!
//! - `cargo xtask demo`: builds the demo fisk application from source, shows what an MCP server
//!   for it serves (`fiskgen info`), builds that server (`fiskgen build`) and starts it on
//!   http://127.0.0.1:8080/mcp (`--port N` for another port) until Ctrl-C.
//! - `cargo xtask test`: runs every test of the workspace.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};
use fiskgen_tests::apps::{self, App};

fn main() -> ExitCode {
    let task = std::env::args().nth(1);
    let result = match task.as_deref() {
        Some("demo") => demo(),
        Some("test") => test(),
        _ => {
            eprintln!("usage: cargo xtask demo | test");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("xtask: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root (xtask lives one level below it).
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// PATH with the directory of the built fisk applications in front.
fn path_with_apps() -> Result<OsString> {
    let mut dirs = vec![apps::bin_dir()?];
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(dirs).context("building PATH")
}

fn demo() -> Result<()> {
    let root = workspace_root();
    let port = demo_port()?;
    eprintln!("xtask: building the demo application (examples/demo) with Go");
    apps::path(App::Demo)?;
    let path = path_with_apps()?;
    let fiskgen = |args: &[&str]| -> Result<()> {
        let mut all = vec!["run", "--quiet", "--package", "fiskgen", "--"];
        all.extend_from_slice(args);
        run(Command::new(cargo())
            .current_dir(&root)
            .env("PATH", &path)
            .args(all))
    };
    fiskgen(&["info", "examples/demo/demo.yaml"])?;
    let server = root.join("target").join("demo").join("tasks-mcp");
    let server_arg = server.to_str().context("the workspace path is not UTF-8")?;
    eprintln!(
        "\nxtask: building the demo MCP server (the first build compiles the runtime: minutes)"
    );
    fiskgen(&["build", "examples/demo/demo.yaml", "-o", server_arg])?;
    eprintln!("\nxtask: starting {} (Ctrl-C stops it)", server.display());
    run(Command::new(&server)
        .current_dir(root.join("target").join("demo"))
        .env("PATH", &path)
        .args(["--port", &port]))
}

/// `cargo xtask demo --port N`, default 8080.
fn demo_port() -> Result<String> {
    let args: Vec<String> = std::env::args().skip(2).collect();
    match args.as_slice() {
        [] => Ok("8080".to_string()),
        [flag, port] if flag == "--port" && port.parse::<u16>().is_ok() => Ok(port.clone()),
        _ => bail!("usage: cargo xtask demo [--port N]"),
    }
}

/// Builds every binary first (the real-client tests run the generated golden servers), then
/// runs every test.
fn test() -> Result<()> {
    let root = workspace_root();
    run(Command::new(cargo()).current_dir(&root).args([
        "build",
        "--workspace",
        "--bins",
        "--locked",
    ]))?;
    run(Command::new(cargo())
        .current_dir(&root)
        .args(["test", "--workspace", "--locked"]))
}

fn run(command: &mut Command) -> Result<()> {
    let status = command
        .status()
        .with_context(|| format!("starting {command:?}"))?;
    if !status.success() {
        bail!("{command:?} failed: {status}");
    }
    Ok(())
}
