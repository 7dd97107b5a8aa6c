//! A call that asks the user before it runs (its questions, its approval), by a client that
//! declared the tasks extension: it becomes a task at once, which asks through
//! `input_required` and `tasks/update` (docs/runtime.md, "Tasks" and "Questions"). The
//! questions come first, all at once (a client may answer a subset per `tasks/update`; only the
//! pending keys stay in `inputRequests`); an answer that does not fit is asked again; then,
//! for a gated tool, the approval, showing the command line with the answers; then the command
//! starts. Nothing runs before every answer is in.

use std::sync::Arc;
use std::time::Instant;

use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, InputRequests};
use serde_json::Value;

use crate::JsonObject;
use crate::mcp::confirm::{Call, Gate, INPUT_KEY};
use crate::mcp::job::Job;
use crate::mcp::questions::{Asker, Stop, merged};
use crate::mcp::state::ServerState;
use crate::mcp::tasks::{Answers, Decide, Decision, Round, Store};
use crate::principal::Principal;
use crate::spec::app::{ConfirmMode, ToolSpec};
use crate::spec::params::Command;

/// One call to be asked inside a task.
#[derive(Clone)]
pub(crate) struct Asking {
    /// The server.
    pub(crate) state: Arc<ServerState>,
    /// The tool.
    pub(crate) spec: &'static ToolSpec,
    /// Its command.
    pub(crate) command: &'static Command,
    /// The client's name, for logs.
    pub(crate) client: String,
    /// Who called: the task is theirs.
    pub(crate) owner: Principal,
    /// When the call arrived.
    pub(crate) started: Instant,
    /// The arguments the client sent.
    pub(crate) arguments: JsonObject,
    /// The caller's trace context, for the command.
    pub(crate) trace: crate::mcp::trace::TraceContext,
}

impl Asking {
    /// Creates the task and asks its first round: the questions, or (a gated tool without
    /// questions) the approval.
    pub(crate) async fn start(self, store: &Arc<Store>) -> CallToolResponse {
        let tool = self.spec.name;
        let first = if self.spec.questions.is_empty() {
            self.job(&JsonObject::new()).map(|job| self.approval(job))
        } else {
            let asker = self.asker();
            asker.requests(&asker.all()).map(|requests| Round {
                message: waiting(&requests),
                requests,
                decide: self.clone().questions(JsonObject::new()),
            })
        };
        let first = match first {
            Ok(first) => first,
            Err(text) => return error_result(text),
        };
        match crate::mcp::tasks::ask(store, self.owner.clone(), tool, first).await {
            Ok(response) => response,
            Err(refused) => {
                let full = refused.explain(store.settings().ttl);
                crate::mcp::job::log_end(
                    tool,
                    &self.client,
                    self.started,
                    "busy",
                    None,
                    &format!("Not run ({full})"),
                );
                error_result(format!(
                    "{tool} needs the user's answers, which a client that declares tasks gives \
                     inside a task, but {full}; it did not run. {}",
                    refused.advice()
                ))
            }
        }
    }

    fn asker(&self) -> Asker<'_> {
        Asker {
            identity: self.state.confirmer.identity,
            tool: self.spec,
            arguments: &self.arguments,
            client: &self.client,
        }
    }

    /// The job with `answers` joined into the arguments.
    fn job(&self, answers: &JsonObject) -> Result<Job, String> {
        Job::prepare(
            &self.state,
            self.spec,
            self.command,
            &self.client,
            self.started,
            merged(&self.arguments, answers),
            // A task sends no log notifications (the tasks extension has none).
            false,
        )
        .map(|job| job.traced(self.trace.clone()))
    }

    /// Judges a round of answers to the questions, `answers` holding the earlier rounds'.
    fn questions(self, answers: JsonObject) -> Decide {
        Box::new(move |Answers { responses, .. }| {
            let mut answers = answers;
            let asks = match self.asker().take(responses, &mut answers) {
                Ok(asks) => asks,
                Err(Stop::Refused(text)) => return Decision::Answer(error(text)),
                Err(Stop::Malformed(key, why)) => {
                    return Decision::Answer(error(format!(
                        "Not run: the answer inputResponses.{key} is not an elicitation result \
                         ({why}). The command did not run."
                    )));
                }
            };
            if !asks.is_empty() {
                return match self.asker().requests(&asks) {
                    Ok(requests) => Decision::Ask(Round {
                        message: waiting(&requests),
                        requests,
                        decide: self.clone().questions(answers),
                    }),
                    Err(text) => Decision::Answer(error(text)),
                };
            }
            let job = match self.job(&answers) {
                Ok(job) => job,
                Err(text) => return Decision::Answer(error(text)),
            };
            if self.spec.confirm.is_some() && self.state.confirmer.mode != ConfirmMode::Never {
                Decision::Ask(self.approval(job))
            } else {
                Decision::Run(job.start())
            }
        })
    }

    /// The approval round of a gated tool, for `job`.
    fn approval(&self, job: Job) -> Round {
        let trigger = self.spec.confirm.unwrap_or("ai:confirm");
        let state = Arc::clone(&self.state);
        let arguments = self.arguments.clone();
        let owner = self.owner.label();
        let question = state
            .confirmer
            .task_question(&gated(&job, trigger, &arguments, &owner));
        let mut requests = InputRequests::new();
        requests.insert(INPUT_KEY.into(), question);
        let decide: Decide = Box::new(move |Answers { mut responses, by }| {
            let answer = responses.remove(INPUT_KEY).unwrap_or(Value::Null);
            // The approval is recorded as given by whoever answered.
            let by = by.label();
            let gate = state
                .confirmer
                .judge_answer(&gated(&job, trigger, &arguments, &by), answer);
            match gate {
                Gate::Proceed => Decision::Run(job.start()),
                Gate::Respond(CallToolResponse::Complete(result)) => Decision::Answer(result),
                Gate::Respond(_) => Decision::Answer(error(
                    "internal error: the approval could not be judged".to_string(),
                )),
                Gate::Reject(error_data) => Decision::Answer(error(error_data.message.into())),
            }
        });
        Round {
            message: waiting(&requests),
            requests,
            decide,
        }
    }
}

/// The status message of a task that asks for `requests`.
fn waiting(requests: &InputRequests) -> String {
    let keys: Vec<&str> = requests.keys().map(String::as_str).collect();
    if keys == [INPUT_KEY] {
        format!("waiting for the user's approval (inputRequests.{INPUT_KEY})")
    } else {
        format!(
            "waiting for the user's answers (inputRequests.{})",
            keys.join(", inputRequests.")
        )
    }
}

/// The gated call a job is, for the confirmation gate, answered by `by` (a principal's label).
fn gated<'a>(job: &'a Job, trigger: &'a str, arguments: &'a JsonObject, by: &'a str) -> Call<'a> {
    Call {
        tool: job.tool,
        trigger,
        command_line: &job.full_line,
        arguments,
        client: &job.client,
        by,
        request_state: None,
        input_responses: None,
        answers: None,
    }
}

/// A tool error result.
fn error(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// A tool error answer.
fn error_result(text: String) -> CallToolResponse {
    error(text).into()
}
