//! The generic half of the config reader: mappings walked against key tables, typed values,
//! and every problem collected with its key path and position.
//!
//! A [`Section`] is the one table of valid keys for one level of the file. Each [`Field`] names
//! a key and says how to read it, so the same table decides what is valid, dispatches the
//! reading, and feeds the "did you mean" suggestions: a key cannot be accepted without being
//! read, nor read without being accepted.

use super::Problem;
use super::yaml::{Kind, Node, Pos};
use crate::suggest::nearest;

/// A node of the document with the key path it was found at.
#[derive(Debug, Clone, Copy)]
pub(super) struct Value<'a> {
    /// The value itself.
    pub(super) node: &'a Node,
    /// Its key path, e.g. `expose.agent.mcp.port` or `harness.tools[1]`.
    pub(super) path: &'a str,
    /// Where its key starts (for a list item: where the item starts).
    pub(super) key_pos: Pos,
}

impl<'a> Value<'a> {
    /// A value at `path` whose key starts at `key_pos`.
    pub(super) fn new(node: &'a Node, path: &'a str, key_pos: Pos) -> Self {
        Value {
            node,
            path,
            key_pos,
        }
    }

    /// The document's root node.
    pub(super) fn root(node: &'a Node) -> Self {
        Value::new(node, "", node.pos)
    }
}

/// A string found in the document, with where it was found.
#[derive(Debug, Clone)]
pub(super) struct Text {
    /// The string.
    pub(super) text: String,
    /// Its key path.
    pub(super) path: String,
    /// Where it starts.
    pub(super) pos: Pos,
}

/// How one key's value is read into the target `T`.
pub(super) type ReadFn<T> = fn(&mut Reader, Value<'_>, &mut T);

/// The valid keys of one mapping.
pub(super) struct Section<T: 'static> {
    fields: &'static [Field<T>],
    unknown_help: Option<&'static str>,
}

impl<T> Section<T> {
    /// A section with these keys.
    pub(super) const fn new(fields: &'static [Field<T>]) -> Self {
        Section {
            fields,
            unknown_help: None,
        }
    }

    /// Adds a hint shown with every unknown key of this section.
    pub(super) const fn unknown_help(mut self, help: &'static str) -> Self {
        self.unknown_help = Some(help);
        self
    }

    fn field(&self, name: &str) -> Option<&Field<T>> {
        self.fields.iter().find(|field| field.name == name)
    }

    fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.fields.iter().map(|field| field.name)
    }
}

/// One valid key: its name and how its value is read.
pub(super) struct Field<T: 'static> {
    name: &'static str,
    read: Read<T>,
    agent_only: bool,
}

enum Read<T: 'static> {
    Value(ReadFn<T>),
    Section {
        section: &'static Section<T>,
        enter: Option<ReadFn<T>>,
    },
}

impl<T> Field<T> {
    /// A key whose value `read` reads.
    pub(super) const fn value(name: &'static str, read: ReadFn<T>) -> Self {
        Field {
            name,
            read: Read::Value(read),
            agent_only: false,
        }
    }

    /// A key whose value is a nested mapping read into the same target.
    pub(super) const fn section(name: &'static str, section: &'static Section<T>) -> Self {
        Field {
            name,
            read: Read::Section {
                section,
                enter: None,
            },
            agent_only: false,
        }
    }

    /// Runs `enter` when a nested section is present (even empty or null), before its keys.
    pub(super) const fn on_enter(mut self, enter: ReadFn<T>) -> Self {
        if let Read::Section { section, .. } = self.read {
            self.read = Read::Section {
                section,
                enter: Some(enter),
            };
        }
        self
    }

    /// Marks a key that only Fisk AI's agent reads: accepted, validated, and noted as ignored.
    pub(super) const fn agent_only(mut self) -> Self {
        self.agent_only = true;
        self
    }
}

