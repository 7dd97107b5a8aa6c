//! Running a fisk application's `--fisk-introspect` safely, or reading a saved document, into
//! the lenient [`crate::model`] types: the one runner and the one document parser that fiskgen
//! (at build time) and every generated server (`verify`, the start-up check) use.
//!
//! Running the application is the only place where fiskgen executes foreign code at build time,
//! so it is bounded on every side: no shell, exactly one argument, stdin closed, a timeout after
//! which the application's whole process group is killed, a cap on what is read from stdout, and
//! an environment without LLM provider credentials (docs/introspection.md, "What fiskgen relies on"). Unlike Fisk AI,
//! stdout alone is parsed; stderr is only logged and quoted in errors.
//!
//! Watching the child within its limits is `introspect/supervise.rs`; finding and parsing the
//! document is `introspect/document.rs`; the errors and where a document came from are
//! `introspect/error.rs`.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

mod document;
mod error;
mod supervise;

use self::document::sanitize_line;
pub use self::document::{Introspection, parse, read, to_pretty_json};
pub use self::error::{INTROSPECT_FLAG, IntrospectError, MINIMUM_FISK_VERSION, Origin};
pub use self::supervise::GroupRegistry;
use self::supervise::{Captured, Limits, supervise};
#[cfg(test)]
use self::supervise::{Tail, lock, read_capped};
#[cfg(test)]
use crate::canonical;
use crate::defaults;

/// How long an application may take to print its model, as in Fisk AI.
pub const DEFAULT_TIMEOUT: Duration = defaults::INTROSPECT_TIMEOUT;

/// The most stdout bytes read from an application, as in Fisk AI (16 MiB).
pub const DEFAULT_MAX_BYTES: usize = defaults::INTROSPECT_MAX_BYTES;

/// The program that lowers the application's scheduling priority for [`Options::low_priority`],
/// where it is installed (POSIX `nice`, from coreutils or busybox).
const NICE_PROGRAMS: &[&str] = &["/usr/bin/nice", "/bin/nice"];
/// The niceness added for [`Options::low_priority`].
const LOW_PRIORITY_NICENESS: &str = "10";

/// Credential variables of LLM providers that never reach a child process (docs/introspection.md).
///
/// A generated server is driven by an LLM agent, so anything a served command can read may end
/// up in a model's context. The application being served never needs the agent side's provider
/// keys, so they are removed by name: the five Anthropic credentials Fisk AI removes, plus the
/// API keys of the other widely used hosted providers (OpenAI, Azure OpenAI, Google Gemini,
/// Mistral, Cohere, Groq, DeepSeek, xAI, OpenRouter, Together, Fireworks, Perplexity), and the
/// OpenTelemetry exporter's credentials (`OTEL_EXPORTER_OTLP_*HEADERS`, client keys and
/// certificates).
///
/// Kept on purpose: selector variables (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`, profiles),
/// which are not secrets, and general cloud credentials (`AWS_*`, `GOOGLE_API_KEY`,
/// `GOOGLE_APPLICATION_CREDENTIALS`, `HF_TOKEN`), which applications legitimately use. Operators
/// name any further variable in [`Options::scrub_env`].
pub const PROVIDER_CREDENTIAL_VARS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_IDENTITY_TOKEN",
    "ANTHROPIC_WEBHOOK_SIGNING_KEY",
    "ANTHROPIC_CUSTOM_HEADERS",
    "OPENAI_API_KEY",
    "OPENAI_ADMIN_KEY",
    "AZURE_OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "MISTRAL_API_KEY",
    "COHERE_API_KEY",
    "CO_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "XAI_API_KEY",
    "OPENROUTER_API_KEY",
    "TOGETHER_API_KEY",
    "FIREWORKS_API_KEY",
    "PERPLEXITY_API_KEY",
    // The OpenTelemetry export credentials, as Fisk AI strips them from every tool process
    // whether or not telemetry is on: bearer tokens, and the mTLS key and certificate paths.
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
    "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
    "OTEL_EXPORTER_OTLP_CLIENT_KEY",
    "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY",
    "OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY",
    "OTEL_EXPORTER_OTLP_LOGS_CLIENT_KEY",
    "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE",
    "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE",
    "OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE",
    "OTEL_EXPORTER_OTLP_LOGS_CLIENT_CERTIFICATE",
    "OTEL_EXPORTER_OTLP_CERTIFICATE",
    "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE",
    "OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE",
    "OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE",
];

/// The variable that switches fisk's help output to its LLM-friendly form; always set to `1`.
const LLM_FORMAT_VAR: &str = "LLMFORMAT";
/// Set to `1` for every process, as Fisk AI's `fisk mcp` sets it: tells a command it was started
/// by an agent harness rather than a person.
const FISK_AI_VAR: &str = "FISK_AI";
/// How many lines of stderr (and of stray stdout) an error message quotes.
const QUOTED_LINES: usize = 10;

/// Limits and environment for running an application's introspection.
#[derive(Clone)]
pub struct Options {
    /// How long the application may take to print its model and exit (default 30 s).
    pub timeout: Duration,
    /// The most bytes read from its stdout (default 16 MiB); more is an error.
    pub max_bytes: usize,
    /// Operator-named variables removed from its environment, in addition to
    /// [`PROVIDER_CREDENTIAL_VARS`] (fiskgen: the config's credential variables; a server: its
    /// `scrub_env` and its own secrets).
    pub scrub_env: Vec<String>,
    /// Run the application at a lower scheduling priority (niceness +10, through `nice` when it
    /// is installed), so a background check never competes with the work it runs beside.
    pub low_priority: bool,
    /// Told the application's process group while it runs, so its owner (a server) can kill it
    /// at shutdown instead of waiting for the timeout.
    pub groups: Option<Arc<dyn GroupRegistry>>,
    /// The directory the application runs in (`None`: the caller's). fiskgen runs it in the
    /// config file's directory, where an application that reads files relative to its working
    /// directory (a task file, say) finds them whichever directory fiskgen was started from.
    pub working_dir: Option<PathBuf>,
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("timeout", &self.timeout)
            .field("max_bytes", &self.max_bytes)
            .field("scrub_env", &self.scrub_env)
            .field("low_priority", &self.low_priority)
            .field("groups", &self.groups.is_some())
            .field("working_dir", &self.working_dir)
            .finish()
    }
}

