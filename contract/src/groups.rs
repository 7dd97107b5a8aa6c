//! Which parts of a server a tool belongs to (`/mcp/<group>`, `--group`, `config --group`).
//!
//! A command tool's group is the first word of its command path (`stream info` is in
//! `stream`); a leaf command at the top of the application (`pub`) and a built-in tool are in
//! no group: they are served only on the whole endpoint. The rule lives here once, for the
//! runtime that serves the parts and for fiskgen's `info` that names them.

/// The group of a command with this path: its first word, when it has a word below it.
pub fn of_command(path: &[&str]) -> Option<String> {
    match path {
        [first, _, ..] if is_name(first) => Some((*first).to_string()),
        _ => None,
    }
}

/// The groups of a server's tools, each once, in the order their first tool is served.
pub fn all<'a>(paths: impl IntoIterator<Item = Option<&'a [&'a str]>>) -> Vec<String> {
    let mut groups: Vec<String> = Vec::new();
    for group in paths.into_iter().flatten().filter_map(of_command) {
        if !groups.contains(&group) {
            groups.push(group);
        }
    }
    groups
}

/// Whether `word` can name a group: it is one URL path segment as it stands (ASCII letters,
/// digits, `-`, `_`, `.`, not `.` or `..`).
pub fn is_name(word: &str) -> bool {
    !word.is_empty()
        && word != "."
        && word != ".."
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_is_the_first_word_of_a_deeper_command() {
        assert_eq!(of_command(&["stream", "info"]).as_deref(), Some("stream"));
        assert_eq!(of_command(&["kv", "watch", "all"]).as_deref(), Some("kv"));
        assert_eq!(of_command(&["pub"]), None);
        assert_eq!(of_command(&[]), None);
        assert_eq!(of_command(&["a/b", "c"]), None);
    }

    #[test]
    fn groups_are_listed_once_in_serving_order() {
        let paths: [&[&str]; 4] = [
            &["stream", "ls"],
            &["kv", "get"],
            &["stream", "info"],
            &["pub"],
        ];
        let groups = all(paths.iter().map(|p| Some(*p)).chain([None]));
        assert_eq!(groups, ["stream", "kv"]);
    }
}
