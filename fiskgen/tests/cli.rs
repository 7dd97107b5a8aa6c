//! The `fiskgen` binary end to end, against the real fisk applications built from source
//! (`fiskgen_tests::apps`): what `info` and `introspect` print, and the error for each kind of
//! bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use fiskgen_tests::apps::{self, App};
use serde_json::Value;

/// Runs `fiskgen` with `args` and the built applications first on PATH.
fn fiskgen(args: &[&str]) -> Output {
    let mut path = vec![apps::bin_dir().expect("fisk apps cache dir")];
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    Command::new(env!("CARGO_BIN_EXE_fiskgen"))
        .args(args)
        .env("PATH", std::env::join_paths(path).expect("PATH"))
        .env("COLUMNS", "80")
        .env_remove("FISKGEN_LOG")
        .output()
        .expect("fiskgen runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs `fiskgen` and expects success.
fn ok(args: &[&str]) -> String {
    let output = fiskgen(args);
    assert!(
        output.status.success(),
        "fiskgen {args:?} failed:\n{}",
        stderr(&output)
    );
    stdout(&output)
}

/// Runs `fiskgen` and expects exit status 1; returns stderr.
fn fails(args: &[&str]) -> String {
    let output = fiskgen(args);
    assert_eq!(
        output.status.code(),
        Some(1),
        "fiskgen {args:?}:\n{}{}",
        stdout(&output),
        stderr(&output)
    );
    stderr(&output)
}

fn info_json(args: &[&str]) -> Value {
    let mut all = vec!["info", "--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&ok(&all)).expect("info --json prints JSON")
}

fn tool_names(info: &Value) -> Vec<&str> {
    info["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|tool| tool["name"].as_str().expect("name"))
        .collect()
}

fn tool<'a>(info: &'a Value, name: &str) -> &'a Value {
    info["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|tool| tool["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

fn example(path: &str) -> String {
    apps::workspace_root().join(path).display().to_string()
}

/// A config in a temp dir, serving `app` (an absolute path).
fn config_for(dir: &Path, app: &Path, extra: &str) -> PathBuf {
    let path = dir.join("fiskgen.yaml");
    let text = format!(
        "application_path: {}\nexpose: {{agent: {{mcp: {{}}}}}}\n{extra}",
        app.display()
    );
    std::fs::write(&path, text).expect("write config");
    path
}

/// A shell script standing in for an application. A child shell writes it, so this process
/// never holds a writable descriptor of a file another test thread may execute (ETXTBSY).
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    let status = Command::new("/bin/sh")
        .args(["-c", "printf '%s\\n' \"$2\" > \"$1\" && chmod 755 \"$1\""])
        .arg("sh")
        .arg(&path)
        .arg(format!("#!/bin/sh\n{body}"))
        .status()
        .expect("run /bin/sh");
    assert!(status.success(), "writing {}", path.display());
    path
}

#[test]
fn info_on_the_demo_shows_the_served_set_as_a_table_within_80_columns() {
    apps::path(App::Demo).expect("demo app builds");
    let text = ok(&["info", &example("examples/demo/demo.yaml")]);
    assert!(
        text.starts_with("MCP server \"tasks\": 8 tools from tasks 1.0.0"),
        "{text}"
    );
    for line in text
        .lines()
        .filter(|line| !line.starts_with("application: "))
    {
        assert!(
            line.chars().count() <= 80,
            "line wider than 80 columns: {line:?}"
        );
    }
    assert!(
        text.contains("task_delete   ai:confirm  -d---  Delete a task"),
        "{text}"
    );
    assert!(text.contains("--store  [exposed]"), "{text}");
    assert!(
        !text.lines().any(|line| line.starts_with("store_purge")),
        "ai:deny never served:\n{text}"
    );
    assert!(
        text.contains("1 command tagged ai:deny is never served: store_purge"),
        "{text}"
    );
    // Access and run-time narrowing facts.
    assert!(
        text.contains("Access over HTTP:\n  no authentication"),
        "{text}"
    );
    assert!(
        text.contains(
            "  --read-only keeps 4 of 8 tools: task_list, task_show, note_search,\n    store_export"
        ),
        "{text}"
    );
    assert!(
        text.contains("  --tags takes: ai:confirm, ai:destructive"),
        "{text}"
    );
    // Who is asked, refused or run ungated, per transport, for the config's mode.
    let confirmation = text
        .split_once("\nConfirmation (1 tool requires approval; confirm_over_mcp: auto):\n")
        .map(|(_, rest)| rest.replace("\n    ", " "))
        .unwrap_or_else(|| panic!("no confirmation section in\n{text}"));
    for line in [
        "  - stdio and HTTP with sessions (configured): clients that declare elicitation are \
         asked; clients that declare none run ungated, with a warning.",
        "  - HTTP stateless: 2026-07-28 clients that declare elicitation are asked; 2025-era \
         clients that declare it are refused (a stateless server cannot send them a request), as \
         are 2025-era requests without this server's Mcp-Session-Id; clients that declare none \
         run ungated, with a warning.",
        "  - with --confirm always, clients that declare no elicitation are refused too; with \
         --confirm never, every call runs ungated.",
    ] {
        assert!(
            confirmation.contains(line),
            "no {line:?} in\n{confirmation}"
        );
    }
}

#[test]
fn info_shows_what_an_authenticated_server_accepts() {
    apps::path(App::Demo).expect("demo app builds");
    let text = ok(&["info", &example("tests/fixtures/auth.yaml")]);
    for expected in [
        "  bearer token from the environment variable TASKS_AUTH_TOKEN",
        "  header X-Api-Key compared with the environment variable TASKS_AUTH_KEY",
        "  every request needs scope tasks:read",
        "  tools/call needs scope tasks:run",
    ] {
        assert!(text.contains(expected), "{expected:?} missing:\n{text}");
    }
    assert!(
        text.contains("OAuth access tokens (JWT) for resource https://tasks.example.test/mcp"),
        "{text}"
    );
    assert!(
        text.contains("https://tasks.example.test/.well-known/oauth-protected-resource/mcp"),
        "{text}"
    );
    let info = info_json(&[&example("tests/fixtures/auth.yaml")]);
    assert_eq!(
        info["access"][0],
        "bearer token from the environment variable TASKS_AUTH_TOKEN"
    );
    assert_eq!(
        info["narrowing"]["read_only"],
        serde_json::json!(["task_list", "task_show", "note_search", "store_export"])
    );
    assert_eq!(info["identity"], "tasks-auth");
}

#[test]
fn info_json_on_the_demo_is_stable_and_whole() {
    apps::path(App::Demo).expect("demo app builds");
    let config = example("examples/demo/demo.yaml");
    let first = ok(&["info", "--json", &config]);
    assert_eq!(
        first,
        ok(&["info", "--json", &config]),
        "same input, same bytes"
    );
    let info: Value = serde_json::from_str(&first).expect("JSON");
    assert_eq!(
        tool_names(&info),
        [
            "task_add",
            "task_list",
            "task_show",
            "task_done",
            "task_delete",
            "note_add",
            "note_search",
            "store_export"
        ]
    );
    let delete = tool(&info, "task_delete");
    assert_eq!(delete["title"], "task delete");
    assert_eq!(delete["kind"], "command");
    assert_eq!(delete["command"], serde_json::json!(["task", "delete"]));
    assert_eq!(delete["confirm"]["trigger"], "ai:confirm");
    assert_eq!(delete["hints"], serde_json::json!(["destructive"]));
    assert!(
        delete["description"]
            .as_str()
            .expect("text")
            .ends_with("Tags: ai:destructive, ai:confirm, impact:rw")
    );
    assert_eq!(
        delete["input_schema"]["properties"]["store"]["description"],
        "Global flag: Path of the JSON store file"
    );
    assert_eq!(
        tool(&info, "note_add")["hints"],
        serde_json::json!([]),
        "untagged commands send no hints"
    );
    assert_eq!(info["global_flags"][0]["exposed"], true);
}

#[test]
fn info_on_nats_serves_stream_tools_with_hints_and_confirmation() {
    apps::path(App::Nats).expect("nats builds");
    let info = info_json(&[&example("examples/nats/nats.yaml")]);
    let names = tool_names(&info);
    assert!(names.len() > 15, "{names:?}");
    assert!(
        names
            .iter()
            .all(|name| ["stream_", "consumer_", "kv_", "object_"]
                .iter()
                .any(|group| name.starts_with(group))),
        "the JetStream groups: {names:?}"
    );
    for interactive in ["stream_view", "stream_graph", "consumer_graph", "kv_watch"] {
        assert!(
            !names.contains(&interactive),
            "{interactive} only works at a terminal: {names:?}"
        );
    }
    for tool in info["tools"].as_array().expect("tools") {
        let tags: Vec<&str> = tool["tags"]
            .as_array()
            .expect("tags")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let hints = tool["hints"].as_array().expect("hints");
        let read_only = hints.contains(&Value::from("read_only"));
        assert_eq!(read_only, tags.contains(&"impact:ro"), "{}", tool["name"]);
        let destructive = hints.contains(&Value::from("destructive"));
        assert_eq!(destructive, tags.contains(&"impact:rw"), "{}", tool["name"]);
        let gated = tool["confirm"]["trigger"] == "impact:rw";
        assert_eq!(gated, tags.contains(&"impact:rw"), "{}", tool["name"]);
        assert!(!tags.contains(&"ai:deny"));
    }
    assert_eq!(
        tool(&info, "stream_info")["hints"],
        serde_json::json!(["read_only"])
    );
    assert_eq!(tool(&info, "stream_rm")["confirm"]["trigger"], "impact:rw");
}

#[test]
fn introspect_saves_a_model_that_info_reads_back() {
    let fixture = apps::path(App::Fixture).expect("fixture builds");
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config_for(dir.path(), &fixture, "");
    let model = dir.path().join("model.json");
    ok(&[
        "introspect",
        config.to_str().expect("utf-8"),
        "-o",
        model.to_str().expect("utf-8"),
    ]);
    let saved = std::fs::read_to_string(&model).expect("model written");
    assert!(
        saved.starts_with("{\n  \"args\"") || saved.starts_with("{\n  \"author\""),
        "sorted, pretty: {}",
        &saved[..40]
    );
    assert!(saved.ends_with("}\n"));
    assert_eq!(
        saved,
        ok(&["introspect", "--app", fixture.to_str().expect("utf-8")]),
        "stable output"
    );

    let from_app = info_json(&[config.to_str().expect("utf-8")]);
    let from_model = info_json(&[
        config.to_str().expect("utf-8"),
        "--model",
        model.to_str().expect("utf-8"),
    ]);
    assert_eq!(from_app["tools"], from_model["tools"]);
}

#[test]
fn a_broken_yaml_is_reported_with_its_position() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("broken.yaml");
    std::fs::write(&config, "identity: demo\ninclude: {tools: [\"^a\"\n").expect("write");
    let error = fails(&["info", config.to_str().expect("utf-8")]);
    assert!(error.contains("broken.yaml:"), "{error}");
}

#[test]
fn unknown_keys_and_bad_regexes_are_all_reported_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("typos.yaml");
    std::fs::write(
        &config,
        "include:\n  tools: [\"(unclosed\"]\nexpose:\n  agent:\n    mcp:\n      tool_timout: 30s\n",
    )
    .expect("write");
    let error = fails(&["info", config.to_str().expect("utf-8")]);
    assert!(
        error.contains("typos.yaml:2:"),
        "bad regex with its line: {error}"
    );
    assert!(
        error.contains("invalid tool filter pattern \"(unclosed\""),
        "{error}"
    );
    assert!(
        error.contains("typos.yaml:6:7"),
        "unknown key with line and column: {error}"
    );
    assert!(
        error.contains("\"tool_timeout\""),
        "nearest key suggested: {error}"
    );
}

#[test]
fn a_typo_in_global_flags_names_the_nearest_flag() {
    let fixture = apps::path(App::Fixture).expect("fixture builds");
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config_for(dir.path(), &fixture, "global_flags: [trcae]\n");
    let error = fails(&["info", config.to_str().expect("utf-8")]);
    assert!(
        error.contains("global_flags entry \"trcae\" matches no global flag of application \"fixture\"; did you mean \"trace\"?"),
        "{error}"
    );
}

#[test]
fn an_application_built_with_an_old_fisk_is_refused_with_the_version_needed() {
    let old = apps::path(App::OldFisk).expect("oldfisk builds");
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config_for(dir.path(), &old, "");
    let error = fails(&["info", config.to_str().expect("utf-8")]);
    assert!(error.contains("v0.9.0"), "{error}");
    assert!(error.contains("oldfisk"), "{error}");
}

#[test]
fn an_application_printing_garbage_is_not_a_fisk_application() {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = script(
        dir.path(),
        "garbage",
        "echo 'this is not JSON'\necho '<html>'",
    );
    let config = config_for(dir.path(), &app, "");
    let error = fails(&["info", config.to_str().expect("utf-8")]);
    assert!(error.contains("fisk"), "{error}");
    assert!(error.contains("garbage"), "{error}");
}

#[test]
fn an_application_printing_20_mb_is_stopped_at_the_cap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = script(
        dir.path(),
        "flood",
        "head -c 20000000 /dev/zero | tr '\\0' 'x'",
    );
    let config = config_for(dir.path(), &app, "");
    let error = fails(&["info", config.to_str().expect("utf-8")]);
    assert!(error.contains("more than 16777216 bytes"), "{error}");
}

