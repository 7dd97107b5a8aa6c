//! fiskgen-contract: what the generator (`fiskgen`) and the servers it generates
//! (`fiskgen-runtime`) must agree on, defined once.
//!
//! - [`model`]: the tolerant serde mirror of a fisk introspection document;
//! - [`introspect`]: running `<app> --fisk-introspect` within bounds, and finding and parsing the
//!   document in what it prints;
//! - [`canonical`]: canonical JSON, the fingerprints built on it, and hex;
//! - [`duration`]: Go's duration syntax, parsed and formatted;
//! - [`groups`]: which part of a server (`/mcp/<group>`, `--group`) a tool belongs to;
//! - [`docs`]: the URIs and cheat placeholders of the resources and prompts a server offers;
//! - [`defaults`]: the settings a config may leave out (port, address, concurrency, timeouts);
//! - [`identity`]: which identities name a server;
//! - [`info`]: one served tool as `fiskgen info --json` and `<binary> tools --json` list it;
//! - [`listing`]: the `tools/list` answer, computed at build time and served as bytes;
//! - [`cursor`]: the opaque cursors of every paginated list;
//! - [`surface`]: the served surface of a server and the one drift verdict that `fiskgen check`
//!   and `<binary> verify` both give (see `docs/drift.md`);
//! - [`prints`]: that surface's fingerprints as a generated crate carries them;
//! - [`text`]: the characters that can break or disguise text, and their visible escapes.
//!
//! The crate is synchronous and small on purpose: fiskgen embeds its source beside the runtime's
//! (see `fiskgen/build.rs`), and every generated server compiles it.

pub mod builtins;
pub mod canonical;
pub mod cursor;
pub mod defaults;
pub mod docs;
pub mod duration;
pub mod groups;
pub mod identity;
pub mod info;
pub mod introspect;
pub mod listing;
pub mod model;
pub mod prints;
pub mod surface;
pub mod text;
