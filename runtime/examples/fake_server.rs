//! A hand-written server spec for a small fake application, shaped like what fiskgen generates:
//! static specs, one typed argument handler per command, and a `main` that hands over to the
//! runtime. The runtime's integration tests build and run it against a shell script that plays
//! the application (`runtime/tests/server/app.rs`).
//!
//! `FAKE_PROFILE` picks the built-in settings: `auto` (default), `always`, `never`, `auth`, `header`
//! (bearer token from `FAKE_MCP_TOKEN`), `stateless`.

use std::process::ExitCode;
use std::time::Duration;

use fiskgen_runtime::__private::{
    AppSpec, ApplicationSpec, Arguments, Argv, AuthSource, AuthSpec, ConfirmMode, DocsSpec,
    HeaderAuth, Hints, InvalidArguments, Positional, Run, ServingSpec, Settings, ToolSpec,
    no_arguments,
};

struct EchoArgs {
    level: Option<String>,
    name: Option<String>,
    items: Option<Vec<String>>,
}

fn echo_argv(arguments: &mut Arguments, argv: &mut Argv) -> Result<(), InvalidArguments> {
    let args = EchoArgs {
        level: arguments.optional("level")?,
        name: arguments.optional("name")?,
        items: arguments.optional("items")?,
    };
    argv.value("level", args.level.as_ref());
    argv.value("name", args.name.as_ref());
    argv.positionals(&[Positional::many("items", args.items.as_deref(), &[])])
}

fn exit_argv(arguments: &mut Arguments, argv: &mut Argv) -> Result<(), InvalidArguments> {
    let code: i64 = arguments.required("code")?;
    argv.value("code", Some(&code));
    Ok(())
}

struct SleepArgs {
    seconds: f64,
    marker: Option<String>,
}

fn sleep_argv(arguments: &mut Arguments, argv: &mut Argv) -> Result<(), InvalidArguments> {
    let args = SleepArgs {
        seconds: arguments.required("seconds")?,
        marker: arguments.optional("marker")?,
    };
    argv.positionals(&[
        Positional::one("seconds", Some(&args.seconds), &[]),
        Positional::one("marker", args.marker.as_ref(), &[]),
    ])
}

fn flood_argv(arguments: &mut Arguments, argv: &mut Argv) -> Result<(), InvalidArguments> {
    let bytes: u64 = arguments.required("bytes")?;
    argv.positionals(&[Positional::one("bytes", Some(&bytes), &[])])
}

fn target_argv(arguments: &mut Arguments, argv: &mut Argv) -> Result<(), InvalidArguments> {
    let target: Option<String> = arguments.optional("target")?;
    argv.positionals(&[Positional::one("target", target.as_ref(), &[])])
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
    run: Run::Command {
        command: &["echo"],
        argv: echo_argv,
    },
};

static EXIT: ToolSpec = ToolSpec {
    name: "exit",
    title: "exit",
    description: "Print oops on stderr and exit with the code",
    tags: &[],
    hints: Hints::NONE,
    confirm: None,
    input_schema: r#"{"type":"object","properties":{"code":{"type":"integer"}},"required":["code"],"additionalProperties":false}"#,
    run: Run::Command {
        command: &["exit"],
        argv: exit_argv,
    },
};

static SLEEP: ToolSpec = ToolSpec {
    name: "sleep",
    title: "sleep",
    description: "Sleep, with a background grandchild that writes the marker file after three seconds",
    tags: &[],
    hints: Hints::NONE,
    confirm: None,
    input_schema: r#"{"type":"object","properties":{"seconds":{"type":"number"},"marker":{"type":"string"}},"required":["seconds"],"additionalProperties":false}"#,
    run: Run::Command {
        command: &["sleep"],
        argv: sleep_argv,
    },
};

static FLOOD: ToolSpec = ToolSpec {
    name: "flood",
    title: "flood",
    description: "Print this many bytes",
    tags: &[],
    hints: Hints::NONE,
    confirm: None,
    input_schema: r#"{"type":"object","properties":{"bytes":{"type":"integer"}},"required":["bytes"],"additionalProperties":false}"#,
    run: Run::Command {
        command: &["flood"],
        argv: flood_argv,
    },
};

static CRASH: ToolSpec = ToolSpec {
    name: "crash",
    title: "crash",
    description: "Die by SIGSEGV",
    tags: &[],
    hints: Hints::NONE,
    confirm: None,
    input_schema: NO_ARGS_SCHEMA,
    run: Run::Command {
        command: &["crash"],
        argv: no_arguments,
    },
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
    },
    confirm: None,
    input_schema: NO_ARGS_SCHEMA,
    run: Run::Command {
        command: &["env"],
        argv: no_arguments,
    },
};

static STREAM_INFO: ToolSpec = ToolSpec {
    name: "stream_info",
    title: "stream info",
    description: "Interleave stdout and stderr\n\nTags: impact:ro",
    tags: &["impact:ro"],
    hints: Hints::NONE,
    confirm: None,
    input_schema: NO_ARGS_SCHEMA,
    run: Run::Command {
        command: &["stream", "info"],
        argv: no_arguments,
    },
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
    },
    confirm: Some("ai:confirm"),
    input_schema: TARGET_SCHEMA,
    run: Run::Command {
        command: &["deploy"],
        argv: target_argv,
    },
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
    run: Run::Command {
        command: &["deploy"],
        argv: target_argv,
    },
};

static PANIC: ToolSpec = ToolSpec {
    name: "panic",
    title: "panic",
    description: "The argument handler panics",
    tags: &[],
    hints: Hints::NONE,
    confirm: None,
    input_schema: NO_ARGS_SCHEMA,
    run: Run::Command {
        command: &["panic"],
        argv: |_, _| panic!("the handler broke"),
    },
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
    &PANIC,
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
            serving: ServingSpec {
                stages: &[],
                global_flags: &[],
            },
            commands: &[],
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
