//! The `tools/list` answer, defined once: fiskgen computes it at build time from this module,
//! and a generated server serves those bytes as they are (or joins the same fragments again
//! when an operator narrows the tool set at start). See docs/runtime.md, "Listing tools".
//!
//! The answer is made of three parts, so that every page of both protocol eras is a run of
//! static bytes:
//!
//! - the **body**: a JSON array of every tool's entry, `[{...},{...}]`, with no newline (stdio
//!   frames messages by lines); a page's `tools` array is a contiguous slice of it;
//! - per page, a **tail** for each era: `]` plus `nextCursor` when more pages follow, then `}`
//!   for legacy clients, or the 2026-07-28 fields (`resultType`, `ttlMs`, `cacheScope`) first;
//! - the **cursors**: opaque strings naming pages 2..n, derived from the served set, so a cursor
//!   from another build or another narrowing is refused rather than misread
//!   ([`crate::cursor`], the codec of every list).

use serde_json::Value;

use crate::cursor::Cursors;

/// `expose.agent.mcp.page_size` when the config leaves it out: large enough that almost every
/// application is one page (clients that ignore `nextCursor`, and the Python SDK's output
/// validation, which looks at the first page only, then see every tool).
pub const DEFAULT_PAGE_SIZE: usize = 256;

/// The largest page size a config may set.
pub const MAX_PAGE_SIZE: usize = 10_000;

/// How long a 2026-07-28 client may cache a page (`ttlMs`): the list is fixed for the life of
/// the process, and a restart with other narrowing flags may change it.
pub const TTL_MS: u64 = 600_000;

/// The `outputSchema` of every command tool: the shape of its `structuredContent`, and nothing
/// a client never shows (no descriptions: the fields are documented in docs/runtime.md,
/// "Results"). One text, the same on every tool.
pub const OUTPUT_SCHEMA: &str = concat!(
    r#"{"type":"object","properties":{"#,
    r#""command":{"type":"string"},"exit_code":{"type":"integer"},"#,
    r#""output":{"type":"string"},"truncated":{"type":"boolean"},"signal":{"type":"string"}},"#,
    r#""required":["command","exit_code","output","truncated"]}"#,
);

/// One tool as `tools/list` lists it.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    /// The tool name.
    pub name: &'a str,
    /// The human title, listed once, as `annotations.title` (a top-level `title` would repeat
    /// it in every entry; clients read either).
    pub title: &'a str,
    /// The description.
    pub description: &'a str,
    /// The input schema as compact JSON text (an object).
    pub input_schema: &'a str,
    /// Whether the tool declares [`OUTPUT_SCHEMA`] (command tools when the config opts in with
    /// `output_schema: true`; their results carry `structuredContent` either way, unless
    /// structured output is switched off).
    pub output_schema: bool,
    /// `readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`: only hints that
    /// are on are sent.
    pub hints: [bool; 4],
    /// The command says it only adds to what exists (`ai:additive`): `"destructiveHint":false`
    /// is sent when the destructive hint is off (clients otherwise assume a write destroys).
    pub additive: bool,
    /// The tool runs only as a task (`tasks.required`): `"execution":{"taskSupport":"required"}`
    /// after the annotations.
    pub task_required: bool,
}

/// Why an entry cannot be listed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the input schema of tool {tool:?} is not a compact JSON object on one line: {reason}")]
pub struct EntryError {
    /// The tool.
    pub tool: String,
    /// What is wrong.
    pub reason: String,
}

/// The hint names, in the order of [`Entry::hints`] (rmcp's field order).
const HINTS: [&str; 4] = [
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
];

impl Entry<'_> {
    /// Whether the input schema can be listed as it is: a JSON object on one line (fiskgen
    /// checks this at build time; the runtime, joining entries of the same specs, trusts it).
    pub fn check(&self) -> Result<(), EntryError> {
        let error = |reason: &str| EntryError {
            tool: self.name.to_string(),
            reason: reason.to_string(),
        };
        if self.input_schema.contains(['\n', '\r']) {
            return Err(error("it contains a line break"));
        }
        match serde_json::from_str::<Value>(self.input_schema) {
            Ok(Value::Object(_)) => Ok(()),
            Ok(_) => Err(error("it is not an object")),
            Err(parse) => Err(error(&parse.to_string())),
        }
    }

    /// The entry's JSON text, keys in rmcp's order (`name`, `description`,
    /// `inputSchema`, `outputSchema`, `annotations`, then `execution`, which rmcp's `Tool` does
    /// not have), on one line when the schema passes
    /// [`Entry::check`].
    pub fn to_json(&self) -> String {
        let text = |value: &str| Value::String(value.to_string()).to_string();
        let mut out = String::with_capacity(self.input_schema.len() + self.description.len() + 96);
        out.push_str("{\"name\":");
        out.push_str(&text(self.name));
        out.push_str(",\"description\":");
        out.push_str(&text(self.description));
        out.push_str(",\"inputSchema\":");
        out.push_str(self.input_schema);
        if self.output_schema {
            out.push_str(",\"outputSchema\":");
            out.push_str(OUTPUT_SCHEMA);
        }
        out.push_str(",\"annotations\":{\"title\":");
        out.push_str(&text(self.title));
        for (index, (on, hint)) in self.hints.iter().zip(HINTS).enumerate() {
            let value = if *on {
                "true"
            } else if index == 1 && self.additive {
                "false"
            } else {
                continue;
            };
            out.push_str(",\"");
            out.push_str(hint);
            out.push_str("\":");
            out.push_str(value);
        }
        out.push('}');
        if self.task_required {
            out.push_str(",\"execution\":{\"taskSupport\":\"required\"}");
        }
        out.push('}');
        out
    }
}

