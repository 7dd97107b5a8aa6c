//! A YAML document as a small tree whose nodes remember where they start.
//!
//! Built from `saphyr-parser` events rather than a ready-made document type so that a mapping
//! keeps every entry in file order, duplicates included (the reader reports them), and so that
//! alias expansion and nesting depth stay bounded whatever the input.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span, Tag};

/// Most nodes one document may expand to (aliases included): far above any real config file,
/// low enough that a "billion laughs" document fails fast.
const MAX_NODES: usize = 100_000;

/// Deepest nesting accepted, which also bounds every recursion over the tree.
const MAX_DEPTH: usize = 128;

/// A position in the file: 1-based line and 1-based column (in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(super) struct Pos {
    /// 1-based line.
    pub(super) line: usize,
    /// 1-based column, counted in characters.
    pub(super) column: usize,
}

impl Pos {
    fn of(span: &Span) -> Pos {
        Pos {
            line: span.start.line(),
            column: span.start.col() + 1,
        }
    }
}

/// One node of the document.
#[derive(Debug, Clone)]
pub(super) struct Node {
    /// Where the node starts.
    pub(super) pos: Pos,
    /// What the node is.
    pub(super) kind: Kind,
}

/// The shape of a node.
#[derive(Debug, Clone)]
pub(super) enum Kind {
    /// `~`, `null`, or nothing at all.
    Null,
    /// Any other scalar, with its text as written.
    Scalar(Scalar),
    /// A sequence.
    List(Vec<Node>),
    /// A mapping, entries in file order, duplicates kept.
    Map(Vec<Entry>),
}

/// A scalar's text and whether it was written plain (unquoted, untagged), which is the only
/// form that may stand for a number or a boolean.
#[derive(Debug, Clone)]
pub(super) struct Scalar {
    /// The scalar's value after YAML unescaping and folding.
    pub(super) text: String,
    /// Written without quotes, block style or a `!!str` tag.
    pub(super) plain: bool,
}

/// One `key: value` pair of a mapping.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    /// The key node.
    pub(super) key: Node,
    /// The value node.
    pub(super) value: Node,
}

impl Node {
    /// `~`, `null`, or nothing at all.
    pub(super) fn is_null(&self) -> bool {
        matches!(self.kind, Kind::Null)
    }

    /// A short description of what the node is, for "found ..." in messages.
    pub(super) fn describe(&self) -> String {
        match &self.kind {
            Kind::Null => "nothing (null)".to_string(),
            Kind::Scalar(scalar) => format!("{:?}", shorten(&scalar.text)),
            Kind::List(_) => "a list".to_string(),
            Kind::Map(_) => "a mapping".to_string(),
        }
    }
}

/// At most 40 characters of `text`, for quoting in messages.
fn shorten(text: &str) -> String {
    if text.chars().count() <= 40 {
        return text.to_string();
    }
    let mut short: String = text.chars().take(39).collect();
    short.push('…');
    short
}

/// Why a text is not a usable YAML document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct YamlError {
    /// Where the parser stopped.
    pub(super) pos: Pos,
    /// What it found.
    pub(super) message: String,
}

/// Parses `text` as one YAML document; `None` for an empty stream (no document at all).
pub(super) fn load(text: &str) -> Result<Option<Node>, YamlError> {
    let mut builder = Builder::default();
    for event in Parser::new_from_str(text) {
        let (event, span) = event.map_err(|error| YamlError {
            pos: Pos {
                line: error.marker().line(),
                column: error.marker().col() + 1,
            },
            message: format!("invalid YAML: {}", error.info()),
        })?;
        builder.event(event, &span)?;
    }
    Ok(builder.root)
}

/// A collection being built.
enum Open {
    List {
        pos: Pos,
        anchor: usize,
        items: Vec<Node>,
    },
    Map {
        pos: Pos,
        anchor: usize,
        entries: Vec<Entry>,
        key: Option<Node>,
    },
}

