//! fiskgen's benchmark: a generated server (and, when given, a peer such as Fisk AI's `fisk mcp`)
//! measured side by side on one machine, with one MCP client, into `docs/benchmarks.md` and
//! `docs/benchmarks.svg`.
//!
//! [`run`] does everything: optional builds (`fiskgen build` cold and warm), starts to the first
//! `tools/list`, `tools/list` and `tools/call` load at several concurrencies, the same command run
//! directly, RSS and binary sizes. Every figure is measured in interleaved rounds and reported
//! as a median with its spread. The binary (`cargo run --release -p fiskgen-bench -- --full`)
//! wraps it; the smoke mode runs in the default test suite.

mod client;
mod compare;
mod raw;
mod report;
pub mod soak;
mod stats;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use fiskgen_tests::apps::{self, App};
use rmcp::RoleClient;
use rmcp::service::Peer;

pub use client::ListSizes;
pub use client::Transport;
pub use report::{
    AppReport, Builds, CrateLines, Machine, PeerStatus, Previous, Report, Server, ServerReport,
};
pub use stats::{Level, Summary};

use client::Client;
use stats::{Rounds, Run};

/// How much to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A few iterations against the debug golden demo server; no builds. For the test suite.
    Smoke,
    /// Release builds of the demo and all-commands natscli servers, build times, full rounds.
    Full,
}

/// What to run. `None` fields take the mode's defaults.
#[derive(Debug, Clone)]
pub struct Options {
    /// Smoke or full.
    pub mode: Mode,
    /// Write `benchmarks.md` and `benchmarks.svg` here (nothing is written when `None`).
    pub out_dir: Option<PathBuf>,
    /// The fiskgen binary for builds (default: `cargo build --release -p fiskgen`).
    pub fiskgen: Option<PathBuf>,
    /// Use these servers instead of building them (demo, then nats).
    pub demo_server: Option<PathBuf>,
    /// The all-commands natscli server; in smoke mode nats is measured only when given.
    pub nats_server: Option<PathBuf>,
    /// Skip `fiskgen build` timing (full mode); the servers must then exist or be given.
    pub skip_builds: bool,
    /// The peer's command line, run with `sh -c`: `{config}`, `{port}` and `{app}` are replaced.
    pub peer_command: Option<String>,
    /// The peer's MCP endpoint; `{port}` is replaced.
    pub peer_url: String,
    /// The Go module the peer comes from, probed (`go list -m`) when no peer command is given.
    pub peer_module: String,
    /// Starts measured per server and transport.
    pub starts: Option<usize>,
    /// Load rounds per server and transport.
    pub rounds: Option<usize>,
    /// Seconds per load level and round (full mode; smoke counts requests instead).
    pub seconds: Option<f64>,
    /// Regenerations timed per app with a warm target directory.
    pub regenerations: Option<usize>,
    /// Earlier designs' fiskgen binaries, by label: the all-commands natscli server is also
    /// built with each (builds interleaved with ours) and measured beside ours in the same run.
    pub previous_fiskgen: Vec<(String, PathBuf)>,
}

impl Options {
    /// Defaults for `mode`.
    pub fn new(mode: Mode) -> Options {
        Options {
            mode,
            out_dir: None,
            fiskgen: None,
            demo_server: None,
            nats_server: None,
            skip_builds: false,
            peer_command: None,
            peer_url: "http://127.0.0.1:{port}/mcp".to_string(),
            peer_module: "github.com/choria-io/fisk-ai@latest".to_string(),
            starts: None,
            rounds: None,
            seconds: None,
            regenerations: None,
            previous_fiskgen: Vec::new(),
        }
    }
}

/// Concurrencies of the `tools/list` load.
pub const LIST_LEVELS: [usize; 3] = [1, 8, 32];
/// Concurrencies of the `tools/call` load (and of the direct runs).
pub const CALL_LEVELS: [usize; 2] = [1, 8];
/// Command slots given to every server, so calls at the highest concurrency never queue.
pub const TOOL_SLOTS: usize = 32;

#[derive(Debug, Clone, Copy)]
enum Budget {
    Count(usize),
    Time(Duration),
}

#[derive(Debug, Clone, Copy)]
struct Settings {
    starts: usize,
    rounds: usize,
    load: Option<Duration>,
    settle: Duration,
    regenerations: usize,
}

