//! One command's job: a slot from the shared pool (waiting at most the tool timeout), the run
//! with every limit of a call (`process::exec`), and its result with the texts of
//! docs/runtime.md ("Results"). A call starts the job and waits for it on the request; a long one
//! is handed to a task (`mcp::tasks`). The job never sees the request: what stops it is its
//! [`Stop`] (the request's cancellation, `tasks/cancel`, a task's TTL) or shutdown.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use crate::JsonObject;
use crate::duration;
use crate::logging::cap_line;
use crate::mcp::state::ServerState;
use crate::mcp::tasks::{Ran, Running, Stop};
use crate::mcp::trace::TraceContext;
use crate::process::cmdline::{self, go_quote};
use crate::process::exec::{self, CancelReason, Outcome};
use crate::process::live::Live;
use crate::spec::app::ToolSpec;
use crate::spec::params::Command;

/// One command, ready to run on its own (after validation and the gate).
pub(super) struct Job {
    pub(super) state: Arc<ServerState>,
    pub(super) tool: &'static str,
    pub(super) client: String,
    pub(super) started: Instant,
    pub(super) program: PathBuf,
    pub(super) argv: Vec<String>,
    /// The whole command line, for the result.
    pub(super) full_line: String,
    /// The command line for logs (at most about 1 KiB).
    pub(super) line: String,
    /// `line`, Go-quoted, for error texts.
    pub(super) quoted: String,
    /// Its output lines go to the client as log notifications (`tasks::log`).
    pub(super) logs: bool,
    /// The caller's trace context, set on the command as `TRACEPARENT`/`TRACESTATE`.
    pub(super) trace: TraceContext,
    /// Set when no slot freed up in time.
    busy: Arc<AtomicBool>,
}

impl Job {
    /// The job of one call of `command` with `arguments` (the client's, with the answers to the
    /// tool's questions joined in), sending its output lines as log notifications when `logs`,
    /// or the text of the tool error that refuses them.
    pub(super) fn prepare(
        state: &Arc<ServerState>,
        spec: &'static ToolSpec,
        command: &Command,
        client: &str,
        started: Instant,
        arguments: JsonObject,
        logs: bool,
    ) -> Result<Self, String> {
        let argv = match crate::spec::arguments::command_argv(command, arguments) {
            Ok(argv) => argv.into_vec(),
            Err(error) => {
                tracing::info!(
                    tool = spec.name,
                    client,
                    outcome = "invalid_arguments",
                    "{error}"
                );
                return Err(error.for_tool(spec.name));
            }
        };
        let full_line = cmdline::display(&argv);
        // Error texts and log lines quote at most about 1 KiB of it (head and tail); the result's
        // `command` and the approval prompt show it whole.
        let line = cap_line(&full_line).into_owned();
        let quoted = go_quote(&line);
        let Some(program) = &state.program else {
            tracing::warn!(
                tool = spec.name,
                client,
                outcome = "no_application",
                "{line}"
            );
            return Err(format!(
                "command {quoted} has no application path to execute"
            ));
        };
        Ok(Self {
            state: Arc::clone(state),
            tool: spec.name,
            client: client.to_string(),
            started,
            program: program.clone(),
            argv,
            full_line,
            line,
            quoted,
            logs,
            trace: TraceContext::default(),
            busy: Arc::default(),
        })
    }

