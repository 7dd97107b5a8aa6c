//! One `tools/call`, in the order of docs/runtime.md, "How a call runs": typed
//! validation, confirmation gate (before a slot is taken, so a pending approval holds none),
//! a concurrency slot (waiting at most the tool timeout), the run with its own timeout, and
//! the result. Every path answers and writes one log line when it ends, and a call that runs
//! writes `Running <command line>` when it starts. Built-in tools take the same path, with
//! their trace line (`read_file docs/a.md`) where a command shows its command line.

use std::sync::Arc;
use std::time::Instant;

use rmcp::ErrorData;
use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock};
use rmcp::service::RequestContext;
use serde_json::{Value, json};
use tokio::sync::SemaphorePermit;

use crate::JsonObject;
use crate::builtins;
use crate::contract::spec::{ArgvFn, Builtin, Run, ToolSpec};
use crate::duration;
use crate::logging::{cap_line, label};
use crate::mcp::arg_errors;
use crate::mcp::confirm::{Call, Gate};
use crate::mcp::state::{ServerState, client_name};
use crate::process::cmdline::{self, go_quote};
use crate::process::exec::{self, CancelReason, Outcome};

/// Runs one call to the end.
pub(crate) async fn call(
    state: &ServerState,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let Some(spec) = state.catalog.get(&request.name) else {
        return Err(ErrorData::invalid_params(
            format!("unknown tool: {:?}", request.name),
            None,
        ));
    };
    let call = Ctx {
        state,
        spec,
        client: label(&client_name(&context)),
        started: Instant::now(),
        arguments: request.arguments.clone().unwrap_or_default(),
        request,
        context,
    };
    Ok(match spec.run {
        Run::Command { argv, .. } => command(&call, argv).await,
        Run::Builtin(builtin) => builtin_call(&call, builtin).await,
    })
}

/// What every step of a call needs.
struct Ctx<'a> {
    state: &'a ServerState,
    spec: &'static ToolSpec,
    client: String,
    started: Instant,
    arguments: JsonObject,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
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
        tracing::info!(
            tool = self.spec.name,
            client = self.client,
            exit_code,
            duration_ms = self.started.elapsed().as_millis() as u64,
            outcome,
            "{message}"
        );
    }

    /// The confirmation gate for a gated tool, showing `line`; `Some` answers instead.
    async fn gate(&self, line: &str) -> Option<CallToolResponse> {
        let trigger = self.spec.confirm?;
        let gated = Call {
            tool: self.spec.name,
            trigger,
            command_line: line,
            arguments: &self.arguments,
            client: &self.client,
            request_state: self.request.request_state.as_deref(),
            input_responses: self.request.input_responses.as_ref(),
        };
        match self
            .state
            .confirmer
            .gate(&gated, &self.context, &self.state.shutdown)
            .await
        {
            Gate::Respond(response) => Some(response),
            Gate::Proceed => None,
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
async fn builtin_call(call: &Ctx<'_>, builtin: Builtin) -> CallToolResponse {
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
            return error_result(arg_errors::for_tool(call.spec.name, &error));
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
            Err(_) => return error_result("internal error: the path check was stopped".into()),
        };
        prepared = back;
        if let Err(text) = confined {
            call.log_end(
                "failed",
                None,
                &format!("Refused before asking: {line}: {}", label(&text)),
            );
            return error_result(text);
        }
    }
    if let Some(response) = call.gate(&line).await {
        return response;
    }
    let permit = match call.slot(&line, &quoted).await {
        Ok(permit) => permit,
        Err(response) => return response,
    };
    call.log_start(&line);
    let deadline = Instant::now() + state.tool_timeout;
    let shared = Arc::clone(&state.builtins);
    let running =
        tokio::task::spawn_blocking(move || shared.run(&builtin, &prepared, Some(deadline)));
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
                call.log_end("timeout", None, &format!("Timed out: {line}"));
                return error_result(format!(
                    "{quoted} timed out after {} (the tool timeout, tool_timeout / \
                     --tool-timeout)",
                    duration::format(state.tool_timeout)
                ));
            }
        },
    };
    drop(permit);
    match finished {
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
        Ok(Ok(Err(text))) => {
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
    }
}

