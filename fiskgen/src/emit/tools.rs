//! `src/tools/*.rs`: per served command a typed argument struct (and enums for its enum
//! values), the handler that validates a call's arguments and builds argv, and the static
//! `ToolSpec`; `src/tools/mod.rs` lists them all.

use std::collections::BTreeMap;

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use crate::config::Hint;
use crate::format::{doc, inner_doc, raw_string};
use crate::ident::{self, Case, Namespace, PRELUDE_TYPES};
use crate::ir::{HintName, Tool};
use crate::params::{FlagRender, IntType, ParamType, Params, PositionalRender};

use super::schema_text;

/// One served command tool with everything derived for it.
pub(super) struct CommandItem<'a> {
    /// The IR tool.
    pub(super) tool: &'a Tool,
    /// The command path.
    pub(super) command: &'a [String],
    /// Its typed parameters.
    pub(super) params: Params,
}

/// Names of the module-level items of one tool.
struct ToolNames {
    args: String,
    argv: String,
    spec: String,
}

/// A Rust struct field as emitted: the drift check compares these with the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Field {
    /// The property name (the serde name).
    pub(super) wire: String,
    /// Whether the field is an `Option`.
    pub(super) optional: bool,
}

/// The enums of exposed global flags, shared by every module (`super::Colors`).
pub(super) struct GlobalEnums {
    /// Flag name → (type name, values).
    enums: BTreeMap<String, (String, Vec<String>)>,
}

impl GlobalEnums {
    /// Names an enum for every exposed global flag whose parameter is an enum.
    pub(super) fn new<'a>(
        items: impl Iterator<Item = &'a CommandItem<'a>>,
        types: &mut Namespace,
    ) -> Self {
        let mut values: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for item in items {
            for param in item.params.params.iter().filter(|param| param.global) {
                if let Some(list) = enum_values(&param.ty) {
                    values
                        .entry(param.name.clone())
                        .or_insert_with(|| list.to_vec());
                }
            }
        }
        let enums = values
            .into_iter()
            .map(|(flag, list)| {
                let name = types.claim(&flag, "Global");
                (flag, (name, list))
            })
            .collect();
        Self { enums }
    }

    /// The enums, for `tools/mod.rs`.
    pub(super) fn items(&self) -> TokenStream {
        let items = self.enums.iter().map(|(flag, (name, values))| {
            let doc = format!("The values of the global flag `--{flag}`.");
            enumeration(name, values, &doc)
        });
        quote! { #(#items)* }
    }
}

/// The values of an enum parameter, or of a list of enums.
fn enum_values(ty: &ParamType) -> Option<&[String]> {
    match ty {
        ParamType::Enum(values) => Some(values),
        ParamType::List(inner) => enum_values(inner),
        _ => None,
    }
}

/// What the registry and the drift check need to know about one emitted tool.
pub(super) struct EmittedTool {
    /// The MCP tool name.
    pub(super) name: String,
    /// The static's name.
    pub(super) spec: String,
    /// The argument struct's fields.
    pub(super) fields: Vec<Field>,
}

