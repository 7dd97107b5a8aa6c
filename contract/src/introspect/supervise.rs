//! Watching an introspection child: reading its stdout (capped) and stderr (its tail), waiting
//! for it within the deadline, and killing its whole process group when it is done, so nothing
//! it started outlives the run.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::path::Path;
use std::process::{Child, ExitStatus};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{self, Signal};
use nix::unistd::Pid;

use super::error::IntrospectError;

/// How much of the application's stderr is kept (the end of it).
const STDERR_KEEP_BYTES: usize = 64 * 1024;
/// Size of one read from a pipe.
const READ_CHUNK: usize = 64 * 1024;
/// How long stderr may stay open after the application exited and stdout closed.
const STDERR_LINGER: Duration = Duration::from_millis(250);
/// How long to wait for a killed application to be reaped before returning anyway.
const REAP_GRACE: Duration = Duration::from_millis(250);

/// Keeps track of the process groups of running children (a server's registry, which kills
/// them all when the server stops).
pub trait GroupRegistry: Send + Sync {
    /// The application started as the leader of `group`; the registration lasts until the
    /// returned value is dropped, which the runner does once the group is killed and reaped.
    fn join(&self, group: i32) -> Box<dyn Send>;
}

/// The limits a run is watched with.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    /// How long the application may take.
    pub(super) timeout: Duration,
    /// The most stdout bytes read.
    pub(super) max_bytes: usize,
}

/// What a finished application left behind.
pub(super) struct Captured {
    /// Everything it printed on stdout (at most the limit).
    pub(super) stdout: Vec<u8>,
    /// How it ended.
    pub(super) status: ExitStatus,
    /// The end of its stderr, as sanitised text.
    pub(super) stderr: String,
}

/// A report from one of the threads watching the child.
enum Event {
    /// Stdout reached end of file within the limit: everything read.
    Stdout(Vec<u8>),
    /// Stdout went past the limit; reading stopped.
    StdoutOverflow,
    /// Reading stdout failed.
    StdoutFailed(io::Error),
    /// Stderr reached end of file (or failed; it is only informative).
    StderrClosed,
    /// The child exited and was reaped.
    Exited(io::Result<ExitStatus>),
}

/// Why watching the child stopped early.
enum Failure {
    /// The deadline passed.
    Timeout,
    /// Stdout went past the limit.
    Oversize,
    /// Reading stdout failed.
    Read(io::Error),
    /// Waiting for the child failed.
    Wait(io::Error),
    /// Every watching thread is gone without reporting (only if one panicked).
    Lost,
}

/// Reads the child's output and waits for it, within the limits; kills its group when done.
pub(super) fn supervise(
    child: Child,
    app: &Path,
    limits: Limits,
    groups: Option<&Arc<dyn GroupRegistry>>,
) -> Result<Captured, IntrospectError> {
    // `pid_t` is an `i32` that std widened to `u32`; the child leads its own group.
    let group = Pid::from_raw(child.id() as i32);
    // Dropped (ending the registration) only once the group was killed and the child reaped.
    let _registration = groups.map(|groups| groups.join(group.as_raw()));
    let deadline = Instant::now().checked_add(limits.timeout);
    let (events, receiver) = mpsc::channel();
    let stderr = Arc::new(Mutex::new(Tail::new(STDERR_KEEP_BYTES)));
    if let Err(error) = start_watchers(child, limits.max_bytes, &events, &stderr) {
        kill_group(group);
        return Err(IntrospectError::Io {
            path: app.into(),
            action: "starting reader threads",
            error,
        });
    }
    drop(events);

    let mut watch = Watch::default();
    let outcome = watch.run(&receiver, group, deadline);
    if outcome.is_err() && watch.status.is_none() {
        await_exit(&receiver);
    }
    let stderr_text = lock(&stderr).text();
    if !stderr_text.is_empty() {
        tracing::debug!(app = %app.display(), stderr = %stderr_text, "introspection stderr");
    }
    let path = app.to_path_buf();
    match outcome {
        Ok((stdout, status)) => Ok(Captured {
            stdout,
            status,
            stderr: stderr_text,
        }),
        Err(Failure::Timeout) => Err(IntrospectError::Timeout {
            path,
            timeout: limits.timeout,
            exited: watch.status.is_some(),
        }),
        Err(Failure::Oversize) => Err(IntrospectError::Oversize {
            path,
            limit: limits.max_bytes,
        }),
        Err(Failure::Read(error)) => Err(IntrospectError::Io {
            path,
            action: "reading its output",
            error,
        }),
        Err(Failure::Wait(error)) => Err(IntrospectError::Io {
            path,
            action: "waiting for it",
            error,
        }),
        Err(Failure::Lost) => Err(IntrospectError::Io {
            path,
            action: "watching it",
            error: io::Error::other("a watching thread stopped unexpectedly"),
        }),
    }
}

/// Starts the three threads that read stdout, read stderr and wait for the child.
fn start_watchers(
    mut child: Child,
    max_bytes: usize,
    events: &Sender<Event>,
    stderr_tail: &Arc<Mutex<Tail>>,
) -> io::Result<()> {
    if let Some(stdout) = child.stdout.take() {
        let events = events.clone();
        thread::Builder::new()
            .name("introspect-stdout".into())
            .spawn(move || {
                let event = match read_capped(stdout, max_bytes) {
                    Ok(Some(bytes)) => Event::Stdout(bytes),
                    Ok(None) => Event::StdoutOverflow,
                    Err(error) => Event::StdoutFailed(error),
                };
                let _ = events.send(event);
            })?;
    }
    if let Some(stderr) = child.stderr.take() {
        let events = events.clone();
        let tail = Arc::clone(stderr_tail);
        thread::Builder::new()
            .name("introspect-stderr".into())
            .spawn(move || {
                read_tail(stderr, &tail);
                let _ = events.send(Event::StderrClosed);
            })?;
    }
    let events = events.clone();
    thread::Builder::new()
        .name("introspect-wait".into())
        .spawn(move || {
            let _ = events.send(Event::Exited(child.wait()));
        })?;
    Ok(())
}

