//! One approval, one run, on every deployment: two stateless replicas of the generated demo
//! server share one sealing key (`FISKGEN_MCP_STATE_KEY`) and one record of used approvals, a
//! NATS JetStream KV bucket on a real `nats-server` (`FISKGEN_MCP_APPROVAL_STORE`). An approval
//! asked on one replica runs on the other, and replaying it on either is refused; with the
//! record down, an approval is refused rather than run unchecked (docs/deploy.md).

use std::ffi::OsStr;
use std::path::Path;

use anyhow::{Context, Result, ensure};
use fiskgen_tests::apps::{self, App};
use fiskgen_tests::clients;

use super::clients::{Server, python, strings};
use super::nats::{NatsServer, nats, start_nats_server};

/// The bucket the replicas record used approvals in.
pub(super) const BUCKET: &str = "fiskgen-approvals";
/// A sealing key the replicas share (at least 32 bytes).
const KEY: &str = "replicas-test-key-0123456789abcdef";

/// Starts a stateless replica of the demo server with `env`.
pub(super) fn replica(cwd: &Path, env: &[(&str, &OsStr)]) -> Result<Server> {
    let app = apps::path(App::Demo)?;
    Server::spawn_app(&clients::demo_server()?, cwd, &app, env, &["--stateless"])
}

/// A real nats-server with a JetStream KV bucket for used approvals, and the
/// `FISKGEN_MCP_APPROVAL_STORE` value that names it.
pub(super) fn approval_record() -> Result<(NatsServer, String)> {
    let nats_server = start_nats_server()?;
    let home = tempfile::tempdir().context("creating the CLI's home")?;
    nats(
        &nats_server.url,
        home.path(),
        &[
            "kv",
            "add",
            BUCKET,
            "--ttl",
            "15m",
            "--history",
            "1",
            "--storage",
            "memory",
        ],
    )?;
    let record = format!("{}/{BUCKET}", nats_server.url);
    Ok((nats_server, record))
}

#[test]
fn a_replayed_approval_is_refused_on_every_replica() -> Result<()> {
    let (nats_server, record) = approval_record()?;
    let dir = tempfile::tempdir().context("creating the replicas' directory")?;
    let store = dir.path().join("tasks.json");
    let env: [(&str, &OsStr); 3] = [
        ("TASKS_STORE", store.as_os_str()),
        ("FISKGEN_MCP_STATE_KEY", OsStr::new(KEY)),
        ("FISKGEN_MCP_APPROVAL_STORE", OsStr::new(&record)),
    ];
    let one = replica(dir.path(), &env)?;
    let other = replica(dir.path(), &env)?;
    one.wait_for_line(&["note: approvals are single-use across replicas", BUCKET])?;

    let store_arg = store.display().to_string();
    let run = python(
        "replicas.py",
        &strings(&[
            "--url", &one.url, "--other", &other.url, "--store", &store_arg,
        ]),
    )?;
    run.has("approved on the other replica: ran task delete")?
        .has("replayed on the first replica: refused: ")?
        .has("replayed on the other replica: refused: ")?;
    let delete = format!("Ran task delete --store={store_arg} --force -- 1");
    other.wait_for_line(&[&delete])?;
    let runs = one.log().matches(&delete).count() + other.log().matches(&delete).count();
    ensure!(
        runs == 1,
        "task delete ran {runs} times across the replicas"
    );

    // With the record down, nothing is approved unchecked.
    drop(nats_server);
    python(
        "replicas.py",
        &strings(&[
            "--url",
            &one.url,
            "--other",
            &other.url,
            "--store",
            &store_arg,
            "--unreachable",
        ]),
    )?;
    other.wait_for_line(&[
        "could not check that the requestState is unused",
        "cannot connect",
    ])?;

    // A replica that shares the key but has no record says what that means.
    let env: [(&str, &OsStr); 2] = [
        ("TASKS_STORE", store.as_os_str()),
        ("FISKGEN_MCP_STATE_KEY", OsStr::new(KEY)),
    ];
    let lone = replica(dir.path(), &env)?;
    lone.wait_for_line(&[
        "warning: replicas share FISKGEN_MCP_STATE_KEY but no FISKGEN_MCP_APPROVAL_STORE",
    ])?;
    Ok(())
}
