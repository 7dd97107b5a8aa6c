//! The config's `telemetry` block (docs/telemetry.md): `tasks-builtins-mcp`
//! (tests/fixtures/builtins.yaml enables it) exports a span per call over OTLP/HTTP to a real
//! receiver, the OpenTelemetry Collector's own `otlpreceiver` (`tests/apps/otlpsink`, built
//! from the Go module proxy and cached like the other Go builds), while the official Python SDK
//! makes the calls (`tests/clients/python/telemetry.py`) and reads what the receiver accepted;
//! `tasks-hybrid-mcp` (tests/fixtures/hybrid.yaml) adds the embeddings spans and the
//! degraded-search metric (`telemetry_hybrid.py`).

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use fiskgen_tests::apps::{self, App};

use super::builtins::{CORPUS_CHUNKS, build_index};
use super::clients::{Server, python, run_bounded, strings};
use fiskgen_tests::clients;

/// How long the receiver may take to listen.
const SINK_START: Duration = Duration::from_secs(20);

/// `otlpsink` listening on a free loopback port, writing what it accepts to a file; killed on
/// drop.
struct Sink {
    child: Child,
    endpoint: String,
}

impl Drop for Sink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port nothing listens on now, for the receiver.
fn free_port() -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").context("finding a free port")?;
    Ok(listener.local_addr().context("reading the port")?.port())
}

/// Starts the receiver, its OTLP/JSON lines going to `spans` (and metrics to `metrics`, else
/// it refuses them); waits (bounded) until it listens.
fn start_sink(spans: &Path, metrics: Option<&Path>) -> Result<Sink> {
    let binary = apps::path(App::OtlpSink)?;
    let address = format!("127.0.0.1:{}", free_port()?);
    let out = File::create(spans).with_context(|| format!("creating {}", spans.display()))?;
    let mut command = Command::new(&binary);
    if let Some(metrics) = metrics {
        command.arg("-metrics").arg(metrics);
    }
    let mut child = command
        .args(["-http", &address])
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", binary.display()))?;
    let stderr = child.stderr.take().context("no stderr pipe")?;
    let (ready, seen) = mpsc::channel();
    thread::spawn(move || {
        let mut log = String::new();
        let mut ready = Some(ready);
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            log.push_str(&line);
            log.push('\n');
            if line.contains("receiving OTLP/HTTP")
                && let Some(ready) = ready.take()
            {
                let _ = ready.send(Ok(()));
            }
        }
        if let Some(ready) = ready {
            let _ = ready.send(Err(log));
        }
    });
    let sink = Sink {
        child,
        endpoint: format!("http://{address}"),
    };
    match seen.recv_timeout(SINK_START) {
        Ok(Ok(())) => Ok(sink),
        Ok(Err(log)) => bail!("otlpsink exited before listening:\n{log}"),
        Err(_) => bail!("otlpsink did not listen within {SINK_START:?}"),
    }
}

