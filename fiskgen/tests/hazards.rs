//! The Go-free golden tier: one small case per hazard of code generation, each generated from
//! a committed model instead of a running application, so it needs no Go and takes well under a
//! second.
//!
//! Each `tests/golden/hazards/<hazard>.yaml` selects the fixture application's commands that
//! carry one hazard (keyword names, shared flag/argument names, repeatable values, nested groups,
//! hostile help text, ...) and `tests/golden/hazards/<hazard>/` holds the generated tool code. The
//! model is `tests/expected/fixture/model.json`, which the Go tier (`golden_fixture` in the
//! integration tests) keeps equal to what the real fixture application prints.
//!
//! Update them with `FISKGEN_BLESS=1 cargo test -p fiskgen --test hazards` (or
//! `EXPECTORATE=overwrite`), then review `git diff tests/golden/hazards`.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use fiskgen::emit::{self, Settings};
use fiskgen::{ModelSource, Plan};
use fiskgen_tests::apps::workspace_root;

const MODEL: &str = "tests/expected/fixture/model.json";
const HAZARDS: &str = "tests/golden/hazards";

fn blessing() -> bool {
    std::env::var_os("FISKGEN_BLESS").is_some_and(|v| !v.is_empty() && v != "0")
        || std::env::var("EXPECTORATE").is_ok_and(|v| v == "overwrite")
}

/// The hazard cases: every `<hazard>.yaml` in the hazards directory, sorted.
fn cases() -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(workspace_root().join(HAZARDS))
        .expect("the hazards directory exists")
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".yaml").map(str::to_string)
        })
        .collect();
    names.sort();
    names
}

/// The generated tool files of one case (`src/tools/...`), keyed by their path below `src/`.
/// The crate's other files are the same for every case and pinned by the full goldens.
fn generate(case: &str) -> std::collections::BTreeMap<String, String> {
    let root = workspace_root();
    let relative = PathBuf::from(HAZARDS).join(format!("{case}.yaml"));
    let plan: Plan = fiskgen::plan(&root.join(&relative), &ModelSource::File(root.join(MODEL)))
        .unwrap_or_else(|error| panic!("planning {case}: {error}"));
    let settings = Settings {
        workspace_member: true,
        runtime_path: None,
    };
    let generated = emit::generate(&plan.server, plan.introspection.as_ref(), &settings)
        .unwrap_or_else(|error| panic!("generating {case}: {error}"));
    generated
        .files
        .into_iter()
        .filter(|(path, _)| path.starts_with("src/tools/"))
        .filter_map(|(path, contents)| Some((path.strip_prefix("src/")?.to_string(), contents)))
        .collect()
}

fn files_below(dir: &Path, prefix: &str, out: &mut BTreeSet<String>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let relative = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        if entry.path().is_dir() {
            files_below(&entry.path(), &relative, out);
        } else {
            out.insert(relative);
        }
    }
}

#[test]
fn every_hazard_case_generates_its_golden_code() {
    let cases = cases();
    assert!(
        cases.len() >= 6,
        "expected the hazard cases, found {cases:?}"
    );
    let mut problems = Vec::new();
    for case in &cases {
        let generated = generate(case);
        let dir = workspace_root().join(HAZARDS).join(case);
        let mut existing = BTreeSet::new();
        files_below(&dir, "", &mut existing);
        if blessing() {
            for stale in existing
                .iter()
                .filter(|path| !generated.contains_key(*path))
            {
                fs::remove_file(dir.join(stale)).expect("removing a stale golden file");
            }
            for (path, contents) in &generated {
                let file = dir.join(path);
                fs::create_dir_all(file.parent().expect("a golden file has a parent"))
                    .expect("creating a golden directory");
                fs::write(&file, contents).expect("writing a golden file");
            }
            continue;
        }
        for (path, contents) in &generated {
            let file = dir.join(path);
            if fs::read_to_string(&file).ok().as_deref() == Some(contents.as_str()) {
                continue;
            }
            if !file.is_file() {
                problems.push(format!("{case}/{path} is missing from the golden"));
                continue;
            }
            // expectorate prints the file's whole diff; every file is compared in one run.
            if std::panic::catch_unwind(|| expectorate::assert_contents(&file, contents)).is_err() {
                problems.push(format!("{case}/{path} differs (its diff is printed above)"));
            }
        }
        for stale in existing
            .iter()
            .filter(|path| !generated.contains_key(*path))
        {
            problems.push(format!(
                "{case}/{stale} is in the golden but no longer generated"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{HAZARDS} is out of date (FISKGEN_BLESS=1 cargo test -p fiskgen --test hazards updates \
         it):\n{}",
        problems.join("\n")
    );
}

#[test]
fn each_hazard_case_serves_only_the_commands_it_names() {
    for case in cases() {
        let root = workspace_root();
        let plan = fiskgen::plan(
            &root.join(HAZARDS).join(format!("{case}.yaml")),
            &ModelSource::File(root.join(MODEL)),
        )
        .unwrap_or_else(|error| panic!("planning {case}: {error}"));
        let config = fs::read_to_string(root.join(HAZARDS).join(format!("{case}.yaml")))
            .expect("the case's config is readable");
        let named = config.matches("    - '^").count();
        assert_eq!(
            plan.server.tools.len(),
            named,
            "{case} serves what it names"
        );
    }
}

#[test]
fn generating_a_hazard_case_twice_is_byte_identical() {
    for case in cases() {
        assert_eq!(generate(&case), generate(&case), "{case}");
    }
}
