use std::path::Path;
use std::process::{Command, Output};

use anyhow::{Context, Result, bail, ensure};
use fiskgen_tests::apps::{self, App};
use serde_json::{Value, json};

/// Runs `app` with `args`, without inheriting FIXTURE_* or TASKS_* variables.
fn run(app: App, args: &[&str], env: &[(&str, &str)]) -> Result<Output> {
    let bin = apps::path(app)?;
    let mut cmd = Command::new(&bin);
    cmd.args(args);
    for (key, _) in std::env::vars() {
        if key.starts_with("FIXTURE_") || key.starts_with("TASKS_") {
            cmd.env_remove(key);
        }
    }
    cmd.envs(env.iter().copied());
    cmd.output()
        .with_context(|| format!("running {}", bin.display()))
}

/// Runs `app` and parses its stdout as one JSON document; fails on a non-zero exit.
fn run_json(app: App, args: &[&str], env: &[(&str, &str)]) -> Result<Value> {
    let out = run(app, args, env)?;
    ensure!(
        out.status.success(),
        "{app:?} {args:?} exited with {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).with_context(|| {
        format!(
            "{app:?} {args:?} printed: {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

fn introspect(app: App) -> Result<(Value, Output)> {
    let out = run(app, &["--fisk-introspect"], &[])?;
    ensure!(
        out.status.success(),
        "{app:?} --fisk-introspect exited with {}",
        out.status
    );
    ensure!(out.stdout.ends_with(b"}\n"), "not one line plus newline");
    ensure!(
        out.stdout.iter().filter(|&&b| b == b'\n').count() == 1,
        "introspection is not a single line"
    );
    Ok((serde_json::from_slice(&out.stdout)?, out))
}

fn command<'a>(doc: &'a Value, path: &[&str]) -> Result<&'a Value> {
    let mut level = doc;
    for name in path {
        let commands = level["commands"].as_array().context("no commands")?;
        level = commands
            .iter()
            .find(|c| c["name"] == *name)
            .with_context(|| format!("no command {name} in {path:?}"))?;
    }
    Ok(level)
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["name"].as_str())
        .collect()
}

#[test]
fn demo_introspects() -> Result<()> {
    let (doc, _) = introspect(App::Demo)?;
    assert_eq!(doc["name"], "tasks");
    assert_eq!(doc["version"], "1.0.0");
    assert_eq!(names(&doc["commands"]), ["task", "note", "store"]);
    assert_eq!(names(&doc["flags"]), ["store", "trace"]);
    let delete = command(&doc, &["task", "delete"])?;
    assert_eq!(
        delete["tags"],
        json!(["ai:destructive", "ai:confirm", "impact:rw"])
    );
    assert_eq!(delete["restricted_schema"]["required"], json!(["id"]));
    let purge = command(&doc, &["store", "purge"])?;
    assert_eq!(purge["tags"], json!(["ai:deny", "ai:destructive"]));
    Ok(())
}

#[test]
fn demo_works_against_its_store() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let store = dir.path().join("tasks.json");
    let store = store.to_str().context("temp path is not UTF-8")?;
    let env = [("TASKS_STORE", store)];
    let out = run(
        App::Demo,
        &["task", "add", "Write docs", "--priority=high", "--tag=docs"],
        &env,
    )?;
    ensure!(
        out.status.success(),
        "add failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Added task #1: Write docs\n"
    );
    let listed = run_json(App::Demo, &["task", "list", "--json"], &env)?;
    assert_eq!(listed[0]["title"], "Write docs");
    assert_eq!(listed[0]["priority"], "high");
    assert_eq!(listed[0]["tags"], json!(["docs"]));
    let refused = run(App::Demo, &["task", "delete", "1"], &env)?;
    assert_eq!(refused.status.code(), Some(1));
    let forced = run(App::Demo, &["task", "delete", "--force", "--", "1"], &env)?;
    ensure!(forced.status.success(), "delete --force failed");
    Ok(())
}

