//! The prepared lists and their errors, over a small static spec (the real-client tests are in
//! tests/tests/integration/conformance.rs).

use std::time::Duration;

use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, ContentBlock, ErrorCode, Reference, ResourceContents,
};
use serde_json::json;

use super::Docs;
use crate::mcp::tools::Catalog;
use crate::spec::app::{
    AppSpec, ArgumentSpec, CheatSpec, DocsSpec, HelpSpec, Hints, Run, Settings, ToolSpec,
};

const fn tool(name: &'static str) -> ToolSpec {
    ToolSpec {
        name,
        title: name,
        description: "",
        tags: &[],
        hints: Hints::NONE,
        confirm: None,
        input_schema: "{}",
        questions: &[],
        run: Run::Command(crate::spec::params::Command {
            path: &[],
            globals: crate::spec::params::Globals::NONE,
            params: &[],
        }),
    }
}

static INFO: ToolSpec = tool("stream_info");
static LS: ToolSpec = tool("stream_ls");

pub(super) static DOCS: DocsSpec = DocsSpec {
    page_size: 2,
    help: &[
        HelpSpec {
            tool: "stream_info",
            title: "stream info",
            summary: "Show a stream",
            markdown: "# stream info\n",
        },
        HelpSpec {
            tool: "stream_ls",
            title: "stream ls",
            summary: "List streams",
            markdown: "# stream ls\n",
        },
        HelpSpec {
            tool: "stream_rm",
            title: "stream rm",
            summary: "not served",
            markdown: "# stream rm\n",
        },
    ],
    cheat_sheets: true,
    prompts: true,
    skills: true,
    cheats: &[CheatSpec {
        label: "stream",
        description: "Work with streams",
        text: "# info\nnats stream info <stream> --output <format>",
        tool: Some("stream_info"),
        arguments: &[
            ArgumentSpec {
                name: "stream",
                description: "The stream",
                values: &[],
            },
            ArgumentSpec {
                name: "format",
                description: "Output format",
                values: &["json", "yaml", "Text"],
            },
        ],
    }],
};

pub(super) static APP: AppSpec = AppSpec {
    identity: "Nats_Cli",
    fiskgen_version: "0",
    tools: &[&INFO, &LS],
    docs: &DOCS,
    settings: Settings {
        port: 0,
        address: "",
        max_concurrent_tools: 1,
        tool_timeout: Duration::from_secs(1),
        tasks: None,
        ..Settings::DEFAULT
    },
    ..AppSpec::EMPTY
};

/// What `app` offers, served from its own catalog as a server serves it.
pub(super) fn docs_of(app: &'static AppSpec) -> Docs {
    Docs::new(
        app,
        &Catalog::new(app, &[]).expect("the test app's catalog"),
    )
}

fn uris(docs: &Docs) -> Vec<String> {
    let mut all = Vec::new();
    let mut cursor = None;
    loop {
        let page = docs.list_resources(cursor.as_deref()).expect("page");
        all.extend(page.resources.into_iter().map(|r| r.uri.clone()));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return all,
        }
    }
}

#[test]
fn only_served_tools_have_help_and_every_listed_uri_reads_back() {
    let docs = docs_of(&APP);
    let listed = uris(&docs);
    assert_eq!(
        listed,
        [
            "nats-cli://help/stream_info",
            "nats-cli://help/stream_ls",
            "nats-cli://stream",
            "skill://nats-cli/stream/SKILL.md"
        ]
    );
    for uri in &listed {
        let read = docs.read(uri).expect(uri);
        let ResourceContents::TextResourceContents { mime_type, .. } = &read.contents[0] else {
            panic!("{uri}: not text");
        };
        assert_eq!(mime_type.as_deref(), Some("text/markdown"));
    }
}

#[test]
fn unknown_uris_are_not_found_with_the_uri_in_data() {
    let docs = docs_of(&APP);
    for uri in [
        "nats-cli://help/stream_rm",
        "nats-cli://nothing",
        "file:///etc/passwd",
    ] {
        let error = docs.read(uri).expect_err(uri);
        assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND);
        assert_eq!(error.data, Some(json!({ "uri": uri })));
    }
    let error = docs
        .read("nats-cli://help/stream_rm")
        .expect_err("unserved");
    assert!(
        error.message.contains("serves no tool \"stream_rm\""),
        "{}",
        error.message
    );
    assert!(docs.subscribe("nats-cli://stream").is_ok());
    assert!(docs.subscribe("nats-cli://nothing").is_err());
}

#[test]
fn prompts_fill_given_placeholders_and_embed_the_tools_help() {
    let docs = docs_of(&APP);
    let arguments = json!({ "stream": "ORDERS" });
    let result = docs
        .get_prompt("stream", arguments.as_object())
        .expect("prompt");
    let ContentBlock::Text(text) = &result.messages[0].content else {
        panic!("first message is not text");
    };
    assert_eq!(
        text.text,
        "# info\nnats stream info ORDERS --output <format>"
    );
    let ContentBlock::Resource(embedded) = &result.messages[1].content else {
        panic!("second message is not a resource");
    };
    let ResourceContents::TextResourceContents { uri, text, .. } = &embedded.resource else {
        panic!("not text");
    };
    assert_eq!(
        (uri.as_str(), text.as_str()),
        ("nats-cli://help/stream_info", "# stream info\n")
    );
}

