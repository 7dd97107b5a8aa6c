//! `knowledge_enumerate` (docs/builtins.md): which indexed documents contain the query's words,
//! as a complete, unranked set with match counts, never document text. It answers what a
//! ranked search cannot: whether anything matches at all. The query language, the answer JSON,
//! its statuses and the note in words are Fisk AI's.
//!
//! Words match by stem (the porter table `chunks_fts`); how many documents hold a word as
//! written comes from the exact-word table `chunks_fts_exact`, and the other forms the index
//! holds of a stem from its vocabulary `chunks_vocab`. Stems are SQLite's own: a word is stemmed
//! by an in-memory FTS5 table with the porter tokenizer, so the comparison uses the tokenizer
//! that built the index.

use std::collections::{BTreeMap, HashMap, HashSet};

use rusqlite::Connection;
use serde::Serialize;

mod query;

use self::query::{Query, Term, compile};
use super::error::KnowledgeError;
use super::search::{DEFAULT_MAX_INJECTED_TOKENS, citation};

/// The tier line of every answer.
pub(crate) const TIER: &str = "tier: lexical (FTS5) - matching is complete, never ranked";
/// The most related forms named per word.
const MAX_RELATED_FORMS: usize = 5;
/// The share of the injection budget one answer may spend (a divisor): enumeration comes
/// before the reading it informs.
const BUDGET_SHARE: u64 = 4;

/// The stemmed table, and the exact-word one.
const PORTER: &str = "chunks_fts";
const EXACT: &str = "chunks_fts_exact";

/// The answer.
#[derive(Debug, Serialize)]
pub(crate) struct Answer {
    tier: &'static str,
    status: &'static str,
    compiled: String,
    matched: usize,
    returned: usize,
    truncated: bool,
    indexed_documents: usize,
    note: String,
    documents: Vec<Document>,
    terms: Vec<TermReport>,
}

/// One matched document: where a word is, never its text.
#[derive(Debug, Serialize)]
struct Document {
    citation: String,
    body_matches: usize,
    heading_matches: usize,
    total_chunks: usize,
    #[serde(skip)]
    path: String,
}

/// What the index holds of one query word: lets a reader tell "absent" from "spelled
/// differently".
#[derive(Debug, Serialize)]
struct TermReport {
    term: String,
    documents: usize,
    as_written: usize,
    #[serde(skip_serializing_if = "Vec::is_empty", rename = "related_forms")]
    related: Vec<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not", rename = "not_queried")]
    dropped: bool,
}

impl Answer {
    fn empty(status: &'static str) -> Self {
        Self {
            tier: TIER,
            status,
            compiled: String::new(),
            matched: 0,
            returned: 0,
            truncated: false,
            indexed_documents: 0,
            note: String::new(),
            documents: Vec::new(),
            terms: Vec::new(),
        }
    }

    /// The answer without an index.
    pub(crate) fn not_built() -> Self {
        let mut answer = Self::empty("index_not_built");
        answer.note = note(&answer);
        answer
    }
}

