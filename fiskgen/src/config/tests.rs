//! The config format rule by rule, including Fisk AI's config test cases (docs/config.md,
//! cases 59-67), checked through the public `parse`/`load` API.

use std::path::Path;
use std::time::Duration;

use super::*;

const FULL: &str = include_str!("../../tests/config/full.yaml");

fn ok(yaml: &str) -> Config {
    match parse(yaml, Path::new("test.yaml")) {
        Ok(config) => config,
        Err(error) => panic!("expected a valid config, got:\n{error}"),
    }
}

fn problems(yaml: &str) -> Vec<Problem> {
    match parse(yaml, Path::new("test.yaml")) {
        Ok(config) => panic!("expected problems, got {config:#?}"),
        Err(error) => error.problems,
    }
}

/// The single problem of `yaml`.
fn problem(yaml: &str) -> Problem {
    let mut all = problems(yaml);
    assert_eq!(all.len(), 1, "expected one problem, got {all:#?}");
    all.remove(0)
}

/// `line:column: message` of every problem.
fn located(yaml: &str) -> Vec<String> {
    problems(yaml)
        .iter()
        .map(|p| format!("{}:{}: {}", p.line, p.column, p.message))
        .collect()
}

fn mcp(config: &Config) -> &McpConfig {
    config.mcp.as_ref().expect("expose.agent.mcp is present")
}

fn patterns(filter: &ToolFilter) -> Vec<&str> {
    filter.tools.iter().map(regex::Regex::as_str).collect()
}

// ---------------------------------------------------------------------------------------------
// Whole files.

#[test]
fn the_full_example_reads_into_every_field() {
    let config = ok(FULL);
    assert_eq!(config.source, Path::new("test.yaml"));
    assert_eq!(config.identity, "nats");
    assert!(config.identity_explicit);
    assert_eq!(
        config.application_path.as_deref(),
        Some("/usr/local/bin/nats")
    );
    assert_eq!(config.global_flags, ["context"]);
    assert_eq!(patterns(&config.include), ["^stream_"]);
    assert_eq!(config.include.tags, ["scope:read", ""]);
    assert_eq!(patterns(&config.exclude), ["^stream_rm$"]);
    assert_eq!(config.exclude.tags, ["scope:system"]);
    assert_eq!(patterns(&config.expose_include), ["^stream_"]);
    assert!(config.expose_include.tags.is_empty());
    assert_eq!(patterns(&config.expose_exclude), ["_rm$"]);
    assert_eq!(config.expose_exclude.tags, ["scope:danger"]);

    let harness = &config.harness;
    assert_eq!(harness.confirm_tags, ["impact:rw"]);
    assert_eq!(
        harness.tools,
        [
            BuiltinToolConfig {
                name: "read_file".to_string(),
                confirm: true,
                roots: vec!["./docs".to_string(), "/srv/shared".to_string()],
                max_bytes: Some(1_048_576),
            },
            BuiltinToolConfig {
                name: "base64_encode".to_string(),
                confirm: false,
                roots: Vec::new(),
                max_bytes: None,
            },
        ]
    );
    assert!(!harness.human_in_the_loop);
    assert!(!harness.memory);
    assert_eq!(
        harness.knowledge,
        KnowledgeConfig {
            enabled: true,
            directory: None,
            top_k: 5,
            max_injected_tokens: 6000,
            embeddings: Some(EmbeddingsConfig {
                base_url: "http://127.0.0.1:1234/v1".to_string(),
                model: "text-embedding-embeddinggemma-300m".to_string(),
                api_key_env: Some("RAG_EMBED_KEY".to_string()),
                timeout: Duration::from_secs(30),
                query_prefix: String::new(),
                document_prefix: String::new(),
            }),
            paths: vec!["docs".to_string()],
        }
    );

    let hint_tags = BTreeMap::from([
        ("impact:ro".to_string(), vec![Hint::ReadOnly]),
        (
            "impact:rw".to_string(),
            vec![Hint::Destructive, Hint::Idempotent],
        ),
    ]);
    assert_eq!(
        *mcp(&config),
        McpConfig {
            port: Some(8080),
            address: Some("127.0.0.1".to_string()),
            instructions: Some("free text sent in the initialize result\n".to_string()),
            confirm: ConfirmMode::Auto,
            builtins: vec!["knowledge_search".to_string()],
            max_concurrent_tools: 2,
            tool_timeout: Duration::from_secs(30),
            hint_tags,
            param_headers: BTreeMap::new(),
            ask: BTreeMap::new(),
            allowed_hosts: vec!["mcp.example.com".to_string()],
            allowed_origins: vec!["https://mcp.example.com".to_string()],
            auth: Some(AuthConfig {
                token: Some(SecretSource::Env("NATS_MCP_TOKEN".to_string())),
                ..AuthConfig::default()
            }),
            stateless: false,
            scrub_env: vec!["NATS_PASSWORD".to_string()],
            tasks: Some(TaskConfig::default()),
            resources: true,
            prompts: true,
            skills: true,
            list_page_size: None,
            structured_output: true,
            output_schema: false,
            page_size: 256,
            exit_code_is_error: false,
            task_required: Vec::new(),
            catalog: CatalogMode::List,
            group_tag_prefix: None,
            tool_prefix: String::new(),
            tool_names: Vec::new(),
            allow_long_names: false,
        }
    );
    assert_eq!(
        config.credential_env_names(),
        ["NATS_PASSWORD", "RAG_EMBED_KEY"]
    );
    assert_eq!(
        config.notes,
        [
            "ignoring agent-only settings (harness.human_in_the_loop, harness.memory): fiskgen serves \
          MCP only"
        ]
    );
}

#[test]
fn an_empty_file_is_an_empty_config() {
    for text in ["", "\n", "# nothing yet\n", "---\n", "~\n"] {
        let config = ok(text);
        assert_eq!(config.identity, "fisk", "{text:?}");
        assert!(!config.identity_explicit);
        assert!(config.application_path.is_none());
        assert!(config.mcp.is_none());
        assert!(config.include.is_empty() && config.exclude.is_empty());
        assert!(config.notes.is_empty());
        assert_eq!(config.harness.knowledge, KnowledgeConfig::default());
    }
}

#[test]
fn a_file_that_is_not_a_mapping_is_refused() {
    let p = problem("- identity: nats\n");
    assert_eq!((p.line, p.column), (1, 1));
    assert!(
        p.message
            .starts_with("the config file must be a mapping of keys (identity, "),
        "{}",
        p.message
    );
    assert!(p.message.ends_with("found a list"), "{}", p.message);
}

#[test]
fn broken_yaml_is_one_problem_at_the_parser_position() {
    let error = parse(
        "identity: nats\nexpose:\n  agent: [unterminated\n",
        Path::new("bad.yaml"),
    )
    .expect_err("broken YAML");
    assert_eq!(error.problems.len(), 1);
    assert_eq!(
        error.to_string(),
        "bad.yaml:4:1: invalid YAML: while parsing a flow sequence, expected ',' or ']'"
    );
    let p = problem("a: 1\na: 2\n  b: 3\n");
    assert_eq!((p.line, p.column), (3, 4));
    assert_eq!(p.path, "");
}

#[test]
fn all_problems_are_reported_at_once_in_file_order() {
    let yaml = "\
expose:
  agent:
    mcp:
      tool_timeout: 1d
      max_concurrent_tools: -1
identity: my.agent
global_flags: context
";
    let error = parse(yaml, Path::new("nats.yaml")).expect_err("invalid");
    assert_eq!(
        error.to_string(),
        "\
nats.yaml:4:21: invalid expose.agent.mcp.tool_timeout \"1d\": unknown unit \"d\": expected a number and a unit (ns, us, ms, s, m, h), e.g. 30s, 1m30s or 1.5h
nats.yaml:5:29: invalid expose.agent.mcp.max_concurrent_tools -1: must not be negative
nats.yaml:6:11: identity \"my.agent\" is invalid: it must contain only letters, digits, '-' or '_' (it names the MCP server and the my.agent-mcp binary)
nats.yaml:7:15: global_flags must be a list of strings, found \"context\""
    );
    let paths: Vec<&str> = error.problems.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "expose.agent.mcp.tool_timeout",
            "expose.agent.mcp.max_concurrent_tools",
            "identity",
            "global_flags"
        ]
    );
}

