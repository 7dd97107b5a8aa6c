//! The keys that name the served tools as clients see them: `tool_prefix`, `tool_names` and
//! `allow_long_names` (docs/config.md, "Tool names"). Each value is checked here against the
//! MCP tool-name rule (`fiskgen_contract::surface`); whether a renamed tool exists, and whether
//! the final names are unique and short enough, is decided once the tools are known
//! (`crate::select`).

use fiskgen_contract::surface::{MAX_TOOL_NAME, is_valid_tool_name};

use super::Located;
use super::reader::{Reader, Value};
use super::yaml::Kind;

/// Whether a tool name can hold `c`.
fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

/// The first character of `text` that a tool name cannot hold.
fn bad_char(text: &str) -> Option<char> {
    text.chars().find(|c| !allowed(*c))
}

/// `tool_prefix`: characters a tool name may hold, as written (`""`: no prefix).
pub(super) fn read_tool_prefix(r: &mut Reader, v: Value<'_>) -> String {
    let Some(prefix) = r.string(v) else {
        return String::new();
    };
    if let Some(bad) = bad_char(&prefix) {
        r.invalid(
            v,
            format!(
                "invalid tool_prefix {prefix:?}: a tool name holds only A-Z a-z 0-9 _ . - \
                 (MCP's tool-name rule), found {bad:?}"
            ),
        )
        .help = Some(format!(
            "replace it, e.g. tool_prefix: {:?}",
            prefix
                .chars()
                .map(|c| if allowed(c) { c } else { '_' })
                .collect::<String>()
        ));
        return String::new();
    }
    if prefix.len() >= MAX_TOOL_NAME {
        r.invalid(
            v,
            format!(
                "tool_prefix is {} characters: a tool name is at most {MAX_TOOL_NAME}, prefix \
                 included; use a short prefix such as \"app_\"",
                prefix.len()
            ),
        );
        return String::new();
    }
    prefix
}

/// `tool_names`: `{<tool name the application gives>: <name served>}`, in file order; each
/// new name is a valid MCP tool name, and the entry keeps where its key is written.
pub(super) fn read_tool_names(r: &mut Reader, v: Value<'_>) -> Vec<(Located, String)> {
    let mut renames = Vec::new();
    r.map(
        v,
        "a mapping of tool names to the names clients see",
        |r, from, to| {
            let Some(name) = r.string(to) else {
                if matches!(to.node.kind, Kind::Null) {
                    let message = format!("{} gives no new name", to.path);
                    r.problem(to.path, to.key_pos, message).help = Some(format!(
                        "write the name clients see, e.g. {from}: my_{from}"
                    ));
                }
                return;
            };
            let name = name.trim().to_string();
            if !is_valid_tool_name(&name) {
                let why = match bad_char(&name) {
                    Some(bad) => format!("found {bad:?}"),
                    None => format!("it is {} characters", name.len()),
                };
                let message = format!(
                    "invalid {} {name:?}: a tool name is 1 to {MAX_TOOL_NAME} characters of A-Z \
                     a-z 0-9 _ . - (MCP's tool-name rule); {why}",
                    to.path
                );
                r.problem(to.path, to.key_pos, message);
                return;
            }
            let key = Located {
                text: from.trim().to_string(),
                line: to.key_pos.line,
                column: to.key_pos.column,
            };
            renames.push((key, name));
        },
    );
    renames
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::config::{Config, Problem, parse};

    fn read(yaml: &str) -> Result<Config, Vec<Problem>> {
        parse(yaml, Path::new("t.yaml")).map_err(|error| error.problems)
    }

    fn one_problem(yaml: &str) -> Problem {
        let mut problems = read(yaml).expect_err("the config is refused");
        assert_eq!(problems.len(), 1, "{problems:#?}");
        problems.remove(0)
    }

    #[test]
    fn prefix_renames_and_the_long_name_switch_are_read_as_written() {
        let yaml = "expose: {agent: {mcp: {tool_prefix: nats_, allow_long_names: true,\n  \
                    tool_names: {stream_info: info, ' kv_get ': kv.read}}}}\n";
        let config = read(yaml).expect("valid");
        let mcp = config.mcp.expect("mcp");
        assert_eq!(mcp.tool_prefix, "nats_");
        assert!(mcp.allow_long_names);
        let renames: Vec<(&str, &str, usize)> = mcp
            .tool_names
            .iter()
            .map(|(from, to)| (from.text.as_str(), to.as_str(), from.line))
            .collect();
        assert_eq!(
            renames,
            [("stream_info", "info", 2), ("kv_get", "kv.read", 2)]
        );
        let defaults = read("expose: {agent: {mcp: {}}}\n").expect("valid");
        let mcp = defaults.mcp.expect("mcp");
        assert!(mcp.tool_prefix.is_empty() && mcp.tool_names.is_empty());
        assert!(
            !mcp.allow_long_names,
            "long names fail the build unless allowed"
        );
    }

    #[test]
    fn a_prefix_with_a_character_no_tool_name_holds_is_refused_with_a_fixed_one() {
        let p = one_problem("expose: {agent: {mcp: {tool_prefix: 'nats: '}}}\n");
        assert_eq!(p.path, "expose.agent.mcp.tool_prefix");
        assert_eq!(
            p.message,
            "invalid tool_prefix \"nats: \": a tool name holds only A-Z a-z 0-9 _ . - (MCP's \
             tool-name rule), found ':'"
        );
        assert_eq!(
            p.help.as_deref(),
            Some("replace it, e.g. tool_prefix: \"nats__\"")
        );
        let long = "p".repeat(128);
        let p = one_problem(&format!(
            "expose: {{agent: {{mcp: {{tool_prefix: {long}}}}}}}\n"
        ));
        assert!(
            p.message.starts_with("tool_prefix is 128 characters"),
            "{p:?}"
        );
    }

    #[test]
    fn a_new_name_that_breaks_the_mcp_name_rule_is_refused_where_it_is_written() {
        let yaml = "expose:\n  agent:\n    mcp:\n      tool_names:\n        stream_info: \
                    'stream info'\n";
        let p = one_problem(yaml);
        assert_eq!(p.path, "expose.agent.mcp.tool_names.stream_info");
        assert_eq!((p.line, p.column), (5, 9));
        assert_eq!(
            p.message,
            "invalid expose.agent.mcp.tool_names.stream_info \"stream info\": a tool name is 1 \
             to 128 characters of A-Z a-z 0-9 _ . - (MCP's tool-name rule); found ' '"
        );
        let long = "n".repeat(129);
        let p = one_problem(&format!(
            "expose: {{agent: {{mcp: {{tool_names: {{a: {long}}}}}}}}}\n"
        ));
        assert!(p.message.ends_with("it is 129 characters"), "{p:?}");
        let p = one_problem("expose: {agent: {mcp: {tool_names: {a: }}}}\n");
        assert_eq!(p.message, "expose.agent.mcp.tool_names.a gives no new name");
        let p = one_problem("expose: {agent: {mcp: {tool_names: [a]}}}\n");
        assert_eq!(p.path, "expose.agent.mcp.tool_names");
    }
}
