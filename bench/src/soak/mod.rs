//! The fault soak: thousands of `tools/call`s through real clients (rmcp here, the Python SDK
//! in child processes; both eras over HTTP, and stdio) against the generated fixture server
//! (`tests/expected/fixture`, running the real fixture app), at a concurrency above the
//! server's limit, mixing normal calls with faults (see [`Kind`]), while the main HTTP server
//! is stopped with SIGTERM and restarted mid-load.
//!
//! Every call carries a unique token that the command prints back and appends to a ledger
//! file when it starts, so each answer is checked against what that call must produce (none
//! lost, none mixed up, none run twice). Afterwards no process started by the run may be left,
//! and the servers' file descriptors and RSS are compared before and after.
//! `fiskgen-soak --full` writes the figures to docs/reliability.md's soak section; the smoke
//! mode runs in the default tests.

mod check;
mod lanes;
mod plan;
mod report;

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use fiskgen_tests::apps::{self, App};
use fiskgen_tests::clients;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use tokio::sync::mpsc;

pub use check::{Answer, Ending, Restart, Verdict};
pub use plan::{Call, Kind, Lane};
pub use report::{FD_SLACK, RSS_GROWTH_KIB, ServerFigures, SoakReport};

use crate::client::Transport;
use lanes::{Target, now};

/// How big a run is.
#[derive(Debug, Clone)]
pub struct SoakOptions {
    /// Calls in all.
    pub calls: usize,
    /// How many of them print [`SoakOptions::flood_bytes`].
    pub floods: usize,
    /// What a flood prints.
    pub flood_bytes: u64,
    /// How often the main HTTP server is stopped (SIGTERM) and restarted mid-load.
    pub restarts: usize,
    /// Calls each lane keeps in flight (eight lanes; four reach the main server).
    pub per_lane: usize,
    /// The servers' `--max-concurrent-tools`.
    pub max_concurrent: u32,
    /// The servers' `--tool-timeout`.
    pub tool_timeout: Duration,
    /// The plan's seed.
    pub seed: u64,
}

impl SoakOptions {
    /// How long a client waits for one answer before it gives up (and the call counts as lost
    /// unless a restart broke its connection): three tool timeouts and ten seconds.
    pub fn give_up(&self) -> Duration {
        self.tool_timeout * 3 + Duration::from_secs(10)
    }
}

impl SoakOptions {
    /// A few hundred calls in seconds, for the default tests. Two floods: each lane runs at
    /// its own pace, so a call's place in the plan is no promise of when it runs, and one flood
    /// may still be running at the restart; the other then ends as expected. They are 16 MiB
    /// (256 times the output cap): larger, on a machine busy with the rest of the suite, one can
    /// outlast the tool timeout and end as a timeout instead of a truncated result.
    pub fn smoke() -> Self {
        SoakOptions {
            calls: 300,
            floods: 2,
            flood_bytes: 16 << 20,
            restarts: 1,
            per_lane: 4,
            max_concurrent: 4,
            tool_timeout: Duration::from_secs(2),
            seed: 1,
        }
    }

    /// The run: 10,000 calls, floods of 1 GiB, three restarts.
    pub fn full() -> Self {
        SoakOptions {
            calls: 10_000,
            floods: 10,
            flood_bytes: 1 << 30,
            restarts: 3,
            per_lane: 4,
            max_concurrent: 4,
            tool_timeout: Duration::from_secs(3),
            seed: 14,
        }
    }
}

/// A server process of the run.
struct Process {
    child: tokio::process::Child,
    pid: u32,
    start: (usize, u64, u64),
}

/// What the main and the missing-application servers are started with.
struct Servers {
    binary: PathBuf,
    dir: PathBuf,
    common: Vec<String>,
}

impl Servers {
    async fn start(&self, role: &str, port: u16, application: &Path, n: usize) -> Result<Process> {
        let log = fs::File::create(self.dir.join(format!("{role}-{n}.log")))
            .context("creating a server log")?;
        let mut command = tokio::process::Command::new(&self.binary);
        command
            .args(["--address", "127.0.0.1", "--port", &port.to_string()])
            .arg("--application-path")
            .arg(application)
            .args(&self.common)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log))
            .kill_on_drop(true);
        let began = Instant::now();
        let mut child = command.spawn().context("starting the server")?;
        let pid = child.id().context("the server has no pid")?;
        let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        while tokio::net::TcpStream::connect(address).await.is_err() {
            if let Some(status) = child.try_wait()? {
                bail!(
                    "the {role} server exited before listening ({status}); see {}",
                    self.dir.display()
                );
            }
            if began.elapsed() > Duration::from_secs(30) {
                bail!("the {role} server did not listen on {address} within 30 s");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(Process {
            child,
            pid,
            start: figures(pid)?,
        })
    }
}

