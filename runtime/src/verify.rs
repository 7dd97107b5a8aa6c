//! Is the application on disk still the one this server was generated from?
//!
//! `<binary> verify` re-introspects the application and, on a mismatch, lists what changed
//! (commands, flags, args, their types and tags). At start the server runs the same comparison
//! in the background and logs a warning; `--strict-app` makes a mismatch fatal.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::exec;
use crate::spec::ApplicationSpec;

/// Longest an application may take to print its model.
pub(crate) const INTROSPECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Most bytes of model accepted (as fiskgen does).
const MAX_MODEL_BYTES: u64 = 16 * 1024 * 1024;

/// SHA-256 (hex) of the document's canonical JSON (sorted keys, no whitespace), the same
/// fingerprint fiskgen compiles in.
pub(crate) fn fingerprint(document: &Value) -> String {
    let canonical = serde_json::to_string(document).unwrap_or_default();
    Sha256::digest(canonical.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Runs `<app> --fisk-introspect` (no shell, scrubbed environment, own process group, bounded
/// in time and size) and parses the document it prints (the last line starting with `{`).
pub(crate) fn introspect(app: &Path, scrub: &[String], timeout: Duration) -> Result<Value, String> {
    let env = exec::child_env(std::env::vars_os(), scrub);
    let mut child = Command::new(app)
        .arg("--fisk-introspect")
        .env_clear()
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|error| format!("cannot run {}: {error}", app.display()))?;
    let group = Pid::from_raw(i32::try_from(child.id()).unwrap_or(0));
    let Some(stdout) = child.stdout.take() else {
        return Err("no stdout pipe".to_string());
    };
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let result = stdout
            .take(MAX_MODEL_BYTES + 1)
            .read_to_end(&mut bytes)
            .map(|_| bytes);
        let _ = sender.send(result);
    });
    let read = receiver.recv_timeout(timeout);
    let _ = killpg(group, Signal::SIGKILL);
    let status = child
        .wait()
        .map_err(|error| format!("waiting for {}: {error}", app.display()))?;
    let bytes = match read {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(error)) => return Err(format!("reading from {}: {error}", app.display())),
        Err(_) => {
            return Err(format!(
                "introspecting {} timed out after {}s",
                app.display(),
                timeout.as_secs()
            ));
        }
    };
    if bytes.len() as u64 > MAX_MODEL_BYTES {
        return Err(format!(
            "{} printed more than {MAX_MODEL_BYTES} bytes",
            app.display()
        ));
    }
    let text = String::from_utf8_lossy(&bytes);
    let line = text
        .lines()
        .rev()
        .find(|line| line.trim_start().starts_with('{'));
    match line.map(serde_json::from_str::<Value>) {
        Some(Ok(document)) if document.is_object() => Ok(document),
        _ if !status.success() => Err(format!("introspecting {} failed: {status}", app.display())),
        _ => Err(format!(
            "{} printed no fisk introspection document",
            app.display()
        )),
    }
}

/// What changed between two introspection documents, one line per change.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Drift {
    /// Commands, flags, args, types, tags: what changes the tools.
    pub(crate) structural: Vec<String>,
    /// Help texts only (natscli embeds the current time in three of them).
    pub(crate) help: Vec<String>,
}

/// Compares the document the server was built from with the application's current one.
pub(crate) fn diff(old: &Value, new: &Value) -> Drift {
    let mut drift = Drift::default();
    for field in ["name", "version"] {
        if old.get(field) != new.get(field) {
            drift.structural.push(format!(
                "application {field}: {} -> {}",
                show(old.get(field)),
                show(new.get(field))
            ));
        }
    }
    compare_items(
        "global flag",
        &items(old, "flags"),
        &items(new, "flags"),
        &mut drift.structural,
    );
    let (old_commands, new_commands) = (commands(old), commands(new));
    for (path, command) in &new_commands {
        match old_commands.get(path) {
            None => drift.structural.push(format!("command added: {path}")),
            Some(before) => compare_command(path, before, command, &mut drift),
        }
    }
    for path in old_commands
        .keys()
        .filter(|path| !new_commands.contains_key(*path))
    {
        drift.structural.push(format!("command removed: {path}"));
    }
    drift
}

