//! The runtime's one NATS connection (docs/deploy.md): where it goes and how it authenticates,
//! from a `nats://` URL or a `nats` CLI context, connected once with `async-nats` and shared by
//! everything that keeps state in NATS JetStream (the record of used approvals,
//! [`crate::mcp::approvals`], and the tasks replicas share, [`crate::mcp::tasks::shared`]). A
//! bucket is named the same way for both ([`bucket_from_env`]).
//!
//! A context is the JSON file the `nats` CLI keeps per named connection
//! (`~/.config/nats/context/NAME.json`, `nats context add`): its `url`, `user`/`password`,
//! `token`, `creds` (a credentials file), `nkey` (a seed file), `ca`, `cert`/`key` (TLS) and
//! `tls_first` are honoured, so a server natscli's users already reach is reached the same way.
//! [`CONTEXT_VAR`] names it (or gives the path of such a file). Error texts never repeat
//! credentials.

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_nats::ConnectErrorKind;
use serde::Deserialize;

/// The environment variable naming the `nats` CLI context (a name, or the path of its JSON file).
pub(crate) const CONTEXT_VAR: &str = "FISKGEN_MCP_NATS_CONTEXT";

/// The most connecting to the server may take.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Credentials for the NATS server.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Auth {
    /// None.
    None,
    /// A token.
    Token(String),
    /// A user and password.
    User {
        /// The user.
        user: String,
        /// The password.
        password: String,
    },
    /// A credentials file (a user JWT and its NKey seed).
    Creds(PathBuf),
    /// A file holding an NKey seed.
    NKey(PathBuf),
}

/// Where the server is and how to reach it.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Connection {
    /// Comma-separated server URLs, without credentials (for messages).
    servers: String,
    /// The server URLs as configured (a context's URL may carry credentials).
    urls: String,
    auth: Auth,
    /// A CA certificate (PEM) the server's certificate is checked against.
    ca: Option<PathBuf>,
    /// A client certificate and its key (PEM), for mutual TLS.
    client_cert: Option<(PathBuf, PathBuf)>,
    /// TLS before the server's INFO (the server's `handshake_first`).
    tls_first: bool,
    /// Where the settings came from, for messages.
    origin: String,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

/// Why [`CONTEXT_VAR`] names no usable context.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ContextError {
    /// The variable holds bytes that are not UTF-8.
    #[error("{CONTEXT_VAR} is not valid UTF-8")]
    NotUtf8,
    /// A name a context file cannot have.
    #[error(
        "{CONTEXT_VAR}: {0:?} is neither a context name (letters, digits, '_', '-', '.') nor the \
         path of a context file"
    )]
    BadName(String),
    /// No home directory to find the contexts in.
    #[error(
        "{CONTEXT_VAR}: neither XDG_CONFIG_HOME nor HOME is set, so the nats contexts cannot be \
         found; give the path of the context file instead"
    )]
    NoHome,
    /// The file cannot be read.
    #[error(
        "{CONTEXT_VAR}: cannot read the context file {}: {error} (create it with `nats context \
         add`)",
        path.display()
    )]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The file is not a context.
    #[error("{CONTEXT_VAR}: the context file {} is not valid: {error}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// Why.
        error: serde_json::Error,
    },
    /// `cert` without `key` or the other way round.
    #[error(
        "{CONTEXT_VAR}: the context file {} names a client certificate without its key (or a key \
         without its certificate); set both `cert` and `key`",
        path.display()
    )]
    HalfClientCert {
        /// The file.
        path: PathBuf,
    },
}

/// The default NATS port.
const DEFAULT_PORT: u16 = 4222;

/// The form of a bucket's URL, quoted by every error about it.
const FORM: &str = "expected nats://[user:password@|token@]host[:port]/BUCKET, or BUCKET alone \
                    with FISKGEN_MCP_NATS_CONTEXT naming the connection";

