//! The vector tier's client for an OpenAI-compatible embeddings endpoint:
//! `POST <base_url>/embeddings` with `{"input": [...], "model": ...}`, an optional bearer token,
//! the configured timeout, a 64 MiB response cap, vectors placed by their `index`
//! (docs/builtins.md, "The embeddings endpoint"). Every vector is L2-normalised here, as the index requires.

use std::time::{Duration, Instant, SystemTime};

use serde::Deserialize;
use serde_json::json;

use super::error::{EmbeddingsError, HttpFailure, UrlProblem};
use crate::spec::app::EmbeddingsSpec;
use crate::telemetry::{EmbeddingsRequest, class};

/// Longest query sent, in bytes (cut on a character boundary).
const MAX_QUERY_BYTES: usize = 8192;
/// Inputs per request while indexing (halved on failure, down to one).
const BATCH: usize = 64;
/// Largest single input.
const MAX_INPUT_BYTES: usize = 128 * 1024;
/// Largest response read.
const MAX_RESPONSE_BYTES: u64 = 64 << 20;

/// A configured endpoint.
#[derive(Debug, Clone)]
pub(crate) struct Embedder {
    spec: EmbeddingsSpec,
    /// `base_url` without a trailing slash.
    base: String,
    /// The API key, read once from `api_key_env`.
    key: Option<String>,
    /// Whether the host is loopback (no proxy is used for it).
    loopback: bool,
    /// The host and the explicit port of `base_url`, for the requests' spans.
    host: String,
    port: Option<u16>,
}

impl Embedder {
    /// Validates the configuration (docs/builtins.md, "The embeddings endpoint": `base_url` and `model` set, `http(s)`, no
    /// user info, plain `http` only to loopback hosts) and reads the API key.
    pub(crate) fn new(spec: &EmbeddingsSpec) -> Result<Self, EmbeddingsError> {
        let base = spec.base_url.trim().trim_end_matches('/').to_string();
        if base.is_empty() {
            return Err(EmbeddingsError::NoBaseUrl);
        }
        if spec.model.trim().is_empty() {
            return Err(EmbeddingsError::NoModel);
        }
        let invalid = |why| EmbeddingsError::BaseUrl {
            base: base.clone(),
            why,
        };
        let uri: http::Uri = base
            .parse()
            .map_err(|error| invalid(UrlProblem::Invalid(error)))?;
        let scheme = uri.scheme_str().unwrap_or("");
        let authority = uri
            .authority()
            .ok_or_else(|| invalid(UrlProblem::NoHost))?
            .as_str();
        if authority.contains('@') {
            return Err(invalid(UrlProblem::UserInfo));
        }
        let host = uri.host().unwrap_or("");
        let loopback = is_loopback(host);
        let (host, port) = (host.to_string(), uri.port_u16());
        match scheme {
            "http" if !loopback => return Err(invalid(UrlProblem::PlainHttp)),
            "http" => {}
            "https" if cfg!(feature = "embeddings-tls") => {}
            "https" => return Err(invalid(UrlProblem::NoTls)),
            _ => return Err(invalid(UrlProblem::Scheme)),
        }
        let key = spec
            .api_key_env
            .filter(|name| !name.is_empty())
            .and_then(|name| std::env::var(name).ok())
            .filter(|key| !key.is_empty());
        Ok(Self {
            spec: *spec,
            base,
            key,
            loopback,
            host,
            port,
        })
    }

    /// The model name.
    pub(crate) fn model(&self) -> &str {
        self.spec.model
    }

    /// The prefixes, pinned in the manifest.
    pub(crate) fn spec(&self) -> &EmbeddingsSpec {
        &self.spec
    }

    /// The normalised vector of a query (prefix applied, query cut to 8 KiB), within the
    /// configured timeout and before `deadline`; the request is added to `requests`.
    pub(crate) fn embed_query(
        &self,
        query: &str,
        deadline: Option<Instant>,
        requests: &mut Vec<EmbeddingsRequest>,
    ) -> Result<Vec<f32>, EmbeddingsError> {
        let mut cut = query.len().min(MAX_QUERY_BYTES);
        while !query.is_char_boundary(cut) {
            cut -= 1;
        }
        let input = format!("{}{}", self.spec.query_prefix, &query[..cut]);
        let started = SystemTime::now();
        let mut status = None;
        let result = self.embed_batch(&[input], deadline, &mut status);
        requests.push(EmbeddingsRequest {
            model: self.spec.model.to_string(),
            purpose: "query",
            inputs: 1,
            server_address: self.host.clone(),
            server_port: self.port,
            started,
            ended: SystemTime::now(),
            status,
            error_class: result.as_ref().err().map(EmbeddingsError::class),
        });
        let mut vectors = result?;
        match (vectors.pop(), vectors.is_empty()) {
            (Some(vector), true) => Ok(normalize(vector)),
            _ => Err(EmbeddingsError::NotOneVector),
        }
    }

