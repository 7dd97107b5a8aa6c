//! What generated code and the application promise this crate: the static specs a generated
//! crate compiles in ([`app`], and its `tools/list` answer, [`listing`]), the parameter tables
//! its commands declare and the command lines read through them ([`params`], [`arguments`],
//! [`argv`], [`values`]) with their errors in plain words ([`arg_errors`]), and the check that the
//! application on disk is still the one the server was built from ([`verify`]), and the group a
//! tool is in ([`groups`]).

pub mod app;
pub(crate) mod arg_errors;
pub mod arguments;
pub mod argv;
pub mod params;
pub mod values;

pub(crate) mod groups;
pub(crate) mod listing;
pub(crate) mod verify;
