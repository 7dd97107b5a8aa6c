//! Tasks shared by stateless replicas through a NATS JetStream KV bucket
//! (`FISKGEN_MCP_TASK_STORE`, docs/deploy.md "Tasks across replicas"): three replicas of the
//! fixture app's server behind Debian's nginx round robin and a real `nats-server` (one, a
//! three-node cluster, or a TLS-only one reached through a context the real `nats` CLI wrote),
//! with the official Python SDK (`tests/clients/python/tasks_replicas.py`, `ownership.py`).
//! The NATS deployments (a cluster, TLS, credentials) are in `shared_tasks_nats.rs`.
//!
//! - a task created on one replica is polled through the others and nginx, cancelled through
//!   another (its process group is gone), and a task that asks is approved through a third;
//! - the replica running a task is SIGKILLed: the task is `failed`, saying so, within 12 s;
//! - the replica running a task is stopped (SIGSTOP) past that bound and continued: it finds
//!   its task failed and kills the command, and every replica answers that one failure;
//! - 1,000 calls against `--max-tasks 64`: exactly 64 tasks, every other call the store-full error;
//! - the size of the records, measured in the bucket (docs/deploy.md, "Sizing");
//! - another OAuth user is refused a task held by another replica exactly as an unknown one;
//! - a replica whose NATS is down refuses new tasks with a clear error and serves direct calls;
//! - the one nats-server is killed while a task runs, and started again after the bound: the
//!   task is failed once, its command stopped, every replica answering the same.

use std::ffi::OsStr;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use fiskgen_tests::apps::{self, App};
use fiskgen_tests::clients;

use super::clients::{Server, python, strings};
use super::nats::{NatsServer, nats, start_nats_server};
use super::nginx::{Nginx, start_nginx_with};

/// The bucket the replicas keep tasks in.
pub(super) const BUCKET: &str = "fiskgen-tasks";

/// A stateless replica of the fixture app's server sharing tasks through `env`, with `flags`.
pub(super) fn replica(dir: &Path, env: &[(&str, &OsStr)], flags: &[&str]) -> Result<Server> {
    let app = apps::path(App::Fixture)?;
    let mut all = vec!["--stateless", "--task-after", "300ms"];
    all.extend(flags);
    Server::spawn_app(&clients::fixture_server()?, dir, &app, env, &all)
}