/// Why a variable naming a JetStream bucket (`nats://.../BUCKET`, or `BUCKET` with a context)
/// names no usable one. The texts never repeat the URL, which may hold credentials.
#[derive(Debug, thiserror::Error)]
#[error("{var}: {problem}")]
pub(crate) struct UrlError {
    /// The variable.
    pub(crate) var: &'static str,
    /// What is wrong with it.
    pub(crate) problem: UrlProblem,
}

/// What is wrong with a bucket's URL.
#[derive(Debug, thiserror::Error)]
pub(crate) enum UrlProblem {
    /// The variable holds bytes that are not UTF-8.
    #[error("the value is not valid UTF-8")]
    NotUtf8,
    /// Not a `nats://` URL.
    #[error("the value is not a nats:// URL ({FORM})")]
    NotNats,
    /// No `/BUCKET` after the address.
    #[error("the URL names no bucket ({FORM})")]
    NoBucket,
    /// A bucket name JetStream would refuse.
    #[error("bucket {0:?} must be letters, digits, '_' or '-' ({FORM})")]
    BadBucket(String),
    /// A port that is not a number from 1 to 65535.
    #[error("port {0:?} is not a number from 1 to 65535")]
    BadPort(String),
    /// No host before the port or bucket.
    #[error("the URL names no host ({FORM})")]
    NoHost,
    /// Both a URL and a context name the server.
    #[error(
        "the value is a URL but {CONTEXT_VAR} names a nats context too: with a context, give \
         the bucket name alone"
    )]
    UrlAndContext,
    /// The context cannot be used.
    #[error(transparent)]
    Context(#[from] ContextError),
}

/// The bucket named by the variable `var` and the connection to it (the URL's, or the context
/// named by [`CONTEXT_VAR`]), if `var` is set.
pub(crate) fn bucket_from_env(var: &'static str) -> Result<Option<(Connection, String)>, UrlError> {
    let fail = |problem| UrlError { var, problem };
    let value = match std::env::var(var) {
        Ok(value) if !value.trim().is_empty() => value.trim().to_string(),
        Ok(_) | Err(std::env::VarError::NotPresent) => return Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => return Err(fail(UrlProblem::NotUtf8)),
    };
    let context = Connection::from_env().map_err(|error| fail(error.into()))?;
    parse_bucket(&value, context).map(Some).map_err(fail)
}

/// `nats://[user:password@|token@]host[:port]/BUCKET`, or `BUCKET` alone with `context`.
pub(crate) fn parse_bucket(
    value: &str,
    context: Option<Connection>,
) -> Result<(Connection, String), UrlProblem> {
    let Some(rest) = value.strip_prefix("nats://") else {
        return match context {
            Some(context) => Ok((context, bucket_name(value)?)),
            None => Err(UrlProblem::NotNats),
        };
    };
    if context.is_some() {
        return Err(UrlProblem::UrlAndContext);
    }
    let (authority, bucket) = rest.split_once('/').ok_or(UrlProblem::NoBucket)?;
    let bucket = bucket_name(bucket.trim_end_matches('/'))?;
    let (auth, address) = match authority.rsplit_once('@') {
        None => (Auth::None, authority),
        Some((credentials, address)) => {
            let auth = match credentials.split_once(':') {
                Some((user, password)) => Auth::User {
                    user: user.to_string(),
                    password: password.to_string(),
                },
                None => Auth::Token(credentials.to_string()),
            };
            (auth, address)
        }
    };
    let (host, port) = match address.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(']') || host.starts_with('[') => {
            let port = port
                .parse::<u16>()
                .map_err(|_| UrlProblem::BadPort(port.to_string()))?;
            (host, port)
        }
        _ => (address, DEFAULT_PORT),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err(UrlProblem::NoHost);
    }
    let server = if host.contains(':') {
        format!("nats://[{host}]:{port}")
    } else {
        format!("nats://{host}:{port}")
    };
    Ok((Connection::plain(server, auth), bucket))
}

/// A bucket name JetStream accepts.
fn bucket_name(bucket: &str) -> Result<String, UrlProblem> {
    if bucket.is_empty()
        || !bucket
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(UrlProblem::BadBucket(bucket.to_string()));
    }
    Ok(bucket.to_string())
}

