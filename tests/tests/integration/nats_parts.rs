//! Parts of a large application, with the real `nats` CLI against a real `nats-server` and the
//! official Python SDK: each command group served alone on `/mcp/<group>` (and with `--group`),
//! from a server that `fiskgen build` makes from `tests/fixtures/nats-groups.yaml` (four tools in
//! three groups), in the warm release target directory of [`super::nats`].

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use fiskgen_tests::apps::{self, App, workspace_root};

use super::clients::{Server, python, run_bounded, strings};
use super::nats::{NatsServer, fiskgen_build, nats, start_nats_server};

/// Bound of one run of the built server's informational subcommands.
const SUBCOMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// The server of `nats-groups.yaml`, built once per test process.
pub(super) fn groups_server() -> Result<PathBuf> {
    static BUILT: Mutex<Option<PathBuf>> = Mutex::new(None);
    let mut built = BUILT.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(binary) = built.as_ref() {
        return Ok(binary.clone());
    }
    let dir = workspace_root()
        .join("target")
        .join("fiskgen-e2e")
        .join("nats-groups");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let binary = fiskgen_build(
        "tests/fixtures/nats-groups.yaml",
        &apps::path(App::Nats)?,
        &dir.join("nats-mcp"),
    )?;
    *built = Some(binary.clone());
    Ok(binary)
}

/// A nats-server with the stream `name`, the CLI's home, and the groups server running against
/// it with `extra` flags.
pub(super) struct Setup {
    pub(super) server: Server,
    _nats: NatsServer,
    _home: tempfile::TempDir,
}

/// Starts nats-server, creates the stream `name` with the CLI, and serves the groups server.
pub(super) fn setup(name: &str, extra: &[&str]) -> Result<Setup> {
    let nats_server = start_nats_server()?;
    let home = tempfile::tempdir().context("creating the CLI's home")?;
    let url = nats_server.url.clone();
    let subjects = format!("{}.>", name.to_lowercase());
    nats(
        &url,
        home.path(),
        &[
            "stream",
            "add",
            name,
            "--subjects",
            &subjects,
            "--storage",
            "memory",
            "--defaults",
        ],
    )?;
    let binary = groups_server()?;
    let cli = apps::path(App::Nats)?;
    let env: [(&str, &OsStr); 3] = [
        ("NATS_URL", OsStr::new(&url)),
        ("HOME", home.path().as_os_str()),
        ("XDG_CONFIG_HOME", home.path().as_os_str()),
    ];
    let server = Server::spawn_app(&binary, home.path(), &cli, &env, extra)?;
    Ok(Setup {
        server,
        _nats: nats_server,
        _home: home,
    })
}

#[test]
fn natscli_group_endpoints_serve_only_their_part_and_bind_sessions() -> Result<()> {
    let setup = setup("ORDERS", &[])?;
    for mode in ["legacy", "2026-07-28"] {
        python(
            "groups.py",
            &strings(&[
                "--url",
                &setup.server.url,
                "--mode",
                mode,
                "--stream",
                "ORDERS",
            ]),
        )?
        .has("/mcp/stream: 2 tools")?
        .has("/mcp/stream ran: stream info --json -- ORDERS")?
        .has("/mcp/stream refused kv_ls: unknown tool: \"kv_ls\"")?
        .has("/mcp/nope: 404")?;
    }
    ensure!(
        setup.server.log().contains(
            "Each group alone (`--group NAME` over stdio): \
             http://127.0.0.1:"
        ) && setup
            .server
            .log()
            .contains("/mcp/<group> for account, kv, stream"),
        "the banner names no groups:\n{}",
        setup.server.log()
    );
    Ok(())
}

#[test]
fn group_flag_narrows_tools_and_client_entries() -> Result<()> {
    let binary = groups_server()?;
    let run = |args: &[&str]| {
        run_bounded(
            Command::new(&binary).args(args),
            SUBCOMMAND_TIMEOUT,
            &format!("nats-mcp {}", args.join(" ")),
        )
    };
    let tools = run(&["tools", "--json", "--group", "stream"])?.success()?;
    let listed = tools.json()?;
    let names: Vec<&str> = listed
        .as_array()
        .context("tools --json is no array")?
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    ensure!(
        names == ["stream_info", "stream_rm"],
        "tools --group stream: {}",
        tools.report()
    );
    let entry = run(&[
        "--port",
        "8123",
        "config",
        "--client",
        "claude-code",
        "--group",
        "stream",
    ])?
    .success()?;
    entry
        .has("nats-stream")?
        .has("http://127.0.0.1:8123/mcp/stream")?
        .has("--group stream")?;
    let unknown = run(&["tools", "--group", "streams"])?;
    ensure!(
        !unknown.succeeded()
            && unknown
            .stderr
            .contains("--group \"streams\": this server has no such group; its groups are: account, kv, stream"),
        "tools --group streams: {}",
        unknown.report()
    );
    Ok(())
}

