//! `tools/list` (docs/runtime.md, "Listing tools").
//!
//! fiskgen computes every entry at build time ([`ListingSpec`], from
//! `fiskgen_contract::listing`). A server narrowed at start (`--read-only`, `--tools`, ...)
//! joins the kept tools' entries once, with the same contract function. The handler answers
//! every `tools/list` through rmcp's types ([`Listing::result`]) with the page it chose in the
//! answer's `_meta` and no tools; the transports write the answer with that page's entries, as
//! computed, in place of the empty list ([`Listing::expand`]). rmcp's `Tool` cannot carry
//! bytes computed in advance (nor `execution`), and reading the pages into it would cost every
//! server a parse at start and a serialization per list.

use std::borrow::Cow;

use fiskgen_contract::cursor::Cursors;
use fiskgen_contract::listing::{self as contract, Entry};
use rmcp::ErrorData;
use rmcp::model::{CacheScope, ListToolsResult, MetaObject, Tool};
use serde_json::{Map, Value};

use crate::mcp::error::CatalogError;
use crate::spec::app::{AppSpec, Run};
use crate::spec::listing::ListingSpec;

/// The served `tools/list`.
#[derive(Debug)]
pub(crate) struct Listing {
    /// Whether command tools return structured output.
    pub(crate) structured_output: bool,
    /// Whether command tools declare it (`outputSchema`) in their entries.
    pub(crate) output_schema: bool,
    /// Every entry, as a JSON array.
    body: Cow<'static, str>,
    pages: Vec<Page>,
    /// The pages' cursors (the codec of every list).
    cursors: Cursors,
}

/// The `_meta` member of a `tools/list` answer, as the handler leaves it, that names the page
/// whose entries the transport writes in place of the answer's empty `tools`. It never reaches
/// a client.
pub(crate) const PAGE_KEY: &str = "fiskgen/page";

#[derive(Debug)]
struct Page {
    /// The page's entries are `body[start..end]`.
    start: usize,
    end: usize,
}

impl Listing {
    /// The listing of `app`: the compiled-in one when `app` serves every tool it was built
    /// with, else the kept tools' entries joined once now.
    /// `task_required` names the tools that run only as tasks in this run: the built-in
    /// `tasks.required`, or none when tasks are off (`--no-tasks`), which also rejoins.
    pub(crate) fn new(app: &AppSpec, task_required: &[&str]) -> Result<Listing, CatalogError> {
        let built_required = app.settings.tasks.map_or(&[][..], |tasks| tasks.required);
        match app.listing {
            Some(spec) if spec.tools == app.tools.len() && task_required == built_required => {
                Self::compiled(spec)
            }
            Some(spec) => Ok(Self::joined(
                app,
                (spec.structured_output, spec.output_schema),
                spec.page_size,
                task_required,
            )),
            None => Ok(Self::joined(
                app,
                (true, false),
                contract::DEFAULT_PAGE_SIZE,
                task_required,
            )),
        }
    }

    fn compiled(spec: &'static ListingSpec) -> Result<Listing, CatalogError> {
        let body = spec.body;
        let cursors = Cursors::tagged(contract::WHAT, spec.cursor_tag, spec.tools, spec.page_size);
        if spec.pages.is_empty() {
            return Err(CatalogError::NoPage);
        }
        if cursors.pages() != spec.pages.len() {
            return Err(CatalogError::PageCount {
                pages: spec.pages.len(),
                tools: spec.tools,
                page_size: spec.page_size,
            });
        }
        let mut pages = Vec::with_capacity(spec.pages.len());
        for (index, page) in spec.pages.iter().enumerate() {
            let fits = page.start <= page.end
                && page.end < body.len()
                && body.is_char_boundary(page.start)
                && body.is_char_boundary(page.end);
            if !fits {
                return Err(CatalogError::PageOutside { page: index + 1 });
            }
            pages.push(Page {
                start: page.start,
                end: page.end,
            });
        }
        Ok(Listing {
            structured_output: spec.structured_output,
            output_schema: spec.output_schema,
            body: Cow::Borrowed(body),
            pages,
            cursors,
        })
    }

