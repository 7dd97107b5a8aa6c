//! The static description of a generated server: what fiskgen emits as data and the runtime
//! serves. Everything here is `const`-constructible so generated crates hold it in statics.

use std::time::Duration;

use fiskgen_contract::builtins::{self, Descriptor};
use fiskgen_contract::defaults;

use crate::spec::params::Command;

/// A whole generated server. `Clone` so runtime narrowing can serve a copy with fewer tools.
#[derive(Debug, Clone)]
pub struct AppSpec {
    /// MCP server name (`serverInfo.name`); the binary is `<identity>-mcp`.
    pub identity: &'static str,
    /// The fiskgen version that generated the crate.
    pub fiskgen_version: &'static str,
    /// The wrapped application; `None` for a built-ins-only server.
    pub application: Option<ApplicationSpec>,
    /// Sent in the initialize / discover result when set.
    pub instructions: Option<&'static str>,
    /// Served tools, in serving order.
    pub tools: &'static [&'static ToolSpec],
    /// The resources and prompts made from the application's own help.
    pub docs: &'static DocsSpec,
    /// The `tools/list` answer fiskgen computed for `tools` (`None`: joined at start).
    pub listing: Option<&'static crate::spec::listing::ListingSpec>,
    /// Settings fixed at build time; flags and the environment may override some of them.
    pub settings: Settings,
}

/// The resources, prompts and skills made from the application's own help (`docs/resources.md`),
/// rendered at build time. URIs follow `fiskgen_contract::docs`.
///
/// ```
/// use fiskgen_runtime::__private::*;
///
/// static DOCS: DocsSpec = DocsSpec {
///     page_size: 50,
///     help: &[HelpSpec {
///         tool: "stream_info",
///         title: "stream info",
///         summary: "Show a stream",
///         markdown: "# nats stream info\n\nShow a stream\n",
///     }],
///     cheat_sheets: true,
///     prompts: true,
///     skills: true,
///     cheats: &[CheatSpec {
///         label: "stream",
///         description: "Work with streams",
///         text: "# info about a stream\nnats stream info <stream>",
///         tool: Some("stream_info"),
///         arguments: &[ArgumentSpec { name: "stream", description: "Value for <stream>", values: &[] }],
///     }],
///     overview: Some(OverviewSpec {
///         label: "nats",
///         description: "NATS Utility",
///         text: "# nats\n\nNATS Utility\n",
///     }),
/// };
/// # assert_eq!(DOCS.help.len(), 1);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct DocsSpec {
    /// Items per page of `resources/list`, `resources/templates/list` and `prompts/list`.
    pub page_size: u32,
    /// Each served tool's help (empty when resources are off), in serving order.
    pub help: &'static [HelpSpec],
    /// Whether the cheats are resources too.
    pub cheat_sheets: bool,
    /// Whether the cheats are prompts.
    pub prompts: bool,
    /// Whether the cheats are skills (the Skills extension, SEP-2640).
    pub skills: bool,
    /// The application's cheats, by label.
    pub cheats: &'static [CheatSpec],
    /// The application's overview, a skill before the cheats' (only when skills are on).
    pub overview: Option<OverviewSpec>,
}

/// The application's overview as a skill: its help, its served commands, its cheats' skills.
#[derive(Debug, Clone, Copy)]
pub struct OverviewSpec {
    /// The application's name (the skill is named after it).
    pub label: &'static str,
    /// What the application is.
    pub description: &'static str,
    /// The Markdown.
    pub text: &'static str,
}

impl DocsSpec {
    /// Nothing to offer: empty lists.
    pub const NONE: DocsSpec = DocsSpec {
        page_size: 50,
        help: &[],
        cheat_sheets: false,
        prompts: false,
        skills: false,
        cheats: &[],
        overview: None,
    };
}

/// One tool's help as a Markdown resource.
#[derive(Debug, Clone, Copy)]
pub struct HelpSpec {
    /// The tool.
    pub tool: &'static str,
    /// The resource's title (the command path).
    pub title: &'static str,
    /// One line about the tool (the resource's description).
    pub summary: &'static str,
    /// The whole help.
    pub markdown: &'static str,
}

