//! The largest fisk application in the default test run: the real `nats` CLI (natscli v0.5.0)
//! against a real `nats-server` with JetStream (both installed from the Go module proxy and
//! cached like the other Go builds, [`fiskgen_tests::apps`]), through an MCP server that
//! `fiskgen build` makes from `tests/fixtures/nats-streams.yaml`.
//!
//! A stream is created with the CLI, read with `stream_info` over MCP by the Python SDK, and
//! `stream_rm` (gated by `confirm_tags: [impact:rw]`) is refused when the user declines and runs
//! when they approve, in both protocol eras; the CLI then confirms the stream is gone.
//!
//! The server is a release build in `target/fiskgen-e2e`, the target directory that
//! `fiskgen/tests/build.rs` keeps warm, with the same embedded runtime: after the first run only
//! the two-tool crate compiles (a few seconds).

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, PoisonError, mpsc};
use std::thread;
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use fiskgen_tests::apps::{self, App, workspace_root};
use tempfile::TempDir;

use super::clients::{Finished, Server, python, run_bounded, strings};

/// How long nats-server may take to say it is ready.
const NATS_START: Duration = Duration::from_secs(20);
/// Bound of one `nats` CLI run.
const CLI_TIMEOUT: Duration = Duration::from_secs(30);
/// Bound of `fiskgen build` (a cold target directory compiles the runtime in release mode).
const BUILD_TIMEOUT: Duration = Duration::from_secs(900);

/// A `nats-server -js` on a free loopback port, killed on drop.
pub(super) struct NatsServer {
    child: Child,
    pub(super) url: String,
    port: u16,
    options: Vec<String>,
    dir: TempDir,
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl NatsServer {
    /// Its process id.
    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Starts it again (after it was killed) on the same port with the same JetStream store.
    pub(super) fn restart(&mut self) -> Result<()> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let options: Vec<&str> = self.options.iter().map(String::as_str).collect();
        self.child = spawn_node(self.port, self.dir.path(), &options)?;
        Ok(())
    }
}

/// A port nothing listens on right now.
fn free_port() -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").context("finding a free port")?;
    Ok(listener.local_addr()?.port())
}

/// Starts nats-server with JetStream in a temp directory; waits (bounded) until it is ready.
pub(super) fn start_nats_server() -> Result<NatsServer> {
    start_nats_server_with(&[])
}

/// [`start_nats_server`] with more command-line options (`--tls ...`).
pub(super) fn start_nats_server_with(options: &[&str]) -> Result<NatsServer> {
    start_nats_node(free_port()?, options)
}

/// Three nats-servers with JetStream clustered on loopback (cluster `fiskgen`, nodes `n1`..`n3`),
/// each ready; JetStream's meta leader may still be in election when this returns.
pub(super) fn start_nats_cluster() -> Result<Vec<NatsServer>> {
    let routes: Vec<u16> = (0..3).map(|_| free_port()).collect::<Result<_>>()?;
    let all = routes
        .iter()
        .map(|port| format!("nats://127.0.0.1:{port}"))
        .collect::<Vec<_>>()
        .join(",");
    let mut nodes = Vec::new();
    for (i, route) in routes.iter().enumerate() {
        let name = format!("n{}", i + 1);
        let cluster = format!("nats://127.0.0.1:{route}");
        nodes.push(start_nats_node(
            free_port()?,
            &[
                "-n",
                &name,
                "--cluster_name",
                "fiskgen",
                "--cluster",
                &cluster,
                "--routes",
                &all,
            ],
        )?);
    }
    Ok(nodes)
}

/// One nats-server with JetStream on `port`, with `options`.
fn start_nats_node(port: u16, options: &[&str]) -> Result<NatsServer> {
    let dir = tempfile::tempdir().context("creating the nats-server directory")?;
    let child = spawn_node(port, dir.path(), options)?;
    Ok(NatsServer {
        child,
        url: format!("nats://127.0.0.1:{port}"),
        port,
        options: options.iter().map(|o| o.to_string()).collect(),
        dir,
    })
}

/// nats-server with JetStream on `port`, its store in `dir`, with `options`; returns once it is
/// ready (bounded).
fn spawn_node(port: u16, dir: &Path, options: &[&str]) -> Result<Child> {
    let binary = apps::path(App::NatsServer)?;
    let port = port.to_string();
    let mut child = Command::new(&binary)
        .args(["-a", "127.0.0.1", "-p", &port, "-js", "-sd"])
        .arg(dir.join("jetstream"))
        .args(options)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", binary.display()))?;
    let stderr = child.stderr.take().context("no stderr pipe")?;
    let (ready, seen) = mpsc::channel();
    thread::spawn(move || {
        let mut log = String::new();
        let mut ready = Some(ready);
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            log.push_str(&line);
            log.push('\n');
            if line.contains("Server is ready")
                && let Some(ready) = ready.take()
            {
                let _ = ready.send(Ok(()));
            }
        }
        if let Some(ready) = ready {
            let _ = ready.send(Err(log));
        }
    });
    match seen.recv_timeout(NATS_START) {
        Ok(Ok(())) => Ok(child),
        Ok(Err(log)) => {
            let _ = child.kill();
            let _ = child.wait();
            bail!("nats-server exited before it was ready:\n{log}")
        }
        Err(error) => {
            let _ = child.kill();
            let _ = child.wait();
            bail!("nats-server was not ready within {NATS_START:?} ({error})")
        }
    }
}

