//! MCP handling, the same on every transport: the handler rmcp calls ([`server`]) with the
//! state every session shares ([`state`]) and its errors ([`error`]); the served tool list
//! ([`tools`]) and its `tools/list` pages ([`listing`]); one `tools/call` ([`call`]) and the
//! command's job with its limits ([`job`]); the confirmation gate ([`confirm`]) with what a
//! stateless client declared ([`declared`]), its sealed request states ([`request_state`]) and
//! the shared record of redeemed approvals ([`approvals`]); parameters the user answers
//! ([`questions`]) and calls that ask before they run, as tasks ([`asking`]); calls that
//! outlast a moment: progress and tasks ([`tasks`]); the resources, prompts and completions
//! made from the application's help ([`docs`]).

pub(crate) mod approvals;
pub(crate) mod asking;
pub(crate) mod call;
pub(crate) mod confirm;
pub(crate) mod declared;
pub(crate) mod docs;
pub(crate) mod error;
pub(crate) mod job;
pub(crate) mod listing;
pub(crate) mod questions;
pub(crate) mod request_state;
pub(crate) mod server;
pub(crate) mod state;
pub(crate) mod tasks;
pub(crate) mod tools;
pub(crate) mod trace;
