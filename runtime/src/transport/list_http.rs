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
use http::{HeaderMap, HeaderValue, Method, header};
use rmcp::model::ProtocolVersion;
use rmcp::transport::streamable_http_server::session::{SessionId, SessionManager};

use crate::mcp::listing::Era;
use crate::mcp::listing::{ListCall, plain_request};
use crate::mcp::state::ServerState;
use crate::transport::intake::{self, FrontRead};
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
/// the MCP endpoint whose body is a plain `tools/list` ([`plain_request`]) that rmcp
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
    let call = plain_request(&bytes);
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
        let heads = Heads::read(request.headers());
        (self.decide(request, &heads, call), heads.accepts_gzip())
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
            .list_bytes(&call.id, call.cursor.as_deref(), &call.meta, era)?;
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

impl FastList {
    /// Whether `request` (its headers read into `heads`) is one rmcp would answer with a page
    /// of `call`'s era.
    fn decide(&self, request: &Request, heads: &Heads<'_>, call: &ListCall) -> Decision {
        if request.method() != Method::POST
            || heads.origin
            || !self.host_allowed(request, heads.host)
            || !(heads.json && heads.events)
            // Any other MCP header (Mcp-Name, Mcp-Param-*) is for rmcp to judge.
            || heads.other_mcp
        {
            return Decision::Rmcp;
        }
        // A header given twice, or not as text, is for rmcp to judge too.
        let (Ok(version), Ok(method), Ok(session)) =
            (heads.version.get(), heads.method.get(), heads.session.get())
        else {
            return Decision::Rmcp;
        };
        let modern = ProtocolVersion::V_2026_07_28;
        match &call.meta.protocol_version {
            Some(_) => {
                let complete = call.meta.complete_modern();
                let agreed = version == Some(modern.as_str())
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
                    (Some(_), Some(id)) => Decision::IfLive(id.into()),
                    (Some(_), None) => Decision::Rmcp,
                }
            }
        }
    }

    /// rmcp's `Host` rule ([`AllowedHosts`]) for `request`'s first `Host` header, `host` (or
    /// its URI's authority).
    fn host_allowed(&self, request: &Request, host: Option<&HeaderValue>) -> bool {
        if self.allowed_hosts.any {
            return true;
        }
        let authority = match host {
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

/// What a request's headers say that [`FastList::judge`] needs, read in one pass over them.
#[derive(Debug, Default)]
struct Heads<'a> {
    /// An `Origin` was given.
    origin: bool,
    /// The first `Host`, as rmcp reads it.
    host: Option<&'a HeaderValue>,
    /// `Accept` names `application/json` with a weight above zero.
    json: bool,
    /// `Accept` names `text/event-stream` with a weight above zero.
    events: bool,
    /// `Accept-Encoding` names `gzip` or `x-gzip`: whether any of them with a weight above zero.
    gzip_named: Option<bool>,
    /// `Accept-Encoding`'s `*`: whether with a weight above zero (the last one given).
    gzip_wildcard: Option<bool>,
    /// `MCP-Protocol-Version`.
    version: Once<'a>,
    /// `Mcp-Method` (SEP-2243).
    method: Once<'a>,
    /// `Mcp-Session-Id`.
    session: Once<'a>,
    /// Another header whose name starts with `mcp-`.
    other_mcp: bool,
}

impl<'a> Heads<'a> {
    fn read(headers: &'a HeaderMap) -> Self {
        let mut heads = Heads::default();
        // Once per value: a header given twice is seen twice.
        for (name, value) in headers {
            if *name == header::HOST {
                heads.host.get_or_insert(value);
            } else if *name == header::ORIGIN {
                heads.origin = true;
            } else if *name == header::ACCEPT {
                for (essence, weight) in weighted(value) {
                    if weight > 0.0 {
                        heads.json |= essence.eq_ignore_ascii_case("application/json");
                        heads.events |= essence.eq_ignore_ascii_case("text/event-stream");
                    }
                }
            } else if *name == header::ACCEPT_ENCODING {
                for (coding, weight) in weighted(value) {
                    if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip")
                    {
                        heads.gzip_named = Some(heads.gzip_named == Some(true) || weight > 0.0);
                    } else if coding == "*" {
                        heads.gzip_wildcard = Some(weight > 0.0);
                    }
                }
            } else if let Some(mcp) = name.as_str().strip_prefix("mcp-") {
                match mcp {
                    "protocol-version" => heads.version.add(value),
                    "method" => heads.method.add(value),
                    "session-id" => heads.session.add(value),
                    _ => heads.other_mcp = true,
                }
            }
        }
        heads
    }

    /// Whether `Accept-Encoding` accepts gzip: `gzip` or `x-gzip` named with a weight above
    /// zero, or, when neither is named, `*` with one.
    fn accepts_gzip(&self) -> bool {
        self.gzip_named.or(self.gzip_wildcard).unwrap_or(false)
    }
}

/// A header that must be given at most once, as text.
#[derive(Debug, Default, Clone, Copy)]
enum Once<'a> {
    #[default]
    Absent,
    Text(&'a str),
    /// Given more than once, or not as text.
    Unfit,
}

impl<'a> Once<'a> {
    fn add(&mut self, value: &'a HeaderValue) {
        *self = match (*self, value.to_str()) {
            (Once::Absent, Ok(text)) => Once::Text(text),
            _ => Once::Unfit,
        };
    }

    /// Its value: none when it is absent, an error when it is unfit.
    fn get(self) -> Result<Option<&'a str>, ()> {
        match self {
            Once::Absent => Ok(None),
            Once::Text(text) => Ok(Some(text)),
            Once::Unfit => Err(()),
        }
    }
}

