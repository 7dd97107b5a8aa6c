//! Whether a call ended right: its answer against what that call must produce, and the ledger
//! of commands that actually started.

use serde_json::Value;

use super::plan::{Call, Kind};

/// How a call ended, as its client saw it.
#[derive(Debug, Clone)]
pub enum Ending {
    /// A `tools/call` result.
    Result {
        /// `isError`.
        is_error: bool,
        /// The text blocks, joined.
        text: String,
        /// `structuredContent`.
        structured: Option<Value>,
    },
    /// The request failed below MCP (connection refused or reset, session gone).
    Transport(String),
    /// The client got no answer within the give-up bound ([`super::SoakOptions::give_up`]).
    NoAnswer,
    /// The client cancelled it, as planned.
    Cancelled,
    /// The client disconnected mid-call, as planned.
    Disconnected,
}

/// A call's answer with its times (Unix seconds) and the time its connection was made.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The call's id.
    pub id: usize,
    /// When the client sent it.
    pub start: f64,
    /// When the client had its ending.
    pub end: f64,
    /// When the connection it used was established (for a stale session after a restart).
    pub connected: f64,
    /// How it ended.
    pub ending: Ending,
}

/// When the main server was stopped (SIGTERM) and when its successor was ready.
#[derive(Debug, Clone, Copy)]
pub struct Restart {
    /// SIGTERM sent.
    pub stopped: f64,
    /// The new process accepted connections.
    pub ready: f64,
}

/// Why a call's ending is right.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verdict {
    /// The result the call's kind must produce.
    Expected,
    /// "the server is busy": no slot within the tool timeout (concurrency above the limit).
    Busy,
    /// Cancelled by the server's shutdown, which overlapped the call.
    ShutDown,
    /// A transport error on a connection that a restart broke.
    RestartBroke,
    /// No answer before the client gave up, on a connection that a restart broke.
    RestartSilenced,
    /// A flood that outlasted the tool timeout on a loaded machine: killed, with its token and
    /// the truncated output so far.
    FloodTimedOut,
}

impl Verdict {
    /// For the report.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Expected => "the expected result",
            Verdict::Busy => "\"server is busy\" (no free slot within the timeout)",
            Verdict::ShutDown => "cancelled by the server's SIGTERM",
            Verdict::RestartBroke => "transport error, connection broken by a restart",
            Verdict::RestartSilenced => {
                "no answer before the client gave up, connection broken by a restart"
            }
            Verdict::FloodTimedOut => "the flood outlasted the tool timeout: killed, output cut",
        }
    }

    /// Whether the command may have started (so the ledger holds its token at most once) or
    /// must have (exactly once) or must not have.
    fn runs(self, kind: Kind) -> Runs {
        match self {
            Verdict::Busy => Runs::Never,
            Verdict::ShutDown | Verdict::RestartBroke | Verdict::RestartSilenced => {
                Runs::AtMostOnce
            }
            Verdict::FloodTimedOut => Runs::Once,
            Verdict::Expected => match kind {
                Kind::Missing => Runs::Never,
                Kind::Cancel | Kind::Disconnect => Runs::AtMostOnce,
                _ => Runs::Once,
            },
        }
    }
}

enum Runs {
    Never,
    Once,
    AtMostOnce,
}

/// Judges one call: its verdict, or what is wrong.
pub(crate) fn judge(
    call: &Call,
    answer: &Answer,
    restarts: &[Restart],
    ledger_count: usize,
    run: &str,
) -> Result<Verdict, String> {
    let verdict = verdict(call, answer, restarts, run)?;
    let ok = match verdict.runs(call.kind) {
        Runs::Never => ledger_count == 0,
        Runs::Once => ledger_count == 1,
        Runs::AtMostOnce => ledger_count <= 1,
    };
    if !ok {
        return Err(format!(
            "{verdict:?}, but the command started {ledger_count} time(s)"
        ));
    }
    Ok(verdict)
}

