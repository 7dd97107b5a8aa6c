//! Argument errors in plain words: the one place their wording lives.
//!
//! A problem is described as a [`Problem`] (what was expected, what came), and
//! [`Problem::describe`] words it: `property `id`: expected an integer, got the string
//! "nope"`, `unknown property `x` (the tool takes: a, b, c)`, `property `level`: must be one
//! of "debug", "info", got "loud"`. The problems come from `arguments.rs`, which generated
//! handlers use and which builds [`Problem`]s directly, or from serde's messages ([`from_serde`],
//! for the built-ins' arguments), in the same words. `InvalidArguments::for_tool` puts the tool's name in front.

use std::fmt;

/// What is wrong with one argument (or the arguments as a whole).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Problem {
    /// A value of the wrong JSON type.
    Type {
        /// What the property takes, as a noun phrase (`an integer`).
        expected: String,
        /// What came (`the string "nope"`).
        got: String,
    },
    /// A number outside the property's range.
    Range {
        /// The phrase for the range (`an integer from 0 to 255`).
        expected: String,
        /// The value that came.
        got: String,
    },
    /// A string that is not one of the allowed values.
    NotOneOf {
        /// The allowed values.
        values: Vec<String>,
        /// The value that came.
        got: String,
    },
    /// A property the tool does not have.
    Unknown {
        /// The tool's properties.
        known: Vec<String>,
    },
    /// A required property that is absent.
    Missing,
    /// Anything else, already in words.
    Other(String),
}

impl Problem {
    /// The words for this problem of `property` (empty: the arguments as a whole).
    pub(crate) fn describe(&self, property: &str) -> String {
        let what = match self {
            Problem::Unknown { known } if known.is_empty() => {
                return format!("unknown property `{property}` (the tool takes no arguments)");
            }
            Problem::Unknown { known } => {
                return format!(
                    "unknown property `{property}` (the tool takes: {})",
                    known.join(", ")
                );
            }
            Problem::Missing => return format!("property `{property}` is required"),
            Problem::Type { expected, got } | Problem::Range { expected, got } => {
                format!("expected {expected}, got {got}")
            }
            Problem::NotOneOf { values, got } => {
                let values: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
                format!("must be one of {}, got {got:?}", values.join(", "))
            }
            Problem::Other(text) => text.clone(),
        };
        if property.is_empty() {
            what
        } else {
            format!("property `{property}`: {what}")
        }
    }
}

/// A serde error (with serde_path_to_error's path) as plain words.
pub(crate) fn from_serde(path: &str, message: &str) -> String {
    let path = if path == "." { "" } else { path };
    if let Some(field) = between(message, "missing field `", "`") {
        return Problem::Missing.describe(&join_path(path, field));
    }
    if let Some(rest) = message.strip_prefix("unknown field `")
        && let Some((field, expected)) = rest.split_once('`')
    {
        let problem = Problem::Unknown {
            known: listed(expected),
        };
        let property = if path.ends_with(field) {
            path.to_string()
        } else {
            join_path(path, field)
        };
        return problem.describe(&property);
    }
    if let Some(rest) = message.strip_prefix("unknown variant `")
        && let Some((value, expected)) = rest.split_once('`')
    {
        return Problem::NotOneOf {
            values: listed(expected),
            got: value.to_string(),
        }
        .describe(path);
    }
    if let Some(rest) = message.strip_prefix("invalid type: ")
        && let Some((unexpected, expected)) = rest.rsplit_once(", expected ")
    {
        return Problem::Type {
            expected: expected_phrase(expected),
            got: got_phrase(unexpected),
        }
        .describe(path);
    }
    if let Some(rest) = message.strip_prefix("invalid value: ")
        && let Some((unexpected, expected)) = rest.rsplit_once(", expected ")
    {
        return Problem::Range {
            expected: range_phrase(expected),
            got: got_phrase(unexpected),
        }
        .describe(path);
    }
    // Custom messages (a pattern value, a rule of the command) are already words.
    let message = message
        .split(" at line ")
        .next()
        .unwrap_or(message)
        .to_string();
    Problem::Other(message).describe(path)
}

fn join_path(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_string()
    } else {
        format!("{path}.{field}")
    }
}

fn between<'a>(text: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let rest = text.strip_prefix(start)?;
    rest.split(end).next()
}

