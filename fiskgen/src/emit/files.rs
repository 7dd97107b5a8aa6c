//! The generated crate's text files: the askama templates in the repository's top-level
//! `templates/`, compiled into fiskgen (nothing to install beside the binary). This module only
//! gathers the values each template shows; the templates escape every value with a filter of
//! [`super::filters`] for the file it lands in. `<identity>` and `<identity>-mcp` are checked
//! by `check_identity` before any template renders (letters, digits, `-`, `_`).

use askama::Template;
use serde_json::json;

use super::filters;
use super::tools::first_line;
use super::{GenerateError, Settings};
use crate::format::header;
use crate::ir::Hint;
use crate::ir::{self, HintName, ToolKind};

/// The runtime features a server needs: without knowledge tools no SQLite (a smaller binary and a
/// shorter first build, so the default features go); OAuth needs `oauth`; `telemetry.enabled`
/// needs `telemetry`; an `https` embeddings endpoint needs `embeddings-tls`, an `https` JWKS
/// URL or telemetry endpoint `tls`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Runtime {
    /// Keep the default features (the knowledge tools).
    pub(super) default_features: bool,
    /// Features to add, in a fixed order.
    pub(super) features: Vec<&'static str>,
}

impl Runtime {
    /// The features for these needs.
    pub(super) fn needs(knowledge: bool, oauth: bool, telemetry: bool, tls: bool) -> Self {
        let mut features = Vec::new();
        if oauth {
            features.push("oauth");
        }
        if telemetry {
            features.push("telemetry");
        }
        match (knowledge, tls) {
            (true, true) => features.push("embeddings-tls"),
            (false, true) => features.push("tls"),
            (_, false) => {}
        }
        Runtime {
            default_features: knowledge,
            features,
        }
    }

    /// `"a", "b"` for the template (the names are fixed identifiers, nothing to escape).
    pub(super) fn feature_list(&self) -> String {
        let quoted: Vec<String> = self
            .features
            .iter()
            .map(|name| format!("\"{name}\""))
            .collect();
        quoted.join(", ")
    }
}

/// `templates/Cargo.toml.askama`.
#[derive(Debug, Template)]
#[template(path = "Cargo.toml.askama", escape = "none")]
pub(super) struct CargoToml<'a> {
    pub(super) header: String,
    pub(super) package: &'a str,
    pub(super) description: String,
    pub(super) runtime: Runtime,
    /// `=<fiskgen version>`.
    pub(super) runtime_version: String,
    /// Not a workspace member: `[profile.release]`, `[workspace]`.
    pub(super) standalone: bool,
    /// `[patch.crates-io]` for `fiskgen generate --runtime-path`.
    pub(super) runtime_path: Option<&'a str>,
}

impl CargoToml<'_> {
    /// The runtime's path a workspace member's dependency names (no `[patch]` of its own).
    pub(super) fn member_path(&self) -> Option<&str> {
        self.runtime_path.filter(|_| !self.standalone)
    }
}

/// The application a README describes.
#[derive(Debug)]
pub(super) struct AppView<'a> {
    pub(super) name: &'a str,
    pub(super) version: &'a str,
    /// `application_path` as configured.
    pub(super) path: &'a str,
}

/// One row of the README's tool table.
#[derive(Debug)]
pub(super) struct ToolRow<'a> {
    pub(super) name: &'a str,
    pub(super) confirm: Option<&'a str>,
    pub(super) hints: Vec<&'static str>,
    /// The first line of the description.
    pub(super) description: &'a str,
}

/// `templates/README.md.askama`.
#[derive(Debug, Template)]
#[template(path = "README.md.askama", escape = "none")]
pub(super) struct Readme<'a> {
    pub(super) header: String,
    pub(super) identity: &'a str,
    pub(super) package: &'a str,
    pub(super) version: &'static str,
    /// The config's file name.
    pub(super) config_file: String,
    pub(super) application: Option<AppView<'a>>,
    pub(super) tools: Vec<ToolRow<'a>>,
    /// Some tool is confirm-gated.
    pub(super) gated: bool,
    /// `--name` of every exposed global flag.
    pub(super) global_flags: Vec<String>,
    /// Some tool runs a command.
    pub(super) commands: bool,
    pub(super) port: u16,
    pub(super) address: &'a str,
    pub(super) url: String,
    pub(super) http_json: String,
    pub(super) stdio_json: String,
    /// The fence of the shell code blocks: longer than any run of backticks in the values they
    /// show (a shell-quoted value may span lines), so none can close the block early.
    pub(super) fence: String,
    /// `fiskgen check <config> --generated <this directory>`, shell-quoted.
    pub(super) check_command: String,
    pub(super) smoke_tool: Option<&'a str>,
}

