//! List and call over each transport and protocol era (fisk-ai cases 1-4, 8, 14).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use rmcp::model::ProtocolVersion;
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde_json::{Value, json};

use crate::support::*;

const TOOL_NAMES: [&str; 9] = [
    "echo",
    "exit",
    "sleep",
    "flood",
    "crash",
    "env",
    "stream_info",
    "deploy",
    "put",
];

async fn check_list_and_call(client: &Client) {
    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names, TOOL_NAMES);
    let stream_info = &tools[6];
    // The title is listed once, in the annotations.
    assert_eq!(stream_info.title, None);
    let annotations = stream_info.annotations.as_ref().expect("annotations");
    assert_eq!(annotations.title.as_deref(), Some("stream info"));
    // Untagged commands send no hints at all.
    assert_eq!(annotations.read_only_hint, None);
    assert_eq!(annotations.destructive_hint, None);
    assert_eq!(
        stream_info.description.as_deref(),
        Some("Interleave stdout and stderr\n\nTags: impact:ro")
    );
    let env = &tools[5].annotations.as_ref().expect("annotations");
    assert_eq!(env.read_only_hint, Some(true));
    assert_eq!(env.idempotent_hint, Some(true));
    assert_eq!(env.open_world_hint, None);
    // Lean by default: results carry structuredContent, entries no outputSchema.
    for tool in &tools {
        assert!(tool.output_schema.is_none(), "{}", tool.name);
    }
    let exit = &tools[1];
    assert_eq!(exit.input_schema["required"], json!(["code"]));

    let result = call(client, "echo", json!({"level": "info", "items": ["hello"]})).await;
    assert_eq!(
        structured(&result),
        json!({
            "command": "echo --level=info -- hello",
            "exit_code": 0,
            "output": "[--level=info]\n[--]\n[hello]\n",
            "truncated": false,
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_http_lists_and_calls() {
    let server = Server::start();
    let client = legacy(&server.url, TestClient::new(Answer::Unable)).await;
    let info = client.peer_info().expect("initialize result");
    let server_info = info.server_info.as_ref().expect("serverInfo");
    assert_eq!(server_info.name, "fake");
    assert_eq!(server_info.version, "1.2.3");
    assert_eq!(
        info.instructions.as_deref(),
        Some("A fake application for tests.")
    );
    assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);
    check_list_and_call(&client).await;
    assert!(server.wait_log("Client \"test-client\" connected"));
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_http_lists_and_calls() {
    let server = Server::start();
    let client = modern(&server.url, TestClient::new(Answer::Unable)).await;
    check_list_and_call(&client).await;
    assert!(server.wait_log("Client \"test-client\" connected"));
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_http_serves_legacy_and_modern_clients() {
    let server = Server::args(&["--stateless"]);
    let client = legacy(&server.url, TestClient::new(Answer::Unable)).await;
    check_list_and_call(&client).await;
    let _ = client.cancel().await;
    let client = modern(&server.url, TestClient::new(Answer::Unable)).await;
    check_list_and_call(&client).await;
    let _ = client.cancel().await;
    // No sessions: GET (the standalone stream) and DELETE are not offered.
    let (status, _, _) = raw_http(
        server.addr,
        format!(
            "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: text/event-stream\r\n\
             Connection: close\r\n\r\n",
            server.addr.port()
        )
        .as_bytes(),
    );
    assert_eq!(status, 405);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_root_path_is_an_endpoint_too() {
    let server = Server::start();
    let root = server.url.trim_end_matches("mcp").to_string();
    let client = legacy(&root, TestClient::new(Answer::Unable)).await;
    check_list_and_call(&client).await;
    let _ = client.cancel().await;
}

fn stdio_command(app: &FakeApp, log: &std::path::Path) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(server_binary());
    command
        .arg("--stdio")
        .arg("--application-path")
        .arg(app.path())
        .env_remove("RUST_LOG")
        .stderr(std::fs::File::create(log).expect("log file"));
    command
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_lists_and_calls_in_both_eras() {
    let app = FakeApp::new();
    let log = app.marker("stderr.log");
    let transport = TokioChildProcess::new(stdio_command(&app, &log)).expect("spawn");
    let client = TestClient::new(Answer::Unable)
        .serve(transport)
        .await
        .expect("stdio client connects");
    check_list_and_call(&client).await;
    let _ = client.cancel().await;

    let transport = TokioChildProcess::new(stdio_command(&app, &log)).expect("spawn");
    let client = TestClient::new(Answer::Approve)
        .serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("2026-07-28 stdio client connects");
    check_list_and_call(&client).await;
    // MRTR works over stdio too.
    let result = call(&client, "deploy", json!({"target": "prod"})).await;
    assert_eq!(structured(&result)["output"], "deployed prod\n");
    let _ = client.cancel().await;
}

#[test]
fn stdio_stdout_carries_only_protocol_and_the_server_exits_when_stdin_closes() {
    let app = FakeApp::new();
    let mut child = Command::new(server_binary())
        .arg("--stdio")
        .arg("--application-path")
        .arg(app.path())
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let requests = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"stream_info","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"flood","arguments":{"bytes":100000}}}"#,
    ];
    for request in requests {
        writeln!(stdin, "{request}").expect("write");
    }
    stdin.flush().expect("flush");
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut answered = Vec::new();
    for line in stdout.lines() {
        let line = line.expect("read");
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|error| panic!("stdout carried a non-JSON line ({error}): {line:?}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        if let Some(id) = message["id"].as_i64() {
            answered.push(id);
            if id == 3 {
                let text = message["result"]["content"][0]["text"]
                    .as_str()
                    .expect("text");
                let result: Value = serde_json::from_str(text).expect("json");
                assert_eq!(result["output"], "first\nsecond\nthird\n");
            }
        }
        if answered.len() == 4 {
            break;
        }
    }
    answered.sort();
    assert_eq!(answered, [1, 2, 3, 4]);
    drop(stdin);
    let deadline = std::time::Instant::now() + PATIENCE;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server did not exit after stdin closed"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_an_open_stream_shuts_down_promptly() {
    let mut server = Server::start();
    let client = legacy(&server.url, TestClient::new(Answer::Unable)).await;
    // A call proves the session (and the client's standalone SSE stream) is up.
    let _ = call(&client, "echo", json!({})).await;
    let started = std::time::Instant::now();
    server.terminate();
    let status = server
        .wait_exit(Duration::from_secs(20))
        .expect("the server exited");
    assert!(status.success(), "{status}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "shutdown took {:?}",
        started.elapsed()
    );
    // The process has exited; the last line may still be on its way through the pipe.
    assert!(server.wait_log("MCP server stopped"), "{}", server.log());
    drop(client);
}

/// The JSON-RPC error of a request that must fail.
fn rpc_error<T: std::fmt::Debug>(result: Result<T, rmcp::ServiceError>) -> rmcp::ErrorData {
    match result {
        Err(rmcp::ServiceError::McpError(error)) => error,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

/// Prompts and resources are declared and empty (so generic clients list nothing instead of
/// failing); reading a resource is "not found" with the URI in `data` (-32002 for legacy
/// clients, -32602 for 2026-07-28, SEP-2164); an unknown prompt is -32602. `logging` is
/// declared for legacy clients, whose `logging/setLevel` is accepted; 2026-07-28 removed it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(
    deprecated,
    reason = "logging/setLevel is deprecated (SEP-2577); legacy clients still send it"
)]
async fn empty_prompts_and_resources_and_legacy_logging() {
    use rmcp::model::{
        ErrorCode, GetPromptRequestParams, LoggingLevel, ReadResourceRequestParams,
        SetLevelRequestParams,
    };
    let server = Server::start();
    let missing = "test://nonexistent";

    let client = legacy(&server.url, TestClient::new(Answer::Unable)).await;
    let info = client.peer_info().expect("initialize result");
    assert!(info.capabilities.prompts.is_some());
    assert!(info.capabilities.resources.is_some());
    assert!(info.capabilities.logging.is_some());
    let prompts = client.list_prompts(None).await.expect("prompts/list");
    assert!(prompts.prompts.is_empty());
    let resources = client.list_resources(None).await.expect("resources/list");
    assert!(resources.resources.is_empty());
    let templates = client
        .list_resource_templates(None)
        .await
        .expect("resources/templates/list");
    assert!(templates.resource_templates.is_empty());
    let error = rpc_error(
        client
            .read_resource(ReadResourceRequestParams::new(missing))
            .await,
    );
    assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND);
    assert_eq!(error.data, Some(json!({"uri": missing})));
    let error = rpc_error(client.get_prompt(GetPromptRequestParams::new("nope")).await);
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Info))
        .await
        .expect("logging/setLevel");
    let _ = client.cancel().await;

    let client = modern(&server.url, TestClient::new(Answer::Unable)).await;
    let info = client.peer_info().expect("discover result");
    assert!(info.capabilities.prompts.is_some());
    assert!(info.capabilities.resources.is_some());
    assert!(info.capabilities.logging.is_none());
    let prompts = client.list_prompts(None).await.expect("prompts/list");
    assert!(prompts.prompts.is_empty());
    assert!(prompts.ttl_ms.is_some() && prompts.cache_scope.is_some());
    let resources = client.list_resources(None).await.expect("resources/list");
    assert!(resources.ttl_ms.is_some() && resources.cache_scope.is_some());
    let templates = client
        .list_resource_templates(None)
        .await
        .expect("resources/templates/list");
    assert!(templates.ttl_ms.is_some() && templates.cache_scope.is_some());
    let error = rpc_error(
        client
            .read_resource(ReadResourceRequestParams::new(missing))
            .await,
    );
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(error.data, Some(json!({"uri": missing})));
    let error = rpc_error(
        client
            .set_level(SetLevelRequestParams::new(LoggingLevel::Info))
            .await,
    );
    assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND);
    let _ = client.cancel().await;
}
