//! The stdio transport, for clients that start local servers: newline-delimited JSON-RPC on
//! stdin/stdout, nothing else on stdout (logs and the banner go to stderr; commands never
//! inherit stdout), and the server ends when stdin closes.

use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::service::QuitReason;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio_util::sync::CancellationToken;

use crate::mcp::server::Handler;
use crate::transport::list_stdio::{self, FastStdio, FrameWriter};

/// How long the stdout writer may take to drain after the service ended.
const DRAIN: Duration = Duration::from_secs(5);

/// What the stdout pipe is grown to hold, at most (Linux's default is 64 KiB; an unprivileged
/// process may not go above `/proc/sys/fs/pipe-max-size`, 1 MiB unless changed): a
/// large application's whole `tools/list` answer then goes out in one write instead of
/// several, each waiting for the client to read (docs/runtime.md, "Listing tools").
const STDOUT_PIPE_BYTES: usize = 1 << 20;

/// Why serving over stdio ended with an error.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StdioError {
    /// The service failed after the handshake.
    #[error("the stdio service failed: {0}")]
    Service(tokio::task::JoinError),
    /// The client never completed the handshake.
    #[error("the client did not complete the MCP handshake: {0}")]
    Handshake(Box<rmcp::service::ServerInitializeError>),
}

/// Serves one client over stdio until stdin closes or `shutdown`.
pub(crate) async fn serve(handler: Handler, shutdown: CancellationToken) -> Result<(), StdioError> {
    grow_stdout_pipe();
    // Non-blocking when stdin/stdout are pipes (as clients start servers), so shutdown is not
    // held up by a read parked on the blocking pool.
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    // rmcp's line transport, writing through the one stdout writer that `tools/list` answers
    // share (crate::transport::list_stdio).
    let (queue, writer) = list_stdio::writer(stdout);
    let lines = AsyncRwTransport::new_server(stdin, FrameWriter::new(queue.clone()));
    let transport = FastStdio::new(lines, queue, handler.state().clone());
    let outcome = match handler
        .serve_with_ct(transport, shutdown.child_token())
        .await
    {
        Ok(running) => match running.waiting().await {
            Ok(QuitReason::Closed) => {
                tracing::info!("stdin closed; stopping");
                Ok(())
            }
            Ok(QuitReason::Cancelled) => {
                tracing::info!("stopping");
                Ok(())
            }
            Ok(reason) => {
                tracing::info!(?reason, "stopping");
                Ok(())
            }
            Err(error) => Err(StdioError::Service(error)),
        },
        Err(error) => Err(StdioError::Handshake(Box::new(error))),
    };
    // The transport (and with it every sender) is gone with the service: the writer drains
    // what is queued and ends.
    if tokio::time::timeout(DRAIN, writer).await.is_err() {
        tracing::warn!("stdout did not drain within {DRAIN:?}");
    }
    outcome
}

/// Grows the stdout pipe to [`STDOUT_PIPE_BYTES`] when stdout is a pipe. Pages are taken only
/// while the client has not read them yet. Failing is harmless: stdout may be a file or a
/// terminal, or the system may cap pipes lower; writes then take a few more rounds.
#[cfg(target_os = "linux")]
fn grow_stdout_pipe() {
    use nix::fcntl::{FcntlArg, fcntl};
    // An unprivileged process may not go above the system's cap.
    let cap = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
        .ok()
        .and_then(|text| text.trim().parse::<usize>().ok())
        .unwrap_or(STDOUT_PIPE_BYTES);
    let size = i32::try_from(STDOUT_PIPE_BYTES.min(cap)).unwrap_or(i32::MAX);
    match fcntl(std::io::stdout(), FcntlArg::F_SETPIPE_SZ(size)) {
        Ok(size) => tracing::debug!(size, "stdout pipe grown"),
        Err(errno) => tracing::debug!(%errno, "stdout pipe left as it is"),
    }
}

#[cfg(not(target_os = "linux"))]
fn grow_stdout_pipe() {}
