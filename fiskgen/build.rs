//! Embeds the runtime crate's source, the contract crate's beside it, and the workspace lockfile
//! into fiskgen.
//!
//! Everything is read from inside fiskgen's own package, so a packaged fiskgen (`cargo package`,
//! crates.io) builds like the checkout: `embed/` holds symbolic links to the workspace's files
//! (`runtime-src`, `runtime.toml`, `contract-src`, `contract.toml`, `workspace.toml` and
//! `workspace.lock`), which `cargo package` stores as the files they point to.
//!
//! A generated crate must build on a machine that has only fiskgen, cargo and crates.io, so
//! fiskgen carries the `fiskgen-runtime` it was built with and the `fiskgen-contract` that the
//! runtime shares with fiskgen: for each, every file under `src`, its `build.rs` if it has one,
//! and its `Cargo.toml` rewritten to stand alone (workspace inheritance resolved from the root
//! manifest, dev-dependencies and extra targets dropped). They are written side by side as
//! `runtime/` and `contract/`, so the runtime's dependency on the contract is the relative path
//! `../contract`. The workspace `Cargo.lock` comes along so generated crates build with the
//! tested versions.
//!
//! Output: `$OUT_DIR/embedded.rs`, included by `src/embedded.rs`. Files are listed in sorted
//! order so the output (and the hash of it) does not depend on the directory walk.

use std::collections::BTreeMap;
use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use toml::{Table, Value};

fn main() {
    if let Err(error) = run() {
        println!("cargo::error={error}");
    }
}

fn run() -> Result<(), String> {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").map_err(|e| e.to_string())?);
    let out_dir = PathBuf::from(env::var("OUT_DIR").map_err(|e| e.to_string())?);
    let embed = manifest_dir.join("embed");
    let lockfile = embed.join("workspace.lock");
    for watched in ["workspace.toml", "workspace.lock"] {
        watch(&embed.join(watched));
    }
    let workspace = read_toml(&embed.join("workspace.toml"))?;
    let mut files: BTreeMap<String, PathBuf> = BTreeMap::new();
    for name in EMBEDDED {
        let (manifest, src, build_script) = (
            embed.join(format!("{name}.toml")),
            embed.join(format!("{name}-src")),
            embed.join(format!("{name}-build.rs")),
        );
        for watched in [&manifest, &src, &build_script] {
            watch(watched);
        }
        let package = read_toml(&manifest)?;
        let standalone = standalone_manifest(&package, &workspace)?;
        let manifest_path = out_dir.join(format!("{name}-Cargo.toml"));
        write(&manifest_path, &standalone)?;
        files.insert(format!("{name}/Cargo.toml"), manifest_path);
        collect(&src, &format!("{name}/src"), &mut files)?;
        if build_script.is_file() {
            files.insert(format!("{name}/build.rs"), build_script);
        }
    }

    let mut code = String::new();
    code.push_str(
        "/// The embedded crates' files (`runtime/...`, `contract/...`): path relative to the \
         directory that holds both, and contents.\n",
    );
    code.push_str("pub(crate) const RUNTIME_FILES: &[(&str, &str)] = &[\n");
    for (relative, path) in &files {
        let _ = writeln!(
            code,
            "    ({relative:?}, include_str!({:?})),",
            path.display().to_string()
        );
    }
    code.push_str("];\n\n");
    code.push_str("/// The workspace lockfile fiskgen was tested with.\n");
    let _ = writeln!(
        code,
        "pub(crate) const LOCKFILE: &str = include_str!({:?});",
        lockfile.display().to_string()
    );
    write(&out_dir.join("embedded.rs"), &code)
}

/// Asks cargo to rerun this script when `path` changes: the file or directory a link in `embed/`
/// points to (cargo does not follow a link to a directory when it looks for changes).
fn watch(path: &Path) {
    let target = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    println!("cargo::rerun-if-changed={}", target.display());
}

/// The workspace crates embedded, by directory; each is also the directory it is written to.
const EMBEDDED: [&str; 2] = ["runtime", "contract"];

fn read_toml(path: &Path) -> Result<Table, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    text.parse::<Table>()
        .map_err(|e| format!("parsing {}: {e}", path.display()))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// Every file below `dir`, keyed by `prefix/<path below dir>` (`/`-separated).
