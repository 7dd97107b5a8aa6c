//! The config file: Fisk AI's format (every file `fisk mcp` accepts) plus fiskgen's additions
//! under `expose.agent.mcp`.
//!
//! Parsing is strict: unknown keys, duplicate keys, wrong types and invalid values are all
//! collected and reported together, each with its key path, line and column and, for unknown
//! keys, the nearest valid key (or where the key belongs). Keys that only Fisk AI's agent mode
//! reads are accepted, validated as Fisk AI validates them, and ignored with a single note.
//! `docs/config.md` is the reference for every key.
//!
//! Layout: `yaml` turns the text into a tree whose nodes know their line and column; `reader`
//! walks mappings against key tables and reads typed values; `schema` holds the key tables (one
//! per level of the file, the single list of valid keys), `values` and `lists` read single
//! keys and nested blocks, `checks` applies the rules that span several keys; all of them fill the
//! `draft` (which knows none of them, so the modules import in one direction). Go durations, the
//! defaults and the identity rule come from `fiskgen-contract`, which generated servers share;
//! `suggest` finds the nearest name for "did you mean".

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use crate::ir::{
    AuthConfig, CatalogMode, ConfirmMode, EmbeddingsConfig, HeaderAuthConfig, Hint, JwksConfig,
    KnowledgeConfig, OAuthConfig, SecretSource, TelemetryConfig,
};
pub use auth::JWT_ALGORITHMS;

mod ask;
mod auth;
mod auth_draft;
mod checks;
mod draft;
mod lists;
mod names;
mod reader;
mod schema;
#[cfg(test)]
mod tests;
mod values;
mod yaml;

/// The built-in tools `harness.tools` can enable.
pub const HARNESS_TOOLS: [&str; 2] = ["read_file", "base64_encode"];

/// The knowledge tools (`harness.knowledge`), the only names `expose.agent.mcp.builtins` takes.
pub const KNOWLEDGE_TOOLS: [&str; 4] = [
    "knowledge_search",
    "knowledge_read",
    "knowledge_list",
    "knowledge_enumerate",
];

/// Reads and validates a config file.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&text, path),
        Err(error) => Err(ConfigError::unreadable(path, error)),
    }
}

/// Parses and validates config text; `source` names the file in messages and becomes
/// [`Config::source`]. Every problem in the text is reported, in file order.
pub fn parse(text: &str, source: &Path) -> Result<Config, ConfigError> {
    let root = match yaml::load(text) {
        Ok(root) => root,
        Err(error) => {
            let problem = Problem {
                path: String::new(),
                line: error.pos.line,
                column: error.pos.column,
                message: error.message,
                help: None,
            };
            return Err(ConfigError::invalid(source, vec![problem]));
        }
    };
    let (config, mut problems) = schema::read(root.as_ref(), source);
    if problems.is_empty() {
        return Ok(config);
    }
    problems.sort_by_key(|problem| (problem.line, problem.column));
    Err(ConfigError::invalid(source, problems))
}

/// One thing wrong with a config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The key path it concerns, e.g. `expose.agent.mcp.tool_timeout` or `include.tools[2]`
    /// (empty for YAML syntax errors).
    pub path: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// How to fix it, when there is something useful to say (one hint per line).
    pub help: Option<String>,
}

/// Why a config could not be loaded: the file is unreadable, or it has problems (all of them).
///
/// Displays one problem per line as `<file>:<line>:<col>: <message>`, each followed by an
/// indented `help: ...` line when there is a hint.
#[derive(Debug, thiserror::Error)]
pub struct ConfigError {
    /// The config file.
    pub file: PathBuf,
    /// Every problem found, in file order (empty when the file could not be read).
    pub problems: Vec<Problem>,
    /// Why the file could not be read, if that is what failed.
    ///
    /// Part of the message and deliberately not a `source()`, so a report that prints the
    /// whole chain says the OS error once.
    pub read_error: Option<std::io::Error>,
}

impl ConfigError {
    fn unreadable(file: &Path, error: std::io::Error) -> Self {
        ConfigError {
            file: file.to_path_buf(),
            problems: Vec::new(),
            read_error: Some(error),
        }
    }

