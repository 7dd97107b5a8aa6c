//! Streamable HTTP: rmcp's service mounted at `/` and `/mcp` in axum (and each group's part at
//! `/mcp/<group>`), served by our own accept loop so that every connection gets TCP_NODELAY
//! (without it each keep-alive request stalls ~40 ms), a header read timeout (against
//! slow-loris clients), and a cap on open connections.
//!
//! Both protocol eras share the endpoint: legacy clients get sessions (capped, expiring when
//! idle) unless the server is stateless; 2026-07-28 requests are always served statelessly,
//! and rmcp cancels their handler when the response stream is dropped. Every POST body is
//! checked to be a JSON-RPC message first ([`crate::transport::intake`]), and a `tools/list`
//! answer gets its page's entries written in ([`expand_lists`]).

use std::io;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{StatusCode, header};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::mcp::server::Handler;
use crate::transport::auth::{self, Auth};
use crate::transport::intake;
use crate::transport::limits::{Deadline, MAX_CONNECTIONS, Peers};
use crate::transport::sessions::{self, CappedSessions};

/// How HTTP is served.
#[derive(Debug)]
pub(crate) struct HttpOptions {
    /// No sessions: every request stands alone (for replicas behind a load balancer).
    pub(crate) stateless: bool,
    /// Live legacy sessions at most.
    pub(crate) max_sessions: usize,
    /// A legacy session with no traffic for this long is closed.
    pub(crate) session_idle: Duration,
    /// `Host` allowlist.
    pub(crate) allowed_hosts: Vec<String>,
    /// `Origin` allowlist.
    pub(crate) allowed_origins: Vec<String>,
    /// Required credentials (`expose.agent.mcp.auth`), if any.
    pub(crate) auth: Option<Arc<Auth>>,
    /// The time a client has to send a request's headers, and then its body
    /// (`--request-timeout`).
    pub(crate) request_timeout: Duration,
    /// Open connections of one peer address at most (`--max-connections-per-peer`).
    pub(crate) max_per_peer: usize,
}

/// The HTTP app: axum's router (MCP at `/` and `/mcp`, behind the credentials check when one
/// is configured, and the protected-resource metadata when OAuth is), with the limits the
/// accept loop and each request's body keep.
#[derive(Clone)]
pub(crate) struct App {
    router: Router,
    /// `--request-timeout`.
    request_timeout: Duration,
    /// `--max-connections-per-peer`.
    max_per_peer: usize,
}

/// The app for `handler` (the whole set, on `/` and `/mcp`) and `parts` (each group's handler,
/// on `/mcp/<group>`), served as `options` say. Every endpoint shares the session table and its
/// cap, and a session answers only on the endpoint it was opened on
/// ([`sessions::Endpoint`]); any other `/mcp/<name>` is a 404 naming the groups.
pub(crate) fn app(
    handler: Handler,
    parts: Vec<(String, Handler)>,
    options: &HttpOptions,
    shutdown: &CancellationToken,
) -> App {
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(options.allowed_hosts.clone())
        .with_allowed_origins(options.allowed_origins.clone())
        .enforce_origin_validation()
        .with_max_request_body_bytes(intake::MAX_BODY_BYTES)
        .with_legacy_session_mode(!options.stateless)
        .with_cancellation_token(shutdown.child_token());
    let groups: Vec<String> = parts.iter().map(|(group, _)| group.clone()).collect();
    let names: Arc<str> = groups.join(", ").into();
    let mut endpoints = vec![(None, handler)];
    endpoints.extend(parts.into_iter().map(|(group, part)| (Some(group), part)));
    let unknown = move || {
        let names = names.clone();
        async move { unknown_group(&names) }
    };
    let router = if options.stateless {
        let sessions = Arc::new(NeverSessionManager::default());
        let mut router = Router::new();
        for (group, handler) in endpoints {
            let expand = axum::middleware::from_fn_with_state(handler.clone(), expand_lists);
            router = router.merge(
                mcp_routes(group.as_deref(), handler, sessions.clone(), config.clone())
                    .layer(expand),
            );
        }
        router.layer(axum::middleware::from_fn(intake::stateless))
    } else {
        let mut local = LocalSessionManager::default();
        local.session_config.keep_alive = Some(options.session_idle);
        let capped = Arc::new(CappedSessions::new(local, options.max_sessions));
        sessions::give_back_memory(capped.clone(), shutdown.child_token());
        let mut router = Router::new();
        for (group, handler) in endpoints {
            let expand = axum::middleware::from_fn_with_state(handler.clone(), expand_lists);
            let bound = sessions::Endpoint::new(capped.clone(), group.as_deref());
            router = router.merge(
                mcp_routes(group.as_deref(), handler, capped.clone(), config.clone())
                    .layer(expand)
                    .layer(axum::middleware::from_fn_with_state(bound, sessions::own)),
            );
        }
        router
            .layer(axum::middleware::from_fn(intake::check_body))
            .layer(axum::middleware::from_fn(sessions::limit_status))
    };
    // After the body checks (whatever the body, an unknown group is a 404), inside the
    // credentials check below (the groups are named only to a client that may use them).
    let router = router.route("/mcp/{*rest}", axum::routing::any(unknown));
    let router = match &options.auth {
        Some(auth) => {
            let router = router.layer(axum::middleware::from_fn_with_state(
                auth.clone(),
                auth::require,
            ));
            // The protected-resource metadata is public (RFC 9728).
            match auth.metadata_routes(&groups) {
                Some(metadata) => router.merge(metadata),
                None => router,
            }
        }
        None => router,
    };
    App {
        router,
        request_timeout: options.request_timeout,
        max_per_peer: options.max_per_peer,
    }
}

