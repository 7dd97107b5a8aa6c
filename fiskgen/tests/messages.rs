//! The small messages a new user meets first, on fisk's own curl example: each says what is
//! wrong once, and what to do from where the user is.

use fiskgen_tests::apps::{self, App};

mod support;
use support::{fiskgen, text};

fn curl() -> String {
    apps::path(App::FiskCurl)
        .expect("fisk's curl example builds")
        .display()
        .to_string()
}

#[test]
fn a_missing_config_is_reported_with_the_os_error_once() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let shown = fiskgen(scratch.path(), &["info", "nope.yaml"]);
    let err = text(&shown.stderr);
    assert_eq!(shown.status.code(), Some(1), "{err}");
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
    assert!(err.contains("nope.yaml"), "{err}");
}

#[test]
fn a_mistyped_global_flag_lists_the_flags_it_could_be_instead_of_sending_the_user_to_info() {
    let scratch = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        scratch.path().join("flags.yaml"),
        format!(
            "identity: ex\napplication_path: {}\nglobal_flags: [timeuot]\n\
             expose: {{agent: {{mcp: {{}}}}}}\n",
            curl()
        ),
    )
    .expect("config");
    let shown = fiskgen(scratch.path(), &["info", "flags.yaml"]);
    let err = text(&shown.stderr);
    assert_eq!(shown.status.code(), Some(1), "{err}");
    assert!(err.contains("did you mean \"timeout\"?"), "{err}");
    assert!(
        err.contains("its exposable global flags: timeout, headers"),
        "{err}"
    );
    assert!(!err.contains("run `fiskgen info`"), "{err}");
}

#[test]
fn an_application_named_like_a_script_serves_under_its_name_without_the_extension() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let script = scratch.path().join("hang.sh");
    std::fs::write(&script, format!("#!/bin/sh\nexec {} \"$@\"\n", curl())).expect("script");
    let mut permissions = std::fs::metadata(&script).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&script, permissions).expect("chmod");
    std::fs::write(
        scratch.path().join("hang.yaml"),
        "application_path: ./hang.sh\nexpose: {agent: {mcp: {}}}\n",
    )
    .expect("config");
    let shown = fiskgen(scratch.path(), &["info", "hang.yaml"]);
    assert!(shown.status.success(), "{}", text(&shown.stderr));
    assert!(
        text(&shown.stdout).starts_with("MCP server \"hang\":"),
        "{}",
        text(&shown.stdout)
    );
}

#[test]
fn check_without_a_saved_model_says_how_to_save_one() {
    let scratch = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        scratch.path().join("app.yaml"),
        format!(
            "identity: ex\napplication_path: {}\nexpose: {{agent: {{mcp: {{}}}}}}\n",
            curl()
        ),
    )
    .expect("config");
    let checked = fiskgen(scratch.path(), &["check", "app.yaml"]);
    let err = text(&checked.stderr);
    assert_eq!(checked.status.code(), Some(2), "{err}");
    assert!(
        err.contains("fiskgen introspect app.yaml -o model.json"),
        "{err}"
    );
}

#[test]
fn check_reports_a_removed_allowlisted_global_flag_as_drift_like_verify() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let dir = scratch.path();
    std::fs::write(
        dir.join("app.yaml"),
        format!(
            "identity: ex\napplication_path: {}\nglobal_flags: [timeout]\n\
             expose: {{agent: {{mcp: {{}}}}}}\n",
            curl()
        ),
    )
    .expect("config");
    let saved = fiskgen(dir, &["introspect", "app.yaml", "-o", "model.json"]);
    assert!(saved.status.success(), "{}", text(&saved.stderr));
    // The application's next release, without the allowlisted --timeout.
    let mut next: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("model.json")).expect("model"))
            .expect("JSON");
    next["flags"]
        .as_array_mut()
        .expect("flags")
        .retain(|flag| flag["name"] != "timeout");
    std::fs::write(dir.join("next.json"), next.to_string()).expect("next");
    let checked = fiskgen(dir, &["check", "app.yaml", "--current", "next.json"]);
    let out = text(&checked.stdout);
    assert_eq!(
        checked.status.code(),
        Some(1),
        "drift, not an error: {out}{}",
        text(&checked.stderr)
    );
    assert!(
        out.contains("the current application cannot be served with app.yaml"),
        "{out}"
    );
    assert!(out.contains("\"timeout\" matches no global flag"), "{out}");
    assert!(out.contains("Regenerate: "), "{out}");
}
