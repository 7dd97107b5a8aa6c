//! Driving fx in tmux: the entries `<server> config --client fx` prints, fx's home with them
//! in `~/.fx/mcp.json`, fx's answers told apart on the screen, and `/mcp list`'s health blocks.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use fiskgen_tests::tmux::Session;
use fiskgen_tests::{clients, fx};
use serde_json::{Map, Value};
use tempfile::TempDir;

use crate::clients::run_bounded;

/// fx's answer to `/mcp list` when `~/.fx/mcp.json` has no server (or no `mcp` map).
const NO_SERVERS: &str = "No MCP servers configured.";
/// fx's trace log (`FX_TRACE_LOG`), in its home.
const TRACE: &str = "fx-trace.log";
/// fx's window: wide enough that a health line is one line.
const WINDOW: (u16, u16) = (200, 50);
/// How long fx may take to show its welcome screen.
const WELCOME: Duration = Duration::from_secs(30);
/// How long a server may take to reach `state=ready` (natscli's every command included).
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

/// What `<server> config --client fx ARGS` printed: the entry (one JSON line, as text and
/// parsed) and the note on stderr.
pub(super) struct Printed {
    pub(super) text: String,
    pub(super) entry: Value,
    pub(super) note: String,
}

impl Printed {
    /// The entry's one server: its name and object.
    pub(super) fn server(&self) -> Result<(&str, &Value)> {
        let servers = self.entry["mcp"]
            .as_object()
            .with_context(|| format!("the fx entry has no `mcp` map: {}", self.entry))?;
        ensure!(servers.len() == 1, "not one server: {}", self.entry);
        let (name, server) = servers.iter().next().context("no server")?;
        Ok((name.as_str(), server))
    }

    pub(super) fn name(&self) -> Result<String> {
        Ok(self.server()?.0.to_string())
    }
}

/// Runs `<server> config --client fx ARGS`: exactly one line on stdout, a JSON object.
pub(super) fn print_entry(server: &Path, args: &[&str]) -> Result<Printed> {
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
        text: lines[0].to_string(),
        entry,
        note: printed.stderr,
    })
}

/// The stdio entry for `server` running `app`.
pub(super) fn stdio_entry(server: &Path, app: &Path) -> Result<Printed> {
    let app = app.display().to_string();
    print_entry(server, &["--stdio", "--application-path", &app])
}

/// The HTTP entry for a running server.
pub(super) fn http_entry(server: &Path, url: &str) -> Result<Printed> {
    print_entry(server, &["--url", url])
}

/// fx's `~/.fx/mcp.json`: the printed entries' `mcp` maps merged, each server object as
/// printed.
pub(super) fn write_config(home: &Path, entries: &[&Printed]) -> Result<()> {
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
        only.text.clone()
    } else {
        serde_json::to_string_pretty(&serde_json::json!({ "mcp": merged }))?
    };
    std::fs::write(&file, text).with_context(|| format!("writing {}", file.display()))
}

// ---------------------------------------------------------------------------------------
// fx in tmux
// ---------------------------------------------------------------------------------------

/// fx running in tmux with a home of its own.
pub(super) struct Fx {
    session: Session,
    home: TempDir,
    test: &'static str,
}

/// One server's block of `/mcp list` (its health line and the indented lines under it).
#[derive(Debug)]
pub(super) struct Health(pub(super) String);

impl Health {
    pub(super) fn field(&self, key: &str) -> Option<&str> {
        self.0
            .split_whitespace()
            .find_map(|word| word.strip_prefix(key)?.strip_prefix('='))
    }

    pub(super) fn failure(&self) -> Option<&str> {
        self.0
            .lines()
            .find_map(|line| line.trim().strip_prefix("failure="))
    }
}

