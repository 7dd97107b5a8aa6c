//! The resources and prompts a server offers, decided at build time from the application's own
//! help (docs/resources.md): each served tool's help rendered as Markdown (`markdown`), the
//! application's cheats as cheat sheets and prompts, the prompts' arguments from the cheats'
//! placeholders, and their completion values from the flags and arguments they are named after.

use fiskgen_contract::docs as uris;
use serde_json::{Map, Value};

use crate::config::{Config, McpConfig};
use crate::ir::{self, Cheat, CheatArgument, Help, ToolKind};
use crate::model;

mod info;
mod markdown;

pub use info::render_text;

/// The application's global flags a command tool exposes (its global parameters), in the
/// model's order.
fn globals_of<'m>(model: Option<&'m model::Application>, tool: &ir::Tool) -> Vec<&'m model::Flag> {
    let (Some(model), ToolKind::Command(command)) = (model, &tool.kind) else {
        return Vec::new();
    };
    model
        .flags
        .iter()
        .filter(|flag| {
            command
                .params
                .iter()
                .any(|param| param.global && param.name == flag.name)
        })
        .collect()
}

/// The docs of a server serving `tools` from `model` (`None`: built-ins only).
pub fn docs(config: &Config, model: Option<&model::Application>, tools: &[ir::Tool]) -> ir::Docs {
    let default_mcp = McpConfig::default();
    let mcp = config.mcp.as_ref().unwrap_or(&default_mcp);
    let identity = &config.identity;
    let app_name = model.map(|m| m.name.as_str()).unwrap_or(identity.as_str());
    let mut docs = ir::Docs {
        resources: mcp.resources,
        prompts: mcp.prompts,
        skills: mcp.skills,
        page_size: u32::try_from(mcp.list_page_size.unwrap_or(mcp.page_size)).unwrap_or(u32::MAX),
        ..ir::Docs::default()
    };
    if mcp.resources {
        for tool in tools {
            let command = match &tool.kind {
                ToolKind::Command(command) => model.and_then(|m| find(m, &command.command)),
                ToolKind::Builtin { .. } => None,
            };
            docs.help.push(Help {
                tool: tool.name.clone(),
                uri: uris::help_uri(identity, &tool.name),
                title: tool.title.clone(),
                summary: summary(tool, command),
                markdown: markdown::tool(app_name, tool, command, &globals_of(model, tool)),
            });
        }
        if !docs.help.is_empty() {
            docs.template = Some(uris::help_template(identity));
        }
    }
    if let Some(model) = model
        && (mcp.resources || mcp.prompts || mcp.skills)
    {
        docs.cheats = cheats(identity, model, tools, mcp.resources);
    }
    docs
}

/// One line about a tool: its short help, else the first line of its description.
fn summary(tool: &ir::Tool, command: Option<&model::Command>) -> String {
    let short = command.map(|c| c.help.trim()).unwrap_or("");
    let line = if short.is_empty() {
        tool.description.lines().next().unwrap_or("")
    } else {
        short.lines().next().unwrap_or("")
    };
    if line.is_empty() {
        tool.title.clone()
    } else {
        line.to_string()
    }
}

/// The command at `path`.
pub(crate) fn find<'m>(
    model: &'m model::Application,
    path: &[String],
) -> Option<&'m model::Command> {
    let (first, rest) = path.split_first()?;
    let mut command = model.commands.iter().find(|c| &c.name == first)?;
    for segment in rest {
        command = command.commands.iter().find(|c| &c.name == segment)?;
    }
    Some(command)
}

/// Where a cheat belongs: the application (label = its name), a command whose name or alias
/// is the label, or nothing.
enum Owner<'m> {
    Application,
    Command(Vec<String>, &'m model::Command),
    Nothing,
}

/// The command a cheat is attributed to (fisk v0.9.x puts it on the command as `cheat`).
fn owner<'m>(model: &'m model::Application, label: &str, text: &str) -> Owner<'m> {
    fn walk<'m>(
        commands: &'m [model::Command],
        path: &mut Vec<String>,
        label: &str,
        text: &str,
    ) -> Option<(Vec<String>, &'m model::Command)> {
        for command in commands {
            path.push(command.name.clone());
            let named = command.name == label || command.aliases.iter().any(|a| a == label);
            if named && command.cheat.as_deref() == Some(text) {
                return Some((path.clone(), command));
            }
            if let Some(found) = walk(&command.commands, path, label, text) {
                return Some(found);
            }
            path.pop();
        }
        None
    }
    if let Some((path, command)) = walk(&model.commands, &mut Vec::new(), label, text) {
        return Owner::Command(path, command);
    }
    if label == model.name {
        Owner::Application
    } else {
        Owner::Nothing
    }
}

