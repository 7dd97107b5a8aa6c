//! `src/tools/<group>.rs`: per served command a typed argument struct (and enums for its enum
//! values), the handler that reads a call's arguments into it and puts them on the command
//! line, and the static `ToolSpec` whose input schema is `src/tools/schemas/<tool>.json`.
//!
//! Handlers fill their struct through the runtime's typed getters (`rt::Arguments`), one call
//! per field: no serde derive, so nothing is monomorphised per command
//! (`docs/generated-code.md`, "Handlers").

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use crate::config::Hint;
use crate::format::{doc, inner_doc};
use crate::ident::{self, Case, Namespace, PRELUDE_TYPES};
use crate::ir::{
    CommandTool, FlagRender, FlagStep, HintName, IntType, Param, ParamType, PositionalRender, Tool,
};

use super::globals::Globals;

/// One served command tool.
pub(super) struct CommandItem<'a> {
    /// The IR tool.
    pub(super) tool: &'a Tool,
    /// Its lowered command.
    pub(super) command: &'a CommandTool,
}

/// A Rust struct field as emitted: the drift check compares these with the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Field {
    /// The property name.
    pub(super) wire: String,
    /// Whether the field is an `Option`.
    pub(super) optional: bool,
}

/// What the registry and the drift check need to know about one emitted tool.
pub(super) struct EmittedTool {
    /// The MCP tool name.
    pub(super) name: String,
    /// The static's name.
    pub(super) spec: String,
    /// The properties the handler reads: its struct's fields and the globals it reads.
    pub(super) fields: Vec<Field>,
}

/// The path of a tool's schema file, relative to `src/tools/`.
pub(super) fn schema_file(tool: &str) -> String {
    format!("schemas/{tool}.json")
}

