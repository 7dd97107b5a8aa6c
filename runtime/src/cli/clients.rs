//! Ready client configuration: the entry each MCP client needs to reach this server, in that
//! client's own format and with the name sanitised for its rules (docs/runtime.md, "Connect a
//! client"). The start-up banner, `<binary> config` and `fiskgen build` print these entries,
//! so what a user copies is what the tests feed to real clients.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::process::cmdline::quote;

/// The clients an entry can be printed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Client {
    /// Claude Code: a `claude mcp add` command line.
    ClaudeCode,
    /// Claude Desktop: an entry of `claude_desktop_config.json` (stdio only; HTTP through
    /// `mcp-remote`).
    ClaudeDesktop,
    /// fx: an entry of `~/.fx/mcp.json`.
    Fx,
    /// The `mcpServers` map many clients read (Cursor, Windsurf, the MCP Inspector's
    /// `--config`).
    Json,
    /// VS Code: an entry of `.vscode/mcp.json`.
    Vscode,
}

impl Client {
    /// Every client, in the order the banner lists them.
    pub(crate) const ALL: [Client; 5] = [
        Client::ClaudeCode,
        Client::ClaudeDesktop,
        Client::Fx,
        Client::Vscode,
        Client::Json,
    ];

    /// The client's name and where its entry goes.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Client::ClaudeCode => "Claude Code (run it)",
            Client::ClaudeDesktop => {
                "Claude Desktop (merge into claude_desktop_config.json, then restart it)"
            }
            Client::Fx => "fx (merge into ~/.fx/mcp.json)",
            Client::Vscode => "VS Code (merge into .vscode/mcp.json)",
            Client::Json => "Other clients and the MCP Inspector (an mcpServers map)",
        }
    }
}

/// How the client reaches the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Transport {
    /// The client starts this command (program first) and speaks stdio.
    Stdio(Vec<String>),
    /// Streamable HTTP at this URL.
    Http(String),
}

/// What the client must send to be let in, as far as a config entry can say it. Entries name
/// environment variables, never a secret.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) enum Credentials {
    /// Nothing (no authentication, or stdio).
    #[default]
    None,
    /// `Authorization: Bearer <token>`; the client reads the whole header value from
    /// `header_var` (`Bearer ...`), or, for fx, the token alone from `token_var`.
    Bearer {
        /// The variable the client's header value comes from.
        header_var: String,
        /// The variable fx reads the token from (`bearer_token_env`: fx adds `Bearer `).
        token_var: String,
    },
    /// A custom header; the client reads its value from this variable.
    Header {
        /// The header's name.
        name: String,
        /// The variable the client's header value comes from.
        header_var: String,
    },
    /// OAuth: the client discovers the authorization server itself (RFC 9728).
    OAuth,
}

impl Credentials {
    /// The header name and variable, for header-based schemes.
    fn header(&self) -> Option<(&str, &str)> {
        match self {
            Credentials::Bearer { header_var, .. } => Some(("Authorization", header_var)),
            Credentials::Header { name, header_var } => Some((name, header_var)),
            Credentials::None | Credentials::OAuth => None,
        }
    }
}

/// `name` as the client accepts it: letters, digits, `_` and `-` (fx's rule, which every other
/// client accepts too); other characters become `-`; never empty.
pub(crate) fn sanitise(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_matches('-').to_string();
    if out.is_empty() { "fisk".into() } else { out }
}

/// One client's entry: a command line for Claude Code and VS Code's `--add-mcp`, a JSON
/// document for the others.
pub(crate) fn entry(
    client: Client,
    name: &str,
    transport: &Transport,
    credentials: &Credentials,
) -> String {
    let name = sanitise(name);
    match client {
        Client::ClaudeCode => claude_code(&name, transport, credentials),
        Client::ClaudeDesktop => claude_desktop(&name, transport, credentials).to_string(),
        Client::Fx => fx(&name, transport, credentials).to_string(),
        Client::Json => json_map(&name, transport, credentials).to_string(),
        Client::Vscode => vscode(&name, transport, credentials).to_string(),
    }
}

