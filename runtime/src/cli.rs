//! The generated binary's command line and its top level: parse flags, answer the
//! informational subcommands, or resolve the settings and serve until stopped.
//!
//! Precedence for port and address follows fisk-ai: flag, then `FISK_AI_MCP_PORT` /
//! `FISK_AI_MCP_ADDRESS`, then the compiled-in setting, then 8080 / 127.0.0.1 (a zero port or
//! empty address counts as unset, except that `--port 0` asks for a free port).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use tokio_util::sync::CancellationToken;

use crate::JsonObject;
use crate::auth::Auth;
use crate::banner;
use crate::builtins::{self, Builtins};
use crate::clients::Client;
use crate::confirm::Confirmer;
use crate::connect::{self, ConfigRequest};
use crate::duration;
use crate::http::{self, HttpOptions};
use crate::logging::{self, LogFormat};
use crate::narrow::NarrowArgs;
use crate::request_state::{RequestStates, STATE_KEY_VAR};
use crate::security;
use crate::server::{Handler, Limits, ServerState, server_version};
use crate::spec::{AppSpec, AuthSource, ConfirmMode, Run};
use crate::tools::{self, Catalog};
use crate::verify;

// The environment variables for port and address, and the defaults when nothing sets them.
use fiskgen_contract::defaults::{
    ADDRESS as DEFAULT_ADDRESS, ADDRESS_VAR, PORT as DEFAULT_PORT, PORT_VAR,
};
/// How long shutdown waits for connections and calls to finish before it stops anyway.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Command-line interface of a generated MCP server.
#[derive(Debug, Parser)]
#[command(disable_help_subcommand = true)]
struct Cli {
    /// Port to listen on [env: FISK_AI_MCP_PORT; default: the built-in setting, else 8080;
    /// 0 picks a free port]
    #[arg(long, value_name = "PORT")]
    port: Option<u16>,
    /// Address to bind [env: FISK_AI_MCP_ADDRESS; default: the built-in setting, else
    /// 127.0.0.1]
    #[arg(long, value_name = "ADDRESS")]
    address: Option<String>,
    /// Serve one client over stdin/stdout instead of HTTP
    #[arg(long)]
    stdio: bool,
    /// Serve HTTP without sessions (for replicas behind a load balancer; legacy clients can
    /// then not be asked for confirmation)
    #[arg(long)]
    stateless: bool,
    /// The application to run [default: the path compiled in; a bare name is looked up on
    /// PATH]
    #[arg(long, value_name = "PATH", global = true)]
    application_path: Option<PathBuf>,
    /// Commands running at once, for all clients together (1-1024) [default: the built-in
    /// setting]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    max_concurrent_tools: Option<u32>,
    /// Longest a command may run, and longest a call waits for a free slot (Go syntax: 30s,
    /// 1m30s) [default: the built-in setting]
    #[arg(long, value_name = "DURATION", value_parser = positive_duration)]
    tool_timeout: Option<Duration>,
    /// How tools that require approval are confirmed [default: the built-in confirm_over_mcp]
    #[arg(long, value_enum, value_name = "MODE")]
    confirm: Option<ConfirmMode>,
    /// Log format on stderr
    #[arg(long, value_enum, default_value = "text", value_name = "FORMAT")]
    log_format: LogFormat,
    /// Live HTTP sessions at most (legacy clients); further `initialize` requests fail
    #[arg(long, value_name = "N", default_value_t = 256,
          value_parser = clap::value_parser!(u64).range(1..=65_536))]
    max_sessions: u64,
    /// An HTTP session without traffic for this long is closed (Go syntax)
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = positive_duration)]
    session_idle_timeout: Duration,
    /// Also accept this Host header (repeatable; for reverse proxies; adds to the built-in
    /// allowed_hosts)
    #[arg(long = "allowed-host", value_name = "HOST")]
    allowed_hosts: Vec<String>,
    /// Also accept requests from this browser Origin, e.g. https://app.example.com:443
    /// (repeatable; adds to the built-in allowed_origins)
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    allowed_origins: Vec<String>,
    /// Refuse to start when the application no longer matches what this server was built
    /// from (checked before serving; without it the check runs in the background and warns)
    #[arg(long)]
    strict_app: bool,
    #[command(
        flatten,
        next_help_heading = "Tasks (long calls, for clients that declare them)"
    )]
    tasks: crate::tasks::TaskArgs,
    #[command(flatten, next_help_heading = "Narrowing (only removes tools)")]
    narrow: NarrowArgs,
    #[command(subcommand)]
    command: Option<Sub>,
}

