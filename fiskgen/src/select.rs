//! Config + introspection model → the exact set of tools to serve ([`ir::Server`]).
//!
//! Every serving rule lives here, in the order the reference applies them: leaves of the
//! command tree (hidden subtrees skipped), names and descriptions, `ai:deny` first, the
//! include/exclude filters, global flags, hints and confirmation, then the built-ins. All
//! problems are collected and reported together.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use serde_json::Map;

use fiskgen_contract::surface::{self, Stage};

use crate::config::{Config, Hint};
use crate::ir::{self, Builtin, CommandTool, Confirm, FileAccess, HintName, Tool, ToolKind};
pub use crate::settings::{filter_stages, serving_rules};
use crate::suggest::nearest;
use crate::{lower, model};

mod catalog;
mod knowledge;
mod named;
mod names;
mod shape;
mod tags;
mod unmatched;
mod unusual;

pub use shape::model_description;
use shape::{collect_tags, confirm_trigger, exposable_globals, hints, shadows};

use fiskgen_contract::surface::is_framework_flag;
pub use fiskgen_contract::surface::{DENY_TAG, MAX_TOOL_NAME, is_valid_tool_name};

/// The reserved tag that always gates a command behind the user's approval.
pub const CONFIRM_TAG: &str = "ai:confirm";
pub use catalog::{LARGE_LIST_BYTES, LONG_TOOL_NAME, MAX_SESSION_TOOLS};

/// Everything that stops a server from being built, found in one pass.
#[derive(Debug, thiserror::Error)]
pub struct SelectError {
    /// One message per problem, in the order found.
    pub problems: Vec<String>,
}

impl fmt::Display for SelectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, problem) in self.problems.iter().enumerate() {
            if index > 0 {
                writeln!(f)?;
            }
            write!(f, "{problem}")?;
        }
        Ok(())
    }
}

/// The introspected application a config is served against.
#[derive(Debug, Clone, Copy)]
pub struct App<'a> {
    /// Where the application binary was found.
    pub path: &'a Path,
    /// Its introspection model.
    pub model: &'a model::Application,
}

/// Applies every serving rule and returns the served set.
///
/// `app` is `None` when the config names no application: then only built-ins are served.
pub fn select(config: &Config, app: Option<App<'_>>) -> Result<ir::Server, SelectError> {
    let mut selection = Selection::default();
    let mut application = None;
    let mut global_flags = Vec::new();
    let mut leaves = 0;

    if let Some(app) = app {
        let exposed = selection.exposed_globals(config, app.model);
        global_flags = exposable_globals(app.model, &exposed);
        let candidates = selection.leaf_tools(config, app.model, &exposed);
        leaves = candidates.len();
        selection.start_warnings = unmatched::filter_warnings(config, &candidates, &app.model.name);
        selection.warnings.extend(selection.start_warnings.clone());
        let served = selection.apply_filters(config, candidates);
        let param_headers = config
            .mcp
            .as_ref()
            .map(|mcp| mcp.param_headers.clone())
            .unwrap_or_default();
        let names: Vec<&str> = served.iter().map(|c| c.tool.name.as_str()).collect();
        selection.check_param_headers(&param_headers, &names, config.mcp.as_ref());
        if let Some(mcp) = &config.mcp {
            selection.check_task_required(&config.source, mcp, &names);
        }
        let ask = config
            .mcp
            .as_ref()
            .map(|mcp| mcp.ask.clone())
            .unwrap_or_default();
        selection.check_ask(&ask, &names, config.mcp.as_ref());
        selection.tools = selection.lower(served, &param_headers, &ask);
        application = Some(ir::Application {
            configured_path: config.served_application_path().unwrap_or_default(),
            path: app.path.to_path_buf(),
            name: app.model.name.clone(),
            version: app.model.version.clone(),
        });
        selection.check_tag_settings(config, app.model);
    } else if let Some(mcp) = config
        .mcp
        .as_ref()
        .filter(|mcp| !mcp.task_required.is_empty())
    {
        // Without an application nothing can be task-required (built-ins answer on their
        // request): every name is unknown.
        selection.check_task_required(&config.source, mcp, &[]);
    } else if !(config.include.is_empty() && config.exclude.is_empty()) {
        selection.warnings.push(
            "include/exclude have no effect on commands without application_path; \
             they only filter built-ins"
                .to_string(),
        );
    }

    let default_mcp = crate::config::McpConfig::default();
    let mcp = config.mcp.as_ref().unwrap_or(&default_mcp);
    selection.name_tools(&config.source, mcp);
    let builtins = selection.builtin_tools(config);
    selection.tools.extend(builtins);
    selection.check_names(mcp);
    if let Some(mcp) = &config.mcp {
        selection.check_group_tags(mcp);
        if mcp.output_schema && !mcp.structured_output {
            selection.problems.push(
                "expose.agent.mcp.output_schema: true needs structured_output: true (a tool that \
                 declares an outputSchema must return structuredContent); drop output_schema or \
                 structured_output: false"
                    .to_string(),
            );
        }
    }
    let catalog = catalog::catalog_warnings(&selection.tools);
    let tag_warnings = tags::tag_warnings(&selection.tools);
    let unusual = unusual::warnings(&selection.tools);
    let found = catalog.into_iter().chain(tag_warnings).chain(unusual);
    selection.warnings.extend(found);
    selection.notes.extend(config.notes.iter().cloned());
    if config.mcp.is_none() {
        selection.notes.push(
            "expose.agent.mcp is absent: `fiskgen build` refuses to build a server until the \
             config opts in with `expose: {agent: {mcp: {}}}`"
                .to_string(),
        );
    }

    if !selection.problems.is_empty() {
        return Err(SelectError {
            problems: selection.problems,
        });
    }
    let tasks = mcp.tasks.map(|tasks| ir::Tasks {
        after_ms: u64::try_from(tasks.after.as_millis()).unwrap_or(u64::MAX),
        ttl_ms: u64::try_from(tasks.ttl.as_millis()).unwrap_or(u64::MAX),
        max: tasks.max,
        tools: selection
            .tools
            .iter()
            .filter(|tool| matches!(tool.kind, ir::ToolKind::Command(_)))
            .map(|tool| tool.name.clone())
            .collect(),
        required: selection
            .tools
            .iter()
            .filter(|tool| {
                let own = tool.command_name();
                (mcp.task_required.iter()).any(|name| own.as_deref() == Some(name.text.as_str()))
            })
            .map(|tool| tool.name.clone())
            .collect(),
    });
    let docs = crate::docs::docs(config, app.map(|app| app.model), &selection.tools);
    let empty = selection.empty_reason(app.map(|app| app.model), leaves);
    Ok(ir::Server {
        empty,
        start_warnings: selection.start_warnings,
        identity: config.identity.clone(),
        application,
        tools: selection.tools,
        global_flags,
        docs,
        notes: selection.notes,
        warnings: selection.warnings,
        settings: crate::settings::resolve(config),
        tasks,
    })
}

