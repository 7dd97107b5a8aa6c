//! The shared single-use record of redeemed approvals, for replicas behind a load balancer
//! (docs/deploy.md, "One approval, one run").
//!
//! A sealed `requestState` ([`crate::mcp::request_state`]) can be checked by any replica holding the
//! shared key, but the memory of which states were already used is per process: without a
//! shared record, one approval could run a command once per replica. With
//! `FISKGEN_MCP_APPROVAL_STORE=nats://[user:password@|token@]host[:port]/BUCKET`, each redeemed
//! state's nonce is *created* as a key in that NATS JetStream key-value bucket, with the header
//! `Nats-Expected-Last-Subject-Sequence: 0`: JetStream accepts the write only if the key has
//! never been written, atomically across every replica, so exactly one replica wins. The bucket's
//! own `max_age` forgets the keys once the states they record have expired.
//!
//! The connection is the runtime's NATS client ([`crate::nats`]): the URL above, or a `nats` CLI
//! context named by `FISKGEN_MCP_NATS_CONTEXT` with just `BUCKET` here (TLS, credentials files, NKeys).
//! It is made on the first redeemed approval and kept. Anything unexpected (unreachable, refused
//! credentials, no such bucket, a timeout) refuses the approval: the gate fails closed.

use std::time::Duration;

use std::sync::Arc;

use async_nats::jetstream::context::KeyValueErrorKind;
use async_nats::jetstream::kv::CreateErrorKind;

use crate::nats::{ConnectError, Nats, UrlError};

/// The environment variable naming the shared record.
pub(crate) const STORE_VAR: &str = "FISKGEN_MCP_APPROVAL_STORE";

/// The most one exchange with the NATS server may take.
pub(crate) const CLAIM_TIMEOUT: Duration = Duration::from_secs(5);

/// Why a claim could not be decided; the approval is then refused (the gate fails closed).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ClaimError {
    /// No connection to the server.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// No stream behind the bucket.
    #[error(
        "no JetStream bucket answers ({detail}); create it with `nats kv add {bucket} --ttl \
         15m`, which must outlive the 10-minute approvals"
    )]
    NoBucket {
        /// The configured bucket.
        bucket: String,
        /// The library's words.
        detail: String,
    },
    /// JetStream refused or did not acknowledge the write.
    #[error("JetStream refused the write: {0}")]
    Rejected(String),
}

/// A claim that could not be decided, naming the record (never its credentials).
#[derive(Debug, thiserror::Error)]
pub(crate) enum Unchecked {
    /// The exchange failed.
    #[error("{record}: {error}")]
    Failed {
        /// [`SharedRecord::describe`].
        record: String,
        /// What failed.
        error: ClaimError,
    },
    /// No answer within [`CLAIM_TIMEOUT`].
    #[error(
        "{record}: no answer within {}",
        crate::duration::format(CLAIM_TIMEOUT)
    )]
    TimedOut {
        /// [`SharedRecord::describe`].
        record: String,
    },
}

/// A JetStream key-value bucket holding the nonces of used approvals.
#[derive(Clone)]
pub(crate) struct SharedRecord {
    nats: Arc<Nats>,
    bucket: String,
}

impl std::fmt::Debug for SharedRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl SharedRecord {
    /// The record named by [`STORE_VAR`] (and [`CONTEXT_VAR`](crate::nats::CONTEXT_VAR)), if
    /// set.
    pub(crate) fn from_env() -> Result<Option<Self>, UrlError> {
        Ok(
            crate::nats::bucket_from_env(STORE_VAR)?.map(|(connection, bucket)| Self {
                nats: Arc::new(Nats::new(connection)),
                bucket,
            }),
        )
    }

    /// The connection it uses, for whatever else keeps state in the same NATS.
    pub(crate) fn nats(&self) -> &Arc<Nats> {
        &self.nats
    }

    /// For logs and notes: the server and bucket, never the credentials.
    pub(crate) fn describe(&self) -> String {
        format!(
            "NATS JetStream KV bucket {} at {}",
            self.bucket,
            self.nats.connection().describe()
        )
    }

    /// Records `nonce` as used: `Ok(true)` when this call recorded it first, `Ok(false)` when it
    /// was recorded before (by any replica), `Err` when that cannot be known.
    pub(crate) async fn claim(&self, nonce: &str) -> Result<bool, Unchecked> {
        match tokio::time::timeout(CLAIM_TIMEOUT, self.exchange(nonce)).await {
            Ok(result) => result.map_err(|error| Unchecked::Failed {
                record: self.describe(),
                error,
            }),
            Err(_) => Err(Unchecked::TimedOut {
                record: self.describe(),
            }),
        }
    }

    async fn exchange(&self, nonce: &str) -> Result<bool, ClaimError> {
        let client = self.nats.client().await?;
        let store = async_nats::jetstream::new(client)
            .get_key_value(&self.bucket)
            .await
            .map_err(|error| match error.kind() {
                KeyValueErrorKind::GetBucket => ClaimError::NoBucket {
                    bucket: self.bucket.clone(),
                    detail: shown(&error.to_string()),
                },
                _ => ClaimError::Rejected(shown(&error.to_string())),
            })?;
        match store.create(nonce, "used".into()).await {
            Ok(_) => Ok(true),
            Err(error) if error.kind() == CreateErrorKind::AlreadyExists => Ok(false),
            Err(error) => Err(ClaimError::Rejected(shown(&error.to_string()))),
        }
    }
}

/// Server-chosen text made safe and short for a message.
fn shown(text: &str) -> String {
    crate::logging::label(text)
}