    /// The normalised vectors of chunks (document prefix with `{title}` replaced by the
    /// section, or `none`), in order, in batches.
    pub(crate) fn embed_documents(
        &self,
        docs: &[(&str, &str)],
    ) -> Result<Vec<Vec<f32>>, EmbeddingsError> {
        let inputs: Vec<String> = docs
            .iter()
            .map(|(title, text)| {
                let title = if title.is_empty() { "none" } else { title };
                format!(
                    "{}{text}",
                    self.spec.document_prefix.replace("{title}", title)
                )
            })
            .collect();
        let mut out = Vec::with_capacity(inputs.len());
        for batch in inputs.chunks(BATCH) {
            out.extend(self.embed_with_fallback(batch)?);
        }
        Ok(out.into_iter().map(normalize).collect())
    }

    /// The model's dimension: the length of one raw vector (the input Fisk AI probes with).
    pub(crate) fn probe_dimension(&self) -> Result<usize, EmbeddingsError> {
        let vectors = self.embed_batch(&["dimension probe".to_string()], None, &mut None)?;
        match vectors.first() {
            Some(vector) if vectors.len() == 1 && !vector.is_empty() => Ok(vector.len()),
            _ => Err(EmbeddingsError::EmptyProbe {
                base: self.base.clone(),
                model: self.spec.model.to_string(),
            }),
        }
    }

    /// A batch, split in halves on failure down to single inputs.
    fn embed_with_fallback(&self, inputs: &[String]) -> Result<Vec<Vec<f32>>, EmbeddingsError> {
        match self.embed_batch(inputs, None, &mut None) {
            Ok(vectors) => Ok(vectors),
            Err(error) if inputs.len() == 1 => Err(error),
            Err(_) => {
                let (left, right) = inputs.split_at(inputs.len() / 2);
                let mut vectors = self.embed_with_fallback(left)?;
                vectors.extend(self.embed_with_fallback(right)?);
                Ok(vectors)
            }
        }
    }

    /// One request; the raw vectors, by index. `status`: the HTTP status, once one arrived.
    fn embed_batch(
        &self,
        inputs: &[String],
        deadline: Option<Instant>,
        status: &mut Option<u16>,
    ) -> Result<Vec<Vec<f32>>, EmbeddingsError> {
        for (index, input) in inputs.iter().enumerate() {
            if input.trim().is_empty() {
                return Err(EmbeddingsError::EmptyInput { index });
            }
            if input.len() > MAX_INPUT_BYTES {
                return Err(EmbeddingsError::InputTooLarge {
                    index,
                    size: input.len(),
                    limit: MAX_INPUT_BYTES,
                });
            }
        }
        let mut timeout = self.spec.timeout;
        if let Some(deadline) = deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            if left < timeout {
                timeout = left;
            }
        }
        if timeout.is_zero() {
            return Err(EmbeddingsError::NoTimeLeft);
        }
        let mut config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false);
        if self.loopback {
            config = config.proxy(None);
        }
        let agent: ureq::Agent = config.build().into();
        let url = format!("{}/embeddings", self.base);
        let mut request = agent.post(&url).header("Content-Type", "application/json");
        if let Some(key) = &self.key {
            request = request.header("Authorization", &format!("Bearer {key}"));
        }
        let body = json!({ "input": inputs, "model": self.spec.model }).to_string();
        let mut response =
            request
                .send(body.as_bytes())
                .map_err(|error| EmbeddingsError::Contact {
                    base: self.base.clone(),
                    why: describe(error, timeout),
                })?;
        let code = response.status();
        *status = Some(code.as_u16());
        let raw = response
            .body_mut()
            .with_config()
            .limit(MAX_RESPONSE_BYTES)
            .read_to_vec()
            .map_err(|error| EmbeddingsError::ReadResponse(describe(error, timeout)))?;
        if code != http::StatusCode::OK {
            return Err(EmbeddingsError::Status {
                base: self.base.clone(),
                status: code,
                body: String::from_utf8_lossy(&raw).trim().to_string(),
            });
        }
        parse_response(&raw, inputs.len(), &self.base)
    }
}

impl EmbeddingsError {
    /// Fisk AI's class of a failed request (its span's `error.type`): out of time, the
    /// request this server could not build, or the server and the network to it.
    pub(crate) fn class(&self) -> &'static str {
        match self {
            EmbeddingsError::NoTimeLeft
            | EmbeddingsError::Contact {
                why: HttpFailure::TimedOut { .. },
                ..
            }
            | EmbeddingsError::ReadResponse(HttpFailure::TimedOut { .. }) => class::TIMEOUT,
            EmbeddingsError::NoBaseUrl
            | EmbeddingsError::NoModel
            | EmbeddingsError::BaseUrl { .. }
            | EmbeddingsError::EmptyInput { .. }
            | EmbeddingsError::InputTooLarge { .. } => class::OTHER,
            _ => class::PROVIDER,
        }
    }
}

/// An HTTP error; a timeout says how long it waited.
fn describe(error: ureq::Error, timeout: Duration) -> HttpFailure {
    match error {
        ureq::Error::Timeout(_) => HttpFailure::TimedOut { after: timeout },
        other => HttpFailure::Other(Box::new(other)),
    }
}

