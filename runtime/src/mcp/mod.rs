//! MCP handling, the same on every transport: the handler rmcp calls ([`server`]), the served
//! tool list ([`tools`]) and its `tools/list` answer as bytes ([`listing`]), one `tools/call` ([`call`]) with its argument errors ([`arg_errors`]),
//! and the confirmation gate ([`confirm`]) with its sealed request states ([`request_state`]) and
//! the shared record of redeemed approvals ([`approvals`]); calls that outlast a moment: progress
//! and tasks ([`tasks`]).
//! the shared record of redeemed approvals ([`approvals`]); the resources, prompts and
//! completions made from the application's help ([`docs`]).

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
