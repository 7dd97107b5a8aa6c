//! `tools/list` as bytes (docs/runtime.md, "Listing tools").
//!
//! fiskgen computes the whole answer at build time ([`ListingSpec`], from
//! `fiskgen_contract::listing`): every page of both eras is a run of static text, and serving
//! one writes the JSON-RPC envelope around it. A server narrowed at start
//! (`--read-only`, `--tools`, ...) builds the kept tools' entries once, with the same contract
//! function that built them at build time, and serves those bytes from then on.
//!
//! Over HTTP and stdio the bytes go out before rmcp sees the request, where the request is one
//! rmcp would answer ([`crate::transport::list_http`], [`crate::transport::list_stdio`]); every
//! other `tools/list` reaches the handler, which answers from the same pages through rmcp's
//! types.

use std::sync::OnceLock;

use axum::body::Bytes;
use fiskgen_contract::cursor::Cursors;
use fiskgen_contract::listing::{self as contract, Entry, PAGE_HEAD};
use rmcp::ErrorData;
use std::borrow::Cow;

use rmcp::model::{
    CacheScope, ClientCapabilities, Implementation, JsonRpcVersion2_0, ListToolsResult,
    ProtocolVersion, RequestId, RequestMetaObject, Tool,
};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::contract::listing::ListingSpec;
use crate::contract::spec::{AppSpec, Run};
use crate::gzip::Gzipped;
use crate::mcp::error::CatalogError;

/// The protocol era of a request, which decides a page's tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// `initialize`-based (2024-11-05 to 2025-11-25).
    Legacy,
    /// 2026-07-28.
    Modern,
}

/// The served `tools/list`.
#[derive(Debug)]
pub(crate) struct Listing {
    /// Whether command tools declare and return structured output.
    pub(crate) structured_output: bool,
    body: &'static str,
    pages: Vec<Page>,
    /// The pages' cursors (the codec of every list).
    cursors: Cursors,
    /// Each page's fixed part gzipped, per era ([`Era`] as the index), the first time a client
    /// that accepts gzip asks for it.
    gzipped: &'static [[OnceLock<Gzipped>; 2]],
}

/// The empty gzip slots of `pages` pages (leaked once, as the body is: they are served from).
fn gzip_slots(pages: usize) -> &'static [[OnceLock<Gzipped>; 2]] {
    let slots: Vec<[OnceLock<Gzipped>; 2]> = (0..pages).map(|_| Default::default()).collect();
    Box::leak(slots.into_boxed_slice())
}

