//! `src/tools/<group>.rs`: per served command its static `ToolSpec`: the command path, the
//! exposed global flags it offers, its parameter table (`rt::Param`, in command-line order) and
//! its input schema, `src/tools/schemas/<tool>.json`.
//!
//! A table is data: the runtime reads every call through it in one function, so nothing is
//! generic, derived or monomorphised per command (`docs/generated-code.md`, "Parameter tables").

use proc_macro2::TokenStream;
use quote::quote;

use crate::format::{doc, inner_doc};
use crate::ident::{Case, Namespace};
use crate::ir::Hint;
use crate::ir::{HintName, Param, Tool};

use super::globals::Globals;
use super::params::{CommandItem, Field, flag_param, positional_param};

/// What the registry and the drift check need to know about one emitted tool.
pub(super) struct EmittedTool {
    /// The MCP tool name.
    pub(super) name: String,
    /// The static's name.
    pub(super) spec: String,
    /// The properties a call is read by: the globals it offers and its own parameters.
    pub(super) fields: Vec<Field>,
}

/// The path of a question's form file, relative to `src/tools/`.
pub(super) fn form_file(tool: &str, question: &str) -> String {
    format!("forms/{tool}.{question}.json")
}

/// The path of a tool's input schema file, relative to `src/tools/`.
pub(super) fn schema_file(tool: &str) -> String {
    format!("schemas/{tool}.json")
}

/// The text of one group module holding `items`.
pub(super) fn module(
    group: &str,
    items: &[CommandItem<'_>],
    globals: &Globals,
) -> (TokenStream, Vec<EmittedTool>) {
    let mut statics = Namespace::new(Case::ScreamingSnake);
    let mut code = Vec::new();
    let mut emitted = Vec::new();
    for item in items {
        let spec = statics.claim(&item.tool.name, "TOOL");
        code.push(tool_spec(item, &spec, globals));
        let mut fields = globals.fields_read_by(item.command);
        // Asked parameters are the user's (`ask`): not in the advertised schema.
        let asked = |param: &Param| {
            item.command
                .questions
                .iter()
                .any(|question| question.params.contains(&param.name))
        };
        fields.extend(item.own().filter(|param| !asked(param)).map(|param| Field {
            wire: param.name.clone(),
            optional: !param.required,
        }));
        emitted.push(EmittedTool {
            name: item.tool.name.clone(),
            spec,
            fields,
        });
    }

    let leaf = items.len() == 1 && items.iter().all(|item| item.command.command.len() == 1);
    let module_doc = inner_doc(&if leaf {
        format!("The `{group}` command: its tool spec and parameter table.")
    } else {
        format!("The `{group}` commands: for each, its tool spec and parameter table.")
    });
    let tokens = quote! {
        #module_doc
        use ::fiskgen_runtime::__private as rt;
        #(#code)*
    };
    (tokens, emitted)
}

impl CommandItem<'_> {
    /// The command's own parameters (not the exposed globals).
    fn own(&self) -> impl Iterator<Item = &Param> {
        self.command.params.iter().filter(|param| !param.global)
    }
}

/// The `ToolSpec` static of one command.
fn tool_spec(item: &CommandItem<'_>, spec: &str, globals: &Globals) -> TokenStream {
    let tool = item.tool;
    let command = item.command;
    let title = &tool.title;
    let own_flags = command
        .flags
        .iter()
        .filter(|step| !command.params[step.param].global)
        .map(|step| flag_param(step, &command.params[step.param]));
    let positionals = command
        .positionals
        .iter()
        .map(|step| positional_param(step, &command.params));
    let params: Vec<TokenStream> = own_flags.chain(positionals).collect();

    let spec_doc = doc(&format!(
        "`{title}`: {}",
        first_line(&tool.description).unwrap_or(title)
    ));
    let spec = crate::ident::ident(spec);
    let tool_name = &tool.name;
    let description = &tool.description;
    let tags = &tool.tags;
    let hints = hints(tool);
    let confirm = match &tool.confirm {
        Some(confirm) => {
            let trigger = &confirm.trigger;
            quote! { Some(#trigger) }
        }
        None => quote! { None },
    };
    let schema_file = schema_file(&tool.name);
    let questions = command.questions.iter().map(|question| {
        let name = &question.name;
        let params = &question.params;
        let form = form_file(&tool.name, name);
        quote! { rt::QuestionSpec { name: #name, params: &[#(#params),*], form: include_str!(#form) } }
    });
    let path = &command.command;
    let globals = globals.offered_by(command);
    quote! {
        #spec_doc
        pub(crate) static #spec: rt::ToolSpec = rt::ToolSpec {
            name: #tool_name,
            title: #title,
            description: #description,
            tags: &[#(#tags),*],
            hints: #hints,
            confirm: #confirm,
            input_schema: include_str!(#schema_file),
            questions: &[#(#questions),*],
            run: rt::Run::Command(rt::Command {
                path: &[#(#path),*],
                globals: #globals,
                params: &[#(#params),*],
            }),
        };
    }
}

pub(super) fn hints(tool: &Tool) -> TokenStream {
    if tool.hints.is_empty() && !tool.additive() {
        return quote! { rt::Hints::NONE };
    }
    let has = |hint: Hint| tool.hints.contains(&HintName(hint));
    let read_only = has(Hint::ReadOnly).then(|| quote! { .read_only() });
    let destructive = has(Hint::Destructive).then(|| quote! { .destructive() });
    let idempotent = has(Hint::Idempotent).then(|| quote! { .idempotent() });
    let open_world = has(Hint::OpenWorld).then(|| quote! { .open_world() });
    let additive = tool.additive().then(|| quote! { .additive() });
    quote! { rt::Hints::NONE #read_only #destructive #idempotent #open_world #additive }
}

/// The first non-empty line of a text.
pub(super) fn first_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).find(|line| !line.is_empty())
}