fn collect(dir: &Path, prefix: &str, files: &mut BTreeMap<String, PathBuf>) -> Result<(), String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("listing {}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("listing {}: {e}", dir.display()))?;
        let path = entry.path();
        let name = entry.file_name();
        let name = name
            .to_str()
            .ok_or_else(|| format!("{} is not UTF-8", path.display()))?;
        let relative = format!("{prefix}/{name}");
        if path.is_dir() {
            collect(&path, &relative, files)?;
        } else {
            files.insert(relative, path);
        }
    }
    Ok(())
}

/// The runtime manifest with workspace inheritance resolved and everything a dependent does not
/// need removed, so it builds outside this workspace.
fn standalone_manifest(package: &Table, workspace: &Table) -> Result<String, String> {
    let ws = workspace
        .get("workspace")
        .and_then(Value::as_table)
        .ok_or("the root Cargo.toml has no [workspace]")?;
    let empty = Table::new();
    let ws_package = ws
        .get("package")
        .and_then(Value::as_table)
        .unwrap_or(&empty);
    let ws_deps = ws
        .get("dependencies")
        .and_then(Value::as_table)
        .unwrap_or(&empty);

    let mut out = Table::new();
    for (key, value) in package {
        match key.as_str() {
            "package" => {
                let mut resolved = Table::new();
                let table = value.as_table().ok_or("[package] is not a table")?;
                for (field, value) in table {
                    let value = if inherits(value) {
                        ws_package
                            .get(field)
                            .cloned()
                            .ok_or_else(|| format!("package.{field} inherits a missing value"))?
                    } else {
                        value.clone()
                    };
                    resolved.insert(field.clone(), value);
                }
                for auto in ["autotests", "autobenches", "autoexamples", "autobins"] {
                    resolved.insert(auto.into(), Value::Boolean(false));
                }
                out.insert(key.clone(), Value::Table(resolved));
            }
            "dependencies" | "build-dependencies" => {
                let table = value.as_table().ok_or("dependencies are not a table")?;
                let mut resolved = Table::new();
                for (name, spec) in table {
                    resolved.insert(name.clone(), dependency(name, spec, ws_deps)?);
                }
                out.insert(key.clone(), Value::Table(resolved));
            }
            "lints" if inherits(value) => {
                let lints = ws
                    .get("lints")
                    .cloned()
                    .unwrap_or(Value::Table(Table::new()));
                out.insert(key.clone(), lints);
            }
            // Tests, benches, examples and their dependencies are not needed by a dependent.
            "dev-dependencies" | "test" | "bench" | "example" => {}
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    let text = toml::to_string(&out).map_err(|e| format!("writing an embedded manifest: {e}"))?;
    Ok(format!(
        "# A crate as embedded in fiskgen (workspace inheritance resolved).\n\n{text}"
    ))
}

/// `x.workspace = true`, or a table with `workspace = true`.
fn inherits(value: &Value) -> bool {
    value
        .as_table()
        .and_then(|table| table.get("workspace"))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// A dependency with `workspace = true` replaced by the workspace's entry, keeping the local
/// `features` (added to the workspace's) and `optional`.
fn dependency(name: &str, spec: &Value, ws_deps: &Table) -> Result<Value, String> {
    if !inherits(spec) {
        return Ok(spec.clone());
    }
    let local = spec
        .as_table()
        .ok_or("unreachable: inherits() saw a table")?;
    let mut merged = match ws_deps.get(name) {
        Some(Value::String(version)) => {
            let mut table = Table::new();
            table.insert("version".into(), Value::String(version.clone()));
            table
        }
        Some(Value::Table(table)) => table.clone(),
        _ => {
            return Err(format!(
                "dependency {name} inherits a missing workspace dependency"
            ));
        }
    };
    if let Some(Value::String(path)) = merged.get("path") {
        // An embedded crate is written beside the one that depends on it.
        if !EMBEDDED.contains(&path.as_str()) {
            return Err(format!(
                "an embedded crate depends on the workspace path dependency {name} ({path}), \
                 which is not embedded; embedded crates can only depend on crates.io and on \
                 each other"
            ));
        }
        merged.insert("path".into(), Value::String(format!("../{path}")));
    }
    for (key, value) in local {
        match key.as_str() {
            "workspace" => {}
            "features" => {
                let mut features: Vec<Value> = merged
                    .get("features")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                for feature in value.as_array().into_iter().flatten() {
                    if !features.contains(feature) {
                        features.push(feature.clone());
                    }
                }
                merged.insert(key.clone(), Value::Array(features));
            }
            _ => {
                merged.insert(key.clone(), value.clone());
            }
        }
    }
    Ok(Value::Table(merged))
}
