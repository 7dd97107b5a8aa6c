//! Is the application on disk still the one this server was built from?
//!
//! `<binary> verify`, `--strict-app` and the background check at start all run the
//! application's introspection with the shared runner and judge it with the shared verdict
//! (`fiskgen_contract::surface`), the one `fiskgen check` gives: see `docs/drift.md`. The server
//! keeps the per-command fingerprints of the document it was built from, never the document.
//!
//! The background check is cheap: it digests what the application printed and stops there
//! when the digest is the one compiled in; only on a mismatch is the output parsed and
//! compared, and nothing is kept afterwards. It starts [`SETTLE`] after the first request has
//! been answered (or after [`START_DELAY`]), runs the application at a lower priority, and the
//! application's process group joins the server's, so shutdown kills it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use fiskgen_contract::introspect::{self, GroupRegistry, IntrospectError, Options, Origin};
use fiskgen_contract::surface::{self, Filter, Rules, Stage, Surface, Verdict};
use fiskgen_contract::{canonical, defaults};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::process::exec::ProcessGroups;
use crate::spec::app::{AppSpec, ApplicationSpec};

/// How long the background check waits for the first answered request before it starts
/// anyway.
pub(crate) const START_DELAY: Duration = Duration::from_secs(2);

/// How long after the first answered request the check waits before it runs the application:
/// the requests a client sends as it starts (its `initialize`, then `tools/list` and the other
/// lists, a few milliseconds apart) are answered before the server forks.
pub(crate) const SETTLE: Duration = Duration::from_millis(250);

/// Why the application on disk could not be judged, or why `--strict-app` stops the start.
#[derive(Debug, thiserror::Error)]
pub(crate) enum VerifyError {
    /// Its introspection could not be run or read.
    #[error(transparent)]
    Introspect(#[from] IntrospectError),
    /// A compiled-in filter pattern does not compile (a generator bug).
    #[error("the compiled-in {label} pattern: {reason}")]
    Pattern {
        /// The filter stage.
        label: &'static str,
        /// Why.
        reason: String,
    },
    /// The compiled-in per-command fingerprints do not parse (a damaged build).
    #[error("the command fingerprints compiled into this server are damaged: {0}")]
    Fingerprints(serde_json::Error),
    /// `--strict-app`: the served tools changed.
    #[error(
        "--strict-app: {} changed since this server was built:\n{changes}regenerate it with \
         `fiskgen build`",
        program.display()
    )]
    Drift {
        /// The application.
        program: PathBuf,
        /// The verdict, rendered.
        changes: String,
    },
}

/// The outcome of comparing the application on disk with the one the server was built from.
#[derive(Debug)]
pub(crate) enum Check {
    /// The same document (or one that differs in nothing the verdict looks at).
    Same,
    /// Something changed: drift or not, as the verdict says.
    Changed(Verdict),
}

/// Runs the application's introspection and judges it against what the server was built from.
/// The output is parsed only when its digest differs from the compiled-in one.
pub(crate) fn check(
    application: &ApplicationSpec,
    program: &Path,
    options: &Options,
) -> Result<Check, VerifyError> {
    let output = introspect::capture(program, options)?;
    if application.output_digest == Some(canonical::digest(&output).as_str()) {
        return Ok(Check::Same);
    }
    let current = introspect::parse(&output, Origin::App(program.to_path_buf()))?;
    drop(output);
    if canonical::fingerprint(&current.document) == application.fingerprint {
        return Ok(Check::Same);
    }
    let current = Surface::of(&current.document, &rules(application)?);
    let verdict = surface::compare(&built_surface(application)?, &current);
    Ok(if verdict.is_empty() {
        Check::Same
    } else {
        Check::Changed(verdict)
    })
}

/// The surface compiled into the server.
fn built_surface(application: &ApplicationSpec) -> Result<Surface, VerifyError> {
    let commands = fiskgen_contract::prints::from_json(application.commands)
        .map_err(VerifyError::Fingerprints)?;
    Ok(Surface {
        name: application.name.to_string(),
        version: application.version.map(str::to_string),
        commands,
    })
}

/// The compiled-in serving rules, with their patterns compiled again (fiskgen compiled them
/// with the same regex crate, so they do).
fn rules(application: &ApplicationSpec) -> Result<Rules, VerifyError> {
    let serving = &application.serving;
    let mut stages = Vec::with_capacity(serving.stages.len());
    for stage in serving.stages {
        let tools = stage
            .tools
            .iter()
            .map(|pattern| {
                surface::pattern(pattern).map_err(|reason| VerifyError::Pattern {
                    label: stage.label,
                    reason,
                })
            })
            .collect::<Result<_, _>>()?;
        stages.push(Stage {
            label: stage.label.to_string(),
            include: stage.include,
            filter: Filter {
                tools,
                tags: stage.tags.iter().map(|tag| tag.to_string()).collect(),
            },
        });
    }
    Ok(Rules {
        stages,
        global_flags: serving.global_flags.iter().map(|f| f.to_string()).collect(),
        tool_prefix: serving.tool_prefix.to_string(),
        tool_names: (serving.tool_names.iter())
            .map(|(own, served)| (own.to_string(), served.to_string()))
            .collect(),
    })
}

