//! What `fiskgen info` says about the resources, prompts and skills a server will offer.

use std::fmt::Write as _;

use crate::ir;

/// The resources, prompts and skills, as text that fits `width` columns.
pub fn render_text(docs: &ir::Docs, width: usize) -> String {
    let mut out = String::new();
    if !docs.resources {
        out.push_str("\nResources: off (expose.agent.mcp.resources: false).\n");
    } else {
        let sheets: Vec<&ir::Cheat> = docs.cheats.iter().filter(|c| c.uri.is_some()).collect();
        let _ = writeln!(
            out,
            "\nResources ({} tool help pages, {} cheat sheets, {} per page of resources/list):",
            docs.help.len(),
            sheets.len(),
            docs.page_size
        );
        let mut rows: Vec<(String, String)> = Vec::new();
        if let (Some(template), Some(first)) = (&docs.template, docs.help.first()) {
            rows.push((
                template.clone(),
                format!("template: a tool's help by name (e.g. {})", first.uri),
            ));
        }
        rows.extend(sheets.iter().map(|cheat| {
            (
                cheat.uri.clone().unwrap_or_default(),
                format!("cheat sheet: {}", cheat.description),
            )
        }));
        if rows.is_empty() {
            out.push_str("  none\n");
        }
        table(&mut out, &rows, width);
    }
    if !docs.prompts {
        out.push_str("\nPrompts: off (expose.agent.mcp.prompts: false).\n");
    } else if docs.cheats.is_empty() {
        out.push_str("\nPrompts: none (the application declares no cheats).\n");
    } else {
        let _ = writeln!(
            out,
            "\nPrompts (one per cheat; completion/complete offers the values shown):"
        );
        let rows: Vec<(String, String)> = docs
            .cheats
            .iter()
            .map(|cheat| {
                let arguments: Vec<String> = cheat
                    .arguments
                    .iter()
                    .map(|argument| match argument.values.as_slice() {
                        [] => argument.name.clone(),
                        values => format!("{}: {}", argument.name, values.join("|")),
                    })
                    .collect();
                (
                    format!("{}({})", cheat.label, arguments.join(", ")),
                    cheat.description.clone(),
                )
            })
            .collect();
        table(&mut out, &rows, width);
    }
    if !docs.skills {
        out.push_str("\nSkills: off (expose.agent.mcp.skills: false).\n");
    } else if docs.cheats.is_empty() && docs.overview.is_none() {
        out.push_str("\nSkills: none (the application declares no cheats).\n");
    } else {
        out.push_str(
            "\nSkills (the overview, then one per cheat),\n\
             each at skill://<server>/<name>/SKILL.md:\n",
        );
        // (label, description) of each, in the order the server names them.
        let sources: Vec<(&str, &str)> = docs
            .overview
            .iter()
            .map(|o| (o.label.as_str(), o.description.as_str()))
            .chain(
                docs.cheats
                    .iter()
                    .map(|c| (c.label.as_str(), c.description.as_str())),
            )
            .collect();
        let names = fiskgen_contract::docs::skill_names(sources.iter().map(|(label, _)| *label));
        let rows: Vec<(String, String)> = sources
            .iter()
            .zip(names)
            .map(|((label, description), name)| match name {
                Some(name) => (name, description.to_string()),
                None => (
                    format!("({label})"),
                    "not served: no skill name can be made of the label".to_string(),
                ),
            })
            .collect();
        table(&mut out, &rows, width);
    }
    out
}

/// Two columns, the first as wide as its widest entry (up to half the width).
fn table(out: &mut String, rows: &[(String, String)], width: usize) {
    let first = rows
        .iter()
        .map(|(a, _)| a.chars().count())
        .max()
        .unwrap_or(0)
        .min(width / 2);
    for (a, b) in rows {
        let line = format!("  {a:<first$}  {b}");
        let line: String = if line.chars().count() > width {
            let mut cut: String = line.chars().take(width.saturating_sub(3)).collect();
            cut.push_str("...");
            cut
        } else {
            line
        };
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switched_off_features_name_their_key() {
        let text = render_text(&ir::Docs::default(), 80);
        assert!(
            text.contains("Resources: off (expose.agent.mcp.resources: false)."),
            "{text}"
        );
        assert!(
            text.contains("Prompts: off (expose.agent.mcp.prompts: false)."),
            "{text}"
        );
        assert!(
            text.contains("Skills: off (expose.agent.mcp.skills: false)."),
            "{text}"
        );
    }

    #[test]
    fn prompts_show_their_arguments_and_completion_values() {
        let docs = ir::Docs {
            resources: true,
            prompts: true,
            skills: true,
            page_size: 50,
            cheats: vec![ir::Cheat {
                label: "stream_info".into(),
                uri: Some("nats://stream".into()),
                description: "Work with streams".into(),
                tool: None,
                arguments: vec![ir::CheatArgument {
                    name: "format".into(),
                    description: String::new(),
                    values: vec!["json".into(), "yaml".into()],
                }],
                text: String::new(),
            }],
            ..ir::Docs::default()
        };
        let text = render_text(&docs, 80);
        assert!(
            text.contains("0 tool help pages, 1 cheat sheets, 50 per page"),
            "{text}"
        );
        assert!(
            text.contains("  nats://stream  cheat sheet: Work with streams"),
            "{text}"
        );
        assert!(
            text.contains("  stream_info(format: json|yaml)  Work with streams"),
            "{text}"
        );
        assert!(text.contains("  stream-info  Work with streams"), "{text}");
        let docs = ir::Docs {
            overview: Some(ir::Overview {
                label: "NATS".into(),
                description: "NATS Utility".into(),
                text: String::new(),
            }),
            ..docs
        };
        let text = render_text(&docs, 80);
        let overview = text.find("  nats         NATS Utility").expect(&text);
        let cheat = text.find("  stream-info  Work with streams").expect(&text);
        assert!(overview < cheat, "{text}");
    }
}
