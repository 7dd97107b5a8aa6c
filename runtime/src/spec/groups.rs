//! Which group a served tool is in (`fiskgen_contract::groups`, over a spec's command path):
//! what `/mcp/<group>`, `--group` and catalog mode's search read.

use crate::spec::app::{Run, ToolSpec};

/// The group of `tool`: the first word of its command, for a command below a top-level group;
/// a built-in tool has none.
pub(crate) fn group_of(tool: &ToolSpec) -> Option<String> {
    match &tool.run {
        Run::Command(command) => fiskgen_contract::groups::of_command(command.path),
        Run::Builtin(_) => None,
    }
}

/// The groups of `tools`, each once, in their order.
pub(crate) fn groups_of(tools: &[&ToolSpec]) -> Vec<String> {
    fiskgen_contract::groups::all(tools.iter().map(|tool| match &tool.run {
        Run::Command(command) => Some(command.path),
        Run::Builtin(_) => None,
    }))
}
