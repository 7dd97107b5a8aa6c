//! The stdio server's stdin (docs/runtime.md, "Listing tools"): a plain `tools/list` line is
//! answered from its bytes before rmcp parses it, however the client's writes cut it, and
//! every other line reaches rmcp whole and in order, however long.
//!
//! The tap logs each answer it gives at trace level, so the tests can tell its answers from
//! those that went through rmcp's parse; the bytes must be the same either way.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use fiskgen_tests::clients;
use serde_json::Value;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stdin-test","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const TAPPED: &str = "tools/list answered from stdin's line";

/// The demo server over stdio, past its handshake, with its trace log in `dir/stderr.log`.
struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    fn start(dir: &Path) -> Result<Server> {
        let stderr = fs::File::create(dir.join("stderr.log")).context("creating stderr.log")?;
        let mut child = Command::new(clients::demo_server()?)
            .arg("--stdio")
            .current_dir(dir)
            .env("RUST_LOG", "fiskgen_runtime::transport::list_stdio=trace")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .context("starting the demo server")?;
        let stdin = child.stdin.take().context("stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("stdout")?);
        let mut server = Server {
            child,
            stdin,
            stdout,
        };
        server.write(format!("{INITIALIZE}\n").as_bytes())?;
        let answer = server.read()?;
        ensure!(answer["id"] == 0, "{answer}");
        server.write(format!("{INITIALIZED}\n").as_bytes())?;
        Ok(server)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.stdin
            .write_all(bytes)
            .context("writing to the server")?;
        self.stdin.flush().context("flushing to the server")
    }

    /// The next message on stdout, as text and parsed.
    fn read_line(&mut self) -> Result<(String, Value)> {
        let mut line = String::new();
        ensure!(
            self.stdout.read_line(&mut line)? > 0,
            "the server closed stdout"
        );
        let message = serde_json::from_str(&line)
            .with_context(|| format!("not whole JSON ({} bytes)", line.len()))?;
        Ok((line, message))
    }

    fn read(&mut self) -> Result<Value> {
        Ok(self.read_line()?.1)
    }

    /// Closes stdin, waits for the server to end, and counts the tap's answers in its log.
    fn tapped(mut self, dir: &Path) -> Result<usize> {
        drop(self.stdin);
        let status = self.child.wait().context("waiting for the server")?;
        ensure!(status.success(), "the server ended with {status}");
        let log = fs::read_to_string(dir.join("stderr.log")).context("reading stderr.log")?;
        Ok(log.matches(TAPPED).count())
    }
}

/// An answer with its id taken out, to compare answers to different requests.
fn without_id(line: &str, id: &str) -> String {
    line.replacen(&format!(r#""id":{id},"#), "", 1)
}

#[test]
fn a_tools_list_cut_into_single_bytes_is_answered_from_the_tap_with_the_same_bytes() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mut server = Server::start(dir.path())?;
    server.write(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n")?;
    let (whole, first) = server.read_line()?;
    ensure!(
        first["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{whole}"
    );
    // The same request a byte at a time, each byte its own write, and a CRLF ending.
    for byte in b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{}}\r\n" {
        server.write(&[*byte])?;
        std::thread::sleep(Duration::from_micros(200));
    }
    let (cut, _) = server.read_line()?;
    assert_eq!(without_id(&cut, "2"), without_id(&whole, "1"));
    assert_eq!(
        server.tapped(dir.path())?,
        2,
        "both lists answered by the tap"
    );
    Ok(())
}

#[test]
fn lines_the_tap_does_not_answer_reach_rmcp_whole_and_in_order() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mut server = Server::start(dir.path())?;
    // A ping longer than the lines the tap judges (16 KiB), in one write with a list behind it.
    let pad = "x".repeat(40 * 1024);
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":10,"method":"ping","params":{{"_meta":{{"pad":"{pad}"}}}}}}"#
    );
    server.write(format!("{long}\n").as_bytes())?;
    // A list with a member JSON-RPC does not define: not the tap's, rmcp parses it (and the
    // answer is still the compiled-in page).
    server.write(b"{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/list\",\"x\":1}\n")?;
    // Not JSON: rmcp ignores it. A list with a cursor this server never issued: rmcp's error.
    server.write(b"{\"jsonrpc\":\n")?;
    server.write(
        b"{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/list\",\"params\":{\"cursor\":\"nope\"}}\n",
    )?;
    // A list the tap answers, after all of them.
    server.write(b"{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"tools/list\"}\n")?;
    let mut answers = Vec::new();
    for _ in 0..4 {
        answers.push(server.read_line()?);
    }
    let by_id = |id: u64| {
        answers
            .iter()
            .find(|(_, message)| message["id"] == id)
            .with_context(|| format!("no answer to request {id}"))
    };
    let (_, ping) = by_id(10)?;
    assert_eq!(ping["result"], serde_json::json!({}), "{ping}");
    let (parsed, _) = by_id(11)?;
    let (tapped, _) = by_id(13)?;
    assert_eq!(without_id(parsed, "11"), without_id(tapped, "13"));
    let (_, refused) = by_id(12)?;
    assert!(refused["error"]["code"].is_i64(), "{refused}");
    assert_eq!(
        server.tapped(dir.path())?,
        1,
        "only the plain list answered by the tap"
    );
    Ok(())
}
