//! Fisk AI's knowledge spans inside a call's span: `retrieval` (`knowledge_search`) with an
//! `embeddings <model>` span per request to the embeddings server, and `knowledge_enumerate`;
//! and the `fisk.knowledge.degraded_searches` counter a degraded search adds to.

// Without the `knowledge` feature nothing reports a class or a degraded search.
#![cfg_attr(not(feature = "knowledge"), allow(dead_code))]

use std::time::SystemTime;

use super::Attr;

/// `error.type` of a failure the knowledge tools report (Fisk AI's error classes).
pub(crate) mod class {
    /// A deadline that expired (the tool timeout, the embeddings timeout).
    pub(crate) const TIMEOUT: &str = "timeout";
    /// Work abandoned: the client cancelled, or the server is stopping.
    pub(crate) const CANCELED: &str = "canceled";
    /// The embeddings server (or the network to it) failed.
    pub(crate) const PROVIDER: &str = "provider";
    /// The knowledge index failed.
    pub(crate) const STORE: &str = "store";
    /// The index and the configuration disagree (the model's dimension).
    pub(crate) const CONFIG: &str = "config";
    /// An enumeration query its language refuses.
    pub(crate) const INVALID_QUERY: &str = "invalid_query";
    /// Anything else (a request this server could not build).
    pub(crate) const OTHER: &str = "_OTHER";
}

/// Why a hybrid search fell back to the lexical tier (`fisk.knowledge.degraded_reason`, a
/// closed set: the metric's only attribute).
pub(crate) mod degrade {
    /// The query's embeddings request ran out of time.
    pub(crate) const TIMEOUT: &str = "timeout";
    /// The embeddings server failed to answer usefully.
    pub(crate) const EMBEDDINGS: &str = "embeddings";
}

/// What a knowledge call learnt that its span reports and its answer does not say; the
/// knowledge tools fill it in as they go, so a return before a fact is known leaves it unset.
#[derive(Debug, Default)]
pub(crate) struct KnowledgeFacts {
    /// Chunks in the index (`fisk.knowledge.indexed_chunks`), once counted.
    pub(crate) indexed_chunks: Option<i64>,
    /// The tier that ran (`lexical`, `hybrid`), once one did.
    pub(crate) effective_tier: Option<&'static str>,
    /// Why the vector tier fell back to lexical ([`degrade`]).
    pub(crate) degraded: Option<&'static str>,
    /// Every request to the embeddings server, in order.
    pub(crate) embeddings: Vec<EmbeddingsRequest>,
    /// The failure's [`class`], when the call failed.
    pub(crate) error_class: Option<&'static str>,
}

/// One request to the embeddings server, for its `embeddings <model>` span.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EmbeddingsRequest {
    /// The configured model (`gen_ai.request.model`, and the span's name).
    pub(crate) model: String,
    /// `query` (`fisk.embeddings.purpose`).
    pub(crate) purpose: &'static str,
    /// Texts sent (`fisk.embeddings.inputs`).
    pub(crate) inputs: usize,
    /// The base URL's host (`server.address`; never the URL, which may carry credentials).
    pub(crate) server_address: String,
    /// The base URL's explicit port (`server.port`).
    pub(crate) server_port: Option<u16>,
    /// When it started and ended.
    pub(crate) started: SystemTime,
    /// When it ended.
    pub(crate) ended: SystemTime,
    /// The HTTP status, when a response arrived (`http.response.status_code`).
    pub(crate) status: Option<u16>,
    /// The failure's [`class`], when it failed.
    pub(crate) error_class: Option<&'static str>,
}

/// Which knowledge operation a child span covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Knowledge {
    Search,
    Enumerate,
}

/// A knowledge tool's span inside a call's (nothing when telemetry is off or for other tools).
#[derive(Debug, Default)]
pub(crate) struct ChildSpan<'a> {
    #[cfg(feature = "telemetry")]
    pub(super) span: Option<(Knowledge, &'a super::otlp::Exporter, opentelemetry::Context)>,
    #[cfg(not(feature = "telemetry"))]
    pub(super) span: std::marker::PhantomData<&'a ()>,
}

impl KnowledgeFacts {
    /// Nothing learnt but how it failed.
    pub(crate) fn failed(class: &'static str) -> Self {
        Self {
            error_class: Some(class),
            ..Self::default()
        }
    }
}

