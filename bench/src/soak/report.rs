//! The soak's verdicts and figures, and their Markdown for docs/reliability.md.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::time::Duration;

use super::SoakOptions;
use super::check::{self, Answer, Restart, Verdict};
use super::plan::{Call, Lane};

/// Descriptors a server may hold at its end beyond what it held at its start (its listener
/// and runtime are open in both; this is room for a connection still closing).
pub const FD_SLACK: usize = 4;

/// How much a server's RSS may grow over its life, in KiB.
pub const RSS_GROWTH_KIB: u64 = 64 * 1024;

/// One server process: its figures at start and at its stop.
#[derive(Debug, Clone)]
pub struct ServerFigures {
    /// Which server (`main #1`, `missing application`).
    pub role: String,
    /// Its pid.
    pub pid: u32,
    /// Open descriptors when it was ready.
    pub fds_start: usize,
    /// Open descriptors just before SIGTERM.
    pub fds_end: usize,
    /// VmRSS when it was ready, KiB.
    pub rss_start_kib: u64,
    /// VmRSS just before SIGTERM, KiB.
    pub rss_end_kib: u64,
    /// VmHWM (peak RSS) just before SIGTERM, KiB.
    pub hwm_kib: u64,
    /// How it exited after SIGTERM.
    pub exit: String,
    /// Whether it was stopped at rest (every client closed), so its end is comparable with its
    /// start; a server stopped mid-load still holds its clients' connections.
    pub at_rest: bool,
}

/// Everything a soak run found.
#[derive(Debug, Clone)]
pub struct SoakReport {
    /// The options it ran with.
    pub options: SoakOptions,
    /// Calls planned.
    pub calls: usize,
    /// Calls with no answer.
    pub lost: Vec<usize>,
    /// Calls answered more than once.
    pub duplicated: Vec<usize>,
    /// Calls whose answer was wrong, with why.
    pub wrong: Vec<String>,
    /// Verdicts by kind label.
    pub by_kind: BTreeMap<String, BTreeMap<Verdict, usize>>,
    /// Calls by lane.
    pub by_lane: BTreeMap<Lane, usize>,
    /// Processes left behind.
    pub orphans: Vec<String>,
    /// The server processes.
    pub servers: Vec<ServerFigures>,
    /// Restarts: seconds from SIGTERM to the successor accepting connections.
    pub downtimes: Vec<f64>,
    /// The whole run.
    pub elapsed: Duration,
}

