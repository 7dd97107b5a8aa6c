//! Real parts for the server tests: the `fake_server` example binary (built once with cargo),
//! a shell script that plays the application, a server process per test, rmcp clients for both
//! protocol eras, raw HTTP for what clients never send, and `/proc` to see what is left running.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationCapability, FormElicitationCapability,
    Implementation, ProtocolVersion,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{
    ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData, RoleClient, ServiceExt,
};
use serde_json::{Value, json};

/// Generous bound for anything that should happen "soon" on a busy two-core machine.
pub(crate) const PATIENCE: Duration = Duration::from_secs(60);

/// The `fake_server` example, built on first use (with the same profile as the tests) so the
/// binary under test is always current.
pub(crate) fn server_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| build_example("fake_server"))
}

/// The `builtin_server` example (built-in tools and knowledge, no application).
pub(crate) fn builtin_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| build_example("builtin_server"))
}

/// Builds an example of this crate and returns its executable.
fn build_example(name: &str) -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.args([
        "build",
        "--example",
        name,
        "--message-format=json-render-diagnostics",
        "--manifest-path",
        concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"),
    ]);
    if !cfg!(debug_assertions) {
        command.arg("--release");
    }
    let output = command
        .stderr(Stdio::inherit())
        .output()
        .unwrap_or_else(|error| panic!("running cargo build --example {name}: {error}"));
    assert!(output.status.success(), "building {name} failed");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|message| message["reason"] == "compiler-artifact")
        .filter(|message| message["target"]["name"] == name)
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("cargo reported no {name} executable"))
}

/// The shell script that plays the application (see the tool specs in the example).
const FAKE_APP: &str = r#"#!/bin/sh
cmd="$1"; shift
case "$cmd" in
  echo) for a in "$@"; do printf '[%s]\n' "$a"; done ;;
  exit) echo oops >&2; exit "${1#--code=}" ;;
  sleep)
    [ "$1" = "--" ] && shift
    echo started
    if [ -n "$2" ]; then (sleep 3; echo late > "$2") & fi
    sleep "$1"
    echo done ;;
  flood) [ "$1" = "--" ] && shift; yes 0123456789abcde | head -c "$1" ;;
  crash) kill -SEGV $$ ;;
  env) env; echo "CWD=$(pwd)" ;;
  stream) echo first; echo second >&2; echo third ;;
  deploy) [ "$1" = "--" ] && shift; echo "deployed $1" ;;
  *) echo "unknown command $cmd" >&2; exit 64 ;;
esac
"#;

/// The fake application in its own directory (which also holds marker files).
pub(crate) struct FakeApp {
    dir: tempfile::TempDir,
}

impl FakeApp {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("fakeapp");
        std::fs::write(&path, FAKE_APP).expect("writing the fake app");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        Self { dir }
    }

    pub(crate) fn path(&self) -> PathBuf {
        self.dir.path().join("fakeapp")
    }

    pub(crate) fn marker(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Processes still running the fake app (the script is `argv[1]` of `/bin/sh`, or
    /// `argv[0]`), zombies excluded. The server, which names the app in a flag, is not one.
    pub(crate) fn running(&self) -> Vec<u32> {
        processes()
            .into_iter()
            .filter(|process| self.runs(process) && process.state != 'Z')
            .map(|process| process.pid)
            .collect()
    }

    /// Whether `process` is the fake app (or a fork of it).
    pub(crate) fn runs(&self, process: &Process) -> bool {
        let path = self.path().display().to_string();
        process.argv.iter().take(2).any(|arg| *arg == path)
    }
}

/// One process as `/proc` shows it.
pub(crate) struct Process {
    pub(crate) pid: u32,
    pub(crate) pgrp: u32,
    pub(crate) state: char,
    pub(crate) argv: Vec<String>,
}

/// Every process on the machine.
pub(crate) fn processes() -> Vec<Process> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let after = &stat[stat.rfind(')')? + 2..];
            let mut fields = after.split_whitespace();
            let state = fields.next()?.chars().next()?;
            let _ppid = fields.next()?;
            let pgrp = fields.next()?.parse().ok()?;
            let argv = std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|bytes| {
                    bytes
                        .split(|byte| *byte == 0)
                        .filter(|arg| !arg.is_empty())
                        .map(|arg| String::from_utf8_lossy(arg).into_owned())
                        .collect()
                })
                .unwrap_or_default();
            Some(Process {
                pid,
                pgrp,
                state,
                argv,
            })
        })
        .collect()
}

/// Live (non-zombie) members of a process group.
pub(crate) fn group_members(pgrp: u32) -> Vec<u32> {
    processes()
        .into_iter()
        .filter(|process| process.pgrp == pgrp && process.state != 'Z')
        .map(|process| process.pid)
        .collect()
}

