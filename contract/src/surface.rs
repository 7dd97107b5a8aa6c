//! The served surface of a server and the one drift verdict that `fiskgen check` and
//! `<binary> verify` (and the server's start-up check) give (see `docs/drift.md`).
//!
//! A [`Surface`] reduces an introspection document to one [`Print`] per command: the tool it is
//! served as (if any, decided by the config's serving [`Rules`]) and two fingerprints, one of
//! everything that shapes the tool and its argument handling, one of its help texts. A
//! generated server keeps the prints of the document it was built from instead of the
//! document; `fiskgen check` computes both surfaces from saved documents. [`compare`] then gives
//! the same [`Verdict`] on both sides:
//!
//! - drift (exit 1): a tool is served now that was not, is no longer served, or what it is
//!   built from changed (its command, flags, args, schemas, tags, or an exposed global flag);
//! - not drift (exit 0, but reported): only help texts of served commands changed (natscli
//!   embeds the current time in some), an unserved command changed, appeared or went away, or
//!   the application's name or version changed.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use regex::Regex;
use serde_json::{Map, Value, json};

use crate::canonical;

/// fisk's own application flags: never exposable as global flags.
const FRAMEWORK_FLAGS: &[&str] = &[
    "help",
    "help-long",
    "help-man",
    "help-llm",
    "help-compact",
    "completion-bash",
    "completion-script-bash",
    "completion-script-zsh",
    "completion-zsh-menu",
    "fisk-introspect",
    "version",
];

/// fisk's own flags, stripped by introspection or never meant for clients.
pub fn is_framework_flag(name: &str) -> bool {
    FRAMEWORK_FLAGS.contains(&name)
        || ["help-", "completion-", "fisk-"]
            .iter()
            .any(|prefix| name.starts_with(prefix))
}

/// The reserved tag that keeps a command from ever being served.
pub const DENY_TAG: &str = "ai:deny";
/// Longest tool name MCP allows.
pub const MAX_TOOL_NAME: usize = 128;

/// A tool filter: a tool matches when any pattern finds a match anywhere in its name, or when
/// any tag equals one of its tags (`""` matches untagged tools).
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Compiled, unanchored regular expressions over tool names.
    pub tools: Vec<Regex>,
    /// Exact tags.
    pub tags: Vec<String>,
}

impl Filter {
    /// A filter with neither patterns nor tags is ignored.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.tags.is_empty()
    }

    /// Whether the filter matches a tool: by name, or (commands only: `tags` is `Some`) by tag.
    /// Built-ins carry no tags and match by name alone.
    pub fn matches(&self, name: &str, tags: Option<&[String]>) -> bool {
        if self.tools.iter().any(|pattern| pattern.is_match(name)) {
            return true;
        }
        let Some(tags) = tags else { return false };
        self.tags.iter().any(|wanted| {
            if wanted.is_empty() {
                tags.is_empty()
            } else {
                tags.contains(wanted)
            }
        })
    }
}

/// Compiles a tool-name pattern the way the config reader does (unanchored, Rust regex
/// syntax); the error names the pattern.
pub fn pattern(text: &str) -> Result<Regex, String> {
    Regex::new(text).map_err(|error| format!("{text:?} is not a valid pattern: {error}"))
}

/// One include or exclude step of the filter pipeline.
#[derive(Debug, Clone)]
pub struct Stage {
    /// The config key, for messages (`include`, `expose.agent.tools.exclude`).
    pub label: String,
    /// Whether matching tools are kept (include) or dropped (exclude).
    pub include: bool,
    /// The filter.
    pub filter: Filter,
}

impl Stage {
    /// Whether a tool survives this stage (an empty filter keeps everything).
    pub fn keeps(&self, name: &str, tags: Option<&[String]>) -> bool {
        self.filter.is_empty() || self.filter.matches(name, tags) == self.include
    }
}