/// A leaf command before filtering: its tool, the command it lowers from and the exposed
/// globals it does not shadow.
struct Candidate<'m> {
    tool: Tool,
    command: &'m model::Command,
    globals: Vec<&'m model::Flag>,
}

/// The state of one selection run: what is served so far and what was found on the way.
#[derive(Default)]
struct Selection {
    tools: Vec<Tool>,
    problems: Vec<String>,
    notes: Vec<String>,
    warnings: Vec<String>,
    /// What `ai:deny` and each filter stage removed.
    removed: unmatched::Removed,
    /// The warnings the banner repeats.
    start_warnings: Vec<String>,
}

impl Selection {
    /// The global flags offered to clients: the allowlist in config order, then every required
    /// application flag in application order.
    fn exposed_globals<'m>(
        &mut self,
        config: &Config,
        model: &'m model::Application,
    ) -> Vec<&'m model::Flag> {
        let mut exposed: Vec<&model::Flag> = Vec::new();
        for name in &config.global_flags {
            match model.flags.iter().find(|flag| &flag.name == name) {
                Some(flag) if flag.hidden || is_framework_flag(&flag.name) => {
                    self.problems.push(format!(
                        "global_flags entry \"{name}\" is a hidden or framework flag and cannot be \
                         exposed to clients; only application-defined global flags can be exposed"
                    ));
                }
                Some(flag) => exposed.push(flag),
                None => {
                    let candidates: Vec<&str> = model
                        .flags
                        .iter()
                        .filter(|flag| !flag.hidden && !is_framework_flag(&flag.name))
                        .map(|flag| flag.name.as_str())
                        .collect();
                    let suggestion = nearest(name, candidates.iter().copied())
                        .map(|near| format!("; did you mean \"{near}\"?"))
                        .unwrap_or_default();
                    let listed = if candidates.is_empty() {
                        "it has no global flag that can be exposed".to_string()
                    } else {
                        format!("its exposable global flags: {}", candidates.join(", "))
                    };
                    self.problems.push(format!(
                        "global_flags entry \"{name}\" matches no global flag of application \
                         \"{}\"{suggestion} ({listed})",
                        model.name
                    ));
                }
            }
        }
        for flag in &model.flags {
            if flag.required
                && !is_framework_flag(&flag.name)
                && !exposed.iter().any(|f| f.name == flag.name)
            {
                exposed.push(flag);
            }
        }
        exposed
    }

    /// Every non-hidden leaf command as a tool, before filtering.
    fn leaf_tools<'m>(
        &mut self,
        config: &Config,
        model: &'m model::Application,
        globals: &[&'m model::Flag],
    ) -> Vec<Candidate<'m>> {
        let mut tools = Vec::new();
        let mut path = Vec::new();
        for command in &model.commands {
            self.walk(config, command, &mut path, globals, &mut tools);
        }
        tools
    }

    fn walk<'m>(
        &mut self,
        config: &Config,
        command: &'m model::Command,
        path: &mut Vec<&'m str>,
        globals: &[&'m model::Flag],
        tools: &mut Vec<Candidate<'m>>,
    ) {
        if command.hidden {
            return;
        }
        path.push(&command.name);
        if command.is_leaf() {
            if let Some(tool) = self.command_tool(config, command, path, globals) {
                tools.push(tool);
            }
        } else {
            for child in &command.commands {
                self.walk(config, child, path, globals, tools);
            }
        }
        path.pop();
    }

    fn command_tool<'m>(
        &mut self,
        config: &Config,
        command: &'m model::Command,
        path: &[&str],
        globals: &[&'m model::Flag],
    ) -> Option<Candidate<'m>> {
        let title = path.join(" ");
        let name = surface::tool_name(path);
        if command.restricted_schema.is_none() {
            self.problems.push(format!(
                "command \"{title}\" has no precomputed schema; rebuild the application with \
                 fisk v0.9.0 or newer"
            ));
            return None;
        };
        let globals: Vec<&model::Flag> = globals
            .iter()
            .filter(|global| !shadows(command, &global.name))
            .copied()
            .collect();
        let tool = Tool {
            description: model_description(command),
            tags: command.tags.clone(),
            hints: hints(config, &command.tags),
            confirm: confirm_trigger(config, &command.tags),
            // Set when the served tool is lowered.
            input_schema: Map::new(),
            kind: ToolKind::Command(CommandTool {
                command: path.iter().map(|segment| segment.to_string()).collect(),
                params: Vec::new(),
                flags: Vec::new(),
                positionals: Vec::new(),
                questions: Vec::new(),
            }),
            name,
            title,
        };
        Some(Candidate {
            tool,
            command,
            globals,
        })
    }

    /// Lowers every served command ([`lower`](crate::lower)): its typed parameters, its argv plan
    /// and its final input schema. A schema that cannot be typed is a problem; one typed by a
    /// fallback a warning.
    fn lower(
        &mut self,
        served: Vec<Candidate<'_>>,
        param_headers: &BTreeMap<String, BTreeMap<String, String>>,
        ask: &BTreeMap<String, Vec<crate::config::Question>>,
    ) -> Vec<Tool> {
        let mut tools = Vec::with_capacity(served.len());
        let none = BTreeMap::new();
        for Candidate {
            mut tool,
            command,
            globals,
        } in served
        {
            let source = lower::Source {
                tool: &tool.name,
                command,
                globals: &globals,
                headers: param_headers.get(&tool.name).unwrap_or(&none),
                questions: ask.get(&tool.name).map_or(&[], Vec::as_slice),
            };
            match lower::lower(source) {
                Ok(lowered) => {
                    self.warnings.extend(lowered.warnings);
                    tool.input_schema = lowered.schema;
                    tool.kind = ToolKind::Command(CommandTool {
                        command: match tool.kind {
                            ToolKind::Command(command) => command.command,
                            ToolKind::Builtin { .. } => Vec::new(),
                        },
                        params: lowered.params,
                        flags: lowered.flags,
                        positionals: lowered.positionals,
                        questions: lowered.questions,
                    });
                    tools.push(tool);
                }
                Err(error) => self.problems.push(error.to_string()),
            }
        }
        tools
    }

    /// `ai:deny` first, then the top-level filters, then the `expose.agent.tools` narrowing.
    fn apply_filters<'m>(
        &mut self,
        config: &Config,
        tools: Vec<Candidate<'m>>,
    ) -> Vec<Candidate<'m>> {
        let (denied, mut tools): (Vec<Candidate<'m>>, Vec<Candidate<'m>>) = tools
            .into_iter()
            .partition(|candidate| candidate.tool.tags.iter().any(|tag| tag == DENY_TAG));
        self.removed.denied = denied.iter().map(|c| c.tool.name.clone()).collect();
        if !denied.is_empty() {
            let names: Vec<&str> = denied.iter().map(|c| c.tool.name.as_str()).collect();
            let (count, verb) = match names.len() {
                1 => ("1 command".to_string(), "is"),
                n => (format!("{n} commands"), "are"),
            };
            self.notes.push(format!(
                "{count} tagged {DENY_TAG} {verb} never served: {}",
                names.join(", ")
            ));
        }
        for stage in filter_stages(config) {
            let (kept, dropped): (Vec<Candidate<'m>>, Vec<Candidate<'m>>) = tools
                .into_iter()
                .partition(|candidate| keeps(&stage, &candidate.tool));
            let dropped = dropped.into_iter().map(|c| c.tool.name).collect();
            self.removed.stages.push((stage.label, dropped));
            tools = kept;
        }
        tools
    }

    /// The enabled built-ins that survive the filters; a note for each one that does not.
    fn builtin_tools(&mut self, config: &Config) -> Vec<Tool> {
        let mut enabled: Vec<(Builtin, bool)> = Vec::new();
        let mut access: Vec<FileAccess> = Vec::new();
        for entry in &config.harness.tools {
            if let Some(builtin) = Builtin::from_name(&entry.name) {
                enabled.push((builtin, entry.confirm));
                access.push(FileAccess {
                    roots: entry.roots.clone(),
                    max_bytes: entry.max_bytes,
                });
            }
        }
        enabled.extend(
            knowledge::enabled(config, &mut self.notes)
                .into_iter()
                .map(|builtin| (builtin, false)),
        );
        if config.harness.human_in_the_loop {
            self.notes.push(
                "harness.human_in_the_loop is enabled, but ask_human_confirm, ask_human_select \
                 and ask_human_input exist only in an agent run and are never served over MCP"
                    .to_string(),
            );
        }
        if config.harness.memory {
            self.notes.push(
                "harness.memory is enabled, but memory_list, memory_read, memory_write and \
                 memory_delete exist only in an agent run and are never served over MCP"
                    .to_string(),
            );
        }

        let stages = filter_stages(config);
        let mut served = Vec::new();
        let mut access = access.into_iter();
        for (builtin, confirm) in enabled {
            let tool = builtin_tool(builtin, confirm, access.next().unwrap_or_default());
            match stages.iter().find(|stage| !keeps(stage, &tool)) {
                Some(stage) => self.notes.push(format!(
                    "built-in \"{}\" is enabled but not served: {} filters it out",
                    tool.name, stage.label
                )),
                None => served.push(tool),
            }
        }
        served
    }

    /// Warns about `hint_tags` and `confirm_tags` entries that no command carries.
    fn check_tag_settings(&mut self, config: &Config, model: &model::Application) {
        let mut all_tags = BTreeSet::new();
        collect_tags(&model.commands, &mut all_tags);
        let hint_tags = config.mcp.iter().flat_map(|mcp| mcp.hint_tags.keys());
        for tag in hint_tags {
            if !all_tags.contains(tag.as_str()) {
                self.warnings.push(format!(
                    "expose.agent.mcp.hint_tags maps \"{tag}\", but no command of \"{}\" carries \
                     that tag",
                    model.name
                ));
            }
        }
        for tag in &config.harness.confirm_tags {
            if !all_tags.contains(tag.as_str()) {
                self.warnings.push(format!(
                    "harness.confirm_tags lists \"{tag}\", but no command of \"{}\" carries that tag",
                    model.name
                ));
            }
        }
    }
}

