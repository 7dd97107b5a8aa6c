//! Start to the first `tools/list` as the server alone takes it: a raw client that writes the
//! protocol's bytes itself and stops at the last byte of the answer, so the figure holds no
//! client-side parsing (rmcp's client, which the other figures use, parses the whole answer into
//! its types before it returns).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};

use crate::client::Transport;

const CLIENT_INFO: &str = r#"{"name":"fiskgen-bench-raw","version":"1"}"#;

/// Spawns `command` (a server over stdio), sends `initialize`, `notifications/initialized`
/// and `tools/list`, and returns the time from spawn to the end of the `tools/list` answer.
pub(crate) fn stdio(mut command: std::process::Command) -> Result<Duration> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let began = Instant::now();
    let mut child = Killed(command.spawn().context("starting the server")?);
    let mut stdin = child.0.stdin.take().context("no stdin")?;
    let mut stdout = BufReader::new(child.0.stdout.take().context("no stdout")?);
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{CLIENT_INFO}}}}}"#
    )?;
    stdin.flush()?;
    read_answer(&mut stdout, 1)?;
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )?;
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{}}}}"#
    )?;
    stdin.flush()?;
    read_answer(&mut stdout, 2)?;
    Ok(began.elapsed())
}

/// Reads lines until the answer to request `id`.
fn read_answer(stdout: &mut impl BufRead, id: u32) -> Result<()> {
    let wanted = format!(r#""id":{id}"#);
    let mut line = String::new();
    loop {
        line.clear();
        ensure!(
            stdout.read_line(&mut line)? > 0,
            "the server closed stdout before answering request {id}"
        );
        if line.contains(&wanted) {
            ensure!(line.contains(r#""result""#), "request {id} failed: {line}");
            return Ok(());
        }
    }
}

/// Lists the tools of the server listening on `address` (spawned at `began`) in
/// `transport`'s era, with one connection per request; returns the time from `began` to the
/// end of the `tools/list` answer.
pub(crate) fn http(address: SocketAddr, transport: Transport, began: Instant) -> Result<Duration> {
    match transport {
        Transport::Legacy => {
            let initialize = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{CLIENT_INFO}}}}}"#
            );
            let (head, _) = post(address, &[], &initialize)?;
            let session = header(&head, "mcp-session-id")
                .context("initialize answered without an Mcp-Session-Id")?;
            let headers = [
                ("Mcp-Session-Id", session.as_str()),
                ("MCP-Protocol-Version", "2025-11-25"),
            ];
            post(
                address,
                &headers,
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            )?;
            let (_, body) = post(
                address,
                &headers,
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
            )?;
            ensure!(
                body.contains(r#""tools""#),
                "tools/list failed: {body:.200}"
            );
        }
        Transport::Modern => {
            let list = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{CLIENT_INFO}}}}}}}"#
            );
            let headers = [
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/list"),
            ];
            let (_, body) = post(address, &headers, &list)?;
            ensure!(
                body.contains(r#""tools""#),
                "tools/list failed: {body:.200}"
            );
        }
        Transport::Stdio => bail!("stdio is not an HTTP transport"),
    }
    Ok(began.elapsed())
}

/// One POST to `/mcp` on a connection of its own (closed by the server after the answer):
/// the response's head and body, as text.
fn post(address: SocketAddr, headers: &[(&str, &str)], body: &str) -> Result<(String, String)> {
    let mut stream = TcpStream::connect(address)?;
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes())?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    let text = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = text
        .split_once("\r\n\r\n")
        .context("an HTTP answer without a head")?;
    ensure!(
        head.starts_with("HTTP/1.1 2"),
        "the server answered {}",
        head.lines().next().unwrap_or_default()
    );
    Ok((head.to_string(), body.to_string()))
}

/// A header's value in a response head.
fn header(head: &str, name: &str) -> Option<String> {
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim()
            .eq_ignore_ascii_case(name)
            .then(|| value.trim().to_string())
    })
}

/// A child that is killed when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
