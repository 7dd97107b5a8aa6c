//! Load: `concurrency` workers issuing one operation back to back, with the server's and the
//! benchmark's own CPU time over the run.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rmcp::RoleClient;
use rmcp::service::Peer;

use crate::client;
use crate::stats::{self, Run};

#[derive(Debug, Clone, Copy)]
pub(crate) enum Budget {
    Count(usize),
    Time(Duration),
}

#[derive(Debug, Clone)]
pub(crate) enum Op {
    List,
    Call(String),
    Direct {
        app: PathBuf,
        argv: Vec<String>,
        dir: PathBuf,
    },
}

pub(crate) async fn once(peer: Option<&Peer<RoleClient>>, op: &Op) -> Result<()> {
    match (op, peer) {
        (Op::List, Some(peer)) => client::list_tools(peer).await.map(drop),
        (Op::Call(tool), Some(peer)) => client::call_tool(peer, tool).await.map(drop),
        (Op::Direct { app, argv, dir }, _) => {
            let output = tokio::process::Command::new(app)
                .args(argv)
                .current_dir(dir)
                .env("LLMFORMAT", "1")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0)
                .output()
                .await
                .with_context(|| format!("running {}", app.display()))?;
            if !output.status.success() {
                bail!("{} {argv:?} failed ({})", app.display(), output.status);
            }
            Ok(())
        }
        (_, None) => bail!("no client"),
    }
}

/// User + system CPU time of a process so far, ms (`/proc/<pid>/stat`, 100 ticks a second).
pub(crate) fn cpu_ms(pid: Option<u32>) -> Option<f64> {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/stat"),
        None => "/proc/self/stat".to_string(),
    };
    cpu_ms_at(Path::new(&path))
}

/// The CPU time (user + system) in a `stat` file of /proc (a process's or a thread's), ms.
pub(crate) fn cpu_ms_at(stat: &Path) -> Option<f64> {
    times_at(stat).map(Cpu::total)
}

/// CPU time, ms, split as /proc splits it: in the process's own code (user) and in the
/// kernel on its behalf (system).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Cpu {
    pub(crate) user: f64,
    pub(crate) system: f64,
}

impl Cpu {
    pub(crate) fn total(self) -> f64 {
        self.user + self.system
    }

    /// What was spent from `self` to `later`, divided by `count`.
    pub(crate) fn per(self, later: Cpu, count: usize) -> Cpu {
        let count = count.max(1) as f64;
        Cpu {
            user: (later.user - self.user) / count,
            system: (later.system - self.system) / count,
        }
    }
}

/// The CPU time of process `pid` so far, user and system apart.
pub(crate) fn cpu_of(pid: u32) -> Option<Cpu> {
    times_at(Path::new(&format!("/proc/{pid}/stat")))
}

/// The user and system times in a `stat` file of /proc (100 ticks a second), ms.
fn times_at(stat: &Path) -> Option<Cpu> {
    let stat = fs::read_to_string(stat).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some(Cpu {
        user: utime * 10.0,
        system: stime * 10.0,
    })
}

/// `concurrency` workers issue `op` back to back until the budget is spent; `server` is the
/// server's pid, for its CPU time.
pub(crate) async fn load(
    peer: Option<&Peer<RoleClient>>,
    server: Option<u32>,
    op: &Op,
    concurrency: usize,
    budget: Budget,
) -> Result<Run> {
    let issued = Arc::new(AtomicUsize::new(0));
    let server_cpu = server.and_then(|pid| cpu_ms(Some(pid)));
    let client_cpu = cpu_ms(None);
    let began = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..concurrency {
        let peer = peer.cloned();
        let op = op.clone();
        let issued = Arc::clone(&issued);
        workers.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            loop {
                let more = match budget {
                    Budget::Count(n) => issued.fetch_add(1, Ordering::Relaxed) < n,
                    Budget::Time(d) => began.elapsed() < d,
                };
                if !more {
                    return Ok::<_, anyhow::Error>(latencies);
                }
                let sent = Instant::now();
                once(peer.as_ref(), &op).await?;
                latencies.push(stats::ms(sent.elapsed()));
            }
        }));
    }
    let mut run = Run::default();
    for worker in workers {
        run.latencies_ms
            .extend(worker.await.context("a load worker panicked")??);
    }
    run.wall = began.elapsed();
    run.server_cpu_ms = server
        .and_then(|pid| cpu_ms(Some(pid)))
        .zip(server_cpu)
        .map(|(after, before)| after - before);
    run.client_cpu_ms = cpu_ms(None)
        .zip(client_cpu)
        .map(|(after, before)| after - before);
    Ok(run)
}