/// A command of the application.
async fn command(call: &Ctx<'_>, argv: ArgvFn) -> CallToolResponse {
    let state = call.state;
    let spec = call.spec;
    let client = call.client.as_str();
    let argv = match argv(call.arguments.clone()) {
        Ok(argv) => argv.into_vec(),
        Err(error) => {
            tracing::info!(
                tool = spec.name,
                client,
                outcome = "invalid_arguments",
                "{error}"
            );
            return error_result(arg_errors::for_tool(spec.name, &error));
        }
    };
    let full_line = cmdline::display(&argv);
    // Error texts and log lines quote at most about 1 KiB of it (head and tail); the result's
    // `command` and the approval prompt show it whole.
    let line = cap_line(&full_line);
    let quoted = go_quote(&line);

    if let Some(response) = call.gate(&full_line).await {
        return response;
    }

    let Some(program) = &state.program else {
        tracing::warn!(
            tool = spec.name,
            client,
            outcome = "no_application",
            "{line}"
        );
        return error_result(format!(
            "command {quoted} has no application path to execute"
        ));
    };

    let log_end = |outcome: &str, exit_code: Option<i32>, message: &str| {
        call.log_end(outcome, exit_code, message);
    };
    let permit = match call.slot(&line, &quoted).await {
        Ok(permit) => permit,
        Err(response) => return response,
    };
    call.log_start(&line);

    let cancel = async {
        tokio::select! {
            biased;
            () = state.shutdown.cancelled() => CancelReason::Shutdown,
            () = call.context.ct.cancelled() => CancelReason::Client,
        }
    };
    let outcome = exec::run(
        exec::Command {
            program,
            args: &argv,
            env: &state.env,
            timeout: state.tool_timeout,
            groups: &state.groups,
        },
        cancel,
    )
    .await;
    drop(permit);

    match outcome {
        Outcome::Finished {
            status,
            output,
            elapsed,
        } => {
            let exit_code = exec::exit_code(&status);
            let signal = exec::signal_name(&status);
            let mut object = json!({
                "command": full_line,
                "exit_code": exit_code,
                "output": output.text,
                "truncated": output.truncated,
            });
            if let (Some(signal), Value::Object(map)) = (&signal, &mut object) {
                map.insert("signal".into(), Value::String(signal.clone()));
            }
            let outcome = match &signal {
                Some(_) => "signalled",
                None => "exited",
            };
            log_end(
                outcome,
                Some(exit_code),
                &format!(
                    "Ran {line} ({} bytes of output in {})",
                    output.total_bytes,
                    duration::elapsed(elapsed)
                ),
            );
            CallToolResult::structured(object).into()
        }
        Outcome::SpawnFailed(error) => {
            log_end(
                "spawn_failed",
                None,
                &format!("Could not start {line}: {error}"),
            );
            let hint = match error.kind() {
                std::io::ErrorKind::NotFound => {
                    " (the application was not found; check --application-path)".into()
                }
                std::io::ErrorKind::PermissionDenied => " (it is not executable)".into(),
                std::io::ErrorKind::ArgumentListTooLong => format!(
                    " (the command line is {} bytes; the system limits the arguments and \
                     environment of one command, and a single argument to 128 KiB on Linux)",
                    full_line.len()
                ),
                _ => String::new(),
            };
            error_result(format!(
                "running command {quoted}: cannot start {}: {error}{hint}",
                program.display()
            ))
        }
        Outcome::TimedOut { output } => {
            log_end("timeout", None, &format!("Timed out: {line}"));
            error_result(with_partial_output(
                format!(
                    "running command {quoted}: timed out after {} (the tool timeout, \
                     tool_timeout / --tool-timeout); the command and everything it started \
                     were killed",
                    duration::format(state.tool_timeout)
                ),
                &output,
            ))
        }
        Outcome::Cancelled {
            reason,
            output,
            elapsed,
        } => {
            let why = match reason {
                CancelReason::Client => {
                    "the client cancelled the request or closed its response stream"
                }
                CancelReason::Shutdown => "the server is shutting down",
            };
            log_end("cancelled", None, &format!("Cancelled ({why}): {line}"));
            error_result(with_partial_output(
                format!(
                    "running command {quoted}: cancelled after {} because {why}; the command \
                     and everything it started were killed",
                    duration::elapsed(elapsed)
                ),
                &output,
            ))
        }
        Outcome::Failed(error) => {
            log_end("failed", None, &format!("Lost track of {line}: {error}"));
            error_result(format!(
                "running command {quoted}: watching it failed: {error}; it was killed"
            ))
        }
    }
}

/// A tool error with `text`.
fn error_result(text: String) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(text)]).into()
}

/// Appends what the command printed before it was stopped, if anything.
fn with_partial_output(message: String, output: &crate::process::output::Output) -> String {
    if output.text.is_empty() {
        return message;
    }
    let cut = if output.truncated { " (truncated)" } else { "" };
    format!(
        "{message}.\n\nOutput before it was stopped{cut}:\n{}",
        output.text
    )
}
