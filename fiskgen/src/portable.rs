//! What a server is built for and how it is made reproducible: `fiskgen build --target TRIPLE`,
//! the portable Linux mode `--glibc VERSION` (cargo-zigbuild and Zig link against that glibc's
//! symbol versions) and the path remapping that keeps the build directories out of the binary.
//!
//! docs/install.md documents the platforms and what each mode needs.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The platform a build is for: the host's (neither set), another target triple, or a Linux
/// GNU target linked against an older glibc.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Platform {
    /// `--target TRIPLE`: any target the user's toolchain has (`rustup target add TRIPLE`).
    pub target: Option<String>,
    /// `--glibc VERSION` (`2.17`): link against this glibc through `cargo zigbuild`.
    pub glibc: Option<String>,
}

/// Why a platform cannot be built for.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlatformError {
    /// The glibc version is not `MAJOR.MINOR`.
    #[error(
        "--glibc {0}: not a glibc version; give MAJOR.MINOR, e.g. --glibc 2.17 (the oldest \
         glibc the binary must run on)"
    )]
    GlibcVersion(String),
    /// `--glibc` with a target that does not use glibc.
    #[error(
        "--glibc applies to Linux GNU targets only, and {0} is not one; use a \
         *-unknown-linux-gnu target (e.g. --target x86_64-unknown-linux-gnu --glibc 2.17)"
    )]
    NotGlibc(String),
    /// The target triple has a character cargo would not accept.
    #[error("--target {0:?}: not a target triple (letters, digits, '-', '_' and '.' only)")]
    Triple(String),
    /// The host triple could not be read from `rustc -vV`.
    #[error("cannot tell the host's target triple from `rustc -vV` ({0}); pass --target")]
    Host(String),
}

impl Platform {
    /// Checks the flags before minutes of compiling; for `--glibc` without `--target`, the
    /// target is the host's, which must be a Linux GNU target.
    pub fn resolve(self) -> Result<Platform, PlatformError> {
        if let Some(target) = &self.target
            && (target.is_empty()
                || !target
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)))
        {
            return Err(PlatformError::Triple(target.clone()));
        }
        let Some(glibc) = &self.glibc else {
            return Ok(self);
        };
        if !is_glibc_version(glibc) {
            return Err(PlatformError::GlibcVersion(glibc.clone()));
        }
        let target = match self.target {
            Some(target) => target,
            None => host_triple()?,
        };
        if !target.contains("-linux-gnu") {
            return Err(PlatformError::NotGlibc(target));
        }
        Ok(Platform {
            target: Some(target),
            glibc: self.glibc,
        })
    }

    /// The cargo subcommand: `zigbuild` for a glibc version, else `build`.
    pub fn subcommand(&self) -> &'static str {
        if self.glibc.is_some() {
            "zigbuild"
        } else {
            "build"
        }
    }

    /// `--target`'s value: the triple, with `.<glibc>` appended for cargo-zigbuild.
    pub fn target_arg(&self) -> Option<String> {
        let target = self.target.as_ref()?;
        Some(match &self.glibc {
            Some(glibc) => format!("{target}.{glibc}"),
            None => target.clone(),
        })
    }
}

/// `2.17`, `2.28`: two dot-separated numbers.
fn is_glibc_version(text: &str) -> bool {
    text.split_once('.').is_some_and(|(major, minor)| {
        [major, minor].iter().all(|part| {
            !part.is_empty() && part.len() <= 3 && part.bytes().all(|b| b.is_ascii_digit())
        })
    })
}

/// The `host:` line of `rustc -vV` (`$RUSTC` when set, as cargo does).
fn host_triple() -> Result<String, PlatformError> {
    let rustc = std::env::var_os("RUSTC")
        .filter(|rustc| !rustc.is_empty())
        .unwrap_or_else(|| "rustc".into());
    let output = Command::new(&rustc)
        .arg("-vV")
        .output()
        .map_err(|error| PlatformError::Host(format!("running {rustc:?}: {error}")))?;
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .map(|host| host.trim().to_string())
        .ok_or_else(|| PlatformError::Host("no host: line".to_string()))
}

