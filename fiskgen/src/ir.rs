//! The intermediate representation: exactly what a server serves, decided once.
//!
//! [`crate::select`] builds it from the config and the introspection model; everything after
//! (`info`, the emitters) reads only this. Order is meaningful and deterministic: tools come in
//! command-tree order, then built-ins in a fixed order.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::config::Hint;
use crate::model;

/// One MCP server: the application it wraps and the tools it serves.
#[derive(Debug, Clone, Serialize)]
pub struct Server {
    /// MCP server name; the binary is `<identity>-mcp`.
    pub identity: String,
    /// The wrapped application, when the config names one.
    pub application: Option<Application>,
    /// Served tools, in serving order.
    pub tools: Vec<Tool>,
    /// The application's exposable global flags and whether each is exposed.
    pub global_flags: Vec<GlobalFlag>,
    /// The resources and prompts made from the application's own help.
    pub docs: Docs,
    /// Things the operator should know that do not stop a build.
    pub notes: Vec<String>,
    /// Things that are probably mistakes but do not stop a build.
    pub warnings: Vec<String>,
    /// Long calls as tasks (`expose.agent.mcp.tasks`), when on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Tasks>,
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
}

/// The wrapped application as introspected.
#[derive(Debug, Clone, Serialize)]
pub struct Application {
    /// `application_path` as written in the config.
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
    /// MCP tool name: the command path joined with `_`, or the built-in's name.
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
    /// The input schema sent to clients.
    pub input_schema: Map<String, Value>,
    /// What a call runs.
    #[serde(flatten)]
    pub kind: ToolKind,
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
    },
}

/// A leaf command and everything needed to turn arguments into its argv.
#[derive(Debug, Clone, Serialize)]
pub struct CommandTool {
    /// The command path (`["stream", "info"]`).
    pub command: Vec<String>,
    /// The command's own flags in declaration order, hidden ones included (fisk's argv rules
    /// know them; the schema does not offer them).
    #[serde(skip)]
    pub flags: Vec<model::Flag>,
    /// Positional arguments in declaration order.
    #[serde(skip)]
    pub args: Vec<model::Arg>,
    /// Exposed global flags that apply to this command, rendered after the command path.
    #[serde(skip)]
    pub globals: Vec<model::Flag>,
    /// The command's full `schema` from the model (bounds, formats and open string maps kept),
    /// which types the generated argument struct; empty when the model has none.
    #[serde(skip)]
    pub schema: Map<String, Value>,
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
    /// Items per page of the resource and prompt lists.
    pub page_size: u32,
    /// The resource template of a tool's help, when there is help.
    pub template: Option<String>,
    /// Each served tool's help, in serving order (empty when resources are off).
    pub help: Vec<Help>,
    /// The application's cheats that are served, by label.
    pub cheats: Vec<Cheat>,
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
