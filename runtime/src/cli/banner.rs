//! What the server prints to stderr when it starts: the served tools, where it listens, and
//! client configuration ready to paste (docs/runtime.md, "Running it", with a working URL for IPv6
//! binds and entries for clients that start local servers over stdio).

use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr};

use crate::cli::clients::{self, Transport};
use crate::cli::connect;
use crate::duration;
use crate::spec::app::{AppSpec, ConfirmMode, TaskSettings};

/// The host to put in a URL for a listener: unspecified binds (`0.0.0.0`, `::`) are reached on
/// `localhost`; IPv6 literals are bracketed.
pub(crate) fn url_host(ip: IpAddr) -> String {
    if ip.is_unspecified() {
        return "localhost".into();
    }
    match ip {
        IpAddr::V4(ip) => ip.to_string(),
        IpAddr::V6(ip) => format!("[{ip}]"),
    }
}

/// The MCP endpoint URL for a listener.
pub(crate) fn endpoint(addr: SocketAddr) -> String {
    format!("http://{}:{}/mcp", url_host(addr.ip()), addr.port())
}

/// `claude mcp add` for the HTTP endpoint.
#[cfg(test)]
fn claude_add_http(identity: &str, url: &str) -> String {
    clients::entry(
        clients::Client::ClaudeCode,
        identity,
        &Transport::Http(url.to_string()),
        &clients::Credentials::None,
    )
}

/// What is printed for an HTTP server: the tools, the endpoint, then every client's entry
/// for it and for stdio (the same entries `<binary> config` prints).
pub(crate) fn http(
    app: &AppSpec,
    version: &str,
    addr: SocketAddr,
    stdio_command: &[String],
    notes: &[String],
) -> String {
    let url = endpoint(addr);
    let mut out = served(app, version, &addr.to_string(), notes);
    let _ = writeln!(out, "\nMCP endpoint: {url}");
    let groups = crate::cli::narrow::groups(app);
    if !groups.is_empty() {
        let _ = writeln!(
            out,
            "Each group alone (`--group NAME` over stdio): {url}/<group> for {}",
            groups.join(", ")
        );
    }
    let transports = [
        Transport::Http(url),
        Transport::Stdio(stdio_command.to_vec()),
    ];
    out.push_str(&clients::render_all(
        app.identity,
        &transports,
        &connect::credentials(app),
    ));
    let _ = writeln!(
        out,
        "\n`{}-mcp config --client NAME` prints one entry (claude-code, claude-desktop, fx, \
         vscode, json).",
        app.identity
    );
    out
}

/// What is printed for a stdio server (on stderr; stdout carries the protocol).
pub(crate) fn stdio(app: &AppSpec, version: &str, notes: &[String]) -> String {
    served(app, version, "stdio", notes)
}

/// The headline, the tool list and the notes (the confirmation note first).
fn served(app: &AppSpec, version: &str, place: &str, notes: &[String]) -> String {
    let count = app.tools.len();
    let mut out = format!(
        "Serving {count} tool{} over MCP on {place} as {}/{version}\n",
        if count == 1 { "" } else { "s" },
        app.identity
    );
    for tool in app.tools {
        let gate = tool
            .confirm
            .map(|trigger| format!("  (confirm: {trigger})"))
            .unwrap_or_default();
        let _ = writeln!(out, "  {}{gate}", tool.name);
    }
    for note in notes {
        let _ = writeln!(out, "{note}");
    }
    out
}

/// How the server is reached, for the confirmation lines: who can be asked depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// `--stdio`.
    Stdio,
    /// HTTP with legacy sessions (and 2026-07-28 requests).
    Sessions,
    /// HTTP without sessions (`--stateless`).
    Stateless,
}

/// `note: N exposed tool(s) require approval ...` with the effective confirmation mode when any
/// tool is gated, then one line each for the clients that are asked, refused and run ungated on
/// this transport; when `--confirm` set the mode, says so (and that it changes nothing when no
/// tool is gated).
pub(crate) fn confirm_note(
    app: &AppSpec,
    mode: ConfirmMode,
    from_flag: bool,
    transport: Reach,
) -> Option<String> {
    let gated = app
        .tools
        .iter()
        .filter(|tool| tool.confirm.is_some())
        .count();
    let name = mode_name(mode);
    if gated == 0 {
        return from_flag.then(|| {
            format!("note: --confirm {name} changes nothing: no exposed tool requires approval")
        });
    }
    let summary = match mode {
        ConfirmMode::Auto => "elicit-capable clients are asked, others run ungated",
        ConfirmMode::Always => "elicit-capable clients are asked, others are refused",
        ConfirmMode::Never => "they run ungated, approval is delegated to the client",
    };
    let source = if from_flag { ", set by --confirm" } else { "" };
    let mut note = format!(
        "note: {gated} exposed tool(s) require approval (ai:confirm or confirm_tags): {summary} \
         (confirm_over_mcp={name}{source})"
    );
    for (who, clients) in who_is_asked(mode, transport) {
        let _ = write!(note, "\n  {who}: {clients}");
    }
    Some(note)
}

