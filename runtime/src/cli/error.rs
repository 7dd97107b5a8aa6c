//! Why the server does not start, or stops with an error: what `serve` logs before it exits 1.

use std::io;

use crate::builtins::StartError;
use crate::mcp::error::{CatalogError, StateError};
use crate::mcp::request_state::STATE_KEY_VAR;
use crate::nats::UrlError;
use crate::spec::verify::VerifyError;
use crate::transport::auth::AuthError;
use crate::transport::stdio::StdioError;

use fiskgen_contract::defaults::PORT_VAR;

/// Why `serve` failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ServeError {
    /// The narrowing flags left nothing.
    #[error(
        "narrowing left no tool to serve; check --read-only, --tools, --exclude-tools and --tags \
         (`tools` with the same flags lists what is left)"
    )]
    NothingLeft,
    /// The compiled-in catalog does not fit.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// The built-ins cannot start.
    #[error(transparent)]
    Builtins(#[from] StartError),
    /// `--strict-app` found drift, or could not check.
    #[error(transparent)]
    Verify(#[from] Box<VerifyError>),
    /// The approval states' key.
    #[error("{var}: {0}", var = STATE_KEY_VAR)]
    StateKey(StateError),
    /// The shared record of used approvals.
    #[error(transparent)]
    Record(#[from] UrlError),
    /// Authentication cannot start.
    #[error(transparent)]
    Auth(#[from] AuthError),
    /// The `telemetry` block cannot export.
    #[error("telemetry: {0}")]
    Telemetry(#[from] crate::telemetry::TelemetryError),
    /// The environment's port is not a port.
    #[error(transparent)]
    Port(#[from] PortError),
    /// The async runtime did not start.
    #[error("starting the async runtime: {0}")]
    Runtime(io::Error),
    /// The address cannot be listened on.
    #[error("listening on {host}:{port}: {source}")]
    Listen {
        /// The host.
        host: String,
        /// The port.
        port: u16,
        /// Why.
        source: io::Error,
    },
    /// The bound address cannot be read back.
    #[error("reading the listening address: {0}")]
    LocalAddress(io::Error),
    /// Serving HTTP failed.
    #[error("{0}")]
    Http(io::Error),
    /// Serving stdio failed.
    #[error(transparent)]
    Stdio(#[from] StdioError),
}

/// `FISK_AI_MCP_PORT` is set to something that is not a port.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}={text:?} is not a port number", PORT_VAR)]
pub(crate) struct PortError {
    /// The variable's value, trimmed.
    pub(crate) text: String,
}
