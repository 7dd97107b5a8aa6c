//! Catalog mode (`catalog: search`, `--catalog search`; docs/catalogs.md): instead of every tool,
//! `tools/list` holds four fixed ones: `search` (ranked by [`rank`]), `describe` (tools' full
//! entries), `run_read_only` (only tools with the read-only hint) and `run` (any served tool).
//! The two runners are apart so that a client can let the first run freely and ask for the
//! second. A run goes through the same call as a direct one ([`crate::mcp::call::call`]), with
//! the inner tool's name and arguments: validation, confirmation, limits, tasks, progress,
//! cancellation and every error text are those of the tool itself.

mod rank;

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Tool, ToolAnnotations,
};
use serde_json::{Value, json};

use crate::JsonObject;
use crate::mcp::tools::Catalog;
use crate::spec::app::AppSpec;
use crate::spec::app::ToolSpec;
use crate::spec::groups::{group_of, groups_of, groups_of_tool};

/// The fixed tools' names.
pub(crate) const SEARCH: &str = "search";
pub(crate) const DESCRIBE: &str = "describe";
pub(crate) const RUN_READ_ONLY: &str = "run_read_only";
pub(crate) const RUN: &str = "run";

/// Matches `search` returns when the client asks for no number.
const DEFAULT_LIMIT: u64 = 10;
/// Matches `search` returns at most.
const MAX_LIMIT: u64 = 50;
/// Tools `describe` takes at once at most.
const MAX_DESCRIBED: usize = 20;

/// The catalog-mode view of one endpoint's tools.
#[derive(Debug)]
pub(crate) struct Finder {
    /// The four fixed tools, as listed.
    tools: Vec<Tool>,
    specs: Vec<&'static ToolSpec>,
    index: rank::Index,
}

/// What a `tools/call` to a fixed tool becomes.
pub(crate) enum Answer {
    /// Answered by the finder itself.
    Done(CallToolResponse),
    /// Run this call of a served tool, as a direct call would.
    Run(CallToolRequestParams),
}

impl Finder {
    /// The finder over `catalog`'s tools (of `app`, whose settings say which tags are
    /// groups).
    pub(crate) fn new(app: &AppSpec, catalog: &Catalog) -> Self {
        let specs: Vec<&'static ToolSpec> = catalog.specs().to_vec();
        let documents = specs
            .iter()
            .map(|spec| {
                let groups = groups_of_tool(app, spec).join(" ");
                let tags = format!("{} {groups}", spec.tags.join(" "));
                rank::Document::new([spec.name, spec.title, &tags, spec.description])
            })
            .collect();
        let groups = groups_of(app, &specs);
        Self {
            tools: fixed_tools(specs.len(), &groups),
            specs,
            index: rank::Index::new(documents),
        }
    }