impl Settings {
    fn of(options: &Options) -> Settings {
        let full = options.mode == Mode::Full;
        Settings {
            starts: options.starts.unwrap_or(if full { 25 } else { 3 }).max(1),
            rounds: options.rounds.unwrap_or(if full { 3 } else { 1 }).max(1),
            load: full.then(|| Duration::from_secs_f64(options.seconds.unwrap_or(2.0).max(0.05))),
            settle: Duration::from_millis(if full { 1000 } else { 200 }),
            regenerations: options.regenerations.unwrap_or(3).max(1),
        }
    }

    fn budget(&self, concurrency: usize) -> Budget {
        match self.load {
            Some(duration) => Budget::Time(duration),
            None => Budget::Count((2 * concurrency).max(20)),
        }
    }

    fn describe(&self) -> String {
        let load = match self.load {
            Some(d) => format!("{:.1} s per load level", d.as_secs_f64()),
            None => "max(20, 2 x concurrency) requests per load level".to_string(),
        };
        format!(
            "{} starts per server and transport; {} interleaved load round(s) of {load}",
            self.starts, self.rounds
        )
    }
}

/// One application under test.
#[derive(Debug, Clone)]
struct Setup {
    name: &'static str,
    config: PathBuf,
    server: PathBuf,
    app: PathBuf,
    tool: &'static str,
    workdir: PathBuf,
    /// The generated crate, when this benchmark built the server.
    crate_dir: Option<PathBuf>,
}

/// Runs the benchmark and, when `out_dir` is set, writes the report there.
pub fn run(options: &Options) -> Result<Report> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    let report = runtime.block_on(run_async(options))?;
    if let Some(dir) = &options.out_dir {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let md = dir.join("benchmarks.md");
        let svg = dir.join("benchmarks.svg");
        fs::write(&md, report.markdown()).with_context(|| format!("writing {}", md.display()))?;
        fs::write(&svg, report.svg()).with_context(|| format!("writing {}", svg.display()))?;
    }
    Ok(report)
}

