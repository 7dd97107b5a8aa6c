//! The generated handlers of the golden fixture crate, compiled into this test binary (a
//! test-only harness: the crate's `src/tools` is included by path), checked against the real
//! fixture application: for every served leaf and random valid arguments, the argv the handler
//! builds makes fisk parse exactly the values that were sent. Invalid arguments are refused
//! before anything runs, with an error that names the property.
//!
//! Case counts are modest so the suite stays fast on two cores; `FISKGEN_ARGV_CASES` raises them.

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::OnceLock;

use anyhow::{Context, Result, bail, ensure};
use fiskgen::ir::ToolKind;
use fiskgen::ir::{CommandTool as Params, FlagRender, IntType, ParamType};
use fiskgen_runtime::__private as rt;
use fiskgen_tests::apps::{self, App, workspace_root};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Map, Value, json};

#[allow(dead_code, unreachable_pub, clippy::all)]
#[path = "../../expected/fixture/src/tools/mod.rs"]
mod generated;

/// What fisk should print for a value that was sent.
#[derive(Debug, Clone)]
enum Expect {
    /// Exactly this JSON.
    Json(Value),
    /// A float64, compared as a number (`0.0` and `0` are equal).
    F64(f64),
    /// A float32: compared after rounding both sides to f32.
    F32(f32),
    /// A list of expectations.
    List(Vec<Expect>),
}

/// A generated value: what is sent, and what fisk prints for it.
type Sample = (Value, Expect);

/// Where fisk prints a value (`flags`, `args` or `globals`), its name, and what it must be.
type Printed = (String, String, Expect);

/// The typed parameters of every served fixture tool, by tool name.
fn fixture_params() -> &'static BTreeMap<String, Params> {
    static PARAMS: OnceLock<BTreeMap<String, Params>> = OnceLock::new();
    PARAMS.get_or_init(|| {
        let plan = crate::golden::plan("fixture").expect("fixture plan");
        plan.server
            .tools
            .iter()
            .filter_map(|tool| match &tool.kind {
                ToolKind::Command(command) => Some((tool.name.clone(), command.clone())),
                ToolKind::Builtin { .. } => None,
            })
            .collect()
    })
}

/// Reads a call through a tool's generated parameter table.
#[allow(irrefutable_let_patterns)]
fn build_argv(tool: &str, arguments: &Value) -> Result<Result<Vec<String>, String>> {
    let spec = generated::TOOLS
        .iter()
        .find(|spec| spec.name == tool)
        .with_context(|| format!("the golden crate has no tool {tool}"))?;
    let rt::Run::Command(command) = &spec.run else {
        bail!("{tool} is not a command")
    };
    let object = arguments.as_object().cloned().unwrap_or_default();
    Ok(fiskgen_runtime::arguments::command_argv(command, object)
        .map(fiskgen_runtime::argv::Argv::into_vec)
        .map_err(|error| error.to_string()))
}

