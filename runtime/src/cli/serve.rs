//! Serving until stopped: settings resolved, state built, the background application check
//! started, then stdio or HTTP until stdin closes or a signal arrives.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::builtins::Builtins;
use crate::cli::args::Cli;
use crate::cli::banner;
use crate::cli::clients::Client;
use crate::cli::connect;
use crate::cli::error::ServeError;
use crate::cli::settings::{self, listen_address, resolve_program, scrub_list};
use crate::duration;
use crate::logging::LogFormat;
use crate::mcp::confirm::Confirmer;
use crate::mcp::finder::Finder;
use crate::mcp::request_state::{RequestStates, STATE_KEY_VAR};
use crate::mcp::server::Handler;
use crate::mcp::state::{Limits, ServerState, server_version};
use crate::mcp::tools::Catalog;
use crate::spec::app::{AppSpec, CatalogMode};
use crate::spec::verify;
use crate::transport::auth::Auth;
use crate::transport::http::{self, HttpOptions};
use crate::transport::security;

/// How long shutdown waits for connections and calls to finish before it stops anyway.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Resolves the settings and serves until stdin closes (stdio) or a signal arrives.
pub(super) fn serve(
    app: &'static AppSpec,
    cli: Cli,
    generator_notes: Vec<String>,
) -> Result<(), ServeError> {
    let settings = &app.settings;
    if app.tools.is_empty() && cli.narrow.is_set() {
        return Err(ServeError::NothingLeft);
    }
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
    let tasks = cli.tasks.settings(settings.tasks);
    let task_required = tasks.map_or(&[][..], |tasks| tasks.required);
    let catalog = Catalog::new(app, task_required)?;
    // Each group's part (`/mcp/<group>`), its list joined once now and fixed from here on.
    let mut parts = Vec::new();
    if !cli.stdio {
        for (group, part) in crate::cli::narrow::parts(app) {
            parts.push((group, Arc::new(Catalog::new(part, task_required)?)));
        }
    }
    let mode = cli.catalog.unwrap_or(settings.catalog);
    if mode == CatalogMode::Search {
        notes.push(
            "catalog mode: tools/list holds search, describe, run_read_only and run; every tool \
             runs through them (docs/catalogs.md)"
                .into(),
        );
    }
    notes.push(banner::tasks_note(tasks));
    if tasks.is_none()
        && settings
            .tasks
            .is_some_and(|built| !built.required.is_empty())
    {
        notes.push(
            "note: with tasks off, the task-required tools (tasks.required) answer on their own \
             request like every other tool"
                .into(),
        );
    }
    notes.extend(banner::exit_code_note(settings.exit_code_is_error));
    notes.extend(banner::questions_note(app));
    let program = resolve_program(app, cli.application_path.as_deref());
    // `--strict-app` awaits the check and a changed application stops the start; otherwise it
    // runs in the background once serving started (below) and a change is logged.
    if let (Some(application), Some(program), true) = (&app.application, &program, cli.strict_app) {
        verify::strict(application, program, &scrub_list(app)).map_err(Box::new)?;
    }
    let max_concurrent =
        settings::max_concurrent(cli.max_concurrent_tools, app.settings.max_concurrent_tools);
    let tool_timeout = settings::tool_timeout(cli.tool_timeout, app.settings.tool_timeout);

    let state_key = std::env::var_os(STATE_KEY_VAR)
        .filter(|key| !key.is_empty())
        .map(|key| key.into_encoded_bytes());
    let approvals = crate::mcp::approvals::SharedRecord::from_env()?;
    let shared_tasks = match tasks {
        Some(tasks) => crate::mcp::tasks::shared::Shared::from_env(
            tasks.max,
            approvals.as_ref().map(|record| record.nats()),
        )?,
        None => None,
    };
    let replica = (cli.stateless || settings.stateless) && state_key.is_some();
    let states = RequestStates::new(app.identity, state_key)
        .map_err(ServeError::StateKey)?
        .with_shared_record(approvals);
    notes.extend(states.notes(cli.stateless || settings.stateless));
    notes.extend(banner::shared_tasks_note(
        shared_tasks.as_ref(),
        tasks,
        replica,
    ));

    let scrub = scrub_list(app);
    let env = fiskgen_contract::introspect::child_env(std::env::vars_os(), &scrub);
    let telemetry = crate::telemetry::Telemetry::start(
        settings.telemetry.as_ref(),
        app.identity,
        &server_version(app),
        &mut notes,
    )?;

    let shutdown = CancellationToken::new();
    let finder = |catalog: &Catalog| {
        (mode == CatalogMode::Search).then(|| Arc::new(Finder::new(app, catalog)))
    };
    let whole_finder = finder(&catalog);
    let parts: Vec<(String, Arc<Catalog>, Option<Arc<Finder>>)> = parts
        .into_iter()
        .map(|(group, catalog)| {
            let finder = finder(&catalog);
            (group, catalog, finder)
        })
        .collect();
    let state = Arc::new(ServerState::new(
        app,
        catalog,
        program.clone(),
        env,
        Limits {
            max_concurrent,
            tool_timeout,
            tasks,
            telemetry,
            shared_tasks,
        },
        Confirmer {
            mode: confirm,
            identity: app.identity,
            states,
        },
        builtins,
        shutdown.clone(),
    ));

    // One thread (docs/runtime.md, "One thread"): the server's own work per request is
    // microseconds, commands run in child processes and built-ins on the blocking pool; a
    // worker thread beside this one only adds wakeups and the multi-thread scheduler's
    // bookkeeping.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let result = runtime.block_on(async {
        spawn_signal_handler(state.clone());
        if let Some(tasks) = &state.tasks {
            tasks.start();
        }
        if let (Some(application), Some(program), false) =
            (&app.application, &program, cli.strict_app)
        {
            verify::in_background(
                app,
                application,
                program.clone(),
                scrub_list(app),
                state.first_answer.clone(),
                state.shutdown.clone(),
                state.groups.clone(),
            );
        }
        tracing::debug!(
            max_concurrent,
            tool_timeout = %duration::format(tool_timeout),
            "limits"
        );
        if cli.stdio {
            serve_stdio(app, cli.log_format, state.clone(), whole_finder, &notes).await
        } else {
            let endpoints = Endpoints {
                whole: whole_finder,
                parts,
            };
            serve_http(
                app,
                &cli,
                program.as_deref(),
                state.clone(),
                endpoints,
                &notes,
            )
            .await
        }
    });
    let killed = state.groups.kill_all();
    if killed > 0 {
        tracing::warn!(killed, "killed commands still running at exit");
    }
    state.telemetry.shutdown();
    // A read parked on stdin cannot be cancelled; do not wait for it.
    runtime.shutdown_background();
    tracing::info!("MCP server stopped");
    result
}

