//! fiskgen-runtime: everything a fiskgen-generated MCP server links against.
//!
//! Generated crates stay thin: static tool specs ([`app`]) with one parameter table per command
//! ([`params`]), read by one function ([`arguments`]). The transports, the MCP handler, execution with limits,
//! confirmation and the built-in tools live here, where ordinary tests cover them. Generated code
//! reaches this crate only through its hidden [`__private`] module, so the public API can change
//! without breaking the contract generated code relies on. The whole generated `main` is
//! `rt::main_with_notes(&APP, NOTES)` (`rt` being `__private`): the non-generic entry point keeps rmcp's
//! generic service stack monomorphised once, here, instead of in every generated crate.

mod builtins;
mod cli;
#[cfg(feature = "fuzzing")]
mod fuzzing;
mod logging;
mod mcp;
mod nats;
mod principal;
mod process;
mod spec;
mod telemetry;
mod transport;

pub use spec::{app, arguments, argv, params, values};

/// Go durations, from the contract fiskgen shares with this crate.
use fiskgen_contract::duration;

/// A JSON object, as MCP carries tool arguments.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

/// What generated code uses. Not a public API: it changes with fiskgen, which pins this crate to
/// its own version.
#[doc(hidden)]
pub mod __private {
    pub use serde;
    pub use serde_json;
    pub use serde_json::Value;

    pub use crate::JsonObject;
    pub use crate::cli::{main, main_with_notes};
    pub use crate::spec::app::*;
    pub use crate::spec::argv::InvalidArguments;
    pub use crate::spec::listing::{ListingSpec, PageSpec};
    pub use crate::spec::params::{Command, Globals, Param, Place, Type};
    pub use crate::spec::values::{ByteSize, GoDuration, HexBytes};
}

/// The fuzz targets' bodies that need this crate's internals (feature `fuzzing`, for the
/// `fiskgen-fuzz` crate only; docs/reliability.md).
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod __fuzz {
    pub use crate::fuzzing::{http_answer, http_jsonrpc, sealed_state};
}
