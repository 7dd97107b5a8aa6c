//! The intermediate representation: exactly what a server serves, decided once.
//!
//! [`crate::select`] builds it from the config and the introspection model, lowering every
//! served command once ([`crate::lower`]); everything after (`info`, `check`, the emitters)
//! reads only this. Order is meaningful and deterministic: tools come in
//! command-tree order, then built-ins in a fixed order.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use fiskgen_contract::info::{self, ToolInfo};
use fiskgen_contract::surface::Rules;

use serde::Serialize;
use serde_json::{Map, Value};

mod params;
mod values;

pub use params::{
    FlagRender, FlagStep, IntType, Param, ParamType, PositionalRender, PositionalStep,
};
pub use values::{
    AuthConfig, CatalogMode, ConfirmMode, EmbeddingsConfig, HeaderAuthConfig, Hint, JwksConfig,
    KnowledgeConfig, OAuthConfig, SecretSource, TelemetryConfig,
};

/// One MCP server: the application it wraps and the tools it serves.
#[derive(Debug, Clone, Serialize)]
pub struct Server {
    /// MCP server name; the binary is `<identity>-mcp`.
    pub identity: String,
    /// The wrapped application, when the config names one.
    pub application: Option<Application>,
    /// Served tools, in serving order; listed as [`fiskgen_contract::info::ToolInfo`], the
    /// entries `<binary> tools --json` prints.
    #[serde(serialize_with = "serialize_tools")]
    pub tools: Vec<Tool>,
    /// The application's exposable global flags and whether each is exposed.
    pub global_flags: Vec<GlobalFlag>,
    /// The resources and prompts made from the application's own help.
    pub docs: Docs,
    /// Things the operator should know that do not stop a build.
    pub notes: Vec<String>,
    /// Things that are probably mistakes but do not stop a build.
    pub warnings: Vec<String>,
    /// The warnings the server's start-up banner repeats (filter entries that match nothing,
    /// why no tool is served): mistakes an operator should see where the server runs too.
    #[serde(skip)]
    pub start_warnings: Vec<String>,
    /// Why no tool is served, when none is (`fiskgen build` refuses such a server unless
    /// asked for one with `--allow-empty`).
    #[serde(skip)]
    pub empty: Option<String>,
    /// Long calls as tasks (`expose.agent.mcp.tasks`), when on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Tasks>,
    /// The server's settings, resolved from the config.
    #[serde(skip)]
    pub settings: Settings,
}

/// What a server is configured with besides its tools, resolved once: defaults filled in, the
/// emitters, `info` and `check` read these instead of the config.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The config file's name (never its path), for documentation.
    pub config_file: String,
    /// Whether the config opts in with `expose.agent.mcp` (`fiskgen build` needs it).
    pub mcp: bool,
    /// Listen port.
    pub port: u16,
    /// Bind address.
    pub address: String,
    /// `confirm_over_mcp`.
    pub confirm: ConfirmMode,
    /// Stateless HTTP (no sessions).
    pub stateless: bool,
    /// Concurrent tool calls.
    pub max_concurrent_tools: u32,
    /// Per-call timeout.
    pub tool_timeout: Duration,
    /// Extra `Host` values accepted.
    pub allowed_hosts: Vec<String>,
    /// Extra `Origin` values accepted.
    pub allowed_origins: Vec<String>,
    /// `expose.agent.mcp.auth`.
    pub auth: Option<AuthConfig>,
    /// Sent to clients at initialization: trimmed, and `None` when empty.
    pub instructions: Option<String>,
    /// The operator's credential variables, sorted: scrubbed from every command besides the LLM
    /// providers' variables, which the runtime always scrubs.
    pub scrub_env: Vec<String>,
    /// `harness.knowledge`, read by the knowledge built-ins.
    pub knowledge: KnowledgeConfig,
    /// The serving rules (filter stages, the `global_flags` allowlist) the drift verdict
    /// applies to a new document.
    pub serving: Rules,
    /// `page_size`: tools per `tools/list` page (the resource and prompt lists' size is in
    /// [`Docs::page_size`]).
    pub page_size: usize,
    /// `structured_output`: command tools return `structuredContent`.
    pub structured_output: bool,
    /// `output_schema`: command tools declare it as an `outputSchema` in `tools/list`.
    pub output_schema: bool,
    /// `exit_code_is_error`: a non-zero exit (or a signal) answers `isError: true`.
    pub exit_code_is_error: bool,
    /// `catalog`: how `tools/list` presents the tools.
    pub catalog: CatalogMode,
    /// `group_tag_prefix`: tags under it name groups too.
    pub group_tag_prefix: Option<String>,
    /// `tool_prefix`: put before each command tool's own name (`""`: none).
    pub tool_prefix: String,
    /// `telemetry`, when `telemetry.enabled` is true: the server exports spans.
    pub telemetry: Option<TelemetryConfig>,
}

