//! The binary's informational subcommands and flag handling.

use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::support::*;

fn run(args: &[&str]) -> Output {
    Command::new(server_binary())
        .args(args)
        .env_remove("FISK_AI_MCP_PORT")
        .output()
        .expect("run fake_server")
}

#[test]
fn tools_json_matches_the_info_shape() {
    let output = run(&["tools", "--json"]);
    assert!(output.status.success());
    let tools: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let tools = tools.as_array().expect("array");
    assert_eq!(tools.len(), 9);
    assert_eq!(
        tools[7],
        json!({
            "name": "deploy",
            "title": "deploy",
            "description": "deploy things\n\nTags: ai:confirm",
            "tags": ["ai:confirm"],
            "hints": ["destructive"],
            "confirm": {"trigger": "ai:confirm"},
            "input_schema": {
                "type": "object",
                "properties": {"target": {"type": "string", "description": "Where to deploy"}},
                "additionalProperties": false
            },
            "kind": "command",
            "command": ["deploy"]
        })
    );
    assert_eq!(tools[6]["command"], json!(["stream", "info"]));
    assert_eq!(tools[6]["confirm"], Value::Null);
    assert_eq!(tools[5]["hints"], json!(["read_only", "idempotent"]));
}

#[test]
fn version_names_the_generation() {
    let output = run(&["version", "--json"]);
    let version: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(version["identity"], "fake");
    assert_eq!(version["fiskgen_version"], "0.1.0");
    assert_eq!(version["application"]["name"], "fakeapp");
    assert_eq!(version["application"]["version"], "1.2.3");
    // The compiler that built it: the first line of `rustc -V` (cargo's `$RUSTC` when set).
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let rustc = Command::new(rustc).arg("-V").output().expect("rustc runs");
    let rustc = String::from_utf8_lossy(&rustc.stdout);
    let rustc = rustc.lines().next().unwrap_or_default();
    assert!(rustc.starts_with("rustc "), "{rustc}");
    assert_eq!(version["rustc_version"], rustc, "{version}");
    let output = run(&["--version"]);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "fake-mcp 1.2.3 (fiskgen 0.1.0)\n"
    );
}

#[test]
fn argv_prints_what_a_call_would_run() {
    let output = run(&["argv", "echo", r#"{"name":"-x\ny","items":["--","a"]}"#]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("invalid arguments for echo: property `items`")
    );
    let output = run(&["argv", "echo", r#"{"name":"-x\ny","items":["-a","b=c"]}"#]);
    assert!(output.status.success());
    let argv: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(argv, json!(["echo", "--name=-x\ny", "--", "-a", "b=c"]));
    let output = run(&["argv", "nope"]);
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn bad_flags_are_usage_errors() {
    for args in [
        &["--max-concurrent-tools", "0"][..],
        &["--max-concurrent-tools", "1025"],
        &["--tool-timeout", "30"],
        &["--tool-timeout", "0s"],
        &["--log-format", "xml"],
    ] {
        let output = run(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn the_port_comes_from_the_environment_when_no_flag_is_given() {
    // A port that is certainly free: ask the OS, release it, and hand it over.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .expect("free port");
    let app = FakeApp::new();
    let mut child = Command::new(server_binary())
        .arg("--application-path")
        .arg(app.path())
        .env("FISK_AI_MCP_PORT", port.to_string())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let stderr = child.stderr.take().expect("stderr");
    let mut first_lines = String::new();
    use std::io::BufRead;
    for line in std::io::BufReader::new(stderr)
        .lines()
        .map_while(Result::ok)
    {
        first_lines.push_str(&line);
        first_lines.push('\n');
        if line.contains("config --client NAME") || line.contains("ERROR") {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        first_lines.contains(&format!("MCP endpoint: http://127.0.0.1:{port}/mcp")),
        "{first_lines}"
    );
    assert!(first_lines.contains(&format!(
        "claude mcp add --transport http fake http://127.0.0.1:{port}/mcp"
    )));
    assert!(first_lines.contains("\"--stdio\""), "{first_lines}");
}