/// Polls `condition` until it holds or `timeout` passes.
pub(crate) fn eventually(timeout: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if condition() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The process group of the fake app's running command (its leader leads it), once it runs.
pub(crate) fn wait_for_command(app: &FakeApp) -> u32 {
    let mut group = None;
    assert!(
        eventually(PATIENCE, || {
            group = processes()
                .into_iter()
                .find(|p| app.runs(p) && p.pid == p.pgrp)
                .map(|p| p.pgrp);
            group.is_some()
        }),
        "the command never started"
    );
    group.unwrap_or_default()
}

/// A running `fake_server`.
pub(crate) struct Server {
    child: Child,
    pub(crate) url: String,
    pub(crate) addr: SocketAddr,
    log: Arc<Mutex<String>>,
    pub(crate) app: FakeApp,
}

/// How to start a server.
pub(crate) struct Start<'a> {
    pub(crate) profile: &'a str,
    pub(crate) args: &'a [&'a str],
    pub(crate) env: &'a [(&'a str, &'a str)],
    /// The `builtin_server` example (profile in `BUILTIN_PROFILE`) instead of `fake_server`.
    pub(crate) builtins: bool,
    /// The server's working directory (default: the test's).
    pub(crate) cwd: Option<&'a Path>,
}

impl Default for Start<'_> {
    fn default() -> Self {
        Self {
            profile: "auto",
            args: &[],
            env: &[],
            builtins: false,
            cwd: None,
        }
    }
}

impl Server {
    /// An HTTP server with the `auto` profile.
    pub(crate) fn start() -> Self {
        Self::start_with(Start::default())
    }

    pub(crate) fn profile(profile: &str) -> Self {
        Self::start_with(Start {
            profile,
            ..Start::default()
        })
    }

    pub(crate) fn args(args: &[&str]) -> Self {
        Self::start_with(Start {
            args,
            ..Start::default()
        })
    }