/// Every valid key of the file with the section it is valid in: what lets the reader say where
/// a misplaced key belongs.
pub(super) struct KeyPlaces(Vec<(String, &'static str)>);

impl KeyPlaces {
    /// The keys of `section` and of every section nested in it.
    pub(super) fn of<T>(section: &Section<T>) -> Self {
        let mut places = Vec::new();
        collect_places(section, "", &mut places);
        KeyPlaces(places)
    }

    /// The other sections where `key` is valid, as `"key" belongs under a or under b`.
    fn belongs(&self, key: &str, parent: &str) -> Option<String> {
        let places: Vec<String> = self
            .0
            .iter()
            .filter(|(path, name)| *name == key && path != parent)
            .map(|(path, _)| match path.as_str() {
                "" => "at the top level".to_string(),
                path => format!("under {path}"),
            })
            .collect();
        (!places.is_empty()).then(|| format!("{key:?} belongs {}", places.join(" or ")))
    }

    /// The full paths of the valid key, outside `parent`, nearest to `key`.
    fn near(&self, key: &str, parent: &str) -> Option<String> {
        let elsewhere = || self.0.iter().filter(move |(path, _)| path != parent);
        let near = nearest(key, elsewhere().map(|(_, name)| *name))?;
        let paths: Vec<String> = elsewhere()
            .filter(|(_, name)| *name == near)
            .map(|(path, name)| join(path, name))
            .collect();
        Some(format!("did you mean {}?", paths.join(" or ")))
    }
}

fn collect_places<T>(section: &Section<T>, path: &str, places: &mut Vec<(String, &'static str)>) {
    for field in section.fields {
        places.push((path.to_string(), field.name));
        if let Read::Section { section, .. } = field.read {
            collect_places(section, &join(path, field.name), places);
        }
    }
}

/// `parent.key`, or `key` at the top level.
pub(super) fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// How a section path reads in a sentence.
fn place(path: &str) -> String {
    if path.is_empty() {
        "at the top level".to_string()
    } else {
        format!("in {path}")
    }
}

/// Walks the document, collecting problems and the agent-only keys it met.
pub(super) struct Reader {
    problems: Vec<Problem>,
    agent_only: Vec<String>,
    places: KeyPlaces,
}

impl Reader {
    /// A reader that knows every valid key of the file.
    pub(super) fn new(places: KeyPlaces) -> Self {
        Reader {
            problems: Vec::new(),
            agent_only: Vec::new(),
            places,
        }
    }

    /// The problems found, and the agent-only keys present (full paths, in file order).
    pub(super) fn finish(self) -> (Vec<Problem>, Vec<String>) {
        (self.problems, self.agent_only)
    }

    /// Records a problem; the returned reference lets the caller add a hint.
    /// Whether a problem was already reported at `path` or below it.
    pub(super) fn reported_within(&self, path: &str) -> bool {
        self.problems.iter().any(|problem| {
            problem
                .path
                .strip_prefix(path)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
        })
    }

    pub(super) fn problem(&mut self, path: &str, pos: Pos, message: String) -> &mut Problem {
        self.problems.push(Problem {
            path: path.to_string(),
            line: pos.line,
            column: pos.column,
            message,
            help: None,
        });
        let last = self.problems.len() - 1;
        &mut self.problems[last]
    }

    /// Records a problem with a value, at the value.
    pub(super) fn invalid(&mut self, value: Value<'_>, message: String) -> &mut Problem {
        self.problem(value.path, value.node.pos, message)
    }

    /// Records that `value` is not the `expected` kind of thing.
    fn wrong_type(&mut self, value: Value<'_>, expected: &str) {
        let subject = if value.path.is_empty() {
            "the config file"
        } else {
            value.path
        };
        let found = value.node.describe();
        self.invalid(
            value,
            format!("{subject} must be {expected}, found {found}"),
        );
    }

    /// Reads a mapping against `section` into `target`: unknown and duplicate keys are
    /// problems, known keys are read in file order. Null reads as an empty mapping. Returns
    /// `false` (after reporting it) when the value is not a mapping at all.
    pub(super) fn section<T>(
        &mut self,
        value: Value<'_>,
        section: &Section<T>,
        target: &mut T,
    ) -> bool {
        if !matches!(value.node.kind, Kind::Map(_) | Kind::Null) {
            let keys: Vec<&str> = section.names().collect();
            self.wrong_type(value, &format!("a mapping of keys ({})", keys.join(", ")));
            return false;
        }
        for (key, key_pos, node) in self.entries(value, "a mapping") {
            let path = join(value.path, key);
            match section.field(key) {
                Some(field) => self.field(field, Value::new(node, &path, key_pos), target),
                None => self.unknown_key(key, key_pos, value.path, section),
            }
        }
        true
    }

    /// Reads one known key: its value, or its nested section after the section's `enter`.
    fn field<T>(&mut self, field: &Field<T>, value: Value<'_>, target: &mut T) {
        if field.agent_only {
            self.agent_only.push(value.path.to_string());
        }
        match field.read {
            Read::Value(read) => read(self, value, target),
            Read::Section { section, enter } => {
                if let Some(enter) = enter {
                    enter(self, value, target);
                }
                self.section(value, section, target);
            }
        }
    }

    /// Reads a mapping with free-form keys (such as `hint_tags`), calling `each` per entry.
    pub(super) fn map(
        &mut self,
        value: Value<'_>,
        expected: &str,
        mut each: impl FnMut(&mut Self, &str, Value<'_>),
    ) {
        for (key, key_pos, node) in self.entries(value, expected) {
            let path = join(value.path, key);
            each(self, key, Value::new(node, &path, key_pos));
        }
    }

    /// The entries of a mapping with string keys, duplicates and non-string keys reported and
    /// skipped; null is an empty mapping, anything else a type problem.
    fn entries<'a>(&mut self, value: Value<'a>, expected: &str) -> Vec<(&'a str, Pos, &'a Node)> {
        let entries = match &value.node.kind {
            Kind::Map(entries) => entries,
            Kind::Null => return Vec::new(),
            Kind::Scalar(_) | Kind::List(_) => {
                self.wrong_type(value, expected);
                return Vec::new();
            }
        };
        let mut seen: Vec<(&'a str, Pos, &'a Node)> = Vec::with_capacity(entries.len());
        for entry in entries {
            let Kind::Scalar(key) = &entry.key.kind else {
                let message = format!(
                    "keys {} must be strings, found {}",
                    place(value.path),
                    entry.key.describe()
                );
                self.problem(value.path, entry.key.pos, message);
                continue;
            };
            if let Some((_, first, _)) = seen.iter().find(|(name, _, _)| *name == key.text) {
                let message = format!(
                    "duplicate key {:?} {} (first set on line {})",
                    key.text,
                    place(value.path),
                    first.line
                );
                self.problem(&join(value.path, &key.text), entry.key.pos, message);
                continue;
            }
            seen.push((&key.text, entry.key.pos, &entry.value));
        }
        seen
    }

    fn unknown_key<T>(&mut self, key: &str, pos: Pos, parent: &str, section: &Section<T>) {
        let mut help = self.key_hint(key, parent, section);
        if let Some(extra) = section.unknown_help {
            help = format!("{help}\n{extra}");
        }
        let message = format!("unknown key {key:?} {}", place(parent));
        self.problem(&join(parent, key), pos, message).help = Some(help);
    }

    /// The best hint for an unknown key: a near key here, the places where the exact key is
    /// valid, a near key elsewhere, or else the list of valid keys here.
    fn key_hint<T>(&self, key: &str, parent: &str, section: &Section<T>) -> String {
        nearest(key, section.names())
            .map(|near| format!("did you mean {near:?}?"))
            .or_else(|| self.places.belongs(key, parent))
            .or_else(|| self.places.near(key, parent))
            .unwrap_or_else(|| {
                let keys: Vec<&str> = section.names().collect();
                format!("valid keys {}: {}", place(parent), keys.join(", "))
            })
    }

    /// Calls `each` for every item of a list (null is an empty list).
    pub(super) fn list(
        &mut self,
        value: Value<'_>,
        expected: &str,
        mut each: impl FnMut(&mut Self, Value<'_>),
    ) {
        match &value.node.kind {
            Kind::List(items) => {
                for (index, node) in items.iter().enumerate() {
                    let path = format!("{}[{index}]", value.path);
                    each(self, Value::new(node, &path, node.pos));
                }
            }
            Kind::Null => {}
            Kind::Scalar(_) | Kind::Map(_) => self.wrong_type(value, expected),
        }
    }

    /// A string; `None` for null (unset) or a wrong type. Any scalar counts, so `port: 8080`
    /// read as a string is `"8080"`, as Fisk AI's YAML decoder does.
    pub(super) fn string(&mut self, value: Value<'_>) -> Option<String> {
        match &value.node.kind {
            Kind::Scalar(scalar) => Some(scalar.text.clone()),
            Kind::Null => None,
            Kind::List(_) | Kind::Map(_) => {
                self.wrong_type(value, "a string");
                None
            }
        }
    }

    /// A list of strings (null items read as `""`), each with its position.
    pub(super) fn strings(&mut self, value: Value<'_>) -> Vec<Text> {
        let mut texts = Vec::new();
        self.list(value, "a list of strings", |reader, item| {
            let text = match item.node.kind {
                Kind::Null => Some(String::new()),
                _ => reader.string(item),
            };
            if let Some(text) = text {
                texts.push(Text {
                    text,
                    path: item.path.to_string(),
                    pos: item.node.pos,
                });
            }
        });
        texts
    }

    /// A single string or a list of strings, read as a list.
    pub(super) fn string_or_strings(&mut self, value: Value<'_>) -> Vec<Text> {
        match &value.node.kind {
            Kind::Scalar(scalar) => {
                vec![Text {
                    text: scalar.text.clone(),
                    path: value.path.to_string(),
                    pos: value.node.pos,
                }]
            }
            Kind::Map(_) => {
                self.wrong_type(value, "a string or a list of strings");
                Vec::new()
            }
            Kind::Null | Kind::List(_) => self.strings(value),
        }
    }

    /// `true` or `false` (YAML 1.2 core spellings); `None` for null or a wrong type.
    pub(super) fn bool(&mut self, value: Value<'_>) -> Option<bool> {
        match &value.node.kind {
            Kind::Null => None,
            Kind::Scalar(scalar) if scalar.plain => match scalar.text.as_str() {
                "true" | "True" | "TRUE" => Some(true),
                "false" | "False" | "FALSE" => Some(false),
                _ => {
                    self.wrong_type(value, "true or false");
                    None
                }
            },
            _ => {
                self.wrong_type(value, "true or false");
                None
            }
        }
    }

    /// An integer (decimal, `0x` hex or `0o` octal, optional sign); `None` for null or a wrong
    /// type.
    pub(super) fn int(&mut self, value: Value<'_>) -> Option<i64> {
        match &value.node.kind {
            Kind::Null => None,
            Kind::Scalar(scalar) if scalar.plain => {
                let parsed = parse_int(&scalar.text);
                if parsed.is_none() {
                    self.wrong_type(value, "an integer");
                }
                parsed
            }
            _ => {
                self.wrong_type(value, "an integer");
                None
            }
        }
    }

    /// Any value at all (an opaque block such as a backend's `options`); only its mappings'
    /// duplicate keys are checked.
    pub(super) fn any(&mut self, value: Value<'_>) {
        match &value.node.kind {
            Kind::Map(_) => self.map(value, "a mapping", |reader, _, entry| reader.any(entry)),
            Kind::List(_) => self.list(value, "a list", |reader, item| reader.any(item)),
            Kind::Null | Kind::Scalar(_) => {}
        }
    }
}

/// A YAML 1.2 core-schema integer.
fn parse_int(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (radix, digits) = match digits.get(..2) {
        Some("0x") => (16, &digits[2..]),
        Some("0o") => (8, &digits[2..]),
        _ => (10, digits),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = i128::from_str_radix(digits, radix).ok()?;
    i64::try_from(if negative { -magnitude } else { magnitude }).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        assert_eq!(parse_int("8080"), Some(8080));
        assert_eq!(parse_int("-1"), Some(-1));
        assert_eq!(parse_int("+7"), Some(7));
        assert_eq!(parse_int("0x1F"), Some(31));
        assert_eq!(parse_int("0o17"), Some(15));
        assert_eq!(parse_int("-9223372036854775808"), Some(i64::MIN));
        for bad in [
            "",
            "-",
            "1.5",
            "1e3",
            "abc",
            "0x",
            "9223372036854775808",
            " 1",
            "1_000",
        ] {
            assert_eq!(parse_int(bad), None, "{bad}");
        }
    }
}