/// How many documents one answer lists: a share of the injection budget, at least one.
fn document_budget(max_injected_tokens: u64) -> usize {
    let tokens = match max_injected_tokens {
        0 => DEFAULT_MAX_INJECTED_TOKENS,
        n => n,
    };
    let per_document = ("docs/some/typical/path.md#12".len()
        + r#"{"citation":"","body_matches":0,"heading_matches":0,"total_chunks":0},"#.len())
        as u64;
    usize::try_from((tokens / BUDGET_SHARE) * 4 / per_document)
        .unwrap_or(usize::MAX)
        .max(1)
}

/// Enumerates `query` over the index `conn`.
pub(crate) fn enumerate(
    conn: &Connection,
    query: &str,
    max_injected_tokens: u64,
) -> Result<Answer, KnowledgeError> {
    let compiled = compile(query).map_err(|error| KnowledgeError::Query(error.0))?;
    let mut answer = Answer::empty("ok");
    answer.compiled = compiled.compiled();
    let fail = KnowledgeError::Read;
    let indexed: i64 = conn
        .query_row("SELECT count(*) FROM documents", [], |row| row.get(0))
        .map_err(fail)?;
    answer.indexed_documents = usize::try_from(indexed).unwrap_or(0);
    if answer.indexed_documents == 0 {
        answer.status = "corpus_empty";
        answer.note = note(&answer);
        return Ok(answer);
    }
    answer.terms = term_reports(conn, &compiled)?;
    if compiled.positive.is_empty() {
        answer.status = "query_empty";
        answer.note = note(&answer);
        return Ok(answer);
    }
    let ids = document_set(conn, &compiled)?;
    let mut documents = describe(conn, &ids, &compiled)?;
    documents.sort_by(|a, b| {
        (b.body_matches + b.heading_matches)
            .cmp(&(a.body_matches + a.heading_matches))
            .then_with(|| a.path.cmp(&b.path))
    });
    answer.matched = documents.len();
    let limit = document_budget(max_injected_tokens);
    if documents.len() > limit {
        documents.truncate(limit);
        answer.truncated = true;
    }
    answer.returned = documents.len();
    answer.documents = documents;
    answer.note = note(&answer);
    Ok(answer)
}

/// The ids of the documents holding `matching` in `table`.
fn documents_matching(
    conn: &Connection,
    table: &str,
    matching: &str,
) -> Result<HashSet<i64>, KnowledgeError> {
    let sql = format!(
        "SELECT DISTINCT c.document_id FROM {table} f JOIN chunks c ON c.id = f.rowid \
         WHERE {table} MATCH ?1"
    );
    let mut statement = conn.prepare(&sql).map_err(KnowledgeError::Read)?;
    let rows = statement
        .query_map([matching], |row| row.get::<_, i64>(0))
        .map_err(KnowledgeError::Read)?;
    rows.collect::<Result<_, _>>().map_err(KnowledgeError::Read)
}

/// Every positive term in some section of the document, no negative one anywhere in it.
fn document_set(conn: &Connection, query: &Query) -> Result<HashSet<i64>, KnowledgeError> {
    let mut set: Option<HashSet<i64>> = None;
    for term in &query.positive {
        let ids = documents_matching(conn, PORTER, &term.matching())?;
        set = Some(match set {
            None => ids,
            Some(set) => set.intersection(&ids).copied().collect(),
        });
    }
    let mut set = set.unwrap_or_default();
    for term in &query.negative {
        if set.is_empty() {
            break;
        }
        for id in documents_matching(conn, PORTER, &term.matching())? {
            set.remove(&id);
        }
    }
    Ok(set)
}

/// Per document, the chunks whose `column` holds any positive term scoped to it or to no
/// column.
fn chunk_counts(
    conn: &Connection,
    query: &Query,
    column: &str,
) -> Result<HashMap<i64, usize>, KnowledgeError> {
    let parts: Vec<String> = query
        .positive
        .iter()
        .filter(|term| term.column.is_none_or(|c| c == column))
        .map(|term| {
            Term {
                column: None,
                ..term.clone()
            }
            .matching()
        })
        .collect();
    if parts.is_empty() {
        return Ok(HashMap::new());
    }
    let expression = format!("{column}:({})", parts.join(" OR "));
    grouped(
        conn,
        "SELECT c.document_id, count(*) FROM chunks_fts f JOIN chunks c ON c.id = f.rowid \
         WHERE chunks_fts MATCH ?1 GROUP BY c.document_id",
        &expression,
    )
}

fn grouped(
    conn: &Connection,
    sql: &str,
    expression: &str,
) -> Result<HashMap<i64, usize>, KnowledgeError> {
    let mut statement = conn.prepare(sql).map_err(KnowledgeError::Read)?;
    let rows = statement
        .query_map([expression], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?))
        })
        .map_err(KnowledgeError::Read)?;
    let mut out = HashMap::new();
    for row in rows {
        let (id, n) = row.map_err(KnowledgeError::Read)?;
        out.insert(id, usize::try_from(n).unwrap_or(0));
    }
    Ok(out)
}

