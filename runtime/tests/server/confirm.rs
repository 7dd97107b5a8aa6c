//! The confirmation matrix in both protocol eras (fisk-ai cases 6, 17-29), and MRTR state
//! integrity: forged, altered and replayed `requestState` never run a command.

use std::collections::BTreeMap;

use rmcp::model::{CallToolRequestParams, CallToolResponse};
use serde_json::{Value, json};

use crate::support::*;

const DECLINED: &str = "Not approved: the user declined to run \"deploy -- prod\". This was their \
                        decision, not an error; do not retry, ask how they want to proceed.";
const DISMISSED: &str = "Approval not completed: the user dismissed the approval prompt for \
                         \"deploy -- prod\" without deciding. The command did not run. The \
                         dismissal is the user's answer, not an error; do not retry, ask how \
                         they want to proceed.";
const CHOSE_NOT: &str = "Not approved: the user reviewed \"deploy -- prod\" and chose not to run \
                         it. This was their decision, not an error; do not retry.";
const CANNOT_ASK: &str = "Not approved: running \"deploy -- prod\" requires approval, but this \
                          client cannot be asked (it does not support elicitation). The command \
                          did not run. This answer is final for this call, not a transient \
                          error; do not retry, tell the user the command needs their approval.";
/// The closing sentence of every refusal that is not the user's own decision.
const FINAL: &str = "The command did not run. This answer is final for this call, not a \
                     transient error; do not retry, tell the user the command needs their \
                     approval.";
const STRANDED: &str = "Not approved: running \"deploy -- prod\" requires approval, and this \
                        client supports elicitation, but this server is stateless and cannot \
                        send a request to a client of a 2025 protocol version, so it cannot ask.";
const PROMPT: &str = "fake wants to run a command that requires your approval.\n\nCommand: \
                      deploy -- prod\nGated by: ai:confirm\n\nApprove to run it now, or refuse \
                      to skip it.";

#[derive(Debug, Clone, Copy)]
enum Era {
    Legacy,
    Modern,
}

async fn connect(server: &Server, era: Era, client: TestClient) -> Client {
    match era {
        Era::Legacy => legacy(&server.url, client).await,
        Era::Modern => modern(&server.url, client).await,
    }
}

/// Calls `deploy prod` with a client answering `answer`; returns the result and how often the
/// client was asked.
async fn deploy(server: &Server, era: Era, answer: Answer) -> (rmcp::model::CallToolResult, usize) {
    let test_client = TestClient::new(answer);
    let client = connect(server, era, test_client.clone()).await;
    let result = call(&client, "deploy", json!({"target": "prod"})).await;
    let _ = client.cancel().await;
    (result, test_client.asked())
}

fn ran(result: &rmcp::model::CallToolResult) -> bool {
    !is_error(result) && structured(result)["output"] == "deployed prod\n"
}

