//! Golden generated crates: `tests/expected/<case>/` must be exactly what fiskgen generates for
//! the case's config and real application. The goldens are workspace members, so
//! `cargo test --workspace` and clippy also compile them.
//!
//! Update them with `FISKGEN_BLESS=1 cargo test -p fiskgen-tests --test integration golden`
//! (or `EXPECTORATE=overwrite`), then review `git diff tests/expected`.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context, Result, bail};
use fiskgen::emit::{self, GeneratedCrate, Settings};
use fiskgen::introspect::{self, Introspection};
use fiskgen::{Plan, config};
use fiskgen_tests::apps::{self, App, workspace_root};

/// A golden case: its config and the application it serves.
struct Case {
    config: &'static str,
    app: App,
}

const DEMO: Case = Case {
    config: "examples/demo/demo.yaml",
    app: App::Demo,
};

const FIXTURE: Case = Case {
    config: "tests/fixtures/fixture.yaml",
    app: App::Fixture,
};

const CONFORMANCE: Case = Case {
    config: "tests/fixtures/conformance.yaml",
    app: App::Conformance,
};

const BUILTINS: Case = Case {
    config: "tests/fixtures/builtins.yaml",
    app: App::Demo,
};

const HYBRID: Case = Case {
    config: "tests/fixtures/hybrid.yaml",
    app: App::Demo,
};

const AUTH: Case = Case {
    config: "tests/fixtures/auth.yaml",
    app: App::Demo,
};

/// The real application's introspection, once per test binary.
fn introspection(app: App) -> Result<Introspection> {
    static DEMO: OnceLock<Introspection> = OnceLock::new();
    static FIXTURE: OnceLock<Introspection> = OnceLock::new();
    static CONFORMANCE: OnceLock<Introspection> = OnceLock::new();
    let slot = match app {
        App::Demo => &DEMO,
        App::Fixture => &FIXTURE,
        App::Conformance => &CONFORMANCE,
        other => bail!("no golden case for {other:?}"),
    };
    if let Some(introspection) = slot.get() {
        return Ok(introspection.clone());
    }
    let path = apps::path(app)?;
    let introspection = introspect::run(&path, &introspect::Options::default())?;
    Ok(slot.get_or_init(|| introspection).clone())
}

/// The plan of a case, as `fiskgen generate` would make it (config path relative to the root,
/// so no absolute path can leak into the output).
pub(crate) fn plan(case_name: &str) -> Result<Plan> {
    let case = match case_name {
        "demo" => DEMO,
        "fixture" => FIXTURE,
        "conformance" => CONFORMANCE,
        "builtins" => BUILTINS,
        "hybrid" => HYBRID,
        "auth" => AUTH,
        other => bail!("no golden case {other}"),
    };
    let config = config::load(&workspace_root().join(case.config))?;
    let config = config::Config {
        source: PathBuf::from(case.config),
        ..config
    };
    let introspection = introspection(case.app)?;
    let server = fiskgen::select_for(&config, Some(&introspection))?;
    Ok(Plan {
        config,
        introspection: Some(introspection),
        server,
    })
}

fn generate(case_name: &str) -> Result<GeneratedCrate> {
    let settings = Settings {
        workspace_member: true,
        runtime_path: Some("../../../runtime".to_string()),
    };
    let plan = plan(case_name)?;
    Ok(emit::generate(
        &plan.server,
        plan.introspection.as_ref(),
        &settings,
    )?)
}

fn expected_dir(case_name: &str) -> PathBuf {
    workspace_root().join("tests/expected").join(case_name)
}

fn blessing() -> bool {
    std::env::var_os("FISKGEN_BLESS").is_some_and(|v| !v.is_empty() && v != "0")
        || std::env::var("EXPECTORATE").is_ok_and(|v| v == "overwrite")
}

/// Every file below `dir` (relative, `/`-separated), skipping `target`.
fn files_below(dir: &Path, prefix: &str, out: &mut BTreeSet<String>) -> Result<()> {
    if !dir.is_dir() {
        return Ok(());
    }
    for entry in fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let relative = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        if entry.file_type()?.is_dir() {
            if name != "target" {
                files_below(&entry.path(), &relative, out)?;
            }
        } else {
            out.insert(relative);
        }
    }
    Ok(())
}

