//! Where the application is found and run from: fiskgen introspects it in the config file's
//! directory (whichever directory fiskgen runs in), and a relative `application_path` is
//! compiled into the server resolved against that directory, so the server runs it from any
//! directory a client starts it in. On fisk's own curl example, in the warm target directory of
//! the other end-to-end build tests (`target/fiskgen-e2e`).

use std::path::Path;
use std::process::{Command, Output};

use fiskgen_tests::apps::{self, App};
use serde_json::Value;

mod support;
use support::{e2e, fiskgen_command, text};

/// `fiskgen ARGS` in `cwd`, with the end-to-end tests' warm cache and target directory.
fn fiskgen(cwd: &Path, args: &[&str]) -> Output {
    fiskgen_command(cwd)
        .args(args)
        .env("XDG_CACHE_HOME", e2e().join("cache"))
        .env("FISKGEN_TARGET_DIR", e2e().join("target"))
        .output()
        .expect("fiskgen runs")
}

/// `project/bin/fisk-curl` and `project/conf/`, in a fresh directory.
fn project() -> tempfile::TempDir {
    let scratch = tempfile::tempdir().expect("temp dir");
    let dir = scratch.path();
    std::fs::create_dir_all(dir.join("project/bin")).expect("bin");
    std::fs::create_dir_all(dir.join("project/conf")).expect("conf");
    std::fs::create_dir_all(dir.join("elsewhere")).expect("elsewhere");
    std::fs::copy(
        apps::path(App::FiskCurl).expect("fisk's curl example builds"),
        dir.join("project/bin/fisk-curl"),
    )
    .expect("copy the app");
    scratch
}

#[test]
fn the_application_is_introspected_in_the_config_files_directory() {
    let scratch = project();
    let dir = scratch.path();
    // An application that finds what it serves relative to its working directory, as `abt`
    // finds its task file: it works only when run in `project/conf`.
    let wrapper = dir.join("project/conf/app.sh");
    std::fs::write(&wrapper, "#!/bin/sh\nexec ../bin/fisk-curl \"$@\"\n").expect("script");
    let mut permissions = std::fs::metadata(&wrapper).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&wrapper, permissions).expect("chmod");
    std::fs::write(
        dir.join("project/conf/app.yaml"),
        "identity: wrapped\napplication_path: ./app.sh\nexpose: {agent: {mcp: {}}}\n",
    )
    .expect("config");
    let info = fiskgen(
        &dir.join("elsewhere"),
        &["info", "../project/conf/app.yaml"],
    );
    assert!(info.status.success(), "{}", text(&info.stderr));
    assert!(
        text(&info.stdout).contains("get_url"),
        "{}",
        text(&info.stdout)
    );
}

#[test]
fn a_relative_application_path_is_compiled_in_resolved_so_the_server_runs_from_anywhere() {
    let scratch = project();
    let dir = scratch.path();
    std::fs::write(
        dir.join("project/conf/rel.yaml"),
        "identity: relpath\napplication_path: ../bin/fisk-curl\nexpose: {agent: {mcp: {}}}\n",
    )
    .expect("config");
    let built = fiskgen(
        &dir.join("project/conf"),
        &["build", "rel.yaml", "-o", "../out/"],
    );
    assert!(built.status.success(), "{}", text(&built.stderr));
    let server = dir.join("project/out/relpath-mcp");
    let app = dir
        .join("project/bin/fisk-curl")
        .canonicalize()
        .expect("the app");

    let version = Command::new(&server)
        .args(["version", "--json"])
        .current_dir(dir.join("elsewhere"))
        .output()
        .expect("the server runs");
    let version: Value = serde_json::from_slice(&version.stdout).expect("JSON");
    let compiled = version["application"]["path"].as_str().expect("a path");
    assert!(Path::new(compiled).is_absolute(), "{compiled}");
    assert_eq!(
        Path::new(compiled).canonicalize().expect("exists"),
        app,
        "the path the config names, resolved against its directory"
    );
    // `verify` runs the application: from a directory where `../bin/fisk-curl` is nothing.
    let verified = Command::new(&server)
        .arg("verify")
        .current_dir(dir.join("elsewhere"))
        .output()
        .expect("the server runs");
    assert!(
        verified.status.success(),
        "{}{}",
        text(&verified.stdout),
        text(&verified.stderr)
    );
}

#[test]
fn the_application_runs_with_llmformat_and_fisk_ai_set_as_fisk_mcp_runs_it() {
    let scratch = project();
    let dir = scratch.path();
    let wrapper = dir.join("project/conf/env.sh");
    std::fs::write(
        &wrapper,
        "#!/bin/sh\necho \"LLMFORMAT=$LLMFORMAT FISK_AI=$FISK_AI\" > seen.txt\n\
         exec ../bin/fisk-curl \"$@\"\n",
    )
    .expect("script");
    let mut permissions = std::fs::metadata(&wrapper).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&wrapper, permissions).expect("chmod");
    std::fs::write(
        dir.join("project/conf/env.yaml"),
        "identity: env\napplication_path: ./env.sh\nexpose: {agent: {mcp: {}}}\n",
    )
    .expect("config");
    let info = Command::new(env!("CARGO_BIN_EXE_fiskgen"))
        .args(["info", "env.yaml"])
        .current_dir(dir.join("project/conf"))
        .env("FISK_AI", "0")
        .output()
        .expect("fiskgen runs");
    assert!(info.status.success(), "{}", text(&info.stderr));
    let seen = std::fs::read_to_string(dir.join("project/conf/seen.txt")).expect("seen");
    assert_eq!(seen.trim(), "LLMFORMAT=1 FISK_AI=1");
}