/// The directories whose absolute paths would otherwise reach the binary (panic locations of
/// the runtime, of crates.io crates and of build scripts' generated files), each mapped to a
/// fixed name. The generated crate itself is compiled with relative paths (it is its own
/// workspace), so its directory needs no mapping and the flags are the same for every
/// application built into one target directory: switching applications rebuilds nothing.
#[derive(Debug, Clone)]
pub struct Remap {
    /// The directory holding `runtime/` and `contract/`, for a runtime outside the crate
    /// (`--runtime-path`). The embedded runtime is reached through a link inside the crate,
    /// so rustc sees it by a relative path and it needs no mapping.
    pub runtime_parent: Option<PathBuf>,
    /// The cargo target directory.
    pub target_dir: PathBuf,
    /// `$CARGO_HOME` (crates.io sources live below it).
    pub cargo_home: Option<PathBuf>,
}

impl Remap {
    /// `build.rustflags=[...]` for cargo's `--config`: one `--remap-path-prefix` per directory.
    /// Cargo ignores `build.rustflags` when the environment sets `RUSTFLAGS` or
    /// `CARGO_ENCODED_RUSTFLAGS`; [`Remap::appended_to`] serves that case.
    pub fn config(&self) -> String {
        let quoted: Vec<String> = self.flags().iter().map(|flag| toml_string(flag)).collect();
        format!("build.rustflags=[{}]", quoted.join(", "))
    }

    /// The value of `CARGO_ENCODED_RUSTFLAGS` that keeps the user's flags from the environment
    /// (`CARGO_ENCODED_RUSTFLAGS`, which cargo prefers, else `RUSTFLAGS`, split on spaces as
    /// cargo does) and appends the remapping; `None` when neither variable is set.
    pub fn appended_to(&self, encoded: Option<&OsStr>, plain: Option<&OsStr>) -> Option<String> {
        let mut flags: Vec<String> = match (encoded, plain) {
            (Some(encoded), _) => {
                let encoded = encoded.to_string_lossy();
                encoded
                    .split('\x1f')
                    .filter(|flag| !flag.is_empty())
                    .map(str::to_string)
                    .collect()
            }
            (None, Some(plain)) => plain
                .to_string_lossy()
                .split(' ')
                .map(str::trim)
                .filter(|flag| !flag.is_empty())
                .map(str::to_string)
                .collect(),
            (None, None) => return None,
        };
        flags.extend(self.flags());
        Some(flags.join("\x1f"))
    }

    /// One `--remap-path-prefix=FROM=TO` per directory.
    fn flags(&self) -> Vec<String> {
        let mut flags = Vec::new();
        let mut map = |from: &Path, to: &str| {
            flags.push(format!("--remap-path-prefix={}={to}", from.display()));
        };
        if let Some(home) = &self.cargo_home {
            map(home, "/cargo");
        }
        if let Some(runtime) = &self.runtime_parent {
            map(runtime, "/fiskgen");
        }
        map(&self.target_dir, "/target");
        flags
    }
}