/// `templates/gitignore.askama`, written as `.gitignore`.
#[derive(Debug, Template)]
#[template(path = "gitignore.askama", escape = "none")]
pub(super) struct Gitignore {
    pub(super) header: String,
}

/// `templates/ci/regenerate.sh.askama`.
#[derive(Debug, Template)]
#[template(path = "ci/regenerate.sh.askama", escape = "none")]
pub(super) struct Regenerate<'a> {
    pub(super) header: String,
    pub(super) package: &'a str,
    pub(super) config_file: &'a str,
    pub(super) smoke_tool: Option<&'a str>,
}

/// `templates/ci/github-workflow.yml.askama`.
#[derive(Debug, Template)]
#[template(path = "ci/github-workflow.yml.askama", escape = "none")]
pub(super) struct Workflow<'a> {
    pub(super) header: String,
    pub(super) package: &'a str,
    pub(super) version: &'static str,
    pub(super) config_file: &'a str,
    /// `<name> <version>` of the application, or a phrase when the config names none.
    pub(super) application: String,
}

/// `templates/ci/release.yml.askama`: the tag-triggered release workflow.
#[derive(Debug, Template)]
#[template(path = "ci/release.yml.askama", escape = "none")]
pub(super) struct Release<'a> {
    pub(super) header: String,
    pub(super) package: &'a str,
    pub(super) version: &'static str,
    pub(super) config_file: &'a str,
    /// The config's file name when it is plain enough to stand in YAML and GitHub's
    /// expressions as it is (letters, digits, `.`, `_`, `-`, `/`).
    pub(super) plain_config: Option<&'a str>,
    /// `<name> <version>` of the application, or a phrase when the config names none.
    pub(super) application: String,
}

/// `name` when it is made of letters, digits, `.`, `_`, `-` and `/` only (and not empty).
pub(super) fn plain(name: &str) -> Option<&str> {
    let plain = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-/".contains(&b));
    plain.then_some(name)
}

/// Renders a template. askama drops a template file's last newline; every file ends with one.
pub(super) fn render(file: &str, template: &impl Template) -> Result<String, GenerateError> {
    let mut text = template.render().map_err(|error| GenerateError::Template {
        file: file.to_string(),
        error,
    })?;
    text.push('\n');
    Ok(text)
}

/// Every file of the crate that comes from `templates/`: relative path and contents.
pub(super) fn files(
    package: &str,
    server: &ir::Server,
    settings: &Settings,
) -> Result<Vec<(&'static str, String)>, GenerateError> {
    let config_file = server.settings.config_file.clone();
    let smoke_tool = smoke_tool(server);
    let application = match &server.application {
        Some(app) => format!(
            "{} {}",
            app.name,
            app.version.as_deref().unwrap_or("(no version)")
        ),
        None => "the application".to_string(),
    };
    let regenerate = Regenerate {
        header: header(),
        package,
        config_file: &config_file,
        smoke_tool,
    };
    let workflow = Workflow {
        header: header(),
        package,
        version: env!("CARGO_PKG_VERSION"),
        config_file: &config_file,
        application,
    };
    let release = Release {
        header: header(),
        package,
        version: env!("CARGO_PKG_VERSION"),
        config_file: &config_file,
        plain_config: plain(&config_file),
        application: workflow.application.clone(),
    };
    let gitignore = Gitignore { header: header() };
    Ok(vec![
        (
            "Cargo.toml",
            render("Cargo.toml", &cargo_toml(package, server, settings))?,
        ),
        ("README.md", render("README.md", &readme(package, server))?),
        (".gitignore", render(".gitignore", &gitignore)?),
        ("ci/regenerate.sh", render("ci/regenerate.sh", &regenerate)?),
        (
            "ci/github-workflow.yml",
            render("ci/github-workflow.yml", &workflow)?,
        ),
        ("ci/release.yml", render("ci/release.yml", &release)?),
    ])
}

