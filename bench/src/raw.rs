//! The raw client: it writes the protocol's bytes itself and reads each answer as bytes, so its
//! figures hold no client-side parsing (rmcp's client, which the other figures use, parses the
//! whole 254 KiB natscli answer into its types before it returns). Two measurements use it:
//!
//! - start to the first `tools/list`: [`stdio`] and [`http`] stop at the answer's last byte;
//! - the server's CPU per `tools/list` with requests back to back ([`ListSession`]), the
//!   server's own cost, without the cold caches a slow client leaves it between requests.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};

use crate::client::Transport;
use crate::load::{Budget, Cpu};

const CLIENT_INFO: &str = r#"{"name":"fiskgen-bench-raw","version":"1"}"#;

/// The legacy `initialize` request, id 1.
fn initialize() -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{CLIENT_INFO}}}}}"#
    )
}

const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A `tools/list` request in `transport`'s era with the JSON-RPC id `id` (already JSON).
fn list_request(transport: Transport, id: &str) -> String {
    match transport {
        Transport::Modern => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{CLIENT_INFO}}}}}}}"#
        ),
        Transport::Legacy | Transport::Stdio => {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{}}}}"#)
        }
    }
}

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
    handshake(&mut stdin, &mut stdout)?;
    writeln!(stdin, "{}", list_request(Transport::Stdio, "2"))?;
    stdin.flush()?;
    read_answer(&mut stdout, 2)?;
    Ok(began.elapsed())
}