async fn run_async(options: &Options) -> Result<Report> {
    let began = Instant::now();
    let settings = Settings::of(options);
    let root = apps::workspace_root();
    let scratch = root.join("target").join("bench").join(match options.mode {
        Mode::Smoke => "smoke",
        Mode::Full => "full",
    });
    fs::create_dir_all(&scratch).with_context(|| format!("creating {}", scratch.display()))?;
    let load_before = report::load_average();
    eprintln!("fiskgen-bench: {}", settings.describe());

    let demo_app = apps::path(App::Demo)?;
    let demo_config = root.join("examples/demo/demo.yaml");
    let nats_config = root.join("bench/nats-all.yaml");
    let wants_nats = options.mode == Mode::Full || options.nats_server.is_some();
    let nats_app = if wants_nats {
        Some(apps::path(App::Nats)?)
    } else {
        None
    };

    // Builds first: the servers measured below are their output.
    let bench_dir = root.join("target").join("bench");
    let demo_built = bench_dir.join("tasks-mcp");
    let nats_built = bench_dir.join("nats-mcp");
    let previous_dirs: Vec<PathBuf> = options
        .previous_fiskgen
        .iter()
        .map(|(label, _)| bench_dir.join(format!("previous-{label}")))
        .collect();
    let previous_built: Vec<PathBuf> = previous_dirs.iter().map(|d| d.join("nats-mcp")).collect();
    let (builds, previous_builds) = if options.mode == Mode::Smoke {
        (
            Builds::Skipped("smoke mode: no builds".to_string()),
            Vec::new(),
        )
    } else if options.skip_builds {
        let builds = recorded_builds(&bench_dir).unwrap_or_else(|| {
            Builds::Skipped("--skip-builds: existing servers measured".to_string())
        });
        (builds, Vec::new())
    } else {
        let fiskgen = match &options.fiskgen {
            Some(path) => path.clone(),
            None => build_fiskgen(&root)?,
        };
        let nats = nats_app.as_deref().context("nats is needed in full mode")?;
        // natscli first, into a fresh target directory of its own (its first build is the
        // cold one), the demo after it in the same directory; the previous design's natscli in
        // a directory of its own, its regenerations interleaved with ours.
        let mut jobs = vec![
            BuildJob::new(
                "nats",
                &fiskgen,
                &nats_config,
                nats,
                &nats_built,
                &bench_dir,
            ),
            BuildJob::new(
                "demo",
                &fiskgen,
                &demo_config,
                &demo_app,
                &demo_built,
                &bench_dir,
            ),
        ];
        for (((_, fiskgen), built), dir) in options
            .previous_fiskgen
            .iter()
            .zip(&previous_built)
            .zip(&previous_dirs)
        {
            jobs.push(BuildJob::new(
                "nats",
                fiskgen,
                &nats_config,
                nats,
                built,
                dir,
            ));
        }
        let timed = time_builds(&jobs, settings.regenerations)?;
        record_builds(&bench_dir, &timed[..2])?;
        let previous = timed[2..]
            .iter()
            .map(|t| Builds::of(std::slice::from_ref(t)))
            .collect();
        (Builds::of(&timed[..2]), previous)
    };

    let demo_server = match (&options.demo_server, options.mode) {
        (Some(path), _) => path.clone(),
        (None, Mode::Smoke) => fiskgen_tests::clients::demo_server()?,
        (None, Mode::Full) => demo_built.clone(),
    };
    let mut setups = vec![Setup {
        name: "demo",
        config: demo_config,
        server: demo_server,
        app: demo_app,
        tool: "task_list",
        workdir: scratch.join("work-demo"),
        crate_dir: (options.mode == Mode::Full && options.demo_server.is_none())
            .then(|| bench_dir.join("crates").join("demo")),
    }];
    if let Some(nats) = nats_app {
        setups.push(Setup {
            name: "nats",
            config: nats_config,
            server: options.nats_server.clone().unwrap_or(nats_built),
            app: nats,
            tool: "context_ls",
            workdir: scratch.join("work-nats"),
            crate_dir: (options.mode == Mode::Full && options.nats_server.is_none())
                .then(|| bench_dir.join("crates").join("nats")),
        });
    }
    for setup in &setups {
        if !setup.server.is_file() {
            bail!("the server {} does not exist", setup.server.display());
        }
        prepare_workdir(setup)?;
    }

    let peer = match &options.peer_command {
        Some(command) => PeerStatus::Measured {
            command: command.clone(),
        },
        None => PeerStatus::Absent {
            reason: peer_absent_reason(options).await,
        },
    };
    let mut servers = vec![
        Server::Ours(Transport::Legacy),
        Server::Ours(Transport::Modern),
        Server::Ours(Transport::Stdio),
    ];
    if options.peer_command.is_some() {
        servers.push(Server::Peer);
    }

    let mut apps = Vec::new();
    for setup in &setups {
        eprintln!("fiskgen-bench: {} ({})", setup.name, setup.server.display());
        apps.push(bench_app(options, &settings, setup, &servers).await?);
    }
    let mut previous = Vec::new();
    if let Some(nats) = setups.iter().find(|s| s.name == "nats") {
        for ((((label, fiskgen), builds), built), dir) in options
            .previous_fiskgen
            .iter()
            .zip(previous_builds)
            .zip(&previous_built)
            .zip(&previous_dirs)
        {
            let setup = Setup {
                server: built.clone(),
                workdir: scratch.join(format!("work-nats-previous-{label}")),
                crate_dir: Some(dir.join("crates").join("nats")),
                ..nats.clone()
            };
            prepare_workdir(&setup)?;
            eprintln!(
                "fiskgen-bench: nats, design {label} ({})",
                setup.server.display()
            );
            let ours = [
                Server::Ours(Transport::Legacy),
                Server::Ours(Transport::Modern),
                Server::Ours(Transport::Stdio),
            ];
            previous.push(Previous {
                label: label.clone(),
                fiskgen: fiskgen.clone(),
                builds,
                app: bench_app(options, &settings, &setup, &ours).await?,
            });
        }
    }

    let machine = Machine::detect(load_before);
    Ok(Report {
        mode: options.mode,
        settings: settings.describe(),
        machine,
        apps,
        builds,
        previous,
        peer,
        wall: began.elapsed(),
    })
}

