//! The stdio server's stdout: every answer whole and in order when the client reads late, and
//! when stdout is a file. The fixture server's `tools/list` answer (66 tools, 67 KiB) is more
//! than a pipe's default 64 KiB.

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};

use anyhow::{Context, Result, bail, ensure};
use fiskgen_tests::clients;
use serde_json::Value;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stdout-test","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// Starts `binary --stdio` in `dir` with `stdout` and debug logs in `dir/stderr.log`.
fn spawn(binary: &Path, dir: &Path, stdout: Stdio) -> Result<Child> {
    let stderr = fs::File::create(dir.join("stderr.log")).context("creating stderr.log")?;
    Command::new(binary)
        .arg("--stdio")
        .current_dir(dir)
        .env("RUST_LOG", "fiskgen_runtime=debug")
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .with_context(|| format!("starting {}", binary.display()))
}

fn send(stdin: &mut ChildStdin, line: &str) -> Result<()> {
    writeln!(stdin, "{line}").context("writing to the server")?;
    stdin.flush().context("flushing to the server")
}

fn list(id: usize) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#)
}

/// The tools of one `tools/list` answer with `id`, checked to be whole JSON.
fn tools_of(line: &str, id: usize) -> Result<Value> {
    let message: Value = serde_json::from_str(line)
        .with_context(|| format!("answer {id} is not whole JSON ({} bytes)", line.len()))?;
    ensure!(
        message["id"] == id,
        "expected answer {id}, got {}",
        message["id"]
    );
    Ok(message["result"]["tools"].clone())
}

/// Forty answers of 66 KiB (2.6 MiB, more than the pipe holds) asked for before the client
/// reads any: the server waits for room, and every answer arrives whole, in order and the
/// same as the first, with a ping's answer after them.
#[test]
fn answers_arrive_whole_and_in_order_when_the_client_reads_late() -> Result<()> {
    const ANSWERS: usize = 40;
    let dir = tempfile::tempdir().context("creating the server's directory")?;
    let mut child = spawn(&clients::fixture_server()?, dir.path(), Stdio::piped())?;
    let mut stdin = child.stdin.take().context("stdin")?;
    let mut reader = BufReader::new(child.stdout.take().context("stdout")?);
    send(&mut stdin, INITIALIZE)?;
    let mut line = String::new();
    reader.read_line(&mut line)?;
    send(&mut stdin, INITIALIZED)?;
    for id in 1..=ANSWERS {
        send(&mut stdin, &list(id))?;
    }
    send(
        &mut stdin,
        r#"{"jsonrpc":"2.0","id":"last","method":"ping"}"#,
    )?;
    // Give the server time to fill the pipe and wait on it.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let mut first = None;
    for id in 1..=ANSWERS {
        line.clear();
        reader.read_line(&mut line)?;
        let tools = tools_of(&line, id)?;
        ensure!(
            tools.as_array().map(Vec::len) == Some(66),
            "answer {id}: {} tools",
            tools.as_array().map_or(0, Vec::len)
        );
        match &first {
            None => first = Some(tools),
            Some(first) => ensure!(*first == tools, "answer {id} differs from the first"),
        }
    }
    line.clear();
    reader.read_line(&mut line)?;
    ensure!(line.contains(r#""id":"last""#), "the ping's answer: {line}");
    drop(stdin);
    let status = child.wait()?;
    ensure!(status.success(), "the server ended with {status}");
    Ok(())
}

/// Stdout redirected to a file: the answers are written, whole.
#[test]
fn a_stdout_that_is_a_file_gets_every_answer_written_whole() -> Result<()> {
    let dir = tempfile::tempdir().context("creating the server's directory")?;
    let out = dir.path().join("stdout.jsonl");
    let file = fs::File::create(&out).context("creating stdout.jsonl")?;
    let mut child = spawn(&clients::fixture_server()?, dir.path(), Stdio::from(file))?;
    let mut stdin = child.stdin.take().context("stdin")?;
    send(&mut stdin, INITIALIZE)?;
    // The handshake's answer first, so the notification is not taken for an early one.
    let mut waited = 0;
    while fs::metadata(&out)?.len() == 0 {
        if waited > 200 {
            bail!("no answer to initialize in 10 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        waited += 1;
    }
    send(&mut stdin, INITIALIZED)?;
    send(&mut stdin, &list(1))?;
    send(&mut stdin, &list(2))?;
    drop(stdin);
    let status = child.wait()?;
    ensure!(status.success(), "the server ended with {status}");
    let mut text = String::new();
    fs::File::open(&out)?.read_to_string(&mut text)?;
    let lines: Vec<&str> = text.lines().collect();
    ensure!(lines.len() == 3, "{} lines in stdout.jsonl", lines.len());
    let one = tools_of(lines[1], 1)?;
    ensure!(one.as_array().map(Vec::len) == Some(66), "answer 1: {one}");
    ensure!(one == tools_of(lines[2], 2)?, "the two answers differ");
    Ok(())
}
