//! `fiskgen info`: the served set, as a table for people or as JSON for scripts.

use std::fmt::Write as _;

use crate::config::{ConfirmMode, Hint, JwksConfig, SecretSource};
use crate::ir::{self, HintName};

mod groups;
mod names;
mod questions;
mod tasks;
pub use questions::render_questions;
pub use tasks::{render_results, render_tasks};

/// Terminal width used when `COLUMNS` is not set.
pub const DEFAULT_WIDTH: usize = 80;

/// Renders the served set as aligned text that fits `width` columns.
pub fn render_text(server: &ir::Server, width: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", headline(server));
    out.push('\n');
    if server.tools.is_empty() {
        out.push_str("No tools are served (the warnings below say why).\n");
    } else {
        out.push_str(&tool_table(&server.tools, width));
        out.push_str(
            "\nHINTS: r read-only, d destructive, i idempotent, o open-world, a additive.\n\
             CONFIRM: the tag that makes a call wait for the user's approval.\n",
        );
        if let Some(line) = groups::line(&server.tools, server.settings.group_tag_prefix.as_deref())
        {
            let _ = writeln!(out, "{}", wrap(&line, width, "", "  "));
        }
        if let Some(line) = names::line(&server.tools, &server.settings.tool_prefix) {
            let _ = writeln!(out, "{}", wrap(&line, width, "", "  "));
        }
    }
    if !server.global_flags.is_empty() {
        out.push_str("\nGlobal flags (add names under global_flags to expose them):\n");
        let status = |flag: &ir::GlobalFlag| match (flag.exposed, flag.required) {
            (true, true) => "[exposed, required]",
            (true, false) => "[exposed]",
            (false, _) => "",
        };
        let name_width = server
            .global_flags
            .iter()
            .map(|f| f.name.len())
            .max()
            .unwrap_or(0);
        let status_width = server
            .global_flags
            .iter()
            .map(|f| status(f).len())
            .max()
            .unwrap_or(0);
        for flag in &server.global_flags {
            let line = format!(
                "  --{:<name_width$}  {:<status_width$}  {}",
                flag.name,
                status(flag),
                flag.help
            );
            let _ = writeln!(out, "{}", truncate(line.trim_end(), width));
        }
    }
    if server.application.is_some() || !server.docs.help.is_empty() {
        out.push_str(&crate::docs::render_text(&server.docs, width));
    }
    for (label, lines) in [("Warnings", &server.warnings), ("Notes", &server.notes)] {
        if !lines.is_empty() {
            let _ = writeln!(out, "\n{label}:");
            for line in lines {
                let _ = writeln!(out, "{}", wrap(line, width, "  - ", "    "));
            }
        }
    }
    out
}

/// Who is asked, refused or run ungated for the gated tools, on every transport, under the
/// config's `confirm_over_mcp` (empty when no tool is gated). The server's start-up banner says
/// the same for the mode it runs in; the rules are in docs/runtime.md, "Confirmation".
pub fn render_confirmation(server: &ir::Server, width: usize) -> String {
    let gated = server.tools.iter().filter(|t| t.confirm.is_some()).count();
    if gated == 0 {
        return String::new();
    }
    let mode = server.settings.confirm;
    let stateless = server.settings.stateless;
    let (name, lines): (&str, Vec<String>) = match mode {
        ConfirmMode::Never => (
            "never",
            vec![
                "every transport: the tools run ungated; approval is delegated to the client."
                    .into(),
            ],
        ),
        ConfirmMode::Auto | ConfirmMode::Always => {
            let others = if mode == ConfirmMode::Auto {
                "clients that declare none run ungated, with a warning"
            } else {
                "clients that declare none are refused"
            };
            let mark = |this: bool| {
                if this == stateless {
                    " (configured)"
                } else {
                    ""
                }
            };
            let name = if mode == ConfirmMode::Auto {
                "auto"
            } else {
                "always"
            };
            let lines = vec![
                format!(
                    "stdio and HTTP with sessions{}: clients that declare elicitation are \
                     asked; {others}.",
                    mark(false)
                ),
                format!(
                    "HTTP stateless{}: 2026-07-28 clients that declare elicitation are asked; \
                     2025-era clients that declare it are refused (a stateless server cannot \
                     send them a request), as are 2025-era requests without this server's \
                     Mcp-Session-Id; {others}.",
                    mark(true)
                ),
            ];
            (name, lines)
        }
    };
    let plural = if gated == 1 {
        "tool requires"
    } else {
        "tools require"
    };
    let mut out =
        format!("\nConfirmation ({gated} {plural} approval; confirm_over_mcp: {name}):\n");
    // The other modes, which `--confirm` selects at run time.
    let closing = match mode {
        ConfirmMode::Auto => {
            "with --confirm always, clients that declare no elicitation are refused too; with \
             --confirm never, every call runs ungated."
        }
        ConfirmMode::Always => {
            "with --confirm auto, clients that declare no elicitation run ungated, with a \
             warning; with --confirm never, every call runs ungated."
        }
        ConfirmMode::Never => {
            "with --confirm auto or always, clients that declare elicitation are asked (on a \
             stateless server, 2026-07-28 clients only) and the others run ungated (auto) or \
             are refused (always)."
        }
    };
    for line in lines.iter().map(String::as_str).chain([closing]) {
        let _ = writeln!(out, "{}", wrap(line, width, "  - ", "    "));
    }
    out
}

