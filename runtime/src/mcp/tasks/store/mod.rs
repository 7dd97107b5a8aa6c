//! The task store: every task this process holds, bounded, in memory (docs/runtime.md,
//! "Tasks"). A task is asking for approval, running, or done; a done task keeps its result
//! for the TTL after it ended, then it is forgotten. Expired tasks are swept on every access,
//! so nothing needs a timer; a task still running at its TTL is stopped by its own supervisor
//! (`mod.rs`). The store never runs anything itself: it records, answers `tasks/*`, and hands a
//! cancellation or an answer to whoever runs the task.
//!
//! Every task belongs to the principal whose call created it (docs/security.md): `tasks/get`,
//! `tasks/update` and `tasks/cancel` from anyone else are answered exactly as for an id the
//! store does not hold, so they learn nothing, not even that the task exists.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use rmcp::ErrorData;
use rmcp::model::{
    DetailedTask, GetTaskResult, InputRequests, JsonObject, MetaObject, Task, TaskPayload,
    TaskStatus,
};
use rmcp::task_manager::current_timestamp;
use serde_json::{Value, json};
use tokio::sync::{Notify, oneshot, watch};

use super::Stop;
use super::shared::{self, ClaimError, Shared};
use crate::duration;
use crate::principal::{Owner, Principal, digest};
use crate::process::exec::CancelReason;
use crate::process::live::Live;
use crate::spec::app::TaskSettings;

mod held;
mod refused;

pub(crate) use refused::{Full, Refused};

/// How often a client is asked to poll (`pollIntervalMs`).
pub(crate) const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// How long `tasks/cancel` waits for a running command to be killed before it answers.
const CANCEL_WAIT: Duration = Duration::from_secs(5);

/// The `_meta` key of what the server adds to `tasks/get`: the tool, the elapsed time and the
/// output so far.
pub(crate) const META_KEY: &str = "fiskgen/task";

/// Where one task is.
pub(crate) enum Stage {
    /// Waiting for the user's answers (questions, approval), asked through `inputRequests`;
    /// once every key is answered the answers go to `answer` (dropping it tells the task it
    /// was cancelled).
    Asking {
        /// What `tasks/get` shows in `inputRequests`: the keys still pending.
        requests: InputRequests,
        /// The answers given so far (key -> response).
        answers: BTreeMap<String, Value>,
        /// Where the answers go once every key is answered.
        answer: Option<oneshot::Sender<Answers>>,
    },
    /// The command runs.
    Running {
        /// Stops it.
        stop: Arc<Stop>,
        /// Its output so far.
        live: Arc<Live>,
    },
    /// It ended.
    Done {
        /// The terminal payload (`completed` with the result, `failed`, `cancelled`).
        payload: TaskPayload,
        /// Its output, when a command ran.
        live: Option<Arc<Live>>,
    },
}

/// The answers to one round of a task that asks, and who gave the last of them (whoever may use
/// the task: its owner, or for a task nobody in particular created, anyone with its id).
#[derive(Debug)]
pub(crate) struct Answers {
    /// Key -> response.
    pub(crate) responses: BTreeMap<String, Value>,
    /// Who sent the `tasks/update` that completed them.
    pub(crate) by: Principal,
}

struct Entry {
    /// Who created it: the only principal that may use it (docs/security.md).
    owner: Owner,
    /// The wire fields; `status`, `statusMessage` and `lastUpdatedAt` change.
    task: Task,
    /// When the call that became this task arrived: what elapsed times count from.
    started: Instant,
    ended: Option<Instant>,
    tool: &'static str,
    stage: Stage,
    /// Flips to `true` when the task ends.
    done: watch::Sender<bool>,
    /// Woken on every change (the shared record is rewritten then).
    changed: Arc<Notify>,
}

impl Entry {
    fn set(&mut self, status: TaskStatus, message: String) {
        self.task.status = status;
        self.task.status_message = Some(message);
        self.task.last_updated_at = current_timestamp();
        self.changed.notify_one();
    }
}

