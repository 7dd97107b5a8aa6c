//! What generated code and the application promise this crate: the static specs a generated
//! crate compiles in ([`spec`]), the typed arguments its handlers build ([`argv`], [`values`]),
//! and the check that the application on disk is still the one the server was built from
//! ([`verify`]).

pub mod argv;
pub mod spec;
pub mod values;

pub(crate) mod verify;