impl Fx {
    /// Writes `entries` into a fresh home's `~/.fx/mcp.json`, starts fx there with `env`
    /// added, and leaves its welcome screen (Escape).
    pub(super) fn start(
        test: &'static str,
        entries: &[&Printed],
        env: &[(&str, &OsStr)],
    ) -> Result<Fx> {
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
    pub(super) fn check<T>(&self, result: Result<T>) -> Result<T> {
        result.map_err(|error| {
            let dir = clients::target_dir().join("fx-screens").join(self.test);
            let _ = std::fs::remove_dir_all(&dir);
            match self.session.save_screens(&dir) {
                Ok(dir) => {
                    let _ = std::fs::copy(self.home.path().join(TRACE), dir.join(TRACE));
                    let config = self.home.path().join(".fx").join("mcp.json");
                    let _ = std::fs::copy(config, dir.join("mcp.json"));
                    let trace = self.trace();
                    let lines: Vec<&str> = trace.lines().collect();
                    let tail = lines[lines.len().saturating_sub(10)..].join("\n");
                    error.context(format!(
                        "fx's screens, trace log and mcp.json: {}\nfx's trace log ends:\n{tail}",
                        dir.display()
                    ))
                }
                Err(save) => error.context(format!("fx's screens were not saved: {save}")),
            }
        })
    }

    /// fx's trace log so far.
    pub(super) fn trace(&self) -> String {
        std::fs::read_to_string(self.home.path().join(TRACE)).unwrap_or_default()
    }

    /// Types `line` and waits until fx's answers to it (the transcript entries after those on
    /// the screen before, fully drawn) satisfy `done`.
    pub(super) fn run<T>(
        &mut self,
        line: &str,
        timeout: Duration,
        mut done: impl FnMut(&str) -> Option<T>,
    ) -> Result<T> {
        let result = (|| {
            let before = answers(&self.session.capture()?);
            self.session.type_line(line)?;
            // An answer is read once it is the same on two reads in a row: fx draws it in
            // several writes.
            let mut last = String::new();
            self.session.wait_for(line, timeout, |screen| {
                let answer = answers_after(screen, before)?;
                let settled = answer == last;
                last = answer.to_string();
                if settled { done(answer) } else { None }
            })
        })();
        self.check(result)
    }

    /// Types `line`; the answer must contain every one of `texts`. Returns the answer.
    pub(super) fn expect(&mut self, line: &str, texts: &[&str]) -> Result<String> {
        self.run(line, ANSWER, |after| {
            texts
                .iter()
                .all(|text| after.contains(text))
                .then(|| after.to_string())
        })
    }

    /// `/mcp list` until `name`'s block is settled (ready or failed, discovery done), then
    /// returns it. Discovery runs in the background, so a person asks again until it settles.
    pub(super) fn health(&mut self, name: &str) -> Result<Health> {
        let deadline = std::time::Instant::now() + READY;
        loop {
            let answer = self.run("/mcp list", ANSWER, |after| {
                (after.contains("MCP health") || after.contains(NO_SERVERS))
                    .then(|| after.to_string())
            })?;
            let Some(health) = health_block(&answer, name) else {
                let result = Err(anyhow::anyhow!(
                    "fx does not list {name} in /mcp list:\n{answer}"
                ));
                return self.check(result);
            };
            let settled = match health.field("state") {
                Some("ready") => health.field("discovery") == Some("completed"),
                Some("failed") => true,
                _ => false,
            };
            if settled {
                return Ok(health);
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
    pub(super) fn ready(&mut self, name: &str, tools: usize) -> Result<Health> {
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
    pub(super) fn ensure(&self, condition: bool, message: impl FnOnce() -> String) -> Result<()> {
        let result = if condition {
            Ok(())
        } else {
            Err(anyhow::anyhow!(message()))
        };
        self.check(result)
    }

    /// Rewrites `~/.fx/mcp.json` with `entries`.
    pub(super) fn reconfigure(&self, entries: &[&Printed]) -> Result<()> {
        write_config(self.home.path(), entries)
    }

    /// Leaves fx with `/exit` and waits until it has exited.
    pub(super) fn exit(self) -> Result<()> {
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
pub(super) fn answers(screen: &str) -> usize {
    screen
        .lines()
        .filter(|line| line.starts_with(ENTRY))
        .count()
}

/// The transcript entries after the first `before` ones, up to the input line (`┃`) below
/// them, when there are any and fx has drawn its input line again.
pub(super) fn answers_after(screen: &str, before: usize) -> Option<&str> {
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
    // fx draws an entry, then its input line below it: until that is back, it is still drawing.
    let end = rest.rfind("\n┃")?;
    Some(&rest[..end + 1])
}

/// `name`'s block in a `/mcp list` answer: its health line and the deeper-indented lines under
/// it.
pub(super) fn health_block(answer: &str, name: &str) -> Option<Health> {
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

/// How many tools `server` serves for `app` (`<server> tools --json`).
pub(super) fn tool_count(server: &Path, app: &Path) -> Result<usize> {
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
pub(super) fn scratch() -> Result<TempDir> {
    tempfile::tempdir().context("creating a scratch directory")
}
