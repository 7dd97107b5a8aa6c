//! The command line of the `fiskgen` binary (clap derive; help text from doc comments).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Generate a standalone MCP server for a fisk command-line application.
#[derive(Debug, Parser)]
#[command(name = "fiskgen", version, about, max_term_width = 100)]
pub(crate) struct Cli {
    /// Log more (repeat for even more): -v shows the application's stderr during introspection.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub(crate) verbose: u8,
    /// What to do.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// fiskgen's subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Show exactly the tools a server built from CONFIG would serve.
    Info {
        /// The config file (Fisk AI format).
        config: PathBuf,
        /// Print JSON for scripts instead of a table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        source: SourceArgs,
    },
    /// Generate the Rust crate of CONFIG's MCP server into a directory.
    ///
    /// Only files whose content changed are rewritten; tool modules that are no longer served
    /// are removed.
    Generate(GenerateArgs),
    /// Generate and compile CONFIG's MCP server into one binary (./<identity>-mcp).
    ///
    /// Builds share one target directory (FISKGEN_TARGET_DIR or <user cache dir>/fiskgen/target),
    /// so a second application or a regeneration recompiles only the generated crate.
    Build(BuildArgs),
    /// Build CONFIG's server and pack it as an MCP Bundle (.mcpb) for Claude Desktop.
    ///
    /// The bundle, <binary>.mcpb beside the binary (docs/install.md), holds the binary and a manifest.json naming the server, its tools and what
    /// the user must set (the application's path); the application itself is not bundled.
    Bundle(BuildArgs),
    /// Exit 1 with a readable diff when what the server would serve changed since generation.
    ///
    /// Exit status: 0 nothing served changed, 1 drift, 2 error.
    Check(CheckArgs),
    /// Save the application's introspection document as stable, pretty JSON.
    Introspect {
        /// The config file whose application_path to introspect (or use --app).
        #[arg(required_unless_present = "app")]
        config: Option<PathBuf>,
        /// Introspect this binary instead of the config's application_path.
        #[arg(long, value_name = "PATH")]
        app: Option<PathBuf>,
        /// Where to write the document (`-` for stdout).
        #[arg(short, long, value_name = "FILE", default_value = "-")]
        output: PathBuf,
    },
}

/// Options of `fiskgen generate`.
#[derive(Debug, Args)]
pub(crate) struct GenerateArgs {
    /// The config file (Fisk AI format).
    pub(crate) config: PathBuf,
    /// The directory to write the crate into (created if missing).
    #[arg(short, long, value_name = "DIR")]
    pub(crate) output: PathBuf,
    #[command(flatten)]
    pub(crate) source: SourceArgs,
    /// Patch the crate's fiskgen-runtime dependency to this directory, so that a plain
    /// `cargo build` works (the path is written into Cargo.toml as given).
    #[arg(long, value_name = "DIR")]
    pub(crate) runtime_path: Option<PathBuf>,
}

/// Options of `fiskgen build`.
#[derive(Debug, Args)]
pub(crate) struct BuildArgs {
    /// The config file (Fisk AI format); it must have an expose.agent.mcp block.
    pub(crate) config: PathBuf,
    /// Where to put the binary (default ./<identity>-mcp).
    #[arg(short, long, value_name = "BINARY")]
    pub(crate) output: Option<PathBuf>,
    /// The cargo target directory to build in (default FISKGEN_TARGET_DIR, else
    /// <user cache dir>/fiskgen/target).
    #[arg(long, value_name = "DIR")]
    pub(crate) target_dir: Option<PathBuf>,
    /// Generate the crate here instead of <user cache dir>/fiskgen/crates/<identity>.
    #[arg(long, value_name = "DIR")]
    pub(crate) crate_dir: Option<PathBuf>,
    /// Build the server even when it serves no tool (otherwise the build fails, saying which
    /// filter removed what).
    #[arg(long)]
    pub(crate) allow_empty: bool,
    #[command(flatten)]
    pub(crate) source: SourceArgs,
    /// Build against this fiskgen-runtime source instead of the one embedded in fiskgen
    /// (for developing the runtime).
    #[arg(long, value_name = "DIR")]
    pub(crate) runtime_path: Option<PathBuf>,
    /// Build for this target triple (any target your toolchain has: `rustup target add
    /// TRIPLE`) instead of the host's.
    #[arg(long, value_name = "TRIPLE")]
    pub(crate) target: Option<String>,
    /// Portable Linux: link against this glibc (e.g. 2.17) so the binary runs on every Linux
    /// with that glibc or newer. Needs cargo-zigbuild and Zig (docs/install.md).
    #[arg(long, value_name = "VERSION")]
    pub(crate) glibc: Option<String>,
}

/// Options of `fiskgen check`.
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// The config file the server was generated from.
    pub(crate) config: PathBuf,
    /// The saved introspection document to compare against (default: model.json next to the
    /// config, when neither --model nor --generated is given).
    #[arg(long, value_name = "FILE")]
    pub(crate) model: Option<PathBuf>,
    /// A generated crate to compare against (its model.json).
    #[arg(long, value_name = "DIR")]
    pub(crate) generated: Option<PathBuf>,
    /// Introspect this binary instead of the config's application_path.
    #[arg(long, value_name = "PATH")]
    pub(crate) app: Option<PathBuf>,
    /// Compare against this saved document instead of running the application.
    #[arg(long, value_name = "FILE", conflicts_with = "app")]
    pub(crate) current: Option<PathBuf>,
}

/// Where the application model comes from, for commands that read a config.
#[derive(Debug, Args)]
#[group(multiple = false)]
pub(crate) struct SourceArgs {
    /// Introspect this binary instead of the config's application_path.
    #[arg(long, value_name = "PATH")]
    pub(crate) app: Option<PathBuf>,
    /// Read a saved introspection document instead of running the application.
    #[arg(long, value_name = "FILE")]
    pub(crate) model: Option<PathBuf>,
}

impl SourceArgs {
    /// The library's view of these flags.
    pub(crate) fn source(&self) -> fiskgen::ModelSource {
        match (&self.app, &self.model) {
            (Some(app), _) => fiskgen::ModelSource::App(app.clone()),
            (None, Some(model)) => fiskgen::ModelSource::File(model.clone()),
            (None, None) => fiskgen::ModelSource::Configured,
        }
    }
}