/// Runs the fixture with `argv` and returns what it printed.
fn run_fixture(argv: &[String]) -> Result<Value> {
    let binary = apps::path(App::Fixture)?;
    let mut command = Command::new(&binary);
    command.args(argv);
    for (key, _) in std::env::vars() {
        if key.starts_with("FIXTURE_") {
            command.env_remove(key);
        }
    }
    let output = command.output()?;
    ensure!(
        output.status.success(),
        "fixture {argv:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The parsed command line comes first; `ticker` goes on printing lines after it.
    let printed = serde_json::Deserializer::from_slice(&output.stdout)
        .into_iter::<Value>()
        .next()
        .context("the fixture printed nothing")?;
    printed.with_context(|| {
        format!(
            "fixture printed {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

fn matches(expect: &Expect, printed: &Value) -> bool {
    match expect {
        Expect::Json(value) => value == printed,
        Expect::F64(value) => printed.as_f64() == Some(*value),
        Expect::F32(value) => printed.as_f64().is_some_and(|p| p as f32 == *value),
        Expect::List(items) => printed.as_array().is_some_and(|printed| {
            printed.len() == items.len() && items.iter().zip(printed).all(|(e, p)| matches(e, p))
        }),
    }
}

// ---------------------------------------------------------------------------------------------
// Value strategies.

/// Characters for free text: letters, digits, and what could confuse a command line.
const TEXT: &[char] = &[
    'a', 'b', 'z', 'A', 'Q', '0', '7', ' ', '-', '=', '@', ',', ':', '"', '\'', '\\', '$', '*',
    '~', 'µ', 'é', '—', '\n', '\t',
];

fn text() -> BoxedStrategy<String> {
    prop::collection::vec(prop::sample::select(TEXT), 0..8)
        .prop_map(String::from_iter)
        .prop_filter("fisk drops a literal --", |text| text != "--")
        .boxed()
}

/// A word of lowercase letters and digits.
fn word(length: std::ops::Range<usize>) -> BoxedStrategy<String> {
    const CHARS: &[char] = &['a', 'b', 'k', 'x', 'z', '0', '9'];
    prop::collection::vec(prop::sample::select(CHARS), length)
        .prop_map(String::from_iter)
        .boxed()
}

fn json_sample<T: rt::serde::Serialize>(value: T) -> Sample {
    let value = json!(value);
    (value.clone(), Expect::Json(value))
}

fn fixed(pairs: &'static [(&'static str, Value)]) -> BoxedStrategy<Sample> {
    prop::sample::select(pairs)
        .prop_map(|(sent, printed)| (json!(sent), Expect::Json(printed.clone())))
        .boxed()
}

/// Durations and how fisk prints them. fisk's schema pattern admits `µs`, but its parser
/// (v0.9.1) refuses it ("invalid duration"), so the table has `us` only.
fn durations() -> BoxedStrategy<Sample> {
    static PAIRS: OnceLock<Vec<(&'static str, Value)>> = OnceLock::new();
    let pairs = PAIRS.get_or_init(|| {
        [
            ("0", "0s"),
            ("1s", "1s"),
            ("90s", "1m30s"),
            ("1.5h", "1h30m0s"),
            ("300ms", "300ms"),
            ("2h45m", "2h45m0s"),
            ("-1m", "-1m0s"),
            ("1us", "1µs"),
            ("+3ns", "3ns"),
        ]
        .into_iter()
        .map(|(sent, printed)| (sent, json!(printed)))
        .collect()
    });
    fixed(pairs)
}

fn sizes() -> BoxedStrategy<Sample> {
    static PAIRS: OnceLock<Vec<(&'static str, Value)>> = OnceLock::new();
    let pairs = PAIRS.get_or_init(|| {
        [
            ("0", 0),
            ("10B", 10),
            ("512KiB", 524288),
            ("1.5KiB", 1536),
            ("2MiB", 2097152),
            ("1GiB", 1073741824),
        ]
        .into_iter()
        .map(|(sent, printed)| (sent, json!(printed)))
        .collect()
    });
    fixed(pairs)
}

fn hex() -> BoxedStrategy<Sample> {
    prop::collection::vec(any::<u8>(), 0..6)
        .prop_flat_map(|bytes| {
            let lower: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            prop::collection::vec(any::<bool>(), lower.len()).prop_map(move |upper| {
                let sent: String = lower
                    .chars()
                    .zip(&upper)
                    .map(|(c, up)| if *up { c.to_ascii_uppercase() } else { c })
                    .collect();
                (json!(sent), Expect::Json(json!(lower)))
            })
        })
        .boxed()
}

fn existing(kind: &str) -> BoxedStrategy<Sample> {
    let root = workspace_root();
    let files = vec![
        root.join("Cargo.toml").display().to_string(),
        root.join("tests/Cargo.toml").display().to_string(),
    ];
    let dirs = vec![
        root.display().to_string(),
        root.join("tests").display().to_string(),
    ];
    let choices = match kind {
        k if k.contains("or-dir") => [files, dirs].concat(),
        k if k.contains("dir") => dirs,
        _ => files,
    };
    prop::sample::select(choices).prop_map(json_sample).boxed()
}

/// Values of a string-typed fisk kind (the fixture names its parameters after their kind).
fn string_kind(kind: &str) -> BoxedStrategy<Sample> {
    let number_text = |strategy: BoxedStrategy<Value>| {
        strategy
            .prop_map(|number| (json!(number.to_string()), Expect::Json(number)))
            .boxed()
    };
    match kind {
        "regexp" | "regexp-list" => prop::sample::select(vec!["a+", "^x$", "[0-9]{2}", "(?i)abc"])
            .prop_map(json_sample)
            .boxed(),
        "custom" => (word(1..5), word(0..5))
            .prop_map(|(key, value)| json_sample(format!("{key}:{value}")))
            .boxed(),
        "text" => prop::sample::select(vec!["low", "mid", "high"])
            .prop_map(json_sample)
            .boxed(),
        "ip" | "resolved-ip" | "ip-list" | "resolved-ip-list" => any::<[u8; 4]>()
            .prop_map(|[a, b, c, d]| json_sample(format!("{a}.{b}.{c}.{d}")))
            .boxed(),
        "tcp" | "tcp-list" => (1u16..)
            .prop_map(|port| json_sample(format!("127.0.0.1:{port}")))
            .boxed(),
        "url" | "url-list" => prop::sample::select(vec!["", "a", "path/to", "x?q=1"])
            .prop_map(|path| json_sample(format!("https://example.com/{path}")))
            .boxed(),
        "existing-file"
        | "existing-dir"
        | "existing-file-or-dir"
        | "file"
        | "open-file"
        | "existing-files"
        | "existing-dirs"
        | "existing-files-or-dirs" => existing(kind),
        "ints" => number_text(
            (-(1i64 << 53)..=(1i64 << 53))
                .prop_map(|n| json!(n))
                .boxed(),
        ),
        "int64-list" => number_text(any::<i64>().prop_map(|n| json!(n)).boxed()),
        "int8-list" => number_text(any::<i8>().prop_map(|n| json!(n)).boxed()),
        "int16-list" => number_text(any::<i16>().prop_map(|n| json!(n)).boxed()),
        "int32-list" => number_text(any::<i32>().prop_map(|n| json!(n)).boxed()),
        "uints" | "uint64-list" => number_text(any::<u64>().prop_map(|n| json!(n)).boxed()),
        "uint8-list" => number_text(any::<u8>().prop_map(|n| json!(n)).boxed()),
        "uint16-list" => number_text(any::<u16>().prop_map(|n| json!(n)).boxed()),
        "uint32-list" => number_text(any::<u32>().prop_map(|n| json!(n)).boxed()),
        "float64-list" => finite_f64()
            .prop_map(|n| (json!(n.to_string()), Expect::F64(n)))
            .boxed(),
        "float32-list" => finite_f32()
            .prop_map(|n| (json!(n.to_string()), Expect::F32(n)))
            .boxed(),
        "bool-list" | "unnegatable-bool-list" => any::<bool>()
            .prop_map(|b| (json!(b.to_string()), Expect::Json(json!(b))))
            .boxed(),
        "duration-list" => durations(),
        "hex-bytes-list" => hex(),
        _ => text().prop_map(json_sample).boxed(),
    }
}

fn finite_f64() -> BoxedStrategy<f64> {
    prop_oneof![
        -1e6f64..1e6,
        any::<f64>().prop_filter("finite", |n| n.is_finite()),
    ]
    .boxed()
}

fn finite_f32() -> BoxedStrategy<f32> {
    prop_oneof![
        -1e6f32..1e6,
        any::<f32>().prop_filter("finite", |n| n.is_finite()),
    ]
    .boxed()
}

/// Values of a parameter.
fn param_values(ty: &ParamType, kind: &str, only_true: bool) -> BoxedStrategy<Sample> {
    match ty {
        ParamType::Bool if only_true => Just(json_sample(true)).boxed(),
        ParamType::Bool => any::<bool>().prop_map(json_sample).boxed(),
        ParamType::Int(int) => match int {
            IntType::I8 => any::<i8>().prop_map(json_sample).boxed(),
            IntType::I16 => any::<i16>().prop_map(json_sample).boxed(),
            IntType::I32 => any::<i32>().prop_map(json_sample).boxed(),
            // fisk's Int() parses through float64 (v0.9.1), so only integers up to 2^53 survive
            // it exactly; Int64() is exact, but the schema cannot tell the two apart.
            IntType::I64 => (-(1i64 << 53)..=(1i64 << 53)).prop_map(json_sample).boxed(),
            IntType::U8 => any::<u8>().prop_map(json_sample).boxed(),
            IntType::U16 => any::<u16>().prop_map(json_sample).boxed(),
            IntType::U32 => any::<u32>().prop_map(json_sample).boxed(),
            IntType::U64 => any::<u64>().prop_map(json_sample).boxed(),
        },
        ParamType::F32 => finite_f32()
            .prop_map(|n| (json!(n), Expect::F32(n)))
            .boxed(),
        ParamType::F64 => finite_f64()
            .prop_map(|n| (json!(n), Expect::F64(n)))
            .boxed(),
        ParamType::String => string_kind(kind),
        ParamType::Enum(values) => prop::sample::select(values.clone())
            .prop_map(json_sample)
            .boxed(),
        ParamType::Duration => durations(),
        ParamType::ByteSize => sizes(),
        ParamType::HexBytes => hex(),
        ParamType::List(inner) => prop::collection::vec(param_values(inner, kind, false), 0..4)
            .prop_map(|items| {
                let (sent, printed): (Vec<Value>, Vec<Expect>) = items.into_iter().unzip();
                (Value::Array(sent), Expect::List(printed))
            })
            .boxed(),
        ParamType::StringMap => prop::collection::btree_map(word(1..5), text(), 0..4)
            .prop_map(json_sample)
            .boxed(),
        ParamType::Counter => (0u8..6).prop_map(json_sample).boxed(),
    }
}

/// The fisk kind of a fixture parameter: its name in the `types` and `args` leaves (and the
/// leaf's name for `args cumulative <kind>`), plain text elsewhere.
fn kind_of(tool: &str, param: &str) -> String {
    if let Some(kind) = tool.strip_prefix("args_cumulative_") {
        return kind.to_string();
    }
    if tool.starts_with("types_") || tool.starts_with("args_") {
        return param.to_string();
    }
    "string".to_string()
}

/// Arguments for one tool: each optional flag present or not, a prefix of the positionals, and
/// `behave` kept from misbehaving. Returns what is sent and what fisk should print, by
/// `(section, name)`.
fn tool_arguments(tool: &str, params: &Params) -> BoxedStrategy<(Value, Vec<Printed>)> {
    let positional_params: Vec<usize> = params.positionals.iter().filter_map(|p| p.param).collect();
    let flag_params: Vec<usize> = params.flags.iter().map(|f| f.param).collect();
    let mut per_param: Vec<BoxedStrategy<Option<Sample>>> = Vec::new();
    for (index, param) in params.params.iter().enumerate() {
        let only_true = params.flags.iter().any(|flag| {
            flag.param == index
                && flag.render
                    == FlagRender::Switch {
                        defaults_to_true: true,
                    }
        });
        let values = match (tool, param.name.as_str()) {
            ("behave", "exit-code" | "repeat") => Just(json_sample(0)).boxed(),
            ("behave", "sleep") => Just((json!("0s"), Expect::Json(json!("0s")))).boxed(),
            ("behave", "ledger" | "signal") => Just((json!(""), Expect::Json(json!("")))).boxed(),
            ("behave", "ignore-term" | "hold-stdout") => {
                Just((json!(false), Expect::Json(json!(false)))).boxed()
            }
            ("ticker", "count") => Just(json_sample(0)).boxed(),
            ("ticker", "every") => Just((json!("0s"), Expect::Json(json!("0s")))).boxed(),
            ("ticker", "spawn") => Just(json_sample(false)).boxed(),
            _ if param.global => param_values(&param.ty, "string", only_true),
            _ => param_values(&param.ty, &kind_of(tool, &param.name), only_true),
        };
        let is_flag = flag_params.contains(&index);
        per_param.push(
            if param.required || (!is_flag && positional_params.contains(&index)) {
                values.prop_map(Some).boxed()
            } else {
                prop::option::of(values).boxed()
            },
        );
    }
    let first_optional = params
        .positionals
        .iter()
        .position(|step| {
            step.param
                .is_none_or(|index| !params.params[index].required)
        })
        .unwrap_or(params.positionals.len());
    let positional_count = first_optional..=params.positionals.len();
    let params = params.clone();
    (per_param, positional_count)
        .prop_map(move |(samples, count)| {
            let mut sent = Map::new();
            let mut expected = Vec::new();
            for (index, sample) in samples.into_iter().enumerate() {
                let Some((value, expect)) = sample else {
                    continue;
                };
                let param = &params.params[index];
                let positional = params
                    .positionals
                    .iter()
                    .position(|step| step.param == Some(index));
                let is_flag = params.flags.iter().any(|flag| flag.param == index);
                if let Some(position) = positional {
                    if !is_flag && position >= count && !param.required {
                        continue;
                    }
                    let printed = if is_flag {
                        // An argument sharing a flag's name is a string in the fixture.
                        Expect::Json(json!(token(&value)))
                    } else {
                        expect.clone()
                    };
                    expected.push(("args".to_string(), param.name.clone(), printed));
                }
                let empty = value.as_array().is_some_and(Vec::is_empty)
                    || value.as_object().is_some_and(Map::is_empty);
                if empty {
                    // `[]` and `{}` emit no token (as ArgsFromJSON), so fisk applies the
                    // flag's defaults, if it has any: nothing to compare.
                } else if param.global {
                    expected.push(("globals".to_string(), param.name.clone(), expect));
                } else if is_flag {
                    expected.push(("flags".to_string(), param.name.clone(), expect));
                }
                sent.insert(param.name.clone(), value);
            }
            (Value::Object(sent), expected)
        })
        .boxed()
}

/// A scalar as the command-line token fisk receives.
fn token(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn cases() -> u32 {
    std::env::var("FISKGEN_ARGV_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(6)
}

#[test]
fn every_leaf_parses_exactly_what_was_sent() -> Result<()> {
    let all = fixture_params();
    ensure!(all.len() == generated::TOOLS.len(), "every tool has params");
    let mut failures = Vec::new();
    for (tool, params) in all {
        let mut runner = TestRunner::new(Config {
            cases: cases(),
            failure_persistence: None,
            max_shrink_iters: 64,
            ..Config::default()
        });
        let result = runner.run(&tool_arguments(tool, params), |(sent, expected)| {
            let argv = build_argv(tool, &sent)
                .map_err(|error| TestCaseError::fail(error.to_string()))?
                .map_err(|error| TestCaseError::fail(format!("refused {sent}: {error}")))?;
            let printed = run_fixture(&argv).map_err(|error| TestCaseError::fail(format!("{error:#}")))?;
            for (section, name, expect) in &expected {
                let got = &printed[section.as_str()][name.as_str()];
                prop_assert!(
                    matches(expect, got),
                    "{tool} {section}.{name}: sent {sent}, argv {argv:?}, expected {expect:?}, fisk parsed {got}"
                );
            }
            Ok(())
        });
        if let Err(error) = result {
            failures.push(format!("{tool}: {error}"));
        }
    }
    ensure!(failures.is_empty(), "{}", failures.join("\n\n"));
    Ok(())
}

fn argv_of(tool: &str, arguments: Value) -> Result<Vec<String>> {
    build_argv(tool, &arguments)?.map_err(|error| anyhow::anyhow!(error))
}

fn refusal(tool: &str, arguments: Value) -> Result<String> {
    match build_argv(tool, &arguments)? {
        Ok(argv) => bail!("{tool} accepted {arguments}: {argv:?}"),
        Err(error) => Ok(error),
    }
}

#[test]
fn argv_follows_fisks_rules() -> Result<()> {
    assert_eq!(
        argv_of("options_same-name", json!({"name": 7, "profile": "p"}))?,
        ["options", "same-name", "--profile=p", "--name=7", "--", "7"],
        "one value for the flag and the argument of one name"
    );
    assert_eq!(
        argv_of(
            "options_defaults",
            json!({"profile": "p", "trace": false, "second": "2", "third": "3",
                   "env": {"b": "2", "a": "1"}, "verbose": true})
        )?,
        [
            "options",
            "defaults",
            "--no-trace",
            "--profile=p",
            "--verbose",
            "--env=a=1",
            "--env=b=2",
            "--",
            "one",
            "2",
            "3"
        ],
        "globals first, then flags in declaration order, then positionals with defaults"
    );
    assert_eq!(
        argv_of(
            "options_shorts",
            json!({"profile": "p", "verbose": 3, "all": false})
        )?,
        [
            "options",
            "shorts",
            "--profile=p",
            "--verbose",
            "--verbose",
            "--verbose"
        ],
        "a counter repeats its flag; an un-negatable false is left out"
    );
    assert_eq!(
        argv_of(
            "args_cumulative_counter",
            json!({"profile": "p", "values": 2})
        )?,
        [
            "args",
            "cumulative",
            "counter",
            "--profile=p",
            "--",
            "1",
            "1"
        ]
    );
    assert_eq!(
        argv_of(
            "cluster_node_label_set",
            json!({"profile": "p", "node": "n", "labels": {"z": "=", "a": ""}})
        )?,
        [
            "cluster",
            "node",
            "label",
            "set",
            "--profile=p",
            "--",
            "n",
            "a=",
            "z=="
        ]
    );
    assert_eq!(
        argv_of("ping", json!({"profile": "--count=9"}))?,
        ["ping", "--profile=--count=9"],
        "a value never becomes a flag"
    );
    Ok(())
}

#[test]
fn invalid_arguments_are_refused_in_plain_words() -> Result<()> {
    // Whole texts: the wording is part of the contract (runtime/src/mcp/arg_errors.rs).
    let exact = [
        (
            "types_numbers",
            json!({"profile": "p", "int8": "x"}),
            "property `int8`: expected an integer, got the string \"x\"",
        ),
        (
            "types_numbers",
            json!({"profile": "p", "int8": 300}),
            "property `int8`: expected an integer from -128 to 127, got the number 300",
        ),
        (
            "types_numbers",
            json!({"profile": "p", "uint64": -1}),
            "property `uint64`: expected an integer of 0 or more, got the number -1",
        ),
        (
            "options_required",
            json!({"profile": "p", "count": 1, "target": "t"}),
            "property `name` is required",
        ),
        (
            "ping",
            json!({"profile": "p", "colors": "purple"}),
            "property `colors`: must be one of \"auto\", \"always\", \"never\", got \"purple\"",
        ),
        (
            "options_defaults",
            json!({"profile": "p", "timeout": "1d"}),
            "property `timeout`: \"1d\" is not a duration such as 300ms, 1.5h or 2h45m (units ns, \
             us, ms, s, m, h)",
        ),
        (
            "types_scalars",
            json!({"profile": "p", "bool": "yes"}),
            "property `bool`: expected true or false, got the string \"yes\"",
        ),
    ];
    for (tool, arguments, message) in exact {
        let error = refusal(tool, arguments.clone())?;
        ensure!(
            error == format!("invalid arguments: {message}"),
            "{tool} {arguments}: {error:?}, expected {message:?}"
        );
    }
    let error = refusal("ping", json!({"profile": "p", "cuont": 1}))?;
    ensure!(
        error.starts_with("invalid arguments: unknown property `cuont` (the tool takes: ")
            && error.contains("count"),
        "{error:?}"
    );
    let named = [
        (
            "options_defaults",
            json!({"profile": "p", "verbose": false}),
            "`verbose`",
        ),
        (
            "types_units",
            json!({"profile": "p", "hex-bytes": "abc"}),
            "`hex-bytes`",
        ),
        (
            "options_shorts",
            json!({"profile": "p", "verbose": 256}),
            "`verbose`",
        ),
        (
            "options_remainder",
            json!({"profile": "p", "command": "c", "rest": ["--"]}),
            "`rest`",
        ),
        (
            "options_defaults",
            json!({"profile": "p", "third": "x"}),
            "`second`",
        ),
    ];
    for (tool, arguments, property) in named {
        let error = refusal(tool, arguments.clone())?;
        ensure!(
            error.starts_with("invalid arguments: property ") && error.contains(property),
            "{tool} {arguments}: {error:?} does not name {property}"
        );
    }
    Ok(())
}
