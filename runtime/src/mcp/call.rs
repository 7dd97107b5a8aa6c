//! One `tools/call`, in the order of docs/runtime.md, "How a call runs": the tool's questions,
//! typed validation, confirmation gate (before a slot is taken, so a pending approval holds none),
//! a concurrency slot (waiting at most the tool timeout), the run with its own timeout, and
//! the result. Every path answers and writes one log line when it ends, and a call that runs
//! writes `Running <command line>` when it starts. Built-in tools take the same path, with
//! their trace line (`read_file docs/a.md`) where a command shows its command line. A command
//! runs as a job of its own (`job.rs`) that the request waits for (`tasks::wait`).

use std::sync::Arc;
use std::time::Instant;

use rmcp::ErrorData;
use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock};
use rmcp::service::RequestContext;
use tokio::sync::SemaphorePermit;

use crate::JsonObject;
use crate::builtins;
use crate::duration;
use crate::logging::label;
use crate::mcp::asking::Asking;
use crate::mcp::confirm::{Call, Gate, Reach, reach};
use crate::mcp::job::{Job, log_end};
use crate::mcp::questions::{Asker, Gathered};
use crate::mcp::state::{ServerState, client_name};
use crate::mcp::tools::Catalog;
use crate::mcp::trace::TraceContext;
use crate::principal::Principal;
use crate::process::cmdline::go_quote;
use crate::spec::app::{Builtin, Run, ToolSpec};
use crate::spec::params::Command;
use crate::telemetry::{CallSpan, KnowledgeFacts, Outcome, Served, class};

/// Runs one call to the end; `logs`: the client asked for `info` log messages, so a command's
/// output lines are sent as log notifications while it runs on the request. Only a tool of
/// `catalog` (the endpoint's tools) runs; any other is unknown there.
pub(crate) async fn call(
    state: &Arc<ServerState>,
    catalog: &Catalog,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
    logs: bool,
) -> Result<CallToolResponse, ErrorData> {
    let served = served(&context);
    let Some(spec) = catalog.get(&request.name) else {
        let trace = TraceContext::of(&context, &crate::logging::echo(&request.name));
        state
            .telemetry
            .tool_call(None, &request.name, trace.parts(), &served)
            .finish(Outcome::UnknownTool, None);
        return Err(ErrorData::invalid_params(
            format!("unknown tool: {}", crate::logging::echo(&request.name)),
            None,
        ));
    };
    let trace = TraceContext::of(&context, spec.name);
    let span = state
        .telemetry
        .tool_call(Some(spec.name), spec.name, trace.parts(), &served);
    let call = Ctx {
        state,
        spec,
        client: label(&client_name(&context)),
        started: Instant::now(),
        arguments: request.arguments.clone().unwrap_or_default(),
        request,
        context,
        logs,
        trace: trace.under(span.traceparent()),
        span: &span,
    };
    let response = match spec.run {
        Run::Command(ref spec) => command(&call, spec).await,
        Run::Builtin(builtin) => builtin_call(&call, builtin).await,
    };
    let (outcome, exit_code) = outcome(&response);
    span.finish(outcome, exit_code);
    response
}

/// Who and what the call is, for its span.
fn served(context: &RequestContext<RoleServer>) -> Served {
    let caller = match Principal::of(context) {
        Principal::Subject(subject) => Some(subject.to_string()),
        Principal::Session(_) | Principal::Holder => None,
    };
    let sender = client_name(context);
    Served {
        request: context.id.to_string(),
        caller,
        sender: (sender != "unknown").then_some(sender),
    }
}

/// How a call ended, for its span: Fisk AI's outcome and a command's exit code.
fn outcome(response: &Result<CallToolResponse, ErrorData>) -> (Outcome, Option<i64>) {
    match response {
        Err(_) => (Outcome::Error, None),
        Ok(CallToolResponse::InputRequired(_)) => (Outcome::Unanswered, None),
        Ok(CallToolResponse::Task(_)) => (Outcome::Deferred, None),
        Ok(CallToolResponse::Complete(result)) => {
            let exit_code = result
                .structured_content
                .as_ref()
                .and_then(|content| content.get("exit_code"))
                .and_then(serde_json::Value::as_i64);
            if result.is_error == Some(true) {
                (Outcome::Error, exit_code)
            } else {
                (Outcome::Executed, exit_code)
            }
        }
        Ok(_) => (Outcome::Executed, None),
    }
}

