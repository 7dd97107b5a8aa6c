//! The config's `telemetry` block (docs/telemetry.md): `tasks-builtins-mcp`
//! (tests/fixtures/builtins.yaml enables it) exports a span per call over OTLP/HTTP to a real
//! receiver, the OpenTelemetry Collector's own `otlpreceiver` (`tests/apps/otlpsink`, built
//! from the Go module proxy and cached like the other Go builds), while the official Python SDK
//! makes the calls (`tests/clients/python/telemetry.py`) and reads what the receiver accepted.

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

use super::builtins::build_index;
use super::clients::{Server, python, strings};
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

/// Starts the receiver, its OTLP/JSON lines going to `spans`; waits (bounded) until it listens.
fn start_sink(spans: &Path) -> Result<Sink> {
    let binary = apps::path(App::OtlpSink)?;
    let address = format!("127.0.0.1:{}", free_port()?);
    let out = File::create(spans).with_context(|| format!("creating {}", spans.display()))?;
    let mut child = Command::new(&binary)
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
    let sink = start_sink(&spans)?;
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
        .has_line("refused: execute_tool knowledge_enumerate error, tool_error")?
        .has_line("declined: execute_tool read_file unanswered, then confirm_denied")?
        .has_line("unknown: execute_tool unknown_tool, fisk.tool.requested_name no_such_tool")?;
    server.wait_for_line(&[&format!(
        "telemetry: exporting spans over OTLP/HTTP to {}/v1/traces \
         (OTEL_EXPORTER_OTLP_ENDPOINT) as service \"tasks-builtins\", sample ratio 1",
        sink.endpoint
    )])?;
    Ok(())
}