/// Each call's `execute_tool` span (with Fisk AI's `fisk.served.*` attributes and outcome: a
/// declined confirmation is `unanswered`, then `confirm_denied`), the
/// `retrieval` and `knowledge_enumerate` spans inside the knowledge calls and the span of a
/// call naming no served tool arrive with Fisk AI's names, kinds and attributes; a call with a
/// `_meta` trace context continues the client's trace, and its command (run directly, or as a
/// task after `--task-after`) gets the call's span as its `TRACEPARENT`.
#[test]
fn every_call_is_a_span_at_a_real_otlp_receiver_and_its_command_continues_the_trace() -> Result<()>
{
    let (base, root, _outside) = super::builtins::Served::prepare()?;
    build_index(&root)?;
    let spans = base.path().join("spans.jsonl");
    let sink = start_sink(&spans, None)?;
    // The application prints its environment; the task-path call's `tracestate` makes it slow
    // enough to become a task.
    let app = base.path().join("print-env");
    std::fs::write(
        &app,
        "#!/bin/sh\ncase \"$TRACESTATE\" in *slow*) sleep 1 ;; esac\nexec env\n",
    )?;
    std::fs::set_permissions(&app, std::os::unix::fs::PermissionsExt::from_mode(0o755))?;
    let env = [
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            std::ffi::OsStr::new(&sink.endpoint),
        ),
        // Spans leave 100 ms after they end instead of 5 s.
        ("OTEL_BSP_SCHEDULE_DELAY", std::ffi::OsStr::new("100")),
    ];
    let server = Server::spawn_app(
        &clients::builtins_server()?,
        &root,
        &app,
        &env,
        &["--task-after", "300ms"],
    )?;
    let finished = python(
        "telemetry.py",
        &strings(&[
            "--url",
            &server.url,
            "--mode",
            "2026-07-28",
            "--spans",
            &spans.to_string_lossy(),
            "--chunks",
            &CORPUS_CHUNKS.to_string(),
        ]),
    )?;
    println!("{}", finished.report());
    finished
        .has_line(
            "received: ['execute_tool knowledge_enumerate', 'execute_tool knowledge_enumerate', \
             'execute_tool knowledge_search', 'execute_tool read_file', 'execute_tool read_file', \
             'execute_tool task_list', 'execute_tool task_list', 'execute_tool unknown_tool', \
             'knowledge_enumerate', 'knowledge_enumerate', 'retrieval']",
        )?
        .has_line("command: TRACEPARENT is the execute_tool task_list span, under the client's")?
        .has_line("task: TRACEPARENT is the deferred execute_tool task_list span")?
        .has_line(
            "refused: execute_tool knowledge_enumerate error, tool_error; knowledge_enumerate \
             invalid_query",
        )?
        .has_line("declined: execute_tool read_file unanswered, then confirm_denied")?
        .has_line("unknown: execute_tool unknown_tool, fisk.tool.requested_name no_such_tool")?;
    server.wait_for_line(&[&format!(
        "telemetry: exporting spans over OTLP/HTTP to {}/v1/traces \
         (OTEL_EXPORTER_OTLP_ENDPOINT) as service \"tasks-builtins\", sample ratio 1",
        sink.endpoint
    )])?;
    Ok(())
}

/// With one tool slot (`--max-concurrent-tools 1`) taken for a whole tool timeout by each of two
/// slow calls, a third call that waits longer than the tool timeout for a slot is answered
/// busy without running, and its span at the receiver says so: `execute_tool task_list`,
/// `fisk.tool.outcome` `capacity`, `error.type` `tool_error`, status `ERROR`, no exit code.
#[test]
fn a_call_refused_for_capacity_is_a_failed_span_at_a_real_otlp_receiver() -> Result<()> {
    let base = tempfile::tempdir().context("creating the test directory")?;
    let spans = base.path().join("spans.jsonl");
    let sink = start_sink(&spans, None)?;
    let app = base.path().join("slow");
    std::fs::write(&app, "#!/bin/sh\nexec sleep 10\n")?;
    std::fs::set_permissions(&app, std::os::unix::fs::PermissionsExt::from_mode(0o755))?;
    let env = [
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            std::ffi::OsStr::new(&sink.endpoint),
        ),
        ("OTEL_BSP_SCHEDULE_DELAY", std::ffi::OsStr::new("100")),
    ];
    let server = Server::spawn_app(
        &clients::builtins_server()?,
        base.path(),
        &app,
        &env,
        &["--max-concurrent-tools", "1", "--tool-timeout", "2s"],
    )?;
    let finished = python(
        "telemetry.py",
        &strings(&[
            "--url",
            &server.url,
            "--mode",
            "2026-07-28",
            "--spans",
            &spans.to_string_lossy(),
            "--scenario",
            "capacity",
        ]),
    )?;
    println!("{}", finished.report());
    finished.has_line("capacity: execute_tool task_list capacity, tool_error, no exit code")?;
    Ok(())
}

/// The port tests/fixtures/hybrid.yaml compiles in as its embeddings endpoint.
const STANDIN_PORT: u16 = 47311;

/// `embeddings_standin.py` on [`STANDIN_PORT`]; killed on drop.
struct StandIn {
    child: Child,
}