#[test]
fn a_missing_application_says_where_it_was_looked_for() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config_for(dir.path(), Path::new("no-such-fisk-app"), "");
    let error = fails(&["info", config.to_str().expect("utf-8")]);
    assert!(
        error.contains("\"no-such-fisk-app\" was not found on PATH"),
        "{error}"
    );
}

#[test]
fn without_an_application_only_builtins_are_served_and_nothing_is_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("builtins.yaml");
    std::fs::write(
        &config,
        "harness:\n  tools: [{name: read_file}]\nexpose: {agent: {mcp: {}}}\n",
    )
    .expect("write");
    let info = info_json(&[config.to_str().expect("utf-8")]);
    assert_eq!(info["identity"], "fisk");
    assert_eq!(info["application"], Value::Null);
    assert_eq!(tool_names(&info), ["read_file"]);
}

#[test]
fn usage_errors_exit_2() {
    let output = fiskgen(&["info"]);
    assert_eq!(output.status.code(), Some(2));
    let output = fiskgen(&["info", "x.yaml", "--app", "a", "--model", "b"]);
    assert_eq!(
        output.status.code(),
        Some(2),
        "--app and --model exclude each other"
    );
}

/// Edits the command at `path` of a saved model.
fn edit_command(
    document: &mut Value,
    path: &[&str],
    edit: impl FnOnce(&mut serde_json::Map<String, Value>),
) {
    let mut commands = document["commands"].as_array_mut().expect("commands");
    for (depth, name) in path.iter().enumerate() {
        let command = commands
            .iter_mut()
            .find(|c| c["name"] == *name)
            .expect("command on path");
        if depth + 1 == path.len() {
            edit(command.as_object_mut().expect("object"));
            return;
        }
        commands = command["commands"].as_array_mut().expect("subcommands");
    }
}