#[test]
fn problems_found_after_reading_are_sorted_into_file_order() {
    let yaml = "\
global_flags: [context]
expose:
  agent:
    mcp:
      builtins: [knowledge_search]
      auth: {}
";
    assert_eq!(
        located(yaml),
        [
            "1:1: global_flags is set but application_path is not: global flags are the wrapped \
             application's own globals and have nothing to attach to without an application",
            "5:7: expose.agent.mcp.builtins lists knowledge_search but knowledge is not enabled",
            "6:7: expose.agent.mcp.auth needs token_env, token_file, header or oauth",
        ]
    );
}

#[test]
fn load_reads_files_and_reports_unreadable_ones() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("agent.yaml");
    std::fs::write(&path, "application_path: ./bin/echo\n").expect("write");
    let config = load(&path).expect("valid");
    assert_eq!(config.identity, "echo");
    assert_eq!(config.source, path);
    assert_eq!(config.base_dir(), dir.path());

    let missing = dir.path().join("missing.yaml");
    let error = load(&missing).expect_err("missing file");
    assert!(error.problems.is_empty());
    assert!(error.read_error.is_some());
    let shown = error.to_string();
    assert!(
        shown.starts_with(&format!(
            "reading config {:?}: ",
            missing.display().to_string()
        )),
        "{shown}"
    );
    // The OS error is in the message once, not again as a source (`error: {:#}` prints both).
    assert!(std::error::Error::source(&error).is_none());
    assert_eq!(shown.matches("(os error 2)").count(), 1, "{shown}");
}

// ---------------------------------------------------------------------------------------------
// Strictness.

#[test]
fn unknown_keys_name_the_key_its_position_and_the_nearest_valid_key() {
    let p = problem("expose:\n  agent:\n    mcp:\n      tool_timout: 5s\n");
    assert_eq!(p.path, "expose.agent.mcp.tool_timout");
    assert_eq!((p.line, p.column), (4, 7));
    assert_eq!(p.message, "unknown key \"tool_timout\" in expose.agent.mcp");
    assert_eq!(p.help.as_deref(), Some("did you mean \"tool_timeout\"?"));
    let error = parse(
        "expose:\n  agent:\n    mcp:\n      tool_timout: 5s\n",
        Path::new("a.yaml"),
    )
    .expect_err("unknown key");
    assert_eq!(
        error.to_string(),
        "a.yaml:4:7: unknown key \"tool_timout\" in expose.agent.mcp\n  help: did you mean \"tool_timeout\"?"
    );
}

#[test]
fn harness_keys_at_the_top_level_say_where_they_belong() {
    // Reference case 59.
    let p = problem("application_path: /usr/bin/nats\nhuman_in_the_loop:\n  enabled: true\n");
    assert_eq!(
        p.message,
        "unknown key \"human_in_the_loop\" at the top level"
    );
    assert_eq!(
        p.help.as_deref(),
        Some("\"human_in_the_loop\" belongs under harness")
    );
    assert_eq!((p.line, p.column), (2, 1));

    let p = problem("confirm_tags: [impact:rw]\n");
    assert_eq!(
        p.help.as_deref(),
        Some("\"confirm_tags\" belongs under harness")
    );

    let p = problem("confirm_tag: [impact:rw]\n");
    assert_eq!(
        p.help.as_deref(),
        Some("did you mean harness.confirm_tags?")
    );

    let p = problem("expose:\n  agent:\n    port: 8080\n");
    assert_eq!(
        p.help.as_deref(),
        Some("\"port\" belongs under expose.agent.mcp")
    );

    let p = problem("harness:\n  identity: x\n");
    assert_eq!(
        p.help.as_deref(),
        Some("\"identity\" belongs at the top level")
    );
}

#[test]
fn unknown_keys_without_a_near_match_list_the_valid_keys() {
    let p = problem("no_such_key: true\n");
    assert_eq!(p.message, "unknown key \"no_such_key\" at the top level");
    assert_eq!(
        p.help.as_deref(),
        Some(
            "valid keys at the top level: identity, application_path, global_flags, include, \
             exclude, harness, expose, system_prompt, nats_context, llm, remote_agents, remote_tools, \
             telemetry"
        )
    );
    let p = problem("include: {patterns: [x]}\n");
    assert_eq!(p.path, "include.patterns");
    assert_eq!(
        p.help.as_deref(),
        Some("valid keys in include: tools, tags")
    );
}

