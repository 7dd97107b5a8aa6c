//! The confirmation gate for tools tagged `ai:confirm` (or a `confirm_tags` entry), with the
//! prompt and result texts of fisk-ai (docs/runtime.md, "Confirmation").
//!
//! Two protocol eras ask differently. Legacy sessions (2025-06-18, 2025-11-25) that declared
//! elicitation get an `elicitation/create` request, sent from the handler's own task (rmcp ties
//! it to the originating request's stream through a task-local, so it must not be spawned) and
//! bounded by [`ELICITATION_TIMEOUT`]. 2026-07-28 clients get an input-required result (MRTR)
//! whose `requestState` is sealed and single-use ([`crate::mcp::request_state`]); the command runs
//! only on the retry that carries that state and an explicit approval. Clients that declare no
//! elicitation run ungated with a warning under `auto`, and are refused under `always`. A client
//! that declared elicitation but cannot be asked (a legacy client of a stateless server), or
//! whose declaration a stateless server cannot know, is refused in every mode but `never`: a
//! promised confirmation that cannot be had fails closed. Every refusal text is authoritative:
//! it tells the model the command did not run and not to retry (docs/runtime.md).

use std::time::Duration;

use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, ElicitRequest, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationSchema, InputRequest, InputRequests,
    InputRequiredResult, InputResponses,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::JsonObject;
use crate::logging::cap_line;
use crate::mcp::declared::Declared;
use crate::mcp::request_state::{Purpose, Refusal, RequestStates};
use crate::principal::Principal;
use crate::process::cmdline::go_quote;
use crate::spec::app::ConfirmMode;

/// How long a legacy client has to answer an approval prompt.
pub(crate) const ELICITATION_TIMEOUT: Duration = Duration::from_secs(120);

/// The key of the approval question in an MRTR or task `inputRequests` map.
pub(crate) const INPUT_KEY: &str = "confirm";

/// What the gate decided.
#[derive(Debug)]
pub(crate) enum Gate {
    /// Run the command.
    Proceed,
    /// Answer with this instead (a denial, or an MRTR question); nothing runs.
    Respond(CallToolResponse),
    /// Refuse the request with this JSON-RPC error (an approval state that does not verify,
    /// SEP-2322); nothing runs.
    Reject(ErrorData),
}

/// Settings and state of the gate.
#[derive(Debug)]
pub(crate) struct Confirmer {
    /// `confirm_over_mcp`.
    pub(crate) mode: ConfirmMode,
    /// The MCP server name, shown in the prompt.
    pub(crate) identity: &'static str,
    /// Seals and checks MRTR states.
    pub(crate) states: RequestStates,
}

/// One gated call.
#[derive(Debug)]
pub(crate) struct Call<'a> {
    /// Tool name.
    pub(crate) tool: &'a str,
    /// The tag that gates it.
    pub(crate) trigger: &'a str,
    /// The command line as displayed.
    pub(crate) command_line: &'a str,
    /// The call's arguments (what an MRTR state is bound to).
    pub(crate) arguments: &'a JsonObject,
    /// The client's name, for logs.
    pub(crate) client: &'a str,
    /// Who answers the approval (a principal's label, docs/security.md), for the audit line.
    pub(crate) by: &'a str,
    /// The echoed MRTR state, if any.
    pub(crate) request_state: Option<&'a str>,
    /// The MRTR answers, if any.
    pub(crate) input_responses: Option<&'a InputResponses>,
    /// The answers to the tool's questions (`crate::mcp::questions`), which an MRTR approval
    /// state carries along so that the approving round still has them.
    pub(crate) answers: Option<&'a JsonObject>,
}

/// Whether a client can be asked, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Reach {
    /// It declared form elicitation (or elicitation without modes, which means form).
    Form,
    /// It declared only URL-mode elicitation: it counts as askable, and every ask fails closed.
    UrlOnly,
    /// It declared no elicitation.
    None,
    /// A legacy client of a stateless server that declared elicitation: it expects to be asked,
    /// and the server cannot send it a request.
    Stranded,
    /// A legacy request to a stateless server without the record of what its client declared
    /// ([`crate::transport::intake`]): whether it expects to be asked is unknown.
    Unknown,
}

/// How the client of this request can be asked, from its capabilities (per-request `_meta` in
/// the 2026-07-28 era, the session's `initialize` otherwise). A stateless server keeps no
/// session, so for a legacy request the declaration comes from the record its HTTP layer put
/// in the request ([`Declared`]); the server cannot send such a client a request at all.
pub(crate) fn reach(context: &RequestContext<RoleServer>) -> Reach {
    if !is_modern(context)
        && let Some(declared) = declared(context)
    {
        return match declared {
            Declared::Known(record) if record.declared_elicitation() => Reach::Stranded,
            Declared::Known(_) => Reach::None,
            Declared::Unknown => Reach::Unknown,
        };
    }
    declared_reach(context.client_capabilities().as_ref())
}

