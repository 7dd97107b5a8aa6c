//! The runtime and contract sources and the lockfile fiskgen carries (see `build.rs`), and
//! writing them out.
//!
//! Generated crates depend on `fiskgen-runtime = "=<version>"`, which is not fetched from
//! crates.io: `fiskgen build` writes the embedded crates to
//! `<cache>/runtime/<version>-<hash>/{runtime,contract}/` once and patches the dependency to
//! the `runtime` directory (which finds the contract at `../contract`).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

include!(concat!(env!("OUT_DIR"), "/embedded.rs"));

/// `<version>-<first 12 hex digits of the SHA-256 of the embedded files>`: changes whenever
/// the runtime or contract source does, so two fiskgen builds never share a directory with
/// different contents.
pub fn runtime_id() -> String {
    let mut hash = Sha256::new();
    for (path, contents) in RUNTIME_FILES {
        hash.update(path.as_bytes());
        hash.update([0]);
        hash.update((contents.len() as u64).to_le_bytes());
        hash.update(contents.as_bytes());
    }
    let digest = hash.finalize();
    let hex = fiskgen_contract::canonical::hex(&digest[..6]);
    format!("{}-{hex}", env!("CARGO_PKG_VERSION"))
}

/// Writes the embedded crates below `cache` (unless an earlier run did) and returns the
/// runtime's directory. The files are written to a scratch directory first and moved into
/// place, so a concurrent or interrupted run never leaves a half-written runtime behind.
pub fn write_runtime(cache: &Path) -> io::Result<PathBuf> {
    let parent = cache.join("runtime");
    let top = parent.join(runtime_id());
    let dir = top.join("runtime");
    if dir.join("Cargo.toml").is_file() && top.join("contract/Cargo.toml").is_file() {
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
    match fs::rename(&scratch, &top) {
        Ok(()) => Ok(dir),
        // Another fiskgen won the race; its copy is identical.
        Err(_) if dir.join("Cargo.toml").is_file() => {
            fs::remove_dir_all(&scratch)?;
            Ok(dir)
        }
        Err(error) => Err(error),
    }
}

/// The lockfile of a standalone generated crate named `package`: the workspace's, with the
/// crate's own entry added when the workspace has none by that name (only the golden crates
/// are members). With its root package missing, cargo resolves the crate anew at every build,
/// which updates the registry index: network access, about a second of every regeneration,
/// and a failed build offline. The entry is what cargo writes for a generated crate (version
/// 0.0.0, the runtime its only dependency), in cargo's order (by name).
pub fn lockfile_for(package: &str) -> String {
    const SEPARATOR: &str = "\n[[package]]\n";
    let mut blocks: Vec<&str> = LOCKFILE.split(SEPARATOR).collect();
    let names: Vec<Option<&str>> = blocks
        .iter()
        .map(|block| {
            let first = block.lines().next()?;
            first.strip_prefix("name = \"")?.strip_suffix('"')
        })
        .collect();
    if names.contains(&Some(package)) {
        return LOCKFILE.to_string();
    }
    let entry = format!(
        "name = \"{package}\"\nversion = \"0.0.0\"\ndependencies = [\n \"fiskgen-runtime\",\n]\n"
    );
    // The first block is the header; packages follow, sorted by name.
    let at = names
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, name)| name.is_some_and(|name| name > package))
        .map_or(blocks.len(), |(index, _)| index);
    // At the end, after the last block's closing newline, as between any two blocks.
    blocks.insert(at, &entry);
    blocks.join(SEPARATOR)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtime_is_embedded_standalone() {
        let manifest = |wanted: &str| {
            RUNTIME_FILES
                .iter()
                .find(|(path, _)| *path == wanted)
                .map(|(_, text)| *text)
                .unwrap_or_default()
        };
        let runtime = manifest("runtime/Cargo.toml");
        assert!(runtime.contains("name = \"fiskgen-runtime\""), "{runtime}");
        assert!(!runtime.contains("workspace = true"), "{runtime}");
        assert!(!runtime.contains("[dev-dependencies]"), "{runtime}");
        // The contract is found beside the runtime, at the version the lockfile names.
        assert!(
            runtime.contains("path = \"../contract\"") && runtime.contains("version = \"=0.1.0\""),
            "{runtime}"
        );
        let contract = manifest("contract/Cargo.toml");
        assert!(
            contract.contains("name = \"fiskgen-contract\""),
            "{contract}"
        );
        assert!(!contract.contains("workspace = true"), "{contract}");
        for file in [
            "runtime/src/lib.rs",
            "contract/src/lib.rs",
            "contract/src/surface.rs",
        ] {
            assert!(
                RUNTIME_FILES.iter().any(|(path, _)| *path == file),
                "{file}"
            );
        }
        assert!(LOCKFILE.contains("name = \"fiskgen-contract\""));
        assert!(LOCKFILE.contains("name = \"fiskgen-runtime\""));
        assert!(runtime_id().starts_with(env!("CARGO_PKG_VERSION")));
    }

    #[test]
    fn a_standalone_crate_finds_its_own_package_in_its_lockfile() {
        let lock = lockfile_for("nats-mcp");
        let entry = "[[package]]\nname = \"nats-mcp\"\nversion = \"0.0.0\"\ndependencies = [\n \"fiskgen-runtime\",\n]\n";
        assert_eq!(lock.matches(entry).count(), 1, "{lock}");
        assert_eq!(lock.len(), LOCKFILE.len() + entry.len() + 1);
        // In cargo's order: every package's name is at least the one before it.
        let names: Vec<&str> = lock
            .lines()
            .filter_map(|line| line.strip_prefix("name = \""))
            .collect();
        assert!(names.windows(2).all(|pair| pair[0] <= pair[1]), "{names:?}");
        let parsed: toml::Value = toml::from_str(&lock).expect("the lockfile is TOML");
        assert!(parsed.get("package").is_some());
        // A name the workspace has (the golden demo crate) is not added twice; names past the
        // last package go at the end.
        assert_eq!(lockfile_for("tasks-mcp"), LOCKFILE);
        let last = lockfile_for("zzz-mcp");
        assert!(last.ends_with("\n[[package]]\nname = \"zzz-mcp\"\nversion = \"0.0.0\"\ndependencies = [\n \"fiskgen-runtime\",\n]\n"));
    }

    #[test]
    fn the_runtime_is_written_once() -> io::Result<()> {
        let cache = tempfile::tempdir()?;
        let dir = write_runtime(cache.path())?;
        assert!(dir.join("src/lib.rs").is_file());
        assert!(dir.join("../contract/src/lib.rs").is_file());
        let again = write_runtime(cache.path())?;
        assert_eq!(dir, again);
        Ok(())
    }
}
