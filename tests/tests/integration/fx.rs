//! fx, the MCP client the project was specified against (vercel-labs/fx v0.0.5, built once
//! from `../shared/clients/fx` by [`fiskgen_tests::fx`]), driven as a person would: in tmux,
//! with `~/.fx/mcp.json` holding exactly the entries `<server> config --client fx` prints (the
//! server object unchanged; several entries are merged into the one `mcp` map), typing `/mcp`
//! commands and reading the screen.
//!
//! Every screen read is kept; when a test fails they are written to
//! `target/fx-screens/<test>/` and the error names the directory.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use fiskgen_tests::apps::{self, App};
use fiskgen_tests::tmux::Session;
use fiskgen_tests::{clients, fx};
use serde_json::{Map, Value};
use tempfile::TempDir;

use super::clients::{Server, run_bounded};
use super::nats::fiskgen_build;

/// fx's trace log (`FX_TRACE_LOG`), in its home.
const TRACE: &str = "fx-trace.log";
/// fx's window: wide enough that a health line is one line.
const WINDOW: (u16, u16) = (200, 50);
/// How long fx may take to show its welcome screen.
const WELCOME: Duration = Duration::from_secs(30);
/// How long a server may take to reach `state=ready` (natscli's 230 tools included).
const READY: Duration = Duration::from_secs(90);
/// How long one `/mcp` command may take to answer.
const ANSWER: Duration = Duration::from_secs(30);
/// Bound of one `<server> config` run.
const QUICK: Duration = Duration::from_secs(20);
/// The protocol every generated server negotiates with fx.
const PROTOCOL: &str = "2026-07-28";

// ---------------------------------------------------------------------------------------
// Entries and fx's home
// ---------------------------------------------------------------------------------------

/// What `<server> config --client fx ARGS` printed: the entry (one JSON line) and the note on
/// stderr.
struct Printed {
    entry: Value,
    note: String,
}

impl Printed {
    /// The entry's one server: its name and object.
    fn server(&self) -> Result<(&str, &Value)> {
        let servers = self.entry["mcp"]
            .as_object()
            .with_context(|| format!("the fx entry has no `mcp` map: {}", self.entry))?;
        ensure!(servers.len() == 1, "not one server: {}", self.entry);
        let (name, server) = servers.iter().next().context("no server")?;
        Ok((name.as_str(), server))
    }

    fn name(&self) -> Result<String> {
        Ok(self.server()?.0.to_string())
    }
}

/// Runs `<server> config --client fx ARGS`: exactly one line on stdout, a JSON object.
fn print_entry(server: &Path, args: &[&str]) -> Result<Printed> {
    let mut cmd = Command::new(server);
    cmd.args(["config", "--client", "fx"])
        .args(args)
        .env_remove("FISK_AI_MCP_PORT")
        .env_remove("FISK_AI_MCP_ADDRESS");
    let what = format!("{} config --client fx {}", server.display(), args.join(" "));
    let printed = run_bounded(&mut cmd, QUICK, &what)?.success()?;
    let lines: Vec<&str> = printed.stdout.lines().collect();
    ensure!(lines.len() == 1, "{what}: not one line: {}", printed.stdout);
    let entry = serde_json::from_str(lines[0]).with_context(|| format!("{what}: {}", lines[0]))?;
    Ok(Printed {
        entry,
        note: printed.stderr,
    })
}

/// The stdio entry for `server` running `app`.
fn stdio_entry(server: &Path, app: &Path) -> Result<Printed> {
    let app = app.display().to_string();
    print_entry(server, &["--stdio", "--application-path", &app])
}

/// The HTTP entry for a running server.
fn http_entry(server: &Path, url: &str) -> Result<Printed> {
    print_entry(server, &["--url", url])
}

/// fx's `~/.fx/mcp.json`: the printed entries' `mcp` maps merged, each server object as
/// printed.
fn write_config(home: &Path, entries: &[&Printed]) -> Result<()> {
    let mut merged = Map::new();
    for printed in entries {
        let servers = printed.entry["mcp"]
            .as_object()
            .with_context(|| format!("the fx entry has no `mcp` map: {}", printed.entry))?;
        for (name, server) in servers {
            ensure!(
                merged.insert(name.clone(), server.clone()).is_none(),
                "two entries named {name}"
            );
        }
    }
    let dir = home.join(".fx");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let file = dir.join("mcp.json");
    let text = if let [only] = entries {
        // One entry: the printed text itself.
        serde_json::to_string(&only.entry)?
    } else {
        serde_json::to_string_pretty(&serde_json::json!({ "mcp": merged }))?
    };
    std::fs::write(&file, text).with_context(|| format!("writing {}", file.display()))
}

// ---------------------------------------------------------------------------------------
// fx in tmux
// ---------------------------------------------------------------------------------------

/// fx running in tmux with a home of its own.
struct Fx {
    session: Session,
    home: TempDir,
    test: &'static str,
}