/// The tasks of this process, and with a shared store the tasks of every replica.
pub(crate) struct Store {
    settings: TaskSettings,
    tasks: Mutex<HashMap<String, Entry>>,
    shared: Option<Arc<Shared>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("settings", &self.settings)
            .field("held", &self.lock().len())
            .finish()
    }
}

impl Store {
    /// An empty store.
    pub(crate) fn new(settings: TaskSettings) -> Self {
        Self {
            settings,
            tasks: Mutex::new(HashMap::new()),
            shared: None,
        }
    }

    /// Shares the tasks through `shared` (docs/deploy.md); call [`Store::start`] once in an
    /// `Arc`.
    pub(crate) fn with_shared(mut self, shared: Option<Shared>) -> Self {
        self.shared = shared.map(Arc::new);
        self
    }

    /// Connects the shared store, if any, and serves what other replicas forward.
    pub(crate) fn start(self: &Arc<Self>) {
        if let Some(shared) = &self.shared {
            shared.start(Arc::downgrade(self));
        }
    }

    /// The settings it was made with.
    pub(crate) fn settings(&self) -> TaskSettings {
        self.settings
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        self.tasks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Forgets done tasks whose result was kept for the TTL.
    fn sweep(&self, tasks: &mut HashMap<String, Entry>) {
        let ttl = self.settings.ttl;
        tasks.retain(|_, entry| entry.ended.is_none_or(|ended| ended.elapsed() < ttl));
    }

    /// Holds a new task for `tool` in `stage`, for a call by `owner` that arrived at `started`,
    /// or says the store is full. The task can be got before this returns (SEP-2663: a created
    /// task is durable).
    pub(crate) async fn create(
        self: &Arc<Self>,
        owner: Principal,
        tool: &'static str,
        started: Instant,
        stage: Stage,
        message: String,
    ) -> Result<Task, Refused> {
        let owner = owner.owner();
        let Some(shared) = &self.shared else {
            let mut tasks = self.lock();
            self.sweep(&mut tasks);
            let max = self.settings.max as usize;
            if tasks.len() >= max {
                let active = tasks.values().filter(|e| e.ended.is_none()).count();
                return Err(Refused::Full(Full { max, active }));
            }
            let entry = self.entry(new_id(), owner, tool, started, stage, message);
            let task = entry.task.clone();
            tasks.insert(task.task_id.clone(), entry);
            return Ok(task);
        };
        // Shared: the record is written (the slot claimed) before the task exists here.
        let random = new_id();
        let mut entry = self.entry(random.clone(), owner, tool, started, stage, message);
        let mut build = |slot: u32| {
            entry.task.task_id = format!("{random}-{slot}");
            shared::encode(&self.record(&entry, shared))
        };
        let (slot, revision) = shared
            .claim(&mut build)
            .await
            .map_err(|error| match error {
                ClaimError::Full { active } => Refused::Full(Full {
                    max: self.settings.max as usize,
                    active,
                }),
                ClaimError::Unreachable(why) => Refused::Unreachable(why),
            })?;
        entry.task.task_id = format!("{random}-{slot}");
        let task = entry.task.clone();
        let changed = Arc::clone(&entry.changed);
        self.lock().insert(task.task_id.clone(), entry);
        shared::publish(
            Arc::downgrade(self),
            Arc::clone(shared),
            task.task_id.clone(),
            slot,
            revision,
            changed,
        );
        Ok(task)
    }

    fn entry(
        &self,
        id: String,
        owner: Owner,
        tool: &'static str,
        started: Instant,
        stage: Stage,
        message: String,
    ) -> Entry {
        let now = current_timestamp();
        let status = match stage {
            Stage::Asking { .. } => TaskStatus::InputRequired,
            _ => TaskStatus::Working,
        };
        let ttl_ms = u64::try_from(self.settings.ttl.as_millis()).unwrap_or(u64::MAX);
        let task = Task::new(id.clone(), status, now.clone(), now)
            .with_ttl_ms(ttl_ms)
            .with_poll_interval_ms(POLL_INTERVAL.as_millis() as u64)
            .with_status_message(message);
        Entry {
            owner,
            task,
            started,
            ended: None,
            tool,
            stage,
            done: watch::channel(false).0,
            changed: Arc::new(Notify::new()),
        }
    }

    /// A task asks another round (`requests`, answered to `answer`) before its command starts.
    pub(crate) fn ask_again(
        &self,
        id: &str,
        requests: InputRequests,
        answer: oneshot::Sender<Answers>,
        message: String,
    ) {
        if let Some(entry) = self.lock().get_mut(id)
            && entry.ended.is_none()
        {
            entry.stage = Stage::Asking {
                requests,
                answers: BTreeMap::new(),
                answer: Some(answer),
            };
            entry.set(TaskStatus::InputRequired, message);
        }
    }

    /// An approved task starts its command.
    pub(crate) fn running(&self, id: &str, stop: Arc<Stop>, live: Arc<Live>) {
        if let Some(entry) = self.lock().get_mut(id)
            && entry.ended.is_none()
        {
            entry.stage = Stage::Running { stop, live };
            entry.set(TaskStatus::Working, "approved; running".into());
        }
    }

    /// A task ended with `payload`; `message` says how. A task that already ended stays as it
    /// was.
    pub(crate) fn settle(&self, id: &str, payload: TaskPayload, message: String) {
        let mut tasks = self.lock();
        let Some(entry) = tasks.get_mut(id) else {
            return;
        };
        if entry.ended.is_some() {
            return;
        }
        let live = match &entry.stage {
            Stage::Running { live, .. } => Some(Arc::clone(live)),
            _ => None,
        };
        let status = payload.status();
        entry.stage = Stage::Done { payload, live };
        entry.ended = Some(Instant::now());
        let elapsed = duration::elapsed(entry.started.elapsed());
        entry.set(status, format!("{message} (after {elapsed})"));
        let _ = entry.done.send(true);
    }

    /// `tasks/get`: the task's status, its payload, and (in `_meta`) the tool, the elapsed time
    /// and the output so far.
    /// With a shared store, a task another replica holds is read from its record.
    pub(crate) async fn get(&self, id: &str, by: &Principal) -> Result<GetTaskResult, ErrorData> {
        {
            let mut tasks = self.lock();
            self.sweep(&mut tasks);
            if let Some(entry) = tasks.get(id) {
                return if by.may_use(&entry.owner) {
                    Ok(answer(entry))
                } else {
                    Err(self.unknown(id))
                };
            }
        }
        let Some(shared) = &self.shared else {
            return Err(self.unknown(id));
        };
        let read = shared.read(id, by).await?.ok_or_else(|| self.unknown(id))?;
        let mut answer = read.record.answer;
        answer.task.task.task_id = id.to_string();
        Ok(answer)
    }
}

/// What `tasks/get` answers about `entry`.
fn answer(entry: &Entry) -> GetTaskResult {
    {
        let elapsed = entry.ended.unwrap_or_else(Instant::now) - entry.started;
        let mut task = entry.task.clone();
        let (payload, live) = match &entry.stage {
            Stage::Asking { requests, .. } => (
                TaskPayload::InputRequired {
                    input_requests: requests.clone(),
                },
                None,
            ),
            Stage::Running { live, .. } => {
                let latest = live.latest_line();
                task.status_message = Some(match latest {
                    Some(line) => format!("running for {}: {line}", duration::elapsed(elapsed)),
                    None => format!("running for {}, no output yet", duration::elapsed(elapsed)),
                });
                (TaskPayload::Working, Some(live))
            }
            Stage::Done { payload, live } => (payload.clone(), live.as_ref()),
        };
        let mut detail = JsonObject::new();
        detail.insert("tool".into(), json!(entry.tool));
        detail.insert("elapsedMs".into(), json!(elapsed.as_millis() as u64));
        if let Some(live) = live {
            let snapshot = live.snapshot();
            detail.insert("output".into(), json!(snapshot.text));
            detail.insert("outputTruncated".into(), json!(snapshot.truncated));
            detail.insert("outputBytes".into(), json!(snapshot.total_bytes));
        }
        let mut meta = JsonObject::new();
        meta.insert(META_KEY.into(), Value::Object(detail));
        let mut result = GetTaskResult::new(DetailedTask::new(task, payload));
        result.meta = Some(MetaObject(meta));
        result
    }
}

impl Store {
    /// `tasks/update`: takes the answers to the pending keys of a task that asks; once every key
    /// is answered, hands them all to the task. A subset is kept, and only the keys still
    /// pending are shown from then on (SEP-2663 partial fulfillment). Keys it did not ask for
    /// are ignored; a task that ended takes no input. `by` sends them.
    /// With a shared store, a task another replica runs gets them there.
    pub(crate) async fn update(
        &self,
        id: &str,
        by: &Principal,
        responses: BTreeMap<String, Value>,
    ) -> Result<(), ErrorData> {
        let shared = match &self.shared {
            Some(shared) if !self.holds(id) => shared,
            _ => return self.update_here(id, by, responses),
        };
        let read = shared.read(id, by).await?.ok_or_else(|| self.unknown(id))?;
        match read.record.answer.task.status() {
            TaskStatus::InputRequired => shared.forward(&read, id, by, Some(responses)).await,
            TaskStatus::Working => Ok(()),
            status => Err(ended(id, status)),
        }
    }

