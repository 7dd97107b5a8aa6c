//! Client entries, runtime narrowing and protected-resource authentication, against the
//! generated servers with real clients: every entry `<server> config` prints is fed to a real
//! client (the Python SDK for the JSON forms and the stdio command of `claude mcp add`, the
//! MCP Inspector CLI for its `--config` file), or checked against the client's documented
//! shape where the client cannot run here; narrowing is checked through `tools --json` and a
//! real client's `tools/list`; authentication with the Python SDK and minted tokens.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use fiskgen_tests::apps::{self, App};
use fiskgen_tests::clients;
use serde_json::Value;

use super::clients::{
    Finished, INSPECTOR_TIMEOUT, SERVED, Server, listed_names, node_tool, python, run_bounded,
};

/// Bound of one `<server> config` / `tools` run.
const QUICK: Duration = Duration::from_secs(20);

/// Runs the demo server (or `binary`) with `args`; it must succeed.
fn server_output(binary: &Path, args: &[&str]) -> Result<Finished> {
    let mut cmd = Command::new(binary);
    cmd.args(args)
        .env_remove("FISK_AI_MCP_PORT")
        .env_remove("FISK_AI_MCP_ADDRESS");
    let what = format!("{} {}", binary.display(), args.join(" "));
    run_bounded(&mut cmd, QUICK, &what)?.success()
}

/// `config --client KIND <transport args>`: the single entry it prints.
fn entry(kind: &str, transport: &[&str]) -> Result<String> {
    let server = clients::demo_server()?;
    let app = apps::path(App::Demo)?;
    let app = app.display().to_string();
    let mut args = vec!["config", "--client", kind, "--application-path", &app];
    args.extend_from_slice(transport);
    let printed = server_output(&server, &args)?;
    let lines: Vec<&str> = printed.stdout.lines().collect();
    ensure!(
        lines.len() == 1,
        "{kind}: expected one line: {}",
        printed.stdout
    );
    Ok(lines[0].to_string())
}

/// Feeds a JSON entry to `entry.py` (the Python SDK reading it as `kind` would).
fn feed(kind: &str, entry: &str, dir: &Path) -> Result<Finished> {
    let file = dir.join(format!("{kind}.json"));
    std::fs::write(&file, entry)?;
    python(
        "entry.py",
        &[
            "--client".into(),
            kind.into(),
            "--name".into(),
            "tasks".into(),
            "--store".into(),
            dir.join("tasks.json").display().to_string(),
            "--entry".into(),
            file.display().to_string(),
        ],
    )
}

#[test]
fn every_printed_stdio_entry_starts_a_working_session() -> Result<()> {
    let dir = tempfile::tempdir()?;
    for kind in ["json", "claude-desktop", "vscode", "fx"] {
        let printed = entry(kind, &["--stdio"])?;
        let run = feed(kind, &printed, dir.path()).with_context(|| format!("{kind}: {printed}"))?;
        run.has_line(&format!("{kind} stdio: {}", SERVED.join(" ")))?;
    }
    // Claude Code's entry is a command line: the command after `--` is what it starts.
    let line = entry("claude-code", &["--stdio"])?;
    let command = line
        .strip_prefix("claude mcp add tasks -- ")
        .with_context(|| format!("not `claude mcp add tasks -- ...`: {line}"))?;
    let tokens = shell_words(command)?;
    let as_json =
        serde_json::json!({"mcpServers": {"tasks": {"command": tokens[0], "args": tokens[1..]}}});
    feed("json", &as_json.to_string(), dir.path())?
        .has_line(&format!("json stdio: {}", SERVED.join(" ")))?;
    Ok(())
}

