//! Shipping what fiskgen builds (docs/install.md), each with the real tool:
//!
//! - fiskgen installs from its packaged `.crate` files (not the checkout) offline, with the
//!   tested lockfile and no warning, and the installed fiskgen builds the demo server from
//!   another directory; the same config built again by this checkout's fiskgen, from other
//!   crate, target and cache directories and with `RUSTFLAGS` set, gives a byte-identical
//!   binary.
//! - a portable build (`--glibc 2.17`, cargo-zigbuild and Zig) asks for no newer glibc symbol,
//!   and its MCP Bundle passes the official `mcpb` CLI's validation, packs and unpacks, and
//!   the unpacked server serves the official Python SDK over stdio; the release workflow's
//!   `server.json` step, run on that bundle, writes a document the MCP Registry's published
//!   schema accepts.
//!
//! Their target directories are kept below `target/fiskgen-ship` between runs (the first run
//! compiles the runtime in release mode for each: minutes on two cores); the second build of
//! the reproducibility test shares `tests/build.rs`'s warm one.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use fiskgen_tests::apps::{self, App, workspace_root};
use fiskgen_tests::{clients, ship};
use serde_json::Value;
use sha2::{Digest, Sha256};

mod support;
use support::text;

fn ok(output: &Output, what: &str) -> String {
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}{}",
        output.status,
        text(&output.stdout),
        text(&output.stderr)
    );
    text(&output.stderr)
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

fn sha256(path: &Path) -> String {
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `target/fiskgen-ship/<name>`.
fn ship_dir(name: &str) -> PathBuf {
    workspace_root()
        .join("target")
        .join("fiskgen-ship")
        .join(name)
}

/// `target/fiskgen-e2e/<name>`: the cache and warm target directory `tests/build.rs` builds in.
fn e2e_dir(name: &str) -> PathBuf {
    support::e2e().join(name)
}

/// `tests/build.rs`'s cache (the embedded runtime is written there, at a path named by its
/// contents' hash): the second reproducibility build and the portable build use it, so the
/// second build is warm.
fn shared_cache() -> PathBuf {
    e2e_dir("cache")
}

/// Where one build of the demo happens, and how.
struct DemoBuild<'a> {
    /// The fiskgen that builds.
    fiskgen: &'a Path,
    /// Its working directory (not the checkout).
    cwd: &'a Path,
    crate_dir: &'a Path,
    target: &'a Path,
    /// `XDG_CACHE_HOME`.
    cache: &'a Path,
    /// `RUSTFLAGS`, or none in the environment.
    rustflags: Option<&'a str>,
    /// The binary.
    out: &'a Path,
}

/// `fiskgen build` of the demo config, offline.
fn build_demo(build: &DemoBuild<'_>) -> Output {
    let path = ship::path_with(&[apps::bin_dir().expect("fisk apps dir")]).expect("PATH");
    let mut command = Command::new(build.fiskgen);
    if let Some(flags) = build.rustflags {
        command.env("RUSTFLAGS", flags);
    } else {
        command.env_remove("RUSTFLAGS");
    }
    command
        .arg("build")
        .arg(workspace_root().join("examples/demo/demo.yaml"))
        .arg("--crate-dir")
        .arg(build.crate_dir)
        .arg("--target-dir")
        .arg(build.target)
        .arg("-o")
        .arg(build.out)
        .current_dir(build.cwd)
        .env("PATH", path)
        .env("XDG_CACHE_HOME", build.cache)
        .env("CARGO_NET_OFFLINE", "true")
        .env_remove("FISKGEN_TARGET_DIR")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .expect("fiskgen runs")
}

