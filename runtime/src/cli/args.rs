//! The generated binary's flags and subcommands (clap).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};

use crate::cli::clients::Client;
use crate::cli::narrow::NarrowArgs;
use crate::duration;
use crate::logging::LogFormat;
use crate::spec::app::{CatalogMode, ConfirmMode};

/// Command-line interface of a generated MCP server.
#[derive(Debug, Parser)]
#[command(disable_help_subcommand = true)]
pub(super) struct Cli {
    /// Port to listen on [env: FISK_AI_MCP_PORT; default: the built-in setting, else 8080;
    /// 0 picks a free port]
    #[arg(long, value_name = "PORT")]
    pub(super) port: Option<u16>,
    /// Address to bind [env: FISK_AI_MCP_ADDRESS; default: the built-in setting, else
    /// 127.0.0.1]
    #[arg(long, value_name = "ADDRESS")]
    pub(super) address: Option<String>,
    /// Serve one client over stdin/stdout instead of HTTP
    #[arg(long)]
    pub(super) stdio: bool,
    /// Serve HTTP without sessions (for replicas behind a load balancer; legacy clients can
    /// then not be asked for confirmation)
    #[arg(long)]
    pub(super) stateless: bool,
    /// The application to run [default: the path compiled in; a bare name is looked up on
    /// PATH]
    #[arg(long, value_name = "PATH", global = true)]
    pub(super) application_path: Option<PathBuf>,
    /// Run the application's commands (and resolve relative paths) in this directory
    /// [default: the directory the server was started in]
    #[arg(long, value_name = "DIR", global = true)]
    pub(super) working_dir: Option<PathBuf>,
    /// Commands running at once, for all clients together (1-1024) [default: the built-in
    /// setting]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub(super) max_concurrent_tools: Option<u32>,
    /// Longest a command may run, and longest a call waits for a free slot (Go syntax: 30s,
    /// 1m30s) [default: the built-in setting]
    #[arg(long, value_name = "DURATION", value_parser = positive_duration)]
    pub(super) tool_timeout: Option<Duration>,
    /// How tools that require approval are confirmed [default: the built-in confirm_over_mcp]
    #[arg(long, value_enum, value_name = "MODE")]
    pub(super) confirm: Option<ConfirmMode>,
    /// How tools/list presents the tools: list (every tool) or search (four fixed tools:
    /// search, describe, run_read_only, run; docs/catalogs.md) [default: the built-in catalog]
    #[arg(long, value_enum, value_name = "MODE")]
    pub(super) catalog: Option<CatalogMode>,
    /// Log format on stderr
    #[arg(long, value_enum, default_value = "text", value_name = "FORMAT")]
    pub(super) log_format: LogFormat,
    /// Live HTTP sessions at most (legacy clients); further `initialize` requests fail
    #[arg(long, value_name = "N", default_value_t = 256,
          value_parser = clap::value_parser!(u64).range(1..=65_536))]
    pub(super) max_sessions: u64,
    /// An HTTP session without traffic for this long is closed (Go syntax)
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = positive_duration)]
    pub(super) session_idle_timeout: Duration,
    /// The time a client has to send a request's headers, and then as long for its body;
    /// a slower connection is closed (Go syntax)
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = positive_duration)]
    pub(super) request_timeout: Duration,
    /// Open HTTP connections of one peer address at most (of 1024 in all); raise it to 1024
    /// behind a reverse proxy, whose address every connection comes from
    #[arg(long, value_name = "N", default_value_t = 256,
          value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub(super) max_connections_per_peer: u64,
    /// Also accept this Host header (repeatable; for reverse proxies; adds to the built-in
    /// allowed_hosts)
    #[arg(long = "allowed-host", value_name = "HOST")]
    pub(super) allowed_hosts: Vec<String>,
    /// Also accept requests from this browser Origin, e.g. https://app.example.com:443
    /// (repeatable; adds to the built-in allowed_origins)
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    pub(super) allowed_origins: Vec<String>,
    /// Refuse to start when the application no longer matches what this server was built
    /// from (checked before serving; without it the check runs in the background and warns)
    #[arg(long)]
    pub(super) strict_app: bool,
    #[command(
        flatten,
        next_help_heading = "Tasks (long calls, for clients that declare them)"
    )]
    pub(super) tasks: crate::mcp::tasks::TaskArgs,
    #[command(flatten, next_help_heading = "Narrowing (only removes tools)")]
    pub(super) narrow: NarrowArgs,
    #[command(subcommand)]
    pub(super) command: Option<Sub>,
}

#[derive(Debug, Subcommand)]
pub(super) enum Sub {
    /// List the served tools
    Tools {
        /// As JSON, in the shape of the `tools` array of `fiskgen info --json`
        #[arg(long)]
        json: bool,
    },
    /// Re-introspect the application and report whether it still matches what this server was
    /// built from: exit 0 when its tools are unchanged, 1 (with the changes) when not, 2 on error
    Verify,
    /// Print a ready configuration entry for an MCP client (every client when none is named)
    Config {
        /// The client to print the entry for
        #[arg(long, value_enum, value_name = "CLIENT")]
        client: Option<Client>,
        /// Only the entry that starts this server over stdio
        #[arg(long, conflicts_with = "url")]
        stdio: bool,
        /// Only the HTTP entry, for this URL (e.g. the public URL behind a reverse proxy)
        /// [default: both, with the URL this server listens on]
        #[arg(long, value_name = "URL")]
        url: Option<String>,
    },
    /// Show what this server was generated from
    Version {
        /// As JSON
        #[arg(long)]
        json: bool,
    },
    /// Build or refresh the knowledge index that the knowledge tools search, or show its state
    Knowledge {
        #[command(subcommand)]
        command: KnowledgeCommand,
    },
    /// Print the argv (after the program) that calling TOOL with ARGUMENTS would run, as a
    /// JSON array; a validation error is printed on stderr with exit code 1
    #[command(hide = true)]
    Argv {
        /// Tool name
        tool: String,
        /// Arguments as a JSON object
        #[arg(default_value = "{}")]
        arguments: String,
    },
}

#[derive(Debug, Subcommand)]
pub(super) enum KnowledgeCommand {
    /// Index Markdown and text files: chunked by headings, unchanged files skipped, embedded
    /// when embeddings are configured
    Index {
        /// Drop the whole index (vectors included) and rebuild it from scratch
        #[arg(long)]
        reindex: bool,
        /// Also remove indexed documents no longer found under the paths (always done when no
        /// path is given)
        #[arg(long)]
        prune: bool,
        /// Files and directories to index [default: the configured harness.knowledge.paths]
        paths: Vec<PathBuf>,
    },
    /// Show where the index is, what it holds and which tier searches use
    Status,
}

fn positive_duration(text: &str) -> Result<Duration, String> {
    match duration::parse(text)? {
        Duration::ZERO => Err("must be greater than zero".into()),
        duration => Ok(duration),
    }
}
