//! The runtime's MCP server end to end: the `fake_server` example (a hand-written spec shaped
//! like generated code) runs as a real process against a shell script that plays the
//! application, and real rmcp clients talk to it over streamable HTTP in both protocol eras
//! and over stdio.

#[cfg(feature = "knowledge")]
mod embeddings;
mod support;

#[cfg(feature = "knowledge")]
mod builtins;
mod cli;
mod confirm;
mod faults;
#[cfg(feature = "knowledge")]
mod knowledge;
mod results;
mod security;
mod transports;
mod working_dir;