    fn invalid(file: &Path, problems: Vec<Problem>) -> Self {
        ConfigError {
            file: file.to_path_buf(),
            problems,
            read_error: None,
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(error) = &self.read_error {
            return write!(
                f,
                "reading config {:?}: {error}",
                self.file.display().to_string()
            );
        }
        let file = self.file.display();
        for (index, problem) in self.problems.iter().enumerate() {
            if index > 0 {
                writeln!(f)?;
            }
            write!(
                f,
                "{file}:{}:{}: {}",
                problem.line, problem.column, problem.message
            )?;
            for help in problem.help.iter().flat_map(|help| help.lines()) {
                write!(f, "\n  help: {help}")?;
            }
        }
        Ok(())
    }
}

/// A loaded and validated config file.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file the config was read from.
    pub source: PathBuf,
    /// MCP server name and the generated binary's name (`<identity>-mcp`): the explicit
    /// `identity`, else the base name of `application_path`, else `fisk`.
    pub identity: String,
    /// Whether `identity` was set explicitly in the file.
    pub identity_explicit: bool,
    /// The application binary as written in the file (unresolved).
    pub application_path: Option<String>,
    /// Allowlisted global flags: trimmed, leading dashes stripped, empties dropped, de-duplicated.
    pub global_flags: Vec<String>,
    /// Top-level `include` filter.
    pub include: ToolFilter,
    /// Top-level `exclude` filter.
    pub exclude: ToolFilter,
    /// `expose.agent.tools.include`.
    pub expose_include: ToolFilter,
    /// `expose.agent.tools.exclude`.
    pub expose_exclude: ToolFilter,
    /// The parts of `harness` that serving reads.
    pub harness: Harness,
    /// `expose.agent.mcp`: `None` when the block is absent (building a server needs it).
    pub mcp: Option<McpConfig>,
    /// `telemetry`: OpenTelemetry export of the server's calls (docs/telemetry.md).
    pub telemetry: TelemetryConfig,
    /// Remarks about the file that are not errors, one sentence each without a `note:`
    /// prefix (today: the agent-only keys that are present and ignored).
    pub notes: Vec<String>,
}

/// A tool filter: a tool matches when any pattern finds a match anywhere in its name, or when
/// any tag equals one of its tags (`""` matches untagged tools). The type the drift verdict
/// shares with generated servers.
pub use fiskgen_contract::surface::Filter as ToolFilter;

/// `harness`: confirmation tags, built-in tools and knowledge, and the agent-only switches whose
/// tools are never served but deserve a note.
#[derive(Debug, Clone, Default)]
pub struct Harness {
    /// Extra confirmation tags (trimmed, empties dropped, de-duplicated).
    pub confirm_tags: Vec<String>,
    /// `harness.tools`: enabled built-in tools, in file order.
    pub tools: Vec<BuiltinToolConfig>,
    /// `harness.knowledge`.
    pub knowledge: KnowledgeConfig,
    /// `harness.human_in_the_loop.enabled`.
    pub human_in_the_loop: bool,
    /// `harness.memory.enabled`.
    pub memory: bool,
}

/// One `harness.tools` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltinToolConfig {
    /// `read_file` or `base64_encode`.
    pub name: String,
    /// Gate every call like an `ai:confirm` command.
    pub confirm: bool,
    /// Directories the tool may read below (default: the server's working directory).
    pub roots: Vec<String>,
    /// Largest file the tool reads, in bytes (`None`: the tool's default).
    pub max_bytes: Option<u64>,
}

/// One question of `expose.agent.mcp.ask`: parameters of a tool that the user answers in one
/// form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// Its name (the key of its `inputRequests` entry).
    pub name: String,
    /// The parameters it asks for, in form order.
    pub params: Vec<String>,
}

