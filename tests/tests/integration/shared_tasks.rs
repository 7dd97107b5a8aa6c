//! Tasks shared by stateless replicas through a NATS JetStream KV bucket
//! (`FISKGEN_MCP_TASK_STORE`, docs/deploy.md "Tasks across replicas"): three replicas of the
//! fixture app's server behind Debian's nginx round robin and a real `nats-server` (one, a
//! three-node cluster, or a TLS-only one reached through a context the real `nats` CLI wrote),
//! with the official Python SDK (`tests/clients/python/tasks_replicas.py`, `ownership.py`):
//!
//! - a task created on one replica is polled through the others and nginx, cancelled through
//!   another (its process group is gone), and a task that asks is approved through a third;
//! - the replica running a task is SIGKILLed: the task is `failed`, saying so, within 12 s;
//! - the replica running a task is stopped (SIGSTOP) past that bound and continued: it finds
//!   its task failed and kills the command, and every replica answers that one failure;
//! - 1,000 calls against `--max-tasks 64`: exactly 64 tasks, every other call the store-full error;
//! - on a three-node cluster (the bucket replicated 3 times) the same polling and cancelling,
//!   then the node leading the bucket is killed mid-run: the task completes, every record is
//!   kept, new ones run, and a killed replica's task fails as on one node;
//! - a TLS-only server reached through a context serves tasks and the record of used approvals;
//!   servers that require a password or an NKey are reached through a context, and wrong
//!   credentials are refused saying so without showing them;
//! - the size of the records, measured in the bucket (docs/deploy.md, "Sizing");
//! - another OAuth user is refused a task held by another replica exactly as an unknown one;
//! - a replica whose NATS is down refuses new tasks with a clear error and serves direct calls;
//! - the one nats-server is killed while a task runs, and started again after the bound: the
//!   task is failed once, its command stopped, every replica answering the same.

use std::ffi::OsStr;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
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
/// The bucket of used approvals, where a test shares one.
const APPROVALS: &str = "fiskgen-approvals";

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

