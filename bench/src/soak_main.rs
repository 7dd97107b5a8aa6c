//! `fiskgen-soak`: the fault soak (bench/src/soak) against the generated fixture server.
//!
//! ```sh
//! cargo build --workspace --bins && cargo run -p fiskgen-bench --bin fiskgen-soak -- --full
//! ```
//!
//! `--full` (10,000 calls) writes its figures into docs/reliability.md between the soak
//! markers; `--smoke` (300 calls) is what the default tests run.

use std::fs;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Parser;
use fiskgen_bench::soak::{self, SoakOptions, SoakReport};

/// Where docs/reliability.md holds the latest full run.
const BEGIN: &str = "<!-- soak:begin (written by fiskgen-soak --full) -->";
const END: &str = "<!-- soak:end -->";

/// Run thousands of MCP calls with faults against a generated server, and check every one.
#[derive(Debug, Parser)]
#[command(name = "fiskgen-soak", version)]
struct Cli {
    /// The full run (10,000 calls, 1 GiB floods, three restarts); writes docs/reliability.md.
    #[arg(long, conflicts_with = "smoke")]
    full: bool,
    /// A few hundred calls in seconds (what the default tests run).
    #[arg(long)]
    smoke: bool,
    /// Calls in all, instead of the mode's count.
    #[arg(long, value_name = "N")]
    calls: Option<usize>,
    /// Do not write docs/reliability.md.
    #[arg(long)]
    no_write: bool,
}

fn write_docs(report: &SoakReport) -> Result<()> {
    let path = fiskgen_tests::apps::workspace_root().join("docs/reliability.md");
    let text = fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let (before, rest) = text
        .split_once(BEGIN)
        .with_context(|| format!("{} has no soak marker {BEGIN}", path.display()))?;
    let (_, after) = rest
        .split_once(END)
        .with_context(|| format!("{} has no soak marker {END}", path.display()))?;
    let updated = format!("{before}{BEGIN}\n{}{END}{after}", report.markdown());
    fs::write(&path, updated).with_context(|| format!("writing {}", path.display()))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut options = if cli.smoke {
        SoakOptions::smoke()
    } else {
        SoakOptions::full()
    };
    if let Some(calls) = cli.calls {
        options.calls = calls;
    }
    let _ = cli.full;
    let report = match soak::run(&options) {
        Ok(report) => report,
        Err(error) => {
            eprintln!("fiskgen-soak: error: {error:#}");
            return ExitCode::FAILURE;
        }
    };
    print!("{}", report.markdown());
    let problems = report.problems();
    if !problems.is_empty() {
        eprintln!("fiskgen-soak: {} problem(s):", problems.len());
        for problem in &problems {
            eprintln!("  {problem}");
        }
        return ExitCode::FAILURE;
    }
    if !cli.smoke
        && !cli.no_write
        && cli.calls.is_none()
        && let Err(error) = write_docs(&report)
    {
        eprintln!("fiskgen-soak: error: {error:#}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