/// The entry as a JSON value (for the JSON clients).
#[cfg(test)]
pub(crate) fn entry_json(
    client: Client,
    name: &str,
    transport: &Transport,
    credentials: &Credentials,
) -> Option<Value> {
    let name = sanitise(name);
    match client {
        Client::ClaudeCode => None,
        Client::ClaudeDesktop => Some(claude_desktop(&name, transport, credentials)),
        Client::Fx => Some(fx(&name, transport, credentials)),
        Client::Json => Some(json_map(&name, transport, credentials)),
        Client::Vscode => Some(vscode(&name, transport, credentials)),
    }
}

fn split(command: &[String]) -> (&str, &[String]) {
    match command.split_first() {
        Some((program, args)) => (program.as_str(), args),
        None => ("", &[]),
    }
}

/// `claude mcp add`: `--transport http NAME URL [--header "H: $VAR"]`, or `NAME -- COMMAND`.
fn claude_code(name: &str, transport: &Transport, credentials: &Credentials) -> String {
    match transport {
        Transport::Http(url) => {
            let mut line = format!("claude mcp add --transport http {name} {}", quote(url));
            if let Some((header, var)) = credentials.header() {
                // Double quotes: the shell expands the variable, the secret is not printed.
                let _ = write!(line, " --header \"{header}: ${{{var}}}\"");
            }
            line
        }
        Transport::Stdio(command) => {
            let quoted: Vec<String> = command.iter().map(|t| quote(t)).collect();
            format!("claude mcp add {name} -- {}", quoted.join(" "))
        }
    }
}

/// `{"mcpServers": {NAME: {"command", "args"}}}`; HTTP goes through `mcp-remote`, since the
/// file holds only servers Claude Desktop starts itself.
fn claude_desktop(name: &str, transport: &Transport, credentials: &Credentials) -> Value {
    let server = match transport {
        Transport::Stdio(command) => {
            let (program, args) = split(command);
            json!({ "command": program, "args": args })
        }
        Transport::Http(url) => {
            let mut args = vec![
                Value::from("-y"),
                Value::from("mcp-remote"),
                Value::from(url.as_str()),
            ];
            let mut server = serde_json::Map::new();
            if let Some((header, var)) = credentials.header() {
                args.push("--header".into());
                args.push(format!("{header}:${{{var}}}").into());
                server.insert("env".into(), json!({ var: format!("<value of {header}>") }));
            }
            server.insert("command".into(), "npx".into());
            server.insert("args".into(), args.into());
            Value::Object(server)
        }
    };
    json!({ "mcpServers": { name: server } })
}

/// `{"mcp": {NAME: {"type": "local", "command": [...]}}}` or `{"type": "http", "url"}`, with
/// `bearer_token_env` for a token (fx sends `Authorization: Bearer <token>` itself, and refuses
/// an Authorization header in `headers` and `header_env`) or `header_env` for another header.
fn fx(name: &str, transport: &Transport, credentials: &Credentials) -> Value {
    let server = match transport {
        Transport::Stdio(command) => json!({ "type": "local", "command": command }),
        Transport::Http(url) => {
            let mut server = serde_json::Map::new();
            server.insert("type".into(), "http".into());
            server.insert("url".into(), url.as_str().into());
            match credentials {
                Credentials::Bearer { token_var, .. } => {
                    server.insert("bearer_token_env".into(), token_var.as_str().into());
                }
                Credentials::Header { name, header_var } => {
                    server.insert("header_env".into(), json!({ name: header_var }));
                }
                Credentials::None | Credentials::OAuth => {}
            }
            Value::Object(server)
        }
    };
    json!({ "mcp": { name: server } })
}

