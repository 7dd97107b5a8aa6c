//! Logs: tracing to stderr, as text for people or JSON lines for collectors. stdout is never
//! written (over stdio it carries the protocol). Values that a client chose are passed through
//! [`label`] so they cannot put escape sequences on the operator's terminal; command output is
//! never logged.

use std::borrow::Cow;
use std::io::IsTerminal;

use clap::ValueEnum;
use tracing_subscriber::EnvFilter;

/// `--log-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// The filter when `RUST_LOG` is unset: our events at info, the SDK's only when they matter.
const DEFAULT_FILTER: &str = "info,rmcp=warn,hyper=warn";

/// Installs the global subscriber. `RUST_LOG` refines the filter.
pub(crate) fn init(format: LogFormat) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // A closed stderr (`server 2>&1 | head`, a dead log collector) must not panic the
        // server: tracing-subscriber would report the failed write with `eprintln!`.
        .log_internal_errors(false)
        .with_target(false);
    let installed = match format {
        LogFormat::Text => builder
            .with_ansi(std::io::stderr().is_terminal())
            .try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
    // Already installed (a second call in one process): keep the first.
    let _ = installed;
}

/// The most characters of a client's string that a log line or an error text shows.
pub(crate) const MAX_LABEL: usize = 200;

/// The most bytes of a client's string that an error's `data` carries back.
pub(crate) const MAX_ECHO_BYTES: usize = 1024;

/// A client's string quoted back in an error text: `"<label>"` ([`label`]), and when it was
/// cut, its length: `"aaa…" (1048576 bytes; the first 200 characters are shown)`. A hostile
/// megabyte name must not come back whole.
pub(crate) fn echo(text: &str) -> String {
    let shown = label(text);
    if text.chars().nth(MAX_LABEL).is_some() {
        format!(
            "\"{shown}\" ({} bytes; the first {MAX_LABEL} characters are shown)",
            text.len()
        )
    } else {
        format!("\"{shown}\"")
    }
}

/// At most [`MAX_ECHO_BYTES`] of a client's string, cut at a character boundary, for an
/// error's `data`; `None` when it fits whole.
pub(crate) fn echo_head(text: &str) -> Option<&str> {
    if text.len() <= MAX_ECHO_BYTES {
        return None;
    }
    let mut end = MAX_ECHO_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Some(&text[..end])
}

/// A client-chosen string made safe for a log line: control and invisible characters escaped,
/// at most [`MAX_LABEL`] characters.
pub(crate) fn label(text: &str) -> String {
    const MAX: usize = MAX_LABEL;
    let mut out = String::new();
    for (count, c) in text.chars().enumerate() {
        if count == MAX {
            out.push('…');
            break;
        }
        if crate::process::cmdline::needs_escape(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The most of a command line that an error text or a log line quotes.
pub(crate) const MAX_QUOTED_LINE: usize = 1024;

/// A command line as error texts and log lines quote it: whole up to [`MAX_QUOTED_LINE`] bytes,
/// else its head and tail (half each, cut at character boundaries) around a marker saying how
/// much was left out. A hostile 300 KB argument must not come back whole in an error or be
/// logged whole at INFO.
pub(crate) fn cap_line(line: &str) -> Cow<'_, str> {
    if line.len() <= MAX_QUOTED_LINE {
        return Cow::Borrowed(line);
    }
    let half = MAX_QUOTED_LINE / 2;
    let mut head = half;
    while !line.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = line.len() - half;
    while !line.is_char_boundary(tail) {
        tail += 1;
    }
    Cow::Owned(format!(
        "{} …[{} bytes not shown]… {}",
        &line[..head],
        tail - head,
        &line[tail..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_echo_of_a_megabyte_is_capped_and_says_how_long_it_was() {
        let huge = "x".repeat(1 << 20);
        let echoed = echo(&huge);
        assert!(echoed.len() < 300, "{}", echoed.len());
        assert!(
            echoed.ends_with("\" (1048576 bytes; the first 200 characters are shown)"),
            "{echoed}"
        );
        assert_eq!(echo("a\u{202E}b"), "\"a\\u{202e}b\"");
        assert_eq!(echo_head(&huge).map(str::len), Some(MAX_ECHO_BYTES));
        assert_eq!(echo_head("short"), None);
    }

    #[test]
    fn long_command_lines_keep_head_and_tail() {
        assert_eq!(cap_line("nats stream ls"), "nats stream ls");
        let exact = "a".repeat(MAX_QUOTED_LINE);
        assert_eq!(cap_line(&exact), exact);
        let line = format!("app run -- {}{}", "é".repeat(150_000), " END");
        let capped = cap_line(&line);
        assert!(capped.len() < MAX_QUOTED_LINE + 64, "{}", capped.len());
        assert!(capped.starts_with("app run -- é"));
        assert!(capped.ends_with("é END"));
        let (head, rest) = capped.split_once(" …[").expect("marker");
        let (count, tail) = rest.split_once(" bytes not shown]… ").expect("marker");
        let count: usize = count.parse().expect("a byte count");
        assert_eq!(head.len() + count + tail.len(), line.len());
    }

    #[test]
    fn labels_are_inert() {
        assert_eq!(label("claude-code"), "claude-code");
        assert_eq!(label("x\x1b[2Jy\n"), "x\\u{1b}[2Jy\\n");
        assert_eq!(label(&"a".repeat(300)).chars().count(), 201);
    }
}
