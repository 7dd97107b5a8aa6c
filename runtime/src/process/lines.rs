//! A running command's output as lines, for log notifications ([`Lines`]): each line cut to
//! [`LINE`] bytes, at most [`MAX_LINES`] lines per call and [`PENDING`] waiting to be sent, the
//! rest counted (docs/runtime.md, "Log notifications").

use std::collections::VecDeque;

/// The longest line sent, in bytes; longer lines are cut (with `…`).
pub(crate) const LINE: usize = 512;

/// The most lines one call sends.
pub(crate) const MAX_LINES: usize = 256;

/// The most lines waiting to be sent.
pub(crate) const PENDING: usize = 128;

/// Bytes kept of the line being written: enough to cut it at [`LINE`] on a character boundary.
const KEEP: usize = LINE + 4;

/// The lines of one command's output, waiting to be sent.
#[derive(Debug, Default)]
pub(crate) struct Lines {
    /// The line being written (its first [`KEEP`] bytes).
    partial: Vec<u8>,
    /// Complete lines not sent yet, in order.
    pending: VecDeque<String>,
    /// Lines queued so far (sent or pending).
    queued: usize,
    /// Lines not sent because of a limit.
    not_sent: u64,
    /// No more lines: the call became a task.
    closed: bool,
}

impl Lines {
    /// Adds output bytes; whether a line became ready.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> bool {
        if self.closed {
            return false;
        }
        let mut ready = false;
        for chunk in bytes.split_inclusive(|byte| *byte == b'\n') {
            let (body, ends) = match chunk.split_last() {
                Some((b'\n', body)) => (body, true),
                _ => (chunk, false),
            };
            let room = KEEP.saturating_sub(self.partial.len());
            self.partial
                .extend_from_slice(&body[..body.len().min(room)]);
            if ends {
                ready |= self.end_line();
            }
        }
        ready
    }

    /// The line being written is complete: queue it, or count it when a limit is reached.
    /// Blank lines are skipped.
    fn end_line(&mut self) -> bool {
        let bytes = std::mem::take(&mut self.partial);
        let text = String::from_utf8_lossy(&bytes);
        let text = text.trim_end();
        if text.trim_start().is_empty() {
            return false;
        }
        if self.queued >= MAX_LINES || self.pending.len() >= PENDING {
            self.not_sent += 1;
            return false;
        }
        self.queued += 1;
        self.pending.push_back(cut(text, LINE));
        true
    }

    /// The command ended: its last line counts even without a newline.
    pub(crate) fn finish(&mut self) {
        if !self.closed && !self.partial.is_empty() {
            self.end_line();
        }
    }

    /// The lines waiting, in order.
    pub(crate) fn take(&mut self) -> Vec<String> {
        self.pending.drain(..).collect()
    }

    /// How many lines were not sent because of a limit.
    pub(crate) fn not_sent(&self) -> u64 {
        self.not_sent
    }

    /// No more lines (the call became a task).
    pub(crate) fn close(&mut self) {
        self.closed = true;
        self.partial = Vec::new();
        self.pending.clear();
    }
}

/// `text` cut to at most `max` bytes at a character boundary, with `…` when cut.
pub(crate) fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}