/// Why no connection to the server could be made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConnectError {
    /// The TLS handshake failed (an untrusted certificate, a server without TLS, ...).
    #[error(
        "cannot connect to {servers}: the TLS handshake failed ({detail}); when the server \
         requires TLS, name its CA certificate (`ca`) and, for mutual TLS, `cert` and `key` in a \
         nats context ({CONTEXT_VAR})"
    )]
    Tls {
        /// The servers.
        servers: String,
        /// The library's words.
        detail: String,
    },
    /// The server refused the credentials.
    #[error(
        "cannot connect to {servers}: the server refused the credentials ({detail}); check the \
         user/password, token, creds or nkey of the connection ({origin})"
    )]
    Refused {
        /// The servers.
        servers: String,
        /// Where the settings came from.
        origin: String,
        /// The library's words.
        detail: String,
    },
    /// The credentials file or NKey seed could not be loaded.
    #[error("cannot load the NATS credentials {}: {detail}", path.display())]
    Credentials {
        /// The file.
        path: PathBuf,
        /// Why.
        detail: String,
    },
    /// Anything else: unreachable, a timeout, not a NATS server.
    #[error("cannot connect to {servers}: {detail}")]
    Other {
        /// The servers.
        servers: String,
        /// The library's words.
        detail: String,
    },
}

/// The keys of a `nats` CLI context this runtime reads (others are ignored).
#[derive(Deserialize, Default)]
#[serde(default)]
struct ContextFile {
    url: String,
    user: String,
    password: String,
    token: String,
    creds: String,
    nkey: String,
    cert: String,
    key: String,
    ca: String,
    tls_first: bool,
}

impl Connection {
    /// A plain connection to `servers` (comma-separated `nats://host:port`) with `auth`.
    pub(crate) fn plain(servers: String, auth: Auth) -> Self {
        Self {
            origin: "the URL".into(),
            urls: servers.clone(),
            servers,
            auth,
            ca: None,
            client_cert: None,
            tls_first: false,
        }
    }

    /// The context named by [`CONTEXT_VAR`], if set.
    pub(crate) fn from_env() -> Result<Option<Self>, ContextError> {
        match std::env::var(CONTEXT_VAR) {
            Ok(name) if !name.trim().is_empty() => Self::context(name.trim()).map(Some),
            Ok(_) | Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(ContextError::NotUtf8),
        }
    }

