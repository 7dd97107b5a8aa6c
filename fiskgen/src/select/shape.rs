//! How one served tool is shaped from its command: its description, hints, confirmation
//! trigger and the exposed global flags merged into its input schema.

use std::collections::BTreeSet;

use crate::config::{Config, Hint};
use crate::ir::{Confirm, GlobalFlag, HintName, Tool, ToolKind};
use crate::model;

use super::CONFIRM_TAG;
use fiskgen_contract::surface::is_framework_flag;

pub(super) fn describe_origin(tool: &Tool) -> String {
    match &tool.kind {
        ToolKind::Command(_) => format!("command \"{}\"", tool.title),
        ToolKind::Builtin { .. } => format!("built-in \"{}\"", tool.name),
    }
}

/// A command's own flag or argument wins over a global flag of the same name.
pub(super) fn shadows(command: &model::Command, name: &str) -> bool {
    command.flags.iter().any(|flag| flag.name == name)
        || command.args.iter().any(|arg| arg.name == name)
}

/// The description sent to clients: help (short and long combined) and a `Tags:` line.
pub fn model_description(command: &model::Command) -> String {
    let help = combined_help(&command.help, &command.help_long);
    let tags = if command.tags.is_empty() {
        String::new()
    } else {
        format!("Tags: {}", command.tags.join(", "))
    };
    match (help.is_empty(), tags.is_empty()) {
        (false, false) => format!("{help}\n\n{tags}"),
        (false, true) => help,
        (true, _) => tags,
    }
}

/// Short help, long help, or both when neither contains the other.
pub(super) fn combined_help(short: &str, long: &str) -> String {
    match (short.is_empty(), long.is_empty()) {
        (true, _) => long.to_string(),
        (false, true) => short.to_string(),
        (false, false) if long.contains(short) => long.to_string(),
        (false, false) if short.contains(long) => short.to_string(),
        (false, false) => format!("{short}\n\n{long}"),
    }
}

/// Hints turned on by reserved `ai:*` tags and by `hint_tags`.
pub(super) fn hints(config: &Config, tags: &[String]) -> BTreeSet<HintName> {
    let mapped = config.mcp.as_ref().map(|mcp| &mcp.hint_tags);
    let mut hints = BTreeSet::new();
    for tag in tags {
        if let Some(hint) = Hint::ALL
            .into_iter()
            .find(|hint| hint.reserved_tag() == tag)
        {
            hints.insert(HintName(hint));
        }
        if let Some(mapped) = mapped.and_then(|map| map.get(tag)) {
            hints.extend(mapped.iter().copied().map(HintName));
        }
    }
    super::tags::resolve(&mut hints, tags);
    hints
}

/// `ai:confirm` when present, else the first of the tool's tags listed in `confirm_tags`.
pub(super) fn confirm_trigger(config: &Config, tags: &[String]) -> Option<Confirm> {
    let trigger = if tags.iter().any(|tag| tag == CONFIRM_TAG) {
        Some(CONFIRM_TAG)
    } else {
        tags.iter()
            .find(|tag| config.harness.confirm_tags.contains(tag))
            .map(String::as_str)
    };
    trigger.map(|trigger| Confirm {
        trigger: trigger.to_string(),
    })
}

/// Every non-hidden application flag that could be exposed, and whether it is.
pub(super) fn exposable_globals(
    model: &model::Application,
    exposed: &[&model::Flag],
) -> Vec<GlobalFlag> {
    model
        .flags
        .iter()
        .filter(|flag| !flag.hidden && !is_framework_flag(&flag.name))
        .map(|flag| GlobalFlag {
            name: flag.name.clone(),
            help: flag.help.clone(),
            exposed: exposed.iter().any(|e| e.name == flag.name),
            required: flag.required,
        })
        .collect()
}

pub(super) fn collect_tags<'m>(commands: &'m [model::Command], tags: &mut BTreeSet<&'m str>) {
    for command in commands {
        tags.extend(command.tags.iter().map(String::as_str));
        collect_tags(&command.commands, tags);
    }
}
