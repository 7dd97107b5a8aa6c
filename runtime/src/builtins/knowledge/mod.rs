//! The knowledge tools over an index in Fisk AI's format: `knowledge_search` (docs/builtins.md:
//! tiers, statuses, notes and result JSON as Fisk AI answers them), `knowledge_read` (one cited
//! chunk), `knowledge_list` (the indexed documents) and `knowledge_enumerate` (which documents
//! contain a word, complete and unranked); and `<binary> knowledge index`, which
//! builds the index.

#[cfg(feature = "knowledge")]
pub(crate) mod chunk;
#[cfg(feature = "knowledge")]
pub(crate) mod commands;
#[cfg(feature = "knowledge")]
pub(crate) mod embeddings;
#[cfg(feature = "knowledge")]
pub(crate) mod enumerate;
#[cfg(feature = "knowledge")]
pub(crate) mod error;
#[cfg(feature = "knowledge")]
pub(crate) mod index;
#[cfg(feature = "knowledge")]
pub(crate) mod search;
#[cfg(feature = "knowledge")]
mod serve;
#[cfg(feature = "knowledge")]
pub(crate) mod store;
#[cfg(feature = "knowledge")]
mod walk;

#[cfg(not(feature = "knowledge"))]
mod disabled;

#[cfg(not(feature = "knowledge"))]
pub(crate) use disabled::{Knowledge, KnowledgeError, commands};
#[cfg(feature = "knowledge")]
pub(crate) use error::KnowledgeError;
#[cfg(feature = "knowledge")]
pub(crate) use serve::Knowledge;

use serde::Deserialize;

/// `knowledge_search` arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchArgs {
    /// The query; missing reads as empty (docs/builtins.md).
    #[serde(default)]
    pub(crate) query: String,
    /// Results wanted; <= 0 or missing means the configured default.
    pub(crate) top_k: Option<i64>,
}

/// `knowledge_enumerate` arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EnumerateArgs {
    /// The words to look for, in the tool's query language.
    #[serde(default)]
    pub(crate) query: String,
}

/// `knowledge_read` arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadArgs {
    /// `<path>#<ordinal>`.
    pub(crate) citation: String,
}

/// `knowledge_list` takes nothing.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListArgs {}

/// The format generation this build reads and writes (2: the exact-word table
/// `chunks_fts_exact` and its vocabulary `chunks_vocab`, which `knowledge_enumerate` reads).
#[cfg(feature = "knowledge")]
pub(crate) const FORMAT_VERSION: i64 = 2;

/// The manifest (`rag_meta`). Missing keys read as empty / zero.
#[cfg(feature = "knowledge")]
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Meta {
    /// `format_version`.
    pub(crate) format_version: i64,
    /// `model` (empty for a lexical-only index).
    pub(crate) model: String,
    /// `dimension`.
    pub(crate) dimension: usize,
    /// `normalized`.
    pub(crate) normalized: bool,
    /// `query_prefix`.
    pub(crate) query_prefix: String,
    /// `document_prefix`.
    pub(crate) document_prefix: String,
}