/// The runner's options for this server: its scrub list, the default limits.
fn options(scrub: &[String]) -> Options {
    Options {
        timeout: defaults::INTROSPECT_TIMEOUT,
        scrub_env: scrub.to_vec(),
        ..Options::default()
    }
}

/// `<application> <version>` as built.
fn built(application: &ApplicationSpec) -> String {
    format!(
        "{} {}",
        application.name,
        application.version.unwrap_or("(no version)")
    )
}

/// `<binary> verify`: 0 when nothing served changed (what did change is listed), 1 on drift,
/// 2 on error; the same verdict and exit status as `fiskgen check`.
pub(crate) fn run(app: &AppSpec, program: Option<&Path>, scrub: &[String]) -> ExitCode {
    let Some(application) = &app.application else {
        eprintln!("error: this server wraps no application");
        return ExitCode::from(2);
    };
    let Some(program) = program else {
        eprintln!("error: no application path");
        return ExitCode::from(2);
    };
    let built = built(application);
    match check(application, program, &options(scrub)) {
        Ok(Check::Same) => {
            println!(
                "{}: matches the {built} this server was built from",
                program.display()
            );
            ExitCode::SUCCESS
        }
        Ok(Check::Changed(verdict)) if !verdict.is_drift() => {
            print!(
                "{}: nothing this server serves changed since the {built} it was built from\n{}",
                program.display(),
                verdict.render(|_| Vec::new())
            );
            ExitCode::from(verdict.exit_code())
        }
        Ok(Check::Changed(verdict)) => {
            print!(
                "{}: the served tools changed since the {built} this server was built from:\n{}",
                program.display(),
                verdict.render(|_| Vec::new())
            );
            println!("\nRegenerate the server with `fiskgen build`.");
            ExitCode::from(verdict.exit_code())
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(2)
        }
    }
}

/// `--strict-app`: checked before serving; drift stops the start.
pub(crate) fn strict(
    application: &ApplicationSpec,
    program: &Path,
    scrub: &[String],
) -> Result<(), VerifyError> {
    match check(application, program, &options(scrub))? {
        Check::Changed(verdict) if verdict.is_drift() => Err(VerifyError::Drift {
            program: program.to_path_buf(),
            changes: verdict.render(|_| Vec::new()),
        }),
        Check::Same | Check::Changed(_) => Ok(()),
    }
}

/// The application's process group joins the server's, so shutdown kills it.
impl GroupRegistry for ProcessGroups {
    fn join(&self, group: i32) -> Box<dyn Send> {
        Box::new(self.register(group))
    }
}

/// Starts the background check: after the first answered request (or [`START_DELAY`]), at a
/// low priority, its child in the server's process groups. A change is logged as a warning.
/// Called on the server's runtime: until it is due, the check is a timer there, and its
/// thread is started only then, off the path of the first requests (docs/runtime.md,
/// "Listing tools").
pub(crate) fn in_background(
    app: &'static AppSpec,
    application: &'static ApplicationSpec,
    program: PathBuf,
    scrub: Vec<String>,
    first_answer: Arc<FirstAnswer>,
    shutdown: CancellationToken,
    groups: ProcessGroups,
) {
    let identity = app.identity;
    tokio::spawn(async move {
        let due = async {
            if first_answer.wait(START_DELAY).await {
                tokio::time::sleep(SETTLE).await;
            }
        };
        tokio::select! {
            () = due => {}
            () = shutdown.cancelled() => return,
        }
        let spawned = std::thread::Builder::new()
            .name("app-check".into())
            .spawn(move || {
                let options = Options {
                    low_priority: true,
                    groups: Some(Arc::new(groups)),
                    ..options(&scrub)
                };
                let outcome = check(application, &program, &options);
                if shutdown.is_cancelled() {
                    return;
                }
                log(identity, &program, outcome);
            });
        if let Err(error) = spawned {
            tracing::warn!("could not start the check of the application: {error}");
        }
    });
}

