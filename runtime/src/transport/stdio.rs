//! The stdio transport, for clients that start local servers: newline-delimited JSON-RPC on
//! stdin/stdout, nothing else on stdout (logs and the banner go to stderr; commands never
//! inherit stdout), and the server ends when stdin closes.

use std::borrow::Cow;

use rmcp::model::{ClientNotification, ClientRequest, ProtocolVersion, ServerConfig, ServerResult};
use rmcp::service::{NotificationContext, QuitReason, RequestContext};
use rmcp::{ErrorData, RoleServer, Service, ServiceExt};
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
    match Stdio(handler)
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

/// The handler as rmcp's service over stdio, each answer as the handler completes it
/// ([`Handler::completed`]).
struct Stdio(Handler);

impl Service<RoleServer> for Stdio {
    async fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        let result = Service::handle_request(&self.0, request, context).await?;
        Ok(self.0.completed(result))
    }

    async fn handle_notification(
        &self,
        notification: ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Service::handle_notification(&self.0, notification, context).await
    }

    fn get_info(&self) -> ServerConfig {
        Service::get_info(&self.0)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Service::supported_protocol_versions(&self.0)
    }
}
