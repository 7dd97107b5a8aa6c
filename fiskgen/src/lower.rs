//! Lowering: a served command of the model becomes its IR parameters, typed (the Rust type of
//! every schema property), the argv plan (fisk's `ArgsFromJSON` rules, [`crate::ir::FlagStep`],
//! [`crate::ir::PositionalStep`]) and the input schema advertised to clients. [`crate::select`]
//! lowers every tool it serves, once; nothing after the IR reads the model.
//!
//! Types come from the command's full `schema`, which keeps what the restricted one drops
//! (integer bounds, the float32 maximum, the value type of string maps); exposed global flags,
//! which have no schema in the model, are typed from the property [`merge_globals`] gives them.
//! The advertised schema is the restricted schema merged with the globals, with the fisk quirks that
//! would make it unusable or wrong repaired (see [`Lowered::schema`]):
//!
//! - a `Counter` (a boolean, cumulative flag whose schema is an array of integers) is
//!   advertised as `{"type": "integer", "minimum": 0, "maximum": 255}` and sent as that many
//!   `--name` tokens (as a positional argument, that many tokens);
//! - a `StringMap` advertises the full schema's `additionalProperties: {"type": "string"}`
//!   instead of the restricted `false`, which admits no key at all;
//! - duplicate `required` entries (an argument and a flag of one name, both required) are
//!   removed.
//!
//! Everything else is served verbatim. A schema the generator does not know gets the safest
//! type that matches its JSON type (a `String` for an unknown pattern or `oneOf`) and a warning;
//! one it cannot represent (nested arrays, objects other than string maps) is an error.
//! Parameters named in `param_headers` carry `x-mcp-header` (`headers.rs`); parameters named in
//! `ask` leave the schema for their questions' forms (`questions.rs`).

mod globals;
mod headers;
mod questions;

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value, json};

use crate::ir::{
    FlagRender, FlagStep, IntType, Param, ParamType, PositionalRender, PositionalStep,
};
use crate::model;
pub use globals::merge_globals;

/// fisk's duration pattern (the `µ` is U+00B5).
pub const DURATION_PATTERN: &str = r"^(0|[-+]?(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+)$";
/// fisk's byte-size pattern.
pub const BYTES_PATTERN: &str = r"^(0|[-+]?(\d+(\.\d+)?[a-zA-Z]+)+)$";
/// fisk's hex-bytes pattern.
pub const HEX_PATTERN: &str = r"^([0-9a-fA-F]{2})*$";
/// The `maximum` fisk gives a float32 (`math.MaxFloat32`).
pub const FLOAT32_MAX: f64 = 3.4028234663852886e38;

/// A command tool's parameters, lowered: what [`crate::ir::CommandTool`] keeps, the advertised schema and
/// what was typed by a fallback.
#[derive(Debug, Clone)]
pub struct Lowered {
    /// One per schema property: exposed globals, then flags, then positional arguments, each in
    /// declaration order (an argument that shares a flag's name is the flag's parameter).
    pub params: Vec<Param>,
    /// Flags in argv order: exposed globals, then the command's own flags.
    pub flags: Vec<FlagStep>,
    /// Positional arguments in declaration order, up to the last one a client can set.
    pub positionals: Vec<PositionalStep>,
    /// The advertised input schema: restricted schema, globals and the quirk fixes.
    pub schema: Map<String, Value>,
    /// Schemas that were typed by a fallback.
    pub warnings: Vec<String>,
    /// The tool's questions (`ask`), with their forms.
    pub questions: Vec<crate::ir::Question>,
}

/// A schema that cannot be served as a typed parameter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ParamsError {
    /// The tool.
    pub tool: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ParamsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tool \"{}\": {}", self.tool, self.message)
    }
}

/// What one command tool is lowered from.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// The tool's name (for errors and warnings).
    pub tool: &'a str,
    /// The command as introspected.
    pub command: &'a model::Command,
    /// Exposed global flags that apply to it (not shadowed), in argv order.
    pub globals: &'a [&'a model::Flag],
    /// Its parameters mirrored in HTTP headers (`param_headers`): parameter -> header name.
    pub headers: &'a BTreeMap<String, String>,
    /// Its questions (`ask`): parameters the user answers, in order.
    pub questions: &'a [crate::config::Question],
}

