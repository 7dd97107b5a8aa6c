//! The intermediate representation: exactly what a server serves, decided once.
//!
//! [`crate::select`] builds it from the config and the introspection model, lowering every
//! served command once ([`crate::lower`]); everything after (`info`, `check`, the emitters)
//! reads only this. Order is meaningful and deterministic: tools come in
//! command-tree order, then built-ins in a fixed order.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::config::Hint;

mod params;

pub use params::{
    FlagRender, FlagStep, IntType, Param, ParamType, PositionalRender, PositionalStep,
};

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
    /// Things the operator should know that do not stop a build.
    pub notes: Vec<String>,
    /// Things that are probably mistakes but do not stop a build.
    pub warnings: Vec<String>,
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
    /// The input schema sent to clients, final: for a command, the restricted schema with the
    /// exposed globals and the repairs of `crate::lower`; for a built-in, its descriptor's.
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
