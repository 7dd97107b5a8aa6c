//! The floor of a server's CPU per `tools/list` over HTTP: a bare HTTP/1.1 writer that
//! answers every POST with the same bytes, precomputed. It does nothing a server could do
//! less of (a blocking thread per connection, no parsing beyond the head and `Content-Length`,
//! one write of the whole response), so what it costs per answer is the kernel's: copying the answer into
//! the socket, loopback TCP, and waking the client and being woken by it. It runs as a process
//! of its own, as the servers do (this binary again, `fiskgen-bench --serve-floor`): in the
//! benchmark's own process the kernel's share of the ping-pong is charged differently.
//! Measured with the raw client ([`crate::raw::ListSession`]) beside a server's figure, it
//! shows how much of that figure the server's own layers add.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};

/// The hidden flag that makes `fiskgen-bench` the floor's process ([`serve_floor`]).
pub const SERVE_FLAG: &str = "--serve-floor";

/// A connection idle this long is closed (and its thread ends).
const IDLE: Duration = Duration::from_secs(5);

/// The request head this writer reads at most.
const MAX_HEAD: usize = 64 * 1024;

/// The answer the floor's process takes at most.
const MAX_BODY: u64 = 256 * 1024 * 1024;

/// The writer: a child process listening on a loopback port, ended when dropped.
pub(crate) struct Floor {
    address: SocketAddr,
    child: Child,
    /// Held open: the process ends when it closes.
    stdin: Option<ChildStdin>,
}

impl Floor {
    /// Starts the floor's process (`program`, a `fiskgen-bench`, or this program, with
    /// [`SERVE_FLAG`]), serving `body` as `application/json`, gzipped (`Content-Encoding:
    /// gzip`) with `gzip`.
    pub(crate) fn serve(program: Option<&Path>, body: &[u8], gzip: bool) -> Result<Floor> {
        let program = match program {
            Some(program) => program.to_path_buf(),
            None => std::env::current_exe().context("finding this program to run the floor")?,
        };
        let mut child = Command::new(&program)
            .arg(SERVE_FLAG)
            .arg(if gzip { "gzip" } else { "identity" })
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("starting the floor ({} {SERVE_FLAG})", program.display()))?;
        let started = (|| {
            let mut stdin = child.stdin.take().context("no stdin")?;
            stdin.write_all(&(body.len() as u64).to_le_bytes())?;
            stdin.write_all(body)?;
            stdin.flush()?;
            let mut line = String::new();
            BufReader::new(child.stdout.take().context("no stdout")?).read_line(&mut line)?;
            let address: SocketAddr = line.trim().parse().with_context(|| {
                format!("the floor printed {line:?}, not the address it listens on")
            })?;
            Ok::<_, anyhow::Error>((address, stdin))
        })();
        match started {
            Ok((address, stdin)) => Ok(Floor {
                address,
                child,
                stdin: Some(stdin),
            }),
            Err(error) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(error)
            }
        }
    }

    /// The URL to post to.
    pub(crate) fn url(&self) -> String {
        format!("http://{}/mcp", self.address)
    }

    /// The process's CPU time so far (user + system), ms.
    pub(crate) fn cpu_ms(&self) -> Option<f64> {
        crate::load::cpu_ms(Some(self.child.id()))
    }
}

