//! `src/tools/<group>.rs`: per served command its static `ToolSpec`: the command path, the
//! exposed global flags it offers, its parameter table (`rt::Param`, in command-line order) and
//! its input schema, `src/tools/schemas/<tool>.json`.
//!
//! A table is data: the runtime reads every call through it in one function, so nothing is
//! generic, derived or monomorphised per command (`docs/generated-code.md`, "Parameter tables").

use proc_macro2::TokenStream;
use quote::quote;

use crate::config::Hint;
use crate::format::{doc, inner_doc};
use crate::ident::{Case, Namespace};
use crate::ir::{
    CommandTool, FlagRender, FlagStep, HintName, IntType, Param, ParamType, PositionalStep, Tool,
};

use super::globals::Globals;

/// One served command tool.
pub(super) struct CommandItem<'a> {
    /// The IR tool.
    pub(super) tool: &'a Tool,
    /// Its lowered command.
    pub(super) command: &'a CommandTool,
}

/// A property as a table declares it: the drift check compares these with the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Field {
    /// The property name.
    pub(super) wire: String,
    /// Whether the property is optional.
    pub(super) optional: bool,
}

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

/// The table entry of one flag.
pub(super) fn flag_param(step: &FlagStep, param: &Param) -> TokenStream {
    let name = &step.name;
    let entry = match step.render {
        FlagRender::Negatable => quote! { rt::Param::negatable(#name) },
        FlagRender::Switch {
            defaults_to_true: false,
        } => quote! { rt::Param::switch(#name) },
        FlagRender::Switch {
            defaults_to_true: true,
        } => quote! { rt::Param::switch_on(#name) },
        FlagRender::Value | FlagRender::Values | FlagRender::Map | FlagRender::Counter => {
            let ty = value_type(&param.ty);
            quote! { rt::Param::flag(#name, #ty) }
        }
    };
    required(entry, param.required)
}

/// The table entry of one positional argument.
fn positional_param(step: &PositionalStep, params: &[Param]) -> TokenStream {
    let name = &step.name;
    let defaults = &step.defaults;
    let Some(index) = step.param else {
        return quote! { rt::Param::hidden(#name, &[#(#defaults),*]) };
    };
    let param = &params[index];
    let ty = value_type(&param.ty);
    let entry = required(quote! { rt::Param::arg(#name, #ty) }, param.required);
    if defaults.is_empty() {
        entry
    } else {
        quote! { #entry.defaults(&[#(#defaults),*]) }
    }
}

fn required(entry: TokenStream, required: bool) -> TokenStream {
    if required {
        quote! { #entry.required() }
    } else {
        entry
    }
}

/// The `rt::Type` of a parameter.
fn value_type(ty: &ParamType) -> TokenStream {
    match ty {
        ParamType::Bool => quote! { rt::Type::Bool },
        ParamType::Int(int) => match int {
            IntType::I8 => quote! { rt::Type::I8 },
            IntType::I16 => quote! { rt::Type::I16 },
            IntType::I32 => quote! { rt::Type::I32 },
            IntType::I64 => quote! { rt::Type::I64 },
            IntType::U8 => quote! { rt::Type::U8 },
            IntType::U16 => quote! { rt::Type::U16 },
            IntType::U32 => quote! { rt::Type::U32 },
            IntType::U64 => quote! { rt::Type::U64 },
        },
        ParamType::F32 => quote! { rt::Type::F32 },
        ParamType::F64 => quote! { rt::Type::F64 },
        ParamType::String => quote! { rt::Type::String },
        ParamType::Enum(values) => quote! { rt::Type::Choice(&[#(#values),*]) },
        ParamType::Duration => quote! { rt::Type::Duration },
        ParamType::ByteSize => quote! { rt::Type::ByteSize },
        ParamType::HexBytes => quote! { rt::Type::HexBytes },
        ParamType::List(inner) => {
            let inner = value_type(inner);
            quote! { rt::Type::List(&#inner) }
        }
        ParamType::StringMap => quote! { rt::Type::StringMap },
        ParamType::Counter => quote! { rt::Type::Counter },
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
