//! Authenticated, single-use `requestState` for confirmations in the 2026-07-28 era (MRTR).
//!
//! The client echoes `requestState` back, so it is attacker-controlled. It is sealed with
//! HMAC-SHA256 (rmcp's `RequestStateCodec`) under a per-process random key, or under a key
//! shared by replicas (`FISKGEN_MCP_STATE_KEY`), and bound through the codec's associated data
//! to the server identity, the tool, and a SHA-256 digest of the canonical arguments, so a
//! state minted for one call cannot approve another. It expires after [`STATE_TTL`], and its
//! nonce is remembered until then so that a state approves at most one run in this process;
//! replicas share that memory through [`SharedRecord`] when one is configured, so that a state
//! approves at most one run on the whole deployment (docs/deploy.md, "One approval, one run").
//!
//! The same seal carries the answers to a tool's questions between MRTR rounds
//! ([`crate::mcp::questions`]): a state says what it was issued for ([`Purpose`]), and only an
//! approval state approves. A questions state is not used up when it is opened: it only carries
//! answers the client could send again itself (docs/runtime.md, "Questions").

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use rmcp::model::{RequestStateCodec, SealOptions};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::JsonObject;
use crate::mcp::approvals::SharedRecord;
use crate::mcp::error::StateError;

/// How long an approval question stays answerable.
pub(crate) const STATE_TTL: Duration = Duration::from_secs(10 * 60);

/// The environment variable holding a shared key for replicas (at least 32 bytes).
pub(crate) const STATE_KEY_VAR: &str = "FISKGEN_MCP_STATE_KEY";

/// Upper bound on remembered nonces; beyond it new questions are refused rather than letting
/// memory grow (it takes this many approvals within [`STATE_TTL`] to get there).
const MAX_REMEMBERED: usize = 100_000;

/// What a state was issued for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Purpose {
    /// The approval question of the confirmation gate (single-use).
    #[default]
    Approval,
    /// A round of a tool's questions: it carries the answers given so far.
    Questions,
}

/// What the sealed state carries (readable by the client, but not forgeable).
#[derive(Debug, Serialize, Deserialize)]
struct Payload {
    /// Random, hex: makes each state unique and is what single use is tracked by.
    nonce: String,
    /// What it was issued for.
    #[serde(default)]
    purpose: Purpose,
    /// The answers to the tool's questions given so far: question name -> parameter values.
    #[serde(default, skip_serializing_if = "JsonObject::is_empty")]
    answers: JsonObject,
}

/// A state that verified.
#[derive(Debug)]
pub(crate) struct Opened {
    /// What it was issued for.
    pub(crate) purpose: Purpose,
    /// The answers it carries (question name -> parameter values).
    pub(crate) answers: JsonObject,
}

/// Why a state was refused. Clients only ever see one generic message; the detail is logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Forged, altered, for another call, malformed, or expired.
    Invalid(String),
    /// Already used once.
    Replayed,
    /// Whether it was used could not be checked (the shared record did not answer).
    Unchecked(String),
}

/// Seals and opens confirmation states.
pub(crate) struct RequestStates {
    codec: RequestStateCodec,
    identity: &'static str,
    used: Mutex<HashMap<String, Instant>>,
    /// How long a sealed state stays valid.
    pub(crate) ttl: Duration,
    /// Whether the key came from [`STATE_KEY_VAR`] (so other replicas may hold it too).
    shared_key: bool,
    /// The record used states are written to across replicas, if any.
    shared: Option<SharedRecord>,
}

impl std::fmt::Debug for RequestStates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestStates").finish_non_exhaustive()
    }
}

impl RequestStates {
    /// With `key` (at least 32 bytes), or a fresh random key when `None`.
    pub(crate) fn new(identity: &'static str, key: Option<Vec<u8>>) -> Result<Self, StateError> {
        let shared_key = key.is_some();
        let key = match key {
            Some(key) => key,
            None => random_bytes::<32>()?.to_vec(),
        };
        let codec = RequestStateCodec::try_new(key)?;
        Ok(Self {
            codec,
            identity,
            used: Mutex::new(HashMap::new()),
            ttl: STATE_TTL,
            shared_key,
            shared: None,
        })
    }

    /// Records every redeemed state in `shared` too, so no replica accepts it again.
    pub(crate) fn with_shared_record(mut self, shared: Option<SharedRecord>) -> Self {
        self.shared = shared;
        self
    }

    /// The start-up lines about approvals across replicas: where used states are recorded, or,
    /// on a stateless server whose key other replicas may share, a warning that without a
    /// shared record one approval can run once per replica.
    pub(crate) fn notes(&self, stateless: bool) -> Vec<String> {
        match &self.shared {
            Some(shared) => vec![format!(
                "note: approvals are single-use across replicas: used ones are recorded in the \
                 {} ({})",
                shared.describe(),
                crate::mcp::approvals::STORE_VAR
            )],
            None if stateless && self.shared_key => vec![format!(
                "warning: replicas share {STATE_KEY_VAR} but no {} is set: an approval is \
                 single-use per replica only, so behind a load balancer it can run a command \
                 once on each replica (docs/deploy.md)",
                crate::mcp::approvals::STORE_VAR
            )],
            None => Vec::new(),
        }
    }

