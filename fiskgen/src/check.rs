//! `fiskgen check`: has an application changed since its server was generated?
//!
//! The verdict is the one every generated server gives (`<binary> verify`): both reduce the
//! documents to their served surface and compare them with `fiskgen_contract::surface` (see
//! `docs/drift.md`). Only what a server serves counts: a change in a command that is not
//! served (filtered out, hidden, denied), or in help texts alone, is reported but is not
//! drift. Having both documents and the config, `fiskgen check` also explains each changed
//! tool ([`compare`]: parameters, tags, hints, confirmation).

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use fiskgen_contract::surface::{self, Surface, Verdict};
use serde_json::{Map, Value};

use crate::introspect::Introspection;
use crate::ir::{self, Tool};

/// One baseline checked against the current application.
#[derive(Debug)]
pub struct Outcome {
    /// The shared verdict.
    pub verdict: Verdict,
    /// What changed in each tool of both served sets, by tool name (the details under `~`).
    pub details: BTreeMap<String, Vec<String>>,
}

impl Outcome {
    /// The verdict as `<binary> verify` prints it, with the details of each changed tool.
    pub fn render(&self) -> String {
        self.verdict
            .render(|served| self.details.get(&served.tool).cloned().unwrap_or_default())
    }
}

/// Judges the current introspection against a baseline, both served under one config, with
/// the serving rules a server built from it carries (the baseline's IR holds them). The details
/// compare the schemas clients are served (the IR's, lowered once).
pub fn check(
    baseline: (&Introspection, &ir::Server),
    current: (&Introspection, &ir::Server),
) -> Outcome {
    let rules = &baseline.1.settings.serving;
    let verdict = surface::compare(
        &Surface::of(&baseline.0.document, rules),
        &Surface::of(&current.0.document, rules),
    );
    let details = compare(baseline.1, current.1)
        .changed
        .into_iter()
        .map(|change| (change.tool, change.changes))
        .collect();
    Outcome { verdict, details }
}

/// [`check`] when the current application cannot be served under the config at all (an
/// allowlisted global flag is gone, say): the verdict is the same one a server gives, from the
/// documents and the baseline's rules alone; there are no per-tool details.
pub fn check_unservable(
    baseline: (&Introspection, &ir::Server),
    current: &Introspection,
) -> Outcome {
    let rules = &baseline.1.settings.serving;
    let verdict = surface::compare(
        &Surface::of(&baseline.0.document, rules),
        &Surface::of(&current.document, rules),
    );
    Outcome {
        verdict,
        details: BTreeMap::new(),
    }
}

/// The differences between a baseline served set and the current one, tool by tool.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Drift {
    /// Tools served now that were not.
    pub added: Vec<String>,
    /// Tools that were served and are not any more.
    pub removed: Vec<String>,
    /// Tools served in both, with what changed.
    pub changed: Vec<ToolChange>,
}

/// What changed in one tool.
#[derive(Debug, PartialEq, Eq)]
pub struct ToolChange {
    /// The tool name.
    pub tool: String,
    /// One line per change.
    pub changes: Vec<String>,
}

impl Drift {
    /// Whether anything the server serves changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// Compares the served sets of `baseline` and `current` (the details [`check`] prints).
pub fn compare(baseline: &ir::Server, current: &ir::Server) -> Drift {
    let old: BTreeMap<&str, &Tool> = baseline
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t))
        .collect();
    let new: BTreeMap<&str, &Tool> = current.tools.iter().map(|t| (t.name.as_str(), t)).collect();
    let mut drift = Drift::default();
    for (name, tool) in &new {
        match old.get(name) {
            None => drift.added.push(name.to_string()),
            Some(before) => {
                let changes = tool_changes(before, tool);
                if !changes.is_empty() {
                    drift.changed.push(ToolChange {
                        tool: name.to_string(),
                        changes,
                    });
                }
            }
        }
    }
    drift.removed = old
        .keys()
        .filter(|name| !new.contains_key(*name))
        .map(|n| n.to_string())
        .collect();
    drift
}