/// One cheat of the application.
#[derive(Debug, Clone, Copy)]
pub struct CheatSpec {
    /// Its label: the prompt's name and the last part of its URI.
    pub label: &'static str,
    /// What it is about.
    pub description: &'static str,
    /// The cheat as the application declares it (Markdown, `<name>` placeholders).
    pub text: &'static str,
    /// The served tool it belongs to, whose help its prompt embeds.
    pub tool: Option<&'static str>,
    /// Its placeholders, in order of first appearance.
    pub arguments: &'static [ArgumentSpec],
}

/// A prompt argument: one placeholder of a cheat.
#[derive(Debug, Clone, Copy)]
pub struct ArgumentSpec {
    /// The placeholder's name.
    pub name: &'static str,
    /// What to fill in.
    pub description: &'static str,
    /// Values offered by `completion/complete` (enum values and completion hints of the flag or
    /// argument of the same name).
    pub values: &'static [&'static str],
}

/// The application a server wraps, as it was when the server was generated.
#[derive(Debug, Clone)]
pub struct ApplicationSpec {
    /// Path to run (as configured: a bare name is looked up on PATH at run time).
    pub path: &'static str,
    /// The fisk application name.
    pub name: &'static str,
    /// The application's version, when it declares one.
    pub version: Option<&'static str>,
    /// SHA-256 of the canonical introspection document (sorted keys, no whitespace).
    pub fingerprint: &'static str,
    /// SHA-256 of the exact bytes the application printed when the server was generated from
    /// it (`None` when generated from a saved model): checks compare this before parsing.
    pub output_digest: Option<&'static str>,
    /// What decides which commands are served, so a check can tell whether a new command
    /// would be.
    pub serving: ServingSpec,
    /// Every command of the document the server was built from, reduced to fingerprints (the
    /// served surface; see `docs/drift.md`), as `fiskgen_contract::prints` writes them: read
    /// only by a check. The document itself is not kept.
    pub commands: &'static str,
}

/// The serving rules of the config a server was generated from.
#[derive(Debug, Clone, Copy)]
pub struct ServingSpec {
    /// The filter stages, in order (`include`, `exclude`, `expose.agent.tools.*`).
    pub stages: &'static [FilterSpec],
    /// The application flags exposed on every tool, by name.
    pub global_flags: &'static [&'static str],
    /// `tool_prefix`: put before a served command's own name (`""`: none).
    pub tool_prefix: &'static str,
    /// `tool_names`: (own name, served name) pairs.
    pub tool_names: &'static [(&'static str, &'static str)],
}

impl ServingSpec {
    /// Every command served, unfiltered, under its own name: generated crates name what the
    /// config sets and take the rest from here (`..rt::ServingSpec::ALL`).
    pub const ALL: ServingSpec = ServingSpec {
        stages: &[],
        global_flags: &[],
        tool_prefix: "",
        tool_names: &[],
    };
}

/// One include or exclude stage.
#[derive(Debug)]
pub struct FilterSpec {
    /// The config key.
    pub label: &'static str,
    /// Whether matching tools are kept (include) or dropped (exclude).
    pub include: bool,
    /// Unanchored regular expressions over tool names.
    pub tools: &'static [&'static str],
    /// Exact tags (`""` matches untagged commands).
    pub tags: &'static [&'static str],
}

/// Build-time settings of the server (`expose.agent.mcp`).
#[derive(Debug, Clone)]
pub struct Settings {
    /// Listen port (flag > `FISK_AI_MCP_PORT` > this).
    pub port: u16,
    /// Bind address (flag > `FISK_AI_MCP_ADDRESS` > this).
    pub address: &'static str,
    /// How confirm-gated calls are confirmed.
    pub confirm: ConfirmMode,
    /// Global concurrency limit for tool calls.
    pub max_concurrent_tools: u32,
    /// Per-call timeout.
    pub tool_timeout: Duration,
    /// Extra `Host` values accepted (besides loopback names).
    pub allowed_hosts: &'static [&'static str],
    /// Extra `Origin` values accepted.
    pub allowed_origins: &'static [&'static str],
    /// Authentication of HTTP requests (`expose.agent.mcp.auth`), when configured.
    pub auth: Option<AuthSpec>,
    /// Serve without sessions.
    pub stateless: bool,
    /// Environment variables removed from every child process besides the LLM providers'
    /// credentials (`fiskgen_contract::introspect::PROVIDER_CREDENTIAL_VARS`), which always
    /// are: the operator's credential variables.
    pub scrub_env: &'static [&'static str],
    /// Long calls as tasks (`expose.agent.mcp.tasks`); `None`: off.
    pub tasks: Option<TaskSettings>,
    /// A command that exits non-zero or is killed by a signal answers `isError: true`, with
    /// the same content (`expose.agent.mcp.exit_code_is_error`; docs/runtime.md, "Results").
    pub exit_code_is_error: bool,
    /// How `tools/list` presents the tools (`expose.agent.mcp.catalog`; `--catalog` overrides
    /// it; docs/catalogs.md).
    pub catalog: CatalogMode,
    /// Tags under this prefix are groups too (`expose.agent.mcp.group_tag_prefix`): a tool
    /// tagged `area:kv` with the prefix `area:` is also in the group `kv` (docs/catalogs.md).
    pub group_tag_prefix: Option<&'static str>,
    /// OpenTelemetry export (the config's `telemetry` block with `enabled: true`; `None`: off).
    pub telemetry: Option<TelemetrySpec>,
}

