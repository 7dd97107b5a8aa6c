//! The peer, Fisk AI's `fisk mcp`, measured fairly: built from source when asked
//! ([`build`], with the script beside the source snapshot), and handed a copy of each config
//! that it accepts and that gives it the limits ours get ([`config`]).

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// The keys of `expose.agent.mcp` that `fisk mcp` reads (Fisk AI 3529f57,
/// `config.ExposedMCPConfig`; `builtins` left out: fiskgen's list names tools the peer
/// refuses). It refuses a config with any other key (`unknown field "hint_tags"`), so the
/// peer's copy keeps only these, and a key fiskgen adds needs no change here.
pub const PEER_KEYS: [&str; 6] = [
    "port",
    "address",
    "instructions",
    "confirm_over_mcp",
    "max_concurrent_tools",
    "tool_timeout",
];

/// `text` (a config) for the peer: `expose.agent.mcp` with only the keys of [`PEER_KEYS`]
/// (each with the lines indented below it), and with `max_concurrent_tools: slots`, the limit
/// ours get on the command line (the peer reads it only from its config).
pub fn config(text: &str, slots: usize) -> Result<String> {
    let indent = |line: &str| line.len() - line.trim_start().len();
    let mut out = Vec::new();
    let mut skipping: Option<usize> = None;
    let mut mcp: Option<usize> = None;
    let mut child: Option<usize> = None;
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
        // A key of `expose.agent.mcp` is a line at its children's indent (the first child's);
        // deeper lines belong to the key above them.
        if let Some(level) = mcp
            && !blank
            && indent(line) > level
            && *child.get_or_insert(indent(line)) == indent(line)
            && (!PEER_KEYS.contains(&key) || key == "max_concurrent_tools")
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
            child = None;
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

/// The peer's command and binary from `--peer-command`: a path to an executable file alone is
/// the peer's binary, run as `'PATH' mcp --config {config}` and its size recorded; anything else
/// is a command as given (its binary unknown).
pub fn invocation(command: &str) -> (String, Option<PathBuf>) {
    let path = Path::new(command);
    if path.is_file() {
        let quoted = command.replace('\'', r"'\''");
        return (
            format!("'{quoted}' mcp --config {{config}}"),
            Some(path.to_path_buf()),
        );
    }
    (command.to_string(), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peers_copy_keeps_only_the_peers_keys_and_gets_our_limit() -> Result<()> {
        let text = "application_path: tasks\nexpose:\n  agent:\n    mcp:\n      instructions: |\n        Tools.\n      confirm_over_mcp: auto\n      max_concurrent_tools: 2\n      hint_tags:\n        impact:ro: read_only\n      a_key_fiskgen_adds_later: 1\n      tool_timeout: 30s\n    tools: {}\n";
        let copy = config(text, 32)?;
        assert_eq!(
            copy,
            "application_path: tasks\nexpose:\n  agent:\n    mcp:\n      max_concurrent_tools: 32\n      instructions: |\n        Tools.\n      confirm_over_mcp: auto\n      tool_timeout: 30s\n    tools: {}\n"
        );
        assert!(config("application_path: x\n", 32).is_err());
        Ok(())
    }

    #[test]
    fn a_bare_binary_as_peer_command_runs_fisk_mcp_and_records_the_binary() -> Result<()> {
        let dir = std::env::temp_dir().join(format!("fiskgen-bench-peer-{}", std::process::id()));
        fs::create_dir_all(&dir)?;
        let binary = dir.join("fisk");
        fs::write(&binary, "")?;
        let text = binary.display().to_string();
        assert_eq!(
            invocation(&text),
            (
                format!("'{text}' mcp --config {{config}}"),
                Some(binary.clone())
            )
        );
        let command = format!("{text} mcp --config {{config}} --port {{port}}");
        assert_eq!(invocation(&command), (command.clone(), None));
        fs::remove_dir_all(&dir)?;
        Ok(())
    }
}