/// What every step of a call needs.
struct Ctx<'a> {
    state: &'a Arc<ServerState>,
    spec: &'static ToolSpec,
    client: String,
    started: Instant,
    arguments: JsonObject,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
    /// The client asked for log messages.
    logs: bool,
    /// The trace context a command gets: the call's span when telemetry exports one, else the
    /// caller's (docs/runtime.md, "How a call runs").
    trace: TraceContext,
    /// The call's span (nothing when telemetry is off).
    span: &'a CallSpan<'a>,
}

impl Ctx<'_> {
    /// The line logged when the command (or built-in) starts, once it has a slot: `Running
    /// <command line>`, as fisk-ai writes it (the line is already display-escaped).
    fn log_start(&self, line: &str) {
        tracing::info!(
            tool = self.spec.name,
            client = self.client,
            "Running {line}"
        );
    }

    /// The one line logged when the call ends.
    fn log_end(&self, outcome: &str, exit_code: Option<i32>, message: &str) {
        log_end(
            self.spec.name,
            &self.client,
            self.started,
            outcome,
            exit_code,
            message,
        );
    }

    /// The confirmation gate for a gated tool, showing `line`; `Some` answers instead, and an
    /// error refuses the request (an approval state that does not verify). `answers` are the
    /// answers to the tool's questions, `request_state` the echoed approval state.
    async fn gate(
        &self,
        line: &str,
        answers: Option<&JsonObject>,
        request_state: Option<&str>,
    ) -> Result<Option<CallToolResponse>, ErrorData> {
        let Some(trigger) = self.spec.confirm else {
            return Ok(None);
        };
        let by = Principal::of(&self.context).label();
        let gated = Call {
            tool: self.spec.name,
            trigger,
            command_line: line,
            arguments: &self.arguments,
            client: &self.client,
            by: &by,
            request_state,
            input_responses: self.request.input_responses.as_ref(),
            answers,
        };
        match self
            .state
            .confirmer
            .gate(&gated, &self.context, &self.state.shutdown)
            .await
        {
            Gate::Respond(response) => {
                if matches!(&response, CallToolResponse::Complete(result) if result.is_error == Some(true))
                {
                    self.span.mark(Outcome::ConfirmDenied);
                }
                Ok(Some(response))
            }
            Gate::Reject(error) => Err(error),
            Gate::Proceed => Ok(None),
        }
    }

    /// One slot per running call, for all clients together; a queued call waits at most the
    /// tool timeout, so a stuck server answers instead of piling up calls forever.
    async fn slot(
        &self,
        line: &str,
        quoted: &str,
    ) -> Result<SemaphorePermit<'_>, CallToolResponse> {
        let state = self.state;
        tokio::select! {
            biased;
            () = state.shutdown.cancelled() => {
                self.log_end("cancelled", None, &format!("Not run (shutting down): {line}"));
                Err(error_result(format!(
                    "cancelled: the server is shutting down, so {quoted} did not run"
                )))
            }
            () = self.context.ct.cancelled() => {
                self.log_end("cancelled", None, &format!("Not run (cancelled while queued): {line}"));
                Err(error_result(format!(
                    "cancelled while waiting for a free tool slot: {quoted} did not run"
                )))
            }
            permit = tokio::time::timeout(state.tool_timeout, state.slots.acquire()) => match permit {
                Ok(Ok(permit)) => Ok(permit),
                Ok(Err(_)) | Err(_) => {
                    self.log_end("busy", None, &format!("Not run (no free slot): {line}"));
                    self.span.mark(Outcome::Capacity);
                    Err(error_result(format!(
                        "the server is busy: all {} tool slots (max_concurrent_tools) stayed in use \
                         for {}, so {quoted} did not run; try again later",
                        state.max_concurrent,
                        duration::format(state.tool_timeout)
                    )))
                }
            }
        }
    }
}

