//! Who may use the HTTP endpoint (`expose.agent.mcp.auth`): a static bearer token, a custom
//! header, and OAuth 2.1 access tokens validated as JWTs, with the server acting as a protected
//! resource (RFC 9728). docs/runtime.md, "Authentication", has the rules and a worked example.
//!
//! A request is let in when any configured scheme accepts it. Otherwise it is answered as the
//! MCP authorization spec says: 401 with a `WWW-Authenticate: Bearer` challenge (naming the
//! metadata document and the scopes when OAuth is configured; `error="invalid_token"` when a
//! token came but is not valid), 403 `insufficient_scope` when a valid token lacks a scope the
//! method needs. The credentials are removed from the request before MCP sees it, and never
//! reach the application (no token passthrough).

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::{HeaderName, HeaderValue, StatusCode, header};
use serde_json::json;

use crate::principal::Subject;
use crate::spec::app::{AuthSource, AuthSpec, OAuthSpec};
use crate::transport::jwt::{self, Keys, Rejection};
use crate::transport::security::Token;

/// Largest body read to find the JSON-RPC method when scopes depend on it.
const MAX_SCOPE_BODY: usize = 1024 * 1024;
/// How long a refused request's body is read before the answer goes out anyway.
const DRAIN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The loaded authentication settings.
pub(crate) struct Auth {
    realm: &'static str,
    token: Option<Token>,
    header: Option<(HeaderName, Token)>,
    oauth: Option<OAuth>,
}

/// OAuth settings with their keys.
struct OAuth {
    spec: &'static OAuthSpec,
    keys: Arc<Keys>,
    /// The absolute URL of the metadata document for the resource.
    metadata_url: String,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth")
            .field("token", &self.token.is_some())
            .field("header", &self.header.as_ref().map(|(name, _)| name))
            .field("oauth", &self.oauth.as_ref().map(|o| o.spec.resource))
            .finish()
    }
}

