//! Whose is it (docs/security.md): a task, its approval and a legacy session belong to the
//! principal that made them; anyone else gets the error of an id the server does not hold and
//! the gated command never runs, while the owner still can. With the official Python SDK
//! (`tests/clients/python/ownership.py`) in both eras against the fixture server (no
//! credentials: another legacy session) and the auth server (another OAuth user, the static
//! token's holder). Also: session end (DELETE) as the SDK expects it, error texts that echo a
//! megabyte of client input capped, and a help text with a right-to-left override served intact.

use anyhow::{Result, ensure};
use fiskgen_tests::apps::{self, App};
use fiskgen_tests::clients;

use crate::clients::{Server, python, strings};

/// The lines `task id: <id>` a script printed: the ids that must never reach the server's log.
fn task_ids(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|line| line.strip_prefix("task id: "))
        .map(str::to_string)
        .collect()
}

/// No task id in the server's log (INFO is the default level).
fn no_task_id_logged(out: &str, log: &str) -> Result<()> {
    let ids = task_ids(out);
    ensure!(!ids.is_empty(), "the script printed no task id:\n{out}");
    for id in ids {
        ensure!(!log.contains(&id), "the task id {id} is in the log:\n{log}");
    }
    Ok(())
}

#[test]
fn python_sdk_another_legacy_session_can_neither_read_approve_nor_cancel_a_task() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let app = apps::path(App::Fixture)?;
    let server = Server::spawn_app(&clients::fixture_server()?, dir.path(), &app, &[], &[])?;
    let run = python(
        "ownership.py",
        &strings(&[
            "--url",
            &server.url,
            "--mode",
            "legacy",
            "--scenario",
            "sessions",
        ]),
    )?;
    println!("{}", run.report());
    run.has_line(
        "another session: get, update and cancel refused as an unknown task; still input_required",
    )?;
    run.has_line("the owner session approved and the command ran")?;
    let log = server.log();
    no_task_id_logged(&run.stdout, &log)?;
    let approvals: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("confirmation approved"))
        .collect();
    ensure!(
        approvals.len() == 1 && approvals[0].contains("by=\"session #"),
        "one approval, credited to a session by its digest:\n{log}"
    );
    Ok(())
}

/// The auth server (OAuth, static token, header) in `mode`; the users scenario.
fn users(mode: &str) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let dir_arg = dir.path().display().to_string();
    python("auth.py", &strings(&["keygen", "--dir", &dir_arg]))?;
    let server = Server::spawn_env(
        &clients::auth_server()?,
        dir.path(),
        &[],
        &[
            ("TASKS_AUTH_TOKEN", "static-s3cret"),
            ("TASKS_AUTH_KEY", "header-s3cret"),
        ],
    )?;
    let store = dir.path().join("tasks.json").display().to_string();
    let run = python(
        "ownership.py",
        &strings(&[
            "--url",
            &server.url,
            "--mode",
            mode,
            "--scenario",
            "users",
            "--dir",
            &dir_arg,
            "--token",
            "static-s3cret",
            "--store",
            &store,
        ]),
    )?;
    println!("{}", run.report());
    run.has_line(
        "another user: get, update and cancel refused as an unknown task; still input_required",
    )?;
    run.has_line("the static token's holder: get, update and cancel refused as an unknown task; still input_required")?;
    run.has_line("the owner approved and the command ran once")?;
    // 2026-07-28 without tasks: the input-required result's requestState is alice's alone.
    let stateless_round = mode != "legacy";
    if stateless_round {
        run.has_line(
            "another user's answer to alice's requestState is refused and runs nothing; hers runs",
        )?;
    }
    let log = server.log();
    no_task_id_logged(&run.stdout, &log)?;
    let approvals: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("confirmation approved"))
        .collect();
    let expected = if stateless_round { 2 } else { 1 };
    ensure!(
        approvals.len() == expected
            && approvals.iter().all(|line| {
                line.contains("subject oauth https://auth.example.test/realms/tasks alice")
            }),
        "{expected} approval(s), each credited to alice:\n{log}"
    );
    Ok(())
}

#[test]
fn python_sdk_another_user_can_neither_read_approve_nor_cancel_a_task_2026_07_28() -> Result<()> {
    users("2026-07-28")
}

#[test]
fn python_sdk_another_user_can_neither_read_approve_nor_cancel_a_task_nor_use_the_session_legacy()
-> Result<()> {
    users("legacy")
}

