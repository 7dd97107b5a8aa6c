//! Replays the committed fuzz corpus (`fuzz/corpus/<target>/`) through each target on stable,
//! so every input the fuzzer ever kept, and every crash it found once, runs in the default
//! test run.

use std::fs;
use std::path::Path;

#[test]
fn every_corpus_input_runs_through_its_target_without_a_finding() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    for (name, target) in fiskgen_fuzz::TARGETS {
        let dir = corpus.join(name);
        let mut inputs: Vec<_> = fs::read_dir(&dir)
            .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
            .map(|entry| entry.expect("a corpus entry").path())
            .collect();
        inputs.sort();
        assert!(
            inputs.len() >= 5,
            "{}: the corpus holds {} inputs",
            dir.display(),
            inputs.len()
        );
        for input in inputs {
            let data = fs::read(&input).expect("a corpus file");
            eprintln!("{name}: {}", input.display());
            target(&data);
        }
    }
}

/// The HTTP target reaches the MCP handler: the committed `tools/list` in the live session is
/// answered with the demo's tools, and a stateless `initialize` with a server's answer, so the
/// fuzzer explores rmcp and the runtime, not a layer that refuses everything.
#[test]
fn the_http_target_reaches_the_mcp_handler() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/http_jsonrpc");
    for (seed, expected) in [
        ("tools-list-session", "task_add"),
        ("initialize-stateless", "serverInfo"),
        ("tools-call-session", "has no application path"),
    ] {
        let data = fs::read(corpus.join(seed)).expect("a committed seed");
        let (status, body) = fiskgen_fuzz::http_answer(&data).expect("an answer");
        let body = String::from_utf8_lossy(&body);
        assert_eq!(status, 200, "{seed}: {body}");
        assert!(
            body.contains(expected),
            "{seed}: {expected:?} missing from {body:?}"
        );
    }
}

/// The HTTP target closes every session an input opens, so a long run never fills the session
/// cap (whose 503 would otherwise answer every later `initialize`).
#[test]
fn http_inputs_that_open_sessions_never_fill_the_session_cap() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/http_jsonrpc");
    let data = fs::read(corpus.join("initialize-sessions")).expect("a committed seed");
    for round in 0..100 {
        let (status, body) = fiskgen_fuzz::http_answer(&data).expect("an answer");
        assert_eq!(
            status,
            200,
            "initialize #{round}: {}",
            String::from_utf8_lossy(&body)
        );
    }
}
