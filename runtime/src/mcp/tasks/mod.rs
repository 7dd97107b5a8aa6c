//! Calls that outlast a moment: progress notifications while a command runs, and long calls
//! as tasks of the tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`).
//!
//! Every command runs in a spawned job (`call.rs`) that the request's handler waits for here.
//! The handler sends progress while it waits. For a client that declared the extension on the
//! request, a command still running after `tasks.after` becomes a task: the job is handed to a
//! supervisor, the store records it, and the request is answered with `CreateTaskResult`. From
//! then on the request's stream, its cancellation and the client's connection no longer matter;
//! the command keeps every other limit of a plain call (its slot, its timeout, its output
//! caps), `tasks/cancel` kills its process group, and its TTL bounds the whole task. A gated
//! call, or one with questions, by such a client becomes a task at once, which asks through
//! `input_required` and `tasks/update`; so does a task-required tool's (`tasks.required`), which
//! a client without the extension is refused with -32021 (docs/runtime.md, "Tasks"). While it
//! waits the handler also sends the command's lines as log notifications, when the client asked
//! for them ([`log`]; docs/runtime.md, "Log notifications").

mod flags;
pub(crate) mod log;
mod progress;
pub(crate) mod shared;
mod store;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::ErrorData;
use rmcp::RoleServer;
use rmcp::model::{
    CallToolResponse, CallToolResult, ClientCapabilities, ContentBlock, CreateTaskResult,
    InputRequests, TASKS_EXTENSION_ID, TaskPayload,
};
use rmcp::service::RequestContext;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::duration;
use crate::process::exec::CancelReason;
use crate::process::live::Live;
pub(crate) use flags::TaskArgs;
use log::Log;
use progress::Progress;
use store::Stage;
pub(crate) use store::{Answers, Refused, Store};

use crate::principal::{Principal, digest};

/// Far beyond any call (for a client that cannot get a task).
const NEVER: std::time::Duration = std::time::Duration::from_secs(100 * 365 * 24 * 60 * 60);

/// Stops one running command, saying why.
#[derive(Debug, Default)]
pub(crate) struct Stop {
    token: CancellationToken,
    reason: Mutex<Option<CancelReason>>,
}

impl Stop {
    /// Asks the command to stop; the first reason given is the one reported.
    pub(crate) fn stop(&self, reason: CancelReason) {
        self.reason
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert(reason);
        self.token.cancel();
    }

    /// Resolves once [`Stop::stop`] was called, with its reason.
    pub(crate) async fn stopped(&self) -> CancelReason {
        self.token.cancelled().await;
        self.reason
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .unwrap_or(CancelReason::Client)
    }
}

/// What a command's job ends with.
#[derive(Debug)]
pub(crate) struct Ran {
    /// The call's result.
    pub(crate) result: CallToolResult,
    /// Why it was stopped, when it was.
    pub(crate) stopped: Option<CancelReason>,
}

/// A command's job, started.
pub(crate) struct Running {
    /// The job.
    pub(crate) handle: JoinHandle<Ran>,
    /// Stops it.
    pub(crate) stop: Arc<Stop>,
    /// Its output so far.
    pub(crate) live: Arc<Live>,
    /// When its call arrived.
    pub(crate) started: std::time::Instant,
}

/// Judges the answers of one round of a task that asks (key -> response, and who gave them).
pub(crate) type Decide = Box<dyn FnOnce(Answers) -> Decision + Send>;

/// What the answers of a task that asks decide.
pub(crate) enum Decision {
    /// The answer is this result; nothing runs.
    Answer(CallToolResult),
    /// Answered (and approved where needed): the command was started.
    Run(Running),
    /// Ask another round before anything runs.
    Ask(Round),
}

/// One round of questions of a task that asks.
pub(crate) struct Round {
    /// The keys to ask for.
    pub(crate) requests: InputRequests,
    /// The task's status message meanwhile.
    pub(crate) message: String,
    /// Judges the answers.
    pub(crate) decide: Decide,
}

/// Whether this request declared the tasks extension (per request in the 2026-07-28 era; for
/// legacy sessions, in `initialize`).
pub(crate) fn declared(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .is_some_and(|caps| caps.supports_tasks())
}

/// Whether `tool` runs only as a task (`tasks.required`), with tasks on.
pub(crate) fn required(tasks: Option<&Arc<Store>>, tool: &str) -> bool {
    tasks.is_some_and(|store| store.settings().required.contains(&tool))
}

