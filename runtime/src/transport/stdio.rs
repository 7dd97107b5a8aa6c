//! The stdio transport, for clients that start local servers: newline-delimited JSON-RPC on
//! stdin/stdout, nothing else on stdout (logs and the banner go to stderr; commands never
//! inherit stdout), and the server ends when stdin closes.

use rmcp::ServiceExt;
use rmcp::service::QuitReason;
use tokio_util::sync::CancellationToken;

use crate::mcp::server::Handler;

/// Serves one client over stdio until stdin closes or `shutdown`.
pub(crate) async fn serve(handler: Handler, shutdown: CancellationToken) -> Result<(), String> {
    // Non-blocking when stdin/stdout are pipes (as clients start servers), so shutdown is not
    // held up by a read parked on the blocking pool.
    let transport = rmcp::transport::stdio_pipes();
    let running = handler
        .serve_with_ct(transport, shutdown.child_token())
        .await
        .map_err(|error| format!("the client did not complete the MCP handshake: {error}"))?;
    match running.waiting().await {
        Ok(QuitReason::Closed) => tracing::info!("stdin closed; stopping"),
        Ok(QuitReason::Cancelled) => tracing::info!("stopping"),
        Ok(reason) => tracing::info!(?reason, "stopping"),
        Err(error) => return Err(format!("the stdio service failed: {error}")),
    }
    Ok(())
}
