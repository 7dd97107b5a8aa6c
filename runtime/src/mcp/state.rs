//! What every request shares: the served tools, the application and its environment, the
//! limits, the confirmation gate, the running commands ([`ServerState`]), and who the client is
//! ([`client_name`]). The handler ([`crate::mcp::server`]) and one call ([`crate::mcp::call`])
//! both read it; neither depends on the other for it.

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{Implementation, ProtocolVersion, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::builtins::Builtins;
use crate::logging::label;
use crate::mcp::confirm::{self, Confirmer, Reach};
use crate::mcp::docs::Docs;
use crate::mcp::tools::Catalog;
use crate::process::exec::ProcessGroups;
use crate::spec::app::{AppSpec, ConfirmMode, Settings, TaskSettings};
use crate::spec::verify::FirstAnswer;

/// How many distinct 2026-era clients get a "connected" log line (they have no `initialize`,
/// so the line is written on their first request); beyond this, no more lines.
const MAX_CLIENTS_NOTED: usize = 1024;

/// Everything the handler needs, shared by all sessions and requests.
#[derive(Debug)]
pub(crate) struct ServerState {
    /// The served tools (the whole set, on `/mcp` and stdio; a group endpoint's handler
    /// holds its part, [`crate::mcp::server::Handler::part`]).
    pub(crate) catalog: Arc<Catalog>,
    /// The application to run (`None`: no application, command tools fail).
    pub(crate) program: Option<PathBuf>,
    /// The environment of every command: the server's own, without a trace context it inherited
    /// (a call's own is added per command, [`crate::mcp::trace`]).
    pub(crate) env: Vec<(OsString, OsString)>,
    /// One slot per concurrently running command, shared by all clients.
    pub(crate) slots: Semaphore,
    /// The number of slots.
    pub(crate) max_concurrent: u32,
    /// Per-call run limit, and the longest a call waits for a slot.
    pub(crate) tool_timeout: Duration,
    /// The confirmation gate.
    pub(crate) confirmer: Confirmer,
    /// What the built-in tools share (working directory, knowledge index).
    pub(crate) builtins: Arc<Builtins>,
    /// Running commands.
    pub(crate) groups: ProcessGroups,
    /// Cancelled when the server shuts down.
    pub(crate) shutdown: CancellationToken,
    /// The tasks of this process, when tasks are on (`expose.agent.mcp.tasks`).
    pub(crate) tasks: Option<Arc<crate::mcp::tasks::Store>>,
    /// Set once a request has been answered; the background check of the application waits
    /// for it (see `verify.rs`).
    pub(crate) first_answer: Arc<FirstAnswer>,
    /// What `initialize` and `server/discover` say about us.
    pub(crate) info: ServerConfig,
    /// The resources, prompts and completions made from the application's help.
    pub(crate) docs: Docs,
    /// The build-time settings, read in place (what a flag overrides is in [`Limits`]).
    pub(crate) settings: &'static Settings,
    /// The span exporter (off unless the config's `telemetry` enables it).
    pub(crate) telemetry: crate::telemetry::Telemetry,
    /// 2026-era clients already logged.
    noted: Noted,
}

/// The parts of [`ServerState`] decided at start: the settings a flag overrides (the others
/// are read from [`ServerState::settings`]) and what was started from them (the span exporter,
/// the shared task bucket).
#[derive(Debug)]
pub(crate) struct Limits {
    /// Concurrency slots.
    pub(crate) max_concurrent: u32,
    /// Per-call timeout.
    pub(crate) tool_timeout: Duration,
    /// Tasks, when on.
    pub(crate) tasks: Option<TaskSettings>,
    /// The span exporter.
    pub(crate) telemetry: crate::telemetry::Telemetry,
    /// The task bucket every replica shares, when one is configured.
    pub(crate) shared_tasks: Option<crate::mcp::tasks::shared::Shared>,
}

impl ServerState {
    /// Assembles the state.
    #[expect(
        clippy::too_many_arguments,
        reason = "one call site (cli::serve), where each part is decided"
    )]
    pub(crate) fn new(
        app: &'static AppSpec,
        catalog: Catalog,
        program: Option<PathBuf>,
        env: Vec<(OsString, OsString)>,
        limits: Limits,
        confirmer: Confirmer,
        builtins: Builtins,
        shutdown: CancellationToken,
    ) -> Self {
        let docs = Docs::new(app, &catalog);
        // Prompts and resources are declared even when there are none, so generic clients (and
        // the conformance suite) get empty lists and spec-shaped "not found" errors rather than
        // -32601 (docs/resources.md). `logging` is declared for legacy clients, whose
        // `logging/setLevel` turns on log notifications of a command's output (docs/runtime.md,
        // "Log notifications"); `discover` leaves it out for 2026-07-28 clients, where logging
        // is deprecated, setLevel removed and a request's `_meta` log level asks instead.
        #[expect(
            deprecated,
            reason = "logging is deprecated (SEP-2577) but legacy clients use it"
        )]
        let mut capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_prompts()
            .enable_resources()
            .enable_tools()
            .build();
        if limits.tasks.is_some() {
            // The tasks extension (SEP-2663): `capabilities.extensions`, in `initialize` and
            // `server/discover` alike.
            capabilities.extensions = ServerCapabilities::builder()
                .enable_tasks()
                .build()
                .extensions;
        }
        crate::mcp::docs::declare(&docs, &mut capabilities);
        let mut info = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(app.identity, server_version(app)))
            // Offered to legacy clients that ask for a version we do not know.
            .with_protocol_version(ProtocolVersion::V_2025_11_25);
        if let Some(instructions) = app.instructions.filter(|text| !text.is_empty()) {
            info = info.with_instructions(instructions);
        }
        Self {
            catalog: Arc::new(catalog),
            program,
            env: crate::mcp::trace::without_inherited(env),
            slots: Semaphore::new(limits.max_concurrent as usize),
            max_concurrent: limits.max_concurrent,
            tool_timeout: limits.tool_timeout,
            confirmer,
            builtins: Arc::new(builtins),
            groups: ProcessGroups::default(),
            tasks: limits.tasks.map(|settings| {
                Arc::new(crate::mcp::tasks::Store::new(settings).with_shared(limits.shared_tasks))
            }),
            shutdown,
            first_answer: Arc::default(),
            info,
            docs,
            settings: &app.settings,
            telemetry: limits.telemetry,
            noted: Noted::default(),
        }
    }

    /// Logs a 2026-era client's "connected" line the first time it is seen.
    pub(crate) fn note_modern_client(&self, context: &RequestContext<RoleServer>) {
        if !confirm::is_modern(context) {
            return;
        }
        let (name, reach) = (client_name(context), confirm::reach(context));
        if self.noted.first_time(&name, reach) {
            self.log_connected(&name, reach);
        }
    }

    /// The per-client line of fisk-ai (docs/runtime.md, "Confirmation"); informational, the gate decides per call.
    pub(crate) fn log_connected(&self, name: &str, reach: Reach) {
        let name = label(name);
        let summary = match (self.confirmer.mode, reach) {
            (ConfirmMode::Never, _) => "confirm-tagged tools run ungated (confirm_over_mcp=never)",
            (_, Reach::Form | Reach::UrlOnly) => {
                "elicitation supported, confirm-tagged tools will request approval"
            }
            (ConfirmMode::Always, Reach::None) => {
                "elicitation unsupported, confirm-tagged tools will be refused \
                 (confirm_over_mcp=always)"
            }
            (ConfirmMode::Auto, Reach::None) => {
                "elicitation unsupported, confirm-tagged tools run ungated"
            }
            (_, Reach::Stranded | Reach::Unknown) => {
                "this stateless server cannot ask a legacy client, confirm-tagged tools will be \
                 refused"
            }
        };
        tracing::info!(client = %name, "Client \"{name}\" connected: {summary}");
    }
}