/// Whether a stage keeps a tool: commands match by name or tag, built-ins by name alone.
fn keeps(stage: &Stage, tool: &Tool) -> bool {
    let tags = matches!(tool.kind, ToolKind::Command(_)).then_some(tool.tags.as_slice());
    stage.keeps(&tool.name, tags)
}

fn builtin_tool(builtin: Builtin, confirm: bool, access: FileAccess) -> Tool {
    let mut hints = BTreeSet::new();
    if builtin.read_only() {
        hints.insert(HintName(Hint::ReadOnly));
    }
    Tool {
        name: builtin.name().to_string(),
        title: builtin.name().to_string(),
        description: builtin.description().to_string(),
        tags: Vec::new(),
        hints,
        confirm: confirm.then(|| Confirm {
            trigger: CONFIRM_TAG.to_string(),
        }),
        input_schema: builtin.input_schema(),
        kind: ToolKind::Builtin { builtin, access },
    }
}

#[cfg(test)]
mod tests {
    //! Rule-by-rule tests on small hand-written models; `tests/` checks the same rules against
    //! the real fixture application.

    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::config;

    fn config(yaml: &str) -> Config {
        match config::parse(yaml, Path::new("test.yaml")) {
            Ok(config) => config,
            Err(error) => panic!("test config does not parse: {error}"),
        }
    }

