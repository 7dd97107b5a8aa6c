//! What a replica does for the tasks it runs: keeps their records written (a heartbeat), and
//! answers the `tasks/cancel` and `tasks/update` other replicas forward to it.

use std::collections::BTreeMap;
use std::sync::{Arc, Weak};

use futures::StreamExt;
use rmcp::ErrorData;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::record::{Record, fail_silent, id_hash, key, now_ms, silent};
use super::{FORWARD_TIMEOUT, HEARTBEAT, Read, SILENCE, Shared, WriteError, timed, unreachable};
use crate::duration;
use crate::principal::{Principal, digest};

/// The tasks this replica holds, as the shared store needs them (the task store implements it).
pub(crate) trait Held: Send + Sync + 'static {
    /// The record of task `id` as it is now, if this replica holds it.
    fn record_of(&self, id: &str) -> Option<Record>;
    /// Another replica failed task `id`: stop it and end it as `record` says.
    fn failed_elsewhere(&self, id: &str, record: Record);
    /// `tasks/cancel` of a task held here.
    fn cancel_here(
        &self,
        id: &str,
        by: &Principal,
    ) -> impl std::future::Future<Output = Result<(), ErrorData>> + Send;
    /// `tasks/update` of a task held here.
    fn update_here(
        &self,
        id: &str,
        by: &Principal,
        responses: BTreeMap<String, Value>,
    ) -> Result<(), ErrorData>;
}

/// A forwarded `tasks/cancel` or `tasks/update`.
#[derive(Debug, Serialize, Deserialize)]
struct Forwarded {
    op: Op,
    id: String,
    by: By,
    #[serde(default)]
    responses: BTreeMap<String, Value>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Op {
    Cancel,
    Update,
}

/// A principal on the wire between replicas.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum By {
    Subject(String),
    Session(String),
    Holder,
}

impl From<&Principal> for By {
    fn from(principal: &Principal) -> Self {
        match principal {
            Principal::Subject(subject) => Self::Subject(subject.to_string()),
            Principal::Session(session) => Self::Session(session.to_string()),
            Principal::Holder => Self::Holder,
        }
    }
}

impl From<By> for Principal {
    fn from(by: By) -> Self {
        match by {
            By::Subject(subject) => Self::Subject(subject.into()),
            By::Session(session) => Self::Session(session.into()),
            By::Holder => Self::Holder,
        }
    }
}

/// The answer to a forwarded request.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Reply {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<ErrorData>,
}

impl Shared {
    /// Sends `tasks/cancel` (`responses` empty) or `tasks/update` for the task `read` to the
    /// replica running it.
    pub(crate) async fn forward(
        &self,
        read: &Read,
        id: &str,
        by: &Principal,
        update: Option<BTreeMap<String, Value>>,
    ) -> Result<(), ErrorData> {
        let Some(ready) = self.ready.get() else {
            return Err(unreachable(format!("{}: not connected", self.describe())));
        };
        let (op, responses) = match update {
            Some(responses) => (Op::Update, responses),
            None => (Op::Cancel, BTreeMap::new()),
        };
        let message = Forwarded {
            op,
            id: id.to_string(),
            by: by.into(),
            responses,
        };
        let payload = serde_json::to_vec(&message).unwrap_or_default();
        let request = async_nats::Request::new()
            .payload(payload.into())
            .timeout(Some(FORWARD_TIMEOUT));
        let replica = &read.record.replica;
        match ready
            .client
            .send_request(self.subject(replica), request)
            .await
        {
            Ok(reply) => match serde_json::from_slice::<Reply>(&reply.payload) {
                Ok(Reply { error: Some(error) }) => Err(error),
                Ok(Reply { error: None }) => Ok(()),
                Err(error) => Err(unreachable(format!(
                    "the replica {replica} answered nonsense: {error}"
                ))),
            },
            Err(error) => Err(ErrorData::internal_error(
                format!(
                    "the replica running this task ({replica}) did not answer the forwarded \
                     tasks/{} ({error}); if it stopped, the task is reported failed within {} of \
                     its last sign of life",
                    if op == Op::Cancel { "cancel" } else { "update" },
                    duration::format(HEARTBEAT + SILENCE)
                ),
                None,
            )),
        }
    }

