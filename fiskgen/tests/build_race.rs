//! `fiskgen build` runs that overlap: two builds of one identity from different configs, started
//! together twenty times, each install the binary of their own config (a build waits for the
//! other's lock and says so), and `-o DIR/` for a directory that does not exist yet. Against
//! fisk's own curl example, in the warm target directory `fiskgen build`'s other end-to-end test
//! uses (`target/fiskgen-e2e`).

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use fiskgen_tests::apps::{self, App};
use serde_json::Value;

mod support;
use support::{e2e, text};

/// `fiskgen ARGS` in `dir`, with the e2e cache and target directory, started in the background.
fn spawn_fiskgen(dir: &Path, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_fiskgen"))
        .args(args)
        .current_dir(dir)
        .env("XDG_CACHE_HOME", e2e().join("cache"))
        .env("FISKGEN_TARGET_DIR", e2e().join("target"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("fiskgen starts")
}

fn finish(child: Child) -> Output {
    child.wait_with_output().expect("fiskgen runs")
}

/// The tools a built server serves, by `<binary> tools --json`.
fn served(binary: &Path) -> Vec<String> {
    let listed = Command::new(binary)
        .args(["tools", "--json"])
        .output()
        .expect("the server runs");
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let value: Value = serde_json::from_slice(&listed.stdout).expect("JSON");
    let tools = value.get("tools").unwrap_or(&value);
    let mut names: Vec<String> = tools
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str().map(str::to_string))
        .collect();
    names.sort();
    names
}

/// Two configs of identity `racer` for fisk's curl example: `a.yaml` serves `get_url` alone,
/// `b.yaml` every command.
fn racer_configs(dir: &Path) {
    let curl = apps::path(App::FiskCurl).expect("fisk's curl example builds");
    let curl = curl.display();
    std::fs::write(
        dir.join("a.yaml"),
        format!(
            "identity: racer\napplication_path: {curl}\ninclude: {{tools: [\"^get_url$\"]}}\n\
             expose: {{agent: {{mcp: {{}}}}}}\n"
        ),
    )
    .expect("a.yaml");
    std::fs::write(
        dir.join("b.yaml"),
        format!("identity: racer\napplication_path: {curl}\nexpose: {{agent: {{mcp: {{}}}}}}\n"),
    )
    .expect("b.yaml");
}

#[test]
fn overlapping_builds_of_one_identity_each_install_their_own_configs_binary() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let dir = scratch.path();
    racer_configs(dir);
    let only_get_url = vec!["get_url".to_string()];
    // Once in turn: each config's crate is compiled once, so the overlapping runs below are
    // fresh for cargo and the test takes seconds per round, not minutes.
    for (config, out) in [("a.yaml", "A/"), ("b.yaml", "B/")] {
        let built = finish(spawn_fiskgen(dir, &["build", config, "-o", out]));
        assert!(built.status.success(), "{}", text(&built.stderr));
    }
    let every_tool = served(&dir.join("B/racer-mcp"));
    assert!(
        every_tool.len() > 1 && every_tool.contains(&"get_url".to_string()),
        "{every_tool:?}"
    );

    let mut waited = 0;
    for round in 0..20 {
        let a = spawn_fiskgen(dir, &["build", "a.yaml", "-o", "A/"]);
        let b = spawn_fiskgen(dir, &["build", "b.yaml", "-o", "B/"]);
        let (a, b) = (finish(a), finish(b));
        for (built, name) in [(&a, "a.yaml"), (&b, "b.yaml")] {
            assert!(
                built.status.success(),
                "round {round}, {name}: {}",
                text(&built.stderr)
            );
        }
        assert!(text(&a.stdout).contains("(1 tool)"), "{}", text(&a.stdout));
        assert_eq!(
            served(&dir.join("A/racer-mcp")),
            only_get_url,
            "round {round}"
        );
        assert_eq!(
            served(&dir.join("B/racer-mcp")),
            every_tool,
            "round {round}"
        );
        waited += [&a, &b]
            .iter()
            .filter(|built| {
                text(&built.stderr).contains("Waiting for another fiskgen build of racer-mcp")
            })
            .count();
    }
    // Started together, one build mostly finds the other holding the lock; it says so.
    assert!(waited > 0, "no build said it waited for the other");
}

#[test]
fn an_output_directory_with_a_trailing_slash_is_created_before_compiling() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let dir = scratch.path();
    racer_configs(dir);
    let built = finish(spawn_fiskgen(dir, &["build", "a.yaml", "-o", "new/sub/"]));
    assert!(built.status.success(), "{}", text(&built.stderr));
    assert!(
        text(&built.stdout).contains("Built new/sub/racer-mcp (1 tool)"),
        "{}",
        text(&built.stdout)
    );
    assert_eq!(served(&dir.join("new/sub/racer-mcp")), ["get_url"]);
}

#[test]
fn the_servers_banner_repeats_a_filter_entry_that_matches_nothing() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let dir = scratch.path();
    let curl = apps::path(App::FiskCurl).expect("fisk's curl example builds");
    std::fs::write(
        dir.join("typo.yaml"),
        format!(
            "identity: banner\napplication_path: {}\ninclude: {{tools: [\"^get_url$\", \
             \"^gte_file$\"]}}\nexpose: {{agent: {{mcp: {{}}}}}}\n",
            curl.display()
        ),
    )
    .expect("config");
    let built = finish(spawn_fiskgen(dir, &["build", "typo.yaml"]));
    assert!(built.status.success(), "{}", text(&built.stderr));
    assert!(
        text(&built.stderr)
            .contains("warning: include.tools pattern \"^gte_file$\" matches no tool"),
        "{}",
        text(&built.stderr)
    );
    // Started over stdio with nothing to read, the server prints its banner and ends.
    let started = Command::new(dir.join("banner-mcp"))
        .arg("--stdio")
        .stdin(Stdio::null())
        .output()
        .expect("the server runs");
    let banner = text(&started.stderr);
    assert!(
        banner.contains(
            "warning: include.tools pattern \"^gte_file$\" matches no tool of \"fisk-curl\""
        ),
        "{banner}"
    );
}
