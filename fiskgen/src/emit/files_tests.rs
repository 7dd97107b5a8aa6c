//! Every template rendered with hostile values (quotes, newlines, `"""`, `]]`, Markdown and
//! shell syntax, GitHub expressions, unicode, a very long description) and parsed back: TOML
//! with the `toml` crate, Markdown with pulldown-cmark, YAML with saphyr-parser, the script with
//! `sh`. Each must keep the shape it has with plain values and carry the values unchanged.

use std::process::Command;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use serde_json::Value;

use super::filters::one_line;
use super::*;

const HOSTILE: &str = "a \"q\" 'it' \"\"\" ]] [x]\nnew = 1\r\n# h `t` ``` | <b>x</b> &amp; *e* _u_ \
                       ${{ secrets.X }} $(touch pwned) ~~s~~ [l](http://x) ünï 🦀 \\ end\u{7}";

fn long_description() -> String {
    HOSTILE.replace('\n', " ").repeat(400)
}

fn cargo_toml(text: &str, runtime: Runtime, standalone: bool) -> String {
    render(
        "Cargo.toml",
        &CargoToml {
            header: header(),
            package: text,
            description: long_description() + text,
            runtime,
            runtime_version: text.to_string(),
            standalone,
            runtime_path: Some(text),
        },
    )
    .expect("renders")
}

#[test]
fn cargo_toml_parses_back_with_every_hostile_value_intact() {
    for (knowledge, oauth, telemetry, tls) in [
        (false, false, false, false),
        (false, false, false, true),
        (false, true, false, true),
        (false, false, true, false),
        (true, false, false, false),
        (true, true, true, true),
    ] {
        let runtime = Runtime::needs(knowledge, oauth, telemetry, tls);
        for standalone in [false, true] {
            let text = cargo_toml(HOSTILE, runtime.clone(), standalone);
            let plain = cargo_toml("plain", runtime.clone(), standalone);
            assert_eq!(text.lines().count(), plain.lines().count(), "{text}");
            let parsed: toml::Table = text.parse().unwrap_or_else(|e| panic!("{e}\n{text}"));
            let mut keys: Vec<&str> = parsed.keys().map(String::as_str).collect();
            keys.sort_unstable();
            let expected: &[&str] = if standalone {
                &[
                    "bin",
                    "dependencies",
                    "package",
                    "patch",
                    "profile",
                    "workspace",
                ]
            } else {
                &["bin", "dependencies", "package"]
            };
            assert_eq!(keys, expected);
            assert_eq!(parsed["package"]["name"].as_str(), Some(HOSTILE));
            assert_eq!(
                parsed["package"]["description"].as_str(),
                Some((long_description() + HOSTILE).as_str())
            );
            assert_eq!(parsed["bin"][0]["name"].as_str(), Some(HOSTILE));
            let dependency = &parsed["dependencies"]["fiskgen-runtime"];
            let version = dependency.get("version").unwrap_or(dependency);
            assert_eq!(version.as_str(), Some(HOSTILE));
            if standalone {
                let patch = &parsed["patch"]["crates-io"]["fiskgen-runtime"]["path"];
                assert_eq!(patch.as_str(), Some(HOSTILE));
                // Only what differs from cargo's release defaults: size over speed, stripped.
                let profile = parsed["profile"]["release"].as_table().map(|t| t.len());
                assert_eq!(profile, Some(2));
                assert_eq!(
                    parsed["profile"]["release"]["opt-level"].as_str(),
                    Some("s")
                );
                assert_eq!(parsed["profile"]["release"]["strip"].as_bool(), Some(true));
            }
        }
    }
}

fn readme(text: &str) -> String {
    let tools = vec![
        ToolRow {
            name: "first",
            confirm: Some(text),
            hints: vec!["read-only"],
            description: text,
        },
        ToolRow {
            name: text,
            confirm: Some("a`b"),
            hints: Vec::new(),
            description: &LONG,
        },
    ];
    render(
        "README.md",
        &Readme {
            header: header(),
            identity: text,
            package: text,
            version: "0.1.0",
            config_file: text.to_string(),
            application: Some(AppView {
                name: text,
                version: text,
                path: text,
            }),
            tools,
            gated: true,
            global_flags: vec![format!("--{text}"), "--store".to_string()],
            commands: true,
            port: 8080,
            address: text,
            url: format!("http://{text}:8080/mcp"),
            http_json: pretty(&json!({"mcpServers": {"tasks": {"url": text}}})),
            stdio_json: pretty(&json!({"mcpServers": {"tasks": {"command": text}}})),
            fence: "`".repeat(filters::longest_backtick_run(text).max(2) + 1),
            check_command: format!("fiskgen check {}", filters::shell_word(text)),
            smoke_tool: Some(text),
        },
    )
    .expect("renders")
}

static LONG: std::sync::LazyLock<String> = std::sync::LazyLock::new(long_description);

/// What a README parses to: headings, table rows (cells as plain text), code blocks (language,
/// text), the text of inline code spans, and whether any HTML got through.
#[derive(Debug, Default)]
struct Parsed {
    headings: Vec<(HeadingLevel, String)>,
    rows: Vec<Vec<String>>,
    blocks: Vec<(String, String)>,
    spans: Vec<String>,
    html: Vec<String>,
}

