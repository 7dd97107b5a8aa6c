//! Faults, limits and cancellation, each with its precise result and nothing left running
//! (fisk-ai cases 10, 11, 13, 49, 53, 55, 56).

use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest};
use rmcp::service::PeerRequestOptions;
use serde_json::json;

use crate::support::*;

/// Asserts that the command group and its backgrounded grandchild are gone: no process runs
/// the fake app, the group is empty, and the grandchild never writes its marker.
fn assert_nothing_left(server: &Server, group: u32, marker: &std::path::Path) {
    assert!(
        eventually(PATIENCE, || group_members(group).is_empty()
            && server.app.running().is_empty()),
        "processes left behind: group {:?}, app {:?}",
        group_members(group),
        server.app.running()
    );
    // The grandchild would write its marker three seconds after the command started.
    std::thread::sleep(Duration::from_millis(3500));
    assert!(!marker.exists(), "a grandchild outlived the call");
}

fn sleep_params(seconds: f64, marker: &std::path::Path) -> CallToolRequestParams {
    let arguments = json!({"seconds": seconds, "marker": marker.display().to_string()});
    CallToolRequestParams::new("sleep")
        .with_arguments(arguments.as_object().cloned().unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_application_is_a_tool_error() {
    let server = Server::args(&["--application-path", "/nonexistent/binary"]);
    assert!(
        server.log().contains("does not exist or is not executable"),
        "{}",
        server.log()
    );
    let client = legacy(&server.url, TestClient::new(Answer::Unable)).await;
    let result = call(&client, "echo", json!({})).await;
    assert!(is_error(&result));
    assert_eq!(
        text(&result),
        "running command \"echo\": cannot start /nonexistent/binary: No such file or directory \
         (os error 2) (the application was not found; check --application-path)"
    );
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_past_the_timeout_is_killed_with_its_group() {
    let server = Server::args(&["--tool-timeout", "1500ms"]);
    let client = legacy(&server.url, TestClient::new(Answer::Unable)).await;
    let marker = server.app.marker("late");
    let call = {
        let peer = client.peer().clone();
        let params = sleep_params(30.0, &marker);
        tokio::spawn(async move { peer.call_tool(params).await })
    };
    let group = wait_for_command(&server.app);
    let result = tokio::time::timeout(PATIENCE, call)
        .await
        .expect("answered")
        .expect("joined")
        .expect("call");
    assert!(is_error(&result));
    let message = text(&result);
    assert!(
        message.starts_with(&format!(
            "running command \"sleep -- 30 {}\": timed out after 1.5s (the tool timeout",
            marker.display()
        )),
        "{message}"
    );
    assert!(
        message.ends_with("Output before it was stopped:\nstarted\n"),
        "{message}"
    );
    assert_nothing_left(&server, group, &marker);
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gigabyte_of_output_is_truncated_in_bounded_memory() {
    let server = Server::args(&["--tool-timeout", "5m"]);
    let client = legacy(&server.url, TestClient::new(Answer::Unable)).await;
    let result = call(&client, "flood", json!({"bytes": 1_000_000_000u64})).await;
    let result = structured(&result);
    assert_eq!(result["exit_code"], 0);
    assert_eq!(result["truncated"], true);
    let output = result["output"].as_str().expect("output");
    let marker = "\n...[output truncated]...\n";
    assert_eq!(output.len(), 65_536 + marker.len());
    let (head, tail) = output.split_once(marker).expect("marker");
    assert_eq!(head.len(), 32_768);
    assert!(head.starts_with("0123456789abcde\n0123456789abcde\n"));
    // 1e9 is a multiple of 16: the output ends on a whole line.
    assert!(
        tail.ends_with("0123456789abcde\n"),
        "{}",
        &tail[tail.len() - 40..]
    );
    let peak = server.peak_rss_kib();
    assert!(peak > 0 && peak < 200 * 1024, "peak RSS {peak} KiB");
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_is_reported_with_its_signal() {
    let server = Server::start();
    let client = legacy(&server.url, TestClient::new(Answer::Unable)).await;
    let result = call(&client, "crash", json!({})).await;
    assert_eq!(
        structured(&result),
        json!({"command": "crash", "exit_code": -1, "output": "", "truncated": false, "signal": "SIGSEGV"})
    );
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_cancelled_kills_the_command() {
    let server = Server::start();
    let client = legacy(&server.url, TestClient::new(Answer::Unable)).await;
    let marker = server.app.marker("late");
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(sleep_params(30.0, &marker)));
    let handle = client
        .peer()
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await
        .expect("sent");
    let group = wait_for_command(&server.app);
    let started = Instant::now();
    handle
        .cancel(Some("the user pressed stop".into()))
        .await
        .expect("cancelled");
    assert!(
        eventually(PATIENCE, || group_members(group).is_empty()),
        "the command survived cancellation"
    );
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "killed only by the timeout"
    );
    assert!(server.wait_log("Cancelled (the client cancelled the request"));
    assert_nothing_left(&server, group, &marker);
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_2026_response_stream_kills_the_command() {
    let server = Server::start();
    let marker = server.app.marker("late");
    let body = json!({
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {}
            },
            "name": "sleep",
            "arguments": {"seconds": 30, "marker": marker.display().to_string()}
        }
    })
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: sleep\r\nContent-Length: {}\r\n\r\n{body}",
        server.addr.port(),
        body.len()
    );
    let mut stream = std::net::TcpStream::connect(server.addr).expect("connect");
    std::io::Write::write_all(&mut stream, request.as_bytes()).expect("send");
    let group = wait_for_command(&server.app);
    drop(stream);
    assert!(
        eventually(Duration::from_secs(20), || group_members(group).is_empty()),
        "the command survived the closed stream"
    );
    assert!(
        server
            .wait_log("Cancelled (the client cancelled the request or closed its response stream)")
    );
    assert_nothing_left(&server, group, &marker);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_legacy_connection_is_not_cancellation() {
    let server = Server::start();
    let (status, head, _) = post(server.addr, &[], INITIALIZE);
    assert_eq!(status, 200);
    let session = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_string())
        })
        .expect("session id");
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let (status, _, _) = post(
        server.addr,
        &headers,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(status, 202);
    let body = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"seconds":2}}}"#;
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        server.addr.port(),
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    let mut stream = std::net::TcpStream::connect(server.addr).expect("connect");
    std::io::Write::write_all(&mut stream, request.as_bytes()).expect("send");
    let _group = wait_for_command(&server.app);
    drop(stream);
    // The spec: a disconnect is not a cancellation. The command runs to its end.
    assert!(server.wait_log("Ran sleep -- 2"), "{}", server.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_mid_call_kills_the_command_and_exits() {
    let mut server = Server::start();
    let client = legacy(&server.url, TestClient::new(Answer::Unable)).await;
    let marker = server.app.marker("late");
    let _call = {
        let peer = client.peer().clone();
        let params = sleep_params(30.0, &marker);
        tokio::spawn(async move { peer.call_tool(params).await })
    };
    let group = wait_for_command(&server.app);
    server.terminate();
    let status = server
        .wait_exit(Duration::from_secs(30))
        .expect("the server exited");
    assert!(status.success(), "{status}");
    assert!(
        server.wait_log("SIGTERM: shutting down"),
        "{}",
        server.log()
    );
    assert_nothing_left(&server, group, &marker);
    drop(client);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_one_serialises_calls() {
    let server = Server::args(&["--max-concurrent-tools", "1"]);
    let client = legacy(&server.url, TestClient::new(Answer::Unable)).await;
    let started = Instant::now();
    let (a, b) = tokio::join!(
        call(&client, "sleep", json!({"seconds": 1})),
        call(&client, "sleep", json!({"seconds": 1})),
    );
    assert_eq!(structured(&a)["exit_code"], 0);
    assert_eq!(structured(&b)["exit_code"], 0);
    assert!(
        started.elapsed() >= Duration::from_millis(1900),
        "{:?}",
        started.elapsed()
    );
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_call_waits_at_most_the_tool_timeout() {
    let server = Server::args(&["--max-concurrent-tools", "1", "--tool-timeout", "3s"]);
    let client = legacy(&server.url, TestClient::new(Answer::Unable)).await;
    let spawn_call = |seconds: f64| {
        let peer = client.peer().clone();
        let arguments = json!({"seconds": seconds});
        let params = CallToolRequestParams::new("sleep")
            .with_arguments(arguments.as_object().cloned().unwrap_or_default());
        tokio::spawn(async move {
            let sent = Instant::now();
            let result = peer.call_tool(params).await;
            (result, sent.elapsed())
        })
    };
    // A holds the only slot until its timeout (3 s); B queues first and takes the slot then,
    // holding it for 3 s more; C queues a second after B and gives up after 3 s, while B runs.
    let a = spawn_call(30.0);
    wait_for_command(&server.app);
    let b = spawn_call(30.0);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let c = spawn_call(30.0);
    let (c, waited) = tokio::time::timeout(PATIENCE, c)
        .await
        .expect("answered")
        .expect("joined");
    let c = c.expect("call");
    assert!(is_error(&c));
    assert!(
        text(&c).starts_with(
            "the server is busy: all 1 tool slots (max_concurrent_tools) stayed in use for 3s, \
             so \"sleep -- 30\" did not run"
        ),
        "{}",
        text(&c)
    );
    assert!(
        waited >= Duration::from_millis(2500),
        "gave up after {waited:?}"
    );
    for call in [a, b] {
        let (result, _) = tokio::time::timeout(PATIENCE, call)
            .await
            .expect("answered")
            .expect("joined");
        let result = result.expect("call");
        assert!(
            text(&result).contains("timed out after 3s"),
            "{}",
            text(&result)
        );
    }
    let _ = client.cancel().await;
}

/// A hostile 300 KB argument that the kernel refuses (E2BIG): the tool error and every log
/// line quote about 1 KiB of the command line (head and tail around a marker), never all of
/// it, and the error says why it could not start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_argument_is_quoted_capped_in_the_error_and_the_log() {
    let server = Server::start();
    let client = legacy(&server.url, TestClient::new(Answer::Unable)).await;
    let huge = format!("{}END", "x".repeat(300_000));
    let result = call(&client, "echo", json!({"name": huge})).await;
    assert!(is_error(&result));
    let message = text(&result);
    assert!(
        message.len() < 2048,
        "{} bytes: {message:.300}",
        message.len()
    );
    assert!(
        message.starts_with("running command \"echo --name=xxxx"),
        "{message}"
    );
    assert!(message.contains(" bytes not shown]… "), "{message}");
    assert!(message.contains("xxxxEND\": cannot start "), "{message}");
    assert!(message.contains("Argument list too long"), "{message}");
    assert!(
        message.contains("(the command line is 300015 bytes;"),
        "{message}"
    );
    assert!(server.wait_log("Could not start echo --name=xxxx"));
    let log = server.log();
    let longest = log.lines().map(str::len).max().unwrap_or(0);
    assert!(longest < 4096, "a log line of {longest} bytes");
    assert!(
        !log.contains(&"x".repeat(2000)),
        "the argument was logged whole"
    );
    let _ = client.cancel().await;
}
