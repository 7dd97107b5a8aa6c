//! OpenTelemetry export of the config's `telemetry` block (docs/telemetry.md), as Fisk AI's
//! `fisk mcp` honours it: resolved against the standard `OTEL_*` variables and Fisk AI's own
//! switches ([`settings`]), spans exported over OTLP/HTTP (protobuf) by the `telemetry` cargo
//! feature ([`otlp`]). Fisk AI's knowledge spans (`retrieval`, `knowledge_enumerate`) run
//! under one `execute_tool <tool>` server span per call, the span Fisk AI's own server opens
//! for a call it answers, whose parent is the caller's `_meta` trace context. Without the
//! feature a server whose config enables telemetry refuses to start, saying so.

// Without the feature the span types stay (the call path is the same) and export nothing, so
// what only the exporter reads is unused there.
#![cfg_attr(not(feature = "telemetry"), allow(dead_code))]

mod knowledge;
mod settings;

#[cfg(feature = "telemetry")]
mod otlp;

// Without the `knowledge` feature no knowledge tool fills these in.
#[cfg_attr(not(feature = "knowledge"), allow(unused_imports))]
pub(crate) use knowledge::{ChildSpan, EmbeddingsRequest, KnowledgeFacts, class, degrade};
pub(crate) use settings::{Resolved, TelemetryError, resolve};

use knowledge::Knowledge;

use std::marker::PhantomData;
use std::sync::OnceLock;

use crate::spec::app::TelemetrySpec;

/// The instrumentation scope of every span.
#[cfg(feature = "telemetry")]
const SCOPE: &str = "fiskgen";

/// The longest value a client controls (a request id, a tool name nothing serves) that reaches a
/// span attribute; longer ones are cut to it.
#[cfg(feature = "telemetry")]
const MAX_CLIENT_VALUE: usize = 256;

/// `value`, cut to [`MAX_CLIENT_VALUE`] characters.
#[cfg(feature = "telemetry")]
fn bounded(value: &str) -> String {
    value.chars().take(MAX_CLIENT_VALUE).collect()
}

/// One span attribute.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Attr {
    /// A string.
    Str(&'static str, String),
    /// An integer.
    Int(&'static str, i64),
    /// A boolean.
    Bool(&'static str, bool),
}

/// How a call ended, for its span (Fisk AI's closed `fisk.tool.outcome` set, the values a
/// served call can have).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// It ran and answered (a command's non-zero exit included).
    Executed,
    /// It answered an error.
    Error,
    /// It named a tool this server does not serve.
    UnknownTool,
    /// No slot freed up within the tool timeout (`max_concurrent_tools`): nothing ran.
    Capacity,
    /// The user did not approve it at the confirmation gate: nothing ran.
    ConfirmDenied,
    /// It waits for the user's answer (an input-required result).
    Unanswered,
    /// It became a task.
    Deferred,
}

impl Outcome {
    fn label(self) -> &'static str {
        match self {
            Outcome::Executed => "executed",
            Outcome::Error => "error",
            Outcome::UnknownTool => "unknown_tool",
            Outcome::Capacity => "capacity",
            Outcome::ConfirmDenied => "confirm_denied",
            Outcome::Unanswered => "unanswered",
            Outcome::Deferred => "deferred",
        }
    }

    /// Whether the span is marked failed (`error.type` `tool_error`, status `ERROR`): the
    /// client was told the call failed.
    fn failed(self) -> bool {
        matches!(
            self,
            Outcome::Error | Outcome::UnknownTool | Outcome::Capacity | Outcome::ConfirmDenied
        )
    }
}

/// Who and what a served call is, for its span (Fisk AI's `fisk.served.*` attributes).
#[derive(Debug, Clone, Default)]
pub(crate) struct Served {
    /// The request's correlation tag: its JSON-RPC id (`fisk.served.request`).
    pub(crate) request: String,
    /// What the transport vouches for about the caller: the authenticated subject, when the
    /// server checks credentials (`fisk.served.caller`, and `fisk.served.caller_verified`).
    pub(crate) caller: Option<String>,
    /// The name the client claims for itself (`clientInfo.name`; `fisk.served.sender`).
    pub(crate) sender: Option<String>,
}

/// The exporter, or nothing.
#[derive(Debug, Default)]
pub(crate) struct Telemetry {
    #[cfg(feature = "telemetry")]
    exporter: Option<otlp::Exporter>,
    identity: &'static str,
}

