//! The clients: rmcp in this process (HTTP in both eras, stdio), and the Python SDK in a child
//! process (`tests/clients/python/soak.py`) fed the calls as JSON lines. Each lane keeps up to
//! `per_lane` calls in flight and sends every call's [`Answer`] back exactly once.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use rmcp::RoleClient;
use rmcp::model::CallToolRequestParams;
use rmcp::service::Peer;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, Semaphore, mpsc};

use super::check::{Answer, Ending};
use super::plan::{Call, Kind};
use crate::client::{Client, Transport};

/// How long a cancelled or disconnecting call runs before its client lets go.
pub(crate) const LET_GO_AFTER: Duration = Duration::from_millis(300);

/// How long a lane keeps trying to reconnect (the main server restarts within seconds).
const RECONNECT_FOR: Duration = Duration::from_secs(60);

/// Now, in Unix seconds (the Python lanes use the same clock).
pub(crate) fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |elapsed| elapsed.as_secs_f64())
}

/// Where an rmcp lane connects.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// Streamable HTTP at this URL, legacy or 2026-07-28.
    Http(String, Transport),
    /// A stdio server of its own: this program and these arguments (`--stdio` included).
    Stdio(PathBuf, Vec<String>),
}

impl Target {
    async fn connect(&self) -> Result<Client> {
        match self {
            Target::Http(url, transport) => Client::http(url, *transport).await,
            Target::Stdio(program, args) => {
                let mut command = tokio::process::Command::new(program);
                command.args(args).kill_on_drop(true);
                Ok(Client::stdio(command, Stdio::null()).await?.0)
            }
        }
    }
}

/// A connected client and when it connected.
struct Live {
    client: Client,
    connected: f64,
    generation: u64,
}

/// One rmcp connection shared by a lane's calls, replaced after a transport failure.
struct Shared {
    target: Target,
    live: Mutex<(Option<Live>, u64)>,
}

impl Shared {
    async fn peer(&self) -> Result<(Peer<RoleClient>, f64, u64)> {
        let mut guard = self.live.lock().await;
        if let Some(live) = &guard.0 {
            return Ok((live.client.peer(), live.connected, live.generation));
        }
        let began = std::time::Instant::now();
        loop {
            match self.target.connect().await {
                Ok(client) => {
                    guard.1 += 1;
                    let live = Live {
                        client,
                        connected: now(),
                        generation: guard.1,
                    };
                    let answer = (live.client.peer(), live.connected, live.generation);
                    guard.0 = Some(live);
                    return Ok(answer);
                }
                Err(error) if began.elapsed() > RECONNECT_FOR => return Err(error),
                Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
            }
        }
    }

    async fn broken(&self, generation: u64) {
        let mut guard = self.live.lock().await;
        if guard
            .0
            .as_ref()
            .is_some_and(|live| live.generation == generation)
            && let Some(live) = guard.0.take()
        {
            tokio::spawn(live.client.close());
        }
    }

    async fn close(&self) {
        if let Some(live) = self.live.lock().await.0.take() {
            live.client.close().await;
        }
    }
}

fn params(call: &Call) -> CallToolRequestParams {
    CallToolRequestParams::new("behave").with_arguments(call.arguments.clone())
}

fn result_ending(result: rmcp::model::CallToolResult) -> Ending {
    let text = result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("\n");
    Ending::Result {
        is_error: result.is_error == Some(true),
        text,
        structured: result.structured_content,
    }
}

async fn rmcp_call(shared: &Shared, call: &Call, give_up: Duration) -> Answer {
    let start = now();
    let answer = |connected: f64, ending: Ending| Answer {
        id: call.id,
        start,
        end: now(),
        connected,
        ending,
    };
    if call.kind == Kind::Disconnect {
        let own = match shared.target.connect().await {
            Ok(own) => own,
            Err(error) => return answer(start, Ending::Transport(format!("{error:#}"))),
        };
        let connected = now();
        let peer = own.peer();
        let request = params(call);
        let pending = tokio::spawn(async move { peer.call_tool(request).await });
        tokio::time::sleep(LET_GO_AFTER).await;
        let close = |own: Client| async move {
            let _ = tokio::time::timeout(give_up, own.close()).await;
        };
        if pending.is_finished()
            && let Ok(Ok(result)) = pending.await
        {
            close(own).await;
            return answer(connected, result_ending(result));
        }
        // Closing the client ends the session (or the stdio server's stdin) mid-call.
        close(own).await;
        return answer(connected, Ending::Disconnected);
    }
    let (peer, connected, generation) = match shared.peer().await {
        Ok(live) => live,
        Err(error) => return answer(start, Ending::Transport(format!("{error:#}"))),
    };
    let called = if call.kind == Kind::Cancel {
        // Dropping rmcp's request future sends notifications/cancelled (or, over 2026-07-28
        // HTTP, drops the request's stream).
        match tokio::time::timeout(LET_GO_AFTER, peer.call_tool(params(call))).await {
            Ok(called) => called,
            Err(_) => return answer(connected, Ending::Cancelled),
        }
    } else {
        match tokio::time::timeout(give_up, peer.call_tool(params(call))).await {
            Ok(called) => called,
            Err(_) => {
                shared.broken(generation).await;
                return answer(connected, Ending::NoAnswer);
            }
        }
    };
    match called {
        Ok(result) => answer(connected, result_ending(result)),
        Err(error) => {
            shared.broken(generation).await;
            answer(connected, Ending::Transport(error.to_string()))
        }
    }
}