/// The text of one group module holding `items`.
pub(super) fn module(
    group: &str,
    items: &[CommandItem<'_>],
    globals: &Globals,
) -> (TokenStream, Vec<EmittedTool>) {
    let mut types = Namespace::new(Case::UpperCamel);
    types.reserve(PRELUDE_TYPES.iter().copied());
    let mut values = Namespace::new(Case::Snake);
    values.reserve(["rt"]);
    let mut statics = Namespace::new(Case::ScreamingSnake);

    let mut code = Vec::new();
    let mut emitted = Vec::new();
    let mut uses_map = false;
    for item in items {
        let base_camel = ident::convert(&item.tool.name, Case::UpperCamel, "Tool");
        let names = Names {
            args: types.claim_converted(format!("{}Args", ident::unraw(&base_camel))),
            handler: values.claim(&item.tool.name, "tool"),
            spec: statics.claim(&item.tool.name, "TOOL"),
        };
        uses_map |= item.own().any(|param| param.ty == ParamType::StringMap);
        let (tokens, fields) = tool_items(item, &names, &base_camel, &mut types, globals);
        code.push(tokens);
        emitted.push(EmittedTool {
            name: item.tool.name.clone(),
            spec: names.spec,
            fields,
        });
    }

    let leaf = items.len() == 1 && items.iter().all(|item| item.command.command.len() == 1);
    let module_doc = inner_doc(&if leaf {
        format!("The `{group}` command: its arguments, their handler and its tool spec.")
    } else {
        format!("The `{group}` commands: for each, its arguments, their handler and its tool spec.")
    });
    let map_import = uses_map.then(|| quote! { use std::collections::BTreeMap; });
    let tokens = quote! {
        #module_doc
        #map_import
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

/// Names of the module-level items of one tool.
struct Names {
    args: String,
    handler: String,
    spec: String,
}

fn tool_items(
    item: &CommandItem<'_>,
    names: &Names,
    base_camel: &str,
    types: &mut Namespace,
    globals: &Globals,
) -> (TokenStream, Vec<Field>) {
    let tool = item.tool;
    let command = item.command;
    let title = &tool.title;

    // The struct's fields: the command's own parameters, one namespace per struct.
    let own: Vec<(usize, &Param)> = command
        .params
        .iter()
        .enumerate()
        .filter(|(_, param)| !param.global)
        .collect();
    let mut field_names = Namespace::new(Case::Snake);
    let wire: Vec<&str> = own.iter().map(|(_, param)| param.name.as_str()).collect();
    let field_idents = field_names.claim_all(&wire, "value");
    let mut locals: Vec<Option<Ident>> = vec![None; command.params.len()];
    for ((index, _), field) in own.iter().zip(&field_idents) {
        locals[*index] = Some(ident::ident(field));
    }

    let mut enums = Vec::new();
    let mut field_tokens = Vec::new();
    let mut reads = Vec::new();
    let mut fields: Vec<Field> = globals.fields_read_by(command);
    for ((_, param), field) in own.iter().zip(&field_idents) {
        let enum_name = super::globals::enum_values(&param.ty)
            .map(|values| enum_for(types, base_camel, &param.name, values, title, &mut enums));
        let ty = rust_type(&param.ty, enum_name.as_deref());
        let field = ident::ident(field);
        let ty = if param.required {
            ty
        } else {
            quote! { Option<#ty> }
        };
        let field_doc = doc(&field_doc(param));
        field_tokens.push(quote! { #field_doc #field: #ty, });
        let wire = &param.name;
        reads.push(if param.required {
            quote! { #field: arguments.required(#wire)?, }
        } else {
            quote! { #field: arguments.optional(#wire)?, }
        });
        fields.push(Field {
            wire: wire.clone(),
            optional: !param.required,
        });
    }

    let args = ident::ident(&names.args);
    let handler = ident::ident(&names.handler);
    let spec = ident::ident(&names.spec);
    let own_flags: Vec<&FlagStep> = command
        .flags
        .iter()
        .filter(|step| !command.params[step.param].global)
        .collect();
    let flag_calls = own_flags.iter().map(|step| {
        let param = &command.params[step.param];
        let value = field_access(locals[step.param].as_ref());
        flag_call(&step.name, step.render, param.required, &value)
    });
    let positionals: Vec<TokenStream> = command
        .positionals
        .iter()
        .map(|step| {
            let name = &step.name;
            let defaults = &step.defaults;
            let defaults = quote! { &[#(#defaults),*] };
            let Some(index) = step.param else {
                return quote! {
                    rt::Positional { name: #name, tokens: None, defaults: #defaults }
                };
            };
            let param = &command.params[index];
            let value = field_access(locals[index].as_ref());
            let (constructor, value) = match step.render {
                PositionalRender::Many => ("many", by_slice(param.required, &value)),
                PositionalRender::Map => ("map", by_ref(param.required, &value)),
                PositionalRender::Counter => ("counter", by_copy(param.required, &value)),
                PositionalRender::One | PositionalRender::Unset => {
                    ("one", by_ref(param.required, &value))
                }
            };
            let constructor = format_ident!("{constructor}");
            quote! { rt::Positional::#constructor(#name, #value, #defaults) }
        })
        .collect();
    let positional_call = (!positionals.is_empty()).then(|| {
        quote! { argv.positionals(&[#(#positionals),*])?; }
    });
    let globals_call = globals.call(command);

    let has_struct = !own.is_empty();
    let struct_items = has_struct.then(|| {
        let struct_doc = doc(&format!(
            "The arguments of `{title}`, as its input schema describes them{}.",
            if globals_call.is_some() {
                " (the exposed global flags are [`super::Globals`])"
            } else {
                ""
            }
        ));
        quote! {
            #struct_doc
            struct #args {
                #(#field_tokens)*
            }
        }
    });
    let handler_item = if has_struct || globals_call.is_some() || positional_call.is_some() {
        let read = has_struct.then(|| quote! { let args = #args { #(#reads)* }; });
        let handler_doc = doc(&if has_struct {
            format!(
                "Reads the arguments of `{title}` into [`{}`] and puts them on its command line.",
                ident::unraw(&names.args)
            )
        } else {
            format!("Puts the arguments of `{title}` on its command line.")
        });
        let flag_calls: Vec<TokenStream> = flag_calls.collect();
        Some(quote! {
            #handler_doc
            fn #handler(
                arguments: &mut rt::Arguments,
                argv: &mut rt::Argv,
            ) -> Result<(), rt::InvalidArguments> {
                #globals_call
                #read
                #(#flag_calls)*
                #positional_call
                Ok(())
            }
        })
    } else {
        None
    };
    let handler_path = if handler_item.is_some() {
        quote! { #handler }
    } else {
        quote! { rt::no_arguments }
    };

    let spec_doc = doc(&format!(
        "The `{}` tool: {}",
        tool.name,
        first_line(&tool.description).unwrap_or(title)
    ));
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
    let path = &command.command;

    let tokens = quote! {
        #struct_items
        #(#enums)*
        #handler_item

        #spec_doc
        pub(crate) static #spec: rt::ToolSpec = rt::ToolSpec {
            name: #tool_name,
            title: #title,
            description: #description,
            tags: &[#(#tags),*],
            hints: #hints,
            confirm: #confirm,
            input_schema: include_str!(#schema_file),
            run: rt::Run::Command {
                command: &[#(#path),*],
                argv: #handler_path,
            },
        };
    };
    (tokens, fields)
}

/// `args.<field>`, the value a flag or positional renders.
fn field_access(field: Option<&Ident>) -> TokenStream {
    match field {
        Some(field) => quote! { args.#field },
        None => quote! { () },
    }
}

/// The `argv` call of one flag.
pub(super) fn flag_call(
    name: &str,
    render: FlagRender,
    required: bool,
    value: &TokenStream,
) -> TokenStream {
    match render {
        FlagRender::Value => {
            let value = by_ref(required, value);
            quote! { argv.value(#name, #value); }
        }
        FlagRender::Values => {
            let value = by_slice(required, value);
            quote! { argv.values(#name, #value); }
        }
        FlagRender::Map => {
            let value = by_ref(required, value);
            quote! { argv.map(#name, #value); }
        }
        FlagRender::Negatable => {
            let value = by_copy(required, value);
            quote! { argv.negatable(#name, #value); }
        }
        FlagRender::Switch { defaults_to_true } => {
            let value = by_copy(required, value);
            quote! { argv.switch(#name, #value, #defaults_to_true)?; }
        }
        FlagRender::Counter => {
            let value = by_copy(required, value);
            quote! { argv.counter(#name, #value); }
        }
    }
}

/// Names and emits the enum of one parameter; returns its type name.
fn enum_for(
    types: &mut Namespace,
    base_camel: &str,
    property: &str,
    values: &[String],
    title: &str,
    out: &mut Vec<TokenStream>,
) -> String {
    let field_camel = ident::convert(property, Case::UpperCamel, "Value");
    let name = types.claim_converted(format!(
        "{}{}",
        ident::unraw(base_camel),
        field_camel.trim_start_matches('_')
    ));
    let doc = format!("The values of `{property}` of `{title}`.");
    out.push(enumeration(&name, values, &doc));
    name
}

/// An enum with one variant per value, read from and rendered as the value.
pub(super) fn enumeration(name: &str, values: &[String], doc_text: &str) -> TokenStream {
    let mut variants = Namespace::new(Case::UpperCamel);
    let value_refs: Vec<&str> = values.iter().map(String::as_str).collect();
    let variant_names: Vec<Ident> = variants
        .claim_all(&value_refs, "Empty")
        .iter()
        .map(|variant| ident::ident(variant))
        .collect();
    let ty = ident::ident(name);
    let enum_doc = doc(doc_text);
    let variant_tokens = values.iter().zip(&variant_names).map(|(value, variant)| {
        let variant_doc = doc(&format!("`{value}`"));
        quote! { #variant_doc #variant, }
    });
    let table = values
        .iter()
        .zip(&variant_names)
        .map(|(value, variant)| quote! { (#value, Self::#variant) });
    let arms = values
        .iter()
        .zip(&variant_names)
        .map(|(value, variant)| quote! { Self::#variant => #value, });
    quote! {
        #enum_doc
        #[derive(Clone, Copy)]
        enum #ty {
            #(#variant_tokens)*
        }

        impl rt::FromArg for #ty {
            fn from_arg(value: rt::Value) -> Result<Self, rt::ArgError> {
                rt::choice(value, &[#(#table),*])
            }
        }

        impl rt::ArgValue for #ty {
            fn to_arg(&self) -> String {
                let value = match self {
                    #(#arms)*
                };
                value.to_string()
            }
        }
    }
}

/// The Rust type of a parameter (without `Option`).
pub(super) fn rust_type(ty: &ParamType, enum_name: Option<&str>) -> TokenStream {
    match ty {
        ParamType::Bool => quote! { bool },
        ParamType::Int(int) => {
            let name = match int {
                IntType::I8 => "i8",
                IntType::I16 => "i16",
                IntType::I32 => "i32",
                IntType::I64 => "i64",
                IntType::U8 => "u8",
                IntType::U16 => "u16",
                IntType::U32 => "u32",
                IntType::U64 => "u64",
            };
            let name = format_ident!("{name}");
            quote! { #name }
        }
        ParamType::F32 => quote! { f32 },
        ParamType::F64 => quote! { f64 },
        ParamType::String => quote! { String },
        ParamType::Enum(_) => {
            let name = ident::ident(enum_name.unwrap_or("String"));
            quote! { #name }
        }
        ParamType::Duration => quote! { rt::GoDuration },
        ParamType::ByteSize => quote! { rt::ByteSize },
        ParamType::HexBytes => quote! { rt::HexBytes },
        ParamType::List(inner) => {
            let inner = rust_type(inner, enum_name);
            quote! { Vec<#inner> }
        }
        ParamType::StringMap => quote! { BTreeMap<String, String> },
        ParamType::Counter => quote! { u8 },
    }
}

fn by_ref(required: bool, value: &TokenStream) -> TokenStream {
    if required {
        quote! { Some(&#value) }
    } else {
        quote! { #value.as_ref() }
    }
}

fn by_slice(required: bool, value: &TokenStream) -> TokenStream {
    if required {
        quote! { Some(#value.as_slice()) }
    } else {
        quote! { #value.as_deref() }
    }
}

fn by_copy(required: bool, value: &TokenStream) -> TokenStream {
    if required {
        quote! { Some(#value) }
    } else {
        quote! { #value }
    }
}

pub(super) fn hints(tool: &Tool) -> TokenStream {
    if tool.hints.is_empty() {
        return quote! { rt::Hints::NONE };
    }
    let has = |hint: Hint| tool.hints.contains(&HintName(hint));
    let read_only = has(Hint::ReadOnly);
    let destructive = has(Hint::Destructive);
    let idempotent = has(Hint::Idempotent);
    let open_world = has(Hint::OpenWorld);
    quote! {
        rt::Hints {
            read_only: #read_only,
            destructive: #destructive,
            idempotent: #idempotent,
            open_world: #open_world,
        }
    }
}

pub(super) fn field_doc(param: &Param) -> String {
    let description = param.description.trim();
    let description = description
        .strip_prefix("Global flag: ")
        .unwrap_or(description);
    match (description.is_empty(), &param.ty) {
        (true, ParamType::Counter) => {
            format!("`{}`: how many times to repeat the flag.", param.name)
        }
        (true, _) => format!("`{}` (no help text).", param.name),
        (false, ParamType::Counter) => format!("{description} (how many times to repeat the flag)"),
        (false, _) => description.to_string(),
    }
}

/// The first non-empty line of a text.
pub(super) fn first_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).find(|line| !line.is_empty())
}
