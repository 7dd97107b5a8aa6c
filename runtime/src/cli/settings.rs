//! Settings by precedence: the flag, then the environment, then the setting compiled in, then
//! the default (docs/runtime.md, "Flags"). The rules are pure functions of their sources, so
//! the unit tests below pin them without touching the process environment.
//!
//! As in fisk-ai, a zero port or an empty address counts as unset wherever it comes from,
//! except that `--port 0` asks the kernel for a free port.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::builtins;
use crate::cli::args::Cli;
use crate::mcp::request_state::STATE_KEY_VAR;
use crate::spec::app::{AppSpec, AuthSource};
use fiskgen_contract::introspect::PROVIDER_CREDENTIAL_VARS;

use super::error::PortError;

// The environment variables for port and address, and the defaults when nothing sets them.
use fiskgen_contract::defaults::{
    ADDRESS as DEFAULT_ADDRESS, ADDRESS_VAR, MAX_CONCURRENCY_LIMIT, PORT as DEFAULT_PORT, PORT_VAR,
    TOOL_TIMEOUT as DEFAULT_TOOL_TIMEOUT,
};

/// The port: `--port` (0 included: a free port), else a non-zero `FISK_AI_MCP_PORT`, else a
/// non-zero compiled-in port, else 8080. An environment value that is not a port is an error
/// that names the variable.
pub(super) fn port(flag: Option<u16>, env: Option<&str>, compiled: u16) -> Result<u16, PortError> {
    if let Some(port) = flag {
        return Ok(port);
    }
    let from_env = match env.map(str::trim).filter(|text| !text.is_empty()) {
        Some(text) => text.parse::<u16>().map_err(|_| PortError {
            text: text.to_string(),
        })?,
        None => 0,
    };
    Ok([from_env, compiled]
        .into_iter()
        .find(|&port| port != 0)
        .unwrap_or(DEFAULT_PORT))
}

/// The bind address: the first non-blank of `--address`, `FISK_AI_MCP_ADDRESS` and the
/// compiled-in address, else 127.0.0.1; `[::1]` as written in URLs loses its brackets.
pub(super) fn address(flag: Option<&str>, env: Option<&str>, compiled: &str) -> String {
    let chosen = [flag, env, Some(compiled)]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|text| !text.is_empty())
        .unwrap_or(DEFAULT_ADDRESS);
    chosen
        .strip_prefix('[')
        .and_then(|inner| inner.strip_suffix(']'))
        .unwrap_or(chosen)
        .to_string()
}

/// Commands running at once: the flag, else the compiled-in setting, within 1-1024.
pub(super) fn max_concurrent(flag: Option<u32>, compiled: u32) -> u32 {
    flag.unwrap_or(compiled).clamp(1, MAX_CONCURRENCY_LIMIT)
}

/// The longest a command may run: the flag, else a non-zero compiled-in setting, else 30 s.
pub(super) fn tool_timeout(flag: Option<Duration>, compiled: Duration) -> Duration {
    flag.or(Some(compiled).filter(|timeout| !timeout.is_zero()))
        .unwrap_or(DEFAULT_TOOL_TIMEOUT)
}

/// Where to listen, from the flags, the process environment and the compiled-in settings.
pub(super) fn listen_address(app: &AppSpec, cli: &Cli) -> Result<(String, u16), PortError> {
    let env_port = std::env::var(PORT_VAR).ok();
    let env_address = std::env::var(ADDRESS_VAR).ok();
    let port = port(cli.port, env_port.as_deref(), app.settings.port)?;
    let address = address(
        cli.address.as_deref(),
        env_address.as_deref(),
        app.settings.address,
    );
    Ok((address, port))
}

/// The variables no command may see: the LLM providers' credentials, the operator's list, the
/// server's own secrets (state key, approval store, bearer token or header) and the embeddings
/// key.
pub(super) fn scrub_list(app: &AppSpec) -> Vec<String> {
    let settings = &app.settings;
    let mut scrub: Vec<String> = PROVIDER_CREDENTIAL_VARS
        .iter()
        .chain(settings.scrub_env)
        .map(|v| v.to_string())
        .collect();
    scrub.push(STATE_KEY_VAR.into());
    scrub.push(crate::mcp::approvals::STORE_VAR.into());
    scrub.push(crate::mcp::tasks::shared::STORE_VAR.into());
    scrub.push(crate::nats::CONTEXT_VAR.into());
    // No secret of the server's own authentication reaches a command (no token passthrough).
    if let Some(auth) = &settings.auth {
        let header = auth.header.map(|header| header.value);
        for source in [auth.token, header].into_iter().flatten() {
            if let AuthSource::Env(name) = source {
                scrub.push(name.into());
            }
        }
    }
    let embeddings_key = builtins::knowledge_spec(app)
        .ok()
        .flatten()
        .and_then(|spec| spec.embeddings)
        .and_then(|embeddings| embeddings.api_key_env);
    if let Some(name) = embeddings_key {
        scrub.push(name.into());
    }
    scrub
}