impl ChildSpan<'_> {
    /// Ends the span with what the tool answered (its JSON; `None`: it failed) and what the
    /// call learnt on the way: the embeddings requests become spans under it, and a degraded
    /// search adds to `fisk.knowledge.degraded_searches`.
    pub(crate) fn finish(self, answer: Option<&str>, facts: &KnowledgeFacts) {
        #[cfg(feature = "telemetry")]
        if let Some((kind, exporter, cx)) = &self.span {
            for request in &facts.embeddings {
                let (attrs, failed) = embeddings_attrs(request);
                exporter.record_span(
                    format!("embeddings {}", request.model),
                    opentelemetry::trace::SpanKind::Client,
                    cx,
                    (request.started, request.ended),
                    attrs,
                    failed,
                );
            }
            if let Some(reason) = facts.degraded.filter(|_| *kind == Knowledge::Search) {
                exporter.degraded_search(reason);
            }
            let attrs = knowledge_attrs(*kind, answer, facts);
            let failed = answer.is_none();
            super::otlp::end(cx, attrs, failed);
        }
        let _ = (answer, facts);
    }
}

/// An embeddings request's span attributes (the end ones with the start ones), and whether it
/// failed.
fn embeddings_attrs(request: &EmbeddingsRequest) -> (Vec<Attr>, bool) {
    let mut attrs = vec![
        Attr::Str("gen_ai.operation.name", "embeddings".into()),
        Attr::Str("gen_ai.request.model", request.model.clone()),
        Attr::Int(
            "fisk.embeddings.inputs",
            i64::try_from(request.inputs).unwrap_or(i64::MAX),
        ),
        Attr::Str("fisk.embeddings.purpose", request.purpose.into()),
    ];
    if !request.server_address.is_empty() {
        attrs.push(Attr::Str("server.address", request.server_address.clone()));
    }
    attrs.extend(
        request
            .server_port
            .map(|port| Attr::Int("server.port", i64::from(port))),
    );
    attrs.extend(
        request
            .status
            .map(|status| Attr::Int("http.response.status_code", i64::from(status))),
    );
    attrs.extend(
        request
            .error_class
            .map(|class| Attr::Str("error.type", class.into())),
    );
    (attrs, request.error_class.is_some())
}