fn tool_changes(old: &Tool, new: &Tool) -> Vec<String> {
    let mut changes = Vec::new();
    if old.title != new.title {
        changes.push(format!("title: {:?} -> {:?}", old.title, new.title));
    }
    if old.description != new.description {
        changes.push("description changed".to_string());
    }
    if old.tags != new.tags {
        changes.push(format!(
            "tags: [{}] -> [{}]",
            old.tags.join(", "),
            new.tags.join(", ")
        ));
    }
    let hints = |tool: &Tool| {
        tool.hints
            .iter()
            .map(|h| h.0.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if old.hints != new.hints {
        changes.push(format!("hints: [{}] -> [{}]", hints(old), hints(new)));
    }
    let confirm = |tool: &Tool| {
        tool.confirm
            .as_ref()
            .map_or("none".to_string(), |c| c.trigger.clone())
    };
    if old.confirm != new.confirm {
        changes.push(format!(
            "confirmation: {} -> {}",
            confirm(old),
            confirm(new)
        ));
    }
    changes.extend(schema_changes(&old.input_schema, &new.input_schema));
    changes
}

/// Parameter-level differences: added, removed, retyped, newly (not) required.
fn schema_changes(old: &Map<String, Value>, new: &Map<String, Value>) -> Vec<String> {
    let properties = |schema: &Map<String, Value>| -> Map<String, Value> {
        schema
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let required = |schema: &Map<String, Value>, name: &str| {
        schema
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|v| v == name))
    };
    let (old_props, new_props) = (properties(old), properties(new));
    let mut changes = Vec::new();
    for (name, schema) in &new_props {
        match old_props.get(name) {
            None => changes.push(format!(
                "parameter added: {name} ({}{})",
                type_of(schema),
                if required(new, name) {
                    ", required"
                } else {
                    ""
                }
            )),
            Some(before) => {
                if type_of(before) != type_of(schema) {
                    changes.push(format!(
                        "parameter {name}: type {} -> {}",
                        type_of(before),
                        type_of(schema)
                    ));
                } else if let (Some(old_values), Some(new_values)) =
                    (enum_of(before), enum_of(schema))
                    && old_values != new_values
                {
                    changes.push(format!(
                        "parameter {name}: values [{old_values}] -> [{new_values}]"
                    ));
                } else if before != schema {
                    changes.push(format!("parameter {name}: schema changed"));
                }
                match (required(old, name), required(new, name)) {
                    (false, true) => changes.push(format!("parameter {name}: now required")),
                    (true, false) => changes.push(format!("parameter {name}: no longer required")),
                    _ => {}
                }
            }
        }
    }
    for name in old_props
        .keys()
        .filter(|name| !new_props.contains_key(*name))
    {
        changes.push(format!("parameter removed: {name}"));
    }
    changes
}

/// The allowed values of an enum property (or its items), comma-separated.
fn enum_of(schema: &Value) -> Option<String> {
    let values = schema
        .get("enum")
        .or_else(|| schema.get("items")?.get("enum"))?
        .as_array()?;
    Some(
        values
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .collect::<Vec<_>>()
            .join(", "),
    )
}

/// A short type description: `string`, `integer`, `array of string`, `string (enum)`.
fn type_of(schema: &Value) -> String {
    let kind = schema.get("type").and_then(Value::as_str).unwrap_or("any");
    match kind {
        "array" => format!(
            "array of {}",
            schema.get("items").map_or("any".to_string(), type_of)
        ),
        _ if schema.get("enum").is_some() => format!("{kind} (enum)"),
        _ => kind.to_string(),
    }
}

impl fmt::Display for Drift {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        for name in &self.added {
            let _ = writeln!(out, "+ {name} (new tool)");
        }
        for name in &self.removed {
            let _ = writeln!(out, "- {name} (no longer served)");
        }
        for change in &self.changed {
            let _ = writeln!(out, "~ {}", change.tool);
            for line in &change.changes {
                let _ = writeln!(out, "    {line}");
            }
        }
        f.write_str(out.trim_end())
    }
}
