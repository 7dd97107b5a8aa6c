//! Records the compiler the runtime is built with, for the server's `version --json`
//! (`FISKGEN_RUSTC_VERSION`, the first line of `rustc -V`): with the fiskgen version and the
//! application's fingerprint, it names everything a reproducible build depends on.

use std::env;
use std::process::Command;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let version = Command::new(&rustc)
        .arg("-V")
        .output()
        .ok()
        .filter(|output| output.status.success())
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .and_then(|text| text.lines().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo::rustc-env=FISKGEN_RUSTC_VERSION={version}");
}
