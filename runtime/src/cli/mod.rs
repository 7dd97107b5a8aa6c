//! The generated binary's command line ([`args`]) and its top level: answer the informational
//! subcommands ([`print`], [`connect`], the contract's verify), or resolve the settings
//! ([`settings`]) and serve until stopped ([`serve`]), with the start-up banner ([`banner`]),
//! client entries ([`clients`]) and run-time narrowing ([`narrow`]).

mod args;
pub(crate) mod banner;
pub(crate) mod clients;
pub(crate) mod connect;
mod error;
pub(crate) mod narrow;
mod print;
mod serve;
mod settings;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use crate::builtins;
use crate::logging;
use crate::mcp::state::server_version;
use crate::spec::app::AppSpec;
use crate::spec::verify;

use args::{Cli, KnowledgeCommand, Sub};
use connect::ConfigRequest;
use print::{print_argv, print_tools, print_version};
use settings::{listen_address, resolve_program, scrub_list};

/// The whole generated binary: `fn main() -> ExitCode { __private::main(&APP) }`.
pub fn main(app: &'static AppSpec) -> ExitCode {
    main_with_notes(app, &[])
}

/// [`main`], with lines the generator decided to print at start (for example why an enabled
/// built-in is not served); they follow the served tools in the banner.
pub fn main_with_notes(app: &'static AppSpec, notes: &'static [&'static str]) -> ExitCode {
    let name: &'static str = Box::leak(format!("{}-mcp", app.identity).into_boxed_str());
    let version: &'static str = Box::leak(
        format!("{} (fiskgen {})", server_version(app), app.fiskgen_version).into_boxed_str(),
    );
    let about: &'static str = Box::leak(
        format!(
            "MCP server for {}: serves its commands as tools over streamable HTTP or stdio",
            app.application.as_ref().map_or(app.identity, |a| a.name)
        )
        .into_boxed_str(),
    );
    let knowledge = builtins::knowledge_spec(app).ok().flatten();
    let mut command = Cli::command();
    if knowledge.is_none() {
        command = command.mut_subcommand("knowledge", |sub| sub.hide(true));
    }
    let matches = command
        .name(name)
        .bin_name(name)
        .version(version)
        .about(about)
        .get_matches();
    let mut cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
    if let Err(error) = enter_working_dir(&mut cli) {
        eprintln!("error: {error}");
        return ExitCode::from(2);
    }
    if let Err(error) = cli.narrow.check_group(app) {
        eprintln!("error: {error}");
        return ExitCode::from(2);
    }
    let narrowed = cli.narrow.apply(app);
    if !matches!(cli.command, None | Some(Sub::Argv { .. })) {
        for warning in &narrowed.warnings {
            eprintln!("warning: {warning}");
        }
    }
    match cli.command {
        Some(Sub::Tools { json }) => print_tools(narrowed.app, json),
        Some(Sub::Config {
            client,
            stdio,
            ref url,
        }) => {
            let default_url = match listen_address(app, &cli) {
                Ok((host, port)) => {
                    let ip = host.parse().unwrap_or(std::net::Ipv4Addr::LOCALHOST.into());
                    let shown = if host.parse::<std::net::IpAddr>().is_ok() {
                        banner::url_host(ip)
                    } else {
                        host
                    };
                    // One group's part is at /mcp/<group> (`config --group NAME`).
                    match &cli.narrow.group {
                        Some(group) => format!("http://{shown}:{port}/mcp/{group}"),
                        None => format!("http://{shown}:{port}/mcp"),
                    }
                }
                Err(error) => {
                    eprintln!("error: {error}");
                    return ExitCode::from(2);
                }
            };
            connect::run_config(
                narrowed.app,
                &ConfigRequest {
                    client,
                    stdio,
                    url: url.clone(),
                    default_url,
                    application_path: cli.application_path.as_deref(),
                    narrow: &cli.narrow,
                },
            )
        }
        Some(Sub::Version { json }) => print_version(app, json),
        Some(Sub::Verify) => verify::run(
            app,
            resolve_program(app, cli.application_path.as_deref()).as_deref(),
            &scrub_list(app),
        ),
        Some(Sub::Knowledge { command }) => {
            let Some(spec) = knowledge else {
                eprintln!("error: this server serves no knowledge tools");
                return ExitCode::FAILURE;
            };
            match command {
                KnowledgeCommand::Index {
                    reindex,
                    prune,
                    paths,
                } => {
                    builtins::knowledge::commands::index(spec, app.identity, reindex, prune, paths)
                }
                KnowledgeCommand::Status => {
                    builtins::knowledge::commands::status(spec, app.identity)
                }
            }
        }
        Some(Sub::Argv {
            ref tool,
            ref arguments,
        }) => print_argv(app, tool, arguments),
        None => {
            logging::init(cli.log_format);
            for warning in &narrowed.warnings {
                tracing::warn!("{warning}");
            }
            let mut notes: Vec<String> = notes.iter().map(|n| n.to_string()).collect();
            notes.extend(narrowed.summary.clone());
            match serve::serve(narrowed.app, cli, notes) {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    tracing::error!("{error}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

/// `--working-dir DIR`: a relative `--application-path` is resolved where the server was
/// started, then the process moves to `DIR`, so every command, the introspection of `verify`
/// and the relative paths of the built-ins resolve there.
fn enter_working_dir(cli: &mut Cli) -> Result<(), String> {
    let Some(dir) = &cli.working_dir else {
        return Ok(());
    };
    if let Some(program) = &cli.application_path
        && program.components().count() > 1
        && program.is_relative()
    {
        cli.application_path = Some(std::path::absolute(program).unwrap_or(program.clone()));
    }
    let shown = dir.display();
    let dir = std::fs::canonicalize(dir)
        .map_err(|error| format!("--working-dir {shown}: {error}; give an existing directory"))?;
    if !dir.is_dir() {
        return Err(format!(
            "--working-dir {shown}: not a directory; give an existing directory"
        ));
    }
    std::env::set_current_dir(&dir)
        .map_err(|error| format!("--working-dir {shown}: cannot enter it: {error}"))?;
    cli.working_dir = Some(dir);
    Ok(())
}