/// Runs `calls` through rmcp at `target`, `per_lane` at a time.
pub(crate) async fn rmcp_lane(
    target: Target,
    calls: Vec<Call>,
    per_lane: usize,
    give_up: Duration,
    answers: mpsc::UnboundedSender<Answer>,
) {
    let shared = Arc::new(Shared {
        target,
        live: Mutex::new((None, 0)),
    });
    let slots = Arc::new(Semaphore::new(per_lane));
    let mut running = tokio::task::JoinSet::new();
    for call in calls {
        let Ok(permit) = slots.clone().acquire_owned().await else {
            break;
        };
        let shared = shared.clone();
        let answers = answers.clone();
        running.spawn(async move {
            let answer = rmcp_call(&shared, &call, give_up).await;
            let _ = answers.send(answer);
            drop(permit);
        });
    }
    while running.join_next().await.is_some() {}
    shared.close().await;
}

/// Runs `calls` through the Python SDK (`soak.py` with `args`), which keeps `per_lane` in
/// flight itself. A call the script never answers is reported as lost by the caller.
pub(crate) async fn python_lane(
    python: PathBuf,
    script: PathBuf,
    log: PathBuf,
    args: Vec<String>,
    calls: Vec<Call>,
    per_lane: usize,
    answers: mpsc::UnboundedSender<Answer>,
) -> Result<()> {
    let mut child = tokio::process::Command::new(&python)
        .arg(&script)
        .args(&args)
        .args(["--concurrency", &per_lane.to_string()])
        // The stdio server it starts inherits this: warnings only on the soak's stderr.
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(
            std::fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?,
        ))
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("starting {} {}", python.display(), script.display()))?;
    let mut stdin = child.stdin.take().context("the script's stdin")?;
    let stdout = child.stdout.take().context("the script's stdout")?;
    let feed = async move {
        for call in calls {
            let action = match call.kind {
                Kind::Cancel => "cancel",
                Kind::Disconnect => "disconnect",
                _ => "call",
            };
            let line = json!({
                "id": call.id,
                "arguments": call.arguments,
                "action": action,
                "after": LET_GO_AFTER.as_secs_f64(),
            });
            if stdin
                .write_all(format!("{line}\n").as_bytes())
                .await
                .is_err()
            {
                break;
            }
        }
        drop(stdin);
    };
    let read = async move {
        let mut lines = BufReader::new(stdout).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let Ok(doc) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            let Some(id) = doc["id"].as_u64() else {
                continue;
            };
            let ending = match doc["outcome"].as_str() {
                Some("result") => Ending::Result {
                    is_error: doc["is_error"] == true,
                    text: doc["text"].as_str().unwrap_or_default().to_string(),
                    structured: Some(doc["structured"].clone()).filter(|v| !v.is_null()),
                },
                Some("cancelled") => Ending::Cancelled,
                Some("disconnected") => Ending::Disconnected,
                Some("no_answer") => Ending::NoAnswer,
                _ => Ending::Transport(doc["error"].as_str().unwrap_or("?").to_string()),
            };
            let start = doc["start"].as_f64().unwrap_or_default();
            let _ = answers.send(Answer {
                id: id as usize,
                start,
                end: doc["end"].as_f64().unwrap_or_default(),
                connected: doc["connected"].as_f64().unwrap_or(start),
                ending,
            });
        }
    };
    tokio::join!(feed, read);
    let status = child.wait().await.context("waiting for the Python lane")?;
    anyhow::ensure!(
        status.success(),
        "the Python lane {args:?} exited {status}; see {}",
        log.display()
    );
    Ok(())
}