/// The legacy handshake over stdio: `initialize`, its answer, `notifications/initialized`.
fn handshake(stdin: &mut impl Write, stdout: &mut impl BufRead) -> Result<()> {
    writeln!(stdin, "{}", initialize())?;
    stdin.flush()?;
    read_answer(stdout, 1)?;
    writeln!(stdin, "{INITIALIZED}")?;
    Ok(())
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
            let (head, _) = post(address, &[], &initialize())?;
            let session = header(&head, "mcp-session-id")
                .context("initialize answered without an Mcp-Session-Id")?;
            let headers = [
                ("Mcp-Session-Id", session.as_str()),
                ("MCP-Protocol-Version", "2025-11-25"),
            ];
            post(address, &headers, INITIALIZED)?;
            let (_, body) = post(address, &headers, &list_request(transport, "2"))?;
            ensure!(
                body.contains(r#""tools""#),
                "tools/list failed: {body:.200}"
            );
        }
        Transport::Modern => {
            let list = list_request(transport, "1");
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

/// A session of the raw client that lists tools back to back: over stdio on a server it
/// spawned, over HTTP on a server at `url` (one kept-alive connection).
pub(crate) enum ListSession {
    Stdio {
        child: Killed,
        stdin: ChildStdin,
        stdout: BufReader<ChildStdout>,
        line: Vec<u8>,
        /// The length of the last answer's line.
        wire: usize,
    },
    Http {
        client: reqwest::Client,
        url: String,
        headers: reqwest::header::HeaderMap,
        transport: Transport,
        /// The length on the wire of the last answer's body (a server-sent event's framing
        /// included).
        wire: usize,
    },
}

impl ListSession {
    /// Spawns `command` (a server over stdio) and completes the handshake.
    pub(crate) fn stdio(mut command: std::process::Command) -> Result<ListSession> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = Killed(command.spawn().context("starting the server")?);
        let mut stdin = child.0.stdin.take().context("no stdin")?;
        let mut stdout = BufReader::new(child.0.stdout.take().context("no stdout")?);
        handshake(&mut stdin, &mut stdout)?;
        Ok(ListSession::Stdio {
            child,
            stdin,
            stdout,
            line: Vec::new(),
            wire: 0,
        })
    }

    /// The server's pid, when this session spawned it.
    pub(crate) fn pid(&self) -> Option<u32> {
        match self {
            ListSession::Stdio { child, .. } => Some(child.0.id()),
            ListSession::Http { .. } => None,
        }
    }

    /// Connects to the server at `url` in `transport`'s era (a legacy session: `initialize`
    /// and `notifications/initialized`).
    pub(crate) async fn http(url: &str, transport: Transport) -> Result<ListSession> {
        use reqwest::header::{HeaderMap, HeaderValue};
        let client = crate::client::pooled_http_client()?;
        let mut headers = HeaderMap::new();
        headers.insert(
            "accept",
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        headers.insert("content-type", HeaderValue::from_static("application/json"));
        match transport {
            Transport::Legacy => {
                let answer = client
                    .post(url)
                    .headers(headers.clone())
                    .body(initialize())
                    .send()
                    .await
                    .context("initialize")?
                    .error_for_status()
                    .context("initialize")?;
                if let Some(session) = answer.headers().get("mcp-session-id").cloned() {
                    headers.insert("mcp-session-id", session);
                }
                answer
                    .bytes()
                    .await
                    .context("reading the initialize answer")?;
                headers.insert(
                    "mcp-protocol-version",
                    HeaderValue::from_static("2025-11-25"),
                );
                client
                    .post(url)
                    .headers(headers.clone())
                    .body(INITIALIZED)
                    .send()
                    .await
                    .context("notifications/initialized")?
                    .error_for_status()
                    .context("notifications/initialized")?
                    .bytes()
                    .await?;
            }
            Transport::Modern => {
                headers.insert(
                    "mcp-protocol-version",
                    HeaderValue::from_static("2026-07-28"),
                );
                headers.insert("mcp-method", HeaderValue::from_static("tools/list"));
            }
            Transport::Stdio => bail!("stdio is not an HTTP transport"),
        }
        Ok(ListSession::Http {
            client,
            url: url.to_string(),
            headers,
            transport,
            wire: 0,
        })
    }

    /// The length on the wire of the last answer: its line over stdio, its body (with a
    /// server-sent event's framing) over HTTP.
    pub(crate) fn wire_len(&self) -> usize {
        match self {
            ListSession::Stdio { wire, .. } | ListSession::Http { wire, .. } => *wire,
        }
    }

    /// One `tools/list` with the id `id` (JSON): the answer's bytes, as the server sent them.
    async fn list(&mut self, id: &str) -> Result<Vec<u8>> {
        match self {
            ListSession::Stdio {
                stdin,
                stdout,
                line,
                wire,
                ..
            } => {
                writeln!(stdin, "{}", list_request(Transport::Stdio, id))?;
                stdin.flush()?;
                line.clear();
                ensure!(
                    stdout.read_until(b'\n', line)? > 0,
                    "the server closed stdout before answering"
                );
                *wire = line.len();
                Ok(std::mem::take(line))
            }
            ListSession::Http {
                client,
                url,
                headers,
                transport,
                wire,
            } => {
                let answer = client
                    .post(url.as_str())
                    .headers(headers.clone())
                    .body(list_request(*transport, id))
                    .send()
                    .await
                    .context("tools/list")?
                    .error_for_status()
                    .context("tools/list")?;
                let bytes = answer.bytes().await.context("reading tools/list")?;
                *wire = bytes.len();
                Ok(bytes.to_vec())
            }
        }
    }

    /// The server's CPU per `tools/list`, ms, user and system apart: `warm` lists, a `settle` pause (the server's
    /// background check of the application ends in it), then lists back to back until
    /// `budget` is spent. `cpu` reads the server's CPU time so far, ms. The first answer must be
    /// a list of tools, and every message as long as its: the ids are fixed-width strings, so a
    /// server that answers one of them differently (an error, a partial answer) fails the
    /// measurement.
    pub(crate) async fn cpu_per_list(
        &mut self,
        cpu: impl Fn() -> Option<Cpu>,
        warm: usize,
        settle: Duration,
        budget: Budget,
    ) -> Result<Cpu> {
        let first = self.list(&request_id(0)).await?;
        let length = message_len(&first);
        let tools = first_json(&first)
            .and_then(|answer| answer.pointer("/result/tools")?.as_array().map(Vec::len))
            .with_context(|| {
                format!(
                    "the first tools/list answer is not a list of tools: {:.200}",
                    String::from_utf8_lossy(&first)
                )
            })?;
        ensure!(tools > 0, "the server lists no tools");
        for i in 1..warm {
            self.list(&request_id(i)).await?;
        }
        tokio::time::sleep(settle).await;
        let before = cpu().context("reading the server's CPU time")?;
        let began = Instant::now();
        let mut count = 0usize;
        loop {
            let more = match budget {
                Budget::Count(n) => count < n,
                Budget::Time(d) => began.elapsed() < d,
            };
            if !more {
                break;
            }
            let answer = self.list(&request_id(warm + count)).await?;
            ensure!(
                message_len(&answer) == length,
                "tools/list answer {} is a message of {} bytes, the first's was {length}: {:.200}",
                count + 1,
                message_len(&answer),
                String::from_utf8_lossy(&answer)
            );
            count += 1;
        }
        let after = cpu().context("reading the server's CPU time")?;
        ensure!(count > 0, "no tools/list in the budget");
        Ok(before.per(after, count))
    }
}

/// A JSON-RPC id of fixed width (so answers to different requests have the same length).
fn request_id(n: usize) -> String {
    format!(r#""raw-{n:09}""#)
}

/// The length of the JSON-RPC message in an answer, from its first `{` to its last `}`: the
/// whole of a JSON answer, the `data` of a server-sent event (whose framing, an event id
/// among it, may grow from one answer to the next). Found without parsing the answer.
fn message_len(bytes: &[u8]) -> usize {
    let start = bytes.iter().position(|b| *b == b'{');
    let end = bytes.iter().rposition(|b| *b == b'}');
    match (start, end) {
        (Some(start), Some(end)) if end >= start => end + 1 - start,
        _ => 0,
    }
}

/// The first JSON value in `bytes`: the message of a JSON answer or of a server-sent event.
fn first_json(bytes: &[u8]) -> Option<serde_json::Value> {
    let start = bytes.iter().position(|b| *b == b'{')?;
    let mut values =
        serde_json::Deserializer::from_slice(bytes.get(start..)?).into_iter::<serde_json::Value>();
    values.next()?.ok()
}

/// A child that is killed when dropped.
pub(crate) struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::message_len;

    #[test]
    fn a_message_is_measured_without_its_event_framing() {
        let json = br#"{"jsonrpc":"2.0","id":"raw-000000001","result":{}}"#;
        let event = b"id: 12\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"raw-000000001\",\"result\":{}}\n\n";
        assert_eq!(message_len(json), json.len());
        assert_eq!(message_len(event), json.len());
        assert_eq!(message_len(b"event: ping\n\n"), 0);
    }
}