    /// The fixed tools, as `tools/list` lists them.
    pub(crate) fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// One fixed tool's definition.
    pub(crate) fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|tool| tool.name == name)
    }

    /// Answers a call of a fixed tool, or says which served tool to run.
    pub(crate) fn answer(
        &self,
        catalog: &Catalog,
        request: &CallToolRequestParams,
    ) -> Result<Answer, ErrorData> {
        let arguments = request.arguments.clone().unwrap_or_default();
        match request.name.as_ref() {
            SEARCH => Ok(Answer::Done(self.search(&arguments))),
            DESCRIBE => Ok(Answer::Done(self.describe(catalog, &arguments))),
            RUN_READ_ONLY | RUN => self.run(catalog, request, &arguments),
            other => Err(ErrorData::invalid_params(
                format!(
                    "unknown tool: {} (this server is in catalog mode: its tools are search, \
                     describe, run_read_only and run)",
                    crate::logging::echo(other)
                ),
                None,
            )),
        }
    }

    fn search(&self, arguments: &JsonObject) -> CallToolResponse {
        if let Some(error) = unknown_property(SEARCH, arguments, &["query", "limit"]) {
            return error;
        }
        let Some(query) = arguments.get("query").and_then(Value::as_str) else {
            return tool_error(
                "invalid arguments for search: property `query` is required: a few words, e.g. \
                 \"stream info\""
                    .into(),
            );
        };
        let limit = match arguments.get("limit") {
            None => DEFAULT_LIMIT,
            Some(value) => match value.as_u64() {
                Some(n @ 1..=MAX_LIMIT) => n,
                _ => {
                    return tool_error(format!(
                        "invalid arguments for search: property `limit`: expected an integer \
                         from 1 to {MAX_LIMIT}, got {value}"
                    ));
                }
            },
        };
        let matches: Vec<Value> = self
            .index
            .rank(query)
            .into_iter()
            .take(usize::try_from(limit).unwrap_or(usize::MAX))
            .map(|(index, _)| {
                let spec = self.specs[index];
                json!({
                    "name": spec.name,
                    "title": spec.title,
                    "group": group_of(spec),
                    "summary": spec.description.lines().next().unwrap_or_default(),
                    "runner": runner(spec),
                    "confirm": spec.confirm,
                })
            })
            .collect();
        let mut answer = json!({ "query": query, "matches": matches });
        if matches.is_empty() {
            answer["hint"] = json!(
                "no tool matches these words; try other words, or the group names in this tool's \
                 description"
            );
        }
        json_answer(&answer)
    }

    fn describe(&self, catalog: &Catalog, arguments: &JsonObject) -> CallToolResponse {
        if let Some(error) = unknown_property(DESCRIBE, arguments, &["tools"]) {
            return error;
        }
        let names: Option<Vec<&str>> = arguments
            .get("tools")
            .and_then(Value::as_array)
            .and_then(|names| names.iter().map(Value::as_str).collect());
        let names = match names {
            Some(names) if !names.is_empty() && names.len() <= MAX_DESCRIBED => names,
            _ => {
                return tool_error(format!(
                    "invalid arguments for describe: property `tools`: expected an array of 1 to \
                     {MAX_DESCRIBED} tool names, as search returns them"
                ));
            }
        };
        let unknown: Vec<String> = names
            .iter()
            .filter(|name| catalog.get(name).is_none())
            .map(|name| crate::logging::echo(name))
            .collect();
        if !unknown.is_empty() {
            return tool_error(format!(
                "describe: no such tool: {} (search finds tools by words)",
                unknown.join(", ")
            ));
        }
        let described: Vec<Value> = names
            .iter()
            .filter_map(|name| Some((catalog.get(name)?, catalog.tool(name)?)))
            .map(|(spec, tool)| {
                let mut entry = serde_json::to_value(tool).unwrap_or(Value::Null);
                entry["runner"] = json!(runner(spec));
                if let Some(tag) = spec.confirm {
                    entry["confirm"] = json!(tag);
                }
                entry
            })
            .collect();
        json_answer(&json!({ "tools": described }))
    }

    fn run(
        &self,
        catalog: &Catalog,
        request: &CallToolRequestParams,
        arguments: &JsonObject,
    ) -> Result<Answer, ErrorData> {
        let runner_name = request.name.as_ref();
        if let Some(error) = unknown_property(runner_name, arguments, &["tool", "arguments"]) {
            return Ok(Answer::Done(error));
        }
        let Some(name) = arguments.get("tool").and_then(Value::as_str) else {
            return Ok(Answer::Done(tool_error(format!(
                "invalid arguments for {runner_name}: property `tool` is required: the name of \
                 the tool to run, as search returns it"
            ))));
        };
        let inner = match arguments.get("arguments") {
            None | Some(Value::Null) => JsonObject::new(),
            Some(Value::Object(inner)) => inner.clone(),
            Some(other) => {
                return Ok(Answer::Done(tool_error(format!(
                    "invalid arguments for {runner_name}: property `arguments`: expected an \
                     object (the tool's arguments, as describe shows them), got {}",
                    kind(other)
                ))));
            }
        };
        let Some(spec) = catalog.get(name) else {
            return Ok(Answer::Done(tool_error(format!(
                "{runner_name}: no such tool: {} (search finds tools by words)",
                crate::logging::echo(name)
            ))));
        };
        if runner_name == RUN_READ_ONLY && !spec.hints.read_only {
            return Ok(Answer::Done(tool_error(format!(
                "run_read_only runs only tools with the read-only hint, and {} has none: run it \
                 with `run` (which a client may ask the user to approve)",
                spec.name
            ))));
        }
        let mut call = request.clone();
        call.name = spec.name.into();
        call.arguments = Some(inner);
        Ok(Answer::Run(call))
    }
}

