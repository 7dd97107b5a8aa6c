//! `src/tools/builtins.rs`: the served built-in tools as static specs, with the settings of
//! `harness.tools` and `harness.knowledge` compiled in. Their names, descriptions and schemas
//! are the runtime's (`fiskgen_contract::builtins`), which also implements them.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::duration;
use crate::format::{doc, inner_doc};
use crate::ident;
use crate::ir::KnowledgeConfig;
use crate::ir::{self, Builtin};

/// The module's tokens and, in serving order, the static name of each built-in's spec.
pub(super) fn module(
    settings: &ir::Settings,
    tools: &[(&ir::Tool, Builtin, &ir::FileAccess)],
) -> (TokenStream, Vec<String>) {
    let knowledge = tools
        .iter()
        .any(|(_, builtin, _)| Builtin::KNOWLEDGE.contains(builtin));
    let knowledge_static = knowledge.then(|| knowledge_spec(&settings.knowledge));
    let mut names = Vec::new();
    let specs: Vec<TokenStream> = tools
        .iter()
        .map(|(tool, builtin, access)| {
            let name = tool.name.to_uppercase();
            names.push(name.clone());
            spec(tool, *builtin, access, &name)
        })
        .collect();
    let module_doc = inner_doc(
        "The built-in tools this server serves, with their settings from the config. The runtime \
         implements them.",
    );
    // Only the embeddings timeout is a `Duration`.
    let duration_import = (knowledge && settings.knowledge.embeddings.is_some())
        .then(|| quote! { use std::time::Duration; });
    let tokens = quote! {
        #module_doc

        #duration_import

        use ::fiskgen_runtime::__private as rt;

        #knowledge_static

        #(#specs)*
    };
    (tokens, names)
}

fn spec(tool: &ir::Tool, builtin: Builtin, access: &ir::FileAccess, name: &str) -> TokenStream {
    let spec = ident::ident(name);
    let spec_doc = doc(&format!(
        "The built-in `{}` tool, with its settings from the config.",
        tool.name
    ));
    let run = match builtin {
        Builtin::ReadFile => {
            let access = file_access(access);
            quote! { rt::Builtin::ReadFile(#access) }
        }
        Builtin::Base64Encode => {
            let access = file_access(access);
            quote! { rt::Builtin::Base64Encode(#access) }
        }
        Builtin::KnowledgeSearch => quote! { rt::Builtin::KnowledgeSearch(&KNOWLEDGE) },
        Builtin::KnowledgeRead => quote! { rt::Builtin::KnowledgeRead(&KNOWLEDGE) },
        Builtin::KnowledgeList => quote! { rt::Builtin::KnowledgeList(&KNOWLEDGE) },
        Builtin::KnowledgeEnumerate => quote! { rt::Builtin::KnowledgeEnumerate(&KNOWLEDGE) },
    };
    let confirm = match &tool.confirm {
        Some(confirm) => {
            let trigger = &confirm.trigger;
            quote! { Some(#trigger) }
        }
        None => quote! { None },
    };
    quote! {
        #spec_doc
        pub(crate) static #spec: rt::ToolSpec = rt::ToolSpec::builtin(#run, #confirm);
    }
}

/// `roots` and `max_bytes` of the tool's `harness.tools` entry.
fn file_access(access: &ir::FileAccess) -> TokenStream {
    let roots = &access.roots;
    let max_bytes = match access.max_bytes {
        Some(bytes) => {
            let bytes = Literal::u64_unsuffixed(bytes);
            quote! { Some(#bytes) }
        }
        None => quote! { None },
    };
    quote! { rt::FileAccess { roots: &[#(#roots),*], max_bytes: #max_bytes } }
}

/// `static KNOWLEDGE`: `harness.knowledge`, shared by the three knowledge tools.
fn knowledge_spec(knowledge: &KnowledgeConfig) -> TokenStream {
    let directory = match &knowledge.directory {
        Some(directory) => quote! { Some(#directory) },
        None => quote! { None },
    };
    let top_k = Literal::u32_unsuffixed(u32::try_from(knowledge.top_k.clamp(0, 20)).unwrap_or(5));
    let max_tokens =
        Literal::u64_unsuffixed(u64::try_from(knowledge.max_injected_tokens.max(0)).unwrap_or(0));
    let paths = &knowledge.paths;
    let embeddings = match &knowledge.embeddings {
        Some(embeddings) => {
            let base_url = &embeddings.base_url;
            let model = &embeddings.model;
            let api_key_env = match &embeddings.api_key_env {
                Some(var) => quote! { Some(#var) },
                None => quote! { None },
            };
            let timeout = duration(embeddings.timeout);
            let query_prefix = &embeddings.query_prefix;
            let document_prefix = &embeddings.document_prefix;
            quote! {
                Some(rt::EmbeddingsSpec {
                    base_url: #base_url,
                    model: #model,
                    api_key_env: #api_key_env,
                    timeout: #timeout,
                    query_prefix: #query_prefix,
                    document_prefix: #document_prefix,
                })
            }
        }
        None => quote! { None },
    };
    let knowledge_doc = doc("`harness.knowledge`: the index the knowledge tools read.");
    quote! {
        #knowledge_doc
        static KNOWLEDGE: rt::KnowledgeSpec = rt::KnowledgeSpec {
            directory: #directory,
            top_k: #top_k,
            max_injected_tokens: #max_tokens,
            embeddings: #embeddings,
            paths: &[#(#paths),*],
        };
    }
}
