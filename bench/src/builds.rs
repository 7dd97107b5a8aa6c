//! The build figures: `fiskgen build` timed cold and warm for each design, recorded for a later
//! `--skip-builds` run, and the generated crate's lines and the stripped binary's size.
//!
//! A warm regeneration is what CI does when the application changed: one command's help text
//! differs from the document the crate was last generated from ([`one_command_changed`]), the
//! crate is regenerated in place (only the files whose content changed are written) and cargo
//! recompiles it in the warm target directory.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use fiskgen_tests::apps;

use crate::report::{Builds, CrateLines};
use crate::stats::{self, Summary};

/// `cargo build --release -p fiskgen`; the path of the binary.
pub(crate) fn build_fiskgen(root: &Path) -> Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    eprintln!("fiskgen-bench: cargo build --release -p fiskgen");
    let status = std::process::Command::new(cargo)
        .args(["build", "--release", "-p", "fiskgen", "--bin", "fiskgen"])
        .current_dir(root)
        .status()
        .context("running cargo")?;
    if !status.success() {
        bail!("cargo build --release -p fiskgen failed ({status})");
    }
    // Where cargo put it: `CARGO_TARGET_DIR` (relative to the workspace) when set.
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => root.join(dir),
        _ => root.join("target"),
    };
    Ok(target.join("release/fiskgen"))
}

/// Where `fiskgen build` gets the application's introspection document.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Source<'a> {
    /// Running the application (`--app`): the server also gets the digest of its output, so
    /// its background check at start compares before parsing.
    App(&'a Path),
    /// A saved document (`--model`).
    Model(&'a Path),
}

pub(crate) fn fiskgen_build(
    fiskgen: &Path,
    config: &Path,
    source: Source<'_>,
    output: &Path,
    target: &Path,
    crate_dir: &Path,
    log: &Path,
) -> Result<Duration> {
    let log_file = fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
    let started = Instant::now();
    let status = std::process::Command::new(fiskgen)
        .arg("build")
        .arg(config)
        .arg("-o")
        .arg(output)
        .arg("--target-dir")
        .arg(target)
        .arg("--crate-dir")
        .arg(crate_dir)
        .args(match source {
            Source::App(app) => ["--app".as_ref(), app.as_os_str()],
            Source::Model(model) => ["--model".as_ref(), model.as_os_str()],
        })
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().context("log file")?)
        .stderr(log_file)
        .status()
        .with_context(|| format!("running {}", fiskgen.display()))?;
    let took = started.elapsed();
    if !status.success() {
        bail!(
            "fiskgen build {} failed ({status}); see {}",
            config.display(),
            log.display()
        );
    }
    Ok(took)
}

/// One app built by one fiskgen: its own target and crate directories below `dir`.
pub(crate) struct BuildJob<'a> {
    name: &'a str,
    fiskgen: &'a Path,
    config: &'a Path,
    app: &'a Path,
    output: &'a Path,
    dir: PathBuf,
}

impl<'a> BuildJob<'a> {
    pub(crate) fn new(
        name: &'a str,
        fiskgen: &'a Path,
        config: &'a Path,
        app: &'a Path,
        output: &'a Path,
        dir: &Path,
    ) -> Self {
        Self {
            name,
            fiskgen,
            config,
            app,
            output,
            dir: dir.to_path_buf(),
        }
    }

    pub(crate) fn crate_dir(&self) -> PathBuf {
        self.dir.join("crates").join(self.name)
    }

    /// The saved introspection document that build `n` reads (0: as introspected).
    fn model(&self, n: usize) -> PathBuf {
        self.dir.join(format!("model-{}-{n}.json", self.name))
    }

