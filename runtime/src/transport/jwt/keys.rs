//! The signing keys and the validation itself (feature `oauth`); see the parent module.

use std::str::FromStr;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::{AlgorithmParameters, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use serde_json::{Map, Value};

use super::{KeysError, Rejection};

use crate::spec::app::{JwksSource, OAuthSpec};

/// Largest JWKS document read.
const MAX_JWKS_BYTES: u64 = 1024 * 1024;
/// How long one JWKS fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// An unknown `kid` refetches the keys at most this often.
const UNKNOWN_KID_BACKOFF: Duration = Duration::from_secs(30);
/// Shortest refresh interval honoured.
const MIN_REFRESH: Duration = Duration::from_secs(10);

fn reject(text: impl Into<String>) -> Rejection {
    Rejection(text.into())
}

/// The authorization server's signing keys.
pub(crate) struct Keys {
    spec: &'static OAuthSpec,
    set: RwLock<JwkSet>,
    last_fetch: Mutex<Instant>,
}

impl Keys {
    /// Reads the keys once; failing to read them stops the start.
    pub(crate) async fn load(spec: &'static OAuthSpec) -> Result<Self, KeysError> {
        let set = fetch(spec.jwks).await?;
        usable(&set, spec)?;
        Ok(Keys {
            spec,
            set: RwLock::new(set),
            last_fetch: Mutex::new(Instant::now()),
        })
    }

    /// Refreshes keys from a URL every `jwks_refresh`; a failed refresh keeps the old keys.
    pub(crate) fn spawn_refresh(self: Arc<Self>) {
        if !matches!(self.spec.jwks, JwksSource::Url(_)) {
            return;
        }
        let every = self.spec.jwks_refresh.max(MIN_REFRESH);
        tokio::spawn(async move {
            let mut ticker = tokio::time::interval(every);
            ticker.tick().await;
            loop {
                ticker.tick().await;
                self.refresh().await;
            }
        });
    }

    async fn refresh(&self) {
        *self
            .last_fetch
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Instant::now();
        match fetch(self.spec.jwks).await {
            Ok(set) => {
                *self.set.write().unwrap_or_else(PoisonError::into_inner) = set;
                tracing::debug!("refreshed the authorization server's keys");
            }
            Err(error) => {
                tracing::warn!("refreshing the JWKS failed, keeping the old keys: {error}")
            }
        }
    }

    /// A key by id; an unknown id refetches (from a URL, rate-limited) once.
    async fn key(&self, kid: &str) -> Result<DecodingKey, Rejection> {
        if let Some(key) = self.find(kid)? {
            return Ok(key);
        }
        let stale = {
            let last = self
                .last_fetch
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            last.elapsed() >= UNKNOWN_KID_BACKOFF
        };
        if matches!(self.spec.jwks, JwksSource::Url(_)) && stale {
            self.refresh().await;
            if let Some(key) = self.find(kid)? {
                return Ok(key);
            }
        }
        Err(reject(format!(
            "the token is signed with an unknown key (kid {:?})",
            shorten(kid)
        )))
    }

    fn find(&self, kid: &str) -> Result<Option<DecodingKey>, Rejection> {
        let set = self.set.read().unwrap_or_else(PoisonError::into_inner);
        let Some(jwk) = set.find(kid) else {
            return Ok(None);
        };
        if matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_)) {
            return Err(reject(
                "the token names a symmetric key, which is not accepted",
            ));
        }
        DecodingKey::from_jwk(jwk)
            .map(Some)
            .map_err(|_| reject("the signing key in the JWKS is not usable"))
    }

    /// Validates a token; the claims when it is good.
    pub(crate) async fn validate(&self, token: &str) -> Result<Map<String, Value>, Rejection> {
        let spec = self.spec;
        let header = decode_header(token)
            .map_err(|_| reject("the token is not a signed JWT (unsigned tokens are refused)"))?;
        let alg = format!("{:?}", header.alg);
        if !spec
            .algorithms
            .iter()
            .any(|allowed| Algorithm::from_str(allowed).ok() == Some(header.alg))
        {
            return Err(reject(format!(
                "the token is signed with {alg}, which is not accepted (accepted: {})",
                spec.algorithms.join(", ")
            )));
        }
        if !spec.token_types.is_empty() {
            let typ = header.typ.as_deref().unwrap_or("");
            if !spec
                .token_types
                .iter()
                .any(|accepted| accepted.eq_ignore_ascii_case(typ))
            {
                return Err(reject(format!(
                    "the token type {typ:?} is not accepted (expected {})",
                    spec.token_types.join(" or ")
                )));
            }
        }
        let kid = header
            .kid
            .as_deref()
            .ok_or_else(|| reject("the token names no signing key (kid)"))?;
        let key = self.key(kid).await?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(spec.authorization_servers);
        validation.set_audience(&[spec.resource]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = spec.leeway.as_secs();
        decode::<Map<String, Value>>(token, &key, &validation)
            .map(|data| data.claims)
            .map_err(|error| reject(explain(error.kind(), spec)))
    }
}

