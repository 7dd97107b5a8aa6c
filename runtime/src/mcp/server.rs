//! The MCP handler: what rmcp calls for every request, in both protocol eras and on every
//! transport. It is a cheap `Arc` clone, because rmcp's HTTP service asks its factory for a
//! handler per session and per stateless request.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams,
    CompleteRequestMethod, CompleteRequestParams, CompleteResult, ContentBlock, DiscoverResult,
    GetPromptRequestParams, GetPromptResponse, GetSkillRequestParams, GetSkillResult,
    GetTaskParams, GetTaskResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListSkillsResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerConfig, SetLevelRequestMethod,
    SubscribeRequestParams, Tool, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::logging::label;
use crate::mcp::confirm::{self, Reach};
use crate::mcp::finder::{Answer, Finder};
use crate::mcp::state::ServerState;
use crate::mcp::tasks::log::SessionLevel;
use crate::mcp::tools::Catalog;
use crate::principal::Principal;

/// The cursor of a list request.
fn cursor(request: Option<&PaginatedRequestParams>) -> Option<&str> {
    request.and_then(|params| params.cursor.as_deref())
}

/// The rmcp handler.
#[derive(Debug, Clone)]
pub(crate) struct Handler {
    state: Arc<ServerState>,
    /// The tools of the endpoint this handler answers on: the whole set, or one group's
    /// (`/mcp/<group>`); the list it answers and the only tools it runs.
    catalog: Arc<Catalog>,
    /// Catalog mode over `catalog` (`--catalog search`): the four fixed tools instead.
    finder: Option<Arc<Finder>>,
    /// The level `logging/setLevel` set in this session (legacy clients).
    log_level: SessionLevel,
}

impl Handler {
    /// A handler over `state`.
    pub(crate) fn new(state: Arc<ServerState>) -> Self {
        let catalog = Arc::clone(&state.catalog);
        Self::part(state, catalog)
    }

    /// A handler over `state` that lists and runs only `catalog`'s tools (one group's part,
    /// built once at start from the whole set).
    pub(crate) fn part(state: Arc<ServerState>, catalog: Arc<Catalog>) -> Self {
        Self {
            state,
            catalog,
            finder: None,
            log_level: SessionLevel::default(),
        }
    }

    /// This handler in catalog mode with `finder` (over its tools): it lists the four fixed
    /// tools and runs its tools through them.
    pub(crate) fn with_finder(mut self, finder: Option<Arc<Finder>>) -> Self {
        self.finder = finder;
        self
    }

    /// A handler for a new session: the same state and tools, a log level of its own.
    pub(crate) fn for_session(&self) -> Self {
        Self::part(Arc::clone(&self.state), Arc::clone(&self.catalog))
            .with_finder(self.finder.clone())
    }

    /// `message` (one JSON-RPC message as rmcp wrote it) as the client gets it: a
    /// `tools/list` answer with its page's entries written in
    /// ([`crate::mcp::listing::Listing::expand`]); `None` for any other message.
    pub(crate) fn expand_list(&self, message: &str) -> Option<String> {
        match self.finder {
            Some(_) => None,
            None => self.catalog.listing.expand(message),
        }
    }
}