/// Why the configured authentication cannot start; the server then refuses to serve (better
/// than serving unprotected).
#[derive(Debug, thiserror::Error)]
pub(crate) enum AuthError {
    /// The variable that holds a secret is not set.
    #[error("authentication is configured, but the environment variable {0} is not set")]
    Unset(&'static str),
    /// The file that holds a secret cannot be read.
    #[error("reading the {what} file {path}: {error}")]
    Unreadable {
        /// Which secret.
        what: String,
        /// The configured file.
        path: &'static str,
        /// Why.
        error: std::io::Error,
    },
    /// The variable is set but blank.
    #[error("the {what} in {name} is empty")]
    EmptyVariable {
        /// Which secret.
        what: String,
        /// The configured variable.
        name: &'static str,
    },
    /// The file is blank.
    #[error("the {what} file {path} is empty")]
    EmptyFile {
        /// Which secret.
        what: String,
        /// The configured file.
        path: &'static str,
    },
    /// A custom header name HTTP does not allow.
    #[error("auth.header.name {0:?} is not an HTTP header name")]
    HeaderName(&'static str),
    /// A protected-resource identifier that is not an absolute URL.
    #[error("auth.oauth.resource {0:?} is not an absolute URL")]
    Resource(String),
    /// The signing keys cannot be loaded (or OAuth is not built in).
    #[error(transparent)]
    Keys(#[from] crate::transport::jwt::KeysError),
}

/// Reads a secret; a missing or empty one stops the start.
fn secret(source: AuthSource, what: &str) -> Result<String, AuthError> {
    let value = match source {
        AuthSource::Env(name) => std::env::var(name).map_err(|_| AuthError::Unset(name))?,
        AuthSource::File(path) => {
            std::fs::read_to_string(path).map_err(|error| AuthError::Unreadable {
                what: what.to_string(),
                path,
                error,
            })?
        }
    };
    let value = value.trim().to_string();
    if value.is_empty() {
        let what = what.to_string();
        return Err(match source {
            AuthSource::Env(name) => AuthError::EmptyVariable { what, name },
            AuthSource::File(path) => AuthError::EmptyFile { what, path },
        });
    }
    Ok(value)
}

impl Auth {
    /// Reads the secrets and the signing keys.
    pub(crate) async fn load(spec: &AuthSpec, realm: &'static str) -> Result<Self, AuthError> {
        let token = match spec.token {
            Some(source) => Some(Token::new(&secret(source, "bearer token")?)),
            None => None,
        };
        let header = match spec.header {
            Some(header) => {
                let name = HeaderName::from_bytes(header.name.as_bytes())
                    .map_err(|_| AuthError::HeaderName(header.name))?;
                let value = secret(header.value, &format!("{} header value", header.name))?;
                Some((name, Token::new(&value)))
            }
            None => None,
        };
        let oauth = match spec.oauth {
            Some(spec) => Some(OAuth {
                spec,
                keys: Arc::new(Keys::load(spec).await.map_err(AuthError::Keys)?),
                metadata_url: metadata_url(spec.resource)?,
            }),
            None => None,
        };
        Ok(Auth {
            realm,
            token,
            header,
            oauth,
        })
    }

    /// What the start-up log says about authentication.
    pub(crate) fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.token.is_some() {
            parts.push("a bearer token".to_string());
        }
        if let Some((name, _)) = &self.header {
            parts.push(format!("the {name} header"));
        }
        if let Some(oauth) = &self.oauth {
            parts.push(format!(
                "OAuth access tokens for {} from {} (metadata: {})",
                oauth.spec.resource,
                oauth.spec.authorization_servers.join(", "),
                oauth.metadata_url
            ));
        }
        format!("requests must carry {}", parts.join(" or "))
    }

    /// Starts refreshing keys fetched from a URL.
    pub(crate) fn spawn_refresh(&self) {
        if let Some(oauth) = &self.oauth {
            oauth.keys.clone().spawn_refresh();
        }
    }

    /// The protected-resource metadata routes (public), when OAuth is configured: at the
    /// well-known root, with the resource's path inserted, and for each group's endpoint
    /// (`/mcp/<group>`, `groups`), so that a client that looks the metadata up from the URL it
    /// was given finds it. Each is the same document: tokens are issued for the configured
    /// resource, and a group's URL lies under it (MCP clients accept a resource that is a parent
    /// of the server's URL).
    pub(crate) fn metadata_routes(self: &Arc<Self>, groups: &[String]) -> Option<Router> {
        let oauth = self.oauth.as_ref()?;
        let document = metadata_document(oauth.spec, self.realm);
        let path = resource_path(oauth.spec.resource);
        let mut paths = vec!["/.well-known/oauth-protected-resource".to_string()];
        if !path.is_empty() {
            paths.push(format!("/.well-known/oauth-protected-resource{path}"));
        }
        for group in groups {
            for base in [path.as_str(), "/mcp"] {
                if base.is_empty() {
                    continue;
                }
                let at = format!("/.well-known/oauth-protected-resource{base}/{group}");
                if !paths.contains(&at) {
                    paths.push(at);
                }
            }
        }
        let mut router = Router::new();
        for at in paths {
            let document = document.clone();
            router = router.route(
                &at,
                get(move || async move { json_response(StatusCode::OK, &document) }),
            );
        }
        Some(router)
    }
}

/// The path of the resource URL, without a trailing `/` (`""` for a root resource).
fn resource_path(resource: &str) -> String {
    let after_scheme = resource
        .split_once("://")
        .map_or(resource, |(_, rest)| rest);
    match after_scheme.find('/') {
        Some(at) => after_scheme[at..].trim_end_matches('/').to_string(),
        None => String::new(),
    }
}

/// `https://h/.well-known/oauth-protected-resource/<path>` for `https://h/<path>`.
pub(crate) fn metadata_url(resource: &str) -> Result<String, AuthError> {
    let (scheme, rest) = resource
        .split_once("://")
        .ok_or_else(|| AuthError::Resource(resource.to_string()))?;
    let host = rest.split('/').next().unwrap_or(rest);
    Ok(format!(
        "{scheme}://{host}/.well-known/oauth-protected-resource{}",
        resource_path(resource)
    ))
}

/// Every scope any method needs: `scopes_supported` and the challenges' `scope`.
fn all_scopes(spec: &OAuthSpec) -> Vec<&'static str> {
    let mut scopes: BTreeSet<&'static str> = spec.required_scopes.iter().copied().collect();
    for (_, needed) in spec.method_scopes {
        scopes.extend(needed.iter().copied());
    }
    scopes.into_iter().collect()
}

/// The RFC 9728 document.
fn metadata_document(spec: &OAuthSpec, name: &str) -> serde_json::Value {
    json!({
        "resource": spec.resource,
        "authorization_servers": spec.authorization_servers,
        "scopes_supported": all_scopes(spec),
        "bearer_methods_supported": ["header"],
        "resource_name": name,
    })
}

/// The bearer credentials of a request: `None` when there is no Authorization header,
/// `Some(Err)` when it is not a single bearer token.
fn bearer(request: &Request) -> Option<Result<String, ()>> {
    let mut values = request.headers().get_all(header::AUTHORIZATION).iter();
    let first = values.next()?;
    if values.next().is_some() {
        return Some(Err(()));
    }
    let text = first.to_str().ok()?;
    // Another scheme (Basic, ...) carries no bearer token: answered like no credentials.
    let (scheme, credentials) = text.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let credentials = credentials.trim();
    if credentials.is_empty() || credentials.contains(' ') {
        return Some(Err(()));
    }
    Some(Ok(credentials.to_string()))
}

/// axum middleware in front of MCP.
pub(crate) async fn require(
    State(auth): State<Arc<Auth>>,
    mut request: Request,
    next: Next,
) -> Response {
    if let Some((name, expected)) = &auth.header {
        let presented = request.headers().get(name).and_then(|v| v.to_str().ok());
        if presented.is_some_and(|value| expected.matches(value.trim())) {
            strip(&mut request, &auth);
            let subject = format!("header {name}");
            request.extensions_mut().insert(Subject(subject.into()));
            return next.run(request).await;
        }
    }
    let presented = bearer(&request);
    let token = match presented {
        None => return drained(request, auth.challenge(None)).await,
        Some(Err(())) => {
            let response = auth.reject(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "the Authorization header must hold exactly one bearer token",
            );
            return drained(request, response).await;
        }
        Some(Ok(token)) => token,
    };
    if auth.token.as_ref().is_some_and(|t| t.matches(&token)) {
        strip(&mut request, &auth);
        request.extensions_mut().insert(Subject("token".into()));
        return next.run(request).await;
    }
    let Some(oauth) = &auth.oauth else {
        let response = auth.challenge(Some("the bearer token is not valid"));
        return drained(request, response).await;
    };
    let claims = match oauth.keys.validate(&token).await {
        Ok(claims) => claims,
        Err(rejection) => {
            return drained(request, auth.challenge(Some(&rejection.to_string()))).await;
        }
    };
    // Scopes: those every request needs, and those of the method (from the Mcp-Method header
    // or the body).
    let (request, methods) = match methods(request, oauth.spec).await {
        Ok(found) => found,
        Err(response) => return response,
    };
    let mut needed: BTreeSet<&'static str> = oauth.spec.required_scopes.iter().copied().collect();
    for method in &methods {
        for (name, scopes) in oauth.spec.method_scopes {
            if name == method {
                needed.extend(scopes.iter().copied());
            }
        }
    }
    let granted = jwt::scopes(&claims);
    let missing: Vec<&str> = needed
        .iter()
        .copied()
        .filter(|scope| !granted.iter().any(|g| g == scope))
        .collect();
    if !missing.is_empty() {
        let response = auth.insufficient_scope(&needed.into_iter().collect::<Vec<_>>(), &missing);
        return drained(request, response).await;
    }
    let mut request = request;
    strip(&mut request, &auth);
    request
        .extensions_mut()
        .insert(oauth_subject(&claims, &token));
    next.run(request).await
}

/// The subject of a valid access token: its issuer and `sub` (RFC 9068 requires `sub`); a
/// token without one is its own subject (a digest of the token), so that it shares nothing with
/// any other.
fn oauth_subject(claims: &serde_json::Map<String, serde_json::Value>, token: &str) -> Subject {
    let issuer = claims.get("iss").and_then(|v| v.as_str()).unwrap_or("");
    let subject = match claims.get("sub").and_then(|v| v.as_str()) {
        Some(sub) if !sub.is_empty() => format!("oauth {issuer} {sub}"),
        _ => format!("oauth {issuer} token#{}", crate::principal::digest(token)),
    };
    Subject(subject.into())
}

/// `response`, after reading what is left of the request's body (bounded in size and time),
/// so the connection stays usable: a client still sending its body would otherwise see the
/// connection close instead of the answer.
async fn drained(request: Request, response: Response) -> Response {
    let body = axum::body::to_bytes(request.into_body(), MAX_SCOPE_BODY);
    let _ = tokio::time::timeout(DRAIN_TIMEOUT, body).await;
    response
}

/// Removes the credentials before MCP (and anything it runs) sees the request.
fn strip(request: &mut Request, auth: &Auth) {
    request.headers_mut().remove(header::AUTHORIZATION);
    if let Some((name, _)) = &auth.header {
        request.headers_mut().remove(name);
    }
}

/// The JSON-RPC methods of a request (its body's, and the `Mcp-Method` header's), when scopes
/// depend on the method.
async fn methods(request: Request, spec: &OAuthSpec) -> Result<(Request, Vec<String>), Response> {
    if spec.method_scopes.is_empty() || request.method() != http::Method::POST {
        return Ok((request, Vec::new()));
    }
    // The Mcp-Method header is not trusted alone (a client could name a method other than the
    // body's): the scopes of both apply.
    let header = request
        .headers()
        .get("mcp-method")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_SCOPE_BODY)
        .await
        .map_err(|_| {
            (
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the request body is larger than {MAX_SCOPE_BODY} bytes"),
            )
                .into_response()
        })?;
    let mut methods: Vec<String> = match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(serde_json::Value::Array(batch)) => batch
            .iter()
            .filter_map(|m| m["method"].as_str().map(str::to_string))
            .collect(),
        Ok(message) => message["method"]
            .as_str()
            .map(str::to_string)
            .into_iter()
            .collect(),
        // Not JSON: MCP answers it; no method means only the scopes every request needs.
        Err(_) => Vec::new(),
    };
    methods.extend(header);
    Ok((Request::from_parts(parts, Body::from(bytes)), methods))
}

