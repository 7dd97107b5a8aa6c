//! The report: the figures of one run; the targets (`targets.rs`) and the page and
//! chart they are written to (`render.rs`).

mod render;
mod targets;

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
        /// Seconds of a regeneration after one command changed, with a warm target directory.
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
    /// Server CPU per `tools/list` with the raw client's requests back to back, ms.
    pub raw_list_cpu_ms: Option<Summary>,
    /// Of [`Self::raw_list_cpu_ms`], the user time (the process's own code; the rest is system
    /// time, the kernel's work on its behalf), ms.
    pub raw_list_user_ms: Option<Summary>,
    /// The first page of the `tools/list` answer on the wire, as the raw client read it: the
    /// line over stdio, the body (a server-sent event's framing included) over HTTP, KiB.
    pub raw_answer_kib: Option<Summary>,
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
    /// The peer's binary size, when it was built here or named (`--peer-build`, `--peer-binary`).
    pub peer_binary_bytes: Option<u64>,
    /// The peer's `tools/list` answer, measured as ours is, when the peer was measured.
    pub peer_list_sizes: Option<crate::ListSizes>,
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
    /// The run's notes (`--note`), as given.
    pub notes: Vec<String>,
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
        "server CPU per `tools/list`, raw client back to back (ms)".to_string(),
        Box::new(|s: &ServerReport| s.raw_list_cpu_ms),
        true,
    ));
    rows.push((
        "of it, user time: the server's own code (ms)".to_string(),
        Box::new(|s: &ServerReport| s.raw_list_user_ms),
        true,
    ));
    rows.push((
        "first `tools/list` page on the wire, raw client (KiB)".to_string(),
        Box::new(|s: &ServerReport| s.raw_answer_kib),
        true,
    ));
    for c in LIST_LEVELS {
        rows.push((
            format!("server CPU per `tools/list`, rmcp's client, c={c} (ms)"),
            Box::new(move |s: &ServerReport| s.list_at(c).and_then(|l| l.server_cpu)),
            true,
        ));
    }
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
}