impl Handler {
    /// The task store; rmcp answers `tasks/*` with -32601 itself when the extension is not
    /// declared, so this error is only a safeguard.
    fn tasks(&self) -> Result<&Arc<crate::mcp::tasks::Store>, ErrorData> {
        self.state
            .tasks
            .as_ref()
            .ok_or_else(ErrorData::method_not_found::<rmcp::model::GetTaskMethod>)
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
        // Every `tools/list`, on every transport; the transports write the chosen page's
        // entries into the answer (Handler::expand_list).
        self.state.note_modern_client(&context);
        let listing = &self.catalog.listing;
        let cursor = request.as_ref().and_then(|params| params.cursor.as_deref());
        let result = match &self.finder {
            // Catalog mode: one page of the four fixed tools, no cursor of ours to follow.
            Some(finder) => {
                if let Some(cursor) = cursor {
                    return Err(ErrorData::invalid_params(
                        format!(
                            "invalid cursor {}: this server did not issue it (its list is one \
                             page)",
                            crate::logging::echo(cursor)
                        ),
                        None,
                    ));
                }
                Ok(listing.fixed(finder.tools(), confirm::is_modern(&context)))
            }
            None => {
                let page = listing.page(cursor)?;
                Ok(listing.result(page, confirm::is_modern(&context)))
            }
        };
        self.state.first_answer.mark();
        result
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        match &self.finder {
            Some(finder) => finder.tool(name).cloned(),
            None => self.catalog.tool(name).cloned(),
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.state.note_modern_client(&context);
        let tool = request.name.to_string();
        let logs = self.log_level.wants_info(&context);
        let request = match &self.finder {
            // Catalog mode: search and describe are answered here; a runner's call becomes the
            // served tool's own call, on the same path as a direct one.
            Some(finder) => match finder.answer(&self.catalog, &request)? {
                Answer::Done(response) => {
                    self.state.first_answer.mark();
                    return Ok(response);
                }
                Answer::Run(call) => call,
            },
            None => request,
        };
        let outcome = answered(
            &tool,
            crate::mcp::call::call(&self.state, &self.catalog, request, context, logs),
        )
        .await;
        self.state.first_answer.mark();
        outcome
    }

    // A task is answered only to the principal that created it; to anyone else it is
    // unknown (docs/security.md).

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.tasks()?
            .get(&request.task_id, &Principal::of(&context))
            .await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks()?
            .update(
                &request.task_id,
                &Principal::of(&context),
                request.input_responses,
            )
            .await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks()?
            .cancel(&request.task_id, &Principal::of(&context))
            .await
    }

    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        let mut info = self.get_info();
        // Deprecated in 2026-07-28, and `logging/setLevel` is gone: nothing to declare.
        info.capabilities.logging = None;
        crate::mcp::docs::undeclare_legacy(&mut info.capabilities);
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
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // At `info` or below, the session's later calls send their command's output lines as
        // log notifications (docs/runtime.md, "Log notifications"). The 2026-07-28 protocol
        // removed the method: a request's `_meta` log level says it instead.
        if confirm::is_modern(&context) {
            return Err(ErrorData::method_not_found::<SetLevelRequestMethod>());
        }
        self.log_level.set(request.level);
        Ok(())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.state.note_modern_client(&context);
        let answer = self.state.docs.list_resources(cursor(request.as_ref()));
        self.state.first_answer.mark();
        answer
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.state.docs.list_templates(cursor(request.as_ref()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        // Unknown URIs: -32002 with the URI in `data` (2025-11-25); rmcp turns the code into
        // -32602 for 2026-07-28 clients (SEP-2164).
        self.state.docs.read(&request.uri).map(Into::into)
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.state.docs.subscribe(&request.uri)
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.state.docs.subscribe(&request.uri)
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.state.note_modern_client(&context);
        self.state.docs.list_prompts(cursor(request.as_ref()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.state
            .docs
            .get_prompt(&request.name, request.arguments.as_ref())
            .map(Into::into)
    }

    // Skills (SEP-2640): rmcp answers -32601 itself unless the extension is declared, and
    // checks every entry before it is sent.

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        self.state.note_modern_client(&context);
        self.state.docs.list_skills(cursor(request.as_ref()))
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        self.state.docs.get_skill(&request.uri)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        if !self.state.docs.completes() {
            return Err(ErrorData::method_not_found::<CompleteRequestMethod>());
        }
        self.state.docs.complete(&request)
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

/// A call's answer, even when it panics: rmcp sends nothing for a panicked handler, and the
/// client would wait for its own timeout; a panic becomes `internal error: <message>`.
async fn answered(
    tool: &str,
    call: impl Future<Output = Result<CallToolResponse, ErrorData>>,
) -> Result<CallToolResponse, ErrorData> {
    match AssertUnwindSafe(call).catch_unwind().await {
        Ok(response) => response,
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|text| text.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_string());
            tracing::error!(tool = %label(tool), "internal error: {}", label(&message));
            Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                "internal error: {message}"
            ))])
            .into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panicking_call_still_answers_with_an_internal_error() {
        let answer = answered("broken", async {
            if "broken".len() == 6 {
                panic!("the call broke");
            }
            Ok(CallToolResult::success(Vec::new()).into())
        })
        .await;
        let Ok(CallToolResponse::Complete(result)) = answer else {
            panic!("no tool result: {answer:?}");
        };
        assert_eq!(result.is_error, Some(true));
        assert_eq!(
            serde_json::to_value(&result.content).expect("serializable"),
            serde_json::json!([{"type": "text", "text": "internal error: the call broke"}])
        );
    }
}
