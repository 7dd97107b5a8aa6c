//! `fiskgen info`: the command groups a server also serves alone on `/mcp/<group>`.

use crate::ir;

/// The served groups and their tool counts (`fiskgen_contract::groups`: what a server also
/// serves alone on `/mcp/<group>`), when there are any.
pub(super) fn line(tools: &[ir::Tool]) -> Option<String> {
    let paths: Vec<Vec<&str>> = tools
        .iter()
        .filter_map(|tool| match &tool.kind {
            ir::ToolKind::Command(command) => {
                Some(command.command.iter().map(String::as_str).collect())
            }
            ir::ToolKind::Builtin { .. } => None,
        })
        .collect();
    let groups = fiskgen_contract::groups::all(paths.iter().map(|path| Some(path.as_slice())));
    if groups.is_empty() {
        return None;
    }
    let counted: Vec<String> = groups
        .iter()
        .map(|group| {
            let count = paths
                .iter()
                .filter(|path| fiskgen_contract::groups::of_command(path).as_ref() == Some(group))
                .count();
            format!("{group} ({count})")
        })
        .collect();
    Some(format!(
        "GROUPS, each also served alone at /mcp/<group> (--group NAME): {}.",
        counted.join(", ")
    ))
}
