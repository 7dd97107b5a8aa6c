//! Running the application: one command with its limits ([`exec`]), the bounded capture of its
//! output ([`output`]), what a running command has printed so far ([`live`], [`lines`]), and
//! how a command line is shown to people ([`cmdline`]).

pub(crate) mod cmdline;
pub(crate) mod exec;
pub(crate) mod lines;
pub(crate) mod live;
pub(crate) mod output;
