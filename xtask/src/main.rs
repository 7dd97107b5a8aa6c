//! Project automation behind the README's two set-up commands.
//!
//! - `cargo xtask demo`: builds the demo fisk application from source, shows what an MCP server
//!   for it serves (`fiskgen info`), builds that server (`fiskgen build`) and starts it on
//!   http://127.0.0.1:8080/mcp (`--port N` for another port) until Ctrl-C. With `--smoke` it
//!   instead lists and calls the tools with a real MCP client, stops the server and exits 0:
//!   CI runs that, so the README's first command cannot break unnoticed.
//! - `cargo xtask test`: runs every test of the workspace, then the fuzz crate's corpus replay
//!   (`fuzz/`, a workspace of its own).
//! - `cargo xtask lines [REV...]`: the runtime's code lines (blank lines, comments and tests
//!   left out), in the work tree or at each git revision ([`lines`]).

mod lines;

use std::ffi::OsString;
use std::fs;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use fiskgen_tests::apps::{self, App};
use fiskgen_tests::clients;
use nix::sys::signal::{self, Signal};
use nix::unistd::Pid;

fn main() -> ExitCode {
    let task = std::env::args().nth(1);
    let result = match task.as_deref() {
        Some("demo") => demo(),
        Some("test") => test(),
        Some("lines") => {
            let revisions: Vec<String> = std::env::args().skip(2).collect();
            lines::run(&workspace_root(), &revisions)
        }
        _ => {
            eprintln!("usage: cargo xtask demo [--port N] [--smoke] | test | lines [REV...]");
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
    let options = DemoOptions::parse(std::env::args().skip(2))?;
    let root = workspace_root();
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
    let demo_dir = root.join("target").join("demo");
    let server = demo_dir.join("tasks-mcp");
    let server_arg = server.to_str().context("the workspace path is not UTF-8")?;
    eprintln!(
        "\nxtask: building the demo MCP server (the first build compiles the runtime: minutes)"
    );
    fiskgen(&["build", "examples/demo/demo.yaml", "-o", server_arg])?;
    let mut command = Command::new(&server);
    command.current_dir(&demo_dir).env("PATH", &path);
    if options.smoke {
        let port = match options.port {
            Some(port) => port,
            None => free_port()?,
        };
        return smoke(command, port, &demo_dir);
    }
    let port = options.port.unwrap_or(8080).to_string();
    eprintln!("\nxtask: starting {} (Ctrl-C stops it)", server.display());
    run(command.args(["--port", &port]))
}

/// `cargo xtask demo [--port N] [--smoke]`.
#[derive(Debug, Default, PartialEq, Eq)]
struct DemoOptions {
    /// The port to serve on (default 8080; with `--smoke`, a free one).
    port: Option<u16>,
    /// Start the server, use it with a real MCP client, stop it.
    smoke: bool,
}

impl DemoOptions {
    const USAGE: &str = "usage: cargo xtask demo [--port N] [--smoke]";

    fn parse(args: impl IntoIterator<Item = String>) -> Result<Self> {
        let mut options = Self::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--smoke" => options.smoke = true,
                "--port" => {
                    let value = args
                        .next()
                        .with_context(|| format!("--port needs a port number\n{}", Self::USAGE))?;
                    let port = value.parse::<u16>().ok().filter(|port| *port != 0);
                    let port = port.with_context(|| {
                        format!(
                            "--port {value}: not a port number (1-65535)\n{}",
                            Self::USAGE
                        )
                    })?;
                    options.port = Some(port);
                }
                other => bail!("unknown argument {other:?}\n{}", Self::USAGE),
            }
        }
        Ok(options)
    }
}

/// A port nobody listens on right now.
fn free_port() -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").context("finding a free port")?;
    Ok(listener.local_addr().context("finding a free port")?.port())
}

