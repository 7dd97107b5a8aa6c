//! Every `--help` text is a golden file in `tests/golden/help/`: fiskgen's own, each of its
//! subcommands', and the generated binary's (the golden demo server `tasks-mcp`) with each of
//! its subcommands'. A changed flag or wording shows up as a reviewable diff.
//!
//! Update them with `EXPECTORATE=overwrite cargo test -p fiskgen --test help` (or
//! `FISKGEN_BLESS=1`), then review `git diff tests/golden/help`.

use std::path::{Path, PathBuf};
use std::process::Command;

use fiskgen_tests::apps::workspace_root;

fn golden_dir() -> PathBuf {
    workspace_root().join("tests/golden/help")
}

/// The help text of `program args... --help`, at a fixed width.
fn help(program: &Path, args: &[&str]) -> String {
    let output = Command::new(program)
        .args(args)
        .arg("--help")
        // clap wraps to the terminal; tests have none, and COLUMNS pins the width anyway.
        .env("COLUMNS", "100")
        .output()
        .unwrap_or_else(|error| panic!("running {}: {error}", program.display()));
    assert!(
        output.status.success(),
        "{} {args:?} --help failed: {}",
        program.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("help is UTF-8")
}

/// The subcommands a help text lists under `Commands:` (without `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| line.trim() != "Commands:")
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        // A name is indented by two; a wrapped description by more.
        .filter(|line| !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// Compares (or, when blessing, rewrites) one golden help file.
fn check(name: &str, text: &str) {
    let path = golden_dir().join(format!("{name}.txt"));
    if std::env::var_os("FISKGEN_BLESS").is_some_and(|v| !v.is_empty() && v != "0") {
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        return;
    }
    expectorate::assert_contents(&path, text);
}

/// Checks `program --help` and every subcommand's, named `<stem>` and `<stem>-<subcommand>`.
fn check_tree(program: &Path, stem: &str) {
    let top = help(program, &[]);
    check(stem, &top);
    let names = subcommands(&top);
    assert!(
        !names.is_empty(),
        "{stem} --help lists no subcommands:\n{top}"
    );
    for name in names {
        check(&format!("{stem}-{name}"), &help(program, &[&name]));
    }
}

#[test]
fn fiskgen_help_texts_match_their_goldens() {
    check_tree(Path::new(env!("CARGO_BIN_EXE_fiskgen")), "fiskgen");
}

#[test]
fn the_generated_binary_help_texts_match_their_goldens() {
    let server = fiskgen_tests::clients::demo_server().expect("the golden demo server is built");
    check_tree(&server, "tasks-mcp");
}

#[test]
fn every_help_golden_belongs_to_a_current_help_text() {
    let fiskgen_top = help(Path::new(env!("CARGO_BIN_EXE_fiskgen")), &[]);
    let server = fiskgen_tests::clients::demo_server().expect("the golden demo server is built");
    let server_top = help(&server, &[]);
    let mut expected: Vec<String> = vec!["fiskgen".into(), "tasks-mcp".into()];
    expected.extend(
        subcommands(&fiskgen_top)
            .iter()
            .map(|s| format!("fiskgen-{s}")),
    );
    expected.extend(
        subcommands(&server_top)
            .iter()
            .map(|s| format!("tasks-mcp-{s}")),
    );
    expected.sort();
    let mut present: Vec<String> = std::fs::read_dir(golden_dir())
        .expect("tests/golden/help exists")
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".txt").map(str::to_string)
        })
        .collect();
    present.sort();
    assert_eq!(
        present, expected,
        "stale or missing files in tests/golden/help"
    );
}
