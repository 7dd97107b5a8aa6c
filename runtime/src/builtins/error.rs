//! Why a built-in call fails: the text a client sees, named by the tool
//! ([`BuiltinError`]), and why a server cannot start its built-ins ([`StartError`]).

use std::io;

use super::files::FileError;
use super::knowledge::KnowledgeError;

/// A failed call of a built-in: `<tool>: <why>`, the text of the error result.
#[derive(Debug, thiserror::Error)]
#[error("{tool}: {source}")]
pub(crate) struct BuiltinError {
    /// The tool's name.
    pub(crate) tool: &'static str,
    /// Why.
    pub(crate) source: ToolError,
}

/// Why a built-in call failed, without the tool's name.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ToolError {
    /// The path may not be read.
    #[error(transparent)]
    File(#[from] FileError),
    /// A file over `read_file`'s `max_bytes`.
    #[error(
        "{shown} is {size} bytes, more than this server lets read_file open ({max} bytes, \
         max_bytes)"
    )]
    TooLargeToRead {
        /// The path, quoted.
        shown: String,
        /// Its size.
        size: u64,
        /// `max_bytes`.
        max: u64,
    },
    /// An offset past the end of the file.
    #[error("offset {offset} is past the end of {shown} ({size} bytes)")]
    PastTheEnd {
        /// The offset asked for.
        offset: u64,
        /// The path, quoted.
        shown: String,
        /// The file's size.
        size: u64,
    },
    /// Content that is not text.
    #[error("{shown} is not a text file ({why}); use base64_encode to get its bytes")]
    Binary {
        /// The path, quoted.
        shown: String,
        /// What gave it away.
        why: &'static str,
    },
    /// A text over `base64_encode`'s `max_bytes`.
    #[error("the text is {size} bytes; base64_encode encodes at most {max} bytes (max_bytes)")]
    TextTooLarge {
        /// Its size.
        size: usize,
        /// `max_bytes`.
        max: u64,
    },
    /// A file over `base64_encode`'s `max_bytes`.
    #[error("{shown} is {size} bytes; base64_encode encodes at most {max} bytes (max_bytes)")]
    TooLargeToEncode {
        /// The path, quoted.
        shown: String,
        /// Its size.
        size: u64,
        /// `max_bytes`.
        max: u64,
    },
    /// A file that grew past `max_bytes` while it was read.
    #[error("{shown} grew past {max} bytes while it was read (max_bytes)")]
    Grew {
        /// The path, quoted.
        shown: String,
        /// `max_bytes`.
        max: u64,
    },
    /// Reading an opened file failed.
    #[error("reading {shown}: {source}")]
    Read {
        /// The path, quoted.
        shown: String,
        /// Why.
        source: io::Error,
    },
    /// The answer could not be encoded as JSON.
    #[error("encoding the answer: {0}")]
    Encode(#[from] serde_json::Error),
    /// The knowledge tools are served but no index was opened.
    #[error("the knowledge index is not configured")]
    NoKnowledge,
    /// A knowledge tool failed.
    #[error(transparent)]
    Knowledge(#[from] KnowledgeError),
    /// The arguments do not belong to the tool (a bug, never a client's doing).
    #[error("internal error: the arguments were prepared for another tool")]
    Mismatch,
}

/// Why a server cannot start its built-ins.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StartError {
    /// The knowledge tools of one server must share one knowledge spec.
    #[error(
        "the knowledge tools use different knowledge settings ({tool} differs); they must share \
         one"
    )]
    MixedKnowledge {
        /// The first tool whose settings differ.
        tool: &'static str,
    },
    /// The working directory cannot be read (built-ins resolve paths against it).
    #[error("reading the working directory: {0}")]
    WorkingDirectory(io::Error),
    /// The knowledge index cannot be opened.
    #[error("cannot expose knowledge_search over MCP: {0}")]
    Knowledge(#[source] KnowledgeError),
}
