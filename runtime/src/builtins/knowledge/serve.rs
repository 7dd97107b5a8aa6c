//! The knowledge tools' answers over the index: search, read, list.

use std::path::{Path, PathBuf};
use std::time::Instant;

use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;

use super::embeddings::Embedder;
use super::error::StoreError;
use super::error::{EmbeddingsError, KnowledgeError};
use super::store::{self, Pool, Unavailable, VectorIdentity};
use super::{EnumerateArgs, ReadArgs, SearchArgs, enumerate, search};
use crate::process::cmdline::go_quote;
use crate::process::output::{Capture, LIMIT};
use crate::spec::app::KnowledgeSpec;
use crate::telemetry::{KnowledgeFacts, class, degrade};

/// The tier line without embeddings.
const LEXICAL_TIER: &str = "tier: lexical (FTS5) - no embeddings configured";
/// The note of a degraded search.
const DEGRADED_NOTE: &str =
    "the embeddings server was unreachable, so this query used the lexical tier only";
/// The note of `index_empty`.
const EMPTY_NOTE: &str = "the knowledge index is empty or the query had no searchable terms";

/// One knowledge index as the server serves it.
#[derive(Debug)]
pub(crate) struct Knowledge {
    spec: &'static KnowledgeSpec,
    /// The directory holding `knowledge.db`.
    dir: PathBuf,
    pub(super) pool: Pool,
    embedder: Option<Embedder>,
    /// `<binary> knowledge index`.
    index_command: String,
}

#[derive(Debug, Serialize)]
struct SearchAnswer {
    tier: String,
    status: &'static str,
    #[serde(skip_serializing_if = "String::is_empty")]
    note: String,
    results: Vec<HitAnswer>,
}

#[derive(Debug, Serialize)]
struct HitAnswer {
    citation: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    section: String,
    content: String,
}

impl Knowledge {
    /// Resolves the directory against `cwd` and validates the embeddings settings; an existing
    /// index is opened and checked now (FTS5, format, the pinned vector identity), so a
    /// mismatch stops the server at start as it stops `fisk mcp`.
    pub(crate) fn open(
        spec: &'static KnowledgeSpec,
        identity: &str,
        cwd: &Path,
    ) -> Result<Self, KnowledgeError> {
        let knowledge = Self::open_for_index(spec, identity, cwd)?;
        match knowledge.pool.with(|conn| {
            store::verify_fts5(conn)?;
            knowledge.validate(conn).map(|_| ())
        }) {
            Ok(result) => result?,
            Err(Unavailable::NotBuilt) => {}
            Err(Unavailable::Failed(error)) => return Err(error.into()),
        }
        Ok(knowledge)
    }

    /// The settings resolved (directory, embeddings client), the index not looked at.
    pub(crate) fn open_for_index(
        spec: &'static KnowledgeSpec,
        identity: &str,
        cwd: &Path,
    ) -> Result<Self, EmbeddingsError> {
        let dir = match spec.directory.filter(|d| !d.trim().is_empty()) {
            Some(dir) => cwd.join(dir),
            None => cwd.join("knowledge").join(identity),
        };
        let embedder = spec.embeddings.as_ref().map(Embedder::new).transpose()?;
        Ok(Self {
            spec,
            pool: Pool::new(dir.join(store::DB_FILE)),
            dir,
            embedder,
            index_command: format!("{identity}-mcp knowledge index"),
        })
    }

    /// The directory of the index.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The embeddings client, when the vector tier is configured.
    pub(crate) fn embedder(&self) -> Option<&Embedder> {
        self.embedder.as_ref()
    }

    /// `<binary> knowledge index --reindex`.
    pub(crate) fn reindex_command(&self) -> String {
        format!("{} --reindex", self.index_command)
    }

    /// What the server prints at start (docs/builtins.md, "Knowledge").
    pub(crate) fn startup_notes(&self) -> Vec<String> {
        let dimension = self
            .pool
            .with(|conn| store::read_meta(conn).map(|m| m.dimension).unwrap_or(0))
            .unwrap_or(0);
        let mut notes = vec![format!("knowledge {}", self.tier(dimension))];
        if !self.pool.built() {
            notes.push(format!(
                "note: the knowledge index is not built yet; knowledge_search will return \
                 index_not_built until you run: {}",
                self.index_command
            ));
        }
        notes
    }

    /// The manifest, checked against the configuration.
    fn validate(&self, conn: &Connection) -> Result<super::Meta, StoreError> {
        store::check_format(conn, &self.reindex_command())?;
        let meta = store::read_meta(conn)?;
        let identity = self.embedder.as_ref().map(|e| VectorIdentity {
            model: e.spec().model,
            query_prefix: e.spec().query_prefix,
            document_prefix: e.spec().document_prefix,
        });
        store::validate_meta(&meta, identity, &self.reindex_command())?;
        Ok(meta)
    }

    /// The tier line (docs/builtins.md, "`knowledge_search`").
    fn tier(&self, dimension: usize) -> String {
        match &self.embedder {
            None => LEXICAL_TIER.to_string(),
            Some(embedder) => format!(
                "tier: hybrid (FTS5 + vectors, RRF) - model={} dim={dimension}",
                embedder.model()
            ),
        }
    }