/// `expose.agent.mcp`: the on-switch for serving, and everything fixed at build time.
#[derive(Debug, Clone, PartialEq)]
pub struct McpConfig {
    /// Listen port (`None`: 8080 unless a flag or `FISK_AI_MCP_PORT` says otherwise).
    pub port: Option<u16>,
    /// Bind address (`None`: 127.0.0.1 unless overridden).
    pub address: Option<String>,
    /// Sent in the initialize result when non-empty.
    pub instructions: Option<String>,
    /// `confirm_over_mcp`.
    pub confirm: ConfirmMode,
    /// Fisk AI's `builtins` allowlist (knowledge tool names); empty means no narrowing.
    pub builtins: Vec<String>,
    /// Global concurrency limit (default 2, at most 1024).
    pub max_concurrent_tools: u32,
    /// Per-call timeout (default 30 s).
    pub tool_timeout: Duration,
    /// fiskgen: app tag -> hints it turns on (e.g. `impact:ro: read_only`).
    pub hint_tags: BTreeMap<String, Vec<Hint>>,
    /// fiskgen: tool -> parameter -> the HTTP header its value is mirrored in (SEP-2243
    /// `x-mcp-header`; the client sends `Mcp-Param-<header>`).
    pub param_headers: BTreeMap<String, BTreeMap<String, String>>,
    /// fiskgen: tool -> its questions, in the order written: parameters the user answers, not
    /// the model (`ask`).
    pub ask: BTreeMap<String, Vec<Question>>,
    /// fiskgen: extra `Host` header values accepted (reverse proxies).
    pub allowed_hosts: Vec<String>,
    /// fiskgen: extra `Origin` header values accepted.
    pub allowed_origins: Vec<String>,
    /// fiskgen: authentication of HTTP requests (token, header, OAuth).
    pub auth: Option<AuthConfig>,
    /// fiskgen: serve without sessions (replicas behind a load balancer).
    pub stateless: bool,
    /// fiskgen: extra environment variables scrubbed from every child process.
    pub scrub_env: Vec<String>,
    /// fiskgen: long calls as tasks (the tasks extension); `None` when switched off
    /// (`tasks: false`).
    pub tasks: Option<TaskConfig>,
    /// fiskgen: serve the tools' help and the cheat sheets as resources (docs/resources.md).
    pub resources: bool,
    /// fiskgen: serve the cheats as prompts.
    pub prompts: bool,
    /// fiskgen: serve the cheats as skills (the Skills extension, SEP-2640).
    pub skills: bool,
    /// fiskgen, deprecated: items per page of `resources/list`, `resources/templates/list` and
    /// `prompts/list` only, over `page_size` (docs/config.md); `None` when unset.
    pub list_page_size: Option<usize>,
    /// fiskgen: command tools return `structuredContent` (default on).
    pub structured_output: bool,
    /// fiskgen: command tools also declare it as an `outputSchema` in `tools/list` (default
    /// off: the same schema on every tool, a third of the list's bytes).
    pub output_schema: bool,
    /// fiskgen: items per page of every list (`tools/list`, `resources/list`,
    /// `resources/templates/list`, `prompts/list`; default 256).
    pub page_size: usize,
    /// fiskgen: a command that exits non-zero (or is killed by a signal) answers
    /// `isError: true` (default off: the exit status is part of a normal result).
    pub exit_code_is_error: bool,
    /// fiskgen: `tasks.required`, the tools that run only as tasks, each where it is written
    /// (checked against the served tools when the application is known).
    pub task_required: Vec<Located>,
    /// fiskgen: how `tools/list` presents the tools (`catalog: list|search`).
    pub catalog: CatalogMode,
    /// fiskgen: tags under this prefix are groups too (`group_tag_prefix`), served at
    /// `/mcp/<group>` like the command groups.
    pub group_tag_prefix: Option<String>,
    /// fiskgen: put before the name of every command tool (`tool_prefix`; `""`: none).
    /// Built-in tools keep their names.
    pub tool_prefix: String,
    /// fiskgen: per-tool renames (`tool_names`), in file order: the tool's own name (the
    /// command path joined with `_`, as every other key names it, with where it is written)
    /// and the exact name served instead (the prefix is not added to it).
    pub tool_names: Vec<(Located, String)>,
    /// fiskgen: serve names over 64 characters (`allow_long_names`; default off: such a name
    /// fails the build, since Claude's API and other clients refuse it).
    pub allow_long_names: bool,
}

