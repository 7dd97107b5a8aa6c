//! `<binary> config`: prints the entry a client needs to reach this server (see
//! [`crate::cli::clients`] for the formats), and the pieces the banner shares with it: the stdio
//! command a client runs and what an HTTP client must send.

use std::path::Path;
use std::process::ExitCode;

use crate::cli::clients::{self, Client, Credentials, Transport};
use crate::cli::narrow::NarrowArgs;
use crate::spec::app::{AppSpec, AuthSpec};

/// The variable a client's `Authorization` header value is read from in printed entries.
pub(crate) fn authorization_var(identity: &str) -> String {
    format!("{}_MCP_AUTHORIZATION", upper_identity(identity))
}

/// The variable fx reads the bare token from (its `bearer_token_env`) in printed entries.
pub(crate) fn token_var(identity: &str) -> String {
    format!("{}_MCP_TOKEN", upper_identity(identity))
}

/// The identity as the start of an environment variable's name: `my-app` is `MY_APP`.
fn upper_identity(identity: &str) -> String {
    clients::sanitise(identity)
        .chars()
        .map(|c| {
            if c == '-' {
                '_'
            } else {
                c.to_ascii_uppercase()
            }
        })
        .collect()
}

/// What an HTTP client must send, as far as an entry can say it.
pub(crate) fn credentials(app: &AppSpec) -> Credentials {
    let Some(auth) = &app.settings.auth else {
        return Credentials::None;
    };
    auth_credentials(app.identity, auth)
}

fn auth_credentials(identity: &str, auth: &AuthSpec) -> Credentials {
    if auth.oauth.is_some() {
        return Credentials::OAuth;
    }
    if let Some(header) = &auth.header {
        return Credentials::Header {
            name: header.name.to_string(),
            header_var: format!(
                "{}_{}",
                authorization_var(identity).trim_end_matches("_AUTHORIZATION"),
                header
                    .name
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() {
                        c.to_ascii_uppercase()
                    } else {
                        '_'
                    })
                    .collect::<String>()
            ),
        };
    }
    if auth.token.is_some() {
        return Credentials::Bearer {
            header_var: authorization_var(identity),
            token_var: token_var(identity),
        };
    }
    Credentials::None
}

/// The command a client runs to start this server over stdio: this executable with
/// `--stdio`, the working directory (the server's own, so the entry works whichever directory
/// the client starts it from), the application path when one was given, and the narrowing
/// flags.
pub(crate) fn stdio_command(application_path: Option<&Path>, narrow: &NarrowArgs) -> Vec<String> {
    let exe = std::env::current_exe()
        .map(|path| path.display().to_string())
        .unwrap_or_else(|_| "<this binary>".to_string());
    let mut command = vec![exe, "--stdio".to_string()];
    if let Ok(dir) = std::env::current_dir() {
        command.push("--working-dir".into());
        command.push(dir.display().to_string());
    }
    if let Some(program) = application_path {
        command.push("--application-path".into());
        command.push(program.display().to_string());
    }
    command.extend(narrow.to_args());
    command
}

/// What `<binary> config` was asked for.
pub(crate) struct ConfigRequest<'a> {
    /// One client, or every client.
    pub(crate) client: Option<Client>,
    /// Only the stdio entry.
    pub(crate) stdio: bool,
    /// Only the HTTP entry, for this URL.
    pub(crate) url: Option<String>,
    /// The URL the server would listen on with the current settings.
    pub(crate) default_url: String,
    /// `--application-path`, passed on to the stdio command.
    pub(crate) application_path: Option<&'a Path>,
    /// The narrowing flags, passed on to the stdio command.
    pub(crate) narrow: &'a NarrowArgs,
}

/// `<binary> config [--client NAME] [--stdio | --url URL]`.
pub(crate) fn run_config(app: &AppSpec, request: &ConfigRequest<'_>) -> ExitCode {
    let stdio = Transport::Stdio(stdio_command(request.application_path, request.narrow));
    let transports = match (&request.url, request.stdio) {
        (Some(url), _) => {
            if let Err(error) = check_url(url) {
                eprintln!("error: --url {url:?}: {error}");
                return ExitCode::from(2);
            }
            vec![Transport::Http(url.trim_end_matches('/').to_string())]
        }
        (None, true) => vec![stdio],
        (None, false) => vec![Transport::Http(request.default_url.clone()), stdio],
    };
    let credentials = credentials(app);
    // One group's entry is named after it, so that it can sit beside the whole server's.
    let name = match &request.narrow.group {
        Some(group) => format!("{}-{group}", app.identity),
        None => app.identity.to_string(),
    };
    match request.client {
        Some(client) => {
            for transport in &transports {
                let creds = match transport {
                    Transport::Http(_) => &credentials,
                    Transport::Stdio(_) => &Credentials::None,
                };
                println!("{}", clients::entry(client, &name, transport, creds));
            }
            if transports.iter().any(|t| matches!(t, Transport::Http(_)))
                && let Some(note) = clients::credentials_note(&credentials, Some(client))
            {
                eprintln!("{note}");
            }
        }
        None => print!("{}", clients::render_all(&name, &transports, &credentials)),
    }
    ExitCode::SUCCESS
}

/// An absolute `http`/`https` URL without spaces.
fn check_url(url: &str) -> Result<(), &'static str> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .ok_or("must start with http:// or https://")?;
    if rest.is_empty() || rest.starts_with('/') {
        return Err("has no host");
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("must not contain spaces or control characters");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_variables_are_named_after_the_identity() {
        assert_eq!(authorization_var("tasks"), "TASKS_MCP_AUTHORIZATION");
        assert_eq!(authorization_var("my-app"), "MY_APP_MCP_AUTHORIZATION");
        assert_eq!(token_var("my-app"), "MY_APP_MCP_TOKEN");
    }

    #[test]
    fn urls_are_checked() {
        assert!(check_url("https://mcp.example.com/mcp").is_ok());
        assert!(check_url("ftp://x").is_err());
        assert!(check_url("http:///mcp").is_err());
        assert!(check_url("http://a b").is_err());
    }
}
