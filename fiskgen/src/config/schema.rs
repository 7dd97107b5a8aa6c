//! The config format: one key table per level of the file, and how each key is read.
//!
//! Reading fills a [`Draft`] (`draft.rs`): the [`Config`] being built plus what the checks that
//! span several keys need (positions, blocks that must be complete). [`read`] walks the document
//! against [`TOP`], then runs those checks (`checks.rs`). How single values are read lives in
//! `values.rs`, blocks with key tables of their own (filters, list entries) in `lists.rs`.

use std::path::Path;

use fiskgen_contract::defaults;

use super::auth::AUTH;
use super::auth_draft::AuthDraft;
use super::draft::{DEFAULT_TIMEOUT, Draft, EmbeddingsDraft};
use super::lists::{read_filter, read_harness_tools, read_remote_agents, read_remote_tools};
use super::names::{read_tool_names, read_tool_prefix};
use super::reader::{Field, KeyPlaces, Reader, Section, Value};
use super::values::{
    env_name, normalized, read_base_url, read_budget_count, read_builtins, read_catalog_mode,
    read_concurrency, read_confirm_mode, read_duration, read_embeddings_timeout, read_env_names,
    read_group_tag_prefix, read_hint_tags, read_options, read_page_size, read_param_headers,
    read_port, read_task_duration, read_task_max, read_tool_timeout, validate_bool,
    validate_pii_mode, validate_string,
};
use super::yaml::{Kind, Node};
use super::{Config, McpConfig, Problem, TaskConfig};

/// `max_concurrent_tools` when unset or 0.
const DEFAULT_CONCURRENCY: u32 = defaults::MAX_CONCURRENT_TOOLS;
/// `page_size` when unset or invalid.
const DEFAULT_PAGE_SIZE: usize = fiskgen_contract::listing::DEFAULT_PAGE_SIZE;
/// `harness.knowledge.top_k` when unset or not positive.
const DEFAULT_TOP_K: i64 = 5;
/// `harness.knowledge.max_injected_tokens` when unset or not positive.
const DEFAULT_INJECTED_TOKENS: i64 = 6000;

/// Reads a parsed document (`None`: an empty file) into a config and its problems.
pub(super) fn read(root: Option<&Node>, source: &Path) -> (Config, Vec<Problem>) {
    let mut reader = Reader::new(KeyPlaces::of(&TOP));
    let mut draft = Draft::new(source);
    if let Some(root) = root {
        reader.section(Value::root(root), &TOP, &mut draft);
    }
    draft.check(&mut reader);
    let (problems, agent_only) = reader.finish();
    let mut config = draft.config;
    if !agent_only.is_empty() {
        config.notes.push(format!(
            "ignoring agent-only settings ({}): fiskgen serves MCP only",
            agent_only.join(", ")
        ));
    }
    (config, problems)
}

// ---------------------------------------------------------------------------------------------
// The key tables, top-down.

static TOP: Section<Draft> = Section::new(&[
    Field::value("identity", |r, v, d| {
        d.identity = r
            .string(v)
            .filter(|id| !id.is_empty())
            .map(|id| (id, v.node.pos));
    }),
    Field::value("application_path", |r, v, d| {
        d.config.application_path = r.string(v).filter(|path| !path.is_empty());
        d.application_path = Some(v.node.pos);
    }),
    Field::value("global_flags", |r, v, d| {
        d.config.global_flags =
            normalized(r.strings(v), |flag| flag.trim().trim_start_matches('-'));
        d.global_flags = Some(v.key_pos);
    }),
    Field::value("include", |r, v, d| d.config.include = read_filter(r, v)),
    Field::value("exclude", |r, v, d| d.config.exclude = read_filter(r, v)),
    Field::section("harness", &HARNESS),
    Field::section("expose", &EXPOSE),
    Field::value("system_prompt", validate_string).agent_only(),
    Field::value("nats_context", validate_string).agent_only(),
    Field::section("llm", &LLM).agent_only(),
    Field::value("remote_agents", read_remote_agents).agent_only(),
    Field::value("remote_tools", read_remote_tools).agent_only(),
    Field::section("telemetry", &TELEMETRY),
]);