/// Turns the event stream into a tree.
#[derive(Default)]
struct Builder {
    open: Vec<Open>,
    anchors: HashMap<usize, Node>,
    documents: usize,
    nodes: usize,
    root: Option<Node>,
}

impl Builder {
    fn event(&mut self, event: Event<'_>, span: &Span) -> Result<(), YamlError> {
        let pos = Pos::of(span);
        match event {
            Event::DocumentStart(_) => self.start_document(pos),
            Event::Scalar(text, style, anchor, tag) => {
                let node = scalar_node(pos, text.into_owned(), style, tag.as_deref());
                self.finish(node, anchor)
            }
            Event::Alias(anchor) => self.alias(anchor, pos),
            Event::SequenceStart(anchor, _) => self.open(
                Open::List {
                    pos,
                    anchor,
                    items: Vec::new(),
                },
                pos,
            ),
            Event::MappingStart(anchor, _) => self.open(
                Open::Map {
                    pos,
                    anchor,
                    entries: Vec::new(),
                    key: None,
                },
                pos,
            ),
            Event::SequenceEnd | Event::MappingEnd => self.close(),
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => Ok(()),
        }
    }

    fn start_document(&mut self, pos: Pos) -> Result<(), YamlError> {
        self.documents += 1;
        if self.documents > 1 {
            return Err(YamlError {
                pos,
                message: "a config file holds one YAML document, but a second one starts here"
                    .to_string(),
            });
        }
        Ok(())
    }

    fn open(&mut self, collection: Open, pos: Pos) -> Result<(), YamlError> {
        if self.open.len() >= MAX_DEPTH {
            return Err(YamlError {
                pos,
                message: format!("nesting deeper than {MAX_DEPTH} levels"),
            });
        }
        self.open.push(collection);
        Ok(())
    }

    fn close(&mut self) -> Result<(), YamlError> {
        let (node, anchor) = match self.open.pop() {
            Some(Open::List { pos, anchor, items }) => (
                Node {
                    pos,
                    kind: Kind::List(items),
                },
                anchor,
            ),
            Some(Open::Map {
                pos,
                anchor,
                entries,
                ..
            }) => (
                Node {
                    pos,
                    kind: Kind::Map(merge(entries)?),
                },
                anchor,
            ),
            None => return Ok(()),
        };
        self.finish(node, anchor)
    }

    fn alias(&mut self, anchor: usize, pos: Pos) -> Result<(), YamlError> {
        let Some(target) = self.anchors.get(&anchor) else {
            return Err(YamlError {
                pos,
                message: "this alias refers to a node that contains it".to_string(),
            });
        };
        let mut node = target.clone();
        node.pos = pos;
        self.count(count_nodes(&node), pos)?;
        self.place(node);
        Ok(())
    }

    /// Records a completed node under its anchor (if any) and hangs it in its parent.
    fn finish(&mut self, node: Node, anchor: usize) -> Result<(), YamlError> {
        self.count(1, node.pos)?;
        if anchor != 0 {
            self.anchors.insert(anchor, node.clone());
        }
        self.place(node);
        Ok(())
    }

    fn count(&mut self, added: usize, pos: Pos) -> Result<(), YamlError> {
        self.nodes += added;
        if self.nodes > MAX_NODES {
            return Err(YamlError {
                pos,
                message: format!("the document expands to more than {MAX_NODES} nodes"),
            });
        }
        Ok(())
    }

    fn place(&mut self, node: Node) {
        match self.open.last_mut() {
            None => self.root = Some(node),
            Some(Open::List { items, .. }) => items.push(node),
            Some(Open::Map { entries, key, .. }) => match key.take() {
                None => *key = Some(node),
                Some(key) => entries.push(Entry { key, value: node }),
            },
        }
    }
}

/// Whether `node` is the merge key `<<` (plain, as YAML 1.1 merge keys are written).
fn is_merge_key(node: &Node) -> bool {
    matches!(&node.kind, Kind::Scalar(scalar) if scalar.plain && scalar.text == "<<")
}