/// How a client that declared `capabilities` can be asked.
pub(crate) fn declared_reach(capabilities: Option<&rmcp::model::ClientCapabilities>) -> Reach {
    match capabilities.and_then(|caps| caps.elicitation.as_ref()) {
        Some(elicitation) if elicitation.form.is_some() || elicitation.url.is_none() => Reach::Form,
        Some(_) => Reach::UrlOnly,
        None => Reach::None,
    }
}

/// The stateless server's record of what this request's client declared, if there is one.
pub(crate) fn declared(context: &RequestContext<RoleServer>) -> Option<&Declared> {
    context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Declared>())
}

/// Whether this request is in the 2026-07-28 era (no `initialize`, MRTR instead of requests).
pub(crate) fn is_modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| !version.has_initialize())
}

impl Confirmer {
    /// Decides whether `call` may run, asking the user if needed.
    pub(crate) async fn gate(
        &self,
        call: &Call<'_>,
        context: &RequestContext<RoleServer>,
        shutdown: &CancellationToken,
    ) -> Gate {
        if self.mode == ConfirmMode::Never {
            return Gate::Proceed;
        }
        let quoted = go_quote(&cap_line(call.command_line));
        match reach(context) {
            Reach::None => match self.mode {
                ConfirmMode::Always => {
                    self.log(
                        call,
                        "refused",
                        "the client cannot be asked (confirm_over_mcp=always)",
                    );
                    deny(format!(
                        "Not approved: running {quoted} requires approval, but this client \
                         cannot be asked (it does not support elicitation). The command did \
                         not run. {AUTHORITATIVE}"
                    ))
                }
                _ => {
                    tracing::warn!(
                        tool = call.tool,
                        client = call.client,
                        "running {quoted} ungated: gated by {} but the client cannot elicit approval",
                        call.trigger
                    );
                    Gate::Proceed
                }
            },
            Reach::Stranded => {
                self.log(
                    call,
                    "refused",
                    "the client declared elicitation, but a stateless server cannot ask a legacy \
                     client",
                );
                deny(format!(
                    "Not approved: running {quoted} requires approval, and this client supports \
                     elicitation, but this server is stateless and cannot send a request to a \
                     client of a 2025 protocol version, so it cannot ask. The command did not \
                     run. {AUTHORITATIVE} (To approve such commands, connect with protocol \
                     2026-07-28 or to a server with sessions.)"
                ))
            }
            Reach::Unknown => {
                self.log(
                    call,
                    "refused",
                    "a stateless server does not know whether the client can be asked (no \
                     record of its initialize in Mcp-Session-Id)",
                );
                deny(format!(
                    "Not approved: running {quoted} requires approval, and this stateless server \
                     does not know whether this client can be asked (the request does not carry \
                     the Mcp-Session-Id its initialize answer returned). The command did not run. \
                     {AUTHORITATIVE}"
                ))
            }
            Reach::UrlOnly => {
                self.log(
                    call,
                    "failed",
                    "the client supports only URL-mode elicitation",
                );
                deny(failed(
                    &quoted,
                    "the client supports only URL-mode elicitation, and approval needs a form",
                ))
            }
            Reach::Form if is_modern(context) => {
                let principal = Principal::of(context);
                self.mrtr(call, &quoted, principal.state_binding()).await
            }
            Reach::Form => self.elicit(call, &quoted, context, shutdown).await,
        }
    }

    /// Whether a gated call by this client is asked inside a task (it declared the tasks
    /// extension, so the server can park the call as `input_required`): only when the gate
    /// would ask it with a form at all.
    pub(crate) fn asks_in_task(&self, context: &RequestContext<RoleServer>) -> bool {
        self.mode != ConfirmMode::Never && reach(context) == Reach::Form
    }

    /// The question a task asks in its `inputRequests` (the same form as every other ask).
    pub(crate) fn task_question(&self, call: &Call<'_>) -> InputRequest {
        self.log(call, "asked", "input required (inside a task)");
        InputRequest::Elicitation(ElicitRequest::new(self.prompt(call)))
    }

    /// Judges the `tasks/update` answer to [`Confirmer::task_question`].
    pub(crate) fn judge_answer(&self, call: &Call<'_>, answer: Value) -> Gate {
        let quoted = go_quote(&cap_line(call.command_line));
        match serde_json::from_value::<ElicitResult>(answer) {
            Ok(result) => self.judge(call, &quoted, result),
            Err(error) => {
                self.log(call, "failed", &format!("malformed answer: {error}"));
                deny(failed(
                    &quoted,
                    &format!("the answer was malformed ({error})"),
                ))
            }
        }
    }