    /// A new state for one confirmation of `tool` with `arguments` (the tests' and the fuzz
    /// targets' shorthand).
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn seal(&self, tool: &str, arguments: &JsonObject) -> Result<String, StateError> {
        self.seal_with(tool, arguments, "", Purpose::Approval, &JsonObject::new())
    }

    /// A new state for `tool` with `arguments`, issued to `holder` (a principal's
    /// [`state_binding`](crate::principal::Principal::state_binding)) for `purpose`, carrying
    /// `answers`.
    pub(crate) fn seal_with(
        &self,
        tool: &str,
        arguments: &JsonObject,
        holder: &str,
        purpose: Purpose,
        answers: &JsonObject,
    ) -> Result<String, StateError> {
        let nonce = fiskgen_contract::canonical::hex(&random_bytes::<16>()?);
        let bound = self.bound_to(tool, arguments, holder);
        let payload = Payload {
            nonce,
            purpose,
            answers: answers.clone(),
        };
        Ok(self.codec.seal_json_with(
            &payload,
            &SealOptions::new().associated_data(&bound).ttl(self.ttl),
        )?)
    }

    /// Verifies `state` for `tool` with `arguments`, answered by `holder` (seal, binding,
    /// expiry) without using it up: what it was issued for and the answers it carries.
    pub(crate) fn open(
        &self,
        state: &str,
        tool: &str,
        arguments: &JsonObject,
        holder: &str,
    ) -> Result<Opened, Refusal> {
        let payload = self.payload(state, tool, arguments, holder)?;
        Ok(Opened {
            purpose: payload.purpose,
            answers: payload.answers,
        })
    }

    fn payload(
        &self,
        state: &str,
        tool: &str,
        arguments: &JsonObject,
        holder: &str,
    ) -> Result<Payload, Refusal> {
        let bound = self.bound_to(tool, arguments, holder);
        self.codec
            .open_json_with(state, &bound)
            .map_err(|error| Refusal::Invalid(error.to_string()))
    }

    /// Verifies `state` for `tool` with `arguments`, answered by `holder`, and uses it up, here
    /// and in the shared record when there is one (which fails closed: a state it cannot check
    /// is refused).
    pub(crate) async fn redeem(
        &self,
        state: &str,
        tool: &str,
        arguments: &JsonObject,
        holder: &str,
    ) -> Result<(), Refusal> {
        let nonce = self.redeem_here(state, tool, arguments, holder)?;
        match &self.shared {
            None => Ok(()),
            Some(shared) => match shared.claim(&nonce).await {
                Ok(true) => Ok(()),
                Ok(false) => Err(Refusal::Replayed),
                Err(error) => Err(Refusal::Unchecked(error.to_string())),
            },
        }
    }

    /// The checks of this process: seal, binding, expiry, and its own memory of used nonces.
    pub(crate) fn redeem_here(
        &self,
        state: &str,
        tool: &str,
        arguments: &JsonObject,
        holder: &str,
    ) -> Result<String, Refusal> {
        let payload = self.payload(state, tool, arguments, holder)?;
        if payload.purpose != Purpose::Approval {
            return Err(Refusal::Invalid(
                "the state carries answers to questions, not an approval".into(),
            ));
        }
        let now = Instant::now();
        let mut used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        used.retain(|_, expiry| *expiry > now);
        if used.contains_key(&payload.nonce) {
            return Err(Refusal::Replayed);
        }
        if used.len() >= MAX_REMEMBERED {
            return Err(Refusal::Invalid(
                "too many approvals are pending; try again later".into(),
            ));
        }
        // Remembered a little past the expiry the codec enforces, so no gap opens between them.
        used.insert(
            payload.nonce.clone(),
            now + self.ttl + Duration::from_secs(60),
        );
        Ok(payload.nonce)
    }

    /// The associated data: everything a state must match to be accepted (the holder as a
    /// digest, so a long subject costs nothing).
    fn bound_to(&self, tool: &str, arguments: &JsonObject, holder: &str) -> Vec<u8> {
        let holder = fiskgen_contract::canonical::hex(&Sha256::digest(holder.as_bytes()));
        format!(
            "fiskgen/confirm/v2\0{}\0{tool}\0{}\0{holder}",
            self.identity,
            arguments_digest(arguments)
        )
        .into_bytes()
    }
}

/// SHA-256 of the arguments in canonical JSON (object keys sorted at every level), so the same
/// arguments always give the same digest whatever order the client sent them in.
pub(crate) fn arguments_digest(arguments: &JsonObject) -> String {
    fiskgen_contract::canonical::fingerprint(&Value::Object(arguments.clone()))
}

