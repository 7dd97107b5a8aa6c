//! Who may talk to the server: Host and Origin allowlists (403), the bearer token (401), the
//! body limit (413), the header read timeout.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::*;

fn status_with(server: &Server, headers: &[(&str, &str)]) -> u16 {
    post(server.addr, headers, INITIALIZE).0
}

fn status_with_host(server: &Server, host: &str, extra: &[(&str, &str)]) -> u16 {
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         Content-Length: {}\r\n",
        INITIALIZE.len()
    );
    for (name, value) in extra {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(INITIALIZE);
    raw_http(server.addr, request.as_bytes()).0
}

#[test]
fn foreign_hosts_and_origins_are_refused() {
    let server = Server::args(&[
        "--allowed-host",
        "proxy.example",
        "--allowed-origin",
        "https://ui.example",
    ]);
    assert_eq!(status_with(&server, &[]), 200);
    assert_eq!(status_with_host(&server, "evil.example", &[]), 403);
    assert_eq!(status_with_host(&server, "evil.example:8080", &[]), 403);
    assert_eq!(status_with_host(&server, "localhost", &[]), 200);
    // Built-in `allowed_hosts` and the flag.
    assert_eq!(status_with_host(&server, "fake.example", &[]), 200);
    assert_eq!(status_with_host(&server, "proxy.example", &[]), 200);

    assert_eq!(
        status_with(&server, &[("Origin", "http://evil.example")]),
        403
    );
    assert_eq!(
        status_with(&server, &[("Origin", "https://127.0.0.1.evil.example")]),
        403
    );
    assert_eq!(status_with(&server, &[("Origin", "null")]), 403);
    assert_eq!(
        status_with(&server, &[("Origin", "http://localhost:6274")]),
        200
    );
    assert_eq!(
        status_with(&server, &[("Origin", "http://127.0.0.1:3000")]),
        200
    );
    // Built-in `allowed_origins` (https://app.example:443) and the flag.
    assert_eq!(
        status_with(&server, &[("Origin", "https://app.example")]),
        200
    );
    assert_eq!(
        status_with(&server, &[("Origin", "http://app.example")]),
        403
    );
    assert_eq!(
        status_with(&server, &[("Origin", "https://ui.example")]),
        200
    );
}

#[test]
fn an_oversize_body_is_refused() {
    let server = Server::start();
    let padding = " ".repeat(2 * 1024 * 1024);
    let body = format!("{}{padding}", INITIALIZE);
    let (status, _, _) = post(server.addr, &[], &body);
    assert_eq!(status, 413);
}