/// `telemetry` (OpenTelemetry export, docs/telemetry.md): a generated server exports spans and
/// metrics as `fisk mcp` does (`no_metrics` turns the metrics off); `capture` is checked and has
/// nothing to change (no content is exported).
static TELEMETRY: Section<Draft> = Section::new(&[
    Field::value("enabled", |r, v, d| {
        d.config.telemetry.enabled = r.bool(v).unwrap_or(false);
    }),
    Field::value("endpoint", |r, v, d| {
        d.config.telemetry.endpoint = r
            .string(v)
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
    }),
    Field::value("service_name", |r, v, d| {
        d.config.telemetry.service_name = r
            .string(v)
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
    }),
    Field::value("sample_ratio", |r, v, d| {
        let Some(raw) = r.string(v) else { return };
        match raw.trim().parse::<f64>() {
            Ok(ratio) if (0.0..=1.0).contains(&ratio) => {
                d.config.telemetry.sample_ratio = Some(ratio);
            }
            _ => {
                r.invalid(
                    v,
                    format!(
                        "invalid {} {raw:?}: must be a number between 0 and 1",
                        v.path
                    ),
                );
            }
        }
    }),
    Field::value("no_metrics", |r, v, d| {
        d.config.telemetry.no_metrics = r.bool(v).unwrap_or(false);
    }),
    Field::section("capture", &TELEMETRY_CAPTURE),
]);

static TELEMETRY_CAPTURE: Section<Draft> = Section::new(&[
    Field::value("enabled", validate_bool),
    Field::value("messages", validate_string),
    Field::value("max_bytes", validate_int),
]);

/// An integer nobody reads here (an agent-only setting): only its type is checked.
fn validate_int(r: &mut Reader, v: Value<'_>, _: &mut Draft) {
    r.int(v);
}

/// A duration nobody reads here: only its syntax is checked.
fn validate_duration(r: &mut Reader, v: Value<'_>, _: &mut Draft) {
    read_duration(r, v);
}

static HARNESS: Section<Draft> = Section::new(&[
    Field::value("confirm_tags", |r, v, d| {
        d.config.harness.confirm_tags = normalized(r.strings(v), str::trim);
    }),
    Field::value("tools", read_harness_tools),
    Field::section("knowledge", &KNOWLEDGE),
    Field::section("human_in_the_loop", &HUMAN_IN_THE_LOOP).agent_only(),
    Field::section("memory", &MEMORY).agent_only(),
    Field::section("sessions", &SESSIONS).agent_only(),
    Field::section("pii", &PII).agent_only(),
    Field::value("no_tui", validate_bool).agent_only(),
    Field::value("no_bell", validate_bool).agent_only(),
    Field::value("tool_timeout", validate_duration).agent_only(),
]);

static HUMAN_IN_THE_LOOP: Section<Draft> = Section::new(&[Field::value("enabled", |r, v, d| {
    d.config.harness.human_in_the_loop = r.bool(v).unwrap_or(false);
})]);

static MEMORY: Section<Draft> = Section::new(&[
    Field::value("enabled", |r, v, d| {
        d.config.harness.memory = r.bool(v).unwrap_or(false)
    }),
    Field::value("backend", validate_string),
    Field::value("no_index", validate_bool),
    Field::value("read_only", validate_bool),
    Field::value("options", read_options),
]);

static PII: Section<Draft> = Section::new(&[Field::value("mode", validate_pii_mode)]);

static SESSIONS: Section<Draft> = Section::new(&[
    Field::value("backend", validate_string),
    Field::value("options", read_options),
]);

static KNOWLEDGE: Section<Draft> = Section::new(&[
    Field::value("enabled", |r, v, d| {
        d.config.harness.knowledge.enabled = r.bool(v).unwrap_or(false);
    }),
    Field::value("directory", |r, v, d| {
        d.config.harness.knowledge.directory = r.string(v).filter(|dir| !dir.is_empty());
    }),
    Field::value("top_k", |r, v, d| {
        d.config.harness.knowledge.top_k = r.int(v).filter(|&k| k > 0).unwrap_or(DEFAULT_TOP_K);
    }),
    Field::value("max_injected_tokens", |r, v, d| {
        d.config.harness.knowledge.max_injected_tokens = r
            .int(v)
            .filter(|&n| n > 0)
            .unwrap_or(DEFAULT_INJECTED_TOKENS);
    }),
    Field::value("paths", |r, v, d| {
        d.config.harness.knowledge.paths = normalized(r.strings(v), str::trim);
    }),
    Field::section("embeddings", &EMBEDDINGS).on_enter(|_, v, d| {
        d.embeddings = Some(EmbeddingsDraft {
            pos: v.key_pos,
            ..Default::default()
        })
    }),
]);

