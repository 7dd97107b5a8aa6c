use std::path::Path;
use std::sync::OnceLock;

use fiskgen::config::{self, Config, Hint};
use fiskgen::introspect::{self, Introspection};
use fiskgen::ir::{self, HintName, ToolKind};
use fiskgen::select::{self, App as Served, SelectError};
use fiskgen_tests::apps::{self, App};
use serde_json::json;

/// The fixture's introspection, run once for the whole test binary.
fn fixture() -> &'static Introspection {
    static FIXTURE: OnceLock<Introspection> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let path = apps::path(App::Fixture).expect("fixture builds");
        introspect::run(&path, &introspect::Options::default()).expect("fixture introspects")
    })
}

fn config(yaml: &str) -> Config {
    let text = format!("application_path: /fixture\n{yaml}");
    config::parse(&text, Path::new("fixture.yaml")).unwrap_or_else(|error| panic!("{error}"))
}

fn try_serve(yaml: &str) -> Result<ir::Server, SelectError> {
    let introspection = fixture();
    let app = Served {
        path: Path::new("/fixture"),
        model: &introspection.model,
    };
    select::select(&config(yaml), Some(app))
}

fn serve(yaml: &str) -> ir::Server {
    try_serve(yaml).unwrap_or_else(|error| panic!("{error}"))
}

fn names(server: &ir::Server) -> Vec<&str> {
    server.tools.iter().map(|tool| tool.name.as_str()).collect()
}

fn tool<'a>(server: &'a ir::Server, name: &str) -> &'a ir::Tool {
    server
        .tools
        .iter()
        .find(|tool| tool.name == name)
        .unwrap_or_else(|| panic!("{name} not served"))
}

