//! The store as the shared task bucket sees it ([`Held`]): the record of a task held here, and
//! the end of one another replica failed.

use std::collections::BTreeMap;
use std::time::Instant;

use rmcp::ErrorData;
use serde_json::Value;

use super::{Entry, Stage, Store, answer};
use crate::mcp::tasks::shared::{self, Held, Record, Shared};
use crate::principal::Principal;
use crate::process::exec::CancelReason;

impl Store {
    /// The shared record of `entry` as it is now.
    pub(super) fn record(&self, entry: &Entry, shared: &Shared) -> Record {
        let now = shared::now_ms();
        let mut answer = answer(entry);
        answer.task.task.task_id = String::new();
        Record {
            id: shared::id_hash(&entry.task.task_id),
            owner: entry.owner.clone(),
            replica: shared.replica().to_string(),
            ttl_ms: u64::try_from(self.settings.ttl.as_millis()).unwrap_or(u64::MAX),
            beat_ms: now,
            ended_ms: entry
                .ended
                .map(|ended| now.saturating_sub(ended.elapsed().as_millis() as u64)),
            answer,
        }
    }

    /// The shared record of task `id` held here, if it is.
    fn record_of(&self, id: &str) -> Option<Record> {
        let shared = self.shared.as_ref()?;
        let tasks = self.lock();
        tasks.get(id).map(|entry| self.record(entry, shared))
    }

    /// The shared record of task `id` says it failed (this replica fell silent): its command is
    /// stopped and the task ends here as `record` says, even if it ended here otherwise while
    /// the record could not be written, so every replica answers it the same.
    fn failed_elsewhere(&self, id: &str, record: Record) {
        let mut tasks = self.lock();
        let Some(entry) = tasks.get_mut(id) else {
            return;
        };
        match &mut entry.stage {
            Stage::Running { stop, .. } => stop.stop(CancelReason::TaskCancelled),
            Stage::Asking { answer, .. } => {
                answer.take();
            }
            Stage::Done { .. } => {}
        }
        entry.task = record.answer.task.task.clone();
        entry.task.task_id = id.to_string();
        entry.stage = Stage::Done {
            payload: record.answer.task.payload,
            live: None,
        };
        if entry.ended.is_none() {
            entry.ended = Some(Instant::now());
            let _ = entry.done.send(true);
        }
    }
}

impl Held for Store {
    fn record_of(&self, id: &str) -> Option<Record> {
        Store::record_of(self, id)
    }

    fn failed_elsewhere(&self, id: &str, record: Record) {
        Store::failed_elsewhere(self, id, record);
    }

    async fn cancel_here(&self, id: &str, by: &Principal) -> Result<(), ErrorData> {
        Store::cancel_here(self, id, by).await
    }

    fn update_here(
        &self,
        id: &str,
        by: &Principal,
        responses: BTreeMap<String, Value>,
    ) -> Result<(), ErrorData> {
        Store::update_here(self, id, by, responses)
    }
}