static EMBEDDINGS: Section<Draft> = Section::new(&[
    Field::value("base_url", read_base_url),
    Field::value("model", |r, v, d| {
        d.embeddings().model = r.string(v).filter(|m| !m.is_empty())
    }),
    Field::value("api_key_env", |r, v, d| {
        d.embeddings().api_key_env = r.string(v).and_then(|name| env_name(r, v, &name));
    }),
    Field::value("timeout", |r, v, d| {
        d.embeddings().timeout = read_embeddings_timeout(r, v)
    }),
    Field::value("query_prefix", |r, v, d| {
        d.embeddings().query_prefix = r.string(v).unwrap_or_default();
    }),
    Field::value("document_prefix", |r, v, d| {
        d.embeddings().document_prefix = r.string(v).unwrap_or_default();
    }),
]);

static EXPOSE: Section<Draft> = Section::new(&[Field::section("agent", &AGENT)]);

static AGENT: Section<Draft> = Section::new(&[
    Field::section("mcp", &MCP).on_enter(|_, _, d| d.config.mcp = Some(McpConfig::default())),
    Field::section("tools", &EXPOSED_TOOLS),
    Field::value("agent_to_agent", validate_bool).agent_only(),
    Field::section("a2a", &A2A).agent_only(),
    Field::section("jobs", &JOBS).agent_only(),
]);

static JOBS: Section<Draft> = Section::new(&[
    Field::value("queue", validate_string),
    Field::value("task_type", validate_string),
    Field::value("workers", validate_int),
    Field::value("nats_context", validate_string),
    Field::value("max_payload", validate_int),
]);

static EXPOSED_TOOLS: Section<Draft> = Section::new(&[
    Field::value("include", |r, v, d| {
        d.config.expose_include = read_filter(r, v)
    }),
    Field::value("exclude", |r, v, d| {
        d.config.expose_exclude = read_filter(r, v)
    }),
]);

static MCP: Section<Draft> = Section::new(&[
    Field::value("port", |r, v, d| d.mcp().port = read_port(r, v)),
    Field::value("address", |r, v, d| {
        d.mcp().address = r
            .string(v)
            .map(|a| a.trim().to_string())
            .filter(|a| !a.is_empty());
    }),
    Field::value("instructions", |r, v, d| {
        d.mcp().instructions = r.string(v).filter(|text| !text.trim().is_empty());
    }),
    Field::value("confirm_over_mcp", |r, v, d| {
        d.mcp().confirm = read_confirm_mode(r, v)
    }),
    Field::value("catalog", |r, v, d| {
        d.mcp().catalog = read_catalog_mode(r, v)
    }),
    Field::value("group_tag_prefix", |r, v, d| {
        d.mcp().group_tag_prefix = read_group_tag_prefix(r, v)
    }),
    Field::value("tool_prefix", |r, v, d| {
        d.mcp().tool_prefix = read_tool_prefix(r, v)
    }),
    Field::value("tool_names", |r, v, d| {
        d.mcp().tool_names = read_tool_names(r, v)
    }),
    Field::value("allow_long_names", |r, v, d| {
        d.mcp().allow_long_names = r.bool(v).unwrap_or(false)
    }),
    Field::value("builtins", |r, v, d| {
        d.mcp().builtins = read_builtins(r, v);
        d.builtins = Some(v.key_pos);
    }),
    Field::value("max_concurrent_tools", |r, v, d| {
        d.mcp().max_concurrent_tools = read_concurrency(r, v).unwrap_or(DEFAULT_CONCURRENCY);
    }),
    Field::value("tool_timeout", |r, v, d| {
        d.mcp().tool_timeout = read_tool_timeout(r, v).unwrap_or(DEFAULT_TIMEOUT);
    }),
    Field::value("hint_tags", |r, v, d| {
        d.mcp().hint_tags = read_hint_tags(r, v)
    }),
    Field::value("param_headers", |r, v, d| {
        d.mcp().param_headers = read_param_headers(r, v)
    }),
    Field::value("ask", |r, v, d| d.mcp().ask = super::ask::read_ask(r, v)),
    Field::value("allowed_hosts", |r, v, d| {
        d.mcp().allowed_hosts = normalized(r.strings(v), str::trim)
    }),
    Field::value("allowed_origins", |r, v, d| {
        d.mcp().allowed_origins = normalized(r.strings(v), str::trim);
    }),
    Field::section("auth", &AUTH).on_enter(|_, v, d| d.auth = Some(AuthDraft::at(v.key_pos))),
    Field::value("stateless", |r, v, d| {
        d.mcp().stateless = r.bool(v).unwrap_or(false)
    }),
    Field::value("scrub_env", |r, v, d| {
        d.mcp().scrub_env = read_env_names(r, v)
    }),
    Field::value("structured_output", |r, v, d| {
        d.mcp().structured_output = r.bool(v).unwrap_or(true)
    }),
    Field::value("output_schema", |r, v, d| {
        d.mcp().output_schema = r.bool(v).unwrap_or(false)
    }),
    Field::value("exit_code_is_error", |r, v, d| {
        d.mcp().exit_code_is_error = r.bool(v).unwrap_or(false)
    }),
    Field::value("page_size", |r, v, d| {
        d.mcp().page_size = read_page_size(r, v).unwrap_or(DEFAULT_PAGE_SIZE);
    }),
    Field::value("resources", |r, v, d| {
        d.mcp().resources = r.bool(v).unwrap_or(true)
    }),
    Field::value("prompts", |r, v, d| {
        d.mcp().prompts = r.bool(v).unwrap_or(true)
    }),
    Field::value("skills", |r, v, d| {
        d.mcp().skills = r.bool(v).unwrap_or(true)
    }),
    // Deprecated (docs/config.md): `page_size` sets every list; this one, when set, still sets
    // the resource and prompt lists as it always did.
    Field::value("list_page_size", |r, v, d| {
        d.mcp().list_page_size = read_page_size(r, v);
    }),
    Field::value("tasks", read_tasks),
]);