fn compare_command(path: &str, old: &Value, new: &Value, drift: &mut Drift) {
    for field in ["tags", "hidden"] {
        if old.get(field) != new.get(field) {
            drift.structural.push(format!(
                "{path}: {field} {} -> {}",
                show(old.get(field)),
                show(new.get(field))
            ));
        }
    }
    if old.get("help") != new.get("help") || old.get("help_long") != new.get("help_long") {
        drift.help.push(format!("{path}: help changed"));
    }
    let mut item_changes = Vec::new();
    compare_items(
        "flag",
        &items(old, "flags"),
        &items(new, "flags"),
        &mut item_changes,
    );
    compare_items(
        "argument",
        &items(old, "args"),
        &items(new, "args"),
        &mut item_changes,
    );
    drift.structural.extend(
        item_changes
            .into_iter()
            .map(|change| format!("{path}: {change}")),
    );
    for kind in ["flags", "args"] {
        let (before, after) = (help_texts(old, kind), help_texts(new, kind));
        for (name, help) in &after {
            if before.get(name).is_some_and(|old_help| old_help != help) {
                drift.help.push(format!("{path}: help of {name} changed"));
            }
        }
    }
    let property = |doc: &Value| {
        doc.pointer("/schema/properties")
            .cloned()
            .unwrap_or(Value::Null)
    };
    let (old_schema, new_schema) = (property(old), property(new));
    if let (Some(old_props), Some(new_props)) = (old_schema.as_object(), new_schema.as_object()) {
        for (name, schema) in new_props {
            let Some(before) = old_props.get(name) else {
                continue;
            };
            let (before, after) = (without_description(before), without_description(schema));
            if before != after {
                drift.structural.push(format!(
                    "{path}: type of {name}: {} -> {}",
                    show(Some(&before)),
                    show(Some(&after))
                ));
            }
        }
    }
}

/// A property schema without its `description` (the help text, compared separately).
fn without_description(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Some(object) = schema.as_object_mut() {
        object.remove("description");
    }
    schema
}

/// The help text of each flag or arg, by name.
fn help_texts(node: &Value, key: &str) -> BTreeMap<String, Value> {
    let list = node
        .get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    list.into_iter()
        .filter_map(|item| {
            Some((
                item.get("name")?.as_str()?.to_string(),
                item.get("help")?.clone(),
            ))
        })
        .collect()
}

/// Flags or args by name, without their help text (help changes are reported per command).
fn items(node: &Value, key: &str) -> BTreeMap<String, Value> {
    let list = node
        .get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    list.into_iter()
        .filter_map(|mut item| {
            let name = item.get("name")?.as_str()?.to_string();
            item.as_object_mut().map(|object| object.remove("help"));
            Some((name, item))
        })
        .collect()
}

fn compare_items(
    kind: &str,
    old: &BTreeMap<String, Value>,
    new: &BTreeMap<String, Value>,
    changes: &mut Vec<String>,
) {
    let dashes = if kind.contains("flag") { "--" } else { "" };
    for (name, item) in new {
        match old.get(name) {
            None => changes.push(format!("{kind} added: {dashes}{name}")),
            Some(before) if before != item => {
                for (key, was, is) in changed_keys(before, item) {
                    changes.push(format!(
                        "{kind} changed: {dashes}{name}: {key} {} -> {}",
                        show(was),
                        show(is)
                    ));
                }
            }
            Some(_) => {}
        }
    }
    for name in old.keys().filter(|name| !new.contains_key(*name)) {
        changes.push(format!("{kind} removed: {dashes}{name}"));
    }
}

/// One key of two objects whose values differ: the key, the old value, the new value.
type ChangedKey<'a> = (&'a str, Option<&'a Value>, Option<&'a Value>);

/// The keys of two objects whose values differ, with both values.
fn changed_keys<'a>(old: &'a Value, new: &'a Value) -> Vec<ChangedKey<'a>> {
    let keys = |value: &'a Value| {
        value
            .as_object()
            .into_iter()
            .flat_map(|object| object.keys())
    };
    let mut names: Vec<&str> = keys(old).chain(keys(new)).map(String::as_str).collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .map(|key| (key, old.get(key), new.get(key)))
        .filter(|(_, was, is)| was != is)
        .collect()
}