fn parse_markdown(text: &str) -> Parsed {
    let mut parsed = Parsed::default();
    let mut heading: Option<(HeadingLevel, String)> = None;
    let mut cell: Option<String> = None;
    let mut block: Option<(String, String)> = None;
    for event in Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => heading = Some((level, String::new())),
            Event::End(TagEnd::Heading(_)) => parsed.headings.extend(heading.take()),
            Event::Start(Tag::TableHead | Tag::TableRow) => parsed.rows.push(Vec::new()),
            Event::Start(Tag::TableCell) => cell = Some(String::new()),
            Event::End(TagEnd::TableCell) => {
                if let (Some(row), Some(cell)) = (parsed.rows.last_mut(), cell.take()) {
                    row.push(cell);
                }
            }
            Event::Start(Tag::CodeBlock(kind)) => {
                let language = match kind {
                    CodeBlockKind::Fenced(language) => language.to_string(),
                    CodeBlockKind::Indented => "indented".to_string(),
                };
                block = Some((language, String::new()));
            }
            Event::End(TagEnd::CodeBlock) => parsed.blocks.extend(block.take()),
            Event::Text(ref text) | Event::Code(ref text) => {
                if matches!(event, Event::Code(_)) {
                    parsed.spans.push(text.to_string());
                }
                for open in [
                    heading.as_mut().map(|h| &mut h.1),
                    cell.as_mut(),
                    block.as_mut().map(|b| &mut b.1),
                ]
                .into_iter()
                .flatten()
                {
                    open.push_str(text);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(block) = block.as_mut() {
                    block.1.push('\n');
                }
            }
            Event::Html(html) | Event::InlineHtml(html) => parsed.html.push(html.to_string()),
            _ => {}
        }
    }
    parsed
}

#[test]
fn readme_parses_back_with_the_same_shape_and_the_values_as_text() {
    let plain = parse_markdown(&readme("plain"));
    let text = readme(HOSTILE);
    let hostile = parse_markdown(&text);
    let comment = format!("<!-- {} -->\n", header());
    assert_eq!(
        hostile.html,
        [comment],
        "the header comment is the only HTML"
    );

    let flat = one_line(HOSTILE);
    let titles: Vec<&str> = hostile.headings.iter().map(|h| h.1.as_str()).collect();
    assert_eq!(
        titles,
        [
            flat.trim(),
            "Tools",
            "Run",
            "Connect",
            "Build",
            "Regenerate in CI"
        ]
    );
    assert_eq!(hostile.headings[1..], plain.headings[1..]);

    assert_eq!(hostile.rows.len(), 3, "{:?}", hostile.rows);
    assert!(
        hostile.rows.iter().all(|row| row.len() == 4),
        "{:?}",
        hostile.rows
    );
    // Cells are trimmed; the hostile text ends with a control character, a space on one line.
    let cell = flat.trim();
    assert_eq!(hostile.rows[1], ["first", cell, "read-only", cell]);
    assert_eq!(hostile.rows[2], [cell, "a`b", "", one_line(&LONG).trim()]);

    let languages: Vec<&str> = hostile.blocks.iter().map(|b| b.0.as_str()).collect();
    assert_eq!(languages, ["sh", "sh", "json", "json", "sh"]);
    assert_eq!(hostile.blocks.len(), plain.blocks.len());
    for (language, block) in &hostile.blocks {
        if language == "json" {
            let value: Value = serde_json::from_str(block).expect("JSON block parses");
            assert!(value["mcpServers"]["tasks"].is_object());
        }
    }
    // The shell commands quote the values back to exactly themselves (Markdown reads a CRLF in
    // a code block as a line break, as it reads every line ending).
    let exact = HOSTILE.replace("\r\n", "\n");
    let url = format!("http://{exact}:8080/mcp");
    assert_eq!(
        sh_words(&hostile.blocks[1].1),
        ["claude", "mcp", "add", "--transport", "http", &exact, &url]
    );

    // The application's name and path, the config and the global flag are code spans.
    for span in [flat.clone(), format!("--{flat}"), format!("./{flat}")] {
        assert!(
            hostile.spans.contains(&span),
            "{span:?} in {:?}",
            hostile.spans
        );
    }
    assert_eq!(sh_words(&hostile.blocks[4].1), ["fiskgen", "build", &exact]);
}

/// The words of a shell command line, as `sh` splits and unquotes them.
fn sh_words(line: &str) -> Vec<String> {
    let output = Command::new("sh")
        .args(["-c", &format!("printf '%s\\0' {line}")])
        .output()
        .expect("sh runs");
    assert!(output.status.success(), "{line}");
    String::from_utf8_lossy(&output.stdout)
        .split_terminator('\0')
        .map(str::to_string)
        .collect()
}

fn regenerate(text: &str, smoke_tool: Option<&str>) -> String {
    render(
        "ci/regenerate.sh",
        &Regenerate {
            header: header(),
            package: text,
            config_file: text,
            smoke_tool,
        },
    )
    .expect("renders")
}

