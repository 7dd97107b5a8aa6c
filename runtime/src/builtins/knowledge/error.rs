//! Why the knowledge subsystem fails: reading the index ([`StoreError`]), the embeddings
//! endpoint ([`EmbeddingsError`]), a knowledge tool's call ([`KnowledgeError`]), building the
//! index ([`IndexError`]) and the `knowledge` commands ([`CommandError`]). Each text is what a
//! client or an operator reads (docs/builtins.md, "Knowledge").

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use super::{FORMAT_VERSION, Meta};
use crate::duration;

/// Why the index cannot be read, or holds what this build or configuration cannot serve.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StoreError {
    /// The manifest (`rag_meta`) cannot be read.
    #[error("reading the knowledge manifest: {0}")]
    ReadManifest(#[source] rusqlite::Error),
    /// The manifest cannot be written.
    #[error("writing the knowledge manifest: {0}")]
    WriteManifest(#[source] rusqlite::Error),
    /// Asking SQLite about FTS5 failed.
    #[error("checking FTS5 support: {0}")]
    CheckFts5(#[source] rusqlite::Error),
    /// This SQLite lacks FTS5.
    #[error("this SQLite build was compiled without FTS5")]
    NoFts5,
    /// The index was written by a newer format generation.
    #[error(
        "knowledge index format is newer than this build supports: index \
         format_version={format_version}, this build supports up to {max}; upgrade this \
         server",
        max = FORMAT_VERSION
    )]
    TooNew {
        /// The index's `format_version`.
        format_version: i64,
    },
    /// The index was written in an older format than this build reads (Fisk AI's gate).
    #[error(
        "knowledge index was built in an older format and cannot be read by this build: {why}; \
         rebuild it with '{reindex}'"
    )]
    TooOld {
        /// What is older: the `format_version`, the `chunks` columns, or missing objects.
        why: String,
        /// The command that rebuilds.
        reindex: String,
    },
    /// The configuration asks for vectors; the index has none.
    #[error(
        "knowledge index was built with a different embedding configuration: config requests \
         embeddings model={model:?} but the index was built lexical-only; run '{reindex}'"
    )]
    BuiltLexical {
        /// The configured model.
        model: String,
        /// The command that rebuilds.
        reindex: String,
    },
    /// The vectors were built with another model, other prefixes, or not normalised.
    #[error(
        "knowledge index was built with a different embedding configuration: index built with \
         model={:?} query_prefix={:?} document_prefix={:?} normalized={}; config requests \
         model={:?} query_prefix={:?} document_prefix={:?}; run '{reindex}'",
        .built.model, .built.query_prefix, .built.document_prefix, .built.normalized,
        .wanted.model, .wanted.query_prefix, .wanted.document_prefix
    )]
    BuiltOtherwise {
        /// The manifest.
        built: Box<Meta>,
        /// What the configuration asks for.
        wanted: Box<Identity>,
        /// The command that rebuilds.
        reindex: String,
    },
    /// The index file exists but its metadata cannot be read.
    #[error("cannot read the knowledge index {path}: {source}")]
    Unreadable {
        /// The index file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The index file cannot be opened read-only.
    #[error("opening the knowledge index {path}: {source}")]
    Open {
        /// The index file.
        path: PathBuf,
        /// Why.
        source: rusqlite::Error,
    },
    /// The lexical tier's query failed.
    #[error("lexical search: {0}")]
    Lexical(#[source] rusqlite::Error),
    /// The vector tier's query failed.
    #[error("vector search: {0}")]
    Vector(#[source] rusqlite::Error),
    /// The ranked chunks cannot be read.
    #[error("hydrating results: {0}")]
    Hydrate(#[source] rusqlite::Error),
}

/// The vector identity a configuration asks for, owned (for [`StoreError::BuiltOtherwise`]).
#[derive(Debug)]
pub(crate) struct Identity {
    /// The model.
    pub(crate) model: String,
    /// The query prefix.
    pub(crate) query_prefix: String,
    /// The document prefix.
    pub(crate) document_prefix: String,
}

/// Why the embeddings settings are refused, or a request to the endpoint failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EmbeddingsError {
    /// No `base_url`.
    #[error("knowledge.embeddings.base_url is required when the embeddings block is present")]
    NoBaseUrl,
    /// No `model`.
    #[error("knowledge.embeddings.model is required when the embeddings block is present")]
    NoModel,
    /// A `base_url` this client refuses.
    #[error("knowledge.embeddings.base_url {base:?} {why}")]
    BaseUrl {
        /// The URL, without a trailing slash.
        base: String,
        /// What is wrong with it.
        why: UrlProblem,
    },
    /// One query, several vectors.
    #[error("the embeddings server returned more than one vector for one query")]
    NotOneVector,
    /// The dimension probe came back empty.
    #[error("embeddings server at {base} returned an empty dimension probe for model {model:?}")]
    EmptyProbe {
        /// The endpoint.
        base: String,
        /// The model.
        model: String,
    },
    /// An input with nothing to embed.
    #[error("embedding input {index} is empty")]
    EmptyInput {
        /// Its position in the request.
        index: usize,
    },
    /// An input over the size limit.
    #[error("embedding input {index} is too large: {size} bytes, limit is {limit}")]
    InputTooLarge {
        /// Its position in the request.
        index: usize,
        /// Its size in bytes.
        size: usize,
        /// The limit in bytes.
        limit: usize,
    },
    /// The tool's deadline left no time for the request.
    #[error("no time left for the embeddings request within the tool timeout")]
    NoTimeLeft,
    /// The request failed.
    #[error("contacting embeddings server at {base}: {why}")]
    Contact {
        /// The endpoint.
        base: String,
        /// Why.
        why: HttpFailure,
    },
    /// The response body could not be read.
    #[error("reading embeddings response: {0}")]
    ReadResponse(HttpFailure),
    /// A status other than 200.
    #[error("embeddings server at {base} returned {status}: {body}")]
    Status {
        /// The endpoint.
        base: String,
        /// The status.
        status: http::StatusCode,
        /// The body, trimmed.
        body: String,
    },
    /// The body is not the OpenAI response shape.
    #[error("decoding embeddings response: {0}")]
    Decode(#[source] serde_json::Error),
    /// The body carries an error message.
    #[error("embeddings server at {base} reported: {message}")]
    Reported {
        /// The endpoint.
        base: String,
        /// The server's message.
        message: String,
    },
    /// Not one vector per input.
    #[error("embeddings server returned {got} vectors for {count} inputs")]
    VectorCount {
        /// Vectors returned.
        got: usize,
        /// Inputs sent.
        count: usize,
    },
    /// An `index` outside the inputs.
    #[error("embeddings server returned out-of-range index {index} for {count} inputs")]
    OutOfRange {
        /// The index.
        index: i64,
        /// Inputs sent.
        count: usize,
    },
    /// Two vectors for one input.
    #[error("embeddings server returned duplicate index {index}")]
    Duplicate {
        /// The index.
        index: i64,
    },
    /// An empty vector.
    #[error("embeddings server returned an empty vector at index {index}")]
    EmptyVector {
        /// The index.
        index: i64,
    },
}

/// What is wrong with a `base_url` (the text follows the quoted URL).
#[derive(Debug, thiserror::Error)]
pub(crate) enum UrlProblem {
    /// Not a URI.
    #[error("is not a valid URL: {0}")]
    Invalid(#[source] http::uri::InvalidUri),
    /// No authority.
    #[error("has no host")]
    NoHost,
    /// `user:password@`.
    #[error("must not contain user info; put the key in the variable named by api_key_env")]
    UserInfo,
    /// Plain `http` to a host that is not loopback.
    #[error(
        "must use https for a host that is not loopback (plain http is allowed only for \
         localhost, 127.0.0.0/8 and ::1)"
    )]
    PlainHttp,
    /// `https` without the TLS feature.
    #[error(
        "uses https, but this server was built without TLS support for embeddings (the \
         fiskgen-runtime feature embeddings-tls)"
    )]
    NoTls,
    /// Another scheme.
    #[error("must be an http or https URL")]
    Scheme,
}