#[test]
fn every_visible_leaf_is_a_tool_named_by_its_path() {
    let server = serve("");
    let names = names(&server);
    assert_eq!(names.len(), 66, "{names:?}");
    for expected in [
        "ping",
        "ticker",
        "types_numbers",
        "cluster_node_label_set",
        "cluster_node_list",
        "cluster_peer_list",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    assert_eq!(
        tool(&server, "cluster_node_label_set").title,
        "cluster node label set"
    );
    let ToolKind::Command(command) = &tool(&server, "cluster_node_label_set").kind else {
        panic!("a command")
    };
    assert_eq!(command.command, ["cluster", "node", "label", "set"]);
    // Groups, hidden commands and hidden subtrees are not tools; aliases and Default() change nothing.
    for absent in [
        "cluster",
        "cluster_node",
        "options_secret",
        "debug_state",
        "cl_status",
        "tags_deny",
    ] {
        assert!(!names.contains(&absent), "{absent} must not be served");
    }
}

#[test]
fn descriptions_join_short_and_long_help_and_the_tags() {
    let server = serve("");
    let ping = &tool(&server, "ping").description;
    assert!(
        ping.starts_with("Print what was parsed; the simplest leaf\n\nPing does nothing"),
        "{ping}"
    );
    assert_eq!(
        tool(&server, "cluster_status").description,
        "Cluster status, the default command of cluster\n\nTags: ai:read_only"
    );
    assert!(
        tool(&server, "tags_free-form")
            .description
            .ends_with("Tags: scope:user, impact:rw, owner: team <a&b>")
    );
    assert_eq!(
        tool(&server, "tags_repeated").tags,
        ["x", "x"],
        "tags are kept as declared"
    );
}

#[test]
fn schemas_are_the_restricted_schema_verbatim_plus_globals() {
    let server = serve("");
    let schema = &tool(&server, "types_net").input_schema;
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(
        schema["properties"]["ip"],
        json!({"description": "The ip flag", "type": "string"}),
        "restricted: no oneOf"
    );
    let options_hidden = &tool(&server, "options_hidden").input_schema;
    assert!(
        options_hidden["properties"].get("secret").is_none(),
        "hidden flags are not offered"
    );
    assert!(
        options_hidden["properties"].get("concealed").is_none(),
        "hidden args are not offered"
    );
    let ToolKind::Command(command) = &tool(&server, "options_hidden").kind else {
        panic!("a command")
    };
    assert!(
        command.flags.iter().all(|step| step.name != "secret")
            && command.params.iter().all(|param| param.name != "secret"),
        "and the lowered argv plan never sets them"
    );
}

#[test]
fn ai_deny_goes_first_and_cannot_be_included_back() {
    let server = serve("include: {tools: ['^tags_'], tags: ['ai:deny']}");
    let names = names(&server);
    assert!(!names.contains(&"tags_deny"), "{names:?}");
    assert!(names.contains(&"tags_confirm"));
    assert!(server.notes.iter().any(|note| note.contains("tags_deny")));
}

#[test]
fn include_and_exclude_by_pattern_tag_and_untagged() {
    let cases: &[(&str, &[&str])] = &[
        (
            "include: {tools: ['^cluster_.*_list$']}",
            &["cluster_node_list", "cluster_peer_list"],
        ),
        ("include: {tools: ['cluster node']}", &[]),
        (
            "include: {tags: ['impact:rw']}",
            &[
                "cluster_node_label_set",
                "cluster_node_label_rm",
                "tags_free-form",
            ],
        ),
        (
            "include: {tools: ['^tags_'], tags: ['']}\nexclude: {tags: ['']}",
            &[
                "tags_confirm",
                "tags_no-defer",
                "tags_read-only",
                "tags_destructive",
                "tags_idempotent",
                "tags_open-world",
                "tags_free-form",
                "tags_combined",
                "tags_repeated",
            ],
        ),
        (
            "include: {tools: ['^cluster_']}\nexclude: {tags: ['impact:rw'], tools: ['peer']}",
            &["cluster_status", "cluster_node_list"],
        ),
        (
            "include: {tools: ['^cluster_']}\nexpose: {agent: {tools: {include: {tags: ['impact:rw']}, exclude: {tools: ['rm$']}}}}",
            &["cluster_node_label_set"],
        ),
    ];
    for (yaml, expected) in cases {
        assert_eq!(names(&serve(yaml)), *expected, "{yaml}");
    }
    let untagged = serve("include: {tags: ['']}");
    assert!(untagged.tools.iter().all(|tool| tool.tags.is_empty()));
    assert!(names(&untagged).contains(&"ping"));
}

#[test]
fn reserved_tags_and_hint_tags_set_hints() {
    let server = serve("expose: {agent: {mcp: {hint_tags: {'impact:rw': destructive}}}}");
    let hints = |name: &str| -> Vec<Hint> {
        tool(&server, name)
            .hints
            .iter()
            .map(|HintName(hint)| *hint)
            .collect()
    };
    assert_eq!(hints("tags_read-only"), [Hint::ReadOnly]);
    assert_eq!(hints("tags_destructive"), [Hint::Destructive]);
    assert_eq!(hints("tags_idempotent"), [Hint::Idempotent]);
    assert_eq!(hints("tags_open-world"), [Hint::OpenWorld]);
    assert_eq!(
        hints("tags_combined"),
        [Hint::ReadOnly, Hint::Idempotent, Hint::OpenWorld]
    );
    assert_eq!(
        hints("cluster_node_label_set"),
        [Hint::Destructive],
        "mapped by hint_tags"
    );
    assert_eq!(hints("tags_no-defer"), [], "ai:no_defer has no effect");
    assert_eq!(
        hints("tags_confirm"),
        [],
        "confirmation does not change hints"
    );
    assert_eq!(hints("ping"), [], "untagged commands send none");
}

#[test]
fn confirmation_is_triggered_by_ai_confirm_or_confirm_tags() {
    let trigger = |server: &ir::Server, name: &str| {
        tool(server, name)
            .confirm
            .as_ref()
            .map(|c| c.trigger.clone())
    };
    let plain = serve("");
    assert_eq!(
        trigger(&plain, "tags_confirm").as_deref(),
        Some("ai:confirm")
    );
    assert_eq!(trigger(&plain, "tags_free-form"), None);
    let configured = serve("harness: {confirm_tags: ['impact:rw', 'scope:user']}");
    assert_eq!(
        trigger(&configured, "tags_free-form").as_deref(),
        Some("scope:user"),
        "the tool's tag order wins"
    );
    assert_eq!(
        trigger(&configured, "cluster_node_label_set").as_deref(),
        Some("impact:rw")
    );
    assert_eq!(trigger(&configured, "cluster_node_list"), None);
}

#[test]
fn global_flags_are_offered_per_tool_with_the_required_one_always() {
    let server = serve("global_flags: [trace, --colors]");
    let ping = &tool(&server, "ping").input_schema;
    assert_eq!(
        ping["properties"]["trace"],
        json!({"type": "boolean", "description": "Global flag: Trace execution"})
    );
    assert_eq!(
        ping["properties"]["colors"]["enum"],
        json!(["auto", "always", "never"])
    );
    assert_eq!(ping["properties"]["profile"]["type"], "string");
    assert_eq!(ping["required"], json!(["profile"]));
    let shadow = &tool(&server, "options_shadow").input_schema;
    assert_eq!(
        shadow["properties"]["trace"]["description"], "A trace id, not the global flag",
        "the arg wins"
    );
    let ToolKind::Command(command) = &tool(&server, "options_shadow").kind else {
        panic!("a command")
    };
    assert_eq!(
        command
            .params
            .iter()
            .filter(|param| param.global)
            .map(|param| param.name.as_str())
            .collect::<Vec<_>>(),
        ["colors", "profile"]
    );

    let flags: Vec<(&str, bool, bool)> = server
        .global_flags
        .iter()
        .map(|flag| (flag.name.as_str(), flag.exposed, flag.required))
        .collect();
    assert_eq!(
        flags,
        [
            ("profile", true, true),
            ("trace", true, false),
            ("colors", true, false)
        ],
        "hidden --socket is not listed"
    );

    let only_required = serve("");
    let properties = &tool(&only_required, "ping").input_schema["properties"];
    assert!(
        properties.get("profile").is_some(),
        "a required global is exposed without an allowlist"
    );
    assert!(properties.get("trace").is_none() && properties.get("colors").is_none());
}

#[test]
fn global_flag_mistakes_are_reported_together() {
    let error = try_serve("global_flags: [profle, socket, version]").expect_err("must fail");
    assert_eq!(error.problems.len(), 3, "{error}");
    assert!(error.problems[0].contains("\"profle\" matches no global flag of application \"fixture\"; did you mean \"profile\"?"), "{error}");
    assert!(
        error.problems[1].contains("\"socket\" is a hidden or framework flag"),
        "{error}"
    );
    assert!(
        error.problems[2].contains("\"version\" matches no global flag"),
        "{error}"
    );
}

#[test]
fn builtins_are_filtered_by_name_and_collisions_are_refused() {
    let yaml = "harness: {tools: [{name: read_file}, {name: base64_encode, confirm: true}], knowledge: {enabled: true}}\n\
                expose: {agent: {mcp: {builtins: [knowledge_search, knowledge_read, knowledge_list, knowledge_enumerate]}}}\n";
    let server = serve(&format!(
        "{yaml}include: {{tools: ['^ping$', '^base64']}}\n"
    ));
    assert_eq!(names(&server), ["ping", "base64_encode"]);
    assert!(server.notes.iter().any(|note| {
        note.contains("\"knowledge_search\" is enabled but not served: include filters it out")
    }));
    let server = serve(&format!("{yaml}include: {{tags: ['ai:confirm']}}\n"));
    assert_eq!(
        names(&server),
        ["tags_confirm"],
        "an include by tag alone removes every built-in"
    );
    let server = serve(&format!("{yaml}exclude: {{tools: ['^knowledge_read$']}}\n"));
    let served: Vec<&str> = names(&server)
        .into_iter()
        .filter(|name| {
            !name.contains('_')
                || name.starts_with("knowledge")
                || *name == "read_file"
                || *name == "base64_encode"
        })
        .collect();
    assert!(
        served.ends_with(&[
            "read_file",
            "base64_encode",
            "knowledge_search",
            "knowledge_list",
            "knowledge_enumerate"
        ]),
        "{served:?}"
    );
    assert_eq!(
        tool(&server, "base64_encode")
            .confirm
            .as_ref()
            .map(|c| c.trigger.as_str()),
        Some("ai:confirm")
    );
}

#[test]
fn without_an_application_nothing_is_introspected() {
    let config =
        config::parse("harness: {tools: [{name: read_file}]}", Path::new("x.yaml")).expect("valid");
    let server = select::select(&config, None).expect("selects");
    assert_eq!(names(&server), ["read_file"]);
    assert!(server.application.is_none());
    let plan =
        fiskgen::introspect_for(&config, &fiskgen::ModelSource::Configured).expect("no error");
    assert!(plan.is_none(), "no application_path, no introspection");
}

fn cheat<'a>(server: &'a ir::Server, label: &str) -> Option<&'a ir::Cheat> {
    server.docs.cheats.iter().find(|cheat| cheat.label == label)
}