#[derive(Debug)]
struct Page {
    start: usize,
    end: usize,
    legacy_tail: &'static str,
    modern_tail: &'static str,
    /// The page through rmcp's types, for the handler; parsed the first time it is needed.
    parsed: OnceLock<Result<Vec<Tool>, String>>,
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
                spec.structured_output,
                spec.page_size,
                task_required,
            )),
            None => Ok(Self::joined(
                app,
                true,
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
                legacy_tail: page.legacy_tail,
                modern_tail: page.modern_tail,
                parsed: OnceLock::new(),
            });
        }
        Ok(Listing {
            structured_output: spec.structured_output,
            body,
            gzipped: gzip_slots(pages.len()),
            pages,
            cursors,
        })
    }

    /// Joins the entries of `app`'s tools. The text lives as long as the process (it is the
    /// answer from now on), so it is leaked once rather than reference-counted per request.
    fn joined(
        app: &AppSpec,
        structured_output: bool,
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
                    output_schema: structured_output && matches!(spec.run, Run::Command(_)),
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
        let leak = |text: String| -> &'static str { Box::leak(text.into_boxed_str()) };
        let pages: Vec<Page> = listing
            .pages
            .into_iter()
            .map(|page| Page {
                start: page.start,
                end: page.end,
                legacy_tail: leak(page.legacy_tail),
                modern_tail: leak(page.modern_tail),
                parsed: OnceLock::new(),
            })
            .collect();
        Listing {
            structured_output,
            body: leak(listing.body),
            gzipped: gzip_slots(pages.len()),
            pages,
            cursors: listing.cursors,
        }
    }

    /// The page a request's cursor names: the first without one.
    pub(crate) fn page(&self, cursor: Option<&str>) -> Result<usize, ErrorData> {
        self.cursors.page(cursor).map_err(invalid_cursor)
    }

    /// The whole JSON-RPC response to `tools/list` with `id` for page `index`, as parts to
    /// write in order (no newline).
    pub(crate) fn response(&self, id: &RequestId, index: usize, era: Era) -> Answer {
        let index = index.min(self.pages.len() - 1);
        let page = &self.pages[index];
        let id = serde_json::to_string(id).unwrap_or_else(|_| "null".to_string());
        let tail = match era {
            Era::Legacy => page.legacy_tail,
            Era::Modern => page.modern_tail,
        };
        Answer {
            head: Bytes::from(format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{PAGE_HEAD}"
            )),
            rest: [
                &self.body.as_bytes()[page.start..page.end],
                tail.as_bytes(),
                b"}",
            ],
            gzipped: &self.gzipped[index][era as usize],
        }
    }

    /// Page `index` through rmcp's types, for the handler (requests the fast paths leave to
    /// rmcp). The hints of the 2026-07-28 era are set here; rmcp drops nothing for legacy
    /// clients, so they are left out for them.
    pub(crate) fn result(&self, index: usize, era: Era) -> Result<ListToolsResult, ErrorData> {
        let page = &self.pages[index.min(self.pages.len() - 1)];
        let tools = page
            .parsed
            .get_or_init(|| {
                let text = format!("[{}]", &self.body[page.start..page.end]);
                serde_json::from_str::<Vec<Tool>>(&text).map_err(|error| error.to_string())
            })
            .as_ref()
            .map_err(|error| {
                ErrorData::internal_error(
                    format!("the tools/list page is not valid: {error}"),
                    None,
                )
            })?;
        let mut result = ListToolsResult::with_all_items(tools.clone());
        result.next_cursor = self.cursors.next(index.min(self.pages.len() - 1));
        if era == Era::Modern {
            result = result
                .with_ttl_ms(contract::TTL_MS)
                .with_cache_scope(CacheScope::Public);
        }
        Ok(result)
    }
}

/// A `tools/list` response in parts: the head, which names the request, then the page and its
/// tail, which are the same for every request and never change while the server runs (the
/// stdio writer hands them to the pipe by reference: crate::transport::stdout).
pub(crate) struct Answer {
    pub(crate) head: Bytes,
    pub(crate) rest: [&'static [u8]; 3],
    /// The rest gzipped, once made.
    gzipped: &'static OnceLock<Gzipped>,
}

impl Answer {
    /// The answer as a gzip stream, in parts, for a client that accepts gzip: the rest is
    /// compressed the first time a client asks for this page in this era (natscli's 254 KiB
    /// page: a few milliseconds, once). `None` when the head is too long for it (an id of
    /// tens of KiB), and the answer goes out as it is.
    pub(crate) fn gzip(&self) -> Option<[Bytes; 3]> {
        self.gzipped
            .get_or_init(|| Gzipped::of(&self.rest))
            .after(&self.head)
    }

    /// Every part as `Bytes`, for an HTTP body.
    pub(crate) fn into_chunks(self) -> [Bytes; 4] {
        let [page, tail, end] = self.rest;
        [
            self.head,
            Bytes::from_static(page),
            Bytes::from_static(tail),
            Bytes::from_static(end),
        ]
    }
}

/// A cursor this server did not issue for the list it was sent to: invalid params (-32602), as
/// the specification asks, for every list.
pub(crate) fn invalid_cursor(error: fiskgen_contract::cursor::InvalidCursor) -> ErrorData {
    ErrorData::invalid_params(error.to_string(), None)
}

/// A `tools/list` request as the fast paths answer it: read from its bytes without rmcp's
/// parse of a message, which costs more than the rest of the answer ([`plain_request`]), or
/// taken from rmcp's parse when the body check has parsed the message anyway
/// (`crate::transport::intake`, which leaves it in the request's extensions).
#[derive(Debug, Clone)]
pub(crate) struct ListCall {
    /// The JSON-RPC id.
    pub(crate) id: RequestId,
    /// Its cursor.
    pub(crate) cursor: Option<String>,
    /// What its `_meta` says about the client.
    pub(crate) meta: ListMeta,
}

/// What the fast paths read from a `tools/list` request's `_meta`, each decoded as rmcp's
/// accessors decode it (`RequestMetaObject::protocol_version` and the others): a key that is
/// absent and one whose value does not decode read alike, as `None`.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ListMeta {
    /// `io.modelcontextprotocol/protocolVersion`.
    pub(crate) protocol_version: Option<ProtocolVersion>,
    /// `io.modelcontextprotocol/clientCapabilities`.
    pub(crate) client_capabilities: Option<ClientCapabilities>,
    /// The name in `io.modelcontextprotocol/clientInfo`.
    pub(crate) client_name: Option<String>,
}

