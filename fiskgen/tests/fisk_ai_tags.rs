//! Fisk AI's newer tag rules on fisk's curl example, its introspection tagged as a newer release
//! of it could be: contradictory behaviour tags are served as the more dangerous reading, with
//! a warning, and an unknown `ai:` tag is named.

use fiskgen_tests::apps::{self, App};
use serde_json::Value;

mod support;
use support::{fiskgen, text};

/// Sets the tags of the top-level command `group`'s subcommand `name` (or of `group` itself).
fn tag(doc: &mut Value, path: &[&str], tags: &[&str]) {
    let mut level = doc;
    for name in path {
        let commands = level["commands"].as_array_mut().expect("commands");
        level = commands
            .iter_mut()
            .find(|command| command["name"] == *name)
            .expect("the command");
    }
    level["tags"] = tags.iter().map(|tag| Value::from(*tag)).collect();
}

#[test]
fn contradictory_tags_are_served_as_the_more_dangerous_reading_and_unknown_ai_tags_are_named() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let dir = scratch.path();
    let curl = apps::path(App::FiskCurl).expect("fisk's curl example builds");
    std::fs::write(
        dir.join("app.yaml"),
        format!(
            "identity: ex\napplication_path: {}\nexpose: {{agent: {{mcp: {{}}}}}}\n",
            curl.display()
        ),
    )
    .expect("config");
    let saved = fiskgen(dir, &["introspect", "app.yaml", "-o", "model.json"]);
    assert!(saved.status.success(), "{}", text(&saved.stderr));
    let mut doc: Value =
        serde_json::from_slice(&std::fs::read(dir.join("model.json")).expect("model"))
            .expect("JSON");
    tag(
        &mut doc,
        &["get", "url"],
        &["ai:read_only", "ai:destructive"],
    );
    tag(&mut doc, &["get", "file"], &["ai:readonly"]);
    tag(&mut doc, &["post"], &["ai:destructive", "ai:additive"]);
    std::fs::write(dir.join("tagged.json"), doc.to_string()).expect("tagged");

    let info = fiskgen(
        dir,
        &["info", "--json", "app.yaml", "--model", "tagged.json"],
    );
    assert!(info.status.success(), "{}", text(&info.stderr));
    let listed: Value = serde_json::from_slice(&info.stdout).expect("JSON");
    let hints = |name: &str| {
        listed["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .find(|tool| tool["name"] == name)
            .map(|tool| tool["hints"].clone())
            .expect("the tool")
    };
    assert_eq!(hints("get_url"), serde_json::json!(["destructive"]));
    assert_eq!(hints("post"), serde_json::json!(["destructive"]));

    let shown = fiskgen(dir, &["info", "app.yaml", "--model", "tagged.json"]);
    let out = text(&shown.stdout);
    for needle in [
        "get_url carries both ai:read_only and ai:destructive, which contradict: served as \
         not read-only",
        "post carries both ai:destructive and ai:additive, which contradict: served as destructive",
        "tag \"ai:readonly\" (on get_file) is in the reserved ai: namespace but is no tag fisk \
         knows, so it does nothing; did you mean \"ai:read_only\"?",
    ] {
        assert!(out.contains(needle), "{needle:?} in:\n{out}");
    }
}

#[test]
fn an_additive_command_is_listed_with_destructive_hint_false() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let dir = scratch.path();
    let curl = apps::path(App::FiskCurl).expect("fisk's curl example builds");
    std::fs::write(
        dir.join("app.yaml"),
        format!(
            "identity: ex\napplication_path: {}\nexpose: {{agent: {{mcp: {{}}}}}}\n",
            curl.display()
        ),
    )
    .expect("config");
    let saved = fiskgen(dir, &["introspect", "app.yaml", "-o", "model.json"]);
    assert!(saved.status.success(), "{}", text(&saved.stderr));
    let mut doc: Value =
        serde_json::from_slice(&std::fs::read(dir.join("model.json")).expect("model"))
            .expect("JSON");
    tag(&mut doc, &["post"], &["ai:additive"]);
    std::fs::write(dir.join("tagged.json"), doc.to_string()).expect("tagged");

    let info = fiskgen(
        dir,
        &["info", "--json", "app.yaml", "--model", "tagged.json"],
    );
    assert!(info.status.success(), "{}", text(&info.stderr));
    let listed: Value = serde_json::from_slice(&info.stdout).expect("JSON");
    let post = listed["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|tool| tool["name"] == "post")
        .expect("post");
    assert_eq!(post["hints"], serde_json::json!(["additive"]));
    // The text table's HINTS column has a letter for it.
    let table = fiskgen(dir, &["info", "app.yaml", "--model", "tagged.json"]);
    assert!(table.status.success(), "{}", text(&table.stderr));
    let row = text(&table.stdout)
        .lines()
        .find(|line| line.starts_with("post "))
        .map(str::to_string)
        .expect("a row for post");
    assert!(row.contains(" ----a "), "{row}");
    assert!(
        text(&table.stdout).contains("a additive"),
        "the legend names it"
    );

    // The tools/list answer compiled into the server says it.
    let generated = fiskgen(
        dir,
        &[
            "generate",
            "app.yaml",
            "--model",
            "tagged.json",
            "-o",
            "crate",
        ],
    );
    assert!(generated.status.success(), "{}", text(&generated.stderr));
    let listing = std::fs::read_to_string(dir.join("crate/src/listing.json")).expect("listing");
    // In rmcp's key order, as the server sends it.
    assert!(
        listing.contains(r#""annotations":{"title":"post","destructiveHint":false}"#),
        "{listing}"
    );
    let page: Value = serde_json::from_str(&listing).expect("the listing is JSON");
    let annotations = |name: &str| {
        page.as_array()
            .expect("entries")
            .iter()
            .find(|entry| entry["name"] == name)
            .map(|entry| entry["annotations"].clone())
            .expect("the entry")
    };
    assert_eq!(
        annotations("get_url"),
        serde_json::json!({"title": "get url"})
    );
}
