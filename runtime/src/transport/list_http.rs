//! `tools/list` over HTTP as precomputed bytes (docs/runtime.md, "Listing tools").
//!
//! In front of axum's router ([`front`], which reads a small body and finds a plain
//! `tools/list` in it), or else (credentials required, a list that is not plain or has no
//! `Content-Length`) in an axum layer inside the body check ([`answer`];
//! [`crate::transport::intake`] has parsed the message and left a [`ListCall`] in the
//! request's extensions), a `tools/list` POST is answered with the compiled-in page, as
//! `application/json` (gzipped when the client accepts gzip: [`crate::gzip`]), when the
//! request is one rmcp would answer with that page: an allowed `Host`, no `Origin` (browsers'
//! requests take rmcp's full check), an `Accept` that rmcp accepts, and the headers of its era
//! — a live session for a legacy client of a server with sessions; `MCP-Protocol-Version` and
//! `Mcp-Method` matching the request's `_meta` for a 2026-07-28 client. Anything else (an
//! unknown session, a bad cursor, a header that disagrees, ...) goes on to rmcp, which gives
//! its answer or its error as before. A body the front has read carries a
//! [`FrontRead`] mark, so the body check neither scans it again nor judges it twice.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::{HeaderMap, HeaderName, HeaderValue, Method, header};
use rmcp::model::ProtocolVersion;
use rmcp::transport::streamable_http_server::session::{SessionId, SessionManager};

use crate::mcp::listing::Era;
use crate::mcp::state::ServerState;
use crate::transport::intake::{self, FrontRead, ListCall};
use crate::transport::sessions::CappedSessions;

/// What the layer needs.
#[derive(Debug, Clone)]
pub(crate) struct FastList {
    /// The server.
    pub(crate) state: Arc<ServerState>,
    /// rmcp's `Host` allowlist.
    pub(crate) allowed_hosts: AllowedHosts,
    /// The legacy sessions, when the server keeps them (`None`: stateless).
    pub(crate) sessions: Option<Arc<CappedSessions>>,
}

/// Bodies of at most this many bytes are read in front of axum ([`front`]); a `tools/list`
/// is a few hundred, and anything larger goes to the router as it came.
const MAX_FRONT_BODY: u64 = 64 * 1024;

/// In front of axum's router (no credentials required; [`crate::transport::http`]): a POST to
/// the MCP endpoint whose body is a plain `tools/list` ([`intake::plain_list`]) that rmcp
/// would answer with a page is answered here, without the router and its layers. Anything
/// else is given back for the router, its body read (when it was) and restored.
pub(crate) async fn front(fast: &FastList, request: Request) -> Result<Response, Request> {
    let length = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
    let candidate = request.method() == Method::POST
        && matches!(request.uri().path(), "/" | "/mcp")
        && intake::is_json(&request)
        && length.is_some_and(|length| length <= MAX_FRONT_BODY);
    if !candidate {
        return Err(request);
    }
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_FRONT_BODY as usize).await {
        Ok(bytes) => bytes,
        Err(error) => return Ok(intake::unreadable(error)),
    };
    let call = intake::plain_list(&bytes);
    let mut request = Request::from_parts(parts, Body::from(bytes));
    let Some(call) = call else {
        request.extensions_mut().insert(FrontRead::NotPlainList);
        return Err(request);
    };
    let (decision, gzip) = fast.judge(&request, &call);
    match fast.respond(decision, gzip, &call).await {
        Some(response) => Ok(response),
        None => {
            request.extensions_mut().insert(FrontRead::DeclinedList);
            Err(request)
        }
    }
}

/// The layer inside the body check, for the lists [`front`] does not see (credentials are
/// required, or the body was not read there).
pub(crate) async fn answer(
    State(fast): State<Arc<FastList>>,
    mut request: Request,
    next: Next,
) -> Response {
    // Taken, not cloned: nothing after this layer reads it.
    let Some(call) = request.extensions_mut().remove::<ListCall>() else {
        return next.run(request).await;
    };
    let (decision, gzip) = fast.judge(&request, &call);
    match fast.respond(decision, gzip, &call).await {
        Some(response) => response,
        None => next.run(request).await,
    }
}

