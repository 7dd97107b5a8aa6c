//! What generated code and the application promise this crate: the static specs a generated
//! crate compiles in ([`spec`], and its `tools/list` answer, [`listing`]), the parameter tables
//! its commands declare and the command lines read through them ([`params`], [`arguments`],
//! [`argv`], [`values`]), and the check that the
//! application on disk is still the one the server was built from ([`verify`]).

pub mod arguments;
pub mod argv;
pub mod params;
pub mod spec;
pub mod values;

pub(crate) mod listing;
pub(crate) mod verify;