impl SoakReport {
    /// Judges every call.
    #[expect(
        clippy::too_many_arguments,
        reason = "one call site, the end of the run"
    )]
    pub(crate) fn judge(
        options: &SoakOptions,
        run: &str,
        calls: &[Call],
        answers: &HashMap<usize, Vec<Answer>>,
        restarts: &[Restart],
        started: &HashMap<&str, usize>,
        orphans: Vec<String>,
        servers: Vec<ServerFigures>,
        elapsed: Duration,
    ) -> SoakReport {
        let mut report = SoakReport {
            options: options.clone(),
            calls: calls.len(),
            lost: Vec::new(),
            duplicated: Vec::new(),
            wrong: Vec::new(),
            by_kind: BTreeMap::new(),
            by_lane: BTreeMap::new(),
            orphans,
            servers,
            downtimes: restarts.iter().map(|r| r.ready - r.stopped).collect(),
            elapsed,
        };
        for call in calls {
            *report.by_lane.entry(call.lane).or_default() += 1;
            let got = answers.get(&call.id).map(Vec::as_slice).unwrap_or_default();
            let answer = match got {
                [] => {
                    report.lost.push(call.id);
                    continue;
                }
                [answer] => answer,
                _ => {
                    report.duplicated.push(call.id);
                    continue;
                }
            };
            let count = started.get(call.token.as_str()).copied().unwrap_or(0);
            match check::judge(call, answer, restarts, count, run) {
                Ok(verdict) => {
                    *report
                        .by_kind
                        .entry(call.kind.label())
                        .or_default()
                        .entry(verdict)
                        .or_default() += 1;
                }
                Err(why) => report.wrong.push(format!(
                    "call {} ({}, {}): {why}",
                    call.id,
                    call.kind.label(),
                    call.lane.label()
                )),
            }
        }
        report
    }

    /// Everything that makes the run a failure (empty when it passed).
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if !self.lost.is_empty() {
            problems.push(format!(
                "{} call(s) lost: {:?}",
                self.lost.len(),
                first(&self.lost)
            ));
        }
        if !self.duplicated.is_empty() {
            problems.push(format!(
                "{} call(s) answered twice: {:?}",
                self.duplicated.len(),
                first(&self.duplicated)
            ));
        }
        for wrong in self.wrong.iter().take(20) {
            problems.push(wrong.clone());
        }
        if self.wrong.len() > 20 {
            problems.push(format!("... {} wrong in all", self.wrong.len()));
        }
        for orphan in &self.orphans {
            problems.push(format!("left running: {orphan}"));
        }
        for server in &self.servers {
            if server.at_rest && server.fds_end > server.fds_start + FD_SLACK {
                problems.push(format!(
                    "{}: {} descriptors at its end, {} at its start",
                    server.role, server.fds_end, server.fds_start
                ));
            }
            if server.rss_end_kib > server.rss_start_kib + RSS_GROWTH_KIB {
                problems.push(format!(
                    "{}: RSS grew from {} KiB to {} KiB",
                    server.role, server.rss_start_kib, server.rss_end_kib
                ));
            }
        }
        problems
    }

    /// Calls that ended with each verdict.
    pub fn verdicts(&self) -> BTreeMap<Verdict, usize> {
        let mut all = BTreeMap::new();
        for verdicts in self.by_kind.values() {
            for (verdict, count) in verdicts {
                *all.entry(*verdict).or_default() += count;
            }
        }
        all
    }

    /// The figures as Markdown (docs/reliability.md's soak section).
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let o = &self.options;
        let _ = writeln!(
            out,
            "{} calls in {:.0} s; lanes of {} calls in flight each (8 lanes: four on the main HTTP \
             server, so {} at once against `--max-concurrent-tools {}`); `--tool-timeout {} ms`; \
             clients give up on an answer after {} s; {} floods of {} bytes; the main server stopped with SIGTERM and restarted {} \
             time(s) (down for {}).\n",
            self.calls,
            self.elapsed.as_secs_f64(),
            o.per_lane,
            4 * o.per_lane,
            o.max_concurrent,
            o.tool_timeout.as_millis(),
            o.give_up().as_secs(),
            o.floods,
            o.flood_bytes,
            o.restarts,
            self.downtimes
                .iter()
                .map(|d| format!("{d:.1} s"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let verdicts = self.verdicts();
        let _ = writeln!(
            out,
            "| Result | Calls |\n| --- | --- |\n| lost (no answer) | {} |\n| answered twice | {} \
             |\n| wrong (another call's token, a wrong result, a command run twice) | {} |",
            self.lost.len(),
            self.duplicated.len(),
            self.wrong.len()
        );
        for (verdict, count) in &verdicts {
            let _ = writeln!(out, "| right: {} | {count} |", verdict.label());
        }
        let _ = writeln!(
            out,
            "| processes left behind afterwards | {} |\n",
            self.orphans.len()
        );
        let _ = writeln!(
            out,
            "| Kind of call | Calls | Endings |\n| --- | --- | --- |"
        );
        for (kind, verdicts) in &self.by_kind {
            let total: usize = verdicts.values().sum();
            let endings = verdicts
                .iter()
                .map(|(verdict, count)| format!("{count} {}", verdict.label()))
                .collect::<Vec<_>>()
                .join("; ");
            let _ = writeln!(out, "| {kind} | {total} | {endings} |");
        }
        let _ = writeln!(out, "\n| Lane | Calls |\n| --- | --- |");
        for (lane, count) in &self.by_lane {
            let _ = writeln!(out, "| {} | {count} |", lane.label());
        }
        let _ = writeln!(
            out,
            "\n| Server process | stopped | fds at start → end | RSS at start → end (MiB) | peak RSS (MiB) | exit after SIGTERM |\n| --- | --- | --- | --- | --- | --- |"
        );
        for server in &self.servers {
            let _ = writeln!(
                out,
                "| {} | {} | {} → {} | {:.1} → {:.1} | {:.1} | {} |",
                server.role,
                if server.at_rest {
                    "at rest"
                } else {
                    "mid-load"
                },
                server.fds_start,
                server.fds_end,
                server.rss_start_kib as f64 / 1024.0,
                server.rss_end_kib as f64 / 1024.0,
                server.hwm_kib as f64 / 1024.0,
                server.exit
            );
        }
        out
    }
}

fn first(ids: &[usize]) -> Vec<usize> {
    ids.iter().take(10).copied().collect()
}
