//! Runtime narrowing: an operator removes tools from a built server without rebuilding it
//! (`--read-only`, `--tools REGEX`, `--exclude-tools REGEX`, `--tags TAG`, `--group NAME`), and
//! the parts an HTTP server also serves on `/mcp/<group>` ([`parts`]).
//!
//! Narrowing only ever takes tools away from the compiled-in set: it builds a new tool list
//! from the served specs, unchanged (a confirmation gate, hints and schema stay exactly as
//! built), so it can neither add a tool nor ungate one. A pattern or tag that matches no tool
//! is a warning, not an error (it may be meant for another build of the same config); a group
//! that the server does not have is an error, since its part does not exist.

use regex::Regex;

use crate::spec::app::{AppSpec, ToolSpec};
use crate::spec::groups::{groups_of, is_in};

/// The narrowing flags, shared by serving, `tools` and `config` (see docs/runtime.md).
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct NarrowArgs {
    /// Serve only tools with the read-only hint (ai:read_only or a hint_tags mapping)
    #[arg(long, global = true)]
    pub(crate) read_only: bool,
    /// Serve only tools whose name matches REGEX (repeatable: any may match; unanchored, use
    /// ^...$ for a whole name)
    #[arg(long = "tools", value_name = "REGEX", global = true, value_parser = pattern)]
    pub(crate) tools: Vec<Regex>,
    /// Do not serve tools whose name matches REGEX (repeatable)
    #[arg(long = "exclude-tools", value_name = "REGEX", global = true, value_parser = pattern)]
    pub(crate) exclude_tools: Vec<Regex>,
    /// Serve only tools carrying TAG (repeatable: any may match; exact, as in include.tags)
    #[arg(long = "tags", value_name = "TAG", global = true)]
    pub(crate) tags: Vec<String>,
    /// Serve only the tools of group NAME (the first word of their command, e.g. stream, or a
    /// tag under the built-in group_tag_prefix); over HTTP each group is also served on
    /// /mcp/NAME without this flag
    #[arg(long = "group", value_name = "NAME", global = true)]
    pub(crate) group: Option<String>,
}

/// The groups of `app`'s tools, in serving order.
pub(crate) fn groups(app: &AppSpec) -> Vec<String> {
    groups_of(app, app.tools)
}

/// Each group of `app` with the server that serves only its tools (`/mcp/<group>`): computed
/// once at start, so each part's list is fixed like the whole one. Taking tools away only,
/// as narrowing does: gates, hints and schemas stay as built.
pub(crate) fn parts(app: &'static AppSpec) -> Vec<(String, &'static AppSpec)> {
    groups(app)
        .into_iter()
        .map(|group| {
            let kept: Vec<&'static ToolSpec> = app
                .tools
                .iter()
                .copied()
                .filter(|tool| is_in(app, tool, &group))
                .collect();
            (group, leak(app, kept))
        })
        .collect()
}

/// `app` serving only `tools`, for the rest of the process.
fn leak(app: &'static AppSpec, tools: Vec<&'static ToolSpec>) -> &'static AppSpec {
    let tools: &'static [&'static ToolSpec] = Box::leak(tools.into_boxed_slice());
    Box::leak(Box::new(AppSpec {
        tools,
        ..app.clone()
    }))
}

fn pattern(text: &str) -> Result<Regex, String> {
    Regex::new(text).map_err(|error| {
        let text = error.to_string();
        let reason = text
            .lines()
            .rev()
            .find(|line| !line.trim().is_empty())
            .unwrap_or(&text)
            .trim()
            .trim_start_matches("error: ")
            .to_string();
        format!("not a valid regular expression: {reason}")
    })
}

/// The served set after narrowing.
#[derive(Debug)]
pub(crate) struct Narrowed {
    /// The server with only the kept tools (the same static specs as built).
    pub(crate) app: &'static AppSpec,
    /// Patterns and tags that matched no tool.
    pub(crate) warnings: Vec<String>,
    /// `narrowed by ...: N of M tools`, when any flag was given.
    pub(crate) summary: Option<String>,
}

