//! The benchmark (`bench/`, `fiskgen-bench`) in its smoke mode: a few iterations against the
//! golden demo server must produce every figure of the report, the Markdown page and the chart,
//! so the full benchmark cannot rot between runs.

use std::fs;

use anyhow::Result;
use fiskgen_bench::{Mode, Options, PeerStatus, Server, Transport};

#[test]
fn the_smoke_benchmark_reports_every_figure() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mut options = Options::new(Mode::Smoke);
    options.out_dir = Some(dir.path().to_path_buf());
    let report = fiskgen_bench::run(&options)?;

    let missing = report.missing_figures();
    assert!(missing.is_empty(), "figures missing: {missing:#?}");
    let demo = report
        .apps
        .iter()
        .find(|app| app.name == "demo")
        .expect("the demo was measured");
    assert_eq!(demo.tools, 8);
    assert_eq!(demo.argv, ["task", "list"]);
    let servers: Vec<Server> = demo.servers.iter().map(|s| s.server).collect();
    assert_eq!(
        servers,
        [
            Server::Ours(Transport::Legacy),
            Server::Ours(Transport::Modern),
            Server::Ours(Transport::Stdio)
        ]
    );
    assert!(matches!(report.peer, PeerStatus::Absent { .. }));

    let page = fs::read_to_string(dir.path().join("benchmarks.md"))?;
    for expected in [
        "## Machine and method",
        "cores of",
        "Load average",
        "**Not measured: the peer columns are empty.**",
        "start → first `tools/list`, rmcp's client (ms)",
        "start → last byte of the first `tools/list`, raw client (ms)",
        "`tools/list` throughput, c=1 (req/s)",
        "server CPU per `tools/list`, raw client back to back (ms)",
        "of it, user time: the server's own code (ms)",
        "first `tools/list` page on the wire, raw client (KiB)",
        "overhead over the direct run, p99, c=8 (ms)",
        "RSS peak during the load, VmHWM (MiB)",
        "MiB stripped",
        "## `fiskgen build` time",
        "## The issue's targets",
        "cargo run --release -p fiskgen-bench -- --full",
    ] {
        assert!(
            page.contains(expected),
            "{expected:?} missing from:\n{page}"
        );
    }
    // No figure of a content coding the servers do not offer.
    assert!(!page.contains("gzip"), "{page}");
    let chart = fs::read_to_string(dir.path().join("benchmarks.svg"))?;
    assert!(
        chart.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
        "{chart}"
    );
    assert!(chart.trim_end().ends_with("</svg>"), "{chart}");
    assert_eq!(chart.matches("<rect").count(), 1 + 4 * 3, "{chart}");
    Ok(())
}

/// `--peer-command` against a real MCP peer whose results carry text content only (no
/// structuredContent), as `fisk mcp`'s do: the official Python SDK's server wrapping the same
/// demo application (`tests/clients/python/text_peer.py`). The peer is measured beside ours.
#[test]
fn the_smoke_benchmark_measures_a_text_only_peer() -> Result<()> {
    let python = fiskgen_tests::clients::python()?;
    let peer = fiskgen_tests::clients::scripts_dir().join("text_peer.py");
    let dir = tempfile::tempdir()?;
    let mut options = Options::new(Mode::Smoke);
    options.out_dir = Some(dir.path().to_path_buf());
    // One start per server: the point is that every figure exists for the peer, not its spread.
    options.starts = Some(1);
    options.peer_command = Some(format!(
        "{} {} --app {{app}} --port {{port}}",
        python.display(),
        peer.display()
    ));
    let report = fiskgen_bench::run(&options)?;

    assert!(matches!(report.peer, PeerStatus::Measured { .. }));
    let demo = report
        .apps
        .iter()
        .find(|app| app.name == "demo")
        .expect("the demo was measured");
    let peer = demo
        .servers
        .iter()
        .find(|s| s.server == Server::Peer)
        .expect("the peer was measured");
    assert!(peer.start_ms.is_some() && !peer.call.is_empty(), "{peer:?}");
    // The raw client's back-to-back lists work against a server that answers in events.
    assert!(peer.raw_list_cpu_ms.is_some(), "{peer:?}");
    assert!(
        peer.raw_answer_kib.is_some_and(|kib| kib.median > 1.0),
        "{peer:?}"
    );
    // Its list measured as ours is, beside ours.
    let sizes = demo.peer_list_sizes.expect("the peer's tools/list size");
    assert_eq!(sizes.tools, 8, "{sizes:?}");
    let missing = report.missing_figures();
    assert!(missing.is_empty(), "figures missing: {missing:#?}");
    let page = fs::read_to_string(dir.path().join("benchmarks.md"))?;
    assert!(
        !page.contains("**Not measured: the peer columns are empty.**"),
        "{page}"
    );
    assert!(page.contains("The peer: binary"), "{page}");
    assert!(
        page.contains("server CPU per `tools/list` at most 1/10 of the peer's (demo, stdio)"),
        "{page}"
    );
    Ok(())
}
