//! `tools/list` over stdio as precomputed bytes (docs/runtime.md, "Listing tools").
//!
//! A `tools/list` is answered with the compiled-in page once the session is past its
//! handshake (a legacy `notifications/initialized`, or a first 2026-07-28 request rmcp
//! accepted) and the request is in that session's era with a cursor this server issued.
//! Everything else goes to rmcp unchanged. Two places answer it:
//!
//! - [`ListTap`], on stdin's bytes before rmcp's line transport reads them: a line that is a
//!   plain `tools/list` request is answered and taken out of the stream, so rmcp never parses
//!   it (rmcp's parse of a message costs more than the rest of the answer);
//! - [`FastStdio`], on rmcp's parsed messages before its service sees them: the lists the tap
//!   left alone (a list with members JSON-RPC does not define, a line longer than the tap
//!   judges). It also notes the handshake, for both.
//!
//! Both rmcp's messages and these answers reach stdout through one writer task
//! ([`crate::transport::stdout`]), a whole message at a time, so lines never interleave.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, ready};

use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, GetMeta as _, ProtocolVersion,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::mpsc;
use tokio_util::sync::PollSender;

use crate::mcp::listing::{Answer, Era, ListMeta, plain_request};
use crate::mcp::state::ServerState;
use crate::transport::stdout::{Chunk, Frame};

/// The era the session settled in, once its handshake is done: set by [`FastStdio`], read by
/// both.
pub(crate) type SessionEra = Arc<OnceLock<Era>>;

/// The era a `tools/list` with `meta` is answered in, in a session settled in `session`; `None`
/// when it is rmcp's to answer (a request of the other era, a 2026-07-28 one without its
/// required keys).
fn list_era(session: Era, meta: &ListMeta) -> Option<Era> {
    match (&meta.protocol_version, session) {
        (None, Era::Legacy) => Some(Era::Legacy),
        (Some(_), Era::Modern) if meta.complete_modern() => Some(Era::Modern),
        _ => None,
    }
}

/// An answer as one stdout message.
fn frame(answer: Answer) -> Frame {
    let mut frame = vec![Chunk::Owned(answer.head)];
    frame.extend(answer.rest.into_iter().map(Chunk::Fixed));
    frame.push(Chunk::Fixed(b"\n"));
    frame
}

/// rmcp's transport with `tools/list` answered on the way in.
pub(crate) struct FastStdio<T> {
    inner: T,
    queue: mpsc::Sender<Frame>,
    state: Arc<ServerState>,
    /// An answer waiting for room in the queue (kept here so a cancelled `receive` loses
    /// nothing).
    pending: Option<Frame>,
    /// The era the session settled in, once its handshake is done.
    era: SessionEra,
}

