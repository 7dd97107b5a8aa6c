//! Config error texts, one golden file per hazard: `tests/golden/config-errors/<hazard>.yaml`
//! is a config with exactly that mistake, and `<hazard>.txt` is what `fiskgen info` prints for
//! it (stderr, then the exit code). Every text must say what is wrong, where (file, line and
//! column) and, where there is one, how to fix it.
//!
//! Update them with `FISKGEN_BLESS=1 cargo test -p fiskgen --test config_errors` (or
//! `EXPECTORATE=overwrite`), then review `git diff tests/golden/config-errors`.

use std::fs;
use std::process::Command;

use fiskgen_tests::apps::workspace_root;

const DIR: &str = "tests/golden/config-errors";

fn cases() -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(workspace_root().join(DIR))
        .expect("the config-errors directory exists")
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".yaml").map(str::to_string)
        })
        .collect();
    names.sort();
    names
}

/// What `fiskgen info` prints for one case, run from the workspace root with a relative path
/// so the text names the file as a user would.
fn report(case: &str) -> (String, Option<i32>) {
    let output = Command::new(env!("CARGO_BIN_EXE_fiskgen"))
        .current_dir(workspace_root())
        .args(["info", &format!("{DIR}/{case}.yaml")])
        .env("COLUMNS", "100")
        .output()
        .expect("running fiskgen");
    (
        String::from_utf8_lossy(&output.stderr).into_owned(),
        output.status.code(),
    )
}

#[test]
fn every_config_hazard_prints_its_golden_error() {
    let cases = cases();
    assert!(
        cases.len() >= 12,
        "expected the hazard cases, found {cases:?}"
    );
    let bless = std::env::var_os("FISKGEN_BLESS").is_some_and(|v| !v.is_empty() && v != "0");
    for case in &cases {
        let (stderr, code) = report(case);
        let text = format!("{stderr}exit code: {code:?}\n");
        let golden = workspace_root().join(DIR).join(format!("{case}.txt"));
        if bless {
            fs::write(&golden, &text).expect("writing a golden");
        } else {
            expectorate::assert_contents(&golden, &text);
        }
    }
}

#[test]
fn every_config_error_is_one_positioned_line_and_exit_1() {
    for case in cases() {
        let (stderr, code) = report(&case);
        assert_eq!(code, Some(1), "{case}: {stderr}");
        let first = stderr.lines().next().unwrap_or_default();
        let place = format!("error: {DIR}/{case}.yaml:");
        let position = first.strip_prefix(&place).unwrap_or_else(|| {
            panic!("{case}: the error does not start with {place:?}: {first:?}")
        });
        let mut numbers = position.splitn(3, ':');
        for what in ["line", "column"] {
            let number = numbers.next().unwrap_or_default();
            assert!(
                number.parse::<u32>().is_ok_and(|n| n > 0),
                "{case}: no {what} number in {first:?}"
            );
        }
        // Only the error line and `help:` lines; never a backtrace or a panic.
        for line in stderr.lines().skip(1) {
            assert!(
                line.starts_with("  help: "),
                "{case}: unexpected line {line:?}"
            );
        }
    }
}

#[test]
fn every_golden_error_has_its_config() {
    let cases = cases();
    for entry in fs::read_dir(workspace_root().join(DIR)).expect("listing the goldens") {
        let name = entry.expect("a directory entry").file_name();
        let name = name.to_string_lossy();
        if let Some(case) = name.strip_suffix(".txt") {
            assert!(cases.iter().any(|c| c == case), "{name} has no {case}.yaml");
        }
    }
}