#[test]
fn every_served_tool_has_help_and_every_cheat_is_attributed_to_its_served_command() {
    let server = serve("");
    let docs = &server.docs;
    assert!(docs.resources && docs.prompts);
    assert_eq!(docs.help.len(), server.tools.len());
    assert_eq!(docs.template.as_deref(), Some("fixture://help/{tool}"));
    let labels: Vec<&str> = docs.cheats.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(
        labels,
        ["cluster", "fixture", "labels", "list", "opt", "unattached"]
    );
    let list = cheat(&server, "list").expect("list");
    assert_eq!(list.tool.as_deref(), Some("cluster_node_list"));
    assert_eq!(list.uri.as_deref(), Some("fixture://list"));
    assert_eq!(list.description, "list nodes");
    // A group's cheat and an application-level one belong to no single tool.
    assert_eq!(
        cheat(&server, "cluster").and_then(|c| c.tool.as_deref()),
        None
    );
    assert_eq!(
        cheat(&server, "fixture").and_then(|c| c.tool.as_deref()),
        None
    );
    let help = docs
        .help
        .iter()
        .find(|h| h.tool == "cluster_node_list")
        .expect("help");
    assert!(
        help.markdown.starts_with("# fixture cluster node list\n"),
        "{}",
        help.markdown
    );
    assert!(
        help.markdown
            .contains("## Cheat\n\n```text\n# list nodes\n"),
        "{}",
        help.markdown
    );
    assert!(
        help.markdown.contains("## Global flags"),
        "{}",
        help.markdown
    );
    let scalars = docs
        .help
        .iter()
        .find(|h| h.tool == "types_scalars")
        .expect("scalars");
    assert!(
        scalars.markdown.contains("Values: `red`, `green`, `blue`."),
        "{}",
        scalars.markdown
    );
}