/// Runs the real `nats` CLI against `url`, with its configuration in `home`.
pub(super) fn nats(url: &str, home: &Path, args: &[&str]) -> Result<Finished> {
    let mut cmd = Command::new(apps::path(App::Nats)?);
    cmd.args(["--server", url])
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env_remove("NATS_URL")
        .env_remove("NATS_CONTEXT");
    run_bounded(&mut cmd, CLI_TIMEOUT, &format!("nats {}", args.join(" ")))?.success()
}

/// `fiskgen build tests/fixtures/nats-streams.yaml` into `dir`.
fn build_server(dir: &Path) -> Result<PathBuf> {
    fiskgen_build(
        "tests/fixtures/nats-streams.yaml",
        &apps::path(App::Nats)?,
        &dir.join("nats-mcp"),
    )
}

/// `fiskgen build CONFIG` (relative to the workspace root) of `app`'s server into `binary`,
/// through the library, with the runtime it embeds, in the warm shared release target
/// directory and its cache layout (the generated crate in a directory named after the config).
/// One build at a time in this process: the builds share the runtime's directory.
pub(super) fn fiskgen_build(config: &str, app: &Path, binary: &Path) -> Result<PathBuf> {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let e2e = workspace_root().join("target").join("fiskgen-e2e");
    // Where `fiskgen build` puts things with XDG_CACHE_HOME=target/fiskgen-e2e/cache, as
    // fiskgen/tests/build.rs runs it: the same runtime directory, so nothing recompiles.
    let cache = e2e.join("cache").join("fiskgen");
    let stem = Path::new(config)
        .file_stem()
        .and_then(|stem| stem.to_str())
        .with_context(|| format!("{config} has no file name"))?;
    // nats-streams.yaml keeps the crate directory it always had.
    let crate_name = if stem == "nats-streams" { "nats" } else { stem };
    let options = fiskgen::builder::BuildOptions {
        config: workspace_root().join(config),
        source: fiskgen::ModelSource::App(app.to_path_buf()),
        output: Some(binary.to_path_buf()),
        target_dir: Some(e2e.join("target")),
        crate_dir: Some(cache.join("crates").join(crate_name)),
        runtime_path: None,
        cache_dir: Some(cache.clone()),
        allow_empty: false,
        platform: fiskgen::portable::Platform::default(),
    };
    let (done, finished) = mpsc::channel();
    thread::spawn(move || {
        let _ = done.send(fiskgen::builder::build(&options));
    });
    match finished.recv_timeout(BUILD_TIMEOUT) {
        Ok(built) => {
            built.with_context(|| format!("fiskgen build {config}"))?;
        }
        Err(error) => bail!("fiskgen build did not finish within {BUILD_TIMEOUT:?} ({error})"),
    }
    ensure!(
        binary.is_file(),
        "fiskgen build wrote no {}",
        binary.display()
    );
    Ok(binary.to_path_buf())
}

/// Case 7 of the reliability issue: the real natscli, a real nats-server, a real client.
#[test]
fn natscli_streams_over_mcp_read_freely_and_removed_only_when_approved() -> Result<()> {
    let nats_server = start_nats_server()?;
    let home = tempfile::tempdir().context("creating the CLI's home")?;
    let url = nats_server.url.as_str();
    for (stream, subjects) in [("ORDERS", "orders.>"), ("EVENTS", "events.>")] {
        nats(
            url,
            home.path(),
            &[
                "stream",
                "add",
                stream,
                "--subjects",
                subjects,
                "--storage",
                "memory",
                "--defaults",
            ],
        )?;
    }
    nats(url, home.path(), &["pub", "orders.new", "first order"])?;

    let scratch = tempfile::tempdir().context("creating the build directory")?;
    let binary = build_server(scratch.path())?;
    let cli = apps::path(App::Nats)?;
    let env: [(&str, &OsStr); 3] = [
        ("NATS_URL", OsStr::new(url)),
        ("HOME", home.path().as_os_str()),
        ("XDG_CONFIG_HOME", scratch.path().as_os_str()),
    ];
    let server = Server::spawn_app(&binary, home.path(), &cli, &env, &[])?;

    for (mode, stream, messages) in [("legacy", "ORDERS", 1), ("2026-07-28", "EVENTS", 0)] {
        let run = python(
            "nats.py",
            &strings(&["--url", &server.url, "--mode", mode, "--stream", stream]),
        )?;
        run.has(&format!("stream_info: {stream} with subjects"))?
            .has(&format!("and {messages} messages"))?
            .has(&format!(
                "declined: Not approved: the user declined to run \"stream rm --force -- {stream}\""
            ))?
            .has(&format!(
                "approved: ran stream rm --force -- {stream} -> exit 0"
            ))?;
        let removals = server
            .log()
            .lines()
            .filter(|line| line.contains(&format!("Ran stream rm --force -- {stream}")))
            .count();
        ensure!(
            removals <= 1,
            "stream rm ran {removals} times:\n{}",
            server.log()
        );
    }
    server.wait_for_line(&["Ran stream rm --force -- EVENTS"])?;
    server.wait_for_line(&["stream rm --force -- ORDERS", "outcome=\"declined\""])?;

    // The CLI agrees: both streams are gone.
    let listed = nats(url, home.path(), &["stream", "ls", "--names"])?;
    ensure!(
        !listed.stdout.contains("ORDERS") && !listed.stdout.contains("EVENTS"),
        "streams left after the approved removals:\n{}",
        listed.report()
    );
    Ok(())
}