impl Default for Options {
    fn default() -> Self {
        Self {
            timeout: DEFAULT_TIMEOUT,
            max_bytes: DEFAULT_MAX_BYTES,
            scrub_env: Vec::new(),
            low_priority: false,
            groups: None,
            working_dir: None,
        }
    }
}

/// Where `application_path` points: a bare name (no `/`) is looked up on PATH; a relative path is
/// resolved against `base_dir` (the config file's directory); absolute as is.
///
/// The result exists and is an executable file. `PATH` entries that are empty or relative are
/// skipped (they would depend on the current directory); `~` is not expanded.
pub fn resolve_app(spec: &str, base_dir: &Path) -> Result<PathBuf, IntrospectError> {
    resolve_app_in(spec, base_dir, std::env::var_os("PATH").as_deref())
}

/// [`resolve_app`] with an explicit `PATH` value.
fn resolve_app_in(
    spec: &str,
    base_dir: &Path,
    path_var: Option<&OsStr>,
) -> Result<PathBuf, IntrospectError> {
    if spec.is_empty() {
        return Err(IntrospectError::EmptyApplicationPath);
    }
    if !spec.contains('/') {
        let dirs = path_var.map(std::env::split_paths).into_iter().flatten();
        return dirs
            .filter(|dir| dir.is_absolute())
            .map(|dir| dir.join(spec))
            .find(|candidate| is_executable_file(candidate))
            .ok_or_else(|| IntrospectError::NotOnPath {
                name: spec.to_string(),
            });
    }
    let path = Path::new(spec);
    let resolved = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base_dir.join(path)
    };
    check_executable(&resolved).map_err(|error| match error {
        IntrospectError::NotFound { path } if !Path::new(spec).is_absolute() => {
            IntrospectError::NotFoundFromConfig { path }
        }
        other => other,
    })?;
    Ok(resolved)
}

/// Whether `path` is a regular file with an execute bit (the `PATH` search rule of shells).
fn is_executable_file(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// Explains why `path` cannot be executed, if it cannot.
fn check_executable(path: &Path) -> Result<(), IntrospectError> {
    let not_executable = |reason: String| IntrospectError::NotExecutable {
        path: path.to_path_buf(),
        reason,
    };
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(error)
            if matches!(
                error.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            return Err(IntrospectError::NotFound {
                path: path.to_path_buf(),
            });
        }
        Err(error) => return Err(not_executable(format!("cannot inspect it ({error})"))),
    };
    if meta.is_dir() {
        return Err(not_executable(
            "it is a directory; set application_path to the application binary".into(),
        ));
    }
    if !meta.is_file() {
        return Err(not_executable("it is not a regular file".into()));
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err(not_executable(format!(
            "it has no execute permission; run \"chmod +x {}\" or point application_path at the \
             built binary",
            path.display()
        )));
    }
    Ok(())
}

/// Run `<app> --fisk-introspect` and parse what it prints.
///
/// The application gets exactly one argument, the inherited working directory, a closed stdin,
/// its own process group and the parent environment without [`PROVIDER_CREDENTIAL_VARS`] and
/// [`Options::scrub_env`], with `LLMFORMAT=1`. Its stdout is read up to [`Options::max_bytes`];
/// its stderr is kept (the last 64 KiB) for logs and error messages only. When it exits, or
/// when it times out or prints too much, its whole process group is killed, so nothing it
/// started outlives the call. The call returns promptly after the deadline even if a process
/// that escaped the group holds the pipes open: the threads reading them are never joined.
pub fn run(app: &Path, options: &Options) -> Result<Introspection, IntrospectError> {
    let stdout = capture(app, options)?;
    parse(&stdout, Origin::App(app.to_path_buf()))
}

/// [`run`] without the parsing: what the application printed on stdout, once it exited
/// successfully within the limits. A server digests these bytes first and parses them only
/// when the digest differs from the one it was built with.
pub fn capture(app: &Path, options: &Options) -> Result<Vec<u8>, IntrospectError> {
    capture_with_env(app, options, std::env::vars_os())
}

/// [`capture`] with an explicit parent environment.
fn capture_with_env<I>(
    app: &Path,
    options: &Options,
    parent_env: I,
) -> Result<Vec<u8>, IntrospectError>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    let mut program = program_path(app);
    check_executable(&program)?;
    if options.working_dir.is_some() {
        // A relative program would be found against the new directory: resolve it here first.
        program = std::path::absolute(&program).unwrap_or(program);
    }
    let env = child_env(parent_env, &options.scrub_env);
    let mut command = introspect_command(&program, env, options.low_priority);
    if let Some(dir) = &options.working_dir {
        command.current_dir(dir);
    }
    tracing::debug!(app = %app.display(), timeout = ?options.timeout, "introspecting");
    let started = Instant::now();
    let child = command.spawn().map_err(|error| spawn_error(app, error))?;
    let limits = Limits {
        timeout: options.timeout,
        max_bytes: options.max_bytes,
    };
    let captured = supervise(child, app, limits, options.groups.as_ref())?;
    tracing::debug!(
        app = %app.display(),
        bytes = captured.stdout.len(),
        elapsed = ?started.elapsed(),
        "introspection finished"
    );
    check_status(app, &captured)?;
    if !captured.stderr.is_empty() {
        tracing::warn!(
            app = %app.display(),
            stderr = %quote_output(&captured.stderr, b""),
            "the application wrote to stderr while printing its model; the model may be incomplete"
        );
    }
    Ok(captured.stdout)
}