/// The application to run: the flag, else the compiled-in path; a bare name is looked up on
/// PATH now, so the log says which file will run. A missing or non-executable file is a warning
/// here (calls fail with a precise error until it appears), not a refusal to start.
pub(super) fn resolve_program(app: &AppSpec, flag: Option<&Path>) -> Option<PathBuf> {
    let configured = match (flag, &app.application) {
        (Some(path), _) => path.to_path_buf(),
        (None, Some(application)) => PathBuf::from(application.path),
        (None, None) => return None,
    };
    if configured.components().count() == 1 && !configured.is_absolute() {
        return match which::which(&configured) {
            Ok(found) => Some(found),
            Err(_) => {
                tracing::warn!(
                    "the application {} is not on PATH; calls will fail until it is (or set \
                     --application-path)",
                    configured.display()
                );
                Some(configured)
            }
        };
    }
    if !is_executable(&configured) {
        tracing::warn!(
            "the application {} does not exist or is not executable; calls will fail until it is",
            configured.display()
        );
    }
    Some(configured)
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_flag_wins_and_zero_from_it_asks_for_a_free_port() {
        assert_eq!(port(Some(9000), Some("7000"), 6000), Ok(9000));
        assert_eq!(port(Some(0), Some("7000"), 6000), Ok(0));
    }

    #[test]
    fn the_port_falls_through_env_then_compiled_then_8080_skipping_zero_and_blank() {
        assert_eq!(port(None, Some(" 7000 "), 6000), Ok(7000));
        assert_eq!(port(None, Some("0"), 6000), Ok(6000));
        assert_eq!(port(None, Some("  "), 6000), Ok(6000));
        assert_eq!(port(None, None, 6000), Ok(6000));
        assert_eq!(port(None, None, 0), Ok(DEFAULT_PORT));
        assert_eq!(port(None, Some("0"), 0), Ok(DEFAULT_PORT));
    }

    #[test]
    fn a_port_variable_that_is_not_a_port_names_the_variable_and_the_value() {
        assert_eq!(
            port(None, Some("80a"), 6000),
            Err(PortError { text: "80a".into() })
        );
        assert_eq!(
            port(None, Some("80a"), 6000).map_err(|error| error.to_string()),
            Err(format!("{PORT_VAR}=\"80a\" is not a port number"))
        );
        assert!(port(None, Some("70000"), 0).is_err());
        // A flag makes the environment irrelevant, even a broken one.
        assert_eq!(port(Some(1), Some("80a"), 0), Ok(1));
    }

    #[test]
    fn the_address_is_the_first_non_blank_source_else_loopback() {
        assert_eq!(address(Some("0.0.0.0"), Some("10.0.0.1"), "::1"), "0.0.0.0");
        assert_eq!(address(Some(" "), Some("10.0.0.1"), "::1"), "10.0.0.1");
        assert_eq!(address(None, Some(""), " ::1 "), "::1");
        assert_eq!(address(None, None, ""), DEFAULT_ADDRESS);
    }

    #[test]
    fn a_bracketed_ipv6_address_loses_its_brackets() {
        assert_eq!(address(Some("[::1]"), None, ""), "::1");
        assert_eq!(address(None, None, "[fe80::1]"), "fe80::1");
        // Only a matched pair is stripped.
        assert_eq!(address(Some("[::1"), None, ""), "[::1");
    }

    #[test]
    fn concurrency_is_the_flag_else_compiled_in_within_bounds() {
        assert_eq!(max_concurrent(Some(8), 2), 8);
        assert_eq!(max_concurrent(None, 3), 3);
        assert_eq!(max_concurrent(Some(5000), 2), MAX_CONCURRENCY_LIMIT);
        assert_eq!(max_concurrent(Some(0), 2), 1);
    }

    #[test]
    fn the_timeout_is_the_flag_else_a_non_zero_compiled_in_value_else_30s() {
        let second = Duration::from_secs(1);
        assert_eq!(tool_timeout(Some(second), Duration::from_secs(9)), second);
        assert_eq!(
            tool_timeout(None, Duration::from_secs(9)),
            Duration::from_secs(9)
        );
        assert_eq!(tool_timeout(None, Duration::ZERO), DEFAULT_TOOL_TIMEOUT);
        assert_eq!(DEFAULT_TOOL_TIMEOUT, Duration::from_secs(30));
    }
}