/// The config's `telemetry` block (docs/telemetry.md): what the file states; the environment
/// is read at start (`OTEL_*`, `NO_TELEMETRY`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TelemetrySpec {
    /// `telemetry.endpoint`, the OTLP/HTTP base URL (`""`: from the environment).
    pub endpoint: &'static str,
    /// `telemetry.service_name` (`""`: `OTEL_SERVICE_NAME`, then the identity).
    pub service_name: &'static str,
    /// `telemetry.sample_ratio` (`None`: 1).
    pub sample_ratio: Option<f64>,
    /// `telemetry.no_metrics`: spans only.
    pub no_metrics: bool,
}

/// `expose.agent.mcp.tasks`: when a call becomes a task of the tasks extension (SEP-2663), and
/// how many and how long tasks are kept (docs/runtime.md, "Tasks").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskSettings {
    /// A command still running this long after the call arrived becomes a task.
    pub after: Duration,
    /// How long a task may run and how long its result is kept after it ends.
    pub ttl: Duration,
    /// Tasks held at once, running or keeping a result.
    pub max: u32,
    /// The tools that run only as tasks (`tasks.required`): listed with
    /// `execution.taskSupport: "required"`, refused with -32021 to a client that did not
    /// declare the extension, and a task at once for one that did.
    pub required: &'static [&'static str],
}

impl Settings {
    /// The defaults (`fiskgen-contract`'s): generated crates write only what the operator
    /// configured and take the rest from here (`..rt::Settings::DEFAULT`).
    pub const DEFAULT: Settings = Settings {
        port: defaults::PORT,
        address: defaults::ADDRESS,
        confirm: ConfirmMode::Auto,
        max_concurrent_tools: defaults::MAX_CONCURRENT_TOOLS,
        tool_timeout: defaults::TOOL_TIMEOUT,
        allowed_hosts: &[],
        allowed_origins: &[],
        auth: None,
        stateless: false,
        scrub_env: &[],
        tasks: Some(TaskSettings {
            after: defaults::TASK_AFTER,
            ttl: defaults::TASK_TTL,
            max: defaults::TASK_MAX,
            required: &[],
        }),
        exit_code_is_error: false,
        catalog: CatalogMode::List,
        group_tag_prefix: None,
        telemetry: None,
    };
}

impl AppSpec {
    /// A server of nothing, with the default settings: hand-written specs (tests, the fuzz
    /// harness) name what they need and take the rest from here (`..AppSpec::EMPTY`), so a new
    /// field changes this one literal, not each of them.
    pub const EMPTY: AppSpec = AppSpec {
        identity: "",
        fiskgen_version: "",
        application: None,
        instructions: None,
        tools: &[],
        docs: &DocsSpec::NONE,
        listing: None,
        settings: Settings::DEFAULT,
    };
}

/// `confirm_over_mcp` (also the values of the binary's `--confirm` flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ConfirmMode {
    /// Ask clients that can be asked; run ungated (with a warning) for the others.
    Auto,
    /// Ask clients that can be asked; refuse the call for the others.
    Always,
    /// Never ask; run (approval is left to the client).
    Never,
}

/// How `tools/list` presents the tools (`expose.agent.mcp.catalog`, also the values of the
/// binary's `--catalog` flag; docs/catalogs.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum CatalogMode {
    /// Every tool, each with its entry.
    #[default]
    List,
    /// Four fixed tools that find, describe and run the served ones: search, describe,
    /// run_read_only, run.
    Search,
}