async fn serve_stdio(
    app: &'static AppSpec,
    format: LogFormat,
    state: Arc<ServerState>,
    finder: Option<Arc<Finder>>,
    notes: &[String],
) -> Result<(), ServeError> {
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
    let serving =
        crate::transport::stdio::serve(Handler::new(state).with_finder(finder), shutdown.clone());
    tokio::pin!(serving);
    tokio::select! {
        result = &mut serving => Ok(result?),
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
    endpoints: Endpoints,
    notes: &[String],
) -> Result<(), ServeError> {
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
    let listener = match tokio::net::TcpListener::bind((host.as_str(), port)).await {
        Ok(listener) => listener,
        Err(source) => return Err(ServeError::Listen { host, port, source }),
    };
    let local = listener.local_addr().map_err(ServeError::LocalAddress)?;

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
        request_timeout: cli.request_timeout,
        max_per_peer: usize::try_from(cli.max_connections_per_peer).unwrap_or(usize::MAX),
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
    let parts = endpoints
        .parts
        .into_iter()
        .map(|(group, catalog, finder)| {
            (
                group,
                Handler::part(state.clone(), catalog).with_finder(finder),
            )
        })
        .collect();
    let whole = Handler::new(state).with_finder(endpoints.whole);
    let app = http::app(whole, parts, &options, &shutdown);
    let serving = http::serve(listener, app, shutdown.clone());
    tokio::pin!(serving);
    tokio::select! {
        result = &mut serving => result.map_err(ServeError::Http),
        () = shutdown.cancelled() => {
            if tokio::time::timeout(SHUTDOWN_GRACE, serving).await.is_err() {
                tracing::warn!("connections still open after {}; closing them", duration::format(SHUTDOWN_GRACE));
            }
            Ok(())
        }
    }
}

/// What each HTTP endpoint serves: catalog mode's finder of the whole set, and each group's
/// catalog with its finder.
struct Endpoints {
    whole: Option<Arc<Finder>>,
    parts: Vec<(String, Arc<Catalog>, Option<Arc<Finder>>)>,
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
            let transport = crate::cli::clients::Transport::Http(place.to_string());
            let credentials = connect::credentials(app);
            for client in Client::ALL {
                tracing::info!(
                    client = ?client,
                    entry = %crate::cli::clients::entry(client, app.identity, &transport, &credentials),
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