impl Telemetry {
    /// Telemetry off.
    pub(crate) fn off() -> Self {
        Self::default()
    }

    /// Starts what `spec` asks for in this environment; `notes` get the startup line.
    pub(crate) fn start(
        spec: Option<&TelemetrySpec>,
        identity: &'static str,
        version: &str,
        notes: &mut Vec<String>,
    ) -> Result<Self, TelemetryError> {
        let env = |name: &str| std::env::var(name).ok();
        let export = match resolve(spec, identity, &env)? {
            Resolved::Off { vetoed_by: None } => return Ok(Self::off()),
            Resolved::Off {
                vetoed_by: Some(by),
            } => {
                notes.push(format!(
                    "telemetry: off ({by} is set), though the config enables it"
                ));
                return Ok(Self::off());
            }
            Resolved::On(export) => export,
        };
        let urls = std::iter::once(&export.traces_url).chain(&export.metrics_url);
        for url in urls {
            if url.starts_with("https://") && !cfg!(feature = "tls") {
                return Err(TelemetryError(format!(
                    "telemetry endpoint {url:?} is https, but this server was built without \
                     TLS; rebuild it (fiskgen build enables the runtime's tls feature for an \
                     https telemetry.endpoint) or use a loopback http endpoint"
                )));
            }
        }
        Self::exporting(&export, identity, version, notes)
    }

    #[cfg(feature = "telemetry")]
    fn exporting(
        export: &settings::Export,
        identity: &'static str,
        version: &str,
        notes: &mut Vec<String>,
    ) -> Result<Self, TelemetryError> {
        let exporter = otlp::Exporter::start(export, version)?;
        notes.push(format!(
            "telemetry: exporting spans over OTLP/HTTP to {} ({}) as service {:?}, sample ratio \
             {}",
            export.traces_url, export.endpoint_origin, export.service_name, export.sample_ratio
        ));
        notes.push(match &export.metrics_url {
            Some(url) => format!("telemetry: exporting metrics over OTLP/HTTP to {url}"),
            None => "telemetry: no metrics (telemetry.no_metrics)".to_string(),
        });
        Ok(Self {
            exporter: Some(exporter),
            identity,
        })
    }

    #[cfg(not(feature = "telemetry"))]
    fn exporting(
        _: &settings::Export,
        _: &'static str,
        _: &str,
        _: &mut Vec<String>,
    ) -> Result<Self, TelemetryError> {
        Err(TelemetryError(
            "the config enables telemetry, but this server was built without the runtime's \
             telemetry feature; rebuild it with fiskgen build (which enables it), or set \
             NO_TELEMETRY=1 to run without"
                .into(),
        ))
    }

    /// Sends what is queued; called once, when the server stops.
    pub(crate) fn shutdown(&self) {
        #[cfg(feature = "telemetry")]
        if let Some(exporter) = &self.exporter {
            exporter.shutdown();
        }
    }

    /// The span of one call of `tool` (`None`: the client named a tool this server does not
    /// serve, `requested`), under the caller's trace context when it sent one.
    pub(crate) fn tool_call(
        &self,
        tool: Option<&str>,
        requested: &str,
        trace: (Option<&str>, Option<&str>),
        served: &Served,
    ) -> CallSpan<'_> {
        #[cfg(feature = "telemetry")]
        if let Some(exporter) = &self.exporter {
            let parent = otlp::remote_parent(trace.0, trace.1);
            let mut attrs = vec![
                Attr::Str("gen_ai.operation.name", "execute_tool".into()),
                Attr::Str("gen_ai.tool.type", "function".into()),
                Attr::Str("gen_ai.agent.name", self.identity.into()),
                Attr::Str("fisk.served.request", bounded(&served.request)),
                Attr::Bool("fisk.served.caller_verified", served.caller.is_some()),
            ];
            // As Fisk AI names it: a name the client made up reaches an attribute, never the
            // span's name.
            let name = match tool {
                Some(tool) => {
                    attrs.push(Attr::Str("gen_ai.tool.name", tool.into()));
                    format!("execute_tool {tool}")
                }
                None => {
                    attrs.push(Attr::Str("fisk.tool.requested_name", bounded(requested)));
                    "execute_tool unknown_tool".to_string()
                }
            };
            attrs.extend(
                served
                    .caller
                    .clone()
                    .map(|caller| Attr::Str("fisk.served.caller", caller)),
            );
            attrs.extend(
                served
                    .sender
                    .clone()
                    .map(|sender| Attr::Str("fisk.served.sender", bounded(&sender))),
            );
            let cx =
                exporter.start_span(name, opentelemetry::trace::SpanKind::Server, &parent, attrs);
            return CallSpan {
                span: Some((exporter, cx)),
                marked: OnceLock::new(),
                _lifetime: PhantomData,
            };
        }
        let _ = (tool, requested, trace, served);
        CallSpan::none()
    }
}

