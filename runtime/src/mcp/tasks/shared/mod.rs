//! Tasks shared by every replica through a NATS JetStream key-value bucket (docs/deploy.md,
//! "Tasks across replicas"), with `FISKGEN_MCP_TASK_STORE` naming the bucket as
//! `FISKGEN_MCP_APPROVAL_STORE` names the approvals' (a `nats://` URL, or the bucket alone with a
//! `nats` CLI context).
//!
//! The bucket holds one key per place in the store, `t.0` .. `t.<max-1>`: `tasks.max` holds
//! across every replica because a task exists only once its creator has *claimed* a slot, by
//! creating the key (JetStream accepts a create only if the key holds nothing) or by replacing a
//! record whose task ended and expired, or whose replica fell silent, at the revision it read
//! (compare-and-set). A task's id ends in its slot (`<128 random bits as hex>-<slot>`), so any
//! replica finds its record with one read. The record ([`Record`]) holds what `tasks/get`
//! answers (status, elapsed time, output tail, result), its TTL, the replica running it, and the
//! owner as the SHA-256 of the creating principal ([`crate::principal::Owner`]); the task id
//! itself is kept only as its SHA-256, so reading the bucket gives no task away.
//!
//! The replica running a task rewrites its record on every change and at least every
//! [`HEARTBEAT`]. A task whose record has not been rewritten for [`SILENCE`] while it was still
//! running is failed by the next replica that reads it (its creator was killed, crashed or lost
//! NATS), so a client sees `failed` with that reason at most `HEARTBEAT + SILENCE` (12 s) after
//! the last sign of life. `tasks/cancel` and `tasks/update` for a task another replica runs are
//! sent to that replica on its own subject, `fiskgen.tasks.<bucket>.<replica>` (a NATS request),
//! which checks the owner again and answers. Every write is a compare-and-set, so a task ends
//! once: a replica that finds its task failed by another stops the command.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use async_nats::jetstream::kv;
use futures::StreamExt;
use rmcp::ErrorData;
use tokio::sync::OnceCell;

use crate::duration;
use crate::nats::{Nats, UrlError};
use crate::principal::{Principal, digest};

mod record;
mod serve;

pub(crate) use record::{Record, encode, id_hash, now_ms};
use record::{fail_silent, key, silent, slot_of};
pub(crate) use serve::{Held, publish};

/// The environment variable naming the shared task bucket.
pub(crate) const STORE_VAR: &str = "FISKGEN_MCP_TASK_STORE";

/// How often the replica running a task rewrites its record.
pub(crate) const HEARTBEAT: Duration = Duration::from_secs(2);

/// How long a running task's record may go unwritten before its replica is taken for dead.
pub(crate) const SILENCE: Duration = Duration::from_secs(10);

