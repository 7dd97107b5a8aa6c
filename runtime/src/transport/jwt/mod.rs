//! OAuth access tokens as JWTs: signature against the authorization server's keys (a JWKS from
//! a file or a URL, refreshed), then `iss`, `aud` (this server's resource URL), `exp`, `nbf`
//! and `typ` (RFC 9068). Only asymmetric algorithms from the configured list are accepted;
//! `alg: none`, HMAC keys and unknown key ids are refused. docs/runtime.md, "Authentication".

//!
//! The validation needs the runtime feature `oauth` (generated crates enable it when the config
//! sets `auth.oauth`); without it a server configured for OAuth refuses to start.

use serde_json::{Map, Value};

#[cfg(feature = "oauth")]
mod keys;
#[cfg(feature = "oauth")]
pub(crate) use keys::Keys;

/// Why the authorization server's signing keys (the JWKS) cannot be loaded.
#[derive(Debug, thiserror::Error)]
#[cfg_attr(not(feature = "oauth"), allow(dead_code))]
pub(crate) enum KeysError {
    /// The file cannot be read.
    #[error("reading the JWKS file {path}: {source}")]
    ReadFile {
        /// The configured file.
        path: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// The file is over the size cap.
    #[error("the JWKS file {path} is larger than {max} bytes")]
    FileTooLarge {
        /// The configured file.
        path: &'static str,
        /// The cap.
        max: u64,
    },
    /// The fetch's thread ended without an answer.
    #[error("fetching the JWKS at {url} was interrupted")]
    Interrupted {
        /// The configured URL.
        url: &'static str,
    },
    /// The request failed.
    #[error("fetching the JWKS at {url}: {reason}")]
    Fetch {
        /// The configured URL.
        url: &'static str,
        /// Why (the HTTP client's words, or the status the server answered).
        reason: String,
    },
    /// The answer's body could not be read.
    #[error("reading the JWKS at {url}: {reason}")]
    ReadBody {
        /// The configured URL.
        url: &'static str,
        /// Why.
        reason: String,
    },
    /// Not a JSON Web Key Set.
    #[error("the JWKS {source_name} is not a JSON Web Key Set: {error}")]
    NotJwks {
        /// `file <path>` or `at <url>`.
        source_name: String,
        /// Why.
        error: serde_json::Error,
    },
    /// No key the configured algorithms can use.
    #[error("the JWKS {source_name} holds no public signing key")]
    NoPublicKey {
        /// `file <path>` or `at <url>`.
        source_name: String,
    },
    /// OAuth was configured but the runtime was built without it.
    #[cfg(not(feature = "oauth"))]
    #[error(
        "this server is configured for OAuth but was built without the runtime's oauth \
         feature; rebuild it with `fiskgen build`"
    )]
    NotBuiltIn,
}

/// Why a token is refused, in words for `error_description` (never the token itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rejection(pub(crate) String);

/// The scopes a token grants: `scope` (space-separated, RFC 9068) or `scp` (string or list).
pub(crate) fn scopes(claims: &Map<String, Value>) -> Vec<String> {
    let mut scopes = Vec::new();
    for key in ["scope", "scp"] {
        match claims.get(key) {
            Some(Value::String(text)) => scopes.extend(text.split_whitespace().map(String::from)),
            Some(Value::Array(items)) => scopes.extend(
                items
                    .iter()
                    .filter_map(|item| item.as_str().map(String::from)),
            ),
            _ => {}
        }
    }
    scopes
}

/// Without the `oauth` feature: a server configured for OAuth refuses to start.
#[cfg(not(feature = "oauth"))]
pub(crate) struct Keys;

#[cfg(not(feature = "oauth"))]
impl Keys {
    pub(crate) async fn load(_: &'static crate::spec::app::OAuthSpec) -> Result<Self, KeysError> {
        Err(KeysError::NotBuiltIn)
    }

    pub(crate) fn spawn_refresh(self: std::sync::Arc<Self>) {}

    pub(crate) async fn validate(&self, _: &str) -> Result<Map<String, Value>, Rejection> {
        Err(Rejection(
            "OAuth is not available in this build".to_string(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_come_from_scope_or_scp() {
        let claims = |value: Value| value.as_object().cloned().unwrap_or_default();
        assert_eq!(
            scopes(&claims(serde_json::json!({"scope": "a b"}))),
            ["a", "b"]
        );
        assert_eq!(scopes(&claims(serde_json::json!({"scp": ["c"]}))), ["c"]);
        assert!(scopes(&claims(serde_json::json!({"scope": 3}))).is_empty());
    }
}
