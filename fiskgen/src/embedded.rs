//! The runtime source and lockfile fiskgen carries (see `build.rs`), and writing them out.
//!
//! Generated crates depend on `fiskgen-runtime = "=<version>"`, which is not fetched from
//! crates.io: `fiskgen build` writes the embedded runtime to
//! `<cache>/runtime/<version>-<hash>/` once and patches the dependency to that directory.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

include!(concat!(env!("OUT_DIR"), "/embedded.rs"));

/// `<version>-<first 12 hex digits of the SHA-256 of the embedded files>`: changes whenever
/// the runtime source does, so two fiskgen builds never share a directory with different
/// contents.
pub fn runtime_id() -> String {
    let mut hash = Sha256::new();
    for (path, contents) in RUNTIME_FILES {
        hash.update(path.as_bytes());
        hash.update([0]);
        hash.update((contents.len() as u64).to_le_bytes());
        hash.update(contents.as_bytes());
    }
    let hex: String = hash
        .finalize()
        .iter()
        .take(6)
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("{}-{hex}", env!("CARGO_PKG_VERSION"))
}

/// Writes the embedded runtime below `cache` (unless an earlier run did) and returns its
/// directory. The files are written to a scratch directory first and moved into place, so a
/// concurrent or interrupted run never leaves a half-written runtime behind.
pub fn write_runtime(cache: &Path) -> io::Result<PathBuf> {
    let parent = cache.join("runtime");
    let dir = parent.join(runtime_id());
    if dir.join("Cargo.toml").is_file() {
        return Ok(dir);
    }
    fs::create_dir_all(&parent)?;
    let scratch = parent.join(format!(".{}.{}", runtime_id(), std::process::id()));
    if scratch.exists() {
        fs::remove_dir_all(&scratch)?;
    }
    for (relative, contents) in RUNTIME_FILES {
        let path = scratch.join(relative);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(&path, contents)?;
    }
    match fs::rename(&scratch, &dir) {
        Ok(()) => Ok(dir),
        // Another fiskgen won the race; its copy is identical.
        Err(_) if dir.join("Cargo.toml").is_file() => {
            fs::remove_dir_all(&scratch)?;
            Ok(dir)
        }
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtime_is_embedded_standalone() {
        let manifest = RUNTIME_FILES
            .iter()
            .find(|(path, _)| *path == "Cargo.toml")
            .map(|(_, text)| *text)
            .unwrap_or_default();
        assert!(
            manifest.contains("name = \"fiskgen-runtime\""),
            "{manifest}"
        );
        assert!(!manifest.contains("workspace = true"), "{manifest}");
        assert!(!manifest.contains("[dev-dependencies]"), "{manifest}");
        assert!(RUNTIME_FILES.iter().any(|(path, _)| *path == "src/lib.rs"));
        assert!(LOCKFILE.contains("name = \"fiskgen-runtime\""));
        assert!(runtime_id().starts_with(env!("CARGO_PKG_VERSION")));
    }

    #[test]
    fn the_runtime_is_written_once() -> io::Result<()> {
        let cache = tempfile::tempdir()?;
        let dir = write_runtime(cache.path())?;
        assert!(dir.join("src/lib.rs").is_file());
        let again = write_runtime(cache.path())?;
        assert_eq!(dir, again);
        Ok(())
    }
}
