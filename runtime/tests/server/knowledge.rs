//! The knowledge tools end to end: an index built by `<binary> knowledge index` over a small
//! Markdown corpus answers `knowledge_search` with ranked, cited results, `knowledge_read`
//! returns the cited text, `knowledge_list` the documents, eight concurrent searches succeed;
//! and the hybrid tier against a real embeddings endpoint (all-MiniLM-L6-v2), including the
//! degrade to lexical when the endpoint is stopped.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::embeddings::Embeddings;
use crate::support::*;

/// A corpus in `docs/`, the server's working directory being the temp dir.
fn corpus() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(docs.join("ops")).expect("mkdir");
    std::fs::write(
        docs.join("flow.md"),
        "# Flow control\n\n## Backpressure\n\nBackpressure slows fast producers down when \
         consumers lag behind.\n\n## Retries\n\nRetries resend messages that were not \
         acknowledged.\n",
    )
    .expect("flow");
    std::fs::write(
        docs.join("storage.md"),
        "# Storage\n\nStreams keep messages on disk with file storage or in memory.\n",
    )
    .expect("storage");
    std::fs::write(
        docs.join("ops/security.md"),
        "# Security\n\n## Accounts\n\nAccounts isolate tenants; users authenticate with \
         credentials files.\n",
    )
    .expect("security");
    std::fs::write(docs.join("ops/image.png"), [0u8, 1, 2]).expect("png");
    dir
}

/// Runs `builtin_server knowledge ARGS` in `cwd`.
fn knowledge(cwd: &Path, env: &[(&str, &str)], args: &[&str]) -> (bool, String) {
    let output = Command::new(builtin_binary())
        .arg("knowledge")
        .args(args)
        .current_dir(cwd)
        .envs(env.iter().copied())
        .output()
        .expect("running knowledge");
    (
        output.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    )
}

fn answer(result: &rmcp::model::CallToolResult) -> Value {
    assert!(!is_error(result), "unexpected tool error: {}", text(result));
    serde_json::from_str(&text(result)).expect("JSON answer")
}

async fn search(client: &Client, query: &str) -> Value {
    answer(&call(client, "knowledge_search", json!({"query": query})).await)
}