impl<T> FastStdio<T> {
    /// Wraps `inner`; answers go to `queue`; the handshake is noted in `era`.
    pub(crate) fn new(
        inner: T,
        queue: mpsc::Sender<Frame>,
        state: Arc<ServerState>,
        era: SessionEra,
    ) -> Self {
        Self {
            inner,
            queue,
            state,
            pending: None,
            era,
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
        let meta = ListMeta::of(request.request.get_meta());
        let era = list_era(*self.era.get()?, &meta)?;
        let cursor = list
            .params
            .as_ref()
            .and_then(|params| params.cursor.as_deref());
        let answer = self.state.list_bytes(&request.id, cursor, &meta, era)?;
        Some(frame(answer))
    }

    /// Notes the handshake as messages pass to rmcp.
    fn track(&mut self, message: &ClientJsonRpcMessage) {
        if self.era.get().is_some() {
            return;
        }
        match message {
            ClientJsonRpcMessage::Notification(notification)
                if matches!(
                    notification.notification,
                    ClientNotification::InitializedNotification(_)
                ) =>
            {
                let _ = self.era.set(Era::Legacy);
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
                let _ = self.era.set(Era::Modern);
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

/// Longest line the tap judges. A `tools/list` request is a few hundred bytes, its `_meta`
/// included; longer lines go on to rmcp unjudged, as they come.
const JUDGE_MAX: usize = 16 * 1024;

/// Bytes read from stdin at a time.
const READ_CHUNK: usize = 8 * 1024;

/// Stdin as rmcp's line transport reads it, with the plain `tools/list` requests answered and
/// taken out (see the module docs).
///
/// It hands rmcp one line per read and judges the next line only once rmcp has taken the last
/// one: rmcp parses each line before it reads on, so [`FastStdio`] has noted a handshake
/// before the tap judges the line after it. Every byte it does not answer reaches rmcp
/// unchanged and in order; a read of stdin that fails goes to rmcp as it is.
pub(crate) struct ListTap<R> {
    inner: R,
    /// Read, not yet judged or passed on: no newline among them.
    held: Vec<u8>,
    /// Passed on, not yet read by rmcp: `out[at..]`.
    out: Vec<u8>,
    at: usize,
    /// Inside a line longer than [`JUDGE_MAX`]: passed on as it comes, up to its newline.
    passing: bool,
    /// Stdin has ended (or the writer has, and with it the session).
    eof: bool,
    queue: PollSender<Frame>,
    /// An answer waiting for room in the queue.
    pending: Option<Frame>,
    state: Arc<ServerState>,
    era: SessionEra,
}

impl<R> ListTap<R> {
    /// Taps `inner`; answers go to `queue`, once `era` is known.
    pub(crate) fn new(
        inner: R,
        queue: mpsc::Sender<Frame>,
        state: Arc<ServerState>,
        era: SessionEra,
    ) -> Self {
        Self {
            inner,
            held: Vec::new(),
            out: Vec::new(),
            at: 0,
            passing: false,
            eof: false,
            queue: PollSender::new(queue),
            pending: None,
            state,
            era,
        }
    }

    /// The answer to `line` (with its newline), when it is a plain `tools/list` request
    /// ([`plain_request`]) in the session's era.
    fn answer(&self, line: &[u8]) -> Option<Frame> {
        let session = *self.era.get()?;
        let list = plain_request(line)?;
        let era = list_era(session, &list.meta)?;
        let answer = self
            .state
            .list_bytes(&list.id, list.cursor.as_deref(), &list.meta, era)?;
        Some(frame(answer))
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for ListTap<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if let Some(frame) = this.pending.take() {
                match this.queue.poll_reserve(cx) {
                    Poll::Ready(Ok(())) => {
                        // Fails only when the writer has just gone; then so has the session.
                        let _ = this.queue.send_item(frame);
                    }
                    Poll::Ready(Err(_)) => {
                        // The writer is gone (stdout closed): end the session, as rmcp does
                        // when it cannot write.
                        this.eof = true;
                        this.held.clear();
                        return Poll::Ready(Ok(()));
                    }
                    Poll::Pending => {
                        this.pending = Some(frame);
                        return Poll::Pending;
                    }
                }
            }
            if let Some(rest) = this.out.get(this.at..).filter(|rest| !rest.is_empty()) {
                let n = rest.len().min(buf.remaining());
                buf.put_slice(rest.get(..n).unwrap_or_default());
                this.at += n;
                if this.at == this.out.len() {
                    this.out.clear();
                    this.at = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if let Some(end) = this.held.iter().position(|byte| *byte == b'\n') {
                let rest = this.held.split_off(end + 1);
                let line = std::mem::replace(&mut this.held, rest);
                if this.passing {
                    this.passing = false;
                    this.out = line;
                } else {
                    match this.answer(&line) {
                        Some(frame) => {
                            tracing::trace!("tools/list answered from stdin's line");
                            this.pending = Some(frame);
                        }
                        None => this.out = line,
                    }
                }
                continue;
            }
            if !this.held.is_empty() && (this.passing || this.eof || this.held.len() > JUDGE_MAX) {
                // Part of a long line, or a last line without a newline: rmcp's, as it is.
                this.passing = !this.eof;
                this.out = std::mem::take(&mut this.held);
                continue;
            }
            if this.eof {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0u8; READ_CHUNK];
            let mut read = ReadBuf::new(&mut chunk);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            if read.filled().is_empty() {
                this.eof = true;
            } else {
                this.held.extend_from_slice(read.filled());
            }
        }
    }
}
