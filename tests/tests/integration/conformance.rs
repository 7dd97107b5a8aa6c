//! The conformance fixture app (`tests/apps/conformance`) behind its generated server `test-mcp`
//! (the golden crate `tests/expected/conformance`): the MCP conformance suite in both
//! requirement sets and its tasks and skills extension scenarios against the reviewed baseline,
//! and the resources, prompts and completions made from the app's help, with the Python SDK and
//! the Inspector CLI.
//!
//! The tests share one server (started by the first test that needs it, stopped when the last
//! one holding it ends). Every process and every wait is bounded.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use anyhow::{Result, bail, ensure};
use fiskgen_tests::clients;
use serde_json::Value;
use tempfile::TempDir;

use super::clients::{Finished, Server, node_tool, python, run_bounded, strings};

/// Bound of one conformance requirement set (each scenario is bounded at 30 s by the suite;
/// a whole set takes about half a minute).
const CONFORMANCE_TIMEOUT: Duration = Duration::from_secs(300);
/// Bound of one Inspector CLI run.
const INSPECTOR_TIMEOUT: Duration = Duration::from_secs(60);

/// The conformance fixture's server on a free port, with its own working directory.
struct Shared {
    server: Server,
    _dir: TempDir,
}

/// The server the tests share.
fn shared_server() -> Result<Arc<Shared>> {
    static SHARED: Mutex<Weak<Shared>> = Mutex::new(Weak::new());
    let mut slot = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(server) = slot.upgrade() {
        return Ok(server);
    }
    let dir = tempfile::tempdir()?;
    let server = Server::spawn_conformance(dir.path(), &[])?;
    let shared = Arc::new(Shared { server, _dir: dir });
    *slot = Arc::downgrade(&shared);
    Ok(shared)
}

// ---------------------------------------------------------------------------------------
// Resources, prompts and completions
// ---------------------------------------------------------------------------------------

fn docs_with_python(mode: &str) -> Result<()> {
    let shared = shared_server()?;
    python(
        "docs.py",
        &strings(&["--url", &shared.server.url, "--mode", mode]),
    )?
    .has_line("resources: 35 in 9 pages")?
    .has_line("read skill://test/static-text/SKILL.md: the cheat under its frontmatter")?
    .has_line("prompts: 7 in 2 pages")?
    .has_line("completions: template variable and prompt argument")?;
    Ok(())
}

#[test]
fn python_sdk_lists_reads_and_templates_resources_gets_prompts_and_completes_legacy() -> Result<()>
{
    docs_with_python("legacy")
}

#[test]
fn python_sdk_lists_reads_and_templates_resources_gets_prompts_and_completes_2026_07_28()
-> Result<()> {
    docs_with_python("2026-07-28")
}

/// SEP-2243: `param_headers` puts `x-mcp-header` on a parameter; the Python SDK mirrors it in
/// `Mcp-Param-Resource-Uri` (Base64 for a non-ASCII value) and the call runs, while raw
/// requests without the header or with another value are refused with -32020 and HTTP 400.
#[test]
fn python_sdk_mirrors_an_annotated_parameter_in_its_header_and_the_server_checks_it() -> Result<()>
{
    let shared = shared_server()?;
    python("param_headers.py", &strings(&["--url", &shared.server.url]))?
        .has_line("listed: resourceUri x-mcp-header Resource-Uri")?
        .has_line("sdk: mirrored and ran with test://example-resource")?
        .has_line("sdk: mirrored and ran with test://café/ünïcode")?
        .has("missing header: refused: ")?
        .has("mismatched header: refused: ")?
        .has_line("matching header: accepted")?;
    Ok(())
}

/// The conformance fixture app's tools, in serving order.
const TOOLS: [&str; 21] = [
    "test_simple_text",
    "test_reconnection",
    "test_error_handling",
    "test_tool_with_progress",
    "test_logging_tool",
    "test_tool_with_logging",
    "test_elicitation",
    "test_streaming_elicitation",
    "test_input_required_result_request_state",
    "test_input_required_result_tampered_state",
    "test_input_required_result_elicitation",
    "test_input_required_result_multi_round",
    "test_elicitation_sep1034_defaults",
    "multi_input",
    "confirm_greeting",
    "test_prompt_with_embedded_resource",
    "slow_compute",
    "greet",
    "failing_job",
    "test_tool_with_task",
    "confirm_delete",
];