/// An HTTP failure in words; a timeout says how long it waited.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HttpFailure {
    /// The configured (or remaining) time ran out.
    #[error("timed out after {}", duration::format(*.after))]
    TimedOut {
        /// How long it waited.
        after: Duration,
    },
    /// Anything else.
    #[error(transparent)]
    Other(Box<ureq::Error>),
}

/// Why a knowledge tool's call failed (or the index cannot be served at start).
#[derive(Debug, thiserror::Error)]
pub(crate) enum KnowledgeError {
    /// The index cannot be read, or does not match.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The embeddings settings are refused.
    #[error(transparent)]
    Embeddings(#[from] EmbeddingsError),
    /// No index file yet (`knowledge_read`; the other tools answer `index_not_built`).
    #[error("the knowledge index has not been built yet; run: {index_command}")]
    NotBuilt {
        /// `<binary> knowledge index`.
        index_command: String,
    },
    /// The chunks cannot be counted.
    #[error("counting chunks: {0}")]
    CountChunks(#[source] rusqlite::Error),
    /// The model's vectors no longer fit the index.
    #[error(
        "embedding dimension does not match the index: model {model:?} now emits dimension \
         {emits} but the index was built at {built}; run '{reindex}'"
    )]
    Dimension {
        /// The model.
        model: String,
        /// The dimension it emits now.
        emits: usize,
        /// The dimension in the manifest.
        built: usize,
        /// The command that rebuilds.
        reindex: String,
    },
    /// A `knowledge_enumerate` query its language refuses, with the fix.
    #[error("{0}")]
    Query(String),
    /// A `knowledge_read` argument that is not a citation.
    #[error(
        "{shown} is not a citation: expected <document path>#<chunk number>, as \
         knowledge_search returns them (for example docs/guide.md#3)"
    )]
    NotACitation {
        /// The argument, quoted.
        shown: String,
    },
    /// A query of `knowledge_read` or `knowledge_list` failed.
    #[error("reading the knowledge index: {0}")]
    Read(#[source] rusqlite::Error),
    /// The cited document is not indexed.
    #[error("no indexed document {document}; knowledge_list shows the indexed documents")]
    NoDocument {
        /// The document's path, quoted.
        document: String,
    },
    /// The cited document has no chunks at all.
    #[error("{document} has no chunks, so {shown} does not exist")]
    NoChunks {
        /// The document's path, quoted.
        document: String,
        /// The citation, quoted.
        shown: String,
    },
    /// The cited chunk is past the document's last.
    #[error("{document} has chunks #0 to #{last}; {shown} does not exist")]
    NoSuchChunk {
        /// The document's path, quoted.
        document: String,
        /// The last chunk's number.
        last: i64,
        /// The citation, quoted.
        shown: String,
    },
    /// The answer could not be encoded as JSON.
    #[error("encoding the answer: {0}")]
    Encode(#[from] serde_json::Error),
}

/// Why `<binary> knowledge index` failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum IndexError {
    /// The index's manifest or SQLite itself.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// No paths given.
    #[error("nothing to index: give one or more paths")]
    NoPaths,
    /// A given path cannot be read.
    #[error("cannot index {path}: {source}")]
    Missing {
        /// The path as given.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The knowledge directory cannot be created.
    #[error("creating the knowledge directory {path}: {source}")]
    CreateDirectory {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The index file cannot be created.
    #[error("creating the knowledge index {path}: {source}")]
    CreateIndex {
        /// The index file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// SQLite refused the index file.
    #[error("knowledge index {path}: {source}")]
    Database {
        /// The index file.
        path: PathBuf,
        /// Why.
        source: rusqlite::Error,
    },
    /// The schema cannot be created.
    #[error("creating the knowledge schema: {0}")]
    Schema(#[source] rusqlite::Error),
    /// `--reindex` cannot clear the index.
    #[error("resetting the index for --reindex: {0}")]
    Reset(#[source] rusqlite::Error),
    /// The lock file cannot be opened.
    #[error("opening {path}: {source}")]
    OpenLock {
        /// The lock file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Another writer holds the lock.
    #[error("another knowledge index is already running")]
    Busy,
    /// Taking the lock failed.
    #[error("locking {path}: {source}")]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The index (or a WAL file) is a symbolic link.
    #[error("knowledge index path {path} is a symlink; refusing to follow it")]
    Symlink {
        /// The link.
        path: PathBuf,
    },
    /// The index's permissions cannot be set.
    #[error("setting permissions of {path}: {source}")]
    Permissions {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Counting rows failed.
    #[error("reading the knowledge index: {0}")]
    Count(#[source] rusqlite::Error),
    /// The model's dimension cannot be learnt.
    #[error("probing the embedding dimension: {0}")]
    Probe(#[source] EmbeddingsError),
    /// The model's dimension differs from the manifest's.
    #[error(
        "knowledge index was built with a different embedding configuration: manifest built \
         with model={built_model} dim={built}; config requests model={model} dim={dimension} - \
         run '{reindex}'"
    )]
    DimensionChanged {
        /// The manifest's model.
        built_model: String,
        /// The manifest's dimension.
        built: usize,
        /// The configured model.
        model: String,
        /// The probed dimension.
        dimension: usize,
        /// The command that rebuilds.
        reindex: String,
    },
    /// Vectors asked of an index that holds lexical-only chunks.
    #[error(
        "knowledge index was built with a different embedding configuration: the existing index \
         is lexical-only but config now requests embeddings model={model} - run '{reindex}'"
    )]
    NowVectors {
        /// The configured model.
        model: String,
        /// The command that rebuilds.
        reindex: String,
    },
    /// The `vec0` table cannot be created.
    #[error("creating the vector table (dimension {dimension}): {source}")]
    VectorTable {
        /// The dimension.
        dimension: usize,
        /// Why.
        source: rusqlite::Error,
    },
    /// A file or directory cannot be read.
    #[error("reading {path}: {source}")]
    Read {
        /// The path.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Storing one document failed.
    #[error("indexing {key:?}: {source}")]
    Document {
        /// The document's key.
        key: String,
        /// Why.
        source: rusqlite::Error,
    },
    /// Embedding one document failed.
    #[error("indexing {key:?}: embedding: {source}")]
    Embed {
        /// The document's key.
        key: String,
        /// Why.
        source: EmbeddingsError,
    },
    /// Not one vector per chunk.
    #[error("indexing {key:?}: the embedder returned {vectors} vectors for {chunks} chunks")]
    VectorCount {
        /// The document's key.
        key: String,
        /// Vectors returned.
        vectors: usize,
        /// Chunks sent.
        chunks: usize,
    },
}

/// Why `<binary> knowledge index` or `knowledge status` failed (printed after `error: `).
#[derive(Debug, thiserror::Error)]
pub(crate) enum CommandError {
    /// The working directory cannot be read (the index lives below it).
    #[error("reading the working directory: {0}")]
    WorkingDirectory(#[source] io::Error),
    /// Neither the command line nor the configuration names paths.
    #[error(
        "nothing to index: give the files or directories to index (no harness.knowledge.paths \
         were configured)"
    )]
    NoConfiguredPaths,
    /// `knowledge status` cannot count.
    #[error("reading the index: {0}")]
    Count(#[source] rusqlite::Error),
    /// The embeddings settings are refused.
    #[error(transparent)]
    Embeddings(#[from] EmbeddingsError),
    /// The index cannot be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Indexing failed.
    #[error(transparent)]
    Index(#[from] IndexError),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The composed texts, as clients and operators read them (and as tests of the servers and
    /// Fisk AI's own wording pin them).
    #[test]
    fn texts_read_as_before_the_errors_were_typed() {
        let built = Meta {
            format_version: 2,
            model: "m".into(),
            dimension: 3,
            normalized: false,
            query_prefix: "q: ".into(),
            document_prefix: String::new(),
        };
        let cases: [(Box<dyn std::error::Error>, &str); 8] = [
            (
                Box::new(StoreError::TooNew { format_version: 3 }),
                "knowledge index format is newer than this build supports: index \
                 format_version=3, this build supports up to 2; upgrade this server",
            ),
            (
                Box::new(StoreError::BuiltOtherwise {
                    built: Box::new(built),
                    wanted: Box::new(Identity {
                        model: "n".into(),
                        query_prefix: String::new(),
                        document_prefix: "d: ".into(),
                    }),
                    reindex: "x-mcp knowledge index --reindex".into(),
                }),
                "knowledge index was built with a different embedding configuration: index \
                 built with model=\"m\" query_prefix=\"q: \" document_prefix=\"\" \
                 normalized=false; config requests model=\"n\" query_prefix=\"\" \
                 document_prefix=\"d: \"; run 'x-mcp knowledge index --reindex'",
            ),
            (
                Box::new(EmbeddingsError::BaseUrl {
                    base: "ftp://h".into(),
                    why: UrlProblem::Scheme,
                }),
                "knowledge.embeddings.base_url \"ftp://h\" must be an http or https URL",
            ),
            (
                Box::new(EmbeddingsError::Contact {
                    base: "http://127.0.0.1:9/v1".into(),
                    why: HttpFailure::TimedOut {
                        after: Duration::from_millis(1500),
                    },
                }),
                "contacting embeddings server at http://127.0.0.1:9/v1: timed out after 1.5s",
            ),
            (
                Box::new(KnowledgeError::NotBuilt {
                    index_command: "x-mcp knowledge index".into(),
                }),
                "the knowledge index has not been built yet; run: x-mcp knowledge index",
            ),
            (
                Box::new(KnowledgeError::NoSuchChunk {
                    document: "\"a.md\"".into(),
                    last: 2,
                    shown: "\"a.md#7\"".into(),
                }),
                "\"a.md\" has chunks #0 to #2; \"a.md#7\" does not exist",
            ),
            (
                Box::new(IndexError::DimensionChanged {
                    built_model: "m".into(),
                    built: 3,
                    model: "m".into(),
                    dimension: 4,
                    reindex: "r".into(),
                }),
                "knowledge index was built with a different embedding configuration: manifest \
                 built with model=m dim=3; config requests model=m dim=4 - run 'r'",
            ),
            (
                Box::new(IndexError::Symlink {
                    path: PathBuf::from("k/knowledge.db"),
                }),
                "knowledge index path k/knowledge.db is a symlink; refusing to follow it",
            ),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_string(), text);
        }
    }
}