    /// 2026-07-28: ask with an input-required result, or judge the retry that answers it. The
    /// state is issued to, and only accepted from, `holder` (docs/security.md).
    async fn mrtr(&self, call: &Call<'_>, quoted: &str, holder: &str) -> Gate {
        let Some(state) = call.request_state else {
            return self.ask(call, quoted, "input required (MRTR)", holder);
        };
        if let Err(refusal) = self
            .states
            .redeem(state, call.tool, call.arguments, holder)
            .await
        {
            let detail = match &refusal {
                Refusal::Invalid(detail) => format!("invalid requestState: {detail}"),
                Refusal::Replayed => "requestState already used".to_string(),
                Refusal::Unchecked(detail) => {
                    format!("could not check that the requestState is unused: {detail}")
                }
            };
            self.log(call, "refused", &detail);
            // A state that does not verify is a bad request (SEP-2322: the server MUST reject
            // it; -32602, docs/runtime.md "Confirmation"); a record that did not answer is the
            // server's own failure, a tool error the client may retry.
            let why = match refusal {
                Refusal::Replayed => "the approval was already used once",
                Refusal::Invalid(_) => {
                    "the approval state was not issued for this call, was altered, or has expired"
                }
                Refusal::Unchecked(_) => {
                    return deny(failed(
                        quoted,
                        "the server could not check that the approval was not used before (its \
                         shared record of used approvals did not answer)",
                    ));
                }
            };
            return Gate::Reject(ErrorData::invalid_params(
                format!(
                    "invalid requestState: {why}, so {quoted} did not run; call the tool again \
                     without requestState and inputResponses to be asked anew"
                ),
                Some(json!({ "tool": call.tool })),
            ));
        }
        // The state is used up now, whatever follows. A retry without the answer is asked again
        // with a fresh state (SEP-2322: the server SHOULD re-request missing input).
        let answer = call
            .input_responses
            .and_then(|responses| responses.get(INPUT_KEY))
            .cloned();
        let Some(answer) = answer else {
            return self.ask(
                call,
                quoted,
                "input required again (MRTR; the retry carried no answer)",
                holder,
            );
        };
        match serde_json::from_value::<ElicitResult>(answer) {
            Ok(result) => self.judge(call, quoted, result),
            Err(error) => {
                self.log(call, "failed", &format!("malformed answer: {error}"));
                deny(failed(
                    quoted,
                    &format!("the answer was malformed ({error})"),
                ))
            }
        }
    }

    /// An input-required result asking for approval, with a newly sealed state.
    fn ask(&self, call: &Call<'_>, quoted: &str, detail: &str, holder: &str) -> Gate {
        let none = JsonObject::new();
        let answers = call.answers.unwrap_or(&none);
        match self.states.seal_with(
            call.tool,
            call.arguments,
            holder,
            Purpose::Approval,
            answers,
        ) {
            Ok(state) => {
                self.log(call, "asked", detail);
                let mut requests = InputRequests::new();
                requests.insert(
                    INPUT_KEY.into(),
                    InputRequest::Elicitation(ElicitRequest::new(self.prompt(call))),
                );
                Gate::Respond(InputRequiredResult::new(Some(requests), Some(state)).into())
            }
            Err(error) => {
                self.log(call, "failed", &error.to_string());
                deny(failed(
                    quoted,
                    &format!("the approval could not be prepared ({error})"),
                ))
            }
        }
    }

    /// Legacy sessions: ask with `elicitation/create` from this very task.
    async fn elicit(
        &self,
        call: &Call<'_>,
        quoted: &str,
        context: &RequestContext<RoleServer>,
        shutdown: &CancellationToken,
    ) -> Gate {
        self.log(call, "asked", "elicitation/create");
        let asked = context
            .peer
            .create_elicitation_with_timeout(self.prompt(call), Some(ELICITATION_TIMEOUT));
        let answer = tokio::select! {
            answer = asked => answer,
            () = context.ct.cancelled() => {
                self.log(call, "cancelled", "the request was cancelled while waiting for approval");
                return deny(failed(quoted, "the request was cancelled while waiting for approval"));
            }
            () = shutdown.cancelled() => {
                self.log(call, "cancelled", "the server is shutting down");
                return deny(failed(quoted, "the server is shutting down"));
            }
        };
        match answer {
            Ok(result) => self.judge(call, quoted, result),
            Err(rmcp::ServiceError::Timeout { timeout }) => {
                let detail = format!("no answer within {}", crate::duration::format(timeout));
                self.log(call, "failed", &detail);
                deny(failed(quoted, &detail))
            }
            Err(error) => {
                self.log(call, "failed", &error.to_string());
                deny(failed(quoted, &error.to_string()))
            }
        }
    }

