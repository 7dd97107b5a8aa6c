//! The settings a config may leave out, and the limits both sides enforce, defined once: the
//! config reader, the generator, `fiskgen build`'s message and the generated binary all read
//! them from here.

use std::time::Duration;

/// Listen port when neither the flag, `FISK_AI_MCP_PORT` nor the config sets one.
pub const PORT: u16 = 8080;
/// Bind address when nothing sets one: loopback, so nothing is exposed by accident.
pub const ADDRESS: &str = "127.0.0.1";
/// The environment variable that overrides the compiled-in port.
pub const PORT_VAR: &str = "FISK_AI_MCP_PORT";
/// The environment variable that overrides the compiled-in address.
pub const ADDRESS_VAR: &str = "FISK_AI_MCP_ADDRESS";
/// Tool calls running at once when `max_concurrent_tools` is unset.
pub const MAX_CONCURRENT_TOOLS: u32 = 2;
/// The largest `max_concurrent_tools` (and `--max-concurrent-tools`) accepted.
pub const MAX_CONCURRENCY_LIMIT: u32 = 1024;
/// Per-call timeout when `tool_timeout` is unset.
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(30);
/// How long an application may take to print its model, as in Fisk AI.
pub const INTROSPECT_TIMEOUT: Duration = Duration::from_secs(30);
/// The most stdout bytes read from an application's introspection, as in Fisk AI (16 MiB).
pub const INTROSPECT_MAX_BYTES: usize = 16 * 1024 * 1024;
/// How long a call by a client that declares the tasks extension runs before it becomes a task,
/// when `tasks.after` is unset.
pub const TASK_AFTER: Duration = Duration::from_secs(2);
/// How long a task and its result are kept, when `tasks.ttl` is unset.
pub const TASK_TTL: Duration = Duration::from_secs(60 * 60);
/// Tasks held at once (running or keeping a result), when `tasks.max` is unset.
pub const TASK_MAX: u32 = 64;
/// The largest `tasks.max` (and `--max-tasks`) accepted.
pub const TASK_MAX_LIMIT: u32 = 4096;
/// The longest `tasks.after` and `tasks.ttl` accepted (a week).
pub const TASK_DURATION_LIMIT: Duration = Duration::from_secs(7 * 24 * 60 * 60);