/// When calls become tasks of the tasks extension, and which tools' calls may.
#[derive(Debug, Clone, Serialize)]
pub struct Tasks {
    /// A command still running this long becomes a task, in milliseconds.
    pub after_ms: u64,
    /// How long a task may run and keeps its result, in milliseconds.
    pub ttl_ms: u64,
    /// Tasks held at once.
    pub max: u32,
    /// The tools whose calls may become tasks: the application's commands (built-in tools
    /// always answer on the request).
    pub tools: Vec<String>,
    /// The tools that run only as tasks (`tasks.required`), in serving order: a task at once
    /// for a client that declares the extension, -32021 for one that does not.
    pub required: Vec<String>,
}

/// The wrapped application as introspected.
#[derive(Debug, Clone, Serialize)]
pub struct Application {
    /// `application_path` as the server runs it (`Config::served_application_path`):
    /// a bare name or an absolute path as written, a relative one made absolute.
    pub configured_path: String,
    /// Where it was found when it was introspected.
    pub path: PathBuf,
    /// The fisk application name.
    pub name: String,
    /// The application's version, when it declares one.
    pub version: Option<String>,
}

/// A served tool.
#[derive(Debug, Clone, Serialize)]
pub struct Tool {
    /// MCP tool name, as served: for a command, its own name ([`Tool::command_name`]) with
    /// the config's `tool_prefix` before it, or its `tool_names` rename; a built-in's name.
    pub name: String,
    /// Human title: the command path joined with spaces, or the built-in's name.
    pub title: String,
    /// The description sent to clients (help, long help and a `Tags:` line).
    pub description: String,
    /// The command's tags, in declaration order (built-ins have none).
    pub tags: Vec<String>,
    /// Behaviour hints turned on by `ai:*` tags and `hint_tags`.
    pub hints: BTreeSet<HintName>,
    /// Present when calls need the user's approval first.
    pub confirm: Option<Confirm>,
    /// The input schema sent to clients, final: for a command, the restricted schema with the
    /// exposed globals and the repairs of `crate::lower`; for a built-in, its descriptor's.
    pub input_schema: Map<String, Value>,
    /// What a call runs.
    #[serde(flatten)]
    pub kind: ToolKind,
}

/// The tag that says a command changes state only by adding to it (Fisk AI's newest rule:
/// `destructiveHint: false`).
pub const ADDITIVE_TAG: &str = "ai:additive";

impl Tool {
    /// A command tool's own name, the one the config's keys use: its command path joined with
    /// `_` (`stream_info`), whatever name it is served under; `None` for a built-in.
    pub fn command_name(&self) -> Option<String> {
        match &self.kind {
            ToolKind::Command(command) => {
                Some(fiskgen_contract::surface::tool_name(&command.command))
            }
            ToolKind::Builtin { .. } => None,
        }
    }

