//! `src/tools/mod.rs`: the group modules, `TOOLS` in serving order, and the exposed global
//! flags, declared once per crate: their enums, the `Globals` struct and the `globals` function
//! every command's handler calls first (globals come right after the command path).

use proc_macro2::TokenStream;
use quote::quote;

use crate::format::{doc, inner_doc};
use crate::ident::{self, Case, Namespace};
use crate::ir::{CommandTool, FlagRender, Param, ParamType};

use super::tools::{CommandItem, Field, enumeration, field_doc, flag_call, rust_type};

/// One exposed global flag as every command that offers it reads it.
struct Global {
    param: Param,
    render: FlagRender,
    /// The shared enum's name, for an enum (or a list of enums).
    enum_name: Option<String>,
    /// Some command has its own flag or argument of this name (and so does not read it).
    shadowed: bool,
}

/// The exposed global flags of a crate.
pub(super) struct Globals {
    globals: Vec<Global>,
}

/// The values of an enum parameter, or of a list of enums.
pub(super) fn enum_values(ty: &ParamType) -> Option<&[String]> {
    match ty {
        ParamType::Enum(values) => Some(values),
        ParamType::List(inner) => enum_values(inner),
        _ => None,
    }
}

impl Globals {
    /// The globals of every command, in argv order (each command reads them in this order,
    /// less the ones it shadows); enum names are claimed in `types`.
    pub(super) fn new<'a>(
        items: impl Iterator<Item = &'a CommandItem<'a>> + Clone,
        types: &mut Namespace,
    ) -> Self {
        let mut globals: Vec<Global> = Vec::new();
        for item in items.clone() {
            let mut previous: Option<usize> = None;
            for step in &item.command.flags {
                let param = &item.command.params[step.param];
                if !param.global {
                    continue;
                }
                match globals.iter().position(|g| g.param.name == param.name) {
                    Some(index) => previous = Some(index),
                    None => {
                        let at = previous.map_or(0, |index| index + 1);
                        globals.insert(
                            at,
                            Global {
                                param: param.clone(),
                                render: step.render,
                                enum_name: None,
                                shadowed: false,
                            },
                        );
                        previous = Some(at);
                    }
                }
            }
        }
        for item in items {
            for global in &mut globals {
                global.shadowed |= !reads(item.command, &global.param.name);
            }
        }
        for global in &mut globals {
            if enum_values(&global.param.ty).is_some() {
                global.enum_name = Some(types.claim(&global.param.name, "Global"));
            }
        }
        Self { globals }
    }

    fn any_shadowed(&self) -> bool {
        self.globals.iter().any(|global| global.shadowed)
    }

    /// The globals a command reads, as fields (for the drift check).
    pub(super) fn fields_read_by(&self, command: &CommandTool) -> Vec<Field> {
        self.globals
            .iter()
            .filter(|global| reads(command, &global.param.name))
            .map(|global| Field {
                wire: global.param.name.clone(),
                optional: !global.param.required,
            })
            .collect()
    }

    /// The call a command's handler starts with, when it offers any global.
    pub(super) fn call(&self, command: &CommandTool) -> Option<TokenStream> {
        if !command.params.iter().any(|param| param.global) {
            return None;
        }
        if !self.any_shadowed() {
            return Some(quote! { super::globals(arguments, argv)?; });
        }
        let shadowed = self
            .globals
            .iter()
            .filter(|global| !reads(command, &global.param.name))
            .map(|global| global.param.name.as_str());
        Some(quote! { super::globals(arguments, argv, &[#(#shadowed),*])?; })
    }

    /// The items of `tools/mod.rs` that declare the globals.
    fn items(&self) -> TokenStream {
        if self.globals.is_empty() {
            return TokenStream::new();
        }
        let mut fields = Namespace::new(Case::Snake);
        let names: Vec<&str> = self
            .globals
            .iter()
            .map(|global| global.param.name.as_str())
            .collect();
        let field_idents = fields.claim_all(&names, "value");
        let mut enums = Vec::new();
        let mut field_tokens = Vec::new();
        let mut reads = Vec::new();
        let mut calls = Vec::new();
        for (global, field) in self.globals.iter().zip(&field_idents) {
            let param = &global.param;
            if let (Some(name), Some(values)) = (&global.enum_name, enum_values(&param.ty)) {
                let doc = format!("The values of the global flag `--{}`.", param.name);
                enums.push(enumeration(name, values, &doc));
            }
            let field = ident::ident(field);
            let wire = &param.name;
            // A global some command shadows is not read there, so it is optional in the struct.
            let required = param.required && !global.shadowed;
            let ty = rust_type(&param.ty, global.enum_name.as_deref());
            let ty = if required {
                ty
            } else {
                quote! { Option<#ty> }
            };
            let field_doc = doc(&field_doc(param));
            field_tokens.push(quote! { #field_doc #field: #ty, });
            let read = if param.required {
                quote! { arguments.required(#wire)? }
            } else {
                quote! { arguments.optional(#wire)? }
            };
            reads.push(match (global.shadowed, param.required) {
                (false, _) => quote! { #field: #read, },
                (true, true) => quote! {
                    #field: if shadowed.contains(&#wire) { None } else { Some(#read) },
                },
                (true, false) => quote! {
                    #field: if shadowed.contains(&#wire) { None } else { #read },
                },
            });
            calls.push(flag_call(
                wire,
                global.render,
                required,
                &quote! { globals.#field },
            ));
        }
        let shadowed_param = self.any_shadowed().then(|| quote! { shadowed: &[&str], });
        let function_doc = doc(if self.any_shadowed() {
            "Reads the exposed global flags a tool offers (all but the ones its own flags or \
             arguments shadow) and puts them on its command line, right after the command path."
        } else {
            "Reads the exposed global flags and puts them on a tool's command line, right after \
             the command path."
        });
        quote! {
            /// The exposed global flags, as every tool's input schema describes them.
            struct Globals {
                #(#field_tokens)*
            }

            #function_doc
            fn globals(
                arguments: &mut rt::Arguments,
                argv: &mut rt::Argv,
                #shadowed_param
            ) -> Result<(), rt::InvalidArguments> {
                let globals = Globals { #(#reads)* };
                #(#calls)*
                Ok(())
            }

            #(#enums)*
        }
    }
}

/// Whether a command reads a global (it does unless it shadows it).
fn reads(command: &CommandTool, name: &str) -> bool {
    command
        .params
        .iter()
        .any(|param| param.global && param.name == name)
}

/// `src/tools/mod.rs`: the group modules, `TOOLS` and the exposed globals.
pub(super) fn registry(
    modules: &[(String, String)],
    tools: &[(String, String)],
    globals: &Globals,
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
    let global_items = globals.items();
    quote! {
        #module_doc
        #(#module_decls)*
        use ::fiskgen_runtime::__private as rt;

        /// Every served tool, in serving order.
        pub(crate) static TOOLS: &[&rt::ToolSpec] = &[#(#entries),*];

        #global_items
    }
}
