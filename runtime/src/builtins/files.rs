//! Confinement of the file built-ins: which directories a path may resolve into, and opening a
//! file there without ever hanging or following a link out.
//!
//! A path is resolved against the server's working directory, canonicalised (so `..` and every
//! symbolic link are resolved), and must then lie below one of the roots, themselves
//! canonicalised on every call. The file is opened with `O_NOFOLLOW | O_NONBLOCK` (a FIFO or a
//! device can never block the call), checked to be a regular file through the open descriptor,
//! and, where `/proc` is mounted, the descriptor's real path is checked against the roots once
//! more, so a directory swapped for a link between the check and the open is caught too.

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Component, Path, PathBuf};

use crate::process::cmdline::go_quote;
use crate::spec::app::FileAccess;

/// The directories a file built-in may read below, as configured and as resolved for one call.
#[derive(Debug)]
pub(crate) struct Roots {
    /// Canonical roots that exist.
    canonical: Vec<PathBuf>,
    /// The same roots joined to the working directory but not canonicalised (for the lexical
    /// check that keeps "does not exist" from revealing what exists outside).
    lexical: Vec<PathBuf>,
    /// What the configuration named, for messages.
    shown: Vec<String>,
}

impl Roots {
    /// The roots of `access`, resolved now against `cwd`.
    pub(crate) fn resolve(access: &FileAccess, cwd: &Path) -> Self {
        let configured: Vec<&str> = if access.roots.is_empty() {
            vec!["."]
        } else {
            access.roots.to_vec()
        };
        let mut roots = Roots {
            canonical: Vec::new(),
            lexical: Vec::new(),
            shown: Vec::new(),
        };
        for root in configured {
            let joined = normalize(&cwd.join(root));
            roots.shown.push(joined.display().to_string());
            if let Ok(canonical) = std::fs::canonicalize(&joined) {
                roots.canonical.push(canonical);
            }
            roots.lexical.push(joined);
        }
        roots
    }

    /// Whether `path` (canonical) lies below a root.
    fn contains(&self, path: &Path) -> bool {
        self.canonical.iter().any(|root| path.starts_with(root))
    }

    /// The roots for messages: `"/srv/app"` or `"/a", "/b"`.
    fn describe(&self) -> String {
        self.shown
            .iter()
            .map(|root| go_quote(root))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Why a file built-in may not read a path; the text is what a client sees (without the tool
/// name).
#[derive(Debug, thiserror::Error)]
pub(crate) enum FileError {
    /// An empty path.
    #[error("the path is empty")]
    Empty,
    /// A path with a NUL character.
    #[error("the path {shown} contains a NUL character")]
    Nul {
        /// The path, quoted.
        shown: String,
    },
    /// None of the roots exists.
    #[error("none of the allowed directories exists ({roots})")]
    NoRoot {
        /// The roots, quoted.
        roots: String,
    },
    /// The path resolves outside the roots (or, outside them, does not exist: never said).
    #[error(
        "{shown} is outside the allowed directories ({roots}); paths are checked after \
         resolving \"..\" and symbolic links"
    )]
    Outside {
        /// The path, quoted.
        shown: String,
        /// The roots, quoted.
        roots: String,
    },
    /// Not a regular file.
    #[error("{shown} is {what}, not a regular file")]
    NotRegular {
        /// The path, quoted.
        shown: String,
        /// What it is instead (`a directory`, ...).
        what: &'static str,
    },
    /// Nothing there (below a root).
    #[error("{shown} does not exist")]
    NotFound {
        /// The path, quoted.
        shown: String,
    },
    /// No permission.
    #[error("{shown} cannot be read: permission denied")]
    PermissionDenied {
        /// The path, quoted.
        shown: String,
    },
    /// A symbolic link where `O_NOFOLLOW` refuses one.
    #[error("{shown} is a symbolic link, which is not followed here")]
    Link {
        /// The path, quoted.
        shown: String,
    },
    /// Any other failure to open it.
    #[error("{shown} cannot be opened: {source}")]
    Open {
        /// The path, quoted.
        shown: String,
        /// Why.
        source: io::Error,
    },
}

/// A regular file opened below the roots.
#[derive(Debug)]
pub(crate) struct Opened {
    /// The open file.
    pub(crate) file: File,
    /// Its metadata, taken from the descriptor.
    pub(crate) metadata: Metadata,
}

/// Refuses `requested` unless it resolves below `roots`, without opening anything: run before
/// a gated call asks for approval, so a path outside the roots is refused at once instead of
/// after the user approved it. [`open`] checks again (the file system may change meanwhile).
pub(crate) fn confine(requested: &str, roots: &Roots, cwd: &Path) -> Result<(), FileError> {
    locate(requested, roots, cwd, &go_quote(requested)).map(drop)
}

/// Opens `requested` for reading if it resolves to a regular file below `roots`; the error is
/// the text a client sees (without the tool name).
pub(crate) fn open(requested: &str, roots: &Roots, cwd: &Path) -> Result<Opened, FileError> {
    let shown = go_quote(requested);
    let canonical = locate(requested, roots, cwd, &shown)?;
    let outside = || outside(&shown, roots);
    let before = std::fs::symlink_metadata(&canonical).map_err(|e| describe_io(&shown, e))?;
    regular(&shown, &before)?;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOFOLLOW)
        .open(&canonical)
        .map_err(|error| describe_io(&shown, error))?;
    let metadata = file.metadata().map_err(|e| describe_io(&shown, e))?;
    regular(&shown, &metadata)?;
    // The path the descriptor really has: catches a directory replaced by a link after the
    // check above.
    if let Ok(real) = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
        && real.is_absolute()
        && !roots.contains(&real)
    {
        return Err(outside());
    }
    Ok(Opened { file, metadata })
}

