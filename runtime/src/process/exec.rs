//! Running one command: no shell, stdin closed, its own process group, a scrubbed environment,
//! stdout and stderr combined in arrival order into a bounded [`Capture`], and a hard end.
//!
//! Whatever ends the call (exit, timeout, cancellation, shutdown, a panic that drops the
//! future) ends everything the command started: the child leads its own process group, and
//! the group receives SIGKILL through a guard that fires on every path. The server keeps a
//! registry of live groups so shutdown can kill what is still running.

use std::collections::HashSet;
use std::ffi::OsString;
use std::future::Future;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;

use crate::process::live::Live;
use crate::process::output::{Capture, Output};

/// How long to keep reading after the command exited, for output still in flight from
/// processes that escaped its group (which are the only ones that can still hold the pipe).
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(2);

/// How long to wait for a killed command to be reaped and its pipe to close.
const DRAIN_AFTER_KILL: Duration = Duration::from_secs(2);

/// Live process groups, so shutdown can kill whatever still runs.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProcessGroups {
    live: Arc<Mutex<HashSet<i32>>>,
    /// Set by the first [`Self::kill_all`]: a group registered after it (a background check
    /// that started its child between the shutdown's kill and the exit) is killed at once.
    closed: Arc<AtomicBool>,
}

impl ProcessGroups {
    /// Sends SIGKILL to every live group, and to every group registered from now on.
    pub(crate) fn kill_all(&self) -> usize {
        self.closed.store(true, Ordering::SeqCst);
        let groups: Vec<i32> = self.lock().iter().copied().collect();
        for group in &groups {
            kill_group(*group);
        }
        groups.len()
    }

    /// How many commands are running.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<i32>> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn register(&self, group: i32) -> GroupGuard {
        self.lock().insert(group);
        // Registered first, checked second: a concurrent kill_all either saw the group or had
        // already closed the registry.
        if self.closed.load(Ordering::SeqCst) {
            kill_group(group);
        }
        GroupGuard {
            group,
            groups: self.clone(),
            armed: true,
        }
    }
}

/// Kills a command's process group when dropped, unless already done.
pub(crate) struct GroupGuard {
    group: i32,
    groups: ProcessGroups,
    armed: bool,
}

impl GroupGuard {
    /// Kills the group now (it stays registered until the guard is dropped).
    fn kill(&self) {
        kill_group(self.group);
    }

    /// Forgets the group. Called once the group was killed and its leader reaped: from then on
    /// the id may be reused, so it is never signalled again.
    fn finish(mut self) {
        self.armed = false;
        self.groups.lock().remove(&self.group);
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            kill_group(self.group);
            self.groups.lock().remove(&self.group);
        }
    }
}

/// SIGKILL to a whole group; a group that is already gone is fine.
fn kill_group(group: i32) {
    if group > 1 {
        let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
    }
}

/// Why a call was cut short from outside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CancelReason {
    /// The client sent `notifications/cancelled`, or closed the request's stream.
    Client,
    /// The server is shutting down.
    Shutdown,
    /// The call had become a task, and `tasks/cancel` asked to stop it.
    TaskCancelled,
    /// The call had become a task, and the task outlived its TTL.
    TaskExpired,
    /// The call had to become a task, and the task store was full.
    StoreFull,
}

/// One command to run.
pub(crate) struct Command<'a> {
    /// The program.
    pub(crate) program: &'a Path,
    /// Its arguments.
    pub(crate) args: &'a [String],
    /// Its whole environment.
    pub(crate) env: &'a [(OsString, OsString)],
    /// The most it may run.
    pub(crate) timeout: Duration,
    /// Where its group is registered while it runs.
    pub(crate) groups: &'a ProcessGroups,
    /// Where its output is also shown while it runs (progress, tasks), if anywhere.
    pub(crate) live: Option<&'a Live>,
}

