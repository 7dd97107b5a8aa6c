//! `fiskgen build` end to end: the demo application becomes a release binary through fiskgen's
//! real cargo invocation, with the embedded runtime, in a target and cache directory of its own
//! (`target/fiskgen-e2e`, kept between runs so only the first one is slow).
//!
//! Ignored by default: the first (cold) run builds the runtime and its dependencies in release
//! mode, about three minutes on two cores; later runs take about ten seconds. Run it with
//! `cargo test -p fiskgen --test build -- --ignored`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use fiskgen_tests::apps::{self, App, workspace_root};
use serde_json::Value;

fn fiskgen(args: &[&str], cache: &Path) -> Output {
    let mut path = vec![apps::bin_dir().expect("fisk apps cache dir")];
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    Command::new(env!("CARGO_BIN_EXE_fiskgen"))
        .args(args)
        .current_dir(workspace_root())
        .env("PATH", std::env::join_paths(path).expect("PATH"))
        .env("XDG_CACHE_HOME", cache)
        .env_remove("FISKGEN_TARGET_DIR")
        .output()
        .expect("fiskgen runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn tool_names(json: &str) -> Vec<String> {
    let value: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    let tools = value.get("tools").unwrap_or(&value);
    tools
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str().map(str::to_string))
        .collect()
}

#[test]
#[ignore = "a cold release build of the runtime takes minutes; run with --ignored"]
fn build_compiles_a_working_server_and_rebuilds_only_the_generated_crate() {
    apps::path(App::Demo).expect("demo app builds");
    let scratch = tempfile::tempdir().expect("temp dir");
    let binary = scratch.path().join("tasks-mcp");
    let e2e: PathBuf = workspace_root().join("target").join("fiskgen-e2e");
    let cache = e2e.join("cache");
    let target = e2e.join("target");
    let target = target.to_str().expect("UTF-8 path");
    let args = [
        "build",
        "examples/demo/demo.yaml",
        "-o",
        binary.to_str().expect("UTF-8 path"),
        "--target-dir",
        target,
    ];

    let first = fiskgen(&args, &cache);
    assert!(first.status.success(), "{}", text(&first.stderr));
    let stdout = text(&first.stdout);
    assert!(
        stdout.contains("claude mcp add --transport http tasks"),
        "{stdout}"
    );

    let listed = Command::new(&binary)
        .args(["tools", "--json"])
        .output()
        .expect("the server runs");
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let info = fiskgen(&["info", "--json", "examples/demo/demo.yaml"], &cache);
    assert_eq!(
        tool_names(&text(&listed.stdout)),
        tool_names(&text(&info.stdout))
    );

    let again = fiskgen(&args, &cache);
    assert!(again.status.success(), "{}", text(&again.stderr));
    let log = text(&again.stderr);
    assert!(
        !log.contains("Compiling fiskgen-runtime"),
        "a second build reuses the runtime: {log}"
    );
}