#[test]
fn the_regenerate_script_keeps_its_shape_and_its_defaults_with_hostile_values() {
    for smoke in [None, Some(HOSTILE)] {
        let script = regenerate(HOSTILE, smoke);
        let syntax = Command::new("sh")
            .args(["-n", "-c", &script])
            .output()
            .expect("sh");
        assert!(
            syntax.status.success(),
            "{}",
            String::from_utf8_lossy(&syntax.stderr)
        );
        let header_end = script
            .lines()
            .position(|line| line == "set -eu")
            .expect("set -eu");
        assert!(
            script
                .lines()
                .skip(1)
                .take(header_end - 1)
                .all(|l| l.starts_with('#')),
            "every header line is a comment:\n{script}"
        );
        // The defaults (config, model, fiskgen, binary, smoke tool) evaluate to the values.
        let start = script.find("if [ $# -ge 1 ]").expect("the defaults");
        let end = script.find("smoke_args=").expect("the defaults end");
        let defaults = &script[start..end];
        let probe =
            format!("set -- ; {defaults}\nprintf '%s\\0' \"$config\" \"$binary\" \"$smoke_tool\"");
        let output = Command::new("sh")
            .args(["-c", &probe, "/dir/regenerate.sh"])
            .env_remove("OUTPUT")
            .env_remove("SMOKE_TOOL")
            .output()
            .expect("sh");
        if smoke.is_none() {
            assert!(
                !output.status.success(),
                "SMOKE_TOOL is required without a default"
            );
            assert!(String::from_utf8_lossy(&output.stderr).contains("set SMOKE_TOOL"));
            continue;
        }
        let values: Vec<String> = String::from_utf8_lossy(&output.stdout)
            .split_terminator('\0')
            .map(str::to_string)
            .collect();
        assert_eq!(
            values,
            [
                format!("/dir/{HOSTILE}"),
                format!("./{HOSTILE}"),
                HOSTILE.to_string()
            ],
            "{probe}"
        );
    }
}

fn workflow(text: &str) -> String {
    render(
        "ci/github-workflow.yml",
        &Workflow {
            header: header(),
            package: "tasks-mcp",
            version: "0.1.0",
            config_file: text,
            application: text.to_string(),
        },
    )
    .expect("renders")
}

/// The scalars of a YAML document, in order (keys and values alike).
fn yaml_scalars(text: &str) -> Vec<String> {
    saphyr_parser::Parser::new_from_str(text)
        .map(|event| event.unwrap_or_else(|e| panic!("{e:?}\n{text}")).0)
        .filter_map(|event| match event {
            saphyr_parser::Event::Scalar(text, ..) => Some(text.into_owned()),
            _ => None,
        })
        .collect()
}

#[test]
fn the_workflow_carries_hostile_values_only_in_comments() {
    let hostile = workflow(HOSTILE);
    let plain = workflow("plain");
    assert_eq!(hostile.lines().count(), plain.lines().count());
    assert_eq!(yaml_scalars(&hostile), yaml_scalars(&plain));
    let scalars = yaml_scalars(&plain);
    assert!(scalars.contains(&"sh regenerate.sh".to_string()));
    assert!(
        scalars.contains(&"fiskgen-${{ runner.os }}-${{ hashFiles('model.json') }}".to_string()),
        "{scalars:?}"
    );
}

#[test]
fn the_gitignore_ignores_the_target_directory_and_the_runtime_link() {
    let text = render(".gitignore", &Gitignore { header: header() }).expect("renders");
    let ignored: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    let link = format!("/{}/", crate::embedded::LINK_DIR);
    assert_eq!(ignored, ["/target/", link.as_str()]);
}

fn release(config_file: &str) -> String {
    render(
        "ci/release.yml",
        &Release {
            header: header(),
            package: "tasks-mcp",
            version: "0.1.0",
            config_file,
            plain_config: plain(config_file),
            application: config_file.to_string(),
        },
    )
    .expect("renders")
}

#[test]
fn the_release_workflow_names_only_a_plain_config_outside_comments() {
    let hostile = release(HOSTILE);
    let plain_text = release("tasks.yaml");
    assert_eq!(hostile.lines().count(), plain_text.lines().count() + 1);
    let scalars = yaml_scalars(&hostile);
    assert!(
        scalars.iter().all(|scalar| !scalar.contains("pwned")),
        "{scalars:?}"
    );
    assert!(scalars.contains(&"fiskgen.yaml".to_string()), "{scalars:?}");
    let scalars = yaml_scalars(&plain_text);
    assert!(scalars.contains(&"tasks.yaml".to_string()), "{scalars:?}");
    for platform in [
        "linux-x86_64",
        "linux-aarch64",
        "macos-x86_64",
        "macos-arm64",
    ] {
        assert!(scalars.contains(&platform.to_string()), "{platform}");
    }
    assert_eq!(plain("a/b-c_d.yaml"), Some("a/b-c_d.yaml"));
    assert_eq!(plain("a b.yaml"), None);
    assert_eq!(plain(""), None);
}
