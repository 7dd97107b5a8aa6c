//! Fuzz target bodies that need the runtime's internals: JSON-RPC bodies through the HTTP
//! service in-process, and sealed approval states. Built only with the `fuzzing` feature (the
//! `fiskgen-fuzz` crate enables it); generated servers never see it. How the targets are run
//! and what counts as a finding: docs/reliability.md.
//!
//! Each function must return normally for every input; a panic is a finding (libFuzzer aborts
//! on it, the corpus replay fails on it).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use ::http::{Request, StatusCode};
use axum::body::Body;
use hyper::service::Service as _;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::JsonObject;
use crate::builtins::Builtins;
use crate::mcp::confirm::Confirmer;
use crate::mcp::request_state::{self, Refusal, RequestStates};
use crate::mcp::server::Handler;
use crate::mcp::state::{Limits, ServerState};
use crate::mcp::tools::Catalog;
use crate::spec::app::{AppSpec, ConfirmMode};
use crate::transport::http::{self, App, HttpOptions};

/// The longest one request may take in-process before it counts as a hang.
const REQUEST_BOUND: Duration = Duration::from_secs(10);

/// The key every fuzzed state is sealed with (32 bytes, the minimum).
const FUZZ_KEY: &[u8; 32] = b"fiskgen-fuzz-key-0123456789abcde";

/// The runtime, both routers and a live legacy session, built once per process.
struct Http {
    runtime: tokio::runtime::Runtime,
    sessions: App,
    stateless: App,
    session_id: String,
}

fn state(app: &'static AppSpec, shutdown: &CancellationToken) -> Arc<ServerState> {
    let catalog = Catalog::new(app, &[]).unwrap_or_else(|error| panic!("the fuzz app: {error}"));
    let (builtins, _) =
        Builtins::start(app).unwrap_or_else(|error| panic!("the fuzz app's built-ins: {error}"));
    let states = RequestStates::new(app.identity, Some(FUZZ_KEY.to_vec()))
        .unwrap_or_else(|error| panic!("sealing key: {error}"));
    // No application path: a tools/call that gets past every check ends with the "no
    // application path" error instead of starting processes at fuzzing speed.
    Arc::new(ServerState::new(
        app,
        catalog,
        None,
        Vec::new(),
        Limits {
            shared_tasks: None,
            max_concurrent: 4,
            tool_timeout: Duration::from_secs(5),
            tasks: None,
            telemetry: crate::telemetry::Telemetry::off(),
        },
        Confirmer {
            mode: ConfirmMode::Auto,
            identity: app.identity,
            states,
        },
        builtins,
        shutdown.clone(),
    ))
}

fn options(stateless: bool) -> HttpOptions {
    HttpOptions {
        stateless,
        max_sessions: 64,
        session_idle: Duration::from_secs(600),
        allowed_hosts: vec!["127.0.0.1".into(), "localhost".into()],
        allowed_origins: Vec::new(),
        auth: None,
        request_timeout: Duration::from_secs(10),
        max_per_peer: 256,
    }
}

/// One POST to `app`: status, headers we look at, and the whole body.
async fn post(
    app: &App,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> (StatusCode, Option<String>, Vec<u8>) {
    let mut request = Request::post("/mcp")
        .header("host", "127.0.0.1")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request
        .body(Body::from(body))
        .unwrap_or_else(|error| panic!("building a request: {error}"));
    let service = app.clone();
    let exchange = async {
        let response = match service.call(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        };
        let status = response.status();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|value| value.to_str().ok())
            .map(str::to_string);
        let body = axum::body::to_bytes(response.into_body(), 16 * 1024 * 1024)
            .await
            .unwrap_or_else(|error| panic!("reading a response body: {error}"));
        (status, session, body.to_vec())
    };
    match tokio::time::timeout(REQUEST_BOUND, exchange).await {
        Ok(answer) => answer,
        Err(_) => panic!("a request was not answered within {REQUEST_BOUND:?}"),
    }
}

fn http_harness(app: &'static AppSpec) -> &'static Http {
    static HTTP: OnceLock<Http> = OnceLock::new();
    HTTP.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|error| panic!("a tokio runtime: {error}"));
        let shutdown = CancellationToken::new();
        // The app starts a task (sessions::give_back_memory): inside the runtime.
        let entered = runtime.enter();
        let sessions = http::app(
            Handler::new(state(app, &shutdown)),
            Vec::new(),
            &options(false),
            &shutdown,
        );
        let stateless = http::app(
            Handler::new(state(app, &shutdown)),
            Vec::new(),
            &options(true),
            &shutdown,
        );
        drop(entered);
        let initialize = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "fiskgen-fuzz", "version": "0"}}
        });
        let session_id = runtime.block_on(async {
            let (status, session, body) =
                post(&sessions, &[], initialize.to_string().into_bytes()).await;
            let session = session.unwrap_or_else(|| {
                panic!(
                    "initialize gave no session ({status}): {}",
                    String::from_utf8_lossy(&body)
                )
            });
            let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            let headers = [("mcp-session-id", session.as_str())];
            post(&sessions, &headers, initialized.to_string().into_bytes()).await;
            session
        });
        Http {
            runtime,
            sessions,
            stateless,
            session_id,
        }
    })
}

