//! Which groups a served tool is in (`fiskgen_contract::groups`, over a spec's command path,
//! its tags and the app's `group_tag_prefix`): what `/mcp/<group>`, `--group` and catalog
//! mode's search read.

use crate::spec::app::{AppSpec, Run, ToolSpec};

/// The command group of `tool`: the first word of its command, for a command below a
/// top-level group; a built-in tool has none.
pub(crate) fn group_of(tool: &ToolSpec) -> Option<String> {
    path(tool).and_then(fiskgen_contract::groups::of_command)
}

/// Every group of `tool` in `app`: its command group, then the groups its tags name under the
/// app's `group_tag_prefix`.
pub(crate) fn groups_of_tool(app: &AppSpec, tool: &ToolSpec) -> Vec<String> {
    fiskgen_contract::groups::of_tool(path(tool), tool.tags, app.settings.group_tag_prefix)
}

/// Whether `tool` of `app` is in `group`.
pub(crate) fn is_in(app: &AppSpec, tool: &ToolSpec, group: &str) -> bool {
    groups_of_tool(app, tool).iter().any(|g| g == group)
}

/// The groups of `tools` in `app`, each once, in their order.
pub(crate) fn groups_of(app: &AppSpec, tools: &[&ToolSpec]) -> Vec<String> {
    fiskgen_contract::groups::all(tools.iter().map(|tool| groups_of_tool(app, tool)))
}

fn path(tool: &ToolSpec) -> Option<&'static [&'static str]> {
    match &tool.run {
        Run::Command(command) => Some(command.path),
        Run::Builtin(_) => None,
    }
}
