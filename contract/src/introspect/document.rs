//! Finding the document in what an application printed (or a file holds) and parsing it into
//! the lenient [`crate::model`] types: the one parser fiskgen and generated servers share.
//!
//! Parsing tolerates what real applications print around the document (natscli can print a
//! notice before it) and also reads pretty-printed saved documents. A document is accepted only
//! when it looks like a fisk model and every command carries the `restricted_schema` that fisk
//! v0.9.0 and newer precompute.

use std::fs;
use std::path::Path;

use serde_json::Value;

use super::error::{IntrospectError, Origin};
use crate::{canonical, model};

/// The longest quoted line, in characters.
const QUOTED_LINE_CHARS: usize = 300;

/// A parsed introspection document: the raw JSON (kept whole, so saving loses nothing) and the
/// typed model.
#[derive(Debug, Clone)]
pub struct Introspection {
    /// The document exactly as parsed (key order kept); save it with [`to_pretty_json`].
    pub document: Value,
    /// SHA-256 (hex) of the exact bytes the application printed, when it was run (`None` for a
    /// saved file): what a server compares first, before parsing anything.
    pub output_digest: Option<String>,
    /// The typed view of the same document.
    pub model: model::Application,
    /// Where the document came from.
    pub origin: Origin,
}

/// A line safe to show on a terminal: control characters escaped, length capped.
pub(super) fn sanitize_line(line: &str) -> String {
    let mut clean = String::new();
    for (index, character) in line.trim_end().chars().enumerate() {
        if index == QUOTED_LINE_CHARS {
            clean.push('…');
            break;
        }
        if character.is_control() && character != '\t' {
            clean.extend(character.escape_default());
        } else {
            clean.push(character);
        }
    }
    clean
}

/// Read a saved document (`--model FILE`).
pub fn read(path: &Path) -> Result<Introspection, IntrospectError> {
    let bytes = fs::read(path).map_err(|error| IntrospectError::ReadModel {
        path: path.to_path_buf(),
        error,
    })?;
    parse(&bytes, Origin::File(path.to_path_buf()))
}

/// Parse the bytes an app printed / a file holds.
///
/// The document is the whole input when that is one JSON value (a saved, pretty-printed model
/// or fisk's single line); otherwise the last line that starts with `{` (fisk's line after
/// notices the application printed first), or everything from the first such line (a
/// pretty-printed document after notices). A UTF-8 byte order mark and surrounding white space
/// are ignored. Syntax errors report the line and column within `bytes`.
///
/// The document must be a JSON object with a non-empty string `name` and, when present, arrays
/// `commands`, `flags` and `args`; every command, hidden or not, must carry a
/// `restricted_schema` object (fisk v0.9.0 and newer).
pub fn parse(bytes: &[u8], origin: Origin) -> Result<Introspection, IntrospectError> {
    let document = match locate_document(bytes) {
        Ok(document) => document,
        Err(NotFound::Nothing(reason)) => return Err(IntrospectError::NotFisk { origin, reason }),
        Err(NotFound::Syntax {
            line,
            column,
            message,
        }) => {
            return Err(IntrospectError::Malformed {
                origin,
                line,
                column,
                message,
            });
        }
    };
    if let Err(reason) = check_shape(&document) {
        return Err(IntrospectError::NotFisk { origin, reason });
    }
    let model: model::Application = match serde_path_to_error::deserialize(&document) {
        Ok(model) => model,
        Err(error) => {
            let location = describe_location(&document, error.path());
            let message = error.into_inner().to_string();
            return Err(IntrospectError::Invalid {
                origin,
                location,
                message,
            });
        }
    };
    if let Some(command) = first_without_schema(&model.commands, &mut Vec::new()) {
        let app = match &model.version {
            Some(version) => format!("\"{}\" (version {version})", model.name),
            None => format!("\"{}\"", model.name),
        };
        return Err(IntrospectError::TooOld {
            origin,
            command,
            app,
        });
    }
    let output_digest = match origin {
        Origin::App(_) => Some(canonical::digest(bytes)),
        Origin::File(_) => None,
    };
    Ok(Introspection {
        document,
        output_digest,
        model,
        origin,
    })
}

/// Why no document was found.
enum NotFound {
    /// There is no JSON object at all; the reason says what there is instead.
    Nothing(String),
    /// The most plausible document is not valid JSON.
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
}