/// Its cheats, by label.
const CHEATS: [&str; 7] = [
    "conformance",
    "slow_compute",
    "static-text",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_simple_prompt",
    "watched-resource",
];

/// `mcp-inspector --cli <url> --method <method> --format json` (it follows `nextCursor`).
fn inspector(home: &std::path::Path, url: &str, era: &str, method: &str) -> Result<Value> {
    let mut cmd = node_tool("mcp-inspector", home)?;
    cmd.args([
        "--cli",
        url,
        "--protocol-era",
        era,
        "--method",
        method,
        "--format",
        "json",
    ]);
    let what = format!("mcp-inspector --cli {url} --protocol-era {era} --method {method}");
    run_bounded(&mut cmd, INSPECTOR_TIMEOUT, &what)?
        .success()?
        .json()
}

#[test]
fn inspector_cli_lists_resources_and_prompts() -> Result<()> {
    let shared = shared_server()?;
    let home = tempfile::tempdir()?;
    for era in ["legacy", "modern"] {
        let listed = inspector(home.path(), &shared.server.url, era, "resources/list")?;
        let uris: Vec<&str> = listed["result"]["resources"]
            .as_array()
            .map(|all| all.iter().filter_map(|r| r["uri"].as_str()).collect())
            .unwrap_or_default();
        let expected: Vec<String> = TOOLS
            .iter()
            .map(|tool| format!("test://help/{tool}"))
            .chain(CHEATS.iter().map(|label| format!("test://{label}")))
            .chain(
                CHEATS
                    .iter()
                    .map(|label| format!("skill://test/{}/SKILL.md", label.replace('_', "-"))),
            )
            .collect();
        ensure!(uris == expected, "{era}: resources {uris:?}");
        let listed = inspector(home.path(), &shared.server.url, era, "prompts/list")?;
        let names: Vec<&str> = listed["result"]["prompts"]
            .as_array()
            .map(|all| all.iter().filter_map(|p| p["name"].as_str()).collect())
            .unwrap_or_default();
        ensure!(names == CHEATS, "{era}: prompts {names:?}");
        let listed = inspector(
            home.path(),
            &shared.server.url,
            era,
            "resources/templates/list",
        )?;
        ensure!(
            listed["result"]["resourceTemplates"][0]["uriTemplate"] == "test://help/{tool}",
            "{era}: templates {listed}"
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The conformance suite
// ---------------------------------------------------------------------------------------

/// Runs the suite with `selection` (`--requirements <set>` or `--scenario <name>`) against the
/// shared server with the reviewed baseline: every check not in it must pass, and no entry of
/// a scenario that ran may be stale (the suite fails the run on either).
fn conformance_run(selection: &[&str]) -> Result<Finished> {
    let shared = shared_server()?;
    let scratch = tempfile::tempdir()?;
    let results = scratch.path().join("results");
    let mut cmd = node_tool("conformance", scratch.path())?;
    cmd.args(["server", "--url", &shared.server.url])
        .args(selection)
        .arg("--expected-failures")
        .arg(clients::expected_failures())
        .arg("-o")
        .arg(&results);
    let what = format!("conformance server {}", selection.join(" "));
    let run = run_bounded(&mut cmd, CONFORMANCE_TIMEOUT, &what)?;
    if !run.succeeded() || !run.stdout.contains("Baseline check passed") {
        bail!(
            "{what}: checks failed that the baseline does not excuse (or baseline entries \
             went stale):\n{}\n{}",
            failing_checks(&results),
            run.report()
        );
    }
    Ok(run)
}

/// Runs one requirement set; each of `must_pass` must pass entirely.
fn conformance(requirements: &str, must_pass: &[&str]) -> Result<()> {
    let run = conformance_run(&["--requirements", requirements])?;
    for scenario in must_pass {
        ensure!(
            run.stdout.lines().any(|l| {
                l.trim_start().starts_with('✓') && l.contains(&format!(" {scenario}: "))
            }),
            "--requirements {requirements}: scenario {scenario} did not pass entirely:\n{}",
            run.report()
        );
    }
    Ok(())
}

/// The server scenarios `conformance list --server` marks `[<tag>]`.
fn listed_scenarios(tag: &str) -> Result<Vec<String>> {
    let home = tempfile::tempdir()?;
    let mut cmd = node_tool("conformance", home.path())?;
    cmd.args(["list", "--server"]);
    let run = run_bounded(&mut cmd, INSPECTOR_TIMEOUT, "conformance list --server")?.success()?;
    let suffix = format!(" [{tag}]");
    Ok(run
        .stdout
        .lines()
        .filter_map(|line| line.trim().strip_prefix("- ")?.strip_suffix(&suffix))
        .map(str::to_string)
        .collect())
}

/// The tasks extension's scenarios, which neither requirement set scores: every one the suite
/// lists, run one by one against the same baseline (a tasks scenario the suite adds is run
/// too). Those the fixture app fully supports must pass entirely.
#[test]
fn conformance_tasks_extension() -> Result<()> {
    let scenarios: Vec<String> = listed_scenarios("extension")?
        .into_iter()
        .filter(|name| name.starts_with("tasks-"))
        .collect();
    ensure!(
        scenarios.iter().any(|s| s == "tasks-lifecycle") && scenarios.len() >= 10,
        "the suite lists fewer tasks scenarios than expected: {scenarios:?}"
    );
    let fully = [
        "tasks-capability-negotiation",
        "tasks-wire-fields",
        "tasks-request-state-removal",
        "tasks-dispatch-and-envelope",
    ];
    for scenario in &scenarios {
        let run = conformance_run(&["--scenario", scenario])?;
        if fully.contains(&scenario.as_str()) {
            ensure!(
                run.stdout.contains(", 0 failed, 0 warnings")
                    && !run.stdout.contains("Expected failures (in baseline)"),
                "{scenario} did not pass entirely:\n{}",
                run.report()
            );
        }
    }
    Ok(())
}

/// The Skills extension's scenarios (SEP-2640), which neither requirement set scores: every one
/// the suite lists, each in both eras (2026-07-28, the suite's default for an extension, and
/// 2025-11-25, forced), against the same baseline. The app's cheats are skills, so each must
/// pass entirely, and the enumeration and manifest checks must have run rather than skipped
/// (`sep-2640-skills-directory` skips: a skill is one file, so `directoryRead` is not declared;
/// an undeclared extension would skip every check and still "pass").
#[test]
fn conformance_skills_extension_in_both_eras() -> Result<()> {
    let scenarios: Vec<String> = listed_scenarios("extension")?
        .into_iter()
        .filter(|name| name.starts_with("sep-2640-"))
        .collect();
    for expected in ["sep-2640-skills-enumeration", "sep-2640-skills-manifest"] {
        ensure!(
            scenarios.iter().any(|s| s == expected),
            "the suite lists no {expected}: {scenarios:?}"
        );
    }
    for scenario in &scenarios {
        for era in [&[][..], &["--spec-version", "2025-11-25", "--force"][..]] {
            let mut selection = vec!["--scenario", scenario.as_str()];
            selection.extend_from_slice(era);
            let run = conformance_run(&selection)?;
            let what = format!("{} ({})", scenario, era.get(1).unwrap_or(&"2026-07-28"));
            ensure!(
                run.stdout.contains(", 0 failed, 0 warnings")
                    && !run.stdout.contains("Expected failures (in baseline)"),
                "{what} did not pass entirely:\n{}",
                run.report()
            );
            // Skipped checks count neither way: these must have run and succeeded.
            let ran: &[&str] = match scenario.as_str() {
                "sep-2640-skills-enumeration" => &[
                    "sep-2640-skills-list-implemented",
                    "sep-2640-skills-get-implemented",
                    "sep-2640-skills-get-unknown-uri-invalid-params",
                    "sep-2640-entry-frontmatter-identical",
                    "sep-2640-name-naming-rules",
                ],
                "sep-2640-skills-manifest" => &[
                    "sep-2640-final-segment-equals-name",
                    "sep-2640-skillmd-metadata-description",
                ],
                _ => &[],
            };
            for check in ran {
                ensure!(
                    run.stdout.lines().any(|line| {
                        // `[<check id>` padded with spaces to the longest id, then `]`.
                        line.split_once(&format!("[{check}"))
                            .is_some_and(|(_, rest)| {
                                rest.trim_start().starts_with(']') && rest.contains("SUCCESS")
                            })
                    }),
                    "{what}: check {check} did not run and succeed:\n{}",
                    run.report()
                );
            }
        }
    }
    Ok(())
}

/// Every baseline entry names a scenario that one of the runs above runs, so that no entry can
/// outlive its check unnoticed (the suite reports stale entries only for scenarios it ran).
#[test]
fn every_baseline_entry_is_a_check_of_a_scenario_the_runs_cover() -> Result<()> {
    let text = std::fs::read_to_string(clients::expected_failures())?;
    // The file is a YAML list of plain strings under `server:`, one a line.
    let entries: Vec<&str> = text
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("- "))
        .map(|entry| entry.split(" #").next().unwrap_or(entry).trim())
        .collect();
    ensure!(
        entries.len() <= 25,
        "the baseline grew to {} entries (docs/testing-clients.md: fix the server instead)",
        entries.len()
    );
    let mut covered: Vec<String> = listed_scenarios("extension")?
        .into_iter()
        .filter(|name| name.starts_with("tasks-"))
        .collect();
    for set in ["2025-11-25", "2026-07-28"] {
        let home = tempfile::tempdir()?;
        let mut cmd = node_tool("conformance", home.path())?;
        cmd.args(["list", "--server", "--requirements", set]);
        let what = format!("conformance list --server --requirements {set}");
        let run = run_bounded(&mut cmd, INSPECTOR_TIMEOUT, &what)?.success()?;
        // Server scenarios are listed bare, or tagged `[server]` under the unscored kinds.
        covered.extend(run.stdout.lines().filter_map(|line| {
            let name = line.trim().strip_prefix("- ")?;
            let mut words = name.split_whitespace();
            let name = words.next()?;
            match words.next() {
                None | Some("[server]") => Some(name.to_string()),
                Some(_) => None,
            }
        }));
    }
    for entry in entries {
        let Some((scenario, check)) = entry.split_once(':') else {
            bail!("baseline entry {entry:?} is not <scenario>:<check-id>");
        };
        ensure!(!check.is_empty(), "baseline entry {entry:?} names no check");
        ensure!(
            covered.iter().any(|s| s == scenario),
            "baseline entry {entry:?}: no run covers scenario {scenario:?} (covered: {covered:?})"
        );
    }
    Ok(())
}

/// The checks that did not succeed, from the suite's `checks.json` files.
fn failing_checks(results: &std::path::Path) -> String {
    let mut lines = Vec::new();
    let Ok(entries) = std::fs::read_dir(results) else {
        return format!("(no results in {})", results.display());
    };
    let mut dirs: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    dirs.sort();
    for dir in dirs {
        let Ok(text) = std::fs::read_to_string(dir.join("checks.json")) else {
            continue;
        };
        let Ok(Value::Array(checks)) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let name = dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        for check in checks {
            let status = check["status"].as_str().unwrap_or("?");
            if status == "FAILURE" || status == "WARNING" {
                lines.push(format!(
                    "{name}: {} {status}: {}",
                    check["id"].as_str().unwrap_or("?"),
                    check["errorMessage"].as_str().unwrap_or("")
                ));
            }
        }
    }
    lines.join("\n")
}

#[test]
fn conformance_2025_11_25() -> Result<()> {
    conformance(
        "2025-11-25",
        &[
            "server-initialize",
            "ping",
            "tools-list",
            "dns-rebinding-protection",
            "server-session-lifecycle",
            "server-sse-multiple-streams",
            "logging-set-level",
            "tools-call-simple-text",
            "tools-call-elicitation",
            "prompts-list",
            "prompts-get-simple",
            "prompts-get-with-args",
            "prompts-get-embedded-resource",
            "resources-list",
            "resources-read-text",
            "resources-subscribe",
            "resources-unsubscribe",
            "completion-complete",
        ],
    )
}

#[test]
fn conformance_2026_07_28() -> Result<()> {
    conformance(
        "2026-07-28",
        &[
            "tools-list",
            "dns-rebinding-protection",
            "http-header-validation",
            "server-sse-multiple-streams",
            "tools-call-simple-text",
            "input-required-result-unsupported-methods",
            "input-required-result-validate-input",
            "input-required-result-result-type",
            "input-required-result-request-state",
            "input-required-result-missing-input-response",
            "caching",
            "sep-2164-resource-not-found",
            "prompts-list",
            "prompts-get-simple",
            "prompts-get-with-args",
            "prompts-get-embedded-resource",
            "resources-list",
            "resources-read-text",
            "completion-complete",
        ],
    )
}