    fn leaf(name: &str, tags: &[&str]) -> serde_json::Value {
        json!({
            "name": name, "help": format!("{name} things"), "tags": tags,
            "restricted_schema": {"type": "object", "additionalProperties": false, "properties": {}},
        })
    }

    fn model(commands: serde_json::Value) -> model::Application {
        let doc = json!({"name": "app", "commands": commands, "flags": [
            {"name": "context", "help": "Configuration context", "boolean": false, "cumulative": false},
            {"name": "trace", "help": "", "boolean": true, "negatable": true, "cumulative": false},
            {"name": "colors", "help": "Color scheme", "boolean": false, "cumulative": false,
             "completions": ["blue", "red"]},
            {"name": "region", "help": "Region", "required": true, "boolean": false, "cumulative": false},
            {"name": "secret", "help": "Hidden", "hidden": true, "boolean": false, "cumulative": false},
        ]});
        match serde_json::from_value(doc) {
            Ok(model) => model,
            Err(error) => panic!("test model does not parse: {error}"),
        }
    }

    fn served(config: &Config, model: &model::Application) -> ir::Server {
        let app = App {
            path: Path::new("/bin/app"),
            model,
        };
        match select(config, Some(app)) {
            Ok(server) => server,
            Err(error) => panic!("selection failed: {error}"),
        }
    }