/// A built-in: validate, gate, take a slot, run on a blocking thread within the tool timeout.
async fn builtin_call(call: &Ctx<'_>, builtin: Builtin) -> Result<CallToolResponse, ErrorData> {
    let state = call.state;
    let mut prepared = match builtins::prepare(&builtin, call.arguments.clone()) {
        Ok(prepared) => prepared,
        Err(error) => {
            tracing::info!(
                tool = call.spec.name,
                client = call.client,
                outcome = "invalid_arguments",
                "{error}"
            );
            return Ok(error_result(error.for_tool(call.spec.name)));
        }
    };
    let line = builtins::trace(&prepared);
    let quoted = go_quote(&line);
    if call.spec.confirm.is_some() {
        // A file outside the roots is refused before anyone is asked to approve reading it.
        let shared = Arc::clone(&state.builtins);
        let checked = tokio::task::spawn_blocking(move || {
            let confined = shared.confine(&builtin, &prepared);
            (confined, prepared)
        })
        .await;
        let (confined, back) = match checked {
            Ok(checked) => checked,
            Err(_) => {
                return Ok(error_result(
                    "internal error: the path check was stopped".into(),
                ));
            }
        };
        prepared = back;
        if let Err(error) = confined {
            let text = error.to_string();
            call.log_end(
                "failed",
                None,
                &format!("Refused before asking: {line}: {}", label(&text)),
            );
            return Ok(error_result(text));
        }
    }
    let state_echo = call.request.request_state.as_deref();
    if let Some(response) = call.gate(&line, None, state_echo).await? {
        return Ok(response);
    }
    let permit = match call.slot(&line, &quoted).await {
        Ok(permit) => permit,
        Err(response) => return Ok(response),
    };
    call.log_start(&line);
    let deadline = Instant::now() + state.tool_timeout;
    let shared = Arc::clone(&state.builtins);
    let hybrid = builtin
        .knowledge()
        .is_some_and(|spec| spec.embeddings.is_some());
    let child = call
        .span
        .knowledge(call.spec.name, prepared.top_k(&builtin), hybrid);
    let running = tokio::task::spawn_blocking(move || {
        let mut facts = KnowledgeFacts::default();
        let result = shared.run(&builtin, &prepared, Some(deadline), &mut facts);
        (result, facts)
    });
    let finished = tokio::select! {
        biased;
        () = state.shutdown.cancelled() => Err("the server is shutting down"),
        () = call.context.ct.cancelled() => {
            Err("the client cancelled the request or closed its response stream")
        }
        finished = tokio::time::timeout(state.tool_timeout, running) => match finished {
            Ok(joined) => Ok(joined),
            Err(_) => {
                drop(permit);
                child.finish(None, &KnowledgeFacts::failed(class::TIMEOUT));
                call.log_end("timeout", None, &format!("Timed out: {line}"));
                return Ok(error_result(format!(
                    "{quoted} timed out after {} (the tool timeout, tool_timeout / \
                     --tool-timeout)",
                    duration::format(state.tool_timeout)
                )));
            }
        },
    };
    drop(permit);
    let finished = match finished {
        Ok(Ok((result, facts))) => {
            child.finish(result.as_ref().ok().map(String::as_str), &facts);
            Ok(Ok(result))
        }
        Ok(Err(panicked)) => {
            child.finish(None, &KnowledgeFacts::default());
            Ok(Err(panicked))
        }
        Err(why) => {
            child.finish(None, &KnowledgeFacts::failed(class::CANCELED));
            Err(why)
        }
    };
    Ok(match finished {
        Err(why) => {
            call.log_end("cancelled", None, &format!("Cancelled ({why}): {line}"));
            error_result(format!(
                "{quoted} was cancelled after {} because {why}",
                duration::elapsed(call.started.elapsed())
            ))
        }
        Ok(Ok(Ok(text))) => {
            call.log_end(
                "ok",
                None,
                &format!(
                    "Ran {line} ({} bytes of result in {})",
                    text.len(),
                    duration::elapsed(call.started.elapsed())
                ),
            );
            CallToolResult::success(vec![ContentBlock::text(text)]).into()
        }
        Ok(Ok(Err(error))) => {
            let text = error.to_string();
            call.log_end("failed", None, &format!("Failed: {line}: {}", label(&text)));
            error_result(text)
        }
        Ok(Err(join)) => {
            let message = if join.is_panic() {
                "a panic in the built-in"
            } else {
                "the built-in was stopped"
            };
            call.log_end("failed", None, &format!("Failed: {line}: {message}"));
            error_result(format!("internal error: {message}"))
        }
    })
}

