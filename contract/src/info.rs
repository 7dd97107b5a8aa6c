//! One served tool as scripts read it, defined once: `fiskgen info --json` lists what a server
//! will serve under its `tools` key, and the generated binary's `<binary> tools --json` prints
//! what it serves, an array of the same entries, keys in the same order (docs/config.md,
//! "fiskgen info"; docs/runtime.md, "The binary's command line").

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The hint names, in listing order: `readOnlyHint`, `destructiveHint`, `idempotentHint`,
/// `openWorldHint` of MCP, by their config names.
pub const HINTS: [&str; 4] = ["read_only", "destructive", "idempotent", "open_world"];

/// Listed after [`HINTS`] for a command that says it only adds (`ai:additive`): it is sent as
/// `destructiveHint: false`.
pub const ADDITIVE_HINT: &str = "additive";

/// One served tool. A key it does not know is refused when read (on [`Kind`], which takes the
/// keys the struct's own fields leave).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    /// The MCP tool name.
    pub name: String,
    /// A command's own name, the one the config's keys use, when it is served under another
    /// (`tool_prefix`, `tool_names`); absent otherwise ([`own_name`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_name: Option<String>,
    /// The human title.
    pub title: String,
    /// The description sent to clients.
    pub description: String,
    /// The command's tags, in declaration order (built-ins have none).
    pub tags: Vec<String>,
    /// The behaviour hints that are on, by their names in [`HINTS`], in that order.
    pub hints: Vec<String>,
    /// Present when calls need the user's approval first.
    pub confirm: Option<Confirm>,
    /// The input schema the server advertises.
    pub input_schema: Map<String, Value>,
    /// The parameters the user answers instead of the model (`expose.agent.mcp.ask`), by
    /// question, in the order they are asked; absent when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub questions: Vec<Question>,
    /// What a call runs.
    #[serde(flatten)]
    pub kind: Kind,
}

/// Why a tool's calls wait for the user's approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Confirm {
    /// The tag that gates it.
    pub trigger: String,
}

/// One question of a tool: parameters the user answers in one form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Question {
    /// Its name (the key of its MRTR `inputRequests` entry).
    pub name: String,
    /// The parameters it asks for.
    pub params: Vec<String>,
}

/// What a tool runs: `"kind": "command"` with its `command` path, or `"kind": "builtin"` with
/// the built-in's name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Kind {
    /// A command of the application.
    Command {
        /// The command path (`["stream", "info"]`).
        command: Vec<String>,
    },
    /// A tool the server implements itself.
    Builtin {
        /// Its name (`read_file`, ...).
        builtin: String,
    },
}

/// The names in [`HINTS`] of the hints that are on, then [`ADDITIVE_HINT`] for a tool that says
/// it only adds (`ai:additive`) and is not destructive; in `[read_only, destructive, idempotent,
/// open_world]` order.
pub fn hint_names(on: [bool; 4], additive: bool) -> Vec<String> {
    let mut names: Vec<String> = on
        .iter()
        .zip(HINTS)
        .filter(|(on, _)| **on)
        .map(|(_, name)| name.to_string())
        .collect();
    if additive && !on[1] {
        names.push(ADDITIVE_HINT.to_string());
    }
    names
}

/// `<binary> tools --json`: the entries as pretty JSON, with a trailing newline.
pub fn render(tools: &[ToolInfo]) -> Result<String, serde_json::Error> {
    let mut text = serde_json::to_string_pretty(tools)?;
    text.push('\n');
    Ok(text)
}

/// The own name of a tool served as `name` (its command path joined with `_`,
/// [`crate::surface::tool_name`]) when it differs from `name`; `None` for a built-in.
pub fn own_name(name: &str, kind: &Kind) -> Option<String> {
    match kind {
        Kind::Command { command } => {
            Some(crate::surface::tool_name(command)).filter(|own| own != name)
        }
        Kind::Builtin { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(kind: Kind) -> ToolInfo {
        ToolInfo {
            name: "stream_info".into(),
            own_name: None,
            title: "stream info".into(),
            description: "Shows a stream".into(),
            tags: vec!["ai:read-only".into()],
            hints: hint_names([true, false, true, false], false),
            confirm: Some(Confirm {
                trigger: "ai:confirm".into(),
            }),
            input_schema: Map::new(),
            questions: Vec::new(),
            kind,
        }
    }

    #[test]
    fn an_entry_reads_back_as_it_was_written_with_its_keys_in_one_order() {
        for kind in [
            Kind::Command {
                command: vec!["stream".into(), "info".into()],
            },
            Kind::Builtin {
                builtin: "read_file".into(),
            },
        ] {
            let entry = tool(kind);
            let text = render(std::slice::from_ref(&entry)).expect("JSON");
            let back: Vec<ToolInfo> = serde_json::from_str(&text).expect("reads back");
            assert_eq!(back, [entry]);
            let keys: Vec<usize> = [
                "\"name\"",
                "\"title\"",
                "\"description\"",
                "\"tags\"",
                "\"hints\"",
                "\"confirm\"",
                "\"input_schema\"",
                "\"kind\"",
            ]
            .iter()
            .map(|key| text.find(key).unwrap_or(usize::MAX))
            .collect();
            assert!(keys.windows(2).all(|pair| pair[0] < pair[1]), "{text}");
        }
        assert_eq!(
            hint_names([true, false, true, false], false),
            ["read_only", "idempotent"]
        );
    }

    #[test]
    fn an_entry_with_a_key_the_type_does_not_know_is_refused() {
        let text = r#"{"name":"a","title":"a","description":"","tags":[],"hints":[],
            "confirm":null,"input_schema":{},"kind":"builtin","builtin":"read_file","extra":1}"#;
        assert!(serde_json::from_str::<ToolInfo>(text).is_err());
    }
}
