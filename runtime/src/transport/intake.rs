//! What the HTTP layer checks in a POST before rmcp sees it (docs/runtime.md, "Malformed
//! requests" and "Confirmation on a stateless server").
//!
//! 1. The body must be a JSON-RPC message. rmcp answers anything it cannot deserialize with
//!    HTTP 415 and a plain-text serde error; here a body that is not JSON (or nests deeper than
//!    serde_json's 128 levels) gets the JSON-RPC parse error (-32700) and one that is JSON but
//!    not a message gets invalid request (-32600), both with HTTP 400.
//! 2. On a stateless server, a legacy (`initialize`-based) client cannot be sent requests, so it
//!    cannot be asked for approval; whether it *declared* elicitation decides between refusing a
//!    gated call (it expects to be asked) and the reference's ungated run under `auto` (it does
//!    not). The server cannot remember the declaration between requests, so the answer to a
//!    stateless `initialize` carries it back to the client in `Mcp-Session-Id`, which clients
//!    echo on every later request: a [`Declared`] record, readable by every replica. It grants
//!    nothing: a client can always declare no elicitation, so a client that forges the record
//!    gains nothing it could not have by initializing differently. A legacy request without a
//!    readable record is treated as one whose declaration is unknown, and a gated call from it
//!    is refused (fail closed).

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use futures::StreamExt as _;
use http::{HeaderValue, Method, StatusCode, header};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest};
use serde_json::{Value, json};

use crate::logging::label;
use crate::mcp::declared::{Declared, Record};

/// The header rmcp and clients use for legacy sessions.
const SESSION_HEADER: &str = "mcp-session-id";

/// What a [`Declared`] record starts with in `Mcp-Session-Id` (the rest is base64url JSON).
const DECLARED_PREFIX: &str = "fiskgen-stateless-1.";

/// Longest client name kept in a record.
const MAX_NAME_CHARS: usize = 64;

/// JSON-RPC: the body is not JSON.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: JSON, but not a request, notification or response.
const INVALID_REQUEST: i64 = -32600;

/// Left in a request's extensions when its message is a `tools/list` request, for the layer
/// that completes the answer (`crate::transport::http`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ListsTools;

/// Largest request body accepted (413 beyond). A `tools/call` is a few KiB at most.
pub(crate) const MAX_BODY_BYTES: usize = 1024 * 1024;

/// The record's header form (see the module docs).
impl Record {
    fn encode(&self) -> Option<HeaderValue> {
        let json = serde_json::to_vec(self).ok()?;
        HeaderValue::from_str(&format!(
            "{DECLARED_PREFIX}{}",
            URL_SAFE_NO_PAD.encode(json)
        ))
        .ok()
    }

    fn decode(value: &str) -> Option<Self> {
        let encoded = value.strip_prefix(DECLARED_PREFIX)?;
        let json = URL_SAFE_NO_PAD.decode(encoded).ok()?;
        serde_json::from_slice(&json).ok()
    }
}

/// axum middleware for every HTTP mode: a POST body must be a JSON-RPC message.
pub(crate) async fn check_body(request: Request, next: Next) -> Response {
    match read_message(request).await {
        Ok((request, _)) => next.run(request).await,
        Err(response) => response,
    }
}

