//! `base64_encode`: the standard base64 (RFC 4648, with padding) of a text or of a file's bytes.
//! Files follow the confinement of `read_file`; both kinds of input are capped at `max_bytes`,
//! 1 MiB by default.

use std::io::Read;
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

use super::error::ToolError;
use super::files::{self, Roots};
use crate::process::cmdline::{go_quote, quote};
use crate::spec::app::FileAccess;

/// Bytes encoded at most when `max_bytes` is not set.
pub(crate) const DEFAULT_MAX_BYTES: u64 = 1024 * 1024;

/// The arguments as the client sends them: exactly one of `text` and `path` ([`Args::input`]
/// checks).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    /// Text to encode (its UTF-8 bytes).
    pub(crate) text: Option<String>,
    /// A file whose bytes to encode.
    pub(crate) path: Option<String>,
}

/// What to encode, once the arguments are checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Input {
    /// A text (its UTF-8 bytes).
    Text(String),
    /// A file below the roots.
    Path(String),
}

impl Args {
    /// The one input the arguments name; `Err` names the property and why.
    pub(crate) fn input(self) -> Result<Input, (&'static str, &'static str)> {
        match (self.text, self.path) {
            (Some(_), Some(_)) => Err(("path", "give either \"text\" or \"path\", not both")),
            (None, None) => Err(("text", "give \"text\" or \"path\"")),
            (Some(text), None) => Ok(Input::Text(text)),
            (None, Some(path)) => Ok(Input::Path(path)),
        }
    }
}

/// The result.
#[derive(Debug, Serialize)]
struct Answer<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<&'a str>,
    bytes: u64,
    base64: String,
}

/// `base64_encode <path>` or `base64_encode text (<n> bytes)`.
pub(crate) fn trace(input: &Input) -> String {
    match input {
        Input::Path(path) => format!("base64_encode {}", quote(path)),
        Input::Text(text) => format!("base64_encode text ({} bytes)", text.len()),
    }
}

/// Encodes; the error is the client's text.
pub(crate) fn run(input: &Input, access: &FileAccess, cwd: &Path) -> Result<String, ToolError> {
    let max = access.max_bytes.unwrap_or(DEFAULT_MAX_BYTES);
    let (path, bytes) = match input {
        Input::Text(text) => {
            if text.len() as u64 > max {
                return Err(ToolError::TextTooLarge {
                    size: text.len(),
                    max,
                });
            }
            (None, text.as_bytes().to_vec())
        }
        Input::Path(path) => {
            let shown = go_quote(path);
            let roots = Roots::resolve(access, cwd);
            let opened = files::open(path, &roots, cwd)?;
            let size = opened.metadata.len();
            if size > max {
                return Err(ToolError::TooLargeToEncode { shown, size, max });
            }
            let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
            // One byte more than allowed shows a file that grew since it was measured.
            opened
                .file
                .take(max + 1)
                .read_to_end(&mut bytes)
                .map_err(|source| ToolError::Read {
                    shown: shown.clone(),
                    source,
                })?;
            if bytes.len() as u64 > max {
                return Err(ToolError::Grew { shown, max });
            }
            (Some(path.as_str()), bytes)
        }
    };
    let answer = Answer {
        path,
        bytes: bytes.len() as u64,
        base64: STANDARD.encode(&bytes),
    };
    Ok(serde_json::to_string(&answer)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("b.bin"), [0u8, 1, 2, 255]).expect("write");
        let access = FileAccess {
            roots: &[],
            max_bytes: Some(4),
        };
        let encode = |text: Option<&str>, path: Option<&str>| {
            let args = Args {
                text: text.map(str::to_string),
                path: path.map(str::to_string),
            };
            let input = args.input().map_err(|(_, why)| why.to_string())?;
            run(&input, &access, dir.path()).map_err(|error| error.to_string())
        };
        assert_eq!(
            encode(Some("hi"), None).as_deref(),
            Ok(r#"{"bytes":2,"base64":"aGk="}"#)
        );
        assert_eq!(
            encode(None, Some("b.bin")).as_deref(),
            Ok(r#"{"path":"b.bin","bytes":4,"base64":"AAEC/w=="}"#)
        );
        assert!(encode(Some("hello"), None).is_err_and(|e| e.contains("at most 4 bytes")));
        assert!(encode(None, None).is_err());
        assert!(encode(Some("a"), Some("b.bin")).is_err());
        assert!(encode(None, Some("../x")).is_err_and(|e| e.contains("outside")));
    }
}