/// One server's block of `/mcp list` (its health line and the indented lines under it).
#[derive(Debug)]
struct Health(String);

impl Health {
    fn field(&self, key: &str) -> Option<&str> {
        self.0
            .split_whitespace()
            .find_map(|word| word.strip_prefix(key)?.strip_prefix('='))
    }

    fn failure(&self) -> Option<&str> {
        self.0
            .lines()
            .find_map(|line| line.trim().strip_prefix("failure="))
    }
}

impl Fx {
    /// Writes `entries` into a fresh home's `~/.fx/mcp.json`, starts fx there with `env`
    /// added, and leaves its welcome screen (Escape).
    fn start(test: &'static str, entries: &[&Printed], env: &[(&str, &OsStr)]) -> Result<Fx> {
        let binary = fx::path()?;
        let home = tempfile::tempdir().context("creating fx's home")?;
        write_config(home.path(), entries)?;
        let trace = home.path().join(TRACE);
        let mut all: Vec<(&str, &OsStr)> = vec![
            ("HOME", home.path().as_os_str()),
            ("NO_COLOR", OsStr::new("1")),
            // fx's own log of its MCP work, kept with the screens.
            ("FX_TRACE_LOG", trace.as_os_str()),
            ("FX_TRACE_SCOPES", OsStr::new("mcp")),
        ];
        all.extend_from_slice(env);
        let session = Session::start(
            &home.path().join("tmux"),
            &binary,
            &[],
            &all,
            home.path(),
            WINDOW,
        )?;
        let mut fx = Fx {
            session,
            home,
            test,
        };
        let started = fx.welcome();
        fx.check(started)?;
        Ok(fx)
    }

    /// Waits for the welcome screen (the sign-in choices, which the MCP commands do not need)
    /// and leaves it with Escape.
    fn welcome(&mut self) -> Result<()> {
        self.session.wait_for_text("Esc to set up later", WELCOME)?;
        self.session.press(&["Escape"])?;
        self.session
            .wait_for("leaving the welcome screen", WELCOME, |screen| {
                (!screen.contains("Esc to set up later")).then_some(())
            })
    }

    /// Passes `result` on; when it is an error, saves the screens (and fx's trace log, and
    /// its `mcp.json`) and names their directory.
    fn check<T>(&self, result: Result<T>) -> Result<T> {
        result.or_else(|error| {
            let dir = clients::target_dir().join("fx-screens").join(self.test);
            let _ = std::fs::remove_dir_all(&dir);
            match self.session.save_screens(&dir) {
                Ok(dir) => {
                    let _ = std::fs::copy(self.home.path().join(TRACE), dir.join(TRACE));
                    let config = self.home.path().join(".fx").join("mcp.json");
                    let _ = std::fs::copy(config, dir.join("mcp.json"));
                    Err(error.context(format!("fx's screens: {}", dir.display())))
                }
                Err(save) => Err(error.context(format!("fx's screens were not saved: {save}"))),
            }
        })
    }

    /// fx's trace log so far.
    fn trace(&self) -> String {
        std::fs::read_to_string(self.home.path().join(TRACE)).unwrap_or_default()
    }

    /// Types `line` and waits until fx's answers to it (the transcript entries after those on
    /// the screen before) satisfy `done`.
    fn run<T>(
        &mut self,
        line: &str,
        timeout: Duration,
        mut done: impl FnMut(&str) -> Option<T>,
    ) -> Result<T> {
        let result = (|| {
            let before = answers(&self.session.capture()?);
            self.session.type_line(line)?;
            self.session
                .wait_for(line, timeout, |screen| done(answers_after(screen, before)?))
        })();
        self.check(result)
    }

    /// Types `line`; the answer must contain every one of `texts`. Returns the answer.
    fn expect(&mut self, line: &str, texts: &[&str]) -> Result<String> {
        self.run(line, ANSWER, |after| {
            texts
                .iter()
                .all(|text| after.contains(text))
                .then(|| after.to_string())
        })
    }

