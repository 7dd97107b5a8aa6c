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
//! context named by [`CONTEXT_VAR`] with just `BUCKET` here (TLS, credentials files, NKeys).
//! It is made on the first redeemed approval and kept. Anything unexpected (unreachable, refused
//! credentials, no such bucket, a timeout) refuses the approval: the gate fails closed.

use std::time::Duration;

use std::sync::Arc;

use async_nats::jetstream::context::KeyValueErrorKind;
use async_nats::jetstream::kv::CreateErrorKind;

use crate::nats::{Auth, CONTEXT_VAR, ConnectError, Connection, ContextError, Nats};

/// The environment variable naming the shared record.
pub(crate) const STORE_VAR: &str = "FISKGEN_MCP_APPROVAL_STORE";

/// The most one exchange with the NATS server may take.
pub(crate) const CLAIM_TIMEOUT: Duration = Duration::from_secs(5);

/// The default NATS port.
const DEFAULT_PORT: u16 = 4222;

/// The form of the record's URL, quoted by every error about it.
const FORM: &str = "expected nats://[user:password@|token@]host[:port]/BUCKET, or BUCKET alone \
                    with FISKGEN_MCP_NATS_CONTEXT naming the connection";

/// Why [`STORE_VAR`] names no usable record. The texts never repeat the URL, which may hold
/// credentials.
#[derive(Debug, thiserror::Error)]
pub(crate) enum UrlError {
    /// The variable holds bytes that are not UTF-8.
    #[error("{STORE_VAR} is not valid UTF-8")]
    NotUtf8,
    /// Not a `nats://` URL.
    #[error("{STORE_VAR}: the value is not a nats:// URL ({FORM})")]
    NotNats,
    /// No `/BUCKET` after the address.
    #[error("{STORE_VAR}: the URL names no bucket ({FORM})")]
    NoBucket,
    /// A bucket name JetStream would refuse.
    #[error("{STORE_VAR}: bucket {0:?} must be letters, digits, '_' or '-' ({FORM})")]
    BadBucket(String),
    /// A port that is not a number from 1 to 65535.
    #[error("{STORE_VAR}: port {0:?} is not a number from 1 to 65535")]
    BadPort(String),
    /// No host before the port or bucket.
    #[error("{STORE_VAR}: the URL names no host ({FORM})")]
    NoHost,
    /// Both a URL and a context name the server.
    #[error(
        "{STORE_VAR} is a URL but {CONTEXT_VAR} names a nats context too: with a context, set \
         {STORE_VAR} to the bucket name alone"
    )]
    UrlAndContext,
    /// The context cannot be used.
    #[error(transparent)]
    Context(#[from] ContextError),
}

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
    /// The record named by [`STORE_VAR`] (and [`CONTEXT_VAR`]), if set.
    pub(crate) fn from_env() -> Result<Option<Self>, UrlError> {
        let value = match std::env::var(STORE_VAR) {
            Ok(value) if !value.trim().is_empty() => value.trim().to_string(),
            Ok(_) | Err(std::env::VarError::NotPresent) => return Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => return Err(UrlError::NotUtf8),
        };
        let (connection, bucket) = Self::parse(&value, Connection::from_env()?)?;
        Ok(Some(Self {
            nats: Arc::new(Nats::new(connection)),
            bucket,
        }))
    }

    /// `nats://[user:password@|token@]host[:port]/BUCKET`, or `BUCKET` alone with `context`.
    /// Errors never repeat the URL, which may hold credentials.
    pub(crate) fn parse(
        value: &str,
        context: Option<Connection>,
    ) -> Result<(Connection, String), UrlError> {
        let Some(rest) = value.strip_prefix("nats://") else {
            return match context {
                Some(context) => Ok((context, bucket_name(value)?)),
                None => Err(UrlError::NotNats),
            };
        };
        if context.is_some() {
            return Err(UrlError::UrlAndContext);
        }
        let (authority, bucket) = rest.split_once('/').ok_or(UrlError::NoBucket)?;
        let bucket = bucket_name(bucket.trim_end_matches('/'))?;
        let (auth, address) = match authority.rsplit_once('@') {
            None => (Auth::None, authority),
            Some((credentials, address)) => {
                let auth = match credentials.split_once(':') {
                    Some((user, password)) => Auth::User {
                        user: user.to_string(),
                        password: password.to_string(),
                    },
                    None => Auth::Token(credentials.to_string()),
                };
                (auth, address)
            }
        };
        let (host, port) = match address.rsplit_once(':') {
            Some((host, port)) if !host.ends_with(']') || host.starts_with('[') => {
                let port = port
                    .parse::<u16>()
                    .map_err(|_| UrlError::BadPort(port.to_string()))?;
                (host, port)
            }
            _ => (address, DEFAULT_PORT),
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err(UrlError::NoHost);
        }
        let server = if host.contains(':') {
            format!("nats://[{host}]:{port}")
        } else {
            format!("nats://{host}:{port}")
        };
        Ok((Connection::plain(server, auth), bucket))
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

/// A bucket name JetStream accepts.
fn bucket_name(bucket: &str) -> Result<String, UrlError> {
    if bucket.is_empty()
        || !bucket
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(UrlError::BadBucket(bucket.to_string()));
    }
    Ok(bucket.to_string())
}

