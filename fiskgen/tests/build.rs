//! `fiskgen build` end to end: the demo application becomes a release binary through fiskgen's
//! real cargo invocation, with the embedded runtime, in a target and cache directory of its own
//! (`target/fiskgen-e2e`, kept between runs so only the first one is slow).
//!
//! The first (cold) run builds the runtime and its dependencies in release mode, about three
//! minutes on two cores; later runs take about ten seconds. One test does every build, in order,
//! so the builds share the warm target directory instead of waiting on each other's lock.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use fiskgen_tests::apps::{self, App, workspace_root};
use fiskgen_tests::clients;
use serde_json::Value;

mod support;
use support::text;

/// `PATH` with the built fisk applications first.
fn path_with_apps() -> std::ffi::OsString {
    let mut path = vec![apps::bin_dir().expect("fisk apps cache dir")];
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(path).expect("PATH")
}

fn fiskgen(args: &[&str], cache: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fiskgen"))
        .args(args)
        .current_dir(workspace_root())
        .env("PATH", path_with_apps())
        .env("XDG_CACHE_HOME", cache)
        .env_remove("FISKGEN_TARGET_DIR")
        .output()
        .expect("fiskgen runs")
}

fn tool_names(json: &str) -> Vec<String> {
    let value: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    let tools = value.get("tools").unwrap_or(&value);
    tools
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn build_compiles_working_servers_and_the_ci_script_regenerates_on_drift() {
    build_compiles_a_working_server_and_rebuilds_only_the_generated_crate();
    the_ci_script_rebuilds_only_when_the_application_changed();
    the_readme_synopsis_builds_and_serves_nats_over_http_and_stdio();
}

fn build_compiles_a_working_server_and_rebuilds_only_the_generated_crate() {
    apps::path(App::Demo).expect("demo app builds");
    let scratch = tempfile::tempdir().expect("temp dir");
    // Directories that do not exist yet are created (`cargo xtask demo` relies on it).
    let binary = scratch
        .path()
        .join("a")
        .join("b")
        .join("c")
        .join("tasks-mcp");
    let e2e = support::e2e();
    let cache = e2e.join("cache");
    let target = e2e.join("target");
    let target = target.to_str().expect("UTF-8 path");
    let args = [
        "build",
        "examples/demo/demo.yaml",
        "-o",
        binary.to_str().expect("UTF-8 path"),
        "--target-dir",
        target,
    ];

    let first = fiskgen(&args, &cache);
    assert!(first.status.success(), "{}", text(&first.stderr));
    let stdout = text(&first.stdout);
    assert!(
        stdout.contains("claude mcp add --transport http tasks"),
        "{stdout}"
    );

    let listed = Command::new(&binary)
        .args(["tools", "--json"])
        .output()
        .expect("the server runs");
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let info = fiskgen(&["info", "--json", "examples/demo/demo.yaml"], &cache);
    assert_eq!(
        tool_names(&text(&listed.stdout)),
        tool_names(&text(&info.stdout))
    );

    let again = fiskgen(&args, &cache);
    assert!(again.status.success(), "{}", text(&again.stderr));
    let log = text(&again.stderr);
    assert!(
        !log.contains("Compiling fiskgen-runtime"),
        "a second build reuses the runtime: {log}"
    );
}

/// The generated crate's `ci/regenerate.sh`, copied next to the config as its README says, run
/// with its filled-in defaults (config, binary, smoke tool) against the demo: nothing to do for
/// the unchanged app; after a simulated upgrade (the demo's next release installed over it) it
/// regenerates the model, rebuilds the server and smoke-tests it over stdio.
fn the_ci_script_rebuilds_only_when_the_application_changed() {
    let v1 = apps::path(App::Demo).expect("demo builds");
    let v2 = apps::path(App::DemoV2).expect("demo v2 builds");
    let e2e = support::e2e();
    let project = tempfile::tempdir().expect("temp dir");
    let dir = project.path();
    std::fs::create_dir(dir.join("bin")).expect("bin dir");
    install(&v1, &dir.join("bin/tasks"));
    std::fs::write(
        dir.join("tasks.yaml"),
        "identity: tasks\napplication_path: ./bin/tasks\nexpose: {agent: {mcp: {}}}\n",
    )
    .expect("config");
    let introspected = fiskgen_in(dir, &["introspect", "tasks.yaml", "-o", "model.json"], &e2e);
    assert!(
        introspected.status.success(),
        "{}",
        text(&introspected.stderr)
    );
    let generated = fiskgen_in(dir, &["generate", "tasks.yaml", "-o", "crate"], &e2e);
    assert!(generated.status.success(), "{}", text(&generated.stderr));
    std::fs::copy(
        dir.join("crate/ci/regenerate.sh"),
        dir.join("regenerate.sh"),
    )
    .expect("the generated crate has ci/regenerate.sh");

    let unchanged = regenerate(dir, &e2e);
    assert!(
        unchanged.status.success(),
        "{}{}",
        text(&unchanged.stdout),
        text(&unchanged.stderr)
    );
    assert!(text(&unchanged.stdout).contains("nothing the server serves changed"));
    assert!(!dir.join("tasks-mcp").exists(), "nothing was built");

    install(&v2, &dir.join("bin/tasks"));
    let upgraded = regenerate(dir, &e2e);
    let log = format!("{}{}", text(&upgraded.stdout), text(&upgraded.stderr));
    assert!(upgraded.status.success(), "{log}");
    assert!(log.contains("+ task_archive (new tool)"), "{log}");
    assert!(
        log.contains("rebuilt and smoke-tested: ./tasks-mcp"),
        "{log}"
    );
    assert!(
        log.contains("tools/call task_list over stdio"),
        "the generated default smoke tool: {log}"
    );
    let model = std::fs::read_to_string(dir.join("model.json")).expect("model");
    assert!(
        model.contains("\"version\": \"1.1.0\""),
        "the model was regenerated"
    );
    let listed = Command::new(dir.join("tasks-mcp"))
        .args(["tools", "--json"])
        .output()
        .expect("runs");
    assert!(
        text(&listed.stdout).contains("task_archive"),
        "the new binary serves the new command"
    );

    let again = regenerate(dir, &e2e);
    assert!(again.status.success());
    assert!(
        text(&again.stdout).contains("nothing the server serves changed"),
        "{}",
        text(&again.stdout)
    );
}

/// Copies an application binary into place (through a temporary name, as an installer would).
fn install(from: &Path, to: &Path) {
    let staged = to.with_extension("new");
    std::fs::copy(from, &staged).expect("copy app");
    std::fs::rename(&staged, to).expect("install app");
}

/// Runs fiskgen in `dir` with the shared e2e cache and target directory.
fn fiskgen_in(dir: &Path, args: &[&str], e2e: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fiskgen"))
        .args(args)
        .current_dir(dir)
        .env("PATH", path_with_apps())
        .env("XDG_CACHE_HOME", e2e.join("cache"))
        .env("FISKGEN_TARGET_DIR", e2e.join("target"))
        .output()
        .expect("fiskgen runs")
}

/// Runs `sh regenerate.sh` (no arguments, no `SMOKE_TOOL`: the defaults it was generated with)
/// in `dir`.
fn regenerate(dir: &Path, e2e: &Path) -> Output {
    Command::new("sh")
        .arg("regenerate.sh")
        .current_dir(dir)
        .env("FISKGEN", env!("CARGO_BIN_EXE_fiskgen"))
        .env_remove("SMOKE_TOOL")
        .env("XDG_CACHE_HOME", e2e.join("cache"))
        .env("FISKGEN_TARGET_DIR", e2e.join("target"))
        .output()
        .expect("sh runs")
}

/// The README's synopsis on the real NATS CLI: `fiskgen build nats.yaml`, then
/// `./nats-mcp --port N` and `./nats-mcp --stdio`, each listed by the official Python SDK
/// client. The build shares the warm target directory, so only the generated crate compiles.
fn the_readme_synopsis_builds_and_serves_nats_over_http_and_stdio() {
    apps::path(App::Nats).expect("nats builds");
    let e2e = support::e2e();
    let scratch = tempfile::tempdir().expect("temp dir");
    let dir = scratch.path();
    std::fs::copy(
        workspace_root().join("examples/nats/nats.yaml"),
        dir.join("nats.yaml"),
    )
    .expect("copy the config");
    let info = fiskgen(
        &["info", "--json", "examples/nats/nats.yaml"],
        &e2e.join("cache"),
    );
    assert!(info.status.success(), "{}", text(&info.stderr));
    let served = tool_names(&text(&info.stdout));
    assert!(
        served.len() > 10,
        "nats.yaml serves the stream tools: {served:?}"
    );

    // `fiskgen check nats.yaml` against the model saved next to the config: nothing served
    // changed (natscli prints the time in some unserved commands' help, so those may differ).
    let saved = fiskgen_in(dir, &["introspect", "nats.yaml", "-o", "model.json"], &e2e);
    assert!(saved.status.success(), "{}", text(&saved.stderr));
    let checked = fiskgen_in(dir, &["check", "nats.yaml"], &e2e);
    assert_eq!(
        checked.status.code(),
        Some(0),
        "{}{}",
        text(&checked.stdout),
        text(&checked.stderr)
    );
    let report = text(&checked.stdout);
    assert!(
        report.contains("model.json: up to date")
            || report
                .contains("model.json: the application changed, but nothing the server serves did"),
        "{report}"
    );

    let built = fiskgen_in(dir, &["build", "nats.yaml"], &e2e);
    assert!(built.status.success(), "{}", text(&built.stderr));
    // The crate's lockfile names every package it needs, itself included, so cargo resolves
    // nothing anew: no registry access (offline builds work, regenerations skip a second).
    let log = text(&built.stderr);
    assert!(!log.contains("Updating crates.io index"), "{log}");
    let server = dir.join("nats-mcp");
    assert!(
        server.is_file(),
        "fiskgen build nats.yaml writes ./nats-mcp"
    );
    let expect = served.len().to_string();

    let python = clients::python().expect("the Python SDK client installs");
    let script = clients::scripts_dir().join("list_tools.py");
    let port = free_port();
    let mut http = Command::new(&server)
        .args(["--port", &port.to_string()])
        .current_dir(dir)
        .env("PATH", path_with_apps())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("./nats-mcp --port starts");
    wait_listening(port);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let listed = Command::new(&python)
        .arg(&script)
        .args(["--url", &url, "--expect", &expect])
        .output()
        .expect("python runs");
    let _ = http.kill();
    let _ = http.wait();
    assert!(
        listed.status.success(),
        "over HTTP: {}{}",
        text(&listed.stdout),
        text(&listed.stderr)
    );

    let listed = Command::new(&python)
        .arg(&script)
        .args(["--expect", &expect, "--command"])
        .arg(&server)
        .arg("--stdio")
        .current_dir(dir)
        .env("PATH", path_with_apps())
        .output()
        .expect("python runs");
    assert!(
        listed.status.success(),
        "over stdio: {}{}",
        text(&listed.stdout),
        text(&listed.stderr)
    );
    for name in &served {
        assert!(
            text(&listed.stdout).contains(&format!("\"{name}\"")),
            "{name} is listed over stdio: {}",
            text(&listed.stdout)
        );
    }
}

/// A port nobody listens on right now.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local address").port()
}

/// Waits (at most 30 s) until something accepts connections on `port`.
fn wait_listening(port: u16) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "nothing listened on port {port} within 30 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