/// Stops `process` with SIGTERM and waits for it; its figures before the stop.
async fn stop(role: &str, mut process: Process, at_rest: bool) -> Result<ServerFigures> {
    let end = figures(process.pid)?;
    kill(Pid::from_raw(process.pid as i32), Signal::SIGTERM).context("SIGTERM")?;
    let status = tokio::time::timeout(Duration::from_secs(20), process.child.wait())
        .await
        .context("the server did not exit within 20 s of SIGTERM")??;
    Ok(ServerFigures {
        role: role.to_string(),
        pid: process.pid,
        fds_start: process.start.0,
        fds_end: end.0,
        rss_start_kib: process.start.1,
        rss_end_kib: end.1,
        hwm_kib: end.2,
        exit: status.to_string(),
        at_rest,
    })
}

/// Open file descriptors, VmRSS and VmHWM (KiB) of `pid`, from /proc.
fn figures(pid: u32) -> Result<(usize, u64, u64)> {
    let fds = fs::read_dir(format!("/proc/{pid}/fd"))
        .with_context(|| format!("listing /proc/{pid}/fd"))?
        .count();
    let status = fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("reading /proc/{pid}/status"))?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kib| kib.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Ok((fds, field("VmRSS:"), field("VmHWM:")))
}

/// Processes whose executable or command line lies in `dir` (the run's copy of the fixture,
/// its children, stdio servers started for the run).
fn leftovers(dir: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mark = dir.display().to_string();
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let exe = fs::read_link(entry.path().join("exe"))
            .map(|path| path.display().to_string())
            .unwrap_or_default();
        let cmdline = fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let state = fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = state
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
        if !zombie && (exe.starts_with(&mark) || cmdline.contains(&mark)) {
            found.push(format!("{pid} {}", cmdline.trim()));
        }
    }
    found
}

/// Runs the soak.
pub fn run(options: &SoakOptions) -> Result<SoakReport> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting tokio")?;
    runtime.block_on(run_async(options))
}

