//! fx, the MCP client the project was specified against (vercel-labs/fx v0.0.5, built once
//! from `../shared/clients/fx` by [`fiskgen_tests::fx`]), driven as a person would: in tmux,
//! with `~/.fx/mcp.json` holding exactly the entries `<server> config --client fx` prints (the
//! server object unchanged; several entries are merged into the one `mcp` map), typing `/mcp`
//! commands and reading the screen.
//!
//! One test runs every scenario in turn (each with its own fx, home and servers), so fx's
//! first build holds one test thread, not all of them; it reports every scenario that failed.
//! Every screen read is kept; when a scenario fails they are written to
//! `target/fx-screens/<scenario>/` with fx's trace log and `mcp.json`, and the error names the
//! directory.

mod driver;

use std::ffi::OsStr;

use anyhow::{Context, Result, bail, ensure};
use fiskgen_tests::apps::{self, App};
use fiskgen_tests::{clients, fx};
use serde_json::Value;

use self::driver::{Fx, Printed, health_block, http_entry, scratch, stdio_entry, tool_count};
use super::clients::Server;
use super::nats::fiskgen_build;

/// One scenario: it starts its own servers and fx.
type Scenario = fn() -> Result<()>;

/// Every scenario, in turn: fx is built first (once per machine), then each scenario runs
/// with its own fx; the test fails naming every scenario that failed, with its error.
#[test]
fn fx_shows_what_the_user_should_see_with_the_entries_config_prints() -> Result<()> {
    fx::path().context("building fx")?;
    let scenarios: [(&str, Scenario); 6] = [
        (
            "the demo server ready over stdio and HTTP",
            fx_lists_the_demo_server_ready_over_stdio_and_http,
        ),
        (
            "resources, prompts and completions over stdio",
            fx_reads_the_resources_prompts_and_completions_made_from_help_and_cheats_over_stdio,
        ),
        (
            "resources, prompts and completions over HTTP",
            fx_lists_and_completes_the_resources_and_prompts_made_from_help_and_cheats_over_http,
        ),
        (
            "reload after a server is added and one removed",
            fx_reload_connects_an_added_server_and_drops_a_removed_one,
        ),
        (
            "token and header authentication",
            fx_reaches_token_and_header_protected_servers_only_with_the_printed_variables_set,
        ),
        (
            "natscli whole",
            fx_discovers_every_natscli_command_within_its_limits_over_stdio_and_http,
        ),
    ];
    let mut failed = Vec::new();
    for (what, scenario) in scenarios {
        if let Err(error) = scenario() {
            failed.push(format!("{what}: {error:?}"));
        }
    }
    ensure!(
        failed.is_empty(),
        "{} of {} fx scenarios failed:\n\n{}",
        failed.len(),
        scenarios.len(),
        failed.join("\n\n")
    );
    Ok(())
}

fn fx_lists_the_demo_server_ready_over_stdio_and_http() -> Result<()> {
    let server = clients::demo_server()?;
    let app = apps::path(App::Demo)?;
    let tools = tool_count(&server, &app)?;
    let dir = scratch()?;

    let stdio = stdio_entry(&server, &app)?;
    let name = stdio.name()?;
    let mut fx = Fx::start("demo-stdio", &[&stdio], &[])?;
    let health = fx.ready(&name, tools)?;
    fx.ensure(health.field("transport") == Some("stdio"), || {
        format!("not stdio: {}", health.0)
    })?;
    fx.exit()?;

    let running = Server::spawn(&server, dir.path(), &[])?;
    let http = http_entry(&server, &running.url)?;
    let mut fx = Fx::start("demo-http", &[&http], &[])?;
    let health = fx.ready(&name, tools)?;
    fx.ensure(health.field("transport") == Some("http"), || {
        format!("not http: {}", health.0)
    })?;
    fx.exit()
}

