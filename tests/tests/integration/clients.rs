//! Real MCP clients against the generated demo server `tasks-mcp` (the golden crate
//! `tests/expected/demo`, built by `cargo build --workspace --bins`), running the real demo
//! app `tasks` built from `examples/demo`.
//!
//! The clients are pinned in `tests/clients` and installed once by
//! [`fiskgen_tests::clients`]: the official Python SDK (`mcp` 2.3.0), driven by one script
//! per scenario in `tests/clients/python`; the MCP Inspector CLI. The conformance suite runs
//! against the conformance fixture's server (`conformance.rs`).
//!
//! The HTTP tests share one server (started by the first test that needs it, stopped when
//! the last one holding it ends); each test keeps its own store file, which the scripts pass
//! as the `store` argument (the app's global `--store` flag, offered on every tool). Tests
//! that need other server flags start their own. Stdio tests start the server through the
//! client, with `TASKS_STORE` and the working directory in the test's own temp directory.
//! Every process and every wait is bounded.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError, Weak, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use fiskgen_tests::apps::{self, App};
use fiskgen_tests::clients;
use serde_json::Value;
use tempfile::TempDir;

/// The tools the demo serves, in order (`store_purge` is tagged `ai:deny`).
pub(super) const SERVED: [&str; 8] = [
    "task_add",
    "task_list",
    "task_show",
    "task_done",
    "task_delete",
    "note_add",
    "note_search",
    "store_export",
];

/// How long a server may take to print its endpoint.
const START_TIMEOUT: Duration = Duration::from_secs(20);
/// Bound of one Python script (each also bounds itself at 60 s).
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(90);
/// Bound of one Inspector CLI run.
pub(super) const INSPECTOR_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a log line may lag behind the result a client already has.
const LOG_LAG: Duration = Duration::from_secs(5);

// ---------------------------------------------------------------------------------------
// The server under test
// ---------------------------------------------------------------------------------------

/// A generated server serving HTTP on a free port, killed on drop.
pub(super) struct Server {
    child: Child,
    /// `http://127.0.0.1:<port>/mcp`.
    pub(super) url: String,
    /// Everything it printed on stderr so far.
    log: Arc<Mutex<String>>,
    /// Its working directory, when the server owns it (removed after the server stops).
    _dir: Option<TempDir>,
}

impl Server {
    /// Starts the demo server with `--port 0` and `extra` flags, in a fresh working directory.
    fn start(extra: &[&str]) -> Result<Server> {
        let dir = tempfile::tempdir().context("creating the server's directory")?;
        let mut server = Server::spawn(&clients::demo_server()?, dir.path(), extra)?;
        server._dir = Some(dir);
        Ok(server)
    }

    /// Starts `binary` with `--port 0` and `extra` flags in `cwd`, running the demo app, and
    /// waits (bounded) for the endpoint it announces.
    pub(super) fn spawn(binary: &Path, cwd: &Path, extra: &[&str]) -> Result<Server> {
        Server::spawn_env(binary, cwd, extra, &[])
    }