fn cargo_toml<'a>(package: &'a str, server: &ir::Server, settings: &'a Settings) -> CargoToml<'a> {
    let what = match &server.application {
        Some(app) => format!("the {} command-line application", app.name),
        None => "fiskgen's built-in tools".to_string(),
    };
    let knowledge = server.tools.iter().any(|tool| {
        matches!(tool.kind, ToolKind::Builtin { builtin, .. } if ir::Builtin::KNOWLEDGE.contains(&builtin))
    });
    // OAuth needs the JWT validation; a JWKS fetched over https needs TLS.
    let oauth = server
        .settings
        .auth
        .as_ref()
        .and_then(|auth| auth.oauth.as_ref());
    let jwks_tls = oauth.is_some_and(|oauth| {
        matches!(&oauth.jwks, crate::ir::JwksConfig::Url(url) if url.starts_with("https://"))
    });
    let telemetry = server.settings.telemetry.as_ref();
    let tls = jwks_tls
        || telemetry.is_some_and(|telemetry| telemetry.endpoint.starts_with("https://"))
        || server
            .settings
            .knowledge
            .embeddings
            .as_ref()
            .is_some_and(|embeddings| embeddings.base_url.starts_with("https://"));
    CargoToml {
        header: header(),
        package,
        description: format!("MCP server for {what}, generated by fiskgen"),
        runtime: Runtime::needs(knowledge, oauth.is_some(), telemetry.is_some(), tls),
        runtime_version: format!("={}", env!("CARGO_PKG_VERSION")),
        standalone: !settings.workspace_member,
        runtime_path: settings.runtime_path.as_deref(),
    }
}

fn readme<'a>(package: &'a str, server: &'a ir::Server) -> Readme<'a> {
    let identity = &server.identity;
    let port = server.settings.port;
    let address = server.settings.address.as_str();
    let host = if address == "0.0.0.0" || address == "::" {
        "127.0.0.1"
    } else {
        address
    };
    let url = format!("http://{host}:{port}/mcp");
    let http_json = json!({
        "mcpServers": {identity.as_str(): {"type": "http", "url": url}}
    });
    let stdio_json = json!({
        "mcpServers": {identity.as_str(): {"command": format!("/path/to/{package}"), "args": ["--stdio"]}}
    });
    let config_file = server.settings.config_file.clone();
    let check_command = format!(
        "fiskgen check {} --generated <this directory>",
        filters::shell_word(&config_file)
    );
    let fence = [config_file.as_str(), identity, package, &url]
        .into_iter()
        .map(filters::longest_backtick_run)
        .max()
        .unwrap_or_default()
        .max(2)
        + 1;
    Readme {
        header: header(),
        fence: "`".repeat(fence),
        identity,
        package,
        version: env!("CARGO_PKG_VERSION"),
        config_file,
        application: server.application.as_ref().map(|app| AppView {
            name: &app.name,
            version: app.version.as_deref().unwrap_or("(no version)"),
            path: &app.configured_path,
        }),
        tools: server
            .tools
            .iter()
            .map(|tool| ToolRow {
                name: &tool.name,
                confirm: tool
                    .confirm
                    .as_ref()
                    .map(|confirm| confirm.trigger.as_str()),
                hints: Hint::ALL
                    .into_iter()
                    .filter(|hint| tool.hints.contains(&HintName(*hint)))
                    .map(hint_label)
                    .collect(),
                description: first_line(&tool.description).unwrap_or_default(),
            })
            .collect(),
        gated: server.tools.iter().any(|tool| tool.confirm.is_some()),
        global_flags: server
            .global_flags
            .iter()
            .filter(|flag| flag.exposed)
            .map(|flag| format!("--{}", flag.name))
            .collect(),
        commands: server
            .tools
            .iter()
            .any(|tool| matches!(tool.kind, ToolKind::Command(_))),
        port,
        address,
        url,
        http_json: pretty(&http_json),
        stdio_json: pretty(&stdio_json),
        check_command,
        smoke_tool: smoke_tool(server),
    }
}

/// The tool the CI script calls by default: the first read-only command that needs no
/// arguments and no confirmation.
fn smoke_tool(server: &ir::Server) -> Option<&str> {
    server
        .tools
        .iter()
        .find(|tool| {
            matches!(tool.kind, ToolKind::Command(_))
                && tool.hints.contains(&HintName(Hint::ReadOnly))
                && tool.confirm.is_none()
                && tool
                    .input_schema
                    .get("required")
                    .and_then(serde_json::Value::as_array)
                    .is_none_or(Vec::is_empty)
        })
        .map(|tool| tool.name.as_str())
}

fn hint_label(hint: Hint) -> &'static str {
    match hint {
        Hint::ReadOnly => "read-only",
        Hint::Destructive => "destructive",
        Hint::Idempotent => "idempotent",
        Hint::OpenWorld => "open-world",
    }
}

fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

#[cfg(test)]
#[path = "files_tests.rs"]
mod tests;