/// The `mcpServers` map: `{"command", "args"}` or `{"type": "streamable-http", "url"}`.
fn json_map(name: &str, transport: &Transport, credentials: &Credentials) -> Value {
    let server = match transport {
        Transport::Stdio(command) => {
            let (program, args) = split(command);
            json!({ "command": program, "args": args })
        }
        Transport::Http(url) => {
            let mut server = json!({ "type": "streamable-http", "url": url });
            if let (Some((header, var)), Value::Object(map)) = (credentials.header(), &mut server) {
                map.insert("headers".into(), json!({ header: format!("${{{var}}}") }));
            }
            server
        }
    };
    json!({ "mcpServers": { name: server } })
}

/// `{"servers": {NAME: {"type": "stdio", "command", "args"}}}` or `{"type": "http", "url"}`.
fn vscode(name: &str, transport: &Transport, credentials: &Credentials) -> Value {
    let server = match transport {
        Transport::Stdio(command) => {
            let (program, args) = split(command);
            json!({ "type": "stdio", "command": program, "args": args })
        }
        Transport::Http(url) => {
            let mut server = json!({ "type": "http", "url": url });
            if let (Some((header, var)), Value::Object(map)) = (credentials.header(), &mut server) {
                map.insert(
                    "headers".into(),
                    json!({ header: format!("${{env:{var}}}") }),
                );
            }
            server
        }
    };
    json!({ "servers": { name: server } })
}

/// What a header-based entry needs set in the client's environment, as a reminder line: for
/// one client's entry, or (`None`) for every client's.
pub(crate) fn credentials_note(
    credentials: &Credentials,
    client: Option<Client>,
) -> Option<String> {
    match credentials {
        Credentials::Bearer { token_var, .. } if client == Some(Client::Fx) => Some(format!(
            "The fx entry reads the token from {token_var} (fx sends Authorization: Bearer \
             <token>): export {token_var}=<token> where fx runs."
        )),
        Credentials::Bearer {
            header_var,
            token_var,
        } => Some(match client {
            Some(_) => format!(
                "The HTTP entry reads the Authorization header from {header_var}: export \
                 {header_var}=\"Bearer <token>\" where the client runs."
            ),
            None => format!(
                "The HTTP entries read the Authorization header from {header_var}: export \
                 {header_var}=\"Bearer <token>\" where the client runs (fx reads the token \
                 alone: export {token_var}=<token>)."
            ),
        }),
        Credentials::Header { name, header_var } => Some(format!(
            "The HTTP entries read the {name} header from {header_var}: export \
             {header_var}=<value> where the client runs."
        )),
        Credentials::OAuth => Some(
            "The server asks for an OAuth access token: clients sign in through the \
             authorization server it names (RFC 9728 metadata)."
                .into(),
        ),
        Credentials::None => None,
    }
}

