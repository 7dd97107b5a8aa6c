//! The askama filters of `templates/`: every value a template writes into TOML, Markdown, a
//! shell script or a comment goes through one of them, so no identity, description or path can
//! change the shape of the file it lands in (docs/generated-code.md, "Templates").
//!
//! | filter | for | what it does |
//! | --- | --- | --- |
//! | `toml` | a TOML value | a basic string, escaped by `toml_writer` (the `toml` crate's writer) |
//! | `sh` | a word of a POSIX shell command | bare when harmless, else single-quoted (a newline stays a newline inside the quotes) |
//! | `line` | a `#` comment, or a comment inside a code block | control characters (newlines) become spaces |
//! | `md` | Markdown prose, also in a table cell | one line, with Markdown's inline punctuation (and `|`) backslash-escaped |
//! | `code` | a Markdown code span | one line, between enough backticks |
//! | `cell_code` | a code span in a table cell | `code`, or `md` when the text holds a `|` |

// `askama::filter_fn` turns each filter into a `pub` item of this private module.
#![allow(unreachable_pub)]

use std::fmt::Display;

use toml_writer::{ToTomlValue, TomlStringBuilder};

/// A TOML basic string (`"..."`), whatever the text holds.
#[askama::filter_fn]
pub(super) fn toml(value: impl Display, _: &dyn askama::Values) -> askama::Result<String> {
    Ok(toml_string(&value.to_string()))
}

/// A word of a POSIX shell command that stands for exactly `value`.
#[askama::filter_fn]
pub(super) fn sh(value: impl Display, _: &dyn askama::Values) -> askama::Result<String> {
    Ok(shell_word(&value.to_string()))
}

/// One line: control characters (newlines, tabs, escapes) become spaces.
#[askama::filter_fn]
pub(super) fn line(value: impl Display, _: &dyn askama::Values) -> askama::Result<String> {
    Ok(one_line(&value.to_string()))
}

/// Markdown prose that renders as exactly the text, on one line.
#[askama::filter_fn]
pub(super) fn md(value: impl Display, _: &dyn askama::Values) -> askama::Result<String> {
    Ok(markdown_text(&value.to_string()))
}

/// A Markdown code span of the text, on one line.
#[askama::filter_fn]
pub(super) fn code(value: impl Display, _: &dyn askama::Values) -> askama::Result<String> {
    Ok(code_span(&value.to_string()))
}

/// A code span for a table cell; escaped prose when the text holds a `|` (a GFM table
/// splits a row at every unescaped `|`, and a backslash before it would stay visible in code).
#[askama::filter_fn]
pub(super) fn cell_code(value: impl Display, _: &dyn askama::Values) -> askama::Result<String> {
    let text = value.to_string();
    Ok(if text.contains('|') {
        markdown_text(&text)
    } else {
        code_span(&text)
    })
}

pub(super) fn toml_string(text: &str) -> String {
    TomlStringBuilder::new(text).as_basic().to_toml_value()
}

pub(super) fn shell_word(text: &str) -> String {
    let harmless = |c: char| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c);
    if !text.is_empty() && text.chars().all(harmless) {
        return text.to_string();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

pub(super) fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Backslash-escapes the ASCII punctuation that can start Markdown inline syntax: emphasis,
/// code, links and images, HTML and autolinks, strikethrough, table pipes, and `_` and `&`
/// where they could open emphasis or an entity (an intraword `_` and a spaced `&` cannot).
/// `#`, `>`, `-` and `+` act only at the start of a line, where no value is ever placed.
pub(super) fn markdown_text(text: &str) -> String {
    let chars: Vec<char> = one_line(text).chars().collect();
    let mut out = String::with_capacity(text.len());
    for (index, &c) in chars.iter().enumerate() {
        let before = index.checked_sub(1).and_then(|i| chars.get(i));
        let after = chars.get(index + 1);
        let alphanumeric = |c: Option<&char>| c.is_some_and(|c| c.is_alphanumeric());
        let escape = match c {
            '\\' | '`' | '*' | '[' | ']' | '<' | '~' | '|' => true,
            '_' => !(alphanumeric(before) && alphanumeric(after)),
            '&' => alphanumeric(after) || after == Some(&'#'),
            _ => false,
        };
        if escape {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The length of the longest run of backticks in a text.
pub(super) fn longest_backtick_run(text: &str) -> usize {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

pub(super) fn code_span(text: &str) -> String {
    let text = one_line(text);
    if text.is_empty() {
        return "` `".to_string();
    }
    let ticks = "`".repeat(longest_backtick_run(&text) + 1);
    // A span that starts or ends with a backtick needs a space between it and the fence; one
    // space each side is stripped again, so pad a text that already starts and ends with one.
    let pad = text.starts_with('`')
        || text.ends_with('`')
        || (text.starts_with(' ') && text.ends_with(' ') && text.trim() != "");
    let pad = if pad { " " } else { "" };
    format!("{ticks}{pad}{text}{pad}{ticks}")
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;

    #[test]
    fn toml_strings_round_trip_through_the_toml_crate() {
        for text in [
            "plain",
            r#"a "b" \c"#,
            "\"\"\"",
            "]]\n[evil]\nx = 1",
            "tab\there\u{1}\u{7f}",
            "ünïcødé ✓ 🦀",
            "'",
        ] {
            let document = format!("value = {}\n", toml_string(text));
            let parsed: ::toml::Table = document.parse().expect("valid TOML");
            assert_eq!(parsed["value"].as_str(), Some(text), "{document}");
            assert_eq!(parsed.len(), 1);
        }
        assert_eq!(toml_string("MCP server"), r#""MCP server""#);
    }

    #[test]
    fn shell_words_stand_for_exactly_their_text() {
        assert_eq!(shell_word("demo.yaml"), "demo.yaml");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word(""), "''");
        let hostile = [
            "it's",
            "$(touch pwned) `x` ${HOME} \"q\"",
            "a b\tc",
            "-n",
            "ünï ✓",
            "}{;|&<>*?[]#~",
            "line\nbreak\r\n\u{7}\n",
        ];
        for text in hostile {
            let script = format!("printf %s {}", shell_word(text));
            let output = Command::new("sh")
                .args(["-c", &script])
                .output()
                .expect("sh");
            assert_eq!(String::from_utf8_lossy(&output.stdout), text, "{script}");
        }
    }

    #[test]
    fn markdown_text_and_code_spans_stay_on_one_line() {
        assert_eq!(markdown_text("1.0.0"), "1.0.0");
        assert_eq!(markdown_text("a *b* <c>\n# d"), r"a \*b\* \<c> # d");
        assert_eq!(
            markdown_text("base64_encode _x_ &amp; a & b"),
            r"base64_encode \_x\_ \&amp; a & b"
        );
        assert_eq!(code_span("tasks"), "`tasks`");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`x"), "`` `x ``");
        assert_eq!(code_span(" x "), "`  x  `");
        assert_eq!(code_span(""), "` `");
        assert_eq!(code_span("a\nb"), "`a b`");
        assert_eq!(longest_backtick_run("a ``` b `` c"), 3);
        assert_eq!(markdown_text("a | b <c>"), r"a \| b \<c>");
        assert_eq!(one_line("a\r\nb"), "a  b");
    }
}
