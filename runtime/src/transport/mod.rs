//! How clients reach the server: stdio ([`stdio`]) and streamable HTTP ([`http`]), with what the
//! HTTP layer checks before MCP sees a request: Host and Origin ([`security`]), credentials
//! ([`auth`], [`jwt`]), malformed bodies and stateless confirmations ([`intake`]) and the cap on
//! legacy sessions ([`sessions`]), and the limits on connections and request time ([`limits`]).

pub(crate) mod auth;
pub(crate) mod http;
pub(crate) mod intake;
pub(crate) mod jwt;
pub(crate) mod limits;
pub(crate) mod security;
pub(crate) mod sessions;
pub(crate) mod stdio;