/// The keys `t.*` the bucket holds, through the `nats` CLI on `url`.
fn slots(url: &str, home: &Path) -> Result<Vec<String>> {
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
fn bucket_stream(url: &str, home: &Path) -> Result<serde_json::Value> {
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
fn python_sdk_tasks_on_a_three_node_nats_cluster_survive_losing_its_leader_node_and_a_replica()
-> Result<()> {
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
    scenario("across", &replicas, &nginx, &[])?;

    // The node leading the bucket's stream (nodes are n1..n3): killing it mid-task forces an
    // election, and the other two copies must keep every record.
    let stream = bucket_stream(&nodes[0].url, home.path())?;
    ensure!(
        stream["config"]["num_replicas"] == 3,
        "the bucket is not replicated 3 times: {stream}"
    );
    let leader = stream["cluster"]["leader"].as_str().unwrap_or_default();
    let index = match leader {
        "n1" => 0,
        "n2" => 1,
        "n3" => 2,
        other => bail!("no leader among n1..n3: {other:?} in {stream}"),
    };
    let before = slots(&nodes[(index + 1) % 3].url, home.path())?;
    ensure!(
        before.len() == 2,
        "after two tasks the bucket holds {before:?}"
    );
    let victim = nodes[index].pid().to_string();
    println!("killing {leader}, the leader of the bucket's stream");
    scenario("cluster", &replicas, &nginx, &["--kill-pid", &victim])?;
    let mut after = slots(&nodes[(index + 1) % 3].url, home.path())?;
    after.sort();
    ensure!(
        after.len() == 5 && before.iter().all(|key| after.contains(key)),
        "after five tasks and a lost node the bucket holds {after:?} (before: {before:?})"
    );

    // A replica killed mid-task, with a node already down: its task fails as on one node.
    let out = scenario("kill", &replicas, &nginx, &[])?;
    ensure!(
        out.contains("(bound 12s): the replica running this task"),
        "{out}"
    );
    Ok(())
}

#[test]
fn python_sdk_tasks_and_approvals_reach_a_tls_only_nats_server_through_a_context_plain_fails()
-> Result<()> {
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
    nats(
        &nats_server.url,
        &home,
        &[
            "--tlsca",
            &ca_arg,
            "kv",
            "add",
            APPROVALS,
            "--ttl",
            "15m",
            "--history",
            "1",
        ],
    )?;
    let env: [(&str, &OsStr); 5] = [
        ("FISKGEN_MCP_TASK_STORE", OsStr::new(BUCKET)),
        ("FISKGEN_MCP_APPROVAL_STORE", OsStr::new(APPROVALS)),
        (
            "FISKGEN_MCP_STATE_KEY",
            OsStr::new("shared-tasks-key-0123456789abcdef0123"),
        ),
        ("FISKGEN_MCP_NATS_CONTEXT", OsStr::new("secure")),
        ("XDG_CONFIG_HOME", config.as_os_str()),
    ];
    let (replicas, nginx) = three(dir.path(), &env, &[])?;
    replicas[0].wait_for_line(&[
        "note: approvals are single-use across replicas",
        APPROVALS,
        "secure.json",
    ])?;
    scenario("across", &replicas, &nginx, &[])?;
    let out = scenario("approvals", &replicas, &nginx, &[])?;
    ensure!(
        out.contains("replayed on replica 3: refused: ") && out.contains("already used"),
        "{out}"
    );

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

/// Three replicas reach a nats-server started with `server` (options) through a context with
/// `right` (its JSON besides `url`), the bucket made with the CLI's `cli` options; a replica with
/// `wrong` is refused saying the server refused the credentials, and `secret` (in `wrong`) is
/// shown nowhere.
fn through_credentials(
    server: &[&str],
    cli: &[&str],
    right: serde_json::Value,
    wrong: serde_json::Value,
    secret: &str,
) -> Result<()> {
    let nats_server = start_nats_server_with(server)?;
    let home = tempfile::tempdir()?;
    task_bucket(&nats_server.url, home.path(), "1", cli)?;
    let context = |name: &str, mut json: serde_json::Value| -> Result<std::path::PathBuf> {
        let path = home.path().join(format!("{name}.json"));
        json["url"] = nats_server.url.clone().into();
        std::fs::write(&path, json.to_string())?;
        Ok(path)
    };
    let (right, wrong) = (context("right", right)?, context("wrong", wrong)?);
    let dir = tempfile::tempdir()?;
    let env: [(&str, &OsStr); 2] = [
        ("FISKGEN_MCP_TASK_STORE", OsStr::new(BUCKET)),
        ("FISKGEN_MCP_NATS_CONTEXT", right.as_os_str()),
    ];
    let (replicas, nginx) = three(dir.path(), &env, &[])?;
    scenario("across", &replicas, &nginx, &[])?;

    // Wrong credentials: the refusal names the credentials, never the secret.
    let env: [(&str, &OsStr); 2] = [
        ("FISKGEN_MCP_TASK_STORE", OsStr::new(BUCKET)),
        ("FISKGEN_MCP_NATS_CONTEXT", wrong.as_os_str()),
    ];
    let refused = replica(dir.path(), &env, &[])?;
    refused.wait_for_line(&[
        "The shared task store cannot be reached",
        "the server refused the credentials",
    ])?;
    let run = python(
        "tasks_replicas.py",
        &strings(&[
            "--url",
            &refused.url,
            "--scenario",
            "refused",
            "--reason",
            "the server refused the credentials",
        ]),
    )?;
    println!("{}", run.report());
    ensure!(
        !run.stdout.contains(secret) && !refused.log().contains(secret),
        "the secret was shown"
    );
    Ok(())
}

#[test]
fn python_sdk_tasks_reach_a_nats_server_that_requires_a_password_through_a_context() -> Result<()> {
    through_credentials(
        &["--user", "fiskgen", "--pass", "s3cret"],
        &["--user", "fiskgen", "--password", "s3cret"],
        serde_json::json!({"user": "fiskgen", "password": "s3cret"}),
        serde_json::json!({"user": "fiskgen", "password": "not-the-pa55word"}),
        "not-the-pa55word",
    )
}

/// The server the `nats` CLI is given for commands that reach none (`auth nkey`).
const NO_SERVER: &str = "nats://127.0.0.1:1";

#[test]
fn python_sdk_tasks_reach_a_nats_server_that_requires_an_nkey_through_a_context() -> Result<()> {
    let keys = tempfile::tempdir()?;
    // Seeds made by the real `nats` CLI; the server knows only the first one's public key.
    let seed = |name: &str| -> Result<(String, String)> {
        let path = keys.path().join(format!("{name}.nk"));
        let path_arg = path.display().to_string();
        nats(
            NO_SERVER,
            keys.path(),
            &["auth", "nkey", "gen", "user", "--output", &path_arg],
        )?;
        let seed = std::fs::read_to_string(&path)?.trim().to_string();
        Ok((path_arg, seed))
    };
    let public_of = |path: &str| -> Result<String> {
        let shown = nats(NO_SERVER, keys.path(), &["auth", "nkey", "show", path])?;
        Ok(shown.stdout.trim().to_string())
    };
    let ((known, _), (unknown, unknown_seed)) = (seed("known")?, seed("unknown")?);
    let config = keys.path().join("server.conf");
    std::fs::write(
        &config,
        format!(
            "authorization {{ users = [ {{ nkey: {} }} ] }}\n",
            public_of(&known)?
        ),
    )?;
    let config_arg = config.display().to_string();
    through_credentials(
        &["-c", &config_arg],
        &["--nkey", &known],
        serde_json::json!({"nkey": known}),
        serde_json::json!({"nkey": unknown}),
        &unknown_seed,
    )
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