    /// `knowledge_read`'s error without an index; its text is the note of `index_not_built`.
    fn not_built(&self) -> KnowledgeError {
        KnowledgeError::NotBuilt {
            index_command: self.index_command.clone(),
        }
    }

    /// `knowledge_search`: the answer JSON, or a hard error (a broken index, a dimension that
    /// no longer matches); what its span reports goes to `facts`.
    pub(crate) fn search(
        &self,
        args: &SearchArgs,
        deadline: Option<Instant>,
        facts: &mut KnowledgeFacts,
    ) -> Result<String, KnowledgeError> {
        let answer = self.search_index(args, deadline, facts);
        if let Err(error) = &answer {
            facts.error_class = Some(error.class());
        }
        answer
    }

    fn search_index(
        &self,
        args: &SearchArgs,
        deadline: Option<Instant>,
        facts: &mut KnowledgeFacts,
    ) -> Result<String, KnowledgeError> {
        let k = search::effective_top_k(args.top_k, self.spec.top_k);
        let mut answer = SearchAnswer {
            tier: self.tier(0),
            status: "ok",
            note: String::new(),
            results: Vec::new(),
        };
        let outcome = self.pool.with(|conn| -> Result<(), KnowledgeError> {
            let meta = self.validate(conn)?;
            answer.tier = self.tier(meta.dimension);
            let chunks: i64 = conn
                .query_row("SELECT count(*) FROM chunks", [], |row| row.get(0))
                .map_err(KnowledgeError::CountChunks)?;
            facts.indexed_chunks = Some(chunks);
            let expression = search::fts_query(&args.query);
            if chunks == 0 || expression.is_empty() {
                answer.status = "index_empty";
                answer.note = EMPTY_NOTE.into();
                return Ok(());
            }
            let lexical = search::lexical(conn, &expression)?;
            facts.effective_tier = Some("lexical");
            let requests = &mut facts.embeddings;
            let fused = match &self.embedder {
                None => lexical,
                Some(embedder) => match embedder.embed_query(&args.query, deadline, requests) {
                    Err(reason) => {
                        facts.degraded = Some(match reason.class() {
                            class::TIMEOUT => degrade::TIMEOUT,
                            _ => degrade::EMBEDDINGS,
                        });
                        answer.tier = format!(
                            "tier: hybrid -> DEGRADED to lexical (embeddings unreachable: {reason})"
                        );
                        answer.note = DEGRADED_NOTE.into();
                        lexical
                    }
                    Ok(vector) if vector.len() != meta.dimension => {
                        return Err(KnowledgeError::Dimension {
                            model: embedder.model().to_string(),
                            emits: vector.len(),
                            built: meta.dimension,
                            reindex: self.reindex_command(),
                        });
                    }
                    Ok(vector) => {
                        let nearest = search::vector(conn, &vector)?;
                        facts.effective_tier = Some("hybrid");
                        search::rrf(&[lexical, nearest])
                    }
                },
            };
            let top = &fused[..k.min(fused.len())];
            let hits = search::hydrate(conn, top)?;
            answer.results = search::cap(hits, self.spec.max_injected_tokens)
                .into_iter()
                .map(|hit| HitAnswer {
                    citation: hit.citation,
                    section: hit.section,
                    content: hit.content,
                })
                .collect();
            Ok(())
        });
        match outcome {
            Ok(result) => result?,
            Err(Unavailable::NotBuilt) => {
                answer.status = "index_not_built";
                answer.note = self.not_built().to_string();
            }
            Err(Unavailable::Failed(error)) => return Err(error.into()),
        }
        Ok(serde_json::to_string(&answer)?)
    }

    /// `knowledge_enumerate`: the answer JSON; a query its language refuses is the tool's
    /// error, with the fix. A failure's class goes to `facts`.
    pub(crate) fn enumerate(
        &self,
        args: &EnumerateArgs,
        facts: &mut KnowledgeFacts,
    ) -> Result<String, KnowledgeError> {
        let answer = self.enumerate_index(args);
        if let Err(error) = &answer {
            facts.error_class = Some(error.class());
        }
        answer
    }

    fn enumerate_index(&self, args: &EnumerateArgs) -> Result<String, KnowledgeError> {
        let outcome = self.pool.with(|conn| -> Result<String, KnowledgeError> {
            self.validate(conn)?;
            let answer = enumerate::enumerate(conn, &args.query, self.spec.max_injected_tokens)?;
            Ok(serde_json::to_string(&answer)?)
        });
        match outcome {
            Ok(result) => result,
            Err(Unavailable::NotBuilt) => {
                Ok(serde_json::to_string(&enumerate::Answer::not_built())?)
            }
            Err(Unavailable::Failed(error)) => Err(error.into()),
        }
    }

