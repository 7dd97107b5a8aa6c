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
//! The client is the few lines of the NATS text protocol one create needs (INFO, CONNECT, SUB,
//! HPUB, one reply), over a fresh connection per redeemed approval (approvals are human-paced):
//! no dependency is added to every generated server for it. Anything unexpected (unreachable,
//! refused credentials, no such bucket, a timeout) refuses the approval: the gate fails closed.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// The environment variable naming the shared record.
pub(crate) const STORE_VAR: &str = "FISKGEN_MCP_APPROVAL_STORE";

/// The most one exchange with the NATS server may take.
pub(crate) const CLAIM_TIMEOUT: Duration = Duration::from_secs(5);

/// The default NATS port.
const DEFAULT_PORT: u16 = 4222;

/// Longest protocol line or reply read from the server.
const MAX_LINE: u64 = 64 * 1024;

/// JetStream's error code for "wrong last sequence": the key was already written.
const WRONG_LAST_SEQUENCE: i64 = 10071;

/// The form of the record's URL, quoted by every error about it.
const FORM: &str = "expected nats://[user:password@|token@]host[:port]/BUCKET";

/// Why [`STORE_VAR`] names no usable record. The texts never repeat the URL, which may hold
/// credentials.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
}

/// Why a claim could not be decided; the approval is then refused (the gate fails closed).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ClaimError {
    /// No TCP connection to the server.
    #[error("cannot connect: {0}")]
    Connect(std::io::Error),
    /// Writing to the server failed.
    #[error("sending failed: {0}")]
    Send(std::io::Error),
    /// Reading from the server failed.
    #[error("reading failed: {0}")]
    Read(std::io::Error),
    /// The server closed the connection before answering.
    #[error("the server closed the connection")]
    Closed,
    /// A line longer than the protocol allows, or cut off.
    #[error("a protocol line that does not end")]
    Unterminated,
    /// The peer's first line was not a NATS `INFO`.
    #[error("not a NATS server (it said {0:?})")]
    NotNats(String),
    /// The server needs TLS, which this client does not speak.
    #[error(
        "the server requires TLS, which the approval store does not speak; use a listener \
         without TLS on a private network"
    )]
    TlsRequired,
    /// The server is too old for message headers.
    #[error("the server does not support message headers (nats-server 2.2 or newer is needed)")]
    NoHeaders,
    /// `-ERR` from the server (credentials, permissions, ...).
    #[error("the server refused: {0}")]
    Refused(String),
    /// A reply line this client cannot read.
    #[error("a malformed reply line {0:?}")]
    MalformedReply(String),
    /// A reply larger than any create answer.
    #[error("a reply of {0} bytes")]
    OversizeReply(usize),
    /// A protocol line this client does not expect.
    #[error("an unexpected line {0:?}")]
    UnexpectedLine(String),
    /// No stream behind the bucket.
    #[error(
        "no JetStream stream answers for the bucket (create it with `nats kv add {bucket} \
         --ttl 15m`, which must outlive the 10-minute approvals)"
    )]
    NoBucket {
        /// The configured bucket.
        bucket: String,
    },
    /// JetStream's answer is not JSON.
    #[error("an answer that is not JSON: {0:?}")]
    NotJson(String),
    /// JetStream refused the write for another reason than "already written".
    #[error("JetStream refused the write: {0}")]
    Rejected(String),
    /// A JSON answer without the fields of a create's answer.
    #[error("an unexpected answer {0:?}")]
    UnexpectedAnswer(String),
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

/// Credentials for the NATS server.
#[derive(Clone, PartialEq, Eq)]
enum Auth {
    None,
    Token(String),
    User { user: String, password: String },
}

/// A JetStream key-value bucket holding the nonces of used approvals.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct SharedRecord {
    host: String,
    port: u16,
    auth: Auth,
    bucket: String,
}

impl std::fmt::Debug for SharedRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl SharedRecord {
    /// The record named by [`STORE_VAR`], if set.
    pub(crate) fn from_env() -> Result<Option<Self>, UrlError> {
        match std::env::var(STORE_VAR) {
            Ok(url) if !url.trim().is_empty() => Self::parse(url.trim()).map(Some),
            Ok(_) | Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(UrlError::NotUtf8),
        }
    }

