//! The built-in tools over HTTP with real rmcp clients in both protocol eras: listing, calls,
//! confinement refusals (`..`, absolute paths, symbolic-link escapes, FIFOs, directories),
//! truncation and paging, binary detection, configured roots and caps, and the `ai:confirm`
//! gate on a built-in.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

/// A scratch tree: `work/` is the server's working directory, `outside.txt` lies beside it.
struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let work = dir.path().join("work");
        std::fs::create_dir_all(work.join("dir")).expect("mkdir");
        std::fs::create_dir_all(work.join("public")).expect("mkdir");
        std::fs::write(dir.path().join("outside.txt"), "secret\n").expect("outside");
        std::fs::write(work.join("notes.txt"), "first line\nsecond line\n").expect("notes");
        std::fs::write(work.join("public/ok.txt"), "public text\n").expect("ok");
        std::fs::write(work.join("public/long.txt"), "x".repeat(40)).expect("long");
        let big: String = (0..20_000).map(|i| format!("line {i:05}\n")).collect();
        std::fs::write(work.join("big.txt"), big).expect("big");
        std::fs::write(work.join("blob.bin"), [0x89, b'P', b'N', b'G', 0, 1, 2, 3]).expect("blob");
        std::os::unix::fs::symlink(dir.path().join("outside.txt"), work.join("escape"))
            .expect("symlink");
        let status = Command::new("mkfifo")
            .arg(work.join("pipe"))
            .status()
            .expect("mkfifo");
        assert!(status.success());
        Self { dir }
    }

    fn work(&self) -> std::path::PathBuf {
        self.dir.path().join("work")
    }

    fn outside(&self) -> String {
        self.dir.path().join("outside.txt").display().to_string()
    }

    fn server(&self, profile: &str) -> Server {
        Server::start_with(Start {
            profile,
            builtins: true,
            cwd: Some(&self.work()),
            ..Start::default()
        })
    }
}

#[derive(Debug, Clone, Copy)]
enum Era {
    Legacy,
    Modern,
}

async fn connect(server: &Server, era: Era, client: TestClient) -> Client {
    match era {
        Era::Legacy => legacy(&server.url, client).await,
        Era::Modern => modern(&server.url, client).await,
    }
}

fn json_of(result: &rmcp::model::CallToolResult) -> Value {
    assert!(!is_error(result), "unexpected tool error: {}", text(result));
    assert!(result.structured_content.is_none());
    serde_json::from_str(&text(result)).expect("the text content is a JSON object")
}

fn error_text(result: &rmcp::model::CallToolResult) -> String {
    assert!(is_error(result), "expected an error, got {}", text(result));
    text(result)
}

