//! The report: figures, the Markdown page and the SVG chart.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use crate::client::Transport;
use crate::stats::{Level, Summary};
use crate::{CALL_LEVELS, LIST_LEVELS, Mode, TOOL_SLOTS};

/// A server under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    /// The fiskgen-generated server, over one transport.
    Ours(Transport),
    /// The peer (`--peer-command`), over streamable HTTP in legacy mode.
    Peer,
}

impl Server {
    /// The column heading.
    pub fn label(self) -> String {
        match self {
            Server::Ours(transport) => format!("fiskgen, {}", transport.label()),
            Server::Peer => "peer (fisk mcp), HTTP legacy".to_string(),
        }
    }

    pub(crate) fn slug(self) -> &'static str {
        match self {
            Server::Ours(Transport::Legacy) => "ours-legacy",
            Server::Ours(Transport::Modern) => "ours-2026",
            Server::Ours(Transport::Stdio) => "ours-stdio",
            Server::Peer => "peer",
        }
    }
}

/// Whether the peer was measured.
#[derive(Debug, Clone, PartialEq)]
pub enum PeerStatus {
    /// It was, with this command template.
    Measured {
        /// The `--peer-command` template.
        command: String,
    },
    /// It was not, and why.
    Absent {
        /// Why, with the evidence.
        reason: String,
    },
}

/// `fiskgen build` times.
#[derive(Debug, Clone, PartialEq)]
pub enum Builds {
    /// Not measured, and why.
    Skipped(String),
    /// Measured.
    Measured {
        /// Seconds of each app's first build, in order: the first into a fresh target directory
        /// (cold), the next ones with the runtime already compiled.
        first_s: Vec<(String, f64)>,
        /// Seconds of a regeneration (the crate written afresh) with a warm target directory.
        warm_s: Vec<(String, Summary)>,
        /// Set when the figures come from an earlier run's record (`--skip-builds`).
        recorded: Option<String>,
    },
}

/// The machine the run happened on.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    /// CPU model.
    pub cpu: String,
    /// Cores available to the process.
    pub cores: usize,
    /// Total memory, MiB.
    pub memory_mb: f64,
    /// Kernel release.
    pub kernel: String,
    /// `/proc/loadavg` (1, 5, 15 min) before the run.
    pub load_before: String,
    /// `/proc/loadavg` after the run.
    pub load_after: String,
    /// `rustc -V`.
    pub rustc: String,
}

/// The load average, as `/proc/loadavg` gives it (first three fields).
pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "unknown".to_string())
}

impl Machine {
    pub(crate) fn detect(load_before: String) -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find_map(|line| line.strip_prefix("model name"))
            .and_then(|rest| rest.split_once(':'))
            .map(|(_, model)| model.trim().to_string())
            .unwrap_or_else(|| "unknown".to_string());
        let memory_mb = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|text| {
                text.lines()
                    .find_map(|line| line.strip_prefix("MemTotal:"))
                    .and_then(|rest| rest.split_whitespace().next()?.parse::<f64>().ok())
            })
            .map_or(0.0, |kib| kib / 1024.0);
        let rustc = std::process::Command::new(std::env::var_os("RUSTC").unwrap_or("rustc".into()))
            .arg("-V")
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        Machine {
            cpu,
            cores: std::thread::available_parallelism().map_or(0, |n| n.get()),
            memory_mb,
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map(|k| k.trim().to_string())
                .unwrap_or_default(),
            load_before,
            load_after: load_average(),
            rustc,
        }
    }
}

/// The figures of one server over one transport.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerReport {
    /// Which server and transport.
    pub server: Server,
    /// Spawn to the first successful `tools/list` with rmcp's client (its parsing included), ms.
    pub start_ms: Option<Summary>,
    /// Spawn to the last byte of the first `tools/list` answer with the raw client, ms.
    pub raw_start_ms: Option<Summary>,
    /// RSS right after the first successful `tools/list`, MiB.
    pub ready_rss_mb: Option<Summary>,
    /// RSS after start, a warm-up and a settling pause, MiB.
    pub idle_rss_mb: Option<Summary>,
    /// Peak RSS (VmHWM) after the load, MiB.
    pub peak_rss_mb: Option<Summary>,
    /// RSS after the load, MiB.
    pub after_rss_mb: Option<Summary>,
    /// `tools/list` at each of [`LIST_LEVELS`].
    pub list: Vec<Level>,
    /// `tools/call` at each of [`CALL_LEVELS`].
    pub call: Vec<Level>,
    /// `tools/call` p50 minus the direct run's p50, per concurrency, ms.
    pub overhead_p50: Vec<(usize, Summary)>,
    /// `tools/call` p99 minus the direct run's p99, per concurrency, ms.
    pub overhead_p99: Vec<(usize, Summary)>,
}

