//! Long calls as tasks (the SEP-2663 extension) and progress notifications, with the official
//! Python SDK (`tests/clients/python/tasks.py`) against the fixture app's generated server,
//! whose `ticker` command prints a line per tick (docs/runtime.md, "Tasks" and "Progress"), over
//! streamable HTTP and over stdio.

use anyhow::Result;
use fiskgen_tests::apps::{self, App};
use fiskgen_tests::clients;

use crate::clients::{Server, python, strings};

/// The fixture app's server with `flags`, in a fresh working directory.
fn fixture_server(flags: &[&str]) -> Result<(Server, tempfile::TempDir)> {
    let dir = tempfile::tempdir()?;
    let app = apps::path(App::Fixture)?;
    let server = Server::spawn_app(&clients::fixture_server()?, dir.path(), &app, &[], flags)?;
    Ok((server, dir))
}

/// Runs one scenario of `tasks.py` against a server started with `flags`; returns its log.
fn scenario(name: &str, mode: &str, flags: &[&str]) -> Result<String> {
    let (server, _dir) = fixture_server(flags)?;
    let finished = python(
        "tasks.py",
        &strings(&["--url", &server.url, "--mode", mode, "--scenario", name]),
    )?;
    println!("{}", finished.report());
    Ok(server.log())
}

#[test]
fn python_sdk_tasks_are_created_polled_cancelled_with_their_process_group_and_completed()
-> Result<()> {
    let log = scenario("lifecycle", "2026-07-28", &["--task-after", "500ms"])?;
    anyhow::ensure!(
        log.contains("Became a task after 500ms"),
        "no task was logged:\n{log}"
    );
    anyhow::ensure!(
        log.lines()
            .filter(|line| line.contains("Became a task after"))
            .all(|line| line
                .split("task=")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .is_some_and(|digest| digest.len() == 8)),
        "a task is logged by more than a digest of its id:\n{log}"
    );
    Ok(())
}

#[test]
fn python_sdk_a_call_run_through_the_catalog_becomes_a_task_of_the_tool_itself() -> Result<()> {
    let log = scenario(
        "catalog",
        "2026-07-28",
        &["--catalog", "search", "--task-after", "500ms"],
    )?;
    anyhow::ensure!(
        log.contains("Became a task after 500ms"),
        "no task was logged:\n{log}"
    );
    Ok(())
}

#[test]
fn python_sdk_a_full_task_store_refuses_the_next_long_call() -> Result<()> {
    scenario(
        "full",
        "2026-07-28",
        &["--task-after", "300ms", "--max-tasks", "1"],
    )?;
    Ok(())
}

#[test]
fn python_sdk_a_gated_call_asks_for_approval_inside_its_task() -> Result<()> {
    scenario("confirm", "2026-07-28", &["--task-after", "500ms"])?;
    Ok(())
}

#[test]
fn python_sdk_a_task_still_running_at_its_ttl_is_killed_and_failed() -> Result<()> {
    scenario(
        "expiry",
        "2026-07-28",
        &["--task-after", "300ms", "--task-ttl", "1500ms"],
    )?;
    Ok(())
}

#[test]
fn python_sdk_no_tasks_declares_no_extension_and_answers_on_the_request() -> Result<()> {
    scenario("off", "2026-07-28", &["--no-tasks"])?;
    Ok(())
}

#[test]
fn a_2025_11_25_experimental_task_request_is_answered_as_a_plain_call() -> Result<()> {
    scenario("v1", "legacy", &["--task-after", "300ms"])?;
    Ok(())
}

#[test]
fn python_sdk_progress_arrives_in_order_on_the_request_stream_2026_07_28() -> Result<()> {
    scenario("progress", "2026-07-28", &[])?;
    Ok(())
}

#[test]
fn python_sdk_progress_arrives_in_order_on_the_request_stream_legacy() -> Result<()> {
    scenario("progress", "legacy", &[])?;
    Ok(())
}

/// Runs one scenario of `tasks.py` over stdio: the SDK starts the fixture app's server with
/// `flags`; returns what the script printed and the server's stderr (passed through).
fn stdio_scenario(name: &str, mode: &str, flags: &[&str]) -> Result<(String, String)> {
    let server = clients::fixture_server()?;
    let app = apps::path(App::Fixture)?;
    let (server, app) = (server.display().to_string(), app.display().to_string());
    let mut args = strings(&[
        "--server",
        &server,
        "--app",
        &app,
        "--mode",
        mode,
        "--scenario",
        name,
    ]);
    args.extend(flags.iter().map(|flag| format!("--flag={flag}")));
    let finished = python("tasks.py", &args)?;
    println!("{}", finished.report());
    Ok((finished.stdout.clone(), finished.stderr.clone()))
}

#[test]
fn python_sdk_tasks_are_created_polled_cancelled_and_completed_over_stdio() -> Result<()> {
    let (out, log) = stdio_scenario("lifecycle", "2026-07-28", &["--task-after=500ms"])?;
    anyhow::ensure!(
        log.contains("Became a task after 500ms"),
        "no task was logged:\n{out}\n{log}"
    );
    no_task_id_logged(&out, &log)
}

#[test]
fn python_sdk_a_gated_call_asks_for_approval_inside_its_task_over_stdio() -> Result<()> {
    let (out, log) = stdio_scenario("confirm", "2026-07-28", &["--task-after=500ms"])?;
    anyhow::ensure!(
        out.contains("approved and completed: "),
        "the owner could not approve over stdio:\n{out}"
    );
    no_task_id_logged(&out, &log)
}

/// None of the task ids a script printed (`task id: <id>`) is in the server's log.
fn no_task_id_logged(out: &str, log: &str) -> Result<()> {
    let ids: Vec<&str> = out
        .lines()
        .filter_map(|line| line.strip_prefix("task id: "))
        .collect();
    anyhow::ensure!(!ids.is_empty(), "the script printed no task id:\n{out}");
    for id in ids {
        anyhow::ensure!(!log.contains(id), "the task id {id} is in the log:\n{log}");
    }
    Ok(())
}

#[test]
fn python_sdk_progress_arrives_in_order_over_stdio_2026_07_28() -> Result<()> {
    let (out, _) = stdio_scenario("progress", "2026-07-28", &[])?;
    anyhow::ensure!(out.contains("progress (2026-07-28): "), "{out}");
    Ok(())
}

#[test]
fn python_sdk_progress_arrives_in_order_over_stdio_legacy() -> Result<()> {
    let (out, _) = stdio_scenario("progress", "legacy", &[])?;
    anyhow::ensure!(out.contains("progress (2025-11-25): "), "{out}");
    Ok(())
}