    /// Maps the user's answer to the outcome.
    fn judge(&self, call: &Call<'_>, quoted: &str, result: ElicitResult) -> Gate {
        match result.action {
            ElicitationAction::Accept => {
                match result
                    .content
                    .as_ref()
                    .and_then(|content| content.get("approve"))
                {
                    Some(Value::Bool(true)) => {
                        self.log(call, "approved", "the user approved");
                        Gate::Proceed
                    }
                    Some(Value::Bool(false)) => {
                        self.log(call, "not approved", "the user chose not to run it");
                        deny(format!(
                            "Not approved: the user reviewed {quoted} and chose not to run it. \
                             This was their decision, not an error; do not retry."
                        ))
                    }
                    _ => {
                        self.log(call, "failed", "the answer had no boolean \"approve\"");
                        deny(failed(
                            quoted,
                            "the answer did not match the requested schema (\"approve\" must be \
                             true or false)",
                        ))
                    }
                }
            }
            ElicitationAction::Decline => {
                self.log(call, "declined", "the user declined");
                deny(format!(
                    "Not approved: the user declined to run {quoted}. This was their decision, \
                     not an error; do not retry, ask how they want to proceed."
                ))
            }
            // `cancel`, and any action a newer protocol may add: not a decision.
            _ => {
                self.log(call, "dismissed", "the user dismissed the prompt");
                deny(format!(
                    "Approval not completed: the user dismissed the approval prompt for {quoted} \
                     without deciding. The command did not run. The dismissal is the user's \
                     answer, not an error; do not retry, ask how they want to proceed."
                ))
            }
        }
    }

    /// The form the user sees.
    fn prompt(&self, call: &Call<'_>) -> ElicitRequestParams {
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: prompt_message(self.identity, call.command_line, call.trigger),
            requested_schema: approval_schema(),
        }
    }

    /// One log line per confirmation outcome.
    fn log(&self, call: &Call<'_>, outcome: &str, detail: &str) {
        let command = cap_line(call.command_line);
        tracing::info!(
            tool = call.tool,
            client = call.client,
            by = call.by,
            command = &*command,
            gated_by = call.trigger,
            outcome,
            "confirmation {outcome}: {detail}"
        );
    }
}

/// The approval prompt (newlines significant).
pub(crate) fn prompt_message(identity: &str, command_line: &str, trigger: &str) -> String {
    format!(
        "{identity} wants to run a command that requires your approval.\n\n\
         Command: {command_line}\n\
         Gated by: {trigger}\n\n\
         Approve to run it now, or refuse to skip it."
    )
}

/// One required boolean, `approve`.
fn approval_schema() -> ElicitationSchema {
    let schema = json!({
        "type": "object",
        "properties": {
            "approve": {
                "type": "boolean",
                "title": "Approve this command",
                "description": "Set to true to run the command now, or false to refuse."
            }
        },
        "required": ["approve"]
    });
    let object = schema.as_object().cloned().unwrap_or_default();
    // A constant that rmcp accepts (pinned by a test below); a panic here would still be
    // answered by the handler's panic guard.
    ElicitationSchema::from_json_schema(object).expect("the approval schema is valid")
}

/// Closes every refusal that is not the user's own decision: what the model must do next.
const AUTHORITATIVE: &str = "This answer is final for this call, not a transient error; do not \
                             retry, tell the user the command needs their approval.";

/// `Not approved: requesting approval to run <cmd> failed: <why>. The command did not run. ...`
fn failed(quoted: &str, why: &str) -> String {
    format!(
        "Not approved: requesting approval to run {quoted} failed: {why}. The command did not \
         run. {AUTHORITATIVE}"
    )
}

/// A denial: a tool error, nothing runs.
fn deny(text: String) -> Gate {
    Gate::Respond(CallToolResult::error(vec![ContentBlock::text(text)]).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_is_accepted_by_rmcp() {
        let schema = serde_json::to_value(approval_schema()).expect("serializes");
        assert_eq!(schema["properties"]["approve"]["type"], "boolean");
        assert_eq!(schema["required"], json!(["approve"]));
    }

    #[test]
    fn the_prompt_reads_like_the_reference() {
        assert_eq!(
            prompt_message("demo", "deploy -- prod", "ai:confirm"),
            "demo wants to run a command that requires your approval.\n\nCommand: deploy -- \
             prod\nGated by: ai:confirm\n\nApprove to run it now, or refuse to skip it."
        );
    }
}
