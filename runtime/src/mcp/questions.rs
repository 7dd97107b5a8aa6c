//! Questions (`expose.agent.mcp.ask`): parameters of a command that the user answers, not the
//! model. They are not in the advertised input schema; before the command runs, each question
//! is asked with an elicitation form built at build time from its parameters' own schemas, and
//! the answers join the call's arguments (docs/runtime.md, "Questions").
//!
//! Legacy sessions get one `elicitation/create` per question, in order. 2026-07-28 clients get
//! an input-required result with one `inputRequests` entry per unanswered question (keyed by
//! the question's name) and a sealed `requestState` carrying the answers given so far
//! ([`crate::mcp::request_state`], [`Purpose::Questions`]), so a client may answer some now and
//! the rest in a later round. Inside a task the same questions are asked through
//! `input_required` and `tasks/update` (`crate::mcp::asking`). A client that cannot be asked
//! with a form is refused: the command does not run without the user's values.

use std::collections::BTreeMap;

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
use crate::mcp::confirm::{ELICITATION_TIMEOUT, Reach, is_modern, reach};
use crate::mcp::request_state::{Purpose, Refusal, RequestStates};
use crate::principal::Principal;
use crate::spec::app::{QuestionSpec, ToolSpec};

/// What asking a tool's questions came to.
#[derive(Debug)]
pub(crate) enum Gathered {
    /// Every question is answered: question name -> parameter values. `approval` is set when
    /// the request's `requestState` was the approval gate's (it asked after the questions), so
    /// the gate redeems it.
    Answers {
        /// The answers.
        answers: JsonObject,
        /// Whether the echoed state is an approval state.
        approval: bool,
    },
    /// Answer with this (a question, or a refusal); nothing runs.
    Respond(CallToolResponse),
    /// Refuse the request (a state that does not verify, a response that is no elicitation
    /// result); nothing runs.
    Reject(ErrorData),
}

/// One call's questions.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Asker<'a> {
    /// The MCP server name, shown in the forms.
    pub(crate) identity: &'a str,
    /// The tool.
    pub(crate) tool: &'static ToolSpec,
    /// The arguments the client sent (what a state is bound to).
    pub(crate) arguments: &'a JsonObject,
    /// The client's name, for logs.
    pub(crate) client: &'a str,
}

/// A question to ask (again), with why the previous answer could not be used.
#[derive(Debug, Clone)]
pub(crate) struct Ask {
    /// The question.
    pub(crate) question: &'static QuestionSpec,
    /// Why it is asked again, when it is.
    pub(crate) note: Option<String>,
}

/// Why answering stopped.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The user declined or dismissed a question: the refusal text.
    Refused(String),
    /// A response is not an elicitation result: which key, and why.
    Malformed(String, String),
}

