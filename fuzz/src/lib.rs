//! The bodies of fiskgen's fuzz targets, one function per parser that takes untrusted input.
//!
//! `fuzz/libfuzzer` (cargo fuzz, nightly) feeds them coverage-guided input; the default test
//! run replays the committed corpus under `fuzz/corpus/<target>/` through the same functions on
//! stable (`fuzz/tests/replay.rs`). Each function must return normally for every input: a
//! panic, a hang or a broken property is a finding. How to run them: docs/reliability.md.

use std::path::{Path, PathBuf};

use fiskgen::config;
use fiskgen::introspect::{self, Origin};
use fiskgen_runtime::arguments::command_argv;
use fiskgen_runtime::params::{Command, Globals, Param, Type};

/// A fuzz target: returns normally for every input, or the input is a finding.
pub type Target = fn(&[u8]);

/// Every target, by the name of its corpus directory and fuzz binary.
pub const TARGETS: [(&str, Target); 5] = [
    ("config_reader", config_reader),
    ("introspection_document", introspection_document),
    ("argv_values", argv_values),
    ("http_jsonrpc", http_jsonrpc),
    ("sealed_state", sealed_state),
];

/// The golden demo server's generated tools (`tests/expected/demo`), served by the HTTP target.
#[path = "../../tests/expected/demo/src/tools/mod.rs"]
#[allow(missing_docs, unreachable_pub, clippy::all)]
mod demo_tools;

/// The demo server as `http_jsonrpc` serves it: its generated tools and default settings, with
/// no application to run.
static DEMO: fiskgen_runtime::__private::AppSpec = fiskgen_runtime::__private::AppSpec {
    identity: "tasks",
    fiskgen_version: "0.1.0",
    instructions: Some("The demo's tools, fuzzed."),
    tools: demo_tools::TOOLS,
    // No listing: joined from the tools at start, as a narrowed server does.
    settings: fiskgen_runtime::__private::Settings {
        tasks: None,
        ..fiskgen_runtime::__private::Settings::DEFAULT
    },
    ..fiskgen_runtime::__private::AppSpec::EMPTY
};

/// JSON-RPC bodies through the runtime's HTTP service (axum and rmcp, in-process, both the
/// session and the stateless router): see `fiskgen_runtime::__fuzz::http_jsonrpc`.
pub fn http_jsonrpc(data: &[u8]) {
    fiskgen_runtime::__fuzz::http_jsonrpc(&DEMO, data);
}

/// The status and body the HTTP service answers to an `http_jsonrpc` input (for the replay's
/// check that the target reaches the MCP handler).
pub fn http_answer(data: &[u8]) -> Option<(u16, Vec<u8>)> {
    fiskgen_runtime::__fuzz::http_answer(&DEMO, data).map(|(status, body)| (status.as_u16(), body))
}

/// Sealed approval states opened from arbitrary bytes, edited, rebound and expired: see
/// `fiskgen_runtime::__fuzz::sealed_state`.
pub fn sealed_state(data: &[u8]) {
    fiskgen_runtime::__fuzz::sealed_state(data);
}

/// The config reader: any text is a config or a list of problems, never a panic.
pub fn config_reader(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = config::parse(text, Path::new("fuzz.yaml"));
}

/// The introspection document parser, then selection of the served set over what it accepted
/// (with a config that serves everything): neither may panic on any document.
pub fn introspection_document(data: &[u8]) {
    let origin = Origin::File(PathBuf::from("fuzz.json"));
    let Ok(introspection) = introspect::parse(data, origin) else {
        return;
    };
    let Ok(config) = config::parse(
        "application_path: ./app\nexpose: {agent: {mcp: {}}}\n",
        Path::new("fuzz.yaml"),
    ) else {
        panic!("the fixed config parses");
    };
    let _ = fiskgen::select_for(&config, Some(&introspection));
}