impl Drop for Floor {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The floor's process: `fiskgen-bench --serve-floor identity|gzip`. Reads the answer from
/// stdin (its length as 8 bytes little-endian, then the bytes), prints the address it listens
/// on, and serves until stdin closes.
pub fn serve_floor(encoding: Option<&str>) -> ExitCode {
    match serve_floor_inner(encoding) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("fiskgen-bench {SERVE_FLAG}: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn serve_floor_inner(encoding: Option<&str>) -> Result<()> {
    let gzip = match encoding {
        Some("identity") => false,
        Some("gzip") => true,
        other => bail!("expected `identity` or `gzip` after {SERVE_FLAG}, got {other:?}"),
    };
    let mut stdin = io::stdin();
    let mut length = [0u8; 8];
    stdin
        .read_exact(&mut length)
        .context("reading the answer's length")?;
    let length = u64::from_le_bytes(length);
    ensure!(length <= MAX_BODY, "an answer of {length} bytes is too big");
    let mut body = Vec::new();
    (&mut stdin)
        .take(length)
        .read_to_end(&mut body)
        .context("reading the answer")?;
    ensure!(body.len() as u64 == length, "the answer ended early");
    let response = response(&body, gzip)?;
    let listener = TcpListener::bind(("127.0.0.1", 0)).context("binding the floor's port")?;
    let mut stdout = io::stdout();
    writeln!(stdout, "{}", listener.local_addr()?)?;
    stdout.flush()?;
    // Ends the process when the benchmark closes stdin (or dies).
    std::thread::spawn(move || {
        let _ = io::copy(&mut stdin, &mut io::sink());
        std::process::exit(0);
    });
    serve(listener, response.leak());
    Ok(())
}

/// Answers every connection to `listener` with `response`, each on a thread of its own: an
/// HTTP client may open a second connection before it has put the first back in its pool, and
/// a single thread would leave that one waiting for the first to idle out (the benchmark read
/// 0 ms per answer when it did).
fn serve(listener: TcpListener, response: &'static [u8]) {
    for stream in listener.incoming().flatten() {
        std::thread::spawn(move || answer(stream, response));
    }
}

/// The whole HTTP response to every request: head and `body` (gzipped with `gzip`).
fn response(body: &[u8], gzip: bool) -> Result<Vec<u8>> {
    let (body, encoding) = if gzip {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(body)?;
        (encoder.finish()?, "content-encoding: gzip\r\n")
    } else {
        (body.to_vec(), "")
    };
    let mut response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n{encoding}content-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    response.extend_from_slice(&body);
    Ok(response)
}

/// Answers each request on `stream` with `response` until the client closes it (or leaves it
/// idle for [`IDLE`]).
fn answer(mut stream: TcpStream, response: &[u8]) -> io::Result<()> {
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(IDLE))?;
    let mut buffer: Vec<u8> = Vec::with_capacity(8192);
    let mut chunk = [0u8; 8192];
    loop {
        while let Some(length) = request_length(&buffer)? {
            if buffer.len() < length {
                break;
            }
            buffer.drain(..length);
            stream.write_all(response)?;
        }
        let read = stream.read(&mut chunk)?;
        if read == 0 {
            return Ok(());
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
}

/// The length of the request at the start of `buffer` (head and body), once its head is
/// complete.
fn request_length(buffer: &[u8]) -> io::Result<Option<usize>> {
    let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") else {
        if buffer.len() > MAX_HEAD {
            return Err(io::Error::other("a request head over 64 KiB"));
        }
        return Ok(None);
    };
    let head = String::from_utf8_lossy(&buffer[..end]);
    let body = head
        .lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .map(|(_, value)| value.trim().parse::<usize>())
        .transpose()
        .map_err(|_| io::Error::other("a bad Content-Length"))?
        .unwrap_or(0);
    Ok(Some(end + 4 + body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_its_head_and_content_length_bytes() -> io::Result<()> {
        let request = b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcPOST";
        assert_eq!(request_length(request)?, Some(request.len() - 4));
        assert_eq!(request_length(b"POST /mcp HTTP/1.1\r\nHost")?, None);
        assert_eq!(request_length(b"GET / HTTP/1.1\r\n\r\n")?, Some(18));
        assert!(request_length(b"POST / HTTP/1.1\r\ncontent-length: x\r\n\r\n").is_err());
        Ok(())
    }

    #[test]
    fn every_request_gets_the_same_answer() -> Result<()> {
        let body = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        let response = response(body, false)?;
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let address = listener.local_addr()?;
        let server = std::thread::spawn(move || -> io::Result<()> {
            let (stream, _) = listener.accept()?;
            answer(stream, &response)
        });
        let mut stream = TcpStream::connect(address)?;
        let request = b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}";
        // Two requests in one write: both are answered, in order.
        stream.write_all(&[&request[..], &request[..]].concat())?;
        let mut answers = Vec::new();
        let mut chunk = [0u8; 1024];
        while answers.windows(6).filter(|w| w == br#""id":1"#).count() < 2 {
            let read = stream.read(&mut chunk)?;
            anyhow::ensure!(
                read > 0,
                "closed early: {:?}",
                String::from_utf8_lossy(&answers)
            );
            answers.extend_from_slice(&chunk[..read]);
        }
        let text = String::from_utf8_lossy(&answers);
        assert_eq!(text.matches("HTTP/1.1 200 OK\r\n").count(), 2, "{text}");
        let length = format!("content-length: {}\r\n", body.len());
        assert!(text.contains(&length), "{text}");
        drop(stream);
        server
            .join()
            .map_err(|_| anyhow::anyhow!("the writer panicked"))??;
        Ok(())
    }

    #[test]
    fn a_second_connection_is_answered_while_the_first_stays_open() -> Result<()> {
        let body = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        let response: &'static [u8] = response(body, false)?.leak();
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let address = listener.local_addr()?;
        std::thread::spawn(move || serve(listener, response));
        let request = b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}";
        let mut connections = Vec::new();
        for _ in 0..2 {
            let mut stream = TcpStream::connect(address)?;
            // Far below the writer's idle timeout: a second connection left waiting fails.
            stream.set_read_timeout(Some(IDLE / 5))?;
            stream.write_all(request)?;
            let mut answer = vec![0u8; response.len()];
            stream.read_exact(&mut answer)?;
            assert_eq!(answer, response);
            // Kept open, as a client's pool keeps it.
            connections.push(stream);
        }
        Ok(())
    }

    #[test]
    fn a_gzip_floor_sends_the_answer_gzipped() -> Result<()> {
        let body = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#;
        let response = response(body, true)?;
        let end = response
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .context("no head")?;
        let head = String::from_utf8_lossy(&response[..end]);
        assert!(head.contains("content-encoding: gzip"), "{head}");
        let mut decoded = Vec::new();
        flate2::read::GzDecoder::new(&response[end + 4..]).read_to_end(&mut decoded)?;
        assert_eq!(decoded, body);
        let length = format!("content-length: {}", response.len() - end - 4);
        assert!(head.contains(&length), "{head}");
        Ok(())
    }
}
