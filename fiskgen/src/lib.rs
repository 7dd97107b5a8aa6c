//! fiskgen: turn a fisk command-line application into a standalone MCP server at build time.
//!
//! The pipeline has three stages with one intermediate representation in the middle:
//!
//! ```text
//! config (YAML) ─┐
//!                ├─► select ─► ir::Server ─► emit ─► crate ─► cargo ─► <identity>-mcp
//! introspection ─┘
//! ```
//!
//! [`config`] reads the Fisk AI config format strictly, [`introspect`] runs the application's
//! `--fisk-introspect` safely (or reads a saved document) into a lenient [`model`] (both from
//! `fiskgen-contract`, which the generated servers share), and
//! [`select`] applies every serving rule and [`lower`]s every served command once (typed
//! parameters, the argv plan, the advertised schema) to produce the [`ir`], the exact set of
//! tools a server serves. [`info`] renders that set for people and scripts, [`check`] compares
//! two of them, [`emit`] turns the served set into a Rust crate (names from [`ident`], files
//! through [`format`](mod@format), written by [`write`](mod@write)), and [`builder`] compiles it with [`cargo`] into
//! the shared target directory under [`cache`].

pub mod builder;
pub mod builtin;
pub mod bundle;
pub mod cache;
pub mod cargo;
pub mod check;
pub mod config;
pub mod docs;
pub mod embedded;
pub mod emit;
pub mod format;
pub mod ident;
pub mod info;
pub mod ir;
pub mod lower;
pub mod portable;
pub mod select;
mod settings;
mod suggest;
pub mod write;

pub use fiskgen_contract::{introspect, model};

use std::path::{Path, PathBuf};

/// Where the application's introspection model comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSource {
    /// Run the config's `application_path`.
    Configured,
    /// Run this binary instead of the configured one (`--app PATH`).
    App(PathBuf),
    /// Read a saved document instead of running anything (`--model FILE`).
    File(PathBuf),
}

/// A config resolved against its application: the input every command starts from.
#[derive(Debug)]
pub struct Plan {
    /// The validated config.
    pub config: config::Config,
    /// The introspection it was served against (`None` without an application).
    pub introspection: Option<introspect::Introspection>,
    /// The served set.
    pub server: ir::Server,
}

/// Anything that stops a command.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The config file is unreadable or invalid.
    #[error(transparent)]
    Config(#[from] config::ConfigError),
    /// The application could not be introspected.
    #[error(transparent)]
    Introspect(#[from] introspect::IntrospectError),
    /// The served set could not be decided.
    #[error(transparent)]
    Select(#[from] select::SelectError),
    /// The crate could not be generated.
    #[error(transparent)]
    Generate(#[from] emit::GenerateError),
    /// The crate could not be compiled.
    #[error(transparent)]
    Cargo(#[from] cargo::CargoError),
    /// A build step failed.
    #[error(transparent)]
    Build(#[from] builder::BuildError),
    /// The platform asked for cannot be built for.
    #[error(transparent)]
    Platform(#[from] portable::PlatformError),
}

/// Loads the config, introspects its application (or reads a saved model) and selects the
/// served set.
pub fn plan(config_path: &Path, source: &ModelSource) -> Result<Plan, Error> {
    let config = config::load(config_path)?;
    let introspection = introspect_for(&config, source)?;
    let server = select_for(&config, introspection.as_ref())?;
    Ok(Plan {
        config,
        introspection,
        server,
    })
}

/// Selects the served set of `config` against an introspection (or none).
pub fn select_for(
    config: &config::Config,
    introspection: Option<&introspect::Introspection>,
) -> Result<ir::Server, select::SelectError> {
    let app = introspection.map(|introspection| select::App {
        path: introspection_path(config, introspection),
        model: &introspection.model,
    });
    select::select(config, app)
}

/// Runs (or reads) the introspection a config calls for; `None` when it names no application.
pub fn introspect_for(
    config: &config::Config,
    source: &ModelSource,
) -> Result<Option<introspect::Introspection>, introspect::IntrospectError> {
    let options = introspect::Options {
        scrub_env: config.credential_env_names(),
        working_dir: Some(config.working_dir()),
        ..introspect::Options::default()
    };
    match source {
        ModelSource::File(path) => introspect::read(path).map(Some),
        ModelSource::App(path) => introspect::run(path, &options).map(Some),
        ModelSource::Configured => match &config.application_path {
            Some(spec) => {
                let path = introspect::resolve_app(spec, config.base_dir())?;
                introspect::run(&path, &options).map(Some)
            }
            None => Ok(None),
        },
    }
}

/// The application path recorded in the plan: the binary that was run, or for a saved model
/// the configured path as written.
fn introspection_path<'a>(
    config: &'a config::Config,
    introspection: &'a introspect::Introspection,
) -> &'a Path {
    match &introspection.origin {
        introspect::Origin::App(path) => path,
        introspect::Origin::File(_) => Path::new(config.application_path.as_deref().unwrap_or("")),
    }
}