/// axum middleware for a stateless server: the body check, plus the [`Declared`] record (see
/// the module docs). A DELETE of a record is answered here, 204 as for a live session (there
/// is no session to end; the Python SDK reports any status but 200 and 204 as a failure).
pub(crate) async fn stateless(request: Request, next: Next) -> Response {
    let record = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(Record::decode);
    if request.method() == Method::DELETE && matches!(record, Some(Some(_))) {
        return StatusCode::NO_CONTENT.into_response();
    }
    let (mut request, message) = match read_message(request).await {
        Ok(read) => read,
        Err(response) => return response,
    };
    let declared = match record.flatten() {
        Some(record) => Declared::Known(record),
        None => Declared::Unknown,
    };
    request.extensions_mut().insert(declared);
    let issued = message.as_ref().and_then(initialize_record);
    let mut response = next.run(request).await;
    if let Some(record) = issued
        && response.status().is_success()
        && let Some(value) = record.encode()
    {
        log_connected(&record);
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}

/// The record for a legacy `initialize`, if `message` is one.
fn initialize_record(message: &ClientJsonRpcMessage) -> Option<Record> {
    let ClientJsonRpcMessage::Request(request) = message else {
        return None;
    };
    let ClientRequest::InitializeRequest(init) = &request.request else {
        return None;
    };
    let params = &init.params;
    let elicitation = match &params.capabilities.elicitation {
        Some(e) if e.form.is_some() || e.url.is_none() => "form",
        Some(_) => "url",
        None => "none",
    };
    let name: String = params
        .client_info
        .name
        .chars()
        .take(MAX_NAME_CHARS)
        .collect();
    Some(Record {
        elicitation: elicitation.into(),
        name,
    })
}

/// The connect line of a stateless legacy client (docs/runtime.md, "Confirmation", with the
/// stateless case added).
fn log_connected(record: &Record) {
    let name = if record.name.is_empty() {
        "unknown".to_string()
    } else {
        label(&record.name)
    };
    let summary = if record.declared_elicitation() {
        "elicitation supported, but this stateless server cannot send a legacy client a \
         request: confirm-tagged tools will be refused"
    } else {
        "elicitation unsupported, confirm-tagged tools run ungated under auto and are \
         refused under always"
    };
    tracing::info!(client = %name, "Client \"{name}\" connected: {summary}");
}

/// Reads a POST body (bounded) and checks it is a JSON-RPC message; other requests pass
/// untouched. Returns the request with its body restored, and the message when there is one.
async fn read_message(
    request: Request,
) -> Result<(Request, Option<ClientJsonRpcMessage>), Response> {
    if request.method() != Method::POST || !is_json(&request) {
        // rmcp answers these (405, 406, 415) itself.
        return Ok((request, None));
    }
    let (parts, body) = request.into_parts();
    let mut bytes = Vec::new();
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(unreadable)?;
        if chunk.len() > MAX_BODY_BYTES.saturating_sub(bytes.len()) {
            return Err((
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("Payload Too Large: request body exceeds {MAX_BODY_BYTES} bytes"),
            )
                .into_response());
        }
        bytes.extend_from_slice(&chunk);
    }
    let mut parts = parts;
    let message = match serde_json::from_slice::<ClientJsonRpcMessage>(&bytes) {
        Ok(message) => message,
        Err(error) => return Err(rejection(&bytes, &error)),
    };
    if let ClientJsonRpcMessage::Request(request) = &message
        && let ClientRequest::ListToolsRequest(_) = &request.request
    {
        parts.extensions.insert(ListsTools);
    }
    Ok((Request::from_parts(parts, Body::from(bytes)), Some(message)))
}

/// HTTP 400 for a request body that could not be read (the client went away mid-body).
pub(crate) fn unreadable(error: axum::Error) -> Response {
    (
        StatusCode::BAD_REQUEST,
        format!("Bad Request: reading the request body failed: {error}"),
    )
        .into_response()
}

/// Whether the request says its body is JSON (rmcp refuses the others with 415).
pub(crate) fn is_json(request: &Request) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            let essence = value.split_once(';').map_or(value, |(essence, _)| essence);
            essence.trim().eq_ignore_ascii_case("application/json")
        })
}

/// HTTP 400 with the JSON-RPC error for a body that is not a message.
fn rejection(bytes: &[u8], error: &serde_json::Error) -> Response {
    let (code, message, id) = match serde_json::from_slice::<Value>(bytes) {
        Err(parse) => (
            PARSE_ERROR,
            format!(
                "Parse error: the request body is not valid JSON: {}",
                explain(&parse)
            ),
            Value::Null,
        ),
        Ok(value) => {
            // Echo the id when the object has a usable one.
            let id = value
                .get("id")
                .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
                .cloned()
                .unwrap_or(Value::Null);
            let what = if value.is_array() {
                "a batch (JSON arrays are not accepted; send one message per request)".to_string()
            } else {
                format!("not a JSON-RPC 2.0 request or notification: {error}")
            };
            (
                INVALID_REQUEST,
                format!("Invalid Request: the request body is JSON but {what}"),
                id,
            )
        }
    };
    tracing::info!(code, "refused a request body: {}", label(&message));
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// serde_json's message, with the nesting limit spelled out.
fn explain(error: &serde_json::Error) -> String {
    let text = error.to_string();
    if text.starts_with("recursion limit exceeded") {
        format!("{text} (values may nest at most 128 levels deep)")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_garbage_is_unknown() {
        let record = Record {
            elicitation: "form".into(),
            name: "claude-code".into(),
        };
        let value = record.encode().expect("header value");
        let text = value.to_str().expect("ascii");
        assert!(text.starts_with(DECLARED_PREFIX));
        assert_eq!(Record::decode(text), Some(record));
        assert_eq!(Record::decode("a-uuid-from-somewhere-else"), None);
        assert_eq!(Record::decode("fiskgen-stateless-1.!!!"), None);
    }

    #[tokio::test]
    async fn a_list_is_marked_and_its_body_goes_on_as_it_came() {
        const LIST: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#;
        let request = Request::post("/mcp")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(LIST))
            .expect("request");
        let (request, message) = read_message(request).await.expect("read");
        assert!(message.is_some());
        assert!(request.extensions().get::<ListsTools>().is_some());
        let body = axum::body::to_bytes(request.into_body(), usize::MAX)
            .await
            .expect("body");
        assert_eq!(&body[..], LIST.as_bytes());
    }
}