/// What has been reported about the child so far.
#[derive(Default)]
struct Watch {
    stdout: Option<Vec<u8>>,
    status: Option<ExitStatus>,
    stderr_closed: bool,
}

impl Watch {
    /// Collects reports until the child exited and stdout closed (giving stderr a short grace
    /// to close as well), or until something fails. The group is killed as soon as the child
    /// exits, to reap anything it left running, and on every failure.
    fn run(
        &mut self,
        receiver: &Receiver<Event>,
        group: Pid,
        deadline: Option<Instant>,
    ) -> Result<(Vec<u8>, ExitStatus), Failure> {
        let mut linger_until = None;
        loop {
            let finished = self.stdout.is_some() && self.status.is_some();
            if finished && self.stderr_closed {
                break;
            }
            let wait_until = if finished {
                Some(*linger_until.get_or_insert_with(|| {
                    let linger = Instant::now() + STDERR_LINGER;
                    deadline.map_or(linger, |deadline| linger.min(deadline))
                }))
            } else {
                deadline
            };
            let event = match wait_until {
                Some(until) => {
                    receiver.recv_timeout(until.saturating_duration_since(Instant::now()))
                }
                None => receiver.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            let failure = match event {
                Ok(Event::Stdout(bytes)) => {
                    self.stdout = Some(bytes);
                    continue;
                }
                Ok(Event::StderrClosed) => {
                    self.stderr_closed = true;
                    continue;
                }
                Ok(Event::Exited(Ok(status))) => {
                    self.status = Some(status);
                    kill_group(group);
                    continue;
                }
                Ok(Event::StdoutOverflow) => Failure::Oversize,
                Ok(Event::StdoutFailed(error)) => Failure::Read(error),
                Ok(Event::Exited(Err(error))) => Failure::Wait(error),
                Err(_) if finished => break,
                Err(RecvTimeoutError::Timeout) => Failure::Timeout,
                Err(RecvTimeoutError::Disconnected) => Failure::Lost,
            };
            kill_group(group);
            return Err(failure);
        }
        match (self.stdout.take(), self.status) {
            (Some(stdout), Some(status)) => Ok((stdout, status)),
            _ => Err(Failure::Lost),
        }
    }
}

/// After a kill, waits briefly for the child to be reaped, so that it is gone when the call
/// returns; returns anyway after [`REAP_GRACE`].
fn await_exit(receiver: &Receiver<Event>) {
    let until = Instant::now() + REAP_GRACE;
    while let Ok(event) = receiver.recv_timeout(until.saturating_duration_since(Instant::now())) {
        if matches!(event, Event::Exited(_)) {
            return;
        }
    }
}

/// Sends SIGKILL to the whole process group; a group that is already gone is fine.
fn kill_group(group: Pid) {
    match signal::killpg(group, Signal::SIGKILL) {
        Ok(()) | Err(Errno::ESRCH) => {}
        Err(error) => tracing::warn!(%group, %error, "killing the introspection process group"),
    }
}

/// Reads `pipe` to its end, keeping at most `max_bytes`; `None` when there was more. Memory
/// stays within `max_bytes` plus one read chunk, whatever the pipe holds.
pub(super) fn read_capped(mut pipe: impl Read, max_bytes: usize) -> io::Result<Option<Vec<u8>>> {
    let mut buffer = Vec::new();
    let mut chunk = vec![0; READ_CHUNK];
    loop {
        let read = match pipe.read(&mut chunk) {
            Ok(0) => return Ok(Some(buffer)),
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        let wanted = buffer.len() + read;
        if wanted > max_bytes {
            return Ok(None);
        }
        if buffer.capacity() < wanted {
            let target = (buffer.capacity() * 2).clamp(wanted, max_bytes);
            buffer.reserve_exact(target - buffer.len());
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
}

/// Reads `pipe` to its end (or first error), keeping its last bytes in `tail`.
fn read_tail(mut pipe: impl Read, tail: &Mutex<Tail>) {
    let mut chunk = vec![0; READ_CHUNK];
    loop {
        match pipe.read(&mut chunk) {
            Ok(0) => return,
            Ok(read) => lock(tail).push(&chunk[..read]),
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// Locks a mutex whose data stays usable even if a holder panicked.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The last bytes written to a stream.
pub(super) struct Tail {
    keep: usize,
    bytes: VecDeque<u8>,
    dropped: bool,
}

impl Tail {
    pub(super) fn new(keep: usize) -> Self {
        Self {
            keep,
            bytes: VecDeque::new(),
            dropped: false,
        }
    }

    pub(super) fn push(&mut self, data: &[u8]) {
        self.bytes.extend(data);
        if self.bytes.len() > self.keep {
            let excess = self.bytes.len() - self.keep;
            self.bytes.drain(..excess);
            self.dropped = true;
        }
    }

    /// The kept bytes as text, without a leading partial line when the start was dropped,
    /// trimmed of surrounding blank space.
    pub(super) fn text(&self) -> String {
        let bytes: Vec<u8> = self.bytes.iter().copied().collect();
        let text = String::from_utf8_lossy(&bytes);
        let text = match (self.dropped, text.split_once('\n')) {
            (true, Some((_, rest))) => rest,
            _ => &text,
        };
        text.trim().to_string()
    }
}
