//! A hand-written server spec for a small fake application, shaped like what fiskgen generates:
//! static specs, one parameter table per command, and a `main` that hands over to the
//! runtime. The runtime's integration tests build and run it against a shell script that plays
//! the application (`runtime/tests/server/app.rs`).
//!
//! `FAKE_PROFILE` picks the built-in settings: `auto` (default), `always`, `never`, `auth`, `header`
//! (bearer token from `FAKE_MCP_TOKEN`), `stateless`.

use std::process::ExitCode;
use std::time::Duration;

use fiskgen_runtime::__private::{
    AppSpec, ApplicationSpec, AuthSource, AuthSpec, Command, ConfirmMode, DocsSpec, Globals,
    HeaderAuth, Hints, Param, Run, ServingSpec, Settings, ToolSpec, Type,
};

static ECHO_PARAMS: &[Param] = &[
    Param::flag("level", Type::String),
    Param::flag("name", Type::String),
    Param::arg("items", Type::List(&Type::String)),
];
static EXIT_PARAMS: &[Param] = &[Param::flag("code", Type::I64).required()];
static SLEEP_PARAMS: &[Param] = &[
    Param::arg("seconds", Type::F64).required(),
    Param::arg("marker", Type::String),
];
static FLOOD_PARAMS: &[Param] = &[Param::arg("bytes", Type::U64).required()];
static TARGET_PARAMS: &[Param] = &[Param::arg("target", Type::String)];

/// A command's `Run`: its path and parameters (no exposed global flags).
const fn command(path: &'static [&'static str], params: &'static [Param]) -> Run {
    Run::Command(Command {
        path,
        globals: Globals::NONE,
        params,
    })
}

const NO_ARGS_SCHEMA: &str = r#"{"type":"object","properties":{},"additionalProperties":false}"#;
const TARGET_SCHEMA: &str = r#"{"type":"object","properties":{"target":{"type":"string","description":"Where to deploy"}},"additionalProperties":false}"#;

static ECHO: ToolSpec = ToolSpec {
    name: "echo",
    title: "echo",
    description: "Print the arguments one per line",
    tags: &[],
    hints: Hints::NONE,
    confirm: None,
    input_schema: r#"{"type":"object","properties":{"level":{"type":"string"},"name":{"type":"string"},"items":{"type":"array","items":{"type":"string"}}},"additionalProperties":false}"#,
    questions: &[],
    run: command(&["echo"], ECHO_PARAMS),
};

static EXIT: ToolSpec = ToolSpec {
    name: "exit",
    title: "exit",
    description: "Print oops on stderr and exit with the code",
    tags: &[],
    hints: Hints::NONE,
    confirm: None,
    input_schema: r#"{"type":"object","properties":{"code":{"type":"integer"}},"required":["code"],"additionalProperties":false}"#,
    questions: &[],
    run: command(&["exit"], EXIT_PARAMS),
};

static SLEEP: ToolSpec = ToolSpec {
    name: "sleep",
    title: "sleep",
    description: "Sleep, with a background grandchild that writes the marker file after three seconds",
    tags: &[],
    hints: Hints::NONE,
    confirm: None,
    input_schema: r#"{"type":"object","properties":{"seconds":{"type":"number"},"marker":{"type":"string"}},"required":["seconds"],"additionalProperties":false}"#,
    questions: &[],
    run: command(&["sleep"], SLEEP_PARAMS),
};

static FLOOD: ToolSpec = ToolSpec {
    name: "flood",
    title: "flood",
    description: "Print this many bytes",
    tags: &[],
    hints: Hints::NONE,
    confirm: None,
    input_schema: r#"{"type":"object","properties":{"bytes":{"type":"integer"}},"required":["bytes"],"additionalProperties":false}"#,
    questions: &[],
    run: command(&["flood"], FLOOD_PARAMS),
};

static CRASH: ToolSpec = ToolSpec {
    name: "crash",
    title: "crash",
    description: "Die by SIGSEGV",
    tags: &[],
    hints: Hints::NONE,
    confirm: None,
    input_schema: NO_ARGS_SCHEMA,
    questions: &[],
    run: command(&["crash"], &[]),
};

