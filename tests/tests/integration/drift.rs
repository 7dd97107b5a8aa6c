//! The generated server checks the application it wraps: `verify`, `--strict-app`, and the
//! background check at start, against the demo and its simulated upgrade (`tasks-v2`). The
//! verdict is the one `fiskgen check` gives (fiskgen/tests/cli.rs runs both on one change).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use fiskgen_tests::apps::{self, App};
use fiskgen_tests::clients;

fn server(args: &[&str], application: &Path) -> Result<Output> {
    let binary = clients::demo_server()?;
    Command::new(&binary)
        .arg("--application-path")
        .arg(application)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {}", binary.display()))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn verify_accepts_the_application_the_server_was_built_for() -> Result<()> {
    let output = server(&["verify"], &apps::path(App::Demo)?)?;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("matches the tasks 1.0.0 this server was built from"));
    Ok(())
}

#[test]
fn verify_lists_what_changed_after_an_upgrade() -> Result<()> {
    let output = server(&["verify"], &apps::path(App::DemoV2)?)?;
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let report = text(&output.stdout);
    for expected in [
        "the served tools changed since the tasks 1.0.0 this server was built from",
        "+ task_archive (new tool)",
        "- note_search (no longer served)",
        "~ task_add\n    command \"task add\" changed",
        "Not drift:\n  application version: 1.0.0 -> 1.1.0",
        "Regenerate the server with `fiskgen build`",
    ] {
        assert!(
            report.contains(expected),
            "missing {expected:?} in:\n{report}"
        );
    }
    Ok(())
}

#[test]
fn strict_app_refuses_to_start_for_a_changed_application() -> Result<()> {
    let output = server(&["--strict-app", "--port", "0"], &apps::path(App::DemoV2)?)?;
    assert_eq!(output.status.code(), Some(1));
    let log = text(&output.stderr);
    assert!(
        log.contains("--strict-app:") && log.contains("+ task_archive (new tool)"),
        "{log}"
    );
    Ok(())
}

/// A stdio session: the server's responses line by line, and its stderr.
struct Session {
    child: Child,
    lines: mpsc::Receiver<String>,
    stderr: mpsc::Receiver<String>,
}

impl Session {
    fn start(application: &Path, dir: &Path) -> Result<Session> {
        let mut child = Command::new(clients::demo_server()?)
            .args(["--stdio", "--application-path"])
            .arg(application)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("starting the server")?;
        let (lines, stderr) = (
            pipe_lines(child.stdout.take())?,
            pipe_lines(child.stderr.take())?,
        );
        Ok(Session {
            child,
            lines,
            stderr,
        })
    }

    fn send(&mut self, message: &str) -> Result<()> {
        let stdin = self.child.stdin.as_mut().context("stdin")?;
        writeln!(stdin, "{message}").context("writing to the server")
    }

    /// The first response line containing `needle`, waiting at most `limit`.
    fn response(&self, needle: &str, limit: Duration) -> Result<String> {
        let deadline = std::time::Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return Ok(line),
                Ok(_) => {}
                Err(_) => bail!("no response containing {needle:?} within {limit:?}"),
            }
        }
    }

    /// Whether stderr shows a line containing `needle` within `limit`.
    fn logs(&self, needle: &str, limit: Duration) -> bool {
        let deadline = std::time::Instant::now() + limit;
        while let Ok(line) = self
            .stderr
            .recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()))
        {
            if line.contains(needle) {
                return true;
            }
        }
        false
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn pipe_lines(pipe: Option<impl std::io::Read + Send + 'static>) -> Result<mpsc::Receiver<String>> {
    let pipe = pipe.context("a piped stream")?;
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    Ok(receiver)
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"drift-test","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;

fn list_tools(session: &mut Session) -> Result<String> {
    session.send(INITIALIZE)?;
    session.response("\"id\":1", Duration::from_secs(20))?;
    session.send(INITIALIZED)?;
    session.send(LIST)?;
    session.response("\"id\":2", Duration::from_secs(20))
}

#[test]
fn a_changed_application_is_reported_at_start_in_the_background() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mut session = Session::start(&apps::path(App::DemoV2)?, dir.path())?;
    let tools = list_tools(&mut session)?;
    assert!(tools.contains("task_add"), "{tools}");
    assert!(
        session.logs(
            "changed since this server was built",
            Duration::from_secs(30)
        ),
        "the background check warns"
    );
    Ok(())
}