    /// `knowledge_read`: the chunk a citation names, with its neighbours' citations.
    pub(crate) fn read(&self, args: &ReadArgs) -> Result<String, KnowledgeError> {
        let citation = args.citation.trim();
        let shown = go_quote(citation);
        let (path, ordinal) = citation
            .rsplit_once('#')
            .and_then(|(path, n)| Some((path, n.parse::<i64>().ok().filter(|n| *n >= 0)?)))
            .filter(|(path, _)| !path.is_empty())
            .ok_or_else(|| KnowledgeError::NotACitation {
                shown: shown.clone(),
            })?;
        let outcome = self.pool.with(|conn| -> Result<String, KnowledgeError> {
            let fail = KnowledgeError::Read;
            let document: Option<(i64, Option<String>, i64)> = conn
                .query_row(
                    "SELECT d.id, d.title, (SELECT count(*) FROM chunks c WHERE c.document_id = d.id) \
                     FROM documents d WHERE d.path = ?1",
                    [path],
                    |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
                )
                .optional()
                .map_err(fail)?;
            let Some((id, title, count)) = document else {
                return Err(KnowledgeError::NoDocument {
                    document: go_quote(path),
                });
            };
            let chunk: Option<(Option<String>, String)> = conn
                .query_row(
                    "SELECT heading_path, body FROM chunks WHERE document_id = ?1 AND ordinal = ?2",
                    (id, ordinal),
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .optional()
                .map_err(fail)?;
            let Some((section, content)) = chunk else {
                let document = go_quote(path);
                return Err(match count {
                    0 => KnowledgeError::NoChunks { document, shown },
                    n => KnowledgeError::NoSuchChunk {
                        document,
                        last: n - 1,
                        shown,
                    },
                });
            };
            let mut capture = Capture::new();
            capture.push(content.as_bytes());
            let content = capture.finish();
            let answer = ReadAnswer {
                citation: search::citation(path, ordinal),
                title: title.unwrap_or_default(),
                section: section.unwrap_or_default(),
                content: content.text,
                truncated: content.truncated,
                previous: (ordinal > 0).then(|| search::citation(path, ordinal - 1)),
                next: (ordinal + 1 < count).then(|| search::citation(path, ordinal + 1)),
            };
            Ok(serde_json::to_string(&answer)?)
        });
        match outcome {
            Ok(result) => result,
            Err(Unavailable::NotBuilt) => Err(self.not_built()),
            Err(Unavailable::Failed(error)) => Err(error.into()),
        }
    }

    /// `knowledge_list`: the documents, by path, within 64 KiB of answer.
    pub(crate) fn list(&self) -> Result<String, KnowledgeError> {
        let mut answer = ListAnswer {
            status: "ok",
            note: String::new(),
            count: 0,
            documents: Vec::new(),
            truncated: false,
        };
        let outcome = self.pool.with(|conn| -> Result<(), KnowledgeError> {
            let fail = KnowledgeError::Read;
            let mut statement = conn
                .prepare(
                    "SELECT d.path, d.title, count(c.id) FROM documents d \
                     LEFT JOIN chunks c ON c.document_id = d.id GROUP BY d.id ORDER BY d.path",
                )
                .map_err(fail)?;
            let rows = statement
                .query_map([], |row| {
                    Ok(DocumentAnswer {
                        path: row.get(0)?,
                        title: row.get::<_, Option<String>>(1)?.unwrap_or_default(),
                        chunks: row.get(2)?,
                    })
                })
                .map_err(fail)?;
            let mut size = 0;
            for row in rows {
                let document = row.map_err(fail)?;
                answer.count += 1;
                size += document.path.len() + document.title.len() + 64;
                if size > LIMIT {
                    answer.truncated = true;
                    continue;
                }
                answer.documents.push(document);
            }
            if answer.count == 0 {
                answer.status = "index_empty";
                answer.note = "the knowledge index holds no documents".into();
            } else if answer.truncated {
                answer.note = format!(
                    "{} of {} documents listed (the answer is capped at 64 KiB)",
                    answer.documents.len(),
                    answer.count
                );
            }
            Ok(())
        });
        match outcome {
            Ok(result) => result?,
            Err(Unavailable::NotBuilt) => {
                answer.status = "index_not_built";
                answer.note = self.not_built().to_string();
            }
            Err(Unavailable::Failed(error)) => return Err(error.into()),
        }
        Ok(serde_json::to_string(&answer)?)
    }
}

#[derive(Debug, Serialize)]
struct ReadAnswer {
    citation: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    title: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    section: String,
    content: String,
    truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    previous: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    next: Option<String>,
}

#[derive(Debug, Serialize)]
struct ListAnswer {
    status: &'static str,
    #[serde(skip_serializing_if = "String::is_empty")]
    note: String,
    count: usize,
    documents: Vec<DocumentAnswer>,
    truncated: bool,
}

#[derive(Debug, Serialize)]
struct DocumentAnswer {
    path: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    title: String,
    chunks: i64,
}

impl KnowledgeError {
    /// Fisk AI's class of a failed search or enumeration (its span's `error.type`): a query
    /// the language refuses, a dimension the index was not built at, else the index.
    fn class(&self) -> &'static str {
        match self {
            KnowledgeError::Query(_) => class::INVALID_QUERY,
            KnowledgeError::Dimension { .. } => class::CONFIG,
            _ => class::STORE,
        }
    }
}