    pub(crate) fn start_with(start: Start<'_>) -> Self {
        let app = FakeApp::new();
        let binary = if start.builtins {
            builtin_binary()
        } else {
            server_binary()
        };
        let mut command = Command::new(binary);
        command.args(["--port", "0"]);
        if !start.builtins && !start.args.contains(&"--application-path") {
            command.arg("--application-path").arg(app.path());
        }
        if let Some(cwd) = start.cwd {
            command.current_dir(cwd);
        }
        command
            .args(start.args)
            .env("FAKE_PROFILE", start.profile)
            .env("BUILTIN_PROFILE", start.profile)
            .env("FAKE_SECRET", "do-not-leak")
            .env("ANTHROPIC_API_KEY", "sk-do-not-leak")
            .env_remove("RUST_LOG")
            .env_remove("FISK_AI_MCP_PORT")
            .env_remove("FISK_AI_MCP_ADDRESS")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (name, value) in start.env {
            command.env(name, value);
        }
        let mut child = command.spawn().expect("starting fake_server");
        let stderr = child.stderr.take().expect("stderr");
        let log = Arc::new(Mutex::new(String::new()));
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let mut log = sink.lock().unwrap_or_else(|e| e.into_inner());
                log.push_str(&line);
                log.push('\n');
            }
        });
        let mut url = None;
        let started = eventually(PATIENCE, || {
            let log = log.lock().unwrap_or_else(|e| e.into_inner());
            url = log
                .lines()
                .find_map(|line| line.strip_prefix("MCP endpoint: "))
                .map(str::to_string);
            url.is_some() || log.contains("ERROR")
        });
        let url = url.unwrap_or_else(|| {
            panic!(
                "the server did not start (started={started}):\n{}",
                log.lock().unwrap_or_else(|e| e.into_inner())
            )
        });
        let addr = url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .parse()
            .expect("address in the endpoint URL");
        Self {
            child,
            url,
            addr,
            log,
            app,
        }
    }

    /// Everything the server wrote on stderr so far.
    pub(crate) fn log(&self) -> String {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Waits until the log contains `needle`.
    pub(crate) fn wait_log(&self, needle: &str) -> bool {
        eventually(PATIENCE, || self.log().contains(needle))
    }

    /// Sends SIGTERM.
    pub(crate) fn terminate(&self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
    }

    /// Waits for the server to exit.
    pub(crate) fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The server's peak memory (VmHWM) in KiB.
    pub(crate) fn peak_rss_kib(&self) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .ok()
            .and_then(|status| {
                status
                    .lines()
                    .find_map(|line| line.strip_prefix("VmHWM:"))
                    .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
            })
            .unwrap_or(0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How the test client answers approval prompts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    Approve,
    Decline,
    Cancel,
    ApproveFalse,
    /// `approve: "yes"`: not a boolean.
    ApproveString,
    /// The client's elicitation handler fails.
    Fail,
    /// The client declares no elicitation capability.
    Unable,
}

/// An rmcp client that answers prompts as told and counts them.
#[derive(Debug, Clone)]
pub(crate) struct TestClient {
    answer: Answer,
    pub(crate) asked: Arc<AtomicUsize>,
    pub(crate) prompts: Arc<Mutex<Vec<String>>>,
}

impl TestClient {
    pub(crate) fn new(answer: Answer) -> Self {
        Self {
            answer,
            asked: Arc::new(AtomicUsize::new(0)),
            prompts: Arc::new(Mutex::new(Vec::new())),
        }
    }

    pub(crate) fn asked(&self) -> usize {
        self.asked.load(Ordering::SeqCst)
    }
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.answer != Answer::Unable {
            capabilities.elicitation =
                Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        }
        ClientConfig::new(capabilities, Implementation::new("test-client", "1.0"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        if let ElicitRequestParams::FormElicitationParams { message, .. } = &request {
            self.prompts
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(message.clone());
        }
        let accept =
            |content: Value| ElicitResult::new(ElicitationAction::Accept).with_content(content);
        match self.answer {
            Answer::Approve => Ok(accept(json!({"approve": true}))),
            Answer::ApproveFalse => Ok(accept(json!({"approve": false}))),
            Answer::ApproveString => Ok(accept(json!({"approve": "yes"}))),
            Answer::Decline => Ok(ElicitResult::new(ElicitationAction::Decline)),
            Answer::Cancel => Ok(ElicitResult::new(ElicitationAction::Cancel)),
            Answer::Fail | Answer::Unable => Err(ErrorData::internal_error(
                "the approval dialog crashed",
                None,
            )),
        }
    }
}

pub(crate) type Client = RunningService<RoleClient, TestClient>;

/// A legacy (2025-11-25, `initialize` + session) client over streamable HTTP.
pub(crate) async fn legacy(url: &str, client: TestClient) -> Client {
    client
        .serve(StreamableHttpClientTransport::from_uri(url.to_string()))
        .await
        .expect("legacy client connects")
}

/// A legacy client that sends a bearer token.
pub(crate) async fn legacy_with_token(url: &str, token: &str) -> Result<Client, String> {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_string()).auth_header(token);
    TestClient::new(Answer::Unable)
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .map_err(|error| error.to_string())
}

/// A 2026-07-28 (stateless, `server/discover`, MRTR) client over streamable HTTP.
pub(crate) async fn modern(url: &str, client: TestClient) -> Client {
    client
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(url.to_string()),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("2026-07-28 client connects")
}

/// `tools/call` with arguments.
pub(crate) async fn call(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    tokio::time::timeout(
        PATIENCE,
        client.call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(arguments)),
    )
    .await
    .expect("the call answered in time")
    .expect("the call succeeded at the protocol level")
}

/// The text of a result's first content block.
pub(crate) fn text(result: &CallToolResult) -> String {
    result
        .content
        .first()
        .and_then(|content| content.as_text())
        .map(|text| text.text.clone())
        .unwrap_or_default()
}

pub(crate) fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

/// The structured result of a command that ran.
pub(crate) fn structured(result: &CallToolResult) -> Value {
    assert!(!is_error(result), "unexpected tool error: {}", text(result));
    let structured = result
        .structured_content
        .clone()
        .expect("structuredContent");
    let from_text: Value = serde_json::from_str(&text(result)).expect("text content is JSON");
    assert_eq!(structured, from_text, "text and structuredContent differ");
    structured
}

/// What the fake application's `env` command printed (its environment, then `CWD=<its working
/// directory>`), called as the `env` tool through `client`.
pub(crate) async fn env_output(client: &Client) -> String {
    let result = call(client, "env", json!({})).await;
    structured(&result)["output"]
        .as_str()
        .expect("the env tool's output is text")
        .to_string()
}

/// A raw HTTP/1.1 exchange (`Connection: close`): status, headers, body.
pub(crate) fn raw_http(addr: SocketAddr, request: &[u8]) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(PATIENCE)).expect("timeout");
    stream.write_all(request).expect("send");
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let response = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    (status, head.to_string(), body.to_string())
}

/// A POST of a JSON-RPC body with the usual MCP headers plus `extra`.
pub(crate) fn post(addr: SocketAddr, extra: &[(&str, &str)], body: &str) -> (u16, String, String) {
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         Content-Length: {}\r\n",
        addr.port(),
        body.len()
    );
    for (name, value) in extra {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    raw_http(addr, request.as_bytes())
}

/// A legacy `initialize` body.
pub(crate) const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