/// What decides which commands a server serves, and which global flags every served tool
/// takes: fixed by the config, so a server carries them and `fiskgen check` derives them.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    /// The filter stages, in order.
    pub stages: Vec<Stage>,
    /// The config's `global_flags` allowlist. Every served tool takes the application flags it
    /// names (unless hidden or fisk's own) and every required one.
    pub global_flags: Vec<String>,
    /// `tool_prefix`: put before a served command's own name (`""`: none).
    pub tool_prefix: String,
    /// `tool_names`: own name -> the name served instead (the prefix is not added to it).
    pub tool_names: BTreeMap<String, String>,
}

impl Rules {
    /// Whether an application flag is offered on every tool: named by the allowlist and not
    /// hidden, or required; never one of fisk's own.
    fn exposes(&self, flag: &Value) -> bool {
        let Some(name) = flag.get("name").and_then(Value::as_str) else {
            return false;
        };
        let set = |key: &str| flag.get(key).and_then(Value::as_bool) == Some(true);
        let listed = self.global_flags.iter().any(|listed| listed == name) && !set("hidden");
        (listed || set("required")) && !is_framework_flag(name)
    }

    /// The tool a visible leaf command is served as, by its served name (its `tool_names`
    /// entry, else the prefix and its own name), or `None` when it is tagged `ai:deny`, it has
    /// neither a valid own name nor a rename, or a filter stage drops it (filters match the own
    /// name).
    pub fn tool_for(&self, path: &[&str], tags: &[String]) -> Option<String> {
        if tags.iter().any(|tag| tag == DENY_TAG) {
            return None;
        }
        let own = tool_name(path);
        let renamed = self.tool_names.get(&own);
        let served = (renamed.is_some() || is_valid_tool_name(&own))
            && self
                .stages
                .iter()
                .all(|stage| stage.keeps(&own, Some(tags)));
        served.then(|| {
            renamed
                .cloned()
                .unwrap_or_else(|| format!("{}{own}", self.tool_prefix))
        })
    }
}

/// The tool name of a command: its path joined with `_` (`stream_info`).
pub fn tool_name<S: AsRef<str>>(path: &[S]) -> String {
    let parts: Vec<&str> = path.iter().map(AsRef::as_ref).collect();
    parts.join("_")
}

/// Whether a tool name is what MCP allows: 1 to 128 characters of `A-Za-z0-9_.-`.
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=MAX_TOOL_NAME).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// A document reduced to what drift is decided on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Surface {
    /// The application's name.
    pub name: String,
    /// Its version, when it declares one.
    pub version: Option<String>,
    /// Every command (groups and hidden ones too) by its space-joined path.
    pub commands: BTreeMap<String, Print>,
}

/// One command, reduced to fingerprints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Print {
    /// The tool it is served as; `None` when it is not served.
    pub tool: Option<String>,
    /// Fingerprint of what shapes the tool and its argument handling: the command without its
    /// subcommands and help texts, plus (served commands) the exposed global flags.
    pub structure: String,
    /// Fingerprint of its help texts (command, flags, args, schema descriptions).
    pub help: String,
}

impl Surface {
    /// The surface of an introspection document under `rules`.
    pub fn of(document: &Value, rules: &Rules) -> Surface {
        let globals: Vec<&Value> = items(document, "flags")
            .filter(|flag| rules.exposes(flag))
            .collect();
        let (global_structure, global_help): (Vec<Value>, Vec<Value>) =
            globals.into_iter().map(split_help).unzip();
        let walker = Walker {
            rules,
            global_structure: Value::Array(global_structure),
            global_help: Value::Array(global_help),
        };
        let mut commands = BTreeMap::new();
        walker.walk(document, &mut Vec::new(), false, &mut commands);
        Surface {
            name: text(document, "name").unwrap_or_default(),
            version: text(document, "version"),
            commands,
        }
    }

    /// The served tools, by name.
    pub fn tools(&self) -> BTreeMap<&str, &str> {
        self.commands
            .iter()
            .filter_map(|(path, print)| Some((print.tool.as_deref()?, path.as_str())))
            .collect()
    }
}

/// Walks the command tree of a document.
struct Walker<'a> {
    rules: &'a Rules,
    global_structure: Value,
    global_help: Value,
}