/// The matched documents with their counts and the citation of their first matching chunk.
fn describe(
    conn: &Connection,
    ids: &HashSet<i64>,
    query: &Query,
) -> Result<Vec<Document>, KnowledgeError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let body = chunk_counts(conn, query, "body")?;
    let heading = chunk_counts(conn, query, "heading_path")?;
    let any = format!(
        "({})",
        query
            .positive
            .iter()
            .map(Term::matching)
            .collect::<Vec<_>>()
            .join(" OR ")
    );
    let first = grouped(
        conn,
        "SELECT c.document_id, min(c.ordinal) FROM chunks_fts f JOIN chunks c ON c.id = f.rowid \
         WHERE chunks_fts MATCH ?1 GROUP BY c.document_id",
        &any,
    )?;
    let mut statement = conn
        .prepare(
            "SELECT d.id, d.path, count(c.id) FROM documents d JOIN chunks c \
             ON c.document_id = d.id GROUP BY d.id, d.path",
        )
        .map_err(KnowledgeError::Read)?;
    let rows = statement
        .query_map([], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, i64>(2)?,
            ))
        })
        .map_err(KnowledgeError::Read)?;
    let mut out = Vec::new();
    for row in rows {
        let (id, path, total) = row.map_err(KnowledgeError::Read)?;
        if !ids.contains(&id) {
            continue;
        }
        let ordinal = first.get(&id).copied().unwrap_or(0);
        out.push(Document {
            citation: citation(&path, i64::try_from(ordinal).unwrap_or(0)),
            body_matches: body.get(&id).copied().unwrap_or(0),
            heading_matches: heading.get(&id).copied().unwrap_or(0),
            total_chunks: usize::try_from(total).unwrap_or(0),
            path,
        });
    }
    Ok(out)
}

/// Per term: documents by stem, documents as written, and the related forms the index holds.
fn term_reports(conn: &Connection, query: &Query) -> Result<Vec<TermReport>, KnowledgeError> {
    let terms: Vec<&Term> = query.positive.iter().chain(&query.negative).collect();
    let surfaces: Vec<&str> = terms.iter().map(|t| t.surface.as_str()).collect();
    let stems = stems(&surfaces);
    let mut out = Vec::new();
    for term in terms {
        let documents = documents_matching(conn, PORTER, &term.matching())?.len();
        let as_written = documents_matching(conn, EXACT, &term.matching())?.len();
        let related = match stems.get(term.surface.as_str()) {
            Some(stem) if documents > as_written => related_forms(conn, &term.surface, stem)?,
            _ => Vec::new(),
        };
        out.push(TermReport {
            term: term.surface.clone(),
            documents,
            as_written,
            related,
            dropped: false,
        });
    }
    out.extend(query.dropped.iter().map(|surface| TermReport {
        term: surface.clone(),
        documents: 0,
        as_written: 0,
        related: Vec::new(),
        dropped: true,
    }));
    Ok(out)
}

/// The words of the exact vocabulary that start with `stem` and stem to it, most documents
/// first, without `surface` itself.
fn related_forms(
    conn: &Connection,
    surface: &str,
    stem: &str,
) -> Result<Vec<String>, KnowledgeError> {
    let mut upper: Vec<char> = stem.chars().collect();
    let Some(last) = upper.pop() else {
        return Ok(Vec::new());
    };
    let Some(next) = char::from_u32(u32::from(last) + 1) else {
        return Ok(Vec::new());
    };
    upper.push(next);
    let upper: String = upper.into_iter().collect();
    let mut statement = conn
        .prepare(
            "SELECT term FROM chunks_vocab WHERE term >= ?1 AND term < ?2 ORDER BY doc DESC, term",
        )
        .map_err(KnowledgeError::Read)?;
    let candidates: Vec<String> = statement
        .query_map([stem, upper.as_str()], |row| row.get(0))
        .map_err(KnowledgeError::Read)?
        .collect::<Result<_, _>>()
        .map_err(KnowledgeError::Read)?;
    let candidates: Vec<&str> = candidates
        .iter()
        .map(String::as_str)
        .filter(|c| !c.eq_ignore_ascii_case(surface))
        .collect();
    let stemmed = stems(&candidates);
    Ok(candidates
        .into_iter()
        .filter(|c| stemmed.get(c).is_some_and(|s| s == stem))
        .take(MAX_RELATED_FORMS)
        .map(str::to_string)
        .collect())
}

