//! The runtime and contract sources and the lockfile fiskgen carries (see `build.rs`), and
//! writing them out.
//!
//! Generated crates depend on `fiskgen-runtime = "=<version>"`, which is not fetched from
//! crates.io: `fiskgen build` writes the embedded crates to
//! `<cache>/runtime/<version>-<hash>/{runtime,contract}/` once, links that directory into the
//! generated crate as `.fiskgen/<version>-<hash>` ([`link_runtime`]) and patches the dependency
//! to the `runtime` directory through the link (the runtime finds the contract at
//! `../contract`). Through the link the runtime lies inside the generated crate's workspace, so
//! cargo hands rustc relative paths and derives the runtime's symbol hashes from the relative
//! path: the cache directory reaches neither the binary nor its symbols, and builds from
//! different cache directories are byte-identical.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

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

/// The modification time of every written runtime file (2000-01-01): cargo decides whether
/// the runtime is fresh from its files' times, and the same runtime written into another cache
/// directory must not look newer than what a shared target directory compiled before.
const FIXED_MTIME: Duration = Duration::from_secs(946_684_800);

/// The directory, inside a generated crate, that holds the link to the runtime.
pub const LINK_DIR: &str = ".fiskgen";

/// Writes the embedded crates below `cache` (unless an earlier run did) and returns the
/// runtime's directory. The files are written to a scratch directory first and moved into
/// place, so a concurrent or interrupted run never leaves a half-written runtime behind. Every
/// file gets the same fixed modification time (2000-01-01).
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
        let mut file = fs::File::create(&path)?;
        file.write_all(contents.as_bytes())?;
        file.set_modified(SystemTime::UNIX_EPOCH + FIXED_MTIME)?;
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

/// Links `<crate_dir>/.fiskgen/<id>` to the directory holding `runtime` (the one
/// [`write_runtime`] returned) and its contract, removes any other entry of `.fiskgen/` (links
/// to earlier runtimes), and returns the runtime's directory through the link. `crate_dir`
/// should be absolute: cargo is given the returned path.
#[cfg(unix)]
pub fn link_runtime(crate_dir: &Path, runtime: &Path) -> io::Result<PathBuf> {
    let (Some(top), Some(name)) = (runtime.parent(), runtime.file_name()) else {
        return Err(io::Error::other(format!(
            "{} is not a runtime directory inside a cache",
            runtime.display()
        )));
    };
    let id = top
        .file_name()
        .ok_or_else(|| io::Error::other(format!("{} has no name", top.display())))?;
    let links = crate_dir.join(LINK_DIR);
    fs::create_dir_all(&links)?;
    let link = links.join(id);
    for entry in fs::read_dir(&links)? {
        let entry = entry?;
        if entry.file_name() == id {
            continue;
        }
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            fs::remove_dir_all(&path)?;
        } else {
            fs::remove_file(&path)?;
        }
    }
    if fs::read_link(&link).ok().as_deref() != Some(top) {
        // A link (or anything else) left by another cache directory is replaced.
        if fs::symlink_metadata(&link).is_ok_and(|meta| meta.is_dir()) {
            fs::remove_dir_all(&link)?;
        } else if fs::symlink_metadata(&link).is_ok() {
            fs::remove_file(&link)?;
        }
        std::os::unix::fs::symlink(top, &link)?;
    }
    Ok(link.join(name))
}

/// Without symbolic links the runtime is used from the cache directly (builds then depend on
/// the cache directory's path).
#[cfg(not(unix))]
pub fn link_runtime(_crate_dir: &Path, runtime: &Path) -> io::Result<PathBuf> {
    Ok(runtime.to_path_buf())
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
        let modified = fs::metadata(dir.join("src/lib.rs"))?.modified()?;
        assert_eq!(modified, SystemTime::UNIX_EPOCH + FIXED_MTIME);
        Ok(())
    }

    #[cfg(unix)]
    #[test]
    fn the_crate_reaches_the_runtime_through_a_link_named_by_its_id() -> io::Result<()> {
        let first = tempfile::tempdir()?;
        let second = tempfile::tempdir()?;
        let crate_dir = tempfile::tempdir()?;
        let stale = crate_dir.path().join(LINK_DIR).join("0.0.1-old");
        fs::create_dir_all(&stale)?;
        let linked = link_runtime(crate_dir.path(), &write_runtime(first.path())?)?;
        let expected = crate_dir
            .path()
            .join(LINK_DIR)
            .join(runtime_id())
            .join("runtime");
        assert_eq!(linked, expected);
        assert!(linked.join("src/lib.rs").is_file());
        assert!(linked.join("../contract/Cargo.toml").is_file());
        assert!(!stale.exists(), "the link to an earlier runtime is removed");
        // Another cache directory's runtime replaces the link; the path stays the same.
        let again = link_runtime(crate_dir.path(), &write_runtime(second.path())?)?;
        assert_eq!(again, expected);
        let target = fs::read_link(crate_dir.path().join(LINK_DIR).join(runtime_id()))?;
        assert!(target.starts_with(second.path()), "{}", target.display());
        Ok(())
    }
}