static ENV: ToolSpec = ToolSpec {
    name: "env",
    title: "env",
    description: "Print the environment",
    tags: &[],
    hints: Hints {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
        additive: false,
    },
    confirm: None,
    input_schema: NO_ARGS_SCHEMA,
    questions: &[],
    run: command(&["env"], &[]),
};

static STREAM_INFO: ToolSpec = ToolSpec {
    name: "stream_info",
    title: "stream info",
    description: "Interleave stdout and stderr\n\nTags: impact:ro",
    tags: &["impact:ro"],
    hints: Hints::NONE,
    confirm: None,
    input_schema: NO_ARGS_SCHEMA,
    questions: &[],
    run: command(&["stream", "info"], &[]),
};

static DEPLOY: ToolSpec = ToolSpec {
    name: "deploy",
    title: "deploy",
    description: "deploy things\n\nTags: ai:confirm",
    tags: &["ai:confirm"],
    hints: Hints {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: false,
        additive: false,
    },
    confirm: Some("ai:confirm"),
    input_schema: TARGET_SCHEMA,
    questions: &[],
    run: command(&["deploy"], TARGET_PARAMS),
};

static PUT: ToolSpec = ToolSpec {
    name: "put",
    title: "put",
    description: "write things\n\nTags: impact:rw",
    tags: &["impact:rw"],
    hints: Hints::NONE,
    // As fiskgen emits it for `confirm_tags: [impact:rw]`.
    confirm: Some("impact:rw"),
    input_schema: TARGET_SCHEMA,
    questions: &[],
    run: command(&["deploy"], TARGET_PARAMS),
};

static TOOLS: &[&ToolSpec] = &[
    &ECHO,
    &EXIT,
    &SLEEP,
    &FLOOD,
    &CRASH,
    &ENV,
    &STREAM_INFO,
    &DEPLOY,
    &PUT,
];

const fn app(confirm: ConfirmMode, auth: Option<AuthSpec>, stateless: bool) -> AppSpec {
    AppSpec {
        identity: "fake",
        fiskgen_version: "0.1.0",
        application: Some(ApplicationSpec {
            path: "fakeapp",
            name: "fakeapp",
            version: Some("1.2.3"),
            fingerprint: "0000000000000000000000000000000000000000000000000000000000000000",
            output_digest: None,
            serving: ServingSpec::ALL,
            commands: "[]",
        }),
        instructions: Some("A fake application for tests."),
        tools: TOOLS,
        docs: &DocsSpec::NONE,
        listing: None,
        settings: Settings {
            port: 0,
            address: "",
            confirm,
            max_concurrent_tools: 2,
            tool_timeout: Duration::from_secs(30),
            allowed_hosts: &["fake.example"],
            allowed_origins: &["https://app.example:443"],
            auth,
            stateless,
            // The LLM providers' variables (ANTHROPIC_API_KEY, ...) are the runtime's to add.
            scrub_env: &["FAKE_SECRET"],
            tasks: None,
            ..Settings::DEFAULT
        },
    }
}

static AUTO: AppSpec = app(ConfirmMode::Auto, None, false);
static ALWAYS: AppSpec = app(ConfirmMode::Always, None, false);
static NEVER: AppSpec = app(ConfirmMode::Never, None, false);
static AUTH: AppSpec = app(
    ConfirmMode::Auto,
    Some(AuthSpec {
        token: Some(AuthSource::Env("FAKE_MCP_TOKEN")),
        header: None,
        oauth: None,
    }),
    false,
);
static STATELESS: AppSpec = app(ConfirmMode::Auto, None, true);
static HEADER: AppSpec = app(
    ConfirmMode::Auto,
    Some(AuthSpec {
        token: None,
        header: Some(HeaderAuth {
            name: "X-Fake-Key",
            value: AuthSource::Env("FAKE_MCP_KEY"),
        }),
        oauth: None,
    }),
    false,
);

fn main() -> ExitCode {
    let app = match std::env::var("FAKE_PROFILE").as_deref() {
        Ok("always") => &ALWAYS,
        Ok("never") => &NEVER,
        Ok("auth") => &AUTH,
        Ok("header") => &HEADER,
        Ok("stateless") => &STATELESS,
        _ => &AUTO,
    };
    fiskgen_runtime::__private::main(app)
}