#[test]
fn cheats_of_commands_that_are_not_served_are_left_out() {
    let server = serve("exclude: {tools: [\"^cluster_\"]}\n");
    assert!(cheat(&server, "list").is_none());
    assert!(cheat(&server, "cluster").is_none());
    assert!(cheat(&server, "opt").is_some());
    assert!(
        server
            .docs
            .help
            .iter()
            .all(|h| !h.tool.starts_with("cluster_"))
    );
}

#[test]
fn resources_prompts_and_skills_switch_off_separately() {
    let server = serve("expose: {agent: {mcp: {resources: false}}}\n");
    assert!(server.docs.help.is_empty() && server.docs.template.is_none());
    assert!(server.docs.cheats.iter().all(|c| c.uri.is_none()));
    assert_eq!(server.docs.cheats.len(), 6);
    // The cheats stay for the skills.
    let server = serve("expose: {agent: {mcp: {resources: false, prompts: false}}}\n");
    assert!(server.docs.skills && !server.docs.prompts && server.docs.help.is_empty());
    assert_eq!(server.docs.cheats.len(), 6);
    let server =
        serve("expose: {agent: {mcp: {resources: false, prompts: false, skills: false}}}\n");
    assert!(server.docs.cheats.is_empty() && server.docs.help.is_empty());
}

#[test]
fn look_alike_and_invisible_parameter_names_get_a_build_warning_naming_them() {
    let server = serve("");
    let about = |needle: &str| {
        server
            .warnings
            .iter()
            .find(|warning| warning.contains(needle))
            .cloned()
            .unwrap_or_else(|| panic!("no warning about {needle}: {:#?}", server.warnings))
    };
    let cyrillic = about("parameter name \"n\u{430}me\"");
    assert!(
        cyrillic.starts_with("tool \"hostile\": ")
            && cyrillic.contains("U+0430 (looks like a Latin letter)"),
        "{cyrillic}"
    );
    let invisible = about("parameter name \"zero\\u{200b}width\"");
    assert!(
        invisible.contains("U+200B (invisible or a control character)"),
        "{invisible}"
    );
    // Plain ASCII names are not warned about.
    assert!(
        !server.warnings.iter().any(|w| w.contains("\"count\"")),
        "{:#?}",
        server.warnings
    );
}