impl Asker<'_> {
    /// Refuses arguments that fill a parameter the user answers (the model must not).
    pub(crate) fn model_filled(&self) -> Option<String> {
        let spec = self.tool;
        spec.questions.iter().find_map(|question| {
            question
                .params
                .iter()
                .find(|param| self.arguments.contains_key(**param))
                .map(|param| {
                    format!(
                        "Not run: parameter {param:?} of {} is the user's to answer (question \
                         {:?}), not an argument; call the tool without it and the user is asked.",
                        spec.name, question.name
                    )
                })
        })
    }

    /// Asks every question the era's way, or judges the answers of this round.
    pub(crate) async fn gather(
        &self,
        states: &RequestStates,
        request_state: Option<&str>,
        responses: Option<&InputResponses>,
        context: &RequestContext<RoleServer>,
        shutdown: &CancellationToken,
    ) -> Gathered {
        match reach(context) {
            Reach::Form if is_modern(context) => {
                let principal = Principal::of(context);
                let holder = principal.state_binding();
                self.mrtr(states, request_state, responses, holder)
            }
            Reach::Form => self.elicit(context, shutdown).await,
            other => Gathered::Respond(refusal(self.cannot_ask(other))),
        }
    }

    /// Why a client that cannot be asked with a form is refused.
    pub(crate) fn cannot_ask(&self, reach: Reach) -> String {
        let why = match reach {
            Reach::UrlOnly => {
                "this client supports only URL-mode elicitation, and a question needs a form"
            }
            Reach::Stranded => {
                "this server is stateless and cannot send a request to a client of a 2025 \
                 protocol version (connect with protocol 2026-07-28 or to a server with sessions)"
            }
            Reach::Unknown => {
                "this stateless server does not know whether this client can be asked (the \
                 request does not carry the Mcp-Session-Id its initialize answer returned)"
            }
            Reach::Form | Reach::None => {
                "this client cannot be asked (it does not support elicitation)"
            }
        };
        let first = self.tool.questions.first().map_or("", |q| q.name);
        self.log("refused", why);
        format!(
            "Not run: {} needs the user's answer to the question {first:?} ({}), and {why}. The \
             command did not run. This answer is final for this call, not a transient error; do \
             not retry, and do not supply these values yourself: they are the user's.",
            self.tool.name,
            self.params_of(first)
        )
    }

    /// 2026-07-28: the answers so far (from the sealed state and this round's responses);
    /// what is still missing is asked with a new state.
    fn mrtr(
        &self,
        states: &RequestStates,
        request_state: Option<&str>,
        responses: Option<&InputResponses>,
        holder: &str,
    ) -> Gathered {
        let spec = self.tool;
        let mut answers = JsonObject::new();
        let mut approval = false;
        if let Some(state) = request_state {
            match states.open(state, spec.name, self.arguments, holder) {
                Ok(opened) => {
                    answers = opened.answers;
                    approval = opened.purpose == Purpose::Approval;
                }
                Err(refusal) => {
                    let detail = match &refusal {
                        Refusal::Invalid(detail) => detail.clone(),
                        Refusal::Replayed => "already used".into(),
                        Refusal::Unchecked(detail) => detail.clone(),
                    };
                    self.log("refused", &format!("invalid requestState: {detail}"));
                    return Gathered::Reject(ErrorData::invalid_params(
                        format!(
                            "invalid requestState: it was not issued for this call, was altered, \
                             or has expired, so {} did not run; call the tool again without \
                             requestState and inputResponses to be asked anew",
                            spec.name
                        ),
                        Some(json!({ "tool": spec.name })),
                    ));
                }
            }
        }
        let responses = responses.cloned().unwrap_or_default();
        let asks = match self.take(responses, &mut answers) {
            Ok(asks) => asks,
            Err(Stop::Refused(text)) => return Gathered::Respond(refusal(text)),
            Err(Stop::Malformed(key, error)) => {
                self.log(
                    "refused",
                    &format!("inputResponses.{key} is malformed: {error}"),
                );
                return Gathered::Reject(ErrorData::invalid_params(
                    format!(
                        "inputResponses.{key} is not an elicitation result ({error}): answer \
                         with {{\"action\": \"accept\", \"content\": {{...}}}}, \"decline\" or \
                         \"cancel\""
                    ),
                    Some(json!({ "tool": spec.name, "key": key })),
                ));
            }
        };
        if asks.is_empty() {
            return Gathered::Answers { answers, approval };
        }
        let requests = match self.requests(&asks) {
            Ok(requests) => requests,
            Err(error) => return Gathered::Respond(refusal(error)),
        };
        match states.seal_with(
            spec.name,
            self.arguments,
            holder,
            Purpose::Questions,
            &answers,
        ) {
            Ok(state) => {
                let names: Vec<&str> = asks.iter().map(|ask| ask.question.name).collect();
                self.log(
                    "asked",
                    &format!("input required (MRTR): {}", names.join(", ")),
                );
                Gathered::Respond(InputRequiredResult::new(Some(requests), Some(state)).into())
            }
            Err(error) => Gathered::Respond(refusal(format!(
                "Not run: the questions of {} could not be prepared ({error}). The command did \
                 not run.",
                spec.name
            ))),
        }
    }

    /// Legacy sessions: one `elicitation/create` per question, in order, from this very task
    /// (as the approval gate asks). An answer that does not fit refuses the call.
    async fn elicit(
        &self,
        context: &RequestContext<RoleServer>,
        shutdown: &CancellationToken,
    ) -> Gathered {
        let mut answers = JsonObject::new();
        for question in self.tool.questions {
            let params = match self.form(question, None) {
                Ok(params) => params,
                Err(error) => return Gathered::Respond(refusal(error)),
            };
            self.log("asked", &format!("elicitation/create: {}", question.name));
            let asked = context
                .peer
                .create_elicitation_with_timeout(params, Some(ELICITATION_TIMEOUT));
            let not_run = |why: &str| {
                self.log("failed", why);
                Gathered::Respond(refusal(format!(
                    "Not run: asking the user the question {:?} of {} failed: {why}. The command \
                     did not run.",
                    question.name, self.tool.name
                )))
            };
            let answer = tokio::select! {
                answer = asked => answer,
                () = context.ct.cancelled() => {
                    return not_run("the request was cancelled while waiting for the answer");
                }
                () = shutdown.cancelled() => return not_run("the server is shutting down"),
            };
            let result = match answer {
                Ok(result) => result,
                Err(rmcp::ServiceError::Timeout { timeout }) => {
                    return not_run(&format!(
                        "no answer within {}",
                        crate::duration::format(timeout)
                    ));
                }
                Err(error) => return not_run(&error.to_string()),
            };
            match self.judge(question, result) {
                Ok(values) => {
                    answers.insert(question.name.into(), Value::Object(values));
                }
                Err(Judged::Refused(text)) => return Gathered::Respond(refusal(text)),
                Err(Judged::Unfit(why)) => {
                    self.log("failed", &format!("{}: {why}", question.name));
                    return Gathered::Respond(refusal(format!(
                        "Not run: the answer to the question {:?} of {} does not fit: {why}. The \
                         command did not run; call the tool again to ask the user anew.",
                        question.name, self.tool.name
                    )));
                }
            }
        }
        Gathered::Answers {
            answers,
            approval: false,
        }
    }

    /// Judges this round's `responses` to the questions not yet in `answers` (extra keys are
    /// ignored, SEP-2322), adding the answers; returns the questions still to ask.
    pub(crate) fn take(
        &self,
        mut responses: BTreeMap<String, Value>,
        answers: &mut JsonObject,
    ) -> Result<Vec<Ask>, Stop> {
        let mut asks = Vec::new();
        for question in self.tool.questions {
            if answers.contains_key(question.name) {
                continue;
            }
            let Some(response) = responses.remove(question.name) else {
                asks.push(Ask {
                    question,
                    note: None,
                });
                continue;
            };
            let result = serde_json::from_value::<ElicitResult>(response)
                .map_err(|error| Stop::Malformed(question.name.into(), error.to_string()))?;
            match self.judge(question, result) {
                Ok(values) => {
                    self.log("answered", question.name);
                    answers.insert(question.name.into(), Value::Object(values));
                }
                Err(Judged::Refused(text)) => return Err(Stop::Refused(text)),
                Err(Judged::Unfit(why)) => {
                    self.log("asked again", &format!("{}: {why}", question.name));
                    asks.push(Ask {
                        question,
                        note: Some(why),
                    });
                }
            }
        }
        Ok(asks)
    }

    /// The `inputRequests` of `asks`, keyed by question name.
    pub(crate) fn requests(&self, asks: &[Ask]) -> Result<InputRequests, String> {
        let mut requests = InputRequests::new();
        for ask in asks {
            let params = self.form(ask.question, ask.note.as_deref())?;
            requests.insert(
                ask.question.name.into(),
                InputRequest::Elicitation(ElicitRequest::new(params)),
            );
        }
        Ok(requests)
    }

    /// Every question, for a first round.
    pub(crate) fn all(&self) -> Vec<Ask> {
        self.tool
            .questions
            .iter()
            .map(|question| Ask {
                question,
                note: None,
            })
            .collect()
    }

    /// The form of one question.
    fn form(
        &self,
        question: &QuestionSpec,
        note: Option<&str>,
    ) -> Result<ElicitRequestParams, String> {
        let schema = serde_json::from_str::<JsonObject>(question.form)
            .map_err(|error| error.to_string())
            .and_then(|object| {
                ElicitationSchema::from_json_schema(object).map_err(|error| error.to_string())
            })
            .map_err(|error| {
                format!(
                    "Not run: internal error: the form of the question {:?} of {} is invalid \
                     ({error}). The command did not run.",
                    question.name, self.tool.name
                )
            })?;
        let again = note
            .map(|why| format!("Your previous answer could not be used: {why}.\n\n"))
            .unwrap_or_default();
        Ok(ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: format!(
                "{again}{} asks for your input before it runs {}.\n\nQuestion: {}\nFields: {}",
                self.identity,
                self.tool.name,
                question.name,
                question.params.join(", ")
            ),
            requested_schema: schema,
        })
    }

    /// Maps the user's answer to one question to its parameter values.
    fn judge(&self, question: &QuestionSpec, result: ElicitResult) -> Result<JsonObject, Judged> {
        let tool = self.tool.name;
        let name = question.name;
        match result.action {
            ElicitationAction::Accept => match result.content {
                None | Some(Value::Object(_)) => {
                    let content = result.content.as_ref().and_then(Value::as_object);
                    check(question, content).map_err(Judged::Unfit)
                }
                Some(other) => Err(Judged::Unfit(format!(
                    "the content must be an object of the form's fields, not {other}"
                ))),
            },
            ElicitationAction::Decline => {
                self.log("declined", name);
                Err(Judged::Refused(format!(
                    "Not run: the user declined to answer the question {name:?} of {tool}, which \
                     the command needs. This was their decision, not an error; do not retry, ask \
                     how they want to proceed."
                )))
            }
            _ => {
                self.log("dismissed", name);
                Err(Judged::Refused(format!(
                    "Not run: the user dismissed the question {name:?} of {tool} without \
                     answering. The command did not run. The dismissal is the user's answer, not \
                     an error; do not retry, ask how they want to proceed."
                )))
            }
        }
    }

    /// The parameters of the question `name`, for texts.
    fn params_of(&self, name: &str) -> String {
        self.tool
            .questions
            .iter()
            .find(|q| q.name == name)
            .map(|q| q.params.join(", "))
            .unwrap_or_default()
    }

    /// One log line per question outcome.
    fn log(&self, outcome: &str, detail: &str) {
        tracing::info!(
            tool = self.tool.name,
            client = self.client,
            outcome,
            "question {outcome}: {detail}"
        );
    }
}

