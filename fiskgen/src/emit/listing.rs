//! `src/listing.rs` and `src/listing.json`: the whole `tools/list` answer, computed here with
//! `fiskgen_contract::listing` and served by the runtime's handler page by page (docs/runtime.md,
//! "Listing tools"). `listing.json` is every tool's entry as one JSON array on one line;
//! `listing.rs` says where each page lies in it.

use fiskgen_contract::listing::{Entry, Listing};
use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::GenerateError;
use crate::format::{doc, inner_doc};
use crate::ir::Hint;
use crate::ir::{self, HintName, ToolKind};

/// The listing file beside `src/listing.rs`.
pub(super) const JSON_FILE: &str = "src/listing.json";

/// `src/listing.rs`'s tokens and `src/listing.json`'s text, for `tools` in serving order, each
/// with its advertised input schema as compact JSON, paged and shaped by `settings`; the tools
/// named in `task_required` (`tasks.required`) declare `execution.taskSupport: "required"`.
pub(super) fn files(
    tools: &[(&ir::Tool, String)],
    settings: &ir::Settings,
    task_required: &[String],
) -> Result<(TokenStream, String), GenerateError> {
    let structured_output = settings.structured_output;
    let output_schema = settings.output_schema;
    let mut entries = Vec::with_capacity(tools.len());
    for (tool, schema) in tools {
        let has = |hint: Hint| tool.hints.contains(&HintName(hint));
        let entry = Entry {
            name: &tool.name,
            title: &tool.title,
            description: &tool.description,
            input_schema: schema,
            output_schema: output_schema && matches!(tool.kind, ToolKind::Command(_)),
            hints: [
                has(Hint::ReadOnly),
                has(Hint::Destructive),
                has(Hint::Idempotent),
                has(Hint::OpenWorld),
            ],
            additive: tool.additive(),
            task_required: task_required.contains(&tool.name),
        };
        entry.check().map_err(|error| GenerateError::Drift {
            tool: tool.name.clone(),
            message: error.to_string(),
        })?;
        entries.push(entry.to_json());
    }
    let page_size = settings.page_size;
    let listing = Listing::join(&entries, page_size);
    let pages = listing.pages.iter().map(|page| {
        let start = Literal::usize_unsuffixed(page.start);
        let end = Literal::usize_unsuffixed(page.end);
        quote! {
            rt::PageSpec {
                start: #start,
                end: #end,
            }
        }
    });
    let module_doc = inner_doc(
        "The whole `tools/list` answer, computed by fiskgen: every tool's entry in serving order \
         (`listing.json`), and where each page lies in it.",
    );
    let count = Literal::usize_unsuffixed(entries.len());
    let cursor_tag = listing.cursors.tag();
    let size = Literal::usize_unsuffixed(page_size);
    let listing_doc = doc(&format!(
        "`tools/list`: {} tool(s) in {} page(s) of at most {page_size}{}.",
        entries.len(),
        listing.pages.len(),
        match (structured_output, output_schema) {
            (true, true) => ", structured output declared",
            (true, false) => "",
            (false, _) => ", without structured output",
        }
    ));
    let tokens = quote! {
        #module_doc

        use ::fiskgen_runtime::__private as rt;

        #listing_doc
        pub(crate) static LISTING: rt::ListingSpec = rt::ListingSpec {
            tools: #count,
            page_size: #size,
            structured_output: #structured_output,
            output_schema: #output_schema,
            cursor_tag: #cursor_tag,
            body: include_str!("listing.json"),
            pages: &[#(#pages),*],
        };
    };
    Ok((tokens, format!("{}\n", listing.body)))
}
