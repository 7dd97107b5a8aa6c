//! Keys whose values are blocks of their own, each read against its own key table: tool
//! filters, `harness.tools` entries, and the agent-only `remote_agents` / `remote_tools` hosts
//! (validated as Fisk AI validates them).

use regex::Regex;

use super::draft::Draft;
use super::reader::{Field, Reader, Section, Text, Value, join};
use super::values::{is_identity, normalized};
use super::yaml::{Kind, Pos};
use super::{BuiltinToolConfig, HARNESS_TOOLS, ToolFilter};
use crate::suggest::nearest;

// ---------------------------------------------------------------------------------------------
// Tool filters.

static FILTER: Section<ToolFilter> = Section::new(&[
    Field::value("tools", |r, v, filter| {
        filter.tools = compile_patterns(r, v)
    }),
    Field::value("tags", |r, v, filter| {
        filter.tags = r.strings(v).into_iter().map(|text| text.text).collect();
    }),
]);

/// An `include`/`exclude` block: `{tools: [regex], tags: [string]}`.
pub(super) fn read_filter(r: &mut Reader, v: Value<'_>) -> ToolFilter {
    let mut filter = ToolFilter::default();
    r.section(v, &FILTER, &mut filter);
    filter
}

/// Every pattern compiled; each bad one is a problem at the pattern.
fn compile_patterns(r: &mut Reader, v: Value<'_>) -> Vec<Regex> {
    let mut patterns = Vec::new();
    for text in r.strings(v) {
        match Regex::new(&text.text) {
            Ok(regex) => patterns.push(regex),
            Err(error) => {
                let message = format!(
                    "invalid tool filter pattern {:?}: {}",
                    text.text,
                    regex_reason(&error)
                );
                r.problem(&text.path, text.pos, message);
            }
        }
    }
    patterns
}

/// The one-line reason in a `regex` error (its display spans several lines with a caret).
fn regex_reason(error: &regex::Error) -> String {
    let text = error.to_string();
    let last = text
        .lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .unwrap_or(&text);
    last.trim().trim_start_matches("error: ").to_string()
}

// ---------------------------------------------------------------------------------------------
// harness.tools.

/// One `harness.tools` entry as written.
#[derive(Default)]
struct ToolEntry {
    name: Name,
    confirm: bool,
    roots: Vec<String>,
    max_bytes: Option<u64>,
}

static TOOL_ENTRY: Section<ToolEntry> = Section::new(&[
    Field::value("name", |r, v, entry| entry.name = read_name(r, v)),
    Field::value("confirm", |r, v, entry| {
        entry.confirm = r.bool(v).unwrap_or(false)
    }),
    Field::value("roots", |r, v, entry| {
        entry.roots = normalized(r.strings(v), str::trim)
    }),
    Field::value("max_bytes", |r, v, entry| {
        entry.max_bytes = read_max_bytes(r, v)
    }),
    Field::section("options", &TOOL_OPTIONS),
]);

/// `options` of an entry, as Fisk AI's documentation writes them: `root` (one directory) and
/// `max_bytes`.
static TOOL_OPTIONS: Section<ToolEntry> = Section::new(&[
    Field::value("root", |r, v, entry| {
        if let Some(root) = r.string(v).map(|root| root.trim().to_string())
            && !root.is_empty()
            && !entry.roots.contains(&root)
        {
            entry.roots.push(root);
        }
    }),
    Field::value("max_bytes", |r, v, entry| {
        entry.max_bytes = read_max_bytes(r, v)
    }),
]);

/// A `name` key as written.
#[derive(Default)]
enum Name {
    /// Absent, null or blank.
    #[default]
    Missing,
    /// Not a string (already reported).
    WrongType,
    /// A non-blank string, trimmed.
    Given(Text),
}

fn read_name(r: &mut Reader, v: Value<'_>) -> Name {
    if v.node.is_null() {
        return Name::Missing;
    }
    match r.string(v) {
        None => Name::WrongType,
        Some(text) if text.trim().is_empty() => Name::Missing,
        Some(text) => Name::Given(located(text.trim().to_string(), v)),
    }
}

fn located(text: String, v: Value<'_>) -> Text {
    Text {
        text,
        path: v.path.to_string(),
        pos: v.node.pos,
    }
}

/// `max_bytes`: 0 is the tool's default; negative is an error.
fn read_max_bytes(r: &mut Reader, v: Value<'_>) -> Option<u64> {
    let n = r.int(v)?;
    if n < 0 {
        r.invalid(v, format!("invalid {} {n}: must not be negative", v.path));
    }
    u64::try_from(n).ok().filter(|&n| n > 0)
}

/// `harness.tools`: the enabled built-in tools, each named once.
pub(super) fn read_harness_tools(r: &mut Reader, v: Value<'_>, d: &mut Draft) {
    let mut seen: Vec<(String, usize)> = Vec::new();
    r.list(
        v,
        "a list of built-in tools such as read_file or {name: read_file}",
        |r, item| {
            let mut entry = ToolEntry::default();
            // A bare name (`- read_file`) is an entry with every setting at its default.
            if let Kind::Scalar(_) = item.node.kind {
                entry.name = read_name(r, item);
            } else if !r.section(item, &TOOL_ENTRY, &mut entry) {
                return;
            }
            if let Some(tool) = check_tool_entry(r, item, entry, &mut seen) {
                d.config.harness.tools.push(tool);
            }
        },
    );
}