impl Walker<'_> {
    fn walk<'d>(
        &self,
        node: &'d Value,
        path: &mut Vec<&'d str>,
        hidden: bool,
        out: &mut BTreeMap<String, Print>,
    ) {
        for command in items(node, "commands") {
            let Some(name) = command.get("name").and_then(Value::as_str) else {
                continue;
            };
            path.push(name);
            let hidden = hidden || command.get("hidden").and_then(Value::as_bool) == Some(true);
            let leaf = items(command, "commands").next().is_none();
            let tags: Vec<String> = items(command, "tags")
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect();
            let tool = (leaf && !hidden)
                .then(|| self.rules.tool_for(path, &tags))
                .flatten();
            let mut own = command.clone();
            if let Some(object) = own.as_object_mut() {
                object.remove("commands");
            }
            let (structure, help) = split_help(&own);
            let (structure, help) = if tool.is_some() {
                (
                    json!({"command": structure, "globals": self.global_structure}),
                    json!({"command": help, "globals": self.global_help}),
                )
            } else {
                (json!({"command": structure}), json!({"command": help}))
            };
            out.insert(
                path.join(" "),
                Print {
                    tool,
                    structure: canonical::fingerprint(&structure),
                    help: canonical::fingerprint(&help),
                },
            );
            self.walk(command, path, hidden, out);
            path.pop();
        }
    }
}

/// The elements of an array member (none when absent or not an array).
fn items<'a>(node: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    node.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// A string member.
fn text(node: &Value, key: &str) -> Option<String> {
    node.get(key).and_then(Value::as_str).map(str::to_string)
}

/// Keys of a command, flag or arg that hold prose, not structure.
const HELP_KEYS: &[&str] = &["help", "help_long", "cheat"];

/// Splits a command, flag or arg into its structure and its help texts: `help`, `help_long`
/// and `cheat`, the help of its flags and args, and the descriptions in its schemas.
fn split_help(node: &Value) -> (Value, Value) {
    let mut structure = node.clone();
    let mut help = Map::new();
    if let Some(object) = structure.as_object_mut() {
        for key in HELP_KEYS {
            if let Some(text) = object.remove(*key) {
                help.insert((*key).to_string(), text);
            }
        }
        for key in ["flags", "args"] {
            if let Some(Value::Array(list)) = object.get_mut(key) {
                let texts: Vec<Value> = list
                    .iter_mut()
                    .map(|item| {
                        item.as_object_mut()
                            .and_then(|item| item.remove("help"))
                            .unwrap_or(Value::Null)
                    })
                    .collect();
                help.insert(key.to_string(), Value::Array(texts));
            }
        }
        for key in ["schema", "restricted_schema"] {
            if let Some(schema) = object.get_mut(key) {
                let mut descriptions = Vec::new();
                strip_descriptions(schema, &mut descriptions);
                help.insert(key.to_string(), Value::Array(descriptions));
            }
        }
    }
    (structure, Value::Object(help))
}

/// Removes `description` from a JSON schema and every schema inside it, collecting them in
/// order. Only schema positions are visited, so a property that is itself called
/// `description` stays.
fn strip_descriptions(schema: &mut Value, out: &mut Vec<Value>) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    if let Some(description) = object.remove("description") {
        out.push(description);
    }
    for key in ["properties", "patternProperties", "$defs", "definitions"] {
        if let Some(Value::Object(children)) = object.get_mut(key) {
            for child in children.values_mut() {
                strip_descriptions(child, out);
            }
        }
    }
    for key in ["items", "additionalProperties", "not", "contains"] {
        if let Some(child) = object.get_mut(key) {
            strip_descriptions(child, out);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(children)) = object.get_mut(key) {
            for child in children {
                strip_descriptions(child, out);
            }
        }
    }
}

/// A served tool and the command it serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    /// The tool name.
    pub tool: String,
    /// The command's space-joined path.
    pub command: String,
}

