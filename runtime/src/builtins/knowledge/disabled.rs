//! The knowledge tools in a runtime built without its `knowledge` feature (no SQLite, no
//! sqlite-vec, no HTTP client): a server whose spec serves them refuses to start, saying why.

use std::path::Path;
use std::time::Instant;

use super::{EnumerateArgs, ReadArgs, SearchArgs};
use crate::spec::app::KnowledgeSpec;
use crate::telemetry::KnowledgeFacts;

/// Why nothing works.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KnowledgeError {
    /// The runtime was built without its `knowledge` feature.
    #[error(
        "this server was built without knowledge support (the fiskgen-runtime feature \
         `knowledge`)"
    )]
    Disabled,
}

/// Never constructed: [`Knowledge::open`] always fails.
#[derive(Debug)]
pub(crate) enum Knowledge {}

impl Knowledge {
    /// Fails: the feature is off.
    pub(crate) fn open(
        _spec: &'static KnowledgeSpec,
        _identity: &str,
        _cwd: &Path,
    ) -> Result<Self, KnowledgeError> {
        Err(KnowledgeError::Disabled)
    }

    /// Nothing to say.
    pub(crate) fn startup_notes(&self) -> Vec<String> {
        match *self {}
    }

    /// Unreachable.
    pub(crate) fn search(
        &self,
        _: &SearchArgs,
        _: Option<Instant>,
        _: &mut KnowledgeFacts,
    ) -> Result<String, KnowledgeError> {
        match *self {}
    }

    /// Unreachable.
    pub(crate) fn read(&self, _: &ReadArgs) -> Result<String, KnowledgeError> {
        match *self {}
    }

    /// Unreachable.
    pub(crate) fn list(&self) -> Result<String, KnowledgeError> {
        match *self {}
    }

    /// Unreachable.
    pub(crate) fn enumerate(
        &self,
        _: &EnumerateArgs,
        _: &mut KnowledgeFacts,
    ) -> Result<String, KnowledgeError> {
        match *self {}
    }
}

/// `<binary> knowledge ...` without the feature.
pub(crate) mod commands {
    use std::path::PathBuf;
    use std::process::ExitCode;

    use crate::spec::app::KnowledgeSpec;

    /// Refuses.
    pub(crate) fn index(
        _spec: &'static KnowledgeSpec,
        _identity: &str,
        _reindex: bool,
        _prune: bool,
        _paths: Vec<PathBuf>,
    ) -> ExitCode {
        eprintln!("error: {}", super::KnowledgeError::Disabled);
        ExitCode::FAILURE
    }

    /// Refuses.
    pub(crate) fn status(_spec: &'static KnowledgeSpec, _identity: &str) -> ExitCode {
        eprintln!("error: {}", super::KnowledgeError::Disabled);
        ExitCode::FAILURE
    }
}
