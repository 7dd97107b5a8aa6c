//! Result shapes and argument handling (fisk-ai cases 8, 9, 12, 44-48).

use rmcp::ServiceError;
use rmcp::model::{CallToolRequestParams, ErrorCode};
use serde_json::json;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_zero_exit_is_a_normal_result() {
    let server = Server::start();
    let client = legacy(&server.url, TestClient::new(Answer::Unable)).await;
    let result = call(&client, "exit", json!({"code": 4})).await;
    assert_eq!(
        structured(&result),
        json!({"command": "exit --code=4", "exit_code": 4, "output": "oops\n", "truncated": false})
    );
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_never_become_flags() {
    let server = Server::start();
    let client = legacy(&server.url, TestClient::new(Answer::Unable)).await;
    let result = call(
        &client,
        "echo",
        json!({
            "level": "-rf",
            "name": "--evil\nx=1",
            "items": ["-x", "--delete=all", "a=b", "line\nbreak", "it's"],
        }),
    )
    .await;
    let result = structured(&result);
    // Each value is one token: glued to its flag, or after `--`.
    assert_eq!(
        result["output"],
        "[--level=-rf]\n[--name=--evil\nx=1]\n[--]\n[-x]\n[--delete=all]\n[a=b]\n[line\nbreak]\n[it's]\n"
    );
    // The displayed command line is unambiguous and has no raw control characters.
    assert_eq!(
        result["command"],
        r#"echo --level=-rf $'--name=--evil\nx=1' -- -x --delete=all a=b $'line\nbreak' 'it'\''s'"#
    );
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_arguments_are_tool_errors_naming_the_property_and_run_nothing() {
    let server = Server::start();
    let client = legacy(&server.url, TestClient::new(Answer::Unable)).await;
    let result = call(&client, "echo", json!({"nope": 1})).await;
    assert!(is_error(&result));
    assert!(
        text(&result)
            == "invalid arguments for echo: unknown property `nope` (the tool takes: level, name, items)",
        "{}",
        text(&result)
    );
    let result = call(&client, "exit", json!({"code": "three"})).await;
    assert!(is_error(&result));
    assert!(
        text(&result)
            == "invalid arguments for exit: property `code`: expected an integer, got the string \"three\"",
        "{}",
        text(&result)
    );
    let result = call(&client, "exit", json!({})).await;
    assert!(is_error(&result));
    assert!(
        text(&result) == "invalid arguments for exit: property `code` is required",
        "{}",
        text(&result)
    );
    assert!(!server.log().contains("Ran exit"), "{}", server.log());
    assert!(!server.log().contains("Running exit"), "{}", server.log());
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_tool_is_a_protocol_error() {
    let server = Server::start();
    let client = legacy(&server.url, TestClient::new(Answer::Unable)).await;
    let error = client
        .call_tool(CallToolRequestParams::new("nope"))
        .await
        .expect_err("unknown tool");
    match error {
        ServiceError::McpError(error) => {
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
            assert!(error.message.contains("nope"));
        }
        other => panic!("unexpected error {other:?}"),
    }
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn absent_arguments_mean_an_empty_object() {
    let server = Server::start();
    let client = legacy(&server.url, TestClient::new(Answer::Unable)).await;
    let result = client
        .call_tool(CallToolRequestParams::new("echo"))
        .await
        .expect("call");
    assert_eq!(structured(&result)["command"], "echo");
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_interleaves_stdout_and_stderr_in_order() {
    let server = Server::start();
    let client = modern(&server.url, TestClient::new(Answer::Unable)).await;
    let result = call(&client, "stream_info", json!({})).await;
    assert_eq!(
        structured(&result),
        json!({"command": "stream info", "exit_code": 0, "output": "first\nsecond\nthird\n", "truncated": false})
    );
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_get_a_scrubbed_environment_with_llmformat() {
    let server = Server::start_with(Start {
        env: &[("OTHER_SETTING", "kept"), ("LLMFORMAT", "0")],
        ..Start::default()
    });
    let client = legacy(&server.url, TestClient::new(Answer::Unable)).await;
    let output = env_output(&client).await;
    let lines: Vec<&str> = output.lines().collect();
    assert!(lines.contains(&"LLMFORMAT=1"), "{output}");
    assert!(!lines.contains(&"LLMFORMAT=0"), "{output}");
    assert!(lines.contains(&"OTHER_SETTING=kept"), "{output}");
    assert!(
        !output.contains("do-not-leak"),
        "a credential leaked:\n{output}"
    );
    let _ = client.cancel().await;
}

/// fisk-ai case 12: `Running <command line>` when the command starts (at info, as the
/// reference's tests grep for it), one line with the exit code and duration when it ends, and
/// never the output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_and_an_end_line_per_call_without_output() {
    let server = Server::start();
    let client = legacy(&server.url, TestClient::new(Answer::Unable)).await;
    let _ = call(&client, "echo", json!({"items": ["secret-output-marker"]})).await;
    assert!(server.wait_log("Ran echo -- secret-output-marker"));
    let log = server.log();
    let lines: Vec<&str> = log.lines().collect();
    let started = lines
        .iter()
        .position(|line| line.contains("INFO Running echo -- secret-output-marker"))
        .unwrap_or_else(|| panic!("no Running line in\n{log}"));
    let ended = lines
        .iter()
        .position(|line| line.contains("Ran echo"))
        .expect("call line");
    assert!(started < ended, "{log}");
    for field in ["tool=\"echo\"", "client=\"test-client\""] {
        assert!(
            lines[started].contains(field),
            "{field} missing in {}",
            lines[started]
        );
    }
    let line = lines[ended];
    for field in [
        "tool=\"echo\"",
        "client=\"test-client\"",
        "exit_code=0",
        "duration_ms=",
    ] {
        assert!(line.contains(field), "{field} missing in {line}");
    }
    assert!(
        !log.contains("[secret-output-marker]"),
        "output was logged:\n{log}"
    );
    let _ = client.cancel().await;
}