/// Where a secret (the bearer token, a header's value) is read from at start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthSource {
    /// An environment variable name.
    Env(&'static str),
    /// A file path.
    File(&'static str),
}

/// `expose.agent.mcp.auth`: what an HTTP request must carry. A request is let in when any
/// configured scheme accepts it (docs/runtime.md, "Authentication").
///
/// ```
/// use std::time::Duration;
/// use fiskgen_runtime::__private::*;
///
/// static OAUTH: OAuthSpec = OAuthSpec {
///     resource: "https://mcp.example.com/mcp",
///     authorization_servers: &["https://auth.example.com/realms/acme"],
///     jwks: JwksSource::Url("https://auth.example.com/realms/acme/certs"),
///     jwks_refresh: Duration::from_secs(600),
///     algorithms: &["RS256", "ES256"],
///     token_types: &["at+jwt", "JWT"],
///     required_scopes: &["mcp"],
///     method_scopes: &[("tools/call", &["mcp:run"])],
///     leeway: Duration::from_secs(30),
/// };
/// static AUTH: AuthSpec = AuthSpec {
///     token: Some(AuthSource::Env("MCP_TOKEN")),
///     header: Some(HeaderAuth { name: "X-Api-Key", value: AuthSource::File("/run/secrets/key") }),
///     oauth: Some(&OAUTH),
/// };
/// # assert!(AUTH.oauth.is_some());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthSpec {
    /// A static bearer token (`token_env` / `token_file`).
    pub token: Option<AuthSource>,
    /// A named header whose value must equal a secret (`header`).
    pub header: Option<HeaderAuth>,
    /// OAuth 2.1 access tokens as JWTs (`oauth`).
    pub oauth: Option<&'static OAuthSpec>,
}

/// A custom header compared in constant time (for clients that send `header_env`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderAuth {
    /// The header's name, e.g. `X-Api-Key`.
    pub name: &'static str,
    /// Where the expected value is read from at start.
    pub value: AuthSource,
}

/// The server as an OAuth 2.1 protected resource (RFC 9728), validating JWT access tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OAuthSpec {
    /// This server's resource URL (the token audience), e.g. `https://mcp.example.com/mcp`.
    pub resource: &'static str,
    /// The authorization servers' issuer identifiers: named in the metadata document, and the
    /// only accepted `iss` values.
    pub authorization_servers: &'static [&'static str],
    /// Where the signing keys are.
    pub jwks: JwksSource,
    /// How often keys fetched from a URL are refreshed (an unknown `kid` refreshes sooner).
    pub jwks_refresh: Duration,
    /// Accepted signing algorithms (`RS256`, `ES256`, ...).
    pub algorithms: &'static [&'static str],
    /// Accepted `typ` header values (RFC 9068 says `at+jwt`); empty: any.
    pub token_types: &'static [&'static str],
    /// Scopes every request needs.
    pub required_scopes: &'static [&'static str],
    /// Further scopes per JSON-RPC method (`tools/call`, `tools/list`, ...).
    pub method_scopes: &'static [(&'static str, &'static [&'static str])],
    /// Clock skew allowed on `exp` and `nbf`.
    pub leeway: Duration,
}

/// Where a JWKS (JSON Web Key Set) is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JwksSource {
    /// A file, read at start.
    File(&'static str),
    /// An `https` (or loopback `http`) URL, fetched at start and refreshed.
    Url(&'static str),
}

/// One served tool.
#[derive(Debug)]
pub struct ToolSpec {
    /// MCP tool name.
    pub name: &'static str,
    /// Human title (`annotations.title`).
    pub title: &'static str,
    /// Description sent to clients.
    pub description: &'static str,
    /// The command's tags, in declaration order.
    pub tags: &'static [&'static str],
    /// Behaviour hints; only hints that are `true` are sent.
    pub hints: Hints,
    /// The tag that gates calls behind the user's approval, when gated.
    pub confirm: Option<&'static str>,
    /// The input schema, as JSON text.
    pub input_schema: &'static str,
    /// Parameters the user answers instead of the model (`expose.agent.mcp.ask`), asked in this
    /// order before the command runs; they are not in [`ToolSpec::input_schema`].
    pub questions: &'static [QuestionSpec],
    /// What a call runs.
    pub run: Run,
}