fn verdict(
    call: &Call,
    answer: &Answer,
    restarts: &[Restart],
    run: &str,
) -> Result<Verdict, String> {
    let overlapping = |from: f64| {
        call.lane.restarted()
            && restarts
                .iter()
                .any(|restart| restart.stopped >= from - 0.05 && restart.stopped <= answer.end)
    };
    let (is_error, text, structured) = match &answer.ending {
        Ending::Transport(_) if overlapping(answer.connected) => return Ok(Verdict::RestartBroke),
        Ending::Transport(error) => return Err(format!("transport error: {error}")),
        Ending::NoAnswer if overlapping(answer.connected) => return Ok(Verdict::RestartSilenced),
        Ending::NoAnswer => return Err("no answer before the client gave up".into()),
        Ending::Cancelled if call.kind == Kind::Cancel => return Ok(Verdict::Expected),
        Ending::Disconnected if call.kind == Kind::Disconnect => return Ok(Verdict::Expected),
        Ending::Cancelled | Ending::Disconnected => {
            return Err(format!("{:?} for a {:?} call", answer.ending, call.kind));
        }
        Ending::Result {
            is_error,
            text,
            structured,
        } => (*is_error, text.as_str(), structured.as_ref()),
    };
    // No other call's token anywhere in what this call got back.
    let mark = format!("{run}-");
    for (at, _) in text.match_indices(&mark) {
        let digits: String = text[at + mark.len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if digits != call.id.to_string() {
            return Err(format!(
                "the answer carries another call's token {mark}{digits}"
            ));
        }
    }
    if is_error && text.starts_with("the server is busy: all ") {
        return Ok(Verdict::Busy);
    }
    if is_error
        && (text.contains("because the server is shutting down")
            || text.starts_with("cancelled: the server is shutting down"))
    {
        return if overlapping(answer.start) {
            Ok(Verdict::ShutDown)
        } else {
            Err(format!("shut down outside a restart: {text}"))
        };
    }
    if !call.kind.runs_to_an_answer() {
        return Err(format!(
            "a result for a {:?} call: {}",
            call.kind,
            short(text)
        ));
    }
    let has_token = text.contains(&format!("{}\"", call.token))
        || text.contains(&format!("--token={}", call.token));
    if !has_token {
        return Err(format!("the answer lacks its token: {}", short(text)));
    }
    let field = |name: &str| structured.and_then(|value| value.get(name));
    let exit_code = field("exit_code").and_then(Value::as_i64);
    let output = field("output").and_then(Value::as_str).unwrap_or_default();
    let truncated = field("truncated").and_then(Value::as_bool);
    let signal = field("signal").and_then(Value::as_str);
    let printed_token = output
        .lines()
        .next()
        .and_then(|line| serde_json::from_str::<Value>(line).ok())
        .and_then(|doc| doc["flags"]["token"].as_str().map(str::to_string));
    let echoed = printed_token.as_deref() == Some(call.token.as_str());
    if call.kind == Kind::Flood
        && is_error
        && text.contains("timed out after")
        && text.contains("Output before it was stopped (truncated):")
        && text.contains(&format!("\"token\":\"{}\"", call.token))
    {
        return Ok(Verdict::FloodTimedOut);
    }
    let right = match call.kind {
        Kind::Echo | Kind::HoldStdout => {
            !is_error
                && echoed
                && exit_code == Some(0)
                && truncated == Some(false)
                && signal.is_none()
        }
        Kind::Exit => echoed && exit_code == Some(3) && signal.is_none(),
        Kind::Flood => {
            !is_error
                && echoed
                && exit_code == Some(0)
                && truncated == Some(true)
                && output.contains("...[output truncated]...")
                && output.ends_with("xxxx")
        }
        Kind::Signal(name) => {
            echoed && exit_code == Some(-1) && signal == Some(&format!("SIG{name}"))
        }
        Kind::Hang | Kind::IgnoreTerm => {
            is_error && text.contains("timed out after") && text.contains("were killed")
        }
        Kind::Missing => {
            is_error
                && text.contains("cannot start")
                && text.contains("the application was not found; check --application-path")
        }
        Kind::Cancel | Kind::Disconnect => false,
    };
    if right {
        Ok(Verdict::Expected)
    } else {
        Err(format!(
            "a wrong result for {}: {}",
            call.kind.label(),
            short(text)
        ))
    }
}

fn short(text: &str) -> String {
    let mut shown: String = text.chars().take(400).collect();
    if shown.len() < text.len() {
        shown.push_str("...");
    }
    shown
}
