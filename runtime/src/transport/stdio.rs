//! The stdio transport, for clients that start local servers: newline-delimited JSON-RPC on
//! stdin/stdout, nothing else on stdout (logs and the banner go to stderr; commands never
//! inherit stdout), and the server ends when stdin closes.

use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::service::QuitReason;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio_util::sync::CancellationToken;

use crate::mcp::server::Handler;
use crate::transport::list_stdio::{FastStdio, ListTap, SessionEra};
use crate::transport::stdout::{self, FrameWriter};

/// How long the stdout writer may take to drain after the service ended.
const DRAIN: Duration = Duration::from_secs(5);

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
    // held up by a read parked on the blocking pool. Stdout has a writer of its own.
    let (stdin, _) = rmcp::transport::stdio_pipes();
    // rmcp's line transport, writing through the one stdout writer that `tools/list` answers
    // share (crate::transport::stdout).
    let (queue, writer) = stdout::writer();
    // `tools/list` is answered on the way in (crate::transport::list_stdio): from stdin's
    // bytes when the tap can tell, else from rmcp's parsed message.
    let era = SessionEra::default();
    let stdin = ListTap::new(stdin, queue.clone(), handler.state().clone(), era.clone());
    let lines = AsyncRwTransport::new_server(stdin, FrameWriter::new(queue.clone()));
    let transport = FastStdio::new(lines, queue, handler.state().clone(), era);
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