#[test]
fn fixture_introspects_without_its_required_global() -> Result<()> {
    let (doc, out) = introspect(App::Fixture)?;
    ensure!(
        out.stderr.is_empty(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(doc["name"], "fixture");
    assert_eq!(
        names(&doc["flags"]),
        ["profile", "trace", "colors", "socket"]
    );
    assert_eq!(doc["flags"][0]["required"], true);
    let numbers = command(&doc, &["types", "numbers"])?;
    assert_eq!(numbers["schema"]["properties"]["uint8"]["maximum"], 255);
    assert_eq!(
        numbers["restricted_schema"]["properties"]["uint8"],
        json!({"description": "The uint8 flag", "type": "integer"})
    );
    let set = command(&doc, &["cluster", "node", "label", "set"])?;
    assert_eq!(names(&set["args"]), ["node", "labels"]);
    Ok(())
}

#[test]
fn oldfisk_introspects_without_schemas() -> Result<()> {
    let (doc, _) = introspect(App::OldFisk)?;
    assert_eq!(doc["name"], "oldfisk");
    let hello = command(&doc, &["hello"])?;
    assert!(hello.get("schema").is_none() && hello.get("restricted_schema").is_none());
    assert_eq!(hello["tags"], json!(["impact:ro"]));
    Ok(())
}

#[test]
fn fixture_leaf_prints_what_fisk_parsed() -> Result<()> {
    let got = run_json(
        App::Fixture,
        &[
            "types",
            "numbers",
            "--profile=dev",
            "--int=-5",
            "--uint64=18446744073709551615",
            "--float32=0.1",
            "--int8=-128",
        ],
        &[],
    )?;
    assert_eq!(got["command"], "types numbers");
    assert_eq!(got["flags"]["int"], -5);
    assert_eq!(got["flags"]["int8"], -128);
    assert_eq!(got["flags"]["uint64"], u64::MAX);
    assert_eq!(got["flags"]["float32"], 0.1);
    assert_eq!(
        got["flags"]["uint16"], 0,
        "values left at their defaults are printed"
    );
    assert_eq!(
        got["globals"],
        json!({"profile": "dev", "trace": false, "colors": "auto", "socket": ""})
    );
    assert_eq!(got["args"], json!({}));
    assert_eq!(got["group_flags"], json!({}));
    Ok(())
}

#[test]
fn fixture_renders_every_shape() -> Result<()> {
    let env = [("FIXTURE_PROFILE", "ci"), ("FIXTURE_CLUSTER", "east")];
    let got = run_json(
        App::Fixture,
        &[
            "cl",
            "node",
            "label",
            "set",
            "--pool=gpu",
            "--no-trace",
            "--",
            "n1",
            "zone=a",
            "team=x=y",
        ],
        &env,
    )?;
    assert_eq!(got["command"], "cluster node label set");
    assert_eq!(
        got["args"],
        json!({"node": "n1", "labels": {"zone": "a", "team": "x=y"}})
    );
    assert_eq!(
        got["group_flags"],
        json!({"cluster-name": "east", "pool": "gpu"})
    );
    assert_eq!(got["globals"]["profile"], "ci");

    let got = run_json(App::Fixture, &["options", "defaults", "--labels=z"], &env)?;
    assert_eq!(got["flags"]["labels"], json!(["z"]));
    assert_eq!(got["flags"]["timeout"], "5s");
    assert_eq!(got["flags"]["size"], 1024);
    assert_eq!(got["flags"]["env"], json!({"A": "1", "B": "2"}));
    assert_eq!(
        got["args"],
        json!({"first": "one", "second": "", "third": "three"})
    );

    let got = run_json(
        App::Fixture,
        &[
            "types",
            "units",
            "--duration=1d",
            "--bytes=1.5KiB",
            "--hex-bytes=0aFF",
        ],
        &env,
    )?;
    assert_eq!(
        got["flags"],
        json!({"duration": "24h0m0s", "bytes": 1536, "hex-bytes": "0aff"})
    );

    let got = run_json(
        App::Fixture,
        &["options", "same-name", "--name=7", "--", "--name"],
        &env,
    )?;
    assert_eq!(got["flags"]["name"], 7);
    assert_eq!(got["args"]["name"], "--name");
    Ok(())
}

#[test]
fn fixture_reports_parse_errors() -> Result<()> {
    let out = run(
        App::Fixture,
        &["types", "numbers", "--int8=128"],
        &[("FIXTURE_PROFILE", "x")],
    )?;
    assert_eq!(out.status.code(), Some(1));
    let out = run(App::Fixture, &["ping"], &[])?;
    assert_eq!(out.status.code(), Some(1), "--profile is required");
    ensure!(String::from_utf8_lossy(&out.stderr).contains("--profile"));
    Ok(())
}

#[test]
fn parallel_callers_share_one_build() -> Result<()> {
    let paths = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| s.spawn(|| apps::path(App::Fixture)))
            .collect();
        handles.into_iter().map(|h| h.join()).collect::<Vec<_>>()
    });
    let mut seen = Vec::new();
    for p in paths {
        match p {
            Ok(path) => seen.push(path?),
            Err(_) => bail!("a builder thread panicked"),
        }
    }
    ensure!(seen.windows(2).all(|w| w[0] == w[1]));
    ensure!(seen[0].starts_with(apps::bin_dir()?));
    Ok(())
}

#[test]
fn stamp_skips_and_triggers_rebuilds() -> Result<()> {
    let cache = tempfile::tempdir()?;
    let first = apps::path_in(cache.path(), App::OldFisk)?;
    let built_at = modified(&first)?;
    let again = apps::path_in(cache.path(), App::OldFisk)?;
    assert_eq!(first, again);
    assert_eq!(
        modified(&again)?,
        built_at,
        "an up-to-date binary is not rebuilt"
    );

    let stamp = cache.path().join("oldfisk.stamp");
    assert_eq!(
        std::fs::read_to_string(&stamp)?.trim(),
        apps::fingerprint(App::OldFisk)?
    );
    std::fs::write(&stamp, "stale\n")?;
    let rebuilt = apps::path_in(cache.path(), App::OldFisk)?;
    ensure!(modified(&rebuilt)? != built_at, "a stale stamp rebuilds");
    assert_eq!(
        std::fs::read_to_string(&stamp)?.trim(),
        apps::fingerprint(App::OldFisk)?
    );
    Ok(())
}

fn modified(path: &Path) -> Result<std::time::SystemTime> {
    Ok(std::fs::metadata(path)?.modified()?)
}

/// natscli is in the default test run (installed once, about 80 s cold, then cached).
#[test]
fn nats_introspects() -> Result<()> {
    let (doc, _) = introspect(App::Nats)?;
    assert_eq!(doc["name"], "nats");
    ensure!(names(&doc["flags"]).contains(&"server"));
    Ok(())
}