fn citations(answer: &Value) -> Vec<String> {
    answer["results"]
        .as_array()
        .map(|results| {
            results
                .iter()
                .filter_map(|r| r["citation"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lexical_index_search_read_list() {
    let dir = corpus();
    let server = Server::start_with(Start {
        profile: "lexical",
        builtins: true,
        cwd: Some(dir.path()),
        ..Start::default()
    });
    let client = legacy(&server.url, TestClient::new(Answer::Unable)).await;
    assert_eq!(
        search(&client, "backpressure").await["status"],
        "index_not_built"
    );

    // Built while the server runs: the next call sees it.
    let (ok, out) = knowledge(dir.path(), &[("BUILTIN_PROFILE", "lexical")], &["index"]);
    assert!(ok, "{out}");
    assert!(
        out.contains("Indexed 3 files into") && out.contains("3 added") && out.contains("4 chunks"),
        "{out}"
    );
    let (ok, out) = knowledge(dir.path(), &[], &["index", "docs"]);
    assert!(ok && out.contains("3 unchanged"), "{out}");

    let found = search(&client, "How does backpressure work?").await;
    assert_eq!(found["status"], "ok");
    assert_eq!(
        found["tier"],
        "tier: lexical (FTS5) - no embeddings configured"
    );
    assert!(found.get("note").is_none());
    assert_eq!(citations(&found), ["docs/flow.md#0"]);
    let first = &found["results"][0];
    assert_eq!(first["section"], "Flow control > Backpressure");
    assert_eq!(
        first["content"], "Backpressure slows fast producers down when consumers lag behind.",
        "the content is the section's text; the breadcrumb is the section"
    );

    // Ranked: the chunk that matches more terms first; porter stemming matches "messages".
    let ranked = search(&client, "message storage on disk").await;
    assert_eq!(
        citations(&ranked),
        ["docs/storage.md#0", "docs/flow.md#1"],
        "{ranked}"
    );
    let limited = answer(
        &call(
            &client,
            "knowledge_search",
            json!({"query": "message storage on disk", "top_k": 1}),
        )
        .await,
    );
    assert_eq!(citations(&limited), ["docs/storage.md#0"]);
    let empty = search(&client, "? !").await;
    assert_eq!(empty["status"], "index_empty");
    assert_eq!(
        empty["note"],
        "the knowledge index is empty or the query had no searchable terms"
    );

    let read = answer(
        &call(
            &client,
            "knowledge_read",
            json!({"citation": "docs/flow.md#0"}),
        )
        .await,
    );
    assert_eq!(read["content"], first["content"]);
    assert_eq!(read["title"], "Flow control");
    assert_eq!(read["next"], "docs/flow.md#1");
    assert!(read.get("previous").is_none());
    for (citation, needle) in [
        ("docs/flow.md#7", "has chunks #0 to #1"),
        ("docs/nope.md#0", "no indexed document"),
        ("docs/flow.md", "is not a citation"),
    ] {
        let result = call(&client, "knowledge_read", json!({"citation": citation})).await;
        assert!(is_error(&result), "{citation}");
        assert!(
            text(&result).contains(needle),
            "{citation}: {}",
            text(&result)
        );
    }
    let list = answer(&call(&client, "knowledge_list", json!({})).await);
    assert_eq!(list["count"], 3);
    assert_eq!(
        list["documents"],
        json!([
            {"path": "docs/flow.md", "title": "Flow control", "chunks": 2},
            {"path": "docs/ops/security.md", "title": "Security", "chunks": 1},
            {"path": "docs/storage.md", "title": "Storage", "chunks": 1},
        ])
    );

    // Eight searches at once, against one store.
    let calls = (0..8).map(|i| {
        let query = ["backpressure", "retries", "accounts", "disk"][i % 4];
        call(&client, "knowledge_search", json!({"query": query}))
    });
    let results = futures::future::join_all(calls).await;
    for result in &results {
        let found = answer(result);
        assert_eq!(found["status"], "ok");
        assert_eq!(citations(&found).len(), 1, "{found}");
    }
    let _ = client.cancel().await;
    assert!(
        server
            .log()
            .contains("Ran knowledge_search(\"backpressure\")")
    );
}

#[test]
fn index_refuses_what_it_cannot_do() {
    let dir = corpus();
    let (ok, out) = knowledge(dir.path(), &[], &["index", "nowhere"]);
    assert!(!ok && out.contains("nowhere"), "{out}");
    let (ok, out) = knowledge(dir.path(), &[], &["status"]);
    assert!(ok && out.contains("status: not built"), "{out}");
    // A server configured for vectors refuses a lexical-only index at start.
    let (ok, out) = knowledge(dir.path(), &[], &["index"]);
    assert!(ok, "{out}");
    let output = Command::new(builtin_binary())
        .args(["--port", "0"])
        .current_dir(dir.path())
        .env("BUILTIN_PROFILE", "hybrid")
        .env("BUILTIN_EMBEDDINGS_URL", "http://127.0.0.1:9/v1")
        .output()
        .expect("server");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("cannot expose knowledge_search over MCP: knowledge index was built with a different embedding configuration")
            && stderr.contains("built lexical-only; run 'kb-mcp knowledge index --reindex'"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hybrid_tier_and_degrade() {
    let dir = corpus();
    let mut embeddings = Embeddings::start();
    let url = embeddings.url.clone();
    let env = [
        ("BUILTIN_PROFILE", "hybrid"),
        ("BUILTIN_EMBEDDINGS_URL", url.as_str()),
    ];
    let (ok, out) = knowledge(dir.path(), &env, &["index"]);
    assert!(ok && out.contains("4 chunks, 4 embedded"), "{out}");
    let (ok, out) = knowledge(dir.path(), &env, &["status"]);
    assert!(
        ok && out.contains("vectors: model=all-minilm-l6-v2 dim=384 normalized=true"),
        "{out}"
    );

    let server = Server::start_with(Start {
        profile: "hybrid",
        builtins: true,
        cwd: Some(dir.path()),
        env: &[("BUILTIN_EMBEDDINGS_URL", url.as_str())],
        ..Start::default()
    });
    assert!(
        server.log().contains(
            "knowledge tier: hybrid (FTS5 + vectors, RRF) - model=all-minilm-l6-v2 dim=384"
        )
    );
    let client = modern(&server.url, TestClient::new(Answer::Unable)).await;

    // No word in common with the corpus: only the vectors can find it.
    let found = search(&client, "throttling senders").await;
    assert_eq!(
        found["tier"],
        "tier: hybrid (FTS5 + vectors, RRF) - model=all-minilm-l6-v2 dim=384"
    );
    assert_eq!(found["status"], "ok");
    assert_eq!(citations(&found).len(), 3, "top_k is 3: {found}");
    assert_eq!(citations(&found)[0], "docs/flow.md#0", "{found}");
    // Both tiers agree on an exact term.
    let found = search(&client, "tenant accounts").await;
    assert_eq!(citations(&found)[0], "docs/ops/security.md#0", "{found}");

    embeddings.stop();
    let degraded = search(&client, "throttling senders").await;
    let tier = degraded["tier"].as_str().unwrap_or_default();
    assert!(
        tier.starts_with(&format!(
            "tier: hybrid -> DEGRADED to lexical (embeddings unreachable: contacting embeddings \
             server at {url}: "
        )),
        "{degraded}"
    );
    assert_eq!(
        degraded["note"],
        "the embeddings server was unreachable, so this query used the lexical tier only"
    );
    assert_eq!(degraded["status"], "ok");
    assert_eq!(degraded["results"], json!([]), "no lexical match");
    let lexical = search(&client, "tenant accounts").await;
    assert_eq!(citations(&lexical), ["docs/ops/security.md#0"], "{lexical}");
    let _ = client.cancel().await;

    // Indexing needs the endpoint; --reindex drops and rebuilds the vec0 table.
    let (ok, out) = knowledge(dir.path(), &env, &["index"]);
    assert!(
        !ok && out.contains("probing the embedding dimension: contacting embeddings server"),
        "{out}"
    );
    let mut embeddings = Embeddings::start();
    let url = embeddings.url.clone();
    let env = [
        ("BUILTIN_PROFILE", "hybrid"),
        ("BUILTIN_EMBEDDINGS_URL", url.as_str()),
    ];
    let (ok, out) = knowledge(dir.path(), &env, &["index", "--reindex"]);
    assert!(
        ok && out.contains("3 added") && out.contains("4 embedded"),
        "{out}"
    );
    embeddings.stop();
}
