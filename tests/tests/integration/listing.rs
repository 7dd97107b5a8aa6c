//! `tools/list` (docs/runtime.md, "Listing tools"), with the official Python SDK and raw
//! requests where no SDK shows every member of an entry.
//!
//! `tasks-builtins-mcp` (tests/fixtures/builtins.yaml) lists its 10 tools in pages of 4; the
//! demo server lists its 8 in one page and, narrowed with `--tools`, serves the built entries of
//! the kept tools.

use std::path::Path;

use anyhow::{Context, Result};
use fiskgen_tests::apps::{self, App};
use fiskgen_tests::clients;

use super::clients::{Server, python, strings};

/// What `tasks-builtins-mcp` serves, in serving order (as builtins.py lists it).
const BUILTINS_SERVED: [&str; 10] = [
    "task_list",
    "task_show",
    "note_search",
    "store_export",
    "read_file",
    "base64_encode",
    "knowledge_search",
    "knowledge_read",
    "knowledge_list",
    "knowledge_enumerate",
];

/// `page_size` in tests/fixtures/builtins.yaml.
const PAGE_SIZE: &str = "4";

fn served() -> String {
    serde_json::to_string(&BUILTINS_SERVED).unwrap_or_default()
}

fn paginate_over_http(mode: &str) -> Result<()> {
    let dir = tempfile::tempdir().context("creating the server's directory")?;
    let server = Server::spawn(&clients::builtins_server()?, dir.path(), &[])?;
    let finished = python(
        "pagination.py",
        &strings(&[
            "--url",
            &server.url,
            "--mode",
            mode,
            "--expect",
            &served(),
            "--page-size",
            PAGE_SIZE,
        ]),
    )?;
    finished.has_line("page 3: ['knowledge_list', 'knowledge_enumerate']")?;
    Ok(())
}

#[test]
fn python_sdk_follows_tools_list_pages_to_the_served_set_over_http_legacy() -> Result<()> {
    paginate_over_http("legacy")
}

#[test]
fn python_sdk_follows_tools_list_pages_to_the_served_set_over_http_2026_07_28() -> Result<()> {
    paginate_over_http("2026-07-28")
}

#[test]
fn python_sdk_follows_tools_list_pages_to_the_served_set_over_stdio() -> Result<()> {
    let app = apps::path(App::Demo)?;
    let binary = clients::builtins_server()?;
    for mode in ["legacy", "2026-07-28"] {
        let mut args = strings(&[
            "--mode",
            mode,
            "--expect",
            &served(),
            "--page-size",
            PAGE_SIZE,
            "--command",
        ]);
        args.push(path_text(&binary)?);
        args.extend(strings(&["--stdio", "--application-path"]));
        args.push(path_text(&app)?);
        python("pagination.py", &args)?
            .has_line("page 3: ['knowledge_list', 'knowledge_enumerate']")?;
    }
    Ok(())
}

fn path_text(path: &Path) -> Result<String> {
    path.to_str()
        .map(str::to_string)
        .with_context(|| format!("{} is not UTF-8", path.display()))
}

/// A golden server: its binary, the application it runs and its golden crate.
struct Golden {
    binary: fn() -> Result<std::path::PathBuf>,
    app: App,
    case: &'static str,
}

const GOLDENS: [Golden; 5] = [
    Golden {
        binary: clients::demo_server,
        app: App::Demo,
        case: "demo",
    },
    Golden {
        binary: clients::builtins_server,
        app: App::Demo,
        case: "builtins",
    },
    Golden {
        binary: clients::fixture_server,
        app: App::Fixture,
        case: "fixture",
    },
    Golden {
        binary: clients::conformance_server,
        app: App::Conformance,
        case: "conformance",
    },
    Golden {
        binary: clients::auth_server,
        app: App::Demo,
        case: "auth",
    },
];

/// Every golden server (the conformance one with its task-only tools, builtins in pages of 4,
/// auth behind its static token) lists exactly the entries fiskgen computed at build time
/// (`execution` included), over stdio and over HTTP with sessions and stateless, in both eras,
/// with and without `Origin`, asking for gzip or not, page after page.
#[test]
fn every_golden_server_lists_its_built_entries_on_every_transport_era_and_header() -> Result<()> {
    for golden in GOLDENS {
        let dir = tempfile::tempdir().context("creating the server's directory")?;
        let binary = (golden.binary)()?;
        let app = apps::path(golden.app)?;
        let mut env: Vec<(&str, &std::ffi::OsStr)> = Vec::new();
        let mut headers = Vec::new();
        if golden.case == "auth" {
            let dir_arg = path_text(dir.path())?;
            python("auth.py", &strings(&["keygen", "--dir", &dir_arg]))?;
            env.push(("TASKS_AUTH_TOKEN", "static-s3cret".as_ref()));
            env.push(("TASKS_AUTH_KEY", "header-s3cret".as_ref()));
            headers = strings(&["--header", "authorization=Bearer static-s3cret"]);
        }
        let sessions = Server::spawn_app(&binary, dir.path(), &app, &env, &[])?;
        let stateless = Server::spawn_app(&binary, dir.path(), &app, &env, &["--stateless"])?;
        let expected = apps::workspace_root()
            .join("tests/expected")
            .join(golden.case)
            .join("src/listing.json");
        let stdio = serde_json::to_string(&[
            path_text(&binary)?,
            "--stdio".into(),
            "--application-path".into(),
            path_text(&app)?,
        ])?;
        let mut args = strings(&[
            "--expected",
            &path_text(&expected)?,
            "--url",
            &sessions.url,
            "--url",
            &stateless.url,
            "--stdio",
            &stdio,
        ]);
        args.extend(headers);
        let run = python("list_everywhere.py", &args)
            .with_context(|| format!("the {} server", golden.case))?;
        for way in [
            "legacy origin=False gzip",
            "2026-07-28 origin=True identity",
        ] {
            run.has(way)?;
        }
        run.has("stdio legacy")?.has("stdio 2026-07-28")?;
        if golden.case == "conformance" {
            run.has("(2 task-only)")?;
        }
    }
    Ok(())
}

/// A server narrowed with `--tools` lists the kept tools with the entries fiskgen built.
#[test]
fn narrowing_keeps_the_built_entries() -> Result<()> {
    let full_dir = tempfile::tempdir().context("creating the server's directory")?;
    let narrowed_dir = tempfile::tempdir().context("creating the server's directory")?;
    let binary = clients::demo_server()?;
    let full = Server::spawn(&binary, full_dir.path(), &[])?;
    let narrowed = Server::spawn(
        &binary,
        narrowed_dir.path(),
        &["--tools", "^task_(add|list)$"],
    )?;
    let expected = apps::workspace_root().join("tests/expected/demo/src/listing.json");
    python(
        "list_everywhere.py",
        &strings(&[
            "--expected",
            &path_text(&expected)?,
            "--url",
            &full.url,
            "--narrowed-url",
            &narrowed.url,
            "--narrowed",
            r#"["task_add","task_list"]"#,
        ]),
    )?
    .has_line("narrowed (2026-07-28): 2 entries, as built")?;
    Ok(())
}