    /// Saves the application's introspection document (`fiskgen introspect`) as build 0's,
    /// and writes `regenerations` more, each with one command changed from the one before.
    fn save_models(&self, regenerations: usize) -> Result<()> {
        let saved = self.model(0);
        let status = std::process::Command::new(self.fiskgen)
            .arg("introspect")
            .arg(self.config)
            .arg("--app")
            .arg(self.app)
            .arg("-o")
            .arg(&saved)
            .stdin(Stdio::null())
            .status()
            .with_context(|| format!("running {} introspect", self.fiskgen.display()))?;
        if !status.success() {
            bail!(
                "{} introspect --app {} failed ({status})",
                self.fiskgen.display(),
                self.app.display()
            );
        }
        let text =
            fs::read_to_string(&saved).with_context(|| format!("reading {}", saved.display()))?;
        let document: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not JSON", saved.display()))?;
        for n in 1..=regenerations {
            let changed = one_command_changed(&document, n)
                .with_context(|| format!("{} has no command to change", saved.display()))?;
            let path = self.model(n);
            fs::write(&path, serde_json::to_string_pretty(&changed)?)
                .with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(())
    }

    /// `fiskgen build` from `source`, timed (seconds); `kind` names its log.
    pub(crate) fn build(&self, kind: &str, source: Source<'_>) -> Result<f64> {
        eprintln!(
            "fiskgen-bench: {} build {} ({kind})",
            self.fiskgen.display(),
            self.config.display()
        );
        let took = fiskgen_build(
            self.fiskgen,
            self.config,
            source,
            self.output,
            &self.dir.join("target"),
            &self.crate_dir(),
            &self.dir.join(format!("{kind}-{}.log", self.name)),
        )?;
        Ok(stats::ms(took) / 1000.0)
    }
}

/// What [`time_builds`] measured for one job.
pub(crate) struct Timed {
    name: String,
    first_s: f64,
    warm_s: Vec<f64>,
}

impl Builds {
    pub(crate) fn of(timed: &[Timed]) -> Builds {
        Builds::Measured {
            first_s: timed.iter().map(|t| (t.name.clone(), t.first_s)).collect(),
            warm_s: timed
                .iter()
                .filter_map(|t| Some((t.name.clone(), Summary::of(&t.warm_s)?)))
                .collect(),
            recorded: None,
        }
    }
}

/// First builds (each job's directories fresh), then `regenerations` rounds of every job in
/// turn, so a busy spell of the machine hits every job alike. Every timed build reads a saved
/// document: the first the application's, each regeneration one with one command changed from
/// the build before ([`BuildJob::save_models`]). Last, untimed, each job's server is built
/// from the application itself, as `fiskgen build` makes it, for the measurements.
pub(crate) fn time_builds(jobs: &[BuildJob<'_>], regenerations: usize) -> Result<Vec<Timed>> {
    for job in jobs {
        for dir in [job.dir.join("target"), job.dir.join("crates")] {
            if dir.exists() {
                fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
            }
        }
        fs::create_dir_all(&job.dir).with_context(|| format!("creating {}", job.dir.display()))?;
        job.save_models(regenerations)?;
    }
    let mut timed = Vec::new();
    for job in jobs {
        timed.push(Timed {
            name: job.name.to_string(),
            first_s: job.build("first", Source::Model(&job.model(0)))?,
            warm_s: Vec::new(),
        });
    }
    for n in 1..=regenerations {
        for (job, timed) in jobs.iter().zip(&mut timed) {
            timed
                .warm_s
                .push(job.build("regen", Source::Model(&job.model(n)))?);
        }
    }
    for job in jobs {
        job.build("served", Source::App(job.app))?;
    }
    Ok(timed)
}

/// `document` (an introspection document) with the help text of its first leaf command, depth
/// first, marked with `n`: a change to exactly one command, and a different one for each `n`.
/// `None` when the document has no command.
pub(crate) fn one_command_changed(
    document: &serde_json::Value,
    n: usize,
) -> Option<serde_json::Value> {
    let mut changed = document.clone();
    let mut command = changed.get_mut("commands")?.as_array_mut()?.first_mut()?;
    while command
        .get("commands")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|children| !children.is_empty())
    {
        command = command.get_mut("commands")?.as_array_mut()?.first_mut()?;
    }
    let help = command
        .get("help")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("");
    let help = format!("{help} (regeneration {n})");
    command
        .as_object_mut()?
        .insert("help".to_string(), help.into());
    Some(changed)
}

/// Records our build figures, so a later `--skip-builds` run (measurements only) can report
/// them.
pub(crate) fn record_builds(bench_dir: &Path, timed: &[Timed]) -> Result<()> {
    let mut record = String::new();
    for t in timed {
        record.push_str(&format!("first\t{}\t{}\n", t.name, t.first_s));
    }
    for t in timed {
        let joined: Vec<String> = t.warm_s.iter().map(f64::to_string).collect();
        record.push_str(&format!("warm\t{}\t{}\n", t.name, joined.join(",")));
    }
    let record_path = bench_dir.join(BUILD_RECORD);
    fs::write(&record_path, record).with_context(|| format!("writing {}", record_path.display()))
}

/// Where the build figures are recorded, in `target/bench`.
pub(crate) const BUILD_RECORD: &str = "builds.tsv";

/// The build figures an earlier full run recorded, if any.
pub(crate) fn recorded_builds(bench_dir: &Path) -> Option<Builds> {
    let path = bench_dir.join(BUILD_RECORD);
    let text = fs::read_to_string(&path).ok()?;
    let mut first_s = Vec::new();
    let mut warm_s = Vec::new();
    for line in text.lines() {
        let mut fields = line.split('\t');
        let (kind, name, value) = (fields.next()?, fields.next()?, fields.next()?);
        match kind {
            "first" => first_s.push((name.to_string(), value.parse().ok()?)),
            "warm" => {
                let samples: Vec<f64> = value.split(',').filter_map(|v| v.parse().ok()).collect();
                warm_s.push((name.to_string(), Summary::of(&samples)?));
            }
            _ => return None,
        }
    }
    let when = fs::metadata(&path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or("time unknown".to_string(), |d| {
            format!("{}, Unix time {}", relative_record(&path), d.as_secs())
        });
    Some(Builds::Measured {
        first_s,
        warm_s,
        recorded: Some(when),
    })
}

pub(crate) fn relative_record(path: &Path) -> String {
    let root = apps::workspace_root();
    path.strip_prefix(&root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The lines of a generated crate's `src/`: Rust code, and the data files it includes (schemas,
/// help, fingerprints, the `tools/list` answer).
pub(crate) fn crate_lines(dir: &Path) -> Option<CrateLines> {
    fn walk(dir: &Path, lines: &mut CrateLines) -> Option<()> {
        for entry in fs::read_dir(dir).ok()? {
            let path = entry.ok()?.path();
            if path.is_dir() {
                walk(&path, lines)?;
                continue;
            }
            let count = || fs::read_to_string(&path).ok().map(|t| t.lines().count());
            match path.extension().and_then(|e| e.to_str()) {
                Some("rs") => lines.rust += count()?,
                Some("json" | "md") => lines.data += count()?,
                _ => {}
            }
        }
        Some(())
    }
    let mut lines = CrateLines::default();
    walk(&dir.join("src"), &mut lines)?;
    (lines.rust > 0).then_some(lines)
}

/// The size of a stripped copy of `binary` (`strip`, else `objcopy --strip-all`).
pub(crate) fn stripped_size(binary: &Path, scratch: &Path) -> Option<u64> {
    let copy = scratch.join("stripped");
    for (tool, args) in [("strip", vec!["-o"]), ("objcopy", vec!["--strip-all"])] {
        let mut command = std::process::Command::new(tool);
        command.args(&args);
        if tool == "strip" {
            command.arg(&copy).arg(binary);
        } else {
            command.arg(binary).arg(&copy);
        }
        let ok = command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            let size = fs::metadata(&copy).ok().map(|m| m.len());
            let _ = fs::remove_file(&copy);
            return size;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::one_command_changed;

    #[test]
    fn a_regeneration_changes_the_help_of_exactly_one_leaf_command() {
        let document = json!({
            "name": "app",
            "commands": [
                {"name": "task", "help": "Tasks", "commands": [
                    {"name": "add", "help": "Add a task", "commands": []},
                    {"name": "list", "help": "List tasks"}
                ]},
                {"name": "note", "help": "Notes"}
            ]
        });
        let first = one_command_changed(&document, 1).expect("a command");
        let second = one_command_changed(&document, 2).expect("a command");
        assert_eq!(
            first["commands"][0]["commands"][0]["help"],
            "Add a task (regeneration 1)"
        );
        assert_ne!(first, second);
        // Everything else is as it was.
        let mut restored = first.clone();
        restored["commands"][0]["commands"][0]["help"] = json!("Add a task");
        assert_eq!(restored, document);
        assert!(one_command_changed(&json!({"name": "app", "commands": []}), 1).is_none());
    }
}