/// The most one exchange with the NATS server may take.
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a forwarded `tasks/cancel` or `tasks/update` may take (a cancel waits up to 5 s
/// for the command to die).
const FORWARD_TIMEOUT: Duration = Duration::from_secs(8);

/// What the watcher last saw of one slot.
#[derive(Debug, Clone, Copy)]
struct Seen {
    revision: u64,
    ended_ms: Option<u64>,
    beat_ms: u64,
    ttl_ms: u64,
}

/// A record as read.
pub(crate) struct Read {
    pub(crate) record: Record,
}

/// Why a shared write did not happen.
pub(crate) enum WriteError {
    /// Another replica wrote the record first.
    Conflict,
    /// The store cannot be reached or refused.
    Failed(String),
}

/// Why no slot was claimed.
pub(crate) enum ClaimError {
    /// Every slot holds a task that is running, asking or keeping its result; `active` of
    /// them run or ask.
    Full {
        /// How many run or ask.
        active: usize,
    },
    /// The store cannot be reached.
    Unreachable(String),
}

/// The connected parts.
struct Ready {
    kv: kv::Store,
    client: async_nats::Client,
}

/// The shared task bucket, one per process.
pub(crate) struct Shared {
    nats: Arc<Nats>,
    bucket: String,
    /// This replica's name: random, new at every start.
    replica: String,
    max: u32,
    ready: OnceCell<Ready>,
    /// What the watcher saw of every slot (a hint for claiming; every claim is a CAS).
    slots: Mutex<HashMap<u32, Seen>>,
    /// The last reason the connection could not be made, for refusals meanwhile.
    last_error: Mutex<Option<String>>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl Shared {
    /// The bucket named by [`STORE_VAR`], sharing `approvals`' connection when it is the same.
    pub(crate) fn from_env(
        max: u32,
        approvals: Option<&Arc<Nats>>,
    ) -> Result<Option<Self>, UrlError> {
        let Some((connection, bucket)) = crate::nats::bucket_from_env(STORE_VAR)? else {
            return Ok(None);
        };
        let nats = match approvals {
            Some(nats) if *nats.connection() == connection => Arc::clone(nats),
            _ => Arc::new(Nats::new(connection)),
        };
        let mut random = [0u8; 8];
        let _ = getrandom::fill(&mut random);
        let replica: String = random.iter().map(|b| format!("{b:02x}")).collect();
        Ok(Some(Self {
            nats,
            bucket,
            replica,
            max,
            ready: OnceCell::new(),
            slots: Mutex::default(),
            last_error: Mutex::default(),
        }))
    }

    /// For logs and notes: the bucket and server, never credentials.
    pub(crate) fn describe(&self) -> String {
        format!(
            "NATS JetStream KV bucket {} at {}",
            self.bucket,
            self.nats.connection().describe()
        )
    }

    /// This replica's name.
    pub(crate) fn replica(&self) -> &str {
        &self.replica
    }

    fn subject(&self, replica: &str) -> String {
        format!("fiskgen.tasks.{}.{replica}", self.bucket)
    }

    /// Connects (retrying every [`HEARTBEAT`] until it can), then serves the requests other
    /// replicas forward to this one and watches the slots.
    pub(crate) fn start<S: Held>(self: &Arc<Self>, store: Weak<S>) {
        let shared = Arc::clone(self);
        tokio::spawn(async move {
            let mut warned = false;
            let ready = loop {
                match shared.connect().await {
                    Ok(ready) => break ready,
                    Err(error) => {
                        if !warned {
                            tracing::warn!(
                                "The shared task store cannot be reached, so tasks are refused \
                                 until it can: {error}"
                            );
                            warned = true;
                        }
                        *shared
                            .last_error
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner) = Some(error);
                        tokio::time::sleep(HEARTBEAT).await;
                    }
                }
            };
            let subscriber = match ready
                .client
                .subscribe(shared.subject(&shared.replica))
                .await
            {
                Ok(subscriber) => subscriber,
                Err(error) => {
                    tracing::error!("Cannot listen for forwarded task requests: {error}");
                    return;
                }
            };
            let kv = ready.kv.clone();
            let client = ready.client.clone();
            if shared.ready.set(ready).is_err() {
                return;
            }
            tracing::info!(replica = %shared.replica, "Tasks are shared through the {}", shared.describe());
            tokio::spawn(Arc::clone(&shared).watch(kv));
            shared.serve(subscriber, client, store).await;
        });
    }

    async fn connect(&self) -> Result<Ready, String> {
        let client = self
            .nats
            .client()
            .await
            .map_err(|error| error.to_string())?;
        let kv = tokio::time::timeout(
            EXCHANGE_TIMEOUT,
            async_nats::jetstream::new(client.clone()).get_key_value(&self.bucket),
        )
        .await
        .map_err(|_| format!("no answer within {}", duration::format(EXCHANGE_TIMEOUT)))?
        .map_err(|error| {
            format!(
                "no JetStream bucket {} answers ({}); create it with `nats kv add {} --history 1`",
                self.bucket,
                crate::logging::label(&error.to_string()),
                self.bucket
            )
        })?;
        Ok(Ready { kv, client })
    }

    /// The bucket, when connected and the connection is up.
    async fn kv(&self) -> Result<&kv::Store, String> {
        let Some(ready) = self.ready.get() else {
            let why = self
                .last_error
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
                .unwrap_or_else(|| "not connected yet".into());
            return Err(format!("{}: {why}", self.describe()));
        };
        self.nats
            .client()
            .await
            .map_err(|error| format!("{}: {error}", self.describe()))?;
        Ok(&ready.kv)
    }

    /// Keeps [`Shared::slots`] up to date, restarting the watch when it ends.
    async fn watch(self: Arc<Self>, kv: kv::Store) {
        loop {
            if let Ok(mut watch) = kv.watch_all().await {
                while let Some(Ok(entry)) = watch.next().await {
                    let Some(slot) = entry.key.strip_prefix("t.").and_then(|s| s.parse().ok())
                    else {
                        continue;
                    };
                    let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
                    match (
                        entry.operation,
                        serde_json::from_slice::<Record>(&entry.value),
                    ) {
                        (kv::Operation::Put, Ok(record)) => {
                            slots.insert(slot, seen(&record, entry.revision));
                        }
                        _ => {
                            slots.remove(&slot);
                        }
                    }
                }
            }
            tokio::time::sleep(HEARTBEAT).await;
        }
    }

    /// Claims a free slot for a new task: `build(slot)` gives its record's bytes for that slot.
    /// Returns the slot and the record's revision.
    pub(crate) async fn claim(
        &self,
        build: &mut (dyn FnMut(u32) -> Vec<u8> + Send),
    ) -> Result<(u32, u64), ClaimError> {
        let kv = self.kv().await.map_err(ClaimError::Unreachable)?;
        let now = now_ms();
        let start = {
            let mut random = [0u8; 4];
            let _ = getrandom::fill(&mut random);
            u32::from_le_bytes(random) % self.max.max(1)
        };
        let candidates: Vec<(u32, Option<u64>)> = {
            let slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
            (0..self.max)
                .map(|i| (start + i) % self.max)
                .filter_map(|slot| match slots.get(&slot) {
                    None => Some((slot, None)),
                    Some(seen) if reusable(seen, now) => Some((slot, Some(seen.revision))),
                    Some(_) => None,
                })
                .collect()
        };
        for (slot, revision) in candidates {
            let value = build(slot);
            let written = match revision {
                None => timed(kv.create(key(slot), value.into()))
                    .await
                    .map(|result| {
                        result.map_err(|error| {
                            (
                                error.kind() == kv::CreateErrorKind::AlreadyExists,
                                error.to_string(),
                            )
                        })
                    }),
                Some(revision) => timed(kv.update(key(slot), value.into(), revision))
                    .await
                    .map(|result| {
                        result.map_err(|error| {
                            (
                                error.kind() == kv::UpdateErrorKind::WrongLastRevision,
                                error.to_string(),
                            )
                        })
                    }),
            };
            match written {
                Ok(Ok(revision)) => {
                    self.slots
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .insert(
                            slot,
                            Seen {
                                revision,
                                ended_ms: None,
                                beat_ms: now,
                                ttl_ms: u64::MAX,
                            },
                        );
                    return Ok((slot, revision));
                }
                // Another replica was first: learn what is there, try the next one.
                Ok(Err((true, _))) => self.refresh(kv, slot).await,
                Ok(Err((false, error))) => {
                    return Err(ClaimError::Unreachable(format!(
                        "{}: JetStream refused the write: {}",
                        self.describe(),
                        crate::logging::label(&error)
                    )));
                }
                Err(timeout) => {
                    return Err(ClaimError::Unreachable(format!(
                        "{}: {timeout}",
                        self.describe()
                    )));
                }
            }
        }
        let slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        let active = slots
            .values()
            .filter(|seen| seen.ended_ms.is_none())
            .count();
        Err(ClaimError::Full { active })
    }

    async fn refresh(&self, kv: &kv::Store, slot: u32) {
        if let Ok(Ok(Some(entry))) = timed(kv.entry(key(slot))).await {
            let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
            match serde_json::from_slice::<Record>(&entry.value) {
                Ok(record) if entry.operation == kv::Operation::Put => {
                    slots.insert(slot, seen(&record, entry.revision));
                }
                _ => {
                    slots.remove(&slot);
                }
            }
        }
    }

    /// Rewrites a task's record at `revision`; the new revision.
    pub(crate) async fn write(
        &self,
        slot: u32,
        revision: u64,
        record: &Record,
    ) -> Result<u64, WriteError> {
        let kv = self.kv().await.map_err(WriteError::Failed)?;
        let value = encode(record);
        match timed(kv.update(key(slot), value.into(), revision)).await {
            Ok(Ok(revision)) => Ok(revision),
            Ok(Err(error)) if error.kind() == kv::UpdateErrorKind::WrongLastRevision => {
                Err(WriteError::Conflict)
            }
            Ok(Err(error)) => Err(WriteError::Failed(crate::logging::label(
                &error.to_string(),
            ))),
            Err(timeout) => Err(WriteError::Failed(timeout)),
        }
    }

    /// The record of task `id` if `by` may use it and it has not expired; a running task
    /// whose replica fell silent is failed first. `Ok(None)`: unknown to `by`.
    pub(crate) async fn read(&self, id: &str, by: &Principal) -> Result<Option<Read>, ErrorData> {
        let Some(slot) = slot_of(id, self.max) else {
            return Ok(None);
        };
        let kv = self.kv().await.map_err(unreachable)?;
        for _ in 0..3 {
            let entry = match timed(kv.entry(key(slot))).await {
                Ok(Ok(Some(entry))) if entry.operation == kv::Operation::Put => entry,
                Ok(Ok(_)) => return Ok(None),
                Ok(Err(error)) => return Err(unreachable(format!("{}: {error}", self.describe()))),
                Err(timeout) => return Err(unreachable(format!("{}: {timeout}", self.describe()))),
            };
            let Ok(mut record) = serde_json::from_slice::<Record>(&entry.value) else {
                return Ok(None);
            };
            let now = now_ms();
            if record.id != id_hash(id) || !by.may_use(&record.owner) {
                return Ok(None);
            }
            if record
                .ended_ms
                .is_some_and(|ended| ended.saturating_add(record.ttl_ms) <= now)
            {
                return Ok(None);
            }
            if record.ended_ms.is_none() && silent(record.beat_ms, now) {
                fail_silent(&mut record, now);
                match self.write(slot, entry.revision, &record).await {
                    Ok(_) => {
                        tracing::warn!(task = %digest(id), replica = %record.replica, "Failed a task whose replica fell silent");
                        return Ok(Some(Read { record }));
                    }
                    // Its replica spoke after all, or another reader failed it: read again.
                    Err(WriteError::Conflict) => continue,
                    Err(WriteError::Failed(error)) => return Err(unreachable(error)),
                }
            }
            return Ok(Some(Read { record }));
        }
        Err(unreachable(format!(
            "{}: the record kept changing",
            self.describe()
        )))
    }
}

fn seen(record: &Record, revision: u64) -> Seen {
    Seen {
        revision,
        ended_ms: record.ended_ms,
        beat_ms: record.beat_ms,
        ttl_ms: record.ttl_ms,
    }
}

/// Whether a slot may be claimed again: its task ended and its result expired. (A running
/// task's silent replica is failed by the next read; the failure then keeps for the TTL.)
fn reusable(seen: &Seen, now: u64) -> bool {
    let _ = seen.beat_ms;
    seen.ended_ms
        .is_some_and(|ended| ended.saturating_add(seen.ttl_ms) <= now)
}

/// `future` within [`EXCHANGE_TIMEOUT`].
async fn timed<T>(future: impl std::future::Future<Output = T>) -> Result<T, String> {
    tokio::time::timeout(EXCHANGE_TIMEOUT, future)
        .await
        .map_err(|_| format!("no answer within {}", duration::format(EXCHANGE_TIMEOUT)))
}

/// The error for a shared store that cannot be read: the task's state is unknown, so nothing
/// is answered from a guess.
fn unreachable(detail: String) -> ErrorData {
    ErrorData::internal_error(
        format!("the shared task store cannot be read, so the task's state is unknown: {detail}"),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_is_reused_only_once_its_task_ended_and_expired() {
        let seen = |ended_ms| Seen {
            revision: 1,
            ended_ms,
            beat_ms: 0,
            ttl_ms: 1000,
        };
        assert!(!reusable(&seen(None), 10_000));
        assert!(!reusable(&seen(Some(9_500)), 10_000));
        assert!(reusable(&seen(Some(9_000)), 10_000));
    }
}
