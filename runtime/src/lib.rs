//! fiskgen-runtime: everything a fiskgen-generated MCP server links against.
//!
//! Generated crates stay thin (static tool specs and one small function per command); the
//! transports, the MCP handler, argv building, execution with limits, confirmation and the
//! built-in tools live here, where ordinary tests cover them. Generated code reaches this crate
//! only through its hidden `__private` re-export module.
//!
//! This crate is being built up issue by issue; see the repository README for what works today.