/// `cargo package` of fiskgen and the contract it depends on, unpacked into `dir`: the two
/// source trees crates.io would serve.
fn packaged_sources(dir: &Path) -> (PathBuf, PathBuf) {
    let package_target = ship_dir("package-target");
    let packaged = cargo()
        .args([
            "package",
            "--offline",
            "--locked",
            "--no-verify",
            "--allow-dirty",
        ])
        .args(["-p", "fiskgen-contract", "-p", "fiskgen", "--target-dir"])
        .arg(&package_target)
        .current_dir(workspace_root())
        .output()
        .expect("cargo runs");
    let log = ok(&packaged, "cargo package");
    assert!(!log.contains("warning:"), "packaging warns: {log}");
    let version = env!("CARGO_PKG_VERSION");
    for name in ["fiskgen", "fiskgen-contract"] {
        let file = package_target
            .join("package")
            .join(format!("{name}-{version}.crate"));
        let unpacked = Command::new("tar")
            .arg("xzf")
            .arg(&file)
            .arg("-C")
            .arg(dir)
            .output()
            .expect("tar runs");
        ok(&unpacked, "unpacking the .crate");
    }
    (
        dir.join(format!("fiskgen-{version}")),
        dir.join(format!("fiskgen-contract-{version}")),
    )
}

#[test]
fn a_packaged_fiskgen_installs_offline_and_builds_the_demo_bit_for_bit_like_the_checkout() {
    apps::path(App::Demo).expect("the demo app builds");
    let scratch = tempfile::tempdir().expect("temp dir");
    let (fiskgen_src, contract_src) = packaged_sources(scratch.path());
    // Everything the build script reads is inside the package.
    assert!(fiskgen_src.join("embed/runtime-src/lib.rs").is_file());
    assert!(fiskgen_src.join("templates/Cargo.toml.askama").is_file());
    assert!(!fiskgen_src.join("embed/runtime-src").is_symlink());

    // crates.io would serve the contract; here its packaged source stands in for it, so the
    // packaged lockfile names it as a path package.
    let lock_path = fiskgen_src.join("Cargo.lock");
    let lock = fs::read_to_string(&lock_path).expect("the package has a Cargo.lock");
    let entry = lock
        .split("\n[[package]]\n")
        .find(|block| block.starts_with("name = \"fiskgen-contract\"\n"))
        .expect("the lockfile names fiskgen-contract");
    let local: String = entry
        .lines()
        .filter(|line| !line.starts_with("source = ") && !line.starts_with("checksum = "))
        .map(|line| format!("{line}\n"))
        .collect();
    fs::write(
        &lock_path,
        lock.replace(entry, local.trim_end_matches('\n')),
    )
    .expect("lock");
    let root = scratch.path().join("root");
    let install = cargo()
        .args(["install", "--locked", "--offline", "--debug", "--path"])
        .arg(&fiskgen_src)
        .arg("--root")
        .arg(&root)
        .arg("--config")
        .arg(format!(
            "patch.crates-io.fiskgen-contract.path={:?}",
            contract_src.display().to_string()
        ))
        .env("CARGO_TARGET_DIR", ship_dir("install-target"))
        .current_dir(scratch.path())
        .output()
        .expect("cargo runs");
    let log = ok(&install, "cargo install of the packaged fiskgen");
    for asked in ["cargo update", "was not used"] {
        assert!(
            !log.contains(asked),
            "the install asks the user to act: {log}"
        );
    }
    let installed = root.join("bin").join("fiskgen");

    // A build in its own target directory, with a cache directory of its own, from a directory
    // that is not the checkout.
    let first_dir = scratch.path().join("a");
    fs::create_dir_all(&first_dir).expect("dir");
    let first = first_dir.join("tasks-mcp");
    let first_target = ship_dir("target-a");
    let first_cache = scratch.path().join("cache-a");
    let built = build_demo(&DemoBuild {
        fiskgen: &installed,
        cwd: &first_dir,
        crate_dir: &first_dir.join("crate"),
        target: &first_target,
        cache: &first_cache,
        rustflags: None,
        out: &first,
    });
    ok(&built, "the installed fiskgen's build");
    // The crate reaches the runtime through its link, which its .gitignore names.
    let links = first_dir.join("crate").join(".fiskgen");
    let link = fs::read_dir(&links)
        .expect("the crate has .fiskgen/")
        .next()
        .expect("one link")
        .expect("entry")
        .path();
    assert!(link.is_symlink(), "{}", link.display());
    let points_to = fs::read_link(&link).expect("a link");
    assert!(
        points_to.starts_with(&first_cache),
        "{}",
        points_to.display()
    );
    let ignored = fs::read_to_string(first_dir.join("crate/.gitignore")).expect(".gitignore");
    assert!(
        ignored.lines().any(|line| line == "/.fiskgen/"),
        "{ignored}"
    );

    let version = Command::new(&first)
        .args(["version", "--json"])
        .output()
        .expect("the server runs");
    ok(&version, "version --json");
    let version: Value = serde_json::from_slice(&version.stdout).expect("JSON");
    assert_eq!(version["fiskgen_version"], env!("CARGO_PKG_VERSION"));
    let fingerprint = version["application"]["fingerprint"].as_str().unwrap_or("");
    assert!(fingerprint.len() >= 16, "{version}");
    let rustc = Command::new("rustc")
        .arg("-V")
        .output()
        .expect("rustc runs");
    assert_eq!(
        version["rustc_version"].as_str(),
        Some(text(&rustc.stdout).trim()),
        "{version}"
    );

    // The same config, later, by this checkout's fiskgen, from another (deeper) directory,
    // another target directory and another cache directory, with RUSTFLAGS set (cargo then
    // ignores build.rustflags; fiskgen appends its remapping to the user's flags).
    let second_dir = scratch.path().join("b").join("c").join("d");
    fs::create_dir_all(&second_dir).expect("dir");
    let second = second_dir.join("tasks-mcp");
    let built = build_demo(&DemoBuild {
        fiskgen: Path::new(env!("CARGO_BIN_EXE_fiskgen")),
        cwd: &second_dir,
        crate_dir: &second_dir.join("crate"),
        target: &e2e_dir("target"),
        cache: &shared_cache(),
        rustflags: Some(" "),
        out: &second,
    });
    ok(&built, "the checkout's build");
    assert_eq!(
        sha256(&first),
        sha256(&second),
        "two builds of one config differ"
    );
    let binary = fs::read(&first).expect("binary");
    for leaked in [
        scratch.path().to_string_lossy().into_owned(),
        first_target.to_string_lossy().into_owned(),
        e2e_dir("target").to_string_lossy().into_owned(),
        shared_cache().to_string_lossy().into_owned(),
    ] {
        let found = binary
            .windows(leaked.len())
            .any(|window| window == leaked.as_bytes());
        assert!(!found, "the binary contains the path {leaked}");
    }

    // It serves the official Python SDK over stdio.
    let python = clients::python().expect("the Python SDK client installs");
    let listed = Command::new(&python)
        .arg(clients::scripts_dir().join("list_tools.py"))
        .args(["--expect", "8", "--command"])
        .arg(&first)
        .arg("--stdio")
        .env(
            "PATH",
            ship::path_with(&[apps::bin_dir().expect("apps")]).expect("PATH"),
        )
        .output()
        .expect("python runs");
    ok(&listed, "listing the packaged fiskgen's server");
}