    /// [`Server::spawn`] with more environment variables.
    pub(super) fn spawn_env(
        binary: &Path,
        cwd: &Path,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Result<Server> {
        let app = apps::path(App::Demo)?;
        let store = cwd.join("tasks.json");
        let mut all = vec![("TASKS_STORE", store.as_os_str())];
        all.extend(
            env.iter()
                .map(|(name, value)| (*name, std::ffi::OsStr::new(*value))),
        );
        Server::spawn_app(binary, cwd, &app, &all, extra)
    }

    /// `test-mcp`, the conformance fixture's server, over HTTP in `cwd` with `extra` flags.
    pub(super) fn spawn_conformance(cwd: &Path, extra: &[&str]) -> Result<Server> {
        Server::spawn_app(
            &clients::conformance_server()?,
            cwd,
            &apps::path(App::Conformance)?,
            &[],
            extra,
        )
    }

    /// Starts `binary` with `--port 0`, running `app` with `env` added, and `extra` flags in
    /// `cwd`; waits (bounded) for the endpoint it announces.
    pub(super) fn spawn_app(
        binary: &Path,
        cwd: &Path,
        app: &Path,
        env: &[(&str, &std::ffi::OsStr)],
        extra: &[&str],
    ) -> Result<Server> {
        let mut child = Command::new(binary)
            .args([
                "--port",
                "0",
                "--address",
                "127.0.0.1",
                "--application-path",
            ])
            .arg(app)
            .args(extra)
            .current_dir(cwd)
            .env_remove("FISK_AI_MCP_PORT")
            .env_remove("FISK_AI_MCP_ADDRESS")
            .env_remove("FISKGEN_MCP_STATE_KEY")
            .env_remove("FISKGEN_MCP_APPROVAL_STORE")
            .env_remove("FISKGEN_MCP_TASK_STORE")
            .env_remove("FISKGEN_MCP_NATS_CONTEXT")
            .env_remove("RUST_LOG")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        let stderr = child.stderr.take().context("no stderr pipe")?;
        let log = Arc::new(Mutex::new(String::new()));
        let (endpoint, found) = mpsc::channel();
        let sink = log.clone();
        thread::spawn(move || {
            let mut endpoint = Some(endpoint);
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.trim().strip_prefix("MCP endpoint: ")
                    && let Some(endpoint) = endpoint.take()
                {
                    let _ = endpoint.send(url.trim().to_string());
                }
                let mut log = sink.lock().unwrap_or_else(PoisonError::into_inner);
                log.push_str(&line);
                log.push('\n');
            }
        });
        match found.recv_timeout(START_TIMEOUT) {
            Ok(url) => Ok(Server {
                child,
                url,
                log,
                _dir: None,
            }),
            Err(error) => {
                let _ = child.kill();
                let status = child.wait();
                // Let the reader take the last lines.
                thread::sleep(Duration::from_millis(100));
                let log = log.lock().unwrap_or_else(PoisonError::into_inner).clone();
                bail!(
                    "{} printed no `MCP endpoint: URL` line ({error}; {status:?}); its stderr:\n{log}",
                    binary.display()
                )
            }
        }
    }

