//! fiskgen's benchmark: a generated server (and, when given, a peer such as Fisk AI's `fisk mcp`)
//! measured side by side on one machine, with one MCP client, into `docs/benchmarks.md` and
//! `docs/benchmarks.svg`.
//!
//! [`run`] does everything: optional builds (`fiskgen build` cold and warm), starts to the first
//! `tools/list`, `tools/list` and `tools/call` load at several concurrencies, the same command run
//! directly, RSS and binary sizes. Every figure is measured in interleaved rounds and reported
//! as a median with its spread. The binary (`cargo run --release -p fiskgen-bench -- --full`)
//! wraps it; the smoke mode runs in the default test suite.

mod builds;
mod client;
mod compare;
mod load;
pub mod peer;
mod raw;
mod report;
mod servers;
pub mod sizes;
pub mod soak;
mod stats;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use fiskgen_tests::apps::{self, App};

pub use client::ListSizes;
pub use client::Transport;
pub use report::{
    AppReport, Builds, CrateLines, Machine, PeerStatus, Previous, Report, Server, ServerReport,
};
pub use stats::{Level, Summary};

use builds::{
    BuildJob, build_fiskgen, crate_lines, record_builds, recorded_builds, stripped_size,
    time_builds,
};
use load::{Budget, Op, load};
use servers::{memory_kib, peer_absent_reason, raw_list_cpu, raw_start, start};
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
    /// The peer's binary, for its size (`--peer-build` sets it).
    pub peer_binary: Option<PathBuf>,
    /// What the page's run notes say about this run (`--note`), as given.
    pub notes: Vec<String>,
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
            peer_binary: None,
            notes: Vec::new(),
        }
    }
}

/// Concurrencies of the `tools/list` load: one client asking again as soon as it has its
/// answer. More clients at once measured rmcp's client parsing each answer (natscli's 254 KiB:
/// about 9 ms), not the servers.
pub const LIST_LEVELS: [usize; 1] = [1];
/// Concurrencies of the `tools/call` load (and of the direct runs).
pub const CALL_LEVELS: [usize; 2] = [1, 8];
/// Command slots given to every server, so calls at the highest concurrency never queue.
pub const TOOL_SLOTS: usize = 32;

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
    let root = apps::workspace_root();
    // Smoke runs may run side by side (the test suite's two): each gets a directory of its own.
    let scratch = match options.mode {
        Mode::Smoke => {
            static RUNS: AtomicUsize = AtomicUsize::new(0);
            let run = RUNS.fetch_add(1, Ordering::Relaxed);
            root.join("target/bench/smoke")
                .join(format!("{}-{run}", std::process::id()))
        }
        Mode::Full => root.join("target/bench/full"),
    };
    let report = runtime.block_on(run_async(options, &scratch));
    if options.mode == Mode::Smoke {
        let _ = fs::remove_dir_all(&scratch);
    }
    let report = report?;
    if let Some(dir) = &options.out_dir {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let md = dir.join("benchmarks.md");
        let svg = dir.join("benchmarks.svg");
        fs::write(&md, report.markdown()).with_context(|| format!("writing {}", md.display()))?;
        fs::write(&svg, report.svg()).with_context(|| format!("writing {}", svg.display()))?;
    }
    Ok(report)
}

async fn run_async(options: &Options, scratch: &Path) -> Result<Report> {
    let began = Instant::now();
    let settings = Settings::of(options);
    let root = apps::workspace_root();
    fs::create_dir_all(scratch).with_context(|| format!("creating {}", scratch.display()))?;
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
        notes: options.notes.clone(),
        wall: began.elapsed(),
    })
}

/// A fresh working directory; the demo's gets a store with a few tasks.
fn prepare_workdir(setup: &Setup) -> Result<()> {
    let dir = &setup.workdir;
    if dir.exists() {
        fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    // The peer's copy of the config: what it accepts, with our limits (crate::peer).
    peer::write_config(&setup.config, dir, TOOL_SLOTS)?;
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

#[derive(Default)]
struct Samples {
    start_ms: Vec<f64>,
    raw_start_ms: Vec<f64>,
    raw_list_cpu_ms: Vec<f64>,
    raw_list_user_ms: Vec<f64>,
    raw_answer_kib: Vec<f64>,
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
    let peer_list_sizes = if servers.contains(&Server::Peer) {
        let (probe, _, _) = start(options, setup, Server::Peer).await?;
        let sizes = client::list_sizes(&probe.client.peer()).await;
        probe.stop().await;
        Some(sizes?)
    } else {
        None
    };
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
            // The server's own cost of an answer: a fresh server, the raw client's lists back
            // to back (one level's budget).
            let (cpu, wire) =
                raw_list_cpu(options, setup, server, settings.settle, settings.budget(1)).await?;
            s.raw_list_cpu_ms.push(cpu.total());
            s.raw_list_user_ms.push(cpu.user);
            s.raw_answer_kib.push(wire as f64 / 1024.0);
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
            raw_list_cpu_ms: Summary::of(&s.raw_list_cpu_ms),
            raw_list_user_ms: Summary::of(&s.raw_list_user_ms),
            raw_answer_kib: Summary::of(&s.raw_answer_kib),
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
        peer_binary_bytes: options
            .peer_binary
            .as_deref()
            .and_then(|path| fs::metadata(path).ok())
            .map(|meta| meta.len()),
        peer_list_sizes,
        list_sizes: Some(list_sizes),
        servers: reports,
        direct: levels(&direct, &CALL_LEVELS),
    })
}
