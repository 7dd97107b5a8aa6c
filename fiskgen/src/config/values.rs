//! How the values of single keys are read and checked: string lists, limits, durations,
//! environment variable names, `confirm_over_mcp`, `builtins`, `hint_tags`, `param_headers`.

use std::collections::BTreeMap;
use std::time::Duration;

use super::draft::{Draft, MAX_CONCURRENCY};
use super::reader::{Reader, Text, Value};
use super::yaml::{Kind, Pos};
use fiskgen_contract::{defaults, duration};

use super::{CatalogMode, ConfirmMode, HARNESS_TOOLS, Hint, KNOWLEDGE_TOOLS};
use crate::suggest::nearest;

/// `a, b and c`.
fn words(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [only] => (*only).to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Trims (with `clean`), drops empties and de-duplicates, keeping first-seen order.
pub(super) fn normalized(texts: Vec<Text>, clean: fn(&str) -> &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(texts.len());
    for text in &texts {
        let cleaned = clean(&text.text);
        if !cleaned.is_empty() && !out.iter().any(|seen| seen == cleaned) {
            out.push(cleaned.to_string());
        }
    }
    out
}

/// A string nobody reads here (an agent-only setting): only its type is checked.
pub(super) fn validate_string(r: &mut Reader, v: Value<'_>, _: &mut Draft) {
    r.string(v);
}

/// A boolean nobody reads here (an agent-only setting): only its type is checked.
pub(super) fn validate_bool(r: &mut Reader, v: Value<'_>, _: &mut Draft) {
    r.bool(v);
}

/// `harness.pii.mode` (agent-only): one of Fisk AI's modes, as it checks them.
pub(super) fn validate_pii_mode(r: &mut Reader, v: Value<'_>, _: &mut Draft) {
    let Some(raw) = r.string(v) else { return };
    let modes = ["redact", "reject", "off"];
    let mode = raw.trim().to_lowercase();
    if !mode.is_empty() && !modes.contains(&mode.as_str()) {
        let problem = r.invalid(
            v,
            format!("invalid harness.pii.mode {raw:?}: must be redact, reject or off"),
        );
        problem.help = nearest(&mode, modes).map(|near| format!("did you mean {near:?}?"));
    }
}

/// A backend's `options` block: opaque, decoded by the agent per backend.
pub(super) fn read_options(r: &mut Reader, v: Value<'_>, _: &mut Draft) {
    if matches!(v.node.kind, Kind::Scalar(_) | Kind::List(_)) {
        let found = v.node.describe();
        r.invalid(v, format!("{} must be a mapping, found {found}", v.path));
        return;
    }
    r.any(v);
}

/// A string that must be there: null, empty or blank is a problem saying it must name `what`
/// (a wrong type is reported as such). Trimmed.
pub(super) fn required_string(r: &mut Reader, v: Value<'_>, what: &str) -> Option<String> {
    let text = if v.node.is_null() {
        String::new()
    } else {
        r.string(v)?
    };
    let trimmed = text.trim();
    if trimmed.is_empty() {
        r.invalid(v, format!("{} must name {what}", v.path));
        return None;
    }
    Some(trimmed.to_string())
}

/// Letters, digits and `_`, not starting with a digit.
fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// An environment variable name (trimmed), or `None` after reporting why it is not one.
pub(super) fn env_name(r: &mut Reader, v: Value<'_>, raw: &str) -> Option<String> {
    env_name_at(r, v.path, v.node.pos, raw)
}

fn env_name_at(r: &mut Reader, path: &str, pos: Pos, raw: &str) -> Option<String> {
    let name = raw.trim();
    if name.is_empty() {
        return None;
    }
    if !is_env_name(name) {
        let message = format!(
            "invalid {path} {raw:?}: not an environment variable name (letters, digits and '_', \
             not starting with a digit)"
        );
        r.problem(path, pos, message);
        return None;
    }
    Some(name.to_string())
}

/// `scrub_env`: trimmed, de-duplicated, each a valid name.
pub(super) fn read_env_names(r: &mut Reader, v: Value<'_>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for text in r.strings(v) {
        if let Some(name) = env_name_at(r, &text.path, text.pos, &text.text)
            && !names.contains(&name)
        {
            names.push(name);
        }
    }
    names
}

