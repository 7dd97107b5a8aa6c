//! `fiskgen build -o PATH` where the binary cannot be written: the build stops before anything
//! is compiled, with one line that names the path and the reason once.

use std::path::Path;
use std::process::{Command, Output};

use fiskgen_tests::apps::{self, App, workspace_root};

/// `fiskgen build examples/demo/demo.yaml -o OUTPUT` with a scratch cache and target directory,
/// run through `wrapper` (a program and its leading arguments) when one is given.
fn build_to(output: &Path, scratch: &Path, wrapper: &[&str]) -> Output {
    let demo = apps::path(App::Demo).expect("demo builds");
    let target = scratch.join("target");
    let fiskgen = env!("CARGO_BIN_EXE_fiskgen");
    let (program, leading) = match wrapper.split_first() {
        Some((program, leading)) => (*program, leading),
        None => (fiskgen, &[][..]),
    };
    let mut command = Command::new(program);
    command.args(leading);
    if !wrapper.is_empty() {
        command.arg(fiskgen);
    }
    command
        .args(["build", "examples/demo/demo.yaml", "--app"])
        .arg(demo)
        .arg("-o")
        .arg(output)
        .arg("--target-dir")
        .arg(&target)
        .current_dir(workspace_root())
        .env("XDG_CACHE_HOME", scratch.join("cache"))
        .env_remove("FISKGEN_TARGET_DIR")
        .output()
        .expect("fiskgen runs")
}

/// Checks a failed build: exit 1, one line on stderr naming `path` and saying `reason` once,
/// and nothing compiled.
fn assert_one_line_error(result: &Output, path: &Path, reason: &str, scratch: &Path) {
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    assert!(
        lines[0].contains(&path.display().to_string()),
        "names {path:?}: {stderr}"
    );
    assert_eq!(
        lines[0].matches(reason).count(),
        1,
        "says {reason:?} once: {stderr}"
    );
    assert!(
        !scratch.join("target").exists(),
        "nothing was compiled before the output was found unwritable"
    );
}

#[test]
fn an_output_under_a_read_only_directory_fails_before_compiling_naming_it() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let read_only = scratch.path().join("read-only");
    std::fs::create_dir(&read_only).expect("mkdir");
    let output = read_only.join("a").join("b").join("tasks-mcp");
    // A read-only file system in a private mount namespace: permission bits alone do not stop
    // root, and CI runs as root.
    let mount = "mount -t tmpfs -o ro fiskgen-read-only \"$0\" && exec \"$@\"";
    let read_only_arg = read_only.to_str().expect("UTF-8 path");
    let wrapper = [
        "unshare",
        "--map-root-user",
        "--mount",
        "sh",
        "-c",
        mount,
        read_only_arg,
    ];
    let result = build_to(&output, scratch.path(), &wrapper);
    assert_one_line_error(
        &result,
        &read_only.join("a").join("b"),
        "Read-only file system",
        scratch.path(),
    );
    assert!(
        String::from_utf8_lossy(&result.stderr).contains("cannot create the output directory"),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
}

#[test]
fn an_output_behind_a_file_fails_before_compiling_naming_it() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let file = scratch.path().join("not-a-directory");
    std::fs::write(&file, "a file in the way").expect("write");
    let output = file.join("tasks-mcp");
    let result = build_to(&output, scratch.path(), &[]);
    assert_one_line_error(&result, &file, "is not a directory", scratch.path());
}