#[test]
fn natscli_catalog_mode_searches_describes_and_runs_through_the_direct_call() -> Result<()> {
    let setup = setup("ORDERS", &["--catalog", "search"])?;
    for mode in ["legacy", "2026-07-28"] {
        python(
            "catalog.py",
            &strings(&["--url", &setup.server.url, "--mode", mode, "--stream", "ORDERS"]),
        )?
        .has("search found: stream_info (run_read_only)")?
        .has("bad argument: invalid arguments for stream_info")?
        .has("ran: stream info --json -- ORDERS")?
        .has("declined: Not approved: the user declined to run \"stream rm --force -- ORDERS\"")?
        .has("refused: run_read_only runs only tools with the read-only hint, and stream_rm has none")?;
    }
    let ran = setup
        .server
        .log()
        .lines()
        .filter(|line| line.contains("Ran stream rm"))
        .count();
    ensure!(ran == 0, "stream rm ran:\n{}", setup.server.log());
    Ok(())
}

/// The server of all natscli commands (`bench/nats-all.yaml`, the benchmark's), built once per
/// test process into the warm `target/fiskgen-e2e`.
fn whole_server() -> Result<PathBuf> {
    static BUILT: Mutex<Option<PathBuf>> = Mutex::new(None);
    let mut built = BUILT.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(binary) = built.as_ref() {
        return Ok(binary.clone());
    }
    let dir = workspace_root()
        .join("target")
        .join("fiskgen-e2e")
        .join("nats-all");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let binary = fiskgen_build(
        "bench/nats-all.yaml",
        &apps::path(App::Nats)?,
        &dir.join("nats-mcp"),
    )?;
    *built = Some(binary.clone());
    Ok(binary)
}

/// `sizes.py`'s report on the whole natscli server started with `extra` flags.
fn whole_sizes(extra: &[&str], catalog: bool) -> Result<serde_json::Value> {
    let binary = whole_server()?;
    let home = tempfile::tempdir().context("creating the CLI's home")?;
    let env: [(&str, &OsStr); 2] = [
        ("HOME", home.path().as_os_str()),
        ("XDG_CONFIG_HOME", home.path().as_os_str()),
    ];
    let server = Server::spawn_app(&binary, home.path(), &apps::path(App::Nats)?, &env, extra)?;
    let mut args = strings(&["--url", &server.url, "--mode", "2026-07-28"]);
    if catalog {
        args.push("--catalog".into());
    }
    let finished = python("sizes.py", &args)?;
    println!("{}", finished.report());
    let report = finished
        .stdout
        .lines()
        .find(|line| line.starts_with('{'))
        .context("sizes.py printed no report")?;
    serde_json::from_str(report).context("sizes.py's report")
}

#[test]
fn natscli_whole_in_catalog_mode_lists_at_most_4_kb_on_every_endpoint() -> Result<()> {
    let listed = whole_sizes(&[], false)?;
    let tools = listed["whole"]["tools"].as_u64().unwrap_or_default();
    ensure!(tools > 200, "natscli whole serves {tools} tools");
    let groups = listed["groups"].as_object().context("no groups")?;
    ensure!(groups.len() > 10, "natscli has {} groups", groups.len());
    // sizes.py checked each group's entries against the whole list's, and its body against
    // its entries plus the whole list's overhead.
    let catalog = whole_sizes(&["--catalog", "search"], true)?;
    let body = catalog["whole"]["body"].as_u64().unwrap_or(u64::MAX);
    ensure!(body <= 4096, "the catalog list of natscli is {body} bytes");
    println!(
        "natscli: {tools} tools; list {} bytes, catalog {body} bytes",
        listed["whole"]["body"]
    );
    Ok(())
}
