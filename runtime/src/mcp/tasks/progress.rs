//! `notifications/progress` for a `tools/call` that carries a `progressToken`: about once a
//! second while the command runs, `progress` the seconds elapsed (strictly increasing), the
//! latest output line as `message`. The caller sends them from the request's own handler, so
//! rmcp puts them on the request's own stream in both protocol eras, and stops before the
//! result: nothing is sent after it (docs/runtime.md, "Progress").

use std::time::{Duration, Instant};

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RequestContext};

use crate::process::live::Live;

/// The time between two notifications (at most one per period: the rate limit).
pub(crate) const PERIOD: Duration = Duration::from_secs(1);

/// The progress of one call.
pub(crate) struct Progress {
    token: ProgressToken,
    peer: Peer<RoleServer>,
    started: Instant,
    /// The last `progress` sent.
    last: f64,
}

impl Progress {
    /// For a request that asked for progress (`_meta.progressToken`), else `None`.
    pub(crate) fn of(context: &RequestContext<RoleServer>, started: Instant) -> Option<Self> {
        let token = context.meta.get_progress_token()?;
        Some(Self {
            token,
            peer: context.peer.clone(),
            started,
            last: 0.0,
        })
    }

    /// The next `progress`: the seconds elapsed to a tenth, and always more than the last one.
    fn next(&mut self) -> f64 {
        let elapsed = (self.started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
        let value = if elapsed > self.last {
            elapsed
        } else {
            self.last + 0.1
        };
        self.last = value;
        value
    }

    /// Sends one notification with the latest line of `live`. A client that went away is not
    /// an error here: the call itself notices.
    pub(crate) async fn send(&mut self, live: &Live) {
        let mut param = ProgressNotificationParam::new(self.token.clone(), self.next());
        param.message = live.latest_line();
        if let Err(error) = self.peer.notify_progress(param).await {
            tracing::debug!("progress notification not sent: {error}");
        }
    }
}