/// What changed between the surface a server was built from and the current one.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Tools served now that were not.
    pub added: Vec<Served>,
    /// Tools that were served and are not any more.
    pub removed: Vec<Served>,
    /// Tools served in both whose structure changed.
    pub changed: Vec<Served>,
    /// Tools served in both of which only help texts changed (not drift).
    pub reworded: Vec<Served>,
    /// Everything else that changed and is not drift: the application's name or version, and
    /// unserved commands (one line each).
    pub unserved: Vec<String>,
}

/// Compares the surface a server was built from with the current one.
pub fn compare(built: &Surface, current: &Surface) -> Verdict {
    let mut verdict = Verdict::default();
    if built.name != current.name {
        verdict.unserved.push(format!(
            "application name: {} -> {}",
            built.name, current.name
        ));
    }
    if built.version != current.version {
        let show = |version: &Option<String>| version.clone().unwrap_or_else(|| "(none)".into());
        verdict.unserved.push(format!(
            "application version: {} -> {}",
            show(&built.version),
            show(&current.version)
        ));
    }
    let paths: BTreeSet<&String> = built
        .commands
        .keys()
        .chain(current.commands.keys())
        .collect();
    for path in paths {
        let (old, new) = (built.commands.get(path), current.commands.get(path));
        let served = |tool: &String| Served {
            tool: tool.clone(),
            command: path.clone(),
        };
        let old_tool = old.and_then(|print| print.tool.as_ref());
        let new_tool = new.and_then(|print| print.tool.as_ref());
        match (old_tool, new_tool) {
            (Some(before), Some(after)) if before == after => {
                let (Some(old), Some(new)) = (old, new) else {
                    continue;
                };
                if old.structure != new.structure {
                    verdict.changed.push(served(after));
                } else if old.help != new.help {
                    verdict.reworded.push(served(after));
                }
            }
            (before, after) => {
                if let Some(before) = before {
                    verdict.removed.push(served(before));
                }
                if let Some(after) = after {
                    verdict.added.push(served(after));
                }
                if before.is_none() && after.is_none() {
                    let what = match (old, new) {
                        (None, Some(_)) => "added",
                        (Some(_), None) => "removed",
                        (Some(old), Some(new)) if old != new => "changed",
                        _ => continue,
                    };
                    verdict
                        .unserved
                        .push(format!("{path} (not served): {what}"));
                }
            }
        }
    }
    verdict
}

impl Verdict {
    /// Whether anything the server serves changed.
    pub fn is_drift(&self) -> bool {
        !(self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty())
    }

    /// Whether nothing changed at all.
    pub fn is_empty(&self) -> bool {
        !self.is_drift() && self.reworded.is_empty() && self.unserved.is_empty()
    }

    /// The exit status both `fiskgen check` and `<binary> verify` give: 1 on drift, else 0.
    pub fn exit_code(&self) -> u8 {
        u8::from(self.is_drift())
    }

