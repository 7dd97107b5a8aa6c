//! One approval, one run, on every deployment: two stateless replicas of the generated demo
//! server share one sealing key (`FISKGEN_MCP_STATE_KEY`) and one record of used approvals, a
//! NATS JetStream KV bucket on a real `nats-server` (`FISKGEN_MCP_APPROVAL_STORE`). An approval
//! asked on one replica runs on the other, and replaying it on either is refused; with the
//! record down, an approval is refused rather than run unchecked (docs/deploy.md). A TLS-only
//! nats-server (certificates made by the test with openssl) is reached through a context the
//! real `nats` CLI wrote (`FISKGEN_MCP_NATS_CONTEXT`), and a plain connection to it is refused
//! with an error that names the CA setting.

use std::ffi::OsStr;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use fiskgen_tests::apps::{self, App};
use fiskgen_tests::clients;

use super::clients::{Server, python, run_bounded, strings};
use super::nats::{NatsServer, nats, start_nats_server, start_nats_server_with};

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
    lone.wait_for_line(&[
        "warning: replicas share FISKGEN_MCP_STATE_KEY but no FISKGEN_MCP_TASK_STORE",
    ])?;
    Ok(())
}

/// A CA, and a server certificate it signed for 127.0.0.1, made with openssl in `dir`: the CA
/// certificate's path, the server's certificate and key.
pub(super) fn test_certificates(dir: &Path) -> Result<[std::path::PathBuf; 3]> {
    let run = |args: &[&str]| -> Result<()> {
        let mut cmd = std::process::Command::new("openssl");
        cmd.args(args).current_dir(dir);
        run_bounded(&mut cmd, Duration::from_secs(30), "openssl")?.success()?;
        Ok(())
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    run(&[
        &["req", "-x509"][..],
        &ec[..],
        &[
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "1",
            "-subj",
            "/CN=fiskgen test CA",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign",
        ],
    ]
    .concat())?;
    run(&[
        &["req"][..],
        &ec[..],
        &[
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=127.0.0.1",
        ],
    ]
    .concat())?;
    std::fs::write(dir.join("server.ext"), "subjectAltName=IP:127.0.0.1\n")
        .context("writing the extensions file")?;
    run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "1",
        "-extfile",
        "server.ext",
    ])?;
    Ok([
        dir.join("ca.pem"),
        dir.join("server.pem"),
        dir.join("server.key"),
    ])
}

#[test]
fn approvals_reach_a_tls_only_nats_server_through_a_nats_context() -> Result<()> {
    let dir = tempfile::tempdir().context("creating the replicas' directory")?;
    let [ca, cert, key] = test_certificates(dir.path())?;
    let nats_server = start_nats_server_with(&[
        "--tls",
        "--tlscert",
        &cert.display().to_string(),
        "--tlskey",
        &key.display().to_string(),
    ])?;
    let ca_arg = ca.display().to_string();
    // The context is the one the real `nats` CLI writes (`nats context add`).
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
    nats(
        &nats_server.url,
        &home,
        &[
            "--tlsca",
            &ca_arg,
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

    let store = dir.path().join("tasks.json");
    let env: [(&str, &OsStr); 5] = [
        ("TASKS_STORE", store.as_os_str()),
        ("FISKGEN_MCP_STATE_KEY", OsStr::new(KEY)),
        ("FISKGEN_MCP_APPROVAL_STORE", OsStr::new(BUCKET)),
        ("FISKGEN_MCP_NATS_CONTEXT", OsStr::new("secure")),
        ("XDG_CONFIG_HOME", config.as_os_str()),
    ];
    let one = replica(dir.path(), &env)?;
    let other = replica(dir.path(), &env)?;
    one.wait_for_line(&[
        "note: approvals are single-use across replicas",
        BUCKET,
        "secure.json",
    ])?;
    let store_arg = store.display().to_string();
    python(
        "replicas.py",
        &strings(&[
            "--url", &one.url, "--other", &other.url, "--store", &store_arg,
        ]),
    )?
    .has("approved on the other replica: ran task delete")?
    .has("replayed on the first replica: refused: ")?
    .has("replayed on the other replica: refused: ")?;

    // A plain connection (no CA) to the TLS-only server is refused, and says what to set.
    let record = format!("{}/{BUCKET}", nats_server.url);
    let env: [(&str, &OsStr); 3] = [
        ("TASKS_STORE", store.as_os_str()),
        ("FISKGEN_MCP_STATE_KEY", OsStr::new(KEY)),
        ("FISKGEN_MCP_APPROVAL_STORE", OsStr::new(&record)),
    ];
    let plain = replica(dir.path(), &env)?;
    let plain_other = replica(dir.path(), &env)?;
    python(
        "replicas.py",
        &strings(&[
            "--url",
            &one.url,
            "--other",
            &plain_other.url,
            "--store",
            &store_arg,
            "--unreachable",
        ]),
    )?;
    plain_other.wait_for_line(&[
        "could not check that the requestState is unused",
        "the TLS handshake failed",
        "name its CA certificate (`ca`)",
    ])?;
    drop(plain);
    Ok(())
}