/// A Go duration as signed nanoseconds, with its text; `None` when unset (null or `""`) or
/// unparseable (reported as `invalid <path> "<text>": <why>`).
pub(super) fn read_duration(r: &mut Reader, v: Value<'_>) -> Option<(String, i64)> {
    let raw = r.string(v).filter(|raw| !raw.is_empty())?;
    match duration::parse_nanos(&raw) {
        Ok(nanos) => Some((raw, nanos)),
        Err(error) => {
            r.invalid(v, format!("invalid {} {raw:?}: {error}", v.path));
            None
        }
    }
}

/// `tool_timeout` (MCP and a2a): `None` means the default (unset, `0`, or invalid).
pub(super) fn read_tool_timeout(r: &mut Reader, v: Value<'_>) -> Option<Duration> {
    let (raw, nanos) = read_duration(r, v)?;
    if nanos < 0 {
        r.invalid(
            v,
            format!("invalid {} {raw:?}: must not be negative", v.path),
        );
        return None;
    }
    u64::try_from(nanos)
        .ok()
        .filter(|&n| n > 0)
        .map(Duration::from_nanos)
}

/// `tasks.after` and `tasks.ttl`: positive, at most a week; `None` when unset or invalid.
pub(super) fn read_task_duration(r: &mut Reader, v: Value<'_>) -> Option<Duration> {
    let (raw, nanos) = read_duration(r, v)?;
    let limit = defaults::TASK_DURATION_LIMIT;
    match u64::try_from(nanos).map(Duration::from_nanos) {
        Ok(duration) if duration.is_zero() => {
            r.invalid(v, format!("invalid {} {raw:?}: must be positive", v.path));
            None
        }
        Ok(duration) if duration <= limit => Some(duration),
        Ok(_) => {
            r.invalid(
                v,
                format!("invalid {} {raw:?}: must be at most 168h (a week)", v.path),
            );
            None
        }
        Err(_) => {
            r.invalid(v, format!("invalid {} {raw:?}: must be positive", v.path));
            None
        }
    }
}

/// `tasks.max`: 1 to [`defaults::TASK_MAX_LIMIT`]; `None` when unset or invalid.
pub(super) fn read_task_max(r: &mut Reader, v: Value<'_>) -> Option<u32> {
    let n = r.int(v)?;
    let limit = defaults::TASK_MAX_LIMIT;
    match u32::try_from(n) {
        Ok(n) if (1..=limit).contains(&n) => Some(n),
        _ => {
            r.invalid(
                v,
                format!("invalid {} {n}: must be between 1 and {limit}", v.path),
            );
            None
        }
    }
}

/// `embeddings.timeout`: must be positive when set.
pub(super) fn read_embeddings_timeout(r: &mut Reader, v: Value<'_>) -> Option<Duration> {
    let (raw, nanos) = read_duration(r, v)?;
    match u64::try_from(nanos) {
        Ok(nanos) if nanos > 0 => Some(Duration::from_nanos(nanos)),
        _ => {
            r.invalid(v, format!("invalid {} {raw:?}: must be positive", v.path));
            None
        }
    }
}

/// `expose.agent.mcp.page_size` (items per page of every list) and its deprecated
/// `list_page_size` (the resource and prompt lists only): 1 to
/// [`fiskgen_contract::listing::MAX_PAGE_SIZE`]; `None` means the default (unset or invalid).
pub(super) fn read_page_size(r: &mut Reader, v: Value<'_>) -> Option<usize> {
    let n = r.int(v)?;
    let max = fiskgen_contract::listing::MAX_PAGE_SIZE;
    match usize::try_from(n) {
        Ok(size) if (1..=max).contains(&size) => Some(size),
        _ => {
            r.invalid(
                v,
                format!("invalid {} {n}: must be between 1 and {max}", v.path),
            );
            None
        }
    }
}

/// `max_concurrent_tools` (MCP and a2a): `None` means the default (unset, `0`, or invalid).
pub(super) fn read_concurrency(r: &mut Reader, v: Value<'_>) -> Option<u32> {
    let n = r.int(v)?;
    if n < 0 {
        r.invalid(v, format!("invalid {} {n}: must not be negative", v.path));
        return None;
    }
    if n > MAX_CONCURRENCY {
        r.invalid(
            v,
            format!("invalid {} {n}: must not exceed {MAX_CONCURRENCY}", v.path),
        );
        return None;
    }
    u32::try_from(n).ok().filter(|&n| n > 0)
}

/// `llm.budget` counts: validated only (agent-only).
pub(super) fn read_budget_count(r: &mut Reader, v: Value<'_>, _: &mut Draft) {
    if let Some(n) = r.int(v).filter(|&n| n < 0) {
        r.invalid(v, format!("invalid {} {n}: must not be negative", v.path));
    }
}

