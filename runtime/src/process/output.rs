//! The bounded capture of a command's combined stdout and stderr (docs/runtime.md, "Results").
//!
//! A command may print without limit; the server must not. The capture keeps the first
//! [`LIMIT`] bytes and a ring of the last [`HALF`] bytes, so memory stays under 100 KiB per call
//! whatever the application prints. When everything fits it is returned verbatim; otherwise the
//! first half, a visible marker, and the last half.

use std::collections::VecDeque;

/// Output up to this many bytes is returned verbatim.
pub(crate) const LIMIT: usize = 64 * 1024;

/// Bytes kept from each end when output is longer than [`LIMIT`].
pub(crate) const HALF: usize = LIMIT / 2;

/// Placed between head and tail when output was cut.
pub(crate) const MARKER: &str = "\n...[output truncated]...\n";

/// Accumulates output with bounded memory.
#[derive(Debug, Default)]
pub(crate) struct Capture {
    /// The first bytes, up to [`LIMIT`].
    head: Vec<u8>,
    /// The last bytes, up to [`HALF`].
    tail: VecDeque<u8>,
    /// Every byte seen.
    total: u64,
}

/// What a command printed, ready for a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Output {
    /// The text (lossily decoded; invalid UTF-8 becomes U+FFFD).
    pub(crate) text: String,
    /// Whether bytes were left out.
    pub(crate) truncated: bool,
    /// How many bytes the command printed in all.
    pub(crate) total_bytes: u64,
}

impl Capture {
    /// An empty capture.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Adds bytes in arrival order.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = LIMIT - self.head.len();
        self.head.extend_from_slice(&bytes[..room.min(bytes.len())]);
        if bytes.len() >= HALF {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - HALF..]);
        } else {
            let overflow = (self.tail.len() + bytes.len()).saturating_sub(HALF);
            self.tail.drain(..overflow);
            self.tail.extend(bytes);
        }
    }

    /// The output: verbatim up to [`LIMIT`] bytes, else head + [`MARKER`] + tail. The cuts move
    /// by at most three bytes so that no UTF-8 character is split.
    pub(crate) fn finish(&self) -> Output {
        if self.total <= LIMIT as u64 {
            return Output {
                text: String::from_utf8_lossy(&self.head).into_owned(),
                truncated: false,
                total_bytes: self.total,
            };
        }
        let mut cut = HALF;
        while cut > HALF - 3 && is_continuation(self.head[cut]) {
            cut -= 1;
        }
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let skip = tail
            .iter()
            .take(3)
            .take_while(|byte| is_continuation(**byte))
            .count();
        let mut text = String::from_utf8_lossy(&self.head[..cut]).into_owned();
        text.push_str(MARKER);
        text.push_str(&String::from_utf8_lossy(&tail[skip..]));
        Output {
            text,
            truncated: true,
            total_bytes: self.total,
        }
    }
}

/// A UTF-8 continuation byte (`10xxxxxx`): never the start of a character.
fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(chunks: &[&[u8]]) -> Output {
        let mut capture = Capture::new();
        for chunk in chunks {
            capture.push(chunk);
        }
        capture.finish()
    }

    #[test]
    fn verbatim_up_to_and_at_the_limit() {
        let out = capture(&[b"pong\n"]);
        assert_eq!(out.text, "pong\n");
        assert!(!out.truncated);
        let exact = vec![b'x'; LIMIT];
        let out = capture(&[&exact]);
        assert_eq!(out.text.len(), LIMIT);
        assert!(!out.truncated);
    }

    #[test]
    fn a_flood_keeps_head_marker_and_tail() {
        let flood = vec![b'a'; 200_000];
        let out = capture(&[&flood]);
        assert!(out.truncated);
        assert_eq!(out.text.len(), LIMIT + MARKER.len());
        assert!(out.text.starts_with(&"a".repeat(HALF)));
        assert_eq!(out.total_bytes, 200_000);
    }

    #[test]
    fn the_tail_survives_many_small_ring_wrapping_writes() {
        let mut capture = Capture::new();
        for i in 0..100_000u32 {
            capture.push(format!("{:05}\n", i % 100_000).as_bytes());
        }
        let out = capture.finish();
        assert!(out.truncated);
        assert!(
            out.text.ends_with("99998\n99999\n"),
            "{}",
            &out.text[out.text.len() - 20..]
        );
        assert!(out.text.starts_with("00000\n00001\n"));
        let tail = out.text.split(MARKER).nth(1).expect("marker");
        assert_eq!(tail.len(), HALF);
    }

    #[test]
    fn cuts_do_not_split_characters() {
        // 3-byte characters: HALF is not a multiple of 3, so a naive cut would split one.
        let text = "€".repeat(40_000);
        let out = capture(&[text.as_bytes()]);
        assert!(out.truncated);
        assert!(!out.text.contains('\u{FFFD}'), "a character was split");
        let (head, tail) = out.text.split_once(MARKER).expect("marker");
        assert!(head.len() <= HALF && head.len() > HALF - 3);
        assert!(tail.len() <= HALF && tail.len() > HALF - 3);
    }
}