impl Auth {
    /// `Bearer` with the metadata URL and the scopes (OAuth) or the realm (static schemes).
    fn challenge_header(&self, extra: &str) -> String {
        match &self.oauth {
            Some(oauth) => {
                let scopes = all_scopes(oauth.spec);
                let mut text = format!("Bearer resource_metadata=\"{}\"", oauth.metadata_url);
                if !scopes.is_empty() {
                    text.push_str(&format!(", scope=\"{}\"", scopes.join(" ")));
                }
                text.push_str(extra);
                text
            }
            None => format!("Bearer realm=\"{}\"{extra}", self.realm),
        }
    }

    /// 401: no credentials (`why` None), or credentials that are not valid.
    fn challenge(&self, why: Option<&str>) -> Response {
        let (extra, body, code) = match why {
            None => (
                String::new(),
                "Unauthorized: a bearer token is required".to_string(),
                -32001,
            ),
            Some(why) => (
                format!(
                    ", error=\"invalid_token\", error_description=\"{}\"",
                    quoted(why)
                ),
                format!("Unauthorized: {why}"),
                -32001,
            ),
        };
        self.respond(
            StatusCode::UNAUTHORIZED,
            self.challenge_header(&extra),
            body,
            code,
        )
    }

    /// 400 for malformed credentials.
    fn reject(&self, status: StatusCode, error: &str, why: &str) -> Response {
        let extra = format!(", error=\"{error}\", error_description=\"{}\"", quoted(why));
        self.respond(
            status,
            self.challenge_header(&extra),
            format!("Bad request: {why}"),
            -32600,
        )
    }

