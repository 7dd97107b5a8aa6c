//! The application's overview as a skill (docs/resources.md, "Skills"): its help, the served
//! command groups, and the skills of its cheats. Made only when the application has no cheat
//! of its own (labelled with its name): that cheat is then its overview.

use fiskgen_contract::docs as uris;

use crate::ir::{self, Cheat, ToolKind};
use crate::model;

/// The overview of `model`, served as `tools` and with `cheats`; `None` when the application
/// has its own cheat, or neither help nor a served command to describe.
pub(super) fn overview(
    identity: &str,
    model: &model::Application,
    tools: &[ir::Tool],
    cheats: &[Cheat],
) -> Option<ir::Overview> {
    if model.cheats.contains_key(&model.name) {
        return None;
    }
    let served = |name: &str| {
        tools.iter().any(|tool| match &tool.kind {
            ToolKind::Command(command) => command.command.first().is_some_and(|c| c == name),
            ToolKind::Builtin { .. } => false,
        })
    };
    let commands: Vec<&model::Command> = model
        .commands
        .iter()
        .filter(|command| !command.hidden && served(&command.name))
        .collect();
    let help = model.help.trim();
    if help.is_empty() && commands.is_empty() {
        return None;
    }
    let description = help
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| {
            format!(
                "What {} does and how its commands are organised",
                model.name
            )
        });
    let mut text = format!("# {}\n", model.name);
    if !help.is_empty() {
        text.push_str(&format!("\n{help}\n"));
    }
    if !commands.is_empty() {
        text.push_str("\n## Commands\n\n");
        for command in commands {
            let line = command.help.lines().next().unwrap_or("").trim();
            let kind = if command.is_leaf() { "" } else { " ..." };
            if line.is_empty() {
                text.push_str(&format!("- `{} {}{kind}`\n", model.name, command.name));
            } else {
                text.push_str(&format!(
                    "- `{} {}{kind}`: {line}\n",
                    model.name, command.name
                ));
            }
        }
    }
    // The same names, in the same order, as the server gives the skills: the overview first.
    let names = uris::skill_names(
        std::iter::once(model.name.as_str()).chain(cheats.iter().map(|c| c.label.as_str())),
    );
    let skills: Vec<String> = cheats
        .iter()
        .zip(names.iter().skip(1))
        .filter_map(|(cheat, name)| {
            let name = name.as_ref()?;
            Some(format!(
                "- `{}`: {}\n",
                uris::skill_uri(identity, name),
                cheat.description
            ))
        })
        .collect();
    if !skills.is_empty() {
        text.push_str("\n## Cheat sheets\n\nEach is a skill of this server:\n\n");
        text.extend(skills);
    }
    Some(ir::Overview {
        label: model.name.clone(),
        description,
        text,
    })
}
