//! The search algorithm of docs/builtins.md, "`knowledge_search`": an FTS5 BM25 lexical tier always, fused with a vector
//! tier (sqlite-vec KNN over normalised vectors) by Reciprocal Rank Fusion when embeddings are
//! configured, truncated to k and capped to the content budget.

use std::collections::HashMap;

use rusqlite::Connection;

use super::embeddings::to_blob;
use super::error::StoreError;

/// The RRF constant.
const RRF_K: f64 = 60.0;
/// Candidates each retriever fetches before fusion.
pub(crate) const FANOUT: usize = 50;
/// Terms a query contributes at most.
const MAX_TERMS: usize = 40;
/// Terms shorter than this (in characters) are dropped.
const MIN_TERM_CHARS: usize = 2;
/// Results one search returns at most.
pub(crate) const TOP_K_CEILING: u32 = 20;
/// Results when neither the call nor the configuration says.
pub(crate) const DEFAULT_TOP_K: u32 = 5;
/// Token budget when the configuration does not say.
pub(crate) const DEFAULT_MAX_INJECTED_TOKENS: u64 = 6000;
/// Bytes counted per token of the budget.
const BYTES_PER_TOKEN: u64 = 4;

/// One ranked hit.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ranked {
    /// `chunks.id`.
    pub(crate) chunk_id: i64,
    /// BM25 (lower is better), distance, or fused score; only the order matters.
    pub(crate) score: f64,
}

/// A hit ready to cite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    /// `<document path>#<ordinal>`.
    pub(crate) citation: String,
    /// The breadcrumb.
    pub(crate) section: String,
    /// The chunk text.
    pub(crate) content: String,
}

/// The FTS5 expression for free text: terms split on anything but letters and digits, shorter
/// than two characters dropped, each double-quoted (quotes doubled), at most 40, joined with
/// `OR`. Empty when nothing is left.
pub(crate) fn fts_query(query: &str) -> String {
    query
        .split(|c: char| !c.is_alphabetic() && !c.is_numeric())
        .filter(|term| term.chars().count() >= MIN_TERM_CHARS)
        .take(MAX_TERMS)
        .map(|term| format!("\"{}\"", term.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" OR ")
}

/// k for one search: the request when positive, else the configured default; within 1..=20.
pub(crate) fn effective_top_k(requested: Option<i64>, configured: u32) -> usize {
    let configured = match configured {
        0 => DEFAULT_TOP_K,
        k => k.min(TOP_K_CEILING),
    };
    let k = match requested {
        Some(k) if k > 0 => u32::try_from(k).unwrap_or(TOP_K_CEILING),
        _ => configured,
    };
    k.clamp(1, TOP_K_CEILING) as usize
}

/// Chunk ids by BM25.
pub(crate) fn lexical(conn: &Connection, expression: &str) -> Result<Vec<Ranked>, StoreError> {
    let fail = StoreError::Lexical;
    let mut statement = conn
        .prepare(
            "SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?1 \
             ORDER BY bm25(chunks_fts) LIMIT ?2",
        )
        .map_err(fail)?;
    let rows = statement
        .query_map((expression, FANOUT as i64), |row| {
            Ok(Ranked {
                chunk_id: row.get(0)?,
                score: row.get(1)?,
            })
        })
        .map_err(fail)?;
    rows.collect::<Result<_, _>>().map_err(fail)
}

/// Chunk ids by ascending distance from a normalised query vector.
pub(crate) fn vector(conn: &Connection, query: &[f32]) -> Result<Vec<Ranked>, StoreError> {
    let fail = StoreError::Vector;
    let mut statement = conn
        .prepare(
            "SELECT chunk_id, distance FROM chunks_vec WHERE embedding MATCH ?1 \
             ORDER BY distance LIMIT ?2",
        )
        .map_err(fail)?;
    let rows = statement
        .query_map((to_blob(query), FANOUT as i64), |row| {
            Ok(Ranked {
                chunk_id: row.get(0)?,
                score: row.get(1)?,
            })
        })
        .map_err(fail)?;
    rows.collect::<Result<_, _>>().map_err(fail)
}

/// Reciprocal Rank Fusion: each list adds `1 / (60 + rank + 1)`; higher first, ties by lower
/// chunk id.
pub(crate) fn rrf(lists: &[Vec<Ranked>]) -> Vec<Ranked> {
    let mut fused: HashMap<i64, f64> = HashMap::new();
    for list in lists {
        for (rank, hit) in list.iter().enumerate() {
            *fused.entry(hit.chunk_id).or_default() += 1.0 / (RRF_K + rank as f64 + 1.0);
        }
    }
    let mut out: Vec<Ranked> = fused
        .into_iter()
        .map(|(chunk_id, score)| Ranked { chunk_id, score })
        .collect();
    out.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.chunk_id.cmp(&b.chunk_id))
    });
    out
}