/// The task bucket on `url`, replicated `replicas` times; retried while a cluster elects its
/// JetStream leader.
pub(super) fn task_bucket(url: &str, home: &Path, replicas: &str, extra: &[&str]) -> Result<()> {
    let mut last = None;
    for _ in 0..20 {
        let mut args = extra.to_vec();
        args.extend([
            "kv",
            "add",
            BUCKET,
            "--history",
            "1",
            "--replicas",
            replicas,
        ]);
        match nats(url, home, &args) {
            Ok(_) => return Ok(()),
            Err(error) => last = Some(error),
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    Err(last.context("no attempt")?)
}

/// Three replicas with `env` (and `flags`), behind nginx (a refused connection skips to the next).
pub(super) fn three(
    dir: &Path,
    env: &[(&str, &OsStr)],
    flags: &[&str],
) -> Result<([Server; 3], Nginx)> {
    let replicas = [
        replica(dir, env, flags)?,
        replica(dir, env, flags)?,
        replica(dir, env, flags)?,
    ];
    replicas[0].wait_for_line(&["Tasks are shared through the", BUCKET])?;
    let nginx = start_nginx_with(&[&replicas[0], &replicas[1], &replicas[2]], "error")?;
    Ok((replicas, nginx))
}

/// Runs a scenario of `tasks_replicas.py` against `replicas` and `nginx`, with `more` arguments.
pub(super) fn scenario(
    name: &str,
    replicas: &[Server; 3],
    nginx: &Nginx,
    more: &[&str],
) -> Result<String> {
    let mut args = strings(&["--url", &nginx.url, "--scenario", name]);
    for replica in replicas {
        args.push("--replica".into());
        args.push(format!("{}={}", replica.url, replica.pid()));
    }
    args.extend(more.iter().map(|arg| arg.to_string()));
    let run = python("tasks_replicas.py", &args).with_context(|| nginx.logs())?;
    println!("{}", run.report());
    Ok(run.stdout)
}

/// A nats-server with the task bucket, and the `FISKGEN_MCP_TASK_STORE` that names it.
fn task_store() -> Result<(NatsServer, String, tempfile::TempDir)> {
    let nats_server = start_nats_server()?;
    let home = tempfile::tempdir().context("creating the CLI's home")?;
    task_bucket(&nats_server.url, home.path(), "1", &[])?;
    let store = format!("{}/{BUCKET}", nats_server.url);
    Ok((nats_server, store, home))
}

/// How many of `replicas` logged a line with every one of `parts`.
fn logged(replicas: &[Server; 3], parts: &[&str]) -> usize {
    replicas
        .iter()
        .filter(|r| r.log().lines().any(|l| parts.iter().all(|p| l.contains(p))))
        .count()
}

/// The keys `t.*` the bucket holds, through the `nats` CLI on `url`.
pub(super) fn slots(url: &str, home: &Path) -> Result<Vec<String>> {
    let keys = nats(url, home, &["kv", "ls", BUCKET])?;
    Ok(keys
        .stdout
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("t."))
        .map(str::to_string)
        .collect())
}

/// The JetStream stream behind the bucket, as `nats stream info --json` shows it.
pub(super) fn bucket_stream(url: &str, home: &Path) -> Result<serde_json::Value> {
    let stream = format!("KV_{BUCKET}");
    let info = nats(url, home, &["stream", "info", &stream, "--json"])?;
    serde_json::from_str(&info.stdout).with_context(|| info.report())
}

/// The bytes of a record that are its output tail (`output`) and result (`result`): what
/// grows with the command; the rest is the record's fixed part.
fn variable_bytes(value: &serde_json::Value) -> usize {
    match value {
        serde_json::Value::Object(map) => map
            .iter()
            .map(|(key, child)| match (key.as_str(), child) {
                ("result", _) => child.to_string().len(),
                ("output", serde_json::Value::String(text)) => text.len(),
                _ => variable_bytes(child),
            })
            .sum(),
        serde_json::Value::Array(items) => items.iter().map(variable_bytes).sum(),
        _ => 0,
    }
}

/// The most bytes an ended task's record may take besides its output tail and result
/// (docs/deploy.md, "Sizing", measured 600 to 650 bytes).
const FIXED_RECORD_BYTES: usize = 1024;

/// Measures every record in the bucket (`nats kv get --raw`): prints its size, split into the
/// fixed part and the output tail and result, and checks the fixed part against the documented
/// figure; then [`stream_bytes`].
fn measure_records(url: &str, home: &Path) -> Result<()> {
    for key in slots(url, home)? {
        let raw = nats(url, home, &["kv", "get", BUCKET, &key, "--raw"])?;
        let bytes = raw.stdout.trim_end().len();
        let record: serde_json::Value =
            serde_json::from_str(raw.stdout.trim_end()).with_context(|| raw.report())?;
        let variable = variable_bytes(&record);
        let status = record["answer"]["status"]
            .as_str()
            .unwrap_or("?")
            .to_string();
        println!(
            "sizing: record {key} ({status}): {bytes} bytes, {} fixed + {variable} output tail \
             and result",
            bytes - variable
        );
        ensure!(
            bytes - variable <= FIXED_RECORD_BYTES,
            "record {key} has {} bytes besides its output and result, over the documented \
             {FIXED_RECORD_BYTES}:\n{}",
            bytes - variable,
            raw.stdout
        );
    }
    stream_bytes(url, home)
}

/// Prints the bytes JetStream keeps for the bucket's records (subject and headers included).
fn stream_bytes(url: &str, home: &Path) -> Result<()> {
    let stream = bucket_stream(url, home)?;
    let (stored, messages) = (
        stream["state"]["bytes"].as_u64().unwrap_or(0),
        stream["state"]["messages"].as_u64().unwrap_or(0),
    );
    ensure!(messages > 0, "the bucket's stream holds nothing: {stream}");
    println!(
        "sizing: JetStream keeps {stored} bytes for {messages} records ({} per record)",
        stored / messages
    );
    Ok(())
}

#[test]
fn python_sdk_a_task_is_polled_cancelled_and_approved_through_any_replica_behind_nginx()
-> Result<()> {
    let (nats_server, store, home) = task_store()?;
    let dir = tempfile::tempdir()?;
    let env: [(&str, &OsStr); 1] = [("FISKGEN_MCP_TASK_STORE", OsStr::new(&store))];
    let (replicas, nginx) = three(dir.path(), &env, &[])?;
    let out = scenario("across", &replicas, &nginx, &[])?;
    measure_records(&nats_server.url, home.path())?;
    ensure!(
        out.contains("cancelled through replica 2: cancelled on replica 3"),
        "{out}"
    );
    ensure!(
        logged(
            &replicas,
            &[
                "Answered a tasks/cancel forwarded by another replica",
                "ok=true"
            ]
        ) == 1
            && logged(
                &replicas,
                &[
                    "Answered a tasks/update forwarded by another replica",
                    "ok=true"
                ]
            ) == 1,
        "the cancel and the update were not forwarded to the replica holding the task"
    );
    Ok(())
}

#[test]
fn python_sdk_a_task_whose_replica_is_killed_fails_within_the_documented_bound() -> Result<()> {
    let (_nats_server, store, _home) = task_store()?;
    let dir = tempfile::tempdir()?;
    let env: [(&str, &OsStr); 1] = [("FISKGEN_MCP_TASK_STORE", OsStr::new(&store))];
    let (replicas, nginx) = three(dir.path(), &env, &[])?;
    let out = scenario("kill", &replicas, &nginx, &[])?;
    ensure!(
        out.contains("(bound 12s): the replica running this task"),
        "{out}"
    );
    Ok(())
}

#[test]
fn python_sdk_a_replica_stopped_past_the_bound_finds_its_task_failed_and_kills_it_so_it_ends_once()
-> Result<()> {
    let (_nats_server, store, _home) = task_store()?;
    let dir = tempfile::tempdir()?;
    let env: [(&str, &OsStr); 1] = [("FISKGEN_MCP_TASK_STORE", OsStr::new(&store))];
    let (replicas, nginx) = three(dir.path(), &env, &[])?;
    let out = scenario("frozen", &replicas, &nginx, &[])?;
    ensure!(
        out.contains("every replica, replica 1 included, answers the one failure"),
        "{out}"
    );
    ensure!(
        logged(
            &replicas,
            &["Another replica failed this task", "its command is stopped"]
        ) == 1,
        "the stopped replica did not say it stopped its failed task's command"
    );
    Ok(())
}

#[test]
fn python_sdk_a_nats_outage_past_the_bound_refuses_tasks_then_fails_the_running_one_once()
-> Result<()> {
    let (mut nats_server, store, _home) = task_store()?;
    let dir = tempfile::tempdir()?;
    let env: [(&str, &OsStr); 1] = [("FISKGEN_MCP_TASK_STORE", OsStr::new(&store))];
    let (replicas, nginx) = three(dir.path(), &env, &[])?;
    let pid = nats_server.pid().to_string();
    let out = scenario("outage", &replicas, &nginx, &["--kill-pid", &pid])?;
    let (task, pgid) = out
        .lines()
        .find_map(|line| line.strip_prefix("outage task "))
        .and_then(|rest| rest.split_once(' '))
        .with_context(|| format!("no task printed:\n{out}"))?;
    nats_server.restart()?;
    let out = scenario(
        "after",
        &replicas,
        &nginx,
        &["--task", task, "--pgid", pgid],
    )?;
    ensure!(
        out.contains("every replica, replica 1 included, answers the one failure"),
        "{out}"
    );
    Ok(())
}

#[test]
fn python_sdk_1000_task_calls_across_replicas_hold_exactly_max_64_and_refuse_the_rest() -> Result<()>
{
    let (nats_server, store, home) = task_store()?;
    let dir = tempfile::tempdir()?;
    let env: [(&str, &OsStr); 1] = [("FISKGEN_MCP_TASK_STORE", OsStr::new(&store))];
    let (replicas, nginx) = three(dir.path(), &env, &["--max-tasks", "64"])?;
    let out = scenario(
        "flood",
        &replicas,
        &nginx,
        &["--calls", "1000", "--max", "64"],
    )?;
    ensure!(
        out.contains("1000 calls: 64 tasks, 936 refused with the store-full error"),
        "{out}"
    );
    // Every replica took part, and the bucket holds exactly the 64 slots.
    let created = replicas
        .iter()
        .filter(|r| r.log().contains("the task store is full"))
        .count();
    ensure!(
        created == 3,
        "only {created} replicas refused calls: nginx did not spread them"
    );
    let slots = slots(&nats_server.url, home.path())?;
    ensure!(
        slots.len() == 64,
        "the bucket holds {} slots: {slots:?}",
        slots.len()
    );
    stream_bytes(&nats_server.url, home.path())
}

#[test]
fn python_sdk_another_user_is_refused_a_task_another_replica_holds() -> Result<()> {
    let (_nats_server, store, _home) = task_store()?;
    let dir = tempfile::tempdir()?;
    let dir_arg = dir.path().display().to_string();
    python("auth.py", &strings(&["keygen", "--dir", &dir_arg]))?;
    let env = [
        ("TASKS_AUTH_TOKEN", "static-s3cret"),
        ("TASKS_AUTH_KEY", "header-s3cret"),
        ("FISKGEN_MCP_TASK_STORE", store.as_str()),
        (
            "FISKGEN_MCP_STATE_KEY",
            "shared-tasks-key-0123456789abcdef0123",
        ),
    ];
    let flags = ["--stateless"];
    let auth = clients::auth_server()?;
    let replicas = [
        Server::spawn_env(&auth, dir.path(), &flags, &env)?,
        Server::spawn_env(&auth, dir.path(), &flags, &env)?,
        Server::spawn_env(&auth, dir.path(), &flags, &env)?,
    ];
    replicas[0].wait_for_line(&["Tasks are shared through the", BUCKET])?;
    let nginx = start_nginx_with(&[&replicas[0], &replicas[1], &replicas[2]], "error")?;
    let tasks = dir.path().join("tasks.json").display().to_string();
    let run = python(
        "ownership.py",
        &strings(&[
            "--url",
            &nginx.url,
            "--mode",
            "2026-07-28",
            "--scenario",
            "users",
            "--dir",
            &dir_arg,
            "--token",
            "static-s3cret",
            "--store",
            &tasks,
        ]),
    )
    .with_context(|| nginx.logs())?;
    println!("{}", run.report());
    run.has_line(
        "another user: get, update and cancel refused as an unknown task; still input_required",
    )?
    .has_line("the owner approved and the command ran once")?;
    Ok(())
}
