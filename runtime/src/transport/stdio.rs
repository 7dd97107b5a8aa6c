//! The stdio transport, for clients that start local servers: newline-delimited JSON-RPC on
//! stdin/stdout, nothing else on stdout (logs and the banner go to stderr; commands never
//! inherit stdout), and the server ends when stdin closes.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use rmcp::ServiceExt;
use rmcp::service::QuitReason;
use tokio::io::AsyncWrite;
use tokio_util::sync::CancellationToken;

use crate::mcp::server::Handler;

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
    // Non-blocking when stdin/stdout are pipes (as clients start servers), so shutdown is not
    // held up by a read parked on the blocking pool.
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let lists = handler.clone();
    let stdout = Expanding::new(stdout, move |line: &str| lists.expand_list(line));
    match handler
        .serve_with_ct((stdin, stdout), shutdown.child_token())
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
    }
}

/// stdout as rmcp writes it, one message per line, with each `tools/list` answer's page
/// written in ([`Handler::expand_list`]); every other line passes as it is.
struct Expanding<W, E> {
    inner: W,
    /// The line as sent, if it is not the line as written.
    expand: E,
    /// The bytes of a line not ended yet.
    line: Vec<u8>,
    /// Bytes for `inner`, of which the first `written` are written.
    out: Vec<u8>,
    written: usize,
}

impl<W: AsyncWrite + Unpin, E: Fn(&str) -> Option<String> + Unpin> Expanding<W, E> {
    fn new(inner: W, expand: E) -> Self {
        Self {
            inner,
            expand,
            line: Vec::new(),
            out: Vec::new(),
            written: 0,
        }
    }

    /// Takes `bytes`, moving each line they end to `out` (expanded where it is a list's answer).
    fn take(&mut self, mut bytes: &[u8]) {
        while let Some(end) = bytes.iter().position(|&byte| byte == b'\n') {
            self.line.extend_from_slice(&bytes[..end]);
            bytes = &bytes[end + 1..];
            let expanded = std::str::from_utf8(&self.line)
                .ok()
                .and_then(|line| (self.expand)(line));
            match expanded {
                Some(message) => self.out.extend_from_slice(message.as_bytes()),
                None => self.out.extend_from_slice(&self.line),
            }
            self.out.push(b'\n');
            self.line.clear();
        }
        self.line.extend_from_slice(bytes);
    }

    /// Writes `out` to `inner`.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.written < self.out.len() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.out[self.written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
        }
        self.out.clear();
        self.written = 0;
        Poll::Ready(Ok(()))
    }
}

impl<W: AsyncWrite + Unpin, E: Fn(&str) -> Option<String> + Unpin> AsyncWrite for Expanding<W, E> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        // What was taken before is written first: a slow reader holds rmcp back.
        ready!(this.poll_drain(cx))?;
        this.take(bytes);
        if let Poll::Ready(Err(error)) = this.poll_drain(cx) {
            return Poll::Ready(Err(error));
        }
        Poll::Ready(Ok(bytes.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let rest = std::mem::take(&mut this.line);
        this.out.extend_from_slice(&rest);
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt;

    use super::Expanding;

    #[tokio::test]
    async fn each_line_is_written_whole_and_only_the_lists_answer_changes() {
        let mut out = Vec::new();
        let mut writer = Expanding::new(&mut out, |line: &str| {
            (line == "LIST").then(|| "the whole list".to_string())
        });
        // Lines split across writes, and two lines in one.
        for part in ["{\"a\"", ":1}\nLI", "ST\n{\"b\":2}\nLIST", "\n"] {
            writer.write_all(part.as_bytes()).await.expect("write");
        }
        writer.flush().await.expect("flush");
        writer.write_all(b"unended").await.expect("write");
        writer.shutdown().await.expect("shutdown");
        assert_eq!(
            String::from_utf8(out).expect("text"),
            "{\"a\":1}\nthe whole list\n{\"b\":2}\nthe whole list\nunended"
        );
    }
}