    /// The context `name` (in the nats CLI's context directory) or the context file at `name`
    /// (when it holds a `/`).
    pub(crate) fn context(name: &str) -> Result<Self, ContextError> {
        let path = if name.contains('/') {
            PathBuf::from(name)
        } else {
            if !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
                || name.starts_with('.')
            {
                return Err(ContextError::BadName(name.to_string()));
            }
            let config = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
                Some(config) => PathBuf::from(config),
                None => PathBuf::from(std::env::var_os("HOME").ok_or(ContextError::NoHome)?)
                    .join(".config"),
            };
            config
                .join("nats")
                .join("context")
                .join(format!("{name}.json"))
        };
        let text = std::fs::read_to_string(&path).map_err(|error| ContextError::Read {
            path: path.clone(),
            error,
        })?;
        let file: ContextFile =
            serde_json::from_str(&text).map_err(|error| ContextError::Json {
                path: path.clone(),
                error,
            })?;
        Self::from_file(file, &path)
    }

    fn from_file(file: ContextFile, path: &Path) -> Result<Self, ContextError> {
        let some = |value: String| Some(value).filter(|v| !v.trim().is_empty());
        let auth = if let Some(creds) = some(file.creds) {
            Auth::Creds(expand(&creds))
        } else if let Some(nkey) = some(file.nkey) {
            Auth::NKey(expand(&nkey))
        } else if let Some(user) = some(file.user) {
            Auth::User {
                user,
                password: file.password,
            }
        } else if let Some(token) = some(file.token) {
            Auth::Token(token)
        } else {
            Auth::None
        };
        let client_cert = match (some(file.cert), some(file.key)) {
            (Some(cert), Some(key)) => Some((expand(&cert), expand(&key))),
            (None, None) => None,
            _ => {
                return Err(ContextError::HalfClientCert {
                    path: path.to_path_buf(),
                });
            }
        };
        // natscli's default when the context names no server.
        let servers = some(file.url).unwrap_or_else(|| "nats://127.0.0.1:4222".into());
        Ok(Self {
            servers: strip_credentials(&servers),
            urls: servers,
            auth,
            ca: some(file.ca).map(|ca| expand(&ca)),
            client_cert,
            tls_first: file.tls_first,
            origin: format!("nats context {}", path.display()),
        })
    }

    /// For logs and notes: the servers and where the settings came from, never credentials.
    pub(crate) fn describe(&self) -> String {
        format!("{} ({})", self.servers, self.origin)
    }

    /// The servers, without credentials.
    #[cfg(test)]
    pub(crate) fn servers(&self) -> &str {
        &self.servers
    }

    /// A new client, connected within [`CONNECT_TIMEOUT`]; it reconnects by itself afterwards.
    pub(crate) async fn connect(&self) -> Result<async_nats::Client, ConnectError> {
        let mut options = async_nats::ConnectOptions::new()
            .name(concat!("fiskgen-runtime ", env!("CARGO_PKG_VERSION")))
            .connection_timeout(CONNECT_TIMEOUT)
            .request_timeout(Some(CONNECT_TIMEOUT));
        match &self.auth {
            Auth::None => {}
            Auth::Token(token) => options = options.token(token.clone()),
            Auth::User { user, password } => {
                options = options.user_and_password(user.clone(), password.clone());
            }
            Auth::Creds(path) => {
                options = options.credentials_file(path).await.map_err(|error| {
                    ConnectError::Credentials {
                        path: path.clone(),
                        detail: error.to_string(),
                    }
                })?;
            }
            Auth::NKey(path) => {
                let seed =
                    std::fs::read_to_string(path).map_err(|error| ConnectError::Credentials {
                        path: path.clone(),
                        detail: error.to_string(),
                    })?;
                options = options.nkey(seed.trim().to_string());
            }
        }
        if let Some(ca) = &self.ca {
            options = options.add_root_certificates(ca.clone()).require_tls(true);
        }
        if let Some((cert, key)) = &self.client_cert {
            options = options
                .add_client_certificate(cert.clone(), key.clone())
                .require_tls(true);
        }
        if self.tls_first {
            options = options.tls_first();
        }
        let servers: Vec<&str> = self.urls.split(',').map(str::trim).collect();
        let servers: Vec<async_nats::ServerAddr> = servers
            .iter()
            .map(|server| server.parse())
            .collect::<Result<_, _>>()
            .map_err(|error: std::io::Error| ConnectError::Other {
                servers: self.servers.clone(),
                detail: error.to_string(),
            })?;
        let connected = tokio::time::timeout(
            CONNECT_TIMEOUT + Duration::from_secs(1),
            options.connect(servers),
        )
        .await
        .map_err(|_| ConnectError::Other {
            servers: self.servers.clone(),
            detail: format!(
                "no answer within {}",
                crate::duration::format(CONNECT_TIMEOUT)
            ),
        })?;
        connected.map_err(|error| self.explain(&error))
    }

    fn explain(&self, error: &async_nats::ConnectError) -> ConnectError {
        let detail = crate::logging::label(&error_chain(error));
        let servers = self.servers.clone();
        match error.kind() {
            ConnectErrorKind::Tls => ConnectError::Tls { servers, detail },
            // A handshake the server's certificate fails (an unknown issuer, a wrong name, a
            // server without TLS) reaches us as an IO error wrapping the TLS library's.
            ConnectErrorKind::Io if is_tls_failure(error) => ConnectError::Tls { servers, detail },
            ConnectErrorKind::AuthorizationViolation | ConnectErrorKind::Authentication => {
                ConnectError::Refused {
                    servers,
                    origin: self.origin.clone(),
                    detail,
                }
            }
            _ => ConnectError::Other { servers, detail },
        }
    }
}