/// `$CARGO_HOME`, else `$HOME/.cargo`, as cargo finds it.
pub fn cargo_home() -> Option<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")))
        .and_then(|home| std::path::absolute(home).ok())
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    let mut out = String::from('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The arguments `cargo build` gets for this platform, after the subcommand.
pub fn target_args(platform: &Platform) -> Vec<OsString> {
    match platform.target_arg() {
        Some(target) => vec!["--target".into(), target.into()],
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_versions_are_major_dot_minor() {
        for good in ["2.17", "2.28", "2.5"] {
            assert!(is_glibc_version(good), "{good}");
        }
        for bad in ["2", "2.", ".17", "2.17.1", "two.x", "", "2.17 ", "1234.1"] {
            assert!(!is_glibc_version(bad), "{bad}");
        }
    }

    #[test]
    fn a_glibc_version_needs_a_linux_gnu_target() {
        let platform = |target: &str, glibc: &str| Platform {
            target: Some(target.to_string()),
            glibc: Some(glibc.to_string()),
        };
        let portable = platform("aarch64-unknown-linux-gnu", "2.17").resolve();
        let portable = portable.expect("a Linux GNU target takes a glibc version");
        assert_eq!(portable.subcommand(), "zigbuild");
        assert_eq!(
            portable.target_arg().as_deref(),
            Some("aarch64-unknown-linux-gnu.2.17")
        );
        let error = platform("x86_64-apple-darwin", "2.17").resolve();
        assert!(
            matches!(error, Err(PlatformError::NotGlibc(_))),
            "{error:?}"
        );
        let error = platform("x86_64-unknown-linux-musl", "2.17").resolve();
        assert!(
            matches!(error, Err(PlatformError::NotGlibc(_))),
            "{error:?}"
        );
        let error = platform("x86_64-unknown-linux-gnu", "latest").resolve();
        let message = error.expect_err("not a version").to_string();
        assert!(message.contains("--glibc 2.17"), "{message}");
        let error = Platform {
            target: Some("x86_64 $(rm)".to_string()),
            glibc: None,
        };
        assert!(matches!(error.resolve(), Err(PlatformError::Triple(_))));
        let plain = Platform::default().resolve().expect("the host");
        assert_eq!((plain.subcommand(), plain.target_arg()), ("build", None));
    }

    #[test]
    fn the_remapping_is_one_toml_array_of_flags() {
        let remap = Remap {
            runtime_parent: Some(PathBuf::from("/c/fiskgen/runtime/0.1.0-x")),
            target_dir: PathBuf::from("/t \"q\""),
            cargo_home: Some(PathBuf::from("/h/.cargo")),
        };
        let config = remap.config();
        let parsed: toml::Table = config.parse().expect("TOML");
        let flags: Vec<&str> = parsed["build"]["rustflags"]
            .as_array()
            .expect("an array")
            .iter()
            .filter_map(toml::Value::as_str)
            .collect();
        assert_eq!(
            flags,
            [
                "--remap-path-prefix=/h/.cargo=/cargo",
                "--remap-path-prefix=/c/fiskgen/runtime/0.1.0-x=/fiskgen",
                "--remap-path-prefix=/t \"q\"=/target",
            ]
        );
    }

    #[test]
    fn a_users_rustflags_are_kept_and_the_remapping_appended() {
        let remap = Remap {
            runtime_parent: None,
            target_dir: PathBuf::from("/t"),
            cargo_home: Some(PathBuf::from("/h")),
        };
        let ours = "--remap-path-prefix=/h=/cargo\x1f--remap-path-prefix=/t=/target";
        assert_eq!(remap.appended_to(None, None), None);
        // RUSTFLAGS=" " is set (cargo then ignores build.rustflags) and adds nothing.
        assert_eq!(
            remap.appended_to(None, Some(OsStr::new(" "))).as_deref(),
            Some(ours)
        );
        assert_eq!(
            remap
                .appended_to(None, Some(OsStr::new(" -C  target-cpu=native ")))
                .as_deref(),
            Some(format!("-C\x1ftarget-cpu=native\x1f{ours}").as_str())
        );
        // The encoded form wins over RUSTFLAGS, as in cargo, and keeps spaces inside a flag.
        assert_eq!(
            remap
                .appended_to(
                    Some(OsStr::new("--cfg\x1ffoo=\"a b\"")),
                    Some(OsStr::new("-C opt-level=0"))
                )
                .as_deref(),
            Some(format!("--cfg\x1ffoo=\"a b\"\x1f{ours}").as_str())
        );
        assert_eq!(
            remap.appended_to(Some(OsStr::new("")), None).as_deref(),
            Some(ours)
        );
    }
}
