//! The one MCP client every measurement uses: rmcp's client, over streamable HTTP (legacy
//! `initialize` sessions or the stateless 2026-07-28 revision) or over a child's stdio.

use std::process::Stdio;

use anyhow::{Context, Result, anyhow, bail};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    PaginatedRequestParams, ProtocolVersion,
};
use rmcp::service::{Peer, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientCacheConfig, ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::{Map, Value};

/// How the client reaches the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Streamable HTTP, legacy era: `initialize`, a session, protocol 2025-11-25.
    Legacy,
    /// Streamable HTTP, 2026-07-28: `server/discover`, self-contained requests, no session.
    Modern,
    /// Newline-delimited JSON-RPC over the server's stdin/stdout (legacy handshake).
    Stdio,
}

impl Transport {
    /// A short label for reports.
    pub fn label(self) -> &'static str {
        match self {
            Transport::Legacy => "HTTP legacy",
            Transport::Modern => "HTTP 2026-07-28",
            Transport::Stdio => "stdio",
        }
    }
}

/// A connected client.
pub(crate) struct Client {
    service: RunningService<RoleClient, ClientConfig>,
}

fn config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("fiskgen-bench", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::V_2025_11_25)
}

/// The HTTP client: one that keeps its connections open between requests, as the clients
/// people use do (Node's fetch, Python's httpx). rmcp's default keeps none idle, so every
/// request would pay for a new TCP connection on both sides (docs/benchmarks.md).
pub(crate) fn pooled_http_client() -> Result<reqwest::Client> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .context("building the HTTP client")
}

impl Client {
    /// Connects over HTTP to `url` (the handshake included).
    pub(crate) async fn http(url: &str, transport: Transport) -> Result<Client> {
        let http = StreamableHttpClientTransport::with_client(
            pooled_http_client()?,
            StreamableHttpClientTransportConfig::with_uri(url.to_string()),
        );
        let service = match transport {
            Transport::Legacy => config().serve(http).await,
            Transport::Modern => {
                config()
                    .serve_with_lifecycle(
                        http,
                        ClientLifecycleMode::Discover {
                            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                        },
                    )
                    .await
            }
            Transport::Stdio => bail!("stdio is not an HTTP transport"),
        }
        .map_err(|e| anyhow!("connecting to {url} ({}): {e}", transport.label()))?;
        Ok(Client::ready(service).await)
    }

    /// Starts `command` and connects over its stdio; returns the client and the child's pid.
    pub(crate) async fn stdio(
        command: tokio::process::Command,
        stderr: Stdio,
    ) -> Result<(Client, u32)> {
        let (child, _) = TokioChildProcess::builder(command)
            .stderr(stderr)
            .spawn()
            .context("starting the stdio server")?;
        let pid = child.id().context("the stdio server has no pid")?;
        let service = config()
            .serve(child)
            .await
            .map_err(|e| anyhow!("connecting over stdio: {e}"))?;
        Ok((Client::ready(service).await, pid))
    }

    async fn ready(service: RunningService<RoleClient, ClientConfig>) -> Client {
        // Every tools/list must reach the server: no client-side response cache.
        service
            .peer()
            .set_response_cache_config(ClientCacheConfig::disabled())
            .await;
        Client { service }
    }

    /// A handle for concurrent requests on the same connection or session.
    pub(crate) fn peer(&self) -> Peer<RoleClient> {
        self.service.peer().clone()
    }

    /// Closes the client.
    pub(crate) async fn close(self) {
        let _ = self.service.cancel().await;
    }
}

/// `tools/list`: the number of tools served.
pub(crate) async fn list_tools(peer: &Peer<RoleClient>) -> Result<usize> {
    let result = peer.list_tools(None).await.context("tools/list")?;
    if result.tools.is_empty() {
        bail!("tools/list returned no tools");
    }
    Ok(result.tools.len())
}

/// Every page of `tools/list`, followed by cursor: the tools, the size of the answers' `result`
/// objects and of the tools' input schemas, both as compact JSON from rmcp's types (the same
/// serializer for both, so their ratio is the body's overhead over the schemas).
pub(crate) async fn list_sizes(peer: &Peer<RoleClient>) -> Result<ListSizes> {
    let mut sizes = ListSizes::default();
    let mut cursor: Option<String> = None;
    loop {
        let params = cursor
            .take()
            .map(|cursor| PaginatedRequestParams::default().with_cursor(Some(cursor)));
        let result = peer.list_tools(params).await.context("tools/list")?;
        sizes.pages += 1;
        sizes.body_bytes += serde_json::to_vec(&result)
            .context("tools/list result")?
            .len();
        for tool in &result.tools {
            sizes.tools += 1;
            sizes.input_schema_bytes += json_len(tool.input_schema.as_ref())?;
            if let Some(output) = &tool.output_schema {
                sizes.output_schema_bytes += json_len(output.as_ref())?;
            }
            sizes.text_bytes +=
                json_len(&tool.name)? + json_len(&tool.title)? + json_len(&tool.description)?;
            if let Some(annotations) = &tool.annotations {
                sizes.annotation_bytes += json_len(annotations)?;
            }
        }
        match result.next_cursor {
            Some(next) if sizes.pages < 10_000 => cursor = Some(next),
            Some(_) => bail!("tools/list did not end within 10000 pages"),
            None => return Ok(sizes),
        }
    }
}

/// What `list_sizes` measured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListSizes {
    /// Tools over all pages.
    pub tools: usize,
    /// Pages.
    pub pages: usize,
    /// The `result` objects, summed.
    pub body_bytes: usize,
    /// The input schemas, summed.
    pub input_schema_bytes: usize,
    /// The output schemas, summed.
    pub output_schema_bytes: usize,
    /// The tools' names, titles and descriptions, as JSON strings, summed.
    pub text_bytes: usize,
    /// The `annotations` objects, summed.
    pub annotation_bytes: usize,
}

/// The compact JSON size of a value.
fn json_len<T: serde::Serialize + ?Sized>(value: &T) -> Result<usize> {
    Ok(serde_json::to_vec(value)
        .context("serializing a tool")?
        .len())
}

/// `tools/call` without arguments: the result, which must not be an error and must carry
/// something (a peer such as `fisk mcp` answers with text content only, no structuredContent).
pub(crate) async fn call_tool(peer: &Peer<RoleClient>, tool: &str) -> Result<CallToolResult> {
    let result = peer
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(Map::new()))
        .await
        .with_context(|| format!("tools/call {tool}"))?;
    if result.is_error == Some(true) {
        bail!("tools/call {tool} failed: {:?}", result.content);
    }
    if result.content.is_empty() && result.structured_content.is_none() {
        bail!("tools/call {tool} answered neither content nor structuredContent");
    }
    Ok(result)
}

/// The structured result of a call to one of our servers, which always send one.
pub(crate) fn structured(result: CallToolResult, tool: &str) -> Result<Value> {
    result
        .structured_content
        .with_context(|| format!("tools/call {tool}: no structured result"))
}
