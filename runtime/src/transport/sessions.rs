//! Legacy HTTP sessions with a cap. rmcp's in-memory session manager keeps every session until
//! it is deleted or idles out, and each costs memory; a client that keeps initializing could
//! exhaust it. This wrapper refuses new sessions beyond a limit (existing ones are unaffected)
//! and delegates everything else. With credentials required, each session belongs to the
//! subject that opened it ([`own`]): anyone else is answered as for an unknown session. A
//! session is bound to the endpoint it was opened on (`/mcp` or `/mcp/<group>`, [`Endpoint`]):
//! on any other it is unknown, so a session cannot reach tools its endpoint does not serve. Once
//! many sessions have ended, the memory they held is given back to the system
//! ([`give_back_memory`]): the allocator would otherwise keep it for the process.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use futures::Stream;
use http::{HeaderValue, Method, StatusCode, header};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};

use crate::principal::Subject;

/// How often the live sessions are counted for [`give_back_memory`].
const MEMORY_CHECK: std::time::Duration = std::time::Duration::from_secs(5);

/// How many sessions must have ended since memory was last given back before it is again.
const ENDED_BEFORE_GIVING_BACK: usize = 16;

/// The session header.
const SESSION_ID: &str = "mcp-session-id";

/// Part of the refusal text that [`limit_status`] recognises.
const FULL: &str = "live sessions (--max-sessions)";

/// [`LocalSessionManager`] with at most `limit` live sessions.
#[derive(Debug)]
pub(crate) struct CappedSessions {
    inner: LocalSessionManager,
    limit: usize,
    /// The subject that opened each session, when credentials are required.
    owners: Mutex<HashMap<String, Subject>>,
    /// The endpoint each session was opened on (`None`: the whole set at `/` and `/mcp`).
    bound: Mutex<HashMap<String, Option<Arc<str>>>>,
}

/// One endpoint's view of the shared sessions: what [`own`] checks a request against.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    sessions: Arc<CappedSessions>,
    /// The group this endpoint serves (`None`: the whole set).
    group: Option<Arc<str>>,
}

impl Endpoint {
    /// The endpoint of `group` (`None`: the whole set) over the shared `sessions`.
    pub(crate) fn new(sessions: Arc<CappedSessions>, group: Option<&str>) -> Self {
        Self {
            sessions,
            group: group.map(Arc::from),
        }
    }
}

impl CappedSessions {
    /// Wraps `inner`.
    pub(crate) fn new(inner: LocalSessionManager, limit: usize) -> Self {
        Self {
            inner,
            limit,
            owners: Mutex::new(HashMap::new()),
            bound: Mutex::new(HashMap::new()),
        }
    }

    fn bound(&self) -> std::sync::MutexGuard<'_, HashMap<String, Option<Arc<str>>>> {
        self.bound.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether session `id` may be used on the endpoint of `group`: only on the one it was
    /// opened on.
    fn opened_on(&self, id: &str, group: Option<&Arc<str>>) -> bool {
        match self.bound().get(id) {
            Some(opened) => opened.as_ref() == group,
            None => true,
        }
    }

    fn owners(&self) -> std::sync::MutexGuard<'_, HashMap<String, Subject>> {
        self.owners.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether `subject` may use session `id`: a session opened by a subject is theirs alone.
    fn may_use(&self, id: &str, subject: Option<&Subject>) -> bool {
        match self.owners().get(id) {
            Some(owner) => subject == Some(owner),
            None => true,
        }
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
        // Forget the owners of sessions that expired or were closed: the table stays within
        // the live sessions.
        let ids: std::collections::HashSet<String> = self
            .inner
            .sessions
            .read()
            .await
            .keys()
            .map(ToString::to_string)
            .collect();
        self.owners().retain(|id, _| ids.contains(id));
        self.bound().retain(|id, _| ids.contains(id));
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
        self.owners().remove(id.as_ref());
        self.bound().remove(id.as_ref());
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

/// axum middleware of a server with sessions, per endpoint, inside the credentials check:
/// - a session answers only on the endpoint it was opened on; elsewhere it is unknown (404);
/// - a session opened with credentials belongs to their subject ([`Subject`]); a request in it
///   with anyone else's is answered 404 as for an unknown session (no oracle);
/// - `DELETE` of a live session answers 204 (rmcp says 202, which the Python SDK reports as a
///   failed termination), and of an unknown one 404.
pub(crate) async fn own(
    State(endpoint): State<Endpoint>,
    request: Request,
    next: Next,
) -> Response {
    let sessions = &endpoint.sessions;
    let subject = request.extensions().get::<Subject>().cloned();
    let id = request
        .headers()
        .get(SESSION_ID)
        .and_then(|value| value.to_str().ok())
        .map(str::to_string);
    let Some(id) = id else {
        let response = next.run(request).await;
        // A new session: it is the subject's, on this endpoint.
        if let Some(new) = response
            .headers()
            .get(SESSION_ID)
            .and_then(|value| value.to_str().ok())
        {
            sessions
                .bound()
                .insert(new.to_string(), endpoint.group.clone());
            if let Some(subject) = subject {
                sessions.owners().insert(new.to_string(), subject);
            }
        }
        return response;
    };
    if !sessions.opened_on(&id, endpoint.group.as_ref()) {
        tracing::debug!("refused a request in a session opened on another endpoint");
        return session_not_found();
    }
    if !sessions.may_use(&id, subject.as_ref()) {
        tracing::debug!("refused a request in a session another subject opened");
        return session_not_found();
    }
    if request.method() != Method::DELETE {
        return next.run(request).await;
    }
    let live = sessions
        .inner
        .has_session(&SessionId::from(id.as_str()))
        .await
        .unwrap_or(false);
    if !live {
        return session_not_found();
    }
    let mut response = next.run(request).await;
    if response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
        *response.body_mut() = Body::empty();
    }
    response
}

/// rmcp's answer for a session it does not hold.
fn session_not_found() -> Response {
    let mut response = Response::new(Body::from("Not Found: Session not found"));
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

/// Gives the memory of ended sessions back to the system: every [`MEMORY_CHECK`], once at least
/// [`ENDED_BEFORE_GIVING_BACK`] sessions (or the last one) ended since the last time, the
/// allocator returns its free pages (glibc's `malloc_trim`). Without it, a thousand sessions
/// that expired left the process about 30 MB larger for good (docs/runtime.md, "Limits").
pub(crate) fn give_back_memory(
    sessions: Arc<CappedSessions>,
    shutdown: tokio_util::sync::CancellationToken,
) {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(MEMORY_CHECK);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut peak = 0;
        loop {
            tokio::select! {
                _ = ticks.tick() => {}
                () = shutdown.cancelled() => return,
            }
            let live = sessions.inner.sessions.read().await.len();
            peak = peak.max(live);
            let ended = peak - live;
            if ended >= ENDED_BEFORE_GIVING_BACK || (live == 0 && ended > 0) {
                release_free_memory();
                tracing::debug!(ended, live, "gave the memory of ended sessions back");
                peak = live;
            }
        }
    });
}

/// Returns the allocator's free pages to the system.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn release_free_memory() {
    // SAFETY: malloc_trim takes no pointer and only returns free heap memory to the system; glibc
    // allows it at any time from any thread.
    unsafe {
        nix::libc::malloc_trim(0);
    }
}

/// Other allocators give memory back on their own (or not at all): nothing to do.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn release_free_memory() {}