#[test]
fn check_reports_drift_in_served_tools_only() {
    let fixture = apps::path(App::Fixture).expect("fixture builds");
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config_for(dir.path(), &fixture, "");
    let config = config.to_str().expect("utf-8");
    let baseline = dir.path().join("model.json");
    ok(&[
        "introspect",
        config,
        "-o",
        baseline.to_str().expect("utf-8"),
    ]);

    // Nothing changed: exit 0.
    let output = fiskgen(&["check", config]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).contains("up to date"));

    // A change in a hidden command is reported but is not drift.
    let mut document: Value =
        serde_json::from_str(&std::fs::read_to_string(&baseline).expect("read")).expect("json");
    edit_command(&mut document, &["debug"], |debug| {
        debug.insert("help".into(), Value::from("changed help of a hidden group"));
    });
    let hidden_only = dir.path().join("hidden-only.json");
    std::fs::write(&hidden_only, document.to_string()).expect("write");
    let output = fiskgen(&[
        "check",
        config,
        "--current",
        hidden_only.to_str().expect("utf-8"),
    ]);
    assert_eq!(output.status.code(), Some(0));
    assert!(stdout(&output).contains("the application changed, but nothing the server serves did"));

    // Served changes: a removed command, a new tag, a retyped and a newly required parameter.
    let mut document: Value =
        serde_json::from_str(&std::fs::read_to_string(&baseline).expect("read")).expect("json");
    document["commands"]
        .as_array_mut()
        .expect("commands")
        .retain(|c| c["name"] != "ping");
    edit_command(&mut document, &["tags", "free-form"], |command| {
        command["tags"]
            .as_array_mut()
            .expect("tags")
            .push(Value::from("ai:confirm"));
    });
    // A retyped parameter changes both schemas an application prints, as a real upgrade does.
    edit_command(&mut document, &["options", "remainder"], |command| {
        for key in ["schema", "restricted_schema"] {
            let schema = command[key].as_object_mut().expect("schema");
            schema["properties"]["command"]["type"] = Value::from("integer");
            schema.insert("required".into(), serde_json::json!(["command", "rest"]));
        }
    });
    let upgraded = dir.path().join("upgraded.json");
    std::fs::write(&upgraded, document.to_string()).expect("write");
    let output = fiskgen(&[
        "check",
        config,
        "--model",
        baseline.to_str().expect("utf-8"),
        "--current",
        upgraded.to_str().expect("utf-8"),
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report = stdout(&output);
    for expected in [
        "- ping (no longer served)",
        "~ tags_free-form",
        "tags: [scope:user, impact:rw, owner: team <a&b>] -> [scope:user, impact:rw, owner: team <a&b>, ai:confirm]",
        "confirmation: none -> ai:confirm",
        "~ options_remainder",
        "parameter command: type string -> integer",
        "parameter rest: now required",
        "Regenerate: fiskgen introspect",
    ] {
        assert!(
            report.contains(expected),
            "missing {expected:?} in:\n{report}"
        );
    }

    // Errors exit 2.
    let output = fiskgen(&["check", config, "--model", "/nonexistent/model.json"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("/nonexistent/model.json"));
}

#[test]
fn check_detects_the_simulated_demo_upgrade() {
    let v1 = apps::path(App::Demo).expect("demo builds");
    let v2 = apps::path(App::DemoV2).expect("demo v2 builds");
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config_for(dir.path(), &v1, "identity: tasks\n");
    let config = config.to_str().expect("utf-8");
    let model = dir.path().join("model.json");
    ok(&["introspect", config, "-o", model.to_str().expect("utf-8")]);

    let same = fiskgen(&["check", config, "--model", model.to_str().expect("utf-8")]);
    assert_eq!(same.status.code(), Some(0), "{}", stderr(&same));

    let output = fiskgen(&[
        "check",
        config,
        "--model",
        model.to_str().expect("utf-8"),
        "--app",
        v2.to_str().expect("utf-8"),
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report = stdout(&output);
    assert!(report.contains("+ task_archive (new tool)"), "{report}");
    assert!(
        report.contains("- note_search (no longer served)"),
        "{report}"
    );
    assert!(report.contains("~ task_add\n    parameter priority: values [low, normal, high] -> [low, normal, high, urgent]"), "{report}");
}

#[test]
fn info_shows_which_tools_may_become_tasks_and_when() {
    apps::path(App::Demo).expect("demo app builds");
    let demo = example("examples/demo/demo.yaml");
    let text = ok(&["info", &demo]);
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "Tasks: for clients that declare the tasks extension, a call still running after 2s \
             becomes a task (kept 1h0m0s after it ends, at most 64 held at once)"
        ),
        "{text}"
    );
    assert!(flat.contains("May become tasks: all 8 tools."), "{text}");
    let info = info_json(&[&demo]);
    assert_eq!(info["tasks"]["after_ms"], 2000);
    assert_eq!(info["tasks"]["ttl_ms"], 3_600_000);
    assert_eq!(info["tasks"]["max"], 64);
    let names: Vec<Value> = tool_names(&info).into_iter().map(Value::from).collect();
    assert_eq!(info["tasks"]["tools"], Value::Array(names));

    // Off: said so, and nothing in the JSON.
    let dir = tempfile::tempdir().expect("tempdir");
    let off = dir.path().join("off.yaml");
    std::fs::write(
        &off,
        "application_path: tasks\nexpose: {agent: {mcp: {tasks: false}}}\n",
    )
    .expect("write");
    let off = off.to_str().expect("utf-8");
    let text = ok(&["info", off]);
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "Tasks: off (expose.agent.mcp.tasks: false): every call answers on its request."
        ),
        "{text}"
    );
    assert_eq!(info_json(&[off]).get("tasks"), None);
}

