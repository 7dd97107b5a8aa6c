//! The served tools as MCP sees them, and as `<binary> tools` prints them.
//!
//! Start-up builds only what the first request needs: the name index and the `tools/list`
//! answer, which fiskgen computed at build time ([`crate::listing`]). A tool's rmcp definition
//! (its schema parsed) is built the first time a request needs it. The JSON listing is the
//! `tools` array of `fiskgen info --json`, one type for both (`fiskgen_contract::info`).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use fiskgen_contract::info::{self, ToolInfo};
use fiskgen_contract::listing::OUTPUT_SCHEMA;
use rmcp::model::{Tool, ToolAnnotations};

use crate::JsonObject;
use crate::mcp::error::CatalogError;
use crate::mcp::listing::Listing;
use crate::spec::app::{AppSpec, Run, ToolSpec};

/// Every served tool, by name and in serving order.
#[derive(Debug)]
pub(crate) struct Catalog {
    /// The `tools/list` answer.
    pub(crate) listing: Listing,
    specs: &'static [&'static ToolSpec],
    by_name: HashMap<&'static str, usize>,
    /// Each tool's rmcp definition, built when first needed.
    tools: Vec<OnceLock<Option<Tool>>>,
}

impl Catalog {
    /// Builds the catalog; fails when a tool name is served twice or the compiled-in listing
    /// does not fit (a generator bug, reported at start rather than on the first request).
    /// `task_required`: the tools that run only as tasks in this run (none when tasks are off).
    pub(crate) fn new(app: &'static AppSpec, task_required: &[&str]) -> Result<Self, CatalogError> {
        let mut by_name = HashMap::with_capacity(app.tools.len());
        for (index, spec) in app.tools.iter().enumerate() {
            if by_name.insert(spec.name, index).is_some() {
                return Err(CatalogError::ServedTwice(spec.name));
            }
        }
        Ok(Self {
            listing: Listing::new(app, task_required)?,
            specs: app.tools,
            by_name,
            tools: app.tools.iter().map(|_| OnceLock::new()).collect(),
        })
    }

    /// Every served tool's spec, in serving order.
    pub(crate) fn specs(&self) -> &'static [&'static ToolSpec] {
        self.specs
    }

    /// The spec of a served tool.
    pub(crate) fn get(&self, name: &str) -> Option<&'static ToolSpec> {
        self.by_name.get(name).map(|&index| self.specs[index])
    }

    /// The MCP definition of a served tool (`None` also when its schema is not an object,
    /// which `tools/list` would have shown first).
    pub(crate) fn tool(&self, name: &str) -> Option<&Tool> {
        let index = *self.by_name.get(name)?;
        self.tools[index]
            .get_or_init(|| definition(self.specs[index], self.listing.output_schema).ok())
            .as_ref()
    }
}

/// A tool's rmcp definition: what its `tools/list` entry says (the title once, in the
/// annotations; the output schema when the entries declare it).
fn definition(spec: &ToolSpec, declared: bool) -> Result<Tool, CatalogError> {
    let tool = Tool::new(spec.name, spec.description, Arc::new(input_schema(spec)?))
        .with_annotations(annotations(spec));
    // Built-ins answer with their own JSON as text, as fisk-ai's do: no output schema.
    Ok(match spec.run {
        Run::Command(_) if declared => tool.with_raw_output_schema(Arc::new(output_schema())),
        Run::Command(_) | Run::Builtin(_) => tool,
    })
}