impl NarrowArgs {
    /// `--group NAME` names a group of `app`: an unknown group is an error naming the known
    /// ones (a part that does not exist would serve nothing, and its URL is a 404).
    pub(crate) fn check_group(&self, app: &AppSpec) -> Result<(), String> {
        let Some(group) = &self.group else {
            return Ok(());
        };
        let known = groups(app);
        if known.contains(group) {
            return Ok(());
        }
        Err(format!(
            "--group {group:?}: this server has no such group; its groups are: {}",
            if known.is_empty() {
                "(none)".to_string()
            } else {
                known.join(", ")
            }
        ))
    }

    /// Whether any narrowing flag was given.
    pub(crate) fn is_set(&self) -> bool {
        self.read_only
            || !self.tools.is_empty()
            || !self.exclude_tools.is_empty()
            || !self.tags.is_empty()
            || self.group.is_some()
    }

    /// Whether `tool` of `app` survives every flag.
    fn keeps(&self, app: &AppSpec, tool: &ToolSpec) -> bool {
        (!self.read_only || tool.hints.read_only)
            && (self.tools.is_empty() || self.tools.iter().any(|re| re.is_match(tool.name)))
            && !self.exclude_tools.iter().any(|re| re.is_match(tool.name))
            && (self.tags.is_empty()
                || tool
                    .tags
                    .iter()
                    .any(|tag| self.tags.iter().any(|t| t == tag)))
            && self
                .group
                .as_ref()
                .is_none_or(|group| is_in(app, tool, group))
    }