/// How a command ended.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// It ran to its end (any exit code or signal).
    Finished {
        /// Its exit status.
        status: ExitStatus,
        /// What it printed.
        output: Output,
        /// How long it ran.
        elapsed: Duration,
    },
    /// It could not be started.
    SpawnFailed(io::Error),
    /// It ran past the timeout and was killed.
    TimedOut {
        /// What it printed before.
        output: Output,
    },
    /// It was cancelled and killed.
    Cancelled {
        /// By whom.
        reason: CancelReason,
        /// What it printed before.
        output: Output,
        /// How long it ran.
        elapsed: Duration,
    },
    /// The server could not watch it (an I/O error on the pipe or while waiting).
    Failed(io::Error),
}

/// Runs `command` until it exits, times out, or `cancel` resolves.
pub(crate) async fn run(
    command: Command<'_>,
    cancel: impl Future<Output = CancelReason>,
) -> Outcome {
    let (reader, writer) = match std::io::pipe() {
        Ok(pipe) => pipe,
        Err(error) => return Outcome::SpawnFailed(error),
    };
    let writer_for_stderr = match writer.try_clone() {
        Ok(writer) => writer,
        Err(error) => return Outcome::SpawnFailed(error),
    };
    let mut process = tokio::process::Command::new(command.program);
    process
        .args(command.args)
        .env_clear()
        .envs(command.env.iter().map(|(name, value)| (name, value)))
        .stdin(Stdio::null())
        // One pipe for both streams: the kernel keeps the order in which they were written.
        .stdout(Stdio::from(writer))
        .stderr(Stdio::from(writer_for_stderr))
        .process_group(0)
        .kill_on_drop(true);
    let started = Instant::now();
    let spawned = process.spawn();
    // The command holds our copies of the pipe's write end: drop it, or EOF never comes.
    drop(process);
    let mut child = match spawned {
        Ok(child) => child,
        Err(error) => return Outcome::SpawnFailed(error),
    };
    let Some(pid) = child.id() else {
        return Outcome::Failed(io::Error::other("the command has no process id"));
    };
    // A pid fits an i32 (`pid_t`); the child leads its own group, so the pid is the group id.
    let guard = command.groups.register(pid as i32);
    let mut reader = match tokio::net::unix::pipe::Receiver::from_owned_fd(OwnedFd::from(reader)) {
        Ok(reader) => reader,
        Err(error) => return Outcome::Failed(error),
    };

    let mut capture = Capture::new();
    let mut buffer = vec![0u8; 64 * 1024];
    let mut status: Option<ExitStatus> = None;
    let mut eof = false;
    let deadline = tokio::time::sleep(command.timeout);
    tokio::pin!(deadline);
    tokio::pin!(cancel);
    // Armed when the command exits; until then its branch is disabled.
    let drain = tokio::time::sleep(command.timeout);
    tokio::pin!(drain);

    let ending: Result<ExitStatus, Cut> = loop {
        if eof && let Some(status) = status {
            break Ok(status);
        }
        tokio::select! {
            read = reader.read(&mut buffer), if !eof => match read {
                Ok(0) => eof = true,
                Ok(n) => {
                    capture.push(&buffer[..n]);
                    if let Some(live) = command.live {
                        live.push(&buffer[..n]);
                    }
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => break Err(Cut::Failed(error)),
            },
            waited = child.wait(), if status.is_none() => match waited {
                Ok(exited) => {
                    status = Some(exited);
                    // Whatever it left running in its group goes with it.
                    guard.kill();
                    drain.as_mut().reset(tokio::time::Instant::now() + DRAIN_AFTER_EXIT);
                }
                Err(error) => break Err(Cut::Failed(error)),
            },
            () = &mut drain, if status.is_some() => {
                if let Some(status) = status {
                    break Ok(status);
                }
            }
            () = &mut deadline => break Err(Cut::TimedOut),
            reason = &mut cancel => break Err(Cut::Cancelled(reason)),
        }
    };
    let elapsed = started.elapsed();

    let cut = match ending {
        Ok(status) => {
            guard.finish();
            return Outcome::Finished {
                status,
                output: capture.finish(),
                elapsed,
            };
        }
        Err(cut) => cut,
    };
    guard.kill();
    // Collect what was written before the kill, and reap the leader, within a bound.
    let _ = tokio::time::timeout(DRAIN_AFTER_KILL, async {
        if status.is_none() {
            let _ = child.wait().await;
        }
        while !eof {
            match reader.read(&mut buffer).await {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => capture.push(&buffer[..n]),
            }
        }
    })
    .await;
    guard.finish();
    let output = capture.finish();
    match cut {
        Cut::TimedOut => Outcome::TimedOut { output },
        Cut::Cancelled(reason) => Outcome::Cancelled {
            reason,
            output,
            elapsed,
        },
        Cut::Failed(error) => Outcome::Failed(error),
    }
}

/// Why the watch loop stopped before the command's natural end.
enum Cut {
    TimedOut,
    Cancelled(CancelReason),
    Failed(io::Error),
}

/// `exit_code` as fisk-ai reports it: the code, or -1 when a signal ended the command.
pub(crate) fn exit_code(status: &ExitStatus) -> i32 {
    status.code().unwrap_or(-1)
}

/// The signal that ended the command, by name (`SIGSEGV`), if one did.
pub(crate) fn signal_name(status: &ExitStatus) -> Option<String> {
    let signal = status.signal()?;
    Some(
        Signal::try_from(signal)
            .map(|s| s.as_str().to_string())
            .unwrap_or_else(|_| format!("signal {signal}")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_registered_after_the_shutdown_kill_is_killed_at_once() {
        let groups = ProcessGroups::default();
        assert_eq!(groups.kill_all(), 0);
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new("/bin/sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .expect("sleep starts");
        let group = i32::try_from(child.id()).expect("pid");
        let guard = groups.register(group);
        let status = child.wait().expect("reaped");
        assert_eq!(status.signal(), Some(9), "{status:?}");
        guard.finish();
    }

    fn sh(script: &str) -> Vec<String> {
        vec!["-c".into(), script.into()]
    }

    async fn run_sh(script: &str, timeout: Duration) -> Outcome {
        let groups = ProcessGroups::default();
        let args = sh(script);
        let env = fiskgen_contract::introspect::child_env(std::env::vars_os(), &[]);
        let outcome = run(
            Command {
                program: Path::new("/bin/sh"),
                args: &args,
                env: &env,
                timeout,
                groups: &groups,
                live: None,
            },
            std::future::pending(),
        )
        .await;
        assert_eq!(groups.len(), 0, "group still registered");
        outcome
    }

    #[tokio::test]
    async fn interleaving_is_kept() {
        let outcome = run_sh(
            "echo first; echo second >&2; echo third; exit 3",
            Duration::from_secs(20),
        )
        .await;
        let Outcome::Finished { status, output, .. } = outcome else {
            panic!("{outcome:?}");
        };
        assert_eq!(exit_code(&status), 3);
        assert_eq!(output.text, "first\nsecond\nthird\n");
    }

    #[tokio::test]
    async fn timeout_kills_the_group() {
        let dir = tempfile::tempdir().expect("tempdir");
        let marker = dir.path().join("marker");
        let script = format!(
            "echo started; (sleep 1; echo late > '{}') & sleep 30",
            marker.display()
        );
        let outcome = run_sh(&script, Duration::from_millis(300)).await;
        let Outcome::TimedOut { output } = outcome else {
            panic!("{outcome:?}");
        };
        assert_eq!(output.text, "started\n");
        std::thread::sleep(Duration::from_millis(1500));
        assert!(!marker.exists(), "a grandchild outlived the timeout");
    }

    #[tokio::test]
    async fn a_signal_is_reported() {
        let outcome = run_sh("kill -SEGV $$", Duration::from_secs(20)).await;
        let Outcome::Finished { status, .. } = outcome else {
            panic!("{outcome:?}");
        };
        assert_eq!(exit_code(&status), -1);
        assert_eq!(signal_name(&status).as_deref(), Some("SIGSEGV"));
    }

    #[tokio::test]
    async fn a_missing_program_fails_to_spawn() {
        let groups = ProcessGroups::default();
        let outcome = run(
            Command {
                program: Path::new("/nonexistent/binary"),
                args: &[],
                env: &[],
                timeout: Duration::from_secs(5),
                groups: &groups,
                live: None,
            },
            std::future::pending(),
        )
        .await;
        assert!(
            matches!(outcome, Outcome::SpawnFailed(ref e) if e.kind() == io::ErrorKind::NotFound)
        );
    }
}