#[test]
fn a_client_that_never_finishes_its_headers_is_cut_off() {
    let server = Server::start();
    let mut stream = std::net::TcpStream::connect(server.addr).expect("connect");
    stream
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .expect("send");
    stream.set_read_timeout(Some(PATIENCE)).expect("timeout");
    let started = Instant::now();
    let mut buffer = Vec::new();
    let _ = stream.read_to_end(&mut buffer);
    let waited = started.elapsed();
    assert!(
        waited < Duration::from_secs(40),
        "the connection stayed open for {waited:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bearer_token_is_required_when_configured() {
    let server = Server::start_with(Start {
        profile: "auth",
        env: &[("FAKE_MCP_TOKEN", "s3cret-token")],
        ..Start::default()
    });
    let (status, head, _) = post(server.addr, &[], INITIALIZE);
    assert_eq!(status, 401);
    assert!(
        head.to_ascii_lowercase()
            .contains("www-authenticate: bearer realm=\"fake\""),
        "{head}"
    );
    let (status, head, _) = post(
        server.addr,
        &[("Authorization", "Bearer wrong")],
        INITIALIZE,
    );
    assert_eq!(status, 401);
    assert!(head.contains("invalid_token"), "{head}");
    let (status, _, _) = post(
        server.addr,
        &[("Authorization", "Basic czNjcmV0LXRva2Vu")],
        INITIALIZE,
    );
    assert_eq!(status, 401);
    let (status, _, _) = post(
        server.addr,
        &[("Authorization", "Bearer s3cret-token")],
        INITIALIZE,
    );
    assert_eq!(status, 200);

    assert!(legacy_with_token(&server.url, "wrong").await.is_err());
    let client = legacy_with_token(&server.url, "s3cret-token")
        .await
        .expect("connects");
    let output = env_output(&client).await;
    assert!(
        !output.contains("s3cret-token"),
        "the token leaked to a command"
    );
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_custom_header_is_compared_with_its_secret() {
    let server = Server::start_with(Start {
        profile: "header",
        env: &[("FAKE_MCP_KEY", "k3y-value")],
        ..Start::default()
    });
    let (status, head, _) = post(server.addr, &[], INITIALIZE);
    assert_eq!(status, 401);
    assert!(
        head.to_ascii_lowercase()
            .contains("www-authenticate: bearer realm=\"fake\""),
        "{head}"
    );
    let (status, _, _) = post(server.addr, &[("X-Fake-Key", "k3y-valuE")], INITIALIZE);
    assert_eq!(status, 401);
    // The header's value as a bearer token is not the header.
    let (status, _, _) = post(
        server.addr,
        &[("Authorization", "Bearer k3y-value")],
        INITIALIZE,
    );
    assert_eq!(status, 401);
    let (status, _, _) = post(server.addr, &[("X-Fake-Key", "k3y-value")], INITIALIZE);
    assert_eq!(status, 200);
    assert!(!server.log().contains("k3y-value"), "{}", server.log());
}

#[test]
fn a_configured_but_missing_token_stops_the_start() {
    let app = FakeApp::new();
    let output = Command::new(server_binary())
        .args(["--port", "0", "--application-path"])
        .arg(app.path())
        .env("FAKE_PROFILE", "auth")
        .env_remove("FAKE_MCP_TOKEN")
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("the environment variable FAKE_MCP_TOKEN is not set"),
        "{stderr}"
    );
}

#[test]
fn live_sessions_are_capped() {
    let server = Server::args(&["--max-sessions", "2"]);
    for _ in 0..2 {
        assert_eq!(post(server.addr, &[], INITIALIZE).0, 200);
    }
    let (status, head, body) = post(server.addr, &[], INITIALIZE);
    assert_eq!(status, 503, "{head}\n{body}");
    assert!(
        head.to_ascii_lowercase().contains("retry-after: 30"),
        "{head}"
    );
    assert!(body.contains("already has 2 live sessions"), "{body}");
    // Requests without a new session are unaffected.
    let modern = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/list",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }}
    })
    .to_string();
    let (status, _, body) = post(
        server.addr,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/list"),
        ],
        &modern,
    );
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"echo\""), "{body}");
}

/// A body nested deeper than serde_json's 128 levels, malformed JSON, and JSON that is not a
/// JSON-RPC message get HTTP 400 with the JSON-RPC parse (-32700) or invalid-request (-32600)
/// error, with sessions and without; the server keeps serving.
#[test]
fn malformed_and_too_deep_bodies_get_json_rpc_errors() {
    for args in [&[][..], &["--stateless"][..]] {
        let server = Server::args(args);
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"a":{}1{}}}}}}}"#,
            "[".repeat(150),
            "]".repeat(150)
        );
        let cases = [
            (
                deep.as_str(),
                -32700,
                "recursion limit exceeded",
                serde_json::Value::Null,
            ),
            (
                r#"{"jsonrpc": "2.0", "id": "#,
                -32700,
                "not valid JSON: EOF",
                serde_json::Value::Null,
            ),
            (
                r#"{"jsonrpc":"2.0","id":7,"hello":1}"#,
                -32600,
                "not a JSON-RPC 2.0 request or notification",
                json!(7),
            ),
            (
                "[]",
                -32600,
                "a batch (JSON arrays are not accepted",
                serde_json::Value::Null,
            ),
        ];
        for (body, code, message, id) in cases {
            let (status, head, answer) = post(server.addr, &[], body);
            assert_eq!(status, 400, "{args:?} {body:.80}: {head}\n{answer}");
            assert!(
                head.to_ascii_lowercase()
                    .contains("content-type: application/json"),
                "{head}"
            );
            let answer: serde_json::Value = serde_json::from_str(&answer).expect("a JSON body");
            assert_eq!(answer["jsonrpc"], "2.0");
            assert_eq!(answer["id"], id, "{answer}");
            assert_eq!(answer["error"]["code"], code, "{answer}");
            let text = answer["error"]["message"].as_str().unwrap_or_default();
            assert!(text.contains(message), "{args:?}: {text}");
        }
        let (status, _, _) = post(server.addr, &[], INITIALIZE);
        assert_eq!(status, 200, "{args:?}: the server stopped serving");
    }
}