/// One question of a tool (`expose.agent.mcp.ask`): parameters of the command that the user
/// answers in one elicitation form before the command runs (docs/runtime.md, "Questions").
#[derive(Debug, Clone, Copy)]
pub struct QuestionSpec {
    /// The question's name: the key of its MRTR `inputRequests` entry.
    pub name: &'static str,
    /// The parameters it asks for, in form order.
    pub params: &'static [&'static str],
    /// The form's `requestedSchema` (JSON text): the parameters' own types, descriptions,
    /// defaults and enums.
    pub form: &'static str,
}

impl ToolSpec {
    /// A built-in tool with the operator's settings: its name, description and schema are the
    /// contract's [`Descriptor`], and it is read-only.
    pub const fn builtin(builtin: Builtin, confirm: Option<&'static str>) -> ToolSpec {
        let descriptor = builtin.descriptor();
        ToolSpec {
            name: descriptor.name,
            title: descriptor.name,
            description: descriptor.description,
            tags: &[],
            hints: Hints {
                read_only: true,
                ..Hints::NONE
            },
            confirm,
            input_schema: descriptor.input_schema,
            questions: &[],
            run: Run::Builtin(builtin),
        }
    }
}

/// MCP tool annotation hints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Hints {
    /// `readOnlyHint`.
    pub read_only: bool,
    /// `destructiveHint`.
    pub destructive: bool,
    /// `idempotentHint`.
    pub idempotent: bool,
    /// `openWorldHint`.
    pub open_world: bool,
    /// The command says it only adds (`ai:additive`): `destructiveHint: false` is sent when
    /// [`Hints::destructive`] is off.
    pub additive: bool,
}

impl Hints {
    /// No hints: nothing is sent.
    pub const NONE: Hints = Hints {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
        additive: false,
    };

    /// These hints and `readOnlyHint`.
    pub const fn read_only(self) -> Self {
        Self {
            read_only: true,
            ..self
        }
    }

    /// These hints and `destructiveHint`.
    pub const fn destructive(self) -> Self {
        Self {
            destructive: true,
            ..self
        }
    }

    /// These hints and `idempotentHint`.
    pub const fn idempotent(self) -> Self {
        Self {
            idempotent: true,
            ..self
        }
    }

    /// These hints and `openWorldHint`.
    pub const fn open_world(self) -> Self {
        Self {
            open_world: true,
            ..self
        }
    }

    /// These hints and `destructiveHint: false` (`ai:additive`).
    pub const fn additive(self) -> Self {
        Self {
            additive: true,
            ..self
        }
    }
}

/// What a tool call runs.
#[derive(Debug, Clone, Copy)]
pub enum Run {
    /// A leaf command of the application.
    Command(Command),
    /// A tool the server implements itself (`harness.tools`, `harness.knowledge`).
    Builtin(Builtin),
}