    fn names(server: &ir::Server) -> Vec<&str> {
        server.tools.iter().map(|tool| tool.name.as_str()).collect()
    }

    /// Selects from [`tree`] with the config `yaml`.
    fn select_tree(yaml: &str) -> Result<ir::Server, SelectError> {
        select(
            &config(yaml),
            Some(App {
                path: Path::new("/bin/app"),
                model: &tree(),
            }),
        )
    }

    fn tree() -> model::Application {
        model(json!([
            leaf("ls", &["scope:user", "impact:ro"]),
            {"name": "auth", "help": "", "restricted_schema": {}, "commands": [
                {"name": "user", "help": "", "restricted_schema": {}, "commands": [
                    leaf("add", &["impact:rw", "ai:confirm"]), leaf("rm", &["ai:deny", "ai:confirm"])]},
                leaf("add", &[]),
            ]},
            {"name": "account", "help": "", "restricted_schema": {}, "commands": [leaf("add", &["admin"])]},
            {"name": "debug", "help": "", "hidden": true, "restricted_schema": {}, "commands": [leaf("dump", &[])]},
        ]))
    }

    #[test]
    fn param_headers_must_name_a_served_command_and_one_of_its_parameters() {
        let error = select_tree("expose: {agent: {mcp: {param_headers: {lss: {x: X}}}}}")
            .expect_err("an unknown tool");
        assert_eq!(
            error.to_string(),
            "expose.agent.mcp.param_headers names tool \"lss\", which is not a served command; \
             did you mean \"ls\"?"
        );
        let error = select_tree("expose: {agent: {mcp: {param_headers: {ls: {x: X}}}}}")
            .expect_err("an unknown parameter");
        assert!(
            error.to_string().starts_with(
                "tool \"ls\": param_headers names parameter \"x\", which the tool \
                              does not have (its parameters: "
            ),
            "{error}"
        );
        let server = select_tree("expose: {agent: {mcp: {param_headers: {ls: {region: Region}}}}}")
            .expect("a global string flag can be mirrored");
        let ls = &server.tools[0];
        assert_eq!(
            ls.input_schema["properties"]["region"]["x-mcp-header"],
            "Region"
        );
    }

    #[test]
    fn ask_must_name_a_served_command_and_parameters_a_form_can_carry() {
        let error = select_tree("expose: {agent: {mcp: {ask: {lss: {q: [x]}}}}}")
            .expect_err("unknown tool");
        assert_eq!(
            error.to_string(),
            "expose.agent.mcp.ask names tool \"lss\", which is not a served command (only a \
             command's parameters can be asked); did you mean \"ls\"?"
        );
        let error = select_tree("expose: {agent: {mcp: {ask: {ls: {q: [x]}}}}}")
            .expect_err("unknown parameter");
        assert!(
            error.to_string().starts_with(
                "tool \"ls\": ask: question \"q\" names parameter \"x\", which the tool does \
                 not have (its parameters: "
            ),
            "{error}"
        );
        let server = select_tree("expose: {agent: {mcp: {ask: {ls: {where: [region]}}}}}")
            .expect("a string flag can be asked");
        let ls = &server.tools[0];
        assert!(
            ls.input_schema["properties"].get("region").is_none(),
            "still advertised"
        );
        let ir::ToolKind::Command(command) = &ls.kind else {
            panic!("ls is a command")
        };
        assert_eq!(command.questions[0].name, "where");
        assert_eq!(
            command.questions[0].form["properties"]["region"]["type"],
            "string"
        );
        assert_eq!(ls.info().questions[0].params, ["region"]);
    }

    #[test]
    fn tasks_required_names_served_commands_and_an_unknown_one_is_a_located_error() {
        let yaml = "expose:\n  agent:\n    mcp:\n      tasks:\n        required: [auth_add, lss]\n";
        let error = select_tree(yaml).expect_err("an unknown tool");
        assert_eq!(
            error.to_string(),
            "test.yaml:5:30: expose.agent.mcp.tasks.required names tool \"lss\", which is not a \
             served command (built-in tools always answer on their request); did you mean \"ls\"?"
        );
        let server =
            select_tree("expose: {agent: {mcp: {tasks: {required: [' auth_add', ls, ls]}}}}")
                .expect("served commands");
        let tasks = server.tasks.expect("tasks are on");
        assert_eq!(
            tasks.required,
            ["ls", "auth_add"],
            "in serving order, once each"
        );
        assert!(
            select_tree("expose: {agent: {mcp: {}}}")
                .expect("defaults")
                .tasks
                .is_some_and(|tasks| tasks.required.is_empty())
        );
    }