    /// Its process id.
    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the server logged so far.
    pub(super) fn log(&self) -> String {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Waits (bounded) until the log has a line containing every one of `parts`; returns it.
    pub(super) fn wait_for_line(&self, parts: &[&str]) -> Result<String> {
        let deadline = Instant::now() + LOG_LAG;
        loop {
            let log = self.log();
            if let Some(line) = log.lines().find(|l| parts.iter().all(|p| l.contains(p))) {
                return Ok(line.to_string());
            }
            if Instant::now() >= deadline {
                bail!("the server logged no line with {parts:?}; its log:\n{log}");
            }
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The HTTP server the tests share: started by the first test that asks, stopped when the
/// last test holding it ends (so nothing outlives the test process).
fn shared_server() -> Result<Arc<Server>> {
    static SHARED: Mutex<Weak<Server>> = Mutex::new(Weak::new());
    let mut slot = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(server) = slot.upgrade() {
        return Ok(server);
    }
    let server = Arc::new(Server::start(&[])?);
    *slot = Arc::downgrade(&server);
    Ok(server)
}

/// A test's own directory, with the demo app's store file in it.
struct Scratch {
    dir: TempDir,
}

impl Scratch {
    fn new() -> Result<Scratch> {
        Ok(Scratch {
            dir: tempfile::tempdir().context("creating a scratch directory")?,
        })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn store(&self) -> PathBuf {
        self.dir.path().join("tasks.json")
    }

    fn store_arg(&self) -> String {
        self.store().display().to_string()
    }

    /// The titles of the tasks in the store.
    fn stored_titles(&self) -> Result<Vec<String>> {
        let path = self.store();
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let store: Value = serde_json::from_str(&text)?;
        Ok(store["tasks"]
            .as_array()
            .map(|tasks| {
                tasks
                    .iter()
                    .filter_map(|t| t["title"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default())
    }
}

// ---------------------------------------------------------------------------------------
// Bounded client processes
// ---------------------------------------------------------------------------------------

/// A client process that ended.
pub(super) struct Finished {
    what: String,
    status: ExitStatus,
    pub(super) stdout: String,
    pub(super) stderr: String,
}

impl Finished {
    /// Whether it exited 0.
    pub(super) fn succeeded(&self) -> bool {
        self.status.success()
    }

    /// Fails unless it exited 0.
    pub(super) fn success(self) -> Result<Finished> {
        ensure!(
            self.status.success(),
            "{} failed: {}",
            self.what,
            self.report()
        );
        Ok(self)
    }

    /// Fails unless stdout has a line equal to `line`.
    pub(super) fn has_line(&self, line: &str) -> Result<&Finished> {
        ensure!(
            self.stdout.lines().any(|l| l.trim_end() == line),
            "{} printed no line {line:?}: {}",
            self.what,
            self.report()
        );
        Ok(self)
    }

    /// Fails unless stdout contains `text`.
    pub(super) fn has(&self, text: &str) -> Result<&Finished> {
        ensure!(
            self.stdout.contains(text),
            "{} printed no {text:?}: {}",
            self.what,
            self.report()
        );
        Ok(self)
    }

    /// Stdout as JSON.
    pub(super) fn json(&self) -> Result<Value> {
        serde_json::from_str(&self.stdout)
            .with_context(|| format!("{} printed no JSON: {}", self.what, self.report()))
    }

    pub(super) fn report(&self) -> String {
        format!(
            "{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

/// Runs `cmd` with no stdin, collecting its output, killed after `timeout`.
pub(super) fn run_bounded(cmd: &mut Command, timeout: Duration, what: &str) -> Result<Finished> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {what}"))?;
    let stdout = reader(child.stdout.take());
    let stderr = reader(child.stderr.take());
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().context("waiting")? {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "{what} did not finish within {timeout:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
                join(stdout),
                join(stderr)
            );
        }
        thread::sleep(Duration::from_millis(20));
    };
    Ok(Finished {
        what: what.to_string(),
        status,
        stdout: join(stdout),
        stderr: join(stderr),
    })
}

fn reader<R: Read + Send + 'static>(pipe: Option<R>) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

fn join(handle: thread::JoinHandle<String>) -> String {
    handle.join().unwrap_or_default()
}

/// Runs `tests/clients/python/<script>` with the pinned SDK; it must exit 0 and print PASS.
pub(super) fn python(script: &str, args: &[String]) -> Result<Finished> {
    let interpreter = clients::python()?;
    let mut cmd = Command::new(interpreter);
    cmd.arg(clients::scripts_dir().join(script))
        .args(args)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTHONUNBUFFERED", "1");
    let what = format!("{script} {}", args.join(" "));
    let finished = run_bounded(&mut cmd, SCRIPT_TIMEOUT, &what)?.success()?;
    finished.has_line("PASS")?;
    Ok(finished)
}

/// A Node client from the pinned install (`mcp-inspector`, `conformance`), with that
/// install's Node 22 first on PATH and HOME in `home` (the Inspector keeps a catalog there).
pub(super) fn node_tool(tool: &str, home: &Path) -> Result<Command> {
    let bin = clients::node_bin()?;
    let mut dirs = vec![bin.clone()];
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    let mut cmd = Command::new(bin.join(tool));
    cmd.env("PATH", std::env::join_paths(dirs).context("building PATH")?)
        .env("HOME", home)
        .env("NO_COLOR", "1")
        .env("FORCE_COLOR", "0")
        .env_remove("NODE_OPTIONS");
    Ok(cmd)
}

pub(super) fn strings(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| s.to_string()).collect()
}

// ---------------------------------------------------------------------------------------
// Python SDK: list and call, in both eras over HTTP and over stdio
// ---------------------------------------------------------------------------------------

/// `list_call.py` over HTTP: the exact tool set, task_add then task_list.
fn list_and_call_over_http(mode: &str, negotiated: &str) -> Result<()> {
    let server = shared_server()?;
    let scratch = Scratch::new()?;
    let store = scratch.store_arg();
    let run = python(
        "list_call.py",
        &strings(&["--url", &server.url, "--mode", mode, "--store", &store]),
    )?;
    run.has_line(&format!("protocol: {negotiated}"))?
        .has_line(&format!("tools: {}", SERVED.join(" ")))?
        .has_line(&format!(
            "task_add: task add --store={store} -- milk-{mode} -> exit 0: Added task #1: \
             milk-{mode}"
        ))?
        .has_line(&format!("listed: #1 [open] milk-{mode} (normal)"))?;
    ensure!(scratch.stored_titles()? == [format!("milk-{mode}")]);
    server.wait_for_line(&[
        &format!("task add --store={store} -- milk-{mode}"),
        "exit_code=0",
    ])?;
    Ok(())
}

#[test]
fn python_sdk_lists_and_calls_over_http_legacy() -> Result<()> {
    list_and_call_over_http("legacy", "2025-11-25")
}

#[test]
fn python_sdk_lists_and_calls_over_http_2026_07_28() -> Result<()> {
    list_and_call_over_http("2026-07-28", "2026-07-28")
}

/// `list_call.py` over stdio: the client starts `tasks-mcp --stdio --application-path APP`
/// with TASKS_STORE set, so the command lines carry no --store.
fn list_and_call_over_stdio(mode: &str, negotiated: &str) -> Result<()> {
    let server = clients::demo_server()?;
    let app = apps::path(App::Demo)?;
    let scratch = Scratch::new()?;
    let run = python(
        "list_call.py",
        &[
            "--server".into(),
            server.display().to_string(),
            "--app".into(),
            app.display().to_string(),
            "--store".into(),
            scratch.store_arg(),
            "--store-from-env".into(),
            "--mode".into(),
            mode.into(),
        ],
    )?;
    run.has_line(&format!("protocol: {negotiated}"))?
        .has_line(&format!("tools: {}", SERVED.join(" ")))?
        .has_line(&format!(
            "task_add: task add -- milk-{mode} -> exit 0: Added task #1: milk-{mode}"
        ))?;
    ensure!(scratch.stored_titles()? == [format!("milk-{mode}")]);
    // Nothing but protocol messages on the server's stdout: the client would have failed on
    // anything else (the server's log went to stderr, which the client passes through).
    ensure!(
        run.stderr
            .contains(&format!("Serving {} tools", SERVED.len())),
        "the stdio server's banner is missing from stderr: {}",
        run.report()
    );
    Ok(())
}

#[test]
fn python_sdk_lists_and_calls_over_stdio() -> Result<()> {
    // `auto`: the client probes server/discover, and the dual-era server answers it.
    list_and_call_over_stdio("auto", "2026-07-28")
}

#[test]
fn python_sdk_lists_and_calls_over_stdio_legacy() -> Result<()> {
    list_and_call_over_stdio("legacy", "2025-11-25")
}

// ---------------------------------------------------------------------------------------
// Python SDK: the confirmation matrix on task_delete (ai:confirm), in both eras
// ---------------------------------------------------------------------------------------

/// One run of `confirm.py`: `answer` to the prompt, the `expect`ed outcome, whether the
/// prompt must be shown, on `tool`. Returns the script's output and the store it used.
fn confirm(
    server: &Server,
    mode: &str,
    answer: &str,
    expect: &str,
    asked: bool,
    tool: &str,
) -> Result<(Finished, String)> {
    let scratch = Scratch::new()?;
    let store = scratch.store_arg();
    let run = python(
        "confirm.py",
        &strings(&[
            "--url",
            &server.url,
            "--mode",
            mode,
            "--store",
            &store,
            "--answer",
            answer,
            "--expect",
            expect,
            "--asked",
            if asked { "yes" } else { "no" },
            "--tool",
            tool,
        ]),
    )?;
    run.has_line(&format!("asked: {}", if asked { "yes" } else { "no" }))?;
    Ok((run, store))
}

/// The reference's outcome rows (fisk-ai-mcp.md 5.3, cases 17-29 of section 9) for one
/// era; the server's mode is the demo's compiled-in `confirm_over_mcp: auto`, except for
/// cases 27-29, which start their own server with `--confirm always|never`.
macro_rules! confirmation_matrix {
    ($era:ident, $mode:literal) => {
        mod $era {
            use super::*;

            /// Case 17: an approving client; the command runs.
            #[test]
            fn approve_runs() -> Result<()> {
                let server = shared_server()?;
                let (run, _) = confirm(&server, $mode, "approve", "ran", true, "task_delete")?;
                run.has("-> exit 0: Deleted task #1")?;
                Ok(())
            }

            /// Case 18: decline; a tool error saying `declined`, nothing runs.
            #[test]
            fn decline_is_refused() -> Result<()> {
                let server = shared_server()?;
                let (run, _) = confirm(&server, $mode, "decline", "declined", true, "task_delete")?;
                run.has("Not approved: the user declined to run \"task delete")?;
                Ok(())
            }

            /// Case 19: cancel; `dismissed`.
            #[test]
            fn cancel_is_dismissed() -> Result<()> {
                let server = shared_server()?;
                let (run, _) = confirm(&server, $mode, "cancel", "dismissed", true, "task_delete")?;
                run.has("the user dismissed the approval prompt for \"task delete")?;
                Ok(())
            }

            /// Case 20: accept with approve=false; `chose not to run`.
            #[test]
            fn accept_without_approval_is_refused() -> Result<()> {
                let server = shared_server()?;
                let (run, _) = confirm(&server, $mode, "reject", "rejected", true, "task_delete")?;
                run.has("and chose not to run it.")?;
                Ok(())
            }

            /// Case 21: accept with approve="yes"; `failed`.
            #[test]
            fn non_boolean_approval_fails() -> Result<()> {
                let server = shared_server()?;
                let (run, _) = confirm(&server, $mode, "invalid", "failed", true, "task_delete")?;
                run.has("Not approved: requesting approval to run \"task delete")?;
                Ok(())
            }

            /// Case 23: a client without elicitation under `auto`: runs, logged `ungated`.
            #[test]
            fn non_eliciting_client_runs_ungated_under_auto() -> Result<()> {
                let server = shared_server()?;
                let (run, store) = confirm(&server, $mode, "none", "ran", false, "task_delete")?;
                run.has("-> exit 0: Deleted task #1")?;
                server.wait_for_line(&[
                    &format!("running \"task delete --store={store} --force -- 1\" ungated"),
                    "ai:confirm",
                ])?;
                Ok(())
            }

            /// Case 24: a declining client calling an `impact:ro` tool: runs, never asked.
            #[test]
            fn read_only_tool_is_not_gated() -> Result<()> {
                let server = shared_server()?;
                confirm(&server, $mode, "decline", "ran", false, "task_list")?;
                Ok(())
            }

            /// Case 26: `impact:rw` without `confirm_tags` (the demo's task_add) and a
            /// declining client: runs, never asked.
            #[test]
            fn impact_rw_without_confirm_tags_is_not_gated() -> Result<()> {
                let server = shared_server()?;
                confirm(&server, $mode, "decline", "ran", false, "task_add")?;
                Ok(())
            }

            /// Case 27: `always` and a client without elicitation: `requires approval`.
            #[test]
            fn always_refuses_a_non_eliciting_client() -> Result<()> {
                let server = Server::start(&["--confirm", "always"])?;
                let (run, _) = confirm(&server, $mode, "none", "refused", false, "task_delete")?;
                run.has("requires approval, but this client cannot be asked")?;
                Ok(())
            }

            /// Case 28: `always` and an approving client: runs.
            #[test]
            fn always_runs_when_approved() -> Result<()> {
                let server = Server::start(&["--confirm", "always"])?;
                confirm(&server, $mode, "approve", "ran", true, "task_delete")?;
                Ok(())
            }

            /// Case 29: `never` and a declining client: runs without asking.
            #[test]
            fn never_runs_without_asking() -> Result<()> {
                let server = Server::start(&["--confirm", "never"])?;
                confirm(&server, $mode, "decline", "ran", false, "task_delete")?;
                // The start note and the connect line say `never` runs them ungated; the
                // per-call warning of `auto` must not appear.
                let log = server.log();
                ensure!(
                    !log.contains("ungated: gated by"),
                    "`never` logged an ungated warning:\n{log}"
                );
                Ok(())
            }
        }
    };
}

confirmation_matrix!(confirm_legacy, "legacy");
confirmation_matrix!(confirm_2026_07_28, "2026-07-28");

/// Case 22, legacy only: the client answers `elicitation/create` with an error; `failed`.
/// (A 2026-07-28 client has no way to answer an input request with an error: the Python
/// SDK raises instead of retrying.)
#[test]
fn confirm_legacy_elicitation_error_fails() -> Result<()> {
    let server = shared_server()?;
    let (run, _) = confirm(&server, "legacy", "error", "failed", true, "task_delete")?;
    run.has("failed: ")?.has("the approval dialog crashed")?;
    Ok(())
}

/// Fail closed: on a stateless server, the Python SDK in legacy mode with an elicitation
/// callback (so it declares elicitation) expects to be asked and cannot be: its gated call is
/// refused with the authoritative text, never run ungated. Without a callback it declares
/// none and `auto` runs the call ungated, with the warning; in 2026-07-28 mode it is asked.
#[test]
fn confirm_stateless_legacy_client_that_declares_elicitation_is_refused() -> Result<()> {
    let server = Server::start(&["--stateless"])?;
    let (run, store) = confirm(
        &server,
        "legacy",
        "approve",
        "stranded",
        false,
        "task_delete",
    )?;
    run.has("but this server is stateless and cannot send a request")?;
    server.wait_for_line(&[
        &format!("task delete --store={store} --force -- 1"),
        "outcome=\"refused\"",
    ])?;
    server.wait_for_line(&["connected: elicitation supported, but this stateless server"])?;
    let (_, store) = confirm(&server, "legacy", "none", "ran", false, "task_delete")?;
    server.wait_for_line(&[
        &format!("running \"task delete --store={store} --force -- 1\" ungated"),
        "ai:confirm",
    ])?;
    confirm(&server, "2026-07-28", "approve", "ran", true, "task_delete")?;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// requestState: forged, altered, misapplied and replayed states never run a command
// ---------------------------------------------------------------------------------------

#[test]
fn request_state_forged_altered_or_replayed_is_refused() -> Result<()> {
    let server = shared_server()?;
    let scratch = Scratch::new()?;
    let store = scratch.store_arg();
    let run = python(
        "request_state.py",
        &strings(&["--url", &server.url, "--store", &store]),
    )?;
    for step in [
        "altered payload",
        "altered tag",
        "forged",
        "garbage",
        "other arguments",
        "replayed",
        "replayed again",
    ] {
        run.has(&format!("\n{step}: refused: invalid requestState: "))?;
    }
    run.has("approved: ran task delete")?;
    // SEP-2322: a retry without the answer is asked again, and only the answered retry runs.
    for step in ["no inputResponses", "answer under another key"] {
        run.has(&format!("\n{step}: asked again\n"))?;
    }
    for step in [
        "first state after asking again",
        "second state after asking again",
    ] {
        run.has(&format!("\n{step}: refused: invalid requestState: "))?;
    }
    run.has(&format!(
        "answered after asking again: ran task delete --store={store} --force -- 2"
    ))?;
    // The log tells every refusal, and the command ran exactly once (on the genuine retry).
    let delete = format!("task delete --store={store} --force -- 1");
    server.wait_for_line(&[&delete, "exit_code="])?;
    let log = server.log();
    let runs = log
        .lines()
        .filter(|l| l.contains(&delete) && l.contains("exit_code="))
        .count();
    ensure!(
        runs == 1,
        "task_delete ran {runs} times, expected once:\n{log}"
    );
    let refusals = log
        .lines()
        .filter(|l| l.contains(&delete) && l.contains("refused"))
        .count();
    ensure!(
        refusals >= 6,
        "expected the refusals in the log, found {refusals}:\n{log}"
    );
    let delete_2 = format!("task delete --store={store} --force -- 2");
    server.wait_for_line(&[&delete_2, "exit_code="])?;
    let log = server.log();
    let asked_again = log
        .lines()
        .filter(|l| l.contains(&delete_2) && l.contains("input required again"))
        .count();
    ensure!(
        asked_again == 2,
        "expected 2 `input required again` lines, found {asked_again}:\n{log}"
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------
// MCP Inspector CLI
// ---------------------------------------------------------------------------------------

/// `mcp-inspector --cli <target...> <args...> --format json`.
fn inspector(home: &Path, target: &[String], args: &[&str]) -> Result<Value> {
    let mut cmd = node_tool("mcp-inspector", home)?;
    cmd.arg("--cli")
        .args(target)
        .args(args)
        .args(["--format", "json"]);
    let what = format!(
        "mcp-inspector --cli {} {}",
        target.join(" "),
        args.join(" ")
    );
    run_bounded(&mut cmd, INSPECTOR_TIMEOUT, &what)?
        .success()?
        .json()
}

pub(super) fn listed_names(listed: &Value) -> Vec<String> {
    listed["result"]["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Checks a tools/call result printed by the Inspector: a command result that ran.
fn inspector_ran(called: &Value, command: &str, output: &str) -> Result<()> {
    let result = &called["result"];
    ensure!(result["isError"] == false, "error result: {called}");
    let structured = &result["structuredContent"];
    ensure!(
        structured["command"] == command,
        "ran {}, expected {command}",
        structured["command"]
    );
    ensure!(structured["exit_code"] == 0, "exit code: {called}");
    ensure!(structured["output"] == output, "output: {called}");
    ensure!(structured["truncated"] == false, "truncated: {called}");
    let text = result["content"][0]["text"]
        .as_str()
        .context("no text content")?;
    let parsed: Value = serde_json::from_str(text).context("the text block is not JSON")?;
    ensure!(
        &parsed == structured,
        "text {text} differs from structuredContent"
    );
    Ok(())
}

#[test]
fn inspector_cli_lists_and_calls_over_http() -> Result<()> {
    let server = shared_server()?;
    let scratch = Scratch::new()?;
    let store = scratch.store_arg();
    let target = vec![server.url.clone()];
    for era in ["legacy", "modern"] {
        // --strict: exit 6 if a schema has an error-severity portability problem.
        let listed = inspector(
            scratch.path(),
            &target,
            &["--protocol-era", era, "--method", "tools/list", "--strict"],
        )?;
        ensure!(
            listed_names(&listed) == SERVED,
            "{era}: listed {:?}",
            listed_names(&listed)
        );
        let title = format!("inspected-{era}");
        let called = inspector(
            scratch.path(),
            &target,
            &[
                "--protocol-era",
                era,
                "--method",
                "tools/call",
                "--tool-name",
                "task_add",
                "--tool-arg",
                &format!("title={title}"),
                &format!("store={store}"),
            ],
        )?;
        let number = if era == "legacy" { 1 } else { 2 };
        inspector_ran(
            &called,
            &format!("task add --store={store} -- {title}"),
            &format!("Added task #{number}: {title}\n"),
        )
        .with_context(|| format!("{era} era"))?;
    }
    ensure!(scratch.stored_titles()? == ["inspected-legacy", "inspected-modern"]);
    Ok(())
}

#[test]
fn inspector_cli_lists_and_calls_over_stdio() -> Result<()> {
    let server = clients::demo_server()?;
    let app = apps::path(App::Demo)?;
    let scratch = Scratch::new()?;
    let target = vec![
        server.display().to_string(),
        "--stdio".into(),
        "--application-path".into(),
        app.display().to_string(),
    ];
    let env = format!("TASKS_STORE={}", scratch.store_arg());
    let cwd = scratch.path().display().to_string();
    let common = ["-e", env.as_str(), "--cwd", cwd.as_str()];
    let listed = inspector(
        scratch.path(),
        &target,
        &[&common[..], &["--method", "tools/list", "--strict"]].concat(),
    )?;
    ensure!(
        listed_names(&listed) == SERVED,
        "listed {:?}",
        listed_names(&listed)
    );
    let called = inspector(
        scratch.path(),
        &target,
        &[
            &common[..],
            &[
                "--method",
                "tools/call",
                "--tool-name",
                "task_add",
                "--tool-arg",
                "title=over-stdio",
            ],
        ]
        .concat(),
    )?;
    inspector_ran(
        &called,
        "task add -- over-stdio",
        "Added task #1: over-stdio\n",
    )?;
    ensure!(scratch.stored_titles()? == ["over-stdio"]);
    Ok(())
}
