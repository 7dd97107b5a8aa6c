//! `fiskgen-bench --sizes`: the size of natscli's `tools/list` in each way a server serves it
//! (whole, each group endpoint, catalog mode) beside the peer's for the same tools, in one run,
//! in bytes and in tokens, as the markdown table of docs/catalogs.md.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use rmcp::model::PaginatedRequestParams;
use rmcp::service::{Peer, RoleClient};

use crate::client::{Client, Transport};
use crate::report::Server;
use crate::servers::{free_port, server_command, start, wait_until_listening};
use crate::{Options, Setup, TOOL_SLOTS, peer};

/// The tokenizer, as the table names it (its package version is pinned in bench/tokens).
pub const TOKENIZER: &str = "o200k_base, npm js-tiktoken 1.0.21 (bench/tokens/count.mjs)";

/// One measured list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// What was listed (`/mcp`, `/mcp/stream`, `peer /mcp` ...).
    pub label: String,
    /// Tools over all pages.
    pub tools: usize,
    /// The pages' `result` objects as compact JSON, summed.
    pub bytes: usize,
    /// Their tokens, summed.
    pub tokens: usize,
}

/// The markdown table of `rows`, with each list's share of the first row (ours, whole).
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| List | Tools | Bytes | Tokens | Bytes vs whole |\n| --- | ---: | ---: | ---: | ---: |\n",
    );
    let whole = rows.first().map_or(0, |row| row.bytes);
    for row in rows {
        let share = if whole == 0 {
            "-".to_string()
        } else {
            format!("{:.2}x", row.bytes as f64 / whole as f64)
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {share} |\n",
            row.label, row.tools, row.bytes, row.tokens
        ));
    }
    out
}