    #[test]
    fn a_tag_under_group_tag_prefix_must_name_a_group() {
        let error = select_tree("expose: {agent: {mcp: {group_tag_prefix: 'impact'}}}")
            .expect_err("impact:ro is no URL path segment");
        assert!(
            error.to_string().starts_with(
                "tool \"ls\" has the tag \"impact:ro\", under group_tag_prefix \"impact\", but \
                 what follows the prefix cannot name a group"
            ),
            "{error}"
        );
        let server = select_tree("expose: {agent: {mcp: {group_tag_prefix: 'impact:'}}}")
            .expect("ro and rw are names");
        assert_eq!(server.settings.group_tag_prefix.as_deref(), Some("impact:"));
    }

    #[test]
    fn leaves_become_tools_and_hidden_subtrees_and_denied_commands_do_not() {
        let server = served(&config("expose: {agent: {mcp: {}}}"), &tree());
        assert_eq!(
            names(&server),
            ["ls", "auth_user_add", "auth_add", "account_add"]
        );
        assert_eq!(server.tools[1].title, "auth user add");
        assert!(
            server
                .notes
                .iter()
                .any(|note| note.contains("ai:deny") && note.contains("auth_user_rm"))
        );
    }

    #[test]
    fn include_and_exclude_by_pattern_and_tag() {
        let cases = [
            (
                "include: {tools: ['^auth_']}",
                vec!["auth_user_add", "auth_add"],
            ),
            ("include: {tools: ['auth user']}", vec![]),
            ("include: {tags: ['admin']}", vec!["account_add"]),
            ("include: {tags: ['']}", vec!["auth_add"]),
            (
                "exclude: {tags: ['impact:rw', 'impact:ro']}",
                vec!["auth_add", "account_add"],
            ),
            ("include: {tools: ['rm']}", vec![]),
            (
                "include: {tools: ['add']}\nexpose: {agent: {tools: {exclude: {tools: ['^account']}}}}",
                vec!["auth_user_add", "auth_add"],
            ),
        ];
        for (yaml, expected) in cases {
            assert_eq!(names(&served(&config(yaml), &tree())), expected, "{yaml}");
        }
    }

    #[test]
    fn descriptions_combine_help_and_tags() {
        let command = |help: &str, long: &str, tags: &[&str]| model::Command {
            help: help.into(),
            help_long: long.into(),
            tags: tags.iter().map(|tag| tag.to_string()).collect(),
            ..model::Command::default()
        };
        let cases = [
            (command("deploy things", "", &[]), "deploy things"),
            (
                command("deploy things", "", &["impact:rw", "ai:confirm"]),
                "deploy things\n\nTags: impact:rw, ai:confirm",
            ),
            (command("", "", &["impact:ro"]), "Tags: impact:ro"),
            (command("short", "long text", &[]), "short\n\nlong text"),
            (command("short", "a short story", &[]), "a short story"),
            (command("", "only long", &["x"]), "only long\n\nTags: x"),
            (command("", "", &[]), ""),
        ];
        for (command, expected) in cases {
            assert_eq!(model_description(&command), expected);
        }
    }

    #[test]
    fn hints_come_from_reserved_tags_and_hint_tags() {
        let model = model(json!([
            leaf("get", &["impact:ro"]),
            leaf("rm", &["ai:destructive", "ai:idempotent"]),
            leaf("plain", &[]),
        ]));
        let server = served(
            &config("expose: {agent: {mcp: {hint_tags: {'impact:ro': [read_only, open_world]}}}}"),
            &model,
        );
        let hints: Vec<Vec<Hint>> = server
            .tools
            .iter()
            .map(|tool| tool.hints.iter().map(|hint| hint.0).collect())
            .collect();
        assert_eq!(
            hints,
            [
                vec![Hint::ReadOnly, Hint::OpenWorld],
                vec![Hint::Destructive, Hint::Idempotent],
                vec![]
            ]
        );
    }

    #[test]
    fn confirmation_prefers_ai_confirm_then_the_first_configured_tag_in_tool_order() {
        let model = model(json!([
            leaf("a", &["impact:rw", "ai:confirm"]),
            leaf("b", &["admin", "impact:rw"]),
            leaf("c", &["impact:ro"]),
        ]));
        let server = served(
            &config("harness: {confirm_tags: ['impact:rw', admin]}"),
            &model,
        );
        let triggers: Vec<Option<&str>> = server
            .tools
            .iter()
            .map(|tool| tool.confirm.as_ref().map(|c| c.trigger.as_str()))
            .collect();
        assert_eq!(triggers, [Some("ai:confirm"), Some("admin"), None]);
        let unconfigured = served(&config(""), &model);
        assert!(unconfigured.tools[1].confirm.is_none());
    }