fn check_golden(case_name: &str) -> Result<()> {
    let generated = generate(case_name)?;
    let dir = expected_dir(case_name);
    let mut existing = BTreeSet::new();
    files_below(&dir, "", &mut existing)?;
    if blessing() {
        for stale in existing
            .iter()
            .filter(|path| !generated.files.contains_key(*path))
        {
            fs::remove_file(dir.join(stale))?;
        }
        fiskgen::write::write_crate(&dir, &generated)?;
        return Ok(());
    }
    let mut problems = Vec::new();
    for (path, contents) in &generated.files {
        match fs::read_to_string(dir.join(path)) {
            Ok(golden) if golden == *contents => {}
            // expectorate prints the whole diff of the file (the panic message), then the
            // next file is compared: one run shows every difference.
            Ok(_) => {
                let file = dir.join(path);
                let compared = std::panic::catch_unwind(|| {
                    expectorate::assert_contents(&file, contents);
                });
                if compared.is_err() {
                    problems.push(format!("{path} differs (its diff is printed above)"));
                }
            }
            Err(_) => problems.push(format!("{path} is missing from the golden")),
        }
    }
    for path in existing
        .iter()
        .filter(|path| !generated.files.contains_key(*path))
    {
        problems.push(format!("{path} is in the golden but no longer generated"));
    }
    if !problems.is_empty() {
        bail!(
            "tests/expected/{case_name} is out of date (FISKGEN_BLESS=1 cargo test -p \
             fiskgen-tests --test integration golden updates it):\n{}",
            problems.join("\n")
        );
    }
    Ok(())
}

#[test]
fn golden_demo() -> Result<()> {
    check_golden("demo")
}

#[test]
fn golden_fixture() -> Result<()> {
    check_golden("fixture")
}

#[test]
fn golden_auth() -> Result<()> {
    check_golden("auth")
}

#[test]
fn golden_conformance() -> Result<()> {
    check_golden("conformance")
}

#[test]
fn generating_twice_is_byte_identical() -> Result<()> {
    for case in [
        "demo",
        "fixture",
        "builtins",
        "hybrid",
        "auth",
        "conformance",
    ] {
        assert_eq!(generate(case)?, generate(case)?, "{case}");
    }
    Ok(())
}

#[test]
fn generate_writes_nothing_the_second_time() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let generated = {
        let plan = plan("demo")?;
        emit::generate(
            &plan.server,
            plan.introspection.as_ref(),
            &Settings::default(),
        )?
    };
    let first = fiskgen::write::write_crate(dir.path(), &generated)?;
    assert!(
        first.written.contains(&"Cargo.lock".to_string()),
        "standalone crates carry a lockfile"
    );
    let again = {
        let plan = plan("demo")?;
        emit::generate(
            &plan.server,
            plan.introspection.as_ref(),
            &Settings::default(),
        )?
    };
    let second = fiskgen::write::write_crate(dir.path(), &again)?;
    assert!(
        second.written.is_empty() && second.removed.is_empty(),
        "{second:?}"
    );
    let cargo_toml = fs::read_to_string(dir.path().join("Cargo.toml"))?;
    assert!(cargo_toml.contains("\n[workspace]\n") && cargo_toml.contains("[profile.release]"));
    Ok(())
}

/// Built-in tools are emitted with their settings compiled in (roots, caps, confirmation,
/// the knowledge index), and the crate is compiled as a workspace member.
#[test]
fn golden_builtins() -> Result<()> {
    check_golden("builtins")
}

/// The knowledge tools over a hybrid index (an embeddings endpoint compiled in), as the
/// telemetry test serves them.
#[test]
fn golden_hybrid() -> Result<()> {
    check_golden("hybrid")
}

/// `tasks-mcp tools --json` (the compiled golden demo) serves exactly what `fiskgen info
/// --json` says it will: same tools, titles, descriptions, tags, hints, gates and schemas. Both
/// outputs are read through the one type of their entries (`fiskgen_contract::info::ToolInfo`,
/// which refuses a key it does not know), and both print it in one shape: the binary's output
/// is that type's rendering, byte for byte.
#[test]
fn the_generated_server_lists_what_fiskgen_info_shows_in_one_shape() -> Result<()> {
    use fiskgen_contract::info::{self, ToolInfo};

    let server = fiskgen_tests::clients::demo_server()?;
    let output = std::process::Command::new(&server)
        .args(["tools", "--json"])
        .output()
        .with_context(|| format!("running {}", server.display()))?;
    if !output.status.success() {
        bail!(
            "{} tools --json failed: {}",
            server.display(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let stdout = String::from_utf8(output.stdout)?;
    let listed: Vec<ToolInfo> =
        serde_json::from_str(&stdout).context("tools --json as ToolInfo entries")?;
    let printed = fiskgen::info::render_json_with_access(&plan("demo")?.server)?;
    // `fiskgen info --json`: the served tools under `tools`, beside the rest of the plan.
    let mut document: serde_json::Value = serde_json::from_str(&printed)?;
    let planned: Vec<ToolInfo> = serde_json::from_value(document["tools"].take())
        .context("info --json's tools as ToolInfo entries")?;
    assert_eq!(listed.len(), planned.len());
    for (served, planned) in listed.iter().zip(&planned) {
        assert_eq!(served, planned, "tool {}", planned.name);
    }
    assert!(
        listed.iter().any(|tool| tool.confirm.is_some())
            && listed
                .iter()
                .any(|tool| matches!(tool.kind, info::Kind::Command { .. })),
        "the demo lists a gated command"
    );
    assert_eq!(
        stdout,
        info::render(&listed)?,
        "tools --json in the type's shape"
    );
    Ok(())
}
