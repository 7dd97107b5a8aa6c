//! `tools/list` (docs/runtime.md, "Listing tools").
//!
//! fiskgen computes every entry at build time ([`ListingSpec`], from
//! `fiskgen_contract::listing`). A server narrowed at start (`--read-only`, `--tools`, ...)
//! joins the kept tools' entries once, with the same contract function. The handler answers
//! every `tools/list` from these pages through rmcp's types ([`Listing::result`]); the members
//! of an entry that rmcp's `Tool` does not carry (`execution`, for a tool that runs only as a
//! task) are kept beside the page and put back into the answer by [`Listing::complete`], on
//! every transport.

use std::borrow::Cow;
use std::sync::OnceLock;

use fiskgen_contract::cursor::Cursors;
use fiskgen_contract::listing::{self as contract, Entry};
use rmcp::ErrorData;
use rmcp::model::{CacheScope, ListToolsResult, Tool};
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
    /// Whether an entry may hold a member rmcp's `Tool` does not carry (only a task-required
    /// tool's `execution` does), so that an answer needs [`Listing::complete`]: known at start,
    /// before any page is read (a transport asks before the handler has answered).
    pub(crate) has_extras: bool,
}

#[derive(Debug)]
struct Page {
    /// The page's entries are `body[start..end]`.
    start: usize,
    end: usize,
    /// The page read the first time it is asked for.
    parsed: OnceLock<Result<Parsed, String>>,
}

/// A page through rmcp's types, with what they leave out.
#[derive(Debug)]
struct Parsed {
    tools: Vec<Tool>,
    /// Per tool name, the entry's members rmcp's `Tool` does not carry.
    extras: Vec<(String, Map<String, Value>)>,
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
                Self::compiled(spec, !task_required.is_empty())
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

    fn compiled(spec: &'static ListingSpec, has_extras: bool) -> Result<Listing, CatalogError> {
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
            pages.push(Page::new(page.start, page.end));
        }
        Ok(Listing {
            structured_output: spec.structured_output,
            output_schema: spec.output_schema,
            body: Cow::Borrowed(body),
            pages,
            cursors,
            has_extras,
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
        let listing = contract::Listing::join(&entries, page_size);
        Listing {
            structured_output,
            output_schema,
            pages: listing
                .pages
                .iter()
                .map(|page| Page::new(page.start, page.end))
                .collect(),
            body: Cow::Owned(listing.body),
            cursors: listing.cursors,
            has_extras: !task_required.is_empty(),
        }
    }

    /// The page a request's cursor names: the first without one.
    pub(crate) fn page(&self, cursor: Option<&str>) -> Result<usize, ErrorData> {
        self.cursors.page(cursor).map_err(invalid_cursor)
    }

    /// Page `index` through rmcp's types. The hints of the 2026-07-28 era (`modern`) are set
    /// here; rmcp drops nothing for legacy clients, so they are left out for them.
    pub(crate) fn result(&self, index: usize, modern: bool) -> Result<ListToolsResult, ErrorData> {
        let index = index.min(self.pages.len() - 1);
        let parsed = self.parsed(index)?;
        let mut result = ListToolsResult::with_all_items(parsed.tools.clone());
        result.next_cursor = self.cursors.next(index);
        if modern {
            result = result
                .with_ttl_ms(contract::TTL_MS)
                .with_cache_scope(CacheScope::Public);
        }
        Ok(result)
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

    /// Puts back into the `tools` of a `tools/list` result (as JSON) the members of each
    /// entry that rmcp's `Tool` left out, from the pages read so far (the handler has read the
    /// page it answered with).
    pub(crate) fn complete(&self, result: &mut Value) {
        let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) else {
            return;
        };
        let extras = self
            .pages
            .iter()
            .filter_map(|page| page.parsed.get()?.as_ref().ok())
            .flat_map(|parsed| &parsed.extras);
        for (name, members) in extras {
            let entry = tools
                .iter_mut()
                .find(|tool| tool.get("name").and_then(Value::as_str) == Some(name))
                .and_then(Value::as_object_mut);
            if let Some(entry) = entry {
                entry.extend(members.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
    }

    fn parsed(&self, index: usize) -> Result<&Parsed, ErrorData> {
        let page = &self.pages[index];
        page.parsed
            .get_or_init(|| Parsed::of(&self.body[page.start..page.end]))
            .as_ref()
            .map_err(|error| {
                ErrorData::internal_error(
                    format!("the tools/list page is not valid: {error}"),
                    None,
                )
            })
    }
}

impl Page {
    fn new(start: usize, end: usize) -> Page {
        Page {
            start,
            end,
            parsed: OnceLock::new(),
        }
    }
}

impl Parsed {
    /// Reads the entries `text` (without the array's brackets).
    fn of(text: &str) -> Result<Parsed, String> {
        let entries: Vec<Map<String, Value>> =
            serde_json::from_str(&format!("[{text}]")).map_err(|error| error.to_string())?;
        let mut parsed = Parsed {
            tools: Vec::with_capacity(entries.len()),
            extras: Vec::new(),
        };
        for mut entry in entries {
            let tool: Tool = serde_json::from_value(Value::Object(entry.clone()))
                .map_err(|error| error.to_string())?;
            let carried = serde_json::to_value(&tool).map_err(|error| error.to_string())?;
            if let Value::Object(carried) = carried {
                entry.retain(|key, _| !carried.contains_key(key));
            }
            if !entry.is_empty() {
                parsed.extras.push((tool.name.to_string(), entry));
            }
            parsed.tools.push(tool);
        }
        Ok(parsed)
    }
}

/// A cursor this server did not issue for the list it was sent to: invalid params (-32602), as
/// the specification asks, for every list.
pub(crate) fn invalid_cursor(error: fiskgen_contract::cursor::InvalidCursor) -> ErrorData {
    ErrorData::invalid_params(error.to_string(), None)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Parsed;

    #[test]
    fn an_entry_keeps_the_members_rmcps_tool_drops() -> Result<(), String> {
        let parsed = Parsed::of(
            r#"{"name":"a","inputSchema":{"type":"object"}},{"name":"b","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}"#,
        )?;
        assert_eq!(parsed.tools.len(), 2);
        assert_eq!(parsed.extras.len(), 1);
        assert_eq!(parsed.extras[0].0, "b");
        assert_eq!(
            serde_json::Value::Object(parsed.extras[0].1.clone()),
            json!({"execution": {"taskSupport": "required"}})
        );
        Ok(())
    }
}
