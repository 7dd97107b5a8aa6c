//! The knowledge built-ins a config serves: with `harness.knowledge.enabled`, those
//! `expose.agent.mcp.builtins` lists (none when it lists none, with Fisk AI's note: `fisk mcp`
//! serves knowledge only to an allowlist), with a note for each enabled one the allowlist leaves
//! out and Fisk AI's note when it serves one of `knowledge_search` and `knowledge_enumerate`
//! alone.

use crate::config::Config;
use crate::ir::Builtin;

/// The knowledge built-ins to serve, in serving order; their notes go to `notes`.
pub(super) fn enabled(config: &Config, notes: &mut Vec<String>) -> Vec<Builtin> {
    if !config.harness.knowledge.enabled {
        return Vec::new();
    }
    let allowlist = config
        .mcp
        .as_ref()
        .map(|mcp| mcp.builtins.as_slice())
        .unwrap_or(&[]);
    if allowlist.is_empty() {
        // As `fisk mcp`: knowledge is served over MCP only when the allowlist opts in.
        notes.push(
            "knowledge is enabled but not exposed over MCP; add knowledge_search and \
             knowledge_enumerate to expose.agent.mcp.builtins to let MCP clients search your \
             knowledge base"
                .to_string(),
        );
        return Vec::new();
    }
    let mut out = Vec::new();
    for builtin in Builtin::KNOWLEDGE {
        if allowlist.iter().any(|name| name == builtin.name()) {
            out.push(builtin);
        } else {
            notes.push(format!(
                "built-in \"{}\" is enabled but not served: expose.agent.mcp.builtins does not \
                 list it",
                builtin.name()
            ));
        }
    }
    notes.extend(partial_knowledge_note(config));
    out
}

/// Fisk AI's note when the allowlist serves one of `knowledge_search` and
/// `knowledge_enumerate` without the other: legal, but each answers what the other cannot.
fn partial_knowledge_note(config: &Config) -> Option<String> {
    let listed = config.mcp.as_ref().map(|mcp| mcp.builtins.as_slice())?;
    let has = |name: &str| listed.iter().any(|listed| listed == name);
    let (search, enumerate) = ("knowledge_search", "knowledge_enumerate");
    match (has(search), has(enumerate)) {
        (true, false) => Some(format!(
            "{search} is exposed but {enumerate} is not; clients can rank results but cannot \
             tell an absent term from a low-scoring one. Add {enumerate} to \
             expose.agent.mcp.builtins to serve both"
        )),
        (false, true) => Some(format!(
            "{enumerate} is exposed but {search} is not; clients can find which documents \
             mention a term but cannot read any of it. Add {search} to \
             expose.agent.mcp.builtins to serve both"
        )),
        _ => None,
    }
}
