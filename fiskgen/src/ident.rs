//! Every identifier rule of generated code: case conversion, keywords, leading digits,
//! non-ASCII names and deterministic collision breaking.
//!
//! Names in fisk applications are free text (`exit-code`, `1password`, `type`, `naïve`), and the
//! generated Rust must stay valid, lint-clean and readable for all of them. The wire names never
//! change: fields and enum variants whose Rust name differs carry a serde rename.
//!
//! Rules, in order:
//! 1. Only ASCII letters and digits survive; every other character separates words (so `naïve`
//!    reads as `na ve`). A name with no word left takes the caller's fallback (`value`, `Empty`).
//! 2. Case conversion with heck: `snake_case`, `UpperCamelCase` or `SCREAMING_SNAKE_CASE`.
//! 3. A name that starts with a digit gets a `_` prefix (`_1password`, `_1`).
//! 4. Keywords become raw identifiers (`r#type`); `self`, `super`, `crate` and `Self`, which
//!    cannot be raw, get a `_` suffix.
//! 5. A [`Namespace`] hands out each name once. Names that convert to themselves are served
//!    first, the others in the order given, and a taken name gets the lowest free suffix
//!    `_2`, `_3`, ... (`2`, `3`, ... for camel case unless the name ends in a digit), so
//!    `foo_bar` and `foo-bar` become `foo_bar` and `foo_bar_2` whichever comes first.

use std::collections::BTreeSet;

use heck::{ToShoutySnakeCase, ToSnakeCase, ToUpperCamelCase};
use proc_macro2::{Ident, Span};

/// The case of a kind of generated item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// Modules, functions, fields: `exit_code`.
    Snake,
    /// Types and enum variants: `TaskAddArgs`.
    UpperCamel,
    /// Statics: `TASK_ADD`.
    ScreamingSnake,
}

/// Strict and reserved keywords of edition 2024 (weak keywords such as `union` are valid names).
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "Self", "static", "struct", "super", "trait", "true", "try", "type",
    "typeof", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// Keywords that cannot be raw identifiers.
const NOT_RAW: &[&str] = &["self", "Self", "super", "crate"];

/// `name` in `case`, made a valid identifier (rules 1 to 4), with `fallback` for a name that has
/// no ASCII letter or digit. Returns the identifier's text (`r#type` for a raw one).
pub fn convert(name: &str, case: Case, fallback: &str) -> String {
    let words: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { ' ' })
        .collect();
    let converted = match case {
        Case::Snake => words.to_snake_case(),
        Case::UpperCamel => words.to_upper_camel_case(),
        Case::ScreamingSnake => words.to_shouty_snake_case(),
    };
    let converted = if converted.is_empty() {
        fallback.to_string()
    } else {
        converted
    };
    valid(converted)
}

/// Rules 3 and 4 on an already converted name.
fn valid(name: String) -> String {
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        return format!("_{name}");
    }
    if NOT_RAW.contains(&name.as_str()) {
        return format!("{name}_");
    }
    if KEYWORDS.contains(&name.as_str()) {
        return format!("r#{name}");
    }
    name
}

/// An identifier token for a name produced by this module (`r#` prefix for raw ones).
pub fn ident(text: &str) -> Ident {
    match text.strip_prefix("r#") {
        Some(raw) => Ident::new_raw(raw, Span::call_site()),
        None => Ident::new(text, Span::call_site()),
    }
}

/// The name without a raw prefix: what serde sees, and a module's file name.
pub fn unraw(text: &str) -> &str {
    text.strip_prefix("r#").unwrap_or(text)
}

/// One scope of names of one case: each name is handed out once.
#[derive(Debug, Clone)]
pub struct Namespace {
    case: Case,
    taken: BTreeSet<String>,
}

impl Namespace {
    /// An empty namespace for names in `case`.
    pub fn new(case: Case) -> Self {
        Self {
            case,
            taken: BTreeSet::new(),
        }
    }

