//! `expose.agent.mcp.auth`: who may use the HTTP endpoint. Any mix of a static bearer token
//! (`token_env` / `token_file`), a custom header (`header`) and OAuth 2.1 access tokens
//! (`oauth`, the server as an RFC 9728 protected resource). Secrets never go in the file: only
//! where to read them. docs/config.md has every key.

use std::time::Duration;

use super::auth_draft::{AuthDraft, HeaderDraft, OAuthDraft};
use super::draft::Draft;
use super::reader::{Field, Reader, Section, Value};
use super::values::{env_name, normalized, read_duration, required_string};
use super::yaml::Pos;
use crate::ir::{AuthConfig, HeaderAuthConfig, JwksConfig, OAuthConfig, SecretSource};

/// Signing algorithms an access token may use (asymmetric only: the server never holds the
/// authorization server's secret).
pub const JWT_ALGORITHMS: [&str; 9] = [
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA",
];
/// `oauth.algorithms` when unset.
const DEFAULT_ALGORITHMS: [&str; 4] = ["RS256", "PS256", "ES256", "EdDSA"];
/// `oauth.token_types` when unset (RFC 9068).
const DEFAULT_TOKEN_TYPES: [&str; 2] = ["at+jwt", "application/at+jwt"];
/// `oauth.jwks_refresh` when unset.
const DEFAULT_JWKS_REFRESH: Duration = Duration::from_secs(600);
/// `oauth.leeway` when unset.
const DEFAULT_LEEWAY: Duration = Duration::from_secs(30);

/// Shown with `auth` problems: what the block is for and why it holds no token.
pub(super) const AUTH_HELP: &str = "the token itself never goes in the config file: set \
     token_env to the name of the environment variable that holds it, or token_file to a file \
     that contains it; or use header or oauth (see docs/config.md)";

fn auth(d: &mut Draft) -> &mut AuthDraft {
    d.auth.get_or_insert_with(AuthDraft::default)
}

fn header(d: &mut Draft) -> &mut HeaderDraft {
    auth(d).header.get_or_insert_with(HeaderDraft::default)
}

fn oauth(d: &mut Draft) -> &mut OAuthDraft {
    auth(d).oauth.get_or_insert_with(OAuthDraft::default)
}

pub(super) static AUTH: Section<Draft> = Section::<Draft>::new(&[
    Field::value("token_env", |r, v, d| {
        let name = required_string(r, v, "an environment variable");
        auth(d).token_env = Some(name.and_then(|name| env_name(r, v, &name)));
    }),
    Field::value("token_file", |r, v, d| {
        auth(d).token_file = Some(required_string(r, v, "a file"));
    }),
    Field::section("header", &HEADER).on_enter(|_, v, d| {
        auth(d).header = Some(HeaderDraft {
            pos: v.key_pos,
            ..Default::default()
        })
    }),
    Field::section("oauth", &OAUTH).on_enter(|_, v, d| {
        auth(d).oauth = Some(OAuthDraft {
            pos: v.key_pos,
            ..Default::default()
        })
    }),
])
.unknown_help(AUTH_HELP);

static HEADER: Section<Draft> = Section::<Draft>::new(&[
    Field::value("name", |r, v, d| {
        let name = required_string(r, v, "an HTTP header");
        header(d).name_invalid = true;
        if let Some(name) = &name
            && !is_header_name(name)
        {
            r.invalid(
                v,
                format!("invalid {} {name:?}: not an HTTP header name", v.path),
            );
            return;
        }
        if name
            .as_deref()
            .is_some_and(|n| n.eq_ignore_ascii_case("authorization"))
        {
            r.invalid(
                v,
                format!(
                    "{}: use token_env or token_file for the Authorization header",
                    v.path
                ),
            );
            return;
        }
        header(d).name_invalid = name.is_none();
        header(d).name = name;
    }),
    Field::value("value_env", |r, v, d| {
        let name = required_string(r, v, "an environment variable");
        header(d).value_env = Some(name.and_then(|name| env_name(r, v, &name)));
    }),
    Field::value("value_file", |r, v, d| {
        header(d).value_file = Some(required_string(r, v, "a file"));
    }),
]);

