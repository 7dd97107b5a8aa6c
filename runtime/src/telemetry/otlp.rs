//! The exporter (feature `telemetry`): OpenTelemetry's SDK with a batch span processor, a
//! periodic metric reader and the OTLP/HTTP protobuf exporters, which post through the runtime's
//! own ureq (no async HTTP client of their own), the spans a call opens and Fisk AI's one
//! instrument a served call can record, `fisk.knowledge.degraded_searches`.

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use opentelemetry::metrics::{Counter, MeterProvider as _};
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{
    Link, SpanKind, Status, TraceContextExt, TraceId, Tracer as _, TracerProvider as _,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{
    Sampler, SamplingResult, SdkTracer, SdkTracerProvider, ShouldSample,
};

use super::settings::{Export, loopback};
use super::{Attr, SCOPE, TelemetryError};

/// How long one export request may take.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);
/// The most of a collector's answer read.
const MAX_RESPONSE_BYTES: u64 = 1 << 20;

/// A running exporter.
#[derive(Debug)]
pub(super) struct Exporter {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    /// The metric pipeline and its counter; `None` with `telemetry.no_metrics`.
    metrics: Option<(SdkMeterProvider, Counter<u64>)>,
}

impl Exporter {
    /// Starts the pipeline for `export`; nothing is sent until a span ends.
    pub(super) fn start(export: &Export, version: &str) -> Result<Self, TelemetryError> {
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(Ureq::to(&export.traces_url))
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(export.traces_url.clone())
            .with_timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|error| {
                TelemetryError(format!("cannot build the OTLP/HTTP span exporter: {error}"))
            })?;
        let resource = Resource::builder()
            .with_service_name(export.service_name.clone())
            .with_attribute(KeyValue::new("service.version", version.to_string()))
            .build();
        let provider = SdkTracerProvider::builder()
            .with_resource(resource.clone())
            .with_sampler(FiskSampler::new(export.sample_ratio))
            .with_batch_exporter(exporter)
            .build();
        let tracer = provider.tracer(SCOPE);
        let metrics = match &export.metrics_url {
            Some(url) => Some(metrics(url, resource)?),
            None => None,
        };
        Ok(Self {
            provider,
            tracer,
            metrics,
        })
    }

    /// Sends what is queued and stops the pipelines.
    pub(super) fn shutdown(&self) {
        let _ = self.provider.shutdown();
        if let Some((meters, _)) = &self.metrics {
            let _ = meters.shutdown();
        }
    }

    /// Counts one search that fell back from the vector tier to lexical, by `reason` (a
    /// closed set, the instrument's only attribute).
    pub(super) fn degraded_search(&self, reason: &'static str) {
        if let Some((_, counter)) = &self.metrics {
            counter.add(
                1,
                &[KeyValue::new("fisk.knowledge.degraded_reason", reason)],
            );
        }
    }

    /// A finished span `name` of `kind` under `parent`, from `times.0` to `times.1` (work
    /// measured where no span could be opened, an embeddings request on a blocking thread).
    pub(super) fn record_span(
        &self,
        name: String,
        kind: SpanKind,
        parent: &Context,
        times: (SystemTime, SystemTime),
        attrs: Vec<Attr>,
        failed: bool,
    ) {
        let span = self
            .tracer
            .span_builder(name)
            .with_kind(kind)
            .with_start_time(times.0)
            .with_attributes(attrs.into_iter().map(key_value).collect::<Vec<_>>())
            .start_with_context(&self.tracer, parent);
        let cx = parent.with_span(span);
        let span = cx.span();
        if failed {
            span.set_status(Status::error(""));
        }
        span.end_with_timestamp(times.1);
    }

    /// A span `name` of `kind` under `parent` (the W3C `traceparent`/`tracestate`, when given).
    pub(super) fn start_span(
        &self,
        name: String,
        kind: SpanKind,
        parent: &Context,
        attrs: Vec<Attr>,
    ) -> Context {
        let span = self
            .tracer
            .span_builder(name)
            .with_kind(kind)
            .with_attributes(attrs.into_iter().map(key_value).collect::<Vec<_>>())
            .start_with_context(&self.tracer, parent);
        parent.with_span(span)
    }
}

