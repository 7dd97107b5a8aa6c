//! Which parts of a server a tool belongs to (`/mcp/<group>`, `--group`, `config --group`).
//!
//! A command tool's group is the first word of its command path (`stream info` is in
//! `stream`); a leaf command at the top of the application (`pub`) and a built-in tool are in
//! no command group. With a tag prefix (`group_tag_prefix: "area:"`), each tag under it names a
//! group too (a tool tagged `area:admin` is also in `admin`), so a tool can be in several. A
//! tool in no group is served only on the whole endpoint. The rule lives here once, for the
//! runtime that serves the parts and for fiskgen's `info` that names them.

/// The group of a command with this path: its first word, when it has a word below it.
pub fn of_command(path: &[&str]) -> Option<String> {
    match path {
        [first, _, ..] if is_name(first) => Some((*first).to_string()),
        _ => None,
    }
}

/// The groups of a tool with this command path (`None`: a built-in) and these tags: its
/// command's group, then each tag under `prefix` (the prefix taken off) that can name a group,
/// each once.
pub fn of_tool(path: Option<&[&str]>, tags: &[&str], prefix: Option<&str>) -> Vec<String> {
    let mut groups: Vec<String> = path.and_then(of_command).into_iter().collect();
    for group in tags.iter().filter_map(|tag| of_tag(tag, prefix)) {
        if !groups.contains(&group) {
            groups.push(group);
        }
    }
    groups
}

/// The group a tag names under `prefix`: the rest of the tag, when it can name a group.
pub fn of_tag(tag: &str, prefix: Option<&str>) -> Option<String> {
    let rest = tag.strip_prefix(prefix.filter(|p| !p.is_empty())?)?;
    is_name(rest).then(|| rest.to_string())
}

/// The tags under `prefix` that cannot name a group (the rest is empty or is not one URL path
/// segment): fiskgen refuses to build them, since their group would not exist.
pub fn unnamed_tags<'a>(tags: &[&'a str], prefix: Option<&str>) -> Vec<&'a str> {
    let Some(prefix) = prefix.filter(|p| !p.is_empty()) else {
        return Vec::new();
    };
    tags.iter()
        .copied()
        .filter(|tag| tag.strip_prefix(prefix).is_some_and(|rest| !is_name(rest)))
        .collect()
}

/// The groups of a server's tools (each tool's, as [`of_tool`] gives them), each once, in the
/// order their first tool is served.
pub fn all(tools: impl IntoIterator<Item = Vec<String>>) -> Vec<String> {
    let mut groups: Vec<String> = Vec::new();
    for group in tools.into_iter().flatten() {
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
        let groups = all(paths
            .iter()
            .map(|p| of_tool(Some(p), &[], None))
            .chain([of_tool(None, &[], None)]));
        assert_eq!(groups, ["stream", "kv"]);
    }

    #[test]
    fn tags_under_the_prefix_are_groups_too() {
        let prefix = Some("area:");
        assert_eq!(
            of_tool(
                Some(&["stream", "rm"]),
                &["area:admin", "impact:rw", "area:stream"],
                prefix
            ),
            ["stream", "admin"]
        );
        assert_eq!(of_tool(Some(&["pub"]), &["area:core"], prefix), ["core"]);
        assert_eq!(of_tool(None, &["area:admin"], None), Vec::<String>::new());
        assert_eq!(
            of_tool(None, &["area:admin"], Some("")),
            Vec::<String>::new()
        );
        assert_eq!(of_tag("area:", prefix), None);
        assert_eq!(
            unnamed_tags(&["area:a/b", "area:", "area:ok", "other:x/y"], prefix),
            ["area:a/b", "area:"]
        );
        assert!(unnamed_tags(&["area:a/b"], None).is_empty());
    }
}
