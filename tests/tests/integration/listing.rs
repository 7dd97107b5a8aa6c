//! `tools/list` as precomputed bytes (docs/runtime.md, "Listing tools"), with the official
//! Python SDK and raw HTTP where no SDK shows the bytes.
//!
//! `tasks-builtins-mcp` (tests/fixtures/builtins.yaml) lists its 9 tools in pages of 4; the
//! demo server lists its 8 in one page and, narrowed with `--tools`, serves the built entries of
//! the kept tools.

use std::path::Path;

use anyhow::{Context, Result};
use fiskgen_tests::apps::{self, App};
use fiskgen_tests::clients;

use super::clients::{Server, python, strings};

/// What `tasks-builtins-mcp` serves, in serving order (as builtins.py lists it).
const BUILTINS_SERVED: [&str; 9] = [
    "task_list",
    "task_show",
    "note_search",
    "store_export",
    "read_file",
    "base64_encode",
    "knowledge_search",
    "knowledge_read",
    "knowledge_list",
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
    finished.has_line("page 3: ['knowledge_list']")?;
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
        python("pagination.py", &args)?.has_line("page 3: ['knowledge_list']")?;
    }
    Ok(())
}

fn path_text(path: &Path) -> Result<String> {
    path.to_str()
        .map(str::to_string)
        .with_context(|| format!("{} is not UTF-8", path.display()))
}

/// The answers served in front of axum (a plain list with its length), after the body check (a
/// chunked one) and by rmcp (with `Origin`) are the same.
#[test]
fn precomputed_tools_list_equals_rmcp_answer_and_narrowing_keeps_the_built_entries() -> Result<()> {
    let full_dir = tempfile::tempdir().context("creating the server's directory")?;
    let narrowed_dir = tempfile::tempdir().context("creating the server's directory")?;
    let binary = clients::demo_server()?;
    let full = Server::spawn(&binary, full_dir.path(), &[])?;
    let narrowed = Server::spawn(
        &binary,
        narrowed_dir.path(),
        &["--tools", "^task_(add|list)$"],
    )?;
    python(
        "list_bytes.py",
        &strings(&[
            "--url",
            &full.url,
            "--narrowed-url",
            &narrowed.url,
            "--narrowed",
            r#"["task_add","task_list"]"#,
        ]),
    )?
    .has("the same result as rmcp's, and the same bytes to a chunked request")?
    .has_line("narrowed (2026-07-28): 2 entries, byte-identical")?;
    Ok(())
}
