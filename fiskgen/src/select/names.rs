//! The names clients see (`tool_prefix`, `tool_names`, `allow_long_names`; docs/config.md,
//! "Tool names"), and the rules every served name follows: a valid MCP tool name, unique, and
//! no longer than the 64 characters Claude's API takes unless the config allows it.
//!
//! Every other key of the config names a command tool by its own name (the command path
//! joined with `_`): filters, `param_headers`, `ask`, `tasks.required`, `tool_names`' keys.
//! The served name is given last, after those are resolved, and is what the generated server
//! knows the tool by (its list, calls, `--tools`, catalog mode, task requirements). A rename
//! changes the name only: the command run is the same.

use std::collections::BTreeMap;
use std::path::Path;

use super::shape::describe_origin;
use super::{LONG_TOOL_NAME, MAX_TOOL_NAME, Selection, is_valid_tool_name};
use crate::config::{HARNESS_TOOLS, KNOWLEDGE_TOOLS, McpConfig};
use crate::ir::{Tool, ToolKind};
use crate::suggest::nearest;

/// Where a tool's served name comes from, for messages.
fn how_named(tool: &Tool, mcp: &McpConfig) -> String {
    let Some(own) = tool.command_name() else {
        return String::new();
    };
    if own == tool.name {
        String::new()
    } else if mcp.tool_names.iter().any(|(from, _)| from.text == own) {
        format!(", renamed from {own:?} by expose.agent.mcp.tool_names")
    } else {
        format!(", {own:?} with tool_prefix {:?}", mcp.tool_prefix)
    }
}

impl Selection {
    /// Gives each command tool in `self.tools` its served name: its `tool_names` entry as
    /// written, else `tool_prefix` before its own name. A `tool_names` key that is no served
    /// command is a problem naming the nearest one.
    pub(super) fn name_tools(&mut self, source: &Path, mcp: &McpConfig) {
        let own: Vec<String> = self.tools.iter().map(|tool| tool.name.clone()).collect();
        for (from, _) in &mcp.tool_names {
            if own.contains(&from.text) {
                continue;
            }
            let why = if HARNESS_TOOLS.contains(&from.text.as_str())
                || KNOWLEDGE_TOOLS.contains(&from.text.as_str())
            {
                " (built-in tools keep Fisk AI's names, which agents and the builtins key use)"
                    .to_string()
            } else if let Some(label) = self.removed.by(&from.text) {
                format!(" ({label} removes it)")
            } else {
                nearest(&from.text, own.iter().map(String::as_str))
                    .map(|near| format!("; did you mean {near:?}?"))
                    .unwrap_or_default()
            };
            self.problems.push(format!(
                "{}:{}:{}: expose.agent.mcp.tool_names renames tool {:?}, which is not a served \
                 command{why}",
                source.display(),
                from.line,
                from.column,
                from.text
            ));
        }
        for tool in &mut self.tools {
            if !matches!(tool.kind, ToolKind::Command(_)) {
                continue;
            }
            tool.name = match mcp
                .tool_names
                .iter()
                .find(|(from, _)| from.text == tool.name)
            {
                Some((_, to)) => to.clone(),
                None => format!("{}{}", mcp.tool_prefix, tool.name),
            };
        }
    }

    /// Served names must be valid MCP names, unique, and at most 64 characters unless
    /// `allow_long_names`. A command whose own name is not a valid one is skipped with a
    /// warning; one that the prefix made invalid, a name taken twice, and a long name are
    /// problems.
    pub(super) fn check_names(&mut self, mcp: &McpConfig) {
        let mut valid = Vec::with_capacity(self.tools.len());
        for tool in std::mem::take(&mut self.tools) {
            if is_valid_tool_name(&tool.name) {
                valid.push(tool);
            } else if tool
                .command_name()
                .is_some_and(|own| is_valid_tool_name(&own))
            {
                self.problems.push(format!(
                    "tool name \"{}\" (command \"{}\"{}) is over {MAX_TOOL_NAME} characters, \
                     the most MCP allows: shorten expose.agent.mcp.tool_prefix or rename the \
                     tool with expose.agent.mcp.tool_names",
                    tool.name,
                    tool.title,
                    how_named(&tool, mcp)
                ));
            } else {
                self.warnings.push(format!(
                    "skipping tool \"{}\" (command \"{}\"): not a valid MCP tool name (1 to \
                     {MAX_TOOL_NAME} characters of A-Z a-z 0-9 _ . -); serve it under a valid \
                     name with expose.agent.mcp.tool_names",
                    tool.name, tool.title
                ));
            }
        }
        let mut seen: BTreeMap<&str, &Tool> = BTreeMap::new();
        for tool in &valid {
            if let Some(first) = seen.insert(&tool.name, tool) {
                self.problems.push(format!(
                    "tool name \"{}\" is taken twice: by {}{} and by {}{}; rename one with \
                     expose.agent.mcp.tool_names or exclude one of them (include/exclude in the \
                     config)",
                    tool.name,
                    describe_origin(first),
                    how_named(first, mcp),
                    describe_origin(tool),
                    how_named(tool, mcp),
                ));
            }
        }
        let long: Vec<&Tool> = valid
            .iter()
            .filter(|tool| tool.name.len() > LONG_TOOL_NAME)
            .collect();
        if mcp.allow_long_names {
            if !long.is_empty() {
                let names: Vec<&str> = long.iter().map(|tool| tool.name.as_str()).collect();
                self.notes.push(format!(
                    "serving {} name{} over {LONG_TOOL_NAME} characters (allow_long_names), \
                     which Claude's API refuses: {}",
                    names.len(),
                    if names.len() == 1 { "" } else { "s" },
                    names.join(", ")
                ));
            }
        } else {
            for tool in long {
                let own = tool.command_name().unwrap_or_else(|| tool.name.clone());
                self.problems.push(format!(
                    "tool name \"{}\" (command \"{}\"{}) is {} characters, over the \
                     {LONG_TOOL_NAME} that Claude's API and other clients accept: rename it \
                     (expose.agent.mcp.tool_names: {{{own}: <shorter name>}}), shorten \
                     tool_prefix, exclude it, or serve long names anyway with \
                     allow_long_names: true",
                    tool.name,
                    tool.title,
                    how_named(tool, mcp),
                    tool.name.len()
                ));
            }
        }
        self.tools = valid;
    }
}