    /// Joins the entries of `app`'s tools; `(structured_output, output_schema)`: whether command
    /// tools return structured output, and whether their entries declare it.
    fn joined(
        app: &AppSpec,
        (structured_output, output_schema): (bool, bool),
        page_size: usize,
        task_required: &[&str],
    ) -> Listing {
        // The compiled-in schemas are pretty JSON files; an entry carries them compact, with
        // sorted keys, exactly as fiskgen wrote the precomputed answer.
        let schemas: Vec<String> = app
            .tools
            .iter()
            .map(
                |spec| match serde_json::from_str::<serde_json::Value>(spec.input_schema) {
                    Ok(value) => fiskgen_contract::canonical::to_json(&value),
                    Err(_) => spec.input_schema.to_string(),
                },
            )
            .collect();
        let entries: Vec<String> = app
            .tools
            .iter()
            .zip(&schemas)
            .map(|(spec, schema)| {
                Entry {
                    name: spec.name,
                    title: spec.title,
                    description: spec.description,
                    input_schema: schema,
                    output_schema: output_schema && matches!(spec.run, Run::Command(_)),
                    hints: [
                        spec.hints.read_only,
                        spec.hints.destructive,
                        spec.hints.idempotent,
                        spec.hints.open_world,
                    ],
                    additive: spec.hints.additive,
                    task_required: task_required.contains(&spec.name),
                }
                .to_json()
            })
            .collect();
        Self::of(
            contract::Listing::join(&entries, page_size),
            structured_output,
            output_schema,
        )
    }

    /// Serves `listing`, joined at start.
    fn of(listing: contract::Listing, structured_output: bool, output_schema: bool) -> Listing {
        Listing {
            structured_output,
            output_schema,
            pages: listing
                .pages
                .iter()
                .map(|page| Page {
                    start: page.start,
                    end: page.end,
                })
                .collect(),
            body: Cow::Owned(listing.body),
            cursors: listing.cursors,
        }
    }

    /// The page a request's cursor names: the first without one.
    pub(crate) fn page(&self, cursor: Option<&str>) -> Result<usize, ErrorData> {
        self.cursors.page(cursor).map_err(invalid_cursor)
    }

    /// The answer with page `index`, through rmcp's types: no tools, and the page named in
    /// its `_meta` ([`PAGE_KEY`]) for the transport to write ([`Listing::expand`]). The hints
    /// of the 2026-07-28 era (`modern`) are set here; rmcp drops nothing for legacy clients,
    /// so they are left out for them.
    pub(crate) fn result(&self, index: usize, modern: bool) -> ListToolsResult {
        let index = index.min(self.pages.len() - 1);
        let mut meta = MetaObject::default();
        meta.0.insert(PAGE_KEY.to_string(), Value::from(index));
        let mut result = ListToolsResult::with_all_items(Vec::new());
        result.meta = Some(meta);
        result.next_cursor = self.cursors.next(index);
        if modern {
            result = result
                .with_ttl_ms(contract::TTL_MS)
                .with_cache_scope(CacheScope::Public);
        }
        result
    }

    /// `tools` as a whole list (catalog mode's fixed tools), with the hints of the 2026-07-28
    /// era for `modern` clients as [`Listing::result`] sets them.
    pub(crate) fn fixed(&self, tools: &[Tool], modern: bool) -> ListToolsResult {
        let result = ListToolsResult::with_all_items(tools.to_vec());
        if modern {
            result
                .with_ttl_ms(contract::TTL_MS)
                .with_cache_scope(CacheScope::Public)
        } else {
            result
        }
    }

