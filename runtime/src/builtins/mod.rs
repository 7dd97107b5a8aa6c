//! The built-in tools (docs/builtins.md): `read_file`, `base64_encode` and the knowledge
//! tools. A call is prepared (typed validation, the trace line the log and the approval prompt
//! show) on the async side, then run on a blocking thread, since files, SQLite and the
//! embeddings client block.

pub(crate) mod base64;
mod error;
pub(crate) mod files;
pub(crate) mod knowledge;
pub(crate) mod read_file;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::JsonObject;
use crate::process::cmdline::go_quote;
use crate::spec::app::{AppSpec, Builtin, KnowledgeSpec, Run};
use crate::spec::argv::{InvalidArguments, parse_arguments};
use crate::telemetry::KnowledgeFacts;

pub(crate) use self::error::{BuiltinError, StartError, ToolError};
use self::knowledge::Knowledge;

/// Longest trace line.
const MAX_TRACE_CHARS: usize = 500;
/// Longest query shown in a `knowledge_search` trace line.
const MAX_QUERY_CHARS: usize = 200;

/// What the built-ins share at run time.
#[derive(Debug)]
pub(crate) struct Builtins {
    /// The server's working directory (relative paths and roots resolve against it).
    cwd: PathBuf,
    /// The knowledge index, when knowledge tools are served.
    knowledge: Option<Knowledge>,
}

/// A validated call.
#[derive(Debug)]
pub(crate) enum Prepared {
    /// `read_file`.
    ReadFile(read_file::Args),
    /// `base64_encode`.
    Base64(base64::Input),
    /// `knowledge_search`.
    Search(knowledge::SearchArgs),
    /// `knowledge_read`.
    Read(knowledge::ReadArgs),
    /// `knowledge_list`.
    List,
    /// `knowledge_enumerate`.
    Enumerate(knowledge::EnumerateArgs),
}

impl Prepared {
    /// The number of results a `knowledge_search` asks for once the configured default and
    /// the cap apply (its span's `fisk.knowledge.top_k`); `None` for other calls.
    pub(crate) fn top_k(&self, builtin: &Builtin) -> Option<usize> {
        #[cfg(feature = "knowledge")]
        if let (Prepared::Search(args), Some(spec)) = (self, builtin.knowledge()) {
            return Some(knowledge::search::effective_top_k(args.top_k, spec.top_k));
        }
        let _ = builtin;
        None
    }
}

/// The knowledge settings the served tools use, if any; they must all use the same.
pub(crate) fn knowledge_spec(app: &AppSpec) -> Result<Option<&'static KnowledgeSpec>, StartError> {
    let mut found: Option<&'static KnowledgeSpec> = None;
    for tool in app.tools {
        if let Run::Builtin(builtin) = tool.run
            && let Some(spec) = builtin.knowledge()
        {
            match found {
                Some(seen) if seen != spec => {
                    return Err(StartError::MixedKnowledge { tool: tool.name });
                }
                _ => found = Some(spec),
            }
        }
    }
    Ok(found)
}

impl Builtins {
    /// Prepares what the served built-ins need (opening the knowledge index if one is served)
    /// and returns the lines to print at start.
    pub(crate) fn start(app: &AppSpec) -> Result<(Self, Vec<String>), StartError> {
        let served = app
            .tools
            .iter()
            .any(|tool| matches!(tool.run, Run::Builtin(_)));
        let cwd = match std::env::current_dir() {
            Ok(cwd) => cwd,
            Err(_) if !served => PathBuf::from("."),
            Err(error) => return Err(StartError::WorkingDirectory(error)),
        };
        let mut notes = Vec::new();
        let knowledge = match knowledge_spec(app)? {
            Some(spec) => {
                let knowledge =
                    Knowledge::open(spec, app.identity, &cwd).map_err(StartError::Knowledge)?;
                notes.extend(knowledge.startup_notes());
                Some(knowledge)
            }
            None => None,
        };
        Ok((Self { cwd, knowledge }, notes))
    }

    /// Without a knowledge index (for tests and tools without one).
    #[cfg(test)]
    pub(crate) fn bare(cwd: &Path) -> Self {
        Self {
            cwd: cwd.to_path_buf(),
            knowledge: None,
        }
    }