impl FastList {
    /// What to do with `call` from `request` ([`Self::decide`]), and whether the answer may
    /// be gzipped. Read before any wait: a request (its body) is not `Sync`.
    fn judge(&self, request: &Request, call: &ListCall) -> (Decision, bool) {
        (self.decide(request, call), accepts_gzip(request.headers()))
    }

    /// The precomputed answer to `call` under `decision` ([`Self::judge`]), gzipped with
    /// `gzip`; `None` leaves it to rmcp.
    async fn respond(&self, decision: Decision, gzip: bool, call: &ListCall) -> Option<Response> {
        let era = match decision {
            Decision::Rmcp => None,
            Decision::Answer(era) => Some(era),
            Decision::IfLive(id) => match &self.sessions {
                Some(sessions) => sessions
                    .has_session(&id)
                    .await
                    .ok()
                    .filter(|live| *live)
                    .map(|_| Era::Legacy),
                None => None,
            },
        }?;
        let answer = self
            .state
            .list_bytes(&call.id, call.params.as_ref(), &call.meta, era)?;
        let gzipped = gzip.then(|| answer.gzip()).flatten();
        let mut response = match gzipped {
            Some(chunks) => {
                let mut response = Response::new(body(chunks));
                response
                    .headers_mut()
                    .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
                response
            }
            None => Response::new(body(answer.into_chunks())),
        };
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        Some(response)
    }
}

/// A body of `chunks`, in order.
fn body<const N: usize>(chunks: [Bytes; N]) -> Body {
    Body::new(Chunks { chunks, next: 0 })
}

/// Shared chunks sent in order, their length known: hyper sends `Content-Length` (a stream
/// body would go chunked) and writes them together with the head.
struct Chunks<const N: usize> {
    chunks: [Bytes; N],
    /// The first chunk not sent yet.
    next: usize,
}

impl<const N: usize> http_body::Body for Chunks<N> {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        while let Some(chunk) = this.chunks.get_mut(this.next) {
            this.next += 1;
            if !chunk.is_empty() {
                let chunk = std::mem::take(chunk);
                return std::task::Poll::Ready(Some(Ok(http_body::Frame::data(chunk))));
            }
        }
        std::task::Poll::Ready(None)
    }

    fn is_end_stream(&self) -> bool {
        self.chunks.iter().skip(self.next).all(Bytes::is_empty)
    }

    fn size_hint(&self) -> http_body::SizeHint {
        let left = self
            .chunks
            .iter()
            .skip(self.next)
            .map(Bytes::len)
            .sum::<usize>();
        http_body::SizeHint::with_exact(left as u64)
    }
}

/// What to do with a `tools/list` request.
enum Decision {
    /// Leave it to rmcp.
    Rmcp,
    /// Answer it with this era's page.
    Answer(Era),
    /// Answer it as legacy when this session is live.
    IfLive(SessionId),
}

/// The protocol version header.
const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
/// The SEP-2243 method header.
const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
/// The legacy session header.
const SESSION: HeaderName = HeaderName::from_static("mcp-session-id");

impl FastList {
    /// Whether `request` is one rmcp would answer with a page of `call`'s era.
    fn decide(&self, request: &Request, call: &ListCall) -> Decision {
        let headers = request.headers();
        if request.method() != Method::POST
            || headers.contains_key(header::ORIGIN)
            || !self.host_allowed(request)
            || !accepts_json_and_events(headers)
        {
            return Decision::Rmcp;
        }
        // Any other MCP header (Mcp-Name, Mcp-Param-*) is for rmcp to judge.
        let other_mcp_headers = headers.keys().any(|name| {
            name.as_str().starts_with("mcp-")
                && *name != PROTOCOL_VERSION
                && *name != MCP_METHOD
                && *name != SESSION
        });
        // A header given twice, or not as text, is for rmcp to judge too.
        let (Ok(version), Ok(method), Ok(session)) = (
            at_most_once(headers, &PROTOCOL_VERSION),
            at_most_once(headers, &MCP_METHOD),
            at_most_once(headers, &SESSION),
        ) else {
            return Decision::Rmcp;
        };
        if other_mcp_headers {
            return Decision::Rmcp;
        }
        let modern = ProtocolVersion::V_2026_07_28;
        match call.meta.protocol_version() {
            Some(meta_version) => {
                let complete = call.meta.missing_required_keys(&modern).is_empty();
                let agreed = meta_version == modern
                    && version == Some(modern.as_str())
                    && method == Some("tools/list")
                    && session.is_none();
                if complete && agreed {
                    Decision::Answer(Era::Modern)
                } else {
                    Decision::Rmcp
                }
            }
            None => {
                let legacy_version = match version {
                    None => true,
                    Some(version) => ProtocolVersion::KNOWN_VERSIONS
                        .iter()
                        .any(|known| known.as_str() == version && known.has_initialize()),
                };
                let method_agrees = method.is_none_or(|method| method == "tools/list");
                if !legacy_version || !method_agrees {
                    return Decision::Rmcp;
                }
                match (&self.sessions, session) {
                    // A stateless server answers legacy requests without a session.
                    (None, _) => Decision::Answer(Era::Legacy),
                    (Some(_), Some(id)) => Decision::IfLive(id.to_string().into()),
                    (Some(_), None) => Decision::Rmcp,
                }
            }
        }
    }

