//! What the soak sends: one call per id, each with a kind (a normal call or a fault), a lane
//! (which client reaches which server how), and arguments that carry the call's own token.

use std::path::Path;

use serde_json::{Map, Value, json};

/// What a call does to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// Prints what it parsed (with its token) and exits 0, after a short random sleep.
    Echo,
    /// The same, then exits 3.
    Exit,
    /// Sleeps an hour: past the tool timeout.
    Hang,
    /// Prints its token, then [`super::SoakOptions::flood_bytes`] of filler.
    Flood,
    /// Prints its token, then kills itself with this signal (`KILL` or `TERM` in the plan).
    Signal(&'static str),
    /// Ignores SIGTERM and sleeps an hour.
    IgnoreTerm,
    /// Leaves a child behind that holds stdout open and sleeps, and exits.
    HoldStdout,
    /// Sent to a server whose application binary does not exist.
    Missing,
    /// A hang the client cancels mid-call.
    Cancel,
    /// A hang whose client disconnects (or, over stdio, stops its server) mid-call.
    Disconnect,
}

impl Kind {
    /// A short label for the report.
    pub fn label(self) -> String {
        match self {
            Kind::Echo => "normal (exit 0)".into(),
            Kind::Exit => "normal (exit 3)".into(),
            Kind::Hang => "hangs past the timeout".into(),
            Kind::Flood => "prints the flood".into(),
            Kind::Signal(signal) => format!("dies of SIG{signal}"),
            Kind::IgnoreTerm => "ignores SIGTERM, hangs".into(),
            Kind::HoldStdout => "leaves a child holding stdout".into(),
            Kind::Missing => "missing application binary".into(),
            Kind::Cancel => "cancelled by the client mid-call".into(),
            Kind::Disconnect => "client disconnects mid-call".into(),
        }
    }

    /// Whether a result (rather than a client-side end) is what the call must get.
    pub(crate) fn runs_to_an_answer(self) -> bool {
        !matches!(self, Kind::Cancel | Kind::Disconnect)
    }
}

/// Which client reaches which server, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lane {
    /// rmcp over HTTP, legacy session (2025-11-25), to the main server.
    RmcpLegacy,
    /// rmcp over HTTP, stateless 2026-07-28, to the main server.
    RmcpModern,
    /// rmcp over stdio, to a server of its own.
    RmcpStdio,
    /// The Python SDK over HTTP, legacy session, to the main server.
    PythonLegacy,
    /// The Python SDK over HTTP, 2026-07-28, to the main server.
    PythonModern,
    /// The Python SDK over stdio, to a server of its own.
    PythonStdio,
    /// rmcp over HTTP, legacy session, to the server whose application is missing.
    RmcpMissing,
    /// The Python SDK over HTTP, 2026-07-28, to the server whose application is missing.
    PythonMissing,
}

impl Lane {
    /// Every lane.
    pub const ALL: [Lane; 8] = [
        Lane::RmcpLegacy,
        Lane::RmcpModern,
        Lane::RmcpStdio,
        Lane::PythonLegacy,
        Lane::PythonModern,
        Lane::PythonStdio,
        Lane::RmcpMissing,
        Lane::PythonMissing,
    ];

    /// The lanes that carry every kind but [`Kind::Missing`].
    const WORKING: [Lane; 6] = [
        Lane::RmcpLegacy,
        Lane::RmcpModern,
        Lane::RmcpStdio,
        Lane::PythonLegacy,
        Lane::PythonModern,
        Lane::PythonStdio,
    ];