/// A string of the config with where it is written, for errors found after parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The string.
    pub text: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

/// `expose.agent.mcp.tasks`: when a call becomes a task, and how many are kept for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskConfig {
    /// A command still running this long becomes a task (for clients that declare tasks).
    pub after: Duration,
    /// How long a task may run, and how long its result is kept after it ends.
    pub ttl: Duration,
    /// Tasks held at once, running or keeping a result.
    pub max: u32,
}

impl Default for TaskConfig {
    fn default() -> Self {
        Self {
            after: fiskgen_contract::defaults::TASK_AFTER,
            ttl: fiskgen_contract::defaults::TASK_TTL,
            max: fiskgen_contract::defaults::TASK_MAX,
        }
    }
}

impl Default for McpConfig {
    fn default() -> Self {
        Self {
            port: None,
            address: None,
            instructions: None,
            confirm: ConfirmMode::Auto,
            builtins: Vec::new(),
            max_concurrent_tools: 2,
            tool_timeout: Duration::from_secs(30),
            hint_tags: BTreeMap::new(),
            param_headers: BTreeMap::new(),
            ask: BTreeMap::new(),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            auth: None,
            stateless: false,
            scrub_env: Vec::new(),
            tasks: Some(TaskConfig::default()),
            resources: true,
            prompts: true,
            skills: true,
            list_page_size: None,
            structured_output: true,
            output_schema: false,
            page_size: fiskgen_contract::listing::DEFAULT_PAGE_SIZE,
            exit_code_is_error: false,
            task_required: Vec::new(),
            catalog: CatalogMode::List,
            group_tag_prefix: None,
            tool_prefix: String::new(),
            tool_names: Vec::new(),
            allow_long_names: false,
        }
    }
}

impl Config {
    /// Environment variables to remove from every child process (besides the built-in list):
    /// the embeddings API key variable when the vector tier is on, and `scrub_env`.
    pub fn credential_env_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        let embeddings = self.harness.knowledge.embeddings.as_ref();
        if self.harness.knowledge.enabled
            && let Some(var) = embeddings.and_then(|e| e.api_key_env.clone())
        {
            names.push(var);
        }
        if let Some(mcp) = &self.mcp {
            names.extend(mcp.scrub_env.iter().cloned());
        }
        names.sort();
        names.dedup();
        names
    }

    /// The directory relative paths in the file are resolved against.
    pub fn base_dir(&self) -> &Path {
        self.source.parent().unwrap_or(Path::new("."))
    }

    /// The directory the application is introspected in: the config file's, absolute (Fisk AI's
    /// config has no key for it; `fisk mcp` runs where it is started, which for a config kept
    /// beside the application's files is that directory).
    pub fn working_dir(&self) -> PathBuf {
        let base = self.base_dir();
        let base = if base.as_os_str().is_empty() {
            Path::new(".")
        } else {
            base
        };
        std::path::absolute(base).unwrap_or_else(|_| base.to_path_buf())
    }

    /// `application_path` as the generated server runs it: a bare name as written (looked up
    /// on `PATH` when the server runs), an absolute path as written, and a relative path
    /// resolved against the config file's directory once, at build time, so the server finds
    /// the application whichever directory it is started from (a client starts a stdio
    /// server in a directory of its choosing).
    pub fn served_application_path(&self) -> Option<String> {
        let spec = self.application_path.as_deref()?;
        let path = Path::new(spec);
        if !spec.contains('/') || path.is_absolute() {
            return Some(spec.to_string());
        }
        let joined = self.working_dir().join(path);
        Some(normalize(&joined).display().to_string())
    }
}

/// `path` with `.` and `dir/..` pairs removed, without touching the file system (a `..` at the
/// start of a relative path is kept).
fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if matches!(out.components().next_back(), Some(Component::Normal(_))) {
                    out.pop();
                } else if !out.has_root() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}