    /// The changes, one per line: `+ tool (new tool)`, `- tool (no longer served)`, `~ tool`
    /// followed by indented `details` (or the command that changed when there are none), then
    /// a `Not drift:` section. Empty when nothing changed.
    pub fn render(&self, details: impl Fn(&Served) -> Vec<String>) -> String {
        let mut out = String::new();
        for served in &self.added {
            let _ = writeln!(out, "+ {} (new tool)", served.tool);
        }
        for served in &self.removed {
            let _ = writeln!(out, "- {} (no longer served)", served.tool);
        }
        for served in &self.changed {
            let _ = writeln!(out, "~ {}", served.tool);
            let lines = details(served);
            if lines.is_empty() {
                let _ = writeln!(out, "    command \"{}\" changed", served.command);
            }
            for line in lines {
                let _ = writeln!(out, "    {line}");
            }
        }
        if !(self.reworded.is_empty() && self.unserved.is_empty()) {
            out.push_str("Not drift:\n");
            for line in &self.unserved {
                let _ = writeln!(out, "  {line}");
            }
            for served in &self.reworded {
                let _ = writeln!(out, "  {}: only help texts changed", served.tool);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document() -> Value {
        json!({"name": "tasks", "version": "1.0.0",
        "flags": [{"name": "db", "help": "the database", "required": false}],
        "commands": [
            {"name": "task", "help": "tasks", "commands": [
                {"name": "add", "help": "add one", "tags": ["impact:rw"],
                 "flags": [{"name": "priority", "help": "p", "completions": ["low"]}],
                 "restricted_schema": {"type": "object", "properties": {
                     "priority": {"type": "string", "description": "p"},
                     "description": {"type": "string"}}}},
                {"name": "list", "help": "list them"}
            ]},
            {"name": "purge", "help": "gone", "tags": ["ai:deny"]},
            {"name": "debug", "hidden": true, "commands": [{"name": "dump"}]}
        ]})
    }

    fn rules() -> Rules {
        Rules {
            global_flags: vec!["db".into()],
            ..Rules::default()
        }
    }

    #[test]
    fn a_served_command_is_known_by_its_served_name_and_filtered_by_its_own() {
        let named = Rules {
            tool_prefix: "t_".into(),
            tool_names: BTreeMap::from([("task_list".to_string(), "ls".to_string())]),
            stages: vec![Stage {
                label: "include".into(),
                include: true,
                filter: Filter {
                    tools: vec![Regex::new("^task_").expect("regex")],
                    tags: Vec::new(),
                },
            }],
            ..rules()
        };
        let surface = Surface::of(&document(), &named);
        let tools: Vec<&str> = surface.tools().into_keys().collect();
        assert_eq!(tools, ["ls", "t_task_add"]);
    }

    fn edit(document: &mut Value, pointer: &str, value: Value) {
        *document.pointer_mut(pointer).expect("pointer") = value;
    }

    #[test]
    fn leaves_are_served_unless_hidden_denied_or_filtered() {
        let surface = Surface::of(&document(), &rules());
        let tools: Vec<&str> = surface.tools().into_keys().collect();
        assert_eq!(tools, ["task_add", "task_list"]);
        for unserved in ["task", "purge", "debug", "debug dump"] {
            assert_eq!(surface.commands[unserved].tool, None, "{unserved}");
        }
        let filtered = Rules {
            stages: vec![Stage {
                label: "exclude".into(),
                include: false,
                filter: Filter {
                    tools: vec![Regex::new("list").expect("regex")],
                    tags: Vec::new(),
                },
            }],
            ..rules()
        };
        let surface = Surface::of(&document(), &filtered);
        let tools: Vec<&str> = surface.tools().into_keys().collect();
        assert_eq!(tools, ["task_add"]);
    }

    #[test]
    fn the_same_document_is_no_change() {
        let surface = Surface::of(&document(), &rules());
        let verdict = compare(&surface, &surface.clone());
        assert!(verdict.is_empty(), "{verdict:?}");
        assert_eq!(verdict.exit_code(), 0);
        assert_eq!(verdict.render(|_| Vec::new()), "");
    }

    #[test]
    fn a_change_in_an_unserved_command_is_reported_but_not_drift() {
        let built = Surface::of(&document(), &rules());
        let mut changed = document();
        changed["commands"][1]["flags"] = json!([{"name": "force"}]);
        changed["commands"][2]["commands"][0]["help"] = json!("dump it");
        let verdict = compare(&built, &Surface::of(&changed, &rules()));
        assert!(!verdict.is_drift(), "{verdict:?}");
        assert_eq!(verdict.exit_code(), 0);
        assert_eq!(
            verdict.unserved,
            [
                "debug dump (not served): changed",
                "purge (not served): changed"
            ]
        );
        let report = verdict.render(|_| Vec::new());
        assert!(
            report.starts_with("Not drift:\n  debug dump (not served): changed\n"),
            "{report}"
        );
    }

    #[test]
    fn help_texts_of_served_commands_are_not_drift() {
        let built = Surface::of(&document(), &rules());
        let mut reworded = document();
        edit(
            &mut reworded,
            "/commands/0/commands/0/help",
            json!("add a task"),
        );
        edit(
            &mut reworded,
            "/commands/0/commands/0/restricted_schema/properties/priority/description",
            json!("how urgent"),
        );
        edit(&mut reworded, "/flags/0/help", json!("where tasks live"));
        let verdict = compare(&built, &Surface::of(&reworded, &rules()));
        assert!(!verdict.is_drift(), "{verdict:?}");
        assert_eq!(verdict.reworded.len(), 2, "{verdict:?}");
        assert!(
            verdict
                .render(|_| Vec::new())
                .contains("  task_add: only help texts changed\n")
        );
    }

    #[test]
    fn added_removed_and_changed_tools_are_drift() {
        let built = Surface::of(&document(), &rules());
        let mut upgraded = document();
        edit(&mut upgraded, "/version", json!("1.1.0"));
        edit(
            &mut upgraded,
            "/commands/0/commands/0/flags/0/completions",
            json!(["low", "urgent"]),
        );
        edit(
            &mut upgraded,
            "/commands/0/commands/1",
            json!({"name": "archive"}),
        );
        // A property named `description` is structure, not help.
        let schema = "/commands/0/commands/0/restricted_schema/properties/description/type";
        edit(&mut upgraded, schema, json!("integer"));
        let verdict = compare(&built, &Surface::of(&upgraded, &rules()));
        assert!(verdict.is_drift());
        assert_eq!(verdict.exit_code(), 1);
        let report = verdict.render(|served| vec![format!("details of {}", served.command)]);
        assert_eq!(
            report,
            "+ task_archive (new tool)\n- task_list (no longer served)\n~ task_add\n    details \
             of task add\nNot drift:\n  application version: 1.0.0 -> 1.1.0\n"
        );
    }

    #[test]
    fn a_changed_global_flag_changes_every_served_tool() {
        let built = Surface::of(&document(), &rules());
        let mut changed = document();
        edit(&mut changed, "/flags/0/required", json!(true));
        let verdict = compare(&built, &Surface::of(&changed, &rules()));
        let tools: Vec<&str> = verdict.changed.iter().map(|s| s.tool.as_str()).collect();
        assert_eq!(tools, ["task_add", "task_list"]);

        // Not exposed: no tool changes.
        let mut unexposed = document();
        edit(&mut unexposed, "/flags/0/help", json!("reworded"));
        unexposed["flags"][0]["completions"] = json!(["a.db"]);
        let verdict = compare(
            &Surface::of(&document(), &Rules::default()),
            &Surface::of(&unexposed, &Rules::default()),
        );
        assert!(verdict.is_empty(), "{verdict:?}");

        // A flag that becomes required is exposed on every tool, as a rebuilt server would.
        let verdict = compare(
            &Surface::of(&document(), &Rules::default()),
            &Surface::of(&changed, &Rules::default()),
        );
        assert_eq!(verdict.changed.len(), 2, "{verdict:?}");
        // fisk's own flags never are.
        let mut framework = document();
        framework["flags"] = json!([{"name": "help-long", "required": true}]);
        let verdict = compare(
            &Surface::of(&document(), &Rules::default()),
            &Surface::of(&framework, &Rules::default()),
        );
        assert!(verdict.is_empty(), "{verdict:?}");
        assert!(is_framework_flag("fisk-introspect") && !is_framework_flag("store"));
    }

    #[test]
    fn a_command_that_starts_being_served_is_a_new_tool() {
        let built = Surface::of(&document(), &rules());
        let mut undenied = document();
        edit(&mut undenied, "/commands/1/tags", json!([]));
        let verdict = compare(&built, &Surface::of(&undenied, &rules()));
        assert_eq!(
            verdict.added,
            [Served {
                tool: "purge".into(),
                command: "purge".into()
            }]
        );
    }

    #[test]
    fn tool_names_and_filters_follow_the_reference() {
        assert!(is_valid_tool_name("stream_info"));
        assert!(!is_valid_tool_name("with space"));
        assert!(!is_valid_tool_name(&"x".repeat(129)));
        assert_eq!(tool_name(&["a", "b-c"]), "a_b-c");
        let filter = Filter {
            tools: Vec::new(),
            tags: vec![String::new()],
        };
        assert!(filter.matches("x", Some(&[])));
        assert!(!filter.matches("x", Some(&["t".to_string()])));
        assert!(!filter.matches("x", None), "built-ins match by name alone");
    }
}
