//! `tools/list` over stdio as precomputed bytes (docs/runtime.md, "Listing tools").
//!
//! rmcp's own line transport reads and parses every message; this wrapper looks at each one
//! before rmcp's service does and answers a `tools/list` itself, with the compiled-in page,
//! once the session is past its handshake (a legacy `notifications/initialized`, or a first
//! 2026-07-28 request rmcp accepted) and the request is in that session's era with a cursor
//! this server issued. Everything else goes to rmcp unchanged.
//!
//! Both rmcp's messages and these answers reach stdout through one writer task
//! ([`crate::transport::stdout`]), a whole message at a time, so lines never interleave.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::ProtocolVersion;
use rmcp::model::{ClientJsonRpcMessage, ClientNotification, ClientRequest, GetMeta as _};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::mpsc;

use crate::mcp::listing::Era;
use crate::mcp::state::ServerState;
use crate::transport::stdout::{Chunk, Frame};

/// rmcp's transport with `tools/list` answered on the way in.
pub(crate) struct FastStdio<T> {
    inner: T,
    queue: mpsc::Sender<Frame>,
    state: Arc<ServerState>,
    /// An answer waiting for room in the queue (kept here so a cancelled `receive` loses
    /// nothing).
    pending: Option<Frame>,
    /// The era the session settled in, once its handshake is done.
    era: Option<Era>,
}

impl<T> FastStdio<T> {
    /// Wraps `inner`; answers go to `queue`.
    pub(crate) fn new(inner: T, queue: mpsc::Sender<Frame>, state: Arc<ServerState>) -> Self {
        Self {
            inner,
            queue,
            state,
            pending: None,
            era: None,
        }
    }

    /// The answer to `message`, when it is a `tools/list` this wrapper may answer.
    fn fast(&self, message: &ClientJsonRpcMessage) -> Option<Frame> {
        let ClientJsonRpcMessage::Request(request) = message else {
            return None;
        };
        let ClientRequest::ListToolsRequest(list) = &request.request else {
            return None;
        };
        let meta = request.request.get_meta();
        let era = match (meta.protocol_version(), self.era?) {
            (None, Era::Legacy) => Era::Legacy,
            (Some(version), Era::Modern)
                if version == ProtocolVersion::V_2026_07_28
                    && meta
                        .missing_required_keys(&ProtocolVersion::V_2026_07_28)
                        .is_empty() =>
            {
                Era::Modern
            }
            _ => return None,
        };
        let answer = self
            .state
            .list_bytes(&request.id, list.params.as_ref(), meta, era)?;
        let mut frame = vec![Chunk::Owned(answer.head)];
        frame.extend(answer.rest.into_iter().map(Chunk::Fixed));
        frame.push(Chunk::Fixed(b"\n"));
        Some(frame)
    }

    /// Notes the handshake as messages pass to rmcp.
    fn track(&mut self, message: &ClientJsonRpcMessage) {
        if self.era.is_some() {
            return;
        }
        match message {
            ClientJsonRpcMessage::Notification(notification)
                if matches!(
                    notification.notification,
                    ClientNotification::InitializedNotification(_)
                ) =>
            {
                self.era = Some(Era::Legacy);
            }
            // The first 2026-07-28 request other than `server/discover` starts the session
            // (rmcp serves it, and every later one, in that era).
            ClientJsonRpcMessage::Request(request)
                if !matches!(
                    request.request,
                    ClientRequest::DiscoverRequest(_) | ClientRequest::InitializeRequest(_)
                ) && request.request.get_meta().protocol_version()
                    == Some(ProtocolVersion::V_2026_07_28)
                    && request
                        .request
                        .get_meta()
                        .missing_required_keys(&ProtocolVersion::V_2026_07_28)
                        .is_empty() =>
            {
                self.era = Some(Era::Modern);
            }
            _ => {}
        }
    }
}

impl<T> Transport<RoleServer> for FastStdio<T>
where
    T: Transport<RoleServer>,
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if self.pending.is_some() {
                let permit = self.queue.reserve().await.ok()?;
                if let Some(frame) = self.pending.take() {
                    permit.send(frame);
                }
            }
            let message = self.inner.receive().await?;
            match self.fast(&message) {
                Some(frame) => self.pending = Some(frame),
                None => {
                    self.track(&message);
                    return Some(message);
                }
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
