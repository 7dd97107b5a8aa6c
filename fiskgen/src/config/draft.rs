//! The config being read ([`Draft`]) and the limits and defaults its readers share.
//!
//! It sits below every reader (`schema`, `values`, `lists`, `checks`), which all fill it and
//! none of which it knows, so the config modules import in one direction only: `schema` uses
//! `values` and `lists`, they use this module and `reader`, and nothing uses `schema` but the
//! config's entry point.

use std::path::Path;
use std::time::Duration;

use fiskgen_contract::defaults;

use super::auth_draft::AuthDraft;
use super::yaml::Pos;
use super::{Config, Harness, McpConfig, TaskConfig, ToolFilter};

/// The largest `max_concurrent_tools`.
pub(super) const MAX_CONCURRENCY: i64 = defaults::MAX_CONCURRENCY_LIMIT as i64;
/// `tool_timeout` when unset or 0, and `embeddings.timeout` when unset.
pub(super) const DEFAULT_TIMEOUT: Duration = defaults::TOOL_TIMEOUT;

/// The config being read, and what the cross-key checks need.
pub(super) struct Draft {
    /// The config so far.
    pub(super) config: Config,
    /// An explicit, non-empty `identity` and where it is.
    pub(super) identity: Option<(String, Pos)>,
    /// Where `application_path` is.
    pub(super) application_path: Option<Pos>,
    /// Where the `global_flags` key is.
    pub(super) global_flags: Option<Pos>,
    /// Where the `expose.agent.mcp.builtins` key is.
    pub(super) builtins: Option<Pos>,
    /// `expose.agent.mcp.auth`, when present.
    pub(super) auth: Option<AuthDraft>,
    /// `harness.knowledge.embeddings`, when present.
    pub(super) embeddings: Option<EmbeddingsDraft>,
    /// Where the `expose.agent.mcp.tasks` key is, when it is a mapping.
    pub(super) tasks: Option<Pos>,
    /// Where `tasks.after`'s value is, when set.
    pub(super) task_after: Option<Pos>,
}

/// `harness.knowledge.embeddings` as written; `base_url` and `model` are checked at the end.
#[derive(Debug, Default)]
pub(super) struct EmbeddingsDraft {
    pub(super) pos: Pos,
    pub(super) base_url: Option<String>,
    pub(super) model: Option<String>,
    pub(super) api_key_env: Option<String>,
    pub(super) timeout: Option<Duration>,
    pub(super) query_prefix: String,
    pub(super) document_prefix: String,
}

impl Draft {
    pub(super) fn new(source: &Path) -> Self {
        let config = Config {
            source: source.to_path_buf(),
            identity: String::new(),
            identity_explicit: false,
            application_path: None,
            global_flags: Vec::new(),
            include: ToolFilter::default(),
            exclude: ToolFilter::default(),
            expose_include: ToolFilter::default(),
            expose_exclude: ToolFilter::default(),
            telemetry: super::TelemetryConfig::default(),
            harness: Harness::default(),
            mcp: None,
            notes: Vec::new(),
        };
        Draft {
            config,
            identity: None,
            application_path: None,
            global_flags: None,
            builtins: None,
            auth: None,
            embeddings: None,
            tasks: None,
            task_after: None,
        }
    }

    /// `expose.agent.mcp.tasks`, created by entering the block.
    pub(super) fn task(&mut self) -> &mut TaskConfig {
        self.mcp().tasks.get_or_insert_with(TaskConfig::default)
    }

    /// `expose.agent.mcp`, created by entering the block.
    pub(super) fn mcp(&mut self) -> &mut McpConfig {
        self.config.mcp.get_or_insert_with(McpConfig::default)
    }

    /// `harness.knowledge.embeddings`, created by entering the block.
    pub(super) fn embeddings(&mut self) -> &mut EmbeddingsDraft {
        self.embeddings.get_or_insert_with(EmbeddingsDraft::default)
    }
}