/// `/mcp resource list|read|templates|complete` and `/mcp prompt list|get|complete` against
/// `test-mcp` (the conformance fixture's server: a help page per tool, a sheet and a prompt
/// per cheat, the `test://help/{tool}` template), over HTTP or stdio. Over HTTP, `read` and
/// `get` are left out: fx 0.0.5 sends `Mcp-Name` only on `tools/call`, the 2026-07-28
/// transport requires it on `resources/read` and `prompts/get` too, and the server refuses
/// both without it (400, -32020: fx shows `MCP resource read failed: UnexpectedHttpStatus.`).
fn reads_resources_prompts_and_completions(test: &'static str, http: bool) -> Result<()> {
    let server = clients::conformance_server()?;
    let app = apps::path(App::Conformance)?;
    let tools = tool_count(&server, &app)?;
    let dir = scratch()?;
    let running;
    let entry = if http {
        running = Server::spawn_conformance(dir.path(), &[])?;
        http_entry(&server, &running.url)?
    } else {
        stdio_entry(&server, &app)?
    };
    let name = entry.name()?;
    let mut fx = Fx::start(test, &[&entry], &[])?;
    fx.ready(&name, tools)?;

    // Across pages (the server's page size is 4): a help page per tool, a sheet and a skill's
    // SKILL.md per cheat (fx knows no skills: they are ordinary resources to it).
    let resources = format!("MCP resources from {name} ({})", tools + 2 * CHEATS.len());
    let listed = fx.expect(
        &format!("/mcp resource list {name}"),
        &[&resources, "test://static-text", "test://watched-resource"],
    )?;
    for uri in [
        "test://help/greet",
        "test://help/slow_compute",
        "test://conformance",
        "skill://test/static-text/SKILL.md",
    ] {
        fx.ensure(listed.contains(uri), || {
            format!("{uri} is not listed:\n{listed}")
        })?;
    }
    if !http {
        fx.expect(
            &format!("/mcp resource read {name} test://static-text"),
            &["This is the content of the static text resource."],
        )?;
        fx.expect(
            &format!("/mcp resource read {name} test://help/greet"),
            &["conformance greet"],
        )?;
    }
    fx.expect(
        &format!("/mcp resource templates {name}"),
        &[
            &format!("MCP resource templates from {name} (1)"),
            "test://help/{tool}",
        ],
    )?;
    let completed = fx.expect(
        &format!("/mcp resource complete {name} test://help/{{tool}} tool test_input"),
        &[
            &format!("MCP completions from {name} (4 of 4)"),
            "test_input_required_result_elicitation",
            "test_input_required_result_multi_round",
        ],
    )?;
    fx.ensure(!completed.contains("slow_compute"), || {
        format!("a completion that does not start with test_input:\n{completed}")
    })?;

    let count = format!("MCP prompts from {name} ({})", CHEATS.len());
    let prompts = fx.expect(
        &format!("/mcp prompt list {name}"),
        &[&count, "test_prompt_with_arguments [arg1, arg2]"],
    )?;
    for cheat in CHEATS {
        fx.ensure(prompts.contains(&format!("{name} :: {cheat} ")), || {
            format!("prompt {cheat} is not listed:\n{prompts}")
        })?;
    }
    if !http {
        fx.expect(
            &format!(
                r#"/mcp prompt get {name} test_prompt_with_arguments {{"arg1":"Ada","arg2":"?"}}"#
            ),
            &["conformance greet Ada --punctuation ?"],
        )?;
    }
    fx.expect(
        &format!("/mcp prompt complete {name} slow_compute mode t"),
        &[&format!("MCP completions from {name} (1 of 1)"), "thorough"],
    )?;
    fx.exit()
}

fn fx_reads_the_resources_prompts_and_completions_made_from_help_and_cheats_over_stdio()
-> Result<()> {
    reads_resources_prompts_and_completions("resources-prompts-stdio", false)
}

fn fx_lists_and_completes_the_resources_and_prompts_made_from_help_and_cheats_over_http()
-> Result<()> {
    reads_resources_prompts_and_completions("resources-prompts-http", true)
}

/// The conformance fixture's cheats (each a prompt and a `test://<label>` resource).
const CHEATS: [&str; 7] = [
    "conformance",
    "slow_compute",
    "static-text",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_simple_prompt",
    "watched-resource",
];

fn fx_reload_connects_an_added_server_and_drops_a_removed_one() -> Result<()> {
    let conformance = clients::conformance_server()?;
    let conformance_app = apps::path(App::Conformance)?;
    let conformance_tools = tool_count(&conformance, &conformance_app)?;
    let demo = clients::demo_server()?;
    let demo_tools = tool_count(&demo, &apps::path(App::Demo)?)?;
    let dir = scratch()?;
    let running = Server::spawn(&demo, dir.path(), &[])?;

    let first = stdio_entry(&conformance, &conformance_app)?;
    let second = http_entry(&demo, &running.url)?;
    let (first_name, second_name) = (first.name()?, second.name()?);
    let mut fx = Fx::start("reload", &[&first], &[])?;
    fx.ready(&first_name, conformance_tools)?;

    // A second server added: reload connects it, the first stays.
    fx.reconfigure(&[&first, &second])?;
    fx.expect("/mcp reload", &["MCP configuration reloaded successfully."])?;
    fx.ready(&second_name, demo_tools)?;
    fx.ready(&first_name, conformance_tools)?;

    // The first removed: reload drops it.
    fx.reconfigure(&[&second])?;
    fx.expect("/mcp reload", &["MCP configuration reloaded successfully."])?;
    let listed = fx.expect("/mcp list", &["MCP health (1 server)"])?;
    fx.ensure(health_block(&listed, &first_name).is_none(), || {
        format!("{first_name} is still listed after its removal:\n{listed}")
    })?;
    fx.ready(&second_name, demo_tools)?;
    fx.exit()
}