/// Every command by its space-joined path, groups and hidden ones included.
fn commands(document: &Value) -> BTreeMap<String, &Value> {
    fn walk<'a>(node: &'a Value, prefix: &str, out: &mut BTreeMap<String, &'a Value>) {
        for command in node
            .get("commands")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(name) = command.get("name").and_then(Value::as_str) else {
                continue;
            };
            let path = if prefix.is_empty() {
                name.to_string()
            } else {
                format!("{prefix} {name}")
            };
            walk(command, &path, out);
            out.insert(path, command);
        }
    }
    let mut out = BTreeMap::new();
    walk(document, "", &mut out);
    out
}

fn show(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "(none)".to_string(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

/// The outcome of comparing the application on disk with the one the server was built from.
pub(crate) enum Check {
    /// The same document.
    Same,
    /// Only help texts changed.
    HelpOnly(Drift),
    /// Commands, flags, args, types or tags changed.
    Changed(Drift),
}

/// Re-introspects `program` and compares it with the model compiled into the server.
pub(crate) fn check(
    application: &ApplicationSpec,
    program: &Path,
    scrub: &[String],
) -> Result<Check, String> {
    let current = introspect(program, scrub, INTROSPECT_TIMEOUT)?;
    if fingerprint(&current) == application.fingerprint {
        return Ok(Check::Same);
    }
    let built: Value = serde_json::from_str(application.model)
        .map_err(|error| format!("the model compiled into this server does not parse: {error}"))?;
    let drift = diff(&built, &current);
    Ok(if drift.structural.is_empty() {
        Check::HelpOnly(drift)
    } else {
        Check::Changed(drift)
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn diff_names_commands_flags_args_types_and_tags() {
        let old = json!({"name": "tasks", "version": "1.0.0", "commands": [
            {"name": "task", "commands": [
                {"name": "add", "tags": ["impact:rw"], "flags": [{"name": "priority", "help": "p", "completions": ["low"]}],
                 "schema": {"properties": {"priority": {"type": "string", "enum": ["low"]}}}},
                {"name": "gone", "help": "x"}
            ]}
        ]});
        let new = json!({"name": "tasks", "version": "1.1.0", "commands": [
            {"name": "task", "commands": [
                {"name": "add", "tags": ["impact:rw", "ai:confirm"], "flags": [{"name": "priority", "help": "p", "completions": ["low", "urgent"]}, {"name": "due"}],
                 "args": [{"name": "title"}],
                 "schema": {"properties": {"priority": {"type": "string", "enum": ["low", "urgent"]}}}},
                {"name": "archive", "help": "y"}
            ]}
        ]});
        let changes = diff(&old, &new).structural;
        for expected in [
            "application version: 1.0.0 -> 1.1.0",
            "command added: task archive",
            "command removed: task gone",
            "task add: tags [\"impact:rw\"] -> [\"impact:rw\",\"ai:confirm\"]",
            "task add: flag added: --due",
            "task add: argument added: title",
        ] {
            assert!(
                changes.iter().any(|c| c == expected),
                "missing {expected:?} in {changes:#?}"
            );
        }
        assert!(
            changes
                .iter()
                .any(|c| c.starts_with("task add: flag changed: --priority")),
            "{changes:#?}"
        );
        assert!(
            changes
                .iter()
                .any(|c| c.starts_with("task add: type of priority")),
            "{changes:#?}"
        );
        assert_eq!(diff(&old, &old), Drift::default());
        let mut reworded = new.clone();
        reworded["commands"][0]["commands"][0]["flags"][0]["help"] = json!("priority, reworded");
        let drift = diff(&new, &reworded);
        assert!(drift.structural.is_empty(), "{drift:?}");
        assert_eq!(drift.help, ["task add: help of priority changed"]);
    }

    #[test]
    fn fingerprint_ignores_key_order_and_whitespace() {
        let a: Value =
            serde_json::from_str(r#"{"b": 1, "a": {"y": [1, 2], "x": "s"}}"#).expect("json");
        let b: Value =
            serde_json::from_str("{\"a\":{\"x\":\"s\",\"y\":[1,2]},\"b\":1}").expect("json");
        assert_eq!(fingerprint(&a), fingerprint(&b));
        assert_ne!(fingerprint(&a), fingerprint(&json!({"b": 2})));
    }
}
