//! Names over 64 characters with the real natscli: `fiskgen build` refuses a config that serves
//! one, exiting non-zero with a message that names the tool and each fix, before compiling
//! anything; with `allow_long_names: true` the same config is served (the build itself is
//! `tests/tests/integration/nats_names.rs`).

use std::path::Path;

use fiskgen_tests::apps::{self, App};

mod support;
use support::{fiskgen, text};

const LONG: &str = "key_value_buckets_listed_with_their_sizes_histories_and_replica_counts";

fn config(dir: &Path, allow: bool) -> std::path::PathBuf {
    let nats = apps::path(App::Nats).expect("natscli builds");
    let path = dir.join(if allow { "allowed.yaml" } else { "long.yaml" });
    let allow = if allow {
        "\n      allow_long_names: true"
    } else {
        ""
    };
    std::fs::write(
        &path,
        format!(
            "application_path: {}\ninclude:\n  tools: [\"^(stream_info|kv_ls)$\"]\nexpose:\n  \
             agent:\n    mcp:\n      tool_names:\n        kv_ls: {LONG}{allow}\n",
            nats.display()
        ),
    )
    .expect("config");
    path
}

#[test]
fn a_name_over_64_characters_fails_the_build_with_each_fix_unless_allowed() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let long = config(scratch.path(), false);
    let binary = scratch.path().join("nats-mcp");
    let out = fiskgen(
        scratch.path(),
        &[
            "build",
            long.to_str().expect("UTF-8"),
            "-o",
            binary.to_str().expect("UTF-8"),
        ],
    );
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "the build succeeded: {stderr}");
    assert!(
        stderr.contains(&format!(
            "tool name \"{LONG}\" (command \"kv ls\", renamed from \"kv_ls\" by \
             expose.agent.mcp.tool_names) is 70 characters, over the 64 that Claude's API and \
             other clients accept: rename it (expose.agent.mcp.tool_names: {{kv_ls: <shorter \
             name>}}), shorten tool_prefix, exclude it, or serve long names anyway with \
             allow_long_names: true"
        )),
        "{stderr}"
    );
    assert!(!binary.exists(), "a refused build wrote a binary");

    let allowed = config(scratch.path(), true);
    let out = fiskgen(scratch.path(), &["info", allowed.to_str().expect("UTF-8")]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains(LONG), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "NAMES: renamed by tool_names: {LONG} (kv_ls); the config's other keys use the own \
             names."
        )),
        "{stdout}"
    );
}
