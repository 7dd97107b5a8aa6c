//! The lock-and-stamp cache every build-once helper shares: [`crate::apps`] (the Go
//! applications), [`crate::fx`] (the fx client), [`crate::clients`] (the MCP clients) and
//! [`crate::ship`] (the shipping tools).
//!
//! In a cache directory, `<name>.lock` serialises every thread and process that wants `<name>`,
//! and `<name>.stamp` holds a digest of what it was built from: the build is skipped when the
//! stamp matches and its product exists. A failed build leaves no stamp, so the next call starts
//! over.

use std::fs::{self, File};
use std::path::Path;

use anyhow::{Context, Result};

/// Runs `build` under `<dir>/<name>.lock` unless `<name>.stamp` holds `stamp` and `done`
/// exists; writes the stamp after a successful build.
pub fn cached_build(
    dir: &Path,
    name: &str,
    stamp: &str,
    done: &Path,
    build: impl FnOnce() -> Result<()>,
) -> Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let lock_path = dir.join(format!("{name}.lock"));
    let lock = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .with_context(|| format!("opening {}", lock_path.display()))?;
    lock.lock()
        .with_context(|| format!("locking {}", lock_path.display()))?;

    let stamp_path = dir.join(format!("{name}.stamp"));
    let current = fs::read_to_string(&stamp_path).unwrap_or_default();
    if current.trim() == stamp && done.is_file() {
        return Ok(());
    }
    if stamp_path.exists() {
        fs::remove_file(&stamp_path)
            .with_context(|| format!("removing {}", stamp_path.display()))?;
    }
    build().with_context(|| format!("building {name} in {}", dir.display()))?;
    fs::write(&stamp_path, format!("{stamp}\n"))
        .with_context(|| format!("writing {}", stamp_path.display()))?;
    Ok(())
}

/// Runs `build` with an empty `<dir>/<name>.build/` scratch directory, then moves the file
/// `<scratch>/<name>` it must leave there to `binary` and removes the scratch directory, so a
/// binary another test is running is replaced, never rewritten.
pub fn build_and_replace(
    dir: &Path,
    name: &str,
    binary: &Path,
    build: impl FnOnce(&Path) -> Result<()>,
) -> Result<()> {
    let scratch = dir.join(format!("{name}.build"));
    if scratch.exists() {
        fs::remove_dir_all(&scratch).with_context(|| format!("removing {}", scratch.display()))?;
    }
    fs::create_dir_all(&scratch).with_context(|| format!("creating {}", scratch.display()))?;
    build(&scratch)?;
    let built = scratch.join(name);
    fs::rename(&built, binary)
        .with_context(|| format!("moving {} to {}", built.display(), binary.display()))?;
    fs::remove_dir_all(&scratch).with_context(|| format!("removing {}", scratch.display()))?;
    Ok(())
}