    /// Whether this process holds task `id`.
    fn holds(&self, id: &str) -> bool {
        self.lock().contains_key(id)
    }

    /// [`Store::update`] of a task this process holds.
    pub(crate) fn update_here(
        &self,
        id: &str,
        by: &Principal,
        mut responses: BTreeMap<String, Value>,
    ) -> Result<(), ErrorData> {
        let mut tasks = self.lock();
        self.sweep(&mut tasks);
        let entry = tasks
            .get_mut(id)
            .filter(|entry| by.may_use(&entry.owner))
            .ok_or_else(|| self.unknown(id))?;
        match &mut entry.stage {
            Stage::Done { payload, .. } => Err(ended(id, payload.status())),
            Stage::Asking {
                requests,
                answers,
                answer,
            } => {
                let pending: Vec<String> = requests.keys().cloned().collect();
                let mut took = false;
                for key in pending {
                    if let Some(value) = responses.remove(&key) {
                        requests.remove(&key);
                        answers.insert(key, value);
                        took = true;
                    }
                }
                if !took {
                    return Ok(());
                }
                if requests.is_empty() {
                    if let Some(answer) = answer.take() {
                        let _ = answer.send(Answers {
                            responses: std::mem::take(answers),
                            by: by.clone(),
                        });
                    }
                    entry.set(TaskStatus::Working, "answered; checking the answers".into());
                } else {
                    let keys: Vec<&str> = requests.keys().map(String::as_str).collect();
                    let message = format!(
                        "waiting for the user (inputRequests.{})",
                        keys.join(", inputRequests.")
                    );
                    entry.set(TaskStatus::InputRequired, message);
                }
                Ok(())
            }
            Stage::Running { .. } => Ok(()),
        }
    }