/// The runner `describe` and `search` name for `spec`.
fn runner(spec: &ToolSpec) -> &'static str {
    if spec.hints.read_only {
        RUN_READ_ONLY
    } else {
        RUN
    }
}

/// A tool error naming the first property of `arguments` that `tool` does not take.
fn unknown_property(
    tool: &str,
    arguments: &JsonObject,
    takes: &[&str],
) -> Option<CallToolResponse> {
    let unknown = arguments
        .keys()
        .find(|key| !takes.contains(&key.as_str()))?;
    Some(tool_error(format!(
        "invalid arguments for {tool}: unknown property `{}` (the tool takes: {})",
        crate::logging::echo(unknown),
        takes.join(", ")
    )))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn tool_error(text: String) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(text)]).into()
}

fn json_answer(value: &Value) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(value.to_string())]).into()
}

/// The four fixed tools of a catalog of `count` tools in `groups`.
fn fixed_tools(count: usize, groups: &[String]) -> Vec<Tool> {
    let groups = if groups.is_empty() {
        String::new()
    } else {
        format!(" Groups: {}.", groups.join(", "))
    };
    let object = |value: Value| -> Arc<JsonObject> {
        match value {
            Value::Object(map) => Arc::new(map),
            _ => Arc::new(JsonObject::new()),
        }
    };
    let runner_schema = object(json!({
        "type": "object",
        "properties": {
            "tool": {"type": "string", "description": "The tool's name, as search returns it"},
            "arguments": {"type": "object", "description": "The tool's arguments, as describe shows its input schema"}
        },
        "required": ["tool"],
        "additionalProperties": false
    }));
    vec![
        Tool::new(
            SEARCH,
            format!(
                "Find this server's tools ({count}) by words, best first: name, summary, group \
                 and the runner to use. Then describe them for their input schemas.{groups}"
            ),
            object(json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "A few words, e.g. \"stream info\""},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "description": "Matches at most (default 10)"}
                },
                "required": ["query"],
                "additionalProperties": false
            })),
        )
        .with_annotations(
            ToolAnnotations::with_title("Search tools")
                .read_only(true)
                .idempotent(true),
        ),
        Tool::new(
            DESCRIBE,
            "The full entries of one or more tools: description (their help), input schema, \
             hints, and the runner that runs them.",
            object(json!({
                "type": "object",
                "properties": {
                    "tools": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_DESCRIBED, "description": "Tool names, as search returns them"}
                },
                "required": ["tools"],
                "additionalProperties": false
            })),
        )
        .with_annotations(
            ToolAnnotations::with_title("Describe tools")
                .read_only(true)
                .idempotent(true),
        ),
        Tool::new(
            RUN_READ_ONLY,
            "Run a tool that has the read-only hint (describe says runner: run_read_only) with \
             its arguments; any other tool is refused.",
            runner_schema.clone(),
        )
        .with_annotations(ToolAnnotations::with_title("Run a read-only tool").read_only(true)),
        Tool::new(
            RUN,
            "Run any tool with its arguments, including those that change state; gated tools \
             still ask the user.",
            runner_schema,
        )
        .with_annotations(ToolAnnotations::with_title("Run a tool")),
    ]
}