fn headline(server: &ir::Server) -> String {
    let count = server.tools.len();
    let plural = if count == 1 { "" } else { "s" };
    match &server.application {
        Some(app) => format!(
            "MCP server \"{}\": {count} tool{plural} from {} {}\napplication: {}",
            server.identity,
            app.name,
            app.version.as_deref().unwrap_or("(no version)"),
            app.path.display()
        ),
        None => format!(
            "MCP server \"{}\": {count} tool{plural} (no application_path: built-ins only)",
            server.identity
        ),
    }
}

/// What the server will ask of HTTP clients (`expose.agent.mcp.auth`) and what the binary's
/// run-time narrowing flags can select (`--read-only`, `--tags`): printed after the table.
pub fn render_access(server: &ir::Server, width: usize) -> String {
    let mut out = String::from("\nAccess over HTTP:\n");
    for line in access_lines(server) {
        let _ = writeln!(out, "{}", wrap(&line, width, "  ", "    "));
    }
    let read_only: Vec<&str> = server
        .tools
        .iter()
        .filter(|tool| tool.hints.contains(&HintName(Hint::ReadOnly)))
        .map(|tool| tool.name.as_str())
        .collect();
    let mut tags: Vec<&str> = server
        .tools
        .iter()
        .flat_map(|tool| tool.tags.iter().map(String::as_str))
        .collect();
    tags.sort_unstable();
    tags.dedup();
    out.push_str("\nNarrowing at run time (the binary's flags only remove tools):\n");
    let read_only_line = format!(
        "--read-only keeps {} of {} tools{}",
        read_only.len(),
        server.tools.len(),
        if read_only.is_empty() {
            String::new()
        } else {
            format!(": {}", read_only.join(", "))
        }
    );
    let _ = writeln!(out, "{}", wrap(&read_only_line, width, "  ", "    "));
    if !tags.is_empty() {
        let line = format!("--tags takes: {}", tags.join(", "));
        let _ = writeln!(out, "{}", wrap(&line, width, "  ", "    "));
    }
    out.push_str("  --tools REGEX / --exclude-tools REGEX select by tool name\n");
    let headers = mirrored_headers(server);
    if !headers.is_empty() {
        let heading = "Parameters a 2026-07-28 client mirrors in HTTP headers (param_headers; a \
                       request whose header is missing or differs is refused):";
        let _ = writeln!(out, "\n{}", wrap(heading, width, "", ""));
        for (tool, param, header) in headers {
            let line = format!("{tool}.{param}: Mcp-Param-{header}");
            let _ = writeln!(out, "{}", wrap(&line, width, "  ", "    "));
        }
    }
    out
}

/// `expose.agent.mcp.param_headers` as lowered: (tool, parameter, header name), in serving
/// order.
fn mirrored_headers(server: &ir::Server) -> Vec<(&str, &str, &str)> {
    server
        .tools
        .iter()
        .filter_map(|tool| match &tool.kind {
            ir::ToolKind::Command(command) => Some((tool, command)),
            ir::ToolKind::Builtin { .. } => None,
        })
        .flat_map(|(tool, command)| {
            command.params.iter().filter_map(|param| {
                let header = param.header.as_deref()?;
                Some((tool.name.as_str(), param.name.as_str(), header))
            })
        })
        .collect()
}

/// [`render_json`] followed by the keys of [`access_json`], keeping the document's key order.
pub fn render_json_with_access(server: &ir::Server) -> Result<String, serde_json::Error> {
    let base = render_json(server)?;
    let mut text = base.trim_end().trim_end_matches('}').trim_end().to_string();
    if let serde_json::Value::Object(extra) = access_json(server) {
        for (key, value) in extra {
            let value = serde_json::to_string_pretty(&value)?.replace('\n', "\n  ");
            text.push_str(&format!(",\n  {}: {value}", serde_json::Value::String(key)));
        }
    }
    text.push_str("\n}\n");
    Ok(text)
}

