//! `--working-dir DIR`: commands run there, and the stdio entries `config` prints carry the
//! directory, so a client that starts the server anywhere runs the application where it expects
//! to run.

use std::path::Path;
use std::process::{Command, Output};

use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use serde_json::Value;

use crate::support::*;

const CLIENTS: [&str; 5] = ["claude-code", "claude-desktop", "fx", "vscode", "json"];

fn run_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(server_binary())
        .args(args)
        .current_dir(cwd)
        .env_remove("FISK_AI_MCP_PORT")
        .output()
        .expect("run fake_server")
}

/// The stdio entry `config --client CLIENT` prints when run in `cwd` with `args` first.
fn printed_entry(cwd: &Path, args: &[&str], client: &str) -> String {
    let args: Vec<&str> = args
        .iter()
        .copied()
        .chain(["config", "--stdio", "--client", client])
        .collect();
    let printed = run_in(cwd, &args);
    assert!(
        printed.status.success(),
        "{client}: {}",
        text_of(&printed.stderr)
    );
    text_of(&printed.stdout)
}

fn text_of(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The `CWD=` line the fake application's `env` command prints.
fn cwd_line(output: &str) -> Option<&str> {
    output.lines().find_map(|line| line.strip_prefix("CWD="))
}

#[test]
fn every_printed_stdio_entry_carries_the_working_directory() {
    let app = FakeApp::new();
    let work = tempfile::tempdir().expect("temp dir");
    let work_dir = work.path().canonicalize().expect("canonical");
    let shown = work_dir.display().to_string();
    let app_path = app.path().display().to_string();
    for client in CLIENTS {
        // Where the user ran `config` is the directory the entry starts the server in.
        let entry = printed_entry(&work_dir, &["--application-path", &app_path], client);
        assert!(
            entry.contains("--working-dir") && entry.contains(&shown),
            "{client}'s entry names the working directory {shown}:\n{entry}"
        );
        // `--working-dir` given: that directory, whichever the command ran in.
        let entry = printed_entry(Path::new("/"), &["--working-dir", &shown], client);
        assert!(entry.contains(&shown), "{client}: {entry}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_printed_stdio_entry_runs_commands_in_its_directory_from_anywhere() {
    let app = FakeApp::new();
    let work = tempfile::tempdir().expect("temp dir");
    let work_dir = work.path().canonicalize().expect("canonical");
    let printed = run_in(
        &work_dir,
        &[
            "--application-path",
            &app.path().display().to_string(),
            "config",
            "--stdio",
            "--client",
            "json",
        ],
    );
    assert!(printed.status.success(), "{}", text_of(&printed.stderr));
    let entry: Value = serde_json::from_slice(&printed.stdout).expect("a JSON entry");
    let server = entry["mcpServers"]
        .as_object()
        .and_then(|servers| servers.values().next())
        .expect("one server");
    let program = server["command"].as_str().expect("command");
    let args: Vec<String> = server["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|arg| arg.as_str().expect("a string").to_string())
        .collect();
    // A client starts it in a directory of its choosing: here `/`.
    let mut command = tokio::process::Command::new(program);
    command
        .args(&args)
        .current_dir("/")
        .env_remove("RUST_LOG")
        .stderr(std::process::Stdio::null());
    let transport = TokioChildProcess::new(command).expect("spawn");
    let client = TestClient::new(Answer::Unable)
        .serve(transport)
        .await
        .expect("stdio client connects");
    let output = env_output(&client).await;
    assert_eq!(
        cwd_line(&output),
        Some(work_dir.display().to_string().as_str()),
        "{output}"
    );
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_run_in_the_working_directory_and_a_missing_one_is_refused() {
    let app = FakeApp::new();
    let work = tempfile::tempdir().expect("temp dir");
    let work_dir = work.path().canonicalize().expect("canonical");
    let shown = work_dir.display().to_string();
    // A relative `--application-path` is resolved where the server was started, before it
    // moves to its working directory.
    let app_dir = app.path().parent().expect("a directory").to_path_buf();
    let server = Server::start_with(Start {
        args: &["--working-dir", &shown, "--application-path", "./fakeapp"],
        cwd: Some(&app_dir),
        ..Start::default()
    });
    let client = legacy(&server.url, TestClient::new(Answer::Unable)).await;
    let output = env_output(&client).await;
    assert_eq!(cwd_line(&output), Some(shown.as_str()), "{output}");
    let _ = client.cancel().await;

    let missing = work_dir.join("nope");
    let refused = run_in(
        &work_dir,
        &["--working-dir", &missing.display().to_string(), "tools"],
    );
    assert_eq!(refused.status.code(), Some(2));
    let error = text_of(&refused.stderr);
    assert!(
        error.contains("--working-dir")
            && error.contains("nope")
            && error.contains("existing directory"),
        "{error}"
    );
}

#[test]
fn verify_of_a_missing_application_names_no_config_file_rule() {
    let work = tempfile::tempdir().expect("temp dir");
    let missing = work.path().join("gone/app");
    let verified = run_in(
        work.path(),
        &[
            "--application-path",
            &missing.display().to_string(),
            "verify",
        ],
    );
    assert_eq!(verified.status.code(), Some(2));
    let error = text_of(&verified.stderr);
    assert!(error.contains("does not exist"), "{error}");
    assert!(
        !error.contains("config file"),
        "a server has no config file to resolve against: {error}"
    );
}