    /// A label for the report.
    pub fn label(self) -> &'static str {
        match self {
            Lane::RmcpLegacy => "rmcp, HTTP 2025-11-25 session",
            Lane::RmcpModern => "rmcp, HTTP 2026-07-28",
            Lane::RmcpStdio => "rmcp, stdio",
            Lane::PythonLegacy => "Python SDK, HTTP 2025-11-25 session",
            Lane::PythonModern => "Python SDK, HTTP 2026-07-28",
            Lane::PythonStdio => "Python SDK, stdio",
            Lane::RmcpMissing => "rmcp, HTTP session, missing application",
            Lane::PythonMissing => "Python SDK, HTTP 2026-07-28, missing application",
        }
    }

    /// Whether this lane talks to the main HTTP server (the one stopped and restarted).
    pub(crate) fn restarted(self) -> bool {
        matches!(
            self,
            Lane::RmcpLegacy | Lane::RmcpModern | Lane::PythonLegacy | Lane::PythonModern
        )
    }
}

/// One planned call.
#[derive(Debug, Clone)]
pub struct Call {
    /// Its number, unique in the run.
    pub id: usize,
    /// Its token: `<run>-<id>`, printed back by the command and written to the ledger.
    pub token: String,
    /// What it does.
    pub kind: Kind,
    /// Who sends it where.
    pub lane: Lane,
    /// The `behave` tool's arguments.
    pub arguments: Map<String, Value>,
}

/// A small deterministic generator (SplitMix64), so a run's plan is reproducible from its seed.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Kinds by weight per thousand calls; [`Kind::Flood`] is placed separately (a fixed count).
const WEIGHTS: [(Kind, u64); 10] = [
    (Kind::Echo, 838),
    (Kind::Exit, 40),
    (Kind::Hang, 6),
    // Not ABRT: Go dumps every goroutine before it dies of it, which on a loaded machine can
    // outlast the tool timeout, so its ending would depend on the load.
    (Kind::Signal("KILL"), 15),
    (Kind::Signal("TERM"), 15),
    (Kind::IgnoreTerm, 4),
    (Kind::HoldStdout, 30),
    (Kind::Missing, 30),
    (Kind::Cancel, 14),
    (Kind::Disconnect, 8),
];

/// The working lanes the restart does not reach (each has a server of its own).
const UNRESTARTED: [Lane; 2] = [Lane::RmcpStdio, Lane::PythonStdio];

/// After how many answers the main server is restarted: at even fractions of the run.
pub(crate) fn restart_points(calls: usize, restarts: usize) -> Vec<usize> {
    (1..=restarts).map(|i| calls * i / (restarts + 1)).collect()
}