async fn listed_and_called(era: Era) {
    let tree = Tree::new();
    let server = tree.server("lexical");
    let client = connect(&server, era, TestClient::new(Answer::Unable)).await;

    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "read_file",
            "base64_encode",
            "knowledge_search",
            "knowledge_read",
            "knowledge_list"
        ]
    );
    for tool in &tools {
        assert!(tool.output_schema.is_none(), "{}", tool.name);
        let annotations = tool.annotations.as_ref().expect("annotations");
        assert_eq!(annotations.read_only_hint, Some(true), "{}", tool.name);
    }

    let read = json_of(&call(&client, "read_file", json!({"path": "notes.txt"})).await);
    assert_eq!(
        read,
        json!({"path": "notes.txt", "size": 23, "offset": 0,
               "content": "first line\nsecond line\n", "truncated": false})
    );
    let encoded = json_of(&call(&client, "base64_encode", json!({"text": "hello"})).await);
    assert_eq!(encoded, json!({"bytes": 5, "base64": "aGVsbG8="}));
    let encoded = json_of(&call(&client, "base64_encode", json!({"path": "blob.bin"})).await);
    assert_eq!(encoded["base64"], "iVBORwABAgM=");
    assert_eq!(encoded["bytes"], 8);

    // Before `knowledge index`: soft states, not crashes.
    let search = json_of(&call(&client, "knowledge_search", json!({"query": "anything"})).await);
    assert_eq!(search["status"], "index_not_built");
    assert_eq!(
        search["tier"],
        "tier: lexical (FTS5) - no embeddings configured"
    );
    assert_eq!(
        search["note"],
        "the knowledge index has not been built yet; run: kb-mcp knowledge index"
    );
    assert_eq!(search["results"], json!([]));
    let list = json_of(&call(&client, "knowledge_list", json!({})).await);
    assert_eq!(list["status"], "index_not_built");
    let read = call(
        &client,
        "knowledge_read",
        json!({"citation": "docs/a.md#0"}),
    )
    .await;
    assert!(error_text(&read).contains("has not been built yet"));

    // Invalid arguments are refused before anything runs, naming the property.
    let bad = call(
        &client,
        "read_file",
        json!({"path": "notes.txt", "length": 0}),
    )
    .await;
    assert_eq!(
        error_text(&bad),
        "invalid arguments for read_file: property `length`: must be at least 1"
    );
    let bad = call(
        &client,
        "knowledge_search",
        json!({"query": "q", "top_k": "3"}),
    )
    .await;
    assert!(error_text(&bad).starts_with(
        "invalid arguments for knowledge_search: property `top_k`: expected an integer, got the string \"3\""
    ));
    let bad = call(&client, "base64_encode", json!({})).await;
    assert!(error_text(&bad).starts_with("invalid arguments for base64_encode: property `text`"));
    let _ = client.cancel().await;

    assert!(
        server.wait_log("Ran read_file notes.txt"),
        "{}",
        server.log()
    );
    assert!(server.log().contains("INFO Running read_file notes.txt"));
    assert!(
        server
            .log()
            .contains("knowledge tier: lexical (FTS5) - no embeddings configured")
    );
    assert!(
        server
            .log()
            .contains("note: the knowledge index is not built yet")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listed_and_called_legacy() {
    listed_and_called(Era::Legacy).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listed_and_called_modern() {
    listed_and_called(Era::Modern).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confinement_refusals() {
    let tree = Tree::new();
    let server = tree.server("lexical");
    let client = legacy(&server.url, TestClient::new(Answer::Unable)).await;
    let outside = tree.outside();
    let cases: Vec<(&str, String)> = vec![
        (
            "../outside.txt",
            "is outside the allowed directories".into(),
        ),
        (&outside, "is outside the allowed directories".into()),
        ("/etc/passwd", "is outside the allowed directories".into()),
        ("escape", "is outside the allowed directories".into()),
        (
            "dir/../../outside.txt",
            "is outside the allowed directories".into(),
        ),
        ("pipe", "is a named pipe (FIFO), not a regular file".into()),
        ("dir", "is a directory, not a regular file".into()),
        ("missing.txt", "does not exist".into()),
    ];
    for tool in ["read_file", "base64_encode"] {
        for (path, needle) in &cases {
            let started = Instant::now();
            let result = call(&client, tool, json!({"path": path})).await;
            let message = error_text(&result);
            assert!(
                message.starts_with(&format!("{tool}: ")) && message.contains(needle.as_str()),
                "{tool} {path}: {message}"
            );
            assert!(!message.contains("secret"), "{message}");
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{path} was slow"
            );
        }
    }
    let work = tree.work().canonicalize().expect("canonical");
    let message = error_text(&call(&client, "read_file", json!({"path": "../outside.txt"})).await);
    assert_eq!(
        message,
        format!(
            "read_file: \"../outside.txt\" is outside the allowed directories (\"{}\"); paths \
             are checked after resolving \"..\" and symbolic links",
            work.display()
        )
    );
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncation_paging_and_binary() {
    let tree = Tree::new();
    let server = tree.server("lexical");
    let client = modern(&server.url, TestClient::new(Answer::Unable)).await;
    let big = std::fs::read_to_string(tree.work().join("big.txt")).expect("big");
    assert_eq!(big.len(), 220_000);

    let whole = json_of(&call(&client, "read_file", json!({"path": "big.txt"})).await);
    let content = whole["content"].as_str().expect("content");
    assert_eq!(whole["truncated"], true);
    assert_eq!(whole["size"], 220_000);
    assert_eq!(content.len(), 65_536 + "\n...[output truncated]...\n".len());
    let (head, tail) = content
        .split_once("\n...[output truncated]...\n")
        .expect("the marker");
    assert_eq!(head, &big[..32_768]);
    assert_eq!(tail, &big[big.len() - 32_768..]);
    assert_eq!(whole["next_offset"], 32_768);

    let page = json_of(
        &call(
            &client,
            "read_file",
            json!({"path": "big.txt", "offset": 32_768, "length": 65_536}),
        )
        .await,
    );
    assert_eq!(page["content"], &big[32_768..98_304]);
    assert_eq!(page["truncated"], false);
    assert_eq!(page["next_offset"], 98_304);
    let clamp = json_of(
        &call(
            &client,
            "read_file",
            json!({"path": "big.txt", "offset": 219_990, "length": 1_000_000}),
        )
        .await,
    );
    assert_eq!(clamp["content"], &big[219_990..]);
    assert!(clamp.get("next_offset").is_none());
    let past = call(
        &client,
        "read_file",
        json!({"path": "big.txt", "offset": 300_000}),
    )
    .await;
    assert!(error_text(&past).contains("past the end"));

    let binary = call(&client, "read_file", json!({"path": "blob.bin"})).await;
    assert_eq!(
        error_text(&binary),
        "read_file: \"blob.bin\" is not a text file (it contains NUL bytes); use base64_encode \
         to get its bytes"
    );
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configured_roots_and_caps() {
    let tree = Tree::new();
    let server = tree.server("roots");
    let client = legacy(&server.url, TestClient::new(Answer::Unable)).await;
    let ok = json_of(&call(&client, "read_file", json!({"path": "public/ok.txt"})).await);
    assert_eq!(ok["content"], "public text\n");
    let refused = call(&client, "read_file", json!({"path": "notes.txt"})).await;
    assert!(error_text(&refused).contains("is outside the allowed directories"));
    let capped = call(&client, "base64_encode", json!({"path": "public/long.txt"})).await;
    assert_eq!(
        error_text(&capped),
        "base64_encode: \"public/long.txt\" is 40 bytes; base64_encode encodes at most 16 bytes \
         (max_bytes)"
    );
    let capped = call(&client, "base64_encode", json!({"text": "x".repeat(17)})).await;
    assert!(error_text(&capped).contains("at most 16 bytes"));
    let _ = client.cancel().await;
}

const PROMPT: &str = "kb wants to run a command that requires your approval.\n\nCommand: \
                      read_file notes.txt\nGated by: ai:confirm\n\nApprove to run it now, or \
                      refuse to skip it.";
const DECLINED: &str = "Not approved: the user declined to run \"read_file notes.txt\". This was \
                        their decision, not an error; do not retry, ask how they want to proceed.";

async fn gated(era: Era) {
    let tree = Tree::new();
    let server = tree.server("confirm");

    let approving = TestClient::new(Answer::Approve);
    let client = connect(&server, era, approving.clone()).await;
    let result = json_of(&call(&client, "read_file", json!({"path": "notes.txt"})).await);
    assert_eq!(result["content"], "first line\nsecond line\n");
    assert_eq!(approving.asked(), 1);
    let prompts = approving
        .prompts
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    assert_eq!(prompts, [PROMPT]);
    // Only the gated built-in asks.
    json_of(&call(&client, "base64_encode", json!({"text": "a"})).await);
    assert_eq!(approving.asked(), 1);
    let _ = client.cancel().await;

    let declining = TestClient::new(Answer::Decline);
    let client = connect(&server, era, declining.clone()).await;
    let result = call(&client, "read_file", json!({"path": "notes.txt"})).await;
    assert_eq!(error_text(&result), DECLINED);
    assert_eq!(declining.asked(), 1);
    let _ = client.cancel().await;
    assert!(server.wait_log("outcome=\"declined\""));

    // A path outside the roots is refused before anyone is asked to approve reading it.
    let approving = TestClient::new(Answer::Approve);
    let client = connect(&server, era, approving.clone()).await;
    for path in ["/etc/hostname", "../notes.txt"] {
        let result = call(&client, "read_file", json!({"path": path})).await;
        assert!(
            error_text(&result).starts_with(&format!(
                "read_file: \"{path}\" is outside the allowed directories"
            )),
            "{}",
            error_text(&result)
        );
    }
    assert_eq!(
        approving.asked(),
        0,
        "the user was asked about a path outside the roots"
    );
    let _ = client.cancel().await;
    assert!(server.wait_log("Refused before asking: read_file /etc/hostname"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confirm_gates_a_builtin_legacy() {
    gated(Era::Legacy).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confirm_gates_a_builtin_modern() {
    gated(Era::Modern).await;
}

#[test]
fn tools_json_names_the_builtins() {
    let output = Command::new(builtin_binary())
        .args(["tools", "--json"])
        .env("BUILTIN_PROFILE", "confirm")
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .output()
        .expect("tools --json");
    assert!(output.status.success());
    let tools: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let first = &tools[0];
    assert_eq!(first["name"], "read_file");
    assert_eq!(first["kind"], "builtin");
    assert_eq!(first["builtin"], "read_file");
    assert_eq!(first["confirm"], json!({"trigger": "ai:confirm"}));
    assert!(first.get("command").is_none());
    assert_eq!(tools[4]["builtin"], "knowledge_list");
}