    /// rmcp's `Host` rule ([`AllowedHosts`]) for `request`'s `Host` (or its URI's authority).
    fn host_allowed(&self, request: &Request) -> bool {
        let authority = match request.headers().get(header::HOST) {
            Some(value) => value
                .to_str()
                .ok()
                .and_then(|text| http::uri::Authority::try_from(text).ok()),
            None => request.uri().authority().cloned(),
        };
        authority.is_some_and(|authority| self.allowed_hosts.allow(&authority))
    }
}

/// rmcp's `Host` allowlist, parsed once: a request's host (and its port, when the entry names
/// one) must match an entry's; an empty list allows any.
#[derive(Debug, Clone)]
pub(crate) struct AllowedHosts {
    /// The list was empty.
    any: bool,
    /// Each non-blank entry's host (without brackets, lowercase) and port.
    entries: Arc<[(String, Option<u16>)]>,
}

impl AllowedHosts {
    /// The entries as given to rmcp.
    pub(crate) fn new(allowed: &[String]) -> Self {
        let entries = allowed
            .iter()
            .map(|entry| entry.trim())
            .filter(|entry| !entry.is_empty())
            .map(|entry| match http::uri::Authority::try_from(entry) {
                Ok(authority) => (unbracketed(authority.host()), authority.port_u16()),
                Err(_) => (unbracketed(entry), None),
            })
            .collect();
        AllowedHosts {
            any: allowed.is_empty(),
            entries,
        }
    }

    fn allow(&self, authority: &http::uri::Authority) -> bool {
        if self.any {
            return true;
        }
        let host = authority.host().trim_matches('[').trim_matches(']');
        let port = authority.port_u16();
        self.entries.iter().any(|(allowed, allowed_port)| {
            allowed.eq_ignore_ascii_case(host) && allowed_port.is_none_or(|p| Some(p) == port)
        })
    }
}

fn unbracketed(host: &str) -> String {
    host.trim_matches('[')
        .trim_matches(']')
        .to_ascii_lowercase()
}

/// The header's value: none when it is absent, its text when it is given once as text, an
/// error when it is given more than once or not as text.
fn at_most_once<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Result<Option<&'a str>, ()> {
    let mut values = headers.get_all(name).iter();
    let Some(first) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(());
    }
    first.to_str().map(Some).map_err(|_| ())
}

