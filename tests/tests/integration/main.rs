//! Whole-pipeline tests against real fisk applications built from source.
//!
//! One test binary (fast to link); each module covers one stage:

/// The Go applications build, introspect, and print back what fisk parsed.
mod apps;
/// Generated handlers build argv that makes fisk parse exactly the values sent (property tests
/// against the real fixture application), and refuse invalid arguments before anything runs.
mod argv;
/// The benchmark's smoke mode produces every figure, the Markdown page and the chart.
mod bench;
/// The built-in tools (read_file, base64_encode, knowledge_*) with the Python SDK, in both eras.
mod builtins;
/// Real MCP clients (Python SDK, Inspector) against the generated demo server.
mod clients;
/// The conformance suite in both requirement sets, and the resources, prompts and completions
/// made from an app's help, against the conformance fixture app's server.
mod conformance;
/// Client entries fed to real clients, runtime narrowing, protected-resource authentication.
mod connect;
/// The generated server checks the application it wraps: `verify`, `--strict-app`, and the
/// background check at start.
mod drift;
/// fx, the client the project was specified against, driven in tmux with the entries
/// `config --client fx` prints: health, resources, prompts, completions, reload, header and
/// token authentication, natscli whole.
mod fx;
/// The generated crates of the demo and the fixture match their goldens, byte for byte.
mod golden;
/// The shipped crates' layout rules: no import cycle, no file over 500 lines of code, comments
/// that point into docs/.
mod layout;
/// `tools/list`: pages followed by cursor with the Python SDK on every transport, every golden
/// server's built entries however they are asked for, narrowing keeping the built entries.
mod listing;
/// The real natscli against a real nats-server, over MCP: read freely, removed only when
/// approved.
mod nats;
/// Served names (`tool_prefix`, `tool_names`, `allow_long_names`) with the real natscli: listed,
/// called, narrowed and found in catalog mode by the names the config gives.
mod nats_names;
/// The real natscli in parts: each command group alone on `/mcp/<group>` and with `--group`,
/// sessions bound to their endpoint.
mod nats_parts;
/// Two stateless replicas behind a real nginx: confirmations across replicas, replays refused,
/// legacy clients answered as documented.
mod nginx;
/// Whose is it: tasks, approvals and sessions belong to the principal that made them, with the
/// Python SDK in both eras; session end; capped echoes; help text that cannot break a build.
mod ownership;
/// Questions (`ask`): parameters the user answers, asked with forms before the command runs,
/// with the Python SDK in both eras, over HTTP and stdio.
mod questions;
/// Every command the README shows is mapped to a test that runs it (docs/readme-commands.md).
mod readme;
/// Stateless replicas: one approval runs a command once on the whole deployment.
mod replicas;
/// A non-zero exit as a tool error, task-required tools and command output as log
/// notifications, with the Python SDK.
mod results;
/// Every selection rule, applied to the real fixture application's introspection.
mod select;
/// Tasks shared by stateless replicas through NATS JetStream: any replica answers, a killed
/// replica's task fails within the bound, the bound holds across replicas.
mod shared_tasks;
mod shared_tasks_nats;
/// Skills (SEP-2640): the cheats of real apps listed, got and verified with rmcp's client, in
/// both eras.
mod skills;
/// The fault soak's smoke mode: every call ends right, nothing is left behind.
mod soak;
/// The stdio server's stdout: answers whole and in order when the client reads late, and
/// when stdout is a file.
mod stdout;
/// Long calls as tasks and progress notifications, with the Python SDK.
mod tasks;
/// The `telemetry` block: spans of every call at a real OTLP receiver.
mod telemetry;
