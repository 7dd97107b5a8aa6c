//! Support code for fiskgen's whole-pipeline tests.
//!
//! [`apps`] builds the real fisk applications the tests run (the demo app, the
//! fixture, an app on an old fisk, and the `nats` CLI) from Go sources and the
//! Go module proxy, once, into a cache shared by every test process.
//! [`clients`] installs the pinned MCP clients (the Python SDK, the MCP Inspector,
//! the conformance suite) the same way, and finds the generated server they test.

pub mod apps;
pub mod clients;
pub mod ship;

pub use apps::App;
