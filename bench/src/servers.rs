//! Starting the servers under test (ours on each transport, or the peer), timing their first
//! `tools/list` (with rmcp's client and with the raw client), the raw client's CPU per
//! `tools/list`, and reading their memory.

use std::fs;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use fiskgen_tests::apps;

use crate::client::{self, Client, Transport};
use crate::load::{Budget, Cpu, cpu_of};
use crate::report::Server;
use crate::{Mode, Options, Setup, TOOL_SLOTS, raw};

pub(crate) async fn peer_absent_reason(options: &Options) -> String {
    let mut reason = "no --peer-command was given".to_string();
    if options.mode == Mode::Smoke {
        return reason;
    }
    // One look-up with Go's own client: can the peer be fetched here at all?
    let probe = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::process::Command::new("go")
            .args(["list", "-m", "-json", &options.peer_module])
            .env("GOWORK", "off")
            .current_dir(std::env::temp_dir())
            .stdin(Stdio::null())
            .output(),
    )
    .await;
    let evidence = match probe {
        Err(_) => "timed out after 60 s".to_string(),
        Ok(Err(error)) => format!("cannot run go: {error}"),
        Ok(Ok(output)) if output.status.success() => format!(
            "it resolves ({}); build it and pass --peer-command",
            String::from_utf8_lossy(&output.stdout)
                .lines()
                .find(|l| l.contains("\"Version\""))
                .unwrap_or("")
                .trim()
        ),
        // Go's message quotes the proxy's URL; keep only what it answered.
        Ok(Ok(output)) => String::from_utf8_lossy(&output.stderr)
            .split_whitespace()
            .filter(|word| !word.contains("://"))
            .collect::<Vec<_>>()
            .join(" "),
    };
    reason.push_str(&format!(
        "; `go list -m -json {}` on this machine: {evidence}",
        options.peer_module
    ));
    reason
}

/// A running server with a connected client.
pub(crate) struct Running {
    pub(crate) client: Client,
    pub(crate) pid: u32,
    child: Option<tokio::process::Child>,
}

impl Running {
    pub(crate) async fn stop(self) {
        self.client.close().await;
        if let Some(mut child) = self.child {
            let _ = child.kill().await;
        }
    }
}

pub(crate) fn path_with_apps() -> Result<std::ffi::OsString> {
    let mut paths = vec![apps::bin_dir()?];
    if let Some(path) = std::env::var_os("PATH") {
        paths.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(paths).context("building PATH")
}

pub(crate) fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("finding a free port")?;
    Ok(listener.local_addr().context("finding a free port")?.port())
}

pub(crate) fn stderr_log(setup: &Setup, server: Server) -> Result<Stdio> {
    let path = setup.workdir.join(format!("{}.log", server.slug()));
    let file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    Ok(Stdio::from(file))
}

pub(crate) fn server_command(
    setup: &Setup,
    server: Server,
    port: Option<u16>,
) -> Result<tokio::process::Command> {
    let mut command = match server {
        Server::Ours(transport) => {
            let mut command = tokio::process::Command::new(&setup.server);
            command
                .arg("--application-path")
                .arg(&setup.app)
                .arg("--max-concurrent-tools")
                .arg(TOOL_SLOTS.to_string());
            match (transport, port) {
                (Transport::Stdio, _) => {
                    command.arg("--stdio");
                }
                (_, Some(port)) => {
                    command.args(["--address", "127.0.0.1", "--port", &port.to_string()]);
                }
                (_, None) => bail!("an HTTP server needs a port"),
            }
            command
        }
        Server::Peer => bail!("the peer is started by peer_command"),
    };
    command
        .current_dir(&setup.workdir)
        .env("PATH", path_with_apps()?)
        .env_remove("RUST_LOG")
        .stderr(stderr_log(setup, server)?)
        .kill_on_drop(true);
    Ok(command)
}