    /// Set once the job is refused a slot (`max_concurrent_tools`), for the call's span.
    pub(super) fn busy(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.busy)
    }

    /// The job with the caller's trace context handed to its command.
    pub(super) fn traced(mut self, trace: TraceContext) -> Self {
        self.trace = trace;
        self
    }

    /// Starts the job.
    pub(super) fn start(self) -> Running {
        let stop = Arc::new(Stop::default());
        let live = Arc::new(if self.logs {
            Live::with_lines()
        } else {
            Live::default()
        });
        let started = self.started;
        let handle = tokio::spawn(self.run(Arc::clone(&stop), Arc::clone(&live)));
        Running {
            handle,
            stop,
            live,
            started,
        }
    }

    fn log_end(&self, outcome: &str, exit_code: Option<i32>, message: &str) {
        log_end(
            self.tool,
            &self.client,
            self.started,
            outcome,
            exit_code,
            message,
        );
    }

    /// A slot (waiting at most the tool timeout), the run, and its result.
    async fn run(self, stop: Arc<Stop>, live: Arc<Live>) -> Ran {
        let state = &*self.state;
        let (line, quoted) = (&self.line, &self.quoted);
        let permit = tokio::select! {
            biased;
            () = state.shutdown.cancelled() => {
                self.log_end("cancelled", None, &format!("Not run (shutting down): {line}"));
                return stopped(CancelReason::Shutdown, format!(
                    "cancelled: the server is shutting down, so {quoted} did not run"
                ));
            }
            reason = stop.stopped() => {
                self.log_end("cancelled", None, &format!("Not run (cancelled while queued): {line}"));
                return stopped(reason, format!(
                    "cancelled while waiting for a free tool slot, because {}: {quoted} did not run",
                    why(reason)
                ));
            }
            permit = tokio::time::timeout(state.tool_timeout, state.slots.acquire()) => match permit {
                Ok(Ok(permit)) => permit,
                Ok(Err(_)) | Err(_) => {
                    self.log_end("busy", None, &format!("Not run (no free slot): {line}"));
                    self.busy.store(true, Ordering::Relaxed);
                    return Ran { stopped: None, result: tool_error(format!(
                        "the server is busy: all {} tool slots (max_concurrent_tools) stayed in use \
                         for {}, so {quoted} did not run; try again later",
                        state.max_concurrent,
                        duration::format(state.tool_timeout)
                    ))};
                }
            }
        };
        tracing::info!(tool = self.tool, client = self.client, "Running {line}");
        // The caller's trace context goes after (so over) the server's own environment.
        let env: std::borrow::Cow<'_, [_]> = if self.trace.is_empty() {
            std::borrow::Cow::Borrowed(&state.env[..])
        } else {
            let mut env = state.env.clone();
            env.extend(self.trace.env());
            std::borrow::Cow::Owned(env)
        };
        let cancel = async {
            tokio::select! {
                biased;
                () = state.shutdown.cancelled() => CancelReason::Shutdown,
                reason = stop.stopped() => reason,
            }
        };
        let outcome = exec::run(
            exec::Command {
                program: &self.program,
                args: &self.argv,
                env: &env,
                timeout: state.tool_timeout,
                groups: &state.groups,
                live: Some(&live),
            },
            cancel,
        )
        .await;
        drop(permit);
        self.result(outcome, state.catalog.listing.structured_output)
    }

    /// The result of a run, logged; `structured`: as `structuredContent` (else the same JSON as
    /// text, `expose.agent.mcp.structured_output: false`). A command that ran answers
    /// `isError: false` whatever its exit status, unless `exit_code_is_error` makes a non-zero
    /// exit or a signal a tool error with the same content.
    fn result(&self, outcome: Outcome, structured: bool) -> Ran {
        let (line, quoted) = (&self.line, &self.quoted);
        let ended = |result| Ran {
            result,
            stopped: None,
        };
        match outcome {
            Outcome::Finished {
                status,
                output,
                elapsed,
            } => {
                let exit_code = exec::exit_code(&status);
                let signal = exec::signal_name(&status);
                let mut object = json!({
                    "command": self.full_line,
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
                self.log_end(
                    outcome,
                    Some(exit_code),
                    &format!(
                        "Ran {line} ({} bytes of output in {})",
                        output.total_bytes,
                        duration::elapsed(elapsed)
                    ),
                );
                let failed =
                    self.state.settings.exit_code_is_error && (exit_code != 0 || signal.is_some());
                ended(match (structured, failed) {
                    (true, false) => CallToolResult::structured(object),
                    (true, true) => CallToolResult::structured_error(object),
                    (false, false) => {
                        CallToolResult::success(vec![ContentBlock::text(object.to_string())])
                    }
                    (false, true) => {
                        CallToolResult::error(vec![ContentBlock::text(object.to_string())])
                    }
                })
            }
            Outcome::SpawnFailed(error) => {
                self.log_end(
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
                        self.full_line.len()
                    ),
                    _ => String::new(),
                };
                ended(tool_error(format!(
                    "running command {quoted}: cannot start {}: {error}{hint}",
                    self.program.display()
                )))
            }
            Outcome::TimedOut { output } => {
                self.log_end("timeout", None, &format!("Timed out: {line}"));
                ended(tool_error(with_partial_output(
                    format!(
                        "running command {quoted}: timed out after {} (the tool timeout, \
                         tool_timeout / --tool-timeout); the command and everything it started \
                         were killed",
                        duration::format(self.state.tool_timeout)
                    ),
                    &output,
                )))
            }
            Outcome::Cancelled {
                reason,
                output,
                elapsed,
            } => {
                let why = why(reason);
                self.log_end("cancelled", None, &format!("Cancelled ({why}): {line}"));
                stopped(
                    reason,
                    with_partial_output(
                        format!(
                            "running command {quoted}: cancelled after {} because {why}; the \
                             command and everything it started were killed",
                            duration::elapsed(elapsed)
                        ),
                        &output,
                    ),
                )
            }
            Outcome::Failed(error) => {
                self.log_end("failed", None, &format!("Lost track of {line}: {error}"));
                ended(tool_error(format!(
                    "running command {quoted}: watching it failed: {error}; it was killed"
                )))
            }
        }
    }
}

/// Why a command was stopped, as the end of a sentence.
fn why(reason: CancelReason) -> &'static str {
    match reason {
        CancelReason::Client => "the client cancelled the request or closed its response stream",
        CancelReason::Shutdown => "the server is shutting down",
        CancelReason::TaskCancelled => "the client cancelled the task (tasks/cancel)",
        CancelReason::TaskExpired => "the task outlived its TTL (tasks.ttl)",
        CancelReason::StoreFull => "the task store was full",
    }
}

/// A job stopped for `reason`, answering `text`.
fn stopped(reason: CancelReason, text: String) -> Ran {
    Ran {
        result: tool_error(text),
        stopped: Some(reason),
    }
}

/// A tool error result with `text`.
fn tool_error(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// The one line logged when a call ends.
pub(super) fn log_end(
    tool: &str,
    client: &str,
    started: Instant,
    outcome: &str,
    exit_code: Option<i32>,
    message: &str,
) {
    tracing::info!(
        tool,
        client,
        exit_code,
        duration_ms = started.elapsed().as_millis() as u64,
        outcome,
        "{message}"
    );
}

/// Appends what the command printed before it was stopped, if anything.
pub(super) fn with_partial_output(
    message: String,
    output: &crate::process::output::Output,
) -> String {
    if output.text.is_empty() {
        return message;
    }
    let cut = if output.truncated { " (truncated)" } else { "" };
    format!(
        "{message}.\n\nOutput before it was stopped{cut}:\n{}",
        output.text
    )
}