    #[test]
    fn global_flags_are_merged_into_schemas_unless_shadowed() {
        let model = model(json!([
            {"name": "pub", "help": "", "args": [{"name": "subject", "help": "", "cumulative": false}],
             "restricted_schema": {"type": "object", "additionalProperties": false, "required": ["subject"],
                "properties": {"subject": {"type": "string", "description": ""}}}},
            {"name": "save", "help": "", "args": [{"name": "context", "help": "", "cumulative": false}],
             "restricted_schema": {"type": "object", "properties": {"context": {"type": "string"}}}},
        ]));
        let server = served(
            &config("application_path: /bin/app\nglobal_flags: [--context, ' trace', colors]"),
            &model,
        );
        let schema = &server.tools[0].input_schema;
        assert_eq!(
            schema["properties"]["context"],
            json!({"type": "string", "description": "Global flag: Configuration context"})
        );
        assert_eq!(
            schema["properties"]["trace"],
            json!({"type": "boolean", "description": "Global flag"})
        );
        assert_eq!(
            schema["properties"]["colors"]["enum"],
            json!(["blue", "red"])
        );
        assert_eq!(
            schema["required"],
            json!(["subject", "region"]),
            "a required global is always exposed"
        );
        assert!(!schema.contains_key("secret"));
        assert_eq!(
            server.tools[1].input_schema["properties"]["context"],
            json!({"type": "string"}),
            "the arg wins"
        );
        let exposed: Vec<(&str, bool, bool)> = server
            .global_flags
            .iter()
            .map(|flag| (flag.name.as_str(), flag.exposed, flag.required))
            .collect();
        assert_eq!(
            exposed,
            [
                ("context", true, false),
                ("trace", true, false),
                ("colors", true, false),
                ("region", true, true)
            ]
        );
    }

    #[test]
    fn global_flag_problems_are_all_reported() {
        let config = config("application_path: /bin/app\nglobal_flags: [contxt, secret, help]");
        let app = App {
            path: Path::new("/bin/app"),
            model: &tree(),
        };
        let Err(error) = select(&config, Some(app)) else {
            panic!("selection must fail")
        };
        assert_eq!(error.problems.len(), 3, "{error}");
        assert!(error.problems[0].contains(
            "\"contxt\" matches no global flag of application \"app\"; did you mean \"context\"?"
        ));
        assert!(error.problems[1].contains("\"secret\" is a hidden or framework flag"));
        assert!(error.problems[2].contains("\"help\" matches no global flag"));
    }

    #[test]
    fn leaf_without_schema_is_an_error() {
        let model = model(json!([{"name": "old", "help": ""}]));
        let app = App {
            path: Path::new("/bin/app"),
            model: &model,
        };
        let Err(error) = select(&config(""), Some(app)) else {
            panic!("selection must fail")
        };
        assert!(
            error
                .to_string()
                .contains("command \"old\" has no precomputed schema"),
            "{error}"
        );
    }

    #[test]
    fn duplicate_names_are_an_error_naming_both_commands() {
        let model = model(json!([
            leaf("a_b", &[]),
            {"name": "a", "help": "", "restricted_schema": {}, "commands": [leaf("b", &[])]},
        ]));
        let app = App {
            path: Path::new("/bin/app"),
            model: &model,
        };
        let Err(error) = select(&config(""), Some(app)) else {
            panic!("selection must fail")
        };
        assert_eq!(
            error.to_string(),
            "tool name \"a_b\" is taken twice: by command \"a_b\" and by command \"a b\"; rename one \
             with expose.agent.mcp.tool_names or exclude one of them (include/exclude in the \
             config)"
        );
    }

    #[test]
    fn invalid_names_are_skipped_and_long_names_need_allowing() {
        let long = "x".repeat(70);
        let model = model(json!([
            leaf("bad name", &[]),
            leaf("ok.v2", &[]),
            leaf(&long, &[])
        ]));
        let allowed = config("expose: {agent: {mcp: {allow_long_names: true}}}");
        let server = served(&allowed, &model);
        assert_eq!(names(&server), ["ok.v2", long.as_str()]);
        assert!(
            server
                .warnings
                .iter()
                .any(|w| w.contains("skipping tool \"bad name\""))
        );
        let Err(error) = select(
            &config(""),
            Some(App {
                path: Path::new("/bin/app"),
                model: &model,
            }),
        ) else {
            panic!("a long name fails the build unless allowed")
        };
        assert!(
            error.to_string().starts_with(&format!(
                "tool name \"{long}\" (command \"{long}\") is 70 characters, over the 64"
            )),
            "{error}"
        );
        assert!(
            is_valid_tool_name(&"y".repeat(128))
                && !is_valid_tool_name(&"y".repeat(129))
                && !is_valid_tool_name("")
        );
    }

