//! The floor of a server's CPU per `tools/list` over HTTP: a bare HTTP/1.1 writer that
//! answers every POST with the same bytes, precomputed. It does nothing a server could do
//! less of (one blocking thread, no parsing beyond the head and `Content-Length`, one write of
//! the whole response), so what it costs per answer is the kernel's: copying the answer into
//! the socket and loopback TCP. Measured with the raw client ([`crate::raw::ListSession`])
//! beside a server's figure, it shows how much of that figure the server's own layers add.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, Result, anyhow};

/// A connection idle this long is closed (so a client that leaves one open cannot keep the
/// single thread from the next).
const IDLE: Duration = Duration::from_secs(5);

/// The request head this writer reads at most.
const MAX_HEAD: usize = 64 * 1024;

/// The writer: one thread of this process, listening on a loopback port.
pub(crate) struct Floor {
    address: SocketAddr,
    /// `/proc/<pid>/task/<tid>`: the thread's own CPU time.
    task: PathBuf,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Floor {
    /// Serves `body` as `application/json` to every request.
    pub(crate) fn serve(body: &[u8]) -> Result<Floor> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).context("binding the floor's port")?;
        let address = listener.local_addr()?;
        let mut response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        response.extend_from_slice(body);
        let stop = Arc::new(AtomicBool::new(false));
        let (task_tx, task_rx) = std::sync::mpsc::channel();
        let stopping = stop.clone();
        let thread = std::thread::Builder::new()
            .name("floor".to_string())
            .spawn(move || {
                let _ = task_tx.send(std::fs::read_link("/proc/thread-self"));
                for stream in listener.incoming() {
                    if stopping.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(stream) = stream {
                        let _ = answer(stream, &response);
                    }
                }
            })
            .context("starting the floor's thread")?;
        let task = task_rx
            .recv()
            .map_err(|_| anyhow!("the floor's thread ended at once"))?
            .context("reading /proc/thread-self")?;
        Ok(Floor {
            address,
            task: PathBuf::from("/proc").join(task),
            stop,
            thread: Some(thread),
        })
    }

    /// The URL to post to.
    pub(crate) fn url(&self) -> String {
        format!("http://{}/mcp", self.address)
    }

    /// The thread's CPU time so far (user + system), ms.
    pub(crate) fn cpu_ms(&self) -> Option<f64> {
        crate::load::cpu_ms_at(&self.task.join("stat"))
    }
}

impl Drop for Floor {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the thread from `accept`.
        let _ = TcpStream::connect(self.address);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
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
    fn every_request_gets_the_same_answer_and_the_thread_is_charged() -> Result<()> {
        let body = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        let floor = Floor::serve(body)?;
        let mut stream = TcpStream::connect(floor.address)?;
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
        // The reading is the floor's thread's, in this process.
        let ours = PathBuf::from(format!("/proc/{}/task", std::process::id()));
        assert!(floor.task.starts_with(&ours), "{}", floor.task.display());
        assert!(floor.cpu_ms().is_some());
        Ok(())
    }
}