/// The hits for ranked ids, in rank order; rows deleted meanwhile are skipped.
pub(crate) fn hydrate(conn: &Connection, ranked: &[Ranked]) -> Result<Vec<Hit>, StoreError> {
    if ranked.is_empty() {
        return Ok(Vec::new());
    }
    let fail = StoreError::Hydrate;
    let placeholders = vec!["?"; ranked.len()].join(",");
    let mut statement = conn
        .prepare(&format!(
            "SELECT c.id, d.path, c.heading_path, c.ordinal, c.body \
             FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.id IN ({placeholders})"
        ))
        .map_err(fail)?;
    let ids: Vec<i64> = ranked.iter().map(|r| r.chunk_id).collect();
    let rows = statement
        .query_map(rusqlite::params_from_iter(ids.iter()), |row| {
            Ok((
                row.get::<_, i64>(0)?,
                Hit {
                    citation: citation(
                        &row.get::<_, String>(1)?,
                        row.get::<_, Option<i64>>(3)?.unwrap_or(0),
                    ),
                    section: row.get::<_, Option<String>>(2)?.unwrap_or_default(),
                    content: row.get(4)?,
                },
            ))
        })
        .map_err(fail)?;
    let mut by_id = HashMap::new();
    for row in rows {
        let (id, hit) = row.map_err(fail)?;
        by_id.insert(id, hit);
    }
    Ok(ranked
        .iter()
        .filter_map(|r| by_id.remove(&r.chunk_id))
        .collect())
}

/// `<path>#<ordinal>`.
pub(crate) fn citation(path: &str, ordinal: i64) -> String {
    format!("{path}#{ordinal}")
}

/// Hits within the budget of `max_injected_tokens` x 4 bytes of content: the first always, then
/// until the next would exceed it.
pub(crate) fn cap(hits: Vec<Hit>, max_injected_tokens: u64) -> Vec<Hit> {
    let tokens = match max_injected_tokens {
        0 => DEFAULT_MAX_INJECTED_TOKENS,
        n => n,
    };
    let budget = tokens.saturating_mul(BYTES_PER_TOKEN);
    let mut used = 0u64;
    let mut out = Vec::with_capacity(hits.len());
    for (i, hit) in hits.into_iter().enumerate() {
        let size = hit.content.len() as u64;
        if i > 0 && used + size > budget {
            break;
        }
        used += size;
        out.push(hit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_become_quoted_or_terms() {
        assert_eq!(
            fts_query("How does back-pressure work? a"),
            "\"How\" OR \"does\" OR \"back\" OR \"pressure\" OR \"work\""
        );
        assert_eq!(fts_query("x ! ?"), "");
        assert_eq!(fts_query("NEAR(\"a b\")"), "\"NEAR\"");
        assert_eq!(fts_query(&"ab ".repeat(100)).matches("OR").count(), 39);
        assert_eq!(fts_query("Größe 東京"), "\"Größe\" OR \"東京\"");
    }

    #[test]
    fn k_rules() {
        assert_eq!(effective_top_k(None, 0), 5);
        assert_eq!(effective_top_k(None, 7), 7);
        assert_eq!(effective_top_k(Some(0), 7), 7);
        assert_eq!(effective_top_k(Some(-3), 7), 7);
        assert_eq!(effective_top_k(Some(3), 7), 3);
        assert_eq!(effective_top_k(Some(50), 7), 20);
        assert_eq!(effective_top_k(None, 99), 20);
    }

    fn ranked(ids: &[i64]) -> Vec<Ranked> {
        ids.iter()
            .map(|&chunk_id| Ranked {
                chunk_id,
                score: 0.0,
            })
            .collect()
    }

    #[test]
    fn fusion_by_rank_with_id_ties() {
        let ids =
            |lists: &[Vec<Ranked>]| -> Vec<i64> { rrf(lists).iter().map(|r| r.chunk_id).collect() };
        // In both lists beats the top of one; 3 (ranks 2 and 0) edges out 2 (ranks 1 and 1).
        assert_eq!(ids(&[ranked(&[1, 2, 3]), ranked(&[3, 2, 9])]), [3, 2, 1, 9]);
        // Equal scores: the lower chunk id first.
        assert_eq!(
            ids(&[ranked(&[2, 1]), ranked(&[1, 2]), ranked(&[5])]),
            [1, 2, 5]
        );
    }

    #[test]
    fn vectors_written_as_fisk_ai_writes_them_are_searched() {
        super::super::store::register_vec();
        let conn = Connection::open_in_memory().expect("open");
        // Fisk AI binds vectors as JSON text; this runtime queries with float32 blobs.
        conn.execute_batch(
            "CREATE VIRTUAL TABLE chunks_vec USING vec0(
                chunk_id  INTEGER PRIMARY KEY,
                embedding FLOAT[3]
            );
            INSERT INTO chunks_vec(chunk_id, embedding) VALUES (7, '[1,0,0]');
            INSERT INTO chunks_vec(chunk_id, embedding) VALUES (8, '[0,1,0]');
            INSERT INTO chunks_vec(chunk_id, embedding) VALUES (9, '[0.6,0.8,0]');",
        )
        .expect("vec0 table");
        let nearest = vector(&conn, &[0.0, 1.0, 0.0]).expect("knn");
        let ids: Vec<i64> = nearest.iter().map(|r| r.chunk_id).collect();
        assert_eq!(ids, [8, 9, 7]);
        assert!(
            nearest[0].score.abs() < 1e-6,
            "L2 distance 0 for the same vector"
        );
    }

    #[test]
    fn budget_keeps_the_first_hit() {
        let hit = |n: usize| Hit {
            citation: String::new(),
            section: String::new(),
            content: "x".repeat(n),
        };
        assert_eq!(cap(vec![hit(100), hit(1)], 10).len(), 1);
        assert_eq!(cap(vec![hit(30), hit(10), hit(1)], 10).len(), 2);
        assert_eq!(cap(vec![hit(30), hit(11), hit(1)], 10).len(), 1);
    }
}