/// [`render_access`] for `info --json`: `{"access": [lines], "narrowing": {"read_only":
/// [names], "tags": [tags]}, "param_headers": {tool: {parameter: header}}}`, merged into the
/// document's top level.
pub fn access_json(server: &ir::Server) -> serde_json::Value {
    let read_only: Vec<&str> = server
        .tools
        .iter()
        .filter(|tool| tool.hints.contains(&HintName(Hint::ReadOnly)))
        .map(|tool| tool.name.as_str())
        .collect();
    let mut tags: Vec<&str> = server
        .tools
        .iter()
        .flat_map(|tool| tool.tags.iter().map(String::as_str))
        .collect();
    tags.sort_unstable();
    tags.dedup();
    let mut headers = serde_json::Map::new();
    for (tool, param, header) in mirrored_headers(server) {
        let entry = headers
            .entry(tool)
            .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
        if let serde_json::Value::Object(params) = entry {
            params.insert(param.into(), format!("Mcp-Param-{header}").into());
        }
    }
    serde_json::json!({
        "access": access_lines(server),
        "narrowing": {"read_only": read_only, "tags": tags},
        "param_headers": headers,
    })
}

/// One line per accepted credential, or why none is needed.
fn access_lines(server: &ir::Server) -> Vec<String> {
    let Some(auth) = server.settings.auth.as_ref() else {
        return vec![
            "no authentication (expose.agent.mcp.auth): keep the default loopback bind, or \
             add a token, a header or OAuth before listening elsewhere"
                .to_string(),
        ];
    };
    let source = |source: &SecretSource| match source {
        SecretSource::Env(name) => format!("the environment variable {name}"),
        SecretSource::File(path) => format!("the file {path}"),
    };
    let mut lines = Vec::new();
    if let Some(token) = &auth.token {
        lines.push(format!("bearer token from {}", source(token)));
    }
    if let Some(header) = &auth.header {
        lines.push(format!(
            "header {} compared with {}",
            header.name,
            source(&header.value)
        ));
    }
    if let Some(oauth) = &auth.oauth {
        let keys = match &oauth.jwks {
            JwksConfig::File(path) => format!("keys from the file {path}"),
            JwksConfig::Url(url) => format!("keys from {url}"),
        };
        lines.push(format!(
            "OAuth access tokens (JWT) for resource {}, issued by {}; {keys}; algorithms {}",
            oauth.resource,
            oauth.authorization_servers.join(", "),
            oauth.algorithms.join(", ")
        ));
        if !oauth.scopes.is_empty() {
            lines.push(format!(
                "every request needs scope {}",
                oauth.scopes.join(" ")
            ));
        }
        for (method, scopes) in &oauth.method_scopes {
            lines.push(format!("{method} needs scope {}", scopes.join(" ")));
        }
        if let Ok(url) = metadata_url(&oauth.resource) {
            lines.push(format!("protected-resource metadata (RFC 9728) at {url}"));
        }
    }
    lines
        .push("any one accepted credential lets a request in; none reaches the application".into());
    lines
}

/// Where the RFC 9728 document of `resource` is served.
fn metadata_url(resource: &str) -> Result<String, ()> {
    let (scheme, rest) = resource.split_once("://").ok_or(())?;
    let (host, path) = match rest.find('/') {
        Some(at) => (&rest[..at], rest[at..].trim_end_matches('/')),
        None => (rest, ""),
    };
    Ok(format!(
        "{scheme}://{host}/.well-known/oauth-protected-resource{path}"
    ))
}

/// Narrowest description column worth showing.
const MIN_DESCRIPTION: usize = 24;