    /// `tasks/cancel`: stops a running task (its command's process group is killed) and
    /// answers once it has ended, within a bound; a task asking for approval ends without
    /// running anything. Cancelling a task that already ended changes nothing (SEP-2663).
    /// With a shared store, a task another replica runs is cancelled there.
    pub(crate) async fn cancel(&self, id: &str, by: &Principal) -> Result<(), ErrorData> {
        let shared = match &self.shared {
            Some(shared) if !self.holds(id) => shared,
            _ => return self.cancel_here(id, by).await,
        };
        let read = shared.read(id, by).await?.ok_or_else(|| self.unknown(id))?;
        if read.record.ended_ms.is_some() {
            return Ok(());
        }
        shared.forward(&read, id, by, None).await
    }

    /// [`Store::cancel`] of a task this process holds.
    pub(crate) async fn cancel_here(&self, id: &str, by: &Principal) -> Result<(), ErrorData> {
        let mut done = {
            let mut tasks = self.lock();
            self.sweep(&mut tasks);
            let entry = tasks
                .get_mut(id)
                .filter(|entry| by.may_use(&entry.owner))
                .ok_or_else(|| self.unknown(id))?;
            match &mut entry.stage {
                Stage::Done { .. } => return Ok(()),
                Stage::Asking { answer, .. } => {
                    answer.take();
                }
                Stage::Running { stop, .. } => stop.stop(CancelReason::TaskCancelled),
            }
            entry.done.subscribe()
        };
        let _ = tokio::time::timeout(CANCEL_WAIT, done.wait_for(|ended| *ended)).await;
        Ok(())
    }

