//! `src/tools/mod.rs`: the group modules, `TOOLS` in serving order, and the exposed global
//! flags, declared once per crate as `GLOBALS` (their parameter table), which every command's
//! spec offers, less the ones its own parameters shadow (globals come right after the command
//! path).

use proc_macro2::TokenStream;
use quote::quote;

use crate::format::inner_doc;
use crate::ident;
use crate::ir::{CommandTool, FlagRender, FlagStep, Param};

use super::params::{CommandItem, Field, flag_param};

/// One exposed global flag as every command that offers it reads it.
struct Global {
    param: Param,
    render: FlagRender,
}

/// The exposed global flags of a crate.
pub(super) struct Globals {
    globals: Vec<Global>,
}

impl Globals {
    /// The globals of every command, in argv order (each command reads them in this order,
    /// less the ones it shadows).
    pub(super) fn new<'a>(items: impl Iterator<Item = &'a CommandItem<'a>>) -> Self {
        let mut globals: Vec<Global> = Vec::new();
        for item in items {
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
                            },
                        );
                        previous = Some(at);
                    }
                }
            }
        }
        Self { globals }
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

    /// The `globals` of a command's spec: `super::GLOBALS`, less the ones it shadows.
    pub(super) fn offered_by(&self, command: &CommandTool) -> TokenStream {
        if !command.params.iter().any(|param| param.global) {
            return quote! { rt::Globals::NONE };
        }
        let shadowed: Vec<&str> = self
            .globals
            .iter()
            .filter(|global| !reads(command, &global.param.name))
            .map(|global| global.param.name.as_str())
            .collect();
        if shadowed.is_empty() {
            quote! { super::GLOBALS }
        } else {
            quote! { super::GLOBALS.except(&[#(#shadowed),*]) }
        }
    }

    /// The items of `tools/mod.rs` that declare the globals.
    fn items(&self) -> TokenStream {
        if self.globals.is_empty() {
            return TokenStream::new();
        }
        let params = self.globals.iter().map(|global| {
            let step = FlagStep {
                param: 0,
                name: global.param.name.clone(),
                render: global.render,
            };
            flag_param(&step, &global.param)
        });
        quote! {
            /// The exposed global flags, in command-line order, as every tool's input schema
            /// describes them.
            pub(crate) const GLOBALS: rt::Globals = rt::Globals::new(&[#(#params),*]);
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