    /// The flags as they would be passed again (for the stdio command clients run).
    pub(crate) fn to_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if self.read_only {
            args.push("--read-only".to_string());
        }
        for re in &self.tools {
            args.extend(["--tools".to_string(), re.as_str().to_string()]);
        }
        for re in &self.exclude_tools {
            args.extend(["--exclude-tools".to_string(), re.as_str().to_string()]);
        }
        for tag in &self.tags {
            args.extend(["--tags".to_string(), tag.clone()]);
        }
        if let Some(group) = &self.group {
            args.extend(["--group".to_string(), group.clone()]);
        }
        args
    }

    /// What the flags say, for the summary line.
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.read_only {
            parts.push("--read-only".to_string());
        }
        for re in &self.tools {
            parts.push(format!("--tools {:?}", re.as_str()));
        }
        for re in &self.exclude_tools {
            parts.push(format!("--exclude-tools {:?}", re.as_str()));
        }
        for tag in &self.tags {
            parts.push(format!("--tags {tag:?}"));
        }
        if let Some(group) = &self.group {
            parts.push(format!("--group {group:?}"));
        }
        parts.join(" ")
    }

    /// Applies the flags to `app`. Without flags, `app` itself.
    pub(crate) fn apply(&self, app: &'static AppSpec) -> Narrowed {
        if !self.is_set() {
            return Narrowed {
                app,
                warnings: Vec::new(),
                summary: None,
            };
        }
        let kept: Vec<&'static ToolSpec> = app
            .tools
            .iter()
            .copied()
            .filter(|tool| self.keeps(app, tool))
            .collect();
        let mut warnings = Vec::new();
        for re in &self.tools {
            if !app.tools.iter().any(|t| re.is_match(t.name)) {
                warnings.push(format!(
                    "--tools {:?} matches no tool of this server",
                    re.as_str()
                ));
            }
        }
        for re in &self.exclude_tools {
            if !app.tools.iter().any(|t| re.is_match(t.name)) {
                warnings.push(format!(
                    "--exclude-tools {:?} matches no tool of this server",
                    re.as_str()
                ));
            }
        }
        for tag in &self.tags {
            if !app.tools.iter().any(|t| t.tags.contains(&tag.as_str())) {
                warnings.push(format!("--tags {tag:?}: no tool of this server carries it"));
            }
        }
        if self.read_only && !app.tools.iter().any(|t| t.hints.read_only) {
            warnings.push("--read-only: no tool of this server has the read-only hint".into());
        }
        let summary = Some(format!(
            "narrowed by {}: {} of {} tools served",
            self.describe(),
            kept.len(),
            app.tools.len()
        ));
        let app = leak(app, kept);
        Narrowed {
            app,
            warnings,
            summary,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::app::{Builtin, FileAccess, Hints, Run, Settings};

    const fn tool(
        name: &'static str,
        tags: &'static [&'static str],
        read_only: bool,
        confirm: Option<&'static str>,
    ) -> ToolSpec {
        ToolSpec {
            name,
            title: name,
            description: "",
            tags,
            hints: Hints {
                read_only,
                destructive: false,
                idempotent: false,
                open_world: false,
                additive: false,
            },
            confirm,
            input_schema: "{}",
            questions: &[],
            run: Run::Builtin(Builtin::ReadFile(FileAccess {
                roots: &[],
                max_bytes: None,
            })),
        }
    }

    static LIST: ToolSpec = tool("task_list", &["ai:read_only", "impact:ro"], true, None);
    static ADD: ToolSpec = tool("task_add", &["impact:rw"], false, None);
    static DELETE: ToolSpec = tool("task_delete", &["ai:confirm"], false, Some("ai:confirm"));
    static APP: AppSpec = AppSpec {
        identity: "tasks",
        fiskgen_version: "0",
        tools: &[&LIST, &ADD, &DELETE],
        settings: Settings {
            port: 0,
            address: "",
            tasks: None,
            ..Settings::DEFAULT
        },
        ..AppSpec::EMPTY
    };

    fn args(read_only: bool, tools: &[&str], exclude: &[&str], tags: &[&str]) -> NarrowArgs {
        NarrowArgs {
            read_only,
            tools: tools.iter().map(|p| pattern(p).expect("regex")).collect(),
            exclude_tools: exclude.iter().map(|p| pattern(p).expect("regex")).collect(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            group: None,
        }
    }

    fn names(narrowed: &Narrowed) -> Vec<&'static str> {
        narrowed.app.tools.iter().map(|t| t.name).collect()
    }

    #[test]
    fn no_flags_serve_the_built_set_unchanged() {
        let narrowed = args(false, &[], &[], &[]).apply(&APP);
        assert!(std::ptr::eq(narrowed.app, &APP));
        assert!(narrowed.summary.is_none() && narrowed.warnings.is_empty());
    }

    #[test]
    fn read_only_keeps_only_read_only_hints() {
        let narrowed = args(true, &[], &[], &[]).apply(&APP);
        assert_eq!(names(&narrowed), ["task_list"]);
        assert_eq!(
            narrowed.summary.as_deref(),
            Some("narrowed by --read-only: 1 of 3 tools served")
        );
    }

    #[test]
    fn patterns_and_tags_combine_and_only_remove() {
        let narrowed = args(false, &["^task_", "nothing_here"], &["_add$"], &[]).apply(&APP);
        assert_eq!(names(&narrowed), ["task_list", "task_delete"]);
        // The gate is the built one: narrowing cannot ungate a tool.
        assert_eq!(narrowed.app.tools[1].confirm, Some("ai:confirm"));
        assert_eq!(
            narrowed.warnings,
            ["--tools \"nothing_here\" matches no tool of this server"]
        );
        let narrowed = args(false, &[], &[], &["impact:rw", "impact:none"]).apply(&APP);
        assert_eq!(names(&narrowed), ["task_add"]);
        assert_eq!(
            narrowed.warnings,
            ["--tags \"impact:none\": no tool of this server carries it"]
        );
        // A pattern naming a tool the server does not have adds nothing.
        let narrowed = args(false, &["^store_purge$"], &[], &[]).apply(&APP);
        assert!(names(&narrowed).is_empty());
    }

    const fn command(name: &'static str, path: &'static [&'static str]) -> ToolSpec {
        let mut spec = tool(name, &[], false, None);
        spec.run = Run::Command(crate::spec::params::Command {
            path,
            globals: crate::spec::params::Globals::NONE,
            params: &[],
        });
        spec
    }

    static STREAM_LS: ToolSpec = command("stream_ls", &["stream", "ls"]);
    static KV_GET: ToolSpec = command("kv_get", &["kv", "get"]);
    static STREAM_INFO: ToolSpec = command("stream_info", &["stream", "info"]);
    static PUB: ToolSpec = command("pub", &["pub"]);
    static GROUPED: AppSpec = AppSpec {
        identity: "nats",
        fiskgen_version: "0",
        tools: &[&STREAM_LS, &KV_GET, &STREAM_INFO, &PUB, &LIST],
        settings: Settings {
            port: 0,
            address: "",
            tasks: None,
            ..Settings::DEFAULT
        },
        ..AppSpec::EMPTY
    };

    #[test]
    fn each_part_serves_only_its_groups_tools() {
        let parts = parts(&GROUPED);
        let named: Vec<(&str, Vec<&str>)> = parts
            .iter()
            .map(|(group, app)| (group.as_str(), app.tools.iter().map(|t| t.name).collect()))
            .collect();
        assert_eq!(
            named,
            [
                ("stream", vec!["stream_ls", "stream_info"]),
                ("kv", vec!["kv_get"])
            ]
        );
    }

    static TAGGED: AppSpec = AppSpec {
        identity: "tasks",
        fiskgen_version: "0",
        tools: &[&LIST, &ADD, &DELETE, &STREAM_LS],
        settings: Settings {
            port: 0,
            address: "",
            tasks: None,
            group_tag_prefix: Some("impact:"),
            ..Settings::DEFAULT
        },
        ..AppSpec::EMPTY
    };

    #[test]
    fn tags_under_the_prefix_are_parts_too_beside_command_groups() {
        let parts = parts(&TAGGED);
        let named: Vec<(&str, Vec<&str>)> = parts
            .iter()
            .map(|(group, app)| (group.as_str(), app.tools.iter().map(|t| t.name).collect()))
            .collect();
        assert_eq!(
            named,
            [
                ("ro", vec!["task_list"]),
                ("rw", vec!["task_add"]),
                ("stream", vec!["stream_ls"])
            ]
        );
        let mut given = args(false, &[], &[], &[]);
        given.group = Some("rw".into());
        assert_eq!(names(&given.apply(&TAGGED)), ["task_add"]);
        // Without the prefix, the tags name no group.
        assert!(given.check_group(&APP).is_err());
    }

    #[test]
    fn group_flag_narrows_and_an_unknown_group_names_the_known_ones() {
        let mut given = args(false, &[], &[], &[]);
        given.group = Some("stream".into());
        let narrowed = given.apply(&GROUPED);
        assert_eq!(names(&narrowed), ["stream_ls", "stream_info"]);
        assert_eq!(given.to_args(), ["--group", "stream"]);
        assert_eq!(given.check_group(&GROUPED), Ok(()));
        given.group = Some("streams".into());
        assert_eq!(
            given.check_group(&GROUPED),
            Err(
                "--group \"streams\": this server has no such group; its groups are: stream, kv"
                    .into()
            )
        );
    }

    #[test]
    fn a_bad_pattern_is_a_usage_error() {
        let error = pattern("(").expect_err("refused");
        assert!(
            error.starts_with("not a valid regular expression"),
            "{error}"
        );
    }

    #[test]
    fn flags_round_trip_for_the_stdio_command() {
        let given = args(true, &["^a"], &["b$"], &["t"]);
        assert_eq!(
            given.to_args(),
            [
                "--read-only",
                "--tools",
                "^a",
                "--exclude-tools",
                "b$",
                "--tags",
                "t"
            ]
        );
    }
}