/// Each entry of a comma-separated header value (`Accept`, `Accept-Encoding`) given as text,
/// with its weight: the least of its `q` parameters (0 for one that is not a number), 1
/// without.
fn weighted(value: &HeaderValue) -> impl Iterator<Item = (&str, f32)> {
    value
        .to_str()
        .ok()
        .into_iter()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn accepts_gzip(headers: &HeaderMap) -> bool {
        Heads::read(headers).accepts_gzip()
    }

    fn accepts_json_and_events(headers: &HeaderMap) -> bool {
        let heads = Heads::read(headers);
        heads.json && heads.events
    }

    #[test]
    fn each_mcp_header_is_taken_once_as_text_and_any_other_is_left_to_rmcp() {
        let mut map = HeaderMap::new();
        map.insert(
            "mcp-protocol-version",
            HeaderValue::from_static("2026-07-28"),
        );
        map.append("mcp-method", HeaderValue::from_static("tools/list"));
        map.append("mcp-method", HeaderValue::from_static("tools/list"));
        map.insert(
            "mcp-session-id",
            HeaderValue::from_bytes(b"\xff").expect("header"),
        );
        map.append(header::HOST, HeaderValue::from_static("first:1"));
        map.append(header::HOST, HeaderValue::from_static("second:2"));
        let heads = Heads::read(&map);
        assert_eq!(heads.version.get(), Ok(Some("2026-07-28")));
        // Twice, or not as text: unfit, so rmcp judges.
        assert_eq!(heads.method.get(), Err(()));
        assert_eq!(heads.session.get(), Err(()));
        assert!(!heads.other_mcp && !heads.origin);
        // rmcp reads the first `Host`.
        assert_eq!(heads.host.map(HeaderValue::as_bytes), Some(&b"first:1"[..]));

        map.insert("mcp-name", HeaderValue::from_static("x"));
        map.insert(header::ORIGIN, HeaderValue::from_static("http://x"));
        let heads = Heads::read(&map);
        assert!(heads.other_mcp && heads.origin);
        assert_eq!(Heads::read(&HeaderMap::new()).version.get(), Ok(None));
    }

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