/// The command the argv target reads calls through: a value flag, a repeatable one, a
/// negatable boolean and a list of positionals, as a generated parameter table declares them.
static ARGV_COMMAND: Command = Command {
    path: &["stream", "add"],
    globals: Globals::NONE,
    params: &[
        Param::flag("name", Type::String),
        Param::flag("tag", Type::List(&Type::String)),
        Param::negatable("force"),
        Param::arg("items", Type::List(&Type::String)),
    ],
};

/// Argument values to argv, through the runtime's one reader of parameter tables: whatever the
/// values, the argv parses back (with fisk's rules: the command path, then `--flag=value`
/// tokens, then `--` and the positionals) to exactly the values sent. No value becomes a flag,
/// a second command or a positional.
///
/// The input is split at NUL bytes into strings; the first byte says how many of them are
/// flag values (the first is `name`, the rest `tag`; the others are positionals).
pub fn argv_values(data: &[u8]) {
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let strings: Vec<String> = rest
        .split(|&byte| byte == 0)
        .map(|chunk| String::from_utf8_lossy(chunk).into_owned())
        .collect();
    let flag_count = usize::from(split).min(strings.len());
    let (flag_values, positionals) = strings.split_at(flag_count);

    let negate = split % 2 == 0;
    let mut arguments = serde_json::Map::new();
    let mut expected_flags = Vec::new();
    if let Some((name, tags)) = flag_values.split_first() {
        arguments.insert("name".into(), name.clone().into());
        expected_flags.push(("name".to_string(), name.clone()));
        if !tags.is_empty() {
            arguments.insert("tag".into(), tags.to_vec().into());
            expected_flags.extend(tags.iter().map(|tag| ("tag".to_string(), tag.clone())));
        }
    }
    arguments.insert("force".into(), (!negate).into());
    if !positionals.is_empty() {
        arguments.insert("items".into(), positionals.to_vec().into());
    }
    let result = command_argv(&ARGV_COMMAND, arguments);
    let dashes = positionals.iter().any(|value| value == "--");
    let argv = match result {
        Err(_) if dashes => return,
        Err(error) => panic!("positionals {positionals:?} refused: {error}"),
        Ok(_) if dashes => panic!("a \"--\" positional was accepted: {positionals:?}"),
        Ok(argv) => argv,
    };
    let tokens = argv.into_vec();
    let parsed = parse_back(&tokens);
    assert_eq!(parsed.command, ["stream", "add"], "{tokens:?}");
    assert_eq!(parsed.flags, expected_flags, "{tokens:?}");
    assert_eq!(parsed.force, Some(!negate), "{tokens:?}");
    assert_eq!(parsed.positionals, positionals, "{tokens:?}");
}

/// What fisk would make of an argv built by [`argv_values`].
#[derive(Debug, Default)]
struct Parsed {
    command: Vec<String>,
    flags: Vec<(String, String)>,
    force: Option<bool>,
    positionals: Vec<String>,
}

/// Parses `tokens` with fisk's rules for the flags [`argv_values`] uses: words before the first
/// flag are the command path; `--name=value` sets a value flag (the value is everything after
/// the first `=`); `--force` / `--no-force` set the boolean; after `--` everything is
/// positional. Anything else before `--` is a positional too, which the property forbids.
fn parse_back(tokens: &[String]) -> Parsed {
    let mut parsed = Parsed::default();
    let mut tokens = tokens.iter();
    let mut in_flags = false;
    for token in tokens.by_ref() {
        if token == "--" {
            break;
        }
        if let Some(flag) = token.strip_prefix("--") {
            in_flags = true;
            match flag {
                "force" => parsed.force = Some(true),
                "no-force" => parsed.force = Some(false),
                _ => {
                    let (name, value) = flag.split_once('=').unwrap_or((flag, ""));
                    assert!(
                        ["name", "tag"].contains(&name),
                        "unknown flag token {token:?}"
                    );
                    parsed.flags.push((name.to_string(), value.to_string()));
                }
            }
        } else {
            assert!(!in_flags, "a bare word {token:?} among the flags");
            parsed.command.push(token.clone());
        }
    }
    parsed.positionals = tokens.cloned().collect();
    parsed
}
