//! `fiskgen info`: the groups a server also serves alone on `/mcp/<group>`.

use crate::ir;

/// The served groups and their tool counts (`fiskgen_contract::groups`: what a server also
/// serves alone on `/mcp/<group>`, with the tags under `prefix` as groups too), when there are
/// any.
pub(super) fn line(tools: &[ir::Tool], prefix: Option<&str>) -> Option<String> {
    let each: Vec<Vec<String>> = tools
        .iter()
        .map(|tool| {
            let path: Option<Vec<&str>> = match &tool.kind {
                ir::ToolKind::Command(command) => {
                    Some(command.command.iter().map(String::as_str).collect())
                }
                ir::ToolKind::Builtin { .. } => None,
            };
            let tags: Vec<&str> = tool.tags.iter().map(String::as_str).collect();
            fiskgen_contract::groups::of_tool(path.as_deref(), &tags, prefix)
        })
        .collect();
    let groups = fiskgen_contract::groups::all(each.iter().cloned());
    if groups.is_empty() {
        return None;
    }
    let counted: Vec<String> = groups
        .iter()
        .map(|group| {
            let count = each.iter().filter(|of| of.contains(group)).count();
            format!("{group} ({count})")
        })
        .collect();
    Some(format!(
        "GROUPS, each also served alone at /mcp/<group> (--group NAME): {}.",
        counted.join(", ")
    ))
}
