//! What a legacy client of a stateless server declared at `initialize` ([`Declared`]): the
//! transport reads it from the request (`crate::transport::intake`, which also writes the
//! record the client echoes back), the confirmation gate decides with it (docs/runtime.md,
//! "Confirmation on a stateless server").

use serde::{Deserialize, Serialize};

/// What a legacy client of a stateless server declared at `initialize`, as the handler sees it
/// in the request's extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Declared {
    /// The record from the client's `Mcp-Session-Id`.
    Known(Record),
    /// No record (or an unreadable one): the declaration is unknown.
    Unknown,
}

/// The declaration a stateless server hands a legacy client in `Mcp-Session-Id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Record {
    /// The elicitation it declared: `form`, `url` (URL mode only) or `none`.
    #[serde(rename = "e")]
    pub(crate) elicitation: String,
    /// Its `clientInfo.name`, shortened.
    #[serde(rename = "n")]
    pub(crate) name: String,
}

impl Record {
    /// Whether it declared any elicitation (form or URL mode).
    pub(crate) fn declared_elicitation(&self) -> bool {
        matches!(self.elicitation.as_str(), "form" | "url")
    }
}