#[test]
fn unknown_keys_are_found_at_every_level() {
    let yaml = "\
harness:
  knowledge:
    embeddings: {base_url: http://x, model: m, dimension: 3}
  memory: {enabled: true, size: 3}
llm: {budget: {max_cost: 3}}
remote_tools: [{name: a, prefix: b}]
expose: {agent: {tools: {include: {tools: [x], names: [y]}}}}
";
    let paths: Vec<String> = problems(yaml).into_iter().map(|p| p.path).collect();
    assert_eq!(
        paths,
        [
            "harness.knowledge.embeddings.dimension",
            "harness.memory.size",
            "llm.budget.max_cost",
            "remote_tools[0].prefix",
            "expose.agent.tools.include.names",
        ]
    );
}

#[test]
fn duplicate_keys_are_errors() {
    let p = problem("identity: a\napplication_path: /bin/a\nidentity: b\n");
    assert_eq!(
        p.message,
        "duplicate key \"identity\" at the top level (first set on line 1)"
    );
    assert_eq!((p.line, p.column), (3, 1));
    let p = problem("expose:\n  agent:\n    mcp:\n      port: 1\n      port: 2\n");
    assert_eq!(
        p.message,
        "duplicate key \"port\" in expose.agent.mcp (first set on line 4)"
    );
    assert_eq!(p.path, "expose.agent.mcp.port");
    let p = problem("expose: {agent: {mcp: {hint_tags: {a: read_only, a: destructive}}}}\n");
    assert!(
        p.message
            .starts_with("duplicate key \"a\" in expose.agent.mcp.hint_tags")
    );
}

#[test]
fn wrong_types_are_reported_with_their_position() {
    let yaml = "\
identity: [a, b]
global_flags: context
include: [x]
harness:
  knowledge:
    enabled: yes
    top_k: \"5\"
expose:
  agent:
    mcp:
      port: \"8080\"
      stateless: 1
      allowed_hosts: {a: b}
";
    assert_eq!(
        located(yaml),
        [
            "1:11: identity must be a string, found a list",
            "2:15: global_flags must be a list of strings, found \"context\"",
            "3:10: include must be a mapping of keys (tools, tags), found a list",
            "6:14: harness.knowledge.enabled must be true or false, found \"yes\"",
            "7:12: harness.knowledge.top_k must be an integer, found \"5\"",
            "11:13: expose.agent.mcp.port must be an integer, found \"8080\"",
            "12:18: expose.agent.mcp.stateless must be true or false, found \"1\"",
            "13:22: expose.agent.mcp.allowed_hosts must be a list of strings, found a mapping",
        ]
    );
}

#[test]
fn null_values_mean_unset() {
    let config =
        ok("identity:\napplication_path: ~\nglobal_flags:\nharness:\n  knowledge:\n    top_k:\n");
    assert_eq!(config.identity, "fisk");
    assert!(config.global_flags.is_empty());
    assert_eq!(config.harness.knowledge.top_k, 5);
}

// ---------------------------------------------------------------------------------------------
// Top level.

#[test]
fn identity_defaults_and_pattern() {
    // Reference case 63 (fiskgen's default identity is `fisk`).
    let config = ok("application_path: /bin/echo\nexpose: {agent: {mcp: {}}}\n");
    assert_eq!(config.identity, "echo");
    assert!(!config.identity_explicit);
    assert_eq!(
        ok("identity: agent1\napplication_path: /usr/bin/nats\n").identity,
        "agent1"
    );
    assert_eq!(
        ok("identity: \"\"\napplication_path: /usr/bin/nats\n").identity,
        "nats"
    );
    assert_eq!(ok("expose: {agent: {mcp: {}}}\n").identity, "fisk");

    let p = problem("application_path: /usr/bin/my.agent\n");
    assert_eq!(p.path, "application_path");
    assert_eq!((p.line, p.column), (1, 19));
    assert_eq!(
        p.message,
        "identity \"my.agent\" is invalid: it must contain only letters, digits, '-' or '_' (it \
         names the MCP server and the my.agent-mcp binary)"
    );
    assert!(
        p.help
            .is_some_and(|help| help.contains("set an explicit identity"))
    );
    assert_eq!(
        ok("identity: my-agent\napplication_path: /usr/bin/my.agent\n").identity,
        "my-agent"
    );

    let p = problem("identity: \"my agent\"\n");
    assert_eq!((p.path.as_str(), p.line, p.column), ("identity", 1, 11));
    assert!(p.help.is_none());
}

#[test]
fn identities_the_generator_would_refuse_are_config_errors_with_a_position() {
    // The generator's rule (a Cargo package name) is the config's rule: no identity passes the
    // config check and then fails in generate.
    for (yaml, column) in [
        ("identity: 1app\n", 11),
        ("identity: -app\n", 11),
        ("identity: _app\n", 11),
        ("identity: \"9\"\n", 11),
    ] {
        let p = problem(yaml);
        let line = yaml.lines().count();
        assert_eq!(
            (p.path.as_str(), p.line, p.column),
            ("identity", line, column),
            "{yaml}"
        );
        assert!(
            p.message.contains("must start with a letter"),
            "{}",
            p.message
        );
    }
    let p = problem("application_path: /opt/1password\n");
    assert_eq!(
        (p.path.as_str(), p.line, p.column),
        ("application_path", 1, 19)
    );
    assert!(
        p.message
            .starts_with("identity \"1password\" is invalid: it must start with a letter")
    );
    assert!(
        p.help
            .is_some_and(|help| help.contains("set an explicit identity"))
    );
    let error = parse("identity: 1app\n", Path::new("app.yaml")).expect_err("invalid");
    assert!(
        error.to_string().starts_with(
            "app.yaml:1:11: identity \"1app\" is invalid: it must start with a letter"
        ),
        "{error}"
    );
}

#[test]
fn global_flags_are_normalised_and_need_an_application() {
    // Reference case 60.
    let config = ok(
        "application_path: /usr/bin/nats\nglobal_flags: [\"--context\", context, \" server \", \"\", \"-\"]\n",
    );
    assert_eq!(config.global_flags, ["context", "server"]);
    let p = problem("global_flags: [context]\n");
    assert!(
        p.message
            .starts_with("global_flags is set but application_path is not")
    );
    assert_eq!(
        p.help.as_deref(),
        Some("remove global_flags or set application_path")
    );
    // Nothing left after normalisation is not "set".
    assert!(ok("global_flags: [\"\", \"--\"]\n").global_flags.is_empty());
}

#[test]
fn filters_compile_their_patterns_and_keep_tags_verbatim() {
    let config =
        ok("include:\n  tools: [\"^stream_\", \"info$\"]\n  tags: [\"\", \" a \"]\nexclude: {}\n");
    assert_eq!(patterns(&config.include), ["^stream_", "info$"]);
    assert!(config.include.tools[0].is_match("stream_ls"));
    assert_eq!(config.include.tags, ["", " a "]);
    assert!(config.exclude.is_empty());
}

#[test]
fn a_bad_filter_pattern_is_reported_at_the_pattern() {
    let yaml = "include:\n  tools:\n    - ok\n    - \"(unclosed\"\nexpose: {agent: {tools: {exclude: {tools: [\"a{2,1}\"]}}}}\n";
    let all = problems(yaml);
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].path, "include.tools[1]");
    assert_eq!((all[0].line, all[0].column), (4, 7));
    assert_eq!(
        all[0].message,
        "invalid tool filter pattern \"(unclosed\": unclosed group"
    );
    assert_eq!(all[1].path, "expose.agent.tools.exclude.tools[0]");
    assert!(
        all[1]
            .message
            .starts_with("invalid tool filter pattern \"a{2,1}\": "),
        "{}",
        all[1].message
    );
}

// ---------------------------------------------------------------------------------------------
// harness.

#[test]
fn confirm_tags_are_trimmed_deduplicated_and_emptied() {
    // Reference case 60.
    let config =
        ok("harness:\n  confirm_tags: [\"impact:rw\", \" impact:rw \", \"\", \"   \", admin]\n");
    assert_eq!(config.harness.confirm_tags, ["impact:rw", "admin"]);
}

#[test]
fn harness_tools_entries() {
    let config = ok(
        "harness:\n  tools:\n    - {name: base64_encode, max_bytes: 0}\n    - {name: \" read_file \", roots: [\" a \", \"\"]}\n",
    );
    assert_eq!(config.harness.tools[0].name, "base64_encode");
    assert_eq!(config.harness.tools[0].max_bytes, None);
    assert_eq!(config.harness.tools[1].name, "read_file");
    assert_eq!(config.harness.tools[1].roots, ["a"]);

    let p = problem("harness:\n  tools:\n    - name: read_fil\n");
    assert_eq!(p.path, "harness.tools[0].name");
    assert_eq!((p.line, p.column), (3, 13));
    assert_eq!(
        p.message,
        "unknown built-in tool \"read_fil\" in harness.tools[0]: harness.tools takes read_file or base64_encode"
    );
    assert_eq!(p.help.as_deref(), Some("did you mean \"read_file\"?"));

    let p = problem("harness:\n  tools:\n    - name: knowledge_search\n");
    assert!(
        p.help
            .is_some_and(|help| help.contains("harness.knowledge.enabled"))
    );

    let p = problem(
        "harness:\n  tools:\n    - name: read_file\n    - name: base64_encode\n    - name: read_file\n",
    );
    assert_eq!(
        p.message,
        "harness.tools lists read_file twice (lines 3 and 5)"
    );
    assert_eq!((p.line, p.path.as_str()), (5, "harness.tools[2].name"));

    let p = problem("harness:\n  tools:\n    - name: [read_file]\n");
    assert_eq!(
        p.message,
        "harness.tools[0].name must be a string, found a list"
    );
    let p = problem("harness:\n  tools:\n    - confirm: true\n");
    assert_eq!(
        p.message,
        "harness.tools[0] has no name: set name to read_file or base64_encode"
    );

    // Every form Fisk AI's documentation uses: a bare name, and `options` with `root`.
    let config = ok(
        "harness:\n  tools:\n    - base64_encode\n    - name: read_file\n      confirm: true\n      options:\n        root: /srv/corpus\n        max_bytes: 1048576\n",
    );
    assert_eq!(config.harness.tools[0].name, "base64_encode");
    assert!(!config.harness.tools[0].confirm);
    assert_eq!(config.harness.tools[1].roots, ["/srv/corpus"]);
    assert_eq!(config.harness.tools[1].max_bytes, Some(1_048_576));
    assert!(config.harness.tools[1].confirm);
    let p = problem("harness:\n  tools: [read_fil]\n");
    assert_eq!(p.help.as_deref(), Some("did you mean \"read_file\"?"));
    let p = problem("harness:\n  tools:\n    - {name: read_file, options: {roots: [a]}}\n");
    assert!(p.message.contains("unknown key \"roots\""), "{}", p.message);

    let p = problem("harness:\n  tools:\n    - {name: read_file, max_bytes: -1}\n");
    assert_eq!(
        p.message,
        "invalid harness.tools[0].max_bytes -1: must not be negative"
    );
}

#[test]
fn knowledge_defaults_and_values() {
    let config = ok(
        "harness:\n  knowledge:\n    enabled: true\n    directory: idx\n    top_k: 0\n    max_injected_tokens: -1\n",
    );
    let knowledge = &config.harness.knowledge;
    assert!(knowledge.enabled);
    assert_eq!(knowledge.directory.as_deref(), Some("idx"));
    assert_eq!((knowledge.top_k, knowledge.max_injected_tokens), (5, 6000));
    assert!(knowledge.embeddings.is_none());
    let config = ok("harness:\n  knowledge: {top_k: 12, max_injected_tokens: 100}\n");
    assert_eq!(
        (
            config.harness.knowledge.top_k,
            config.harness.knowledge.max_injected_tokens
        ),
        (12, 100)
    );
}