/// The answer on `/mcp/<name>` for a name that is no group of this server: 404, naming them.
fn unknown_group(names: &str) -> Response {
    let text = if names.is_empty() {
        "Not Found: this server has no groups; its tools are served on /mcp".to_string()
    } else {
        format!("Not Found: no such group; this server's groups (each at /mcp/<group>): {names}")
    };
    (StatusCode::NOT_FOUND, text).into_response()
}

impl<B> hyper::service::Service<http::Request<B>> for App
where
    B: http_body::Body<Data = axum::body::Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = axum::response::Response;
    type Error = std::convert::Infallible;
    type Future = futures::future::BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn call(&self, request: http::Request<B>) -> Self::Future {
        let mut router = self.router.clone();
        let limit = self.request_timeout;
        Box::pin(async move {
            // The body must arrive within the request deadline, counted from its headers.
            let request = request.map(|body| {
                axum::body::Body::new(Deadline::new(axum::body::Body::new(body), limit))
            });
            tower_service::Service::call(&mut router, request).await
        })
    }
}

/// axum middleware: the answer to a `tools/list` (marked by the body check,
/// [`intake::ListsTools`]) with its page's entries written in ([`Handler::expand_list`]). rmcp
/// has judged the request and answered it, as JSON or as an event stream that ends with the
/// answer (a few hundred bytes: the entries are not in it yet); only the answer's message
/// changes.
async fn expand_lists(State(handler): State<Handler>, request: Request, next: Next) -> Response {
    let lists = request.extensions().get::<intake::ListsTools>().is_some();
    let response = next.run(request).await;
    if !lists || response.status() != StatusCode::OK {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let bytes = match axum::body::to_bytes(body, intake::MAX_BODY_BYTES).await {
        Ok(bytes) => bytes,
        Err(error) => {
            tracing::warn!(%error, "reading the tools/list answer failed");
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        }
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    let event_stream = parts
        .headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|kind| kind.as_bytes().starts_with(b"text/event-stream"));
    let out = if event_stream {
        let mut out = String::new();
        for line in text.split_inclusive('\n') {
            match line
                .strip_prefix("data:")
                .and_then(|data| handler.expand_list(data.trim()))
            {
                Some(json) => {
                    out.push_str("data: ");
                    out.push_str(&json);
                    out.push('\n');
                }
                None => out.push_str(line),
            }
        }
        out
    } else {
        match handler.expand_list(text) {
            Some(json) => json,
            None => return Response::from_parts(parts, Body::from(bytes)),
        }
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(out))
}

/// The MCP service of one endpoint: the whole set on `/` and `/mcp` (`group` `None`), or a
/// group's part on `/mcp/<group>`.
fn mcp_routes<M: SessionManager>(
    group: Option<&str>,
    handler: Handler,
    sessions: Arc<M>,
    config: StreamableHttpServerConfig,
) -> Router {
    let service = StreamableHttpService::new(
        // Called per session and per stateless request: a cheap clone of shared state.
        move || Ok(handler.for_session()),
        sessions,
        config,
    );
    match group {
        None => Router::new()
            .route_service("/", service.clone())
            .route_service("/mcp", service),
        Some(group) => Router::new().route_service(&format!("/mcp/{group}"), service),
    }
}

/// Serves `app` on `listener` until `shutdown`, then closes connections gracefully (the
/// caller bounds how long it waits).
pub(crate) async fn serve(
    listener: TcpListener,
    app: App,
    shutdown: CancellationToken,
) -> io::Result<()> {
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(app.request_timeout)
        .keep_alive(true);
    let graceful = GracefulShutdown::new();
    let connections = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let peers = Arc::new(Peers::default());
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Usually out of file descriptors: back off instead of spinning.
                    tracing::warn!(%error, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = shutdown.cancelled() => break,
        };
        let Some(slot) = peers.take(peer.ip(), app.max_per_peer) else {
            // Not a warning per connection: a client trying to fill the server would flood
            // the log.
            tracing::debug!(
                limit = app.max_per_peer,
                "refused a connection: its peer holds too many (--max-connections-per-peer)"
            );
            continue;
        };
        let Ok(permit) = connections.clone().try_acquire_owned() else {
            tracing::warn!(
                limit = MAX_CONNECTIONS,
                "refused a connection: too many are open"
            );
            continue;
        };
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "could not set TCP_NODELAY");
        }
        let connection =
            graceful.watch(builder.serve_connection(TokioIo::new(stream), app.clone()));
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "connection ended with an error");
            }
            drop(permit);
            drop(slot);
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}