    /// Marks names as taken (items the generator emits itself, imports, prelude names).
    pub fn reserve<'a>(&mut self, names: impl IntoIterator<Item = &'a str>) {
        self.taken.extend(names.into_iter().map(str::to_string));
    }

    /// Whether `text` is taken.
    pub fn is_taken(&self, text: &str) -> bool {
        self.taken.contains(text)
    }

    /// A fresh identifier for `name` (`fallback` when it has no ASCII letter or digit).
    pub fn claim(&mut self, name: &str, fallback: &str) -> String {
        let base = convert(name, self.case, fallback);
        self.claim_converted(base)
    }

    /// A fresh identifier for an already converted, valid base name.
    pub fn claim_converted(&mut self, base: String) -> String {
        let mut candidate = base.clone();
        let mut counter = 2;
        while self.taken.contains(unraw(&candidate)) || self.taken.contains(&candidate) {
            candidate = self.suffixed(unraw(&base), counter);
            counter += 1;
        }
        self.taken.insert(unraw(&candidate).to_string());
        candidate
    }

    fn suffixed(&self, base: &str, counter: usize) -> String {
        match self.case {
            Case::UpperCamel if !base.ends_with(|c: char| c.is_ascii_digit()) => {
                format!("{base}{counter}")
            }
            _ => format!("{base}_{counter}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snake(name: &str) -> String {
        convert(name, Case::Snake, "value")
    }

    fn camel(name: &str) -> String {
        convert(name, Case::UpperCamel, "Empty")
    }

    #[test]
    fn dashes_and_mixed_case() {
        assert_eq!(snake("exit-code"), "exit_code");
        assert_eq!(snake("clusterName"), "cluster_name");
        assert_eq!(camel("task_add"), "TaskAdd");
        assert_eq!(camel("a-b"), "AB");
        assert_eq!(camel("debug"), "Debug");
        assert_eq!(
            convert("stream.info-v2", Case::ScreamingSnake, "X"),
            "STREAM_INFO_V2"
        );
    }

    #[test]
    fn keywords_become_raw_or_get_a_suffix() {
        assert_eq!(snake("type"), "r#type");
        assert_eq!(snake("gen"), "r#gen", "reserved in edition 2024");
        assert_eq!(snake("self"), "self_");
        assert_eq!(snake("super"), "super_");
        assert_eq!(snake("crate"), "crate_");
        assert_eq!(camel("Self"), "Self_");
        assert_eq!(camel("self"), "Self_");
        assert_eq!(snake("union"), "union", "weak keywords are valid names");
        assert_eq!(ident("r#type").to_string(), "r#type");
        assert_eq!(unraw("r#type"), "type");
    }

    #[test]
    fn leading_digits_get_an_underscore() {
        assert_eq!(snake("1password"), "_1password");
        assert_eq!(camel("1"), "_1");
        assert_eq!(
            convert("2fa", Case::ScreamingSnake, "X"),
            "_2FA",
            "statics too"
        );
    }

    #[test]
    fn non_ascii_separates_words_and_empty_names_fall_back() {
        assert_eq!(snake("naïve"), "na_ve");
        assert_eq!(camel("µs"), "S");
        assert_eq!(camel(""), "Empty");
        assert_eq!(snake("日本"), "value");
        assert_eq!(snake("--"), "value");
    }

    #[test]
    fn collisions_after_conversion_are_broken_deterministically() {
        let mut statics = Namespace::new(Case::ScreamingSnake);
        let names: Vec<String> = ["stream-add", "stream_add", "Stream Add"]
            .iter()
            .map(|name| statics.claim(name, "TOOL"))
            .collect();
        assert_eq!(names, ["STREAM_ADD", "STREAM_ADD_2", "STREAM_ADD_3"]);
        let mut modules = Namespace::new(Case::Snake);
        assert_eq!(modules.claim("v1", "m"), "v1");
        assert_eq!(modules.claim("v-1", "m"), "v_1");
        assert_eq!(modules.claim("v_1", "m"), "v_1_2");
    }

    #[test]
    fn reserved_names_are_never_handed_out() {
        let mut statics = Namespace::new(Case::ScreamingSnake);
        statics.reserve(["TOOLS", "GLOBALS"]);
        assert_eq!(statics.claim("tools", "X"), "TOOLS_2");
        assert_eq!(statics.claim("globals", "X"), "GLOBALS_2");
        let mut modules = Namespace::new(Case::Snake);
        modules.reserve(["rt"]);
        assert_eq!(modules.claim("rt", "m"), "rt_2");
        assert_eq!(modules.claim("type", "m"), "r#type");
        assert!(modules.is_taken("type"));
        assert_eq!(modules.claim("type", "m"), "type_2");
    }
}