#[test]
fn every_printed_http_entry_reaches_the_server() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let server = Server::spawn(&clients::demo_server()?, dir.path(), &[])?;
    for kind in ["json", "vscode", "fx"] {
        let printed = entry(kind, &["--url", &server.url])?;
        feed(kind, &printed, dir.path())
            .with_context(|| format!("{kind}: {printed}"))?
            .has_line(&format!("{kind} http: {}", SERVED.join(" ")))?;
        // The start-up banner shows the same entry.
        ensure!(
            server.log().lines().any(|l| l.trim() == printed),
            "{kind}: the banner lacks {printed}:\n{}",
            server.log()
        );
    }
    // Claude Code (documented: `claude mcp add --transport http <name> <url>`).
    let line = entry("claude-code", &["--url", &server.url])?;
    ensure!(
        line == format!("claude mcp add --transport http tasks {}", server.url),
        "{line}"
    );
    // Claude Desktop reaches HTTP servers through mcp-remote (documented `command`/`args`).
    let desktop: Value = serde_json::from_str(&entry("claude-desktop", &["--url", &server.url])?)?;
    ensure!(
        desktop
            == serde_json::json!({"mcpServers": {"tasks": {"command": "npx", "args": ["-y", "mcp-remote", server.url]}}}),
        "{desktop}"
    );
    Ok(())
}

#[test]
fn the_inspector_reads_the_printed_json_entry_as_its_config_file() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let server = Server::spawn(&clients::demo_server()?, dir.path(), &[])?;
    for transport in [vec!["--stdio"], vec!["--url", server.url.as_str()]] {
        let printed = entry("json", &transport)?;
        let file = dir.path().join("inspector.json");
        std::fs::write(&file, &printed)?;
        let mut cmd = node_tool("mcp-inspector", dir.path())?;
        cmd.arg("--cli")
            .arg("--config")
            .arg(&file)
            .args([
                "--server",
                "tasks",
                "--method",
                "tools/list",
                "--format",
                "json",
            ])
            .env("TASKS_STORE", dir.path().join("tasks.json"))
            .current_dir(dir.path());
        let listed = run_bounded(&mut cmd, INSPECTOR_TIMEOUT, "mcp-inspector --config")?
            .success()?
            .json()?;
        ensure!(
            listed_names(&listed) == SERVED,
            "{transport:?}: listed {:?}",
            listed_names(&listed)
        );
    }
    Ok(())
}

/// POSIX shell words of a line `cmdline::quote` wrote (bare, '...', no $'...' here).
fn shell_words(line: &str) -> Result<Vec<String>> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any || !current.is_empty() {
                    words.push(std::mem::take(&mut current));
                }
                any = false;
            }
            c => current.push(c),
        }
    }
    ensure!(!quoted, "unbalanced quotes in {line}");
    if any || !current.is_empty() {
        words.push(current);
    }
    Ok(words)
}

// ---------------------------------------------------------------------------------------
// Runtime narrowing
// ---------------------------------------------------------------------------------------

/// `tools --json` with `flags`: the names, and stderr.
fn narrowed(flags: &[&str]) -> Result<(Vec<String>, String, Value)> {
    let server = clients::demo_server()?;
    let mut args = vec!["tools", "--json"];
    args.extend_from_slice(flags);
    let out = server_output(&server, &args)?;
    let listed = out.json()?;
    let names = listed
        .as_array()
        .context("not a list")?
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    Ok((names, out.stderr.clone(), listed))
}

