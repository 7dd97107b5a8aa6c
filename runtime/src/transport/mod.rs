//! How clients reach the server: stdio ([`stdio`]) and streamable HTTP ([`http`]), with what the
//! HTTP layer checks before MCP sees a request: Host and Origin ([`security`]), credentials
//! ([`auth`], [`jwt`]), malformed bodies and stateless confirmations ([`intake`]) and the cap on
//! legacy sessions ([`sessions`]); `tools/list` answered as precomputed bytes on both transports
//! ([`list_http`], [`list_stdio`]); over stdio, one writer of stdout ([`stdout`]).

pub(crate) mod auth;
pub(crate) mod http;
pub(crate) mod intake;
pub(crate) mod jwt;
pub(crate) mod limits;
pub(crate) mod list_http;
pub(crate) mod list_stdio;
pub(crate) mod security;
pub(crate) mod sessions;
pub(crate) mod stdio;
pub(crate) mod stdout;
