//! The README's commands are each run by a test: docs/readme-commands.md maps every line of the
//! README's `sh` blocks to the tests that run it, and this module holds the map to the README
//! and to the test sources, so neither a new README command nor a renamed test goes unmapped.

use std::collections::BTreeSet;
use std::fs;

use anyhow::{Context, Result, bail};
use fiskgen_tests::apps::workspace_root;

/// The commands of the README's ```sh blocks: one per line, continuation lines (indented)
/// joined to the line before, trailing `# comments` dropped, spaces collapsed.
fn readme_commands(readme: &str) -> Vec<String> {
    let mut commands: Vec<String> = Vec::new();
    let mut in_sh = false;
    for line in readme.lines() {
        if let Some(fence) = line.strip_prefix("```") {
            in_sh = !in_sh && fence.trim() == "sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        let code = line.split("  #").next().unwrap_or_default();
        if code.trim().is_empty() || code.trim_start().starts_with('#') {
            continue;
        }
        let code = collapse(code);
        match commands.last_mut() {
            Some(last) if line.starts_with(' ') => {
                last.push(' ');
                last.push_str(&code);
            }
            _ => commands.push(code),
        }
    }
    commands
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One row of the map: the command and the tests that run it.
struct Row {
    command: String,
    tests: Vec<String>,
}

/// The rows of the table in docs/readme-commands.md: `| `command` | `test`, `test` | note |`.
fn map_rows(map: &str) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for line in map.lines().filter(|line| line.starts_with("| `")) {
        let cells = split_cells(line);
        let [command, tests, ..] = cells.as_slice() else {
            bail!("docs/readme-commands.md: a row needs a command and its tests: {line}");
        };
        let tests: Vec<String> = tests
            .split(',')
            .map(|test| test.trim().trim_matches('`').to_string())
            .filter(|test| !test.is_empty())
            .collect();
        rows.push(Row {
            command: collapse(command.trim().trim_matches('`')),
            tests,
        });
    }
    Ok(rows)
}

/// The cells of a Markdown table row, with `\|` unescaped.
fn split_cells(line: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut chars = line.trim().trim_start_matches('|').chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                chars.next();
                if let Some(cell) = cells.last_mut() {
                    cell.push('|');
                }
            }
            '|' => cells.push(String::new()),
            c => {
                if let Some(cell) = cells.last_mut() {
                    cell.push(c);
                }
            }
        }
    }
    cells.retain(|cell| !cell.trim().is_empty());
    cells
}

/// Checks that a test reference names a test that exists and runs by default:
/// `path/to/file.rs::function` (a `#[test]` function, not `#[ignore]`d) or `.ci/run: TEXT`
/// (CI's script runs `TEXT`).
fn check_test(reference: &str) -> Result<()> {
    let root = workspace_root();
    if let Some(text) = reference.strip_prefix(".ci/run: ") {
        let script = fs::read_to_string(root.join(".ci/run")).context("reading .ci/run")?;
        if !script.lines().any(|line| line.trim() == text) {
            bail!(".ci/run has no line `{text}`");
        }
        return Ok(());
    }
    let (file, function) = reference
        .split_once("::")
        .with_context(|| format!("`{reference}` is neither FILE::FUNCTION nor `.ci/run: TEXT`"))?;
    let source = fs::read_to_string(root.join(file)).with_context(|| format!("reading {file}"))?;
    let signature = format!("fn {function}(");
    let at = source
        .find(&signature)
        .with_context(|| format!("{file} has no function {function}"))?;
    let before: Vec<&str> = source[..at].lines().rev().take(4).collect();
    if before.iter().any(|line| line.contains("#[ignore")) {
        bail!("{file}::{function} is #[ignore]d, so the default test run skips it");
    }
    Ok(())
}

#[test]
fn every_readme_command_is_mapped_to_a_test_that_runs_it() -> Result<()> {
    let root = workspace_root();
    let readme = fs::read_to_string(root.join("README.md")).context("reading README.md")?;
    let map = fs::read_to_string(root.join("docs/readme-commands.md"))
        .context("reading docs/readme-commands.md")?;
    let commands = readme_commands(&readme);
    assert!(
        commands.len() >= 5,
        "the README's sh blocks were not found: {commands:?}"
    );
    let rows = map_rows(&map)?;
    let mapped: BTreeSet<&str> = rows.iter().map(|row| row.command.as_str()).collect();
    let shown: BTreeSet<&str> = commands.iter().map(String::as_str).collect();

    let unmapped: Vec<&&str> = shown.difference(&mapped).collect();
    assert!(
        unmapped.is_empty(),
        "README commands with no row in docs/readme-commands.md: {unmapped:#?}"
    );
    let stale: Vec<&&str> = mapped.difference(&shown).collect();
    assert!(
        stale.is_empty(),
        "rows of docs/readme-commands.md the README no longer shows: {stale:#?}"
    );
    let mut problems = Vec::new();
    for row in &rows {
        if row.tests.is_empty() {
            problems.push(format!("`{}` names no test", row.command));
        }
        for test in &row.tests {
            if let Err(error) = check_test(test) {
                problems.push(format!("`{}`: {error:#}", row.command));
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
    Ok(())
}

#[test]
fn readme_commands_join_continuations_and_drop_comments() {
    let readme = "intro\n```sh\nfoo --a   # says a\n    [--b]\n\n# a comment\nbar\n```\n\
                  ```yaml\nkey: value\n```\n```\nnot a command\n```\n";
    assert_eq!(readme_commands(readme), ["foo --a [--b]", "bar"]);
    let rows = map_rows("| `a \\| b` | `x.rs::t`, `.ci/run: c` | note |\n").expect("rows");
    assert_eq!(rows[0].command, "a | b");
    assert_eq!(rows[0].tests, ["x.rs::t", ".ci/run: c"]);
}
