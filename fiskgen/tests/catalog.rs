//! Large-catalog warnings on the real natscli: its minimal config (every command, nothing gated)
//! is warned about once per case, each with the fix; the example config that gates natscli's
//! `impact:rw` commands and narrows the catalog is not.

use std::path::Path;
use std::process::Output;

use fiskgen_tests::apps::{self, App, workspace_root};

mod support;
use support::{fiskgen_command, text};

fn info(config: &Path) -> Output {
    let mut path = vec![apps::bin_dir().expect("fisk apps cache dir")];
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    fiskgen_command(Path::new("."))
        .arg("info")
        .arg(config)
        .env("PATH", std::env::join_paths(path).expect("PATH"))
        .output()
        .expect("fiskgen runs")
}

#[test]
fn the_minimal_natscli_config_is_warned_about_its_size_and_its_ungated_commands_once_each() {
    let nats = apps::path(App::Nats).expect("natscli builds");
    let scratch = tempfile::tempdir().expect("temp dir");
    let config = scratch.path().join("nats.yaml");
    std::fs::write(
        &config,
        format!(
            "application_path: {}\nexpose: {{agent: {{mcp: {{}}}}}}\n",
            nats.display()
        ),
    )
    .expect("config");
    let shown = info(&config);
    let out = text(&shown.stdout);
    assert!(shown.status.success(), "{}", text(&shown.stderr));
    let warnings: Vec<&str> = out
        .lines()
        .skip_while(|line| *line != "Warnings:")
        .take_while(|line| !line.is_empty())
        .collect();
    let count = |needle: &str| warnings.iter().filter(|w| w.contains(needle)).count();
    assert_eq!(
        count("tools are served; VS Code uses at most 128 tools in a session"),
        1,
        "{out}"
    );
    assert_eq!(count("the tool list is "), 1, "{out}");
    assert_eq!(count("KB (over 100 KB)"), 1, "{out}");
    assert_eq!(
        count(
            "no tool is gated behind the user's approval, but \
             "
        ),
        1,
        "{out}"
    );
    assert_eq!(
        count("gate them with `harness: {confirm_tags: [\"impact:rw\"]}`"),
        1,
        "natscli's own tag is the fix: {out}"
    );
}

#[test]
fn the_natscli_example_config_gets_no_catalog_warning() {
    apps::path(App::Nats).expect("natscli builds");
    let shown = info(&workspace_root().join("examples/nats/nats.yaml"));
    let out = text(&shown.stdout);
    assert!(shown.status.success(), "{}", text(&shown.stderr));
    for needle in [
        "VS Code uses at most",
        "the tool list is",
        "no tool is gated",
    ] {
        assert!(!out.contains(needle), "{needle:?} in:\n{out}");
    }
}