/// The oldest glibc the portable test asks for.
const GLIBC: (u32, u32) = (2, 17);

/// The `run:` script of the step named `name` in a workflow.
fn workflow_step(workflow: &Path, name: &str) -> String {
    let text = fs::read_to_string(workflow).expect("the workflow");
    let scalars: Vec<String> = saphyr_parser::Parser::new_from_str(&text)
        .map(|event| event.expect("YAML").0)
        .filter_map(|event| match event {
            saphyr_parser::Event::Scalar(text, ..) => Some(text.into_owned()),
            _ => None,
        })
        .collect();
    let at = scalars
        .iter()
        .position(|scalar| scalar == name)
        .unwrap_or_else(|| panic!("no step {name:?} in {}", workflow.display()));
    let run = scalars[at..]
        .iter()
        .position(|scalar| scalar == "run")
        .unwrap_or_else(|| panic!("the step {name:?} runs nothing"));
    scalars[at + run + 1].clone()
}

/// Runs the demo's release workflow step that writes `server.json` on `bundle` (as a
/// release's only asset), as GitHub runs a `run:` step, and validates the result against the
/// MCP Registry's published schema; a document that breaks the schema is refused.
fn server_json_passes_the_registry_schema(scratch: &Path, bundle: &Path) {
    let dist = scratch.join("dist");
    fs::create_dir_all(&dist).expect("dist");
    let asset = dist.join("tasks-mcp-linux-x86_64.mcpb");
    fs::copy(bundle, &asset).expect("copy the bundle");
    let workflow = workspace_root().join("tests/expected/demo/ci/release.yml");
    let script = workflow_step(
        &workflow,
        "server.json for the MCP Registry (one mcpb package per platform)",
    );
    let downloads = "https://github.com/fisk-user/tasks/releases/download/v1.0.0";
    let written = Command::new("bash")
        .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", &script])
        .current_dir(scratch)
        .env("PACKAGE", "tasks-mcp")
        .env("DOWNLOADS", downloads)
        .env("GITHUB_REPOSITORY_OWNER", "fisk-user")
        .env("GITHUB_REF_NAME", "v1.0.0")
        .output()
        .expect("bash runs");
    ok(&written, "the release workflow's server.json step");
    let server_json = dist.join("server.json");
    let document: Value =
        serde_json::from_str(&fs::read_to_string(&server_json).expect("server.json"))
            .expect("JSON");
    assert_eq!(
        document["name"], "io.github.fisk-user/tasks-mcp",
        "{document}"
    );
    assert_eq!(document["version"], "1.0.0", "{document}");
    let package = &document["packages"][0];
    assert_eq!(package["registryType"], "mcpb", "{document}");
    assert_eq!(
        package["identifier"],
        format!("{downloads}/tasks-mcp-linux-x86_64.mcpb"),
        "{document}"
    );
    assert_eq!(package["fileSha256"], sha256(&asset), "{document}");

    let schema = ship::registry_schema().expect("the registry's schema downloads");
    let python = clients::python().expect("the Python SDK client installs");
    let validate = |document: &Path| {
        Command::new(&python)
            .arg(clients::scripts_dir().join("validate_json.py"))
            .arg(&schema)
            .arg(document)
            .output()
            .expect("python runs")
    };
    ok(&validate(&server_json), "validating server.json");
    // The same validation refuses a document the registry would refuse.
    let mut broken = document.clone();
    broken["packages"][0]["fileSha256"] = Value::from("not a digest");
    broken["name"] = Value::from("no-namespace");
    let broken_path = scratch.join("broken-server.json");
    fs::write(&broken_path, broken.to_string()).expect("write");
    let refused = validate(&broken_path);
    let said = text(&refused.stdout);
    assert_eq!(
        refused.status.code(),
        Some(1),
        "{said}{}",
        text(&refused.stderr)
    );
    assert!(
        said.contains("packages/0/fileSha256") && said.contains("name:"),
        "{said}"
    );
}