/// Types the parameters of a command tool and builds its advertised schema.
pub fn lower(source: Source<'_>) -> Result<Lowered, ParamsError> {
    Builder::new(source).build()
}

struct Builder<'a> {
    source: Source<'a>,
    properties: Map<String, Value>,
    required: Vec<String>,
    full: Map<String, Value>,
    out: Lowered,
}

impl<'a> Builder<'a> {
    fn new(source: Source<'a>) -> Self {
        let schema = merge_globals(
            source
                .command
                .restricted_schema
                .as_ref()
                .unwrap_or(&Map::new()),
            source.globals,
        );
        let properties = object(schema.get("properties"));
        let mut required: Vec<String> = Vec::new();
        for name in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !required.iter().any(|r| r == name) {
                required.push(name.to_string());
            }
        }
        let full = source
            .command
            .schema
            .as_ref()
            .map(|schema| object(schema.get("properties")))
            .unwrap_or_default();
        Self {
            source,
            properties,
            required,
            full,
            out: Lowered {
                params: Vec::new(),
                flags: Vec::new(),
                positionals: Vec::new(),
                schema,
                warnings: Vec::new(),
                questions: Vec::new(),
            },
        }
    }

    fn error(&self, message: impl Into<String>) -> ParamsError {
        ParamsError {
            tool: self.source.tool.to_string(),
            message: message.into(),
        }
    }

    fn build(mut self) -> Result<Lowered, ParamsError> {
        for flag in self.source.globals {
            let index = self.global(flag)?;
            let render = flag_render(flag, &self.out.params[index].ty);
            self.out.flags.push(FlagStep {
                param: index,
                name: flag.name.clone(),
                render,
            });
        }
        for flag in self.source.command.flags.iter().filter(|flag| !flag.hidden) {
            let index = self.own(&flag.name, Some(flag), None)?;
            let render = flag_render(flag, &self.out.params[index].ty);
            self.out.flags.push(FlagStep {
                param: index,
                name: flag.name.clone(),
                render,
            });
        }
        let last_visible = self.source.command.args.iter().rposition(|arg| !arg.hidden);
        for arg in self
            .source
            .command
            .args
            .iter()
            .take(last_visible.map_or(0, |i| i + 1))
        {
            if arg.hidden {
                self.out.positionals.push(PositionalStep {
                    name: arg.name.clone(),
                    param: None,
                    defaults: arg.default.clone(),
                    render: PositionalRender::Unset,
                });
                continue;
            }
            let shared = self
                .source
                .command
                .flags
                .iter()
                .find(|flag| !flag.hidden && flag.name == arg.name);
            let index = match shared {
                Some(_) => self.index_of(&arg.name)?,
                None => self.own(&arg.name, None, Some(arg))?,
            };
            let render = match &self.out.params[index].ty {
                ParamType::List(_) => PositionalRender::Many,
                ParamType::StringMap => PositionalRender::Map,
                ParamType::Counter => PositionalRender::Counter,
                _ => PositionalRender::One,
            };
            self.out.positionals.push(PositionalStep {
                name: arg.name.clone(),
                param: Some(index),
                defaults: arg.default.clone(),
                render,
            });
        }
        self.finish()
    }

    fn index_of(&self, name: &str) -> Result<usize, ParamsError> {
        self.out
            .params
            .iter()
            .position(|param| param.name == name)
            .ok_or_else(|| self.error(format!("no parameter \"{name}\"")))
    }

    /// A property of the command itself: typed from the full schema.
    fn own(
        &mut self,
        name: &str,
        flag: Option<&model::Flag>,
        arg: Option<&model::Arg>,
    ) -> Result<usize, ParamsError> {
        let advertised = self.property(name)?;
        let full = match self.full.get(name) {
            Some(Value::Object(full)) => full.clone(),
            _ => advertised.clone(),
        };
        if full.get("type") != advertised.get("type") {
            return Err(self.error(format!(
                "property \"{name}\" has type {} in the schema but {} in the restricted schema",
                full.get("type").unwrap_or(&Value::Null),
                advertised.get("type").unwrap_or(&Value::Null),
            )));
        }
        let counter = flag.is_some_and(|flag| flag.boolean && flag.cumulative)
            || arg.is_some_and(|arg| arg.cumulative && is_integer_array(&full));
        let ty = if counter {
            ParamType::Counter
        } else {
            self.param_type(name, &full)?
        };
        if flag.is_some_and(|flag| flag.boolean)
            && !matches!(ty, ParamType::Bool | ParamType::Counter)
        {
            return Err(self.error(format!(
                "flag \"{name}\" takes no value but its schema is not a boolean"
            )));
        }
        Ok(self.push(name, &advertised, ty, false, &full))
    }

    /// An exposed global flag: typed from the property `select` merged in.
    fn global(&mut self, flag: &model::Flag) -> Result<usize, ParamsError> {
        let advertised = self.property(&flag.name)?;
        let ty = if flag.boolean && flag.cumulative {
            ParamType::Counter
        } else {
            self.param_type(&flag.name, &advertised)?
        };
        Ok(self.push(&flag.name, &advertised, ty, true, &advertised))
    }

    fn property(&self, name: &str) -> Result<Map<String, Value>, ParamsError> {
        match self.properties.get(name) {
            Some(Value::Object(property)) => Ok(property.clone()),
            _ => Err(self.error(format!(
                "the input schema has no property for \"{name}\", a flag or argument of the \
                 command"
            ))),
        }
    }

    fn push(
        &mut self,
        name: &str,
        advertised: &Map<String, Value>,
        ty: ParamType,
        global: bool,
        full: &Map<String, Value>,
    ) -> usize {
        let description = advertised
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let fixed = match &ty {
            ParamType::Counter => Some(json!({
                "type": "integer", "minimum": 0, "maximum": 255, "description": description,
            })),
            ParamType::StringMap => {
                let mut property = advertised.clone();
                property.insert(
                    "additionalProperties".into(),
                    full.get("additionalProperties")
                        .cloned()
                        .unwrap_or(json!({"type": "string"})),
                );
                Some(Value::Object(property))
            }
            _ => None,
        };
        if let Some(fixed) = fixed {
            self.properties.insert(name.to_string(), fixed);
        }
        self.out.params.push(Param {
            name: name.to_string(),
            description,
            required: self.required.iter().any(|r| r == name),
            ty,
            global,
            header: None,
        });
        self.out.params.len() - 1
    }

    /// The Rust-side type of a (full) property schema.
    fn param_type(
        &mut self,
        name: &str,
        schema: &Map<String, Value>,
    ) -> Result<ParamType, ParamsError> {
        let ty = schema
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match ty {
            "array" => {
                let items = object(schema.get("items"));
                match items.get("type").and_then(Value::as_str) {
                    Some("array" | "object") | None => Err(self.error(format!(
                        "property \"{name}\" is an array of {}, which cannot be passed on a \
                         command line; exclude the tool",
                        items
                            .get("type")
                            .map_or("untyped items".to_string(), Value::to_string)
                    ))),
                    Some(_) => Ok(ParamType::List(Box::new(self.scalar(name, &items)?))),
                }
            }
            "object" => match schema.get("additionalProperties") {
                Some(Value::Object(values))
                    if values.get("type").and_then(Value::as_str) == Some("string") =>
                {
                    Ok(ParamType::StringMap)
                }
                _ => Err(self.error(format!(
                    "property \"{name}\" is an object that is not a map of strings; exclude the \
                     tool"
                ))),
            },
            _ => self.scalar(name, schema),
        }
    }

    fn scalar(
        &mut self,
        name: &str,
        schema: &Map<String, Value>,
    ) -> Result<ParamType, ParamsError> {
        let ty = schema
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let minimum = schema.get("minimum").and_then(Value::as_f64);
        let maximum = schema.get("maximum").and_then(Value::as_f64);
        let known_one_of = schema
            .get("oneOf")
            .is_none_or(|one_of| *one_of == json!([{"format": "ipv4"}, {"format": "ipv6"}]));
        if !known_one_of {
            self.warn(
                name,
                "has a oneOf the generator does not know; typed by its \"type\"",
            );
        }
        let int = |int| Ok(ParamType::Int(int));
        match ty {
            "boolean" => Ok(ParamType::Bool),
            "integer" => match (minimum, maximum) {
                (None, None) => int(IntType::I64),
                (Some(-128.0), Some(127.0)) => int(IntType::I8),
                (Some(-32768.0), Some(32767.0)) => int(IntType::I16),
                (Some(-2147483648.0), Some(2147483647.0)) => int(IntType::I32),
                (Some(0.0), None) => int(IntType::U64),
                (Some(0.0), Some(255.0)) => int(IntType::U8),
                (Some(0.0), Some(65535.0)) => int(IntType::U16),
                (Some(0.0), Some(4294967295.0)) => int(IntType::U32),
                _ => {
                    self.warn(name, "has integer bounds fisk does not generate; typed i64");
                    int(IntType::I64)
                }
            },
            "number" => match (minimum, maximum) {
                (None, None) => Ok(ParamType::F64),
                (None, Some(FLOAT32_MAX)) => Ok(ParamType::F32),
                _ => {
                    self.warn(name, "has number bounds fisk does not generate; typed f64");
                    Ok(ParamType::F64)
                }
            },
            "string" => {
                if let Some(values) = schema.get("enum") {
                    return self.enumeration(name, values);
                }
                match schema.get("pattern").and_then(Value::as_str) {
                    None => Ok(ParamType::String),
                    Some(DURATION_PATTERN) => Ok(ParamType::Duration),
                    Some(BYTES_PATTERN) => Ok(ParamType::ByteSize),
                    Some(HEX_PATTERN) => Ok(ParamType::HexBytes),
                    Some(pattern) => {
                        self.warn(
                            name,
                            &format!(
                                "has the pattern {pattern:?}, which the generator does not know; \
                                 typed String (the application still validates it)"
                            ),
                        );
                        Ok(ParamType::String)
                    }
                }
            }
            other => Err(self.error(format!(
                "property \"{name}\" has the type {other:?}, which the generator does not know"
            ))),
        }
    }

    fn enumeration(&self, name: &str, values: &Value) -> Result<ParamType, ParamsError> {
        let mut out: Vec<String> = Vec::new();
        for value in values.as_array().into_iter().flatten() {
            let Some(text) = value.as_str() else {
                return Err(self.error(format!(
                    "property \"{name}\" has the non-string enum value {value}"
                )));
            };
            if !out.iter().any(|seen| seen == text) {
                out.push(text.to_string());
            }
        }
        if out.is_empty() {
            return Err(self.error(format!("property \"{name}\" is an enum without values")));
        }
        Ok(ParamType::Enum(out))
    }

    fn warn(&mut self, name: &str, what: &str) {
        self.out.warnings.push(format!(
            "tool \"{}\": property \"{name}\" {what}",
            self.source.tool
        ));
    }

    fn finish(mut self) -> Result<Lowered, ParamsError> {
        for name in self.properties.keys() {
            if !self.out.params.iter().any(|param| &param.name == name) {
                return Err(self.error(format!(
                    "the input schema has a property \"{name}\" that no visible flag, argument \
                     or exposed global flag of the command provides"
                )));
            }
        }
        for name in &self.required {
            if !self.properties.contains_key(name) {
                return Err(self.error(format!(
                    "the input schema requires \"{name}\", which is not one of its properties"
                )));
            }
        }
        let tool = self.source.tool;
        headers::annotate(
            &mut self.properties,
            &mut self.out.params,
            self.source.headers,
        )
        .map_err(|message| ParamsError {
            tool: tool.to_string(),
            message,
        })?;
        self.out.questions = questions::ask(
            &mut self.properties,
            &mut self.required,
            &self.out.params,
            self.source.command,
            self.source.globals,
            self.source.questions,
        )
        .map_err(|message| ParamsError {
            tool: tool.to_string(),
            message,
        })?;
        self.out
            .schema
            .insert("properties".into(), Value::Object(self.properties));
        if self.required.is_empty() {
            self.out.schema.remove("required");
        } else {
            self.out.schema.insert(
                "required".into(),
                Value::Array(self.required.into_iter().map(Value::String).collect()),
            );
        }
        Ok(self.out)
    }
}