#[test]
fn embeddings_timeout_defaults_to_30s_and_must_be_positive() {
    // Reference case 67.
    let base = "harness:\n  knowledge:\n    embeddings:\n      base_url: http://127.0.0.1:1234/v1\n      model: m\n";
    let timeout = |config: &Config| {
        config
            .harness
            .knowledge
            .embeddings
            .as_ref()
            .map(|e| e.timeout)
    };
    assert_eq!(timeout(&ok(base)), Some(Duration::from_secs(30)));
    assert_eq!(
        timeout(&ok(&format!("{base}      timeout: 1m30s\n"))),
        Some(Duration::from_secs(90))
    );
    assert_eq!(
        timeout(&ok(&format!("{base}      timeout: \"\"\n"))),
        Some(Duration::from_secs(30))
    );
    let p = problem(&format!("{base}      timeout: soon\n"));
    assert_eq!(p.path, "harness.knowledge.embeddings.timeout");
    assert_eq!((p.line, p.column), (6, 16));
    assert!(
        p.message
            .starts_with("invalid harness.knowledge.embeddings.timeout \"soon\": not a duration")
    );
    for bad in ["0s", "0", "-1s"] {
        let p = problem(&format!("{base}      timeout: \"{bad}\"\n"));
        assert_eq!(
            p.message,
            format!("invalid harness.knowledge.embeddings.timeout \"{bad}\": must be positive")
        );
    }
}

#[test]
fn embeddings_need_base_url_and_model() {
    let yaml = "harness:\n  knowledge:\n    embeddings:\n      api_key_env: KEY\n";
    assert_eq!(
        located(yaml),
        [
            "3:5: harness.knowledge.embeddings needs base_url",
            "3:5: harness.knowledge.embeddings needs model"
        ]
    );
    let p = problem("harness:\n  knowledge:\n    embeddings: {base_url: ftp://x, model: m}\n");
    assert_eq!(
        p.message,
        "invalid harness.knowledge.embeddings.base_url \"ftp://x\": must be an http:// or https:// URL"
    );
    assert_eq!(
        problems("harness:\n  knowledge:\n    embeddings:\n").len(),
        2
    );
}

#[test]
fn credential_env_names_follow_the_vector_tier_and_scrub_env() {
    // Reference case 66.
    let embeddings =
        "    embeddings: {base_url: http://localhost:1/v1, model: m, api_key_env: \" RAG_KEY \"}\n";
    assert!(
        ok(&format!(
            "harness:\n  knowledge:\n    enabled: false\n{embeddings}"
        ))
        .credential_env_names()
        .is_empty()
    );
    assert!(
        ok("harness:\n  knowledge: {enabled: true}\n")
            .credential_env_names()
            .is_empty()
    );
    let config = ok(&format!(
        "harness:\n  knowledge:\n    enabled: true\n{embeddings}"
    ));
    assert_eq!(config.credential_env_names(), ["RAG_KEY"]);
    let config = ok(&format!(
        "harness:\n  knowledge:\n    enabled: true\n{embeddings}expose:\n  agent:\n    mcp:\n      scrub_env: [ZED, \" RAG_KEY\", ZED]\n"
    ));
    assert_eq!(mcp(&config).scrub_env, ["ZED", "RAG_KEY"]);
    assert_eq!(config.credential_env_names(), ["RAG_KEY", "ZED"]);
    let empty_key = "harness:\n  knowledge:\n    enabled: true\n    embeddings: {base_url: http://localhost:1/v1, model: m, api_key_env: \"  \"}\n";
    assert!(ok(empty_key).credential_env_names().is_empty());
}

// ---------------------------------------------------------------------------------------------
// expose.agent.mcp.

#[test]
fn mcp_presence_is_the_switch() {
    // Reference case 64.
    assert!(ok("expose: {agent: {}}\n").mcp.is_none());
    for yaml in [
        "expose: {agent: {mcp: {}}}\n",
        "expose:\n  agent:\n    mcp:\n",
        "expose: {agent: {mcp: ~}}\n",
    ] {
        assert_eq!(ok(yaml).mcp, Some(McpConfig::default()), "{yaml}");
    }
    let config = ok("expose: {agent: {mcp: {port: 0}}}\n");
    assert_eq!(mcp(&config).port, None);
    let config =
        ok("expose: {agent: {mcp: {port: 9000, address: \" 0.0.0.0 \", instructions: \"\"}}}\n");
    assert_eq!(
        (mcp(&config).port, mcp(&config).address.as_deref()),
        (Some(9000), Some("0.0.0.0"))
    );
    assert_eq!(mcp(&config).instructions, None);
}

#[test]
fn ports_must_be_in_range() {
    for bad in ["-1", "65536", "100000"] {
        let p = problem(&format!("expose: {{agent: {{mcp: {{port: {bad}}}}}}}\n"));
        assert_eq!(
            p.message,
            format!("invalid expose.agent.mcp.port {bad}: must be between 1 and 65535")
        );
        assert_eq!(p.path, "expose.agent.mcp.port");
    }
    assert_eq!(
        mcp(&ok("expose: {agent: {mcp: {port: 65535}}}\n")).port,
        Some(65535)
    );
}

#[test]
fn catalog_and_group_tag_prefix_are_read_and_checked() {
    let config = ok("expose: {agent: {mcp: {catalog: ' Search ', group_tag_prefix: 'area:'}}}\n");
    assert_eq!(mcp(&config).catalog, CatalogMode::Search);
    assert_eq!(mcp(&config).group_tag_prefix.as_deref(), Some("area:"));
    let p = problem("expose: {agent: {mcp: {catalog: serch}}}\n");
    assert!(
        p.message
            .starts_with("invalid catalog \"serch\": must be list"),
        "{}",
        p.message
    );
    assert_eq!(p.path, "expose.agent.mcp.catalog");
    assert_eq!(p.help.as_deref(), Some("did you mean \"search\"?"));
    let p = problem("expose: {agent: {mcp: {group_tag_prefix: ' '}}}\n");
    assert!(
        p.message.starts_with("group_tag_prefix is empty"),
        "{}",
        p.message
    );
    assert_eq!(p.path, "expose.agent.mcp.group_tag_prefix");
}

#[test]
fn confirm_over_mcp_is_normalised() {
    // Reference case 61.
    let mode = |value: &str| {
        mcp(&ok(&format!(
            "expose: {{agent: {{mcp: {{confirm_over_mcp: {value}}}}}}}\n"
        )))
        .confirm
    };
    assert_eq!(mode("\"  Always  \""), ConfirmMode::Always);
    assert_eq!(mode("NEVER"), ConfirmMode::Never);
    assert_eq!(mode("auto"), ConfirmMode::Auto);
    assert_eq!(mode("\"\""), ConfirmMode::Auto);
    assert_eq!(
        mcp(&ok("expose: {agent: {mcp: {}}}\n")).confirm,
        ConfirmMode::Auto
    );
    let p = problem("expose: {agent: {mcp: {confirm_over_mcp: sometimes}}}\n");
    assert_eq!(
        p.message,
        "invalid confirm_over_mcp \"sometimes\": must be auto, always or never"
    );
    assert_eq!(p.path, "expose.agent.mcp.confirm_over_mcp");
    assert_eq!(p.help, None);
    let p = problem("expose: {agent: {mcp: {confirm_over_mcp: alwyas}}}\n");
    assert_eq!(p.help.as_deref(), Some("did you mean \"always\"?"));
}

