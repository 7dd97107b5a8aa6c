//! `fiskgen generate` and `fiskgen build`: plan, generate the crate, write it; for a build, also
//! write the embedded runtime, compile with cargo in the shared target directory and copy the
//! binary into place.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::emit::{self, GeneratedCrate};
use crate::write::{self, WriteReport};
use crate::{Error, ModelSource, Plan, cache, cargo, embedded};

/// Why a build step failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The config does not opt in to serving.
    #[error(
        "{config} has no expose.agent.mcp block; a server is only built for configs that opt in \
         (add `expose: {{agent: {{mcp: {{}}}}}}`, as `fisk mcp` requires)"
    )]
    NoMcp {
        /// The config file.
        config: String,
    },
    /// Neither `$XDG_CACHE_HOME` nor `$HOME` is set.
    #[error("no cache directory: set XDG_CACHE_HOME or HOME, or pass --crate-dir and --target-dir")]
    NoCacheDir,
    /// A file system operation failed.
    ///
    /// The OS error is part of the message and deliberately not a `source()`, so a report that
    /// prints the whole chain says it once.
    #[error("{what}: {error}")]
    Io {
        /// What was being done.
        what: String,
        /// Why it failed.
        error: io::Error,
    },
}

fn io_error(what: impl Into<String>) -> impl FnOnce(io::Error) -> BuildError {
    let what = what.into();
    move |error| BuildError::Io { what, error }
}

/// What `fiskgen generate` did.
#[derive(Debug)]
pub struct Generated {
    /// The plan the crate was generated from.
    pub plan: Plan,
    /// The crate.
    pub generated: GeneratedCrate,
    /// What was written.
    pub report: WriteReport,
}

/// Plans, generates and writes a crate into `dir`.
pub fn generate(
    config: &Path,
    source: &ModelSource,
    dir: &Path,
    settings: &emit::Settings,
) -> Result<Generated, Error> {
    let plan = crate::plan(config, source)?;
    let generated = emit::generate(&plan, settings)?;
    let report = write::write_crate(dir, &generated)
        .map_err(io_error(format!("writing the crate to {}", dir.display())))?;
    Ok(Generated {
        plan,
        generated,
        report,
    })
}

/// Options of `fiskgen build`.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// The config file.
    pub config: PathBuf,
    /// Where the model comes from.
    pub source: ModelSource,
    /// Where the binary goes (default `./<identity>-mcp`).
    pub output: Option<PathBuf>,
    /// The shared target directory (default [`cache::target_dir`]).
    pub target_dir: Option<PathBuf>,
    /// Where the crate is generated (default [`cache::crate_dir`]).
    pub crate_dir: Option<PathBuf>,
    /// A runtime source directory to use instead of the embedded one.
    pub runtime_path: Option<PathBuf>,
    /// The target triple and glibc version (the host's by default).
    pub platform: crate::portable::Platform,
}

/// A finished build.
#[derive(Debug)]
pub struct Built {
    /// The plan the server was built from.
    pub plan: Plan,
    /// The package and binary name.
    pub package: String,
    /// Where the binary was copied.
    pub binary: PathBuf,
    /// Where the crate was generated.
    pub crate_dir: PathBuf,
    /// Warnings from generation.
    pub warnings: Vec<String>,
}