/// The refusal of a task-required tool to a client that did not declare the extension:
/// -32021 with `data.requiredCapabilities.extensions["io.modelcontextprotocol/tasks"]` (rmcp
/// answers it with HTTP 400).
pub(crate) fn missing_extension(tool: &str) -> ErrorData {
    let mut error = ErrorData::missing_required_client_capability(
        ClientCapabilities::builder().enable_tasks().build(),
    );
    error.message = format!(
        "{tool:?} runs only as a task (tasks.required): declare the tasks extension \
         ({TASKS_EXTENSION_ID}) in the client's capabilities to call it"
    )
    .into();
    error
}

/// Stops the job if the handler is dropped before it is answered or handed over.
struct StopOnDrop(Option<Arc<Stop>>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if let Some(stop) = self.0.take() {
            stop.stop(CancelReason::Client);
        }
    }
}

/// How a request waits for its command's job.
pub(crate) struct Wait<'a> {
    /// The store, when this request may get a task.
    pub(crate) tasks: Option<&'a Arc<Store>>,
    /// A task at once (a task-required tool), rather than after `tasks.after`.
    pub(crate) at_once: bool,
    /// The tool.
    pub(crate) tool: &'static str,
    /// The command line for error texts.
    pub(crate) quoted: &'a str,
}

/// Waits for a command's job on the request: progress while it runs, the request's
/// cancellation stops it, and with `tasks` it becomes a task once it has run `tasks.after` (at
/// once with `at_once`).
pub(crate) async fn wait(
    running: Running,
    how: Wait<'_>,
    context: &RequestContext<RoleServer>,
) -> CallToolResponse {
    let Wait {
        tasks,
        at_once,
        tool,
        quoted,
    } = how;
    let Running {
        mut handle,
        stop,
        live,
        started: arrived,
    } = running;
    let mut guard = StopOnDrop(Some(Arc::clone(&stop)));
    let started = tokio::time::Instant::now();
    let after = match tasks {
        None => NEVER,
        Some(_) if at_once => std::time::Duration::ZERO,
        Some(store) => store.settings().after,
    };
    // A task-required call is a task from its first poll, however fast its command: a zero
    // `sleep` is only due at the timer's next turn, by which time (on a loaded machine) the
    // job may have finished too, and a call answered with a plain result is not a task.
    let become_task = async move {
        if !at_once {
            tokio::time::sleep(after).await;
        }
    };
    tokio::pin!(become_task);
    let mut progress = Progress::of(context, arrived);
    let log = Log::of(context, tool, &live);
    let mut ticks = tokio::time::interval_at(started + progress::PERIOD, progress::PERIOD);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut cancelled = false;
    loop {
        tokio::select! {
            // Becoming a task comes first: a task-required call must not be answered in line
            // because its job happened to finish before this loop first ran.
            biased;
            () = &mut become_task, if tasks.is_some() && !cancelled => {
                let Some(store) = tasks else { continue };
                if let Some(log) = &log {
                    log.hand_over(&live).await;
                }
                let message = "running".to_string();
                let stage = Stage::Running { stop: Arc::clone(&stop), live };
                match store.create(Principal::of(context), tool, arrived, stage, message).await {
                    Ok(task) => {
                        guard.0 = None;
                        // A task id is the key to the task: only its digest is logged.
                        tracing::info!(tool, task = %digest(&task.task_id), "Became a task after {}", duration::format(after));
                        let deadline = tokio::time::Instant::now() + store.settings().ttl;
                        supervise(Arc::clone(store), task.task_id.clone(), handle, stop, deadline);
                        return CreateTaskResult::new(task).into();
                    }
                    Err(refused) => {
                        stop.stop(CancelReason::StoreFull);
                        let _ = handle.await;
                        guard.0 = None;
                        let text = format!(
                            "running command {quoted}: still running after {}, so it had to \
                             become a task, but {}; the command and everything it started were \
                             killed. {}",
                            duration::format(after),
                            refused.explain(store.settings().ttl),
                            refused.advice()
                        );
                        tracing::warn!(tool, "Stopped: {}", refused.explain(store.settings().ttl));
                        return CallToolResult::error(vec![ContentBlock::text(text)]).into();
                    }
                }
            }
            ran = &mut handle => {
                guard.0 = None;
                if let Some(log) = &log {
                    log.finish(&live).await;
                }
                return finished(ran).into();
            }
            () = context.ct.cancelled(), if !cancelled => {
                cancelled = true;
                stop.stop(CancelReason::Client);
            }
            () = live.line_ready(), if log.is_some() => {
                if let Some(log) = &log {
                    log.send_ready(&live).await;
                }
            }
            _ = ticks.tick(), if progress.is_some() => {
                if let Some(progress) = progress.as_mut() {
                    progress.send(&live).await;
                }
            }
        }
    }
}

