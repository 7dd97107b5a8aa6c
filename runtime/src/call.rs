//! One `tools/call`, in the order of DESIGN.md section 4 and fisk-ai reference 4.1: typed
//! validation, confirmation gate (before a slot is taken, so a pending approval holds none),
//! a concurrency slot (waiting at most the tool timeout), the run with its own timeout, and
//! the result. Every path answers and writes one log line.

use std::time::Instant;

use rmcp::ErrorData;
use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock};
use rmcp::service::RequestContext;
use serde_json::{Value, json};

use crate::cmdline::{self, go_quote};
use crate::confirm::{Call, Gate};
use crate::duration;
use crate::exec::{self, CancelReason, Outcome};
use crate::logging::label;
use crate::server::{ServerState, client_name};
use crate::spec::Run;

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
    let client = label(&client_name(&context));
    let started = Instant::now();
    let arguments = request.arguments.clone().unwrap_or_default();
    let Run::Command { argv, .. } = spec.run;
    let argv = match argv(arguments.clone()) {
        Ok(argv) => argv.into_vec(),
        Err(error) => {
            tracing::info!(
                tool = spec.name,
                client,
                outcome = "invalid_arguments",
                "{error}"
            );
            return Ok(error_result(error.to_string()));
        }
    };
    let line = cmdline::display(&argv);
    let quoted = go_quote(&line);

    if let Some(trigger) = spec.confirm {
        let gated = Call {
            tool: spec.name,
            trigger,
            command_line: &line,
            arguments: &arguments,
            client: &client,
            request_state: request.request_state.as_deref(),
            input_responses: request.input_responses.as_ref(),
        };
        if let Gate::Respond(response) = state
            .confirmer
            .gate(&gated, &context, &state.shutdown)
            .await
        {
            return Ok(response);
        }
    }

    let Some(program) = &state.program else {
        tracing::warn!(
            tool = spec.name,
            client,
            outcome = "no_application",
            "{line}"
        );
        return Ok(error_result(format!(
            "command {quoted} has no application path to execute"
        )));
    };

    let log_end = |outcome: &str, exit_code: Option<i32>, message: &str| {
        tracing::info!(
            tool = spec.name,
            client,
            exit_code,
            duration_ms = started.elapsed().as_millis() as u64,
            outcome,
            "{message}"
        );
    };

    // One slot per running command, for all clients together; a queued call waits at most the
    // tool timeout, so a stuck server answers instead of piling up calls forever.
    let permit = tokio::select! {
        biased;
        () = state.shutdown.cancelled() => {
            log_end("cancelled", None, &format!("Not run (shutting down): {line}"));
            return Ok(error_result(format!(
                "cancelled: the server is shutting down, so {quoted} did not run"
            )));
        }
        () = context.ct.cancelled() => {
            log_end("cancelled", None, &format!("Not run (cancelled while queued): {line}"));
            return Ok(error_result(format!(
                "cancelled while waiting for a free tool slot: {quoted} did not run"
            )));
        }
        permit = tokio::time::timeout(state.tool_timeout, state.slots.acquire()) => match permit {
            Ok(Ok(permit)) => permit,
            Ok(Err(_)) | Err(_) => {
                log_end("busy", None, &format!("Not run (no free slot): {line}"));
                return Ok(error_result(format!(
                    "the server is busy: all {} tool slots (max_concurrent_tools) stayed in use \
                     for {}, so {quoted} did not run; try again later",
                    state.max_concurrent,
                    duration::format(state.tool_timeout)
                )));
            }
        }
    };

    let cancel = async {
        tokio::select! {
            biased;
            () = state.shutdown.cancelled() => CancelReason::Shutdown,
            () = context.ct.cancelled() => CancelReason::Client,
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

    let result = match outcome {
        Outcome::Finished {
            status,
            output,
            elapsed,
        } => {
            let exit_code = exec::exit_code(&status);
            let signal = exec::signal_name(&status);
            let mut object = json!({
                "command": line,
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
                    " (the application was not found; check --application-path)"
                }
                std::io::ErrorKind::PermissionDenied => " (it is not executable)",
                _ => "",
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
    };
    Ok(result)
}

/// A tool error with `text`.
fn error_result(text: String) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(text)]).into()
}

/// Appends what the command printed before it was stopped, if anything.
fn with_partial_output(message: String, output: &crate::output::Output) -> String {
    if output.text.is_empty() {
        return message;
    }
    let cut = if output.truncated { " (truncated)" } else { "" };
    format!(
        "{message}.\n\nOutput before it was stopped{cut}:\n{}",
        output.text
    )
}