    /// 403 `insufficient_scope`, naming every scope the request needs.
    fn insufficient_scope(&self, needed: &[&str], missing: &[&str]) -> Response {
        let metadata = self
            .oauth
            .as_ref()
            .map(|o| format!(", resource_metadata=\"{}\"", o.metadata_url))
            .unwrap_or_default();
        let why = format!("the access token lacks the scope {}", missing.join(", "));
        let challenge = format!(
            "Bearer error=\"insufficient_scope\", scope=\"{}\"{metadata}, error_description=\"{}\"",
            needed.join(" "),
            quoted(&why)
        );
        self.respond(
            StatusCode::FORBIDDEN,
            challenge,
            format!("Forbidden: {why}"),
            -32002,
        )
    }

    fn respond(
        &self,
        status: StatusCode,
        challenge: String,
        message: String,
        code: i64,
    ) -> Response {
        // A JSON-RPC error body lets clients show the reason.
        let body =
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
        let mut response = json_response(status, &body);
        if let Ok(value) = HeaderValue::from_str(&challenge) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }
}

/// A JSON body with its content type.
fn json_response(status: StatusCode, body: &serde_json::Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// Text safe inside a quoted-string of a challenge.
fn quoted(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control())
        .map(|c| if c == '"' || c == '\\' { '\'' } else { c })
        .collect()
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_lives_beside_the_resource_path() {
        assert_eq!(
            metadata_url("https://mcp.example.com/mcp").expect("url"),
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            metadata_url("http://127.0.0.1:8080").expect("url"),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource"
        );
        assert_eq!(resource_path("https://h/a/b/"), "/a/b");
    }

    static SPEC: OAuthSpec = OAuthSpec {
        resource: "https://m/mcp",
        authorization_servers: &["https://a"],
        jwks: crate::spec::app::JwksSource::File("jwks.json"),
        jwks_refresh: std::time::Duration::from_secs(600),
        algorithms: &["ES256"],
        token_types: &[],
        required_scopes: &["read"],
        method_scopes: &[("tools/call", &["run"])],
        leeway: std::time::Duration::from_secs(30),
    };

    #[tokio::test]
    async fn a_method_header_cannot_hide_the_bodys_method() {
        let request = Request::builder()
            .method("POST")
            .header("mcp-method", "tools/list")
            .body(Body::from(
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
            ))
            .expect("request");
        let Ok((request, methods)) = methods(request, &SPEC).await else {
            panic!("read")
        };
        assert_eq!(methods, ["tools/call", "tools/list"]);
        // The body is still there for MCP.
        let body = axum::body::to_bytes(request.into_body(), 1024)
            .await
            .expect("body");
        assert!(body.starts_with(b"{\"jsonrpc\""));
    }

    #[test]
    fn credentials_are_removed_before_mcp() {
        let auth = Auth {
            realm: "r",
            token: None,
            header: Some((HeaderName::from_static("x-api-key"), Token::new("k"))),
            oauth: None,
        };
        let mut request = Request::builder()
            .header("authorization", "Bearer t")
            .header("x-api-key", "k")
            .header("accept", "application/json")
            .body(Body::empty())
            .expect("request");
        strip(&mut request, &auth);
        assert!(request.headers().get("authorization").is_none());
        assert!(request.headers().get("x-api-key").is_none());
        assert!(request.headers().get("accept").is_some());
    }

    #[test]
    fn challenge_text_cannot_break_out_of_its_quotes() {
        assert_eq!(quoted("bad \"x\"\n"), "bad 'x'");
    }
}