/// The key text an entry is matched by when merging (scalars only).
fn key_text(node: &Node) -> Option<&str> {
    match &node.kind {
        Kind::Scalar(scalar) => Some(&scalar.text),
        _ => None,
    }
}

/// Resolves YAML merge keys (`<<: *base`, `<<: [*a, *b]`) as `fisk mcp`'s YAML library does:
/// the merged mappings' entries come in where the `<<` is, keys the mapping sets itself win,
/// and of several merged mappings the earlier one wins. Aliases were expanded (and counted
/// against the node limit) already, so merging cannot grow the document unboundedly.
fn merge(entries: Vec<Entry>) -> Result<Vec<Entry>, YamlError> {
    if !entries.iter().any(|entry| is_merge_key(&entry.key)) {
        return Ok(entries);
    }
    let explicit: Vec<String> = entries
        .iter()
        .filter(|entry| !is_merge_key(&entry.key))
        .filter_map(|entry| key_text(&entry.key).map(str::to_string))
        .collect();
    let mut merged_keys: Vec<String> = Vec::new();
    let mut out = Vec::with_capacity(entries.len());
    for entry in entries {
        if !is_merge_key(&entry.key) {
            out.push(entry);
            continue;
        }
        let sources = match entry.value.kind {
            Kind::Map(map) => vec![map],
            Kind::List(items) => {
                let mut maps = Vec::with_capacity(items.len());
                for item in items {
                    match item.kind {
                        Kind::Map(map) => maps.push(map),
                        _ => return Err(merge_error(item.pos)),
                    }
                }
                maps
            }
            _ => return Err(merge_error(entry.value.pos)),
        };
        for source in sources {
            for merged in source {
                let Some(text) = key_text(&merged.key).map(str::to_string) else {
                    out.push(merged);
                    continue;
                };
                if explicit.contains(&text) || merged_keys.contains(&text) {
                    continue;
                }
                merged_keys.push(text);
                out.push(merged);
            }
        }
    }
    Ok(out)
}

fn merge_error(pos: Pos) -> YamlError {
    YamlError {
        pos,
        message: "a merge key (<<) takes a mapping or a list of mappings (usually aliases such \
                  as <<: *base)"
            .to_string(),
    }
}

fn scalar_node(pos: Pos, text: String, style: ScalarStyle, tag: Option<&Tag>) -> Node {
    let string_tag = tag.is_some_and(|tag| tag.is_yaml_core_schema() && tag.suffix == "str");
    let plain = style == ScalarStyle::Plain && !string_tag;
    let null = plain && matches!(text.as_str(), "" | "~" | "null" | "Null" | "NULL");
    let kind = if null {
        Kind::Null
    } else {
        Kind::Scalar(Scalar { text, plain })
    };
    Node { pos, kind }
}

