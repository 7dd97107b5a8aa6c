//! Parameter names a reader can misread: characters outside ASCII, letters of scripts that look
//! like Latin ones (Cyrillic `а` for `a`), and invisible or control characters. They are served
//! as they are (they reach the right flag), but a person reviewing the tool, or a model filling
//! it in, may take them for another name; `fiskgen build` warns, naming each one.

use fiskgen_contract::text::is_disguising;

use crate::ir::{Tool, ToolKind};

/// One warning per parameter of a served command whose name has such characters.
pub(super) fn warnings(tools: &[Tool]) -> Vec<String> {
    let mut out = Vec::new();
    for tool in tools {
        let ToolKind::Command(command) = &tool.kind else {
            continue;
        };
        for param in &command.params {
            if let Some(why) = unusual(&param.name) {
                out.push(format!(
                    "tool \"{}\": parameter name {} has {why}; it is served as it is, but \
                     clients and models may take it for another name (rename the flag or \
                     argument in the application)",
                    tool.name,
                    quoted(&param.name)
                ));
            }
        }
    }
    out
}

/// What is unusual about `name`, if anything: each such character with its code point.
fn unusual(name: &str) -> Option<String> {
    let mut found: Vec<String> = Vec::new();
    for c in name.chars() {
        if c.is_ascii() && !c.is_ascii_control() {
            continue;
        }
        let kind = if is_disguising(c) {
            "invisible or a control character"
        } else if looks_latin(c) {
            "looks like a Latin letter"
        } else {
            "not ASCII"
        };
        let entry = format!("U+{:04X} ({kind})", u32::from(c));
        if !found.contains(&entry) {
            found.push(entry);
        }
    }
    if found.is_empty() {
        None
    } else {
        Some(format!(
            "characters a reader can mistake or not see: {}",
            found.join(", ")
        ))
    }
}

/// Letters of the scripts most often confused with Latin: Greek, Cyrillic and the full-width
/// forms.
fn looks_latin(c: char) -> bool {
    matches!(u32::from(c), 0x0370..=0x03FF | 0x0400..=0x052F | 0xFF01..=0xFF5E)
}

/// `name` in quotes, its invisible characters written as escapes.
fn quoted(name: &str) -> String {
    format!("\"{}\"", fiskgen_contract::text::escape_disguising(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confusable_invisible_and_non_ascii_names_are_named_with_their_code_points() {
        assert_eq!(unusual("name"), None);
        assert_eq!(unusual("exit-code_2"), None);
        assert_eq!(
            unusual("n\u{430}me").as_deref(),
            Some("characters a reader can mistake or not see: U+0430 (looks like a Latin letter)")
        );
        assert_eq!(
            unusual("zero\u{200B}width").as_deref(),
            Some(
                "characters a reader can mistake or not see: U+200B (invisible or a control \
                 character)"
            )
        );
        assert_eq!(
            unusual("naïve").as_deref(),
            Some("characters a reader can mistake or not see: U+00EF (not ASCII)")
        );
        assert_eq!(quoted("a\u{200B}b"), "\"a\\u{200b}b\"");
    }
}
