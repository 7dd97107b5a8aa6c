//! The MCP handler: what rmcp calls for every request, in both protocol eras and on every
//! transport. It is a cheap `Arc` clone, because rmcp's HTTP service asks its factory for a
//! handler per session and per stateless request.

use std::collections::HashSet;
use std::ffi::OsString;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::FutureExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, DiscoverResult,
    GetPromptRequestParams, GetPromptResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ServerCapabilities, ServerConfig, SetLevelRequestMethod, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::builtins::Builtins;
use crate::confirm::{self, Confirmer, Reach};
use crate::exec::ProcessGroups;
use crate::listing::Era;
use crate::logging::label;
use crate::spec::{AppSpec, ConfirmMode};
use crate::tools::Catalog;
use crate::verify::FirstAnswer;

/// How many distinct 2026-era clients get a "connected" log line (they have no `initialize`,
/// so the line is written on their first request); beyond this, no more lines.
const MAX_CLIENTS_NOTED: usize = 1024;

/// Everything the handler needs, shared by all sessions and requests.
#[derive(Debug)]
pub(crate) struct ServerState {
    /// The served tools.
    pub(crate) catalog: Catalog,
    /// The application to run (`None`: no application, command tools fail).
    pub(crate) program: Option<PathBuf>,
    /// The environment of every command.
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
    /// Set once a request has been answered; the background check of the application waits
    /// for it (see `verify.rs`).
    pub(crate) first_answer: FirstAnswer,
    /// What `initialize` and `server/discover` say about us.
    info: ServerConfig,
    /// 2026-era clients already logged.
    noted: Mutex<HashSet<String>>,
}