/// `cargo build --release -p fiskgen`; the path of the binary.
fn build_fiskgen(root: &Path) -> Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    eprintln!("fiskgen-bench: cargo build --release -p fiskgen");
    let status = std::process::Command::new(cargo)
        .args(["build", "--release", "-p", "fiskgen", "--bin", "fiskgen"])
        .current_dir(root)
        .status()
        .context("running cargo")?;
    if !status.success() {
        bail!("cargo build --release -p fiskgen failed ({status})");
    }
    Ok(root.join("target/release/fiskgen"))
}

fn fiskgen_build(
    fiskgen: &Path,
    config: &Path,
    app: &Path,
    output: &Path,
    target: &Path,
    crate_dir: &Path,
    log: &Path,
) -> Result<Duration> {
    let log_file = fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
    let started = Instant::now();
    let status = std::process::Command::new(fiskgen)
        .arg("build")
        .arg(config)
        .arg("-o")
        .arg(output)
        .arg("--target-dir")
        .arg(target)
        .arg("--crate-dir")
        .arg(crate_dir)
        .arg("--app")
        .arg(app)
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().context("log file")?)
        .stderr(log_file)
        .status()
        .with_context(|| format!("running {}", fiskgen.display()))?;
    let took = started.elapsed();
    if !status.success() {
        bail!(
            "fiskgen build {} failed ({status}); see {}",
            config.display(),
            log.display()
        );
    }
    Ok(took)
}

/// One app built by one fiskgen: its own target and crate directories below `dir`.
struct BuildJob<'a> {
    name: &'a str,
    fiskgen: &'a Path,
    config: &'a Path,
    app: &'a Path,
    output: &'a Path,
    dir: PathBuf,
}

impl<'a> BuildJob<'a> {
    fn new(
        name: &'a str,
        fiskgen: &'a Path,
        config: &'a Path,
        app: &'a Path,
        output: &'a Path,
        dir: &Path,
    ) -> Self {
        Self {
            name,
            fiskgen,
            config,
            app,
            output,
            dir: dir.to_path_buf(),
        }
    }

    fn crate_dir(&self) -> PathBuf {
        self.dir.join("crates").join(self.name)
    }

    fn build(&self, kind: &str) -> Result<f64> {
        eprintln!(
            "fiskgen-bench: {} build {} ({kind})",
            self.fiskgen.display(),
            self.config.display()
        );
        let took = fiskgen_build(
            self.fiskgen,
            self.config,
            self.app,
            self.output,
            &self.dir.join("target"),
            &self.crate_dir(),
            &self.dir.join(format!("{kind}-{}.log", self.name)),
        )?;
        Ok(stats::ms(took) / 1000.0)
    }
}

/// What [`time_builds`] measured for one job.
struct Timed {
    name: String,
    first_s: f64,
    warm_s: Vec<f64>,
}

impl Builds {
    fn of(timed: &[Timed]) -> Builds {
        Builds::Measured {
            first_s: timed.iter().map(|t| (t.name.clone(), t.first_s)).collect(),
            warm_s: timed
                .iter()
                .filter_map(|t| Some((t.name.clone(), Summary::of(&t.warm_s)?)))
                .collect(),
            recorded: None,
        }
    }
}

