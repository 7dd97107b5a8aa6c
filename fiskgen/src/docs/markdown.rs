//! A served tool's full help as Markdown: what `<app> help <command>` says, plus the defaults,
//! environment variables, tags and cheat that help spreads over several places.

use serde_json::Value;

use crate::ir::{self, ToolKind};
use crate::model;

/// The help of `tool`; `command` is its command in the model (`None` for a built-in) and
/// `globals` the application's global flags it exposes.
pub(super) fn tool(
    app: &str,
    tool: &ir::Tool,
    command: Option<&model::Command>,
    globals: &[&model::Flag],
) -> String {
    let mut out = String::new();
    match (&tool.kind, command) {
        (ToolKind::Command(spec), Some(command)) => {
            out.push_str(&format!("# {app} {}\n\n", tool.title));
            out.push_str(&format!("MCP tool: `{}`\n", tool.name));
            for text in [command.help.trim(), command.help_long.trim()] {
                if !text.is_empty() && !out.contains(text) {
                    out.push_str(&format!("\n{text}\n"));
                }
            }
            out.push_str(&format!(
                "\n## Usage\n\n```text\n{}\n```\n",
                usage(app, spec, command, globals)
            ));
            let args: Vec<&model::Arg> = command.args.iter().filter(|a| !a.hidden).collect();
            if !args.is_empty() {
                out.push_str(
                    "\n## Arguments\n\n| Argument | Required | Default | Environment | Description |\n\
                     |---|---|---|---|---|\n",
                );
                for arg in args {
                    out.push_str(&row(&[
                        format!(
                            "`{}`{}",
                            arg.name,
                            if arg.cumulative { " (repeatable)" } else { "" }
                        ),
                        yes_no(arg.required),
                        defaults(&arg.default),
                        env(arg.envar.as_deref()),
                        cell(&arg.help),
                    ]));
                }
            }
            let own: Vec<&model::Flag> = command.flags.iter().collect();
            flags(&mut out, "Flags", &own);
            flags(&mut out, "Global flags", globals);
            if !tool.tags.is_empty() {
                let tags: Vec<String> = tool.tags.iter().map(|t| format!("`{t}`")).collect();
                out.push_str(&format!("\n## Tags\n\n{}\n", tags.join(", ")));
            }
            if let Some(confirm) = &tool.confirm {
                out.push_str(&format!(
                    "\nCalls need the user's approval first (gated by `{}`).\n",
                    confirm.trigger
                ));
            }
            if let Some(cheat) = command.cheat.as_deref().filter(|c| !c.trim().is_empty()) {
                out.push_str(&format!("\n## Cheat\n\n{}\n", fenced(cheat)));
            }
        }
        _ => {
            out.push_str(&format!("# {}\n\n", tool.title));
            out.push_str(&format!(
                "MCP tool: `{}` (built into the server)\n",
                tool.name
            ));
            if !tool.description.trim().is_empty() {
                out.push_str(&format!("\n{}\n", tool.description.trim()));
            }
            schema_arguments(&mut out, &tool.input_schema);
        }
    }
    out
}

/// `<app> <path> [<flags>] <arg> [<arg>...]`.
fn usage(
    app: &str,
    spec: &ir::CommandTool,
    command: &model::Command,
    globals: &[&model::Flag],
) -> String {
    let mut line = format!("{app} {}", spec.command.join(" "));
    if command
        .flags
        .iter()
        .chain(globals.iter().copied())
        .any(|f| !f.hidden)
    {
        line.push_str(" [<flags>]");
    }
    for arg in command.args.iter().filter(|a| !a.hidden) {
        let word = format!("<{}>{}", arg.name, if arg.cumulative { "..." } else { "" });
        line.push(' ');
        if arg.required {
            line.push_str(&word);
        } else {
            line.push_str(&format!("[{word}]"));
        }
    }
    line
}

fn flags(out: &mut String, heading: &str, flags: &[&model::Flag]) {
    let flags: Vec<&model::Flag> = flags.iter().copied().filter(|f| !f.hidden).collect();
    if flags.is_empty() {
        return;
    }
    out.push_str(&format!(
        "\n## {heading}\n\n| Flag | Required | Default | Environment | Description |\n\
         |---|---|---|---|---|\n"
    ));
    for flag in flags {
        let mut name = format!("`--{}", flag.name);
        if !flag.boolean {
            let holder = flag
                .place_holder
                .clone()
                .unwrap_or_else(|| flag.name.to_uppercase());
            name.push_str(&format!("={holder}"));
        }
        name.push('`');
        if let Some(short) = flag.short.and_then(char::from_u32) {
            name.push_str(&format!(" (`-{short}`)"));
        }
        if flag.negatable {
            name.push_str(&format!(", `--no-{}`", flag.name));
        }
        if flag.cumulative {
            name.push_str(" (repeatable)");
        }
        let mut help = cell(&flag.help);
        if !flag.completions.is_empty() {
            let values: Vec<String> = flag.completions.iter().map(|v| format!("`{v}`")).collect();
            help.push_str(&format!(" Values: {}.", values.join(", ")));
        }
        out.push_str(&row(&[
            name,
            yes_no(flag.required),
            defaults(&flag.default),
            env(flag.envar.as_deref()),
            help.trim().to_string(),
        ]));
    }
}

/// A built-in's arguments, from its input schema.
fn schema_arguments(out: &mut String, schema: &serde_json::Map<String, Value>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    if properties.is_empty() {
        return;
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    out.push_str(
        "\n## Arguments\n\n| Argument | Type | Required | Description |\n|---|---|---|---|\n",
    );
    for (name, property) in properties {
        let kind = property
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("any");
        let help = property
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("");
        out.push_str(&row(&[
            format!("`{name}`"),
            kind.to_string(),
            yes_no(required.contains(&name.as_str())),
            cell(help),
        ]));
    }
}

fn row(cells: &[String]) -> String {
    format!("| {} |\n", cells.join(" | "))
}

fn yes_no(on: bool) -> String {
    if on { "yes" } else { "no" }.to_string()
}

fn defaults(values: &[String]) -> String {
    if values.is_empty() {
        return String::new();
    }
    values
        .iter()
        .map(|v| format!("`{}`", cell(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn env(var: Option<&str>) -> String {
    var.filter(|v| !v.is_empty())
        .map(|v| format!("`{v}`"))
        .unwrap_or_default()
}

/// Text safe inside a table cell: one line, `|` escaped.
fn cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// A code block that no backtick run inside `text` can close.
fn fenced(text: &str) -> String {
    let mut fence = "```".to_string();
    while text.contains(&fence) {
        fence.push('`');
    }
    format!("{fence}text\n{}\n{fence}", text.trim_end())
}
