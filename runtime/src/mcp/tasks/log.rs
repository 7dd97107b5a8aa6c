//! A running command's output as `notifications/message` (level `info`, `logger` the tool,
//! `data` one line), for a client that asked for logs: a legacy session after
//! `logging/setLevel` at `info` or below, a 2026-07-28 request whose
//! `_meta["io.modelcontextprotocol/logLevel"]` is `info` or below. The lines are collected by
//! the command's [`Live`] view and sent, like progress, by the request's own handler while it
//! waits (`tasks::wait`), in order and all before the result; a call that becomes a task sends
//! no more (docs/runtime.md, "Log notifications").
//!
//! Limits (`crate::process::lines`): a line is cut to `LINE` bytes; a call sends at most
//! `MAX_LINES` lines, and at most `PENDING` wait while the client is slower than the command; the lines beyond are
//! counted, and one last notice (level `warning`) says how many were not sent.

#![expect(
    deprecated,
    reason = "logging is deprecated (SEP-2577) but clients of both eras still ask for it"
)]

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::RoleServer;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{Peer, RequestContext};
use serde_json::Value;

use crate::mcp::confirm;
use crate::process::lines::{MAX_LINES, PENDING};
use crate::process::live::Live;

/// The level a legacy session set with `logging/setLevel` (`None`: it did not ask for logs).
/// One per session: the HTTP service makes a handler per session, stdio has one.
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionLevel(Arc<Mutex<Option<LoggingLevel>>>);

impl SessionLevel {
    /// Records the session's level.
    pub(crate) fn set(&self, level: LoggingLevel) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(level);
    }

    /// Whether this request asked for `info` messages: by its `_meta` log level in the
    /// 2026-07-28 era (nothing else counts), by the session's level in a legacy one.
    pub(crate) fn wants_info(&self, context: &RequestContext<RoleServer>) -> bool {
        let level = if confirm::is_modern(context) {
            context.meta.log_level()
        } else {
            *self.0.lock().unwrap_or_else(PoisonError::into_inner)
        };
        level.is_some_and(|level| rank(level) <= rank(LoggingLevel::Info))
    }
}

/// A level's severity, `debug` lowest (RFC 5424 order, as MCP defines it).
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// Sends one call's lines on its request.
pub(crate) struct Log {
    peer: Peer<RoleServer>,
    tool: &'static str,
}

impl Log {
    /// For a call whose [`Live`] collects lines, else `None`.
    pub(crate) fn of(
        context: &RequestContext<RoleServer>,
        tool: &'static str,
        live: &Live,
    ) -> Option<Self> {
        live.collects_lines().then(|| Self {
            peer: context.peer.clone(),
            tool,
        })
    }

    /// Sends the lines waiting, in order.
    pub(crate) async fn send_ready(&self, live: &Live) {
        for line in live.take_lines() {
            self.send(LoggingLevel::Info, line).await;
        }
    }

    /// The command ended: sends the rest, then the notice of the lines not sent, if any.
    pub(crate) async fn finish(&self, live: &Live) {
        live.finish_lines();
        self.send_ready(live).await;
        let not_sent = live.lines_not_sent();
        if not_sent > 0 {
            let notice = format!(
                "{not_sent} more output line{} not sent: a call sends at most {MAX_LINES} lines \
                 as log notifications, at most {PENDING} waiting at once; the result holds the \
                 output",
                if not_sent == 1 { " was" } else { "s were" }
            );
            self.send(LoggingLevel::Warning, notice).await;
        }
    }

    /// The call becomes a task: sends what waits, and no more after it.
    pub(crate) async fn hand_over(&self, live: &Live) {
        self.send_ready(live).await;
        live.close_lines();
    }

    async fn send(&self, level: LoggingLevel, line: String) {
        let param =
            LoggingMessageNotificationParam::new(level, Value::String(line)).with_logger(self.tool);
        if let Err(error) = self.peer.notify_logging_message(param).await {
            tracing::debug!("log notification not sent: {error}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::lines::{LINE, Lines};

    #[test]
    fn lines_are_split_across_chunks_in_order_and_blank_ones_skipped() {
        let mut lines = Lines::default();
        assert!(!lines.feed(b"first pa"));
        assert!(lines.feed(b"rt\r\n\n   \nsecond\nthi"));
        assert_eq!(lines.take(), ["first part", "second"]);
        lines.finish();
        assert_eq!(lines.take(), ["thi"]);
        assert_eq!(lines.not_sent(), 0);
    }

    #[test]
    fn a_long_line_is_cut_to_the_line_limit_on_a_character_boundary() {
        let mut lines = Lines::default();
        let long = "é".repeat(LINE);
        lines.feed(format!("{long}\n").as_bytes());
        let sent = lines.take();
        assert_eq!(sent.len(), 1);
        assert!(sent[0].len() <= LINE + '…'.len_utf8(), "{}", sent[0].len());
        assert!(sent[0].ends_with('…') && !sent[0].contains('\u{FFFD}'));
    }

    #[test]
    fn a_call_queues_at_most_the_line_limit_and_counts_the_rest() {
        let mut lines = Lines::default();
        let mut sent = 0;
        for index in 0..MAX_LINES + 40 {
            lines.feed(format!("line {index}\n").as_bytes());
            sent += lines.take().len();
        }
        assert_eq!(sent, MAX_LINES);
        assert_eq!(lines.not_sent(), 40);
    }

    #[test]
    fn lines_beyond_the_pending_bound_are_counted_while_the_client_is_slow() {
        let mut lines = Lines::default();
        for index in 0..PENDING + 5 {
            lines.feed(format!("line {index}\n").as_bytes());
        }
        let pending = lines.take();
        assert_eq!(pending.len(), PENDING);
        assert_eq!(pending[0], "line 0");
        assert_eq!(lines.not_sent(), 5);
    }

    #[test]
    fn a_closed_collector_takes_no_more_lines() {
        let mut lines = Lines::default();
        lines.feed(b"before\nhalf");
        lines.close();
        assert!(!lines.feed(b"after\n"));
        lines.finish();
        assert!(lines.take().is_empty());
        assert_eq!(lines.not_sent(), 0);
    }

    #[test]
    fn info_messages_go_to_levels_info_and_below() {
        assert!(rank(LoggingLevel::Debug) <= rank(LoggingLevel::Info));
        assert!(rank(LoggingLevel::Warning) > rank(LoggingLevel::Info));
        assert!(rank(LoggingLevel::Emergency) > rank(LoggingLevel::Alert));
    }
}