/// `expose.agent.mcp.tasks`: `false` switches tasks off, `true` (or leaving it out) keeps the
/// defaults, a mapping sets `after`, `ttl` and `max`.
fn read_tasks(r: &mut Reader, v: Value<'_>, d: &mut Draft) {
    match &v.node.kind {
        Kind::Map(_) | Kind::Null => {
            d.mcp().tasks.get_or_insert_with(TaskConfig::default);
            d.tasks = Some(v.key_pos);
            r.section(v, &TASKS, d);
        }
        Kind::Scalar(scalar)
            if scalar.plain && matches!(scalar.text.as_str(), "true" | "false") =>
        {
            d.mcp().tasks = (scalar.text == "true").then(TaskConfig::default);
        }
        _ => {
            r.invalid(
                v,
                format!(
                    "{} must be false (no tasks), true or a mapping of keys (after, ttl, max, required), \
                     found {}",
                    v.path,
                    v.node.describe()
                ),
            );
        }
    }
}

static TASKS: Section<Draft> = Section::new(&[
    Field::value("after", |r, v, d| {
        if let Some(after) = read_task_duration(r, v) {
            d.task().after = after;
            d.task_after = Some(v.node.pos);
        }
    }),
    Field::value("ttl", |r, v, d| {
        if let Some(ttl) = read_task_duration(r, v) {
            d.task().ttl = ttl;
        }
    }),
    Field::value("max", |r, v, d| {
        if let Some(max) = read_task_max(r, v) {
            d.task().max = max;
        }
    }),
    Field::value("required", |r, v, d| {
        // Normalised (trimmed, blanks and repeats dropped), each kept with its position: the
        // names are checked against the served tools once the application is known.
        let mut names: Vec<crate::config::Located> = Vec::new();
        for name in r.strings(v) {
            let text = name.text.trim();
            if !text.is_empty() && !names.iter().any(|seen| seen.text == text) {
                names.push(crate::config::Located {
                    text: text.to_string(),
                    line: name.pos.line,
                    column: name.pos.column,
                });
            }
        }
        d.mcp().task_required = names;
    }),
]);

static A2A: Section<Draft> = Section::new(&[
    Field::value("max_concurrent_tools", |r, v, _| {
        read_concurrency(r, v);
    }),
    Field::value("tool_timeout", |r, v, _| {
        read_tool_timeout(r, v);
    }),
    Field::value("serve_tools", validate_bool),
    Field::value("request_timeout", validate_duration),
    Field::section("prompts", &A2A_PROMPTS),
]);

static A2A_PROMPTS: Section<Draft> = Section::new(&[
    Field::value("workers", validate_int),
    Field::value("elicit", validate_bool),
]);

static LLM: Section<Draft> = Section::new(&[
    Field::value("model", validate_string),
    Field::value("provider", validate_string),
    Field::section("budget", &BUDGET),
    Field::section("thinking", &THINKING),
    Field::value("no_prompt_cache", validate_bool),
    Field::value("no_tool_search", validate_bool),
    Field::value("reasoning_effort", validate_string),
]);

static BUDGET: Section<Draft> = Section::new(&[
    Field::value("max_tokens", read_budget_count),
    Field::value("max_output_tokens", read_budget_count),
    Field::value("max_iterations", read_budget_count),
    Field::value("call_timeout", |r, v, _| {
        read_duration(r, v);
    }),
]);

static THINKING: Section<Draft> = Section::new(&[Field::value("enabled", validate_bool)]);