    /// Runs a prepared call (blocking); the error is the client's text, tool name first. What a
    /// knowledge call's span reports goes to `facts`.
    pub(crate) fn run(
        self: &Arc<Self>,
        builtin: &Builtin,
        prepared: &Prepared,
        deadline: Option<Instant>,
        facts: &mut KnowledgeFacts,
    ) -> Result<String, BuiltinError> {
        let cwd: &Path = &self.cwd;
        let result = match (builtin, prepared) {
            (Builtin::ReadFile(access), Prepared::ReadFile(args)) => {
                read_file::run(args, access, cwd)
            }
            (Builtin::Base64Encode(access), Prepared::Base64(input)) => {
                base64::run(input, access, cwd)
            }
            (Builtin::KnowledgeSearch(_), Prepared::Search(args)) => {
                self.knowledge().and_then(|k| {
                    k.search(args, deadline, facts)
                        .map_err(ToolError::Knowledge)
                })
            }
            (Builtin::KnowledgeRead(_), Prepared::Read(args)) => self
                .knowledge()
                .and_then(|k| k.read(args).map_err(ToolError::Knowledge)),
            (Builtin::KnowledgeList(_), Prepared::List) => self
                .knowledge()
                .and_then(|k| k.list().map_err(ToolError::Knowledge)),
            (Builtin::KnowledgeEnumerate(_), Prepared::Enumerate(args)) => self
                .knowledge()
                .and_then(|k| k.enumerate(args, facts).map_err(ToolError::Knowledge)),
            _ => Err(ToolError::Mismatch),
        };
        result.map_err(|source| BuiltinError {
            tool: builtin.name(),
            source,
        })
    }

    /// Refuses a call whose file lies outside the roots, before the confirmation gate asks
    /// anyone (blocking: it resolves the path); the error is the client's text.
    pub(crate) fn confine(
        &self,
        builtin: &Builtin,
        prepared: &Prepared,
    ) -> Result<(), BuiltinError> {
        let (access, path) = match (builtin, prepared) {
            (Builtin::ReadFile(access), Prepared::ReadFile(args)) => (access, args.path.as_str()),
            (Builtin::Base64Encode(access), Prepared::Base64(input)) => match input {
                base64::Input::Path(path) => (access, path.as_str()),
                base64::Input::Text(_) => return Ok(()),
            },
            _ => return Ok(()),
        };
        let roots = files::Roots::resolve(access, &self.cwd);
        files::confine(path, &roots, &self.cwd).map_err(|error| BuiltinError {
            tool: builtin.name(),
            source: error.into(),
        })
    }

    fn knowledge(&self) -> Result<&Knowledge, ToolError> {
        self.knowledge.as_ref().ok_or(ToolError::NoKnowledge)
    }
}

/// Validates a call's arguments for `builtin`.
pub(crate) fn prepare(
    builtin: &Builtin,
    arguments: JsonObject,
) -> Result<Prepared, InvalidArguments> {
    Ok(match builtin {
        Builtin::ReadFile(_) => {
            let args: read_file::Args = parse_arguments(arguments)?;
            if args.length == Some(0) {
                return Err(InvalidArguments::property("length", "must be at least 1"));
            }
            Prepared::ReadFile(args)
        }
        Builtin::Base64Encode(_) => {
            let args: base64::Args = parse_arguments(arguments)?;
            let input = args
                .input()
                .map_err(|(property, why)| InvalidArguments::property(property, why))?;
            Prepared::Base64(input)
        }
        Builtin::KnowledgeSearch(_) => Prepared::Search(parse_arguments(arguments)?),
        Builtin::KnowledgeRead(_) => Prepared::Read(parse_arguments(arguments)?),
        Builtin::KnowledgeList(_) => {
            let knowledge::ListArgs {} = parse_arguments(arguments)?;
            Prepared::List
        }
        Builtin::KnowledgeEnumerate(_) => Prepared::Enumerate(parse_arguments(arguments)?),
    })
}