#[test]
fn python_sdk_ends_its_session_with_204_and_an_unknown_session_is_404() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let app = apps::path(App::Fixture)?;
    let server = Server::spawn_app(&clients::fixture_server()?, dir.path(), &app, &[], &[])?;
    let run = python(
        "ownership.py",
        &strings(&["--url", &server.url, "--scenario", "delete"]),
    )?;
    println!("{}", run.report());
    run.has_line("delete: the SDK ended its session quietly; a live session 204, an ended or unknown one 404")?;
    Ok(())
}

#[test]
fn stalled_bodies_on_1100_connections_are_closed_within_the_deadline_while_a_client_is_served()
-> Result<()> {
    let dir = tempfile::tempdir()?;
    let app = apps::path(App::Fixture)?;
    let server = Server::spawn_app(
        &clients::fixture_server()?,
        dir.path(),
        &app,
        &[],
        &["--request-timeout", "3s"],
    )?;
    let run = python(
        "stall.py",
        &strings(&["--url", &server.url, "--count", "1100", "--deadline", "3"]),
    )?;
    println!("{}", run.report());
    run.has("a normal client from 127.0.0.1 was served while")?;
    run.has("every stalled connection was closed within 3s")?;
    Ok(())
}

/// `echoes.py` against the fixture server in `mode`.
fn echoes(mode: &str) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let app = apps::path(App::Fixture)?;
    let server = Server::spawn_app(&clients::fixture_server()?, dir.path(), &app, &[], &[])?;
    let run = python(
        "echoes.py",
        &strings(&["--url", &server.url, "--mode", mode]),
    )?;
    println!("{}", run.report());
    run.has_line(
        "hostile: listed with its help intact (U+202E, U+202C) and its look-alike flag names",
    )?;
    if mode == "legacy" {
        run.has("1 MB tool name: -32602 error of ")?;
        run.has("900 KB URI: error of ")?;
    }
    ensure!(
        server.log().len() < 64 * 1024,
        "the log grew by the echoed input:\n{}",
        &server.log()[..4096]
    );
    Ok(())
}

#[test]
fn python_sdk_a_help_text_with_a_right_to_left_override_is_listed_intact_and_echoes_are_capped_legacy()
-> Result<()> {
    echoes("legacy")
}

#[test]
fn python_sdk_a_help_text_with_a_right_to_left_override_is_listed_intact_and_echoes_are_capped_2026_07_28()
-> Result<()> {
    echoes("2026-07-28")
}

/// The resident memory of process `pid`, in KiB.
fn rss_kib(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| anyhow::anyhow!("no VmRSS in /proc/{pid}/status"))
}

/// After 1,000 sessions expire the server's memory is back within 10 MiB of where it was after
/// its first session (docs/runtime.md, "Limits"): the allocator is made to give it back. The
/// sessions idle out after 20 s, long enough that all 1,000 are alive at once even on a busy
/// machine.
#[test]
fn memory_returns_within_10_mib_after_1000_sessions_expire() -> Result<()> {
    const BOUND_KIB: u64 = 10 * 1024;
    let dir = tempfile::tempdir()?;
    let app = apps::path(App::Fixture)?;
    let server = Server::spawn_app(
        &clients::fixture_server()?,
        dir.path(),
        &app,
        &[],
        &["--max-sessions", "1001", "--session-idle-timeout", "20s"],
    )?;
    // One session first, so that the baseline holds what any served client costs once.
    python(
        "sessions.py",
        &strings(&["--url", &server.url, "--count", "1"]),
    )?;
    let baseline = rss_kib(server.pid())?;
    python(
        "sessions.py",
        &strings(&["--url", &server.url, "--count", "1000"]),
    )?;
    let peak = rss_kib(server.pid())?;
    ensure!(
        peak > baseline + BOUND_KIB,
        "1,000 sessions cost less than the bound ({baseline} -> {peak} KiB): the test shows nothing"
    );
    // The sessions idle out 20 s after their last request, and memory is looked at every 5 s.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut now = peak;
    while std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(500));
        now = rss_kib(server.pid())?;
        if now <= baseline + BOUND_KIB {
            break;
        }
    }
    println!(
        "resident memory: {baseline} KiB after one session, {peak} KiB with 1,000, {now} KiB after they expired"
    );
    ensure!(
        now <= baseline + BOUND_KIB,
        "still {now} KiB 60 s after the last session was used (baseline {baseline} KiB, peak {peak} KiB)"
    );
    Ok(())
}