/// `port`: 0 is unset, otherwise 1..=65535.
pub(super) fn read_port(r: &mut Reader, v: Value<'_>) -> Option<u16> {
    let n = r.int(v)?;
    if n == 0 {
        return None;
    }
    let port = u16::try_from(n).ok();
    if port.is_none() {
        r.invalid(
            v,
            format!("invalid {} {n}: must be between 1 and 65535", v.path),
        )
        .help =
            Some("0 or no port means the default, 8080 (or --port / FISK_AI_MCP_PORT)".to_string());
    }
    port
}

/// `confirm_over_mcp`: trimmed and lower-cased; empty is `auto`.
pub(super) fn read_confirm_mode(r: &mut Reader, v: Value<'_>) -> ConfirmMode {
    let Some(raw) = r.string(v) else {
        return ConfirmMode::Auto;
    };
    match raw.trim().to_lowercase().as_str() {
        "" | "auto" => ConfirmMode::Auto,
        "always" => ConfirmMode::Always,
        "never" => ConfirmMode::Never,
        other => {
            let problem = r.invalid(
                v,
                format!("invalid confirm_over_mcp {raw:?}: must be auto, always or never"),
            );
            problem.help = nearest(other, ["auto", "always", "never"])
                .map(|near| format!("did you mean {near:?}?"));
            ConfirmMode::Auto
        }
    }
}

/// `catalog`: trimmed and lower-cased; empty is `list`.
pub(super) fn read_catalog_mode(r: &mut Reader, v: Value<'_>) -> CatalogMode {
    let Some(raw) = r.string(v) else {
        return CatalogMode::List;
    };
    match raw.trim().to_lowercase().as_str() {
        "" | "list" => CatalogMode::List,
        "search" => CatalogMode::Search,
        other => {
            let problem = r.invalid(
                v,
                format!(
                    "invalid catalog {raw:?}: must be list (every tool in tools/list) or search \
                     (four fixed tools that find, describe and run them)"
                ),
            );
            problem.help =
                nearest(other, ["list", "search"]).map(|near| format!("did you mean {near:?}?"));
            CatalogMode::List
        }
    }
}

/// `group_tag_prefix`: a non-empty prefix, as written (`area:`).
pub(super) fn read_group_tag_prefix(r: &mut Reader, v: Value<'_>) -> Option<String> {
    let raw = r.string(v)?;
    if raw.trim().is_empty() {
        r.invalid(
            v,
            "group_tag_prefix is empty: give the prefix of the tags that name groups, e.g. \"area:\""
                .to_string(),
        );
        return None;
    }
    Some(raw)
}

/// `builtins`: trimmed, de-duplicated, each one of the knowledge tools.
pub(super) fn read_builtins(r: &mut Reader, v: Value<'_>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for text in r.strings(v) {
        let name = text.text.trim();
        if name.is_empty() || names.iter().any(|seen| seen == name) {
            continue;
        }
        if !KNOWLEDGE_TOOLS.contains(&name) {
            let message = format!(
                "{}: {name:?} cannot be exposed over MCP; the exposable built-ins are the \
                 read-only knowledge tools {}",
                v.path,
                words(&KNOWLEDGE_TOOLS)
            );
            r.problem(&text.path, text.pos, message).help = builtin_hint(name);
            continue;
        }
        names.push(name.to_string());
    }
    names
}

/// What the user may have meant by a name that is not a knowledge tool.
fn builtin_hint(name: &str) -> Option<String> {
    if let Some(near) = nearest(name, KNOWLEDGE_TOOLS) {
        return Some(format!("did you mean {near:?}?"));
    }
    if HARNESS_TOOLS.contains(&name) {
        return Some(format!(
            "{name} is enabled by listing it under harness.tools, not here"
        ));
    }
    if name.starts_with("memory_") || name.starts_with("ask_human_") {
        return Some(
            "the memory and human-in-the-loop tools exist only in an agent run".to_string(),
        );
    }
    None
}