impl Drop for StandIn {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the embeddings stand-in; waits (bounded: it retries the bind for 60 s) until it listens.
fn start_standin() -> Result<StandIn> {
    let mut child = Command::new(clients::python()?)
        .arg(clients::scripts_dir().join("embeddings_standin.py"))
        .args(["--port", &STANDIN_PORT.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting embeddings_standin.py")?;
    let stderr = child.stderr.take().context("no stderr pipe")?;
    let (ready, seen) = mpsc::channel();
    thread::spawn(move || {
        let mut log = String::new();
        let mut ready = Some(ready);
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            log.push_str(&line);
            log.push('\n');
            if line.contains("listening on")
                && let Some(ready) = ready.take()
            {
                let _ = ready.send(Ok(()));
            }
        }
        if let Some(ready) = ready {
            let _ = ready.send(Err(log));
        }
    });
    let standin = StandIn { child };
    match seen.recv_timeout(Duration::from_secs(70)) {
        Ok(Ok(())) => Ok(standin),
        Ok(Err(log)) => bail!("embeddings_standin.py exited before listening:\n{log}"),
        Err(_) => bail!("embeddings_standin.py did not listen within 70 s"),
    }
}

/// A search over a hybrid index is Fisk AI's `retrieval` span (configured `hybrid`, the corpus
/// size, the tier that ran) holding one `embeddings <model>` span per request to the embeddings
/// server (model, purpose, inputs, server address and port, HTTP status, error class); when the
/// server fails (503) or answers too late, the search degrades to lexical with
/// `fisk.knowledge.degraded_reason` `embeddings` or `timeout`, and the metric
/// `fisk.knowledge.degraded_searches` reaches the receiver's metrics pipeline counted by reason.
#[test]
fn hybrid_searches_export_embeddings_spans_and_count_degraded_searches_at_a_real_otlp_receiver()
-> Result<()> {
    let (base, root, _outside) = super::builtins::Served::prepare()?;
    let binary = clients::hybrid_server()?;
    let _standin = start_standin()?;
    let mut index = Command::new(&binary);
    index
        .args(["knowledge", "index", "corpus"])
        .current_dir(&root)
        .env("NO_TELEMETRY", "1")
        .env_remove("RUST_LOG");
    run_bounded(
        &mut index,
        Duration::from_secs(60),
        "knowledge index corpus",
    )?
    .success()?
    .has_line(&format!(
        "Indexed 4 files into {}: 4 added, 0 updated, 0 unchanged, 0 removed; {CORPUS_CHUNKS} \
         chunks, {CORPUS_CHUNKS} embedded",
        root.join("knowledge").join("knowledge.db").display()
    ))?;
    let spans = base.path().join("spans.jsonl");
    let metrics = base.path().join("metrics.jsonl");
    let sink = start_sink(&spans, Some(&metrics))?;
    let env = [
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            std::ffi::OsStr::new(&sink.endpoint),
        ),
        ("OTEL_BSP_SCHEDULE_DELAY", std::ffi::OsStr::new("100")),
        // Metrics leave every 200 ms instead of every 60 s.
        ("OTEL_METRIC_EXPORT_INTERVAL", std::ffi::OsStr::new("200")),
    ];
    let app = apps::path(App::Demo)?;
    let server = Server::spawn_app(&binary, &root, &app, &env, &[])?;
    let finished = python(
        "telemetry_hybrid.py",
        &strings(&[
            "--url",
            &server.url,
            "--mode",
            "2026-07-28",
            "--spans",
            &spans.to_string_lossy(),
            "--metrics",
            &metrics.to_string_lossy(),
            "--control",
            &format!("http://127.0.0.1:{STANDIN_PORT}/control"),
            "--chunks",
            &CORPUS_CHUNKS.to_string(),
        ]),
    )?;
    println!("{}", finished.report());
    finished
        .has_line(
            "received: ['embeddings stand-in-embeddings', 'embeddings stand-in-embeddings', \
             'embeddings stand-in-embeddings', 'execute_tool knowledge_search', 'execute_tool \
             knowledge_search', 'execute_tool knowledge_search', 'retrieval', 'retrieval', \
             'retrieval']",
        )?
        .has_line("ok: retrieval hybrid, embeddings stand-in-embeddings")?
        .has_line("fail: retrieval provider, embeddings stand-in-embeddings")?
        .has_line("hang: retrieval timeout, embeddings stand-in-embeddings")?
        .has_line("metric: fisk.knowledge.degraded_searches embeddings=1 timeout=1")?;
    server.wait_for_line(&[&format!(
        "telemetry: exporting metrics over OTLP/HTTP to {}/v1/metrics",
        sink.endpoint
    )])?;
    Ok(())
}