/// [`run`] with an explicit parent environment.
#[cfg(test)]
fn run_with_env<I>(
    app: &Path,
    options: &Options,
    parent_env: I,
) -> Result<Introspection, IntrospectError>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    let stdout = capture_with_env(app, options, parent_env)?;
    parse(&stdout, Origin::App(app.to_path_buf()))
}

/// The path to execute: a bare relative name means the file in the current directory, never a
/// `PATH` search (use [`resolve_app`] for that).
fn program_path(app: &Path) -> PathBuf {
    if app.is_relative() && app.parent() == Some(Path::new("")) {
        Path::new(".").join(app)
    } else {
        app.to_path_buf()
    }
}

/// The environment of every process fiskgen and its servers start (the introspection and each
/// command): the parent's without credential variables (the provider keys and `scrub_env`),
/// with `LLMFORMAT=1` and `FISK_AI=1` (as Fisk AI's `fisk mcp` runs commands), which win over
/// inherited values.
pub fn child_env<I>(parent_env: I, scrub_env: &[String]) -> Vec<(OsString, OsString)>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    let scrubbed = |name: &OsStr| {
        name == LLM_FORMAT_VAR
            || name == FISK_AI_VAR
            || PROVIDER_CREDENTIAL_VARS.iter().any(|var| name == *var)
            || scrub_env
                .iter()
                .map(|var| var.trim())
                .any(|var| !var.is_empty() && name == var)
    };
    let mut env: Vec<_> = parent_env
        .into_iter()
        .filter(|(name, _)| !scrubbed(name))
        .collect();
    env.push((LLM_FORMAT_VAR.into(), "1".into()));
    env.push((FISK_AI_VAR.into(), "1".into()));
    env
}

/// The command that runs the introspection (nothing is started yet); at a lower priority
/// through `nice` when asked and `nice` is installed (it execs the application in place, so the
/// process and its group stay the same).
fn introspect_command(
    program: &Path,
    env: Vec<(OsString, OsString)>,
    low_priority: bool,
) -> Command {
    let nice = NICE_PROGRAMS
        .iter()
        .map(Path::new)
        .find(|nice| low_priority && is_executable_file(nice));
    let mut command = match nice {
        Some(nice) => {
            let mut command = Command::new(nice);
            command
                .arg("-n")
                .arg(LOW_PRIORITY_NICENESS)
                .arg("--")
                .arg(program);
            command
        }
        None => Command::new(program),
    };
    command
        .arg(INTROSPECT_FLAG)
        .env_clear()
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    die_with_parent(&mut command);
    command
}

/// The application never outlives the process that asked for its model: on Linux the kernel
/// kills it when the thread that spawned it ends, which is the thread that waits for it here.
/// A server killed with SIGKILL (no shutdown runs) thus leaves no introspection behind.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn die_with_parent(command: &mut Command) {
    let parent = nix::unistd::getpid();
    // SAFETY: the closure runs in the forked child before exec and calls only prctl(2) and
    // getppid(2), both async-signal-safe; it allocates nothing and takes no lock.
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            // The parent may have died between fork and prctl: then no signal would come.
            if nix::unistd::getppid() != parent {
                return Err(io::Error::other("the process that started it is gone"));
            }
            Ok(())
        });
    }
}

/// Elsewhere the application's process group is killed on shutdown only.
#[cfg(not(target_os = "linux"))]
fn die_with_parent(_command: &mut Command) {}

/// Turns a failure to start the application into the most specific error.
fn spawn_error(app: &Path, error: io::Error) -> IntrospectError {
    match error.kind() {
        io::ErrorKind::PermissionDenied => IntrospectError::NotExecutable {
            path: app.to_path_buf(),
            reason: format!("the system refused to run it ({error})"),
        },
        _ => IntrospectError::Spawn {
            path: app.to_path_buf(),
            error,
        },
    }
}

/// Fails unless the application exited with status 0.
fn check_status(app: &Path, captured: &Captured) -> Result<(), IntrospectError> {
    let status = captured.status;
    if status.success() {
        return Ok(());
    }
    let output = quote_output(&captured.stderr, &captured.stdout);
    let path = app.to_path_buf();
    if let Some(code) = status.code() {
        return Err(IntrospectError::Exited { path, code, output });
    }
    let signal = match status.signal().map(Signal::try_from) {
        Some(Ok(signal)) => signal.as_str().to_string(),
        Some(Err(_)) => format!("signal {}", status.signal().unwrap_or_default()),
        None => format!("{status}"),
    };
    Err(IntrospectError::Signalled {
        path,
        signal,
        output,
    })
}

