//! The served tools as MCP sees them, and as `<binary> tools` prints them.
//!
//! Built once at start from the static specs: `tools/list` answers from a prepared list, and
//! the JSON listing has the same shape as the `tools` array of `fiskgen info --json`, so the
//! two can be compared directly.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Value, json};

use crate::JsonObject;
use crate::contract::spec::{AppSpec, Run, ToolSpec};

/// Every served tool, by name and in serving order.
#[derive(Debug)]
pub(crate) struct Catalog {
    /// In serving order.
    pub(crate) tools: Vec<Tool>,
    by_name: HashMap<&'static str, &'static ToolSpec>,
}

impl Catalog {
    /// Builds the catalog; fails when a spec's input schema is not a JSON object (a generator
    /// bug, reported at start rather than on the first `tools/list`).
    pub(crate) fn new(app: &'static AppSpec) -> Result<Self, String> {
        let output_schema = Arc::new(output_schema());
        let mut tools = Vec::with_capacity(app.tools.len());
        let mut by_name = HashMap::with_capacity(app.tools.len());
        for spec in app.tools {
            let schema = input_schema(spec)?;
            let tool = Tool::new(spec.name, spec.description, Arc::new(schema))
                .with_title(spec.title)
                .with_annotations(annotations(spec));
            // Built-ins answer with their own JSON as text, as fisk-ai's do: no output schema.
            let tool = match spec.run {
                Run::Command { .. } => tool.with_raw_output_schema(output_schema.clone()),
                Run::Builtin(_) => tool,
            };
            if by_name.insert(spec.name, *spec).is_some() {
                return Err(format!("the tool name {:?} is served twice", spec.name));
            }
            tools.push(tool);
        }
        Ok(Self { tools, by_name })
    }

    /// The spec of a served tool.
    pub(crate) fn get(&self, name: &str) -> Option<&'static ToolSpec> {
        self.by_name.get(name).copied()
    }

    /// The MCP definition of a served tool.
    pub(crate) fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|tool| tool.name == name)
    }
}

/// A spec's input schema as a JSON object.
pub(crate) fn input_schema(spec: &ToolSpec) -> Result<JsonObject, String> {
    serde_json::from_str(spec.input_schema).map_err(|error| {
        format!(
            "the input schema of tool {:?} is not a JSON object: {error}",
            spec.name
        )
    })
}

/// The title, and only the hints that are on (untagged commands send none).
fn annotations(spec: &ToolSpec) -> ToolAnnotations {
    let mut annotations = ToolAnnotations::with_title(spec.title);
    let hints = spec.hints;
    if hints.read_only {
        annotations = annotations.read_only(true);
    }
    if hints.destructive {
        annotations = annotations.destructive(true);
    }
    if hints.idempotent {
        annotations = annotations.idempotent(true);
    }
    if hints.open_world {
        annotations = annotations.open_world(true);
    }
    annotations
}

/// The schema of a command tool's `structuredContent`.
pub(crate) fn output_schema() -> JsonObject {
    let schema = json!({
        "type": "object",
        "properties": {
            "command": {
                "type": "string",
                "description": "The command line that ran (arguments after the program, shell-quoted where needed)"
            },
            "exit_code": {
                "type": "integer",
                "description": "The exit code; -1 when a signal ended the command"
            },
            "output": {
                "type": "string",
                "description": "stdout and stderr combined in order; when longer than 64 KiB, the first and last 32 KiB around a marker"
            },
            "truncated": {
                "type": "boolean",
                "description": "Whether output was cut"
            },
            "signal": {
                "type": "string",
                "description": "The signal that ended the command, when one did (e.g. SIGSEGV)"
            }
        },
        "required": ["command", "exit_code", "output", "truncated"],
        "additionalProperties": false
    });
    match schema {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// One tool as `fiskgen info --json` lists it.
pub(crate) fn info_json(spec: &ToolSpec) -> Result<Value, String> {
    let hints: Vec<&str> = [
        (spec.hints.read_only, "read_only"),
        (spec.hints.destructive, "destructive"),
        (spec.hints.idempotent, "idempotent"),
        (spec.hints.open_world, "open_world"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect();
    let mut tool = json!({
        "name": spec.name,
        "title": spec.title,
        "description": spec.description,
        "tags": spec.tags,
        "hints": hints,
        "confirm": spec.confirm.map(|trigger| json!({ "trigger": trigger })),
        "input_schema": input_schema(spec)?,
    });
    if let Value::Object(map) = &mut tool {
        match spec.run {
            Run::Command { command, .. } => {
                map.insert("kind".into(), json!("command"));
                map.insert("command".into(), json!(command));
            }
            Run::Builtin(builtin) => {
                map.insert("kind".into(), json!("builtin"));
                map.insert("builtin".into(), json!(builtin.name()));
            }
        }
    }
    Ok(tool)
}

/// `<binary> tools`: one line per tool for people.
pub(crate) fn render_text(app: &AppSpec) -> String {
    let width = app.tools.iter().map(|t| t.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for spec in app.tools {
        let summary = spec.description.lines().next().unwrap_or("");
        let gate = spec
            .confirm
            .map(|trigger| format!(" [confirm: {trigger}]"))
            .unwrap_or_default();
        out.push_str(&format!("{:<width$}  {summary}{gate}\n", spec.name));
    }
    out
}