#[test]
fn info_shows_each_tools_questions_and_leaves_the_asked_parameters_out_of_its_schema() {
    let app = apps::path(App::Conformance).expect("conformance app builds");
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |name: &str, ask: &str| {
        let path = dir.path().join(name);
        let text = format!(
            "application_path: {}\nexpose: {{agent: {{mcp: {{ask: {ask}}}}}}}\n",
            app.display()
        );
        std::fs::write(&path, text).expect("write config");
        path.display().to_string()
    };
    let config = write(
        "ask.yaml",
        "{test_input_required_result_multi_round: {step1: [name], step2: [color]}}",
    );
    let text = ok(&["info", &config]);
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("Questions (expose.agent.mcp.ask): these parameters are the user's"),
        "{text}"
    );
    assert!(
        flat.contains("test_input_required_result_multi_round: step1 [name], then step2 [color]"),
        "{text}"
    );
    let info = info_json(&[&config]);
    let rounds = tool(&info, "test_input_required_result_multi_round");
    assert_eq!(
        rounds["questions"],
        serde_json::json!([{"name": "step1", "params": ["name"]}, {"name": "step2", "params": ["color"]}])
    );
    assert_eq!(rounds["input_schema"]["properties"], serde_json::json!({}));
    assert!(
        tool(&info, "greet").get("questions").is_none(),
        "a tool that asks nothing lists no questions"
    );

    let bad = write("bad.yaml", "{greet: {who: [nmae]}}");
    let error = fails(&["info", &bad]);
    assert!(
        error.contains(
            "tool \"greet\": ask: question \"who\" names parameter \"nmae\", which the tool does \
             not have (its parameters: punctuation, name)"
        ),
        "{error}"
    );
    let twice = write("twice.yaml", "{greet: {who: [name], again: [name]}}");
    let error = fails(&["info", &twice]);
    assert!(
        error.contains("parameter \"name\" is already asked by question \"who\" of tool \"greet\""),
        "{error}"
    );
}

