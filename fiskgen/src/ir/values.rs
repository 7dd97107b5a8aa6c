//! The values the config holds that the IR carries as they are: hints, the confirmation mode,
//! the knowledge and authentication blocks. `crate::config` reads them; the emitters, `info` and
//! `check` read them here, in the IR, and never the config.

use std::time::Duration;

/// How `ai:confirm`-gated calls are confirmed (`confirm_over_mcp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConfirmMode {
    /// Ask clients that can be asked; run ungated (with a warning) for the others.
    #[default]
    Auto,
    /// Refuse when the client cannot be asked.
    Always,
    /// Never ask.
    Never,
}

/// How `tools/list` presents the tools (`catalog`; docs/catalogs.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CatalogMode {
    /// Every tool, each with its entry.
    #[default]
    List,
    /// Four fixed tools that find, describe and run the served ones.
    Search,
}

/// An MCP behaviour hint that a tag can turn on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Hint {
    /// `readOnlyHint`.
    ReadOnly,
    /// `destructiveHint`.
    Destructive,
    /// `idempotentHint`.
    Idempotent,
    /// `openWorldHint`.
    OpenWorld,
}

impl Hint {
    /// Every hint, in annotation order.
    pub const ALL: [Hint; 4] = [
        Hint::ReadOnly,
        Hint::Destructive,
        Hint::Idempotent,
        Hint::OpenWorld,
    ];

    /// The config spelling (`read_only`, ...), also the suffix of the reserved `ai:` tag.
    pub fn name(self) -> &'static str {
        match self {
            Hint::ReadOnly => "read_only",
            Hint::Destructive => "destructive",
            Hint::Idempotent => "idempotent",
            Hint::OpenWorld => "open_world",
        }
    }

    /// The hint a config spelling names (`read_only`, ...).
    pub fn from_name(name: &str) -> Option<Hint> {
        Hint::ALL.into_iter().find(|hint| hint.name() == name)
    }

    /// The reserved fisk tag that sets this hint (`ai:read_only`, ...).
    pub fn reserved_tag(self) -> &'static str {
        match self {
            Hint::ReadOnly => "ai:read_only",
            Hint::Destructive => "ai:destructive",
            Hint::Idempotent => "ai:idempotent",
            Hint::OpenWorld => "ai:open_world",
        }
    }
}

/// `harness.knowledge`.
#[derive(Debug, Clone, PartialEq)]
pub struct KnowledgeConfig {
    /// Serve the knowledge tools.
    pub enabled: bool,
    /// Index directory; `None` means `knowledge/<identity>`.
    pub directory: Option<String>,
    /// Default number of results: always positive (a file value <= 0 reads as the default, 5);
    /// searching caps it at 20.
    pub top_k: i64,
    /// Content budget in tokens (x4 bytes) per search answer: always positive (a file value
    /// <= 0 reads as the default, 6000).
    pub max_injected_tokens: i64,
    /// Present when the vector tier is configured.
    pub embeddings: Option<EmbeddingsConfig>,
    /// `harness.knowledge.paths`: what the indexer walks by default.
    pub paths: Vec<String>,
}

impl Default for KnowledgeConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            directory: None,
            top_k: 5,
            max_injected_tokens: 6000,
            embeddings: None,
            paths: Vec::new(),
        }
    }
}

/// `harness.knowledge.embeddings`: an OpenAI-compatible embeddings endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingsConfig {
    /// Base URL, e.g. `http://127.0.0.1:1234/v1`.
    pub base_url: String,
    /// Embedding model name.
    pub model: String,
    /// Environment variable holding the API key; also scrubbed from child environments.
    pub api_key_env: Option<String>,
    /// HTTP timeout (default 30 s, must be > 0).
    pub timeout: Duration,
    /// Prepended to queries before embedding.
    pub query_prefix: String,
    /// Prepended to documents before embedding (`{title}` is replaced).
    pub document_prefix: String,
}

/// `expose.agent.mcp.auth`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AuthConfig {
    /// `token_env` / `token_file`: a static bearer token.
    pub token: Option<SecretSource>,
    /// `header`: a named header compared with a secret.
    pub header: Option<HeaderAuthConfig>,
    /// `oauth`: JWT access tokens from an authorization server.
    pub oauth: Option<OAuthConfig>,
}

/// Where a secret is read from when the server starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretSource {
    /// An environment variable.
    Env(String),
    /// A file.
    File(String),
}

/// `auth.header`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderAuthConfig {
    /// The header's name.
    pub name: String,
    /// `value_env` / `value_file`.
    pub value: SecretSource,
}

/// `auth.oauth`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthConfig {
    /// This server's public resource URL, the tokens' audience.
    pub resource: String,
    /// The accepted issuers, named in the metadata document.
    pub authorization_servers: Vec<String>,
    /// Where the signing keys are.
    pub jwks: JwksConfig,
    /// How often keys from a URL are refreshed.
    pub jwks_refresh: Duration,
    /// Accepted signing algorithms.
    pub algorithms: Vec<String>,
    /// Accepted `typ` values (empty: any).
    pub token_types: Vec<String>,
    /// Scopes every request needs.
    pub scopes: Vec<String>,
    /// Further scopes per JSON-RPC method, in file order.
    pub method_scopes: Vec<(String, Vec<String>)>,
    /// Allowed clock skew.
    pub leeway: Duration,
}

/// `jwks_file` / `jwks_url`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JwksConfig {
    /// A file read at start.
    File(String),
    /// A URL fetched at start and refreshed.
    Url(String),
}

impl AuthConfig {
    /// The environment variables holding the server's own secrets.
    pub fn secret_env_names(&self) -> Vec<String> {
        let header = self.header.as_ref().map(|h| &h.value);
        [self.token.as_ref(), header]
            .into_iter()
            .flatten()
            .filter_map(|source| match source {
                SecretSource::Env(name) => Some(name.clone()),
                SecretSource::File(_) => None,
            })
            .collect()
    }
}

/// `telemetry`, as the file states it (the environment is read by the server at start).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TelemetryConfig {
    /// `telemetry.enabled`: nothing is exported unless it is true.
    pub enabled: bool,
    /// `telemetry.endpoint`, the OTLP/HTTP base URL (`""`: from the environment).
    pub endpoint: String,
    /// `telemetry.service_name` (`""`: `OTEL_SERVICE_NAME`, then the identity).
    pub service_name: String,
    /// `telemetry.sample_ratio`, 0 to 1 (`None`: 1).
    pub sample_ratio: Option<f64>,
    /// `telemetry.no_metrics`: spans only, no metrics.
    pub no_metrics: bool,
}