/// The groups a server names when asked for one it does not have (`--group` is refused with
/// "its groups are: a, b, c").
pub fn groups_named(refusal: &str) -> Vec<String> {
    refusal
        .split_once("its groups are: ")
        .map(|(_, names)| names.lines().next().unwrap_or_default())
        .filter(|names| *names != "(none)")
        .map(|names| {
            names
                .split(", ")
                .map(|name| name.trim().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Every page of `tools/list`: the tools and each page's `result` as compact JSON.
async fn pages(peer: &Peer<RoleClient>) -> Result<(usize, Vec<String>)> {
    let (mut tools, mut pages) = (0, Vec::new());
    let mut cursor: Option<String> = None;
    loop {
        let params = cursor
            .take()
            .map(|cursor| PaginatedRequestParams::default().with_cursor(Some(cursor)));
        let result = peer.list_tools(params).await.context("tools/list")?;
        tools += result.tools.len();
        pages.push(serde_json::to_string(&result).context("tools/list result")?);
        match result.next_cursor {
            Some(next) if pages.len() < 10_000 => cursor = Some(next),
            Some(_) => bail!("tools/list did not end within 10000 pages"),
            None => return Ok((tools, pages)),
        }
    }
}

/// The token count of each text, by bench/tokens/count.mjs (`npm ci` there first).
fn count_tokens(texts: &[String]) -> Result<Vec<usize>> {
    let script = fiskgen_tests::apps::workspace_root().join("bench/tokens/count.mjs");
    let mut child = std::process::Command::new("node")
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("running node {}", script.display()))?;
    child
        .stdin
        .take()
        .context("node's stdin")?
        .write_all(serde_json::to_string(texts)?.as_bytes())
        .context("writing to node")?;
    let output = child.wait_with_output().context("waiting for node")?;
    if !output.status.success() {
        bail!(
            "node {} failed ({}); run `npm ci` in bench/tokens",
            script.display(),
            output.status
        );
    }
    let counts: Vec<usize> = serde_json::from_slice(&output.stdout).context("node's counts")?;
    if counts.len() != texts.len() {
        bail!("node counted {} texts of {}", counts.len(), texts.len());
    }
    Ok(counts)
}

/// A row for `label` from one client's list.
async fn row(label: String, client: &Client) -> Result<Row> {
    let (tools, pages) = pages(&client.peer()).await?;
    let tokens = count_tokens(&pages)?.into_iter().sum();
    let bytes = pages.iter().map(String::len).sum();
    eprintln!("fiskgen-bench: {label}: {tools} tools, {bytes} bytes, {tokens} tokens");
    Ok(Row {
        label,
        tools,
        bytes,
        tokens,
    })
}

/// Our server on HTTP with `extra` flags: its `/mcp` row, then each group's.
async fn ours(setup: &Setup, extra: &[&str], label: &str, groups: &[String]) -> Result<Vec<Row>> {
    let port = free_port()?;
    let mut command = server_command(setup, Server::Ours(Transport::Modern), Some(port))?;
    command
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    let began = Instant::now();
    let mut child = command.spawn().context("starting our server")?;
    let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    wait_until_listening(
        &mut child,
        address,
        began,
        Server::Ours(Transport::Modern),
        setup,
    )
    .await?;
    let mut rows = Vec::new();
    let whole = format!("http://127.0.0.1:{port}/mcp");
    for (path, name) in std::iter::once((whole.clone(), format!("fiskgen {label} /mcp"))).chain(
        groups.iter().map(|group| {
            (
                format!("{whole}/{group}"),
                format!("fiskgen {label} /mcp/{group}"),
            )
        }),
    ) {
        let client = Client::http(&path, Transport::Modern).await?;
        let measured = row(name, &client).await;
        client.close().await;
        rows.push(measured?);
    }
    let _ = child.kill().await;
    Ok(rows)
}

/// Measures the whole natscli server (`setup`) whole, on each group endpoint and in catalog
/// mode, and the peer (`options.peer_command`) on the same config; the table.
pub(crate) async fn measure(options: &Options, setup: &Setup) -> Result<String> {
    let refused = std::process::Command::new(&setup.server)
        .args(["--group", "-", "--stdio", "--application-path"])
        .arg(&setup.app)
        .output()
        .with_context(|| format!("running {}", setup.server.display()))?;
    let groups = groups_named(&String::from_utf8_lossy(&refused.stderr));
    if groups.is_empty() {
        bail!("{} named no groups", setup.server.display());
    }
    let mut rows = ours(setup, &[], "whole", &groups).await?;
    rows.extend(ours(setup, &["--catalog", "search"], "catalog", &[]).await?);
    peer::write_config(&setup.config, &setup.workdir, TOOL_SLOTS)?;
    let (running, _, _) = start(options, setup, Server::Peer).await?;
    let measured = row("peer (Fisk AI) /mcp".to_string(), &running.client).await;
    running.stop().await;
    rows.insert(1, measured?);
    Ok(table(&rows))
}

/// Measures (as `measure`) `server` (built from bench/nats-all.yaml) with `app`, in `workdir`.
pub fn run(options: &Options, server: &Path, app: &Path, workdir: &Path) -> Result<String> {
    std::fs::create_dir_all(workdir).with_context(|| format!("creating {}", workdir.display()))?;
    let setup = Setup {
        name: "nats",
        config: fiskgen_tests::apps::workspace_root().join("bench/nats-all.yaml"),
        server: std::path::absolute(server).context("the server's path")?,
        app: std::path::absolute(app).context("the application's path")?,
        tool: "context_ls",
        workdir: workdir.to_path_buf(),
        crate_dir: None,
    };
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?
        .block_on(measure(options, &setup))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_gives_each_list_its_share_of_our_whole_list() {
        let row = |label: &str, tools, bytes, tokens| Row {
            label: label.to_string(),
            tools,
            bytes,
            tokens,
        };
        assert_eq!(
            table(&[row("whole", 2, 400, 100), row("peer", 2, 500, 120)]),
            "| List | Tools | Bytes | Tokens | Bytes vs whole |\n| --- | ---: | ---: | ---: | ---: |\n\
             | whole | 2 | 400 | 100 | 1.00x |\n| peer | 2 | 500 | 120 | 1.25x |\n"
        );
    }

    #[test]
    fn the_groups_come_from_the_servers_refusal_of_an_unknown_one() {
        assert_eq!(
            groups_named(
                "--group \"-\": this server has no such group; its groups are: stream, kv\n"
            ),
            ["stream", "kv"]
        );
        assert!(groups_named("its groups are: (none)\n").is_empty());
        assert!(groups_named("something else").is_empty());
    }
}
