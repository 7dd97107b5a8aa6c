//! What one HTTP client may hold (docs/runtime.md, "Limits"): a deadline for a request's
//! headers and body (`--request-timeout`), and open connections per peer address
//! (`--max-connections-per-peer`) beside the cap on all of them, so that one client cannot
//! fill the server alone while others wait.
//!
//! A per-peer limit rather than a fair share: it is one number an operator can reason about
//! ("no address holds more than N"), it needs no rebalancing (a fair share would have to close
//! a busy peer's connections when a new peer arrives), and a stalled connection costs its peer
//! a slot only until the request deadline closes it. Behind a reverse proxy every connection
//! comes from the proxy's address: raise the per-peer limit to the total there, and let the
//! proxy limit its own clients.

use std::collections::HashMap;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use http_body::{Frame, SizeHint};

/// Open connections at most, from all peers together; further ones are closed at once.
pub(crate) const MAX_CONNECTIONS: usize = 1024;

/// A request body that fails once its deadline passes: a client that sends its headers and
/// then stalls its body gets an error answer and its connection is closed, instead of holding
/// it open for ever. The timer is made only when the body is not all there at once (a plain
/// request's body usually is), so most requests pay one clock read.
pub(crate) struct Deadline {
    inner: Body,
    deadline: tokio::time::Instant,
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
    limit: Duration,
}

impl Deadline {
    /// `inner`, which must be read to its end within `limit` from now.
    pub(crate) fn new(inner: Body, limit: Duration) -> Self {
        Self {
            inner,
            deadline: tokio::time::Instant::now() + limit,
            timer: None,
            limit,
        }
    }
}

/// The body was not read to its end within the request deadline.
#[derive(Debug, thiserror::Error)]
#[error(
    "the request body did not arrive within {} (--request-timeout)",
    crate::duration::format(*.0)
)]
pub(crate) struct TooSlow(Duration);

impl http_body::Body for Deadline {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame);
        }
        let deadline = this.deadline;
        let timer = this
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if timer.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(axum::Error::new(TooSlow(this.limit)))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The open connections of each peer address.
#[derive(Debug, Default)]
pub(crate) struct Peers {
    open: Mutex<HashMap<IpAddr, usize>>,
}

/// One open connection of a peer; dropping it frees the slot.
#[derive(Debug)]
pub(crate) struct PeerSlot {
    peers: Arc<Peers>,
    peer: IpAddr,
}

impl Peers {
    /// A slot for one more connection of `peer`, unless it holds `limit` already.
    pub(crate) fn take(self: &Arc<Self>, peer: IpAddr, limit: usize) -> Option<PeerSlot> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let count = open.entry(peer).or_default();
        if *count >= limit {
            return None;
        }
        *count += 1;
        Some(PeerSlot {
            peers: Arc::clone(self),
            peer,
        })
    }
}

impl Drop for PeerSlot {
    fn drop(&mut self) {
        let mut open = self
            .peers
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = open.get_mut(&self.peer) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open.remove(&self.peer);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_holds_at_most_its_limit_and_a_closed_connection_frees_its_slot() {
        let peers = Arc::new(Peers::default());
        let a: IpAddr = [127, 0, 0, 2].into();
        let b: IpAddr = [127, 0, 0, 1].into();
        let first = peers.take(a, 2).expect("one");
        let _second = peers.take(a, 2).expect("two");
        assert!(peers.take(a, 2).is_none(), "a third of the same peer");
        assert!(peers.take(b, 2).is_some(), "another peer is not affected");
        drop(first);
        assert!(peers.take(a, 2).is_some(), "a freed slot is taken again");
    }

    #[tokio::test]
    async fn a_stalled_body_fails_at_its_deadline() {
        let stalled = futures::stream::pending::<Result<Bytes, std::io::Error>>();
        let body = Body::new(Deadline::new(
            Body::from_stream(stalled),
            Duration::from_millis(200),
        ));
        let read = axum::body::to_bytes(body, 1024);
        let error = read
            .await
            .expect_err("a stalled body cannot be read to its end");
        assert!(
            error
                .to_string()
                .contains("did not arrive within 200ms (--request-timeout)"),
            "{error:?}"
        );
    }
}