/// Why an answer was not taken.
enum Judged {
    /// Declined or dismissed: the refusal text.
    Refused(String),
    /// Accepted, but the content does not fit the form: why.
    Unfit(String),
}

/// The call's arguments with every answer joined in.
pub(crate) fn merged(arguments: &JsonObject, answers: &JsonObject) -> JsonObject {
    let mut merged = arguments.clone();
    for values in answers.values() {
        if let Value::Object(values) = values {
            merged.extend(values.clone());
        }
    }
    merged
}

/// The accepted `content` checked against the question's form: each field's type, enum and
/// presence when required; fields the form does not have are ignored.
pub(crate) fn check(
    question: &QuestionSpec,
    content: Option<&JsonObject>,
) -> Result<JsonObject, String> {
    let form: JsonObject = serde_json::from_str(question.form).map_err(|e| e.to_string())?;
    let empty = JsonObject::new();
    let content = content.unwrap_or(&empty);
    let properties = form
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let required: Vec<&str> = form
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut values = JsonObject::new();
    for (name, schema) in &properties {
        match content.get(name) {
            None | Some(Value::Null) => {
                if required.contains(&name.as_str()) {
                    return Err(format!("{name:?} is required"));
                }
            }
            Some(value) => {
                fits(name, schema, value)?;
                values.insert(name.clone(), value.clone());
            }
        }
    }
    Ok(values)
}