/// A whole `tools/list` answer: the body and where each page lies in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    /// `[entry,entry,...]`.
    pub body: String,
    /// Where each entry ends in the body (the byte after its `}`), in serving order.
    pub ends: Vec<usize>,
    /// The pages.
    pub pages: Vec<Page>,
    /// The pages' cursors; [`Cursors::tag`] is the digest of the body.
    pub cursors: Cursors,
}

/// What a `tools/list` cursor error calls the items.
pub const WHAT: &str = "tools";

/// One page of a [`Listing`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The page's entries: `body[start..end]` (empty for an empty list).
    pub start: usize,
    /// See `start`.
    pub end: usize,
}

impl Listing {
    /// Joins entry texts (from [`Entry::to_json`]) into pages of `page_size` (at least 1).
    pub fn join<S: AsRef<str>>(entries: &[S], page_size: usize) -> Listing {
        let mut body = String::from("[");
        let mut ends = Vec::with_capacity(entries.len());
        for (index, entry) in entries.iter().enumerate() {
            if index > 0 {
                body.push(',');
            }
            body.push_str(entry.as_ref());
            ends.push(body.len());
        }
        body.push(']');
        let page_size = page_size.max(1);
        let cursors = Cursors::new(WHAT, body.as_bytes(), entries.len(), page_size);
        let page_count = cursors.pages();
        let mut pages = Vec::with_capacity(page_count);
        for number in 0..page_count {
            let range = cursors.range(number);
            let (first, last) = (range.start, range.end);
            let (start, end) = if first < last {
                // Entry `first` starts one byte after the end of the one before (its comma),
                // or after the opening bracket.
                let start = if first == 0 { 1 } else { ends[first - 1] + 1 };
                (start, ends[last - 1])
            } else {
                (1, 1)
            };
            pages.push(Page { start, end });
        }
        Listing {
            body,
            ends,
            pages,
            cursors,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str) -> String {
        Entry {
            name,
            title: name,
            description: "say \"hi\"\nthen leave",
            input_schema: r#"{"type":"object","properties":{}}"#,
            output_schema: name != "b",
            hints: [true, false, false, name == "c"],
            additive: false,
            task_required: name == "c",
        }
        .to_json()
    }

    #[test]
    fn an_entry_is_one_line_of_json_in_rmcp_key_order() {
        let text = entry("a");
        assert!(!text.contains('\n'));
        let value: Value = serde_json::from_str(&text).expect("JSON");
        let keys: Vec<&str> = value
            .as_object()
            .map(|map| map.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(keys.len(), 5, "{text}");
        assert!(
            value.get("title").is_none(),
            "the title is annotations.title only: {text}"
        );
        assert_eq!(value["annotations"]["title"], "a");
        assert_eq!(value["description"], "say \"hi\"\nthen leave");
        assert_eq!(value["annotations"]["readOnlyHint"], true);
        assert!(value["annotations"].get("destructiveHint").is_none());
        assert!(text.starts_with("{\"name\":\"a\",\"description\":"));
        let output: Value = serde_json::from_str(OUTPUT_SCHEMA).expect("output schema");
        assert_eq!(value["outputSchema"], output);
        assert!(
            serde_json::from_str::<Value>(&entry("b")).expect("JSON")["outputSchema"].is_null()
        );
        assert!(value.get("execution").is_none(), "{text}");
        let required: Value = serde_json::from_str(&entry("c")).expect("JSON");
        assert_eq!(required["execution"]["taskSupport"], "required");
    }

    #[test]
    fn a_schema_that_is_not_one_line_of_object_is_refused_with_the_tool_named() {
        for (schema, reason) in [
            ("{\n}", "line break"),
            ("[]", "not an object"),
            ("{", "EOF"),
        ] {
            let error = Entry {
                name: "x_y",
                title: "x y",
                description: "",
                input_schema: schema,
                output_schema: false,
                hints: [false; 4],
                additive: false,
                task_required: false,
            }
            .check()
            .expect_err(schema);
            assert_eq!(error.tool, "x_y");
            assert!(error.reason.contains(reason), "{error}");
        }
    }

    #[test]
    fn pages_slice_the_body_and_chain_by_cursor() {
        let entries: Vec<String> = ["a", "b", "c", "d", "e"].map(entry).to_vec();
        let listing = Listing::join(&entries, 2);
        let body: Value = serde_json::from_str(&listing.body).expect("body is a JSON array");
        assert_eq!(body.as_array().map(Vec::len), Some(5));
        assert_eq!(listing.pages.len(), 3);
        let mut names = Vec::new();
        let mut cursor: Option<String> = None;
        for (index, page) in listing.pages.iter().enumerate() {
            assert_eq!(listing.cursors.cursor(index), cursor);
            assert_eq!(listing.cursors.page(cursor.as_deref()), Ok(index));
            let text = format!("[{}]", &listing.body[page.start..page.end]);
            let value: Value = serde_json::from_str(&text).expect("a page's entries are JSON");
            for tool in value.as_array().into_iter().flatten() {
                names.push(tool["name"].as_str().unwrap_or_default().to_string());
            }
            cursor = listing.cursors.next(index);
        }
        assert_eq!(names, ["a", "b", "c", "d", "e"]);
        assert_eq!(cursor, None, "the last page has no next cursor");
        assert_eq!(Listing::join(&entries, 2), listing, "deterministic");
        let other = Listing::join(&entries[..4], 2);
        assert_ne!(
            other.cursors.cursor(1),
            listing.cursors.cursor(1),
            "cursors name the set"
        );
    }

    #[test]
    fn an_empty_list_is_one_empty_page() {
        let listing = Listing::join::<String>(&[], 10);
        assert_eq!(listing.body, "[]");
        assert_eq!(listing.pages, [Page { start: 1, end: 1 }]);
    }
}