#[derive(Debug, Subcommand)]
enum Sub {
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
enum KnowledgeCommand {
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
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
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
                    format!("http://{shown}:{port}/mcp")
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
            match serve(narrowed.app, cli, notes) {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    tracing::error!("{error}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

fn print_tools(app: &'static AppSpec, json: bool) -> ExitCode {
    if !json {
        print!("{}", tools::render_text(app));
        return ExitCode::SUCCESS;
    }
    let listed: Result<Vec<_>, String> = app.tools.iter().map(|t| tools::info_json(t)).collect();
    match listed
        .and_then(|list| serde_json::to_string_pretty(&list).map_err(|error| error.to_string()))
    {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

fn print_version(app: &'static AppSpec, json: bool) -> ExitCode {
    if json {
        let document = serde_json::json!({
            "identity": app.identity,
            "fiskgen_version": app.fiskgen_version,
            "server_version": server_version(app),
            "application": app.application.as_ref().map(|a| serde_json::json!({
                "name": a.name,
                "version": a.version,
                "path": a.path,
                "fingerprint": a.fingerprint,
            })),
        });
        println!("{document:#}");
        return ExitCode::SUCCESS;
    }
    println!("{}-mcp {}", app.identity, server_version(app));
    println!("generated by fiskgen {}", app.fiskgen_version);
    match &app.application {
        Some(application) => {
            println!(
                "application: {} {} at {}",
                application.name,
                application.version.unwrap_or("(no version)"),
                application.path
            );
            println!("fingerprint: {}", application.fingerprint);
        }
        None => println!("application: none (built-in tools only)"),
    }
    ExitCode::SUCCESS
}

fn print_argv(app: &'static AppSpec, tool: &str, arguments: &str) -> ExitCode {
    let result = (|| {
        let spec = app
            .tools
            .iter()
            .find(|spec| spec.name == tool)
            .ok_or_else(|| format!("unknown tool {tool:?}"))?;
        let arguments: JsonObject = match serde_json::from_str(arguments) {
            Ok(serde_json::Value::Object(map)) => map,
            Ok(serde_json::Value::Null) => JsonObject::new(),
            Ok(_) => return Err("the arguments must be a JSON object".to_string()),
            Err(error) => return Err(format!("the arguments are not valid JSON: {error}")),
        };
        let argv = match spec.run {
            Run::Command { argv, .. } => argv,
            Run::Builtin(_) => {
                return Err(format!("{tool:?} is a built-in tool; it runs no command"));
            }
        };
        let argv = argv(arguments).map_err(|error| crate::arg_errors::for_tool(tool, &error))?;
        serde_json::to_string(&argv.into_vec()).map_err(|error| error.to_string())
    })();
    match result {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}

/// Resolves the settings and serves until stdin closes (stdio) or a signal arrives.
fn serve(app: &'static AppSpec, cli: Cli, generator_notes: Vec<String>) -> Result<(), String> {
    let settings = &app.settings;
    if app.tools.is_empty() && cli.narrow.is_set() {
        return Err(
            "narrowing left no tool to serve; check --read-only, --tools, \
                    --exclude-tools and --tags (`tools` with the same flags lists what is left)"
                .into(),
        );
    }
    let catalog = Catalog::new(app)?;
    let (builtins, mut notes) = Builtins::start(app)?;
    notes.splice(0..0, generator_notes);
    let confirm = cli.confirm.unwrap_or(settings.confirm);
    notes.splice(
        0..0,
        banner::confirm_note(
            app,
            confirm,
            cli.confirm.is_some(),
            if cli.stdio {
                banner::Reach::Stdio
            } else if cli.stateless || settings.stateless {
                banner::Reach::Stateless
            } else {
                banner::Reach::Sessions
            },
        ),
    );
    let program = resolve_program(app, cli.application_path.as_deref());
    // `--strict-app` awaits the check and a changed application stops the start; otherwise it
    // runs in the background once serving started (below) and a change is logged.
    if let (Some(application), Some(program), true) = (&app.application, &program, cli.strict_app) {
        verify::strict(application, program, &scrub_list(app))?;
    }
    let max_concurrent = cli
        .max_concurrent_tools
        .unwrap_or(settings.max_concurrent_tools)
        .clamp(1, 1024);
    let tool_timeout = cli
        .tool_timeout
        .or(Some(settings.tool_timeout).filter(|t| !t.is_zero()))
        .unwrap_or(Duration::from_secs(30));

    let state_key = std::env::var_os(STATE_KEY_VAR)
        .filter(|key| !key.is_empty())
        .map(|key| key.into_encoded_bytes());
    let states = RequestStates::new(app.identity, state_key)
        .map_err(|error| format!("{STATE_KEY_VAR}: {error}"))?
        .with_shared_record(crate::approvals::SharedRecord::from_env()?);
    notes.extend(states.notes(cli.stateless || settings.stateless));

    let scrub = scrub_list(app);
    let env = fiskgen_contract::introspect::child_env(std::env::vars_os(), &scrub);

    let shutdown = CancellationToken::new();
    let state = Arc::new(ServerState::new(
        app,
        catalog,
        program.clone(),
        env,
        Limits {
            max_concurrent,
            tool_timeout,
            tasks: cli.tasks.settings(settings.tasks),
        },
        Confirmer {
            mode: confirm,
            identity: app.identity,
            states,
        },
        builtins,
        shutdown.clone(),
    ));

    if let (Some(application), Some(program), false) = (&app.application, &program, cli.strict_app)
    {
        verify::in_background(app, application, program.clone(), scrub_list(app), &state);
    }

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| format!("starting the async runtime: {error}"))?;
    let result = runtime.block_on(async {
        spawn_signal_handler(state.clone());
        tracing::debug!(
            max_concurrent,
            tool_timeout = %duration::format(tool_timeout),
            "limits"
        );
        if cli.stdio {
            serve_stdio(app, cli.log_format, state.clone(), &notes).await
        } else {
            serve_http(app, &cli, program.as_deref(), state.clone(), &notes).await
        }
    });
    let killed = state.groups.kill_all();
    if killed > 0 {
        tracing::warn!(killed, "killed commands still running at exit");
    }
    // A read parked on stdin cannot be cancelled; do not wait for it.
    runtime.shutdown_background();
    tracing::info!("MCP server stopped");
    result
}

async fn serve_stdio(
    app: &'static AppSpec,
    format: LogFormat,
    state: Arc<ServerState>,
    notes: &[String],
) -> Result<(), String> {
    let version = server_version(app);
    announce(
        &banner::stdio(app, &version, notes),
        app,
        format,
        "stdio",
        None,
        notes,
    );
    let shutdown = state.shutdown.clone();
    let serving = crate::stdio::serve(Handler::new(state), shutdown.clone());
    tokio::pin!(serving);
    tokio::select! {
        result = &mut serving => result,
        () = shutdown.cancelled() => {
            let _ = tokio::time::timeout(SHUTDOWN_GRACE, serving).await;
            Ok(())
        }
    }
}

async fn serve_http(
    app: &'static AppSpec,
    cli: &Cli,
    program: Option<&Path>,
    state: Arc<ServerState>,
    notes: &[String],
) -> Result<(), String> {
    let settings = &app.settings;
    let auth = match &settings.auth {
        Some(spec) => Some(Arc::new(Auth::load(spec, app.identity).await?)),
        None => None,
    };
    if let Some(auth) = &auth {
        tracing::info!("authentication: {}", auth.describe());
        auth.spawn_refresh();
    }
    let (host, port) = listen_address(app, cli)?;
    let listener = tokio::net::TcpListener::bind((host.as_str(), port))
        .await
        .map_err(|error| format!("listening on {host}:{port}: {error}"))?;
    let local = listener
        .local_addr()
        .map_err(|error| format!("reading the listening address: {error}"))?;

    let mut hosts: Vec<String> = settings
        .allowed_hosts
        .iter()
        .map(|h| h.to_string())
        .collect();
    hosts.extend(cli.allowed_hosts.iter().cloned());
    let mut origins: Vec<String> = settings
        .allowed_origins
        .iter()
        .map(|o| o.to_string())
        .collect();
    origins.extend(cli.allowed_origins.iter().cloned());
    let options = HttpOptions {
        stateless: cli.stateless || settings.stateless,
        max_sessions: usize::try_from(cli.max_sessions).unwrap_or(usize::MAX),
        session_idle: cli.session_idle_timeout,
        allowed_hosts: security::allowed_hosts(&hosts, local.ip()),
        allowed_origins: security::allowed_origins(&origins),
        auth,
    };
    if !local.ip().is_loopback() && options.auth.is_none() {
        tracing::warn!(
            "listening on {local} without authentication: anyone who can reach this address \
             can run the served commands"
        );
    }

    let version = server_version(app);
    let given = cli.application_path.as_ref().and(program);
    let stdio_command = connect::stdio_command(given, &cli.narrow);
    announce(
        &banner::http(app, &version, local, &stdio_command, notes),
        app,
        cli.log_format,
        &banner::endpoint(local),
        Some(local),
        notes,
    );

    let shutdown = state.shutdown.clone();
    let router = http::router(Handler::new(state), &options, &shutdown);
    let serving = http::serve(listener, router, shutdown.clone());
    tokio::pin!(serving);
    tokio::select! {
        result = &mut serving => result.map_err(|error| error.to_string()),
        () = shutdown.cancelled() => {
            if tokio::time::timeout(SHUTDOWN_GRACE, serving).await.is_err() {
                tracing::warn!("connections still open after {}; closing them", duration::format(SHUTDOWN_GRACE));
            }
            Ok(())
        }
    }
}

/// The banner as text, or as one structured event when logs are JSON.
fn announce(
    text: &str,
    app: &'static AppSpec,
    format: LogFormat,
    place: &str,
    local: Option<SocketAddr>,
    notes: &[String],
) {
    if format == LogFormat::Json {
        let tools: Vec<&str> = app.tools.iter().map(|t| t.name).collect();
        tracing::info!(
            identity = app.identity,
            endpoint = place,
            address = local.map(|a| a.to_string()),
            tools = %tools.join(","),
            "serving {} tools over MCP",
            tools.len()
        );
        if local.is_some() {
            let transport = crate::clients::Transport::Http(place.to_string());
            let credentials = connect::credentials(app);
            for client in Client::ALL {
                tracing::info!(
                    client = ?client,
                    entry = %crate::clients::entry(client, app.identity, &transport, &credentials),
                    "client configuration"
                );
            }
        }
        for note in notes {
            tracing::info!("{note}");
        }
    } else {
        eprint!("{text}");
    }
}

/// Where to listen, by precedence.
fn listen_address(app: &AppSpec, cli: &Cli) -> Result<(String, u16), String> {
    let env_port = std::env::var(PORT_VAR).ok().map(|v| v.trim().to_string());
    let port = match (cli.port, env_port.filter(|v| !v.is_empty())) {
        (Some(port), _) => port,
        (None, Some(text)) => match text.parse::<u16>() {
            Ok(0) => fallback_port(app),
            Ok(port) => port,
            Err(_) => return Err(format!("{PORT_VAR}={text:?} is not a port number")),
        },
        (None, None) => fallback_port(app),
    };
    let env_address = std::env::var(ADDRESS_VAR)
        .ok()
        .map(|v| v.trim().to_string());
    let address = cli
        .address
        .clone()
        .map(|a| a.trim().to_string())
        .filter(|a| !a.is_empty())
        .or(env_address.filter(|a| !a.is_empty()))
        .or(Some(app.settings.address.trim().to_string()).filter(|a| !a.is_empty()))
        .unwrap_or_else(|| DEFAULT_ADDRESS.to_string());
    // `[::1]` as written in URLs.
    let address = address
        .strip_prefix('[')
        .and_then(|a| a.strip_suffix(']'))
        .map(str::to_string)
        .unwrap_or(address);
    Ok((address, port))
}

fn fallback_port(app: &AppSpec) -> u16 {
    if app.settings.port == 0 {
        DEFAULT_PORT
    } else {
        app.settings.port
    }
}

/// The application to run: the flag, else the compiled-in path; a bare name is looked up on
/// PATH now, so the log says which file will run.
/// The variables no command may see: the built-in list, the server's own secrets (state key,
/// bearer token) and the embeddings key.
fn scrub_list(app: &AppSpec) -> Vec<String> {
    let settings = &app.settings;
    // Secrets the server itself reads never reach the commands it runs.
    let mut scrub: Vec<String> = settings.scrub_env.iter().map(|v| v.to_string()).collect();
    scrub.push(STATE_KEY_VAR.into());
    scrub.push(crate::approvals::STORE_VAR.into());
    // No secret of the server's own authentication reaches a command (no token passthrough).
    if let Some(auth) = &settings.auth {
        let header = auth.header.map(|header| header.value);
        for source in [auth.token, header].into_iter().flatten() {
            if let AuthSource::Env(name) = source {
                scrub.push(name.into());
            }
        }
    }
    let embeddings_key = builtins::knowledge_spec(app)
        .ok()
        .flatten()
        .and_then(|spec| spec.embeddings)
        .and_then(|embeddings| embeddings.api_key_env);
    if let Some(name) = embeddings_key {
        scrub.push(name.into());
    }
    scrub
}

fn resolve_program(app: &AppSpec, flag: Option<&Path>) -> Option<PathBuf> {
    let configured = match (flag, &app.application) {
        (Some(path), _) => path.to_path_buf(),
        (None, Some(application)) => PathBuf::from(application.path),
        (None, None) => return None,
    };
    let resolved = if configured.components().count() == 1 && !configured.is_absolute() {
        match find_on_path(&configured) {
            Some(found) => found,
            None => {
                tracing::warn!(
                    "the application {} is not on PATH; calls will fail until it is (or set \
                     --application-path)",
                    configured.display()
                );
                return Some(configured);
            }
        }
    } else {
        configured
    };
    if !is_executable(&resolved) {
        tracing::warn!(
            "the application {} does not exist or is not executable; calls will fail until it is",
            resolved.display()
        );
    }
    Some(resolved)
}

fn find_on_path(name: &Path) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// First SIGINT/SIGTERM: graceful, bounded shutdown. Second: kill what runs and exit now.
fn spawn_signal_handler(state: Arc<ServerState>) {
    tokio::spawn(async move {
        let mut terminate =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(signal) => signal,
                Err(error) => {
                    tracing::warn!(%error, "cannot watch SIGTERM");
                    return;
                }
            };
        let name = tokio::select! {
            _ = tokio::signal::ctrl_c() => "SIGINT",
            _ = terminate.recv() => "SIGTERM",
        };
        let running = state.groups.len();
        tracing::info!(
            running,
            "{name}: shutting down (running commands are killed)"
        );
        state.shutdown.cancel();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {},
            _ = terminate.recv() => {},
        }
        let killed = state.groups.kill_all();
        tracing::warn!(killed, "second signal: stopping now");
        std::process::exit(1);
    });
}
