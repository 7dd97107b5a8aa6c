//! The `fiskgen` binary: parses the command line and runs the library.

mod cli;

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Parser;

use cli::{Cli, Command};
use fiskgen::{ModelSource, config, info, introspect};

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(command: Command) -> Result<()> {
    match command {
        Command::Info {
            config,
            json,
            source,
        } => {
            let plan = fiskgen::plan(&config, &source.source())?;
            let text = if json {
                info::render_json(&plan.server)?
            } else {
                info::render_text(&plan.server, terminal_width())
            };
            write_stdout(&text)
        }
        Command::Introspect {
            config,
            app,
            output,
        } => {
            let introspection = match (app, config) {
                (Some(app), config) => {
                    let scrub_env = match config {
                        Some(path) => config::load(&path)?.credential_env_names(),
                        None => Vec::new(),
                    };
                    let options = introspect::Options {
                        scrub_env,
                        ..Default::default()
                    };
                    introspect::run(&app, &options)?
                }
                (None, Some(path)) => {
                    let config = config::load(&path)?;
                    fiskgen::introspect_for(&config, &ModelSource::Configured)?.with_context(
                        || {
                            format!(
                                "{} sets no application_path; pass --app PATH",
                                path.display()
                            )
                        },
                    )?
                }
                (None, None) => anyhow::bail!("give a config file or --app PATH"),
            };
            let text = introspect::to_pretty_json(&introspection.document);
            write_output(&output, &text)
        }
    }
}

/// `COLUMNS` when the shell exports it, else 80.
fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|value| value.parse().ok())
        .filter(|width| *width >= 40)
        .unwrap_or(info::DEFAULT_WIDTH)
}

fn write_output(path: &Path, text: &str) -> Result<()> {
    if path == Path::new("-") {
        return write_stdout(text);
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

fn write_stdout(text: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        // A closed pipe (`fiskgen info | head`) is not an error worth reporting.
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("writing to stdout"),
    }
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "fiskgen=warn",
        1 => "fiskgen=debug",
        _ => "fiskgen=trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("FISKGEN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .without_time()
        .init();
}