    /// Answers what other replicas forward to this one, from `store`.
    pub(super) async fn serve<S: Held>(
        &self,
        mut subscriber: async_nats::Subscriber,
        client: async_nats::Client,
        store: Weak<S>,
    ) {
        while let Some(message) = subscriber.next().await {
            let Some(reply_to) = message.reply.clone() else {
                continue;
            };
            let Some(store) = store.upgrade() else {
                return;
            };
            let client = client.clone();
            tokio::spawn(async move {
                let reply = match serde_json::from_slice::<Forwarded>(&message.payload) {
                    Ok(Forwarded {
                        op,
                        id,
                        by,
                        responses,
                    }) => {
                        let by = Principal::from(by);
                        let result = match op {
                            Op::Cancel => store.cancel_here(&id, &by).await,
                            Op::Update => store.update_here(&id, &by, responses),
                        };
                        let name = if op == Op::Cancel { "cancel" } else { "update" };
                        tracing::info!(task = %digest(&id), ok = result.is_ok(), "Answered a tasks/{name} forwarded by another replica");
                        Reply {
                            error: result.err(),
                        }
                    }
                    Err(error) => Reply {
                        error: Some(ErrorData::invalid_request(
                            format!("not a forwarded task request: {error}"),
                            None,
                        )),
                    },
                };
                let payload = serde_json::to_vec(&reply).unwrap_or_default();
                let _ = client.publish(reply_to, payload.into()).await;
            });
        }
    }
}

/// Keeps task `id`'s record (in `slot`, at `revision`) up to date from this replica: rewritten
/// on every change and every [`HEARTBEAT`] while it runs, and once more when it ends. When
/// another replica has failed it meanwhile (this one was taken for dead), the command is
/// stopped and the task ends here as the record says. When this replica could not write the
/// record of an open task for [`SILENCE`] (NATS was down), it fails the task itself on its
/// first write, as any reader would: the task ends the same way whoever reaches the store first.
pub(crate) fn publish<S: Held>(
    store: Weak<S>,
    shared: Arc<Shared>,
    id: String,
    slot: u32,
    mut revision: u64,
    changed: Arc<tokio::sync::Notify>,
) {
    tokio::spawn(async move {
        let mut warned = false;
        let mut written = now_ms();
        loop {
            tokio::select! {
                () = changed.notified() => {}
                () = tokio::time::sleep(HEARTBEAT) => {}
            }
            let Some(mut record) = store.upgrade().and_then(|store| store.record_of(&id)) else {
                return;
            };
            let now = now_ms();
            let late = record.ended_ms.is_none() && silent(written, now);
            if late {
                fail_silent(&mut record, now);
            }
            let ended = record.ended_ms.is_some();
            match shared.write(slot, revision, &record).await {
                Ok(next) => {
                    revision = next;
                    written = now;
                    warned = false;
                    if late && let Some(store) = store.upgrade() {
                        tracing::warn!(task = %digest(&id), "The task's record could not be written for {}: the task is failed as a silent replica's, and its command stopped", duration::format(SILENCE));
                        store.failed_elsewhere(&id, record);
                    }
                    if ended {
                        return;
                    }
                }
                Err(WriteError::Conflict) => {
                    let kv = shared.ready.get().map(|ready| ready.kv.clone());
                    let current = match kv {
                        Some(kv) => timed(kv.entry(key(slot)))
                            .await
                            .ok()
                            .and_then(Result::ok)
                            .flatten(),
                        None => None,
                    };
                    let record = current
                        .and_then(|entry| serde_json::from_slice::<Record>(&entry.value).ok());
                    if let (Some(store), Some(record)) = (store.upgrade(), record)
                        && record.id == id_hash(&id)
                    {
                        tracing::warn!(task = %digest(&id), "Another replica failed this task (this one was silent too long): its command is stopped");
                        store.failed_elsewhere(&id, record);
                    }
                    return;
                }
                Err(WriteError::Failed(error)) => {
                    if !warned {
                        tracing::warn!(task = %digest(&id), "Cannot write the task's shared record (retrying every {}): {error}", duration::format(HEARTBEAT));
                        warned = true;
                    }
                }
            }
        }
    });
}
