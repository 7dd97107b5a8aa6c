//! What a call answers and sends beyond its text, with the official Python SDK
//! (`tests/clients/python/results.py`): a non-zero exit as a tool error
//! (`exit_code_is_error`), task-required tools (`tasks.required`), and a command's output
//! lines as log notifications with their limits (docs/runtime.md, "Results", "Tasks" and "Log
//! notifications"). Against `test-mcp`, the conformance fixture app's server, which sets both
//! keys; the limits against the fixture app's server, whose `ticker` prints many lines.

use anyhow::{Result, ensure};
use fiskgen_tests::apps::{self, App};
use fiskgen_tests::clients;

use crate::clients::{Server, python, strings};

/// Runs one scenario of `results.py` against a fresh `test-mcp`; returns the server's log.
fn conformance_scenario(name: &str, mode: &str) -> Result<String> {
    conformance_scenario_with(name, mode, &[])
}

/// [`conformance_scenario`] with a server started with `flags`.
fn conformance_scenario_with(name: &str, mode: &str, flags: &[&str]) -> Result<String> {
    let dir = tempfile::tempdir()?;
    let server = Server::spawn_conformance(dir.path(), flags)?;
    let finished = python(
        "results.py",
        &strings(&["--url", &server.url, "--mode", mode, "--scenario", name]),
    )?;
    println!("{}", finished.report());
    Ok(server.log())
}

#[test]
fn python_sdk_a_non_zero_exit_is_a_tool_error_on_a_call_and_in_a_task_2026_07_28() -> Result<()> {
    let log = conformance_scenario("exit", "2026-07-28")?;
    ensure!(
        log.contains(
            "note: a command that exits non-zero or is killed by a signal answers isError: true"
        ),
        "the banner does not say exit_code_is_error is on:\n{log}"
    );
    Ok(())
}

#[test]
fn python_sdk_a_non_zero_exit_is_a_tool_error_legacy() -> Result<()> {
    conformance_scenario("exit", "legacy").map(drop)
}

#[test]
fn python_sdk_a_task_required_tool_is_refused_without_the_extension_and_a_task_at_once_with_it()
-> Result<()> {
    let log = conformance_scenario("required", "2026-07-28")?;
    ensure!(
        log.contains("note: task-required (tasks.required; a task at once, refused with -32021")
            && log.contains("failing_job, test_tool_with_task"),
        "the banner does not name the task-required tools:\n{log}"
    );
    ensure!(
        log.contains("Not run: the tool runs only as a task"),
        "the refusal is not logged:\n{log}"
    );
    Ok(())
}

#[test]
fn python_sdk_a_task_required_tool_is_refused_to_a_legacy_client_without_the_extension()
-> Result<()> {
    conformance_scenario("required", "legacy").map(drop)
}

#[test]
fn with_tasks_off_a_task_required_tool_answers_on_its_request_and_is_not_listed_as_required()
-> Result<()> {
    let log = conformance_scenario_with("off", "2026-07-28", &["--no-tasks"])?;
    ensure!(
        log.contains("note: with tasks off, the task-required tools (tasks.required) answer"),
        "the banner does not say what becomes of the task-required tools:\n{log}"
    );
    Ok(())
}

#[test]
fn python_sdk_command_output_arrives_as_log_notifications_only_when_asked_2026_07_28() -> Result<()>
{
    conformance_scenario("logs", "2026-07-28").map(drop)
}

#[test]
fn python_sdk_command_output_arrives_as_log_notifications_only_when_asked_legacy() -> Result<()> {
    conformance_scenario("logs", "legacy").map(drop)
}

/// The fixture app's server (its `ticker` prints as many lines as asked).
fn limits(mode: &str) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let app = apps::path(App::Fixture)?;
    let server = Server::spawn_app(&clients::fixture_server()?, dir.path(), &app, &[], &[])?;
    let finished = python(
        "results.py",
        &strings(&["--url", &server.url, "--mode", mode, "--scenario", "limits"]),
    )?;
    println!("{}", finished.report());
    finished.has("every 5ms): 256 of ")?;
    Ok(())
}