#[test]
fn narrowing_flags_only_remove_tools() -> Result<()> {
    let (all, _, _) = narrowed(&[])?;
    ensure!(all == SERVED, "{all:?}");
    let (read_only, _, listed) = narrowed(&["--read-only"])?;
    ensure!(
        read_only == ["task_list", "task_show", "note_search", "store_export"],
        "{read_only:?}"
    );
    ensure!(listed.as_array().is_some_and(|tools| tools.iter().all(|t| {
        t["hints"]
            .as_array()
            .is_some_and(|h| h.contains(&"read_only".into()))
    })));
    let (names, _, _) = narrowed(&["--tools", "^task_", "--exclude-tools", "_(add|done)$"])?;
    ensure!(
        names == ["task_list", "task_show", "task_delete"],
        "{names:?}"
    );
    let (names, _, _) = narrowed(&["--tags", "impact:rw"])?;
    ensure!(
        names == ["task_add", "task_done", "task_delete"],
        "{names:?}"
    );
    // Naming a denied command brings nothing back, and a gate stays a gate.
    let (names, stderr, _) = narrowed(&["--tools", "^store_purge$"])?;
    ensure!(names.is_empty(), "{names:?}");
    ensure!(
        stderr.contains("warning: --tools \"^store_purge$\" matches no tool of this server"),
        "{stderr}"
    );
    let (names, _, listed) = narrowed(&["--tools", "^task_delete$"])?;
    ensure!(names == ["task_delete"], "{names:?}");
    ensure!(listed[0]["confirm"]["trigger"] == "ai:confirm", "{listed}");
    // A bad pattern is a usage error naming it.
    let server = clients::demo_server()?;
    let mut cmd = Command::new(&server);
    cmd.args(["tools", "--tools", "("]);
    let out = run_bounded(&mut cmd, QUICK, "tools --tools (")?;
    ensure!(
        out.stderr.contains("not a valid regular expression"),
        "{}",
        out.report()
    );
    Ok(())
}

#[test]
fn a_narrowed_server_serves_and_announces_only_the_narrowed_set() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let server = Server::spawn(
        &clients::demo_server()?,
        dir.path(),
        &["--read-only", "--exclude-tools", "^nothing$"],
    )?;
    let log = server.log();
    ensure!(log.contains("Serving 4 tools over MCP"), "{log}");
    ensure!(
        log.contains("narrowed by --read-only --exclude-tools \"^nothing$\": 4 of 8 tools served"),
        "{log}"
    );
    ensure!(
        log.contains("--exclude-tools \"^nothing$\" matches no tool of this server"),
        "{log}"
    );
    let mut cmd = node_tool("mcp-inspector", dir.path())?;
    cmd.args([
        "--cli",
        &server.url,
        "--method",
        "tools/list",
        "--format",
        "json",
    ]);
    let listed = run_bounded(&mut cmd, INSPECTOR_TIMEOUT, "inspector tools/list")?
        .success()?
        .json()?;
    ensure!(
        listed_names(&listed) == ["task_list", "task_show", "note_search", "store_export"],
        "{:?}",
        listed_names(&listed)
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Protected-resource authentication
// ---------------------------------------------------------------------------------------

#[test]
fn oauth_tokens_headers_and_static_tokens_are_checked_as_the_spec_says() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let dir_arg = dir.path().display().to_string();
    python(
        "auth.py",
        &["keygen".into(), "--dir".into(), dir_arg.clone()],
    )?;
    let binary = clients::auth_server()?;
    let server = Server::spawn_env(
        &binary,
        dir.path(),
        &[],
        &[
            ("TASKS_AUTH_TOKEN", "static-s3cret"),
            ("TASKS_AUTH_KEY", "header-s3cret"),
        ],
    )?;
    let run = python(
        "auth.py",
        &[
            "check".into(),
            "--url".into(),
            server.url.clone(),
            "--dir".into(),
            dir_arg,
            "--token".into(),
            "static-s3cret".into(),
            "--api-key".into(),
            "header-s3cret".into(),
        ],
    )?;
    for line in [
        "valid token: listed task_list task_show task_delete note_search store_export and called task_list",
        "valid token on /mcp/task: listed task_list task_show task_delete and called task_list",
        "no token on /mcp/task: 401",
        "expired: 401 invalid_token (the token has expired)",
        "missing scope: 403 insufficient_scope (tasks:read)",
        "X-Api-Key header: listed 5 tools",
    ] {
        run.has_line(line)?;
    }
    ensure!(
        !server.log().contains("static-s3cret") && !server.log().contains("header-s3cret"),
        "a secret reached the log"
    );
    Ok(())
}