#[test]
fn a_portable_bundle_needs_no_newer_glibc_passes_mcpb_and_the_registry_schema_and_serves_the_python_sdk()
 {
    let app = apps::path(App::Demo).expect("the demo app builds");
    let mut dirs = ship::zigbuild_path().expect("cargo-zigbuild and Zig install");
    dirs.push(apps::bin_dir().expect("fisk apps dir"));
    let path = ship::path_with(&dirs).expect("PATH");
    let scratch = tempfile::tempdir().expect("temp dir");
    let binary = scratch.path().join("tasks-mcp");
    let glibc = format!("{}.{}", GLIBC.0, GLIBC.1);
    let bundled = Command::new(env!("CARGO_BIN_EXE_fiskgen"))
        .arg("bundle")
        .arg(workspace_root().join("examples/demo/demo.yaml"))
        .args(["--glibc", &glibc, "--target-dir"])
        .arg(ship_dir("target-portable"))
        .arg("-o")
        .arg(&binary)
        .current_dir(scratch.path())
        .env("PATH", &path)
        .env("XDG_CACHE_HOME", shared_cache())
        .env_remove("FISKGEN_TARGET_DIR")
        .output()
        .expect("fiskgen runs");
    ok(&bundled, "fiskgen bundle --glibc");
    let highest = ship::highest_glibc(&binary).expect("objdump -T reads the binary");
    let highest = highest.expect("a glibc binary names glibc symbol versions");
    assert!(
        highest <= GLIBC,
        "the portable binary needs GLIBC_{}.{}, newer than {glibc}",
        highest.0,
        highest.1
    );

    let mcpb = ship::mcpb().expect("the mcpb CLI installs");
    let run_mcpb = |args: &[&std::ffi::OsStr]| {
        let output = Command::new(&mcpb)
            .args(args)
            .current_dir(scratch.path())
            .output()
            .expect("mcpb runs");
        ok(&output, &format!("mcpb {args:?}"));
        text(&output.stdout)
    };
    let bundle = scratch.path().join("tasks-mcp.mcpb");
    let unpacked = scratch.path().join("unpacked");
    run_mcpb(&["unpack".as_ref(), bundle.as_ref(), unpacked.as_ref()]);
    let manifest_path = unpacked.join("manifest.json");
    let validated = run_mcpb(&["validate".as_ref(), manifest_path.as_ref()]);
    assert!(validated.contains("valid"), "{validated}");
    // The official CLI packs the unpacked directory again (and validates it doing so).
    let repacked = scratch.path().join("repacked.mcpb");
    run_mcpb(&["pack".as_ref(), unpacked.as_ref(), repacked.as_ref()]);
    assert!(repacked.is_file());

    let manifest: Value =
        serde_json::from_str(&fs::read_to_string(&manifest_path).expect("manifest")).expect("JSON");
    assert_eq!(manifest["name"], "tasks-mcp");
    assert_eq!(manifest["version"], "1.0.0");
    assert_eq!(manifest["server"]["type"], "binary");
    assert_eq!(manifest["compatibility"]["platforms"][0], "linux");
    let tools = manifest["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 8, "{manifest}");
    assert!(
        tools
            .iter()
            .all(|tool| tool["description"].as_str().is_some_and(|d| !d.is_empty()))
    );
    assert_eq!(
        manifest["user_config"]["application_path"]["required"], true,
        "{manifest}"
    );
    assert_eq!(sha256(&unpacked.join("server/tasks-mcp")), sha256(&binary));
    server_json_passes_the_registry_schema(scratch.path(), &bundle);

    // Start the unpacked server the way a host does: the manifest's command and arguments,
    // with `${__dirname}` and the user's answer substituted.
    let config = &manifest["server"]["mcp_config"];
    let substitute = |value: &Value| {
        value
            .as_str()
            .expect("a string")
            .replace("${__dirname}", &unpacked.to_string_lossy())
            .replace("${user_config.application_path}", &app.to_string_lossy())
    };
    let mut command = vec![substitute(&config["command"])];
    command.extend(
        config["args"]
            .as_array()
            .expect("args")
            .iter()
            .map(substitute),
    );
    let python = clients::python().expect("the Python SDK client installs");
    let listed = Command::new(&python)
        .arg(clients::scripts_dir().join("list_tools.py"))
        .args(["--expect", "8", "--command"])
        .args(&command)
        .current_dir(scratch.path())
        .output()
        .expect("python runs");
    let listed = {
        ok(&listed, "listing the unpacked bundle's server");
        text(&listed.stdout)
    };
    assert!(listed.contains("\"task_list\""), "{listed}");
}

#[test]
fn every_generated_workflow_passes_actionlint() {
    let actionlint = ship::actionlint().expect("actionlint installs");
    let mut workflows = Vec::new();
    let expected = workspace_root().join("tests/expected");
    for crate_dir in fs::read_dir(&expected).expect("the golden crates") {
        let ci = crate_dir.expect("entry").path().join("ci");
        for file in fs::read_dir(&ci).into_iter().flatten() {
            let path = file.expect("entry").path();
            if path.extension().is_some_and(|ext| ext == "yml") {
                workflows.push(path);
            }
        }
    }
    workflows.sort();
    // Both workflows of every golden crate (the regeneration and the release).
    assert!(workflows.len() >= 10, "{workflows:?}");
    let linted = Command::new(&actionlint)
        .args(["-no-color", "-shellcheck=", "-pyflakes="])
        .args(&workflows)
        .output()
        .expect("actionlint runs");
    ok(&linted, "actionlint");
}
