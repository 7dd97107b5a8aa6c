//! Which files `<binary> knowledge index` reads: Markdown and text files (`.md`, `.markdown`,
//! `.txt`, `.text`) of at most 512 KiB below the given paths, in name order; symbolic links,
//! dot-directories, `memory/` and the knowledge directory itself are never walked into.

use std::path::{Path, PathBuf};

use super::error::IndexError;
use crate::builtins::files::normalize;

/// Files larger than this are skipped.
const MAX_FILE_BYTES: u64 = 512 * 1024;
/// Extensions indexed (compared in lower case).
const EXTENSIONS: [&str; 4] = ["md", "markdown", "txt", "text"];
/// A sibling store that is never indexed.
const MEMORY_DIR: &str = "memory";

/// Collects `(key, path)` of the files to index below `path`, in name order: symbolic links,
/// dot-directories, `memory/` and the store's own directory are skipped.
pub(crate) fn walk(
    root: &Path,
    path: &Path,
    store_dir: &Path,
    out: &mut Vec<(String, PathBuf)>,
    note: &mut dyn FnMut(String),
) -> Result<(), IndexError> {
    let read_failed = |source| IndexError::Read {
        path: path.to_path_buf(),
        source,
    };
    let metadata = std::fs::symlink_metadata(path).map_err(read_failed)?;
    let kind = metadata.file_type();
    if kind.is_dir() {
        if path != root && skip_dir(path, store_dir) {
            return Ok(());
        }
        if std::fs::canonicalize(path).is_ok_and(|real| real == store_dir) {
            return Ok(());
        }
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(read_failed)?
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .collect();
        entries.sort();
        for entry in entries {
            walk(root, &entry, store_dir, out, note)?;
        }
        return Ok(());
    }
    if !kind.is_file() {
        return Ok(());
    }
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    if !EXTENSIONS.contains(&extension.as_str()) {
        return Ok(());
    }
    if metadata.len() > MAX_FILE_BYTES {
        note(format!(
            "skipping oversized file {:?} ({} bytes)",
            path.display().to_string(),
            metadata.len()
        ));
        return Ok(());
    }
    // The walked path, slash-separated; the root as given, what lies below it cleaned.
    let key = if path == root {
        path.display().to_string()
    } else {
        normalize(path).display().to_string()
    };
    out.push((key, path.to_path_buf()));
    Ok(())
}

/// Directories never walked into.
fn skip_dir(path: &Path, store_dir: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    (name.starts_with('.') && name != "." && name != "..")
        || name == MEMORY_DIR
        || normalize(path) == normalize(store_dir)
}
