//! What a running command has printed so far, readable while it runs: the source of progress
//! messages (its latest line), of log notifications (its lines, `log.rs`) and of a task's output
//! in `tasks/get` (docs/runtime.md, "Tasks").
//!
//! The command's result keeps its own bounded capture (`output.rs`); this is a second, smaller
//! view of the same bytes: the last [`TAIL`] bytes and a count, so a task that is polled costs
//! at most that much memory whatever the command prints.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use tokio::sync::Notify;

use super::lines::{Lines, cut};

/// Bytes of the latest output kept for `tasks/get`.
pub(crate) const TAIL: usize = 16 * 1024;

/// The longest progress message (the latest line), in bytes; longer lines are cut.
const LINE: usize = 200;

/// The output of one running command so far.
#[derive(Debug, Default)]
pub(crate) struct Live {
    inner: Mutex<Inner>,
    /// Woken when a line is ready to be sent as a log notification.
    line_ready: Notify,
}

#[derive(Debug, Default)]
struct Inner {
    /// The last bytes, up to [`TAIL`].
    tail: VecDeque<u8>,
    /// Every byte seen.
    total: u64,
    /// The lines for log notifications, when the client asked for them (`log.rs`).
    lines: Option<Lines>,
}

/// A copy of [`Live`] at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Snapshot {
    /// The last bytes printed (at most [`TAIL`]), lossily decoded.
    pub(crate) text: String,
    /// Whether earlier bytes are not shown.
    pub(crate) truncated: bool,
    /// How many bytes the command printed so far.
    pub(crate) total_bytes: u64,
}

impl Live {
    /// A view that also collects the output's lines for log notifications.
    pub(crate) fn with_lines() -> Self {
        let live = Self::default();
        live.lock().lines = Some(Lines::default());
        live
    }

    /// Adds bytes in arrival order.
    pub(crate) fn push(&self, bytes: &[u8]) {
        let mut inner = self.lock();
        inner.total += bytes.len() as u64;
        let keep = &bytes[bytes.len().saturating_sub(TAIL)..];
        let overflow = (inner.tail.len() + keep.len()).saturating_sub(TAIL);
        inner.tail.drain(..overflow);
        inner.tail.extend(keep);
        let ready = inner.lines.as_mut().is_some_and(|lines| lines.feed(bytes));
        drop(inner);
        if ready {
            self.line_ready.notify_one();
        }
    }

    /// Whether this view collects lines for log notifications.
    pub(crate) fn collects_lines(&self) -> bool {
        self.lock().lines.is_some()
    }

    /// Resolves when a line is ready (at once when one became ready since the last wait).
    pub(crate) async fn line_ready(&self) {
        self.line_ready.notified().await;
    }

    /// The lines ready to be sent, in order.
    pub(crate) fn take_lines(&self) -> Vec<String> {
        self.lock()
            .lines
            .as_mut()
            .map(Lines::take)
            .unwrap_or_default()
    }

    /// The command ended: its unterminated last line is ready too.
    pub(crate) fn finish_lines(&self) {
        if let Some(lines) = self.lock().lines.as_mut() {
            lines.finish();
        }
    }

    /// How many lines a limit kept from being sent.
    pub(crate) fn lines_not_sent(&self) -> u64 {
        self.lock().lines.as_ref().map_or(0, Lines::not_sent)
    }

    /// Collects no more lines (the call became a task).
    pub(crate) fn close_lines(&self) {
        if let Some(lines) = self.lock().lines.as_mut() {
            lines.close();
        }
    }

    /// The output so far (its last [`TAIL`] bytes).
    pub(crate) fn snapshot(&self) -> Snapshot {
        let inner = self.lock();
        let bytes: Vec<u8> = inner.tail.iter().copied().collect();
        // A cut through a character shows as one U+FFFD at the start: skip its remains.
        let skip = if inner.total > bytes.len() as u64 {
            bytes
                .iter()
                .take(3)
                .take_while(|b| **b & 0xC0 == 0x80)
                .count()
        } else {
            0
        };
        Snapshot {
            text: String::from_utf8_lossy(&bytes[skip..]).into_owned(),
            truncated: inner.total > bytes.len() as u64,
            total_bytes: inner.total,
        }
    }

    /// The last non-empty line printed so far (a line still being written counts), trimmed and
    /// cut to about 200 bytes; `None` before the command printed anything but blanks.
    pub(crate) fn latest_line(&self) -> Option<String> {
        let inner = self.lock();
        let (front, back) = inner.tail.as_slices();
        let mut bytes = Vec::with_capacity(LINE * 4);
        // Walk back from the end: skip trailing blanks, then take up to the previous newline.
        let mut iter = front
            .iter()
            .chain(back)
            .rev()
            .skip_while(|b| b.is_ascii_whitespace());
        for &byte in iter.by_ref() {
            if byte == b'\n' {
                break;
            }
            bytes.push(byte);
            if bytes.len() >= LINE * 4 {
                break;
            }
        }
        drop(inner);
        if bytes.is_empty() {
            return None;
        }
        bytes.reverse();
        let line = String::from_utf8_lossy(&bytes);
        let line = line.trim();
        Some(cut(line, LINE))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_line_is_the_last_non_empty_one() {
        let live = Live::default();
        assert_eq!(live.latest_line(), None);
        live.push(b"first\nsecond\n\n  \n");
        assert_eq!(live.latest_line().as_deref(), Some("second"));
        live.push(b"thi");
        live.push(b"rd, still being written");
        assert_eq!(
            live.latest_line().as_deref(),
            Some("third, still being written")
        );
    }

    #[test]
    fn a_long_line_is_cut_at_a_character_boundary() {
        let live = Live::default();
        live.push("é".repeat(500).as_bytes());
        let line = live.latest_line().expect("a line");
        assert!(line.len() <= LINE + '…'.len_utf8(), "{}", line.len());
        assert!(line.ends_with('…'));
        assert!(!line.contains('\u{FFFD}'));
    }

    #[test]
    fn the_snapshot_keeps_only_the_tail_and_counts_everything() {
        let live = Live::default();
        for _ in 0..100 {
            live.push(&[b'x'; 1000]);
        }
        live.push(b"end\n");
        let snapshot = live.snapshot();
        assert_eq!(snapshot.total_bytes, 100_004);
        assert!(snapshot.truncated);
        assert_eq!(snapshot.text.len(), TAIL);
        assert!(snapshot.text.ends_with("xend\n"));
        let short = Live::default();
        short.push(b"ok\n");
        assert_eq!(
            short.snapshot(),
            Snapshot {
                text: "ok\n".into(),
                truncated: false,
                total_bytes: 3
            }
        );
    }
}
