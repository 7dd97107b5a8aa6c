//! Support code for fiskgen's whole-pipeline tests.
//!
//! [`apps`] builds the real fisk applications the tests run (the demo app, the
//! fixture, an app on an old fisk, and the `nats` CLI) from Go sources and the
//! Go module proxy, once, into a cache shared by every test process.
//! [`clients`] installs the pinned MCP clients (the Python SDK, the MCP Inspector,
//! the conformance suite) the same way, and finds the generated server they test.
//! [`fx`] builds fx, the MCP client the project was specified against, once, into a cache
//! outside the clone; [`tmux`] drives an interactive program like it in a tmux session.
//! [`ship`] installs what the shipping tests use: cargo-zigbuild and Zig, actionlint and the
//! MCP Bundle CLI. [`cache`] is the lock-and-stamp cache all of them build through.

pub mod apps;
pub mod cache;
pub mod clients;
pub mod fx;
pub mod ship;
pub mod tmux;

pub use apps::App;