    /// `/mcp list` until `name`'s block is settled (ready or failed, discovery done), then
    /// returns it. Discovery runs in the background, so a person asks again until it settles.
    fn health(&mut self, name: &str) -> Result<Health> {
        let deadline = std::time::Instant::now() + READY;
        loop {
            let found = self.run("/mcp list", ANSWER, |after| {
                after
                    .contains("MCP health")
                    .then(|| health_block(after, name))
            })?;
            if let Some(health) = found {
                let settled = match health.field("state") {
                    Some("ready") => health.field("discovery") == Some("completed"),
                    Some("failed") => true,
                    _ => false,
                };
                if settled {
                    return Ok(health);
                }
            }
            if std::time::Instant::now() >= deadline {
                let result = Err(anyhow::anyhow!(
                    "{name} did not settle within {READY:?} in /mcp list"
                ));
                return self.check(result);
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// `/mcp list`: `name` is ready, on [`PROTOCOL`], serving `tools` tools, its discovery
    /// completed, with nothing failed.
    fn ready(&mut self, name: &str, tools: usize) -> Result<Health> {
        let health = self.health(name)?;
        let mut wrong = Vec::new();
        for (key, want) in [
            ("state", "ready".to_string()),
            ("protocol", PROTOCOL.to_string()),
            ("tools", tools.to_string()),
            ("discovery", "completed".to_string()),
        ] {
            if health.field(key) != Some(want.as_str()) {
                wrong.push(format!("{key}={want}"));
            }
        }
        if let Some(failure) = health.failure() {
            wrong.push(format!("no failure (failure={failure})"));
        }
        let result = if wrong.is_empty() {
            Ok(health)
        } else {
            Err(anyhow::anyhow!(
                "{name}: /mcp list should show {}:\n{}",
                wrong.join(", "),
                health.0
            ))
        };
        self.check(result)
    }

    /// Fails (with the screens saved) unless `condition` holds.
    fn ensure(&self, condition: bool, message: impl FnOnce() -> String) -> Result<()> {
        let result = if condition {
            Ok(())
        } else {
            Err(anyhow::anyhow!(message()))
        };
        self.check(result)
    }

    /// Rewrites `~/.fx/mcp.json` with `entries`.
    fn reconfigure(&self, entries: &[&Printed]) -> Result<()> {
        write_config(self.home.path(), entries)
    }

    /// Leaves fx with `/exit` and waits until it has exited.
    fn exit(self) -> Result<()> {
        self.session.type_line("/exit")?;
        let exited = (|| {
            let deadline = std::time::Instant::now() + ANSWER;
            while !self.session.exited()? {
                ensure!(
                    std::time::Instant::now() < deadline,
                    "fx did not exit within {ANSWER:?} of /exit"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
            Ok(())
        })();
        self.check(exited)
    }
}

/// fx starts each transcript entry (an answer, a notice) with this mark.
const ENTRY: &str = "● ";

/// How many transcript entries `screen` shows.
fn answers(screen: &str) -> usize {
    screen
        .lines()
        .filter(|line| line.starts_with(ENTRY))
        .count()
}

/// The transcript entries after the first `before` ones, up to the input line (`┃`) below
/// them, when there are any.
fn answers_after(screen: &str, before: usize) -> Option<&str> {
    let mut seen = 0;
    let mut offset = 0;
    let mut start = None;
    for line in screen.split_inclusive('\n') {
        if line.starts_with(ENTRY) {
            if seen == before {
                start = Some(offset);
            }
            seen += 1;
        }
        offset += line.len();
    }
    let rest = &screen[start?..];
    let end = rest.rfind("\n┃").map_or(rest.len(), |at| at + 1);
    Some(&rest[..end])
}

/// `name`'s block in a `/mcp list` answer: its health line and the deeper-indented lines under
/// it.
fn health_block(answer: &str, name: &str) -> Option<Health> {
    let mut lines = answer.lines();
    let head = lines.find(|line| {
        line.trim_start()
            .strip_prefix(name)
            .is_some_and(|rest| rest.starts_with(" source="))
    })?;
    let indent = head.len() - head.trim_start().len();
    let mut block = head.trim().to_string();
    for line in lines {
        let deeper = line.len() - line.trim_start().len() > indent;
        if !deeper || line.trim().is_empty() {
            break;
        }
        block.push('\n');
        block.push_str(line.trim());
    }
    Some(Health(block))
}

// ---------------------------------------------------------------------------------------
// The servers
// ---------------------------------------------------------------------------------------

/// The tools the demo serves (`tasks-mcp tools --json`).
fn tool_count(server: &Path, app: &Path) -> Result<usize> {
    let mut cmd = Command::new(server);
    cmd.args(["tools", "--json", "--application-path"]).arg(app);
    let listed = run_bounded(&mut cmd, QUICK, "tools --json")?
        .success()?
        .json()?;
    listed
        .as_array()
        .map(Vec::len)
        .context("tools --json printed no list")
}

/// A scratch directory for servers and builds.
fn scratch() -> Result<TempDir> {
    tempfile::tempdir().context("creating a scratch directory")
}

// ---------------------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------------------

#[test]
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

    // Across pages (the server's page size is 4): a help page per tool, a sheet per cheat.
    let resources = format!("MCP resources from {name} ({})", tools + CHEATS.len());
    let listed = fx.expect(
        &format!("/mcp resource list {name}"),
        &[&resources, "test://static-text", "test://watched-resource"],
    )?;
    for uri in [
        "test://help/greet",
        "test://help/slow_compute",
        "test://conformance",
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

#[test]
fn fx_reads_the_resources_prompts_and_completions_made_from_help_and_cheats_over_stdio()
-> Result<()> {
    reads_resources_prompts_and_completions("resources-prompts-stdio", false)
}

#[test]
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

#[test]
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

#[test]
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

#[test]
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