/// Finds the JSON document in what an application printed or a file holds (see [`parse`]).
fn locate_document(bytes: &[u8]) -> Result<Value, NotFound> {
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if body.trim_ascii().is_empty() {
        return Err(NotFound::Nothing("it is empty".into()));
    }
    let whole = match serde_json::from_slice(body) {
        Ok(value) => return Ok(value),
        Err(error) => error,
    };
    let lines = line_starts(body);
    let is_object_line =
        |&(_, start): &(usize, usize)| body[start..].trim_ascii_start().starts_with(b"{");
    let (Some(first), Some(last)) = (
        lines.iter().copied().find(is_object_line),
        lines.iter().copied().rfind(is_object_line),
    ) else {
        let first_line = body
            .trim_ascii()
            .split(|&byte| byte == b'\n')
            .next()
            .unwrap_or_default();
        return Err(NotFound::Nothing(format!(
            "it holds no JSON object (it starts with \"{}\")",
            sanitize_line(&String::from_utf8_lossy(first_line))
        )));
    };
    let last_line = line_at(body, last.1);
    let last_attempt = serde_json::from_slice(last_line);
    if let Ok(value) = last_attempt {
        return Ok(value);
    }
    let rest_attempt = serde_json::from_slice(&body[first.1..]);
    if let Ok(value) = rest_attempt {
        return Ok(value);
    }
    // Report the error of the most plausible reading: the whole input when it starts with the
    // document, the last line when that ends the input (fisk's line after notices), else the
    // text from the first `{` line on (a pretty-printed document after notices).
    let last_line_ends_input = last_line.trim_ascii().len() == body[last.1..].trim_ascii().len();
    let (error, first_line) = if body.trim_ascii_start().starts_with(b"{") {
        (whole, 0)
    } else if last_line_ends_input {
        (last_attempt.err().unwrap_or(whole), last.0)
    } else {
        (rest_attempt.err().unwrap_or(whole), first.0)
    };
    Err(syntax_error(&error, first_line))
}

/// `(index, byte offset)` of every line of `body`.
fn line_starts(body: &[u8]) -> Vec<(usize, usize)> {
    let ends = body
        .iter()
        .enumerate()
        .filter(|&(_, &byte)| byte == b'\n')
        .map(|(at, _)| at + 1);
    std::iter::once(0)
        .chain(ends)
        .filter(|&start| start < body.len())
        .enumerate()
        .collect()
}

/// The line of `body` that starts at `start`, without its newline.
fn line_at(body: &[u8], start: usize) -> &[u8] {
    let rest = &body[start..];
    rest.iter()
        .position(|&byte| byte == b'\n')
        .map_or(rest, |end| &rest[..end])
}

/// A serde_json error placed in the source: `first_line` is the 0-based index of the line the
/// parsed slice started at.
fn syntax_error(error: &serde_json::Error, first_line: usize) -> NotFound {
    let message = error.to_string();
    let message = match message.rsplit_once(" at line ") {
        Some((message, _)) => message.to_string(),
        None => message,
    };
    NotFound::Syntax {
        line: first_line + error.line(),
        column: error.column(),
        message,
    }
}

/// Checks that a JSON value looks like a fisk document; the error says what does not.
fn check_shape(document: &Value) -> Result<(), String> {
    let Value::Object(object) = document else {
        return Err(format!("it is {}, not an object", json_kind(document)));
    };
    match object.get("name") {
        Some(Value::String(name)) if !name.is_empty() => {}
        Some(Value::String(_)) => return Err("its \"name\" is empty".into()),
        Some(other) => {
            return Err(format!(
                "its \"name\" is {}, not a string",
                json_kind(other)
            ));
        }
        None => return Err("it has no \"name\"".into()),
    }
    for key in ["commands", "flags", "args"] {
        match object.get(key) {
            None | Some(Value::Array(_)) => {}
            Some(other) => {
                return Err(format!(
                    "its \"{key}\" is {}, not an array",
                    json_kind(other)
                ));
            }
        }
    }
    Ok(())
}

/// A JSON value's kind, with its article, for messages.
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Renders a deserialization path with command names: `command "stream add", flags[0].short`.
fn describe_location(document: &Value, path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut node = Some(document);
    let mut command: Vec<&str> = Vec::new();
    let mut rest = String::new();
    let mut in_commands = false;
    for segment in path.iter() {
        match segment {
            Segment::Map { key } => {
                node = node.and_then(|node| node.get(key));
                in_commands = key == "commands";
                rest.push_str(&format!(".{key}"));
            }
            Segment::Seq { index } => {
                node = node.and_then(|node| node.get(index));
                let name = node
                    .and_then(|node| node.get("name"))
                    .and_then(Value::as_str);
                match name {
                    Some(name) if in_commands => {
                        command.push(name);
                        rest.clear();
                    }
                    _ => rest.push_str(&format!("[{index}]")),
                }
                in_commands = false;
            }
            Segment::Enum { variant } => rest.push_str(&format!(".{variant}")),
            Segment::Unknown => rest.push_str(".?"),
        }
    }
    let rest = rest.trim_start_matches('.');
    match (command.is_empty(), rest.is_empty()) {
        (true, true) => "the top level".into(),
        (true, false) => rest.into(),
        (false, true) => format!("command \"{}\"", command.join(" ")),
        (false, false) => format!("command \"{}\", {rest}", command.join(" ")),
    }
}

/// The space-joined path of the first command (depth first, declaration order, hidden ones
/// included) that has no `restricted_schema`.
fn first_without_schema<'a>(
    commands: &'a [model::Command],
    path: &mut Vec<&'a str>,
) -> Option<String> {
    for command in commands {
        path.push(&command.name);
        if command.restricted_schema.is_none() {
            return Some(path.join(" "));
        }
        if let Some(found) = first_without_schema(&command.commands, path) {
            return Some(found);
        }
        path.pop();
    }
    None
}

/// Stable pretty form for saving: sorted keys (bytewise, as Go sorts map keys), 2-space indent,
/// trailing newline (see [`canonical::to_pretty_json`]).
pub fn to_pretty_json(document: &Value) -> String {
    canonical::to_pretty_json(document)
}