#[test]
fn tool_limits_parse_default_and_validate() {
    // Reference case 62.
    let limits = |body: &str| {
        let config = ok(&format!("expose:\n  agent:\n    mcp:\n{body}"));
        let mcp = mcp(&config);
        (mcp.max_concurrent_tools, mcp.tool_timeout)
    };
    assert_eq!(
        limits("      max_concurrent_tools: 8\n      tool_timeout: 45s\n"),
        (8, Duration::from_secs(45))
    );
    assert_eq!(limits(""), (2, Duration::from_secs(30)));
    assert_eq!(
        limits("      max_concurrent_tools: 0\n      tool_timeout: 0s\n"),
        (2, Duration::from_secs(30))
    );
    assert_eq!(
        limits("      max_concurrent_tools: 1024\n      tool_timeout: 0\n"),
        (1024, Duration::from_secs(30))
    );
    assert_eq!(
        limits("      tool_timeout: 1.5h\n"),
        (2, Duration::from_secs(5400))
    );
    assert_eq!(
        limits("      tool_timeout: 250ms\n"),
        (2, Duration::from_millis(250))
    );

    let bad = |body: &str| problem(&format!("expose:\n  agent:\n    mcp:\n{body}")).message;
    assert_eq!(
        bad("      max_concurrent_tools: -1\n"),
        "invalid expose.agent.mcp.max_concurrent_tools -1: must not be negative"
    );
    assert_eq!(
        bad("      max_concurrent_tools: 100000\n"),
        "invalid expose.agent.mcp.max_concurrent_tools 100000: must not exceed 1024"
    );
    assert_eq!(
        bad("      tool_timeout: -5s\n"),
        "invalid expose.agent.mcp.tool_timeout \"-5s\": must not be negative"
    );
    assert_eq!(
        bad("      tool_timeout: 30\n"),
        "invalid expose.agent.mcp.tool_timeout \"30\": missing unit: expected a number and a unit \
         (ns, us, ms, s, m, h), e.g. 30s, 1m30s or 1.5h"
    );
    assert_eq!(
        bad("      tool_timeout: 1 day\n"),
        "invalid expose.agent.mcp.tool_timeout \"1 day\": unknown unit \" day\": expected a number \
         and a unit (ns, us, ms, s, m, h), e.g. 30s, 1m30s or 1.5h"
    );
}

#[test]
fn a2a_limits_are_validated_under_their_own_path() {
    // Reference case 62; a2a itself is agent-only.
    let config = ok(
        "expose:\n  agent:\n    agent_to_agent: true\n    a2a: {max_concurrent_tools: 4, tool_timeout: 90s}\n",
    );
    assert_eq!(
        config.notes,
        [
            "ignoring agent-only settings (expose.agent.agent_to_agent, expose.agent.a2a): fiskgen serves MCP only"
        ]
    );
    let p = problem("expose:\n  agent:\n    a2a:\n      tool_timeout: not-a-duration\n");
    assert_eq!(p.path, "expose.agent.a2a.tool_timeout");
    assert!(
        p.message
            .starts_with("invalid expose.agent.a2a.tool_timeout \"not-a-duration\": ")
    );
    let p = problem("expose:\n  agent:\n    a2a:\n      max_concurrent_tools: 2000\n");
    assert_eq!(
        p.message,
        "invalid expose.agent.a2a.max_concurrent_tools 2000: must not exceed 1024"
    );
}

#[test]
fn builtins_allowlist() {
    // Reference case 65, with fiskgen's three knowledge tools.
    let knowledge = "harness:\n  knowledge: {enabled: true}\n";
    let config = ok(&format!(
        "{knowledge}expose: {{agent: {{mcp: {{builtins: [\" knowledge_search \", knowledge_search, \"\", knowledge_list]}}}}}}\n"
    ));
    assert_eq!(
        mcp(&config).builtins,
        ["knowledge_search", "knowledge_list"]
    );
    assert!(
        mcp(&ok("expose: {agent: {mcp: {builtins: []}}}\n"))
            .builtins
            .is_empty()
    );

    for name in ["ask_human_confirm", "memory_write", "frobnicate"] {
        let help = (name != "frobnicate").then(|| {
            "the memory and human-in-the-loop tools exist only in an agent run".to_string()
        });
        let p = problem(&format!(
            "{knowledge}expose: {{agent: {{mcp: {{builtins: [{name}]}}}}}}\n"
        ));
        assert_eq!(
            p.message,
            format!(
                "expose.agent.mcp.builtins: \"{name}\" cannot be exposed over MCP; the exposable \
                 built-ins are the read-only knowledge tools knowledge_search, knowledge_read, \
                 knowledge_list and knowledge_enumerate"
            )
        );
        assert_eq!(p.path, "expose.agent.mcp.builtins[0]");
        assert_eq!(p.help, help);
    }
    let p = problem(&format!(
        "{knowledge}expose: {{agent: {{mcp: {{builtins: [knowledge_serch]}}}}}}\n"
    ));
    assert_eq!(
        p.help.as_deref(),
        Some("did you mean \"knowledge_search\"?")
    );
    let p = problem(&format!(
        "{knowledge}expose: {{agent: {{mcp: {{builtins: [read_file]}}}}}}\n"
    ));
    assert_eq!(
        p.help.as_deref(),
        Some("read_file is enabled by listing it under harness.tools, not here")
    );

    let p = problem("expose:\n  agent:\n    mcp:\n      builtins: [knowledge_search]\n");
    assert_eq!(
        p.message,
        "expose.agent.mcp.builtins lists knowledge_search but knowledge is not enabled"
    );
    assert_eq!((p.line, p.column), (4, 7));
    assert!(p.help.is_some_and(|help| help.contains("enabled: true")));
}

#[test]
fn hint_tags_map_app_tags_to_hints() {
    let config = ok(
        "expose:\n  agent:\n    mcp:\n      hint_tags:\n        \" impact:ro \": read_only\n        impact:rw: [destructive, idempotent, destructive]\n        net: [open_world]\n",
    );
    let tags = &mcp(&config).hint_tags;
    assert_eq!(tags["impact:ro"], [Hint::ReadOnly]);
    assert_eq!(tags["impact:rw"], [Hint::Destructive, Hint::Idempotent]);
    assert_eq!(tags["net"], [Hint::OpenWorld]);

    let p =
        problem("expose:\n  agent:\n    mcp:\n      hint_tags:\n        impact:ro: reed_only\n");
    assert_eq!(p.path, "expose.agent.mcp.hint_tags.impact:ro");
    assert_eq!((p.line, p.column), (5, 20));
    assert_eq!(
        p.message,
        "unknown hint \"reed_only\" for tag \"impact:ro\": the hints are read_only, destructive, \
         idempotent and open_world"
    );
    assert_eq!(p.help.as_deref(), Some("did you mean \"read_only\"?"));
    let p = problem("expose: {agent: {mcp: {hint_tags: {x: [read_only, destrutive]}}}}\n");
    assert_eq!(p.path, "expose.agent.mcp.hint_tags.x[1]");
    assert_eq!(p.help.as_deref(), Some("did you mean \"destructive\"?"));
    let p = problem("expose: {agent: {mcp: {hint_tags: {x: }}}}\n");
    assert_eq!(p.message, "hint_tags: tag \"x\" names no hint");
    let p = problem("expose: {agent: {mcp: {hint_tags: {x: {y: read_only}}}}}\n");
    assert_eq!(
        p.message,
        "expose.agent.mcp.hint_tags.x must be a string or a list of strings, found a mapping"
    );
    let p = problem("expose: {agent: {mcp: {hint_tags: {\" \": read_only}}}}\n");
    assert_eq!(p.message, "expose.agent.mcp.hint_tags has an empty tag");
    let p = problem("expose: {agent: {mcp: {hint_tags: [read_only]}}}\n");
    assert!(
        p.message
            .starts_with("expose.agent.mcp.hint_tags must be a mapping of app tags to hints")
    );
}

