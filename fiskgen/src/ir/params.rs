//! A served command's parameters as lowered (`crate::lower`): the Rust-side type of every
//! schema property and how each value reaches argv (fisk's `ArgsFromJSON` rules).

/// One schema property.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// The property name (the flag's or argument's name).
    pub name: String,
    /// The property's description (the help text).
    pub description: String,
    /// Listed in the schema's `required`.
    pub required: bool,
    /// The value's type.
    pub ty: ParamType,
    /// Whether it is an exposed global flag.
    pub global: bool,
    /// The HTTP header a client mirrors its value in (`param_headers`, SEP-2243
    /// `x-mcp-header`; advertised in the schema).
    pub header: Option<String>,
}

impl Param {
    /// The names of `params` for an error that says what a tool has: `a, b, c`, or `none`.
    pub fn names(params: &[Param]) -> String {
        if params.is_empty() {
            return "none".to_string();
        }
        let names: Vec<&str> = params.iter().map(|param| param.name.as_str()).collect();
        names.join(", ")
    }
}

/// The type of a parameter's value.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamType {
    /// `boolean`.
    Bool,
    /// `integer`, by its bounds.
    Int(IntType),
    /// `number` with the float32 maximum.
    F32,
    /// `number`.
    F64,
    /// `string` (also the fallback).
    String,
    /// `string` with `enum`: the values, de-duplicated, in declaration order.
    Enum(Vec<String>),
    /// `string` with fisk's duration pattern.
    Duration,
    /// `string` with fisk's byte-size pattern.
    ByteSize,
    /// `string` with fisk's hex pattern.
    HexBytes,
    /// `array` of a scalar type.
    List(Box<ParamType>),
    /// `object` of strings.
    StringMap,
    /// A fisk `Counter`: how many times to repeat the flag (0 to 255).
    Counter,
}

/// Integer types, chosen by the schema's `minimum` and `maximum`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntType {
    /// -128..=127.
    I8,
    /// -32768..=32767.
    I16,
    /// -2^31..=2^31-1.
    I32,
    /// No bounds.
    I64,
    /// 0..=255.
    U8,
    /// 0..=65535.
    U16,
    /// 0..=2^32-1.
    U32,
    /// `minimum: 0` alone.
    U64,
}

/// How one flag reaches argv.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagStep {
    /// Index into [`CommandTool::params`](super::CommandTool::params).
    pub param: usize,
    /// The flag's long name.
    pub name: String,
    /// Which token shape.
    pub render: FlagRender,
}

/// Token shapes of a flag (all single tokens, never `--name value`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagRender {
    /// `--name=value`.
    Value,
    /// One `--name=value` per element.
    Values,
    /// One `--name=key=value` per entry, keys sorted.
    Map,
    /// `--name` / `--no-name`.
    Negatable,
    /// `--name` for true; false only when the default is not true.
    Switch {
        /// One of the flag's defaults parses as true.
        defaults_to_true: bool,
    },
    /// `--name` repeated.
    Counter,
}

/// One positional argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PositionalStep {
    /// The argument's name.
    pub name: String,
    /// Index into [`CommandTool::params`](super::CommandTool::params); `None` for a hidden argument, which a client cannot set.
    pub param: Option<usize>,
    /// Declared defaults, used when a later argument is set.
    pub defaults: Vec<String>,
    /// Which token shape.
    pub render: PositionalRender,
}

/// Token shapes of a positional argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PositionalRender {
    /// One token.
    One,
    /// One token per element.
    Many,
    /// One `key=value` token per entry, keys sorted.
    Map,
    /// That many tokens (a counter counts tokens).
    Counter,
    /// Never set by a client (hidden).
    Unset,
}
