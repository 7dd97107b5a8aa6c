//! `src/docs.rs`: the resources and prompts rendered at build time, as data
//! (`rt::DocsSpec`; docs/resources.md).

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::format::{doc, inner_doc};
use crate::ir;

/// Where a tool's help is, relative to `src/`.
pub(super) fn help_file(tool: &str) -> String {
    format!("help/{tool}.md")
}

/// `src/docs.rs`; each tool's help Markdown is its own file, [`help_file`].
pub(super) fn docs_rs(docs: &ir::Docs) -> TokenStream {
    let module_doc = inner_doc(
        "The application's own help as MCP resources, prompts and skills, rendered by fiskgen: \
         each served tool's help as Markdown and the application's cheats (docs/resources.md in \
         fiskgen's repository).",
    );
    let page_size = Literal::u32_unsuffixed(docs.page_size);
    let help = docs.help.iter().map(|help| {
        let (tool, title, summary) = (&help.tool, &help.title, &help.summary);
        let file = help_file(tool);
        quote! {
            rt::HelpSpec {
                tool: #tool,
                title: #title,
                summary: #summary,
                markdown: include_str!(#file),
            }
        }
    });
    let cheat_sheets = docs.resources;
    let prompts = docs.prompts;
    let skills = docs.skills;
    let cheats = docs.cheats.iter().map(|cheat| {
        let (label, description, text) = (&cheat.label, &cheat.description, &cheat.text);
        let tool = match &cheat.tool {
            Some(tool) => quote! { Some(#tool) },
            None => quote! { None },
        };
        let arguments = cheat.arguments.iter().map(|argument| {
            let (name, description, values) =
                (&argument.name, &argument.description, &argument.values);
            quote! {
                rt::ArgumentSpec {
                    name: #name,
                    description: #description,
                    values: &[#(#values),*],
                }
            }
        });
        quote! {
            rt::CheatSpec {
                label: #label,
                description: #description,
                text: #text,
                tool: #tool,
                arguments: &[#(#arguments),*],
            }
        }
    });
    let docs_doc =
        doc("What `resources/*`, `prompts/*`, `skills/*` and `completion/complete` offer.");
    quote! {
        #module_doc

        use ::fiskgen_runtime::__private as rt;

        #docs_doc
        pub(crate) static DOCS: rt::DocsSpec = rt::DocsSpec {
            page_size: #page_size,
            help: &[#(#help),*],
            cheat_sheets: #cheat_sheets,
            prompts: #prompts,
            skills: #skills,
            cheats: &[#(#cheats),*],
        };
    }
}
