//! The parts of a command's parameter table (`rt::Param`, one entry per flag and positional
//! argument) that the tool specs and the exposed globals share: what a table is built from
//! ([`CommandItem`]), what it declares ([`Field`]) and how each entry is written.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ir::{
    CommandTool, FlagRender, FlagStep, IntType, Param, ParamType, PositionalStep, Tool,
};

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
pub(super) fn positional_param(step: &PositionalStep, params: &[Param]) -> TokenStream {
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