/// `"<path>" is outside the allowed directories (...)`.
fn outside(shown: &str, roots: &Roots) -> FileError {
    FileError::Outside {
        shown: shown.to_string(),
        roots: roots.describe(),
    }
}

/// The canonical path of `requested` if it lies below `roots`.
fn locate(requested: &str, roots: &Roots, cwd: &Path, shown: &str) -> Result<PathBuf, FileError> {
    if requested.is_empty() {
        return Err(FileError::Empty);
    }
    if requested.contains('\0') {
        return Err(FileError::Nul {
            shown: shown.to_string(),
        });
    }
    if roots.canonical.is_empty() {
        return Err(FileError::NoRoot {
            roots: roots.describe(),
        });
    }
    let outside = || outside(shown, roots);
    let joined = normalize(&cwd.join(requested));
    let lexically_inside = roots
        .lexical
        .iter()
        .chain(&roots.canonical)
        .any(|root| joined.starts_with(root));
    let canonical = match std::fs::canonicalize(&joined) {
        Ok(canonical) => canonical,
        // Never say whether something outside exists.
        Err(_) if !lexically_inside => return Err(outside()),
        Err(error) => return Err(describe_io(shown, error)),
    };
    if !roots.contains(&canonical) {
        return Err(outside());
    }
    Ok(canonical)
}

/// Refuses anything but a regular file, naming what it is.
fn regular(shown: &str, metadata: &Metadata) -> Result<(), FileError> {
    let kind = metadata.file_type();
    let what = if kind.is_file() {
        return Ok(());
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a named pipe (FIFO)"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    };
    Err(FileError::NotRegular {
        shown: shown.to_string(),
        what,
    })
}

/// An I/O error about `shown`, in words.
fn describe_io(shown: &str, error: io::Error) -> FileError {
    let shown = shown.to_string();
    match error.kind() {
        io::ErrorKind::NotFound => FileError::NotFound { shown },
        io::ErrorKind::PermissionDenied => FileError::PermissionDenied { shown },
        _ if error.raw_os_error() == Some(nix::libc::ELOOP) => FileError::Link { shown },
        _ => FileError::Open {
            shown,
            source: error,
        },
    }
}

/// `path` with `.` removed and `..` applied lexically (as Go's `filepath.Clean`); a `..` above
/// the root stays at the root.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() && !out.has_root() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(roots: &'static [&'static str]) -> FileAccess {
        FileAccess {
            roots,
            max_bytes: None,
        }
    }

    #[test]
    fn normalize_is_lexical() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(normalize(Path::new("/../x")), PathBuf::from("/x"));
        assert_eq!(normalize(Path::new("a/../../b")), PathBuf::from("../b"));
        assert_eq!(normalize(Path::new("./")), PathBuf::from("."));
    }

    #[test]
    fn confinement() {
        let dir = tempfile::tempdir().expect("temp dir");
        let base = dir.path().canonicalize().expect("canonical");
        let root = base.join("root");
        std::fs::create_dir_all(root.join("sub")).expect("mkdir");
        std::fs::write(root.join("sub/ok.txt"), "ok").expect("write");
        std::fs::write(base.join("secret.txt"), "secret").expect("write");
        std::os::unix::fs::symlink(base.join("secret.txt"), root.join("escape")).expect("link");
        std::os::unix::fs::symlink(root.join("sub/ok.txt"), root.join("inside")).expect("link");
        let roots = Roots::resolve(&access(&[]), &root);

        assert!(open("sub/ok.txt", &roots, &root).is_ok());
        assert!(open("sub/../sub/ok.txt", &roots, &root).is_ok());
        assert!(
            open("inside", &roots, &root).is_ok(),
            "links inside are fine"
        );
        for (path, needle) in [
            ("../secret.txt", "outside the allowed directories"),
            ("escape", "outside the allowed directories"),
            ("/etc/passwd", "outside the allowed directories"),
            ("../nope.txt", "outside the allowed directories"),
            ("sub", "is a directory, not a regular file"),
            ("missing.txt", "does not exist"),
            ("", "empty"),
        ] {
            let error = open(path, &roots, &root).expect_err(path).to_string();
            assert!(error.contains(needle), "{path}: {error}");
        }
    }

    #[test]
    fn missing_roots_refuse_everything() {
        let dir = tempfile::tempdir().expect("temp dir");
        let roots = Roots::resolve(&access(&["nowhere"]), dir.path());
        let error = open("x", &roots, dir.path())
            .expect_err("refused")
            .to_string();
        assert!(
            error.contains("none of the allowed directories exists"),
            "{error}"
        );
    }
}