/// How long the demo server may take to start listening.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the demo server may take to stop after SIGTERM.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// The README's first command, checked: starts the built server, lists and calls its tools with
/// the official Python SDK client (`tests/clients/python/list_call.py`), then stops it with
/// SIGTERM and requires a clean exit.
fn smoke(mut command: Command, port: u16, demo_dir: &Path) -> Result<()> {
    let python = clients::python().context("installing the Python SDK client")?;
    let scratch = demo_dir.join("smoke");
    if scratch.exists() {
        fs::remove_dir_all(&scratch).with_context(|| format!("removing {}", scratch.display()))?;
    }
    fs::create_dir_all(&scratch).with_context(|| format!("creating {}", scratch.display()))?;
    let store = scratch.join("tasks.json");

    eprintln!("\nxtask: smoke test: starting the server on port {port}");
    let mut server = command
        .args(["--port", &port.to_string()])
        .spawn()
        .context("starting the demo server")?;
    let outcome = wait_listening(&mut server, port).and_then(|()| {
        let url = format!("http://127.0.0.1:{port}/mcp");
        eprintln!("xtask: smoke test: listing and calling the tools at {url} with the Python SDK");
        run(Command::new(&python)
            .arg(clients::scripts_dir().join("list_call.py"))
            .args(["--url", &url, "--store"])
            .arg(&store))
    });
    let stopped = stop(&mut server);
    outcome?;
    stopped?;
    eprintln!("xtask: smoke test passed: the demo server served a real client and stopped cleanly");
    Ok(())
}

/// Waits until the server accepts connections on `port`, failing early when it exits.
fn wait_listening(server: &mut Child, port: u16) -> Result<()> {
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        if let Some(status) = server.try_wait().context("waiting for the demo server")? {
            bail!("the demo server exited before it listened on port {port}: {status}");
        }
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!(
                "the demo server did not listen on port {port} within {}s",
                START_TIMEOUT.as_secs()
            );
        }
        thread::sleep(Duration::from_millis(50));
    }
}

/// Stops the server with SIGTERM and requires it to exit successfully in time; kills it
/// otherwise.
fn stop(server: &mut Child) -> Result<()> {
    if server.try_wait()?.is_none() {
        let pid = i32::try_from(server.id()).context("the server's pid")?;
        signal::kill(Pid::from_raw(pid), Signal::SIGTERM).context("sending SIGTERM")?;
    }
    let deadline = Instant::now() + STOP_TIMEOUT;
    loop {
        if let Some(status) = server.try_wait().context("waiting for the demo server")? {
            if !status.success() {
                bail!("the demo server did not stop cleanly after SIGTERM: {status}");
            }
            return Ok(());
        }
        if Instant::now() >= deadline {
            let _ = server.kill();
            let _ = server.wait();
            bail!(
                "the demo server was still running {}s after SIGTERM (killed)",
                STOP_TIMEOUT.as_secs()
            );
        }
        thread::sleep(Duration::from_millis(50));
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
        .args(["test", "--workspace", "--locked"]))?;
    fuzz_replay(&root)
}

/// The fuzz crate is a workspace of its own (so its `fuzzing` feature of the runtime never
/// reaches the main workspace's builds): its corpus replay runs here, in the main workspace's
/// target directory (`CARGO_TARGET_DIR` when set), so the dependencies both share are built
/// once. docs/reliability.md.
fn fuzz_replay(root: &Path) -> Result<()> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    run(Command::new(cargo()).current_dir(root).args([
        OsString::from("test"),
        "--manifest-path".into(),
        root.join("fuzz").join("Cargo.toml").into(),
        "--locked".into(),
        "--target-dir".into(),
        target.into(),
    ]))
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

#[cfg(test)]
mod tests {
    use super::DemoOptions;

    fn parse(args: &[&str]) -> anyhow::Result<DemoOptions> {
        DemoOptions::parse(args.iter().map(|arg| arg.to_string()))
    }

    #[test]
    fn demo_options_take_a_port_and_smoke_in_any_order() {
        assert_eq!(parse(&[]).ok(), Some(DemoOptions::default()));
        let both = DemoOptions {
            port: Some(18095),
            smoke: true,
        };
        assert_eq!(parse(&["--port", "18095", "--smoke"]).ok(), Some(both));
        let both = DemoOptions {
            port: Some(18095),
            smoke: true,
        };
        assert_eq!(parse(&["--smoke", "--port", "18095"]).ok(), Some(both));
    }

    #[test]
    fn demo_options_refuse_bad_ports_and_unknown_arguments_with_the_usage() {
        for (args, expected) in [
            (&["--port"][..], "--port needs a port number"),
            (&["--port", "0"][..], "--port 0: not a port number"),
            (&["--port", "http"][..], "--port http: not a port number"),
            (&["--smokey"][..], "unknown argument \"--smokey\""),
        ] {
            let error = parse(args).err().map(|error| error.to_string());
            let error = error.unwrap_or_default();
            assert!(error.starts_with(expected), "{args:?}: {error}");
            assert!(error.ends_with(DemoOptions::USAGE), "{args:?}: {error}");
        }
    }
}
