//! Drive an interactive terminal program as a person would: in a tmux session of its own
//! (a private server socket, a fixed window size), typing with `send-keys` and reading the
//! screen with `capture-pane`. Every screen read is kept, so a failing test can save them as
//! artefacts ([`Session::save_screens`]).
//!
//! Waiting is always bounded and always on the screen's text ([`Session::wait_for`]): the
//! screen is polled until a condition holds or the time is up, never slept on blindly.

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// How often the screen is read while waiting.
const POLL: Duration = Duration::from_millis(100);
/// Lines of history tmux keeps and a capture reads.
const HISTORY: usize = 5000;

/// One screen read, with what the test was waiting for.
#[derive(Debug, Clone)]
pub struct Screen {
    /// What the test was doing when it read the screen.
    pub label: String,
    /// The pane's text, history included, trailing blank lines removed.
    pub text: String,
}

/// A program running in a private tmux server, killed (with the server) on drop.
#[derive(Debug)]
pub struct Session {
    socket: PathBuf,
    screens: Vec<Screen>,
}

impl Session {
    /// Starts `program` with `args` in a `width`x`height` window, with the given environment
    /// (on top of this process's), in `cwd`. The tmux server's socket and configuration live in
    /// `dir`. The window stays after the program exits, so its last screen can be read.
    pub fn start(
        dir: &Path,
        program: &Path,
        args: &[&str],
        env: &[(&str, &OsStr)],
        cwd: &Path,
        (width, height): (u16, u16),
    ) -> Result<Session> {
        static SESSIONS: AtomicUsize = AtomicUsize::new(0);
        let n = SESSIONS.fetch_add(1, Ordering::Relaxed);
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let config = dir.join("tmux.conf");
        fs::write(
            &config,
            format!(
                "set -g remain-on-exit on\nset -g history-limit {HISTORY}\nset -g status off\n"
            ),
        )
        .with_context(|| format!("writing {}", config.display()))?;
        let session = Session {
            socket: dir.join(format!("tmux-{}-{n}.sock", std::process::id())),
            screens: Vec::new(),
        };
        let mut cmd = Command::new("tmux");
        cmd.arg("-S")
            .arg(&session.socket)
            .arg("-f")
            .arg(&config)
            .args(["new-session", "-d", "-s", "main", "-x"])
            .arg(width.to_string())
            .arg("-y")
            .arg(height.to_string())
            .arg("-c")
            .arg(cwd)
            .arg("--")
            .arg(program)
            .args(args)
            .envs(env.iter().copied())
            .env("TERM", "xterm-256color")
            .env_remove("TMUX");
        run(&mut cmd, "tmux new-session").with_context(
            || "the fx tests need tmux on PATH (Debian: apt-get install tmux; .ci/run installs it)",
        )?;
        Ok(session)
    }

    /// `tmux -S <socket> ARGS`.
    fn tmux(&self) -> Command {
        let mut cmd = Command::new("tmux");
        cmd.arg("-S").arg(&self.socket);
        cmd
    }

    /// Types `text` literally (no key names).
    pub fn type_text(&self, text: &str) -> Result<()> {
        run(
            self.tmux()
                .args(["send-keys", "-t", "main", "-l", "--"])
                .arg(text),
            "tmux send-keys",
        )
    }

    /// Presses keys by tmux name (`Enter`, `Escape`, `C-c`, ...).
    pub fn press(&self, keys: &[&str]) -> Result<()> {
        run(
            self.tmux().args(["send-keys", "-t", "main"]).args(keys),
            "tmux send-keys",
        )
    }

    /// Types `line` and presses Enter.
    pub fn type_line(&self, line: &str) -> Result<()> {
        self.type_text(line)?;
        self.press(&["Enter"])
    }

    /// The pane's text now, history included (not kept: see [`Session::wait_for`]).
    pub fn capture(&self) -> Result<String> {
        let out = self
            .tmux()
            .args(["capture-pane", "-p", "-J", "-t", "main", "-S"])
            .arg(format!("-{HISTORY}"))
            .stdin(Stdio::null())
            .output()
            .context("running tmux capture-pane")?;
        if !out.status.success() {
            bail!(
                "tmux capture-pane failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let text = String::from_utf8_lossy(&out.stdout);
        Ok(text.trim_end().to_string() + "\n")
    }

    /// Whether the program has exited (the window is kept: `remain-on-exit`).
    pub fn exited(&self) -> Result<bool> {
        let out = self
            .tmux()
            .args(["display-message", "-p", "-t", "main", "#{pane_dead}"])
            .stdin(Stdio::null())
            .output()
            .context("running tmux display-message")?;
        Ok(String::from_utf8_lossy(&out.stdout).trim() == "1")
    }

    /// Polls the screen until `done` returns `Some`, for at most `timeout`; keeps the last
    /// screen read under `label`. The error names what was awaited and shows the screen.
    pub fn wait_for<T>(
        &mut self,
        label: &str,
        timeout: Duration,
        mut done: impl FnMut(&str) -> Option<T>,
    ) -> Result<T> {
        let deadline = Instant::now() + timeout;
        loop {
            let text = self.capture()?;
            let found = done(&text);
            let exited = found.is_none() && self.exited()?;
            if found.is_some() || exited || Instant::now() >= deadline {
                self.screens.push(Screen {
                    label: label.to_string(),
                    text: text.clone(),
                });
            }
            if let Some(found) = found {
                return Ok(found);
            }
            if exited {
                bail!("{label}: the program exited; its last screen:\n{text}");
            }
            if Instant::now() >= deadline {
                bail!("{label}: not on the screen within {timeout:?}; the screen:\n{text}");
            }
            thread::sleep(POLL);
        }
    }

    /// Polls until the screen contains `text`; returns the screen.
    pub fn wait_for_text(&mut self, text: &str, timeout: Duration) -> Result<String> {
        self.wait_for(&format!("waiting for {text:?}"), timeout, |screen| {
            screen.contains(text).then(|| screen.to_string())
        })
    }

    /// Every screen kept so far.
    pub fn screens(&self) -> &[Screen] {
        &self.screens
    }

    /// Writes every screen kept (and the screen now, when the session still runs) into
    /// `dir`, one numbered file each; returns the directory.
    pub fn save_screens(&self, dir: &Path) -> Result<PathBuf> {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let mut all = self.screens.clone();
        if let Ok(text) = self.capture() {
            all.push(Screen {
                label: "the screen at the end".into(),
                text,
            });
        }
        for (i, screen) in all.iter().enumerate() {
            let mut body = String::new();
            let _ = writeln!(body, "# {}\n", screen.label);
            body.push_str(&screen.text);
            let file = dir.join(format!("{i:02}.txt"));
            fs::write(&file, body).with_context(|| format!("writing {}", file.display()))?;
        }
        Ok(dir.to_path_buf())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self
            .tmux()
            .arg("kill-server")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = fs::remove_file(&self.socket);
    }
}

/// Runs a tmux command; a failure to start or a non-zero exit is an error with its stderr.
fn run(cmd: &mut Command, what: &str) -> Result<()> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("{what}: cannot run tmux"))?;
    if !out.status.success() {
        bail!(
            "{what} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}
