//! Questions (`expose.agent.mcp.ask`) with the official Python SDK's elicitation callback
//! against the conformance fixture app's server: the asked parameters are not advertised, the
//! user is asked with forms built from the parameters' schemas before the command runs, in both
//! eras, over HTTP and stdio; declined, dismissed, unfit and unaskable answers refuse the call;
//! a gated tool asks its questions before the approval (docs/runtime.md, "Questions").
//! `questions.py` documents each case.

use anyhow::Result;
use fiskgen_tests::apps::{self, App};
use fiskgen_tests::clients;

use super::clients::{Server, python, strings};

/// Runs `questions.py --case <case>` against a fresh HTTP server, in `mode`.
fn over_http(mode: &str, case: &str) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let server = Server::spawn_conformance(dir.path(), &[])?;
    python(
        "questions.py",
        &strings(&["--url", &server.url, "--mode", mode, "--case", case]),
    )?;
    Ok(())
}

/// Runs `questions.py --case <case>` against the server over stdio, in `mode`.
fn over_stdio(mode: &str, case: &str) -> Result<()> {
    let server = clients::conformance_server()?;
    let app = apps::path(App::Conformance)?;
    python(
        "questions.py",
        &[
            "--server".into(),
            server.display().to_string(),
            "--app".into(),
            app.display().to_string(),
            "--mode".into(),
            mode.into(),
            "--case".into(),
            case.into(),
        ],
    )?;
    Ok(())
}

/// Every case that both eras answer alike.
const CASES: [&str; 8] = [
    "answers", "rounds", "defaults", "decline", "cancel", "none", "model", "approval",
];

#[test]
fn asked_parameters_are_the_users_in_a_legacy_session_over_http() -> Result<()> {
    for case in CASES {
        over_http("legacy", case)?;
    }
    Ok(())
}

#[test]
fn asked_parameters_are_the_users_in_2026_07_28_over_http() -> Result<()> {
    for case in CASES {
        over_http("2026-07-28", case)?;
    }
    Ok(())
}

#[test]
fn asked_parameters_are_the_users_over_stdio_in_both_eras() -> Result<()> {
    for mode in ["legacy", "2026-07-28"] {
        for case in ["answers", "rounds", "none"] {
            over_stdio(mode, case)?;
        }
    }
    Ok(())
}

#[test]
fn an_unfit_answer_is_refused_in_a_legacy_session_and_asked_again_in_2026_07_28() -> Result<()> {
    over_http("legacy", "invalid")?;
    over_http("2026-07-28", "invalid")?;
    over_stdio("2026-07-28", "invalid")
}

#[test]
fn mrtr_rounds_keep_earlier_answers_in_a_sealed_state_and_ask_only_what_is_missing() -> Result<()> {
    over_http("2026-07-28", "manual")
}

#[test]
fn the_banner_names_the_tools_that_ask_and_their_questions() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let server = Server::spawn_conformance(dir.path(), &[])?;
    let line = server.wait_for_line(&["exposed tool(s) ask the user"])?;
    anyhow::ensure!(
        line.contains(
            "note: 6 exposed tool(s) ask the user for some of their parameters before they run \
             (expose.agent.mcp.ask): test_input_required_result_elicitation (user_name), \
             test_input_required_result_multi_round (step1, step2)"
        ) && line.ends_with(
            "confirm_greeting (who), test_tool_with_task (user_name); clients that cannot be \
             asked with a form are refused"
        ),
        "banner line: {line}"
    );
    Ok(())
}

#[test]
fn a_client_that_declares_tasks_is_asked_inside_a_task_a_subset_at_a_time() -> Result<()> {
    over_http("2026-07-28", "task")?;
    over_stdio("2026-07-28", "task")
}

/// `test-mcp tools --json` lists each tool's questions exactly as `fiskgen info --json` plans
/// them (the one type of both, `fiskgen_contract::info::ToolInfo`).
#[test]
fn the_server_lists_the_questions_fiskgen_info_plans() -> Result<()> {
    use anyhow::Context as _;
    use fiskgen_contract::info::ToolInfo;

    let server = clients::conformance_server()?;
    let output = std::process::Command::new(&server)
        .args(["tools", "--json"])
        .output()
        .with_context(|| format!("running {}", server.display()))?;
    anyhow::ensure!(
        output.status.success(),
        "{} tools --json failed",
        server.display()
    );
    let listed: Vec<ToolInfo> = serde_json::from_slice(&output.stdout)?;
    let printed =
        fiskgen::info::render_json_with_access(&super::golden::plan("conformance")?.server)?;
    let mut document: serde_json::Value = serde_json::from_str(&printed)?;
    let planned: Vec<ToolInfo> = serde_json::from_value(document["tools"].take())?;
    anyhow::ensure!(listed == planned, "tools --json and info --json differ");
    let rounds = listed
        .iter()
        .find(|tool| tool.name == "test_input_required_result_multi_round")
        .context("the multi-round tool is served")?;
    let asked: Vec<(&str, Vec<&str>)> = rounds
        .questions
        .iter()
        .map(|q| {
            (
                q.name.as_str(),
                q.params.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    anyhow::ensure!(
        asked == [("step1", vec!["name"]), ("step2", vec!["color"])],
        "questions {asked:?}"
    );
    Ok(())
}
