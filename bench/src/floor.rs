//! The floors of a server's CPU per `tools/list`: bare writers that answer every request with
//! the same bytes, precomputed, and do nothing a server could do less of, so what they cost per
//! answer is the kernel's. They run as processes of their own, as the servers do (this binary
//! again, `fiskgen-bench --serve-floor identity|gzip|stdio`): in the benchmark's own process
//! the kernel's share of the ping-pong is charged differently. Measured with the raw client
//! ([`crate::raw::ListSession`]) beside a server's figure, each shows how much of that figure
//! the server's own layers add.
//!
//! - Over HTTP ([`Floor`]): a blocking thread per connection, no parsing beyond the head and
//!   `Content-Length`, one write of the whole response: copying the answer into the socket,
//!   loopback TCP, and waking the client and being woken by it.
//! - Over stdio ([`stdio_command`]): one blocking loop that reads each request line and puts the
//!   answer line into stdout the cheapest way a server can (the way ours does: the pipe grown
//!   to 1 MiB and the answer spliced into it from memory, `vmsplice`, not copied), so what it
//!   costs is reading the request and the wake-ups of the two processes.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};

/// The hidden flag that makes `fiskgen-bench` a floor's process ([`serve_floor`]).
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
        let program = floor_program(program)?;
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
            stdin.write_all(&prelude(body))?;
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

    /// The process's CPU time so far, ms.
    pub(crate) fn cpu(&self) -> Option<crate::load::Cpu> {
        crate::load::cpu_of(self.child.id())
    }
}

impl Drop for Floor {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A floor's process: `fiskgen-bench --serve-floor identity|gzip|stdio`. Reads the answer
/// from stdin (its length as 8 bytes little-endian, then the answer). Over HTTP (`identity`,
/// `gzip`) it prints the address it listens on and serves until stdin closes; over stdio it
/// answers the request lines that follow on stdin until it closes.
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
        Some("stdio") => {
            let mut stdin = io::stdin().lock();
            let answer = read_prelude(&mut stdin)?;
            return stdio::serve(stdin, answer.leak(), io::stdout());
        }
        other => bail!("expected `identity`, `gzip` or `stdio` after {SERVE_FLAG}, got {other:?}"),
    };
    let mut stdin = io::stdin();
    let body = read_prelude(&mut stdin)?;
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

/// What a floor's process reads first on stdin: the answer's length as 8 bytes little-endian,
/// then the answer.
pub(crate) fn prelude(answer: &[u8]) -> Vec<u8> {
    let mut prelude = (answer.len() as u64).to_le_bytes().to_vec();
    prelude.extend_from_slice(answer);
    prelude
}

/// Reads a [`prelude`] from `input`: the answer.
fn read_prelude(input: &mut impl Read) -> Result<Vec<u8>> {
    let mut length = [0u8; 8];
    input
        .read_exact(&mut length)
        .context("reading the answer's length")?;
    let length = u64::from_le_bytes(length);
    ensure!(length <= MAX_BODY, "an answer of {length} bytes is too big");
    let mut body = Vec::new();
    input
        .take(length)
        .read_to_end(&mut body)
        .context("reading the answer")?;
    ensure!(body.len() as u64 == length, "the answer ended early");
    Ok(body)
}

/// The command that starts the stdio floor's process (`program`, a `fiskgen-bench`, or this
/// program): write it a [`prelude`], then request lines.
pub(crate) fn stdio_command(program: Option<&Path>) -> Result<Command> {
    let mut command = Command::new(floor_program(program)?);
    command.arg(SERVE_FLAG).arg("stdio");
    Ok(command)
}