/// A call that asks the user before it runs, by a client that declared tasks: a task that
/// asks at once (`input_required` with `requests`, answered with `tasks/update`, a subset at a
/// time if the client likes); the round's `decide` judges the answers once every key is
/// answered, and may start the command or ask another round. `Err` is the refusal (the store is
/// full, or the shared store cannot be reached). The task belongs to `owner`.
pub(crate) async fn ask(
    store: &Arc<Store>,
    owner: Principal,
    tool: &'static str,
    first: Round,
) -> Result<CallToolResponse, Refused> {
    let Round {
        requests,
        message,
        decide,
    } = first;
    let (answer, answered) = oneshot::channel();
    let stage = Stage::Asking {
        requests,
        answers: BTreeMap::new(),
        answer: Some(answer),
    };
    let ttl = store.settings().ttl;
    let task = store
        .create(owner, tool, std::time::Instant::now(), stage, message)
        .await?;
    let id = task.task_id.clone();
    let store = Arc::clone(store);
    let deadline = tokio::time::Instant::now() + ttl;
    tokio::spawn(async move {
        let mut answered = answered;
        let mut decide = decide;
        loop {
            let answers = tokio::select! {
                answers = answered => answers.ok(),
                () = tokio::time::sleep_until(deadline) => {
                    store.settle(&id, expired(ttl, "while waiting for the user; nothing ran"), "expired".into());
                    return;
                }
            };
            let Some(answers) = answers else {
                store.settle(
                    &id,
                    TaskPayload::Cancelled,
                    "cancelled by tasks/cancel while waiting for the user; nothing ran".into(),
                );
                return;
            };
            match decide(answers) {
                Decision::Answer(result) => {
                    let message = if result.is_error == Some(true) {
                        "not run; nothing ran"
                    } else {
                        "answered"
                    };
                    store.settle(&id, completed(&result), message.to_string());
                    return;
                }
                Decision::Run(running) => {
                    store.running(&id, Arc::clone(&running.stop), running.live);
                    supervise(store, id, running.handle, running.stop, deadline);
                    return;
                }
                Decision::Ask(Round {
                    requests,
                    message,
                    decide: next,
                }) => {
                    let (answer, again) = oneshot::channel();
                    store.ask_again(&id, requests, answer, message);
                    answered = again;
                    decide = next;
                }
            }
        }
    });
    Ok(CreateTaskResult::new(task).into())
}

/// Waits for a task's job until the task's TTL ends at `deadline`, and records how it ended.
fn supervise(
    store: Arc<Store>,
    id: String,
    mut handle: JoinHandle<Ran>,
    stop: Arc<Stop>,
    deadline: tokio::time::Instant,
) {
    let ttl = store.settings().ttl;
    tokio::spawn(async move {
        let ran = tokio::select! {
            ran = &mut handle => ran,
            () = tokio::time::sleep_until(deadline) => {
                stop.stop(CancelReason::TaskExpired);
                handle.await
            }
        };
        let (payload, message) = match ran {
            Ok(Ran {
                stopped: Some(CancelReason::TaskCancelled),
                ..
            }) => (
                TaskPayload::Cancelled,
                "cancelled by tasks/cancel; the command and everything it started were killed"
                    .to_string(),
            ),
            Ok(Ran {
                stopped: Some(CancelReason::TaskExpired),
                ..
            }) => (
                expired(ttl, "before the command finished; it was killed"),
                "expired".to_string(),
            ),
            Ok(Ran { result, .. }) => {
                let message = if result.is_error == Some(true) {
                    "completed with a tool error"
                } else {
                    "completed"
                };
                (completed(&result), message.to_string())
            }
            Err(join) => (
                failed(&format!(
                    "internal error: the command's job stopped: {join}"
                )),
                "failed".to_string(),
            ),
        };
        store.settle(&id, payload, message);
    });
}

/// The answer to a request whose job ended on the request.
fn finished(ran: Result<Ran, tokio::task::JoinError>) -> CallToolResult {
    match ran {
        Ok(ran) => ran.result,
        Err(join) => CallToolResult::error(vec![ContentBlock::text(format!(
            "internal error: the command's job stopped: {join}"
        ))]),
    }
}

/// `completed` with `result` inlined.
fn completed(result: &CallToolResult) -> TaskPayload {
    let result = match serde_json::to_value(result) {
        Ok(Value::Object(map)) => map,
        _ => Default::default(),
    };
    TaskPayload::Completed { result }
}

/// `failed` with an internal JSON-RPC error saying `message`.
fn failed(message: &str) -> TaskPayload {
    let error = json!({ "code": -32603, "message": message });
    TaskPayload::Failed {
        error: error.as_object().cloned().unwrap_or_default(),
    }
}

/// `failed` because the task outlived its TTL.
fn expired(ttl: std::time::Duration, when: &str) -> TaskPayload {
    failed(&format!(
        "task expired: its TTL ({}, tasks.ttl) passed {when}",
        duration::format(ttl)
    ))
}