/// Which clients are asked, refused and run ungated, in `mode` on `transport` (the same rules
/// as the gate, docs/runtime.md "Confirmation").
pub(crate) fn who_is_asked(
    mode: ConfirmMode,
    transport: Reach,
) -> Vec<(&'static str, &'static str)> {
    const DECLARING: &str = "clients that declare elicitation (2025 sessions: elicitation/create; \
                             2026-07-28: an input-required result)";
    const NOT_DECLARING: &str = "clients that declare no elicitation";
    const STRANDED: &str = "2025-era clients that declare elicitation or whose initialize is \
                            unknown (a stateless server cannot send them a request)";
    let mut lines = Vec::new();
    if mode == ConfirmMode::Never {
        lines.push(("run ungated", "every client (confirm_over_mcp=never)"));
        return lines;
    }
    let asked = match transport {
        Reach::Stateless => {
            "2026-07-28 clients that declare elicitation (an input-required result)"
        }
        Reach::Stdio | Reach::Sessions => DECLARING,
    };
    lines.push(("asked", asked));
    match (mode, transport) {
        (ConfirmMode::Always, Reach::Stateless) => {
            lines.push(("refused", "every other client"));
        }
        (ConfirmMode::Always, _) => lines.push(("refused", NOT_DECLARING)),
        (_, Reach::Stateless) => {
            lines.push(("refused", STRANDED));
            lines.push(("run ungated, with a warning", NOT_DECLARING));
        }
        _ => lines.push(("run ungated, with a warning", NOT_DECLARING)),
    }
    lines
}

/// `note: ... tool(s) ask the user for some of their parameters ...`, naming each such tool and
/// its questions, when any tool asks (docs/runtime.md, "Questions").
pub(crate) fn questions_note(app: &AppSpec) -> Option<String> {
    let asking: Vec<String> = app
        .tools
        .iter()
        .filter(|tool| !tool.questions.is_empty())
        .map(|tool| {
            let questions: Vec<&str> = tool.questions.iter().map(|q| q.name).collect();
            format!("{} ({})", tool.name, questions.join(", "))
        })
        .collect();
    (!asking.is_empty()).then(|| {
        format!(
            "note: {} exposed tool(s) ask the user for some of their parameters before they run \
             (expose.agent.mcp.ask): {}; clients that cannot be asked with a form are refused",
            asking.len(),
            asking.join(", ")
        )
    })
}

/// `note: calls still running after ... become tasks ...` with the task settings in force, or
/// that tasks are off (docs/runtime.md, "Tasks").
pub(crate) fn tasks_note(tasks: Option<TaskSettings>) -> String {
    let Some(tasks) = tasks else {
        return "note: tasks are off (tasks: false or --no-tasks): every call is answered on its \
                own request"
            .into();
    };
    let mut note = format!(
        "note: a call still running after {} becomes a task for clients that declare the tasks \
         extension (io.modelcontextprotocol/tasks); at most {} task{} at once, each running and \
         then keeping its result for at most {} (tasks.after, tasks.max, tasks.ttl; --task-after, \
         --max-tasks, --task-ttl)",
        duration::format(tasks.after),
        tasks.max,
        if tasks.max == 1 { "" } else { "s" },
        duration::format(tasks.ttl)
    );
    if !tasks.required.is_empty() {
        let _ = write!(
            note,
            "\nnote: task-required (tasks.required; a task at once, refused with -32021 to \
             clients that do not declare the extension): {}",
            tasks.required.join(", ")
        );
    }
    note
}