    /// Whether the command says it only adds (`ai:additive`) and nothing marks it destructive:
    /// then `destructiveHint: false` is sent.
    pub fn additive(&self) -> bool {
        matches!(self.kind, ToolKind::Command(_))
            && self.tags.iter().any(|tag| tag == ADDITIVE_TAG)
            && !self.hints.contains(&HintName(Hint::Destructive))
    }

    /// The tool as `fiskgen info --json` and `<binary> tools --json` list it.
    pub fn info(&self) -> ToolInfo {
        let has = |hint: Hint| self.hints.contains(&HintName(hint));
        ToolInfo {
            name: self.name.clone(),
            own_name: self.command_name().filter(|own| *own != self.name),
            title: self.title.clone(),
            description: self.description.clone(),
            tags: self.tags.clone(),
            hints: info::hint_names(
                [
                    has(Hint::ReadOnly),
                    has(Hint::Destructive),
                    has(Hint::Idempotent),
                    has(Hint::OpenWorld),
                ],
                self.additive(),
            ),
            confirm: self.confirm.as_ref().map(|confirm| info::Confirm {
                trigger: confirm.trigger.clone(),
            }),
            input_schema: self.input_schema.clone(),
            questions: match &self.kind {
                ToolKind::Command(command) => command
                    .questions
                    .iter()
                    .map(|question| info::Question {
                        name: question.name.clone(),
                        params: question.params.clone(),
                    })
                    .collect(),
                ToolKind::Builtin { .. } => Vec::new(),
            },
            kind: match &self.kind {
                ToolKind::Command(command) => info::Kind::Command {
                    command: command.command.clone(),
                },
                ToolKind::Builtin { builtin, .. } => info::Kind::Builtin {
                    builtin: builtin.name().to_string(),
                },
            },
        }
    }
}

/// [`Server::tools`] as [`ToolInfo`] entries.
fn serialize_tools<S: serde::Serializer>(tools: &[Tool], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(tools.iter().map(Tool::info))
}

/// A hint, serialised by its config name (`read_only`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct HintName(pub Hint);

impl Serialize for HintName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0.name())
    }
}

/// Why a tool is confirm-gated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Confirm {
    /// The tag that triggers the gate: `ai:confirm` when present, else the first of the tool's
    /// own tags that is listed in `harness.confirm_tags`.
    pub trigger: String,
}

/// What a tool runs.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolKind {
    /// A leaf command of the application.
    Command(CommandTool),
    /// A tool implemented by the server itself.
    Builtin {
        /// Which one.
        builtin: Builtin,
        /// Where a file built-in may read (`harness.tools`); empty for the knowledge tools,
        /// whose settings are [`Settings::knowledge`].
        #[serde(skip)]
        access: FileAccess,
    },
}

/// A leaf command, lowered: its typed parameters and the plan that turns them into its argv.
#[derive(Debug, Clone, Serialize)]
pub struct CommandTool {
    /// The command path (`["stream", "info"]`).
    pub command: Vec<String>,
    /// One per property of the tool's input schema: exposed globals, then flags, then
    /// positional arguments, each in declaration order (an argument that shares a flag's name
    /// is the flag's parameter).
    #[serde(skip)]
    pub params: Vec<Param>,
    /// Flags in argv order: exposed globals, then the command's own flags.
    #[serde(skip)]
    pub flags: Vec<FlagStep>,
    /// Positional arguments in declaration order, up to the last one a client can set (hidden
    /// ones before it included, filled from their defaults).
    #[serde(skip)]
    pub positionals: Vec<PositionalStep>,
    /// Parameters the user answers, not the model (`expose.agent.mcp.ask`), by question, in
    /// order; they are not in the advertised input schema.
    #[serde(skip)]
    pub questions: Vec<Question>,
}