impl ListMeta {
    /// From rmcp's parse of the request.
    pub(crate) fn of(meta: &RequestMetaObject) -> ListMeta {
        ListMeta {
            protocol_version: meta.protocol_version(),
            client_capabilities: meta.client_capabilities(),
            client_name: meta.client_info().map(|info| info.name),
        }
    }

    /// From the text of a request's `_meta`, without building the whole object: only the
    /// three values are decoded. `None` (the request is rmcp's to judge) when `_meta` is not
    /// an object or names one of them twice.
    fn read(raw: &RawValue) -> Option<ListMeta> {
        #[derive(Deserialize)]
        struct Keys<'a> {
            #[serde(rename = "io.modelcontextprotocol/protocolVersion", default, borrow)]
            protocol_version: Option<&'a RawValue>,
            #[serde(rename = "io.modelcontextprotocol/clientCapabilities", default, borrow)]
            client_capabilities: Option<&'a RawValue>,
            #[serde(rename = "io.modelcontextprotocol/clientInfo", default, borrow)]
            client_info: Option<&'a RawValue>,
        }
        // A struct also reads from an array; rmcp's map does not.
        if !raw.get().starts_with('{') {
            return None;
        }
        let keys: Keys<'_> = serde_json::from_str(raw.get()).ok()?;
        fn decode<T: serde::de::DeserializeOwned>(raw: Option<&RawValue>) -> Option<T> {
            serde_json::from_str(raw?.get()).ok()
        }
        Some(ListMeta {
            protocol_version: decode(keys.protocol_version),
            client_capabilities: decode(keys.client_capabilities),
            client_name: decode::<Implementation>(keys.client_info).map(|info| info.name),
        })
    }

    /// Whether the request is a complete 2026-07-28 one: that version, and every key the
    /// version requires (`RequestMetaObject::missing_required_keys`: the version and the
    /// client's capabilities).
    pub(crate) fn complete_modern(&self) -> bool {
        self.protocol_version == Some(ProtocolVersion::V_2026_07_28)
            && self.client_capabilities.is_some()
    }
}

/// `bytes` as a plain `tools/list` request: a JSON object with exactly the members of a
/// JSON-RPC request (`jsonrpc` `"2.0"`, a number or string `id`, `method`, and `params`, when
/// present, an object rmcp reads as a list's params). Anything else is `None` and goes to
/// rmcp's parse; every request this accepts, rmcp reads as the same `tools/list`.
///
/// One pass over the message: `params` is only checked to be JSON there (most messages are not
/// lists, and a call's arguments are not read), then read as a list's params when the method
/// is `tools/list`, its `_meta` as [`ListMeta::read`] reads it.
pub(crate) fn plain_request(bytes: &[u8]) -> Option<ListCall> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Request<'a> {
        #[serde(rename = "jsonrpc")]
        _jsonrpc: JsonRpcVersion2_0,
        id: RequestId,
        #[serde(borrow)]
        method: Cow<'a, str>,
        // Present (`null` too) or absent: a `null` params is rmcp's to judge.
        #[serde(default, borrow, deserialize_with = "present")]
        params: Option<&'a RawValue>,
    }
    /// A member that is there, whatever its value (`Option`'s own reading takes `null` for
    /// absent).
    fn present<'de, D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<&'de RawValue>, D::Error> {
        <&RawValue>::deserialize(deserializer).map(Some)
    }
    /// rmcp's `PaginatedRequestParams`, its members in the same order (a struct also reads
    /// from an array), with `_meta` kept as text.
    #[derive(Default, Deserialize)]
    struct Params<'a> {
        #[serde(rename = "_meta", default, borrow)]
        meta: Option<&'a RawValue>,
        #[serde(default)]
        cursor: Option<String>,
    }
    let request: Request<'_> = serde_json::from_slice(bytes).ok()?;
    if request.method != "tools/list" {
        return None;
    }
    let params: Params<'_> = match request.params {
        None => Params::default(),
        Some(raw) if raw.get() == "null" => return None,
        Some(raw) => serde_json::from_str(raw.get()).ok()?,
    };
    let meta = match params.meta {
        Some(raw) => ListMeta::read(raw)?,
        None => ListMeta::default(),
    };
    Some(ListCall {
        id: request.id,
        cursor: params.cursor,
        meta,
    })
}

