//! Filters that match nothing and servers that would serve nothing, on fisk's own example
//! programs: `fiskgen info` names every include/exclude pattern and tag that matches no tool,
//! and `fiskgen build` of a config that serves no tool fails before compiling, saying why.

use std::path::Path;
use std::process::Output;

use fiskgen_tests::apps::{self, App};

mod support;
use support::{fiskgen_command, text};

/// `fiskgen ARGS` in `dir`, with a cache and target directory of its own under `dir` (so a
/// build that compiled anything would leave `dir/target` behind).
fn fiskgen(dir: &Path, args: &[&str]) -> Output {
    fiskgen_command(dir)
        .args(args)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("FISKGEN_TARGET_DIR", dir.join("target"))
        .output()
        .expect("fiskgen runs")
}

/// Writes `name` for `app` with the given config lines after `application_path`.
fn config(dir: &Path, name: &str, app: App, rest: &str) {
    let path = apps::path(app).expect("the fisk example builds");
    std::fs::write(
        dir.join(name),
        format!(
            "identity: ex\napplication_path: {}\n{rest}expose: {{agent: {{mcp: {{}}}}}}\n",
            path.display()
        ),
    )
    .expect("config");
}

#[test]
fn info_names_every_filter_entry_that_matches_no_tool() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let dir = scratch.path();
    config(
        dir,
        "typo.yaml",
        App::FiskCurl,
        "include: {tools: [\"^gte_\", \"^get_\"]}\nexclude: {tools: [\"^psot$\"], tags: [\"impact:rw\"]}\n",
    );
    let info = fiskgen(dir, &["info", "typo.yaml"]);
    let out = text(&info.stdout);
    assert!(info.status.success(), "{}", text(&info.stderr));
    for needle in [
        "include.tools pattern \"^gte_\" matches no tool of \"fisk-curl\"",
        "exclude.tools pattern \"^psot$\" matches no tool",
        "exclude.tags lists \"impact:rw\", but no command of \"fisk-curl\" carries that tag",
    ] {
        assert!(out.contains(needle), "{needle:?} in:\n{out}");
    }
    assert!(!out.contains("\"^get_\" matches no tool"), "{out}");
    assert!(
        out.contains("get_url"),
        "the matching pattern still serves: {out}"
    );
}

#[test]
fn the_narrowing_include_is_checked_too() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let dir = scratch.path();
    std::fs::write(
        dir.join("narrow.yaml"),
        format!(
            "identity: ex\napplication_path: {}\nexpose: {{agent: {{mcp: {{}}, tools: {{include: \
             {{tools: [\"^gte_url$\"]}}}}}}}}\n",
            apps::path(App::FiskCurl).expect("builds").display()
        ),
    )
    .expect("config");
    let info = fiskgen(dir, &["info", "narrow.yaml"]);
    let out = text(&info.stdout);
    assert!(
        out.contains("expose.agent.tools.include.tools pattern \"^gte_url$\" matches no tool"),
        "{out}{}",
        text(&info.stderr)
    );
}

#[test]
fn a_build_that_would_serve_nothing_fails_before_compiling_saying_which_filter_removed_what() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let dir = scratch.path();
    config(
        dir,
        "typo.yaml",
        App::FiskCurl,
        "include: {tools: [\"^gte_\"]}\n",
    );
    let built = fiskgen(dir, &["build", "typo.yaml"]);
    let err = text(&built.stderr);
    assert_eq!(built.status.code(), Some(1), "{err}");
    assert!(err.contains("typo.yaml serves no tool"), "{err}");
    assert!(
        err.contains("include removed 3 (get_url, get_file, post)"),
        "{err}"
    );
    assert!(err.contains("--allow-empty"), "{err}");
    assert!(!dir.join("target").exists(), "nothing was compiled");
    assert!(!dir.join("ex-mcp").exists(), "nothing was installed");
}

/// `--allow-empty` asks for the empty server on purpose: the emptiness no longer stops the
/// build, which goes on to its next check (here an output behind a file, so nothing compiles).
#[test]
fn allow_empty_lets_a_build_that_serves_nothing_past_the_emptiness_check() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let dir = scratch.path();
    config(
        dir,
        "typo.yaml",
        App::FiskCurl,
        "include: {tools: [\"^gte_\"]}\n",
    );
    std::fs::write(dir.join("in-the-way"), "a file").expect("write");
    let built = fiskgen(
        dir,
        &[
            "build",
            "typo.yaml",
            "--allow-empty",
            "-o",
            "in-the-way/ex-mcp",
        ],
    );
    let err = text(&built.stderr);
    assert_eq!(built.status.code(), Some(1), "{err}");
    assert!(!err.contains("serves no tool"), "{err}");
    assert!(err.contains("is not a directory"), "{err}");
    assert!(!dir.join("target").exists(), "nothing was compiled");
}

#[test]
fn a_root_only_application_fails_the_build_because_only_subcommands_become_tools() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let dir = scratch.path();
    config(dir, "ping.yaml", App::FiskPing, "");
    let info = fiskgen(dir, &["info", "ping.yaml"]);
    let out = text(&info.stdout);
    assert!(
        out.contains("only subcommands become tools, and \"fisk-ping\" has none"),
        "{out}"
    );
    assert!(out.contains("its arguments ip, count"), "{out}");
    let built = fiskgen(dir, &["build", "ping.yaml"]);
    let err = text(&built.stderr);
    assert_eq!(built.status.code(), Some(1), "{err}");
    assert!(err.contains("only subcommands become tools"), "{err}");
    assert!(!dir.join("target").exists(), "nothing was compiled");
}