static OAUTH: Section<Draft> = Section::<Draft>::new(&[
    Field::value("resource", |r, v, d| {
        let url = required_string(r, v, "this server's public URL");
        let url = url.and_then(|url| checked_url(r, v, &url, false));
        if url.is_none() {
            oauth(d).invalid = true;
        }
        oauth(d).resource = url;
    }),
    Field::value("authorization_servers", |r, v, d| {
        let mut servers = Vec::new();
        for text in normalized(r.string_or_strings(v), str::trim) {
            match checked_url(r, v, &text, true) {
                Some(url) => servers.push(url),
                None => oauth(d).invalid = true,
            }
        }
        oauth(d).authorization_servers = servers;
    }),
    Field::value("jwks_file", |r, v, d| {
        oauth(d).jwks_file = Some(required_string(r, v, "a file"));
    }),
    Field::value("jwks_url", |r, v, d| {
        let url = required_string(r, v, "a URL");
        oauth(d).jwks_url = Some(url.and_then(|url| checked_url(r, v, &url, true)));
    }),
    Field::value("jwks_refresh", |r, v, d| {
        oauth(d).jwks_refresh = positive_duration(r, v)
    }),
    Field::value("leeway", |r, v, d| {
        oauth(d).leeway = read_duration(r, v)
            .map(|(_, nanos)| Duration::from_nanos(u64::try_from(nanos).unwrap_or(0)))
    }),
    Field::value("algorithms", |r, v, d| {
        let mut algorithms = Vec::new();
        for text in r.string_or_strings(v) {
            let name = text.text.trim();
            match JWT_ALGORITHMS.iter().find(|a| a.eq_ignore_ascii_case(name)) {
                Some(known) => {
                    if !algorithms.iter().any(|a: &String| a == known) {
                        algorithms.push(known.to_string());
                    }
                }
                None => {
                    let why = if name.to_ascii_uppercase().starts_with("HS") {
                        "symmetric algorithms are not accepted (the server would need the \
                         authorization server's secret)"
                            .to_string()
                    } else {
                        format!("must be one of {}", JWT_ALGORITHMS.join(", "))
                    };
                    r.problem(
                        &text.path,
                        text.pos,
                        format!("invalid {} {name:?}: {why}", v.path),
                    );
                }
            }
        }
        oauth(d).algorithms = Some(algorithms);
    }),
    Field::value("token_types", |r, v, d| {
        oauth(d).token_types = Some(normalized(r.string_or_strings(v), str::trim));
    }),
    Field::value("scopes", |r, v, d| oauth(d).scopes = scope_list(r, v)),
    Field::value("method_scopes", |r, v, d| {
        let mut methods = Vec::new();
        r.map(
            v,
            "a mapping of JSON-RPC methods (tools/call, tools/list, ...) to scopes",
            |r, method, entry| {
                let method = method.trim().to_string();
                let scopes = scope_list(r, entry);
                methods.push((method, scopes));
            },
        );
        oauth(d).method_scopes = methods;
    }),
]);

/// Scopes: one string (space-separated, as in OAuth) or a list.
fn scope_list(r: &mut Reader, v: Value<'_>) -> Vec<String> {
    let mut scopes: Vec<String> = Vec::new();
    for text in r.string_or_strings(v) {
        for scope in text.text.split_whitespace() {
            if scope == "offline_access" {
                r.problem(
                    &text.path,
                    text.pos,
                    format!(
                        "{}: offline_access is not a scope a server requires",
                        v.path
                    ),
                );
                continue;
            }
            if !scopes.iter().any(|s| s == scope) {
                scopes.push(scope.to_string());
            }
        }
    }
    scopes
}

fn positive_duration(r: &mut Reader, v: Value<'_>) -> Option<Duration> {
    let (raw, nanos) = read_duration(r, v)?;
    if nanos <= 0 {
        r.invalid(v, format!("invalid {} {raw:?}: must be positive", v.path));
        return None;
    }
    Some(Duration::from_nanos(u64::try_from(nanos).unwrap_or(0)))
}

/// An absolute http(s) URL with a host and no fragment; a trailing `/` is refused for the
/// resource (its exact text is the audience) and dropped nowhere.
fn checked_url(r: &mut Reader, v: Value<'_>, url: &str, allow_slash: bool) -> Option<String> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    let problem = match rest {
        None => Some("must be an absolute http:// or https:// URL"),
        Some(rest) if rest.is_empty() || rest.starts_with('/') => Some("has no host"),
        Some(_) if url.contains('#') => Some("must not have a fragment"),
        Some(_) if url.chars().any(char::is_whitespace) => Some("must not contain spaces"),
        Some(_) if !allow_slash && url.ends_with('/') => {
            Some("must not end with '/': clients compare it with the URL they were given, exactly")
        }
        Some(_) => None,
    };
    match problem {
        Some(problem) => {
            r.invalid(v, format!("invalid {} {url:?}: {problem}", v.path));
            None
        }
        None => Some(url.to_string()),
    }
}

fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// One of two exclusive keys; `None` with a problem reported when both or neither are set.
fn one_of(
    r: &mut Reader,
    path: &str,
    pos: Pos,
    (a_name, a): (&str, Option<Option<String>>),
    (b_name, b): (&str, Option<Option<String>>),
    required: bool,
    help: Option<&str>,
) -> Result<Option<(bool, String)>, ()> {
    match (a, b) {
        (Some(Some(a)), None) => Ok(Some((true, a))),
        (None, Some(Some(b))) => Ok(Some((false, b))),
        (Some(_), Some(_)) => {
            let message = format!("{path} sets both {a_name} and {b_name}; set exactly one");
            r.problem(path, pos, message).help = help.map(str::to_string);
            Err(())
        }
        (None, None) if required => {
            r.problem(path, pos, format!("{path} needs {a_name} or {b_name}"))
                .help = help.map(str::to_string);
            Err(())
        }
        (None, None) => Ok(None),
        // Present but unusable: reported where it is written.
        _ => Err(()),
    }
}

/// The checks across `auth`'s keys, once the block is read.
pub(super) fn resolve(draft: AuthDraft, r: &mut Reader) -> Option<AuthConfig> {
    let path = "expose.agent.mcp.auth";
    if draft.token_env.is_none()
        && draft.token_file.is_none()
        && draft.header.is_none()
        && draft.oauth.is_none()
    {
        // A misspelt key inside the block (`token:`) already said what belongs there.
        if !r.reported_within(path) {
            let message = format!("{path} needs token_env, token_file, header or oauth");
            r.problem(path, draft.pos, message).help = Some(AUTH_HELP.to_string());
        }
        return None;
    }
    let mut ok = true;
    let token = match one_of(
        r,
        path,
        draft.pos,
        ("token_env", draft.token_env),
        ("token_file", draft.token_file),
        false,
        Some(AUTH_HELP),
    ) {
        Ok(found) => found.map(|(env, text)| source(env, text)),
        Err(()) => {
            ok = false;
            None
        }
    };
    let header = match draft.header {
        None => None,
        Some(h) => {
            let path = format!("{path}.header");
            let value = one_of(
                r,
                &path,
                h.pos,
                ("value_env", h.value_env),
                ("value_file", h.value_file),
                true,
                None,
            );
            match (h.name, value) {
                (Some(name), Ok(Some((env, text)))) => Some(HeaderAuthConfig {
                    name,
                    value: source(env, text),
                }),
                (None, _) if !h.name_invalid => {
                    r.problem(&path, h.pos, format!("{path} needs name"));
                    ok = false;
                    None
                }
                _ => {
                    ok = false;
                    None
                }
            }
        }
    };
    let oauth = match draft.oauth {
        None => None,
        Some(o) => {
            let resolved = resolve_oauth(o, &format!("{path}.oauth"), r);
            ok &= resolved.is_some();
            resolved
        }
    };
    ok.then_some(AuthConfig {
        token,
        header,
        oauth,
    })
}

fn source(env: bool, text: String) -> SecretSource {
    if env {
        SecretSource::Env(text)
    } else {
        SecretSource::File(text)
    }
}

fn resolve_oauth(o: OAuthDraft, path: &str, r: &mut Reader) -> Option<OAuthConfig> {
    let mut ok = !o.invalid;
    if o.resource.is_none() && !o.invalid {
        let message = format!(
            "{path} needs resource: this server's public URL, e.g. https://mcp.example.com/mcp"
        );
        r.problem(path, o.pos, message);
        ok = false;
    }
    if o.authorization_servers.is_empty() && !o.invalid {
        let message = format!(
            "{path} needs authorization_servers: the issuer URL of at least one authorization \
             server"
        );
        r.problem(path, o.pos, message);
        ok = false;
    }
    let jwks = match one_of(
        r,
        path,
        o.pos,
        ("jwks_file", o.jwks_file),
        ("jwks_url", o.jwks_url),
        true,
        None,
    ) {
        Ok(Some((true, file))) => Some(JwksConfig::File(file)),
        Ok(Some((false, url))) => Some(JwksConfig::Url(url)),
        _ => None,
    };
    let algorithms = o
        .algorithms
        .unwrap_or_else(|| DEFAULT_ALGORITHMS.iter().map(|a| a.to_string()).collect());
    if algorithms.is_empty() {
        r.problem(path, o.pos, format!("{path}.algorithms is empty"));
        ok = false;
    }
    let method_scopes = o.method_scopes;
    match (ok, o.resource, jwks) {
        (true, Some(resource), Some(jwks)) => Some(OAuthConfig {
            resource,
            authorization_servers: o.authorization_servers,
            jwks,
            jwks_refresh: o.jwks_refresh.unwrap_or(DEFAULT_JWKS_REFRESH),
            algorithms,
            token_types: o
                .token_types
                .unwrap_or_else(|| DEFAULT_TOKEN_TYPES.iter().map(|t| t.to_string()).collect()),
            scopes: o.scopes,
            method_scopes,
            leeway: o.leeway.unwrap_or(DEFAULT_LEEWAY),
        }),
        _ => None,
    }
}