/// The metric pipeline posting to `url` every `OTEL_METRIC_EXPORT_INTERVAL` (60 s unless set,
/// and when the server stops), cumulative as Fisk AI's, and its one instrument.
fn metrics(
    url: &str,
    resource: Resource,
) -> Result<(SdkMeterProvider, Counter<u64>), TelemetryError> {
    let exporter = opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .with_http_client(Ureq::to(url))
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(url.to_string())
        .with_timeout(EXPORT_TIMEOUT)
        .build()
        .map_err(|error| {
            TelemetryError(format!(
                "cannot build the OTLP/HTTP metric exporter: {error}"
            ))
        })?;
    let provider = SdkMeterProvider::builder()
        .with_resource(resource)
        .with_reader(PeriodicReader::builder(exporter).build())
        .build();
    let counter = provider
        .meter(SCOPE)
        .u64_counter("fisk.knowledge.degraded_searches")
        .with_unit("{search}")
        .with_description("Knowledge searches that fell back from the vector tier to lexical.")
        .build();
    Ok((provider, counter))
}

/// The context of a W3C `traceparent` (and `tracestate`), or the empty one.
pub(super) fn remote_parent(traceparent: Option<&str>, tracestate: Option<&str>) -> Context {
    let Some(traceparent) = traceparent else {
        return Context::new();
    };
    let mut carrier = HashMap::new();
    carrier.insert("traceparent".to_string(), traceparent.to_string());
    if let Some(tracestate) = tracestate {
        carrier.insert("tracestate".to_string(), tracestate.to_string());
    }
    TraceContextPropagator::new().extract(&carrier)
}

/// The `traceparent` of the span `cx` holds, for a command to continue the trace.
pub(super) fn traceparent_of(cx: &Context) -> Option<String> {
    let propagator = TraceContextPropagator::new();
    let mut carrier: HashMap<String, String> = HashMap::new();
    propagator.inject_context(cx, &mut carrier);
    let field = propagator.fields().next()?;
    carrier.remove(field)
}

/// Sets `attrs` on the span `cx` holds, marks it failed when `failed`, and ends it.
pub(super) fn end(cx: &Context, attrs: Vec<Attr>, failed: bool) {
    let span = cx.span();
    for attr in attrs {
        span.set_attribute(key_value(attr));
    }
    if failed {
        span.set_status(Status::error(""));
    }
    span.end();
}

fn key_value(attr: Attr) -> KeyValue {
    match attr {
        Attr::Str(key, value) => KeyValue::new(key, value),
        Attr::Int(key, value) => KeyValue::new(key, value),
        Attr::Bool(key, value) => KeyValue::new(key, value),
    }
}

/// Fisk AI's sampler: a parent in this process decides for its children; a caller's sampled
/// flag is followed, but a caller that did not sample cannot suppress this server's own
/// recording (the ratio decides then, as with no caller).
#[derive(Debug, Clone)]
struct FiskSampler {
    ratio: Sampler,
    parent_based: Sampler,
}

impl FiskSampler {
    fn new(ratio: f64) -> Self {
        Self {
            ratio: Sampler::TraceIdRatioBased(ratio),
            parent_based: Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(ratio))),
        }
    }
}

impl ShouldSample for FiskSampler {
    fn should_sample(
        &self,
        parent_context: Option<&Context>,
        trace_id: TraceId,
        name: &str,
        span_kind: &SpanKind,
        attributes: &[KeyValue],
        links: &[Link],
    ) -> SamplingResult {
        let unsampled_caller = parent_context.is_some_and(|cx| {
            let parent = cx.span();
            let parent = parent.span_context();
            parent.is_valid() && parent.is_remote() && !parent.is_sampled()
        });
        let sampler = if unsampled_caller {
            &self.ratio
        } else {
            &self.parent_based
        };
        sampler.should_sample(parent_context, trace_id, name, span_kind, attributes, links)
    }
}

/// opentelemetry-http's client over ureq: the exporter runs on the batch processor's own
/// thread, where a blocking request is what it waits for anyway.
#[derive(Debug)]
struct Ureq {
    agent: ureq::Agent,
}

impl Ureq {
    /// A client for `url`: bounded, and without a proxy for a loopback host.
    fn to(url: &str) -> Self {
        let host = url
            .parse::<http::Uri>()
            .ok()
            .and_then(|uri| uri.host().map(str::to_string))
            .unwrap_or_default();
        let mut config = ureq::Agent::config_builder()
            .timeout_global(Some(EXPORT_TIMEOUT))
            .http_status_as_error(false);
        if loopback(&host) {
            config = config.proxy(None);
        }
        Self {
            agent: config.build().into(),
        }
    }
}

#[async_trait::async_trait]
impl HttpClient for Ureq {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let request = Request::from_parts(parts, body.to_vec());
        let mut response = self.agent.run(request)?;
        let status = response.status();
        let body = response
            .body_mut()
            .with_config()
            .limit(MAX_RESPONSE_BYTES)
            .read_to_vec()?;
        Ok(Response::builder().status(status).body(Bytes::from(body))?)
    }
}