/// The figures of one application.
#[derive(Debug, Clone, PartialEq)]
pub struct AppReport {
    /// `demo` or `nats`.
    pub name: String,
    /// The config the servers were built from.
    pub config: PathBuf,
    /// Our server's binary.
    pub server_binary: PathBuf,
    /// Tools served.
    pub tools: usize,
    /// The tool called.
    pub tool: String,
    /// The argv the server runs for it (and the benchmark runs directly).
    pub argv: Vec<String>,
    /// Our binary's size.
    pub size_bytes: u64,
    /// Our binary's size, stripped.
    pub stripped_bytes: Option<u64>,
    /// Lines of the generated crate's `src/`, when it was built here.
    pub crate_lines: Option<CrateLines>,
    /// The `tools/list` answer's size beside its input schemas'.
    pub list_sizes: Option<crate::ListSizes>,
    /// Each server and transport.
    pub servers: Vec<ServerReport>,
    /// The direct runs at each of [`CALL_LEVELS`].
    pub direct: Vec<Level>,
}

/// The lines of a generated crate's `src/`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CrateLines {
    /// Rust code (`.rs`).
    pub rust: usize,
    /// The data files the code includes (`.json`, `.md`).
    pub data: usize,
}

/// An earlier design's natscli server, built and measured beside ours.
#[derive(Debug, Clone, PartialEq)]
pub struct Previous {
    /// Its label (`--previous-fiskgen LABEL=PATH`).
    pub label: String,
    /// Its fiskgen binary.
    pub fiskgen: PathBuf,
    /// Its builds.
    pub builds: Builds,
    /// Its figures.
    pub app: AppReport,
}

/// Everything one run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Smoke or full.
    pub mode: Mode,
    /// How many starts, rounds and requests.
    pub settings: String,
    /// Where it ran.
    pub machine: Machine,
    /// Per application.
    pub apps: Vec<AppReport>,
    /// Build times.
    pub builds: Builds,
    /// Earlier designs, measured in the same run (`--previous-fiskgen`).
    pub previous: Vec<Previous>,
    /// The peer.
    pub peer: PeerStatus,
    /// How long the whole run took.
    pub wall: Duration,
}