async fn run_async(options: &SoakOptions) -> Result<SoakReport> {
    let began = Instant::now();
    let run = format!("soak{:08x}", plan::Rng::new(now().to_bits()).next() as u32);
    let dir = apps::workspace_root()
        .join("target")
        .join("soak")
        .join(&run);
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let fixture = dir.join("fixture");
    fs::copy(apps::path(App::Fixture)?, &fixture).context("copying the fixture app")?;
    let missing = dir.join("missing-fixture");
    let ledger = dir.join("ledger");
    let server = clients::fixture_server()?;
    let python = clients::python()?;
    let script = clients::scripts_dir().join("soak.py");

    let limits = vec![
        "--max-concurrent-tools".to_string(),
        options.max_concurrent.to_string(),
        "--tool-timeout".to_string(),
        format!("{}ms", options.tool_timeout.as_millis()),
    ];
    let servers = Servers {
        binary: server.clone(),
        dir: dir.clone(),
        common: limits.clone(),
    };
    let main_port = free_port()?;
    let missing_port = free_port()?;
    let mut main = servers.start("main", main_port, &fixture, 0).await?;
    let missing_server = servers.start("missing", missing_port, &missing, 0).await?;
    let main_url = format!("http://127.0.0.1:{main_port}/mcp");
    let missing_url = format!("http://127.0.0.1:{missing_port}/mcp");
    let mut stdio_args = vec!["--stdio".to_string(), "--application-path".to_string()];
    stdio_args.push(fixture.display().to_string());
    // The stdio servers get half the slots, so their lanes too run above the limit.
    stdio_args.extend([
        "--max-concurrent-tools".to_string(),
        (options.max_concurrent / 2).max(1).to_string(),
        "--tool-timeout".to_string(),
        format!("{}ms", options.tool_timeout.as_millis()),
        // Marks the stdio servers as this run's for the leftover check.
        "--allowed-host".to_string(),
        dir.display().to_string(),
    ]);

    let calls = plan::plan(
        &run,
        options.calls,
        options.floods,
        options.flood_bytes,
        &ledger,
        options.seed,
    );
    let mut by_lane: HashMap<Lane, Vec<Call>> = HashMap::new();
    for call in &calls {
        by_lane.entry(call.lane).or_default().push(call.clone());
    }
    let (sender, mut receiver) = mpsc::unbounded_channel();
    let mut lanes = tokio::task::JoinSet::new();
    for lane in Lane::ALL {
        let calls = by_lane.remove(&lane).unwrap_or_default();
        let sender = sender.clone();
        let per_lane = options.per_lane;
        let give_up = format!("--give-up-after={}", options.give_up().as_secs_f64());
        let python_args = |url: &str, mode: &str| {
            vec![
                "--url".to_string(),
                url.to_string(),
                "--mode".to_string(),
                mode.to_string(),
                give_up.clone(),
            ]
        };
        let python = python.clone();
        let script = script.clone();
        match lane {
            Lane::RmcpLegacy | Lane::RmcpModern | Lane::RmcpStdio | Lane::RmcpMissing => {
                let target = match lane {
                    Lane::RmcpLegacy => Target::Http(main_url.clone(), Transport::Legacy),
                    Lane::RmcpModern => Target::Http(main_url.clone(), Transport::Modern),
                    Lane::RmcpMissing => Target::Http(missing_url.clone(), Transport::Legacy),
                    _ => Target::Stdio(server.clone(), stdio_args.clone()),
                };
                let give_up = options.give_up();
                lanes.spawn(async move {
                    lanes::rmcp_lane(target, calls, per_lane, give_up, sender).await;
                    Ok(())
                });
            }
            _ => {
                let args = match lane {
                    Lane::PythonLegacy => python_args(&main_url, "legacy"),
                    Lane::PythonModern => python_args(&main_url, "2026-07-28"),
                    Lane::PythonMissing => python_args(&missing_url, "2026-07-28"),
                    _ => {
                        let mut args = vec!["--mode".to_string(), "legacy".to_string(), give_up];
                        args.extend(["--server".to_string(), server.display().to_string()]);
                        for arg in &stdio_args[1..] {
                            args.push(format!("--server-arg={arg}"));
                        }
                        args
                    }
                };
                let log = dir.join(format!("python-{lane:?}.log"));
                lanes.spawn(lanes::python_lane(
                    python, script, log, args, calls, per_lane, sender,
                ));
            }
        }
    }
    drop(sender);

    // Collect answers; stop and restart the main server at even points of the run.
    let mut answers: HashMap<usize, Vec<Answer>> = HashMap::new();
    let mut received = 0usize;
    let mut restarts = Vec::new();
    let mut figures_of = Vec::new();
    let thresholds = plan::restart_points(options.calls, options.restarts);
    while let Some(answer) = receiver.recv().await {
        answers.entry(answer.id).or_default().push(answer);
        received += 1;
        if restarts.len() < thresholds.len() && received >= thresholds[restarts.len()] {
            let generation = restarts.len();
            let stopped = now();
            figures_of.push(stop(&format!("main #{}", generation + 1), main, false).await?);
            main = servers
                .start("main", main_port, &fixture, generation + 1)
                .await?;
            restarts.push(Restart {
                stopped,
                ready: now(),
            });
        }
    }
    while let Some(joined) = lanes.join_next().await {
        joined.context("a lane panicked")??;
    }
    // Every client has closed: the servers' sessions and connections should be gone.
    tokio::time::sleep(Duration::from_secs(1)).await;
    figures_of.push(stop(&format!("main #{}", restarts.len() + 1), main, true).await?);
    figures_of.push(stop("missing application", missing_server, true).await?);

    let mut orphans = leftovers(&dir);
    let waited = Instant::now();
    while !orphans.is_empty() && waited.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(200)).await;
        orphans = leftovers(&dir);
    }

    let ledger_text = fs::read_to_string(&ledger).unwrap_or_default();
    let mut started: HashMap<&str, usize> = HashMap::new();
    for line in ledger_text.lines() {
        *started.entry(line).or_default() += 1;
    }
    let report = SoakReport::judge(
        options,
        &run,
        &calls,
        &answers,
        &restarts,
        &started,
        orphans,
        figures_of,
        began.elapsed(),
    );
    if report.problems().is_empty() {
        let _ = fs::remove_dir_all(&dir);
    }
    Ok(report)
}

fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("finding a free port")?;
    Ok(listener.local_addr().context("finding a free port")?.port())
}