    /// `message`, one JSON-RPC message as rmcp wrote it, with the page's entries in place of
    /// the empty `tools` if it is an answer of [`Listing::result`]; `None` for any other
    /// message (which the transport sends as it is). Only a message that holds [`PAGE_KEY`]
    /// is read at all.
    pub(crate) fn expand(&self, message: &str) -> Option<String> {
        if !message.contains(PAGE_KEY) {
            return None;
        }
        let mut message: Map<String, Value> = serde_json::from_str(message).ok()?;
        let result = message.get_mut("result")?.as_object_mut()?;
        if !result.get("tools")?.as_array()?.is_empty() {
            return None;
        }
        let meta = result.get_mut("_meta")?.as_object_mut()?;
        let index = usize::try_from(meta.get(PAGE_KEY)?.as_u64()?).ok()?;
        let page = self.pages.get(index)?;
        meta.remove(PAGE_KEY);
        if meta.is_empty() {
            result.remove("_meta");
        }
        result.remove("tools");
        let id = serde_json::to_string(message.get("id")?).ok()?;
        let rest = serde_json::to_string(message.get("result")?).ok()?;
        let entries = &self.body[page.start..page.end];
        let mut out = String::with_capacity(entries.len() + id.len() + rest.len() + 48);
        out.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
        out.push_str(&id);
        out.push_str(",\"result\":{\"tools\":[");
        out.push_str(entries);
        out.push(']');
        // `rest` is the result's other members as an object: `{}`, or `{"nextCursor":...}`.
        if rest.len() > 2 {
            out.push(',');
            out.push_str(&rest[1..]);
        } else {
            out.push('}');
        }
        out.push('}');
        Some(out)
    }
}

/// A cursor this server did not issue for the list it was sent to: invalid params (-32602), as
/// the specification asks, for every list.
pub(crate) fn invalid_cursor(error: fiskgen_contract::cursor::InvalidCursor) -> ErrorData {
    ErrorData::invalid_params(error.to_string(), None)
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ServerJsonRpcMessage, ServerResult};
    use serde_json::{Value, json};

    use super::{Listing, contract};

    /// Three entries, two to a page.
    fn listing() -> Listing {
        let entries = [
            r#"{"name":"a","inputSchema":{"type":"object"}}"#,
            r#"{"name":"b","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}"#,
            r#"{"name":"c","inputSchema":{"type":"object"}}"#,
        ];
        Listing::of(contract::Listing::join(&entries, 2), true, false)
    }

    /// The answer with page `index` as rmcp writes it, then as the client gets it.
    fn answered(listing: &Listing, index: usize, modern: bool) -> Value {
        let result = ServerResult::ListToolsResult(listing.result(index, modern));
        let message =
            ServerJsonRpcMessage::response(result, rmcp::model::NumberOrString::Number(7));
        let written = serde_json::to_string(&message).expect("serializes");
        let expanded = listing.expand(&written).expect("a list's answer expands");
        serde_json::from_str(&expanded).expect("the expanded answer is JSON")
    }

    #[test]
    fn an_answer_carries_its_pages_entries_as_computed_with_every_member() {
        let listing = listing();
        let first = answered(&listing, 0, false);
        assert_eq!(first["jsonrpc"], "2.0");
        assert_eq!(first["id"], 7);
        let tools = first["result"]["tools"].as_array().expect("tools");
        let names: Vec<&str> = tools
            .iter()
            .filter_map(|tool| tool["name"].as_str())
            .collect();
        assert_eq!(names, ["a", "b"]);
        // A member rmcp's `Tool` has no field for is kept.
        assert_eq!(tools[1]["execution"], json!({"taskSupport": "required"}));
        // The page's name never reaches the client; the cursor does.
        assert!(first["result"].get("_meta").is_none(), "{first}");
        let cursor = first["result"]["nextCursor"]
            .as_str()
            .expect("a next cursor");
        assert_eq!(listing.page(Some(cursor)).expect("our cursor"), 1);

        let last = answered(&listing, 1, true);
        let tools = last["result"]["tools"].as_array().expect("tools");
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0]["name"], "c");
        assert!(last["result"].get("nextCursor").is_none(), "{last}");
        // The 2026-07-28 era's members stay.
        assert!(last["result"]["ttlMs"].is_u64(), "{last}");
        assert_eq!(last["result"]["cacheScope"], "public");
    }

    #[test]
    fn only_a_lists_answer_is_expanded() {
        let listing = listing();
        for message in [
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"fiskgen/page"}]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"fiskgen/page":0},"tools":[{"name":"x"}]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"fiskgen/page":9},"tools":[]}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#,
            "not json fiskgen/page",
        ] {
            assert_eq!(listing.expand(message), None, "{message}");
        }
    }
}
