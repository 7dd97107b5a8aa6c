//! Warnings about a served catalog too large or too open for the clients that will read it:
//! more tools than a client session takes, a `tools/list` answer larger than a model's context
//! should spend on it, and commands that look destructive served with nothing gated (names
//! some APIs refuse are a problem, `names.rs`). Each is one warning that names the tools once
//! and says how to fix it.

use crate::config::Hint;
use crate::ir::{HintName, Tool, ToolKind};

/// VS Code's limit of tools per chat session.
pub const MAX_SESSION_TOOLS: usize = 128;
/// The size of the tool list above which a warning is given, in bytes.
pub const LARGE_LIST_BYTES: usize = 100 * 1024;
/// The longest tool name Claude's API (and other model APIs) accept: a longer one fails the
/// build unless `allow_long_names`.
pub const LONG_TOOL_NAME: usize = 64;

/// Command words that usually remove things (a path segment equal to one of them).
const DESTRUCTIVE_WORDS: &[&str] = &[
    "delete", "del", "rm", "remove", "purge", "drop", "destroy", "kill", "reset", "wipe", "erase",
    "truncate", "evict", "revoke", "rollback",
];

/// Tags that mark a command as changing state (`impact:rw`, natscli's).
const WRITE_TAGS: &[&str] = &["impact:rw", "impact:write", "impact:destructive"];

/// Every catalog warning for the served `tools`, in a fixed order.
pub(super) fn catalog_warnings(tools: &[Tool]) -> Vec<String> {
    [
        too_many_tools(tools),
        large_list(tools),
        ungated_destructive(tools),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn too_many_tools(tools: &[Tool]) -> Option<String> {
    (tools.len() > MAX_SESSION_TOOLS).then(|| {
        format!(
            "{} tools are served; VS Code uses at most {MAX_SESSION_TOOLS} tools in a session and \
             models choose worse among many: serve the commands your users need with include \
             (or exclude the rest), e.g. `include: {{tools: [\"^stream_\"]}}`",
            tools.len()
        )
    })
}

fn large_list(tools: &[Tool]) -> Option<String> {
    let infos: Vec<_> = tools.iter().map(Tool::info).collect();
    let bytes = serde_json::to_vec(&infos).map_or(0, |bytes| bytes.len());
    (bytes > LARGE_LIST_BYTES).then(|| {
        format!(
            "the tool list is {} KB (over {} KB): every client reads all of it into the model's \
             context at the start of a session; serve fewer tools with include/exclude",
            bytes / 1024,
            LARGE_LIST_BYTES / 1024
        )
    })
}

/// Served commands that look destructive while no served tool is gated behind the user's
/// approval.
fn ungated_destructive(tools: &[Tool]) -> Option<String> {
    if tools.iter().any(|tool| tool.confirm.is_some()) {
        return None;
    }
    let looking: Vec<&Tool> = tools
        .iter()
        .filter(|tool| looks_destructive(tool))
        .collect();
    if looking.is_empty() {
        return None;
    }
    let tags: Vec<&str> = WRITE_TAGS
        .iter()
        .copied()
        .filter(|tag| {
            looking
                .iter()
                .any(|tool| tool.tags.iter().any(|t| t == tag))
        })
        .collect();
    let fix = match tags.first() {
        Some(tag) => format!(
            "gate them with `harness: {{confirm_tags: [\"{tag}\"]}}` and mark them with \
             `expose.agent.mcp.hint_tags: {{\"{tag}\": [destructive]}}`, or exclude them"
        ),
        None => "gate them with an `ai:confirm` tag in the application or \
                 `harness.confirm_tags`, mark them with `hint_tags`, or exclude them"
            .to_string(),
    };
    let names: Vec<&str> = looking
        .iter()
        .take(8)
        .map(|tool| tool.name.as_str())
        .collect();
    let more = looking.len().saturating_sub(names.len());
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    Some(format!(
        "no tool is gated behind the user's approval, but {} served tool{} look{} destructive \
         ({}{more}): {fix}",
        looking.len(),
        if looking.len() == 1 { "" } else { "s" },
        if looking.len() == 1 { "s" } else { "" },
        names.join(", ")
    ))
}

/// A command with the destructive hint, a write tag, or a destructive word in its path; never
/// a read-only one.
fn looks_destructive(tool: &Tool) -> bool {
    let ToolKind::Command(command) = &tool.kind else {
        return false;
    };
    if tool.hints.contains(&HintName(Hint::ReadOnly)) {
        return false;
    }
    tool.hints.contains(&HintName(Hint::Destructive))
        || tool
            .tags
            .iter()
            .any(|tag| WRITE_TAGS.contains(&tag.as_str()))
        || command
            .command
            .iter()
            .any(|word| DESTRUCTIVE_WORDS.contains(&word.to_ascii_lowercase().as_str()))
}