#[test]
fn auth_names_exactly_one_token_source() {
    let auth = |body: &str| {
        mcp(&ok(&format!(
            "expose: {{agent: {{mcp: {{auth: {body}}}}}}}\n"
        )))
        .auth
        .clone()
    };
    assert_eq!(
        auth("{token_env: MCP_TOKEN}"),
        Some(AuthConfig {
            token: Some(SecretSource::Env("MCP_TOKEN".to_string())),
            ..AuthConfig::default()
        })
    );
    assert_eq!(
        auth("{token_file: /run/secrets/t}"),
        Some(AuthConfig {
            token: Some(SecretSource::File("/run/secrets/t".to_string())),
            ..AuthConfig::default()
        })
    );
    assert_eq!(mcp(&ok("expose: {agent: {mcp: {}}}\n")).auth, None);

    let p = problem("expose:\n  agent:\n    mcp:\n      auth: {token_env: A, token_file: /t}\n");
    assert_eq!(
        p.message,
        "expose.agent.mcp.auth sets both token_env and token_file; set exactly one"
    );
    assert_eq!((p.line, p.column), (4, 7));
    assert!(
        p.help
            .is_some_and(|help| help.starts_with("the token itself never goes in the config file"))
    );
    let p = problem("expose:\n  agent:\n    mcp:\n      auth:\n");
    assert_eq!(
        p.message,
        "expose.agent.mcp.auth needs token_env, token_file, header or oauth"
    );

    // The misspelt key says what belongs there; "needs token_env, ..." would only repeat it.
    let p = problem("expose: {agent: {mcp: {auth: {token: s3cret}}}}\n");
    assert_eq!(p.message, "unknown key \"token\" in expose.agent.mcp.auth");
    let help = p.help.as_deref().unwrap_or_default();
    assert!(
        help.starts_with("did you mean \"token_env\"?\nthe token itself never goes"),
        "{help}"
    );

    let p = problem("expose: {agent: {mcp: {auth: {token_env: \"MCP-TOKEN\"}}}}\n");
    assert_eq!(
        p.message,
        "invalid expose.agent.mcp.auth.token_env \"MCP-TOKEN\": not an environment variable name \
         (letters, digits and '_', not starting with a digit)"
    );
    let p = problem("expose: {agent: {mcp: {auth: {token_file: \" \"}}}}\n");
    assert_eq!(
        p.message,
        "expose.agent.mcp.auth.token_file must name a file"
    );
    // An unusable source never silently turns authentication off.
    for body in [
        "{token_env: \"\"}",
        "{token_env: ~}",
        "{token_env: [A]}",
        "{token_file: }",
    ] {
        let all = problems(&format!("expose: {{agent: {{mcp: {{auth: {body}}}}}}}\n"));
        assert_eq!(all.len(), 1, "{body}: {all:#?}");
        assert!(
            all[0].path.starts_with("expose.agent.mcp.auth.token_"),
            "{body}"
        );
    }
}

#[test]
fn resources_prompts_and_skills_can_be_switched_off_and_the_page_size_is_bounded() {
    let config = ok(
        "expose:\n  agent:\n    mcp:\n      resources: false\n      prompts: false\n      skills: false\n      list_page_size: 7\n",
    );
    let mcp = mcp(&config);
    assert!(!mcp.resources && !mcp.prompts && !mcp.skills);
    assert!(
        ok("expose: {agent: {mcp: {}}}\n")
            .mcp
            .is_some_and(|mcp| mcp.skills)
    );
    assert_eq!(mcp.list_page_size, Some(7));
    // The deprecated key goes through the one page-size reader, with its bounds (1..=10000,
    // where it once was 1..=1000).
    for bad in ["0", "10001", "-3"] {
        let p = problem(&format!(
            "expose: {{agent: {{mcp: {{list_page_size: {bad}}}}}}}\n"
        ));
        assert_eq!(p.path, "expose.agent.mcp.list_page_size");
        assert_eq!(
            p.message,
            format!("invalid expose.agent.mcp.list_page_size {bad}: must be between 1 and 10000")
        );
    }
    let p = problem("expose: {agent: {mcp: {prompts: off}}}\n");
    assert_eq!(
        p.message,
        "expose.agent.mcp.prompts must be true or false, found \"off\""
    );
}

#[test]
fn fiskgen_additions_read_and_normalise() {
    let config = ok(
        "expose:\n  agent:\n    mcp:\n      allowed_hosts: [\" a.example \", \"\", a.example, b.example]\n      allowed_origins: [https://a.example]\n      stateless: true\n",
    );
    let mcp = mcp(&config);
    assert_eq!(mcp.allowed_hosts, ["a.example", "b.example"]);
    assert_eq!(mcp.allowed_origins, ["https://a.example"]);
    assert!(mcp.stateless);
    let p = problem("expose: {agent: {mcp: {scrub_env: [OK_1, 1BAD]}}}\n");
    assert_eq!(p.path, "expose.agent.mcp.scrub_env[1]");
    assert!(p.message.starts_with(
        "invalid expose.agent.mcp.scrub_env[1] \"1BAD\": not an environment variable name"
    ));
}

// ---------------------------------------------------------------------------------------------
// Agent-only keys.

#[test]
fn agent_only_keys_produce_exactly_one_note() {
    let yaml = "\
system_prompt: do the thing
nats_context: ngs
llm:
  model: claude-sonnet-4-6
  provider: anthropic
  budget: {max_tokens: 1000, max_output_tokens: 10, max_iterations: 5, call_timeout: 90s}
  thinking: {enabled: true}
  no_prompt_cache: true
  no_tool_search: false
remote_agents:
  - {name: remote1, alias: r1}
remote_tools:
  - name: host1
    alias: h1
    include: {tools: [x], tags: [a]}
    exclude: {tools: [secret]}
harness:
  human_in_the_loop: {enabled: true}
  memory: {enabled: true, backend: file, no_index: true, options: {directory: mem}}
  sessions: {backend: file, options: {directory: s}}
  no_tui: true
  no_bell: true
expose:
  agent:
    agent_to_agent: true
    a2a: {max_concurrent_tools: 4, tool_timeout: 90s}
";
    let config = ok(yaml);
    assert_eq!(
        config.notes,
        [
            "ignoring agent-only settings (system_prompt, nats_context, llm, remote_agents, \
          remote_tools, harness.human_in_the_loop, harness.memory, harness.sessions, \
          harness.no_tui, harness.no_bell, expose.agent.agent_to_agent, expose.agent.a2a): \
          fiskgen serves MCP only"
        ]
    );
    assert!(config.harness.human_in_the_loop);
    assert!(config.harness.memory);
    assert!(config.mcp.is_none());
    assert!(ok("identity: a\n").notes.is_empty());
}

#[test]
fn agent_only_keys_are_still_validated() {
    let yaml = "\
llm:
  budget:
    max_tokens: -1
    max_output_tokens: -2
    max_iterations: -3
    call_timeout: not-a-duration
harness:
  memory: {options: [a]}
  no_tui: maybe
remote_agents: {name: a}
";
    assert_eq!(
        located(yaml),
        [
            "3:17: invalid llm.budget.max_tokens -1: must not be negative",
            "4:24: invalid llm.budget.max_output_tokens -2: must not be negative",
            "5:21: invalid llm.budget.max_iterations -3: must not be negative",
            "6:19: invalid llm.budget.call_timeout \"not-a-duration\": not a duration: expected a \
             number and a unit (ns, us, ms, s, m, h), e.g. 30s, 1m30s or 1.5h",
            "8:21: harness.memory.options must be a mapping, found a list",
            "9:11: harness.no_tui must be true or false, found \"maybe\"",
            "10:16: remote_agents must be a list of remote agents ({name, alias}), found a mapping",
        ]
    );
    // A negative call timeout parses, so Fisk AI accepts it.
    assert!(problems("llm: {budget: {call_timeout: -1s}}\nsystem_prompt: [x]\n").len() == 1);
}