/// One row per tool with TOOL, CONFIRM, HINTS, TITLE, TAGS and DESCRIPTION when the terminal is
/// wide enough; otherwise TOOL, CONFIRM, HINTS, DESCRIPTION with title and tags on a second,
/// indented line, so nothing is cut that a reader needs.
fn tool_table(tools: &[ir::Tool], width: usize) -> String {
    let rows: Vec<Row> = tools.iter().map(Row::new).collect();
    let column = |cell: fn(&Row) -> &str, header: &str| {
        rows.iter()
            .map(|row| cell(row).chars().count())
            .chain([header.len()])
            .max()
            .unwrap_or(0)
    };
    let name = column(|row| &row.name, "TOOL");
    let confirm = column(|row| &row.confirm, "CONFIRM");
    let hints = column(|row| &row.hints, "HINTS");
    let title = column(|row| &row.title, "TITLE");
    let tags = column(|row| &row.tags, "TAGS");
    let narrow = name + confirm + hints + 6;
    let wide = narrow + title + tags + 4;

    let mut out = String::new();
    if wide + MIN_DESCRIPTION <= width {
        let description = width - wide;
        let line = |cells: [&str; 6]| {
            let text = format!(
                "{:<name$}  {:<confirm$}  {:<hints$}  {:<title$}  {:<tags$}  {}",
                cells[0],
                cells[1],
                cells[2],
                cells[3],
                cells[4],
                truncate(cells[5], description)
            );
            format!("{}\n", text.trim_end())
        };
        out.push_str(&line([
            "TOOL",
            "CONFIRM",
            "HINTS",
            "TITLE",
            "TAGS",
            "DESCRIPTION",
        ]));
        for row in &rows {
            out.push_str(&line([
                &row.name,
                &row.confirm,
                &row.hints,
                &row.title,
                &row.tags,
                &row.description,
            ]));
        }
    } else {
        let description = width.saturating_sub(narrow).max(MIN_DESCRIPTION);
        let line = |cells: [&str; 4]| {
            let text = format!(
                "{:<name$}  {:<confirm$}  {:<hints$}  {}",
                cells[0],
                cells[1],
                cells[2],
                truncate(cells[3], description)
            );
            format!("{}\n", text.trim_end())
        };
        out.push_str(&line(["TOOL", "CONFIRM", "HINTS", "DESCRIPTION"]));
        for row in &rows {
            out.push_str(&line([
                &row.name,
                &row.confirm,
                &row.hints,
                &row.description,
            ]));
            let _ = writeln!(
                out,
                "{}",
                truncate(&format!("    {} · tags: {}", row.title, row.tags), width)
            );
        }
    }
    out
}

/// A tool's table cells.
struct Row {
    name: String,
    title: String,
    confirm: String,
    hints: String,
    tags: String,
    description: String,
}

impl Row {
    fn new(tool: &ir::Tool) -> Self {
        Row {
            name: tool.name.clone(),
            title: tool.title.clone(),
            confirm: tool
                .confirm
                .as_ref()
                .map_or_else(|| "-".into(), |c| c.trigger.clone()),
            hints: hint_code(tool),
            tags: if tool.tags.is_empty() {
                "-".into()
            } else {
                tool.tags.join(", ")
            },
            description: first_line(&tool.description),
        }
    }
}

/// A fixed five-letter code, `r-i--` style, so the column stays narrow: the four hints, then
/// `a` for an additive command (`ai:additive`: `destructiveHint: false` is sent).
fn hint_code(tool: &ir::Tool) -> String {
    Hint::ALL
        .into_iter()
        .map(|hint| {
            if tool.hints.contains(&HintName(hint)) {
                hint.name().chars().next().unwrap_or('?')
            } else {
                '-'
            }
        })
        .chain([if tool.additive() { 'a' } else { '-' }])
        .collect()
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").to_string()
}

/// Cuts `text` to `width` characters, marking the cut with `…`.
fn truncate(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// Wraps `text` at word boundaries to `width`, with a first-line and a continuation prefix.
fn wrap(text: &str, width: usize, first: &str, rest: &str) -> String {
    let mut lines = Vec::new();
    let mut line = first.to_string();
    let mut line_has_words = false;
    for word in text.split_whitespace() {
        if line_has_words && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::replace(&mut line, rest.to_string()));
            line_has_words = false;
        }
        if line_has_words {
            line.push(' ');
        }
        line.push_str(word);
        line_has_words = true;
    }
    lines.push(line);
    lines.join("\n")
}

/// Renders the served set as pretty JSON with a trailing newline: a stable document for
/// scripts (`fiskgen info --json`).
///
/// Every tool shows the schema the server advertises (the IR's, lowered once by `select`), so
/// this matches `<binary> tools --json`.
pub fn render_json(server: &ir::Server) -> Result<String, serde_json::Error> {
    let mut text = serde_json::to_string_pretty(server)?;
    text.push('\n');
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_marks_the_cut() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
    }

    #[test]
    fn wrap_keeps_lines_within_width() {
        let text = "one two three four five six seven eight nine ten eleven twelve";
        let wrapped = wrap(text, 20, "  - ", "    ");
        assert!(
            wrapped.lines().all(|line| line.chars().count() <= 20),
            "{wrapped}"
        );
        assert!(wrapped.starts_with("  - one"));
        assert_eq!(wrapped.split_whitespace().filter(|w| *w != "-").count(), 12);
    }
}