pub(crate) fn peer_command(
    options: &Options,
    setup: &Setup,
    port: u16,
) -> Result<(tokio::process::Command, String)> {
    let template = options.peer_command.as_deref().context("no peer command")?;
    let fill = |text: &str| {
        // The peer's copy of the config (crate::peer::write_config).
        text.replace(
            "{config}",
            &setup.workdir.join("peer.yaml").display().to_string(),
        )
        .replace("{port}", &port.to_string())
        .replace("{app}", &setup.app.display().to_string())
    };
    let mut command = tokio::process::Command::new("sh");
    command
        .arg("-c")
        .arg(format!("exec {}", fill(template)))
        .current_dir(&setup.workdir)
        .env("PATH", path_with_apps()?)
        .env("FISK_AI_MCP_PORT", port.to_string())
        .env("FISK_AI_MCP_ADDRESS", "127.0.0.1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr_log(setup, Server::Peer)?)
        .kill_on_drop(true);
    Ok((command, fill(&options.peer_url)))
}

/// The command of an HTTP `server` on `port`, its MCP URL and the era to speak to it.
fn http_command(
    options: &Options,
    setup: &Setup,
    server: Server,
    port: u16,
) -> Result<(tokio::process::Command, String, Transport)> {
    Ok(match server {
        Server::Ours(transport) => (
            server_command(setup, server, Some(port))?,
            format!("http://127.0.0.1:{port}/mcp"),
            transport,
        ),
        Server::Peer => {
            let (command, url) = peer_command(options, setup, port)?;
            (command, url, Transport::Legacy)
        }
    })
}

/// Starts `server` and waits for its first successful `tools/list`: the server, the time from
/// spawn to that answer, and the number of tools.
pub(crate) async fn start(
    options: &Options,
    setup: &Setup,
    server: Server,
) -> Result<(Running, Duration, usize)> {
    if server == Server::Ours(Transport::Stdio) {
        let command = server_command(setup, server, None)?;
        let stderr = stderr_log(setup, server)?;
        let began = Instant::now();
        let (client, pid) = Client::stdio(command, stderr).await?;
        let tools = client::list_tools(&client.peer()).await?;
        let took = began.elapsed();
        return Ok((
            Running {
                client,
                pid,
                child: None,
            },
            took,
            tools,
        ));
    }
    let port = free_port()?;
    let (mut command, url, transport) = http_command(options, setup, server, port)?;
    command.stdin(Stdio::null()).stdout(Stdio::null());
    let began = Instant::now();
    let mut child = command
        .spawn()
        .with_context(|| format!("starting {}", server.label()))?;
    let pid = child.id().context("the server has no pid")?;
    let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    wait_until_listening(&mut child, address, began, server, setup).await?;
    let client = Client::http(&url, transport).await?;
    let tools = client::list_tools(&client.peer()).await?;
    let took = began.elapsed();
    Ok((
        Running {
            client,
            pid,
            child: Some(child),
        },
        took,
        tools,
    ))
}

/// Polls `address` every 0.2 ms until the server spawned at `began` accepts a connection; an
/// error when it exits first or has not listened after 30 s.
pub(crate) async fn wait_until_listening(
    child: &mut tokio::process::Child,
    address: std::net::SocketAddr,
    began: Instant,
    server: Server,
    setup: &Setup,
) -> Result<()> {
    loop {
        if tokio::net::TcpStream::connect(address).await.is_ok() {
            return Ok(());
        }
        if let Some(status) = child.try_wait().context("waiting for the server")? {
            bail!(
                "{} exited before listening ({status}); see {}",
                server.label(),
                setup.workdir.display()
            );
        }
        if began.elapsed() > Duration::from_secs(30) {
            bail!("{} did not listen on {address} within 30 s", server.label());
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Starts `server` and times spawn to the end of its first `tools/list` answer with the raw
/// client ([`raw`]); the server is stopped after.
pub(crate) async fn raw_start(
    options: &Options,
    setup: &Setup,
    server: Server,
) -> Result<Duration> {
    if server == Server::Ours(Transport::Stdio) {
        let command = server_command(setup, server, None)?.into_std();
        return raw::stdio(command);
    }
    let port = free_port()?;
    let (mut command, transport) = match server {
        Server::Ours(transport) => (server_command(setup, server, Some(port))?, transport),
        Server::Peer => (peer_command(options, setup, port)?.0, Transport::Legacy),
    };
    command.stdin(Stdio::null()).stdout(Stdio::null());
    let began = Instant::now();
    let mut child = command
        .spawn()
        .with_context(|| format!("starting {}", server.label()))?;
    let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let took = match wait_until_listening(&mut child, address, began, server, setup).await {
        Ok(()) => raw::http(address, transport, began)
            .with_context(|| format!("{}: the raw client's start", server.label())),
        Err(error) => Err(error),
    };
    let _ = child.kill().await;
    took
}

/// The lists before a CPU reading starts.
const WARM_LISTS: usize = 20;

/// Starts `server` and measures its CPU per `tools/list` with the raw client's requests back
/// to back ([`raw::ListSession::cpu_per_list`]); the server is stopped after. Also the length
/// on the wire of the last answer ([`raw::ListSession::wire_len`]).
pub(crate) async fn raw_list_cpu(
    options: &Options,
    setup: &Setup,
    server: Server,
    settle: Duration,
    budget: Budget,
) -> Result<(Cpu, usize)> {
    let context = || format!("{}: the raw client's tools/list CPU", server.label());
    if server == Server::Ours(Transport::Stdio) {
        let command = server_command(setup, server, None)?.into_std();
        let mut session = raw::ListSession::stdio(command).with_context(context)?;
        let pid = session.pid().context("the server has no pid")?;
        let cpu = session
            .cpu_per_list(|| cpu_of(pid), WARM_LISTS, settle, budget)
            .await
            .with_context(context)?;
        return Ok((cpu, session.wire_len()));
    }
    let port = free_port()?;
    let (mut command, url, transport) = http_command(options, setup, server, port)?;
    command.stdin(Stdio::null()).stdout(Stdio::null());
    let began = Instant::now();
    let mut child = command.spawn().with_context(context)?;
    let pid = child.id().context("the server has no pid")?;
    let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let measured = match wait_until_listening(&mut child, address, began, server, setup).await {
        Ok(()) => match raw::ListSession::http(&url, transport).await {
            Ok(mut session) => session
                .cpu_per_list(|| cpu_of(pid), WARM_LISTS, settle, budget)
                .await
                .map(|cpu| (cpu, session.wire_len())),
            Err(error) => Err(error),
        },
        Err(error) => Err(error),
    };
    let _ = child.kill().await;
    measured.with_context(context)
}

/// VmRSS and VmHWM of `pid`, in KiB.
pub(crate) fn memory_kib(pid: u32) -> Result<(f64, f64)> {
    let status = fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("reading /proc/{pid}/status"))?;
    let field = |name: &str| -> Result<f64> {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kib| kib.parse::<f64>().ok())
            .with_context(|| format!("no {name} in /proc/{pid}/status"))
    };
    Ok((field("VmRSS:")?, field("VmHWM:")?))
}
