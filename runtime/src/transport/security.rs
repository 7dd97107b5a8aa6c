//! Who may talk to the HTTP endpoint: `Host` and `Origin` allowlists (against DNS rebinding
//! and cross-site requests from browsers) and an optional bearer token.
//!
//! Host and Origin are enforced by rmcp's streamable HTTP service, configured here: the Host
//! must be a loopback name, a configured `allowed_hosts` entry, or the concrete address the
//! server is bound to; an Origin, when present, must be a loopback origin or an
//! `allowed_origins` entry (rmcp leaves Origin unchecked unless told, so it is always enforced
//! here). Credentials are checked by [`crate::transport::auth`] before a request reaches MCP.

use std::net::IpAddr;

use sha2::{Digest, Sha256};

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

/// A secret (bearer token, header value) read once at start.
#[derive(Clone)]
pub(crate) struct Token {
    /// SHA-256 of the token: compared instead of the token, so the comparison takes the same
    /// time whatever the length or content of the guess.
    digest: [u8; 32],
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

impl Token {
    /// A token with this value.
    pub(crate) fn new(token: &str) -> Self {
        Self {
            digest: Sha256::digest(token.as_bytes()).into(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_by_value() {
        let token = Token::new("s3cret");
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
