//! Legacy HTTP sessions with a cap. rmcp's in-memory session manager keeps every session until
//! it is deleted or idles out, and each costs memory; a client that keeps initializing could
//! exhaust it. This wrapper refuses new sessions beyond a limit (existing ones are unaffected)
//! and delegates everything else.

use std::fmt;

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use futures::Stream;
use http::{HeaderValue, StatusCode, header};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};

/// Part of the refusal text that [`limit_status`] recognises.
const FULL: &str = "live sessions (--max-sessions)";

/// [`LocalSessionManager`] with at most `limit` live sessions.
#[derive(Debug)]
pub(crate) struct CappedSessions {
    inner: LocalSessionManager,
    limit: usize,
}

impl CappedSessions {
    /// Wraps `inner`.
    pub(crate) fn new(inner: LocalSessionManager, limit: usize) -> Self {
        Self { inner, limit }
    }
}

/// Why a session operation failed.
#[derive(Debug)]
pub(crate) enum SessionsError {
    /// The limit is reached.
    Full(usize),
    /// From the inner manager.
    Local(LocalSessionManagerError),
}

impl fmt::Display for SessionsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Full(limit) => write!(
                f,
                "the server already has {limit} {FULL}; close one (DELETE) or wait for idle \
                 sessions to expire"
            ),
            Self::Local(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for SessionsError {}

impl From<LocalSessionManagerError> for SessionsError {
    fn from(error: LocalSessionManagerError) -> Self {
        Self::Local(error)
    }
}

impl SessionManager for CappedSessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let live = self.inner.sessions.read().await.len();
        if live >= self.limit {
            tracing::warn!(
                limit = self.limit,
                "refused a new session: the session limit is reached"
            );
            return Err(SessionsError::Full(self.limit));
        }
        Ok(self.inner.create_session().await?)
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }
}

/// axum middleware: rmcp answers a failed session creation with 500; a full session table is
/// a capacity limit, so it becomes 503 with `Retry-After`. Only 500 answers are looked into.
pub(crate) async fn limit_status(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    if response.status() != StatusCode::INTERNAL_SERVER_ERROR {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, 64 * 1024)
        .await
        .unwrap_or_default();
    if String::from_utf8_lossy(&bytes).contains(FULL) {
        parts.status = StatusCode::SERVICE_UNAVAILABLE;
        parts
            .headers
            .insert(header::RETRY_AFTER, HeaderValue::from_static("30"));
    }
    Response::from_parts(parts, Body::from(bytes))
}