/// A `harness.tools` entry's name: present, a known built-in, and not listed before.
fn check_tool_entry(
    r: &mut Reader,
    item: Value<'_>,
    entry: ToolEntry,
    seen: &mut Vec<(String, usize)>,
) -> Option<BuiltinToolConfig> {
    let known = HARNESS_TOOLS.join(" or ");
    let name = match entry.name {
        Name::Given(name) => name,
        Name::WrongType => return None,
        Name::Missing => {
            let message = format!("{} has no name: set name to {known}", item.path);
            r.invalid(item, message);
            return None;
        }
    };
    let trimmed = name.text.as_str();
    if !HARNESS_TOOLS.contains(&trimmed) {
        let message = format!(
            "unknown built-in tool {trimmed:?} in {}: harness.tools takes {known}",
            item.path
        );
        r.problem(&name.path, name.pos, message).help = tool_hint(trimmed);
        return None;
    }
    if let Some((_, first)) = seen.iter().find(|(seen, _)| seen == trimmed) {
        let message = format!(
            "harness.tools lists {trimmed} twice (lines {first} and {})",
            name.pos.line
        );
        r.problem(&name.path, name.pos, message);
        return None;
    }
    seen.push((trimmed.to_string(), name.pos.line));
    Some(BuiltinToolConfig {
        name: trimmed.to_string(),
        confirm: entry.confirm,
        roots: entry.roots,
        max_bytes: entry.max_bytes,
    })
}

fn tool_hint(name: &str) -> Option<String> {
    if let Some(near) = nearest(name, HARNESS_TOOLS) {
        return Some(format!("did you mean {near:?}?"));
    }
    if name.starts_with("knowledge") {
        return Some(
            "the knowledge tools are served with harness.knowledge.enabled: true".to_string(),
        );
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Agent-only lists, validated as Fisk AI validates them.

static REMOTE_AGENT: Section<()> = Section::new(&[
    Field::value("name", |r, v, _| {
        r.string(v);
    }),
    Field::value("alias", |r, v, _| {
        r.string(v);
    }),
]);

pub(super) fn read_remote_agents(r: &mut Reader, v: Value<'_>, _: &mut Draft) {
    r.list(v, "a list of remote agents ({name, alias})", |r, item| {
        r.section(item, &REMOTE_AGENT, &mut ());
    });
}

/// One `remote_tools` host as written.
#[derive(Default)]
struct RemoteTools {
    name: Name,
    alias: Option<Text>,
    exclude_tags: Option<Pos>,
}

static REMOTE_TOOLS: Section<RemoteTools> = Section::new(&[
    Field::value("name", |r, v, host| host.name = read_name(r, v)),
    Field::value("alias", |r, v, host| {
        host.alias = r.string(v).map(|text| located(text, v))
    }),
    Field::value("include", |r, v, _| {
        read_filter(r, v);
    }),
    Field::value("exclude", |r, v, host| {
        if !read_filter(r, v).tags.is_empty() {
            host.exclude_tags = Some(v.key_pos);
        }
    }),
]);

pub(super) fn read_remote_tools(r: &mut Reader, v: Value<'_>, _: &mut Draft) {
    r.list(
        v,
        "a list of remote tool hosts ({name, alias, include, exclude})",
        |r, item| {
            let mut host = RemoteTools::default();
            if r.section(item, &REMOTE_TOOLS, &mut host) {
                check_remote_tools(r, item, host);
            }
        },
    );
}

/// A host needs a valid name, a valid alias if any, and no `exclude.tags`.
fn check_remote_tools(r: &mut Reader, item: Value<'_>, host: RemoteTools) {
    let name = match host.name {
        Name::Given(name) => name,
        Name::WrongType => return,
        Name::Missing => {
            let message = format!("{}: remote_tools host is missing a name", item.path);
            r.invalid(item, message);
            return;
        }
    };
    if !is_identity(&name.text) {
        let message = format!(
            "remote_tools host name {:?} is invalid: it must contain only letters, digits, '-' or \
             '_' (it keys the NATS subjects)",
            name.text
        );
        r.problem(&name.path, name.pos, message);
    }
    if let Some(alias) = host
        .alias
        .filter(|alias| !alias.text.is_empty() && !is_identity(&alias.text))
    {
        let message = format!(
            "remote_tools host {:?} has an invalid alias {:?}: it must contain only letters, \
             digits, '-' or '_' (it prefixes imported tool names)",
            name.text, alias.text
        );
        r.problem(&alias.path, alias.pos, message);
    }
    if let Some(pos) = host.exclude_tags {
        let message = format!(
            "remote_tools host {:?} has an exclude.tags filter, which cannot be honored: discovery \
             does not carry tags, so a tool excluded by tag would be imported anyway; exclude by \
             tool name instead",
            name.text
        );
        r.problem(&join(item.path, "exclude"), pos, message);
    }
}