#[cfg(test)]
mod tests {
    //! Each naming rule on a small hand-written application; `tests/` calls a renamed tool
    //! through a real client.

    use std::path::Path;

    use serde_json::json;

    use crate::config;
    use crate::ir::{Server, ToolKind};
    use crate::model::Application;
    use crate::select::{App, SelectError, select};

    fn leaf(name: &str) -> serde_json::Value {
        json!({"name": name, "help": "", "tags": ["impact:rw"], "restricted_schema":
            {"type": "object", "additionalProperties": false, "properties": {}}})
    }

    /// An application with `stream info`, `stream rm`, `kv get` and `pub`.
    fn app() -> Application {
        let group = |name: &str, leaves: &[&str]| {
            json!({"name": name, "help": "", "restricted_schema": {},
                "commands": leaves.iter().map(|l| leaf(l)).collect::<Vec<_>>()})
        };
        let doc = json!({"name": "nats", "flags": [], "commands": [
            group("stream", &["info", "rm"]), group("kv", &["get"]), leaf("pub"),
        ]});
        serde_json::from_value(doc).expect("test model")
    }

    fn build(mcp: &str, rest: &str) -> Result<Server, SelectError> {
        let yaml = format!("{rest}expose:\n  agent:\n    mcp: {mcp}\n");
        let config = config::parse(&yaml, Path::new("app.yaml")).expect("test config parses");
        let model = app();
        select(
            &config,
            Some(App {
                path: Path::new("/bin/nats"),
                model: &model,
            }),
        )
    }

    fn names(server: &Server) -> Vec<&str> {
        server.tools.iter().map(|t| t.name.as_str()).collect()
    }

    fn refused(mcp: &str, rest: &str) -> Vec<String> {
        build(mcp, rest).expect_err("the build is refused").problems
    }

    #[test]
    fn the_prefix_goes_before_every_command_and_a_rename_is_served_as_written() {
        let mcp = "{tool_prefix: nats_, tool_names: {stream_info: info}, tasks: {required: \
                   [stream_info]}}";
        let harness = "harness: {tools: [{name: read_file}]}\n";
        let server = build(mcp, harness).expect("builds");
        assert_eq!(
            names(&server),
            [
                "info",
                "nats_stream_rm",
                "nats_kv_get",
                "nats_pub",
                "read_file"
            ],
            "a rename is the whole name; built-ins keep Fisk AI's names"
        );
        let info = &server.tools[0];
        let ToolKind::Command(command) = &info.kind else {
            panic!("a command")
        };
        assert_eq!(command.command, ["stream", "info"], "the same command runs");
        assert_eq!(info.command_name().as_deref(), Some("stream_info"));
        assert_eq!(info.title, "stream info");
        let text = crate::info::render_text(&server, 200);
        assert!(
            text.contains(
                "NAMES: tool_prefix \"nats_\" before each command's own name; renamed by \
                 tool_names: info (stream_info); the config's other keys use the own names."
            ),
            "{text}"
        );
        let tasks = server.tasks.expect("tasks on");
        assert_eq!(
            tasks.required,
            ["info"],
            "tasks.required names the own name"
        );
    }