/// The parts of [`ServerState`] decided at start.
#[derive(Debug)]
pub(crate) struct Limits {
    /// Concurrency slots.
    pub(crate) max_concurrent: u32,
    /// Per-call timeout.
    pub(crate) tool_timeout: Duration,
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
        // Prompts and resources are declared and always empty, so generic clients (and the
        // conformance suite) get empty lists and spec-shaped "not found" errors rather than
        // -32601. `logging` is declared for legacy clients, which may send `logging/setLevel`;
        // the server sends no log notifications (it logs to stderr), and `discover` leaves it
        // out for 2026-07-28 clients, where logging is deprecated and setLevel removed.
        #[expect(
            deprecated,
            reason = "logging is deprecated (SEP-2577) but legacy clients use it"
        )]
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_prompts()
            .enable_resources()
            .enable_tools()
            .build();
        let mut info = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(app.identity, server_version(app)))
            // Offered to legacy clients that ask for a version we do not know.
            .with_protocol_version(ProtocolVersion::V_2025_11_25);
        if let Some(instructions) = app.instructions.filter(|text| !text.is_empty()) {
            info = info.with_instructions(instructions);
        }
        Self {
            catalog,
            program,
            env,
            slots: Semaphore::new(limits.max_concurrent as usize),
            max_concurrent: limits.max_concurrent,
            tool_timeout: limits.tool_timeout,
            confirmer,
            builtins: Arc::new(builtins),
            groups: ProcessGroups::default(),
            shutdown,
            first_answer: FirstAnswer::default(),
            info,
            noted: Mutex::new(HashSet::new()),
        }
    }

    /// Logs a 2026-era client's "connected" line the first time it is seen.
    fn note_modern_client(&self, context: &RequestContext<RoleServer>) {
        if !confirm::is_modern(context) {
            return;
        }
        self.note_modern(client_name(context), confirm::reach(context));
    }

    /// Logs the "connected" line of a 2026-era client named `name` the first time it is seen
    /// (also for requests answered before they reach the handler).
    pub(crate) fn note_modern(&self, name: String, reach: Reach) {
        let key = format!("{name}\0{reach:?}");
        {
            let mut noted = self.noted.lock().unwrap_or_else(PoisonError::into_inner);
            if noted.len() >= MAX_CLIENTS_NOTED || !noted.insert(key) {
                return;
            }
        }
        self.log_connected(&name, reach);
    }

    /// The per-client line of fisk-ai (reference 5.4); informational, the gate decides per call.
    fn log_connected(&self, name: &str, reach: Reach) {
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
/// ([`crate::intake`]). Without either, a session-less legacy HTTP request carries no name
/// (rmcp fills in a placeholder, which is not the client's).
pub(crate) fn client_name(context: &RequestContext<RoleServer>) -> String {
    let name = if confirm::is_modern(context) {
        context.meta.client_info().map(|info| info.name)
    } else if let Some(declared) = confirm::declared(context) {
        // A stateless server's record of the client's initialize.
        match declared {
            crate::intake::Declared::Known(record) => Some(record.name.clone()),
            crate::intake::Declared::Unknown => None,
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

/// The rmcp handler.
#[derive(Debug, Clone)]
pub(crate) struct Handler {
    state: Arc<ServerState>,
}

impl Handler {
    /// A handler over `state`.
    pub(crate) fn new(state: Arc<ServerState>) -> Self {
        Self { state }
    }

    /// What it shares with the transports' `tools/list` fast paths.
    pub(crate) fn state(&self) -> &Arc<ServerState> {
        &self.state
    }
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        self.state.info.clone()
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // Most `tools/list` requests are answered as bytes before they get here
        // (crate::listing); these are the rest, answered from the same pages.
        self.state.note_modern_client(&context);
        let listing = &self.state.catalog.listing;
        let page = listing.page(request.as_ref().and_then(|params| params.cursor.as_deref()))?;
        let era = if confirm::is_modern(&context) {
            Era::Modern
        } else {
            Era::Legacy
        };
        let result = listing.result(page, era);
        self.state.first_answer.mark();
        result
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.state.catalog.tool(name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.state.note_modern_client(&context);
        let tool = request.name.to_string();
        // A panic must still answer the request: rmcp sends nothing for a panicked handler,
        // and the client would wait for its own timeout.
        let outcome = AssertUnwindSafe(crate::call::call(&self.state, request, context))
            .catch_unwind()
            .await;
        self.state.first_answer.mark();
        match outcome {
            Ok(response) => response,
            Err(panic) => {
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|text| text.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic without a message".to_string());
                tracing::error!(tool = %label(&tool), "internal error: {}", label(&message));
                Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                    "internal error: {message}"
                ))])
                .into())
            }
        }
    }

    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        let mut info = self.get_info();
        // Deprecated in 2026-07-28, and `logging/setLevel` is gone: nothing to declare.
        info.capabilities.logging = None;
        self.state.first_answer.mark();
        Ok(DiscoverResult::from_server_info(
            ServerHandler::supported_protocol_versions(self).into_owned(),
            info,
        ))
    }

    #[expect(
        deprecated,
        reason = "logging is deprecated (SEP-2577) but legacy clients use it"
    )]
    async fn set_level(
        &self,
        _request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // Legacy clients may set a level; no log notifications are sent at any level, so
        // there is nothing to change. The 2026-07-28 protocol removed the method.
        if confirm::is_modern(&context) {
            return Err(ErrorData::method_not_found::<SetLevelRequestMethod>());
        }
        Ok(())
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        Err(ErrorData::invalid_params(
            format!(
                "unknown prompt: {:?} (this server has no prompts)",
                request.name
            ),
            None,
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        // -32002 with the URI in `data` (2025-11-25); rmcp turns the code into -32602 for
        // 2026-07-28 clients (SEP-2164).
        Err(ErrorData::resource_not_found(
            "Resource not found",
            Some(serde_json::json!({ "uri": request.uri })),
        ))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let (name, reach) = match context.peer.peer_info() {
            Some(info) => {
                let reach = match &info.capabilities.elicitation {
                    Some(e) if e.form.is_some() || e.url.is_none() => Reach::Form,
                    Some(_) => Reach::UrlOnly,
                    None => Reach::None,
                };
                (info.client_info.name.clone(), reach)
            }
            None => (String::new(), Reach::None),
        };
        let name = if name.is_empty() {
            "unknown".to_string()
        } else {
            name
        };
        self.state.log_connected(&name, reach);
        // `initialize` has been answered.
        self.state.first_answer.mark();
    }
}
