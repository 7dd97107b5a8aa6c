//! Support code for fiskgen's whole-pipeline tests.
//!
//! [`apps`] builds the real fisk applications the tests run (the demo app, the
//! fixture, an app on an old fisk, and the `nats` CLI) from Go sources and the
//! Go module proxy, once, into a cache shared by every test process.

pub mod apps;

pub use apps::App;