/// Logs the background check's outcome.
fn log(identity: &str, program: &Path, outcome: Result<Check, VerifyError>) {
    match outcome {
        Ok(Check::Changed(verdict)) if verdict.is_drift() => {
            let tools: Vec<&str> = verdict
                .added
                .iter()
                .chain(&verdict.removed)
                .chain(&verdict.changed)
                .map(|served| served.tool.as_str())
                .collect();
            tracing::warn!(
                "{} changed since this server was built ({} tools affected: {}): the served \
                 tools may not match it; `{identity}-mcp verify` lists the changes, `fiskgen \
                 build` regenerates the server",
                program.display(),
                tools.len(),
                tools.join(", ")
            );
        }
        Ok(Check::Changed(verdict)) => tracing::debug!(
            changes = verdict.unserved.len() + verdict.reworded.len(),
            "the application changed, but nothing this server serves did"
        ),
        Ok(Check::Same) => {
            tracing::debug!("the application matches what this server was built from")
        }
        Err(error) => {
            tracing::warn!("could not check the application against this server: {error}")
        }
    }
}

/// Set once the server has answered its first request; the background check waits for it.
/// Marking it again, on every later answer, is one atomic load.
#[derive(Debug, Default)]
pub(crate) struct FirstAnswer {
    answered: AtomicBool,
    signal: Notify,
}

impl FirstAnswer {
    /// Records that a request was answered.
    pub(crate) fn mark(&self) {
        if !self.answered.load(Ordering::Acquire) && !self.answered.swap(true, Ordering::AcqRel) {
            self.signal.notify_waiters();
        }
    }

    /// Waits until a request was answered or `limit` passed; whether one was.
    pub(crate) async fn wait(&self, limit: Duration) -> bool {
        let notified = self.signal.notified();
        tokio::pin!(notified);
        // Registered before the flag is read: a mark in between wakes it.
        notified.as_mut().enable();
        if self.answered.load(Ordering::Acquire) {
            return true;
        }
        tokio::time::timeout(limit, notified).await.is_ok()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::spec::app::ServingSpec;

    /// An executable script that prints `output` for `--fisk-introspect`. A child shell writes
    /// it, so this process never holds a writable descriptor of it (ETXTBSY).
    fn app(dir: &Path, output: &str) -> PathBuf {
        let path = dir.join("app");
        let status = std::process::Command::new("/bin/sh")
            .args(["-c", "printf '%s\\n' \"$2\" > \"$1\" && chmod 755 \"$1\""])
            .arg("sh")
            .arg(&path)
            .arg(format!("#!/bin/sh\nprintf '%s' '{output}'"))
            .status()
            .expect("run /bin/sh");
        assert!(status.success());
        path
    }

    fn spec(output_digest: Option<&'static str>) -> ApplicationSpec {
        ApplicationSpec {
            path: "app",
            name: "demo",
            version: None,
            fingerprint: "",
            output_digest,
            serving: ServingSpec::ALL,
            commands: "[]",
        }
    }

    #[test]
    fn output_with_the_compiled_in_digest_is_never_parsed() {
        let dir = tempfile::tempdir().expect("tempdir");
        // Not a fisk document at all: parsing it would fail.
        let output = "the same bytes as at build time";
        let program = app(dir.path(), output);
        let digest: &'static str = Box::leak(canonical::digest(output.as_bytes()).into_boxed_str());
        let options = options(&[]);
        assert!(matches!(
            check(&spec(Some(digest)), &program, &options),
            Ok(Check::Same)
        ));
        // Another digest: the output is parsed, and refused.
        let error = check(&spec(None), &program, &options)
            .expect_err("not a document")
            .to_string();
        assert!(
            error.contains("is not a fisk introspection document"),
            "{error}"
        );
    }

    #[test]
    fn a_parsed_document_is_judged_by_the_shared_verdict() {
        let dir = tempfile::tempdir().expect("tempdir");
        let document =
            r#"{"name":"demo","commands":[{"name":"ls","restricted_schema":{"type":"object"}}]}"#;
        let program = app(dir.path(), document);
        match check(&spec(None), &program, &options(&[])) {
            Ok(Check::Changed(verdict)) => {
                assert!(verdict.is_drift(), "{verdict:?}");
                assert_eq!(verdict.added[0].tool, "ls");
            }
            other => panic!("expected drift, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn the_first_answer_wakes_the_background_check() {
        let first = Arc::new(FirstAnswer::default());
        let waiting = Arc::clone(&first);
        let started = Instant::now();
        let waiter = tokio::spawn(async move { waiting.wait(Duration::from_secs(30)).await });
        tokio::time::sleep(Duration::from_millis(50)).await;
        first.mark();
        assert!(waiter.await.expect("waiter"), "an answer was recorded");
        assert!(started.elapsed() < Duration::from_secs(10));
        // Marked before the wait: it returns at once.
        assert!(first.wait(Duration::from_secs(30)).await);
        assert!(started.elapsed() < Duration::from_secs(10));
        // Without an answer it gives up after the delay.
        let started = Instant::now();
        assert!(!FirstAnswer::default().wait(Duration::from_millis(50)).await);
        assert!(started.elapsed() >= Duration::from_millis(50));
    }
}