pub(crate) fn num(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

pub(crate) fn cell(s: Option<Summary>) -> String {
    match s {
        Some(s) if s.n > 1 => format!("{} ({}–{})", num(s.median), num(s.min), num(s.max)),
        Some(s) => num(s.median),
        None => "—".to_string(),
    }
}

fn mb(bytes: u64) -> String {
    format!("{:.2}", bytes as f64 / (1024.0 * 1024.0))
}

impl ServerReport {
    pub(crate) fn list_at(&self, c: usize) -> Option<&Level> {
        self.list.iter().find(|l| l.concurrency == c)
    }

    fn call_at(&self, c: usize) -> Option<&Level> {
        self.call.iter().find(|l| l.concurrency == c)
    }

    fn overhead(list: &[(usize, Summary)], c: usize) -> Option<Summary> {
        list.iter().find(|(level, _)| *level == c).map(|(_, s)| *s)
    }
}

/// Rows of the per-app table: a heading, a getter, and whether lower is better.
type Getter = Box<dyn Fn(&ServerReport) -> Option<Summary>>;

fn rows() -> Vec<(String, Getter, bool)> {
    let mut rows: Vec<(String, Getter, bool)> = vec![
        (
            "start → first `tools/list`, rmcp's client (ms)".to_string(),
            Box::new(|s: &ServerReport| s.start_ms),
            true,
        ),
        (
            "start → last byte of the first `tools/list`, raw client (ms)".to_string(),
            Box::new(|s: &ServerReport| s.raw_start_ms),
            true,
        ),
    ];
    for c in LIST_LEVELS {
        rows.push((
            format!("`tools/list` p50, c={c} (ms)"),
            Box::new(move |s: &ServerReport| s.list_at(c).map(|l| l.p50)),
            true,
        ));
        rows.push((
            format!("`tools/list` p99, c={c} (ms)"),
            Box::new(move |s: &ServerReport| s.list_at(c).map(|l| l.p99)),
            true,
        ));
        rows.push((
            format!("`tools/list` throughput, c={c} (req/s)"),
            Box::new(move |s: &ServerReport| s.list_at(c).map(|l| l.throughput)),
            false,
        ));
    }
    for c in CALL_LEVELS {
        rows.push((
            format!("`tools/call` p50, c={c} (ms)"),
            Box::new(move |s: &ServerReport| s.call_at(c).map(|l| l.p50)),
            true,
        ));
        rows.push((
            format!("`tools/call` p99, c={c} (ms)"),
            Box::new(move |s: &ServerReport| s.call_at(c).map(|l| l.p99)),
            true,
        ));
        rows.push((
            format!("`tools/call` throughput, c={c} (req/s)"),
            Box::new(move |s: &ServerReport| s.call_at(c).map(|l| l.throughput)),
            false,
        ));
        rows.push((
            format!("overhead over the direct run, p50, c={c} (ms)"),
            Box::new(move |s: &ServerReport| ServerReport::overhead(&s.overhead_p50, c)),
            true,
        ));
        rows.push((
            format!("overhead over the direct run, p99, c={c} (ms)"),
            Box::new(move |s: &ServerReport| ServerReport::overhead(&s.overhead_p99, c)),
            true,
        ));
    }
    rows.push((
        "server CPU per `tools/list`, c=8 (ms)".to_string(),
        Box::new(|s: &ServerReport| s.list_at(8).and_then(|l| l.server_cpu)),
        true,
    ));
    for c in CALL_LEVELS {
        rows.push((
            format!("server CPU per `tools/call`, c={c} (ms)"),
            Box::new(move |s: &ServerReport| s.call_at(c).and_then(|l| l.server_cpu)),
            true,
        ));
    }
    rows.push((
        "client (benchmark process) CPU per `tools/call`, c=8 (ms)".to_string(),
        Box::new(|s: &ServerReport| s.call_at(8).and_then(|l| l.client_cpu)),
        true,
    ));
    rows.push((
        "RSS at the first `tools/list` (MiB)".to_string(),
        Box::new(|s: &ServerReport| s.ready_rss_mb),
        true,
    ));
    rows.push((
        "RSS idle (MiB)".to_string(),
        Box::new(|s: &ServerReport| s.idle_rss_mb),
        true,
    ));
    rows.push((
        "RSS peak during the load, VmHWM (MiB)".to_string(),
        Box::new(|s: &ServerReport| s.peak_rss_mb),
        true,
    ));
    rows.push((
        "RSS after the load (MiB)".to_string(),
        Box::new(|s: &ServerReport| s.after_rss_mb),
        true,
    ));
    rows
}

/// One issue target and whether this run meets it.
struct Target {
    what: String,
    measured: String,
    holds: Option<bool>,
    evidence: String,
}

impl Report {
    fn app(&self, name: &str) -> Option<&AppReport> {
        self.apps.iter().find(|a| a.name == name)
    }

    /// Every figure this run should have produced but did not (empty when complete).
    pub fn missing_figures(&self) -> Vec<String> {
        let mut missing = Vec::new();
        if self.apps.is_empty() {
            missing.push("no application measured".to_string());
        }
        for app in &self.apps {
            let name = &app.name;
            if app.stripped_bytes.is_none() {
                missing.push(format!("{name}: stripped binary size"));
            }
            if app.tools == 0 {
                missing.push(format!("{name}: tool count"));
            }
            if app.direct.len() != CALL_LEVELS.len() {
                missing.push(format!("{name}: direct runs"));
            }
            if app.servers.is_empty() {
                missing.push(format!("{name}: no server measured"));
            }
            for server in &app.servers {
                let label = server.server.label();
                for (row, get, _) in rows() {
                    if get(server).is_none() {
                        missing.push(format!("{name}, {label}: {row}"));
                    }
                }
            }
        }
        if self.mode == Mode::Full {
            match &self.builds {
                Builds::Measured {
                    first_s, warm_s, ..
                } => {
                    if first_s.is_empty() || warm_s.is_empty() {
                        missing.push("build times".to_string());
                    }
                }
                Builds::Skipped(why) => missing.push(format!("build times ({why})")),
            }
        }
        missing
    }

    /// The targets, natscli (the issue's reference) first.
    fn targets(&self) -> Vec<Target> {
        let mut apps: Vec<&AppReport> = self.app("nats").into_iter().collect();
        apps.extend(self.apps.iter().filter(|a| a.name != "nats"));
        apps.into_iter().flat_map(|a| self.targets_for(a)).collect()
    }

    fn targets_for(&self, app: &AppReport) -> Vec<Target> {
        let mut targets = Vec::new();
        let name = &app.name;
        let legacy = app
            .servers
            .iter()
            .find(|s| s.server == Server::Ours(Transport::Legacy));
        let peer = app.servers.iter().find(|s| s.server == Server::Peer);
        let idle_max = app
            .servers
            .iter()
            .filter(|s| s.server != Server::Peer)
            .filter_map(|s| s.idle_rss_mb.map(|m| m.median))
            .fold(None, |acc: Option<f64>, v| {
                Some(acc.map_or(v, |a| a.max(v)))
            });
        targets.push(Target {
            what: format!("idle RSS under 15 MB ({name}, every transport)"),
            measured: idle_max.map_or("—".into(), |v| format!("{} MiB at most", num(v))),
            holds: idle_max.map(|v| v * 1.048_576 < 15.0),
            evidence: legacy
                .and_then(|s| s.ready_rss_mb.zip(s.idle_rss_mb))
                .map_or(String::new(), |(ready, idle)| {
                    format!(
                        "HTTP legacy: {} MiB when the first `tools/list` is answered, {} MiB \
                         idle a second later; the server checks the application in the \
                         background at every start (`--fisk-introspect`, parsed and compared)",
                        num(ready.median),
                        num(idle.median)
                    )
                }),
        });
        targets.push(Target {
            what: format!("stripped binary under 15 MB ({name})"),
            measured: app
                .stripped_bytes
                .map_or("—".into(), |b| format!("{} MiB", mb(b))),
            holds: app.stripped_bytes.map(|b| (b as f64) < 15e6),
            evidence: String::new(),
        });
        let warm = match &self.builds {
            Builds::Measured { warm_s, .. } => warm_s.iter().find(|(n, _)| n == name).map(|x| x.1),
            Builds::Skipped(_) => None,
        };
        targets.push(Target {
            what: format!("regeneration with a warm target directory under 30 s ({name})"),
            measured: warm.map_or("not measured".into(), |s| format!("{} s", cell(Some(s)))),
            holds: warm.map(|s| s.median < 30.0),
            evidence: app.crate_lines.map_or(String::new(), |lines| {
                format!(
                    "the generated crate is {} lines of Rust, compiled as one crate \
                     (release, codegen-units 16) on {} cores",
                    lines.rust, self.machine.cores
                )
            }),
        });
        for (pct, limit) in [("p50", 0.5), ("p99", 2.0)] {
            let value = legacy.and_then(|s| {
                ServerReport::overhead(
                    if pct == "p50" {
                        &s.overhead_p50
                    } else {
                        &s.overhead_p99
                    },
                    8,
                )
            });
            targets.push(Target {
                what: format!(
                    "per-call overhead over the direct run, {pct} at c=8, at most {limit} ms \
                     ({name}, HTTP legacy)"
                ),
                measured: value.map_or("—".into(), |s| format!("{} ms", cell(Some(s)))),
                // Noisy: a verdict only when every round agrees.
                holds: value.and_then(|s| {
                    if s.max <= limit {
                        Some(true)
                    } else if s.min > limit {
                        Some(false)
                    } else {
                        None
                    }
                }),
                evidence: legacy
                    .and_then(|s| s.call_at(8))
                    .zip(app.direct.iter().find(|l| l.concurrency == 8))
                    .map_or(String::new(), |(call, direct)| {
                        format!(
                            "c=8 on {} cores: the direct run alone takes {} ms p50 ({} ms p99); \
                             per call the server spends {} ms of CPU and the client {} ms, \
                             competing with the 8 application processes for the cores",
                            self.machine.cores,
                            num(direct.p50.median),
                            num(direct.p99.median),
                            call.server_cpu.map_or("—".into(), |c| num(c.median)),
                            call.client_cpu.map_or("—".into(), |c| num(c.median)),
                        )
                    }),
            });
        }
        let peer_note = "no peer measured";
        let ratio = |ours: Option<f64>, theirs: Option<f64>| ours.zip(theirs).map(|(o, t)| t / o);
        let start = ratio(
            legacy.and_then(|s| s.start_ms.map(|m| m.median)),
            peer.and_then(|s| s.start_ms.map(|m| m.median)),
        );
        targets.push(Target {
            what: format!("start to first `tools/list` at least 20x faster than the peer ({name})"),
            measured: start.map_or(peer_note.into(), |r| format!("{}x", num(r))),
            holds: start.map(|r| r >= 20.0),
            evidence: String::new(),
        });
        let list8 = |s: Option<&ServerReport>| s.and_then(|s| s.list_at(8).copied());
        let tput = list8(legacy)
            .zip(list8(peer))
            .map(|(o, t)| o.throughput.median / t.throughput.median);
        targets.push(Target {
            what: format!("`tools/list` throughput at least 3x the peer's (c=8, {name})"),
            measured: tput.map_or(peer_note.into(), |r| format!("{}x", num(r))),
            holds: tput.map(|r| r >= 3.0),
            evidence: String::new(),
        });
        let p99 = list8(legacy)
            .zip(list8(peer))
            .map(|(o, t)| o.p99.median / t.p99.median);
        targets.push(Target {
            what: format!("`tools/list` p99 at most a third of the peer's (c=8, {name})"),
            measured: p99.map_or(peer_note.into(), |r| format!("{}x", num(r))),
            holds: p99.map(|r| r <= 1.0 / 3.0),
            evidence: String::new(),
        });
        let rss = ratio(
            legacy.and_then(|s| s.idle_rss_mb.map(|m| m.median)),
            peer.and_then(|s| s.idle_rss_mb.map(|m| m.median)),
        );
        targets.push(Target {
            what: format!("idle RSS at most a third of the peer's ({name})"),
            measured: rss.map_or(peer_note.into(), |r| format!("peer / ours = {}", num(r))),
            holds: rss.map(|r| r >= 3.0),
            evidence: String::new(),
        });
        targets
    }

    /// The Markdown page (`docs/benchmarks.md`).
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let m = &self.machine;
        let _ = writeln!(out, "# Benchmarks\n");
        let _ = writeln!(
            out,
            "<!-- Generated by fiskgen-bench; do not edit. Regenerate with:\n     \
             cargo run --release -p fiskgen-bench -- --full -->\n"
        );
        let _ = writeln!(
            out,
            "fiskgen's generated servers, measured by `bench/` (the `fiskgen-bench` binary). \
             Regenerate this page and the chart with:\n\n```sh\ncargo run --release -p \
             fiskgen-bench -- --full [--peer-command 'fisk mcp --config {{config}}']\n```\n"
        );
        let _ = writeln!(out, "![benchmark chart](benchmarks.svg)\n");
        let _ = writeln!(out, "## Machine and method\n");
        let _ = writeln!(
            out,
            "- Mode: **{}**; {}; whole run {:.0} s.",
            match self.mode {
                Mode::Smoke => "smoke (a few iterations; not meaningful numbers)",
                Mode::Full => "full",
            },
            self.settings,
            self.wall.as_secs_f64()
        );
        let _ = writeln!(
            out,
            "- Machine: {} cores of {}, {:.0} MiB memory, Linux {}, {}.",
            m.cores, m.cpu, m.memory_mb, m.kernel, m.rustc
        );
        let _ = writeln!(
            out,
            "- Load average (1/5/15 min): {} before, {} after. The machine is shared and noisy: \
             every figure is the median over rounds (starts: over all starts) with the range \
             (min–max) in parentheses.",
            m.load_before, m.load_after
        );
        let _ = writeln!(
            out,
            "- Client: one implementation for every server and transport, rmcp 3.11's client \
             (reqwest for streamable HTTP, a child process for stdio), its response cache off. \
             Legacy HTTP and stdio use `initialize` (2025-11-25); 2026-07-28 uses \
             `server/discover` and stateless requests.",
        );
        let _ = writeln!(
            out,
            "- Servers listen on 127.0.0.1 and get `--max-concurrent-tools {TOOL_SLOTS}` so calls \
             at c=8 never wait for a slot (the configs' default, 2, would measure queueing). \
             Start, measured twice per start: spawn until rmcp's client has the first \
             `tools/list` parsed (TCP polled every 0.2 ms, then the client handshake), and spawn \
             until the last byte of that answer with a raw client that writes the protocol's \
             bytes itself (`bench/src/raw.rs`: over stdio `initialize`, `initialized`, \
             `tools/list`; over HTTP one connection per request, legacy with its session, \
             2026-07-28 a single self-contained `tools/list`), which leaves out the client's \
             parsing. Each load level runs `c` clients in flight on one \
             connection/session; latency is per request, throughput is completed requests per \
             second of wall time. Servers, transports and the direct runs are interleaved, the \
             order rotating every round."
        );
        let _ = writeln!(
            out,
            "- Overhead: per round, the server's `tools/call` p50 (p99) minus the p50 (p99) of \
             the same argv spawned directly by the benchmark (stdin closed, output piped, own \
             process group, `LLMFORMAT=1`), at the same concurrency. The difference of two noisy \
             figures: a negative value means the direct runs were slower in that round, and a \
             target is judged only when every round agrees."
        );
        let _ = writeln!(
            out,
            "- RSS from `/proc/<pid>/status`: idle is VmRSS after start, a warm-up and a \
             settling pause; peak is VmHWM after the load. Binary size stripped with `strip`.\n"
        );
        let _ = writeln!(out, "### The peer\n");
        match &self.peer {
            PeerStatus::Measured { command } => {
                let _ = writeln!(out, "Measured with `--peer-command '{command}'`.\n");
            }
            PeerStatus::Absent { reason } => {
                let reason = reason.trim_end_matches('.');
                let _ = writeln!(
                    out,
                    "**Not measured: the peer columns are empty.** Reason: {reason}.\n\n\
                     Fisk AI (`github.com/choria-io/fisk-ai`) is the peer the issue names; when \
                     it can be built, pass its server with `--peer-command 'fisk mcp --config \
                     {{config}}'` (`{{config}}`, `{{port}}` and `{{app}}` are filled in; \
                     `FISK_AI_MCP_PORT` is set too) and the same run fills the peer columns and \
                     the ratios.\n"
                );
            }
        }

        for app in &self.apps {
            let _ = writeln!(
                out,
                "## {} — {} tools\n\nConfig `{}`; called tool `{}` (argv `{}`); server binary \
                 `{}`: {} MiB, {} MiB stripped.\n",
                app.name,
                app.tools,
                relative(&app.config),
                app.tool,
                app.argv.join(" "),
                relative(&app.server_binary),
                mb(app.size_bytes),
                app.stripped_bytes.map_or("—".to_string(), mb)
            );
            let mut columns: Vec<Server> = vec![
                Server::Ours(Transport::Legacy),
                Server::Ours(Transport::Modern),
                Server::Ours(Transport::Stdio),
                Server::Peer,
            ];
            columns.retain(|c| *c == Server::Peer || app.servers.iter().any(|s| s.server == *c));
            let _ = write!(out, "| Figure |");
            for c in &columns {
                let _ = write!(out, " {} |", c.label());
            }
            let _ = writeln!(out, " ratio (peer vs fiskgen HTTP legacy) |");
            let _ = write!(out, "| --- |");
            for _ in &columns {
                let _ = write!(out, " ---: |");
            }
            let _ = writeln!(out, " ---: |");
            let find = |c: Server| app.servers.iter().find(|s| s.server == c);
            for (row, get, lower_better) in rows() {
                let _ = write!(out, "| {row} |");
                for c in &columns {
                    let _ = write!(out, " {} |", cell(find(*c).and_then(&get)));
                }
                let ours = find(Server::Ours(Transport::Legacy)).and_then(&get);
                let theirs = find(Server::Peer).and_then(&get);
                let ratio = ours.zip(theirs).map(|(o, t)| {
                    if lower_better {
                        t.median / o.median
                    } else {
                        o.median / t.median
                    }
                });
                let _ = writeln!(
                    out,
                    " {} |",
                    ratio.map_or("—".to_string(), |r| format!("{}x", num(r)))
                );
            }
            let _ = writeln!(
                out,
                "\nRatios are \"how many times better fiskgen is\": peer ÷ fiskgen for times and \
                 memory, fiskgen ÷ peer for throughput.\n"
            );
            let _ = writeln!(out, "The same argv run directly by the benchmark:\n");
            let _ = writeln!(
                out,
                "| Concurrency | p50 (ms) | p99 (ms) | runs/s | benchmark CPU per run (ms) |"
            );
            let _ = writeln!(out, "| ---: | ---: | ---: | ---: | ---: |");
            for level in &app.direct {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} |",
                    level.concurrency,
                    cell(Some(level.p50)),
                    cell(Some(level.p99)),
                    cell(Some(level.throughput)),
                    cell(level.client_cpu)
                );
            }
            let _ = writeln!(out);
        }

        if let Some(section) = crate::compare::section(self) {
            out.push_str(&section);
        }

        let _ = writeln!(out, "## `fiskgen build` time\n");
        match &self.builds {
            Builds::Skipped(why) => {
                let _ = writeln!(out, "Not measured in this run: {why}.\n");
            }
            Builds::Measured {
                first_s,
                warm_s,
                recorded,
            } => {
                if let Some(record) = recorded {
                    let _ = writeln!(
                        out,
                        "These build figures were recorded by an earlier run of this benchmark \
                         ({record}); this run measured the servers those builds produced.\n"
                    );
                }
                let _ = writeln!(
                    out,
                    "Release builds with `fiskgen build --target-dir target/bench/target` (the \
                     crates.io sources already in cargo's cache). The first build of the first \
                     app is cold (fresh target directory: it compiles the runtime and every \
                     dependency); the second app's first build reuses them. A regeneration \
                     writes the crate afresh and recompiles only it.\n"
                );
                let _ = writeln!(out, "| Build | Seconds |");
                let _ = writeln!(out, "| --- | ---: |");
                for (index, (name, secs)) in first_s.iter().enumerate() {
                    let kind = if index == 0 {
                        "first build, cold target directory"
                    } else {
                        "first build, warm target directory"
                    };
                    let _ = writeln!(out, "| {name}: {kind} | {} |", num(*secs));
                }
                for (name, s) in warm_s {
                    let _ = writeln!(
                        out,
                        "| {name}: regeneration, warm target directory (median of {}) | {} |",
                        s.n,
                        cell(Some(*s))
                    );
                }
                let _ = writeln!(out);
            }
        }

        let _ = writeln!(out, "## The issue's targets\n");
        let _ = writeln!(out, "| Target | Measured | Holds | Evidence |");
        let _ = writeln!(out, "| --- | --- | --- | --- |");
        for t in self.targets() {
            let holds = match t.holds {
                Some(true) => "yes",
                Some(false) => "**no**",
                None if t.measured.ends_with("ms") => "inconclusive: the rounds disagree",
                None => "not checked",
            };
            let _ = writeln!(
                out,
                "| {} | {} | {holds} | {} |",
                t.what, t.measured, t.evidence
            );
        }
        let _ = writeln!(out);
        out
    }

    /// The chart (`docs/benchmarks.svg`): four panels of horizontal bars.
    pub fn svg(&self) -> String {
        type Pick = fn(&ServerReport) -> Option<f64>;
        let panels: [(&str, Pick); 4] = [
            ("Start → first tools/list, median (ms)", |s| {
                s.start_ms.map(|m| m.median)
            }),
            ("tools/list throughput, c=8 (req/s)", |s| {
                s.list_at(8).map(|l| l.throughput.median)
            }),
            ("tools/call overhead over a direct run, p50 c=8 (ms)", |s| {
                ServerReport::overhead(&s.overhead_p50, 8).map(|o| o.median)
            }),
            ("Idle RSS (MiB)", |s| s.idle_rss_mb.map(|m| m.median)),
        ];
        let bars: Vec<(String, &ServerReport)> = self
            .apps
            .iter()
            .flat_map(|app| {
                app.servers
                    .iter()
                    .map(move |s| (format!("{}: {}", app.name, s.server.label()), s))
            })
            .collect();
        let bar_h = 18.0;
        let label_w = 250.0;
        let bar_w = 170.0;
        let panel_w = label_w + bar_w + 70.0;
        let panel_h = 40.0 + bars.len().max(1) as f64 * (bar_h + 4.0);
        let width = 2.0 * panel_w + 30.0;
        let height = 2.0 * panel_h + 70.0;
        let mut svg = String::new();
        let _ = writeln!(
            svg,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" \
             viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"sans-serif\" font-size=\"11\">"
        );
        let _ = writeln!(
            svg,
            "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"10\" y=\"20\" \
             font-size=\"14\" font-weight=\"bold\">{}</text>",
            escape(&format!(
                "fiskgen benchmarks ({}; {} cores, load {}){}",
                match self.mode {
                    Mode::Smoke => "smoke",
                    Mode::Full => "full",
                },
                self.machine.cores,
                self.machine.load_before,
                match self.peer {
                    PeerStatus::Absent { .. } => " — peer not measured",
                    PeerStatus::Measured { .. } => "",
                }
            ))
        );
        for (index, (title, pick)) in panels.iter().enumerate() {
            let x0 = 10.0 + (index % 2) as f64 * (panel_w + 10.0);
            let y0 = 40.0 + (index / 2) as f64 * (panel_h + 10.0);
            let _ = writeln!(
                svg,
                "<text x=\"{x0:.0}\" y=\"{:.0}\" font-weight=\"bold\">{}</text>",
                y0 + 14.0,
                escape(title)
            );
            let values: Vec<Option<f64>> = bars.iter().map(|(_, s)| pick(s)).collect();
            let max = values
                .iter()
                .flatten()
                .fold(0.0_f64, |a, v| a.max(*v))
                .max(f64::MIN_POSITIVE);
            for (row, ((label, server), value)) in bars.iter().zip(&values).enumerate() {
                let y = y0 + 26.0 + row as f64 * (bar_h + 4.0);
                let color = match server.server {
                    Server::Ours(Transport::Legacy) => "#1f77b4",
                    Server::Ours(Transport::Modern) => "#2ca02c",
                    Server::Ours(Transport::Stdio) => "#9467bd",
                    Server::Peer => "#d62728",
                };
                let _ = writeln!(
                    svg,
                    "<text x=\"{:.0}\" y=\"{:.0}\" text-anchor=\"end\">{}</text>",
                    x0 + label_w - 6.0,
                    y + 13.0,
                    escape(label)
                );
                let (len, text) = match value {
                    Some(v) => ((v.max(0.0) / max) * bar_w, num(*v)),
                    None => (0.0, "—".to_string()),
                };
                let _ = writeln!(
                    svg,
                    "<rect x=\"{:.1}\" y=\"{y:.1}\" width=\"{len:.1}\" height=\"{bar_h:.0}\" \
                     fill=\"{color}\"/>\n<text x=\"{:.1}\" y=\"{:.0}\">{}</text>",
                    x0 + label_w,
                    x0 + label_w + len + 4.0,
                    y + 13.0,
                    escape(&text)
                );
            }
        }
        let _ = writeln!(
            svg,
            "<text x=\"10\" y=\"{:.0}\" fill=\"#555\">Medians; details and spreads in \
             docs/benchmarks.md.</text>\n</svg>",
            height - 10.0
        );
        svg
    }
}

fn relative(path: &std::path::Path) -> String {
    let root = fiskgen_tests::apps::workspace_root();
    path.strip_prefix(&root)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