/// Each surface's stem as the porter tokenizer writes it (words joined by a space), from an
/// in-memory FTS5 table; empty when SQLite cannot say.
fn stems<'a>(surfaces: &[&'a str]) -> HashMap<&'a str, String> {
    let mut out = HashMap::new();
    let Ok(db) = Connection::open_in_memory() else {
        return out;
    };
    let created = db.execute_batch(
        "CREATE VIRTUAL TABLE terms USING fts5(surface, tokenize='porter unicode61');
         CREATE VIRTUAL TABLE terms_vocab USING fts5vocab('terms', 'instance');",
    );
    if created.is_err() {
        return out;
    }
    for (i, surface) in surfaces.iter().enumerate() {
        let Ok(rowid) = i64::try_from(i) else {
            return out;
        };
        if db
            .execute(
                "INSERT INTO terms(rowid, surface) VALUES (?1, ?2)",
                rusqlite::params![rowid, surface],
            )
            .is_err()
        {
            return out;
        }
    }
    let Ok(mut statement) = db.prepare("SELECT doc, term FROM terms_vocab ORDER BY doc, offset")
    else {
        return out;
    };
    let Ok(rows) = statement.query_map([], |row| {
        Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
    }) else {
        return out;
    };
    let mut parts: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for (doc, term) in rows.flatten() {
        parts.entry(doc).or_default().push(term);
    }
    for (doc, words) in parts {
        if let Some(surface) = usize::try_from(doc).ok().and_then(|i| surfaces.get(i)) {
            out.insert(*surface, words.join(" "));
        }
    }
    out
}

/// What the numbers mean, in words; never omitted, so a complete set says so as loudly as a
/// truncated one says it is not.
fn note(answer: &Answer) -> String {
    match answer.status {
        "index_not_built" => {
            return "The knowledge index has not been built yet, so this is not an answer about \
                    the operator's documents. Nothing can be concluded about what they contain."
                .into();
        }
        "corpus_empty" => {
            return "The knowledge index holds no documents, so this is not an answer about the \
                    operator's documents. Nothing can be concluded about what they contain."
                .into();
        }
        "query_empty" => {
            return "No word in the query was long enough to look up, so nothing was searched \
                    for. This says nothing about the index; try a longer word."
                .into();
        }
        _ => {}
    }
    let mut parts = vec![if answer.truncated {
        format!(
            "{} documents match; the {} listed here are those with the most matches, not the \
             whole set.",
            answer.matched, answer.returned
        )
    } else if answer.matched == 0 {
        format!(
            "No document in the index of {} contains this. This is the complete answer and not a \
             ranking cutoff, so it is safe to say the documents do not mention it.",
            answer.indexed_documents
        )
    } else {
        format!(
            "This is the complete set: all {} matching documents of {} indexed, not a ranked \
             selection.",
            answer.matched, answer.indexed_documents
        )
    }];
    for term in &answer.terms {
        let surface = &term.term;
        if term.dropped {
            parts.push(format!(
                "{surface:?} was too short to look up and was not searched for."
            ));
        } else if term.documents == 0 {
            parts.push(format!("No document contains {surface:?} in any form."));
        } else if term.documents > term.as_written && !term.related.is_empty() {
            parts.push(format!(
                "{} documents contain {surface:?} or a related form ({}); {} contain it as \
                 written.",
                term.documents,
                term.related.join(", "),
                term.as_written
            ));
        } else if term.documents > term.as_written {
            parts.push(format!(
                "{} documents contain {surface:?} or a related form; {} contain it as written.",
                term.documents, term.as_written
            ));
        }
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_come_from_sqlites_porter_tokenizer() {
        let stems = stems(&["deprecated", "deprecation", "retention policy"]);
        assert_eq!(stems["deprecated"], "deprec");
        assert_eq!(stems["deprecation"], "deprec");
        assert_eq!(stems["retention policy"], "retent polici");
    }

    #[test]
    fn the_list_budget_is_a_share_of_the_injection_budget() {
        assert_eq!(
            document_budget(0),
            document_budget(DEFAULT_MAX_INJECTED_TOKENS)
        );
        assert_eq!(document_budget(1), 1);
        assert!(document_budget(6000) > 20);
    }
}
