//! The fault soak (`bench/src/soak`, `fiskgen-soak`) in its smoke mode: a few hundred calls
//! through rmcp and the Python SDK (both eras over HTTP, and stdio) against the generated
//! fixture server running the real fixture app, at a concurrency above the server's limit, with
//! every fault mixed in and the main server stopped with SIGTERM and restarted mid-load.

use anyhow::Result;
use fiskgen_bench::soak::{self, Kind, Lane, SoakOptions, Verdict};

#[test]
fn every_call_of_the_smoke_soak_ends_right_and_nothing_is_left_behind() -> Result<()> {
    let options = SoakOptions::smoke();
    let report = soak::run(&options)?;
    let problems = report.problems();
    assert!(
        problems.is_empty(),
        "{problems:#?}\n\n{}",
        report.markdown()
    );
    assert_eq!(report.calls, options.calls);
    assert_eq!(
        report.downtimes.len(),
        options.restarts,
        "{}",
        report.markdown()
    );
    // Every fault happened and ended the way its kind must, not only as "busy" or cut short by
    // the restart.
    for kind in [
        Kind::Echo,
        Kind::Exit,
        Kind::Hang,
        Kind::Flood,
        Kind::Signal("KILL"),
        Kind::Signal("TERM"),
        Kind::IgnoreTerm,
        Kind::HoldStdout,
        Kind::Missing,
        Kind::Cancel,
        Kind::Disconnect,
    ] {
        let expected = report
            .by_kind
            .get(&kind.label())
            .and_then(|verdicts| verdicts.get(&Verdict::Expected))
            .copied()
            .unwrap_or(0);
        assert!(
            expected > 0,
            "no {} call ended as expected:\n{}",
            kind.label(),
            report.markdown()
        );
    }
    for lane in Lane::ALL {
        assert!(
            report.by_lane.get(&lane).copied().unwrap_or(0) > 0,
            "no call went through {}",
            lane.label()
        );
    }
    let servers = report.servers.len();
    assert_eq!(servers, options.restarts + 2, "{}", report.markdown());
    Ok(())
}
