//! One drift verdict: `fiskgen check` and the generated server's `verify` judge the same
//! change the same way, with the same exit status (the demo golden server, `tasks-mcp`, against
//! the document it was built from with one change applied).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use fiskgen_tests::apps::{self, App, workspace_root};
use fiskgen_tests::clients;
use serde_json::{Value, json};

mod support;
use support::text;

/// `fiskgen check` of the demo config against the golden's model, with `app` as the current
/// application.
fn check(app: &Path) -> Output {
    let root = workspace_root();
    Command::new(env!("CARGO_BIN_EXE_fiskgen"))
        .arg("check")
        .arg(root.join("examples/demo/demo.yaml"))
        .arg("--model")
        .arg(root.join("tests/expected/demo/model.json"))
        .arg("--app")
        .arg(app)
        .env_remove("FISKGEN_LOG")
        .output()
        .expect("fiskgen runs")
}

/// `tasks-mcp verify` with `app` as the application.
fn verify(app: &Path) -> Output {
    let server = clients::demo_server().expect("the demo server is built");
    Command::new(server)
        .arg("--application-path")
        .arg(app)
        .arg("verify")
        .output()
        .expect("the server runs")
}

/// An application that prints `document` for `--fisk-introspect` and is the demo otherwise.
fn application(dir: &Path, document: &Value) -> PathBuf {
    let demo = apps::path(App::Demo).expect("demo builds");
    let model = dir.join("current.json");
    std::fs::write(&model, document.to_string()).expect("write the document");
    let path = dir.join("tasks");
    let body = format!(
        "#!/bin/sh\nif [ \"$1\" = --fisk-introspect ]; then cat '{}'; exit 0; fi\nexec '{}' \"$@\"",
        model.display(),
        demo.display()
    );
    // A child shell writes it, so this process never holds a writable descriptor of a file
    // another test thread may execute (ETXTBSY).
    let status = Command::new("/bin/sh")
        .args(["-c", "printf '%s\\n' \"$2\" > \"$1\" && chmod 755 \"$1\""])
        .arg("sh")
        .arg(&path)
        .arg(body)
        .status()
        .expect("run /bin/sh");
    assert!(status.success());
    path
}

/// The demo's document as the golden server was built from it, with one command edited.
fn edited(path: &[&str], edit: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Value {
    let model = workspace_root().join("tests/expected/demo/model.json");
    let mut document: Value =
        serde_json::from_str(&std::fs::read_to_string(model).expect("read")).expect("json");
    let mut node = &mut document;
    for name in path {
        node = node["commands"]
            .as_array_mut()
            .expect("commands")
            .iter_mut()
            .find(|command| command["name"] == *name)
            .expect("command on path");
    }
    edit(node.as_object_mut().expect("object"));
    document
}

/// Runs `fiskgen check` and `<binary> verify` against `app`, requires both to exit with `code`,
/// and returns what each printed.
fn check_and_verify_exit(app: &Path, code: i32) -> (String, String) {
    let check = check(app);
    let verify = verify(app);
    let (check_out, verify_out) = (text(&check.stdout), text(&verify.stdout));
    assert_eq!(
        check.status.code(),
        Some(code),
        "{check_out}{}",
        text(&check.stderr)
    );
    assert_eq!(
        verify.status.code(),
        Some(code),
        "{verify_out}{}",
        text(&verify.stderr)
    );
    (check_out, verify_out)
}

#[test]
fn check_and_verify_agree_when_only_an_unserved_command_changes() {
    let dir = tempfile::tempdir().expect("tempdir");
    // `store purge` is tagged ai:deny: the server does not serve it.
    let document = edited(&["store", "purge"], |purge| {
        purge.insert(
            "flags".into(),
            json!([{"name": "force", "help": "no questions", "boolean": true}]),
        );
    });
    let app = application(dir.path(), &document);

    let (check_out, verify_out) = check_and_verify_exit(&app, 0);
    for report in [&check_out, &verify_out] {
        assert!(
            report.contains("Not drift:\n  store purge (not served): changed\n"),
            "{report}"
        );
    }
    assert!(
        check_out.contains("the application changed, but nothing the server serves did"),
        "{check_out}"
    );
    assert!(
        verify_out.contains("nothing this server serves changed since the tasks 1.0.0"),
        "{verify_out}"
    );
}

#[test]
fn check_and_verify_agree_when_a_served_command_changes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let document = edited(&["task", "list"], |list| {
        list["tags"]
            .as_array_mut()
            .expect("tags")
            .push(json!("ai:confirm"));
    });
    let app = application(dir.path(), &document);

    let (check_out, verify_out) = check_and_verify_exit(&app, 1);
    for report in [&check_out, &verify_out] {
        assert!(report.contains("~ task_list\n"), "{report}");
        assert!(!report.contains("~ task_add"), "{report}");
    }
    // fiskgen check, which has both documents, says what changed in the tool.
    assert!(
        check_out.contains("confirmation: none -> ai:confirm"),
        "{check_out}"
    );
}

#[test]
fn check_and_verify_agree_that_reworded_help_is_not_drift() {
    let dir = tempfile::tempdir().expect("tempdir");
    // natscli embeds the current time in help texts: a reworded help is reported, not drift.
    let document = edited(&["task", "add"], |add| {
        add.insert("help".into(), json!("Add a task (reworded)"));
    });
    let app = application(dir.path(), &document);

    let (check_out, verify_out) = check_and_verify_exit(&app, 0);
    for report in [&check_out, &verify_out] {
        assert!(
            report.contains("  task_add: only help texts changed\n"),
            "{report}"
        );
    }
}