#[test]
fn remote_tool_hosts_follow_the_identity_rules() {
    let yaml = "\
remote_tools:
  - name: a.b
  - {name: ok, alias: \"bad alias\"}
  - {name: host, exclude: {tags: [x]}}
  - {alias: nameless}
  - {name: [x]}
  - {name: fine, include: {tags: [x]}, exclude: {tools: [\"(\"]}}
";
    assert_eq!(
        located(yaml),
        [
            "2:11: remote_tools host name \"a.b\" is invalid: it must contain only letters, digits, \
             '-' or '_' (it keys the NATS subjects)",
            "3:23: remote_tools host \"ok\" has an invalid alias \"bad alias\": it must contain only \
             letters, digits, '-' or '_' (it prefixes imported tool names)",
            "4:18: remote_tools host \"host\" has an exclude.tags filter, which cannot be honored: \
             discovery does not carry tags, so a tool excluded by tag would be imported anyway; \
             exclude by tool name instead",
            "5:5: remote_tools[3]: remote_tools host is missing a name",
            "6:12: remote_tools[4].name must be a string, found a list",
            "7:58: invalid tool filter pattern \"(\": unclosed group",
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Compatibility with files written for `fisk mcp`, and the auth block.

#[test]
fn configs_written_for_fisk_mcp_load_unchanged() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/fisk-ai-docs");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("the fixture directory")
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "yaml"))
        .collect();
    names.sort();
    assert!(names.len() >= 6, "{names:?}");
    for path in &names {
        let text = std::fs::read_to_string(path).expect("readable");
        if let Err(error) = parse(&text, path) {
            panic!("{} is refused:\n{error}", path.display());
        }
    }
    // The merge keys mean what they say.
    let text = std::fs::read_to_string(dir.join("anchors.yaml")).expect("readable");
    let config = parse(&text, Path::new("anchors.yaml")).expect("valid");
    let mcp = mcp(&config);
    assert_eq!(mcp.port, Some(9100));
    assert_eq!(mcp.max_concurrent_tools, 4);
    assert_eq!(mcp.tool_timeout, Duration::from_secs(60));
    assert_eq!(mcp.confirm, ConfirmMode::Always);
    assert_eq!(patterns(&config.expose_include), ["^stream_(info|ls)$"]);
    assert!(config.expose_include.tags.is_empty());
    assert_eq!(config.include.tags, ["impact:ro"]);
}

#[test]
fn a_merged_key_is_checked_like_a_written_one() {
    let p = problem("harness: &h {confirm_tag: [x]}\nexpose: {agent: {mcp: {}}}\n");
    assert!(
        p.message.contains("unknown key \"confirm_tag\""),
        "{}",
        p.message
    );
    let all = problems("expose:\n  agent:\n    a2a: &l {tool_timeout: 1d}\n    mcp: {<<: *l}\n");
    let paths: Vec<&str> = all.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "expose.agent.a2a.tool_timeout",
            "expose.agent.mcp.tool_timeout"
        ]
    );
}

#[test]
fn auth_takes_a_header_and_oauth() {
    let config = ok("expose:
  agent:
    mcp:
      auth:
        header: {name: X-Api-Key, value_env: TASKS_KEY}
        oauth:
          resource: https://mcp.example.com/mcp
          authorization_servers: https://auth.example.com/realms/acme
          jwks_url: https://auth.example.com/realms/acme/certs
          jwks_refresh: 5m
          algorithms: [RS256, es256]
          scopes: mcp
          method_scopes: {tools/call: \"mcp:run mcp:write\"}
");
    let auth = mcp(&config).auth.clone().expect("auth");
    assert_eq!(auth.token, None);
    assert_eq!(
        auth.header,
        Some(HeaderAuthConfig {
            name: "X-Api-Key".into(),
            value: SecretSource::Env("TASKS_KEY".into())
        })
    );
    let oauth = auth.oauth.expect("oauth");
    assert_eq!(oauth.resource, "https://mcp.example.com/mcp");
    assert_eq!(
        oauth.authorization_servers,
        ["https://auth.example.com/realms/acme"]
    );
    assert_eq!(
        oauth.jwks,
        JwksConfig::Url("https://auth.example.com/realms/acme/certs".into())
    );
    assert_eq!(oauth.jwks_refresh, Duration::from_secs(300));
    assert_eq!(oauth.algorithms, ["RS256", "ES256"]);
    assert_eq!(oauth.token_types, ["at+jwt", "application/at+jwt"]);
    assert_eq!(oauth.scopes, ["mcp"]);
    assert_eq!(
        oauth.method_scopes,
        [(
            "tools/call".to_string(),
            vec!["mcp:run".to_string(), "mcp:write".to_string()]
        )]
    );
    assert_eq!(oauth.leeway, Duration::from_secs(30));
}

#[test]
fn bad_oauth_settings_are_named() {
    let messages = |body: &str| -> Vec<String> {
        problems(&format!(
            "expose: {{agent: {{mcp: {{auth: {{oauth: {body}}}}}}}}}\n"
        ))
        .into_iter()
        .map(|p| p.message)
        .collect()
    };
    assert_eq!(
        messages("{authorization_servers: [https://a], jwks_file: k.json}"),
        [
            "expose.agent.mcp.auth.oauth needs resource: this server's public URL, e.g. \
          https://mcp.example.com/mcp"
        ]
    );
    assert_eq!(
        messages("{resource: https://m/mcp, authorization_servers: [https://a]}"),
        ["expose.agent.mcp.auth.oauth needs jwks_file or jwks_url"]
    );
    let all = messages(
        "{resource: \"https://m/mcp/\", authorization_servers: [ftp://a], jwks_file: k, algorithms: [HS256]}",
    );
    assert!(
        all.iter().any(|m| m.contains("must not end with '/'")),
        "{all:?}"
    );
    assert!(
        all.iter()
            .any(|m| m.contains("\"ftp://a\": must be an absolute")),
        "{all:?}"
    );
    assert!(
        all.iter()
            .any(|m| m.contains("symmetric algorithms are not accepted")),
        "{all:?}"
    );
    let p =
        problem("expose: {agent: {mcp: {auth: {header: {name: Authorization, value_env: A}}}}}\n");
    assert!(
        p.message.contains("use token_env or token_file"),
        "{}",
        p.message
    );
    let p = problem("expose: {agent: {mcp: {auth: {header: {name: X-Key}}}}}\n");
    assert_eq!(
        p.message,
        "expose.agent.mcp.auth.header needs value_env or value_file"
    );
}

// ---------------------------------------------------------------------------------------------
// expose.agent.mcp.tasks

fn tasks_of(body: &str) -> Option<TaskConfig> {
    mcp(&ok(&format!("expose:\n  agent:\n    mcp:\n{body}"))).tasks
}

#[test]
fn tasks_are_on_with_defaults_and_false_switches_them_off() {
    let defaults = Some(TaskConfig {
        after: Duration::from_secs(2),
        ttl: Duration::from_secs(3600),
        max: 64,
    });
    assert_eq!(tasks_of("      port: 8080\n"), defaults);
    assert_eq!(tasks_of("      tasks: true\n"), defaults);
    assert_eq!(tasks_of("      tasks:\n"), defaults);
    assert_eq!(tasks_of("      tasks: false\n"), None);
    assert_eq!(
        tasks_of("      tasks: {after: 500ms, ttl: 10m, max: 3}\n"),
        Some(TaskConfig {
            after: Duration::from_millis(500),
            ttl: Duration::from_secs(600),
            max: 3,
        })
    );
    assert_eq!(
        tasks_of("      tasks: {max: 8}\n").map(|t| (t.after, t.max)),
        Some((Duration::from_secs(2), 8))
    );
}

#[test]
fn bad_task_settings_are_named_where_they_are() {
    let at = |body: &str| {
        located(&format!(
            "expose:\n  agent:\n    mcp:\n      tasks: {body}\n"
        ))
    };
    assert_eq!(
        at("yes"),
        [
            "4:14: expose.agent.mcp.tasks must be false (no tasks), true or a mapping of keys \
          (after, ttl, max, required), found \"yes\""
        ]
    );
    assert_eq!(
        at("{after: 0s}"),
        ["4:22: invalid expose.agent.mcp.tasks.after \"0s\": must be positive"]
    );
    assert_eq!(
        at("{ttl: 200h}"),
        ["4:20: invalid expose.agent.mcp.tasks.ttl \"200h\": must be at most 168h (a week)"]
    );
    assert_eq!(
        at("{max: 0}"),
        ["4:20: invalid expose.agent.mcp.tasks.max 0: must be between 1 and 4096"]
    );
    assert_eq!(
        at("{max: 5000}"),
        ["4:20: invalid expose.agent.mcp.tasks.max 5000: must be between 1 and 4096"]
    );
    assert_eq!(
        at("{after: 2h, ttl: 1h}"),
        [
            "4:22: expose.agent.mcp.tasks.after (2h0m0s) must be shorter than tasks.ttl (1h0m0s): a call \
          becomes a task after `after`, and a task lives at most `ttl`"
        ]
    );
    let p = problem("expose:\n  agent:\n    mcp:\n      tasks: {afer: 1s}\n");
    assert_eq!(p.help.as_deref(), Some("did you mean \"after\"?"));
}
#[test]
fn page_size_and_structured_output_are_read_and_a_page_size_out_of_range_is_refused() {
    let config =
        ok("expose:\n  agent:\n    mcp:\n      page_size: 3\n      structured_output: false\n");
    assert_eq!(
        (mcp(&config).page_size, mcp(&config).structured_output),
        (3, false)
    );
    let defaults = ok("expose:\n  agent:\n    mcp: {}\n");
    assert_eq!(
        (mcp(&defaults).page_size, mcp(&defaults).structured_output),
        (fiskgen_contract::listing::DEFAULT_PAGE_SIZE, true)
    );
    for (value, column) in [("0", 18), ("-1", 18), ("10001", 18)] {
        let yaml = format!("expose:\n  agent:\n    mcp:\n      page_size: {value}\n");
        assert_eq!(
            located(&yaml),
            [format!(
                "4:{column}: invalid expose.agent.mcp.page_size {value}: must be between 1 and \
                 10000"
            )]
        );
    }
    assert_eq!(
        located("expose:\n  agent:\n    mcp:\n      structured_output: no\n"),
        ["4:26: expose.agent.mcp.structured_output must be true or false, found \"no\""]
    );
}

#[test]
fn param_headers_name_an_http_token_per_parameter_unique_per_tool() {
    let config = ok(
        "expose:\n  agent:\n    mcp:\n      param_headers:\n        greet:\n          name: \" Name \"\n          loud: X-Loud\n",
    );
    let headers = &mcp(&config).param_headers["greet"];
    assert_eq!(headers["name"], "Name");
    assert_eq!(headers["loud"], "X-Loud");

    let p = problem("expose: {agent: {mcp: {param_headers: {greet: {name: \"My Name\"}}}}}\n");
    assert_eq!(p.path, "expose.agent.mcp.param_headers.greet.name");
    assert_eq!(
        p.message,
        "invalid expose.agent.mcp.param_headers.greet.name \"My Name\": a header name is a \
         non-empty HTTP token (letters, digits and !#$%&'*+-.^_`|~), found ' '; the client sends \
         it as `Mcp-Param-<name>`"
    );
    let p = problem("expose: {agent: {mcp: {param_headers: {greet: {a: Name, b: NAME}}}}}\n");
    assert_eq!(
        p.message,
        "expose.agent.mcp.param_headers.greet.b: header \"NAME\" is already used by parameter \
         \"a\" of the same tool (header names are compared without case)"
    );
    let p = problem("expose: {agent: {mcp: {param_headers: {greet: {name: }}}}}\n");
    assert_eq!(
        p.message,
        "expose.agent.mcp.param_headers.greet.name names no header"
    );
    let p = problem("expose: {agent: {mcp: {param_headers: {greet: [name]}}}}\n");
    assert_eq!(p.path, "expose.agent.mcp.param_headers.greet");
}

#[test]
fn ask_names_questions_of_parameters_each_asked_once() {
    let config = ok(
        "expose:\n  agent:\n    mcp:\n      ask:\n        greet:\n          who: [name]\n          how: [loud, tone]\n",
    );
    let asked = &mcp(&config).ask["greet"];
    assert_eq!(asked.len(), 2);
    assert_eq!(
        (asked[0].name.as_str(), asked[0].params.clone()),
        ("who", vec!["name".to_string()])
    );
    assert_eq!(asked[1].params, ["loud", "tone"]);
    let p = problem("expose: {agent: {mcp: {ask: {greet: {a: [name], b: [loud, name]}}}}}\n");
    assert_eq!(p.path, "expose.agent.mcp.ask.greet.b[1]");
    assert_eq!(
        p.message,
        "expose.agent.mcp.ask.greet.b[1]: parameter \"name\" is already asked by question \"a\" \
         of tool \"greet\"; a parameter is asked once"
    );
    let p = problem("expose: {agent: {mcp: {ask: {greet: {a: [name, name]}}}}}\n");
    assert!(
        p.message.contains("already asked by question \"a\""),
        "{}",
        p.message
    );
    let p = problem("expose: {agent: {mcp: {ask: {greet: {a: []}}}}}\n");
    assert_eq!(p.path, "expose.agent.mcp.ask.greet.a");
    assert!(
        p.message.ends_with(
            "asks for no parameter: list the tool's parameters the user answers, e.g. `a: [name]`"
        ),
        "{}",
        p.message
    );
    let p = problem("expose: {agent: {mcp: {ask: {greet: {\"a b\": [name]}}}}}\n");
    assert!(
        p.message.starts_with("invalid question name \"a b\""),
        "{}",
        p.message
    );
    let p = problem("expose: {agent: {mcp: {ask: {greet: {confirm: [name]}}}}}\n");
    assert!(
        p.message.starts_with(
            "question name \"confirm\" at expose.agent.mcp.ask.greet.confirm is reserved"
        ),
        "{}",
        p.message
    );
    let p = problem("expose: {agent: {mcp: {ask: {greet: [name]}}}}\n");
    assert_eq!(p.path, "expose.agent.mcp.ask.greet");
}

#[test]
fn exit_code_is_error_and_tasks_required_are_read_with_positions_and_bad_types_refused() {
    let config = ok(
        "expose:\n  agent:\n    mcp:\n      exit_code_is_error: true\n      tasks:\n        \
         required: [a, ' b ', a, '']\n",
    );
    assert!(mcp(&config).exit_code_is_error);
    let required: Vec<(&str, usize, usize)> = mcp(&config)
        .task_required
        .iter()
        .map(|name| (name.text.as_str(), name.line, name.column))
        .collect();
    assert_eq!(required, [("a", 6, 20), ("b", 6, 23)]);
    assert!(!mcp(&ok("expose:\n  agent:\n    mcp: {}\n")).exit_code_is_error);
    assert_eq!(
        located("expose:\n  agent:\n    mcp:\n      exit_code_is_error: 1\n"),
        ["4:27: expose.agent.mcp.exit_code_is_error must be true or false, found \"1\""]
    );
    assert_eq!(
        located("expose:\n  agent:\n    mcp:\n      tasks: {required: x}\n"),
        ["4:25: expose.agent.mcp.tasks.required must be a list of strings, found \"x\""]
    );
}

#[test]
fn a_relative_application_path_is_served_resolved_against_the_config_directory() {
    let served = |spec: &str| {
        let yaml = format!("application_path: {spec}\n");
        match parse(&yaml, Path::new("/srv/conf/app.yaml")) {
            Ok(config) => config.served_application_path(),
            Err(error) => panic!("{error}"),
        }
    };
    assert_eq!(served("../bin/curl").as_deref(), Some("/srv/bin/curl"));
    assert_eq!(served("./curl").as_deref(), Some("/srv/conf/curl"));
    assert_eq!(served("curl").as_deref(), Some("curl"), "PATH at run time");
    assert_eq!(served("/opt/curl").as_deref(), Some("/opt/curl"));
}

/// Every key of the newest Fisk AI config, set once.
const FISK_AI_NEWEST: &str = include_str!("../../tests/config/fisk-ai-4515e16.yaml");

#[test]
fn every_key_of_the_newest_fisk_ai_config_is_valid_with_the_same_meaning() {
    let config = ok(FISK_AI_NEWEST);
    assert_eq!(
        config.notes,
        [
            "ignoring agent-only settings (nats_context, system_prompt, remote_agents, \
             remote_tools, harness.human_in_the_loop, harness.tool_timeout, harness.no_tui, \
             harness.no_bell, harness.memory, harness.pii, harness.sessions, llm, \
             expose.agent.a2a, expose.agent.jobs): fiskgen serves MCP only"
        ]
    );
    assert_eq!(
        config.telemetry,
        crate::config::TelemetryConfig {
            enabled: true,
            endpoint: "http://127.0.0.1:4318".into(),
            service_name: "nats-agent".into(),
            sample_ratio: Some(0.5),
            no_metrics: false,
        },
        "telemetry is served as fisk mcp reads it"
    );
    let mcp = config.mcp.as_ref().expect("expose.agent.mcp");
    assert_eq!(mcp.port, Some(8080));
    assert_eq!(mcp.builtins, ["knowledge_search"]);
    assert_eq!(mcp.max_concurrent_tools, 4);
    assert_eq!(mcp.tool_timeout, Duration::from_secs(60));
    assert_eq!(config.harness.confirm_tags, ["impact:rw"]);
    assert!(config.harness.knowledge.enabled);
    assert_eq!(config.global_flags, ["context"]);
    let ratio = located("telemetry: {enabled: true, sample_ratio: 2}\n");
    assert!(
        ratio.iter().any(|problem| problem
            .ends_with("invalid telemetry.sample_ratio \"2\": must be a number between 0 and 1")),
        "{ratio:?}"
    );
}
