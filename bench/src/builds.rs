//! The build figures: `fiskgen build` timed cold and warm for each design, recorded for a later
//! `--skip-builds` run, and the generated crate's lines and the stripped binary's size.

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
    Ok(root.join("target/release/fiskgen"))
}

pub(crate) fn fiskgen_build(
    fiskgen: &Path,
    config: &Path,
    app: &Path,
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
        .arg("--app")
        .arg(app)
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

    pub(crate) fn build(&self, kind: &str) -> Result<f64> {
        eprintln!(
            "fiskgen-bench: {} build {} ({kind})",
            self.fiskgen.display(),
            self.config.display()
        );
        let took = fiskgen_build(
            self.fiskgen,
            self.config,
            self.app,
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
/// turn, so a busy spell of the machine hits every job alike.
pub(crate) fn time_builds(jobs: &[BuildJob<'_>], regenerations: usize) -> Result<Vec<Timed>> {
    for job in jobs {
        for dir in [job.dir.join("target"), job.dir.join("crates")] {
            if dir.exists() {
                fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
            }
        }
        fs::create_dir_all(&job.dir).with_context(|| format!("creating {}", job.dir.display()))?;
    }
    let mut timed = Vec::new();
    for job in jobs {
        timed.push(Timed {
            name: job.name.to_string(),
            first_s: job.build("first")?,
            warm_s: Vec::new(),
        });
    }
    for _ in 0..regenerations {
        for (job, timed) in jobs.iter().zip(&mut timed) {
            // A regeneration: the crate is written afresh (new mtimes), so cargo rebuilds it,
            // and only it, in the warm target directory.
            let crate_dir = job.crate_dir();
            fs::remove_dir_all(&crate_dir)
                .with_context(|| format!("removing {}", crate_dir.display()))?;
            timed.warm_s.push(job.build("regen")?);
        }
    }
    Ok(timed)
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
