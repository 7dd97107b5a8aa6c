//! `fiskgen info`: how the served names differ from the commands' own names (`tool_prefix`,
//! `tool_names`), which the config's other keys use.

use crate::ir;

/// The `NAMES` line, when any served name differs from its command's own name: the prefix,
/// and each renamed tool with its own name.
pub(super) fn line(tools: &[ir::Tool], prefix: &str) -> Option<String> {
    let renamed: Vec<String> = tools
        .iter()
        .filter_map(|tool| {
            let own = tool.command_name()?;
            (tool.name != format!("{prefix}{own}")).then(|| format!("{} ({own})", tool.name))
        })
        .collect();
    let mut parts = Vec::new();
    if !prefix.is_empty() {
        parts.push(format!(
            "tool_prefix {prefix:?} before each command's own name"
        ));
    }
    if !renamed.is_empty() {
        parts.push(format!("renamed by tool_names: {}", renamed.join(", ")));
    }
    (!parts.is_empty()).then(|| {
        format!(
            "NAMES: {}; the config's other keys use the own names.",
            parts.join("; ")
        )
    })
}
