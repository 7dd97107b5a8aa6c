//! A hand-written built-ins-only server spec, shaped like what fiskgen generates for
//! `harness.tools: [read_file, base64_encode]` and `harness.knowledge.enabled: true`. The
//! runtime's integration tests run it in a scratch working directory.
//!
//! `BUILTIN_PROFILE` picks the settings: `lexical` (default), `confirm` (`read_file` gated by
//! `ai:confirm`), `roots` (`read_file` confined to `public/`, `base64_encode` capped at 16 bytes),
//! `hybrid` (embeddings at `BUILTIN_EMBEDDINGS_URL`, model `all-minilm-l6-v2`).

use std::process::ExitCode;
use std::time::Duration;

use fiskgen_runtime::__private::{
    AppSpec, Builtin, DocsSpec, EmbeddingsSpec, FileAccess, Hints, KnowledgeSpec, Run, Settings,
    ToolSpec,
};

const READ_ONLY: Hints = Hints {
    read_only: true,
    destructive: false,
    idempotent: false,
    open_world: false,
    additive: false,
};

const READ_FILE_SCHEMA: &str = r#"{"type":"object","additionalProperties":false,"properties":{"path":{"type":"string","description":"Path of the file, relative to the server's working directory or absolute"},"offset":{"type":"integer","minimum":0,"description":"Byte offset to start reading at (default 0)"},"length":{"type":"integer","minimum":1,"description":"Number of bytes to read (default and maximum 65536)"}},"required":["path"]}"#;
const BASE64_SCHEMA: &str = r#"{"type":"object","additionalProperties":false,"properties":{"text":{"type":"string","description":"Text to encode (UTF-8)"},"path":{"type":"string","description":"File whose bytes to encode, instead of text"}}}"#;
const SEARCH_SCHEMA: &str = r#"{"type":"object","additionalProperties":false,"properties":{"query":{"type":"string","description":"Natural-language query"},"top_k":{"type":"integer","description":"Number of results; defaults to the configured value and is capped at 20"}},"required":["query"]}"#;
const READ_SCHEMA: &str = r#"{"type":"object","additionalProperties":false,"properties":{"citation":{"type":"string","description":"A citation from a knowledge_search result, such as docs/guide.md#3"}},"required":["citation"]}"#;
const LIST_SCHEMA: &str = r#"{"type":"object","additionalProperties":false,"properties":{}}"#;

fn tool(
    name: &'static str,
    description: &'static str,
    schema: &'static str,
    confirm: Option<&'static str>,
    run: Builtin,
) -> &'static ToolSpec {
    Box::leak(Box::new(ToolSpec {
        name,
        title: name,
        description,
        tags: &[],
        hints: READ_ONLY,
        confirm,
        input_schema: schema,
        questions: &[],
        run: Run::Builtin(run),
    }))
}

fn leak(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

fn main() -> ExitCode {
    let profile = std::env::var("BUILTIN_PROFILE").unwrap_or_default();
    let embeddings = (profile == "hybrid").then(|| EmbeddingsSpec {
        base_url: leak(std::env::var("BUILTIN_EMBEDDINGS_URL").unwrap_or_default()),
        model: "all-minilm-l6-v2",
        api_key_env: Some("BUILTIN_EMBEDDINGS_KEY"),
        timeout: Duration::from_secs(20),
        query_prefix: "",
        document_prefix: "",
    });
    let knowledge: &'static KnowledgeSpec = Box::leak(Box::new(KnowledgeSpec {
        directory: None,
        top_k: 3,
        max_injected_tokens: 6000,
        embeddings,
        paths: &["docs"],
    }));
    let (read_access, encode_access) = if profile == "roots" {
        (
            FileAccess {
                roots: &["public"],
                max_bytes: Some(100_000),
            },
            FileAccess {
                roots: &["public"],
                max_bytes: Some(16),
            },
        )
    } else {
        let access = FileAccess {
            roots: &[],
            max_bytes: None,
        };
        (access, access)
    };
    let gate = (profile == "confirm").then_some("ai:confirm");
    let tools: Vec<&'static ToolSpec> = vec![
        tool(
            "read_file",
            "Read a text file below the server's allowed directories.",
            READ_FILE_SCHEMA,
            gate,
            Builtin::ReadFile(read_access),
        ),
        tool(
            "base64_encode",
            "Return the standard base64 encoding of a text or a file.",
            BASE64_SCHEMA,
            None,
            Builtin::Base64Encode(encode_access),
        ),
        tool(
            "knowledge_search",
            "Search the knowledge base before guessing.",
            SEARCH_SCHEMA,
            None,
            Builtin::KnowledgeSearch(knowledge),
        ),
        tool(
            "knowledge_read",
            "Read the full text of a knowledge base chunk by its citation.",
            READ_SCHEMA,
            None,
            Builtin::KnowledgeRead(knowledge),
        ),
        tool(
            "knowledge_list",
            "List the documents in the knowledge base.",
            LIST_SCHEMA,
            None,
            Builtin::KnowledgeList(knowledge),
        ),
    ];
    let app: &'static AppSpec = Box::leak(Box::new(AppSpec {
        identity: "kb",
        fiskgen_version: "0.1.0",
        application: None,
        instructions: None,
        tools: Box::leak(tools.into_boxed_slice()),
        docs: &DocsSpec::NONE,
        listing: None,
        settings: Settings {
            port: 0,
            address: "",
            max_concurrent_tools: 4,
            tool_timeout: Duration::from_secs(30),
            tasks: None,
            ..Settings::DEFAULT
        },
    }));
    // What fiskgen prints for an enabled built-in it does not serve.
    fiskgen_runtime::__private::main_with_notes(
        app,
        &[
            "note: memory is enabled, but the memory_* tools exist only in an agent run; they are \
           never served over MCP",
        ],
    )
}