/// The one-line description of a call, for the log and the approval prompt (client text made
/// inert, at most 500 characters).
pub(crate) fn trace(prepared: &Prepared) -> String {
    let line = match prepared {
        Prepared::ReadFile(args) => read_file::trace(args),
        Prepared::Base64(input) => base64::trace(input),
        Prepared::Search(args) => {
            // As fisk-ai: the query capped at 200 characters, quoted so it is inert.
            let query: String = args.query.chars().take(MAX_QUERY_CHARS).collect();
            let query = go_quote(&query);
            match args.top_k {
                Some(k) if k > 0 => format!("knowledge_search({query}, top_k={k})"),
                _ => format!("knowledge_search({query})"),
            }
        }
        Prepared::Read(args) => format!(
            "knowledge_read {}",
            crate::process::cmdline::quote(&args.citation)
        ),
        Prepared::List => "knowledge_list".into(),
        Prepared::Enumerate(args) => {
            // As fisk-ai: the query capped at 200 characters, quoted so it is inert.
            let query: String = args.query.chars().take(MAX_QUERY_CHARS).collect();
            format!("knowledge_enumerate({})", go_quote(&query))
        }
    };
    if line.chars().count() > MAX_TRACE_CHARS {
        let mut cut: String = line.chars().take(MAX_TRACE_CHARS).collect();
        cut.push('…');
        return cut;
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::app::FileAccess;

    fn object(value: serde_json::Value) -> JsonObject {
        value.as_object().cloned().unwrap_or_default()
    }

    const ACCESS: FileAccess = FileAccess {
        roots: &[],
        max_bytes: None,
    };

    #[test]
    fn validation_and_traces() {
        let read = Builtin::ReadFile(ACCESS);
        let prepared = prepare(&read, object(serde_json::json!({"path": "a b.txt"}))).expect("ok");
        assert_eq!(trace(&prepared), "read_file 'a b.txt'");
        let prepared = prepare(
            &read,
            object(serde_json::json!({"path": "x", "offset": 5, "length": 10})),
        )
        .expect("ok");
        assert_eq!(trace(&prepared), "read_file x offset=5 length=10");
        for bad in [
            serde_json::json!({}),
            serde_json::json!({"path": "x", "length": 0}),
            serde_json::json!({"path": "x", "offset": -1}),
            serde_json::json!({"path": "x", "mode": "r"}),
        ] {
            assert!(prepare(&read, object(bad.clone())).is_err(), "{bad}");
        }
        // A zero length is refused in the words of every other argument error, once.
        let zero = prepare(&read, object(serde_json::json!({"path": "x", "length": 0})))
            .expect_err("length 0")
            .for_tool("read_file");
        assert_eq!(
            zero,
            "invalid arguments for read_file: property `length`: must be at least 1"
        );
        let encode = Builtin::Base64Encode(ACCESS);
        assert!(prepare(&encode, object(serde_json::json!({}))).is_err());
        assert!(
            prepare(
                &encode,
                object(serde_json::json!({"text": "a", "path": "b"}))
            )
            .is_err()
        );
        let prepared = prepare(&encode, object(serde_json::json!({"text": "héllo"}))).expect("ok");
        assert_eq!(trace(&prepared), "base64_encode text (6 bytes)");

        static SPEC: KnowledgeSpec = KnowledgeSpec {
            directory: None,
            top_k: 5,
            max_injected_tokens: 6000,
            embeddings: None,
            paths: &[],
        };
        let search = Builtin::KnowledgeSearch(&SPEC);
        let prepared = prepare(
            &search,
            object(serde_json::json!({"query": "back\u{1b}[2Jpressure", "top_k": 3})),
        )
        .expect("ok");
        assert_eq!(
            trace(&prepared),
            "knowledge_search(\"back\\x1b[2Jpressure\", top_k=3)"
        );
        // The results its span reports asking for: the request's, the default, the cap.
        assert_eq!(prepared.top_k(&search), Some(3));
        let default = prepare(&search, object(serde_json::json!({"query": "q"}))).expect("ok");
        assert_eq!(default.top_k(&search), Some(5));
        let capped = prepare(
            &search,
            object(serde_json::json!({"query": "q", "top_k": 99})),
        )
        .expect("ok");
        assert_eq!(capped.top_k(&search), Some(20));
        let file = prepare(&read, object(serde_json::json!({"path": "x"}))).expect("ok");
        assert_eq!(file.top_k(&read), None);
        assert!(
            prepare(
                &search,
                object(serde_json::json!({"query": "q", "top_k": "3"}))
            )
            .is_err()
        );
        assert!(
            prepare(
                &search,
                object(serde_json::json!({"query": "q", "top_k": 2.5}))
            )
            .is_err()
        );
    }

    #[test]
    fn running_confines_and_names_the_tool() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("a.txt"), "hello").expect("write");
        let builtins = Arc::new(Builtins::bare(dir.path()));
        let read = Builtin::ReadFile(ACCESS);
        let ok = prepare(&read, object(serde_json::json!({"path": "a.txt"}))).expect("ok");
        assert!(
            builtins
                .run(&read, &ok, None, &mut KnowledgeFacts::default())
                .is_ok_and(|t| t.contains("hello"))
        );
        let out = prepare(&read, object(serde_json::json!({"path": "../a.txt"}))).expect("ok");
        let error = builtins
            .run(&read, &out, None, &mut KnowledgeFacts::default())
            .expect_err("outside")
            .to_string();
        assert!(
            error.starts_with("read_file: \"../a.txt\" is outside"),
            "{error}"
        );
    }
}
