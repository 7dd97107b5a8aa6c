//! The application's own documentation as MCP resources and prompts: the URIs they are served
//! at and the placeholder syntax of cheats, shared by the generator (which derives prompt
//! arguments and lists everything in `fiskgen info`) and the runtime (which serves and fills
//! them). See `docs/resources.md`.
//!
//! URIs live under a scheme made from the server's identity (lower-cased, `_` as `-`, since a
//! URI scheme allows neither upper case distinctions nor `_`):
//!
//! - `<scheme>://help/<tool>`: a served tool's full help as Markdown (the resource template
//!   `<scheme>://help/{tool}` names them all);
//! - `<scheme>://<label>`: one of the application's cheat sheets;
//! - `skill://<scheme>/<skill>/SKILL.md`: a cheat served as a skill (the Skills extension,
//!   SEP-2640), `<skill>` being [`skill_name`] of its label (made unique within the server).
//!
//! A cheat placeholder is `<name>`, where `name` starts with an ASCII letter and continues with
//! letters, digits, `_` or `-` (`<stream>`, `<arg1>`). Each distinct placeholder becomes an
//! argument of the cheat's prompt; getting the prompt replaces it with the argument's value,
//! and a placeholder without a value is left as written, for the reader to fill in.

/// The URI scheme of a server's resources: the identity lower-cased, `_` replaced by `-`.
///
/// ```
/// assert_eq!(fiskgen_contract::docs::scheme("My_App"), "my-app");
/// ```
pub fn scheme(identity: &str) -> String {
    identity
        .chars()
        .map(|c| match c {
            '_' => '-',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// The URI of a tool's help.
///
/// ```
/// assert_eq!(fiskgen_contract::docs::help_uri("nats", "stream_info"), "nats://help/stream_info");
/// ```
pub fn help_uri(identity: &str, tool: &str) -> String {
    format!("{}://help/{}", scheme(identity), encode(tool))
}

/// The resource template that names every tool's help; its one variable is `tool`.
pub fn help_template(identity: &str) -> String {
    format!("{}://help/{{{HELP_VARIABLE}}}", scheme(identity))
}

/// The variable of [`help_template`].
pub const HELP_VARIABLE: &str = "tool";

/// The tool a help URI names, when `uri` is one of this server's help URIs.
///
/// ```
/// use fiskgen_contract::docs::help_tool;
/// assert_eq!(help_tool("nats", "nats://help/stream_info").as_deref(), Some("stream_info"));
/// assert_eq!(help_tool("nats", "nats://stream"), None);
/// ```
pub fn help_tool(identity: &str, uri: &str) -> Option<String> {
    let prefix = format!("{}://help/", scheme(identity));
    uri.strip_prefix(&prefix).and_then(decode)
}

/// The URI of a cheat sheet.
///
/// ```
/// assert_eq!(fiskgen_contract::docs::cheat_uri("nats", "stream"), "nats://stream");
/// assert_eq!(fiskgen_contract::docs::cheat_uri("nats", "a b"), "nats://a%20b");
/// ```
pub fn cheat_uri(identity: &str, label: &str) -> String {
    format!("{}://{}", scheme(identity), encode(label))
}

/// The longest skill name the Agent Skills specification allows, in characters.
pub const SKILL_NAME_MAX: usize = 64;

/// The longest skill description the Agent Skills specification allows, in characters.
pub const SKILL_DESCRIPTION_MAX: usize = 1024;

/// A cheat label as a skill name under the Agent Skills naming rules (1 to 64 characters,
/// lowercase ASCII letters, digits and single inner hyphens): lower-cased, every run of other
/// characters one `-`, no `-` at either end, cut at 64 characters. `None` when nothing is left
/// (a label of symbols only).
///
/// ```
/// use fiskgen_contract::docs::skill_name;
/// assert_eq!(skill_name("test_prompt_with_arguments").as_deref(), Some("test-prompt-with-arguments"));
/// assert_eq!(skill_name("Stream  Info!").as_deref(), Some("stream-info"));
/// assert_eq!(skill_name("--"), None);
/// ```
pub fn skill_name(label: &str) -> Option<String> {
    let mut name = String::with_capacity(label.len().min(SKILL_NAME_MAX));
    for c in label.chars() {
        if c.is_ascii_alphanumeric() {
            if name.len() == SKILL_NAME_MAX {
                break;
            }
            name.push(c.to_ascii_lowercase());
        } else if !name.is_empty() && !name.ends_with('-') {
            if name.len() + 1 >= SKILL_NAME_MAX {
                break;
            }
            name.push('-');
        }
    }
    while name.ends_with('-') {
        name.pop();
    }
    (!name.is_empty()).then_some(name)
}

/// The skill names of `labels`, in order: [`skill_name`] of each, a later label whose name is
/// taken getting the first free `-2`, `-3`... (cut so that the whole stays within 64
/// characters); `None` for a label that has no name.
///
/// ```
/// use fiskgen_contract::docs::skill_names;
/// let names = skill_names(["a_b", "a-b", "!", "c"]);
/// assert_eq!(names, [Some("a-b".to_string()), Some("a-b-2".to_string()), None, Some("c".to_string())]);
/// ```
pub fn skill_names<'a>(labels: impl IntoIterator<Item = &'a str>) -> Vec<Option<String>> {
    let mut taken: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for label in labels {
        let Some(base) = skill_name(label) else {
            out.push(None);
            continue;
        };
        let mut name = base.clone();
        let mut n = 2u32;
        while taken.contains(&name) {
            let suffix = format!("-{n}");
            let mut stem = base.clone();
            stem.truncate(SKILL_NAME_MAX - suffix.len());
            while stem.ends_with('-') {
                stem.pop();
            }
            name = format!("{stem}{suffix}");
            n += 1;
        }
        taken.push(name.clone());
        out.push(Some(name));
    }
    out
}

/// The URI of a skill's `SKILL.md`: the server's scheme as the authority (so that two servers'
/// skills of the same name stay apart), then the skill's name.
///
/// ```
/// assert_eq!(fiskgen_contract::docs::skill_uri("My_App", "stream"), "skill://my-app/stream/SKILL.md");
/// ```
pub fn skill_uri(identity: &str, name: &str) -> String {
    format!("skill://{}/{name}/SKILL.md", scheme(identity))
}

/// Percent-encodes everything but RFC 3986's unreserved characters.
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Undoes [`encode`]; `None` for a malformed escape or text that is not UTF-8.
fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The distinct placeholders of a cheat, in order of first appearance.
///
/// ```
/// use fiskgen_contract::docs::placeholders;
/// assert_eq!(placeholders("nats stream info <stream> --js <domain> <stream>"), ["stream", "domain"]);
/// assert!(placeholders("a < b, 1<2>, <-x>").is_empty());
/// ```
pub fn placeholders(text: &str) -> Vec<&str> {
    let mut found: Vec<&str> = Vec::new();
    for (_, name, _) in spans(text) {
        if !found.contains(&name) {
            found.push(name);
        }
    }
    found
}

/// The cheat with every placeholder that `value` knows replaced; the others stay as written.
///
/// ```
/// use fiskgen_contract::docs::fill;
/// let filled = fill("kv get <bucket> <key>", |name| (name == "bucket").then(|| "CONFIG".to_string()));
/// assert_eq!(filled, "kv get CONFIG <key>");
/// ```
pub fn fill(text: &str, value: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    for (start, name, end) in spans(text) {
        if let Some(value) = value(name) {
            out.push_str(&text[done..start]);
            out.push_str(&value);
            done = end;
        }
    }
    out.push_str(&text[done..]);
    out
}

/// `(start, name, end)` of every placeholder, by byte offsets.
fn spans(text: &str) -> Vec<(usize, &str, usize)> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'<' && bytes.get(i + 1).is_some_and(u8::is_ascii_alphabetic) {
            let mut j = i + 2;
            while bytes
                .get(j)
                .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
            {
                j += 1;
            }
            if bytes.get(j) == Some(&b'>') {
                spans.push((i, &text[i + 1..j], j + 1));
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    spans
}

/// What a cheat is about: its first `#` comment line, without the `#`.
///
/// ```
/// use fiskgen_contract::docs::summary;
/// assert_eq!(summary("# list streams\nnats stream ls"), Some("list streams"));
/// assert_eq!(summary("nats stream ls"), None);
/// ```
pub fn summary(text: &str) -> Option<&str> {
    text.lines()
        .map(str::trim)
        .find_map(|line| line.strip_prefix('#'))
        .map(|line| line.trim_start_matches('#').trim())
        .filter(|line| !line.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_uris_round_trip_through_percent_encoding() {
        for tool in ["stream_info", "a b", "ü", "x/y%z"] {
            let uri = help_uri("My_App", tool);
            assert!(uri.starts_with("my-app://help/"), "{uri}");
            assert_eq!(help_tool("My_App", &uri).as_deref(), Some(tool));
        }
        assert_eq!(help_tool("app", "app://help/%zz"), None);
        assert_eq!(help_tool("app", "app://help/%C3"), None);
        assert_eq!(help_tool("app", "other://help/x"), None);
    }

    #[test]
    fn skill_names_follow_the_agent_skills_rules_and_stay_unique() {
        let long = "x".repeat(80);
        let names = skill_names([long.as_str(), long.as_str(), "A__B", "a-b", "é"]);
        let names: Vec<String> = names.into_iter().flatten().collect();
        assert_eq!(names.len(), 4);
        for name in &names {
            assert!(name.len() <= SKILL_NAME_MAX, "{name}");
            assert!(!name.starts_with('-') && !name.ends_with('-') && !name.contains("--"));
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{name}"
            );
        }
        assert_eq!(names[1], format!("{}-2", "x".repeat(62)));
        assert_eq!(names[2..], ["a-b", "a-b-2"]);
        assert_eq!(
            skill_name(&format!("{}_b", "a".repeat(63))),
            Some("a".repeat(63))
        );
    }

    #[test]
    fn placeholders_need_a_letter_first_and_a_closing_bracket() {
        assert_eq!(placeholders("<a1> <b_c-d> <a1>"), ["a1", "b_c-d"]);
        assert!(placeholders("<1a> <a b> <a").is_empty());
        assert_eq!(fill("<a><b>", |n| Some(n.to_uppercase())), "AB");
        assert_eq!(fill("x <a> y", |_| None), "x <a> y");
    }
}