/// A validation failure in words.
fn explain(kind: &ErrorKind, spec: &OAuthSpec) -> String {
    match kind {
        ErrorKind::ExpiredSignature => "the token has expired".into(),
        ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)".into(),
        ErrorKind::InvalidAudience => format!(
            "the token's audience is not this server ({})",
            spec.resource
        ),
        ErrorKind::InvalidIssuer => format!(
            "the token's issuer is not an accepted authorization server ({})",
            spec.authorization_servers.join(", ")
        ),
        ErrorKind::InvalidSignature => "the token's signature does not verify".into(),
        ErrorKind::MissingRequiredClaim(claim) => format!("the token has no {claim} claim"),
        ErrorKind::InvalidAlgorithm => "the token's algorithm does not match its key".into(),
        _ => "the token is not valid".into(),
    }
}

/// At least one key the configured algorithms can use.
fn usable(set: &JwkSet, spec: &OAuthSpec) -> Result<(), KeysError> {
    let asymmetric = set
        .keys
        .iter()
        .filter(|jwk| !matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_)))
        .count();
    if asymmetric == 0 {
        return Err(KeysError::NoPublicKey {
            source_name: describe(spec.jwks),
        });
    }
    Ok(())
}

fn describe(source: JwksSource) -> String {
    match source {
        JwksSource::File(path) => format!("file {path}"),
        JwksSource::Url(url) => format!("at {url}"),
    }
}

/// Reads a JWKS document.
async fn fetch(source: JwksSource) -> Result<JwkSet, KeysError> {
    let text = match source {
        JwksSource::File(path) => {
            let read_file = |source| KeysError::ReadFile { path, source };
            let meta = std::fs::metadata(path).map_err(read_file)?;
            if meta.len() > MAX_JWKS_BYTES {
                return Err(KeysError::FileTooLarge {
                    path,
                    max: MAX_JWKS_BYTES,
                });
            }
            std::fs::read_to_string(path).map_err(read_file)?
        }
        JwksSource::Url(url) => tokio::task::spawn_blocking(move || fetch_url(url))
            .await
            .map_err(|_| KeysError::Interrupted { url })??,
    };
    serde_json::from_str(&text).map_err(|error| KeysError::NotJwks {
        source_name: describe(source),
        error,
    })
}

fn fetch_url(url: &'static str) -> Result<String, KeysError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(FETCH_TIMEOUT))
        .http_status_as_error(false)
        .build()
        .into();
    let mut response = agent
        .get(url)
        .header("Accept", "application/json")
        .call()
        .map_err(|error| KeysError::Fetch {
            url,
            reason: error.to_string(),
        })?;
    let status = response.status();
    let body = response
        .body_mut()
        .with_config()
        .limit(MAX_JWKS_BYTES)
        .read_to_string()
        .map_err(|error| KeysError::ReadBody {
            url,
            reason: error.to_string(),
        })?;
    if status != http::StatusCode::OK {
        return Err(KeysError::Fetch {
            url,
            reason: format!("the server answered {status}"),
        });
    }
    Ok(body)
}

fn shorten(text: &str) -> String {
    text.chars().take(64).collect()
}