fn count_nodes(node: &Node) -> usize {
    match &node.kind {
        Kind::Null | Kind::Scalar(_) => 1,
        Kind::List(items) => 1 + items.iter().map(count_nodes).sum::<usize>(),
        Kind::Map(entries) => {
            1 + entries
                .iter()
                .map(|e| count_nodes(&e.key) + count_nodes(&e.value))
                .sum::<usize>()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(text: &str) -> Node {
        match load(text) {
            Ok(Some(node)) => node,
            other => panic!("expected a document, got {other:?}"),
        }
    }

    fn error(text: &str) -> YamlError {
        match load(text) {
            Err(error) => error,
            Ok(node) => panic!("expected an error, got {node:?}"),
        }
    }

    #[test]
    fn positions_are_one_based() {
        let node = root("a: 1\nb:\n  - x\n");
        let Kind::Map(entries) = &node.kind else {
            panic!("not a map")
        };
        assert_eq!(entries[1].key.pos, Pos { line: 2, column: 1 });
        let Kind::List(items) = &entries[1].value.kind else {
            panic!("not a list")
        };
        assert_eq!(items[0].pos, Pos { line: 3, column: 5 });
    }

    #[test]
    fn duplicates_are_kept_in_order() {
        let node = root("a: 1\na: 2\n");
        let Kind::Map(entries) = &node.kind else {
            panic!("not a map")
        };
        assert_eq!(entries.len(), 2);
    }

    #[test]
    fn nulls_and_plainness() {
        let node = root("a:\nb: ~\nc: \"\"\nd: '5'\ne: !!str 5\nf: 5\n");
        let Kind::Map(entries) = &node.kind else {
            panic!("not a map")
        };
        let kinds: Vec<String> = entries
            .iter()
            .map(|e| match &e.value.kind {
                Kind::Null => "null".to_string(),
                Kind::Scalar(s) => format!("{}:{}", s.text, s.plain),
                _ => "other".to_string(),
            })
            .collect();
        assert_eq!(
            kinds,
            ["null", "null", ":false", "5:false", "5:false", "5:true"]
        );
    }

    #[test]
    fn aliases_expand_at_their_own_position() {
        let node = root("a: &x [1, 2]\nb: *x\n");
        let Kind::Map(entries) = &node.kind else {
            panic!("not a map")
        };
        assert_eq!(entries[1].value.pos, Pos { line: 2, column: 4 });
        assert!(matches!(&entries[1].value.kind, Kind::List(items) if items.len() == 2));
    }

    fn keys_and_values(node: &Node) -> Vec<(String, String)> {
        let Kind::Map(entries) = &node.kind else {
            panic!("not a map")
        };
        entries
            .iter()
            .map(|e| {
                let text = |n: &Node| match &n.kind {
                    Kind::Scalar(s) => s.text.clone(),
                    Kind::Null => "~".into(),
                    Kind::List(_) => "[..]".into(),
                    Kind::Map(_) => "{..}".into(),
                };
                (text(&e.key), text(&e.value))
            })
            .collect()
    }

    #[test]
    fn merge_keys_bring_in_entries_the_mapping_does_not_set() {
        let node = root(
            "base: &b {port: 1, address: a}
mcp:
  <<: *b
  port: 2
",
        );
        let Kind::Map(entries) = &node.kind else {
            panic!("not a map")
        };
        assert_eq!(
            keys_and_values(&entries[1].value),
            [("address".into(), "a".into()), ("port".into(), "2".into())]
        );
        // Several sources: the earlier one wins; the mapping's own keys win over all.
        let node = root(
            "a: &a {x: 1, y: 1}
b: &b {y: 2, z: 2}
c:
  <<: [*a, *b]
  z: 3
",
        );
        let Kind::Map(entries) = &node.kind else {
            panic!("not a map")
        };
        assert_eq!(
            keys_and_values(&entries[2].value),
            [
                ("x".into(), "1".into()),
                ("y".into(), "1".into()),
                ("z".into(), "3".into())
            ]
        );
        let error = error(
            "a: &a [1]
b:
  <<: *a
",
        );
        assert!(error.message.contains("merge key"), "{error:?}");
        // A quoted "<<" is an ordinary key.
        let node = root("\"<<\": 1\n");
        assert_eq!(keys_and_values(&node), [("<<".into(), "1".into())]);
    }

    #[test]
    fn empty_streams_have_no_document() {
        assert!(matches!(load(""), Ok(None)));
        assert!(matches!(load("# only a comment\n"), Ok(None)));
    }

    #[test]
    fn syntax_errors_carry_the_parser_position() {
        let error = error("a: 1\na: 2\n  b: 3\n");
        assert_eq!(error.pos, Pos { line: 3, column: 4 });
        assert_eq!(
            error.message,
            "invalid YAML: mapping values are not allowed in this context"
        );
    }

    #[test]
    fn a_second_document_is_refused() {
        let error = error("a: 1\n---\nb: 2\n");
        assert_eq!(error.pos.line, 2);
    }

    #[test]
    fn alias_bombs_and_deep_nesting_are_refused() {
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for level in 1..8 {
            let prev = level - 1;
            bomb.push_str(&format!(
                "a{level}: &a{level} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
            ));
        }
        assert!(error(&bomb).message.contains("more than 100000 nodes"));
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(error(&deep).message.contains("nesting deeper"));
    }
}