async fn matrix_auto(era: Era) {
    let server = Server::start();

    let client = TestClient::new(Answer::Approve);
    let connected = connect(&server, era, client.clone()).await;
    let result = call(&connected, "deploy", json!({"target": "prod"})).await;
    assert!(ran(&result), "{}", text(&result));
    assert_eq!(client.asked(), 1);
    let prompts = client
        .prompts
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    assert_eq!(prompts, [PROMPT]);
    let _ = connected.cancel().await;

    for (answer, expected) in [
        (Answer::Decline, DECLINED),
        (Answer::Cancel, DISMISSED),
        (Answer::ApproveFalse, CHOSE_NOT),
    ] {
        let (result, asked) = deploy(&server, era, answer).await;
        assert!(is_error(&result), "{answer:?} ran the command");
        assert_eq!(text(&result), expected, "{answer:?}");
        assert_eq!(asked, 1, "{answer:?}");
    }
    let (result, _) = deploy(&server, era, Answer::ApproveString).await;
    assert!(is_error(&result));
    assert!(
        text(&result)
            .starts_with("Not approved: requesting approval to run \"deploy -- prod\" failed: "),
        "{}",
        text(&result)
    );

    // A client that cannot be asked runs ungated under `auto`, with a warning.
    let (result, asked) = deploy(&server, era, Answer::Unable).await;
    assert!(ran(&result), "{}", text(&result));
    assert_eq!(asked, 0);
    assert!(server.wait_log("running \"deploy -- prod\" ungated: gated by ai:confirm"));

    // Tags that are not confirm tags never ask; `confirm_tags` entries do.
    let declining = TestClient::new(Answer::Decline);
    let connected = connect(&server, era, declining.clone()).await;
    let result = call(&connected, "stream_info", json!({})).await;
    assert_eq!(structured(&result)["exit_code"], 0);
    assert_eq!(declining.asked(), 0);
    let result = call(&connected, "put", json!({"target": "prod"})).await;
    assert!(is_error(&result));
    assert!(text(&result).contains("declined"), "{}", text(&result));
    let prompts = declining
        .prompts
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    assert!(prompts[0].contains("Gated by: impact:rw"), "{prompts:?}");
    let _ = connected.cancel().await;

    // Every outcome is logged.
    for outcome in [
        "approved",
        "declined",
        "dismissed",
        "not approved",
        "failed",
    ] {
        assert!(
            server.log().contains(&format!("outcome=\"{outcome}\"")),
            "no {outcome} line in\n{}",
            server.log()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_confirmation_matrix_under_auto() {
    matrix_auto(Era::Legacy).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_confirmation_matrix_under_auto() {
    matrix_auto(Era::Modern).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_legacy_prompt_fails_closed() {
    let server = Server::start();
    let (result, asked) = deploy(&server, Era::Legacy, Answer::Fail).await;
    assert_eq!(asked, 1);
    assert!(is_error(&result));
    assert!(
        text(&result)
            .starts_with("Not approved: requesting approval to run \"deploy -- prod\" failed: "),
        "{}",
        text(&result)
    );
    assert!(text(&result).ends_with(FINAL), "{}", text(&result));
}

async fn always_and_never(era: Era) {
    let server = Server::profile("always");
    let (result, _) = deploy(&server, era, Answer::Unable).await;
    assert!(is_error(&result));
    assert_eq!(text(&result), CANNOT_ASK);
    let (result, asked) = deploy(&server, era, Answer::Approve).await;
    assert!(ran(&result), "{}", text(&result));
    assert_eq!(asked, 1);
    drop(server);

    let server = Server::profile("never");
    let (result, asked) = deploy(&server, era, Answer::Decline).await;
    assert!(ran(&result), "{}", text(&result));
    assert_eq!(asked, 0, "never mode asked");
    let (result, _) = deploy(&server, era, Answer::Unable).await;
    assert!(ran(&result));
    assert!(
        !server.log().contains("ungated: gated by"),
        "never mode warns"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_always_and_never() {
    always_and_never(Era::Legacy).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_always_and_never() {
    always_and_never(Era::Modern).await;
}

/// A legacy client that declared elicitation cannot be asked by a stateless server: refused,
/// never run ungated, in `auto` and `always`. One that declared none keeps `auto`'s meaning
/// (ungated, with the warning). The server tells them apart through the record its
/// `initialize` answer returned in `Mcp-Session-Id`, which any replica can read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_server_refuses_a_legacy_client_that_expects_to_be_asked() {
    let server = Server::args(&["--stateless"]);
    let (result, asked) = deploy(&server, Era::Legacy, Answer::Approve).await;
    assert!(is_error(&result), "ran ungated: {}", text(&result));
    assert!(text(&result).starts_with(STRANDED), "{}", text(&result));
    assert!(text(&result).contains(FINAL), "{}", text(&result));
    assert_eq!(asked, 0);
    assert!(!server.log().contains("Ran deploy"), "{}", server.log());
    // The record carries the client's name into the session-less requests.
    assert!(server.wait_log("Client \"test-client\" connected: elicitation supported, but"));
    assert!(
        server.log().contains("client=\"test-client\""),
        "{}",
        server.log()
    );

    // No elicitation declared: `auto` runs it ungated, with the warning.
    let (result, asked) = deploy(&server, Era::Legacy, Answer::Unable).await;
    assert!(ran(&result), "{}", text(&result));
    assert_eq!(asked, 0);
    assert!(server.wait_log("ungated: gated by ai:confirm"));

    // 2026-07-28 clients are asked as on any server.
    let (result, asked) = deploy(&server, Era::Modern, Answer::Approve).await;
    assert!(ran(&result), "{}", text(&result));
    assert_eq!(asked, 1);
    drop(server);

    let server = Server::args(&["--stateless", "--confirm", "always"]);
    let (result, _) = deploy(&server, Era::Legacy, Answer::Approve).await;
    assert!(text(&result).starts_with(STRANDED), "{}", text(&result));
    let (result, _) = deploy(&server, Era::Legacy, Answer::Unable).await;
    assert_eq!(text(&result), CANNOT_ASK);
}

/// A legacy request to a stateless server without the record of its client's `initialize`
/// (here: none, or one from elsewhere) cannot tell whether the client expects to be asked:
/// refused. The banner names who is asked, refused and run ungated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_server_refuses_a_legacy_request_without_its_record() {
    let server = Server::args(&["--stateless"]);
    let log = server.log();
    for line in [
        "\n  asked: 2026-07-28 clients that declare elicitation",
        "\n  refused: 2025-era clients that declare elicitation or whose initialize is unknown",
        "\n  run ungated, with a warning: clients that declare no elicitation",
    ] {
        assert!(log.contains(line), "no {line:?} in\n{log}");
    }
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"deploy","arguments":{"target":"prod"}}}"#;
    for session in [None, Some("4f1c6a1e-0000-4000-8000-000000000000")] {
        let mut headers = vec![("MCP-Protocol-Version", "2025-06-18")];
        if let Some(session) = session {
            headers.push(("Mcp-Session-Id", session));
        }
        let (status, _, body) = post(server.addr, &headers, call);
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("\"isError\":true"), "{body}");
        assert!(
            body.contains("this stateless server does not know whether this client can be asked"),
            "{body}"
        );
        assert!(body.contains(FINAL), "{body}");
    }
    assert!(!server.log().contains("Ran deploy"), "{}", server.log());

    // The record comes back in the initialize answer; ending it is accepted (nothing to end).
    let (status, head, _) = post(server.addr, &[], INITIALIZE);
    assert_eq!(status, 200);
    let record = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no Mcp-Session-Id in\n{head}"));
    assert!(record.starts_with("fiskgen-stateless-1."), "{record}");
    let delete = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nMcp-Session-Id: {record}\r\n\
         MCP-Protocol-Version: 2025-06-18\r\nConnection: close\r\n\r\n",
        server.addr.port()
    );
    let (status, _, _) = raw_http(server.addr, delete.as_bytes());
    assert_eq!(status, 204);
}

fn approval(approve: bool) -> BTreeMap<String, Value> {
    BTreeMap::from([(
        "confirm".to_string(),
        json!({"action": "accept", "content": {"approve": approve}}),
    )])
}

fn deploy_params(target: &str) -> CallToolRequestParams {
    let arguments = json!({"target": target});
    CallToolRequestParams::new("deploy")
        .with_arguments(arguments.as_object().cloned().unwrap_or_default())
}

async fn once(client: &Client, params: CallToolRequestParams) -> CallToolResponse {
    tokio::time::timeout(PATIENCE, client.call_tool_once(params))
        .await
        .expect("answered")
        .expect("call")
}

/// The message of the JSON-RPC error a call is refused with: an approval state that does not
/// verify is invalid params (-32602, SEP-2322), and nothing runs.
async fn refused(client: &Client, params: CallToolRequestParams) -> String {
    let error = tokio::time::timeout(PATIENCE, client.call_tool_once(params))
        .await
        .expect("answered")
        .expect_err("refused");
    match error {
        rmcp::ServiceError::McpError(error) => {
            assert_eq!(error.code.0, -32602, "{error:?}");
            error.message.into_owned()
        }
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

fn complete(response: CallToolResponse) -> rmcp::model::CallToolResult {
    match response {
        CallToolResponse::Complete(result) => result,
        other => panic!("expected a complete result, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_altered_and_replayed_request_states_never_run() {
    let server = Server::start();
    let client = modern(&server.url, TestClient::new(Answer::Approve)).await;

    let state = match once(&client, deploy_params("prod")).await {
        CallToolResponse::InputRequired(input) => {
            let requests = input.input_requests.expect("input requests");
            assert!(requests.contains_key("confirm"));
            input.request_state.expect("request state")
        }
        other => panic!("expected input_required, got {other:?}"),
    };

    let forged = ["rs1.Zm9yZ2Vk.Zm9yZ2Vk", "", "not-a-state"];
    for forged in forged {
        let mut params = deploy_params("prod").with_input_responses(approval(true));
        params.request_state = Some(forged.to_string());
        let message = refused(&client, params).await;
        assert!(
            message.starts_with(
                "invalid requestState: the approval state was not issued for this call, was \
                 altered, or has expired, so "
            ),
            "forged state {forged:?}: {message}"
        );
    }

    // The state is bound to the arguments: approving `prod` does not approve `staging`.
    let mut params = deploy_params("staging").with_input_responses(approval(true));
    params.request_state = Some(state.clone());
    let message = refused(&client, params).await;
    assert!(
        message.contains("was not issued for this call"),
        "{message}"
    );

    // A tampered state fails its integrity check.
    let mut tampered = state.clone();
    let last = tampered.pop().unwrap_or('A');
    tampered.push(if last == 'A' { 'B' } else { 'A' });
    let mut params = deploy_params("prod").with_input_responses(approval(true));
    params.request_state = Some(tampered);
    let message = refused(&client, params).await;
    assert!(message.contains("was altered"), "{message}");

    // The genuine state runs the command once...
    let mut params = deploy_params("prod").with_input_responses(approval(true));
    params.request_state = Some(state.clone());
    let result = complete(once(&client, params.clone()).await);
    assert!(ran(&result), "{}", text(&result));

    // ...and only once.
    let message = refused(&client, params).await;
    assert!(
        message.starts_with("invalid requestState: the approval was already used once, so "),
        "{message}"
    );
    assert_eq!(server.log().matches("Ran deploy -- prod").count(), 1);
    let _ = client.cancel().await;
}

/// `--confirm` overrides the built-in `confirm_over_mcp` (the `auto` profile here), and the
/// start banner says which mode is in force and where it came from.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_confirm_flag_overrides_the_built_in_mode() {
    let server = Server::args(&["--confirm", "always"]);
    assert!(
        server
            .log()
            .contains("others are refused (confirm_over_mcp=always, set by --confirm)"),
        "{}",
        server.log()
    );
    for era in [Era::Legacy, Era::Modern] {
        let (result, asked) = deploy(&server, era, Answer::Unable).await;
        assert_eq!(text(&result), CANNOT_ASK, "{era:?}");
        assert_eq!(asked, 0);
        let (result, asked) = deploy(&server, era, Answer::Approve).await;
        assert!(ran(&result), "{era:?}: {}", text(&result));
        assert_eq!(asked, 1);
    }
    drop(server);

    let server = Server::args(&["--confirm", "never"]);
    assert!(
        server
            .log()
            .contains("(confirm_over_mcp=never, set by --confirm)")
    );
    for era in [Era::Legacy, Era::Modern] {
        let (result, asked) = deploy(&server, era, Answer::Decline).await;
        assert!(ran(&result), "{era:?}: {}", text(&result));
        assert_eq!(asked, 0, "{era:?}: never mode asked");
    }
    assert!(
        !server.log().contains("ungated: gated by"),
        "never mode warns"
    );
    drop(server);

    // And back to what is built in, which the `always` profile then sets.
    let server = Server::profile("always");
    assert!(
        server
            .log()
            .contains("others are refused (confirm_over_mcp=always)\n")
    );
    let (result, _) = deploy(&server, Era::Modern, Answer::Unable).await;
    assert_eq!(text(&result), CANNOT_ASK);
    drop(server);

    let output = std::process::Command::new(server_binary())
        .args(["--confirm", "sometimes"])
        .output()
        .expect("run fake_server");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("[possible values: auto, always, never]"),
        "{stderr}"
    );
}

/// SEP-2322: a retry with a genuine state but without the answer is asked again, with a new
/// state; the old one is used up, and only the answered retry runs the command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_without_the_answer_is_asked_again() {
    let server = Server::start();
    let client = modern(&server.url, TestClient::new(Answer::Approve)).await;
    let ask = |response: CallToolResponse| match response {
        CallToolResponse::InputRequired(input) => {
            let requests = input.input_requests.expect("input requests");
            assert!(requests.contains_key("confirm"), "{requests:?}");
            input.request_state.expect("request state")
        }
        other => panic!("expected input_required, got {other:?}"),
    };
    let first = ask(once(&client, deploy_params("prod")).await);

    // No inputResponses at all, then an answer under another key: asked again each time.
    let mut params = deploy_params("prod");
    params.request_state = Some(first.clone());
    let second = ask(once(&client, params).await);
    assert_ne!(second, first);
    let wrong_key = BTreeMap::from([(
        "other".to_string(),
        json!({"action": "accept", "content": {"approve": true}}),
    )]);
    let mut params = deploy_params("prod").with_input_responses(wrong_key);
    params.request_state = Some(second.clone());
    let third = ask(once(&client, params).await);
    assert_ne!(third, second);
    assert!(!server.log().contains("Ran deploy"), "{}", server.log());

    // The states that were asked again are used up.
    for used in [first, second] {
        let mut params = deploy_params("prod").with_input_responses(approval(true));
        params.request_state = Some(used);
        let message = refused(&client, params).await;
        assert!(message.contains("already used once"), "{message}");
    }
    let mut params = deploy_params("prod").with_input_responses(approval(true));
    params.request_state = Some(third);
    let result = complete(once(&client, params).await);
    assert!(ran(&result), "{}", text(&result));
    assert!(server.wait_log("Ran deploy -- prod"));
    assert_eq!(server.log().matches("Ran deploy -- prod").count(), 1);
    assert_eq!(
        server
            .log()
            .matches("confirmation asked: input required again")
            .count(),
        2,
        "{}",
        server.log()
    );
    let _ = client.cancel().await;
}