    /// `nats://[user:password@|token@]host[:port]/BUCKET`. Errors never repeat the URL, which
    /// may hold credentials.
    pub(crate) fn parse(url: &str) -> Result<Self, UrlError> {
        let rest = url.strip_prefix("nats://").ok_or(UrlError::NotNats)?;
        let (authority, bucket) = rest.split_once('/').ok_or(UrlError::NoBucket)?;
        let bucket = bucket.trim_end_matches('/');
        if bucket.is_empty()
            || !bucket
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(UrlError::BadBucket(bucket.to_string()));
        }
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
        Ok(Self {
            host: host.to_string(),
            port,
            auth,
            bucket: bucket.to_string(),
        })
    }

    /// For logs and notes: the server and bucket, never the credentials.
    pub(crate) fn describe(&self) -> String {
        format!(
            "NATS JetStream KV bucket {} at {}:{}",
            self.bucket, self.host, self.port
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
        let stream = TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(ClaimError::Connect)?;
        let _ = stream.set_nodelay(true);
        let (read, mut write) = stream.into_split();
        let mut reader = BufReader::new(read);

        let info = read_line(&mut reader).await?;
        let info: Value = info
            .strip_prefix("INFO ")
            .and_then(|json| serde_json::from_str(json).ok())
            .ok_or_else(|| ClaimError::NotNats(shown(&info)))?;
        if info["tls_required"] == true {
            return Err(ClaimError::TlsRequired);
        }
        if info["headers"] != true {
            return Err(ClaimError::NoHeaders);
        }

        let mut connect = json!({
            "verbose": false, "pedantic": false, "headers": true, "no_responders": true,
            "lang": "fiskgen-runtime", "version": env!("CARGO_PKG_VERSION"), "protocol": 1,
        });
        match &self.auth {
            Auth::None => {}
            Auth::Token(token) => connect["auth_token"] = json!(token),
            Auth::User { user, password } => {
                connect["user"] = json!(user);
                connect["pass"] = json!(password);
            }
        }
        let inbox = format!("_INBOX.fiskgen.{nonce}");
        let headers = "NATS/1.0\r\nNats-Expected-Last-Subject-Sequence: 0\r\n\r\n";
        let payload = "used";
        let mut out = format!("CONNECT {connect}\r\nPING\r\nSUB {inbox} 1\r\n");
        out.push_str(&format!(
            "HPUB $KV.{}.{nonce} {inbox} {} {}\r\n{headers}{payload}\r\nPING\r\n",
            self.bucket,
            headers.len(),
            headers.len() + payload.len()
        ));
        write
            .write_all(out.as_bytes())
            .await
            .map_err(ClaimError::Send)?;

        loop {
            let line = read_line(&mut reader).await?;
            let mut words = line.split_ascii_whitespace();
            match words.next() {
                Some("PING") => {
                    write
                        .write_all(b"PONG\r\n")
                        .await
                        .map_err(ClaimError::Send)?;
                }
                Some("PONG" | "+OK" | "INFO") => {}
                Some("-ERR") => return Err(ClaimError::Refused(shown(&line[4..]))),
                Some(kind @ ("MSG" | "HMSG")) => {
                    let sizes: Vec<usize> = words.skip(2).filter_map(|w| w.parse().ok()).collect();
                    let (header_len, total) = match (kind, sizes.as_slice()) {
                        ("MSG", [total]) => (0, *total),
                        ("HMSG", [header, total]) if header <= total => (*header, *total),
                        _ => return Err(ClaimError::MalformedReply(shown(&line))),
                    };
                    if total as u64 > MAX_LINE {
                        return Err(ClaimError::OversizeReply(total));
                    }
                    let mut body = vec![0; total + 2];
                    reader
                        .read_exact(&mut body)
                        .await
                        .map_err(ClaimError::Read)?;
                    let (head, payload) = body[..total].split_at(header_len);
                    return judge(head, payload, &self.bucket);
                }
                _ => return Err(ClaimError::UnexpectedLine(shown(&line))),
            }
        }
    }
}