/// Every client's entries for the given transports, as the banner and `config` print them.
pub(crate) fn render_all(
    name: &str,
    transports: &[Transport],
    credentials: &Credentials,
) -> String {
    let mut out = String::new();
    for transport in transports {
        let heading = match transport {
            Transport::Http(url) => format!("Connect a client over HTTP ({url}):"),
            Transport::Stdio(_) => "Or let a client start the server (stdio):".to_string(),
        };
        let _ = writeln!(out, "\n{heading}");
        let creds = match transport {
            Transport::Http(_) => credentials,
            Transport::Stdio(_) => &Credentials::None,
        };
        for client in Client::ALL {
            let _ = writeln!(
                out,
                "  {}:\n    {}",
                client.label(),
                entry(client, name, transport, creds)
            );
        }
        if let (Transport::Http(_), Some(note)) = (transport, credentials_note(credentials, None)) {
            let _ = writeln!(out, "  {note}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio() -> Transport {
        Transport::Stdio(vec!["/opt/bin/tasks-mcp".into(), "--stdio".into()])
    }

    fn http() -> Transport {
        Transport::Http("http://127.0.0.1:8080/mcp".into())
    }

    #[test]
    fn names_follow_the_clients_rules() {
        assert_eq!(sanitise("tasks"), "tasks");
        assert_eq!(sanitise("my.agent v2"), "my-agent-v2");
        assert_eq!(sanitise("..."), "fisk");
        assert_eq!(sanitise("a_b-c9"), "a_b-c9");
    }

    #[test]
    fn claude_desktop_wants_command_and_args() {
        let entry = entry_json(Client::ClaudeDesktop, "tasks", &stdio(), &Credentials::None);
        assert_eq!(
            entry,
            Some(
                json!({"mcpServers": {"tasks": {"command": "/opt/bin/tasks-mcp", "args": ["--stdio"]}}})
            )
        );
    }

    #[test]
    fn fx_wants_local_commands_bearer_token_env_and_header_env() {
        let entry = entry_json(Client::Fx, "my.tasks", &stdio(), &Credentials::None);
        assert_eq!(
            entry,
            Some(
                json!({"mcp": {"my-tasks": {"type": "local", "command": ["/opt/bin/tasks-mcp", "--stdio"]}}})
            )
        );
        // fx refuses an Authorization header in `header_env`: the token goes through
        // `bearer_token_env`, which holds the token alone.
        let bearer = Credentials::Bearer {
            header_var: "TASKS_MCP_AUTHORIZATION".into(),
            token_var: "TASKS_MCP_TOKEN".into(),
        };
        let entry = entry_json(Client::Fx, "tasks", &http(), &bearer);
        assert_eq!(
            entry,
            Some(json!({"mcp": {"tasks": {
                "type": "http",
                "url": "http://127.0.0.1:8080/mcp",
                "bearer_token_env": "TASKS_MCP_TOKEN"
            }}}))
        );
        let note = credentials_note(&bearer, Some(Client::Fx)).unwrap_or_default();
        assert!(note.contains("export TASKS_MCP_TOKEN=<token>"), "{note}");
        let header = Credentials::Header {
            name: "X-Api-Key".into(),
            header_var: "TASKS_MCP_X_API_KEY".into(),
        };
        let entry = entry_json(Client::Fx, "tasks", &http(), &header);
        assert_eq!(
            entry,
            Some(json!({"mcp": {"tasks": {
                "type": "http",
                "url": "http://127.0.0.1:8080/mcp",
                "header_env": {"X-Api-Key": "TASKS_MCP_X_API_KEY"}
            }}}))
        );
    }

    #[test]
    fn claude_code_gets_a_command_line() {
        assert_eq!(
            entry(Client::ClaudeCode, "tasks", &http(), &Credentials::None),
            "claude mcp add --transport http tasks http://127.0.0.1:8080/mcp"
        );
        assert_eq!(
            entry(Client::ClaudeCode, "tasks", &stdio(), &Credentials::None),
            "claude mcp add tasks -- /opt/bin/tasks-mcp --stdio"
        );
        let header = Credentials::Header {
            name: "X-Api-Key".into(),
            header_var: "TASKS_KEY".into(),
        };
        assert_eq!(
            entry(Client::ClaudeCode, "tasks", &http(), &header),
            "claude mcp add --transport http tasks http://127.0.0.1:8080/mcp --header \
             \"X-Api-Key: ${TASKS_KEY}\""
        );
    }

    #[test]
    fn vscode_has_typed_servers() {
        let entry = entry_json(Client::Vscode, "tasks", &http(), &Credentials::None);
        assert_eq!(
            entry,
            Some(
                json!({"servers": {"tasks": {"type": "http", "url": "http://127.0.0.1:8080/mcp"}}})
            )
        );
    }

    #[test]
    fn entries_never_hold_a_secret() {
        let bearer = Credentials::Bearer {
            header_var: "VAR".into(),
            token_var: "TOKEN_VAR".into(),
        };
        for client in Client::ALL {
            let text = entry(client, "tasks", &http(), &bearer);
            assert!(!text.contains("Bearer "), "{client:?}: {text}");
        }
    }
}