#[test]
fn info_shows_the_task_required_tools_and_that_a_non_zero_exit_is_a_tool_error() {
    apps::path(App::Conformance).expect("conformance app builds");
    let text = ok(&["info", &example("tests/fixtures/conformance.yaml")]);
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for expected in [
        "Task-required (tasks.required): failing_job, test_tool_with_task. A call by a client \
         that declares the tasks extension is a task at once; any other client is refused with \
         -32021",
        "Results (exit_code_is_error): a command that exits non-zero or is killed by a signal \
         answers isError: true",
    ] {
        assert!(flat.contains(expected), "{expected:?} missing:\n{text}");
    }
    let info = info_json(&[&example("tests/fixtures/conformance.yaml")]);
    assert_eq!(
        info["tasks"]["required"],
        serde_json::json!(["failing_job", "test_tool_with_task"])
    );
    let demo = ok(&["info", &example("examples/demo/demo.yaml")]);
    assert!(
        !demo.contains("Task-required") && !demo.contains("exit_code_is_error"),
        "{demo}"
    );
}

#[test]
fn info_names_the_headers_a_client_mirrors_parameters_in() {
    apps::path(App::Conformance).expect("conformance app builds");
    let config = example("tests/fixtures/conformance.yaml");
    let text = ok(&["info", &config]);
    assert!(
        text.contains("test_prompt_with_embedded_resource.resourceUri: Mcp-Param-Resource-Uri"),
        "{text}"
    );
    let info = info_json(&[&config]);
    assert_eq!(
        info["param_headers"],
        serde_json::json!({
            "test_prompt_with_embedded_resource": {"resourceUri": "Mcp-Param-Resource-Uri"}
        })
    );
    // Without param_headers the key is there, empty, and the text says nothing.
    let demo = example("examples/demo/demo.yaml");
    assert_eq!(info_json(&[&demo])["param_headers"], serde_json::json!({}));
    assert!(!ok(&["info", &demo]).contains("Mcp-Param-"));
}

#[test]
fn info_json_names_the_own_name_of_each_tool_served_under_another() {
    let demo = apps::path(App::Demo).expect("demo app builds");
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("renamed.yaml");
    std::fs::write(
        &config,
        format!(
            "application_path: {}\nexpose:\n  agent:\n    mcp:\n      tool_prefix: demo_\n      \
             tool_names:\n        task_list: tasks\n",
            demo.display()
        ),
    )
    .expect("write");
    let info = info_json(&[config.to_str().expect("utf-8")]);
    assert_eq!(tool(&info, "tasks")["own_name"], "task_list");
    assert_eq!(tool(&info, "demo_task_add")["own_name"], "task_add");
    // A tool served under its own name has none: the key says a name differs.
    let plain = info_json(&[&example("examples/demo/demo.yaml")]);
    assert_eq!(tool(&plain, "task_add").get("own_name"), None);
}
