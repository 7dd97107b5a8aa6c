//! Logs: tracing to stderr, as text for people or JSON lines for collectors. stdout is never
//! written (over stdio it carries the protocol). Values that a client chose are passed through
//! [`label`] so they cannot put escape sequences on the operator's terminal; command output is
//! never logged.

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

/// A client-chosen string made safe for a log line: control and invisible characters escaped,
/// at most 200 characters.
pub(crate) fn label(text: &str) -> String {
    const MAX: usize = 200;
    let mut out = String::new();
    for (count, c) in text.chars().enumerate() {
        if count == MAX {
            out.push('…');
            break;
        }
        if crate::cmdline::needs_escape(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_inert() {
        assert_eq!(label("claude-code"), "claude-code");
        assert_eq!(label("x\x1b[2Jy\n"), "x\\u{1b}[2Jy\\n");
        assert_eq!(label(&"a".repeat(300)).chars().count(), 201);
    }
}
