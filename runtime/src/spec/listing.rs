//! The `tools/list` answer a generated crate compiles in: fiskgen computes it with
//! `fiskgen_contract::listing`, and [`crate::mcp::listing`] serves it (docs/runtime.md,
//! "Listing tools").

/// `tools/list` as fiskgen computed it; generated crates hold one in a static.
///
/// ```
/// use fiskgen_runtime::__private::*;
///
/// static LISTING: ListingSpec = ListingSpec {
///     tools: 1,
///     page_size: 256,
///     structured_output: true,
///     output_schema: false,
///     cursor_tag: "0123456789ab",
///     body: r#"[{"name":"a","description":"","inputSchema":{"type":"object"},"annotations":{"title":"a"}}]"#,
///     pages: &[PageSpec {
///         start: 1,
///         end: 91,
///     }],
/// };
/// # assert_eq!(LISTING.tools, 1);
/// ```
#[derive(Debug)]
pub struct ListingSpec {
    /// How many tools the body lists (the server's whole set, before narrowing).
    pub tools: usize,
    /// Tools per page (`expose.agent.mcp.page_size`); narrowing keeps it.
    pub page_size: usize,
    /// Whether command tools return `structuredContent`
    /// (`expose.agent.mcp.structured_output`).
    pub structured_output: bool,
    /// Whether their entries declare it as an `outputSchema` (`expose.agent.mcp.output_schema`;
    /// the body says so already, this tells a narrowed server's rejoined entries).
    pub output_schema: bool,
    /// What the cursors of pages 2..n start with: a digest of the body
    /// (`fiskgen_contract::cursor`, the codec of every list).
    pub cursor_tag: &'static str,
    /// Every tool's entry, as a JSON array on one line.
    pub body: &'static str,
    /// The pages, in order.
    pub pages: &'static [PageSpec],
}

/// One page of a [`ListingSpec`]: where its entries are in the body (the handler adds the
/// cursor and, for 2026-07-28 clients, the cache hints).
#[derive(Debug)]
pub struct PageSpec {
    /// The page's entries are `body[start..end]`.
    pub start: usize,
    /// See `start`.
    pub end: usize,
}
