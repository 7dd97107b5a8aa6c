//! Why the MCP layer cannot start or answer: the served catalog and its compiled-in
//! `tools/list` ([`CatalogError`]), and sealing approval states ([`StateError`]).

/// The served tools cannot be listed as compiled in: a generator bug (or a crate edited by
/// hand), reported at start rather than on the first request.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CatalogError {
    /// One tool name, two tools.
    #[error("the tool name {0:?} is served twice")]
    ServedTwice(&'static str),
    /// A tool's compiled-in input schema does not parse as an object.
    #[error("the input schema of tool {tool:?} is not a JSON object: {source}")]
    Schema {
        /// The tool.
        tool: &'static str,
        /// Why.
        source: serde_json::Error,
    },
    /// A page of the compiled-in `tools/list` lies outside its body.
    #[error(
        "the compiled-in tools/list page {page} lies outside its body; regenerate the server \
         with `fiskgen build`"
    )]
    PageOutside {
        /// The page, 1-based.
        page: usize,
    },
    /// The compiled-in `tools/list` has no page.
    #[error("the compiled-in tools/list has no page; regenerate the server")]
    NoPage,
    /// The compiled-in pages do not match its tool count and page size.
    #[error(
        "the compiled-in tools/list has {pages} page(s) for {tools} tools in pages of \
         {page_size}; regenerate the server with `fiskgen build`"
    )]
    PageCount {
        /// Pages compiled in.
        pages: usize,
        /// Tools compiled in.
        tools: usize,
        /// The page size compiled in.
        page_size: usize,
    },
}

/// Approval states cannot be sealed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StateError {
    /// The operating system gave no random bytes.
    #[error("no randomness available: {0}")]
    NoRandomness(getrandom::Error),
    /// rmcp's codec refused the key or the state.
    #[error(transparent)]
    Codec(#[from] rmcp::model::RequestStateError),
}
