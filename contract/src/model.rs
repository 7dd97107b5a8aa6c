//! A tolerant serde mirror of the document a fisk application prints for `--fisk-introspect`.
//!
//! Lenient on purpose: unknown keys are ignored and absent keys take their empty value, so a
//! newer fisk that adds keys still works. Only what fiskgen reads is modelled; the raw document
//! is kept beside it (see [`crate::introspect::Introspection`]) so nothing is lost when it is saved.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

/// The application: the root of the document.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Application {
    /// The name given to `fisk.New`.
    pub name: String,
    /// The application's help text.
    pub help: String,
    /// The version string, when the application declares one.
    pub version: Option<String>,
    /// The author, when declared.
    pub author: Option<String>,
    /// Top-level positional arguments (only for applications without commands).
    pub args: Vec<Arg>,
    /// Top-level commands in declaration order, fisk's own commands removed.
    pub commands: Vec<Command>,
    /// Application-level ("global") flags, fisk's own flags removed.
    pub flags: Vec<Flag>,
    /// Every cheat of the application by label (Markdown in the `cheat` tool's format); an
    /// application-level cheat's label is the application's name.
    pub cheats: BTreeMap<String, String>,
}

/// A command: a group when it has subcommands, otherwise a leaf that can become a tool.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Command {
    /// The word typed on the command line.
    pub name: String,
    /// Alternative words for the command.
    pub aliases: Vec<String>,
    /// Short help.
    pub help: String,
    /// Long help.
    pub help_long: String,
    /// Hidden commands are present in the document but never served.
    pub hidden: bool,
    /// Runs when the parent is invoked without a subcommand.
    pub default: bool,
    /// Free-form tags in declaration order; fisk gives them no meaning.
    pub tags: Vec<String>,
    /// The cheat attributed to this command (fisk v0.9.x).
    pub cheat: Option<String>,
    /// Full JSON schema of the command's own flags and args (fisk v0.9.0 and newer).
    pub schema: Option<Map<String, Value>>,
    /// The strict-subset schema that is served to MCP clients (fisk v0.9.0 and newer).
    pub restricted_schema: Option<Map<String, Value>>,
    /// The command's own flags, in declaration order.
    pub flags: Vec<Flag>,
    /// Positional arguments, in declaration order.
    pub args: Vec<Arg>,
    /// Subcommands, in declaration order.
    pub commands: Vec<Command>,
}

/// A flag of a command or of the application.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Flag {
    /// Long name without `--`.
    pub name: String,
    /// Help text.
    pub help: String,
    /// Short form as a Unicode code point.
    pub short: Option<u32>,
    /// Default values, always as strings.
    pub default: Vec<String>,
    /// Environment variable that supplies a default.
    pub envar: Option<String>,
    /// Value placeholder used in help.
    pub place_holder: Option<String>,
    /// Must be given on the command line (or through its environment variable).
    pub required: bool,
    /// Hidden flags are listed but left out of both schemas.
    pub hidden: bool,
    /// A boolean flag: takes no value.
    pub boolean: bool,
    /// Accepts `--no-<name>`.
    pub negatable: bool,
    /// May be repeated.
    pub cumulative: bool,
    /// Completion hints resolved at introspection time (enum values, for example).
    pub completions: Vec<String>,
}

/// A positional argument.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Arg {
    /// Name, as used for the schema property.
    pub name: String,
    /// Help text.
    pub help: String,
    /// Default values, always as strings.
    pub default: Vec<String>,
    /// Environment variable that supplies a default.
    pub envar: Option<String>,
    /// Value placeholder used in help.
    pub place_holder: Option<String>,
    /// Must be given.
    pub required: bool,
    /// Hidden args are left out of both schemas.
    pub hidden: bool,
    /// Consumes the rest of the command line (only the last arg can be).
    pub cumulative: bool,
}

impl Flag {
    /// Whether one of the flag's defaults reads as true, the way fisk parses booleans.
    pub fn defaults_to_true(&self) -> bool {
        self.default.iter().any(|value| parses_as_true(value))
    }
}

/// Go's `strconv.ParseBool` true spellings, which fisk uses for boolean defaults.
fn parses_as_true(value: &str) -> bool {
    matches!(value, "1" | "t" | "T" | "true" | "TRUE" | "True")
}

impl Command {
    /// Whether the command is a leaf (no subcommands), the only kind that becomes a tool.
    pub fn is_leaf(&self) -> bool {
        self.commands.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_and_absent_arrays_are_tolerated() {
        let doc = r#"{"name":"demo","future_key":1,"commands":[{"name":"ls","short_help":"x",
            "flags":[{"name":"json","boolean":true,"short":106}]}]}"#;
        let app: Application = serde_json::from_str(doc).expect("valid document");
        assert_eq!(app.commands[0].flags[0].short, Some(106));
        assert!(app.commands[0].args.is_empty());
        assert!(app.commands[0].is_leaf());
        assert!(app.commands[0].restricted_schema.is_none());
    }

    #[test]
    fn boolean_defaults_follow_go_parse_bool() {
        let flag = |d: &str| Flag {
            default: vec![d.to_string()],
            ..Flag::default()
        };
        assert!(flag("true").defaults_to_true());
        assert!(flag("1").defaults_to_true());
        assert!(!flag("false").defaults_to_true());
        assert!(!flag("yes").defaults_to_true());
    }
}