/// The line about tasks shared by replicas: where, when a task bucket is configured; a warning
/// when it is configured but tasks are off, or when a stateless server shares its state key
/// (a replica) with tasks on but no bucket.
pub(crate) fn shared_tasks_note(
    shared: Option<&crate::mcp::tasks::shared::Shared>,
    tasks: Option<TaskSettings>,
    replica: bool,
) -> Option<String> {
    use crate::mcp::tasks::shared::{HEARTBEAT, SILENCE, STORE_VAR};
    match (shared, tasks) {
        (Some(shared), _) => Some(format!(
            "note: tasks are shared by every replica through the {} ({STORE_VAR}): any replica \
             answers tasks/get, tasks/update and tasks/cancel, and a task whose replica falls \
             silent fails within {}",
            shared.describe(),
            duration::format(HEARTBEAT + SILENCE)
        )),
        (None, None) if std::env::var_os(STORE_VAR).is_some_and(|value| !value.is_empty()) => Some(
            format!("warning: {STORE_VAR} is set but tasks are off, so it is not used"),
        ),
        (None, Some(_)) if replica => Some(format!(
            "warning: replicas share FISKGEN_MCP_STATE_KEY but no {STORE_VAR} is set: tasks live \
             in this replica's memory, so behind a load balancer a tasks/get, tasks/update or \
             tasks/cancel that reaches another replica is answered as an unknown task \
             (docs/deploy.md)"
        )),
        (None, _) => None,
    }
}

/// `note: ...` when a non-zero exit is a tool error (`exit_code_is_error`), else nothing.
pub(crate) fn exit_code_note(exit_code_is_error: bool) -> Option<String> {
    exit_code_is_error.then(|| {
        "note: a command that exits non-zero or is killed by a signal answers isError: true \
         with its result (exit_code_is_error)"
            .to_string()
    })
}

/// A mode as written in the config and on the command line.
fn mode_name(mode: ConfirmMode) -> &'static str {
    match mode {
        ConfirmMode::Auto => "auto",
        ConfirmMode::Always => "always",
        ConfirmMode::Never => "never",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(text: &str) -> SocketAddr {
        text.parse().expect("socket address")
    }

    #[test]
    fn the_tasks_line_gives_the_settings_in_force_or_says_tasks_are_off() {
        let tasks = TaskSettings {
            after: std::time::Duration::from_secs(2),
            ttl: std::time::Duration::from_secs(3600),
            max: 64,
            required: &[],
        };
        assert_eq!(
            tasks_note(Some(tasks)),
            "note: a call still running after 2s becomes a task for clients that declare the \
             tasks extension (io.modelcontextprotocol/tasks); at most 64 tasks at once, each \
             running and then keeping its result for at most 1h0m0s (tasks.after, tasks.max, \
             tasks.ttl; --task-after, --max-tasks, --task-ttl)"
        );
        let one = tasks_note(Some(TaskSettings { max: 1, ..tasks }));
        assert!(one.contains("at most 1 task at once"), "{one}");
        let required = tasks_note(Some(TaskSettings {
            required: &["failing_job", "slow"],
            ..tasks
        }));
        assert!(
            required.ends_with(
                "\nnote: task-required (tasks.required; a task at once, refused with -32021 to \
                 clients that do not declare the extension): failing_job, slow"
            ),
            "{required}"
        );
        assert_eq!(exit_code_note(false), None);
        assert!(exit_code_note(true).is_some_and(|note| note.contains("isError: true")));
        assert_eq!(
            tasks_note(None),
            "note: tasks are off (tasks: false or --no-tasks): every call is answered on its own \
             request"
        );
    }

    #[test]
    fn the_confirmation_lines_name_who_is_asked_refused_and_ungated() {
        let stateless = who_is_asked(ConfirmMode::Auto, Reach::Stateless);
        assert_eq!(
            stateless.iter().map(|(who, _)| *who).collect::<Vec<_>>(),
            ["asked", "refused", "run ungated, with a warning"]
        );
        assert!(
            stateless[1]
                .1
                .contains("2025-era clients that declare elicitation")
        );
        let sessions = who_is_asked(ConfirmMode::Auto, Reach::Sessions);
        assert_eq!(sessions.len(), 2);
        assert!(sessions[0].1.contains("elicitation/create"));
        let always = who_is_asked(ConfirmMode::Always, Reach::Stdio);
        assert_eq!(
            always[1],
            ("refused", "clients that declare no elicitation")
        );
        assert_eq!(who_is_asked(ConfirmMode::Never, Reach::Stateless).len(), 1);
    }

    #[test]
    fn urls_for_unspecified_concrete_and_ipv6_binds() {
        assert_eq!(endpoint(addr("0.0.0.0:8080")), "http://localhost:8080/mcp");
        assert_eq!(endpoint(addr("[::]:8080")), "http://localhost:8080/mcp");
        assert_eq!(
            endpoint(addr("127.0.0.1:9000")),
            "http://127.0.0.1:9000/mcp"
        );
        assert_eq!(endpoint(addr("[::1]:9000")), "http://[::1]:9000/mcp");
        assert_eq!(
            claude_add_http("myagent", &endpoint(addr("[::]:8080"))),
            "claude mcp add --transport http myagent http://localhost:8080/mcp"
        );
    }
}
