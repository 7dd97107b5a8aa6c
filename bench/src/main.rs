//! `fiskgen-bench`: measure fiskgen's generated servers (and a peer) and write
//! `docs/benchmarks.md` and `docs/benchmarks.svg`.
//!
//! ```sh
//! cargo run --release -p fiskgen-bench -- --full [--peer-command 'fisk mcp --config {config}'] \
//!     [--previous-fiskgen serde=/tmp/fiskgen-prev/target/release/fiskgen ...]
//! cargo run -p fiskgen-bench -- --smoke --out-dir target/bench/smoke
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use fiskgen_bench::{Mode, Options};

/// Benchmark fiskgen's generated MCP servers against a peer, on this machine.
#[derive(Debug, Parser)]
#[command(name = "fiskgen-bench", version)]
struct Cli {
    /// The full run: release builds (cold and warm), demo and all-commands natscli servers.
    #[arg(long, conflicts_with = "smoke")]
    full: bool,
    /// A few iterations against the debug golden demo server, no builds (the test suite's mode).
    #[arg(long)]
    smoke: bool,
    /// Only the sizes of natscli's `tools/list` (whole, each group, catalog mode) beside the
    /// peer's, in bytes and tokens, as docs/catalogs.md's table (needs --nats-server, the peer,
    /// and `npm ci` in bench/tokens).
    #[arg(long, conflicts_with_all = ["smoke", "full"], requires = "nats_server")]
    sizes: bool,
    /// Where to write benchmarks.md and benchmarks.svg (default: docs/ for --full, nothing for
    /// --smoke).
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
    /// The peer's command, run with `sh -c`; {config}, {port} and {app} are filled in. A path to
    /// the peer's binary alone runs `PATH mcp --config {config}` and records the binary's size.
    #[arg(long, value_name = "COMMAND")]
    peer_command: Option<String>,
    /// Build the peer with this script (`build.sh OUT_BINARY`, beside Fisk AI's source) into
    /// target/bench/peer/fisk, and measure it (`fisk mcp --config {config}` unless
    /// --peer-command says otherwise).
    #[arg(long, value_name = "SCRIPT")]
    peer_build: Option<PathBuf>,
    /// The peer's MCP endpoint; {port} is filled in.
    #[arg(
        long,
        value_name = "URL",
        default_value = "http://127.0.0.1:{port}/mcp"
    )]
    peer_url: String,
    /// The Go module probed for the peer when no --peer-command is given.
    #[arg(
        long,
        value_name = "MODULE@VERSION",
        default_value = "github.com/choria-io/fisk-ai@latest"
    )]
    peer_module: String,
    /// The fiskgen binary to build with (default: cargo build --release -p fiskgen).
    #[arg(long, value_name = "PATH")]
    fiskgen: Option<PathBuf>,
    /// Measure this demo server instead of building one.
    #[arg(long, value_name = "PATH")]
    demo_server: Option<PathBuf>,
    /// Measure this all-commands natscli server instead of building one.
    #[arg(long, value_name = "PATH")]
    nats_server: Option<PathBuf>,
    /// Do not time builds; measure the servers already in target/bench (or given).
    #[arg(long)]
    skip_builds: bool,
    /// Starts per server and transport (default 25 full, 3 smoke).
    #[arg(long, value_name = "N")]
    starts: Option<usize>,
    /// Load rounds (default 3 full, 1 smoke).
    #[arg(long, value_name = "N")]
    rounds: Option<usize>,
    /// Seconds per load level and round (full; default 2).
    #[arg(long, value_name = "SECONDS")]
    seconds: Option<f64>,
    /// Warm regenerations timed per app (default 3).
    #[arg(long, value_name = "N")]
    regenerations: Option<usize>,
    /// An earlier design's fiskgen binary, as `LABEL=PATH` (or `PATH`: labelled "previous"):
    /// natscli is also built with it and measured beside ours (full mode, with builds).
    /// Repeatable: one column per design.
    #[arg(long, value_name = "[LABEL=]PATH", value_parser = previous_design)]
    previous_fiskgen: Vec<(String, PathBuf)>,
    /// A note on this run for the page's "Machine and method" (say so when the machine was
    /// busy with other work). Repeatable.
    #[arg(long, value_name = "TEXT")]
    note: Vec<String>,
}

/// `LABEL=PATH` or `PATH`.
fn previous_design(text: &str) -> Result<(String, PathBuf), String> {
    let (label, path) = match text.split_once('=') {
        Some((label, path)) if !label.is_empty() && !label.contains('/') => (label, path),
        _ => ("previous", text),
    };
    if !label
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(format!(
            "the label {label:?} may only hold letters, digits, - and _ (it names a directory)"
        ));
    }
    Ok((label.to_string(), PathBuf::from(path)))
}

/// `--sizes`: the table of docs/catalogs.md on stdout.
fn sizes(options: &Options, root: &std::path::Path) -> ExitCode {
    let measured = fiskgen_tests::apps::path(fiskgen_tests::apps::App::Nats).and_then(|app| {
        let server = options.nats_server.as_deref().unwrap_or(&app);
        fiskgen_bench::sizes::run(options, server, &app, &root.join("target/bench/sizes/work"))
    });
    match measured {
        Ok(table) => {
            println!("Tokens: {}.\n\n{table}", fiskgen_bench::sizes::TOKENIZER);
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("fiskgen-bench: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mode = if cli.smoke { Mode::Smoke } else { Mode::Full };
    let root = fiskgen_tests::apps::workspace_root();
    let mut options = Options::new(mode);
    options.out_dir = cli
        .out_dir
        .or_else(|| (mode == Mode::Full).then(|| root.join("docs")));
    if let Some(command) = &cli.peer_command {
        let (command, binary) = fiskgen_bench::peer::invocation(command);
        options.peer_command = Some(command);
        options.peer_binary = binary;
    }
    if let Some(script) = &cli.peer_build {
        let target = match std::env::var_os("CARGO_TARGET_DIR") {
            Some(dir) if !dir.is_empty() => root.join(dir),
            _ => root.join("target"),
        };
        let out = target.join("bench/peer/fisk");
        match fiskgen_bench::peer::build(script, &out) {
            Ok(binary) => {
                options.peer_command.get_or_insert_with(|| {
                    format!("'{}' mcp --config {{config}}", binary.display())
                });
                options.peer_binary = Some(binary);
            }
            Err(error) => {
                eprintln!("fiskgen-bench: {error:#}");
                return ExitCode::FAILURE;
            }
        }
    }
    options.peer_url = cli.peer_url;
    options.peer_module = cli.peer_module;
    options.fiskgen = cli.fiskgen;
    options.demo_server = cli.demo_server;
    options.nats_server = cli.nats_server;
    options.skip_builds = cli.skip_builds;
    options.starts = cli.starts;
    options.rounds = cli.rounds;
    options.seconds = cli.seconds;
    options.regenerations = cli.regenerations;
    options.previous_fiskgen = cli.previous_fiskgen;
    options.notes = cli.note;
    let _ = cli.full;
    if cli.sizes {
        return sizes(&options, &root);
    }
    match fiskgen_bench::run(&options) {
        Ok(report) => {
            print!("{}", report.markdown());
            let missing = report.missing_figures();
            if missing.is_empty() {
                ExitCode::SUCCESS
            } else {
                eprintln!("fiskgen-bench: figures missing:");
                for figure in missing {
                    eprintln!("  {figure}");
                }
                ExitCode::FAILURE
            }
        }
        Err(error) => {
            eprintln!("fiskgen-bench: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