/// Random bytes from the operating system.
pub(crate) fn random_bytes<const N: usize>() -> Result<[u8; N], StateError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(StateError::NoRandomness)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(value: Value) -> JsonObject {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_state_issued_to_one_subject_is_refused_for_another_and_for_none() {
        let states = RequestStates::new("demo", None).expect("states");
        let a = args(serde_json::json!({"target": "prod"}));
        let state = states
            .seal_with(
                "deploy",
                &a,
                "oauth https://issuer alice",
                Purpose::Approval,
                &JsonObject::new(),
            )
            .expect("seal");
        // Bob, or a request without credentials, cannot answer alice's approval, nor read the
        // answers it carries; and trying does not use it up.
        for other in ["oauth https://issuer bob", ""] {
            assert!(matches!(
                states.redeem_here(&state, "deploy", &a, other),
                Err(Refusal::Invalid(_))
            ));
            assert!(matches!(
                states.open(&state, "deploy", &a, other),
                Err(Refusal::Invalid(_))
            ));
        }
        assert!(
            states
                .redeem_here(&state, "deploy", &a, "oauth https://issuer alice")
                .is_ok()
        );
    }

    #[test]
    fn a_state_approves_exactly_its_own_call_once() {
        let states = RequestStates::new("demo", None).expect("states");
        let a = args(serde_json::json!({"target": "prod", "force": true}));
        let state = states.seal("deploy", &a).expect("seal");
        // Other tool, other arguments: refused, and that does not use the state up.
        assert!(matches!(
            states.redeem_here(&state, "other", &a, ""),
            Err(Refusal::Invalid(_))
        ));
        let b = args(serde_json::json!({"target": "staging", "force": true}));
        assert!(matches!(
            states.redeem_here(&state, "deploy", &b, ""),
            Err(Refusal::Invalid(_))
        ));
        // Same arguments in another order: accepted once.
        let reordered = args(serde_json::json!({"force": true, "target": "prod"}));
        assert!(states.redeem_here(&state, "deploy", &reordered, "").is_ok());
        assert_eq!(
            states.redeem_here(&state, "deploy", &a, ""),
            Err(Refusal::Replayed)
        );
    }

    #[test]
    fn forged_and_foreign_states_are_refused() {
        let states = RequestStates::new("demo", None).expect("states");
        let a = JsonObject::new();
        assert!(matches!(
            states.redeem_here("rs1.forged", "t", &a, ""),
            Err(Refusal::Invalid(_))
        ));
        let mut state = states.seal("t", &a).expect("seal");
        let last = state.pop().expect("non-empty");
        state.push(if last == 'A' { 'B' } else { 'A' });
        assert!(matches!(
            states.redeem_here(&state, "t", &a, ""),
            Err(Refusal::Invalid(_))
        ));
        let other = RequestStates::new("demo", None).expect("states");
        let foreign = other.seal("t", &a).expect("seal");
        assert!(matches!(
            states.redeem_here(&foreign, "t", &a, ""),
            Err(Refusal::Invalid(_))
        ));
    }

    #[test]
    fn replicas_with_one_key_accept_each_others_states() {
        let key = b"0123456789abcdef0123456789abcdef".to_vec();
        let one = RequestStates::new("demo", Some(key.clone())).expect("states");
        let two = RequestStates::new("demo", Some(key)).expect("states");
        let a = JsonObject::new();
        let state = one.seal("t", &a).expect("seal");
        assert!(two.redeem_here(&state, "t", &a, "").is_ok());
        assert!(RequestStates::new("demo", Some(b"short".to_vec())).is_err());
    }

    #[test]
    fn a_questions_state_carries_its_answers_and_never_approves() {
        let states = RequestStates::new("demo", None).expect("states");
        let a = JsonObject::new();
        let answers = args(serde_json::json!({"user_name": {"name": "Alice"}}));
        let state = states
            .seal_with("t", &a, "", Purpose::Questions, &answers)
            .expect("seal");
        for _ in 0..2 {
            let opened = states.open(&state, "t", &a, "").expect("opens, and again");
            assert_eq!(opened.purpose, Purpose::Questions);
            assert_eq!(opened.answers, answers);
        }
        assert!(matches!(
            states.open(&state, "u", &a, ""),
            Err(Refusal::Invalid(_))
        ));
        match states.redeem_here(&state, "t", &a, "") {
            Err(Refusal::Invalid(detail)) => {
                assert!(detail.contains("not an approval"), "{detail}")
            }
            other => panic!("a questions state approved: {other:?}"),
        }
        let approval = states.seal("t", &a).expect("seal");
        assert_eq!(
            states.open(&approval, "t", &a, "").expect("opens").purpose,
            Purpose::Approval
        );
    }

    #[test]
    fn a_state_expires() {
        let mut states = RequestStates::new("demo", None).expect("states");
        states.ttl = Duration::from_millis(50);
        let a = JsonObject::new();
        let state = states.seal("t", &a).expect("seal");
        std::thread::sleep(Duration::from_millis(120));
        match states.redeem_here(&state, "t", &a, "") {
            Err(Refusal::Invalid(detail)) => assert!(detail.contains("expired"), "{detail}"),
            other => panic!("an expired state was not refused: {other:?}"),
        }
    }
}
