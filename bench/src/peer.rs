//! The peer, Fisk AI's `fisk mcp`, measured fairly: built from source when asked
//! ([`build`], with the script beside the source snapshot), and handed a copy of each config
//! that it accepts and that gives it the limits ours get ([`config`]).

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// Keys of `expose.agent.mcp` that only fiskgen reads: `fisk mcp` refuses a config that holds
/// one (`unknown field "hint_tags"`), so the peer's copy leaves them out.
pub const FISKGEN_KEYS: [&str; 19] = [
    "hint_tags",
    "param_headers",
    "ask",
    "allowed_hosts",
    "allowed_origins",
    "auth",
    "stateless",
    "scrub_env",
    "tasks",
    "resources",
    "prompts",
    "structured_output",
    "page_size",
    "list_page_size",
    "builtins",
    "exit_code_is_error",
    "output_schema",
    "catalog",
    "group_tag_prefix",
];

/// `text` (a config) for the peer: without the keys of [`FISKGEN_KEYS`] (each with the lines
/// indented below it), and with `max_concurrent_tools: slots` in `expose.agent.mcp`, the limit
/// ours get on the command line (the peer reads it only from its config).
pub fn config(text: &str, slots: usize) -> Result<String> {
    let indent = |line: &str| line.len() - line.trim_start().len();
    let mut out = Vec::new();
    let mut skipping: Option<usize> = None;
    let mut mcp: Option<usize> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let blank = trimmed.is_empty() || trimmed.starts_with('#');
        if let Some(level) = skipping {
            if blank || indent(line) > level {
                continue;
            }
            skipping = None;
        }
        let key = trimmed.split(':').next().unwrap_or_default().trim();
        if let Some(level) = mcp
            && !blank
            && indent(line) > level
            && (FISKGEN_KEYS.contains(&key) || key == "max_concurrent_tools")
        {
            skipping = Some(indent(line));
            continue;
        }
        if !blank && mcp.is_some_and(|level| indent(line) <= level) {
            mcp = None;
        }
        out.push(line.to_string());
        if key == "mcp" && trimmed.starts_with("mcp:") {
            mcp = Some(indent(line));
            let inner = " ".repeat(indent(line) + 2);
            out.push(format!("{inner}max_concurrent_tools: {slots}"));
        }
    }
    if !out
        .iter()
        .any(|line| line.trim_start().starts_with("max_concurrent_tools:"))
    {
        bail!("the config has no expose.agent.mcp block to give the peer its limits");
    }
    Ok(out.join("\n") + "\n")
}

/// Writes the peer's copy of `config` into `dir`; its path.
pub fn write_config(config: &Path, dir: &Path, slots: usize) -> Result<PathBuf> {
    let text =
        fs::read_to_string(config).with_context(|| format!("reading {}", config.display()))?;
    let path = dir.join("peer.yaml");
    fs::write(&path, self::config(&text, slots)?)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// Builds the peer with `script` (`build.sh OUT_BINARY`, beside Fisk AI's source snapshot) into
/// `out`; `out`.
pub fn build(script: &Path, out: &Path) -> Result<PathBuf> {
    eprintln!("fiskgen-bench: building the peer with {}", script.display());
    let status = std::process::Command::new(script)
        .arg(out)
        .status()
        .with_context(|| format!("running {}", script.display()))?;
    if !status.success() {
        bail!("{} failed ({status})", script.display());
    }
    Ok(out.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peers_copy_drops_fiskgen_keys_and_gets_our_limit() -> Result<()> {
        let text = "application_path: tasks\nexpose:\n  agent:\n    mcp:\n      instructions: |\n        Tools.\n      confirm_over_mcp: auto\n      max_concurrent_tools: 2\n      hint_tags:\n        impact:ro: read_only\n      tool_timeout: 30s\n    tools: {}\n";
        let copy = config(text, 32)?;
        assert_eq!(
            copy,
            "application_path: tasks\nexpose:\n  agent:\n    mcp:\n      max_concurrent_tools: 32\n      instructions: |\n        Tools.\n      confirm_over_mcp: auto\n      tool_timeout: 30s\n    tools: {}\n"
        );
        assert!(config("application_path: x\n", 32).is_err());
        Ok(())
    }
}