/// A built-in tool and its settings. The tool's name, description and input schema are those of
/// fiskgen's `builtin.rs`; the runtime validates arguments itself. Everything is
/// const-constructible, as generated code holds it in statics:
///
/// ```
/// use std::time::Duration;
/// use fiskgen_runtime::__private::*;
///
/// static KNOWLEDGE: KnowledgeSpec = KnowledgeSpec {
///     directory: None,
///     top_k: 5,
///     max_injected_tokens: 6000,
///     embeddings: Some(EmbeddingsSpec {
///         base_url: "http://127.0.0.1:1234/v1",
///         model: "text-embedding-embeddinggemma-300m",
///         api_key_env: Some("RAG_EMBED_KEY"),
///         timeout: Duration::from_secs(30),
///         query_prefix: "",
///         document_prefix: "",
///     }),
///     paths: &["docs"],
/// };
///
/// static READ_FILE: ToolSpec = ToolSpec {
///     name: "read_file",
///     title: "read_file",
///     description: "Read a text file below the server's allowed directories.",
///     tags: &[],
///     hints: Hints { read_only: true, destructive: false, idempotent: false, open_world: false, additive: false },
///     confirm: Some("ai:confirm"),
///     input_schema: r#"{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}"#,
///     questions: &[],
///     run: Run::Builtin(Builtin::ReadFile(FileAccess { roots: &["docs"], max_bytes: None })),
/// };
///
/// static KNOWLEDGE_SEARCH: ToolSpec = ToolSpec {
///     name: "knowledge_search",
///     title: "knowledge_search",
///     description: "Search the knowledge base before guessing.",
///     tags: &[],
///     hints: Hints::NONE,
///     confirm: None,
///     input_schema: r#"{"type":"object","properties":{"query":{"type":"string"}}}"#,
///     questions: &[],
///     run: Run::Builtin(Builtin::KnowledgeSearch(&KNOWLEDGE)),
/// };
/// # assert_eq!(KNOWLEDGE_SEARCH.name, "knowledge_search");
/// # assert_eq!(READ_FILE.name, "read_file");
/// ```
#[derive(Debug, Clone, Copy)]
pub enum Builtin {
    /// `read_file`: a text file below the roots, 64 KiB per call, with offset/length paging.
    ReadFile(FileAccess),
    /// `base64_encode`: a text, or a file below the roots.
    Base64Encode(FileAccess),
    /// `knowledge_search`: ranked, cited chunks of the knowledge index.
    KnowledgeSearch(&'static KnowledgeSpec),
    /// `knowledge_read`: one chunk by its citation.
    KnowledgeRead(&'static KnowledgeSpec),
    /// `knowledge_list`: the indexed documents.
    KnowledgeList(&'static KnowledgeSpec),
    /// `knowledge_enumerate`: which documents contain the query's words, complete and unranked.
    KnowledgeEnumerate(&'static KnowledgeSpec),
}

impl Builtin {
    /// What clients are told about it (`fiskgen-contract`, shared with the generator).
    pub const fn descriptor(&self) -> Descriptor {
        match self {
            Builtin::ReadFile(_) => builtins::READ_FILE,
            Builtin::Base64Encode(_) => builtins::BASE64_ENCODE,
            Builtin::KnowledgeSearch(_) => builtins::KNOWLEDGE_SEARCH,
            Builtin::KnowledgeRead(_) => builtins::KNOWLEDGE_READ,
            Builtin::KnowledgeList(_) => builtins::KNOWLEDGE_LIST,
            Builtin::KnowledgeEnumerate(_) => builtins::KNOWLEDGE_ENUMERATE,
        }
    }

    /// The MCP tool name (as fiskgen names it).
    pub const fn name(&self) -> &'static str {
        self.descriptor().name
    }

    /// The knowledge settings of a knowledge tool.
    pub const fn knowledge(&self) -> Option<&'static KnowledgeSpec> {
        match self {
            Builtin::KnowledgeSearch(spec)
            | Builtin::KnowledgeRead(spec)
            | Builtin::KnowledgeList(spec)
            | Builtin::KnowledgeEnumerate(spec) => Some(*spec),
            Builtin::ReadFile(_) | Builtin::Base64Encode(_) => None,
        }
    }
}

/// Where a file built-in may read (one `harness.tools` entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileAccess {
    /// Directories the tool may read below; relative ones resolve against the server's working
    /// directory. Empty: the working directory itself.
    pub roots: &'static [&'static str],
    /// Largest file the tool accepts, in bytes. `None`: no limit for `read_file` (it pages),
    /// 1 MiB for `base64_encode`.
    pub max_bytes: Option<u64>,
}

/// `harness.knowledge`, shared by the knowledge tools (emit one static and point all three at
/// it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnowledgeSpec {
    /// The index directory (holding `knowledge.db`); relative paths resolve against the server's
    /// working directory. `None`: `knowledge/<identity>`.
    pub directory: Option<&'static str>,
    /// Default number of search results (1-20; 0 means the default, 5).
    pub top_k: u32,
    /// Content budget of one search answer in tokens, counted as 4 bytes each (0 means the
    /// default, 6000).
    pub max_injected_tokens: u64,
    /// The vector tier, when configured.
    pub embeddings: Option<EmbeddingsSpec>,
    /// `harness.knowledge.paths`: what `<binary> knowledge index` walks when given no path.
    pub paths: &'static [&'static str],
}

/// `harness.knowledge.embeddings`: an OpenAI-compatible embeddings endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmbeddingsSpec {
    /// Base URL; requests go to `<base_url>/embeddings`. `http` only for loopback hosts.
    pub base_url: &'static str,
    /// Model name, sent with every request and pinned in the index.
    pub model: &'static str,
    /// Environment variable holding the API key (sent as a bearer token), if any.
    pub api_key_env: Option<&'static str>,
    /// HTTP timeout of one request.
    pub timeout: Duration,
    /// Prepended to queries before embedding.
    pub query_prefix: &'static str,
    /// Prepended to chunks before embedding; `{title}` is replaced by the chunk's section.
    pub document_prefix: &'static str,
}