/// The served cheats. A cheat of a command that is not served (hidden, `ai:deny`, filtered
/// out) is left out with it: it would teach a client a command it cannot run.
fn cheats(
    identity: &str,
    model: &model::Application,
    tools: &[ir::Tool],
    resources: bool,
) -> Vec<Cheat> {
    let served_command = |path: &[String]| {
        tools.iter().find(|tool| match &tool.kind {
            ToolKind::Command(command) => command.command.starts_with(path),
            ToolKind::Builtin { .. } => false,
        })
    };
    let mut out = Vec::new();
    for (label, text) in &model.cheats {
        let (tool, scope): (Option<&ir::Tool>, Vec<&ir::Tool>) = match owner(model, label, text) {
            Owner::Command(path, command) => {
                let Some(_) = served_command(&path) else {
                    continue;
                };
                let tool = if command.is_leaf() {
                    served_command(&path)
                } else {
                    None
                };
                let scope = tools
                    .iter()
                    .filter(
                        |t| matches!(&t.kind, ToolKind::Command(c) if c.command.starts_with(&path)),
                    )
                    .collect();
                (tool, scope)
            }
            Owner::Application | Owner::Nothing => (None, tools.iter().collect()),
        };
        let arguments = uris::placeholders(text)
            .into_iter()
            .map(|name| argument(name, model, &scope))
            .collect();
        out.push(Cheat {
            label: label.clone(),
            uri: resources.then(|| uris::cheat_uri(identity, label)),
            description: uris::summary(text)
                .map(str::to_string)
                .unwrap_or_else(|| format!("Cheat sheet \"{label}\" of {}", model.name)),
            tool: tool.map(|t| t.name.clone()),
            arguments,
            text: text.clone(),
        });
    }
    out
}

/// A placeholder as a prompt argument: described and completed by the first flag or argument
/// of the same name among `scope`'s commands (their help and completion hints from the model,
/// their enum values from the schema clients are served).
fn argument(name: &str, model: &model::Application, scope: &[&ir::Tool]) -> CheatArgument {
    let mut description = None;
    let mut values: Vec<String> = Vec::new();
    for tool in scope {
        let ToolKind::Command(command) = &tool.kind else {
            continue;
        };
        let Some(spec) = find(model, &command.command) else {
            continue;
        };
        let flag = spec
            .flags
            .iter()
            .chain(model.flags.iter().filter(|flag| {
                command
                    .params
                    .iter()
                    .any(|param| param.global && param.name == flag.name)
            }))
            .find(|f| f.name == name);
        let arg = spec.args.iter().find(|a| a.name == name);
        let help = flag
            .map(|f| f.help.as_str())
            .or(arg.map(|a| a.help.as_str()));
        if help.is_none() {
            continue;
        }
        if description.is_none() {
            description = help.filter(|h| !h.is_empty()).map(str::to_string);
        }
        let hints = flag.map(|f| f.completions.clone()).unwrap_or_default();
        for value in hints
            .into_iter()
            .chain(enum_values(&tool.input_schema, name))
        {
            if !values.contains(&value) {
                values.push(value);
            }
        }
    }
    CheatArgument {
        name: name.to_string(),
        description: description.unwrap_or_else(|| format!("The value of <{name}> in the cheat")),
        values,
    }
}

/// The `enum` of a property (or of its items) in a command's full schema.
fn enum_values(schema: &Map<String, Value>, name: &str) -> Vec<String> {
    let property = &schema.get("properties").and_then(|p| p.get(name));
    let Some(property) = property else {
        return Vec::new();
    };
    let list = property
        .get("enum")
        .or_else(|| property.get("items").and_then(|items| items.get("enum")));
    list.and_then(Value::as_array)
        .map(|values| {
            values
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string())
                })
                .collect()
        })
        .unwrap_or_default()
}