/// `serverInfo.version`: the application's version (the server is a view of it).
pub(crate) fn server_version(app: &AppSpec) -> String {
    app.application
        .as_ref()
        .and_then(|application| application.version)
        .unwrap_or("devel")
        .to_string()
}

/// The client's self-declared name, or `unknown`: from the request's `_meta` in the 2026-07-28
/// era, from `initialize` in a legacy session or the stateless server's record of it
/// ([`crate::transport::intake`]). Without either, a session-less legacy HTTP request carries no name
/// (rmcp fills in a placeholder, which is not the client's).
pub(crate) fn client_name(context: &RequestContext<RoleServer>) -> String {
    let name = if confirm::is_modern(context) {
        context.meta.client_info().map(|info| info.name)
    } else if let Some(declared) = confirm::declared(context) {
        // A stateless server's record of the client's initialize.
        match declared {
            crate::mcp::declared::Declared::Known(record) => Some(record.name.clone()),
            crate::mcp::declared::Declared::Unknown => None,
        }
    } else if context
        .extensions
        .get::<http::request::Parts>()
        .is_some_and(|parts| !parts.headers.contains_key("mcp-session-id"))
    {
        None
    } else {
        context
            .peer
            .peer_info()
            .map(|info| info.client_info.name.clone())
    };
    name.filter(|name| !name.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}

/// The 2026-era clients (name and reach) whose "connected" line was written: at most
/// [`MAX_CLIENTS_NOTED`].
#[derive(Debug, Default)]
struct Noted {
    seen: Mutex<HashSet<String>>,
}

impl Noted {
    /// Whether `name` with `reach` is seen for the first time (and a line is due).
    fn first_time(&self, name: &str, reach: Reach) -> bool {
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        seen.len() < MAX_CLIENTS_NOTED && seen.insert(format!("{name}\0{reach:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_client_and_reach_is_noted_once_whatever_the_order_of_requests() {
        let noted = Noted::default();
        assert!(noted.first_time("claude", Reach::Form));
        assert!(
            !noted.first_time("claude", Reach::Form),
            "the client seen last"
        );
        assert!(noted.first_time("inspector", Reach::None));
        assert!(
            !noted.first_time("claude", Reach::Form),
            "seen before the last"
        );
        assert!(
            noted.first_time("claude", Reach::None),
            "another reach is another line"
        );
        assert!(!noted.first_time("inspector", Reach::None));
    }

    #[test]
    fn no_more_clients_are_noted_than_the_limit() {
        let noted = Noted::default();
        for index in 0..MAX_CLIENTS_NOTED {
            assert!(noted.first_time(&format!("client {index}"), Reach::None));
        }
        assert!(!noted.first_time("one too many", Reach::None));
        assert!(!noted.first_time("client 0", Reach::None));
    }
}