/// A spec's input schema as a JSON object.
pub(crate) fn input_schema(spec: &ToolSpec) -> Result<JsonObject, CatalogError> {
    serde_json::from_str(spec.input_schema).map_err(|source| CatalogError::Schema {
        tool: spec.name,
        source,
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
    } else if hints.additive {
        annotations = annotations.destructive(false);
    }
    if hints.idempotent {
        annotations = annotations.idempotent(true);
    }
    if hints.open_world {
        annotations = annotations.open_world(true);
    }
    annotations
}

/// The schema of a command tool's `structuredContent` (fiskgen_contract's one text).
pub(crate) fn output_schema() -> JsonObject {
    serde_json::from_str(OUTPUT_SCHEMA).unwrap_or_default()
}

/// One tool as `<binary> tools --json` lists it: the entry `fiskgen info --json` lists it with
/// (`fiskgen_contract::info`, the one type of both).
pub(crate) fn info(spec: &ToolSpec) -> Result<ToolInfo, CatalogError> {
    let kind = match spec.run {
        Run::Command(command) => info::Kind::Command {
            command: command.path.iter().map(|part| part.to_string()).collect(),
        },
        Run::Builtin(builtin) => info::Kind::Builtin {
            builtin: builtin.name().to_string(),
        },
    };
    Ok(ToolInfo {
        name: spec.name.to_string(),
        own_name: info::own_name(spec.name, &kind),
        title: spec.title.to_string(),
        description: spec.description.to_string(),
        tags: spec.tags.iter().map(|tag| tag.to_string()).collect(),
        hints: info::hint_names(
            [
                spec.hints.read_only,
                spec.hints.destructive,
                spec.hints.idempotent,
                spec.hints.open_world,
            ],
            spec.hints.additive,
        ),
        confirm: spec.confirm.map(|trigger| info::Confirm {
            trigger: trigger.to_string(),
        }),
        input_schema: input_schema(spec)?,
        questions: spec
            .questions
            .iter()
            .map(|question| info::Question {
                name: question.name.to_string(),
                params: question.params.iter().map(|p| p.to_string()).collect(),
            })
            .collect(),
        kind,
    })
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
        out.push_str(&format!(
            "{:<width$}  {summary}{gate}{}\n",
            spec.name,
            renamed_from(spec)
        ));
    }
    out
}

/// ` [own name: stream_info]` for a command tool served under a name of the config's
/// `tool_names` (one that does not end in the command's own name, which the config's other keys
/// use); empty otherwise, a `tool_prefix` being plain to see.
fn renamed_from(spec: &ToolSpec) -> String {
    let Run::Command(command) = &spec.run else {
        return String::new();
    };
    let own = fiskgen_contract::surface::tool_name(command.path);
    if command.path.is_empty() || spec.name.ends_with(&own) {
        return String::new();
    }
    format!(" [own name: {own}]")
}

#[cfg(test)]
mod tests {
    use fiskgen_contract::listing::Entry;

    use super::*;
    use crate::spec::app::{Hints, Run};

    fn spec(hints: Hints) -> ToolSpec {
        ToolSpec {
            name: "kv_add",
            title: "kv add",
            description: "",
            tags: &["ai:additive"],
            hints,
            confirm: None,
            input_schema: "{}",
            questions: &[],
            run: Run::Command(crate::spec::params::Command {
                path: &[],
                globals: crate::spec::params::Globals::NONE,
                params: &[],
            }),
        }
    }

    /// rmcp's annotations and the precomputed listing's say the same for every combination.
    #[test]
    fn an_additive_tool_is_sent_destructive_hint_false_by_rmcp_and_the_listing_alike() {
        for hints in [
            Hints::NONE.additive(),
            Hints::NONE.additive().destructive(),
            Hints::NONE.read_only(),
        ] {
            let spec = spec(hints);
            let rmcp = serde_json::to_value(annotations(&spec)).expect("JSON");
            let entry = Entry {
                name: spec.name,
                title: spec.title,
                description: spec.description,
                input_schema: "{}",
                output_schema: false,
                hints: [
                    hints.read_only,
                    hints.destructive,
                    hints.idempotent,
                    hints.open_world,
                ],
                additive: hints.additive,
                task_required: false,
            };
            let listed: serde_json::Value = serde_json::from_str(&entry.to_json()).expect("JSON");
            assert_eq!(listed["annotations"], rmcp, "{hints:?}");
        }
        let additive =
            serde_json::to_value(annotations(&spec(Hints::NONE.additive()))).expect("JSON");
        assert_eq!(additive["destructiveHint"], false);
        assert!(additive.get("readOnlyHint").is_none());
    }

    /// `<server> tools` shows the command's own name beside a `tool_names` rename, not beside
    /// a prefixed name (the prefix is plain to see).
    #[test]
    fn tools_text_shows_the_own_name_of_a_renamed_tool_only() {
        let command = |name: &'static str| ToolSpec {
            name,
            run: Run::Command(crate::spec::params::Command {
                path: &["stream", "info"],
                globals: crate::spec::params::Globals::NONE,
                params: &[],
            }),
            ..spec(Hints::NONE)
        };
        static TOOLS: OnceLock<[ToolSpec; 3]> = OnceLock::new();
        let tools = TOOLS.get_or_init(|| {
            [
                command("info"),
                command("nats_stream_info"),
                command("stream_info"),
            ]
        });
        let listed: Vec<&'static ToolSpec> = tools.iter().collect();
        let app = AppSpec {
            tools: Box::leak(listed.into_boxed_slice()),
            ..AppSpec::EMPTY
        };
        assert_eq!(
            render_text(&app),
            "info               [own name: stream_info]\nnats_stream_info  \nstream_info       \n"
        );
    }
}