    #[test]
    fn no_commands_means_no_tools() {
        let server = served(&config(""), &model(json!([])));
        assert!(server.tools.is_empty());
    }

    #[test]
    fn builtins_are_enabled_by_harness_and_filtered_by_name() {
        let harness = "harness:\n  tools: [{name: read_file, confirm: true}, {name: base64_encode}]\n  knowledge: {enabled: true}\n";
        // As fisk mcp: knowledge is served over MCP only to an allowlist.
        let unlisted = served(
            &config(harness),
            &model(json!([leaf("ls", &["impact:ro"])])),
        );
        assert_eq!(names(&unlisted), ["ls", "read_file", "base64_encode"]);
        assert!(
            unlisted.notes.iter().any(|note| note
                == "knowledge is enabled but not exposed over MCP; add knowledge_search and \
                    knowledge_enumerate to expose.agent.mcp.builtins to let MCP clients search \
                    your knowledge base"),
            "{:?}",
            unlisted.notes
        );
        let yaml = format!(
            "{harness}expose: {{agent: {{mcp: {{builtins: [knowledge_search, knowledge_read, \
             knowledge_list, knowledge_enumerate]}}}}}}\n"
        );
        let yaml = yaml.as_str();
        let server = served(&config(yaml), &model(json!([leaf("ls", &["impact:ro"])])));
        assert_eq!(
            names(&server),
            [
                "ls",
                "read_file",
                "base64_encode",
                "knowledge_search",
                "knowledge_read",
                "knowledge_list",
                "knowledge_enumerate"
            ]
        );
        assert_eq!(
            server.tools[1].confirm,
            Some(Confirm {
                trigger: "ai:confirm".into()
            })
        );

        let by_tag = format!("{yaml}include: {{tags: ['impact:ro']}}\n");
        let server = served(
            &config(&by_tag),
            &model(json!([leaf("ls", &["impact:ro"])])),
        );
        assert_eq!(
            names(&server),
            ["ls"],
            "an include by tag alone removes every built-in"
        );
        assert!(server.notes.iter().any(|note| {
            note.contains("\"read_file\" is enabled but not served: include filters it out")
        }));

        let named_back = format!(
            "{yaml}include: {{tags: ['impact:ro'], tools: ['^read_file$']}}\nexclude: {{tools: ['^knowledge_read$']}}\n"
        );
        assert_eq!(
            names(&served(
                &config(&named_back),
                &model(json!([leaf("ls", &["impact:ro"])]))
            )),
            ["ls", "read_file"]
        );
    }

    #[test]
    fn a_builtin_name_taken_by_a_command_is_an_error() {
        let model = model(
            json!([{"name": "read", "help": "", "restricted_schema": {}, "commands": [leaf("file", &[])]}]),
        );
        let app = App {
            path: Path::new("/bin/app"),
            model: &model,
        };
        let Err(error) = select(&config("harness: {tools: [{name: read_file}]}"), Some(app)) else {
            panic!("selection must fail")
        };
        assert!(
            error
                .to_string()
                .contains("by command \"read file\" and by built-in \"read_file\""),
            "{error}"
        );
    }

    #[test]
    fn knowledge_enumerate_is_served_when_the_allowlist_names_it() {
        let server = select(
            &config(
                "harness: {knowledge: {enabled: true}}\n\
                 expose: {agent: {mcp: {builtins: [knowledge_search, knowledge_enumerate]}}}",
            ),
            None,
        )
        .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(names(&server), ["knowledge_search", "knowledge_enumerate"]);
        assert!(
            !server
                .warnings
                .iter()
                .chain(&server.notes)
                .any(|w| w.contains("knowledge_enumerate")),
            "{:?} {:?}",
            server.warnings,
            server.notes
        );
        // One of the pair alone is legal, with Fisk AI's note of what it costs.
        let alone = select(
            &config(
                "harness: {knowledge: {enabled: true}}\n\
                 expose: {agent: {mcp: {builtins: [knowledge_search]}}}",
            ),
            None,
        )
        .unwrap_or_else(|error| panic!("{error}"));
        assert!(
            alone
                .notes
                .iter()
                .any(|n| n.contains("cannot tell an absent term from a low-scoring one")),
            "{:?}",
            alone.notes
        );
    }

    #[test]
    fn agent_only_builtins_get_notes() {
        let server = select(
            &config("harness: {human_in_the_loop: {enabled: true}, memory: {enabled: true}}"),
            None,
        )
        .unwrap_or_else(|error| panic!("{error}"));
        assert!(server.tools.is_empty());
        assert!(
            server
                .notes
                .iter()
                .any(|note| note.contains("ask_human_confirm"))
        );
        assert!(
            server
                .notes
                .iter()
                .any(|note| note.contains("memory_write"))
        );
        assert!(
            server
                .notes
                .iter()
                .any(|note| note.contains("expose.agent.mcp is absent"))
        );
    }
}