#[test]
fn bad_prompt_requests_get_specific_invalid_params_errors() {
    let docs = docs_of(&APP);
    let error = docs.get_prompt("streams", None).expect_err("unknown");
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(
        error.message,
        "unknown prompt: \"streams\" (its prompts: stream)"
    );
    let arguments = json!({ "bucket": "x" });
    let error = docs
        .get_prompt("stream", arguments.as_object())
        .expect_err("argument");
    assert_eq!(
        error.message,
        "prompt \"stream\" has no argument \"bucket\"; its arguments: stream, format"
    );
    let long = json!({ "stream": "x".repeat(5000) });
    let error = docs
        .get_prompt("stream", long.as_object())
        .expect_err("long");
    assert!(error.message.contains("at most 4096"), "{}", error.message);
}

fn complete(reference: Reference, name: &str, value: &str) -> Result<Vec<String>, String> {
    let docs = docs_of(&APP);
    let request = CompleteRequestParams::new(reference, ArgumentInfo::new(name, value));
    docs.complete(&request)
        .map(|result| result.completion.values)
        .map_err(|error| {
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
            error.message.to_string()
        })
}

#[test]
fn completions_offer_served_tool_names_and_argument_values_by_prefix() {
    let template = Reference::for_resource("nats-cli://help/{tool}");
    assert_eq!(
        complete(template.clone(), "tool", "").expect("values"),
        ["stream_info", "stream_ls"]
    );
    assert_eq!(
        complete(template, "tool", "stream_l").expect("values"),
        ["stream_ls"]
    );
    let prompt = Reference::for_prompt("stream");
    assert_eq!(
        complete(prompt.clone(), "format", "t").expect("values"),
        ["Text"]
    );
    assert!(complete(prompt, "stream", "").expect("values").is_empty());
}

#[test]
fn completing_an_unknown_argument_names_the_known_ones() {
    let error = complete(Reference::for_prompt("stream"), "bucket", "").expect_err("an error");
    assert_eq!(
        error,
        "prompt \"stream\" has no argument \"bucket\" to complete; its arguments: stream, format"
    );
    let error = complete(
        Reference::for_resource("nats-cli://help/{tool}"),
        "name",
        "",
    )
    .expect_err("an error");
    assert!(error.contains("has no variable \"name\""), "{error}");
    let error =
        complete(Reference::for_resource("nats-cli://x/{y}"), "y", "").expect_err("an error");
    assert!(error.starts_with("unknown resource template"), "{error}");
    let error = complete(Reference::for_prompt("nope"), "x", "").expect_err("an error");
    assert!(error.starts_with("unknown prompt"), "{error}");
}

#[test]
fn an_invalid_cursor_is_invalid_params() {
    let docs = docs_of(&APP);
    for error in [
        docs.list_resources(Some("nope")).expect_err("resources"),
        docs.list_prompts(Some("nope")).expect_err("prompts"),
        docs.list_templates(Some("nope")).expect_err("templates"),
    ] {
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert!(
            error
                .message
                .starts_with("invalid cursor \"nope\": this server did not issue it (it lists"),
            "{}",
            error.message
        );
    }
}

/// The capabilities are declared at start, before the lists are made: what they promise must
/// be what the lists hold, for every mix of help, cheat sheets, prompts and cheats.
#[test]
fn the_capabilities_declared_at_start_match_the_lists_made_later() {
    static SERVED: [&ToolSpec; 2] = [&INFO, &LS];
    let served: [&'static [&'static ToolSpec]; 2] = [&SERVED, &[]];
    let cheats: [&'static [CheatSpec]; 2] = [DOCS.cheats, &[]];
    for tools in served {
        for cheats in cheats {
            for (cheat_sheets, prompts, skills) in
                (0..8).map(|n| (n & 1 != 0, n & 2 != 0, n & 4 != 0))
            {
                let docs: &'static DocsSpec = Box::leak(Box::new(DocsSpec {
                    cheat_sheets,
                    prompts,
                    skills,
                    cheats,
                    ..DOCS
                }));
                let app: &'static AppSpec = Box::leak(Box::new(AppSpec {
                    tools,
                    docs,
                    application: None,
                    settings: APP.settings.clone(),
                    ..APP
                }));
                let case = format!(
                    "{} tools, {} cheats, cheat_sheets {cheat_sheets}, prompts {prompts}, \
                         skills {skills}",
                    tools.len(),
                    cheats.len()
                );
                let declared = docs_of(app);
                let (has_resources, completes, has_skills) = (
                    declared.has_resources(),
                    declared.completes(),
                    declared.skills(),
                );
                let lists = declared.lists();
                assert_eq!(
                    has_skills,
                    !lists.skills.items().is_empty(),
                    "skills: {case}"
                );
                assert_eq!(
                    has_resources,
                    !lists.resources.items().is_empty(),
                    "resources: {case}"
                );
                assert_eq!(
                    completes,
                    !lists.templates.items().is_empty() || !lists.prompts.items().is_empty(),
                    "completions: {case}"
                );
            }
        }
    }
}