/// Generates the crate, compiles it and copies the binary into place.
pub fn build(options: &BuildOptions) -> Result<Built, Error> {
    let platform = options.platform.clone().resolve()?;
    let plan = crate::plan(&options.config, &options.source)?;
    if !plan.server.settings.mcp {
        return Err(BuildError::NoMcp {
            config: options.config.display().to_string(),
        }
        .into());
    }
    let generated = emit::generate(&plan, &emit::Settings::default())?;
    // `-o DIR` for an existing directory puts the binary inside it, as `cp` does.
    let binary = match &options.output {
        Some(output) if output.is_dir() => output.join(&generated.package),
        Some(output) => output.clone(),
        None => PathBuf::from(&generated.package),
    };
    // Fail before minutes of compiling, not after, when the binary cannot be written.
    prepare_output(&binary)?;
    let identity = &plan.server.identity;
    let crate_dir = match &options.crate_dir {
        Some(dir) => dir.clone(),
        None => cache::crate_dir(identity).ok_or(BuildError::NoCacheDir)?,
    };
    write::write_crate(&crate_dir, &generated).map_err(io_error(format!(
        "writing the crate to {}",
        crate_dir.display()
    )))?;
    let runtime_dir = match &options.runtime_path {
        Some(dir) => absolute(dir)?,
        None => {
            let cache = cache::cache_dir().ok_or(BuildError::NoCacheDir)?;
            embedded::write_runtime(&cache)
                .map_err(io_error("writing the embedded fiskgen-runtime"))?
        }
    };
    let target_dir = match &options.target_dir {
        Some(dir) => dir.clone(),
        None => cache::target_dir().ok_or(BuildError::NoCacheDir)?,
    };
    let remap = crate::portable::Remap {
        runtime_parent: runtime_dir.parent().unwrap_or(&runtime_dir).to_path_buf(),
        target_dir: absolute(&target_dir)?,
        cargo_home: crate::portable::cargo_home(),
    };
    let executable = cargo::build(&cargo::CargoBuild {
        crate_dir: crate_dir.clone(),
        target_dir,
        runtime_dir,
        binary: generated.package.clone(),
        platform,
        remap,
    })?;
    install(&executable, &binary)?;
    Ok(Built {
        package: generated.package,
        binary,
        crate_dir,
        warnings: generated.warnings,
        plan,
    })
}

/// cargo's `--config` value must not depend on its working directory.
fn absolute(dir: &Path) -> Result<PathBuf, BuildError> {
    std::path::absolute(dir).map_err(io_error(format!("resolving {}", dir.display())))
}

/// Creates the binary's missing parent directories and proves the directory is writable by
/// creating (and removing) the scratch file [`install`] will use.
fn prepare_output(to: &Path) -> Result<(), BuildError> {
    if let Some(parent) = to.parent().filter(|parent| !parent.as_os_str().is_empty()) {
        let what = format!("cannot create the output directory {}", parent.display());
        // The OS says "File exists" or "Not a directory" here; say which file is in the way.
        if let Some(file) = parent.ancestors().find(|dir| dir.exists() && !dir.is_dir()) {
            let error = io::Error::other(format!("{} is not a directory", file.display()));
            return Err(BuildError::Io { what, error });
        }
        fs::create_dir_all(parent).map_err(io_error(what))?;
    }
    let scratch = scratch_path(to);
    fs::File::create(&scratch).map_err(io_error(format!(
        "cannot write the binary to {}",
        to.display()
    )))?;
    let _ = fs::remove_file(&scratch);
    Ok(())
}

/// The file next to `to` that the binary is copied to before it is renamed into place.
fn scratch_path(to: &Path) -> PathBuf {
    let name = to
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "binary".to_string());
    to.with_file_name(format!(".{name}.fiskgen-{}", std::process::id()))
}

/// Copies the binary next to its destination, then renames it into place, so a running copy
/// of an older binary is replaced rather than overwritten.
fn install(from: &Path, to: &Path) -> Result<(), BuildError> {
    let scratch = scratch_path(to);
    fs::copy(from, &scratch).map_err(|error| {
        let _ = fs::remove_file(&scratch);
        BuildError::Io {
            what: format!("cannot write the binary to {}", to.display()),
            error,
        }
    })?;
    fs::rename(&scratch, to).map_err(|error| {
        let _ = fs::remove_file(&scratch);
        BuildError::Io {
            what: format!("cannot move the binary into place at {}", to.display()),
            error,
        }
    })
}