/// One connection made on first use and shared; once made, it reconnects by itself.
#[derive(Debug)]
pub(crate) struct Nats {
    connection: Connection,
    client: tokio::sync::OnceCell<async_nats::Client>,
}

impl Nats {
    /// Connects to `connection` when first asked.
    pub(crate) fn new(connection: Connection) -> Self {
        Self {
            connection,
            client: tokio::sync::OnceCell::new(),
        }
    }

    /// Where it connects.
    pub(crate) fn connection(&self) -> &Connection {
        &self.connection
    }

    /// The connected client. A failed first connection is tried again on the next call; a
    /// connection that is down (the client reconnecting) is an error at once, not a wait.
    pub(crate) async fn client(&self) -> Result<async_nats::Client, ConnectError> {
        let client = self
            .client
            .get_or_try_init(|| self.connection.connect())
            .await?;
        if client.connection_state() != async_nats::connection::State::Connected {
            return Err(ConnectError::Other {
                servers: self.connection.servers.clone(),
                detail: "the connection to the server is down (the client is reconnecting)".into(),
            });
        }
        Ok(client.clone())
    }
}

/// Whether `error` or one of its sources is the TLS library's: an IO error that wraps a
/// `rustls` error (`io::Error::source` skips the wrapped error, so `get_ref` is asked too).
fn is_tls_failure(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(cause) = next {
        if cause.is::<async_nats::rustls::Error>() {
            return true;
        }
        if let Some(inner) = cause
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
            && is_tls_failure(inner)
        {
            return true;
        }
        next = cause.source();
    }
    false
}

/// An error and its sources, joined.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}

