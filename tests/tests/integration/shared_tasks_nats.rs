//! Shared tasks (`shared_tasks.rs`) on the NATS deployments users run, with the same three
//! replicas behind nginx and the official Python SDK:
//!
//! - on a three-node cluster (the bucket replicated 3 times) a task is polled, cancelled and
//!   approved across the replicas, then the node leading the bucket is killed mid-run: the task
//!   completes, every record is kept, new ones run, and a killed replica's task fails as on one
//!   node;
//! - a TLS-only server reached through a context the real `nats` CLI wrote serves tasks and the
//!   record of used approvals; a plain connection to it is refused saying why;
//! - servers that require a password, an NKey or a user JWT (a credentials file, the server in
//!   decentralized-JWT mode) are reached through a context, and wrong credentials are refused
//!   saying so without showing them.

use std::ffi::OsStr;
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use fiskgen_tests::apps::{self, App};

use super::clients::{python, run_bounded, strings};
use super::nats::{nats, nsc, start_nats_cluster, start_nats_server_with};
use super::replicas::test_certificates;
use super::shared_tasks::{BUCKET, bucket_stream, replica, scenario, slots, task_bucket, three};

/// The bucket of used approvals, where a test shares one.
const APPROVALS: &str = "fiskgen-approvals";

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
/// `right` (its JSON besides `url`) for their tasks and the record of used approvals (a replayed
/// approval refused), the buckets made with the CLI's `cli` options; a replica with
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
    let mut args = cli.to_vec();
    args.extend(["kv", "add", APPROVALS, "--ttl", "15m", "--history", "1"]);
    nats(&nats_server.url, home.path(), &args)?;
    let context = |name: &str, mut json: serde_json::Value| -> Result<std::path::PathBuf> {
        let path = home.path().join(format!("{name}.json"));
        json["url"] = nats_server.url.clone().into();
        std::fs::write(&path, json.to_string())?;
        Ok(path)
    };
    let (right, wrong) = (context("right", right)?, context("wrong", wrong)?);
    let dir = tempfile::tempdir()?;
    let env: [(&str, &OsStr); 4] = [
        ("FISKGEN_MCP_TASK_STORE", OsStr::new(BUCKET)),
        ("FISKGEN_MCP_APPROVAL_STORE", OsStr::new(APPROVALS)),
        (
            "FISKGEN_MCP_STATE_KEY",
            OsStr::new("shared-tasks-key-0123456789abcdef0123"),
        ),
        ("FISKGEN_MCP_NATS_CONTEXT", right.as_os_str()),
    ];
    let (replicas, nginx) = three(dir.path(), &env, &[])?;
    replicas[0].wait_for_line(&[
        "note: approvals are single-use across replicas",
        APPROVALS,
        "right.json",
    ])?;
    scenario("across", &replicas, &nginx, &[])?;
    let out = scenario("approvals", &replicas, &nginx, &[])?;
    ensure!(
        out.contains("replayed on replica 3: refused: ") && out.contains("already used"),
        "{out}"
    );

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
fn python_sdk_tasks_and_approvals_reach_a_nats_server_that_requires_a_password_through_a_context()
-> Result<()> {
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
fn python_sdk_tasks_and_approvals_reach_a_nats_server_that_requires_an_nkey_through_a_context()
-> Result<()> {
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
fn python_sdk_tasks_and_approvals_reach_a_jwt_nats_server_with_a_credentials_file_through_a_context()
-> Result<()> {
    let keys = tempfile::tempdir()?;
    let dir = keys.path();
    let path = |name: &str| dir.join(name).display().to_string();
    // Made by the real `nsc`: an operator (with its system account), an account allowed
    // JetStream and its user, whose credentials file the server's resolver can check.
    nsc(dir, &["add", "operator", "--name", "fiskgen", "--sys"])?;
    nsc(dir, &["add", "account", "--name", "tasks"])?;
    nsc(
        dir,
        &[
            "edit",
            "account",
            "--name",
            "tasks",
            "--js-mem-storage",
            "-1",
            "--js-disk-storage",
            "-1",
            "--js-streams",
            "-1",
            "--js-consumer",
            "-1",
        ],
    )?;
    let creds = |account: &str, file: &str| -> Result<String> {
        nsc(
            dir,
            &["add", "user", "--account", account, "--name", "replica"],
        )?;
        let file = path(file);
        nsc(
            dir,
            &[
                "generate",
                "creds",
                "--account",
                account,
                "--name",
                "replica",
                "--output-file",
                &file,
            ],
        )?;
        Ok(file)
    };
    let known = creds("tasks", "known.creds")?;
    let config = path("server.conf");
    nsc(
        dir,
        &[
            "generate",
            "config",
            "--mem-resolver",
            "--sys-account",
            "SYS",
            "--config-file",
            &config,
        ],
    )?;
    // A user of an account made after the server's configuration: the server cannot resolve it.
    nsc(dir, &["add", "account", "--name", "stranger"])?;
    let unknown = creds("stranger", "unknown.creds")?;
    let unknown_seed = std::fs::read_to_string(&unknown)?
        .lines()
        .find(|line| line.starts_with("SU"))
        .map(str::to_string)
        .with_context(|| format!("{unknown} holds no user seed"))?;
    through_credentials(
        &["-c", &config],
        &["--creds", &known],
        serde_json::json!({"creds": known}),
        serde_json::json!({"creds": unknown}),
        &unknown_seed,
    )
}
