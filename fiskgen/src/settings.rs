//! The server settings of a config, resolved for the IR ([`crate::ir::Settings`]): defaults
//! filled in, so that nothing after `select` reads the config.

use fiskgen_contract::defaults;

use fiskgen_contract::surface::{Rules, Stage};

use crate::config::{Config, McpConfig, ToolFilter};
use crate::ir;

/// The config's server settings, resolved: the defaults filled in.
pub(crate) fn resolve(config: &Config) -> ir::Settings {
    let default_mcp = McpConfig::default();
    let mcp = config.mcp.as_ref().unwrap_or(&default_mcp);
    let mut scrub_env = config.credential_env_names();
    scrub_env.sort();
    scrub_env.dedup();
    ir::Settings {
        config_file: config
            .source
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| "its config".to_string()),
        mcp: config.mcp.is_some(),
        port: mcp.port.unwrap_or(defaults::PORT),
        address: mcp
            .address
            .clone()
            .unwrap_or_else(|| defaults::ADDRESS.to_string()),
        confirm: mcp.confirm,
        stateless: mcp.stateless,
        max_concurrent_tools: mcp.max_concurrent_tools,
        tool_timeout: mcp.tool_timeout,
        allowed_hosts: mcp.allowed_hosts.clone(),
        allowed_origins: mcp.allowed_origins.clone(),
        auth: mcp.auth.clone(),
        instructions: mcp
            .instructions
            .as_deref()
            .map(str::trim)
            .filter(|text| !text.is_empty())
            .map(str::to_string),
        scrub_env,
        knowledge: config.harness.knowledge.clone(),
        serving: serving_rules(config),
        page_size: mcp.page_size,
        structured_output: mcp.structured_output,
        output_schema: mcp.output_schema,
        exit_code_is_error: mcp.exit_code_is_error,
        catalog: mcp.catalog,
        group_tag_prefix: mcp.group_tag_prefix.clone(),
        tool_prefix: mcp.tool_prefix.clone(),
        telemetry: Some(config.telemetry.clone()).filter(|telemetry| telemetry.enabled),
    }
}

/// The filter pipeline of a config, in order: `include`, `exclude`, then the
/// `expose.agent.tools` narrowing.
pub fn filter_stages(config: &Config) -> Vec<Stage> {
    let stage = |label: &str, filter: &ToolFilter, include: bool| Stage {
        label: label.to_string(),
        include,
        filter: filter.clone(),
    };
    vec![
        stage("include", &config.include, true),
        stage("exclude", &config.exclude, false),
        stage("expose.agent.tools.include", &config.expose_include, true),
        stage("expose.agent.tools.exclude", &config.expose_exclude, false),
    ]
}

/// The serving rules a server built from `config` carries, for the drift verdict: its filter
/// stages and its `global_flags` allowlist (the exposed flags are those of the allowlist and the
/// required ones, found in each document as selection does here).
pub fn serving_rules(config: &Config) -> Rules {
    let mcp = config.mcp.as_ref();
    Rules {
        stages: filter_stages(config),
        global_flags: config.global_flags.clone(),
        tool_prefix: mcp.map(|mcp| mcp.tool_prefix.clone()).unwrap_or_default(),
        tool_names: mcp
            .iter()
            .flat_map(|mcp| &mcp.tool_names)
            .map(|(from, to)| (from.text.clone(), to.clone()))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn lists(yaml: &str) -> (usize, u32) {
        let config = match crate::config::parse(yaml, Path::new("test.yaml")) {
            Ok(config) => config,
            Err(error) => panic!("expected a valid config, got:\n{error}"),
        };
        let docs = crate::docs::docs(&config, None, &[]);
        (resolve(&config).page_size, docs.page_size)
    }

    #[test]
    fn one_page_size_sets_every_list_and_the_deprecated_key_only_the_resource_and_prompt_lists() {
        let default = u32::try_from(fiskgen_contract::listing::DEFAULT_PAGE_SIZE).ok();
        let (tools, docs) = lists("expose:\n  agent:\n    mcp: {}\n");
        assert_eq!((tools, Some(docs)), (256, default));
        assert_eq!(
            lists("expose:\n  agent:\n    mcp:\n      page_size: 7\n"),
            (7, 7)
        );
        assert_eq!(
            lists("expose:\n  agent:\n    mcp:\n      page_size: 7\n      list_page_size: 3\n"),
            (7, 3)
        );
        assert_eq!(
            lists("expose:\n  agent:\n    mcp:\n      list_page_size: 4\n"),
            (256, 4)
        );
    }
}