    /// The error for a task id this store does not hold (or that is not the caller's: the
    /// same error, so it tells nothing). The id is named by its digest only: rmcp logs every
    /// error answer at WARN, and a task id is the key to its task.
    fn unknown(&self, id: &str) -> ErrorData {
        if let Some(shared) = &self.shared {
            return ErrorData::invalid_params(
                format!(
                    "unknown task (id digest {}): no replica holds such a task (the {} has no \
                     record of it). A task is kept for {} after it ends",
                    digest(id),
                    shared.describe(),
                    duration::format(self.settings.ttl)
                ),
                None,
            );
        }
        ErrorData::invalid_params(
            format!(
                "unknown task (id digest {}): this server holds no such task. Tasks are kept in \
                 the memory of the server process that created them, for {} after they end; an \
                 expired task, a restarted server or another replica does not have it",
                digest(id),
                duration::format(self.settings.ttl)
            ),
            None,
        )
    }
}

/// The refusal of input to a task that ended with `status`.
fn ended(id: &str, status: TaskStatus) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "task (id digest {}) has ended ({}); it takes no more input",
            digest(id),
            status_name(status)
        ),
        Some(json!({ "status": status })),
    )
}

/// A status as the wire spells it.
fn status_name(status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::Working => "working",
        TaskStatus::InputRequired => "input_required",
        TaskStatus::Completed => "completed",
        TaskStatus::Failed => "failed",
        TaskStatus::Cancelled => "cancelled",
        _ => "unknown",
    }
}