/// Each entry of a comma-separated header (`Accept`, `Accept-Encoding`) given as text, with
/// its weight: the least of its `q` parameters (0 for one that is not a number), 1 without.
fn weighted<'a>(
    headers: &'a HeaderMap,
    name: header::HeaderName,
) -> impl Iterator<Item = (&'a str, f32)> + 'a {
    headers
        .get_all(name)
        .into_iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(|entry| {
            let mut parts = entry.split(';');
            let essence = parts.next().unwrap_or("").trim();
            let weight = parts
                .filter_map(|param| {
                    let param = param.trim();
                    param
                        .strip_prefix("q=")
                        .or_else(|| param.strip_prefix("Q="))
                })
                .map(|q| q.trim().parse::<f32>().unwrap_or(0.0))
                .fold(1.0, f32::min);
            (essence, weight)
        })
}

/// Whether `Accept` names both media types rmcp wants, `application/json` and
/// `text/event-stream`, each without a zero weight (a wildcard does not count).
fn accepts_json_and_events(headers: &HeaderMap) -> bool {
    let (mut json, mut events) = (false, false);
    for (essence, weight) in weighted(headers, header::ACCEPT) {
        if weight > 0.0 {
            json |= essence.eq_ignore_ascii_case("application/json");
            events |= essence.eq_ignore_ascii_case("text/event-stream");
        }
    }
    json && events
}

/// Whether `Accept-Encoding` accepts gzip: `gzip` or `x-gzip` named with a weight above zero,
/// or, when neither is named, `*` with one.
fn accepts_gzip(headers: &HeaderMap) -> bool {
    let mut named = None;
    let mut wildcard = None;
    for (coding, weight) in weighted(headers, header::ACCEPT_ENCODING) {
        if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
            named = Some(named.unwrap_or(false) || weight > 0.0);
        } else if coding == "*" {
            wildcard = Some(weight > 0.0);
        }
    }
    named.or(wildcard).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(accept: &str) -> HeaderMap {
        let mut map = HeaderMap::new();
        map.insert(
            header::ACCEPT,
            HeaderValue::from_str(accept).expect("header"),
        );
        map
    }

    #[test]
    fn a_host_is_allowed_as_rmcp_allows_it() {
        let authority = |text: &str| http::uri::Authority::try_from(text).expect("authority");
        let hosts = AllowedHosts::new(&[
            " LocalHost ".to_string(),
            "[::1]".to_string(),
            "example.test:8080".to_string(),
            String::new(),
        ]);
        for allowed in [
            "localhost",
            "LOCALHOST:9",
            "[::1]:8080",
            "example.test:8080",
        ] {
            assert!(hosts.allow(&authority(allowed)), "{allowed}");
        }
        for refused in [
            "example.test",
            "example.test:8081",
            "127.0.0.1",
            "localhost.evil",
        ] {
            assert!(!hosts.allow(&authority(refused)), "{refused}");
        }
        // An empty list allows any host; a list of blank entries allows none.
        assert!(AllowedHosts::new(&[]).allow(&authority("anywhere:1")));
        assert!(!AllowedHosts::new(&[" ".to_string()]).allow(&authority("anywhere")));
    }

    #[test]
    fn gzip_is_accepted_when_named_or_wildcarded_with_a_weight_above_zero() {
        let encodings = |value: &str| {
            let mut map = HeaderMap::new();
            map.insert(
                header::ACCEPT_ENCODING,
                HeaderValue::from_str(value).expect("header"),
            );
            map
        };
        for yes in [
            "gzip",
            "gzip, deflate, br",
            "br;q=1, GZIP;q=0.5",
            "x-gzip",
            "*",
            "deflate, *",
        ] {
            assert!(accepts_gzip(&encodings(yes)), "{yes}");
        }
        for no in [
            "",
            "identity",
            "br, deflate",
            "gzip;q=0",
            "gzip;q=0, *",
            "*;q=0",
            "gzipped",
        ] {
            assert!(!accepts_gzip(&encodings(no)), "{no}");
        }
        let mut two = encodings("br");
        two.append(header::ACCEPT_ENCODING, HeaderValue::from_static("gzip"));
        assert!(accepts_gzip(&two));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }

    #[test]
    fn accept_needs_both_types_named_with_a_weight_above_zero() {
        for yes in [
            "application/json, text/event-stream",
            "application/json; q=0.5, TEXT/EVENT-STREAM",
            "text/event-stream;q=0.1,application/json",
        ] {
            assert!(accepts_json_and_events(&headers(yes)), "{yes}");
        }
        for no in [
            "application/json;q=0, text/event-stream",
            "application/json, text/event-stream;q=0",
            "*/*",
            "application/json",
            "text/event-stream",
            "",
        ] {
            assert!(!accepts_json_and_events(&headers(no)), "{no}");
        }
        // Both named across two `Accept` headers.
        let mut two = headers("application/json");
        two.append(
            header::ACCEPT,
            HeaderValue::from_static("text/event-stream"),
        );
        assert!(accepts_json_and_events(&two));
    }
}