/// Server-chosen text made safe and short for a message.
fn shown(text: &str) -> String {
    crate::logging::label(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(url: &str) -> Result<(Connection, String), UrlError> {
        SharedRecord::parse(url, None)
    }

    #[test]
    fn store_urls_are_parsed_and_bad_ones_explained() {
        let (connection, bucket) = parse("nats://127.0.0.1:4333/approvals").expect("parses");
        assert_eq!(connection.servers(), "nats://127.0.0.1:4333");
        assert_eq!(bucket, "approvals");
        assert!(connection == Connection::plain("nats://127.0.0.1:4333".into(), Auth::None));
        let (connection, _) =
            parse("nats://me:s3cret@nats.internal/fiskgen-approvals").expect("parses");
        assert!(
            connection
                == Connection::plain(
                    "nats://nats.internal:4222".into(),
                    Auth::User {
                        user: "me".into(),
                        password: "s3cret".into()
                    }
                )
        );
        assert!(!format!("{connection:?}").contains("s3cret"));
        let (connection, _) = parse("nats://tok@[::1]:4222/b").expect("parses");
        assert!(
            connection == Connection::plain("nats://[::1]:4222".into(), Auth::Token("tok".into()))
        );
        let error = parse("nats://me:s3cret@host").expect_err("no bucket");
        assert!(matches!(error, UrlError::NoBucket));
        assert!(!error.to_string().contains("s3cret"), "{error}");
        for (bad, why) in [
            ("redis://localhost/b", "not a nats:// URL"),
            ("nats://localhost", "names no bucket"),
            ("nats://localhost/", "bucket \"\" must be"),
            ("nats://localhost/a.b", "bucket \"a.b\" must be"),
            (
                "nats://localhost:99999/b",
                "port \"99999\" is not a number from 1 to 65535",
            ),
            ("nats:///b", "names no host"),
        ] {
            let error = parse(bad).expect_err(bad).to_string();
            assert!(error.starts_with(STORE_VAR), "{bad}: {error}");
            assert!(error.contains(why), "{bad}: {error}");
        }
    }

    #[test]
    fn with_a_context_the_store_names_the_bucket_alone() {
        let context = || Some(Connection::plain("nats://a:4222".into(), Auth::None));
        let (connection, bucket) =
            SharedRecord::parse("fiskgen-approvals", context()).expect("parses");
        assert_eq!(bucket, "fiskgen-approvals");
        assert_eq!(connection.servers(), "nats://a:4222");
        let error = SharedRecord::parse("nats://b/x", context()).expect_err("both");
        assert!(matches!(error, UrlError::UrlAndContext), "{error}");
        let error = SharedRecord::parse("a.b", context()).expect_err("bad bucket");
        assert!(matches!(error, UrlError::BadBucket(_)), "{error}");
        let error = parse("fiskgen-approvals").expect_err("no context");
        assert!(error.to_string().contains(CONTEXT_VAR), "{error}");
    }
}
