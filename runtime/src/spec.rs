//! The static description of a generated server: what fiskgen emits as data and the runtime
//! serves. Everything here is `const`-constructible so generated crates hold it in statics.

use std::time::Duration;

use crate::JsonObject;
use crate::argv::{Argv, InvalidArguments};

/// A whole generated server.
#[derive(Debug)]
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
    /// Settings fixed at build time; flags and the environment may override some of them.
    pub settings: Settings,
}

/// The application a server wraps, as it was when the server was generated.
#[derive(Debug)]
pub struct ApplicationSpec {
    /// Path to run (as configured: a bare name is looked up on PATH at run time).
    pub path: &'static str,
    /// The fisk application name.
    pub name: &'static str,
    /// The application's version, when it declares one.
    pub version: Option<&'static str>,
    /// SHA-256 of the canonical introspection document (sorted keys, no whitespace).
    pub fingerprint: &'static str,
}

/// Build-time settings of the server (`expose.agent.mcp`).
#[derive(Debug)]
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
    /// Bearer-token authentication, when configured.
    pub auth: Option<AuthSource>,
    /// Serve without sessions.
    pub stateless: bool,
    /// Environment variables removed from every child process.
    pub scrub_env: &'static [&'static str],
}

/// `confirm_over_mcp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfirmMode {
    /// Ask clients that can be asked; run ungated (with a warning) for the others.
    Auto,
    /// Refuse when the client cannot be asked.
    Always,
    /// Never ask.
    Never,
}

/// Where the bearer token is read from at start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthSource {
    /// An environment variable name.
    Env(&'static str),
    /// A file path.
    File(&'static str),
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
    /// What a call runs.
    pub run: Run,
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
}

impl Hints {
    /// No hints: nothing is sent.
    pub const NONE: Hints = Hints {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
    };
}

/// Builds a command's argv tail (everything after the program name) from a call's arguments,
/// validating them against the command's typed argument struct first.
pub type ArgvFn = fn(JsonObject) -> Result<Argv, InvalidArguments>;

/// What a tool call runs.
#[derive(Debug, Clone, Copy)]
pub enum Run {
    /// A leaf command of the application.
    Command {
        /// The command path (`["stream", "info"]`).
        command: &'static [&'static str],
        /// The generated argument handler.
        argv: ArgvFn,
    },
}