/// Fuzz target `http_jsonrpc`: the first byte picks the router (sessions or stateless), whether
/// the live session's id is sent, and the `MCP-Protocol-Version` header; the rest is the POST
/// body. Findings: a panic, a request not answered within 10 s, a 5xx status (but the session cap's 503), or
/// a body that is not JSON answered with anything but HTTP 400 and the JSON-RPC parse error.
pub fn http_jsonrpc(app: &'static AppSpec, data: &[u8]) {
    let Some((status, answer)) = http_answer(app, data) else {
        return;
    };
    http_judge(status, &answer, &data[1..]);
}

/// What the HTTP service answers to `data` (as [`http_jsonrpc`] reads it): the status and the
/// whole body, or `None` for an empty input.
pub fn http_answer(app: &'static AppSpec, data: &[u8]) -> Option<(StatusCode, Vec<u8>)> {
    let (&selector, body) = data.split_first()?;
    let harness = http_harness(app);
    let router = if selector & 1 == 0 {
        &harness.sessions
    } else {
        &harness.stateless
    };
    let mut headers: Vec<(&str, &str)> = Vec::new();
    if selector & 2 != 0 {
        headers.push(("mcp-session-id", harness.session_id.as_str()));
    }
    match (selector >> 2) & 3 {
        1 => headers.push(("mcp-protocol-version", "2025-11-25")),
        2 => headers.push(("mcp-protocol-version", "2026-07-28")),
        3 => headers.push(("mcp-protocol-version", "1999-01-01")),
        _ => {}
    }
    let (status, session, answer) = harness.runtime.block_on(async {
        let answered = post(router, &headers, body.to_vec()).await;
        // A session an input opened is closed again, so inputs never fill the session cap
        // (whose 503 is the documented answer once it is full).
        if let Some(opened) = answered.1.as_deref()
            && opened != harness.session_id
            && selector & 1 == 0
        {
            delete_session(router, opened).await;
        }
        answered
    });
    let _ = session;
    Some((status, answer))
}

/// Ends the legacy session `id` (a DELETE, as a client closing it would send).
async fn delete_session(app: &App, id: &str) {
    let Ok(request) = Request::delete("/mcp")
        .header("host", "127.0.0.1")
        .header("mcp-session-id", id)
        .body(Body::empty())
    else {
        return;
    };
    let service = app.clone();
    let _ = tokio::time::timeout(REQUEST_BOUND, service.call(request)).await;
}

fn http_judge(status: StatusCode, answer: &[u8], body: &[u8]) {
    let shown = || {
        String::from_utf8_lossy(answer)
            .chars()
            .take(300)
            .collect::<String>()
    };
    // 503 is the session cap's documented answer (--max-sessions); no other 5xx is right.
    let session_cap =
        status == StatusCode::SERVICE_UNAVAILABLE && shown().contains("live sessions");
    assert!(
        !status.is_server_error() || session_cap,
        "HTTP {status} for a client's body: {}",
        shown()
    );
    if serde_json::from_slice::<serde::de::IgnoredAny>(body).is_err() {
        assert_eq!(
            status,
            StatusCode::BAD_REQUEST,
            "a body that is not JSON: {}",
            shown()
        );
        let error: Value = serde_json::from_slice(answer)
            .unwrap_or_else(|_| panic!("a non-JSON answer to a non-JSON body: {}", shown()));
        assert_eq!(error["error"]["code"], json!(-32700), "{}", shown());
    }
}

/// Approval states sealed once, 1 ms before they expired (each for tool `t` and `{}`).
fn expired_states() -> &'static [String] {
    static EXPIRED: OnceLock<Vec<String>> = OnceLock::new();
    EXPIRED.get_or_init(|| {
        let mut states = fresh_states();
        states.ttl = Duration::from_millis(1);
        let sealed: Vec<String> = (0..8)
            .map(|_| {
                states
                    .seal("t", &JsonObject::new())
                    .unwrap_or_else(|error| panic!("sealing: {error}"))
            })
            .collect();
        std::thread::sleep(Duration::from_millis(20));
        sealed
    })
}

