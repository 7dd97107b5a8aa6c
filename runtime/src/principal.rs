//! Who a request comes from, for what belongs to someone: tasks, their approvals and legacy
//! sessions (docs/security.md). The transports say who it is ([`Subject`], set by the
//! credentials check; the legacy session's id); the MCP handler reads it ([`Principal::of`]) and
//! the task store compares it ([`Principal::may_use`]).

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::RequestContext;
use sha2::{Digest, Sha256};

/// The authenticated subject of an HTTP request, put into its extensions by the credentials
/// check (`transport::auth`) once the credentials are accepted: `oauth <iss> <sub>` for an
/// OAuth access token, `token` for the static bearer token, `header <name>` for the custom
/// header. Everyone who holds one static secret is one subject: a shared secret cannot tell
/// people apart.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Subject(pub(crate) Arc<str>);

/// Who owns a task: the SHA-256 (hex) of its creator's [`Principal`], or `None` when nobody in
/// particular created it (then whoever holds its id may use it). A digest, so a shared record
/// names no subject and no session id.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub(crate) struct Owner(pub(crate) Option<String>);

/// Who a request comes from, in the order of precedence of docs/security.md.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Principal {
    /// The authenticated subject, when the server requires credentials.
    Subject(Arc<str>),
    /// A legacy HTTP session (no credentials required), by its id.
    Session(Arc<str>),
    /// No identity to bind to: a stateless request without credentials (every 2026-07-28
    /// request to a server without authentication) or the one client of a stdio server. What it
    /// creates is reached by whoever holds the task id: the id is the capability, as the tasks
    /// extension allows ("servers MAY use task IDs as bearer tokens").
    Holder,
}

impl Principal {
    /// The principal of a request: its subject, else its legacy session, else nobody in
    /// particular.
    pub(crate) fn of(context: &RequestContext<RoleServer>) -> Self {
        let Some(parts) = context.extensions.get::<http::request::Parts>() else {
            // stdio: one client per process.
            return Self::Holder;
        };
        if let Some(Subject(subject)) = parts.extensions.get::<Subject>() {
            return Self::Subject(Arc::clone(subject));
        }
        match parts
            .headers
            .get("mcp-session-id")
            .and_then(|value| value.to_str().ok())
        {
            Some(session) if !session.is_empty() => Self::Session(session.into()),
            _ => Self::Holder,
        }
    }

    /// Whose what `self` creates is: the SHA-256 of the principal (its kind and identity), or
    /// nobody's for [`Principal::Holder`]. The one form an owner is kept in, in memory and in a
    /// shared task record alike, so that one rule ([`Principal::may_use`]) judges both.
    pub(crate) fn owner(&self) -> Owner {
        let (kind, id) = match self {
            Self::Subject(subject) => ("subject", subject),
            Self::Session(session) => ("session", session),
            Self::Holder => return Owner(None),
        };
        let mut hash = Sha256::new();
        hash.update(kind.as_bytes());
        hash.update([0]);
        hash.update(id.as_bytes());
        Owner(Some(
            hash.finalize().iter().map(|b| format!("{b:02x}")).collect(),
        ))
    }

    /// Whether a request by `self` may read, answer or cancel what `owner` created: the same
    /// principal, or anyone holding the id of what nobody in particular created.
    pub(crate) fn may_use(&self, owner: &Owner) -> bool {
        owner.0.is_none() || self.owner() == *owner
    }

    /// What a sealed 2026-07-28 `requestState` is bound to, so that only the principal it was
    /// issued to can answer it: the authenticated subject, or nothing when there is none (a
    /// server without credentials cannot tell its clients apart, and a state's holder is then
    /// whoever it was sent to).
    pub(crate) fn state_binding(&self) -> &str {
        match self {
            Self::Subject(subject) => subject,
            Self::Session(_) | Self::Holder => "",
        }
    }

    /// How logs name it: the subject (escaped and capped), a session by a digest of its id (an
    /// id is a credential), or `anyone with the id`.
    pub(crate) fn label(&self) -> String {
        match self {
            Self::Subject(subject) => format!("subject {}", crate::logging::label(subject)),
            Self::Session(id) => format!("session #{}", digest(id)),
            Self::Holder => "no identity".to_string(),
        }
    }
}

/// The first 8 hex digits of the SHA-256 of `secret`: enough to tell ids apart in a log, too
/// little to use one.
pub(crate) fn digest(secret: &str) -> String {
    Sha256::digest(secret.as_bytes())
        .iter()
        .take(4)
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_owner_may_use_what_a_principal_created_and_anyone_what_nobody_did() {
        let alice = Principal::Subject("oauth https://issuer alice".into());
        let bob = Principal::Subject("oauth https://issuer bob".into());
        let session = Principal::Session("abc".into());
        assert!(alice.may_use(&alice.owner()));
        assert!(!bob.may_use(&alice.owner()));
        assert!(!Principal::Holder.may_use(&alice.owner()));
        assert!(!Principal::Holder.may_use(&session.owner()));
        assert!(!alice.may_use(&session.owner()));
        assert!(alice.may_use(&Principal::Holder.owner()));
        assert!(Principal::Holder.may_use(&Principal::Holder.owner()));
        // A subject and a session spelled alike are different owners.
        let same = Principal::Session("oauth https://issuer alice".into());
        assert!(!same.may_use(&alice.owner()));
        assert_eq!(alice.owner().0.map(|hash| hash.len()), Some(64));
    }

    #[test]
    fn logs_name_a_session_by_a_digest_only() {
        let label = Principal::Session("0123456789abcdef".into()).label();
        assert!(!label.contains("0123456789abcdef"), "{label}");
        assert_eq!(label.len(), "session #".len() + 8);
        assert_eq!(digest("x"), digest("x"));
        assert_ne!(digest("x"), digest("y"));
    }
}