    #[test]
    fn a_rename_of_a_tool_that_is_not_served_names_the_nearest_or_what_removed_it() {
        let problems = refused(
            "\n      tool_names:\n        stream_inf: si\n        read_file: rf\n        \
             kv_get: g",
            "exclude: {tools: [\"^kv_\"]}\n",
        );
        assert_eq!(
            problems,
            [
                "app.yaml:6:9: expose.agent.mcp.tool_names renames tool \"stream_inf\", which is \
                 not a served command; did you mean \"stream_info\"?",
                "app.yaml:7:9: expose.agent.mcp.tool_names renames tool \"read_file\", which is \
                 not a served command (built-in tools keep Fisk AI's names, which agents and \
                 the builtins key use)",
                "app.yaml:8:9: expose.agent.mcp.tool_names renames tool \"kv_get\", which is not \
                 a served command (exclude removes it)",
            ]
        );
    }

    #[test]
    fn a_key_that_names_a_tool_by_its_served_name_is_told_to_use_the_own_name() {
        let problems = refused(
            "\n      tool_prefix: nats_\n      tool_names: {stream_info: info}\n      tasks: \
             {required: [info, nats_kv_get]}",
            "",
        );
        assert_eq!(
            problems,
            [
                "app.yaml:6:26: expose.agent.mcp.tasks.required names tool \"info\", which is \
                 not a served command (built-in tools always answer on their request); \"info\" \
                 is the name \"stream_info\" is served as, and the config names tools by their \
                 own names: write \"stream_info\"",
                "app.yaml:6:32: expose.agent.mcp.tasks.required names tool \"nats_kv_get\", \
                 which is not a served command (built-in tools always answer on their request); \
                 \"nats_kv_get\" is the name \"kv_get\" is served as, and the config names \
                 tools by their own names: write \"kv_get\"",
            ]
        );
    }

    #[test]
    fn two_tools_under_one_name_fail_and_say_how_each_got_it() {
        let problems = refused("{tool_names: {stream_info: pub}}", "");
        assert_eq!(
            problems,
            [
                "tool name \"pub\" is taken twice: by command \"stream info\", renamed from \
              \"stream_info\" by expose.agent.mcp.tool_names and by command \"pub\"; rename one \
              with expose.agent.mcp.tool_names or exclude one of them (include/exclude in the \
              config)"
            ]
        );
        let problems = refused(
            "{tool_prefix: read_, tool_names: {pub: base64_encode}}",
            "harness: {tools: [{name: read_file}, {name: base64_encode}]}\n",
        );
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert!(
            problems[0].starts_with(
                "tool name \"base64_encode\" is taken twice: by command \"pub\", renamed from \
                 \"pub\" by expose.agent.mcp.tool_names and by built-in \"base64_encode\""
            ),
            "{problems:#?}"
        );
    }

    #[test]
    fn a_name_over_64_characters_fails_unless_renamed_or_allowed() {
        let prefix = "p".repeat(56);
        let problems = refused(&format!("{{tool_prefix: {prefix}}}"), "");
        let long = format!("{prefix}stream_info");
        assert_eq!(
            problems.len(),
            2,
            "stream_info and stream_rm: {problems:#?}"
        );
        assert_eq!(
            problems[0],
            format!(
                "tool name \"{long}\" (command \"stream info\", \"stream_info\" with tool_prefix \
                 \"{prefix}\") is 67 characters, over the 64 that Claude's API and other clients \
                 accept: rename it (expose.agent.mcp.tool_names: {{stream_info: <shorter \
                 name>}}), shorten tool_prefix, exclude it, or serve long names anyway with \
                 allow_long_names: true"
            )
        );
        let renamed =
            format!("{{tool_prefix: {prefix}, tool_names: {{stream_info: si, stream_rm: srm}}}}");
        let server = build(&renamed, "").expect("renamed, nothing is long");
        assert_eq!(names(&server)[..2], ["si", "srm"]);
        let allowed = format!("{{tool_prefix: {prefix}, allow_long_names: true}}");
        let server = build(&allowed, "").expect("allowed");
        assert_eq!(names(&server)[0], long);
        assert!(
            server.notes.iter().any(|note| note.starts_with(
                "serving 2 names over 64 characters (allow_long_names), which Claude's API \
                 refuses: "
            )),
            "{:#?}",
            server.notes
        );
    }

    #[test]
    fn a_prefix_that_takes_a_name_past_128_characters_fails_even_when_long_names_are_allowed() {
        let prefix = "p".repeat(120);
        let problems = refused(
            &format!("{{tool_prefix: {prefix}, allow_long_names: true}}"),
            "include: {tools: [\"^stream_info$\"]}\n",
        );
        assert_eq!(
            problems,
            [format!(
                "tool name \"{prefix}stream_info\" (command \"stream info\", \"stream_info\" with \
                 tool_prefix \"{prefix}\") is over 128 characters, the most MCP allows: shorten \
                 expose.agent.mcp.tool_prefix or rename the tool with \
                 expose.agent.mcp.tool_names"
            )]
        );
    }
}
