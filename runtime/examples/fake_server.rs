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
    AppSpec, ApplicationSpec, Argv, AuthSource, AuthSpec, ConfirmMode, DocsSpec, HeaderAuth, Hints,
    InvalidArguments, JsonObject, Positional, Run, ServingSpec, Settings, ToolSpec,
    parse_arguments, serde,
};

#[derive(serde::Deserialize)]
#[serde(crate = "fiskgen_runtime::__private::serde", deny_unknown_fields)]
struct EchoArgs {
    level: Option<String>,
    name: Option<String>,
    items: Option<Vec<String>>,
}

fn echo_argv(arguments: JsonObject) -> Result<Argv, InvalidArguments> {
    let args: EchoArgs = parse_arguments(arguments)?;
    let mut argv = Argv::new(&["echo"]);
    argv.value("level", args.level.as_ref());
    argv.value("name", args.name.as_ref());
    argv.positionals(vec![Positional::many("items", args.items.as_deref(), &[])])?;
    Ok(argv)
}

#[derive(serde::Deserialize)]
#[serde(crate = "fiskgen_runtime::__private::serde", deny_unknown_fields)]
struct ExitArgs {
    code: i64,
}

fn exit_argv(arguments: JsonObject) -> Result<Argv, InvalidArguments> {
    let args: ExitArgs = parse_arguments(arguments)?;
    let mut argv = Argv::new(&["exit"]);
    argv.value("code", Some(&args.code));
    Ok(argv)
}

#[derive(serde::Deserialize)]
#[serde(crate = "fiskgen_runtime::__private::serde", deny_unknown_fields)]
struct SleepArgs {
    seconds: f64,
    marker: Option<String>,
}

fn sleep_argv(arguments: JsonObject) -> Result<Argv, InvalidArguments> {
    let args: SleepArgs = parse_arguments(arguments)?;
    let mut argv = Argv::new(&["sleep"]);
    argv.positionals(vec![
        Positional::one("seconds", Some(&args.seconds), &[]),
        Positional::one("marker", args.marker.as_ref(), &[]),
    ])?;
    Ok(argv)
}

#[derive(serde::Deserialize)]
#[serde(crate = "fiskgen_runtime::__private::serde", deny_unknown_fields)]
struct FloodArgs {
    bytes: u64,
}

fn flood_argv(arguments: JsonObject) -> Result<Argv, InvalidArguments> {
    let args: FloodArgs = parse_arguments(arguments)?;
    let mut argv = Argv::new(&["flood"]);
    argv.positionals(vec![Positional::one("bytes", Some(&args.bytes), &[])])?;
    Ok(argv)
}

#[derive(serde::Deserialize)]
#[serde(crate = "fiskgen_runtime::__private::serde", deny_unknown_fields)]
struct NoArgs {}

fn no_args(
    command: &'static [&'static str],
    arguments: JsonObject,
) -> Result<Argv, InvalidArguments> {
    let NoArgs {} = parse_arguments(arguments)?;
    Ok(Argv::new(command))
}

#[derive(serde::Deserialize)]
#[serde(crate = "fiskgen_runtime::__private::serde", deny_unknown_fields)]
struct TargetArgs {
    target: Option<String>,
}

fn target_argv(
    command: &'static [&'static str],
    arguments: JsonObject,
) -> Result<Argv, InvalidArguments> {
    let args: TargetArgs = parse_arguments(arguments)?;
    let mut argv = Argv::new(command);
    argv.positionals(vec![Positional::one("target", args.target.as_ref(), &[])])?;
    Ok(argv)
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
        argv: |arguments| no_args(&["crash"], arguments),
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
        argv: |arguments| no_args(&["env"], arguments),
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
        argv: |arguments| no_args(&["stream", "info"], arguments),
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
        argv: |arguments| target_argv(&["deploy"], arguments),
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
        argv: |arguments| target_argv(&["deploy"], arguments),
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
        argv: |_| panic!("the handler broke"),
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
            scrub_env: &["ANTHROPIC_API_KEY", "FAKE_SECRET"],
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
