//! `expose.agent.mcp.auth` as written, before its keys are checked together
//! (config/auth.rs reads and resolves it; config/draft.rs holds it in the [`super::draft::Draft`]).

use std::time::Duration;

use super::yaml::Pos;

/// `auth` as written; each `Some` when present (inner `None`: reported invalid).
#[derive(Debug, Default)]
pub(super) struct AuthDraft {
    pub(super) pos: Pos,
    pub(super) token_env: Option<Option<String>>,
    pub(super) token_file: Option<Option<String>>,
    pub(super) header: Option<HeaderDraft>,
    pub(super) oauth: Option<OAuthDraft>,
}

#[derive(Debug, Default)]
pub(super) struct HeaderDraft {
    pub(super) pos: Pos,
    pub(super) name: Option<String>,
    pub(super) name_invalid: bool,
    pub(super) value_env: Option<Option<String>>,
    pub(super) value_file: Option<Option<String>>,
}

#[derive(Debug, Default)]
pub(super) struct OAuthDraft {
    pub(super) pos: Pos,
    pub(super) resource: Option<String>,
    pub(super) authorization_servers: Vec<String>,
    pub(super) jwks_file: Option<Option<String>>,
    pub(super) jwks_url: Option<Option<String>>,
    pub(super) jwks_refresh: Option<Duration>,
    pub(super) algorithms: Option<Vec<String>>,
    pub(super) token_types: Option<Vec<String>>,
    pub(super) scopes: Vec<String>,
    pub(super) method_scopes: Vec<(String, Vec<String>)>,
    pub(super) leeway: Option<Duration>,
    pub(super) invalid: bool,
}

impl AuthDraft {
    /// The block whose key is at `pos`.
    pub(super) fn at(pos: Pos) -> Self {
        AuthDraft {
            pos,
            ..Default::default()
        }
    }
}