/// The variable a printed fx entry reads its credential from: `bearer_token_env`, or the one
/// `header_env` value; the note `config` prints must tell the user to export it.
fn credential_var(printed: &Printed) -> Result<String> {
    let (_, server) = printed.server()?;
    let var = match (&server["bearer_token_env"], &server["header_env"]) {
        (Value::String(var), Value::Null) => var.clone(),
        (Value::Null, Value::Object(headers)) if headers.len() == 1 => headers
            .values()
            .next()
            .and_then(Value::as_str)
            .context("header_env's value is not a string")?
            .to_string(),
        _ => bail!(
            "the fx entry names no credential variable: {}",
            printed.entry
        ),
    };
    ensure!(
        printed.note.contains(&format!("export {var}=")),
        "`config --client fx` does not say to export {var}: {:?}",
        printed.note
    );
    Ok(var)
}

fn fx_reaches_token_and_header_protected_servers_only_with_the_printed_variables_set() -> Result<()>
{
    let app = apps::path(App::Demo)?;
    let dir = scratch()?;
    let token_server = fiskgen_build(
        "tests/fixtures/fx-token.yaml",
        &app,
        &dir.path().join("token-mcp"),
    )?;
    let header_server = fiskgen_build(
        "tests/fixtures/fx-header.yaml",
        &app,
        &dir.path().join("key-mcp"),
    )?;
    let tools = tool_count(&token_server, &app)?;
    let token = Server::spawn_env(
        &token_server,
        dir.path(),
        &[],
        &[("TASKS_TOKEN", "t0ken-s3cret")],
    )?;
    let header = Server::spawn_env(
        &header_server,
        dir.path(),
        &[],
        &[("TASKS_KEY", "k3y-s3cret")],
    )?;
    let by_token = http_entry(&token_server, &token.url)?;
    let by_header = http_entry(&header_server, &header.url)?;
    let token_var = credential_var(&by_token)?;
    let header_var = credential_var(&by_header)?;
    ensure!(
        by_token.server()?.1.get("bearer_token_env").is_some(),
        "the token server's fx entry should use bearer_token_env: {}",
        by_token.entry
    );
    let (token_name, header_name) = (by_token.name()?, by_header.name()?);
    let entries = [&by_token, &by_header];

    // With the variables the entries name: both ready.
    let mut fx = Fx::start(
        "auth-set",
        &entries,
        &[
            (token_var.as_str(), OsStr::new("t0ken-s3cret")),
            (header_var.as_str(), OsStr::new("k3y-s3cret")),
        ],
    )?;
    for name in [&token_name, &header_name] {
        let health = fx.ready(name, tools)?;
        fx.ensure(health.field("auth") == Some("configured"), || {
            format!("{name}: not auth=configured:\n{}", health.0)
        })?;
    }
    fx.exit()?;

    // Without them: each fails, and fx's trace says which variable is missing.
    let mut fx = Fx::start("auth-unset", &entries, &[])?;
    for (name, missing) in [
        (&token_name, "McpBearerEnvironmentMissing"),
        (&header_name, "McpHeaderEnvironmentMissing"),
    ] {
        let health = fx.health(name)?;
        fx.ensure(
            health.field("state") == Some("failed")
                && health.field("auth") == Some("configured")
                && health.failure().is_some(),
            || format!("{name} without its variable should fail:\n{}", health.0),
        )?;
        let trace = fx.trace();
        fx.ensure(
            trace
                .lines()
                .any(|line| line.contains(name.as_str()) && line.contains(missing)),
            || format!("fx's trace does not say {missing} for {name}:\n{trace}"),
        )?;
    }
    fx.exit()?;

    // With wrong values: the server refuses them (401) and fx says authentication is required.
    let mut fx = Fx::start(
        "auth-wrong",
        &entries,
        &[
            (token_var.as_str(), OsStr::new("wrong")),
            (header_var.as_str(), OsStr::new("wrong")),
        ],
    )?;
    for name in [&token_name, &header_name] {
        let health = fx.health(name)?;
        fx.ensure(
            health.field("state") == Some("failed")
                && health.field("auth") == Some("required")
                && health
                    .failure()
                    .is_some_and(|failure| failure.starts_with("Authentication is required")),
            || format!("{name} with a wrong credential should fail:\n{}", health.0),
        )?;
    }
    fx.exit()
}

fn fx_discovers_every_natscli_command_within_its_limits_over_stdio_and_http() -> Result<()> {
    let app = apps::path(App::Nats)?;
    let dir = scratch()?;
    let server = fiskgen_build("bench/nats-all.yaml", &app, &dir.path().join("nats-mcp"))?;
    let tools = tool_count(&server, &app)?;
    ensure!(tools > 200, "natscli whole serves {tools} tools");

    let stdio = stdio_entry(&server, &app)?;
    let name = stdio.name()?;
    let mut fx = Fx::start("nats-stdio", &[&stdio], &[])?;
    fx.ready(&name, tools)?;
    fx.exit()?;

    let running = Server::spawn_app(&server, dir.path(), &app, &[], &[])?;
    let http = http_entry(&server, &running.url)?;
    let mut fx = Fx::start("nats-http", &[&http], &[])?;
    fx.ready(&name, tools)?;
    fx.exit()
}
