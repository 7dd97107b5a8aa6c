//! Tasks shared by stateless replicas through a NATS JetStream KV bucket
//! (`FISKGEN_MCP_TASK_STORE`, docs/deploy.md "Tasks across replicas"): three replicas of the
//! fixture app's server behind Debian's nginx round robin and a real `nats-server` (one, a
//! three-node cluster, or a TLS-only one reached through a context the real `nats` CLI wrote),
//! with the official Python SDK (`tests/clients/python/tasks_replicas.py`, `ownership.py`):
//!
//! - a task created on one replica is polled through the others and nginx, cancelled through
//!   another (its process group is gone), and a task that asks is approved through a third;
//! - the replica running a task is SIGKILLed: the task is `failed`, saying so, within 12 s;
//! - 1,000 calls against `--max-tasks 64`: exactly 64 tasks, every other call the store-full error;
//! - a node of the three-node cluster (bucket replicated 3 times) is killed mid-run: the task
//!   completes and new ones run;
//! - another OAuth user is refused a task held by another replica exactly as an unknown one;
//! - a replica whose NATS is down refuses new tasks with a clear error and serves direct calls.

use std::ffi::OsStr;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use fiskgen_tests::apps::{self, App};
use fiskgen_tests::clients;

use super::clients::{Server, python, run_bounded, strings};
use super::nats::{
    NatsServer, nats, start_nats_cluster, start_nats_server, start_nats_server_with,
};
use super::nginx::{Nginx, start_nginx_with};
use super::replicas::test_certificates;

/// The bucket the replicas keep tasks in.
const BUCKET: &str = "fiskgen-tasks";

/// A stateless replica of the fixture app's server sharing tasks through `env`, with `flags`.
fn replica(dir: &Path, env: &[(&str, &OsStr)], flags: &[&str]) -> Result<Server> {
    let app = apps::path(App::Fixture)?;
    let mut all = vec!["--stateless", "--task-after", "300ms"];
    all.extend(flags);
    Server::spawn_app(&clients::fixture_server()?, dir, &app, env, &all)
}

/// The task bucket on `url`, replicated `replicas` times; retried while a cluster elects its
/// JetStream leader.
fn task_bucket(url: &str, home: &Path, replicas: &str, extra: &[&str]) -> Result<()> {
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
fn three(dir: &Path, env: &[(&str, &OsStr)], flags: &[&str]) -> Result<([Server; 3], Nginx)> {
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
fn scenario(name: &str, replicas: &[Server; 3], nginx: &Nginx, more: &[&str]) -> Result<String> {
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

#[test]
fn python_sdk_a_task_is_polled_cancelled_and_approved_through_any_replica_behind_nginx()
-> Result<()> {
    let (_nats_server, store, _home) = task_store()?;
    let dir = tempfile::tempdir()?;
    let env: [(&str, &OsStr); 1] = [("FISKGEN_MCP_TASK_STORE", OsStr::new(&store))];
    let (replicas, nginx) = three(dir.path(), &env, &[])?;
    let out = scenario("across", &replicas, &nginx, &[])?;
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
    let keys = nats(&nats_server.url, home.path(), &["kv", "ls", BUCKET])?;
    let slots = keys
        .stdout
        .lines()
        .filter(|l| l.trim().starts_with("t."))
        .count();
    ensure!(
        slots == 64,
        "the bucket holds {slots} slots:\n{}",
        keys.report()
    );
    Ok(())
}

#[test]
fn a_three_node_nats_cluster_losing_a_node_mid_task_keeps_every_task_record() -> Result<()> {
    let nodes = start_nats_cluster()?;
    let home = tempfile::tempdir()?;
    task_bucket(&nodes[0].url, home.path(), "3", &[])?;
    // The replicas reach the cluster through a context naming all three nodes.
    let urls = nodes
        .iter()
        .map(|n| n.url.as_str())
        .collect::<Vec<_>>()
        .join(",");
    let context = home.path().join("cluster.json");
    std::fs::write(&context, format!("{{\"url\": \"{urls}\"}}"))?;
    let dir = tempfile::tempdir()?;
    let env: [(&str, &OsStr); 2] = [
        ("FISKGEN_MCP_TASK_STORE", OsStr::new(BUCKET)),
        ("FISKGEN_MCP_NATS_CONTEXT", context.as_os_str()),
    ];
    let (replicas, nginx) = three(dir.path(), &env, &[])?;
    // A node some replicas are connected to (the client picks its server at random): they
    // reconnect to another, and the bucket's other two copies keep every record.
    let victim = nodes[2].pid().to_string();
    scenario("cluster", &replicas, &nginx, &["--kill-pid", &victim])?;
    Ok(())
}

#[test]
fn python_sdk_tasks_reach_a_tls_only_nats_server_through_a_nats_context() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let [ca, cert, key] = test_certificates(dir.path())?;
    let (cert, key) = (cert.display().to_string(), key.display().to_string());
    let nats_server = start_nats_server_with(&["--tls", "--tlscert", &cert, "--tlskey", &key])?;
    let ca_arg = ca.display().to_string();
    let home = dir.path().join("home");
    let config = home.join(".config");
    let mut add = std::process::Command::new(apps::path(App::Nats)?);
    add.args([
        "context",
        "add",
        "secure",
        "--server",
        &nats_server.url,
        "--tlsca",
        &ca_arg,
    ])
    .env("HOME", &home)
    .env("XDG_CONFIG_HOME", &config)
    .env_remove("NATS_URL")
    .env_remove("NATS_CONTEXT");
    run_bounded(&mut add, Duration::from_secs(30), "nats context add")?.success()?;
    task_bucket(&nats_server.url, &home, "1", &["--tlsca", &ca_arg])?;
    let env: [(&str, &OsStr); 3] = [
        ("FISKGEN_MCP_TASK_STORE", OsStr::new(BUCKET)),
        ("FISKGEN_MCP_NATS_CONTEXT", OsStr::new("secure")),
        ("XDG_CONFIG_HOME", config.as_os_str()),
    ];
    let (replicas, nginx) = three(dir.path(), &env, &[])?;
    scenario("across", &replicas, &nginx, &[])?;

    // Without the CA the replica cannot reach the server: it says why, refuses new tasks with
    // that, and still answers calls that end before they become tasks.
    let record = format!("{}/{BUCKET}", nats_server.url);
    let env: [(&str, &OsStr); 1] = [("FISKGEN_MCP_TASK_STORE", OsStr::new(&record))];
    let plain = replica(dir.path(), &env, &[])?;
    plain.wait_for_line(&[
        "The shared task store cannot be reached",
        "the TLS handshake failed",
        "name its CA certificate (`ca`)",
    ])?;
    let run = python(
        "tasks_replicas.py",
        &strings(&["--url", &plain.url, "--scenario", "refused"]),
    )?;
    println!("{}", run.report());
    Ok(())
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
