//! A task's record in the shared bucket, and the names around it: the SHA-256 of an id, the slot
//! an id names, the failure a silent replica leaves.

use std::time::{SystemTime, UNIX_EPOCH};

use rmcp::model::{GetTaskResult, TaskPayload};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{HEARTBEAT, SILENCE};
use crate::duration;
use crate::principal::Owner;

/// The largest record written: above it the result is replaced by a failure saying so (NATS's
/// default `max_payload` is 1 MiB).
const MAX_RECORD: usize = 900 * 1024;

/// One task as the bucket holds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Record {
    /// The SHA-256 of the task id.
    pub(crate) id: String,
    /// Who may use it.
    pub(crate) owner: Owner,
    /// The replica running it (its subject's last token).
    pub(crate) replica: String,
    /// `tasks.ttl` in milliseconds.
    pub(crate) ttl_ms: u64,
    /// When the replica last wrote it (Unix milliseconds).
    pub(crate) beat_ms: u64,
    /// When it ended (Unix milliseconds), once it has.
    pub(crate) ended_ms: Option<u64>,
    /// What `tasks/get` answers its owner, with the task id left empty.
    pub(crate) answer: GetTaskResult,
}

/// Unix milliseconds now.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|since| since.as_millis() as u64)
        .unwrap_or_default()
}

/// The SHA-256 (hex) of a task id.
pub(crate) fn id_hash(id: &str) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(id.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// The slot a task id names, if it names one below `max`.
pub(super) fn slot_of(id: &str, max: u32) -> Option<u32> {
    let (random, slot) = id.rsplit_once('-')?;
    let slot: u32 = slot.parse().ok().filter(|slot| *slot < max)?;
    (random.len() == 32 && slot.to_string() == id[random.len() + 1..]).then_some(slot)
}

pub(super) fn key(slot: u32) -> String {
    format!("t.{slot}")
}

/// The failure a silent replica leaves.
fn silent_failure(replica: &str) -> String {
    format!(
        "the replica running this task ({replica}) fell silent: its record was not rewritten for \
         {} (it is rewritten every {}), so the replica was killed, crashed or lost its NATS \
         connection; whether the command finished is unknown, and no result was kept",
        duration::format(SILENCE),
        duration::format(HEARTBEAT)
    )
}

/// Whether an open task's record, last written at `beat_ms`, has been silent too long at `now`.
pub(super) fn silent(beat_ms: u64, now: u64) -> bool {
    now.saturating_sub(beat_ms) > SILENCE.as_millis() as u64
}

/// Ends `record` as the failure a silent replica leaves, at `now` (Unix milliseconds).
pub(super) fn fail_silent(record: &mut Record, now: u64) {
    let message = silent_failure(&record.replica);
    let error = json!({ "code": -32603, "message": message });
    let payload = TaskPayload::Failed {
        error: error.as_object().cloned().unwrap_or_default(),
    };
    let mut task = record.answer.task.task.clone();
    task.status = rmcp::model::TaskStatus::Failed;
    task.status_message = Some(format!("failed: {message}"));
    task.last_updated_at = rmcp::task_manager::current_timestamp();
    let meta = record.answer.meta.take();
    record.answer = GetTaskResult::new(rmcp::model::DetailedTask::new(task, payload));
    record.answer.meta = meta;
    record.ended_ms = Some(now);
    record.beat_ms = now;
}

/// A record's bytes; a result too large for a NATS message is replaced by a failure saying so.
pub(crate) fn encode(record: &Record) -> Vec<u8> {
    let bytes = serde_json::to_vec(record).unwrap_or_default();
    if bytes.len() <= MAX_RECORD {
        return bytes;
    }
    let mut smaller = record.clone();
    let message = format!(
        "the task's result ({} bytes as JSON) is larger than the shared task store keeps ({} \
         bytes): lower the tool's output caps",
        bytes.len(),
        MAX_RECORD
    );
    let error = json!({ "code": -32603, "message": message });
    let mut task = smaller.answer.task.task.clone();
    task.status_message = Some(format!("failed: {message}"));
    smaller.answer = GetTaskResult::new(rmcp::model::DetailedTask::new(
        task,
        TaskPayload::Failed {
            error: error.as_object().cloned().unwrap_or_default(),
        },
    ));
    serde_json::to_vec(&smaller).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_id_names_its_slot_and_nothing_else_does() {
        let random = "0123456789abcdef0123456789abcdef";
        assert_eq!(slot_of(&format!("{random}-7"), 64), Some(7));
        assert_eq!(slot_of(&format!("{random}-63"), 64), Some(63));
        assert_eq!(slot_of(&format!("{random}-64"), 64), None);
        assert_eq!(slot_of(&format!("{random}-07"), 64), None);
        assert_eq!(slot_of(&format!("{random}-+7"), 64), None);
        assert_eq!(slot_of("abc-1", 64), None);
        assert_eq!(slot_of(random, 64), None);
    }

    #[test]
    fn an_open_record_silent_past_the_bound_fails_saying_its_replica_fell_silent() {
        let silence = SILENCE.as_millis() as u64;
        assert!(!silent(1_000, 1_000 + silence));
        assert!(silent(1_000, 1_000 + silence + 1));
        let task = rmcp::model::Task::new(
            String::new(),
            rmcp::model::TaskStatus::Working,
            "now".to_string(),
            "now".to_string(),
        );
        let mut record = Record {
            id: "id".into(),
            owner: Owner(None),
            replica: "r1".into(),
            ttl_ms: 1,
            beat_ms: 1,
            ended_ms: None,
            answer: GetTaskResult::new(rmcp::model::DetailedTask::new(task, TaskPayload::Working)),
        };
        fail_silent(&mut record, 99);
        assert_eq!((record.ended_ms, record.beat_ms), (Some(99), 99));
        assert_eq!(record.answer.task.status(), rmcp::model::TaskStatus::Failed);
        let TaskPayload::Failed { error } = &record.answer.task.payload else {
            panic!("not failed: {:?}", record.answer.task.payload);
        };
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("the replica running this task (r1) fell silent"),
            "{message}"
        );
    }

    #[test]
    fn a_result_too_large_for_a_nats_message_is_kept_as_a_failure_saying_so() {
        let task = rmcp::model::Task::new(
            String::new(),
            rmcp::model::TaskStatus::Completed,
            "now".to_string(),
            "now".to_string(),
        );
        let mut result = serde_json::Map::new();
        result.insert("output".into(), json!("x".repeat(MAX_RECORD + 1)));
        let record = |result| Record {
            id: "id".into(),
            owner: Owner(None),
            replica: "r".into(),
            ttl_ms: 1,
            beat_ms: 1,
            ended_ms: Some(1),
            answer: GetTaskResult::new(rmcp::model::DetailedTask::new(
                task.clone(),
                TaskPayload::Completed { result },
            )),
        };
        let bytes = encode(&record(result));
        assert!(bytes.len() < MAX_RECORD, "{} bytes", bytes.len());
        let kept: Record = serde_json::from_slice(&bytes).expect("a record");
        let TaskPayload::Failed { error } = kept.answer.task.payload else {
            panic!("not failed: {:?}", kept.answer.task.payload);
        };
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("is larger than the shared task store keeps"),
            "{message}"
        );
        let small = encode(&record(serde_json::Map::new()));
        let kept: Record = serde_json::from_slice(&small).expect("a record");
        assert_eq!(
            kept.answer.task.status(),
            rmcp::model::TaskStatus::Completed
        );
    }
}