/// What JetStream's answer to the create means.
fn judge(head: &[u8], payload: &[u8], bucket: &str) -> Result<bool, ClaimError> {
    let status = String::from_utf8_lossy(head);
    if status.starts_with("NATS/1.0 503") {
        return Err(ClaimError::NoBucket {
            bucket: bucket.to_string(),
        });
    }
    let reply: Value = serde_json::from_slice(payload)
        .map_err(|_| ClaimError::NotJson(shown(&String::from_utf8_lossy(payload))))?;
    if let Some(error) = reply.get("error") {
        if error["err_code"].as_i64() == Some(WRONG_LAST_SEQUENCE) {
            return Ok(false);
        }
        return Err(ClaimError::Rejected(shown(
            error["description"].as_str().unwrap_or("no description"),
        )));
    }
    if reply.get("seq").is_some_and(Value::is_u64) {
        return Ok(true);
    }
    Err(ClaimError::UnexpectedAnswer(shown(&reply.to_string())))
}

/// One protocol line without its CRLF, bounded.
async fn read_line<R: tokio::io::AsyncBufRead + Unpin>(
    reader: &mut R,
) -> Result<String, ClaimError> {
    let mut line = String::new();
    let read = reader
        .take(MAX_LINE)
        .read_line(&mut line)
        .await
        .map_err(ClaimError::Read)?;
    if read == 0 {
        return Err(ClaimError::Closed);
    }
    if !line.ends_with('\n') {
        return Err(ClaimError::Unterminated);
    }
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}

/// Server-chosen text made safe and short for a message.
fn shown(text: &str) -> String {
    crate::logging::label(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_urls_are_parsed_and_bad_ones_explained() {
        let record = SharedRecord::parse("nats://127.0.0.1:4333/approvals").expect("parses");
        assert_eq!(record.host, "127.0.0.1");
        assert_eq!(record.port, 4333);
        assert_eq!(record.bucket, "approvals");
        assert!(record.auth == Auth::None);
        let record = SharedRecord::parse("nats://me:s3cret@nats.internal/fiskgen-approvals")
            .expect("parses");
        assert_eq!(record.port, 4222);
        assert!(
            record.auth
                == Auth::User {
                    user: "me".into(),
                    password: "s3cret".into()
                }
        );
        assert!(!format!("{record:?}").contains("s3cret"));
        let record = SharedRecord::parse("nats://tok@[::1]:4222/b").expect("parses");
        assert_eq!(record.host, "::1");
        assert!(record.auth == Auth::Token("tok".into()));
        let error = SharedRecord::parse("nats://me:s3cret@host").expect_err("no bucket");
        assert_eq!(error, UrlError::NoBucket);
        assert!(!error.to_string().contains("s3cret"), "{error}");
        for (bad, why) in [
            ("redis://localhost/b", UrlError::NotNats),
            ("nats://localhost", UrlError::NoBucket),
            ("nats://localhost/", UrlError::BadBucket(String::new())),
            ("nats://localhost/a.b", UrlError::BadBucket("a.b".into())),
            (
                "nats://localhost:99999/b",
                UrlError::BadPort("99999".into()),
            ),
            ("nats:///b", UrlError::NoHost),
        ] {
            assert_eq!(SharedRecord::parse(bad).expect_err(bad), why, "{bad}");
        }
        assert_eq!(
            UrlError::BadPort("99999".into()).to_string(),
            format!("{STORE_VAR}: port \"99999\" is not a number from 1 to 65535")
        );
    }

    #[test]
    fn jetstream_answers_mean_first_use_replay_or_failure() {
        assert!(matches!(
            judge(b"", br#"{"stream":"KV_a","seq":3}"#, "a"),
            Ok(true)
        ));
        let replay =
            br#"{"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 3"}}"#;
        assert!(matches!(judge(b"", replay, "a"), Ok(false)));
        let error = judge(b"NATS/1.0 503\r\n\r\n", b"", "a").expect_err("no bucket");
        assert!(
            error.to_string().contains("nats kv add a --ttl 15m"),
            "{error}"
        );
        assert!(judge(b"", b"{}", "a").is_err());
        assert!(judge(b"", b"nonsense", "a").is_err());
    }
}