/// The last lines of stderr, and of stdout when it holds anything, for an error message.
fn quote_output(stderr: &str, stdout: &[u8]) -> String {
    let stdout = String::from_utf8_lossy(stdout);
    let mut quoted = String::new();
    for (label, text) in [("stderr", stderr), ("stdout", stdout.trim())] {
        let lines: Vec<&str> = text.lines().collect();
        for line in &lines[lines.len().saturating_sub(QUOTED_LINES)..] {
            quoted.push_str(&format!("\n  {label}: {}", sanitize_line(line)));
        }
    }
    quoted
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::thread;

    use nix::sys::signal;
    use nix::unistd::Pid;
    use serde_json::Value;

    use super::*;

    /// A minimal valid document: a group with one leaf, both with schemas.
    const VALID: &str = r#"{"name":"demo","help":"a demo","version":"1.2.3","flags":[{"name":"server","help":"","boolean":false,"cumulative":false}],"commands":[{"name":"stream","help":"","schema":{},"restricted_schema":{"type":"object","properties":{}},"commands":[{"name":"ls","help":"list","schema":{},"restricted_schema":{"type":"object","properties":{},"additionalProperties":false}}]}]}"#;

    fn app_origin() -> Origin {
        Origin::App(PathBuf::from("/opt/demo"))
    }

    /// Writes an executable shell script. A child shell writes it, so this process never holds
    /// a writable descriptor of a file another test thread may execute (ETXTBSY).
    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let path = dir.join(name);
        let status = Command::new("/bin/sh")
            .args(["-c", "printf '%s\\n' \"$2\" > \"$1\" && chmod 755 \"$1\""])
            .arg("sh")
            .arg(&path)
            .arg(format!("#!/bin/sh\n{body}"))
            .status()
            .expect("run /bin/sh");
        assert!(status.success(), "writing {}", path.display());
        path
    }

    /// Whether `pid` is a live process (a zombie waiting to be reaped counts as gone).
    fn is_running(pid: i32) -> bool {
        if let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) {
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next());
            return state != Some('Z');
        }
        signal::kill(Pid::from_raw(pid), None).is_ok()
    }

    /// Reads the pid a script wrote and waits up to ten seconds (a busy machine may be slow to reap) for that process to be gone.
    fn assert_gone(pid_file: &Path) {
        let pid: i32 = fs::read_to_string(pid_file)
            .expect("pid file written")
            .trim()
            .parse()
            .expect("pid");
        let until = Instant::now() + Duration::from_secs(10);
        while is_running(pid) && Instant::now() < until {
            thread::sleep(Duration::from_millis(20));
        }
        assert!(!is_running(pid), "process {pid} survived");
    }

    fn quick() -> Options {
        Options {
            timeout: Duration::from_millis(300),
            ..Options::default()
        }
    }

    /// Records the groups it is told about, and how many registrations ended.
    #[derive(Default)]
    struct Recorder {
        joined: Mutex<Vec<i32>>,
        ended: Arc<Mutex<usize>>,
    }

    struct Registration(Arc<Mutex<usize>>);

    impl Drop for Registration {
        fn drop(&mut self) {
            *lock(&self.0) += 1;
        }
    }

    impl GroupRegistry for Recorder {
        fn join(&self, group: i32) -> Box<dyn Send> {
            lock(&self.joined).push(group);
            Box::new(Registration(Arc::clone(&self.ended)))
        }
    }

    #[test]
    fn a_background_run_is_niced_and_its_group_registered_while_it_runs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let app = script(
            dir.path(),
            "niced",
            &format!(
                "echo $$ > \"$(dirname \"$0\")/pid\"\nawk '{{print $19}}' /proc/$$/stat > \
                 \"$(dirname \"$0\")/nice\"\necho '{VALID}'"
            ),
        );
        let recorder = Arc::new(Recorder::default());
        let options = Options {
            low_priority: true,
            groups: Some(Arc::clone(&recorder) as Arc<dyn GroupRegistry>),
            ..Options::default()
        };
        let output = capture(&app, &options).expect("runs");
        let introspection = parse(&output, Origin::App(app.clone())).expect("parses");
        assert_eq!(
            introspection.output_digest.as_deref(),
            Some(canonical::digest(&output).as_str())
        );
        let pid: i32 = fs::read_to_string(dir.path().join("pid"))
            .expect("pid")
            .trim()
            .parse()
            .expect("a pid");
        assert_eq!(
            *lock(&recorder.joined),
            [pid],
            "the application leads its group"
        );
        assert_eq!(
            *lock(&recorder.ended),
            1,
            "the registration ended with the run"
        );
        if NICE_PROGRAMS
            .iter()
            .any(|nice| is_executable_file(Path::new(nice)))
        {
            let nice = |text: &str| text.trim().parse::<i64>().expect("a nice value");
            let own = fs::read_to_string("/proc/self/stat").expect("own stat");
            let own = own
                .rsplit_once(')')
                .map(|(_, rest)| rest)
                .unwrap_or_default();
            let own = nice(own.split_whitespace().nth(16).unwrap_or_default());
            let child = nice(&fs::read_to_string(dir.path().join("nice")).expect("nice"));
            assert_eq!(child, (own + nice(LOW_PRIORITY_NICENESS)).min(19));
        }
        // A saved document has no output digest.
        let saved = parse(VALID.as_bytes(), Origin::File(dir.path().join("m.json")));
        assert_eq!(saved.expect("parses").output_digest, None);
    }

    #[test]
    fn defaults_match_the_reference() {
        let options = Options::default();
        assert_eq!(options.timeout, Duration::from_secs(30));
        assert_eq!(options.max_bytes, 16_777_216);
        assert!(options.scrub_env.is_empty());
    }

    /// Runs `app` with the short test timeout and requires a prompt failure (well within 10 s).
    fn times_out_promptly(app: &Path) -> IntrospectError {
        let started = Instant::now();
        let error = run(app, &quick()).expect_err("must time out");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "took {:?}",
            started.elapsed()
        );
        error
    }

    #[test]
    fn hanging_app_times_out_promptly() {
        let dir = tempfile::tempdir().expect("tempdir");
        let app = script(
            dir.path(),
            "hang",
            "echo $$ > \"$(dirname \"$0\")/pid\"\nsleep 60",
        );
        let error = times_out_promptly(&app);
        assert!(
            matches!(error, IntrospectError::Timeout { exited: false, .. }),
            "{error}"
        );
        let message = error.to_string();
        assert!(message.contains("timed out after 300ms"), "{message}");
        assert!(
            message.contains(&format!("introspecting \"{}\"", app.display())),
            "{message}"
        );
        assert!(
            message.contains("must print its model within this window"),
            "{message}"
        );
        assert_gone(&dir.path().join("pid"));
    }

    #[test]
    fn timeout_kills_a_grandchild_that_holds_stdout() {
        let dir = tempfile::tempdir().expect("tempdir");
        let body = "sleep 60 &\necho $! > \"$(dirname \"$0\")/pid\"\nwait";
        let app = script(dir.path(), "spawner", body);
        let error = times_out_promptly(&app);
        assert!(matches!(error, IntrospectError::Timeout { .. }), "{error}");
        assert_gone(&dir.path().join("pid"));
    }

    #[test]
    fn an_escaped_process_holding_stdout_cannot_block_the_call() {
        let dir = tempfile::tempdir().expect("tempdir");
        if !Path::new("/usr/bin/setsid").exists() && !Path::new("/bin/setsid").exists() {
            eprintln!("skipped: no setsid");
            return;
        }
        // The grandchild leaves the process group, so it survives the kill and keeps stdout
        // open; the call must return anyway.
        // It exits only once the grandchild has left the group (the pid file appears after
        // `setsid`), so the group kill cannot catch it.
        let body = "cd \"$(dirname \"$0\")\"\n\
                    setsid sh -c 'echo $$ > pid.tmp && mv pid.tmp pid && exec sleep 30' &\n\
                    while [ ! -s pid ]; do sleep 0.01; done\nexit 0";
        let app = script(dir.path(), "escaper", body);
        let error = times_out_promptly(&app);
        assert!(
            matches!(error, IntrospectError::Timeout { exited: true, .. }),
            "{error}"
        );
        assert!(
            error.to_string().contains("kept its output open"),
            "{error}"
        );
        let pid: i32 = fs::read_to_string(dir.path().join("pid"))
            .expect("pid")
            .trim()
            .parse()
            .expect("pid");
        let _ = signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
    }

    #[test]
    fn stray_grandchild_is_killed_after_a_normal_exit() {
        let dir = tempfile::tempdir().expect("tempdir");
        let body = format!(
            "sleep 60 &\necho $! > \"$(dirname \"$0\")/pid\"\ncat <<'EOF'\n{VALID}\nEOF\nexit 0"
        );
        let app = script(dir.path(), "leaver", &body);
        let options = Options {
            timeout: Duration::from_secs(10),
            ..Options::default()
        };
        let started = Instant::now();
        let introspection = run(&app, &options).expect("valid document");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "took {:?}",
            started.elapsed()
        );
        assert_eq!(introspection.model.name, "demo");
        assert_eq!(introspection.origin, Origin::App(app));
        assert_gone(&dir.path().join("pid"));
    }

    #[test]
    fn oversize_output_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let app = script(
            dir.path(),
            "flood",
            "head -c 20000000 /dev/zero | tr '\\0' a",
        );
        let options = Options {
            timeout: Duration::from_secs(20),
            ..Options::default()
        };
        let error = run(&app, &options).expect_err("must be refused");
        assert!(
            matches!(
                error,
                IntrospectError::Oversize {
                    limit: 16_777_216,
                    ..
                }
            ),
            "{error}"
        );
        assert!(
            error
                .to_string()
                .contains("produced more than 16777216 bytes"),
            "{error}"
        );
    }

    #[test]
    fn capped_reader_keeps_up_to_the_limit_and_flags_more() {
        let data = vec![b'x'; 200_000];
        let kept = read_capped(&data[..], 200_000)
            .expect("read")
            .expect("within limit");
        assert_eq!(kept, data);
        assert_eq!(read_capped(&data[..], 199_999).expect("read"), None);
        assert_eq!(read_capped(&b""[..], 0).expect("read"), Some(Vec::new()));
        let small = read_capped(&data[..1000], 150_000)
            .expect("read")
            .expect("within limit");
        assert_eq!(small.len(), 1000);
        assert!(small.capacity() <= 150_000);
    }

    #[test]
    fn stderr_tail_keeps_the_end_without_a_partial_line() {
        let mut tail = Tail::new(10);
        tail.push(b"first line\nsecond\n");
        assert_eq!(tail.text(), "second");
        let mut short = Tail::new(100);
        short.push(b"  only line\n");
        assert_eq!(short.text(), "only line");
    }

    #[test]
    fn garbage_is_not_fisk() {
        let dir = tempfile::tempdir().expect("tempdir");
        let app = script(
            dir.path(),
            "usage",
            "echo 'usage: demo [flags]'\necho 'more text'",
        );
        let error = run(&app, &quick()).expect_err("not fisk");
        assert!(matches!(error, IntrospectError::NotFisk { .. }), "{error}");
        let message = error.to_string();
        assert!(message.contains("usage: demo [flags]"), "{message}");
        assert!(
            message.contains("is it a fisk application (fisk v0.9.0 or newer)?"),
            "{message}"
        );
    }

    #[test]
    fn an_app_that_prints_nothing_is_not_fisk() {
        let error = run(Path::new("/bin/true"), &quick()).expect_err("not fisk");
        assert!(matches!(error, IntrospectError::NotFisk { .. }), "{error}");
        assert!(error.to_string().contains("it is empty"), "{error}");
    }

    #[test]
    fn a_notice_before_the_document_is_skipped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let body =
            format!("echo 'nats: context \"old\" not found, using defaults'\necho '{VALID}'");
        let app = script(dir.path(), "notice", &body);
        let introspection = run(&app, &quick()).expect("valid document");
        assert_eq!(introspection.model.name, "demo");
        assert_eq!(introspection.model.commands[0].commands[0].name, "ls");
        assert_eq!(introspection.document["commands"][0]["name"], "stream");
    }

    #[test]
    fn a_document_without_schemas_is_too_old() {
        let dir = tempfile::tempdir().expect("tempdir");
        let doc = r#"{"name":"nats","version":"0.1.5","commands":[{"name":"stream","restricted_schema":{},"commands":[{"name":"ls","restricted_schema":{}},{"name":"add"}]}]}"#;
        let app = script(dir.path(), "old", &format!("echo '{doc}'"));
        let error = run(&app, &quick()).expect_err("too old");
        assert!(
            matches!(&error, IntrospectError::TooOld { command, .. } if command == "stream add")
        );
        let message = error.to_string();
        assert!(message.contains("command \"stream add\""), "{message}");
        assert!(message.contains("\"nats\" (version 0.1.5)"), "{message}");
        assert!(message.contains("fisk v0.9.0 or newer"), "{message}");
    }

    #[test]
    fn hidden_commands_and_groups_need_schemas_too() {
        let hidden = r#"{"name":"a","commands":[{"name":"ok","restricted_schema":{}},{"name":"secret","hidden":true}]}"#;
        let error = parse(hidden.as_bytes(), app_origin()).expect_err("too old");
        assert!(matches!(&error, IntrospectError::TooOld { command, .. } if command == "secret"));
        assert!(error.to_string().contains("of \"a\" has"), "{error}");
        let group = r#"{"name":"a","commands":[{"name":"g","commands":[{"name":"x","restricted_schema":{}}]}]}"#;
        let error = parse(group.as_bytes(), app_origin()).expect_err("too old");
        assert!(matches!(&error, IntrospectError::TooOld { command, .. } if command == "g"));
    }

    #[test]
    fn malformed_json_reports_its_position() {
        let dir = tempfile::tempdir().expect("tempdir");
        let app = script(
            dir.path(),
            "broken",
            "echo '{\"name\": \"demo\", \"commands\": [}'",
        );
        let error = run(&app, &quick()).expect_err("malformed");
        assert!(
            matches!(
                error,
                IntrospectError::Malformed {
                    line: 1,
                    column: 31,
                    ..
                }
            ),
            "{error:?}"
        );
        let message = error.to_string();
        assert!(
            message.contains("at line 1, column 31 (counted from the start of the output)"),
            "{message}"
        );
    }

    #[test]
    fn malformed_positions_are_counted_in_the_source() {
        // The compact line after a notice: line 2.
        let bytes = b"notice: hello\n{\"name\": tru}\n";
        let error = parse(bytes, app_origin()).expect_err("malformed");
        assert!(
            matches!(
                error,
                IntrospectError::Malformed {
                    line: 2,
                    column: 13,
                    ..
                }
            ),
            "{error:?}"
        );
        // A pretty document with an error in the middle: the whole file is reported.
        let file = Origin::File(PathBuf::from("model.json"));
        let bytes = b"{\n  \"name\": \"x\",\n  \"commands\": [\n    {\"name\": }\n  ]\n}\n";
        let error = parse(bytes, file.clone()).expect_err("malformed");
        assert!(
            matches!(
                error,
                IntrospectError::Malformed {
                    line: 4,
                    column: 14,
                    ..
                }
            ),
            "{error:?}"
        );
        assert!(
            error
                .to_string()
                .starts_with("model \"model.json\" is not valid JSON"),
            "{error}"
        );
        // A truncated document.
        let error = parse(&VALID.as_bytes()[..40], app_origin()).expect_err("malformed");
        assert!(error.to_string().contains("EOF while parsing"), "{error}");
    }

    #[test]
    fn non_zero_exit_quotes_stderr() {
        let dir = tempfile::tempdir().expect("tempdir");
        let body =
            "echo 'nats: error: no such context \"prod\"' >&2\necho 'notice on stdout'\nexit 3";
        let app = script(dir.path(), "fails", body);
        let error = run(&app, &quick()).expect_err("fails");
        assert!(
            matches!(error, IntrospectError::Exited { code: 3, .. }),
            "{error}"
        );
        let message = error.to_string();
        assert!(message.starts_with(&format!(
            "introspecting \"{}\" failed: exit status 3",
            app.display()
        )));
        assert!(
            message.contains("stderr: nats: error: no such context \"prod\""),
            "{message}"
        );
        assert!(message.contains("stdout: notice on stdout"), "{message}");
        assert!(
            message.contains("is it a fisk application (fisk v0.9.0 or newer)?"),
            "{message}"
        );
    }

    #[test]
    fn death_by_signal_is_reported() {
        let dir = tempfile::tempdir().expect("tempdir");
        let app = script(dir.path(), "crash", "echo dying >&2\nkill -SEGV $$");
        let error = run(&app, &quick()).expect_err("killed");
        assert!(
            matches!(&error, IntrospectError::Signalled { signal, .. } if signal == "SIGSEGV"),
            "{error}"
        );
        assert!(error.to_string().contains("stderr: dying"), "{error}");
    }

    #[test]
    fn missing_and_non_executable_apps_are_explained() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("nope");
        let error = run(&missing, &quick()).expect_err("missing");
        assert!(matches!(error, IntrospectError::NotFound { .. }), "{error}");
        assert!(error.to_string().starts_with(&format!(
            "application \"{}\" does not exist",
            missing.display()
        )));

        let plain = dir.path().join("plain");
        fs::write(&plain, "#!/bin/sh\n").expect("write");
        let error = run(&plain, &quick()).expect_err("not executable");
        assert!(
            matches!(error, IntrospectError::NotExecutable { .. }),
            "{error}"
        );
        assert!(
            error.to_string().contains("no execute permission"),
            "{error}"
        );

        let error = run(dir.path(), &quick()).expect_err("a directory");
        assert!(error.to_string().contains("is a directory"), "{error}");
    }

    #[test]
    fn child_environment_is_scrubbed() {
        let parent = [
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("OPENAI_API_KEY", "sk-oai"),
            ("ANTHROPIC_BASE_URL", "https://proxy"),
            ("MY_TOKEN", "operator secret"),
            ("LLMFORMAT", "0"),
            ("FISK_AI", "0"),
            ("HOME", "/home/x"),
        ]
        .map(|(name, value)| (OsString::from(name), OsString::from(value)));
        let env = child_env(parent, &[" MY_TOKEN ".into(), String::new()]);
        let names: Vec<_> = env
            .iter()
            .map(|(name, _)| name.to_str().expect("utf-8"))
            .collect();
        assert_eq!(
            names,
            ["ANTHROPIC_BASE_URL", "HOME", "LLMFORMAT", "FISK_AI"]
        );
        assert_eq!(env[2], ("LLMFORMAT".into(), "1".into()));
        assert_eq!(env.last(), Some(&("FISK_AI".into(), "1".into())));
    }

    #[test]
    fn the_child_runs_with_one_argument_closed_stdin_and_scrubbed_env() {
        let dir = tempfile::tempdir().expect("tempdir");
        let body = format!(
            "out=\"$(dirname \"$0\")/seen\"\n\
             {{ echo \"argc:$#\"; echo \"argv:$*\"; echo \"cwd:$(pwd)\"\n\
             if read -r line; then echo \"stdin:$line\"; else echo stdin:eof; fi\n\
             [ -r /proc/$$/stat ] && echo \"pgid:$(cut -d' ' -f5 /proc/$$/stat) pid:$$\"\n\
             env; }} > \"$out\"\necho '{VALID}'"
        );
        let app = script(dir.path(), "probe", &body);
        let mut parent: Vec<(OsString, OsString)> = [
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("ANTHROPIC_CUSTOM_HEADERS", "x: y"),
            ("OPERATOR_SECRET", "hunter2"),
            ("KEEP_ME", "kept"),
            ("LLMFORMAT", "0"),
        ]
        .map(|(name, value)| (name.into(), value.into()))
        .into();
        parent.extend(std::env::var_os("PATH").map(|path| ("PATH".into(), path)));
        let options = Options {
            scrub_env: vec!["OPERATOR_SECRET".into()],
            ..quick()
        };
        run_with_env(&app, &options, parent).expect("valid document");

        let seen = fs::read_to_string(dir.path().join("seen")).expect("probe output");
        let lines: Vec<&str> = seen.lines().collect();
        assert!(lines.contains(&"argc:1"), "{seen}");
        assert!(lines.contains(&"argv:--fisk-introspect"), "{seen}");
        assert!(lines.contains(&"stdin:eof"), "{seen}");
        let cwd = std::env::current_dir().expect("cwd");
        assert!(
            lines.contains(&format!("cwd:{}", cwd.display()).as_str()),
            "{seen}"
        );
        if let Some(ids) = lines.iter().find_map(|line| line.strip_prefix("pgid:")) {
            let (pgid, pid) = ids.split_once(" pid:").expect("pgid and pid");
            assert_eq!(pgid, pid, "the child leads its own process group");
        }
        assert!(lines.contains(&"KEEP_ME=kept"), "{seen}");
        assert!(lines.contains(&"LLMFORMAT=1"), "{seen}");
        assert!(!seen.contains("LLMFORMAT=0"), "{seen}");
        assert!(!seen.contains("ANTHROPIC_API_KEY"), "{seen}");
        assert!(!seen.contains("ANTHROPIC_CUSTOM_HEADERS"), "{seen}");
        assert!(!seen.contains("OPERATOR_SECRET"), "{seen}");
    }

    #[test]
    fn resolve_app_follows_path_base_dir_and_absolute_paths() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = dir.path().join("first");
        let second = dir.path().join("second");
        fs::create_dir_all(&first).expect("mkdir");
        fs::create_dir_all(&second).expect("mkdir");
        fs::write(first.join("tool"), "not executable").expect("write");
        let tool = script(&second, "tool", "exit 0");
        let path_var = std::env::join_paths([
            "",
            "relative",
            first.to_str().expect("utf-8"),
            second.to_str().expect("utf-8"),
        ])
        .expect("PATH");

        let found =
            resolve_app_in("tool", Path::new("/elsewhere"), Some(&path_var)).expect("on PATH");
        assert_eq!(
            found, tool,
            "the non-executable entry earlier on PATH is skipped"
        );

        let error =
            resolve_app_in("missing-tool", dir.path(), Some(&path_var)).expect_err("missing");
        assert!(
            matches!(error, IntrospectError::NotOnPath { .. }),
            "{error}"
        );
        assert!(
            error
                .to_string()
                .starts_with("application \"missing-tool\" was not found on PATH")
        );
        assert!(
            resolve_app_in("tool", dir.path(), None).is_err(),
            "no PATH at all"
        );

        let relative = resolve_app_in("second/tool", dir.path(), None).expect("relative");
        assert_eq!(relative, dir.path().join("second/tool"));
        let dotted = resolve_app_in("./tool", &second, None).expect("dot relative");
        assert_eq!(dotted, second.join("./tool"));
        let absolute = resolve_app_in(tool.to_str().expect("utf-8"), Path::new("/elsewhere"), None);
        assert_eq!(absolute.expect("absolute"), tool);

        let error = resolve_app_in("first/tool", dir.path(), None).expect_err("not executable");
        assert!(
            matches!(error, IntrospectError::NotExecutable { .. }),
            "{error}"
        );
        let error = resolve_app_in("./nope", dir.path(), None).expect_err("missing");
        assert!(error.to_string().contains("does not exist"), "{error}");
        assert!(
            error
                .to_string()
                .contains("resolved against the config file's directory"),
            "a relative path from a config names the rule: {error}"
        );
        let missing = dir.path().join("nope");
        let error = resolve_app_in(missing.to_str().expect("utf-8"), dir.path(), None)
            .expect_err("missing");
        assert!(
            matches!(error, IntrospectError::NotFound { .. })
                && !error.to_string().contains("config file"),
            "an absolute path (what a server runs) names no config rule: {error}"
        );
        assert!(matches!(
            resolve_app_in("", dir.path(), None),
            Err(IntrospectError::EmptyApplicationPath)
        ));
        // The public function uses the real PATH.
        assert!(resolve_app("sh", dir.path()).is_ok());
    }

    #[test]
    fn a_bare_relative_app_runs_from_the_current_directory_not_path() {
        assert_eq!(program_path(Path::new("nats")), Path::new("./nats"));
        assert_eq!(program_path(Path::new("bin/nats")), Path::new("bin/nats"));
        assert_eq!(
            program_path(Path::new("/usr/bin/nats")),
            Path::new("/usr/bin/nats")
        );
    }

    #[test]
    fn saved_documents_round_trip_through_the_pretty_form() {
        let dir = tempfile::tempdir().expect("tempdir");
        let original = parse(VALID.as_bytes(), app_origin()).expect("valid");
        let pretty = to_pretty_json(&original.document);
        assert!(pretty.ends_with("}\n"));
        assert!(
            pretty.starts_with("{\n  \"commands\": [\n    {\n      \"commands\": ["),
            "{pretty}"
        );
        let file = dir.path().join("model.json");
        fs::write(&file, &pretty).expect("write");
        let saved = read(&file).expect("readable");
        assert_eq!(saved.document, original.document);
        assert_eq!(saved.origin, Origin::File(file));
        assert_eq!(to_pretty_json(&saved.document), pretty, "stable");
    }

    #[test]
    fn pretty_form_sorts_keys_bytewise() {
        let value: Value =
            serde_json::from_str(r#"{"b":1,"a":{"z":[{"y":1,"x":2}],"B":null}}"#).expect("json");
        let expected = "{\n  \"a\": {\n    \"B\": null,\n    \"z\": [\n      {\n        \"x\": 2,\n        \"y\": 1\n      }\n    ]\n  },\n  \"b\": 1\n}\n";
        assert_eq!(to_pretty_json(&value), expected);
    }

    #[test]
    fn reading_a_missing_model_names_the_file() {
        let error = read(Path::new("/nonexistent/model.json")).expect_err("missing");
        assert!(
            matches!(error, IntrospectError::ReadModel { .. }),
            "{error}"
        );
        assert!(
            error
                .to_string()
                .starts_with("reading model \"/nonexistent/model.json\": "),
            "{error}"
        );
    }

    #[test]
    fn parse_accepts_bom_whitespace_and_notices() {
        let with_bom = [b"\xEF\xBB\xBF  \n".as_slice(), VALID.as_bytes(), b"\n\n"].concat();
        assert_eq!(
            parse(&with_bom, app_origin()).expect("bom").model.name,
            "demo"
        );
        let log_line_first = format!("{{\"level\":\"info\",\"msg\":\"loading\"}}\n{VALID}\n");
        assert_eq!(
            parse(log_line_first.as_bytes(), app_origin())
                .expect("log line")
                .model
                .name,
            "demo"
        );
        let pretty: Value = serde_json::from_str(VALID).expect("json");
        let after_notice = format!("notice: hello\n{}", to_pretty_json(&pretty));
        assert_eq!(
            parse(after_notice.as_bytes(), app_origin())
                .expect("pretty after notice")
                .model
                .name,
            "demo"
        );
        let crlf = format!("notice\r\n{VALID}\r\n");
        assert_eq!(
            parse(crlf.as_bytes(), app_origin())
                .expect("crlf")
                .model
                .name,
            "demo"
        );
    }

    #[test]
    fn parse_rejects_documents_not_shaped_like_fisk() {
        let cases = [
            ("", "it is empty"),
            ("  \n\t\n", "it is empty"),
            ("[1, 2]", "it is an array, not an object"),
            ("42", "it is a number, not an object"),
            ("{}", "it has no \"name\""),
            (r#"{"name": ""}"#, "its \"name\" is empty"),
            (r#"{"name": 7}"#, "its \"name\" is a number, not a string"),
            (
                r#"{"name": "a", "commands": {}}"#,
                "its \"commands\" is an object, not an array",
            ),
            (
                r#"{"name": "a", "flags": "x"}"#,
                "its \"flags\" is a string, not an array",
            ),
            (
                r#"{"name": "a", "args": null}"#,
                "its \"args\" is null, not an array",
            ),
        ];
        for (input, reason) in cases {
            let error = parse(input.as_bytes(), app_origin()).expect_err(input);
            assert!(
                matches!(error, IntrospectError::NotFisk { .. }),
                "{input}: {error}"
            );
            assert!(error.to_string().contains(reason), "{input}: {error}");
        }
    }

    #[test]
    fn type_mismatches_name_the_command_and_key() {
        let doc = r#"{"name":"a","commands":[{"name":"stream","restricted_schema":{},"commands":[{"name":"add","restricted_schema":{},"flags":[{"name":"x","short":"s"}]}]}]}"#;
        let error = parse(doc.as_bytes(), app_origin()).expect_err("invalid");
        match &error {
            IntrospectError::Invalid { location, .. } => {
                assert_eq!(location, "command \"stream add\", flags[0].short");
            }
            other => panic!("unexpected {other}"),
        }
        assert!(
            error.to_string().contains("invalid type: string"),
            "{error}"
        );
        let top = r#"{"name":"a","flags":[{"name":"x","boolean":"yes"}]}"#;
        let error = parse(top.as_bytes(), app_origin()).expect_err("invalid");
        assert!(
            matches!(&error, IntrospectError::Invalid { location, .. } if location == "flags[0].boolean"),
            "{error}"
        );
    }

    #[test]
    fn messages_are_lower_case_without_a_trailing_period() {
        let errors = [
            IntrospectError::EmptyApplicationPath,
            IntrospectError::NotOnPath {
                name: "nats".into(),
            },
            IntrospectError::Timeout {
                path: "/x".into(),
                timeout: DEFAULT_TIMEOUT,
                exited: false,
            },
            IntrospectError::Oversize {
                path: "/x".into(),
                limit: DEFAULT_MAX_BYTES,
            },
        ];
        for error in errors {
            let message = error.to_string();
            assert!(message.starts_with(|c: char| c.is_lowercase()), "{message}");
            assert!(!message.ends_with('.'), "{message}");
        }
        let timeout = IntrospectError::Timeout {
            path: "/x".into(),
            timeout: DEFAULT_TIMEOUT,
            exited: false,
        };
        assert_eq!(
            timeout.to_string(),
            "introspecting \"/x\" timed out after 30s; the application must print its model within this window"
        );
    }
}