/// The span of one call (nothing when telemetry is off).
#[derive(Debug)]
pub(crate) struct CallSpan<'a> {
    #[cfg(feature = "telemetry")]
    span: Option<(&'a otlp::Exporter, opentelemetry::Context)>,
    /// An outcome a step of the call already knows (capacity, a denial at the gate), which
    /// [`CallSpan::finish`] reports instead of the one read from the answer.
    marked: OnceLock<Outcome>,
    _lifetime: PhantomData<&'a ()>,
}

impl CallSpan<'_> {
    fn none() -> Self {
        Self {
            #[cfg(feature = "telemetry")]
            span: None,
            marked: OnceLock::new(),
            _lifetime: PhantomData,
        }
    }

    /// This span's W3C `traceparent`, which a command continues the trace from; `None` when
    /// telemetry is off (the caller's own context is handed on then).
    pub(crate) fn traceparent(&self) -> Option<String> {
        #[cfg(feature = "telemetry")]
        if let Some((_, cx)) = &self.span {
            return otlp::traceparent_of(cx);
        }
        None
    }

    /// A child span for a knowledge tool's work (`retrieval` for `knowledge_search`,
    /// `knowledge_enumerate` for enumeration; Fisk AI's names and kinds); an empty one for other
    /// tools. `top_k`: the results a search asks for (`fisk.knowledge.top_k`); `hybrid`: whether
    /// the vector tier is configured (`fisk.knowledge.tier.configured`).
    pub(crate) fn knowledge(
        &self,
        tool: &str,
        top_k: Option<usize>,
        hybrid: bool,
    ) -> ChildSpan<'_> {
        let kind = match tool {
            "knowledge_search" => Knowledge::Search,
            "knowledge_enumerate" => Knowledge::Enumerate,
            _ => return ChildSpan::default(),
        };
        #[cfg(feature = "telemetry")]
        if let Some((exporter, cx)) = &self.span {
            use opentelemetry::trace::SpanKind;
            let (name, span_kind, attrs) = match kind {
                Knowledge::Search => (
                    "retrieval",
                    SpanKind::Client,
                    [
                        Attr::Str("gen_ai.operation.name", "retrieval".into()),
                        Attr::Str(
                            "fisk.knowledge.tier.configured",
                            if hybrid { "hybrid" } else { "lexical" }.into(),
                        ),
                    ]
                    .into_iter()
                    .chain(top_k.map(|k| {
                        Attr::Int("fisk.knowledge.top_k", i64::try_from(k).unwrap_or(i64::MAX))
                    }))
                    .collect(),
                ),
                Knowledge::Enumerate => ("knowledge_enumerate", SpanKind::Internal, Vec::new()),
            };
            let cx = exporter.start_span(name.to_string(), span_kind, cx, attrs);
            return ChildSpan {
                span: Some((kind, *exporter, cx)),
            };
        }
        let _ = (kind, top_k, hybrid);
        ChildSpan::default()
    }

    /// Records that the call ended as `outcome` whatever its answer reads like (the first mark
    /// stands).
    pub(crate) fn mark(&self, outcome: Outcome) {
        let _ = self.marked.set(outcome);
    }

    /// Ends the span with how the call ended (unless [`CallSpan::mark`] said) and, for a
    /// command that ran, its exit code.
    pub(crate) fn finish(self, outcome: Outcome, exit_code: Option<i64>) {
        let outcome = self.marked.get().copied().unwrap_or(outcome);
        #[cfg(feature = "telemetry")]
        if let Some((_, cx)) = &self.span {
            let failed = outcome.failed();
            let mut attrs = vec![Attr::Str("fisk.tool.outcome", outcome.label().into())];
            attrs.extend(exit_code.map(|code| Attr::Int("fisk.tool.exit_code", code)));
            if failed {
                attrs.push(Attr::Str("error.type", "tool_error".into()));
            }
            otlp::end(cx, attrs, failed);
        }
        let _ = (outcome.label(), exit_code);
    }
}