#[test]
fn the_startup_check_never_delays_serving() -> Result<()> {
    // An application whose introspection hangs: serving must not wait for it.
    let dir = tempfile::tempdir()?;
    let demo = apps::path(App::Demo)?;
    let slow = write_script(
        dir.path(),
        "slow-tasks",
        &format!(
            "if [ \"$1\" = --fisk-introspect ]; then sleep 25; fi\nexec '{}' \"$@\"",
            demo.display()
        ),
    )?;
    let mut session = Session::start(&slow, dir.path())?;
    let started = std::time::Instant::now();
    let tools = list_tools(&mut session)?;
    assert!(tools.contains("task_add"), "{tools}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "tools/list waited for the check: {:?}",
        started.elapsed()
    );
    Ok(())
}

/// A server over stdio whose application's introspection hangs, with its first `tools/list`
/// answered and the background check running: the server and the check's pid.
fn server_with_a_hanging_check(dir: &Path) -> Result<(Session, i32)> {
    let demo = apps::path(App::Demo)?;
    let pid_file = dir.join("introspect.pid");
    let hanging = write_script(
        dir,
        "hanging-tasks",
        &format!(
            "if [ \"$1\" = --fisk-introspect ]; then echo $$ > '{}'; exec sleep 60; fi\nexec '{}' \"$@\"",
            pid_file.display(),
            demo.display()
        ),
    )?;
    let mut session = Session::start(&hanging, dir)?;
    list_tools(&mut session)?;
    let pid = wait_for_pid(&pid_file, Duration::from_secs(20))?;
    Ok((session, pid))
}

/// Waits until the server has exited and then until `pid` is gone too.
fn wait_until_both_are_gone(session: &mut Session, pid: i32) -> Result<()> {
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while session.child.try_wait()?.is_none() {
        if std::time::Instant::now() > deadline {
            bail!("the server did not stop within 15 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let gone_by = std::time::Instant::now() + Duration::from_secs(10);
    while is_running(pid) {
        if std::time::Instant::now() > gone_by {
            bail!("the introspection child {pid} outlived the server");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

#[test]
fn stopping_the_server_kills_a_hanging_background_check() -> Result<()> {
    // The application's introspection hangs; the check starts once tools/list was answered,
    // at a lower priority, and the server's shutdown kills it instead of leaving it to its
    // 30 s timeout.
    let dir = tempfile::tempdir()?;
    let (mut session, pid) = server_with_a_hanging_check(dir.path())?;
    if Path::new("/usr/bin/nice").exists() || Path::new("/bin/nice").exists() {
        let own = niceness(i32::try_from(std::process::id())?)?;
        assert_eq!(
            niceness(pid)?,
            (own + 10).min(19),
            "the check runs at a lower priority"
        );
    }
    // Closing stdin stops a stdio server.
    drop(session.child.stdin.take());
    wait_until_both_are_gone(&mut session, pid)
}

#[test]
fn a_server_killed_outright_takes_its_background_check_with_it() -> Result<()> {
    // SIGKILL runs no shutdown: the kernel ends the check's child with the server (its
    // parent-death signal), so no introspection is left running behind a killed server.
    let dir = tempfile::tempdir()?;
    let (mut session, pid) = server_with_a_hanging_check(dir.path())?;
    session.child.kill()?;
    wait_until_both_are_gone(&mut session, pid)
}

/// The pid a script wrote, waiting at most `limit` for it.
fn wait_for_pid(file: &Path, limit: Duration) -> Result<i32> {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if let Ok(text) = std::fs::read_to_string(file)
            && let Ok(pid) = text.trim().parse()
        {
            return Ok(pid);
        }
        if std::time::Instant::now() > deadline {
            bail!("the background check did not start within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A process's nice value (field 19 of /proc/<pid>/stat).
fn niceness(pid: i32) -> Result<i64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let fields = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .unwrap_or_default();
    fields
        .split_whitespace()
        .nth(16)
        .context("no nice field")?
        .parse()
        .context("nice field")
}

/// Whether `pid` is a live process (a zombie counts as gone).
fn is_running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next());
            state != Some('Z')
        }
        Err(_) => false,
    }
}

/// Writes an executable script through a child shell (no writable descriptor in this process,
/// so no ETXTBSY when another test thread forks).
fn write_script(dir: &Path, name: &str, body: &str) -> Result<PathBuf> {
    let path = dir.join(name);
    let status = Command::new("/bin/sh")
        .args(["-c", "printf '%s\\n' \"$2\" > \"$1\" && chmod 755 \"$1\""])
        .arg("sh")
        .arg(&path)
        .arg(format!("#!/bin/sh\n{body}"))
        .status()
        .context("running /bin/sh")?;
    if !status.success() {
        bail!("writing {}", path.display());
    }
    Ok(path)
}