/// The names in serde's "expected one of `a`, `b`" / "expected `a`" / "there are no fields".
fn listed(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// serde's expectation (a Rust type or a visitor's phrase) as a noun phrase.
fn expected_phrase(expected: &str) -> String {
    match expected {
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64" | "u128"
        | "usize" => "an integer".into(),
        "f32" | "f64" => "a number".into(),
        "a boolean" => "true or false".into(),
        "a sequence" => "a list".into(),
        "a map" => "an object".into(),
        "variant identifier" => "one of the listed values (a string)".into(),
        other if other.starts_with("struct ") => "an object".into(),
        other => other.to_string(),
    }
}

/// serde's expectation in an out-of-range error (a Rust integer type) as the range.
pub(crate) fn range_phrase(expected: &str) -> String {
    let range = |min: i128, max: i128| format!("an integer from {min} to {max}");
    match expected {
        "i8" => range(i8::MIN.into(), i8::MAX.into()),
        "i16" => range(i16::MIN.into(), i16::MAX.into()),
        "i32" => range(i32::MIN.into(), i32::MAX.into()),
        "u8" => range(0, u8::MAX.into()),
        "u16" => range(0, u16::MAX.into()),
        "u32" => range(0, u32::MAX.into()),
        "u64" | "usize" => "an integer of 0 or more".into(),
        "i64" | "isize" => "an integer that fits in 64 bits".into(),
        other => expected_phrase(other),
    }
}

/// serde's `Unexpected` (`string "nope"`, `integer `5``, `floating point `1.5``, `boolean
/// `true``, `null`, `sequence`, `map`) as what came.
fn got_phrase(unexpected: &str) -> String {
    let quoted = |prefix: &str| {
        unexpected
            .strip_prefix(prefix)
            .map(|rest| rest.trim_matches('`').to_string())
    };
    if let Some(text) = unexpected.strip_prefix("string ") {
        return format!("the string {text}");
    }
    if let Some(number) = quoted("integer ").or_else(|| quoted("floating point ")) {
        return format!("the number {number}");
    }
    if let Some(value) = quoted("boolean ") {
        return value;
    }
    match unexpected {
        "null" | "unit" => "null".into(),
        "sequence" => "a list".into(),
        "map" => "an object".into(),
        other => other.to_string(),
    }
}

/// A JSON value as what came, in the words serde's `Unexpected` gives ([`got_phrase`]).
pub(crate) fn got_value(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Null => "null".into(),
        Value::Bool(value) => value.to_string(),
        Value::Number(number) => format!("the number {number}"),
        Value::String(text) => format!("the string {text:?}"),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe(""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_errors_say_what_came() {
        assert_eq!(
            from_serde("id", "invalid type: string \"nope\", expected i64"),
            "property `id`: expected an integer, got the string \"nope\""
        );
        assert_eq!(
            from_serde("force", "invalid type: integer `1`, expected a boolean"),
            "property `force`: expected true or false, got the number 1"
        );
        assert_eq!(
            from_serde("tags", "invalid type: string \"a\", expected a sequence"),
            "property `tags`: expected a list, got the string \"a\""
        );
        assert_eq!(
            from_serde("title", "invalid type: null, expected a string"),
            "property `title`: expected a string, got null"
        );
    }

    #[test]
    fn unknown_properties_list_the_known_ones() {
        assert_eq!(
            from_serde(".", "unknown field `x`, expected one of `a`, `b`, `c`"),
            "unknown property `x` (the tool takes: a, b, c)"
        );
        assert_eq!(
            from_serde("x", "unknown field `x`, expected `a`"),
            "unknown property `x` (the tool takes: a)"
        );
        assert_eq!(
            from_serde(".", "unknown field `x`, there are no fields"),
            "unknown property `x` (the tool takes no arguments)"
        );
    }

    #[test]
    fn enums_ranges_and_missing_values() {
        assert_eq!(
            from_serde(
                "level",
                "unknown variant `loud`, expected one of `debug`, `info`"
            ),
            "property `level`: must be one of \"debug\", \"info\", got \"loud\""
        );
        assert_eq!(
            from_serde("count", "invalid value: integer `300`, expected u8"),
            "property `count`: expected an integer from 0 to 255, got the number 300"
        );
        assert_eq!(
            from_serde(".", "missing field `title`"),
            "property `title` is required"
        );
        assert_eq!(
            from_serde("ttl", "\"1d\" is not a duration such as 300ms"),
            "property `ttl`: \"1d\" is not a duration such as 300ms"
        );
    }

    #[test]
    fn the_tool_is_named() {
        let error = crate::spec::argv::InvalidArguments::property(
            "id",
            "expected an integer, got the string \"x\"",
        );
        assert_eq!(
            error.for_tool("task_show"),
            "invalid arguments for task_show: property `id`: expected an integer, got the string \"x\""
        );
    }
}