/// The OpenAI response shape.
#[derive(Debug, Deserialize)]
struct Response {
    #[serde(default)]
    data: Vec<Item>,
    error: Option<ErrorBody>,
}

#[derive(Debug, Deserialize)]
struct Item {
    embedding: Vec<f32>,
    index: i64,
}

#[derive(Debug, Deserialize)]
struct ErrorBody {
    #[serde(default)]
    message: String,
}

/// Vectors placed by `index`; every sent input must get exactly one, non-empty.
fn parse_response(raw: &[u8], count: usize, base: &str) -> Result<Vec<Vec<f32>>, EmbeddingsError> {
    let parsed: Response = serde_json::from_slice(raw).map_err(EmbeddingsError::Decode)?;
    if let Some(error) = parsed.error.filter(|e| !e.message.is_empty()) {
        return Err(EmbeddingsError::Reported {
            base: base.to_string(),
            message: error.message,
        });
    }
    if parsed.data.len() != count {
        return Err(EmbeddingsError::VectorCount {
            got: parsed.data.len(),
            count,
        });
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; count];
    for item in parsed.data {
        let slot = usize::try_from(item.index)
            .ok()
            .and_then(|index| out.get_mut(index))
            .ok_or(EmbeddingsError::OutOfRange {
                index: item.index,
                count,
            })?;
        if slot.is_some() {
            return Err(EmbeddingsError::Duplicate { index: item.index });
        }
        if item.embedding.is_empty() {
            return Err(EmbeddingsError::EmptyVector { index: item.index });
        }
        *slot = Some(item.embedding);
    }
    Ok(out.into_iter().flatten().collect())
}

/// `localhost`, 127.0.0.0/8 or ::1.
fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// L2-normalised (a zero vector stays as it is).
pub(crate) fn normalize(vector: Vec<f32>) -> Vec<f32> {
    let sum: f64 = vector.iter().map(|f| f64::from(*f) * f64::from(*f)).sum();
    if sum == 0.0 {
        return vector;
    }
    let inverse = (1.0 / sum.sqrt()) as f32;
    vector.into_iter().map(|f| f * inverse).collect()
}

/// A vector as sqlite-vec's `float32` blob.
pub(crate) fn to_blob(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|f| f.to_le_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(base_url: &'static str) -> EmbeddingsSpec {
        EmbeddingsSpec {
            base_url,
            model: "m",
            api_key_env: None,
            timeout: Duration::from_secs(1),
            query_prefix: "",
            document_prefix: "",
        }
    }

    #[test]
    fn base_urls() {
        assert!(Embedder::new(&spec("http://127.0.0.1:1234/v1")).is_ok());
        assert!(Embedder::new(&spec("http://localhost:1234/v1/")).is_ok());
        assert!(Embedder::new(&spec("http://[::1]:1234/v1")).is_ok());
        for (url, needle) in [
            ("", "required"),
            ("http://example.com/v1", "must use https"),
            ("http://user:pw@127.0.0.1/v1", "user info"),
            ("ftp://127.0.0.1/v1", "http or https"),
        ] {
            let error = Embedder::new(&spec(url)).expect_err(url).to_string();
            assert!(error.contains(needle), "{url}: {error}");
        }
    }

    #[test]
    fn responses_are_placed_by_index() {
        let raw = br#"{"data":[{"index":1,"embedding":[2.0]},{"index":0,"embedding":[1.0]}]}"#;
        assert_eq!(
            parse_response(raw, 2, "b").expect("placed"),
            vec![vec![1.0], vec![2.0]]
        );
        let dup = br#"{"data":[{"index":0,"embedding":[2.0]},{"index":0,"embedding":[1.0]}]}"#;
        assert_eq!(
            parse_response(dup, 2, "b")
                .expect_err("duplicate")
                .to_string(),
            "embeddings server returned duplicate index 0"
        );
        let few = br#"{"data":[]}"#;
        assert!(parse_response(few, 1, "b").is_err());
        let error = br#"{"error":{"message":"no such model"}}"#;
        assert_eq!(
            parse_response(error, 1, "b")
                .expect_err("reported")
                .to_string(),
            "embeddings server at b reported: no such model"
        );
    }

    #[test]
    fn unreachable_endpoints_fail_fast() {
        // Port 9 (discard) on loopback: nothing listens there in a test environment.
        let embedder = Embedder::new(&spec("http://127.0.0.1:9/v1")).expect("valid");
        let error = embedder
            .embed_query("hello", None, &mut Vec::new())
            .expect_err("unreachable")
            .to_string();
        assert!(
            error.starts_with("contacting embeddings server at http://127.0.0.1:9/v1"),
            "{error}"
        );
    }

    #[test]
    fn normalization() {
        assert_eq!(normalize(vec![3.0, 4.0]), vec![0.6, 0.8]);
        assert_eq!(normalize(vec![0.0, 0.0]), vec![0.0, 0.0]);
    }
}