/// `hint_tags`: each app tag maps to one hint name or a list of them.
pub(super) fn read_hint_tags(r: &mut Reader, v: Value<'_>) -> BTreeMap<String, Vec<Hint>> {
    let mut tags: BTreeMap<String, Vec<Hint>> = BTreeMap::new();
    let expected =
        "a mapping of app tags to hints (read_only, destructive, idempotent, open_world)";
    r.map(v, expected, |r, tag, entry| {
        let tag = tag.trim();
        if tag.is_empty() {
            let message = format!("{} has an empty tag", v.path);
            r.problem(entry.path, entry.key_pos, message);
            return;
        }
        let known = tags.entry(tag.to_string()).or_default();
        for hint in read_hints(r, tag, entry) {
            if !known.contains(&hint) {
                known.push(hint);
            }
        }
    });
    tags
}

/// The hints one `hint_tags` entry names.
fn read_hints(r: &mut Reader, tag: &str, entry: Value<'_>) -> Vec<Hint> {
    let names = r.string_or_strings(entry);
    if matches!(entry.node.kind, Kind::Map(_)) {
        return Vec::new(); // reported as a wrong type
    }
    if names.iter().all(|name| name.text.trim().is_empty()) {
        r.problem(
            entry.path,
            entry.key_pos,
            format!("hint_tags: tag {tag:?} names no hint"),
        );
        return Vec::new();
    }
    let mut hints = Vec::new();
    for name in names {
        let trimmed = name.text.trim();
        match Hint::from_name(trimmed) {
            Some(hint) => hints.push(hint),
            None if trimmed.is_empty() => {}
            None => {
                let all: Vec<&str> = Hint::ALL.iter().map(|hint| hint.name()).collect();
                let message = format!(
                    "unknown hint {trimmed:?} for tag {tag:?}: the hints are {}",
                    words(&all)
                );
                r.problem(&name.path, name.pos, message).help =
                    nearest(trimmed, all.iter().copied())
                        .map(|near| format!("did you mean {near:?}?"));
            }
        }
    }
    hints
}

/// `embeddings.base_url`: an http or https URL (kept even when invalid, which is reported
/// here, so that it does not also count as missing).
pub(super) fn read_base_url(r: &mut Reader, v: Value<'_>, d: &mut Draft) {
    let url = r
        .string(v)
        .map(|url| url.trim().to_string())
        .filter(|url| !url.is_empty());
    if let Some(url) = &url
        && !(url.starts_with("http://") || url.starts_with("https://"))
    {
        let message = format!(
            "invalid {} {url:?}: must be an http:// or https:// URL",
            v.path
        );
        r.invalid(v, message);
    }
    d.embeddings().base_url = url;
}

/// The identity pattern `^[a-zA-Z0-9_-]+$`.
pub(super) fn is_identity(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// `param_headers`: per tool, per parameter, the name of the HTTP header the parameter's value
/// is mirrored in (SEP-2243 `x-mcp-header`). A header name is an RFC 9110 token, unique per
/// tool whatever its case; whether the tool and the parameter exist is checked when the
/// commands are lowered (`crate::lower`).
pub(super) fn read_param_headers(
    r: &mut Reader,
    v: Value<'_>,
) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut tools = BTreeMap::new();
    r.map(
        v,
        "a mapping of tool names to {parameter: header}",
        |r, tool, params| {
            let mut headers: BTreeMap<String, String> = BTreeMap::new();
            r.map(params, "a mapping of parameter names to header names", |r, param, header| {
            let Some(name) = r.string(header) else {
                if matches!(header.node.kind, Kind::Null) {
                    let message = format!("{} names no header", header.path);
                    r.problem(header.path, header.key_pos, message);
                }
                return;
            };
            let name = name.trim().to_string();
            if name.is_empty() {
                let message = format!("{} names no header", header.path);
                r.problem(header.path, header.key_pos, message);
                return;
            }
            if let Some(bad) = name.chars().find(|c| !is_token_char(*c)) {
                let message = format!(
                    "invalid {} {name:?}: a header name is a non-empty HTTP token (letters, \
                     digits and !#$%&'*+-.^_`|~), found {bad:?}; the client sends it as \
                     `Mcp-Param-<name>`",
                    header.path
                );
                r.problem(header.path, header.key_pos, message);
                return;
            }
            if let Some((other, _)) = headers.iter().find(|(_, h)| h.eq_ignore_ascii_case(&name)) {
                let message = format!(
                    "{}: header {name:?} is already used by parameter {other:?} of the same \
                     tool (header names are compared without case)",
                    header.path
                );
                r.problem(header.path, header.key_pos, message);
                return;
            }
            headers.insert(param.to_string(), name);
        });
            tools.insert(tool.to_string(), headers);
        },
    );
    tools
}

/// A character of an RFC 9110 token (`tchar`).
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}