/// Fisk AI's end attributes of a search or an enumeration: its answer (`None`: it failed) and
/// what the call learnt.
pub(super) fn knowledge_attrs(
    kind: Knowledge,
    answer: Option<&str>,
    facts: &KnowledgeFacts,
) -> Vec<Attr> {
    let Some(json) = answer else {
        // As Fisk AI: what was learnt before it failed, then the class.
        let mut attrs = Vec::new();
        if kind == Knowledge::Search {
            attrs.extend(
                facts
                    .effective_tier
                    .map(|tier| Attr::Str("fisk.knowledge.tier.effective", tier.into())),
            );
            attrs.extend(
                facts
                    .indexed_chunks
                    .map(|n| Attr::Int("fisk.knowledge.indexed_chunks", n)),
            );
        }
        let class = facts.error_class.unwrap_or(class::OTHER);
        attrs.push(Attr::Str("error.type", class.into()));
        return attrs;
    };
    let answer: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
    let text = |key: &str| answer.get(key).and_then(serde_json::Value::as_str);
    let int = |key: &str| answer.get(key).and_then(serde_json::Value::as_i64);
    let mut attrs = Vec::new();
    match kind {
        Knowledge::Search => {
            if let Some(status) = text("status") {
                attrs.push(Attr::Str("fisk.knowledge.search.status", status.into()));
            }
            attrs.extend(
                facts
                    .effective_tier
                    .map(|tier| Attr::Str("fisk.knowledge.tier.effective", tier.into())),
            );
            attrs.extend(
                facts
                    .indexed_chunks
                    .map(|n| Attr::Int("fisk.knowledge.indexed_chunks", n)),
            );
            let sections = answer
                .get("results")
                .and_then(serde_json::Value::as_array)
                .map_or(0, Vec::len);
            attrs.push(Attr::Int(
                "fisk.knowledge.sections",
                i64::try_from(sections).unwrap_or(i64::MAX),
            ));
            if let Some(reason) = facts.degraded {
                attrs.push(Attr::Bool("fisk.knowledge.degraded", true));
                attrs.push(Attr::Str("fisk.knowledge.degraded_reason", reason.into()));
            }
        }
        Knowledge::Enumerate => {
            if let Some(status) = text("status") {
                attrs.push(Attr::Str("fisk.knowledge.enumerate.status", status.into()));
            }
            if text("status") != Some("index_not_built") {
                attrs.extend(
                    int("indexed_documents")
                        .map(|n| Attr::Int("fisk.knowledge.indexed_documents", n)),
                );
            }
            attrs.extend(int("matched").map(|n| Attr::Int("fisk.knowledge.matched", n)));
            attrs.extend(int("returned").map(|n| Attr::Int("fisk.knowledge.documents", n)));
            if answer.get("truncated") == Some(&serde_json::Value::Bool(true)) {
                attrs.push(Attr::Bool("fisk.knowledge.truncated", true));
            }
        }
    }
    attrs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knowledge_spans_carry_fisk_ais_attributes() {
        let facts = KnowledgeFacts {
            indexed_chunks: Some(7),
            effective_tier: Some("lexical"),
            degraded: Some(degrade::EMBEDDINGS),
            ..KnowledgeFacts::default()
        };
        let search = knowledge_attrs(
            Knowledge::Search,
            Some(
                r#"{"tier":"tier: hybrid -> DEGRADED to lexical (x)","status":"ok","results":[{},{}]}"#,
            ),
            &facts,
        );
        assert_eq!(
            search,
            [
                Attr::Str("fisk.knowledge.search.status", "ok".into()),
                Attr::Str("fisk.knowledge.tier.effective", "lexical".into()),
                Attr::Int("fisk.knowledge.indexed_chunks", 7),
                Attr::Int("fisk.knowledge.sections", 2),
                Attr::Bool("fisk.knowledge.degraded", true),
                Attr::Str("fisk.knowledge.degraded_reason", "embeddings".into()),
            ]
        );
        // Not built: no tier ran and nothing was counted.
        let not_built = knowledge_attrs(
            Knowledge::Search,
            Some(r#"{"status":"index_not_built","results":[]}"#),
            &KnowledgeFacts::default(),
        );
        assert_eq!(
            not_built,
            [
                Attr::Str("fisk.knowledge.search.status", "index_not_built".into()),
                Attr::Int("fisk.knowledge.sections", 0),
            ]
        );
        let failed = KnowledgeFacts {
            indexed_chunks: Some(3),
            error_class: Some(class::CONFIG),
            ..KnowledgeFacts::default()
        };
        assert_eq!(
            knowledge_attrs(Knowledge::Search, None, &failed),
            [
                Attr::Int("fisk.knowledge.indexed_chunks", 3),
                Attr::Str("error.type", "config".into()),
            ]
        );
        let enumerate = knowledge_attrs(
            Knowledge::Enumerate,
            Some(
                r#"{"status":"ok","matched":3,"returned":2,"truncated":true,"indexed_documents":9}"#,
            ),
            &KnowledgeFacts::default(),
        );
        assert_eq!(
            enumerate,
            [
                Attr::Str("fisk.knowledge.enumerate.status", "ok".into()),
                Attr::Int("fisk.knowledge.indexed_documents", 9),
                Attr::Int("fisk.knowledge.matched", 3),
                Attr::Int("fisk.knowledge.documents", 2),
                Attr::Bool("fisk.knowledge.truncated", true),
            ]
        );
    }

    #[test]
    fn an_embeddings_request_is_fisk_ais_span() {
        let now = SystemTime::now();
        let request = EmbeddingsRequest {
            model: "m".into(),
            purpose: "query",
            inputs: 1,
            server_address: "127.0.0.1".into(),
            server_port: Some(8080),
            started: now,
            ended: now,
            status: Some(503),
            error_class: Some(class::PROVIDER),
        };
        assert_eq!(
            embeddings_attrs(&request),
            (
                vec![
                    Attr::Str("gen_ai.operation.name", "embeddings".into()),
                    Attr::Str("gen_ai.request.model", "m".into()),
                    Attr::Int("fisk.embeddings.inputs", 1),
                    Attr::Str("fisk.embeddings.purpose", "query".into()),
                    Attr::Str("server.address", "127.0.0.1".into()),
                    Attr::Int("server.port", 8080),
                    Attr::Int("http.response.status_code", 503),
                    Attr::Str("error.type", "provider".into()),
                ],
                true
            )
        );
    }
}
