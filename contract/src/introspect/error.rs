//! Where an introspection document came from, and everything that can go wrong finding,
//! running or reading it.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The only argument an application is started with.
pub const INTROSPECT_FLAG: &str = "--fisk-introspect";

/// The oldest fisk that precomputes the per-command schemas fiskgen serves.
pub const MINIMUM_FISK_VERSION: &str = "v0.9.0";

/// Where an introspection document came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Printed by running this application with `--fisk-introspect`.
    App(PathBuf),
    /// Read from this saved file (`--model FILE`).
    File(PathBuf),
}

impl Origin {
    /// The application or file the document came from.
    pub fn path(&self) -> &Path {
        match self {
            Origin::App(path) | Origin::File(path) => path,
        }
    }

    /// What to try when the document is not usable.
    pub(super) fn hint(&self) -> String {
        match self {
            Origin::App(path) => format!(
                "is it a fisk application (fisk {MINIMUM_FISK_VERSION} or newer)? run \"{} \
                 {INTROSPECT_FLAG}\" to see what it prints",
                path.display()
            ),
            Origin::File(_) => format!(
                "the file must hold what \"<application> {INTROSPECT_FLAG}\" prints (fisk \
                 {MINIMUM_FISK_VERSION} or newer)"
            ),
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::App(path) => {
                write!(f, "the output of \"{} {INTROSPECT_FLAG}\"", path.display())
            }
            Origin::File(path) => write!(f, "model \"{}\"", path.display()),
        }
    }
}

/// Everything that can go wrong finding, running or reading an application's model.
///
/// Each message says what happened, where, and how to fix it. I/O errors are part of the
/// message rather than a separate `source`, so printing the error chain shows them once.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IntrospectError {
    /// `application_path` is empty.
    #[error("application_path is empty; set it to the application's name on PATH or its path")]
    EmptyApplicationPath,

    /// A bare application name was not found in any `PATH` directory.
    #[error(
        "application \"{name}\" was not found on PATH; install it, or set application_path to its \
         location (a name without \"/\" is looked up on PATH; write \"./{name}\" for a file beside \
         the config file)"
    )]
    NotOnPath {
        /// The name that was looked up.
        name: String,
    },

    /// The application path points at nothing.
    #[error(
        "application \"{}\" does not exist; install it or correct the application path",
        path.display()
    )]
    NotFound {
        /// The resolved path.
        path: PathBuf,
    },

    /// A relative `application_path` in a config file points at nothing (fiskgen resolves it
    /// against the config file's directory; a built server runs the absolute result).
    #[error(
        "application \"{}\" does not exist; install it or correct application_path (a relative \
         path is resolved against the config file's directory)",
        path.display()
    )]
    NotFoundFromConfig {
        /// The resolved path.
        path: PathBuf,
    },

    /// The application path exists but cannot be executed.
    #[error("application \"{}\" is not executable: {reason}", path.display())]
    NotExecutable {
        /// The resolved path.
        path: PathBuf,
        /// Why, with the fix.
        reason: String,
    },

    /// The operating system refused to start the application.
    #[error(
        "starting \"{}\" failed: {error}; if it is a script, check its interpreter line",
        path.display()
    )]
    Spawn {
        /// The application.
        path: PathBuf,
        /// What the operating system said.
        error: io::Error,
    },

    /// Reading the application's output or waiting for it failed.
    #[error("introspecting \"{}\" failed while {action}: {error}", path.display())]
    Io {
        /// The application.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// What the operating system said.
        error: io::Error,
    },

    /// The application exited with a non-zero status.
    #[error(
        "introspecting \"{}\" failed: exit status {code}; is it a fisk application (fisk \
         {MINIMUM_FISK_VERSION} or newer)?{output}",
        path.display()
    )]
    Exited {
        /// The application.
        path: PathBuf,
        /// Its exit status.
        code: i32,
        /// The last lines it wrote, one per line, each starting with a newline and indented
        /// (empty when it wrote nothing).
        output: String,
    },

    /// The application was killed by a signal it did not get from fiskgen.
    #[error(
        "introspecting \"{}\" failed: it was killed by {signal}; run \"{} {INTROSPECT_FLAG}\" by \
         hand to see why{output}",
        path.display(),
        path.display()
    )]
    Signalled {
        /// The application.
        path: PathBuf,
        /// The signal's name, such as `SIGSEGV`.
        signal: String,
        /// As for [`IntrospectError::Exited`].
        output: String,
    },

    /// The application did not finish within the timeout; its process group was killed.
    #[error(
        "introspecting \"{}\" timed out after {timeout:?}; the application must print its model \
         within this window{}",
        path.display(),
        if *exited {
            " (it exited, but a process it started kept its output open)"
        } else {
            ""
        }
    )]
    Timeout {
        /// The application.
        path: PathBuf,
        /// The limit that was exceeded.
        timeout: Duration,
        /// Whether the application itself had exited (a process it left behind held stdout).
        exited: bool,
    },

    /// The application printed more than the limit; its process group was killed.
    #[error(
        "introspecting \"{}\" produced more than {limit} bytes on stdout; a fisk model is far \
         smaller, so this is not a fisk application or it printed something else",
        path.display()
    )]
    Oversize {
        /// The application.
        path: PathBuf,
        /// The limit, in bytes.
        limit: usize,
    },

    /// The bytes hold no JSON document, or one that is not shaped like a fisk model.
    #[error("{origin} is not a fisk introspection document: {reason}; {}", origin.hint())]
    NotFisk {
        /// Where the bytes came from.
        origin: Origin,
        /// What is missing or wrong.
        reason: String,
    },

    /// The document is not valid JSON.
    #[error(
        "{origin} is not valid JSON: {message} at line {line}, column {column} (counted from the \
         start of the {})",
        match origin { Origin::App(_) => "output", Origin::File(_) => "file" }
    )]
    Malformed {
        /// Where the bytes came from.
        origin: Origin,
        /// 1-based line in the application's stdout or the file.
        line: usize,
        /// 1-based byte column in that line.
        column: usize,
        /// The JSON parser's message.
        message: String,
    },

    /// The document is a fisk model, but a value has a type fiskgen cannot read.
    #[error("{origin} does not match fisk's model at {location}: {message}; {}", origin.hint())]
    Invalid {
        /// Where the bytes came from.
        origin: Origin,
        /// The offending value, as `command "a b", flags[0].short` or a key path.
        location: String,
        /// What was expected.
        message: String,
    },

    /// A command carries no precomputed `restricted_schema`: the fisk is too old.
    #[error(
        "{origin}: command \"{command}\" of {app} has no restricted_schema, so the application \
         was built with a fisk older than {MINIMUM_FISK_VERSION}; rebuild it with fisk \
         {MINIMUM_FISK_VERSION} or newer, which precomputes per-command schemas"
    )]
    TooOld {
        /// Where the document came from.
        origin: Origin,
        /// The space-joined path of the first command without a schema.
        command: String,
        /// The application's name and, when declared, version.
        app: String,
    },

    /// A saved model could not be read.
    #[error("reading model \"{}\": {error}", path.display())]
    ReadModel {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        error: io::Error,
    },
}
