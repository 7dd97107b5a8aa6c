//! `fiskgen info`: which tools' calls may become tasks, and the task limits.

use std::fmt::Write as _;
use std::time::Duration;

use fiskgen_contract::duration;

use crate::ir;

/// The tasks section: empty when the server has no tools whose calls may become tasks;
/// otherwise the settings and the tools, or a line saying tasks are off.
pub fn render_tasks(server: &ir::Server, width: usize) -> String {
    let commands = server
        .tools
        .iter()
        .filter(|tool| matches!(tool.kind, ir::ToolKind::Command(_)))
        .count();
    if commands == 0 {
        return String::new();
    }
    let mut out = String::new();
    let Some(tasks) = &server.tasks else {
        out.push_str(
            "\nTasks: off (expose.agent.mcp.tasks: false): every call answers on its request.\n",
        );
        return out;
    };
    let after = duration::format(Duration::from_millis(tasks.after_ms));
    let ttl = duration::format(Duration::from_millis(tasks.ttl_ms));
    let text = format!(
        "Tasks: for clients that declare the tasks extension, a call still running after \
         {after} becomes a task (kept {ttl} after it ends, at most {} held at once); a gated \
         call, or one whose tool asks questions, by such a client asks inside its task. \
         Built-in tools always answer on their request.",
        tasks.max
    );
    let _ = writeln!(out, "\n{}", super::wrap(&text, width, "", ""));
    let builtins: Vec<&str> = server
        .tools
        .iter()
        .filter(|tool| !matches!(tool.kind, ir::ToolKind::Command(_)))
        .map(|tool| tool.name.as_str())
        .collect();
    let which = if builtins.is_empty() {
        format!("May become tasks: all {} tools.", tasks.tools.len())
    } else {
        format!(
            "May become tasks: the {} command tools, not the built-ins ({}). `fiskgen info --json` \
             lists them under tasks.tools.",
            tasks.tools.len(),
            builtins.join(", ")
        )
    };
    let _ = writeln!(out, "{}", super::wrap(&which, width, "  ", "  "));
    if !tasks.required.is_empty() {
        let required = format!(
            "Task-required (tasks.required): {}. A call by a client that declares the tasks \
             extension is a task at once; any other client is refused with -32021 (the missing \
             client capability), and nothing runs.",
            tasks.required.join(", ")
        );
        let _ = writeln!(out, "{}", super::wrap(&required, width, "  ", "  "));
    }
    out
}

/// The results section: a line when a non-zero exit is a tool error (`exit_code_is_error`),
/// else nothing (the default, Fisk AI's: the exit status is part of a normal result).
pub fn render_results(server: &ir::Server, width: usize) -> String {
    if !server.settings.exit_code_is_error
        || !server
            .tools
            .iter()
            .any(|tool| matches!(tool.kind, ir::ToolKind::Command(_)))
    {
        return String::new();
    }
    let text = "Results (exit_code_is_error): a command that exits non-zero or is killed by a \
                signal answers isError: true, with the same content as any other result.";
    format!("\n{}\n", super::wrap(text, width, "", ""))
}