#[test]
fn log_notifications_stop_at_their_limits_with_a_notice_of_what_was_not_sent_2026_07_28()
-> Result<()> {
    limits("2026-07-28")
}

#[test]
fn log_notifications_stop_at_their_limits_with_a_notice_of_what_was_not_sent_legacy() -> Result<()>
{
    limits("legacy")
}

/// Runs the `logs` scenario over stdio: the SDK starts `test-mcp` itself.
fn logs_over_stdio(mode: &str) -> Result<()> {
    let app = apps::path(App::Conformance)?;
    let server = clients::conformance_server()?;
    let finished = python(
        "results.py",
        &[
            "--server".to_string(),
            server.display().to_string(),
            "--app".to_string(),
            app.display().to_string(),
            "--mode".to_string(),
            mode.to_string(),
            "--scenario".to_string(),
            "logs".to_string(),
        ],
    )?;
    println!("{}", finished.report());
    Ok(())
}

#[test]
fn python_sdk_command_output_arrives_as_log_notifications_over_stdio_2026_07_28() -> Result<()> {
    logs_over_stdio("2026-07-28")
}

#[test]
fn python_sdk_command_output_arrives_as_log_notifications_over_stdio_legacy() -> Result<()> {
    logs_over_stdio("legacy")
}

/// A `TRACEPARENT` the server itself was started with (its own caller's trace), which no
/// command may see.
const INHERITED_PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
/// The `TRACESTATE` beside it.
const INHERITED_STATE: &str = "inherited=from-the-server";

/// `trace_context.py` against `test-mcp` running a script that prints its environment (after a
/// second for `test_reconnection`, so that call becomes a task), the server started with a
/// trace context of its own; in 2026-07-28 a traced call also runs as a task.
fn trace_context(mode: &str) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let app = dir.path().join("print-env");
    std::fs::write(
        &app,
        "#!/bin/sh\ncase \"$*\" in *reconnection*) sleep 1 ;; esac\nexec env\n",
    )?;
    std::fs::set_permissions(&app, std::os::unix::fs::PermissionsExt::from_mode(0o755))?;
    let env = [
        ("TRACEPARENT", std::ffi::OsStr::new(INHERITED_PARENT)),
        ("TRACESTATE", std::ffi::OsStr::new(INHERITED_STATE)),
    ];
    let tasks = mode == "2026-07-28";
    let flags: &[&str] = if tasks {
        &["--task-after", "300ms"]
    } else {
        &[]
    };
    let server = Server::spawn_app(
        &clients::conformance_server()?,
        dir.path(),
        &app,
        &env,
        flags,
    )?;
    let inherited =
        serde_json::json!({"TRACEPARENT": INHERITED_PARENT, "TRACESTATE": INHERITED_STATE});
    let mut args = strings(&[
        "--url",
        &server.url,
        "--mode",
        mode,
        "--tool",
        "test_simple_text",
        "--inherited",
        &inherited.to_string(),
    ]);
    if tasks {
        args.extend(strings(&["--task-tool", "test_reconnection"]));
    }
    let finished = python("trace_context.py", &args)?;
    println!("{}", finished.report());
    if tasks {
        finished.has_line(
            "task: TRACEPARENT=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 \
             TRACESTATE=rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
        )?;
    }
    let log = server.log();
    ensure!(
        log.contains("dropped the request's _meta traceparent"),
        "the dropped traceparent is not logged:\n{log}"
    );
    Ok(())
}

#[test]
fn python_sdk_a_clients_trace_context_reaches_the_command_and_a_task_but_junk_and_the_servers_own_do_not_2026_07_28()
-> Result<()> {
    trace_context("2026-07-28")
}

#[test]
fn python_sdk_a_clients_trace_context_reaches_the_command_but_junk_and_the_servers_own_do_not_legacy()
-> Result<()> {
    trace_context("legacy")
}