#[cfg(test)]
mod plain_tests {
    use rmcp::model::RequestMetaObject;
    use serde_json::value::RawValue;

    use super::{ListMeta, plain_request};

    #[test]
    fn a_plain_list_is_read_with_its_cursor_and_meta() {
        let list = plain_request(
            br#"{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{"cursor":"c","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"n","version":"1"},"k":1}}}"#,
        )
        .expect("a plain list");
        assert_eq!(list.id.to_string(), "a");
        assert_eq!(list.cursor.as_deref(), Some("c"));
        assert_eq!(list.meta.client_name.as_deref(), Some("n"));
        assert!(list.meta.complete_modern());
        let bare = plain_request(br#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#)
            .expect("a plain list without params");
        assert_eq!(bare.meta, ListMeta::default());
        assert!(bare.cursor.is_none());
    }

    #[test]
    fn the_meta_reads_as_rmcps_accessors_read_it() {
        for meta in [
            r#"{}"#,
            r#"{"k":[1,2],"progressToken":3}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"n","version":"1","title":"T"}}"#,
            // Values that do not decode: a number for the version, a string for the
            // capabilities, a client without its version, and nulls.
            r#"{"io.modelcontextprotocol/protocolVersion":2026,"io.modelcontextprotocol/clientCapabilities":"all","io.modelcontextprotocol/clientInfo":{"name":"n"}}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":null,"io.modelcontextprotocol/clientCapabilities":null,"io.modelcontextprotocol/clientInfo":null}"#,
            // A version rmcp does not know, an empty name, a URL-only elicitation.
            r#"{"io.modelcontextprotocol/protocolVersion":"1999-01-01","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"url":{}}},"io.modelcontextprotocol/clientInfo":{"name":"","version":"1"}}"#,
        ] {
            let raw: Box<RawValue> = serde_json::from_str(meta).expect("JSON");
            let rmcp: RequestMetaObject = serde_json::from_str(meta).expect("rmcp's meta");
            assert_eq!(ListMeta::read(&raw), Some(ListMeta::of(&rmcp)), "{meta}");
        }
    }

    #[test]
    fn anything_but_a_plain_list_is_left_to_rmcp() {
        for bytes in [
            // Another method, a notification, another version, a member JSON-RPC lacks.
            &br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#[..],
            br#"{"jsonrpc":"2.0","method":"tools/list"}"#,
            br#"{"jsonrpc":"1.0","id":1,"method":"tools/list"}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","x":1}"#,
            // A null id or params, params that are not a list's, a repeated member.
            br#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":5}}"#,
            // A `_meta` rmcp's map does not read, or one that names a key twice.
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":[]}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":5}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientInfo":{},"io.modelcontextprotocol/clientInfo":{}}}}"#,
            br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}"#,
            // Not an object, not JSON, a batch.
            br#""tools/list""#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list""#,
            br#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#,
        ] {
            assert!(
                plain_request(bytes).is_none(),
                "{}",
                String::from_utf8_lossy(bytes)
            );
        }
    }
}