/// The program a floor runs as: `program` (a `fiskgen-bench`), or this program.
fn floor_program(program: Option<&Path>) -> Result<PathBuf> {
    match program {
        Some(program) => Ok(program.to_path_buf()),
        None => std::env::current_exe().context("finding this program to run the floor"),
    }
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

mod stdio {
    //! The stdio floor's loop.

    use std::io::{self, BufRead, Write};
    use std::os::fd::AsFd;

    use anyhow::{Context, Result};

    /// The pipe size asked for, as our stdio server asks (the system's cap may be lower).
    const PIPE_BYTES: usize = 1 << 20;

    /// Answers each request line of `input` (after the prelude) on `output`: `initialize` with
    /// an empty result under its id, a notification (no `"id"`) with nothing, anything else with
    /// `answer` (a whole line, its newline included).
    pub(super) fn serve(
        mut input: impl BufRead,
        answer: &'static [u8],
        output: impl AsFd + Write,
    ) -> Result<()> {
        let mut output = Spliced::new(output);
        let mut line = Vec::new();
        loop {
            line.clear();
            if input
                .read_until(b'\n', &mut line)
                .context("reading a request")?
                == 0
            {
                return Ok(());
            }
            if !contains(&line, br#""id""#) {
                continue;
            }
            if contains(&line, br#""method":"initialize""#) {
                let request: serde_json::Value =
                    serde_json::from_slice(&line).context("reading the initialize request")?;
                let id = request.get("id").cloned().unwrap_or_default();
                let mut result = serde_json::to_vec(
                    &serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {}}),
                )?;
                result.push(b'\n');
                output.write(&result)?;
                continue;
            }
            output.put(answer)?;
        }
    }

    fn contains(haystack: &[u8], needle: &[u8]) -> bool {
        haystack.windows(needle.len()).any(|w| w == needle)
    }

    /// Stdout, with answers spliced into it when it is a pipe that takes them.
    struct Spliced<W> {
        out: W,
        splice: bool,
    }

    impl<W: AsFd + Write> Spliced<W> {
        /// Grows the pipe `out` may be (as our stdio server does), and splices into it.
        fn new(out: W) -> Self {
            #[cfg(target_os = "linux")]
            {
                use nix::fcntl::{FcntlArg, fcntl};
                let cap = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
                    .ok()
                    .and_then(|text| text.trim().parse::<usize>().ok())
                    .unwrap_or(PIPE_BYTES);
                let size = i32::try_from(PIPE_BYTES.min(cap)).unwrap_or(i32::MAX);
                let _ = fcntl(out.as_fd(), FcntlArg::F_SETPIPE_SZ(size));
            }
            Spliced {
                out,
                splice: cfg!(target_os = "linux"),
            }
        }

        /// Writes `bytes` (not spliced: they do not outlive the call).
        fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
            self.out.write_all(bytes)?;
            self.out.flush()
        }

        /// Puts the static `bytes`: spliced while the pipe takes them, else written.
        fn put(&mut self, bytes: &'static [u8]) -> io::Result<()> {
            #[cfg(target_os = "linux")]
            if self.splice {
                use nix::fcntl::{SpliceFFlags, vmsplice};
                use std::io::IoSlice;
                let mut at = 0;
                while let Some(rest) = bytes.get(at..).filter(|rest| !rest.is_empty()) {
                    match vmsplice(
                        self.out.as_fd(),
                        &[IoSlice::new(rest)],
                        SpliceFFlags::empty(),
                    ) {
                        Ok(n) => at += n,
                        Err(nix::errno::Errno::EINTR) => {}
                        // Not a pipe: written from here on.
                        Err(_) if at == 0 => {
                            self.splice = false;
                            break;
                        }
                        Err(errno) => return Err(errno.into()),
                    }
                }
                if self.splice {
                    return Ok(());
                }
            }
            self.write(bytes)
        }
    }
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
    fn the_stdio_floor_answers_each_request_line_with_the_answer_spliced() -> Result<()> {
        let answer: &'static [u8] =
            b"{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{\"tools\":[]}}\n";
        let input = [
            r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":"b","method":"tools/list"}"#,
        ]
        .join("\n")
            + "\n";
        let mut prelude_and_input = prelude(answer);
        prelude_and_input.extend_from_slice(input.as_bytes());
        let mut reader = io::Cursor::new(prelude_and_input);
        let read = read_prelude(&mut reader)?;
        assert_eq!(read, answer);
        // A real pipe, so the answers take the spliced path.
        let (mut from, to) = io::pipe()?;
        let server = std::thread::spawn(move || stdio::serve(reader, answer, to));
        let mut out = Vec::new();
        from.read_to_end(&mut out)?;
        server
            .join()
            .map_err(|_| anyhow::anyhow!("the floor panicked"))??;
        let expected = [
            &br#"{"id":7,"jsonrpc":"2.0","result":{}}"#[..],
            b"\n",
            answer,
            answer,
        ]
        .concat();
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&expected)
        );
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