/// A command of the application: its questions asked, validated and gated here, run by a job
/// of its own that the request waits for (`tasks::wait`), so that a long one can become a
/// task. A client that declared tasks is asked inside a task instead (`asking.rs`).
async fn command(call: &Ctx<'_>, command: &'static Command) -> Result<CallToolResponse, ErrorData> {
    let state = call.state;
    let spec = call.spec;
    let required = crate::mcp::tasks::required(state.tasks.as_ref(), spec.name);
    if required && !crate::mcp::tasks::declared(&call.context) {
        // A task-required tool (`tasks.required`) runs only as a task: a client that did not
        // declare the extension is refused before anything else (SEP-2663, -32021).
        tracing::info!(
            tool = spec.name,
            client = call.client,
            outcome = "refused",
            "Not run: the tool runs only as a task and the client did not declare the tasks \
             extension"
        );
        return Err(crate::mcp::tasks::missing_extension(spec.name));
    }
    let asker = Asker {
        identity: state.confirmer.identity,
        tool: spec,
        arguments: &call.arguments,
        client: &call.client,
    };
    if let Some(text) = asker.model_filled() {
        tracing::info!(
            tool = spec.name,
            client = call.client,
            outcome = "invalid_arguments",
            "{text}"
        );
        return Ok(error_result(text));
    }
    let tasks = state
        .tasks
        .as_ref()
        .filter(|_| crate::mcp::tasks::declared(&call.context));
    let asks = !spec.questions.is_empty()
        || (spec.confirm.is_some() && state.confirmer.asks_in_task(&call.context));
    // A task-only tool asks its questions on the request (MRTR) and becomes a task once they
    // are answered (SEP-2663: the MRTR rounds come before the task is created).
    let questions_first = required && !spec.questions.is_empty();
    if let Some(store) = tasks
        && asks
        && !questions_first
        && call.request.request_state.is_none()
        && reach(&call.context) == Reach::Form
    {
        let asking = Asking {
            state: Arc::clone(state),
            spec,
            command,
            client: call.client.clone(),
            owner: Principal::of(&call.context),
            started: call.started,
            arguments: call.arguments.clone(),
            trace: call.trace.clone(),
        };
        return Ok(asking.start(store).await);
    }

    let mut request_state = call.request.request_state.as_deref();
    let mut answers = JsonObject::new();
    if !spec.questions.is_empty() {
        let gathered = asker
            .gather(
                &state.confirmer.states,
                request_state,
                call.request.input_responses.as_ref(),
                &call.context,
                &state.shutdown,
            )
            .await;
        match gathered {
            Gathered::Answers {
                answers: given,
                approval,
            } => {
                answers = given;
                // A questions state is not an approval: the gate asks anew.
                if !approval {
                    request_state = None;
                }
            }
            Gathered::Respond(response) => return Ok(response),
            Gathered::Reject(error) => return Err(error),
        }
    }
    let arguments = crate::mcp::questions::merged(&call.arguments, &answers);
    // A task sends no log notifications (the tasks extension has none), so neither does a call
    // that is a task from the start.
    let logs = call.logs && !required;
    let job = match Job::prepare(
        state,
        spec,
        command,
        &call.client,
        call.started,
        arguments,
        logs,
    ) {
        Ok(job) => job.traced(call.trace.clone()),
        Err(text) => return Ok(error_result(text)),
    };
    let answered = (!spec.questions.is_empty()).then_some(&answers);
    if let Some(response) = call.gate(&job.full_line, answered, request_state).await? {
        return Ok(response);
    }
    let quoted = job.quoted.clone();
    let wait = crate::mcp::tasks::Wait {
        tasks,
        at_once: required,
        tool: spec.name,
        quoted: &quoted,
    };
    let busy = job.busy();
    let response = crate::mcp::tasks::wait(job.start(), wait, &call.context).await;
    if busy.load(std::sync::atomic::Ordering::Relaxed) {
        call.span.mark(Outcome::Capacity);
    }
    Ok(response)
}

/// A tool error with `text`.
fn error_result(text: String) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(text)]).into()
}