fn fresh_states() -> RequestStates {
    RequestStates::new("fuzz", Some(FUZZ_KEY.to_vec()))
        .unwrap_or_else(|error| panic!("sealing key: {error}"))
}

/// A tool name and arguments drawn from `data`.
fn binding(data: &[u8]) -> (String, JsonObject) {
    let text = String::from_utf8_lossy(data);
    let (tool, rest) = text.split_once('\n').unwrap_or(("t", &text));
    let arguments = match serde_json::from_str::<Value>(rest) {
        Ok(Value::Object(map)) => map,
        _ => {
            let mut map = JsonObject::new();
            map.insert("value".into(), Value::String(rest.to_string()));
            map
        }
    };
    (tool.to_string(), arguments)
}

/// Whether `state` was refused as invalid (forged, altered, rebound, malformed or expired).
fn refused(states: &RequestStates, state: &str, tool: &str, arguments: &JsonObject) -> bool {
    matches!(
        states.redeem_here(state, tool, arguments, ""),
        Err(Refusal::Invalid(_))
    )
}

/// Fuzz target `sealed_state`: the first byte picks what is tried, the rest supplies it.
///
/// - 0: the bytes themselves as a state, for a binding drawn from them: always refused.
/// - 1: a state sealed for a binding drawn from the bytes, then edited (byte `data[1]` at the
///   position `data[2..4]` says, replaced, inserted or cut there): an edited state is always
///   refused, and refusing it leaves the genuine one redeemable exactly once.
/// - 2: a genuine state offered for another binding drawn from the bytes: refused unless the
///   binding is the same (same tool, same canonical arguments).
/// - 3: an expired genuine state, possibly edited: always refused.
pub fn sealed_state(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 4 {
        0 => {
            let states = fresh_states();
            let (tool, arguments) = binding(rest);
            let state = String::from_utf8_lossy(rest);
            assert!(
                refused(&states, &state, &tool, &arguments),
                "a state nobody sealed was accepted: {state:?}"
            );
        }
        1 => {
            let states = fresh_states();
            let (edit, tail) = rest.split_at(rest.len().min(3));
            let (tool, arguments) = binding(tail);
            let genuine = states
                .seal(&tool, &arguments)
                .unwrap_or_else(|error| panic!("sealing: {error}"));
            let edited = edit_state(&genuine, edit);
            if edited != genuine {
                assert!(
                    refused(&states, &edited, &tool, &arguments),
                    "an edited state was accepted: {genuine:?} became {edited:?}"
                );
            }
            assert!(
                states.redeem_here(&genuine, &tool, &arguments, "").is_ok(),
                "the genuine state was refused after an edited copy was"
            );
            assert_eq!(
                states.redeem_here(&genuine, &tool, &arguments, ""),
                Err(Refusal::Replayed),
                "a state was accepted twice"
            );
        }
        2 => {
            let states = fresh_states();
            let (first, second) = rest.split_at(rest.len() / 2);
            let (tool, arguments) = binding(first);
            let (other_tool, other_arguments) = binding(second);
            let genuine = states
                .seal(&tool, &arguments)
                .unwrap_or_else(|error| panic!("sealing: {error}"));
            let same = tool == other_tool
                && request_state::arguments_digest(&arguments)
                    == request_state::arguments_digest(&other_arguments);
            let accepted = states
                .redeem_here(&genuine, &other_tool, &other_arguments, "")
                .is_ok();
            assert_eq!(
                accepted, same,
                "a state for {tool:?} {arguments:?} offered for {other_tool:?} \
                 {other_arguments:?}"
            );
        }
        _ => {
            let states = fresh_states();
            let expired = expired_states();
            let pick = usize::from(rest.first().copied().unwrap_or(0)) % expired.len();
            let state = edit_state(&expired[pick], rest.get(1..).unwrap_or_default());
            assert!(
                refused(&states, &state, "t", &JsonObject::new()),
                "an expired state was accepted: {state:?}"
            );
        }
    }
}

/// `state` with one edit: `edit[0]` is the byte and its low two bits the kind (replace,
/// insert, cut the rest, none), `edit[1..3]` the position (modulo the length).
fn edit_state(state: &str, edit: &[u8]) -> String {
    let mut bytes = state.as_bytes().to_vec();
    let Some(&byte) = edit.first() else {
        return state.to_string();
    };
    let position = match edit.get(1..3) {
        Some([high, low]) => usize::from(u16::from_be_bytes([*high, *low])),
        _ => 0,
    } % (bytes.len() + 1);
    match byte & 3 {
        0 if position < bytes.len() => bytes[position] = byte,
        1 => bytes.insert(position, byte),
        2 => bytes.truncate(position),
        _ => {}
    }
    String::from_utf8_lossy(&bytes).into_owned()
}