/// One question of a tool (`expose.agent.mcp.ask`): parameters the user answers in one form.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// Its name (the key of its MRTR `inputRequests` entry).
    pub name: String,
    /// The parameters it asks for.
    pub params: Vec<String>,
    /// The elicitation form (`requestedSchema`).
    pub form: Map<String, Value>,
}

/// Where a file built-in may read (one `harness.tools` entry).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileAccess {
    /// Directories below which it reads; empty: the working directory.
    pub roots: Vec<String>,
    /// The largest file, in bytes.
    pub max_bytes: Option<u64>,
}

/// The built-in tools fiskgen can serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Builtin {
    /// Read a text file below the configured roots.
    ReadFile,
    /// Base64-encode a text or a file.
    Base64Encode,
    /// Search the knowledge index.
    KnowledgeSearch,
    /// Read a cited chunk of the knowledge index.
    KnowledgeRead,
    /// List the indexed documents.
    KnowledgeList,
    /// Which indexed documents contain the query's words, complete and unranked.
    KnowledgeEnumerate,
}

/// An application-level flag that can be exposed to clients with `global_flags`.
#[derive(Debug, Clone, Serialize)]
pub struct GlobalFlag {
    /// Long name without `--`.
    pub name: String,
    /// Help text.
    pub help: String,
    /// Offered to clients as a property of every tool that does not shadow it.
    pub exposed: bool,
    /// Required by the application (then always exposed).
    pub required: bool,
}

/// The resources and prompts made from the application's own help (docs/resources.md).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Docs {
    /// `expose.agent.mcp.resources`: the help and the cheat sheets are resources.
    pub resources: bool,
    /// `expose.agent.mcp.prompts`: the cheats are prompts.
    pub prompts: bool,
    /// `expose.agent.mcp.skills`: the cheats are skills (SEP-2640).
    pub skills: bool,
    /// Items per page of the resource and prompt lists.
    pub page_size: u32,
    /// The resource template of a tool's help, when there is help.
    pub template: Option<String>,
    /// Each served tool's help, in serving order (empty when resources are off).
    pub help: Vec<Help>,
    /// The application's cheats that are served, by label.
    pub cheats: Vec<Cheat>,
    /// The application's overview, served as a skill before the cheats' (when skills are on and
    /// the application has no cheat of its own).
    pub overview: Option<Overview>,
}

/// The application's overview as a skill: its help, its served commands, its cheats' skills.
#[derive(Debug, Clone, Serialize)]
pub struct Overview {
    /// The application's name (the skill is named after it).
    pub label: String,
    /// The first line of the application's help.
    pub description: String,
    /// The Markdown.
    #[serde(skip)]
    pub text: String,
}

/// One tool's help as a Markdown resource.
#[derive(Debug, Clone, Serialize)]
pub struct Help {
    /// The tool.
    pub tool: String,
    /// Its URI.
    pub uri: String,
    /// The resource's title (the command path or the built-in's name).
    pub title: String,
    /// Its first help line.
    pub summary: String,
    /// The Markdown.
    #[serde(skip)]
    pub markdown: String,
}

/// One cheat of the application: a cheat sheet resource and a prompt.
#[derive(Debug, Clone, Serialize)]
pub struct Cheat {
    /// Its label (the prompt's name).
    pub label: String,
    /// Its URI, when resources are on.
    pub uri: Option<String>,
    /// What it is about (its first comment line).
    pub description: String,
    /// The served tool it belongs to.
    pub tool: Option<String>,
    /// Its placeholders, the prompt's arguments.
    pub arguments: Vec<CheatArgument>,
    /// The cheat's text.
    #[serde(skip)]
    pub text: String,
}

/// A placeholder of a cheat.
#[derive(Debug, Clone, Serialize)]
pub struct CheatArgument {
    /// Its name.
    pub name: String,
    /// What to fill in.
    pub description: String,
    /// Completion values (enum values and completion hints of the flag or argument of the same
    /// name).
    pub values: Vec<String>,
}