/// First builds (each job's directories fresh), then `regenerations` rounds of every job in
/// turn, so a busy spell of the machine hits every job alike.
fn time_builds(jobs: &[BuildJob<'_>], regenerations: usize) -> Result<Vec<Timed>> {
    for job in jobs {
        for dir in [job.dir.join("target"), job.dir.join("crates")] {
            if dir.exists() {
                fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
            }
        }
        fs::create_dir_all(&job.dir).with_context(|| format!("creating {}", job.dir.display()))?;
    }
    let mut timed = Vec::new();
    for job in jobs {
        timed.push(Timed {
            name: job.name.to_string(),
            first_s: job.build("first")?,
            warm_s: Vec::new(),
        });
    }
    for _ in 0..regenerations {
        for (job, timed) in jobs.iter().zip(&mut timed) {
            // A regeneration: the crate is written afresh (new mtimes), so cargo rebuilds it,
            // and only it, in the warm target directory.
            let crate_dir = job.crate_dir();
            fs::remove_dir_all(&crate_dir)
                .with_context(|| format!("removing {}", crate_dir.display()))?;
            timed.warm_s.push(job.build("regen")?);
        }
    }
    Ok(timed)
}

/// Records our build figures, so a later `--skip-builds` run (measurements only) can report
/// them.
fn record_builds(bench_dir: &Path, timed: &[Timed]) -> Result<()> {
    let mut record = String::new();
    for t in timed {
        record.push_str(&format!("first\t{}\t{}\n", t.name, t.first_s));
    }
    for t in timed {
        let joined: Vec<String> = t.warm_s.iter().map(f64::to_string).collect();
        record.push_str(&format!("warm\t{}\t{}\n", t.name, joined.join(",")));
    }
    let record_path = bench_dir.join(BUILD_RECORD);
    fs::write(&record_path, record).with_context(|| format!("writing {}", record_path.display()))
}

/// Where the build figures are recorded, in `target/bench`.
const BUILD_RECORD: &str = "builds.tsv";

/// The build figures an earlier full run recorded, if any.
fn recorded_builds(bench_dir: &Path) -> Option<Builds> {
    let path = bench_dir.join(BUILD_RECORD);
    let text = fs::read_to_string(&path).ok()?;
    let mut first_s = Vec::new();
    let mut warm_s = Vec::new();
    for line in text.lines() {
        let mut fields = line.split('\t');
        let (kind, name, value) = (fields.next()?, fields.next()?, fields.next()?);
        match kind {
            "first" => first_s.push((name.to_string(), value.parse().ok()?)),
            "warm" => {
                let samples: Vec<f64> = value.split(',').filter_map(|v| v.parse().ok()).collect();
                warm_s.push((name.to_string(), Summary::of(&samples)?));
            }
            _ => return None,
        }
    }
    let when = fs::metadata(&path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or("time unknown".to_string(), |d| {
            format!("{}, Unix time {}", relative_record(&path), d.as_secs())
        });
    Some(Builds::Measured {
        first_s,
        warm_s,
        recorded: Some(when),
    })
}

fn relative_record(path: &Path) -> String {
    let root = apps::workspace_root();
    path.strip_prefix(&root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// A fresh working directory; the demo's gets a store with a few tasks.
fn prepare_workdir(setup: &Setup) -> Result<()> {
    let dir = &setup.workdir;
    if dir.exists() {
        fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    if setup.name == "demo" {
        for title in ["Write the benchmark", "Read the numbers", "Ship it"] {
            let status = std::process::Command::new(&setup.app)
                .args(["task", "add", "--", title])
                .current_dir(dir)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .status()
                .with_context(|| format!("running {}", setup.app.display()))?;
            if !status.success() {
                bail!("seeding the demo store failed ({status})");
            }
        }
    }
    Ok(())
}

async fn peer_absent_reason(options: &Options) -> String {
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
struct Running {
    client: Client,
    pid: u32,
    child: Option<tokio::process::Child>,
}

impl Running {
    async fn stop(self) {
        self.client.close().await;
        if let Some(mut child) = self.child {
            let _ = child.kill().await;
        }
    }
}

fn path_with_apps() -> Result<std::ffi::OsString> {
    let mut paths = vec![apps::bin_dir()?];
    if let Some(path) = std::env::var_os("PATH") {
        paths.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(paths).context("building PATH")
}

fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("finding a free port")?;
    Ok(listener.local_addr().context("finding a free port")?.port())
}

fn stderr_log(setup: &Setup, server: Server) -> Result<Stdio> {
    let path = setup.workdir.join(format!("{}.log", server.slug()));
    let file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    Ok(Stdio::from(file))
}

fn server_command(
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

fn peer_command(
    options: &Options,
    setup: &Setup,
    port: u16,
) -> Result<(tokio::process::Command, String)> {
    let template = options.peer_command.as_deref().context("no peer command")?;
    let fill = |text: &str| {
        text.replace("{config}", &setup.config.display().to_string())
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

/// Starts `server` and waits for its first successful `tools/list`: the server, the time from
/// spawn to that answer, and the number of tools.
async fn start(
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
    let (mut command, url, transport) = match server {
        Server::Ours(transport) => (
            server_command(setup, server, Some(port))?,
            format!("http://127.0.0.1:{port}/mcp"),
            transport,
        ),
        Server::Peer => {
            let (command, url) = peer_command(options, setup, port)?;
            (command, url, Transport::Legacy)
        }
    };
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
async fn wait_until_listening(
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
async fn raw_start(options: &Options, setup: &Setup, server: Server) -> Result<Duration> {
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

/// VmRSS and VmHWM of `pid`, in KiB.
fn memory_kib(pid: u32) -> Result<(f64, f64)> {
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

#[derive(Debug, Clone)]
enum Op {
    List,
    Call(String),
    Direct {
        app: PathBuf,
        argv: Vec<String>,
        dir: PathBuf,
    },
}

async fn once(peer: Option<&Peer<RoleClient>>, op: &Op) -> Result<()> {
    match (op, peer) {
        (Op::List, Some(peer)) => client::list_tools(peer).await.map(drop),
        (Op::Call(tool), Some(peer)) => client::call_tool(peer, tool).await.map(drop),
        (Op::Direct { app, argv, dir }, _) => {
            let output = tokio::process::Command::new(app)
                .args(argv)
                .current_dir(dir)
                .env("LLMFORMAT", "1")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0)
                .output()
                .await
                .with_context(|| format!("running {}", app.display()))?;
            if !output.status.success() {
                bail!("{} {argv:?} failed ({})", app.display(), output.status);
            }
            Ok(())
        }
        (_, None) => bail!("no client"),
    }
}

/// User + system CPU time of a process so far, ms (`/proc/<pid>/stat`, 100 ticks a second).
fn cpu_ms(pid: Option<u32>) -> Option<f64> {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/stat"),
        None => "/proc/self/stat".to_string(),
    };
    let stat = fs::read_to_string(path).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) * 10.0)
}

/// `concurrency` workers issue `op` back to back until the budget is spent; `server` is the
/// server's pid, for its CPU time.
async fn load(
    peer: Option<&Peer<RoleClient>>,
    server: Option<u32>,
    op: &Op,
    concurrency: usize,
    budget: Budget,
) -> Result<Run> {
    let issued = Arc::new(AtomicUsize::new(0));
    let server_cpu = server.and_then(|pid| cpu_ms(Some(pid)));
    let client_cpu = cpu_ms(None);
    let began = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..concurrency {
        let peer = peer.cloned();
        let op = op.clone();
        let issued = Arc::clone(&issued);
        workers.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            loop {
                let more = match budget {
                    Budget::Count(n) => issued.fetch_add(1, Ordering::Relaxed) < n,
                    Budget::Time(d) => began.elapsed() < d,
                };
                if !more {
                    return Ok::<_, anyhow::Error>(latencies);
                }
                let sent = Instant::now();
                once(peer.as_ref(), &op).await?;
                latencies.push(stats::ms(sent.elapsed()));
            }
        }));
    }
    let mut run = Run::default();
    for worker in workers {
        run.latencies_ms
            .extend(worker.await.context("a load worker panicked")??);
    }
    run.wall = began.elapsed();
    run.server_cpu_ms = server
        .and_then(|pid| cpu_ms(Some(pid)))
        .zip(server_cpu)
        .map(|(after, before)| after - before);
    run.client_cpu_ms = cpu_ms(None)
        .zip(client_cpu)
        .map(|(after, before)| after - before);
    Ok(run)
}

#[derive(Default)]
struct Samples {
    start_ms: Vec<f64>,
    raw_start_ms: Vec<f64>,
    ready_kib: Vec<f64>,
    idle_kib: Vec<f64>,
    peak_kib: Vec<f64>,
    after_kib: Vec<f64>,
    list: Vec<Rounds>,
    call: Vec<Rounds>,
}

async fn bench_app(
    options: &Options,
    settings: &Settings,
    setup: &Setup,
    servers: &[Server],
) -> Result<AppReport> {
    // The argv the server runs for the tool, from its own result, and how many tools it serves.
    let (probe, _, tools) = start(options, setup, Server::Ours(Transport::Legacy)).await?;
    let result = client::call_tool(&probe.client.peer(), setup.tool).await;
    let list_sizes = client::list_sizes(&probe.client.peer()).await;
    probe.stop().await;
    let list_sizes = list_sizes?;
    let result = client::structured(result?, setup.tool)?;
    let command = result
        .get("command")
        .and_then(|c| c.as_str())
        .context("the call result has no command")?;
    if command.contains(['\'', '"', '\\', '$']) {
        bail!("the command line {command:?} needs unquoting; pick a simpler tool");
    }
    let argv: Vec<String> = command.split_whitespace().map(str::to_string).collect();
    let direct_op = Op::Direct {
        app: setup.app.clone(),
        argv: argv.clone(),
        dir: setup.workdir.clone(),
    };

    let mut samples: Vec<Samples> = servers.iter().map(|_| Samples::default()).collect();
    for s in &mut samples {
        s.list = LIST_LEVELS.iter().map(|_| Rounds::default()).collect();
        s.call = CALL_LEVELS.iter().map(|_| Rounds::default()).collect();
    }
    let mut direct: Vec<Rounds> = CALL_LEVELS.iter().map(|_| Rounds::default()).collect();
    let mut overhead_p50: Vec<Vec<Vec<f64>>> = servers
        .iter()
        .map(|_| CALL_LEVELS.iter().map(|_| Vec::new()).collect())
        .collect();
    let mut overhead_p99 = overhead_p50.clone();

    // Starts, interleaved, the order rotating so no server always follows the same one.
    for i in 0..settings.starts {
        for k in 0..servers.len() {
            let index = (i + k) % servers.len();
            let Some(server) = servers.get(index).copied() else {
                continue;
            };
            let (running, took, _) = start(options, setup, server).await?;
            let ready = memory_kib(running.pid)?.0;
            running.stop().await;
            let raw = raw_start(options, setup, server).await?;
            if let Some(s) = samples.get_mut(index) {
                s.ready_kib.push(ready);
                s.start_ms.push(stats::ms(took));
                s.raw_start_ms.push(stats::ms(raw));
            }
        }
    }

    // Load rounds: each server in turn, then the direct runs, rotating.
    for round in 0..settings.rounds {
        eprintln!(
            "fiskgen-bench: {} round {}/{}",
            setup.name,
            round + 1,
            settings.rounds
        );
        let mut round_calls: Vec<Vec<Run>> = servers.iter().map(|_| Vec::new()).collect();
        let mut round_direct: Vec<Run> = Vec::new();
        for k in 0..=servers.len() {
            let slot = (round + k) % (servers.len() + 1);
            if slot == servers.len() {
                for (level, &c) in CALL_LEVELS.iter().enumerate() {
                    let run = load(None, None, &direct_op, c, settings.budget(c)).await?;
                    round_direct.push(run.clone());
                    if let Some(rounds) = direct.get_mut(level) {
                        rounds.runs.push(run);
                    }
                }
                continue;
            }
            let Some(server) = servers.get(slot).copied() else {
                continue;
            };
            let Some(s) = samples.get_mut(slot) else {
                continue;
            };
            let (running, _, _) = start(options, setup, server).await?;
            let peer = running.client.peer();
            let call = Op::Call(setup.tool.to_string());
            // Warm up, then let background work (the start-up check of the app) finish.
            load(
                Some(&peer),
                Some(running.pid),
                &Op::List,
                1,
                Budget::Count(5),
            )
            .await?;
            load(Some(&peer), Some(running.pid), &call, 1, Budget::Count(3)).await?;
            tokio::time::sleep(settings.settle).await;
            s.idle_kib.push(memory_kib(running.pid)?.0);
            for (level, &c) in LIST_LEVELS.iter().enumerate() {
                let run = load(
                    Some(&peer),
                    Some(running.pid),
                    &Op::List,
                    c,
                    settings.budget(c),
                )
                .await?;
                if let Some(rounds) = s.list.get_mut(level) {
                    rounds.runs.push(run);
                }
            }
            for (level, &c) in CALL_LEVELS.iter().enumerate() {
                let run =
                    load(Some(&peer), Some(running.pid), &call, c, settings.budget(c)).await?;
                if let (Some(rounds), Some(calls)) =
                    (s.call.get_mut(level), round_calls.get_mut(slot))
                {
                    calls.push(run.clone());
                    rounds.runs.push(run);
                }
            }
            let (rss, hwm) = memory_kib(running.pid)?;
            s.peak_kib.push(hwm);
            s.after_kib.push(rss);
            running.stop().await;
        }
        // Overhead: the server's call latency minus the direct run's, within the round.
        for (index, calls) in round_calls.iter().enumerate() {
            for (level, (call, plain)) in calls.iter().zip(&round_direct).enumerate() {
                let (Some(per_server), Some(p50), Some(p99)) = (
                    overhead_p50.get_mut(index).and_then(|o| o.get_mut(level)),
                    call.p50().zip(plain.p50()),
                    call.p99().zip(plain.p99()),
                ) else {
                    continue;
                };
                per_server.push(p50.0 - p50.1);
                if let Some(o) = overhead_p99.get_mut(index).and_then(|o| o.get_mut(level)) {
                    o.push(p99.0 - p99.1);
                }
            }
        }
    }

    let levels = |rounds: &[Rounds], cs: &[usize]| -> Vec<Level> {
        rounds
            .iter()
            .zip(cs)
            .filter_map(|(r, &c)| r.level(c))
            .collect()
    };
    let per_level = |values: &[Vec<f64>]| -> Vec<(usize, Summary)> {
        values
            .iter()
            .zip(CALL_LEVELS)
            .filter_map(|(v, c)| Some((c, Summary::of(v)?)))
            .collect()
    };
    let kib_to_mb = |v: &[f64]| Summary::of(&v.iter().map(|k| k / 1024.0).collect::<Vec<_>>());
    let mut reports = Vec::new();
    for (index, (server, s)) in servers.iter().zip(&samples).enumerate() {
        reports.push(ServerReport {
            server: *server,
            start_ms: Summary::of(&s.start_ms),
            raw_start_ms: Summary::of(&s.raw_start_ms),
            ready_rss_mb: kib_to_mb(&s.ready_kib),
            idle_rss_mb: kib_to_mb(&s.idle_kib),
            peak_rss_mb: kib_to_mb(&s.peak_kib),
            after_rss_mb: kib_to_mb(&s.after_kib),
            list: levels(&s.list, &LIST_LEVELS),
            call: levels(&s.call, &CALL_LEVELS),
            overhead_p50: overhead_p50
                .get(index)
                .map(|v| per_level(v))
                .unwrap_or_default(),
            overhead_p99: overhead_p99
                .get(index)
                .map(|v| per_level(v))
                .unwrap_or_default(),
        });
    }
    let size = fs::metadata(&setup.server)
        .with_context(|| format!("reading {}", setup.server.display()))?
        .len();
    Ok(AppReport {
        name: setup.name.to_string(),
        config: setup.config.clone(),
        server_binary: setup.server.clone(),
        tools,
        tool: setup.tool.to_string(),
        argv,
        size_bytes: size,
        stripped_bytes: stripped_size(&setup.server, &setup.workdir),
        crate_lines: setup.crate_dir.as_deref().and_then(crate_lines),
        list_sizes: Some(list_sizes),
        servers: reports,
        direct: levels(&direct, &CALL_LEVELS),
    })
}

/// The lines of a generated crate's `src/`: Rust code, and the data files it includes (schemas,
/// help, fingerprints, the `tools/list` answer).
fn crate_lines(dir: &Path) -> Option<CrateLines> {
    fn walk(dir: &Path, lines: &mut CrateLines) -> Option<()> {
        for entry in fs::read_dir(dir).ok()? {
            let path = entry.ok()?.path();
            if path.is_dir() {
                walk(&path, lines)?;
                continue;
            }
            let count = || fs::read_to_string(&path).ok().map(|t| t.lines().count());
            match path.extension().and_then(|e| e.to_str()) {
                Some("rs") => lines.rust += count()?,
                Some("json" | "md") => lines.data += count()?,
                _ => {}
            }
        }
        Some(())
    }
    let mut lines = CrateLines::default();
    walk(&dir.join("src"), &mut lines)?;
    (lines.rust > 0).then_some(lines)
}

/// The size of a stripped copy of `binary` (`strip`, else `objcopy --strip-all`).
fn stripped_size(binary: &Path, scratch: &Path) -> Option<u64> {
    let copy = scratch.join("stripped");
    for (tool, args) in [("strip", vec!["-o"]), ("objcopy", vec!["--strip-all"])] {
        let mut command = std::process::Command::new(tool);
        command.args(&args);
        if tool == "strip" {
            command.arg(&copy).arg(binary);
        } else {
            command.arg(binary).arg(&copy);
        }
        let ok = command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            let size = fs::metadata(&copy).ok().map(|m| m.len());
            let _ = fs::remove_file(&copy);
            return size;
        }
    }
    None
}