/// How a flag of a given type is rendered.
fn flag_render(flag: &model::Flag, ty: &ParamType) -> FlagRender {
    match ty {
        ParamType::Counter => FlagRender::Counter,
        ParamType::Bool if flag.boolean && flag.negatable => FlagRender::Negatable,
        ParamType::Bool if flag.boolean => FlagRender::Switch {
            defaults_to_true: flag.defaults_to_true(),
        },
        ParamType::List(_) => FlagRender::Values,
        ParamType::StringMap => FlagRender::Map,
        _ => FlagRender::Value,
    }
}

fn is_integer_array(schema: &Map<String, Value>) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("array")
        && object(schema.get("items"))
            .get("type")
            .and_then(Value::as_str)
            == Some("integer")
}

fn object(value: Option<&Value>) -> Map<String, Value> {
    match value {
        Some(Value::Object(map)) => map.clone(),
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flag(value: Value) -> Value {
        value
    }

    /// A command with these schemas, flags and arguments, and the exposed globals.
    struct Tool {
        command: model::Command,
        globals: Vec<model::Flag>,
    }

    fn tool(
        restricted: Value,
        full: Value,
        flags: Vec<Value>,
        args: Value,
        globals: Vec<Value>,
    ) -> Tool {
        let command = json!({
            "name": "t", "restricted_schema": restricted, "schema": full, "flags": flags,
            "args": args,
        });
        fn parse<T: serde::de::DeserializeOwned>(value: Value) -> T {
            serde_json::from_value(value).unwrap_or_else(|error| panic!("{error}"))
        }
        Tool {
            command: parse(command),
            globals: globals.into_iter().map(parse).collect(),
        }
    }

    fn typed(tool: &Tool) -> Result<Lowered, ParamsError> {
        let globals: Vec<&model::Flag> = tool.globals.iter().collect();
        lower(Source {
            tool: "t",
            command: &tool.command,
            globals: &globals,
            headers: &BTreeMap::new(),
            questions: &[],
        })
    }

    #[test]
    fn bounds_pick_integer_types_and_float32() {
        let cases = [
            (json!({"type": "integer"}), ParamType::Int(IntType::I64)),
            (
                json!({"type": "integer", "minimum": -128, "maximum": 127}),
                ParamType::Int(IntType::I8),
            ),
            (
                json!({"type": "integer", "minimum": 0}),
                ParamType::Int(IntType::U64),
            ),
            (
                json!({"type": "integer", "minimum": 0, "maximum": 4294967295u64}),
                ParamType::Int(IntType::U32),
            ),
            (
                json!({"type": "number", "maximum": FLOAT32_MAX}),
                ParamType::F32,
            ),
            (
                json!({"type": "string", "pattern": DURATION_PATTERN}),
                ParamType::Duration,
            ),
            (
                json!({"type": "string", "enum": ["a", "b", "a"]}),
                ParamType::Enum(vec!["a".into(), "b".into()]),
            ),
            (
                json!({"type": "array", "items": {"type": "string", "format": "uri"}}),
                ParamType::List(Box::new(ParamType::String)),
            ),
            (
                json!({"type": "object", "additionalProperties": {"type": "string"}}),
                ParamType::StringMap,
            ),
        ];
        for (full, expected) in cases {
            let restricted = json!({"type": "object", "properties": {"x": {"type": full["type"], "description": "X"}}});
            let tool = tool(
                restricted,
                json!({"properties": {"x": full}}),
                vec![flag(json!({"name": "x"}))],
                json!([]),
                vec![],
            );
            let params = typed(&tool).unwrap_or_else(|error| panic!("{error}"));
            assert_eq!(params.params[0].ty, expected);
        }
    }

    #[test]
    fn counters_and_string_maps_are_advertised_usably() {
        let tool = tool(
            json!({"type": "object", "properties": {
                "v": {"type": "array", "items": {"type": "integer"}, "description": "Verbose"},
                "env": {"type": "object", "additionalProperties": false, "description": "Env"}}}),
            json!({"properties": {
                "v": {"type": "array", "items": {"type": "integer"}},
                "env": {"type": "object", "additionalProperties": {"type": "string"}}}}),
            vec![
                flag(json!({"name": "v", "boolean": true, "cumulative": true})),
                flag(json!({"name": "env", "cumulative": true})),
            ],
            json!([]),
            vec![],
        );
        let params = typed(&tool).unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(params.params[0].ty, ParamType::Counter);
        assert_eq!(params.flags[0].render, FlagRender::Counter);
        assert_eq!(
            params.schema["properties"]["v"],
            json!({"type": "integer", "minimum": 0, "maximum": 255, "description": "Verbose"})
        );
        assert_eq!(
            params.schema["properties"]["env"]["additionalProperties"],
            json!({"type": "string"})
        );
    }

    #[test]
    fn a_shared_name_is_one_parameter_rendered_twice_and_required_once() {
        let tool = tool(
            json!({"type": "object", "properties": {"name": {"type": "integer"}},
                   "required": ["name", "name"]}),
            json!({"properties": {"name": {"type": "integer"}}}),
            vec![flag(json!({"name": "name", "required": true}))],
            json!([{"name": "name", "required": true}]),
            vec![],
        );
        let params = typed(&tool).unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(params.params.len(), 1);
        assert_eq!(params.flags[0].param, 0);
        assert_eq!(params.positionals[0].param, Some(0));
        assert_eq!(params.schema["required"], json!(["name"]));
    }

    #[test]
    fn hidden_arguments_before_visible_ones_stay_in_the_positionals() {
        let tool = tool(
            json!({"type": "object", "properties": {"b": {"type": "string"}}}),
            json!({"properties": {"b": {"type": "string"}}}),
            vec![],
            json!([{"name": "a", "hidden": true, "default": ["x"]}, {"name": "b"},
                   {"name": "c", "hidden": true}]),
            vec![],
        );
        let params = typed(&tool).unwrap_or_else(|error| panic!("{error}"));
        let names: Vec<(&str, Option<usize>)> = params
            .positionals
            .iter()
            .map(|p| (p.name.as_str(), p.param))
            .collect();
        assert_eq!(names, [("a", None), ("b", Some(0))]);
    }

    #[test]
    fn unknown_patterns_fall_back_with_a_warning_and_nested_arrays_are_errors() {
        let tool_with = |full: Value| {
            tool(
                json!({"type": "object", "properties": {"x": {"type": full["type"]}}}),
                json!({"properties": {"x": full}}),
                vec![flag(json!({"name": "x"}))],
                json!([]),
                vec![],
            )
        };
        let params = typed(&tool_with(json!({"type": "string", "pattern": "^x+$"})))
            .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(params.params[0].ty, ParamType::String);
        assert!(
            params.warnings[0].contains("\"^x+$\""),
            "{:?}",
            params.warnings
        );
        let error = typed(&tool_with(
            json!({"type": "array", "items": {"type": "array"}}),
        ))
        .expect_err("nested arrays");
        assert!(
            error
                .to_string()
                .contains("cannot be passed on a command line"),
            "{error}"
        );
    }

    #[test]
    fn schema_and_flags_must_agree() {
        let tool = tool(
            json!({"type": "object", "properties": {"ghost": {"type": "string"}}}),
            json!({}),
            vec![],
            json!([]),
            vec![],
        );
        let error = typed(&tool).expect_err("no flag for ghost");
        assert!(error.to_string().contains("\"ghost\""), "{error}");
    }

    #[test]
    fn globals_render_first_and_bools_by_negatability() {
        let tool = tool(
            json!({"type": "object", "properties": {
                "trace": {"type": "boolean"}, "json": {"type": "boolean"}}}),
            json!({"properties": {"json": {"type": "boolean"}}}),
            vec![flag(
                json!({"name": "json", "boolean": true, "default": ["true"]}),
            )],
            json!([]),
            vec![flag(
                json!({"name": "trace", "boolean": true, "negatable": true}),
            )],
        );
        let params = typed(&tool).unwrap_or_else(|error| panic!("{error}"));
        assert!(params.params[0].global);
        assert_eq!(params.flags[0].render, FlagRender::Negatable);
        assert_eq!(
            params.flags[1].render,
            FlagRender::Switch {
                defaults_to_true: true
            }
        );
    }
}