/// `~/` expanded as the nats CLI does.
fn expand(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// Server URLs without `user:password@`, for messages (the client is given them unchanged).
fn strip_credentials(servers: &str) -> String {
    servers
        .split(',')
        .map(|server| {
            let server = server.trim();
            match server.split_once("://") {
                Some((scheme, rest)) => match rest.rsplit_once('@') {
                    Some((_, host)) => format!("{scheme}://{host}"),
                    None => server.to_string(),
                },
                None => server.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from_json(json: &str) -> Result<Connection, ContextError> {
        Connection::from_file(
            serde_json::from_str(json).expect("json"),
            Path::new("/ctx.json"),
        )
    }

    #[test]
    fn contexts_name_servers_credentials_and_tls_as_the_nats_cli_does() {
        let connection = from_json(
            r#"{"description":"x","url":"tls://nats.internal:4222","user":"me","password":"s3cret",
                "ca":"/etc/ca.pem","cert":"/c.pem","key":"/k.pem","tls_first":true}"#,
        )
        .expect("parses");
        assert_eq!(connection.servers(), "tls://nats.internal:4222");
        assert!(
            connection.auth
                == Auth::User {
                    user: "me".into(),
                    password: "s3cret".into()
                }
        );
        assert_eq!(connection.ca, Some(PathBuf::from("/etc/ca.pem")));
        assert!(connection.tls_first);
        assert!(!format!("{connection:?}").contains("s3cret"));
        let connection = from_json(r#"{"creds":"/u.creds","user":"ignored"}"#).expect("parses");
        assert!(connection.auth == Auth::Creds("/u.creds".into()));
        assert_eq!(connection.servers(), "nats://127.0.0.1:4222");
        let connection = from_json(r#"{"nkey":"/u.nk"}"#).expect("parses");
        assert!(connection.auth == Auth::NKey("/u.nk".into()));
        let error = from_json(r#"{"cert":"/c.pem"}"#).expect_err("half");
        assert!(
            error.to_string().contains("set both `cert` and `key`"),
            "{error}"
        );
        assert!(matches!(
            Connection::context("../etc"),
            Err(ContextError::BadName(_)) | Err(ContextError::Read { .. })
        ));
        assert!(matches!(
            Connection::context("a b"),
            Err(ContextError::BadName(_))
        ));
    }

    #[test]
    fn an_untrusted_server_certificate_is_reported_as_a_tls_failure() {
        let connection = Connection::plain("nats://127.0.0.1:4222".into(), Auth::None);
        let rustls = async_nats::rustls::Error::InvalidCertificate(
            async_nats::rustls::CertificateError::UnknownIssuer,
        );
        let io = std::io::Error::new(std::io::ErrorKind::InvalidData, rustls);
        let error = async_nats::ConnectError::with_source(ConnectErrorKind::Io, io);
        let text = connection.explain(&error).to_string();
        assert!(text.contains("the TLS handshake failed"), "{text}");
        assert!(text.contains("name its CA certificate (`ca`)"), "{text}");
        // Any other IO error stays what it is.
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let error = async_nats::ConnectError::with_source(ConnectErrorKind::Io, refused);
        let text = connection.explain(&error).to_string();
        assert!(!text.contains("TLS"), "{text}");
    }

    fn parse(url: &str) -> Result<(Connection, String), UrlProblem> {
        parse_bucket(url, None)
    }

    #[test]
    fn store_urls_are_parsed_and_bad_ones_explained() {
        let (connection, bucket) = parse("nats://127.0.0.1:4333/approvals").expect("parses");
        assert_eq!(connection.servers(), "nats://127.0.0.1:4333");
        assert_eq!(bucket, "approvals");
        assert!(connection == Connection::plain("nats://127.0.0.1:4333".into(), Auth::None));
        let (connection, _) =
            parse("nats://me:s3cret@nats.internal/fiskgen-approvals").expect("parses");
        assert!(
            connection
                == Connection::plain(
                    "nats://nats.internal:4222".into(),
                    Auth::User {
                        user: "me".into(),
                        password: "s3cret".into()
                    }
                )
        );
        assert!(!format!("{connection:?}").contains("s3cret"));
        let (connection, _) = parse("nats://tok@[::1]:4222/b").expect("parses");
        assert!(
            connection == Connection::plain("nats://[::1]:4222".into(), Auth::Token("tok".into()))
        );
        let error = parse("nats://me:s3cret@host").expect_err("no bucket");
        assert!(matches!(error, UrlProblem::NoBucket));
        assert!(!error.to_string().contains("s3cret"), "{error}");
        for (bad, why) in [
            ("redis://localhost/b", "not a nats:// URL"),
            ("nats://localhost", "names no bucket"),
            ("nats://localhost/", "bucket \"\" must be"),
            ("nats://localhost/a.b", "bucket \"a.b\" must be"),
            (
                "nats://localhost:99999/b",
                "port \"99999\" is not a number from 1 to 65535",
            ),
            ("nats:///b", "names no host"),
        ] {
            let error = UrlError {
                var: "FISKGEN_MCP_TASK_STORE",
                problem: parse(bad).expect_err(bad),
            }
            .to_string();
            assert!(
                error.starts_with("FISKGEN_MCP_TASK_STORE: "),
                "{bad}: {error}"
            );
            assert!(error.contains(why), "{bad}: {error}");
        }
    }

    #[test]
    fn with_a_context_the_store_names_the_bucket_alone() {
        let context = || Some(Connection::plain("nats://a:4222".into(), Auth::None));
        let (connection, bucket) = parse_bucket("fiskgen-approvals", context()).expect("parses");
        assert_eq!(bucket, "fiskgen-approvals");
        assert_eq!(connection.servers(), "nats://a:4222");
        let error = parse_bucket("nats://b/x", context()).expect_err("both");
        assert!(matches!(error, UrlProblem::UrlAndContext), "{error}");
        let error = parse_bucket("a.b", context()).expect_err("bad bucket");
        assert!(matches!(error, UrlProblem::BadBucket(_)), "{error}");
        let error = parse("fiskgen-approvals").expect_err("no context");
        assert!(error.to_string().contains(CONTEXT_VAR), "{error}");
    }

    #[test]
    fn urls_shown_in_messages_carry_no_credentials() {
        assert_eq!(
            strip_credentials("nats://u:p@a:4222, nats://tok@b"),
            "nats://a:4222,nats://b"
        );
    }
}
