//! Skills over a small static spec (the real-client tests are in
//! tests/tests/integration/skills.rs and conformance.rs).

use rmcp::model::{ErrorCode, ResourceContents, ServerCapabilities, SkillResources};
use serde_json::json;

use crate::mcp::docs::tests::{APP, DOCS, docs_of};
use crate::spec::app::{AppSpec, CheatSpec, DocsSpec};

/// [`APP`] with `docs`.
fn app_with(docs: &'static DocsSpec) -> &'static AppSpec {
    Box::leak(Box::new(AppSpec {
        docs,
        application: None,
        settings: APP.settings.clone(),
        ..APP
    }))
}

/// The `SKILL.md` of a skill: what its entry promises (digest, size, frontmatter) is what a
/// client reads back, and the file points at its tool's help.
#[test]
fn each_cheat_is_a_skill_whose_file_reads_back_as_its_entry_promises() {
    let docs = docs_of(&APP);
    let listed = docs.list_skills(None).expect("skills/list");
    assert_eq!(listed.skills.len(), 1);
    assert_eq!(listed.next_cursor, None);
    let skill = &listed.skills[0];
    assert_eq!(skill.uri, "skill://nats-cli/stream/SKILL.md");
    assert_eq!(skill.validate(), Ok(()));
    assert_eq!(
        serde_json::to_value(&skill.frontmatter).expect("json"),
        json!({ "name": "stream", "description": "Work with streams" })
    );
    let SkillResources::Files(files) = &skill.resources else {
        panic!("not a file manifest");
    };
    let read = docs.read(&skill.uri).expect("resources/read");
    let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
        panic!("not text");
    };
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].verify(text.as_bytes()), Ok(()));
    assert_eq!(
        text.as_str(),
        "---\nname: stream\ndescription: \"Work with streams\"\n---\n\n# info\nnats stream \
         info <stream> --output <format>\n\nThe tool `stream_info` runs this command; its full \
         help is the resource `nats-cli://help/stream_info`.\n"
    );
    let got = docs.get_skill(&skill.uri).expect("skills/get");
    assert_eq!(&got.skill, skill);
}

#[test]
fn an_unknown_skill_is_invalid_params_naming_the_served_ones() {
    let docs = docs_of(&APP);
    let error = docs
        .get_skill("skill://nats-cli/streams/SKILL.md")
        .expect_err("unknown");
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(
        error.message,
        "unknown skill: \"skill://nats-cli/streams/SKILL.md\" (its skills: \
         skill://nats-cli/stream/SKILL.md; skills/list names them all)"
    );
    let error = docs.list_skills(Some("nope")).expect_err("cursor");
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
}

/// Labels that are not skill names become valid, distinct ones; a description that YAML would
/// misread stays the same string in the file's frontmatter and the entry; skills off, or no
/// cheats, declare no extension.
#[test]
fn skill_names_are_valid_and_unique_and_the_extension_is_declared_only_with_skills() {
    static CHEATS: [CheatSpec; 3] = [
        CheatSpec {
            label: "Stream_Info",
            description: "key: \"value\" # not a comment\nsecond line",
            text: "nats stream info",
            tool: None,
            arguments: &[],
        },
        CheatSpec {
            label: "stream-info",
            description: "",
            text: "nats stream info\n",
            tool: None,
            arguments: &[],
        },
        CheatSpec {
            label: "!!",
            description: "no name can be made of it",
            text: "x",
            tool: None,
            arguments: &[],
        },
    ];
    let spec: &'static DocsSpec = Box::leak(Box::new(DocsSpec {
        cheats: &CHEATS,
        ..DOCS
    }));
    let docs = docs_of(app_with(spec));
    let skills = docs.list_skills(None).expect("skills/list").skills;
    let uris: Vec<&str> = skills.iter().map(|skill| skill.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            "skill://nats-cli/stream-info/SKILL.md",
            "skill://nats-cli/stream-info-2/SKILL.md"
        ]
    );
    assert_eq!(
        skills[0].frontmatter.description,
        "key: \"value\" # not a comment\nsecond line"
    );
    assert_eq!(
        skills[1].frontmatter.description,
        "Cheat sheet \"stream-info\""
    );
    let read = docs.read(uris[0]).expect("read");
    let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
        panic!("not text");
    };
    assert!(
        text.starts_with(
            "---\nname: stream-info\ndescription: \"key: \\\"value\\\" # not a comment\\nsecond \
             line\"\n---\n"
        ),
        "{text}"
    );
    let mut capabilities = ServerCapabilities::builder().enable_resources().build();
    crate::mcp::docs::declare(&docs, &mut capabilities);
    assert!(capabilities.supports_skills());
    for skills in [false, true] {
        let spec: &'static DocsSpec = Box::leak(Box::new(DocsSpec {
            skills,
            cheats: if skills { &[] } else { &CHEATS },
            ..DOCS
        }));
        let docs = docs_of(app_with(spec));
        let mut capabilities = ServerCapabilities::builder().enable_resources().build();
        crate::mcp::docs::declare(&docs, &mut capabilities);
        assert!(!capabilities.supports_skills(), "skills {skills}");
        let error = docs
            .get_skill("skill://nats-cli/x/SKILL.md")
            .expect_err("none");
        assert!(
            error.message.contains("(this server serves no skills;"),
            "{}",
            error.message
        );
    }
}

/// The Agent Skills limit on a description (1024 characters) holds for any cheat, and an
/// unknown URI is echoed capped, not whole.
#[test]
fn a_long_description_is_cut_to_the_limit_and_a_long_unknown_uri_is_echoed_capped() {
    let description: &'static str = Box::leak("é".repeat(3000).into_boxed_str());
    let cheats: &'static [CheatSpec] = Box::leak(Box::new([CheatSpec {
        label: "long",
        description,
        text: "x",
        tool: None,
        arguments: &[],
    }]));
    let spec: &'static DocsSpec = Box::leak(Box::new(DocsSpec { cheats, ..DOCS }));
    let docs = docs_of(app_with(spec));
    let skills = docs.list_skills(None).expect("skills/list").skills;
    assert_eq!(skills[0].frontmatter.description.chars().count(), 1024);
    let uri = format!("skill://nats-cli/{}/SKILL.md", "a".repeat(100_000));
    let error = docs.get_skill(&uri).expect_err("unknown");
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert!(error.message.len() < 2000, "{} bytes", error.message.len());
    assert!(
        error.message.contains("bytes; the first"),
        "{}",
        error.message
    );
}