/// Whether `value` fits one flat form field.
fn fits(name: &str, schema: &Value, value: &Value) -> Result<(), String> {
    let ty = schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("string");
    let ok = match ty {
        "boolean" => value.is_boolean(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "array" => value.as_array().is_some_and(|items| {
            let allowed = schema.pointer("/items/enum").and_then(Value::as_array);
            items.iter().all(|item| {
                item.is_string() && allowed.is_none_or(|allowed| allowed.contains(item))
            })
        }),
        _ => value.is_string(),
    };
    if !ok {
        return Err(format!("{name:?} must be {}, not {value}", kind(ty)));
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        let allowed: Vec<String> = allowed.iter().map(Value::to_string).collect();
        return Err(format!(
            "{name:?} must be one of {}, not {value}",
            allowed.join(", ")
        ));
    }
    Ok(())
}

/// A JSON type in words.
fn kind(ty: &str) -> &'static str {
    match ty {
        "boolean" => "true or false",
        "integer" => "an integer",
        "number" => "a number",
        "array" => "a list of the offered values",
        _ => "a string",
    }
}

/// A refusal: a tool error, nothing runs.
pub(crate) fn refusal(text: String) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(text)]).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    static PROFILE: QuestionSpec = QuestionSpec {
        name: "profile",
        params: &["name", "age", "score", "status", "verified", "tags"],
        form: r#"{"type":"object","properties":{
            "name":{"type":"string","default":"John Doe"},
            "age":{"type":"integer","default":30},
            "score":{"type":"number","default":95.5},
            "status":{"type":"string","enum":["active","inactive"],"default":"active"},
            "verified":{"type":"boolean","default":true},
            "tags":{"type":"array","items":{"type":"string","enum":["a","b"]}}},
            "required":["name"]}"#,
    };

    fn content(value: Value) -> JsonObject {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_form_with_defaults_enums_and_lists_is_accepted_by_rmcp() {
        let object: JsonObject = serde_json::from_str(PROFILE.form).expect("json");
        let schema = ElicitationSchema::from_json_schema(object).expect("rmcp takes it");
        let back = serde_json::to_value(schema).expect("serializes");
        assert_eq!(back["properties"]["age"]["default"], 30);
        assert_eq!(
            back["properties"]["status"]["enum"],
            json!(["active", "inactive"])
        );
    }

    #[test]
    fn answers_are_checked_against_the_form_and_extra_fields_dropped() {
        let values = check(
            &PROFILE,
            Some(&content(
                json!({"name": "Jane", "age": 25, "score": 88, "status": "inactive",
                "verified": false, "tags": ["b"], "confirm": true}),
            )),
        )
        .expect("fits");
        assert_eq!(values.len(), 6);
        assert!(!values.contains_key("confirm"));
        for (bad, why) in [
            (json!({"age": 3}), "\"name\" is required"),
            (
                json!({"name": 12345}),
                "\"name\" must be a string, not 12345",
            ),
            (
                json!({"name": "x", "age": 2.5}),
                "\"age\" must be an integer, not 2.5",
            ),
            (
                json!({"name": "x", "verified": "yes"}),
                "\"verified\" must be true or false",
            ),
            (
                json!({"name": "x", "status": "gone"}),
                "\"status\" must be one of",
            ),
            (
                json!({"name": "x", "tags": ["c"]}),
                "\"tags\" must be a list of the offered",
            ),
        ] {
            let error = check(&PROFILE, Some(&content(bad.clone()))).expect_err("unfit");
            assert!(error.starts_with(why), "{bad}: {error}");
        }
    }

    #[test]
    fn answers_join_the_arguments() {
        let answers = content(json!({"q1": {"name": "Alice"}, "q2": {"color": "blue"}}));
        let merged = merged(&content(json!({"x": 1})), &answers);
        assert_eq!(
            Value::Object(merged),
            json!({"x": 1, "name": "Alice", "color": "blue"})
        );
    }
}