/// The text of one group module holding `items`.
pub(super) fn module(
    group: &str,
    items: &[CommandItem<'_>],
    globals: &GlobalEnums,
) -> (TokenStream, Vec<EmittedTool>) {
    let mut types = Namespace::new(Case::UpperCamel);
    types.reserve(PRELUDE_TYPES.iter().copied());
    let mut values = Namespace::new(Case::Snake);
    values.reserve(["rt"]);
    let mut statics = Namespace::new(Case::ScreamingSnake);

    let mut code = Vec::new();
    let mut fields_by_tool = Vec::new();
    let mut uses_map = false;
    for item in items {
        let base_camel = ident::convert(&item.tool.name, Case::UpperCamel, "Tool");
        let base_snake = ident::convert(&item.tool.name, Case::Snake, "tool");
        let names = ToolNames {
            args: types.claim_converted(format!("{}Args", ident::unraw(&base_camel))),
            argv: values.claim_converted(format!("{}_argv", ident::unraw(&base_snake))),
            spec: statics.claim(&item.tool.name, "TOOL"),
        };
        let (tokens, fields) = tool_items(item, &names, &base_camel, &mut types, globals);
        let spec = names.spec.clone();
        uses_map |= item
            .params
            .params
            .iter()
            .any(|param| param.ty == ParamType::StringMap);
        code.push(tokens);
        fields_by_tool.push(EmittedTool {
            name: item.tool.name.clone(),
            spec,
            fields,
        });
    }

    let leaf = items.len() == 1 && items.iter().all(|item| item.command.len() == 1);
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
    (tokens, fields_by_tool)
}

fn tool_items(
    item: &CommandItem<'_>,
    names: &ToolNames,
    base_camel: &str,
    types: &mut Namespace,
    globals: &GlobalEnums,
) -> (TokenStream, Vec<Field>) {
    let tool = item.tool;
    let params = &item.params;
    let title = &tool.title;

    // Field names: one namespace per struct; the handler's own locals are reserved.
    let mut field_names = Namespace::new(Case::Snake);
    field_names.reserve(["argv", "arguments"]);
    let wire: Vec<&str> = params
        .params
        .iter()
        .map(|param| param.name.as_str())
        .collect();
    let field_idents = field_names.claim_all(&wire, "value");

    // Enum types of the command's own enum parameters.
    let mut enums = Vec::new();
    let mut rust_types = Vec::new();
    for param in &params.params {
        let enum_name = match enum_values(&param.ty) {
            Some(_) if param.global => globals
                .enums
                .get(&param.name)
                .map(|(name, _)| format!("super::{name}")),
            Some(values) => Some(enum_for(
                types,
                base_camel,
                &param.name,
                values,
                title,
                &mut enums,
            )),
            None => None,
        };
        rust_types.push(rust_type(&param.ty, enum_name.as_deref()));
    }

    let args = ident::ident(&names.args);
    // The fields as emitted, and what the drift check reads back from them.
    let mut field_tokens = Vec::new();
    let mut fields = Vec::new();
    for ((param, field), ty) in params.params.iter().zip(&field_idents).zip(&rust_types) {
        let field_ident = ident::ident(field);
        let wire = param.name.clone();
        let rename = (ident::unraw(field) != wire).then(|| quote! { #[serde(rename = #wire)] });
        let optional = !param.required;
        let ty = if optional {
            quote! { Option<#ty> }
        } else {
            ty.clone()
        };
        let doc = doc(&field_doc(param));
        field_tokens.push(quote! {
            #doc
            #rename
            #field_ident: #ty,
        });
        fields.push(Field { wire, optional });
    }
    let struct_doc = doc(&format!(
        "The arguments of `{title}`, as its input schema describes them."
    ));

    let argv_fn = ident::ident(&names.argv);
    let locals: Vec<Ident> = field_idents
        .iter()
        .map(|field| ident::ident(field))
        .collect();
    let command = item.command;
    let flag_calls = params.flags.iter().map(|step| {
        let param = &params.params[step.param];
        let local = &locals[step.param];
        let name = &step.name;
        match step.render {
            FlagRender::Value => {
                let value = by_ref(param.required, local);
                quote! { argv.value(#name, #value); }
            }
            FlagRender::Values => {
                let value = by_slice(param.required, local);
                quote! { argv.values(#name, #value); }
            }
            FlagRender::Map => {
                let value = by_ref(param.required, local);
                quote! { argv.map(#name, #value); }
            }
            FlagRender::Negatable => {
                let value = by_copy(param.required, local);
                quote! { argv.negatable(#name, #value); }
            }
            FlagRender::Switch { defaults_to_true } => {
                let value = by_copy(param.required, local);
                quote! { argv.switch(#name, #value, #defaults_to_true)?; }
            }
            FlagRender::Counter => {
                let value = by_copy(param.required, local);
                quote! { argv.counter(#name, #value); }
            }
        }
    });
    let positionals = params.positionals.iter().map(|step| {
        let name = &step.name;
        let defaults = &step.defaults;
        let defaults = quote! { &[#(#defaults),*] };
        let Some(index) = step.param else {
            return quote! {
                rt::Positional { name: #name, tokens: None, defaults: #defaults }
            };
        };
        let param = &params.params[index];
        let local = &locals[index];
        match step.render {
            PositionalRender::Many => {
                let value = by_slice(param.required, local);
                quote! { rt::Positional::many(#name, #value, #defaults) }
            }
            PositionalRender::Map => {
                let value = by_ref(param.required, local);
                quote! { rt::Positional::map(#name, #value, #defaults) }
            }
            PositionalRender::Counter => {
                let value = by_copy(param.required, local);
                quote! { rt::Positional::counter(#name, #value, #defaults) }
            }
            PositionalRender::One | PositionalRender::Unset => {
                let value = by_ref(param.required, local);
                quote! { rt::Positional::one(#name, #value, #defaults) }
            }
        }
    });
    let positionals: Vec<TokenStream> = positionals.collect();
    let positional_call = (!positionals.is_empty()).then(|| {
        quote! { argv.positionals(Vec::from([#(#positionals),*]))?; }
    });
    let flag_calls: Vec<TokenStream> = flag_calls.collect();
    let argv_body = if flag_calls.is_empty() && positional_call.is_none() {
        quote! { Ok(rt::Argv::new(&[#(#command),*])) }
    } else {
        quote! {
            let mut argv = rt::Argv::new(&[#(#command),*]);
            #(#flag_calls)*
            #positional_call
            Ok(argv)
        }
    };
    let argv_doc = doc(&format!(
        "Checks a call's arguments against [`{}`] and builds the command line of `{title}`.",
        ident::unraw(&names.args)
    ));

    let spec = ident::ident(&names.spec);
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
    let schema = raw_string(&schema_text(&params.schema));

    let tokens = quote! {
        #struct_doc
        #[derive(rt::serde::Deserialize)]
        #[serde(crate = "::fiskgen_runtime::__private::serde", deny_unknown_fields)]
        struct #args {
            #(#field_tokens)*
        }

        #(#enums)*

        #argv_doc
        fn #argv_fn(arguments: rt::JsonObject) -> Result<rt::Argv, rt::InvalidArguments> {
            let #args { #(#locals),* } = rt::parse_arguments(arguments)?;
            #argv_body
        }

        #spec_doc
        pub(crate) static #spec: rt::ToolSpec = rt::ToolSpec {
            name: #tool_name,
            title: #title,
            description: #description,
            tags: &[#(#tags),*],
            hints: #hints,
            confirm: #confirm,
            input_schema: #schema,
            run: rt::Run::Command {
                command: &[#(#command),*],
                argv: #argv_fn,
            },
        };
    };
    (tokens, fields)
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

/// An enum with one variant per value, deserialized from and rendered as the value.
fn enumeration(name: &str, values: &[String], doc_text: &str) -> TokenStream {
    let mut variants = Namespace::new(Case::UpperCamel);
    let value_refs: Vec<&str> = values.iter().map(String::as_str).collect();
    let variant_names = variants.claim_all(&value_refs, "Empty");
    let ty = ident::ident(name);
    let enum_doc = doc(doc_text);
    let variant_tokens = values.iter().zip(&variant_names).map(|(value, variant)| {
        let variant = ident::ident(variant);
        let variant_doc = doc(&format!("`{value}`"));
        quote! {
            #variant_doc
            #[serde(rename = #value)]
            #variant,
        }
    });
    let arms = values.iter().zip(&variant_names).map(|(value, variant)| {
        let variant = ident::ident(variant);
        quote! { Self::#variant => #value, }
    });
    quote! {
        #enum_doc
        #[derive(rt::serde::Deserialize)]
        #[serde(crate = "::fiskgen_runtime::__private::serde")]
        enum #ty {
            #(#variant_tokens)*
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
fn rust_type(ty: &ParamType, enum_name: Option<&str>) -> TokenStream {
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
        ParamType::Enum(_) => enum_path(enum_name),
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

fn enum_path(name: Option<&str>) -> TokenStream {
    let name = name.unwrap_or("String");
    match name.strip_prefix("super::") {
        Some(name) => {
            let name = ident::ident(name);
            quote! { super::#name }
        }
        None => {
            let name = ident::ident(name);
            quote! { #name }
        }
    }
}

fn by_ref(required: bool, local: &Ident) -> TokenStream {
    if required {
        quote! { Some(&#local) }
    } else {
        quote! { #local.as_ref() }
    }
}

fn by_slice(required: bool, local: &Ident) -> TokenStream {
    if required {
        quote! { Some(#local.as_slice()) }
    } else {
        quote! { #local.as_deref() }
    }
}

fn by_copy(required: bool, local: &Ident) -> TokenStream {
    if required {
        quote! { Some(#local) }
    } else {
        quote! { #local }
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

fn field_doc(param: &crate::params::Param) -> String {
    let description = param.description.trim();
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

/// `src/tools/mod.rs`: the group modules, the shared global enums and `TOOLS`.
pub(super) fn registry(
    modules: &[(String, String)],
    tools: &[(String, String)],
    globals: &GlobalEnums,
) -> TokenStream {
    // `modules`: (module ident, group name); `tools`: (module ident, static ident), in serving
    // order.
    let module_doc = inner_doc("The served tools, one module per top-level command group.");
    let mut sorted: Vec<&(String, String)> = modules.iter().collect();
    sorted.sort();
    let module_decls = sorted.iter().map(|(module, _)| {
        let module = ident::ident(module);
        quote! { mod #module; }
    });
    let entries = tools.iter().map(|(module, spec)| {
        let module = ident::ident(module);
        let spec = ident::ident(spec);
        quote! { &#module::#spec }
    });
    let global_enums = globals.items();
    quote! {
        #module_doc
        #(#module_decls)*
        use ::fiskgen_runtime::__private as rt;

        /// Every served tool, in serving order.
        pub(crate) static TOOLS: &[&rt::ToolSpec] = &[#(#entries),*];

        #global_enums
    }
}
