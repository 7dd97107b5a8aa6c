//! Who may talk to the HTTP endpoint: `Host` and `Origin` allowlists (against DNS rebinding
//! and cross-site requests from browsers) and an optional bearer token.
//!
//! Host and Origin are enforced by rmcp's streamable HTTP service, configured here: the Host
//! must be a loopback name, a configured `allowed_hosts` entry, or the concrete address the
//! server is bound to; an Origin, when present, must be a loopback origin or an
//! `allowed_origins` entry (rmcp leaves Origin unchecked unless told, so it is always enforced
//! here). The bearer token is checked by [`require_token`] before a request reaches MCP.

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use sha2::{Digest, Sha256};

use crate::spec::AuthSource;

/// Hosts always accepted.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Origins always accepted: pages served from this machine (the MCP Inspector, local tools).
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// The `Host` allowlist.
pub(crate) fn allowed_hosts(configured: &[String], bound: IpAddr) -> Vec<String> {
    let mut hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| h.to_string()).collect();
    hosts.extend(
        configured
            .iter()
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty()),
    );
    // A client may always name the concrete address it connects to; an IP literal cannot be
    // rebound by DNS.
    if !bound.is_unspecified() && !bound.is_loopback() {
        hosts.push(bound.to_string());
    }
    hosts.dedup();
    hosts
}

/// The `Origin` allowlist.
pub(crate) fn allowed_origins(configured: &[String]) -> Vec<String> {
    let mut origins: Vec<String> = LOOPBACK_ORIGINS.iter().map(|o| o.to_string()).collect();
    origins.extend(
        configured
            .iter()
            .map(|o| o.trim().trim_end_matches('/').to_string())
            .filter(|o| !o.is_empty()),
    );
    origins
}

/// A bearer token read once at start.
#[derive(Clone)]
pub(crate) struct Token {
    /// SHA-256 of the token: compared instead of the token, so the comparison takes the same
    /// time whatever the length or content of the guess.
    digest: [u8; 32],
    /// The identity, for the `WWW-Authenticate` realm.
    realm: &'static str,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

impl Token {
    /// Reads the token from where the build configured it. A missing or empty token is an
    /// error: starting without the protection the operator asked for would be worse.
    pub(crate) fn load(source: AuthSource, realm: &'static str) -> Result<Self, String> {
        let token = match source {
            AuthSource::Env(name) => std::env::var(name).map_err(|_| {
                format!(
                    "authentication is configured, but the environment variable {name} is not set"
                )
            })?,
            AuthSource::File(path) => std::fs::read_to_string(path)
                .map_err(|error| format!("reading the bearer token file {path}: {error}"))?,
        };
        let token = token.trim();
        if token.is_empty() {
            return Err(match source {
                AuthSource::Env(name) => format!("the bearer token in {name} is empty"),
                AuthSource::File(path) => format!("the bearer token file {path} is empty"),
            });
        }
        Ok(Self::new(token, realm))
    }

    /// A token with this value.
    pub(crate) fn new(token: &str, realm: &'static str) -> Self {
        Self {
            digest: Sha256::digest(token.as_bytes()).into(),
            realm,
        }
    }

    /// Whether `candidate` is the token, in constant time.
    pub(crate) fn matches(&self, candidate: &str) -> bool {
        let digest: [u8; 32] = Sha256::digest(candidate.as_bytes()).into();
        digest
            .iter()
            .zip(self.digest.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
    }
}

/// axum middleware: 401 with `WWW-Authenticate: Bearer` unless the request carries the token.
pub(crate) async fn require_token(
    State(token): State<Arc<Token>>,
    request: Request,
    next: Next,
) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| {
            let (scheme, credentials) = value.split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then(|| credentials.trim())
        });
    match presented {
        Some(candidate) if token.matches(candidate) => next.run(request).await,
        presented => {
            let (challenge, body) = match presented {
                None => (
                    format!("Bearer realm=\"{}\"", token.realm),
                    "Unauthorized: a bearer token is required",
                ),
                Some(_) => (
                    format!("Bearer realm=\"{}\", error=\"invalid_token\"", token.realm),
                    "Unauthorized: the bearer token is not valid",
                ),
            };
            let mut response = (StatusCode::UNAUTHORIZED, body).into_response();
            if let Ok(value) = HeaderValue::from_str(&challenge) {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, value);
            }
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_by_value() {
        let token = Token::new("s3cret", "demo");
        assert!(token.matches("s3cret"));
        assert!(!token.matches("s3cre"));
        assert!(!token.matches(""));
    }

    #[test]
    fn host_list_adds_the_concrete_bind_address_only() {
        let hosts = allowed_hosts(&["mcp.example.com".into()], "0.0.0.0".parse().expect("ip"));
        assert_eq!(hosts, ["localhost", "127.0.0.1", "::1", "mcp.example.com"]);
        let hosts = allowed_hosts(&[], "10.1.2.3".parse().expect("ip"));
        assert!(hosts.contains(&"10.1.2.3".to_string()));
    }
}