/// An unguessable task id: 128 random bits as hex (SEP-2663 asks for unguessable ids).
fn new_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No entropy source: ids must still be unique; this is not expected on Linux.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        bytes = nanos.to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(max: u32) -> Arc<Store> {
        Arc::new(Store::new(TaskSettings {
            after: Duration::from_millis(10),
            ttl: Duration::from_secs(60),
            max,
            required: &[],
        }))
    }

    #[tokio::test]
    async fn a_partial_answer_is_kept_and_only_the_pending_keys_are_shown() {
        let store = store(4);
        let (answer, mut answered) = oneshot::channel();
        let request = || {
            rmcp::model::InputRequest::Elicitation(rmcp::model::ElicitRequest::new(
                rmcp::model::ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: "q".into(),
                    requested_schema: rmcp::model::ElicitationSchema::builder()
                        .required_string("name")
                        .build()
                        .expect("a schema"),
                },
            ))
        };
        let mut requests = InputRequests::new();
        requests.insert("who".into(), request());
        requests.insert("sure".into(), request());
        let stage = Stage::Asking {
            requests,
            answers: BTreeMap::new(),
            answer: Some(answer),
        };
        let task = store
            .create(
                Principal::Holder,
                "t",
                Instant::now(),
                stage,
                "asking".into(),
            )
            .await
            .expect("created");
        let id = task.task_id;
        let pending = async |store: &Store| match store
            .get(&id, &Principal::Holder)
            .await
            .expect("held")
            .task
            .payload
        {
            TaskPayload::InputRequired { input_requests } => {
                input_requests.keys().cloned().collect::<Vec<_>>()
            }
            other => panic!("not asking: {other:?}"),
        };
        assert_eq!(pending(&store).await, ["sure", "who"]);
        let one = BTreeMap::from([
            ("who".to_string(), json!({"action": "accept"})),
            ("other".to_string(), json!(1)),
        ]);
        store
            .update(&id, &Principal::Holder, one)
            .await
            .expect("acked");
        assert_eq!(pending(&store).await, ["sure"]);
        assert!(
            answered.try_recv().is_err(),
            "handed over before every key was answered"
        );
        let two = BTreeMap::from([("sure".to_string(), json!({"action": "decline"}))]);
        store
            .update(&id, &Principal::Holder, two)
            .await
            .expect("acked");
        let answers = answered.try_recv().expect("handed over").responses;
        assert_eq!(answers.keys().collect::<Vec<_>>(), ["sure", "who"]);
    }

    fn running() -> Stage {
        Stage::Running {
            stop: Arc::new(Stop::default()),
            live: Arc::new(Live::default()),
        }
    }

    #[tokio::test]
    async fn a_full_store_says_so_and_an_ended_task_still_counts_until_it_expires() {
        let store = store(1);
        let task = store
            .create(
                Principal::Holder,
                "t",
                Instant::now(),
                running(),
                "running".into(),
            )
            .await
            .expect("room for one");
        let full = store
            .create(
                Principal::Holder,
                "t",
                Instant::now(),
                running(),
                "running".into(),
            )
            .await
            .expect_err("full");
        let Refused::Full(full) = full else {
            panic!("not full: {full:?}")
        };
        assert_eq!((full.max, full.active), (1, 1));
        store.settle(&task.task_id, TaskPayload::Cancelled, "cancelled".into());
        let full = store
            .create(
                Principal::Holder,
                "t",
                Instant::now(),
                running(),
                "running".into(),
            )
            .await
            .expect_err("still full");
        let Refused::Full(full) = full else {
            panic!("not full: {full:?}")
        };
        assert_eq!((full.max, full.active), (1, 0));
        assert_eq!(
            full.explain(Duration::from_secs(3600)),
            "the task store is full: it holds 1 task (tasks.max, --max-tasks), it ended and \
             keeps its result for 1h0m0s after it ended"
        );
    }

    #[test]
    fn the_full_store_sentence_counts_in_the_right_number() {
        let hour = Duration::from_secs(3600);
        let one_running = Full { max: 1, active: 1 };
        assert_eq!(
            one_running.explain(hour),
            "the task store is full: it holds 1 task (tasks.max, --max-tasks), it is still \
             running or waiting for approval"
        );
        let many = Full { max: 64, active: 3 };
        assert_eq!(
            many.explain(hour),
            "the task store is full: it holds 64 tasks (tasks.max, --max-tasks), 3 of them still \
             running or waiting for approval and the others keeping their results for 1h0m0s \
             after they ended"
        );
    }

    #[tokio::test]
    async fn an_unknown_id_is_invalid_params_naming_the_id() {
        let store = store(4);
        let error = store
            .get("nope", &Principal::Holder)
            .await
            .expect_err("unknown");
        assert_eq!(error.code.0, -32602);
        assert!(
            error.message.starts_with(&format!(
                "unknown task (id digest {}): this server holds no such task.",
                digest("nope")
            )),
            "{}",
            error.message
        );
        assert!(!error.message.contains("nope"), "{}", error.message);
        assert_eq!(error.data, None);
        assert_eq!(
            store
                .cancel("nope", &Principal::Holder)
                .await
                .expect_err("unknown")
                .code
                .0,
            -32602
        );
        let update = store
            .update("nope", &Principal::Holder, Default::default())
            .await
            .expect_err("unknown");
        assert_eq!(update.code.0, -32602);
    }

    #[tokio::test]
    async fn cancelling_an_ended_task_changes_nothing_and_it_takes_no_input() {
        let store = store(4);
        let task = store
            .create(
                Principal::Holder,
                "t",
                Instant::now(),
                running(),
                "running".into(),
            )
            .await
            .expect("room");
        let id = task.task_id.clone();
        let stop = match &store.lock()[&id].stage {
            Stage::Running { stop, .. } => Arc::clone(stop),
            _ => unreachable!("created running"),
        };
        // The job would settle once the stop is seen; here the test plays the job.
        let settler = async {
            let reason = stop.stopped().await;
            assert_eq!(reason, CancelReason::TaskCancelled);
            store.settle(
                &id,
                TaskPayload::Cancelled,
                "cancelled by tasks/cancel".into(),
            );
        };
        let (cancelled, ()) = tokio::join!(store.cancel(&id, &Principal::Holder), settler);
        cancelled.expect("ack");
        let got = store.get(&id, &Principal::Holder).await.expect("kept");
        assert_eq!(got.task.status(), TaskStatus::Cancelled);
        store
            .cancel(&id, &Principal::Holder)
            .await
            .expect("idempotent ack");
        assert_eq!(
            store
                .get(&id, &Principal::Holder)
                .await
                .expect("kept")
                .task
                .status(),
            TaskStatus::Cancelled
        );
        let refused = store
            .update(&id, &Principal::Holder, Default::default())
            .await
            .expect_err("ended");
        assert_eq!(
            refused.message,
            format!(
                "task (id digest {}) has ended (cancelled); it takes no more input",
                digest(&id)
            )
        );
    }

    #[tokio::test]
    async fn another_principal_gets_exactly_the_unknown_task_error_and_changes_nothing() {
        let store = store(4);
        let alice = Principal::Subject("oauth https://issuer alice".into());
        let bob = Principal::Subject("oauth https://issuer bob".into());
        let (answer, mut answered) = oneshot::channel();
        let mut requests = InputRequests::new();
        requests.insert(
            "confirm".into(),
            rmcp::model::InputRequest::Elicitation(rmcp::model::ElicitRequest::new(
                rmcp::model::ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: "approve?".into(),
                    requested_schema: rmcp::model::ElicitationSchema::builder()
                        .required_string("approve")
                        .build()
                        .expect("a schema"),
                },
            )),
        );
        let stage = Stage::Asking {
            requests,
            answers: BTreeMap::new(),
            answer: Some(answer),
        };
        let id = store
            .create(alice.clone(), "t", Instant::now(), stage, "asking".into())
            .await
            .expect("created")
            .task_id;
        let unknown = store.unknown(&id);
        let same = |error: ErrorData| {
            assert_eq!(
                (error.code, &error.message, &error.data),
                (unknown.code, &unknown.message, &unknown.data)
            );
        };
        same(store.get(&id, &bob).await.expect_err("not bob's"));
        same(
            store
                .get(&id, &Principal::Holder)
                .await
                .expect_err("not anyone's"),
        );
        let approve = BTreeMap::from([(
            "confirm".to_string(),
            json!({"action": "accept", "content": {"approve": true}}),
        )]);
        same(
            store
                .update(&id, &bob, approve.clone())
                .await
                .expect_err("bob cannot answer"),
        );
        assert!(answered.try_recv().is_err(), "bob's answer was handed over");
        same(
            store
                .cancel(&id, &bob)
                .await
                .expect_err("bob cannot cancel"),
        );
        let task = store.get(&id, &alice).await.expect("alice's");
        assert_eq!(task.task.status(), TaskStatus::InputRequired);
        store
            .update(&id, &alice, approve)
            .await
            .expect("alice answers");
        let answers = answered.try_recv().expect("handed over");
        assert_eq!(answers.by, alice);
    }

    #[test]
    fn ids_are_128_random_bits() {
        let (a, b) = (new_id(), new_id());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }
}