/// The plan: `calls` calls, `floods` of them floods spread evenly, away from the restarts.
pub(crate) fn plan(
    run: &str,
    calls: usize,
    floods: usize,
    flood_bytes: u64,
    ledger: &Path,
    seed: u64,
) -> Vec<Call> {
    let mut rng = Rng::new(seed);
    // Every fault at least twice, spread over the run, whatever the draw gives a short run.
    let required: Vec<Kind> = WEIGHTS
        .iter()
        .map(|(kind, _)| *kind)
        .filter(|kind| *kind != Kind::Echo)
        .collect();
    let forced_count = 2 * required.len();
    let forced = |id: usize| -> Option<(Kind, usize)> {
        (0..forced_count).find_map(|j| {
            let at = (2 * j + 1) * calls / (2 * forced_count);
            (at == id && calls >= forced_count).then(|| (required[j % required.len()], j))
        })
    };
    let total: u64 = WEIGHTS.iter().map(|(_, weight)| weight).sum();
    let flood_every = calls.checked_div(floods).unwrap_or(usize::MAX).max(1);
    (0..calls)
        .map(|id| {
            // A quarter into each stretch, never halfway: the restarts come at even fractions
            // of the run, and a flood still running at a restart would end cut short by it.
            let kind = if floods > 0 && id % flood_every == flood_every / 4 {
                Kind::Flood
            } else if let Some((kind, _)) = forced(id) {
                kind
            } else {
                let mut pick = rng.below(total);
                let mut chosen = Kind::Echo;
                for (kind, weight) in WEIGHTS {
                    if pick < weight {
                        chosen = kind;
                        break;
                    }
                    pick -= weight;
                }
                chosen
            };
            // Each lane runs at its own pace, so nothing in the plan keeps a long call (a hang,
            // a flood) away from the restart: the second forced call of every fault and every
            // second flood go where the restart does not reach, so each fault ends its own way
            // at least once whenever the restart comes.
            let sheltered = || UNRESTARTED[id % UNRESTARTED.len()];
            let lane = if let (Some((_, j)), false) = (forced(id), kind == Kind::Missing) {
                if j >= required.len() {
                    sheltered()
                } else {
                    // Alternately an rmcp lane and a Python lane.
                    Lane::WORKING[(j * 7) % Lane::WORKING.len()]
                }
            } else if kind == Kind::Flood && (id / flood_every) % 2 == 1 {
                sheltered()
            } else if kind == Kind::Missing {
                if rng.below(2) == 0 {
                    Lane::RmcpMissing
                } else {
                    Lane::PythonMissing
                }
            } else {
                Lane::WORKING[rng.below(Lane::WORKING.len() as u64) as usize]
            };
            let token = format!("{run}-{id}");
            let mut arguments = json!({
                "profile": "soak",
                "token": token,
                "ledger": ledger.display().to_string(),
            });
            let extra = match kind {
                Kind::Echo => json!({"sleep": format!("{}ms", rng.below(30))}),
                Kind::Exit => json!({"exit-code": 3}),
                Kind::Hang | Kind::Cancel | Kind::Disconnect => json!({"sleep": "1h"}),
                Kind::Flood => json!({"repeat": flood_bytes}),
                Kind::Signal(signal) => json!({"signal": signal}),
                Kind::IgnoreTerm => json!({"ignore-term": true, "sleep": "1h"}),
                Kind::HoldStdout => json!({"hold-stdout": true}),
                Kind::Missing => json!({}),
            };
            if let (Value::Object(map), Value::Object(extra)) = (&mut arguments, extra) {
                map.extend(extra);
            }
            let arguments = match arguments {
                Value::Object(map) => map,
                _ => Map::new(),
            };
            Call {
                id,
                token,
                kind,
                lane,
                arguments,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::soak::SoakOptions;

    /// A flood sent near a restart point is still running when the server stops, and the
    /// smoke run has only one: it must fall a quarter of its stretch away from every restart.
    #[test]
    fn floods_fall_well_away_from_the_restart_points() {
        for options in [SoakOptions::smoke(), SoakOptions::full()] {
            let calls = plan(
                "t",
                options.calls,
                options.floods,
                1,
                Path::new("/l"),
                options.seed,
            );
            let floods: Vec<usize> = calls
                .iter()
                .filter(|call| call.kind == Kind::Flood)
                .map(|call| call.id)
                .collect();
            assert_eq!(floods.len(), options.floods);
            let margin = options.calls / options.floods.max(options.restarts + 1) / 4;
            for point in restart_points(options.calls, options.restarts) {
                for flood in &floods {
                    assert!(
                        flood.abs_diff(point) >= margin,
                        "flood {flood} is {} calls from the restart at {point} (margin {margin})",
                        flood.abs_diff(point)
                    );
                }
            }
        }
    }

    /// A restart cuts short whatever is in flight on the main server, and a lane's pace, not
    /// the plan, decides what that is: every fault, floods included, must also be planned on a
    /// lane the restart does not reach, so that it ends its own way at least once.
    #[test]
    fn every_fault_is_planned_on_a_lane_the_restart_does_not_reach() {
        for options in [SoakOptions::smoke(), SoakOptions::full()] {
            let calls = plan(
                "t",
                options.calls,
                options.floods,
                1,
                Path::new("/l"),
                options.seed,
            );
            for (kind, _) in WEIGHTS {
                assert!(
                    calls
                        .iter()
                        .any(|call| call.kind == kind && !call.lane.restarted()),
                    "no {} call on a lane the restart does not reach",
                    kind.label()
                );
            }
            assert!(
                calls
                    .iter()
                    .any(|call| call.kind == Kind::Flood && !call.lane.restarted()),
                "no flood on a lane the restart does not reach"
            );
        }
    }
}
