//! Served names with the real `nats` CLI against a real `nats-server` and the official Python
//! SDK: a server that `fiskgen build` makes from `tests/fixtures/nats-names.yaml` (a prefix, two
//! renames, one of them over 64 characters with `allow_long_names`) lists and runs its tools
//! under the names the config gives them, on `/mcp`, on a group endpoint and through catalog
//! mode, and its `--tools` filter, `tools` listing and `verify` use the same names.

use std::ffi::OsStr;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use fiskgen_tests::apps::{self, App, workspace_root};

use super::clients::{Server, python, run_bounded, strings};
use super::nats::{fiskgen_build, nats, start_nats_server};

#[test]
fn renamed_and_prefixed_tools_are_listed_and_called_by_their_served_names() -> Result<()> {
    let dir = workspace_root()
        .join("target")
        .join("fiskgen-e2e")
        .join("nats-names");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let cli = apps::path(App::Nats)?;
    // A name over 64 characters builds because the config allows it.
    let binary = fiskgen_build(
        "tests/fixtures/nats-names.yaml",
        &cli,
        &dir.join("nats-mcp"),
    )?;

    let tools = |args: &[&str]| {
        run_bounded(
            Command::new(&binary).arg("tools").args(args),
            Duration::from_secs(30),
            &format!("nats-mcp tools {}", args.join(" ")),
        )
    };
    let listed = tools(&[])?.success()?;
    ensure!(
        listed
            .stdout
            .lines()
            .any(|line| line.starts_with("info ") && line.ends_with("[own name: stream_info]")),
        "tools shows no own name beside info:\n{}",
        listed.report()
    );
    let narrowed = tools(&["--json", "--tools", "^info$"])?.success()?;
    let entries = narrowed.json()?;
    let entries = entries.as_array().context("tools --json is no array")?;
    let names: Vec<String> = entries
        .iter()
        .filter_map(|tool| tool["name"].as_str().map(str::to_string))
        .collect();
    ensure!(
        entries.iter().all(|tool| tool["own_name"] == "stream_info"),
        "tools --json gives info no own_name stream_info: {entries:?}"
    );
    ensure!(
        names == ["info"],
        "--tools ^info$ keeps {names:?}: it matches served names"
    );

    // The served names are part of what a check compares: the server's own natscli is no drift.
    let verified = run_bounded(
        Command::new(&binary)
            .arg("--application-path")
            .arg(&cli)
            .arg("verify"),
        Duration::from_secs(60),
        "nats-mcp verify",
    )?
    .success()?;
    ensure!(
        !verified.stdout.contains("(new tool)") && !verified.stdout.contains("no longer served"),
        "verify reports renamed tools as drift:\n{}",
        verified.report()
    );

    let nats_server = start_nats_server()?;
    let home = tempfile::tempdir().context("creating the CLI's home")?;
    let url = nats_server.url.clone();
    nats(
        &url,
        home.path(),
        &[
            "stream",
            "add",
            "NAMES",
            "--subjects",
            "names.>",
            "--storage",
            "memory",
            "--defaults",
        ],
    )?;
    let env: [(&str, &OsStr); 3] = [
        ("NATS_URL", OsStr::new(&url)),
        ("HOME", home.path().as_os_str()),
        ("XDG_CONFIG_HOME", home.path().as_os_str()),
    ];
    for (extra, catalog) in [(&[][..], false), (&["--catalog", "search"][..], true)] {
        let server = Server::spawn_app(&binary, home.path(), &cli, &env, extra)?;
        for mode in ["legacy", "2026-07-28"] {
            let mut args = strings(&["--url", &server.url, "--mode", mode, "--stream", "NAMES"]);
            if catalog {
                args.push("--catalog".into());
                python("names.py", &args)?
                    .has("catalog: found info, ran stream info --json -- NAMES")?;
            } else {
                python("names.py", &args)?
                    .has(
                        "tools: key_value_buckets_listed_with_their_sizes_histories_and_\
                         replica_counts info nats_stream_rm",
                    )?
                    .has("info ran: stream info --json -- NAMES")?
                    .has("stream_info refused: unknown tool: \"stream_info\"")?
                    .has("/mcp/stream: info nats_stream_rm")?;
            }
        }
    }
    Ok(())
}
