//! The reserved `ai:` tags as Fisk AI's newest `fisk mcp` reads them: contradictory behaviour
//! tags resolve to the more dangerous reading, and a tag in the `ai:` namespace that nobody
//! knows (a typo such as `ai:readonly`) does nothing, so both are reported.

use std::collections::{BTreeMap, BTreeSet};

use crate::config::Hint;
use crate::ir::{HintName, Tool, ToolKind};
use crate::suggest::nearest;

use crate::ir::ADDITIVE_TAG;

/// Every `ai:` tag Fisk AI recognises, plus fiskgen's `ai:open_world`.
const KNOWN: &[&str] = &[
    "ai:deny",
    "ai:no_defer",
    "ai:confirm",
    "ai:read_only",
    "ai:destructive",
    ADDITIVE_TAG,
    "ai:idempotent",
    "ai:open_world",
];

/// Settles hints the way Fisk AI settles contradictory tags: a command that says it writes
/// (destructive, or additive) is not read-only, whatever else it says.
pub(super) fn resolve(hints: &mut BTreeSet<HintName>, tags: &[String]) {
    let writes =
        hints.contains(&HintName(Hint::Destructive)) || tags.iter().any(|tag| tag == ADDITIVE_TAG);
    if writes {
        hints.remove(&HintName(Hint::ReadOnly));
    }
}

/// The contradictory tag pairs a command carries, in Fisk AI's order.
fn conflicts(tags: &[String]) -> Vec<(&'static str, &'static str)> {
    let has = |tag: &str| tags.iter().any(|t| t == tag);
    let read_only = has("ai:read_only");
    let destructive = has("ai:destructive");
    let additive = has(ADDITIVE_TAG);
    let mut found = Vec::new();
    if read_only && destructive {
        found.push(("ai:read_only", "ai:destructive"));
    } else if read_only && additive {
        found.push(("ai:read_only", ADDITIVE_TAG));
    }
    if destructive && additive {
        found.push(("ai:destructive", ADDITIVE_TAG));
    }
    found
}

/// One warning per contradictory pair and per unknown `ai:` tag, naming the served commands
/// that carry it.
pub(super) fn tag_warnings(tools: &[Tool]) -> Vec<String> {
    let mut contradicting: BTreeMap<(&str, &str), Vec<&str>> = BTreeMap::new();
    let mut unknown: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for tool in tools {
        if !matches!(tool.kind, ToolKind::Command(_)) {
            continue;
        }
        for pair in conflicts(&tool.tags) {
            contradicting.entry(pair).or_default().push(&tool.name);
        }
        for tag in &tool.tags {
            if tag.starts_with("ai:") && !KNOWN.contains(&tag.as_str()) {
                let names = unknown.entry(tag).or_default();
                if !names.contains(&tool.name.as_str()) {
                    names.push(&tool.name);
                }
            }
        }
    }
    let mut warnings = Vec::new();
    for ((a, b), names) in contradicting {
        let reading = if b == ADDITIVE_TAG && a == "ai:destructive" {
            "destructive"
        } else {
            "not read-only"
        };
        warnings.push(format!(
            "{} carr{} both {a} and {b}, which contradict: served as {reading} (the more \
             dangerous reading, as fisk mcp does); fix the tags in the application",
            names.join(", "),
            if names.len() == 1 { "ies" } else { "y" },
        ));
    }
    for (tag, names) in unknown {
        let suggestion = nearest(tag, KNOWN.iter().copied())
            .map(|near| format!("; did you mean \"{near}\"?"))
            .unwrap_or_default();
        warnings.push(format!(
            "tag \"{tag}\" (on {}) is in the reserved ai: namespace but is no tag fisk knows, so \
             it does nothing{suggestion} (known: {})",
            names.join(", "),
            KNOWN.join(", ")
        ));
    }
    warnings
}
