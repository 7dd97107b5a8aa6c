//! A call's arguments, read through its command's parameter table onto the command line.
//!
//! Generated code declares each command's parameters as a static table
//! ([`Param`](crate::spec::params::Param)); [`command_argv`] reads a call's arguments
//! through it: each property once, converted by its [`Type`] (the conversions below, whose
//! errors name the property in the words of `spec/arg_errors.rs`), then every parameter rendered
//! in table order. Properties the table does not name are refused. Nothing is generic or
//! generated per command (`docs/generated-code.md`, "Parameter tables").

use std::collections::BTreeMap;

use serde_json::Value;

use crate::JsonObject;
use crate::spec::arg_errors::{Problem, got_value, range_phrase};
use crate::spec::argv::{ArgValue, Argv, InvalidArguments, Positional};
use crate::spec::params::{Command, Param, Place, Type};
use crate::spec::values::{ByteSize, GoDuration, HexBytes};

/// The command line of a command tool: its path, the global flags it offers, its flags, then
/// `--` and its positional arguments, from a call's arguments.
pub fn command_argv(command: &Command, arguments: JsonObject) -> Result<Argv, InvalidArguments> {
    let table: Vec<&'static Param> = command.globals.offered().chain(command.params).collect();
    let mut arguments = Arguments::new(arguments);
    // Each property once, in table order (a name may appear as a flag and as an argument).
    let mut values: Vec<(&'static str, Option<Tokens>)> = Vec::new();
    for param in &table {
        if matches!(param.place, Place::Hidden { .. })
            || values.iter().any(|(name, _)| *name == param.name)
        {
            continue;
        }
        let value = arguments.take(param.name, param.required)?;
        let tokens = value
            .map(|value| Tokens::of(&param.ty, value).map_err(|error| error.at(param.name)))
            .transpose()?;
        values.push((param.name, tokens));
    }
    arguments.finish()?;

    let mut argv = Argv::new(command.path);
    let mut positionals = Vec::new();
    for param in table {
        let value = values
            .iter()
            .find(|(name, _)| *name == param.name)
            .and_then(|(_, tokens)| tokens.as_ref());
        match param.place {
            Place::Arg { defaults } | Place::Hidden { defaults } => positionals.push(Positional {
                name: param.name,
                tokens: value.map(Tokens::positional),
                defaults,
            }),
            place => {
                if let Some(value) = value {
                    value.flag(param.name, place, &mut argv)?;
                }
            }
        }
    }
    argv.positionals(&positionals)?;
    Ok(argv)
}

/// A converted value, ready to render.
#[derive(Debug, Clone, PartialEq)]
enum Tokens {
    /// One token.
    One(String),
    /// A boolean.
    Bool(bool),
    /// One token per element.
    Many(Vec<String>),
    /// `key=value` per entry, keys sorted.
    Map(BTreeMap<String, String>),
    /// A counter.
    Count(u8),
}

impl Tokens {
    /// Converts one property's value by its type.
    fn of(ty: &Type, value: Value) -> Result<Self, ArgError> {
        Ok(match ty {
            Type::Bool => Self::Bool(bool::from_arg(value)?),
            Type::List(inner) => {
                let Value::Array(items) = value else {
                    return Err(ArgError::wrong_type("a list", &value));
                };
                let tokens = items
                    .into_iter()
                    .enumerate()
                    .map(|(index, item)| {
                        scalar(inner, item).map_err(|error| error.within(format!("[{index}]")))
                    })
                    .collect::<Result<_, _>>()?;
                Self::Many(tokens)
            }
            Type::StringMap => Self::Map(BTreeMap::from_arg(value)?),
            Type::Counter => Self::Count(u8::from_arg(value)?),
            scalar_type => Self::One(scalar(scalar_type, value)?),
        })
    }

    /// The tokens of a positional argument.
    fn positional(&self) -> Vec<String> {
        match self {
            Self::One(token) => vec![token.clone()],
            Self::Bool(value) => vec![value.to_string()],
            Self::Many(tokens) => tokens.clone(),
            Self::Map(map) => map.iter().map(|(k, v)| format!("{k}={v}")).collect(),
            // fisk counts a counter's tokens whatever they say.
            Self::Count(count) => vec!["1".to_string(); usize::from(*count)],
        }
    }

    /// Puts a flag on the command line.
    fn flag(&self, name: &str, place: Place, argv: &mut Argv) -> Result<(), InvalidArguments> {
        match (self, place) {
            (Self::Bool(value), Place::Negatable) => argv.negatable(name, *value),
            (Self::Bool(value), Place::SwitchOn) => argv.switch(name, *value, true)?,
            (Self::Bool(value), Place::Switch) => argv.switch(name, *value, false)?,
            (Self::Bool(value), _) => argv.value(name, &value.to_arg()),
            (Self::One(token), _) => argv.value(name, token),
            (Self::Many(tokens), _) => argv.values(name, tokens),
            (Self::Map(map), _) => argv.map(name, map),
            (Self::Count(count), _) => argv.counter(name, *count),
        }
        Ok(())
    }
}

/// The token of a scalar value.
fn scalar(ty: &Type, value: Value) -> Result<String, ArgError> {
    Ok(match ty {
        Type::Bool => bool::from_arg(value)?.to_arg(),
        Type::I8 => i8::from_arg(value)?.to_arg(),
        Type::I16 => i16::from_arg(value)?.to_arg(),
        Type::I32 => i32::from_arg(value)?.to_arg(),
        Type::I64 => i64::from_arg(value)?.to_arg(),
        Type::U8 | Type::Counter => u8::from_arg(value)?.to_arg(),
        Type::U16 => u16::from_arg(value)?.to_arg(),
        Type::U32 => u32::from_arg(value)?.to_arg(),
        Type::U64 => u64::from_arg(value)?.to_arg(),
        Type::F32 => f32::from_arg(value)?.to_arg(),
        Type::F64 => f64::from_arg(value)?.to_arg(),
        Type::String => String::from_arg(value)?,
        Type::Choice(values) => choice(value, values)?,
        Type::Duration => GoDuration::from_arg(value)?.to_arg(),
        Type::ByteSize => ByteSize::from_arg(value)?.to_arg(),
        Type::HexBytes => HexBytes::from_arg(value)?.to_arg(),
        // The generator declares lists and maps of scalars only.
        Type::List(_) => return Err(ArgError::wrong_type("a single value", &value)),
        Type::StringMap => return Err(ArgError::wrong_type("a single value", &value)),
    })
}

/// A value that can be read from one JSON property.
pub(crate) trait FromArg: Sized {
    /// Converts the property's value (never `null` for an optional property: that is "not
    /// given").
    fn from_arg(value: Value) -> Result<Self, ArgError>;
}

/// Why a value does not convert: the problem, and where below the property it is (`[2]` for
/// a list element, `.key` for a map entry; empty for the value itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ArgError {
    path: String,
    problem: Problem,
}

impl ArgError {
    fn new(problem: Problem) -> Self {
        Self {
            path: String::new(),
            problem,
        }
    }

    fn wrong_type(expected: &str, got: &Value) -> Self {
        Self::new(Problem::Type {
            expected: expected.to_string(),
            got: got_value(got),
        })
    }

    fn within(mut self, segment: String) -> Self {
        self.path.insert_str(0, &segment);
        self
    }

    fn at(self, property: &str) -> InvalidArguments {
        InvalidArguments::from_problem(&format!("{property}{}", self.path), &self.problem)
    }
}

/// A call's arguments, taken property by property.
#[derive(Debug)]
struct Arguments {
    object: JsonObject,
    known: Vec<&'static str>,
}

impl Arguments {
    fn new(object: JsonObject) -> Self {
        Self {
            object,
            known: Vec::new(),
        }
    }

    /// A property's value: absent or `null` is `None` when optional; absent is refused when
    /// required (and `null` is then a value of the wrong type).
    fn take(
        &mut self,
        name: &'static str,
        required: bool,
    ) -> Result<Option<Value>, InvalidArguments> {
        self.known.push(name);
        match self.object.remove(name) {
            None if required => Err(InvalidArguments::from_problem(name, &Problem::Missing)),
            None => Ok(None),
            Some(Value::Null) if !required => Ok(None),
            Some(value) => Ok(Some(value)),
        }
    }

    /// Refuses the first property the table does not name, naming the ones the tool takes.
    fn finish(self) -> Result<(), InvalidArguments> {
        match self.object.keys().next() {
            None => Ok(()),
            Some(unknown) => Err(InvalidArguments::from_problem(
                unknown,
                &Problem::Unknown {
                    known: self.known.iter().map(|name| name.to_string()).collect(),
                },
            )),
        }
    }
}

impl FromArg for bool {
    fn from_arg(value: Value) -> Result<Self, ArgError> {
        match value {
            Value::Bool(value) => Ok(value),
            other => Err(ArgError::wrong_type("true or false", &other)),
        }
    }
}

macro_rules! integer {
    ($($t:ty),*) => {$(
        impl FromArg for $t {
            fn from_arg(value: Value) -> Result<Self, ArgError> {
                let Value::Number(number) = &value else {
                    return Err(ArgError::wrong_type("an integer", &value));
                };
                let converted = match (number.as_i64(), number.as_u64()) {
                    (Some(signed), _) => <$t>::try_from(signed).ok(),
                    (None, Some(unsigned)) => <$t>::try_from(unsigned).ok(),
                    (None, None) => return Err(ArgError::wrong_type("an integer", &value)),
                };
                converted.ok_or_else(|| {
                    ArgError::new(Problem::Range {
                        expected: range_phrase(stringify!($t)),
                        got: got_value(&value),
                    })
                })
            }
        }
    )*};
}

integer!(i8, i16, i32, i64, u8, u16, u32, u64);

impl FromArg for f64 {
    fn from_arg(value: Value) -> Result<Self, ArgError> {
        match value.as_f64() {
            Some(number) if value.is_number() => Ok(number),
            _ => Err(ArgError::wrong_type("a number", &value)),
        }
    }
}

impl FromArg for f32 {
    fn from_arg(value: Value) -> Result<Self, ArgError> {
        // As serde_json does: beyond the float32 range is infinity (docs/generated-code.md).
        #[allow(clippy::cast_possible_truncation)]
        f64::from_arg(value).map(|number| number as f32)
    }
}

impl FromArg for String {
    fn from_arg(value: Value) -> Result<Self, ArgError> {
        match value {
            Value::String(text) => Ok(text),
            other => Err(ArgError::wrong_type("a string", &other)),
        }
    }
}

macro_rules! pattern {
    ($($t:ty),*) => {$(
        impl FromArg for $t {
            fn from_arg(value: Value) -> Result<Self, ArgError> {
                let text = String::from_arg(value)?;
                <$t>::parse(&text).map_err(|message| ArgError::new(Problem::Other(message)))
            }
        }
    )*};
}

pattern!(GoDuration, ByteSize, HexBytes);

impl FromArg for BTreeMap<String, String> {
    fn from_arg(value: Value) -> Result<Self, ArgError> {
        let Value::Object(entries) = value else {
            return Err(ArgError::wrong_type("an object", &value));
        };
        entries
            .into_iter()
            .map(|(key, value)| match String::from_arg(value) {
                Ok(text) => Ok((key, text)),
                Err(error) => Err(error.within(format!(".{key}"))),
            })
            .collect()
    }
}

/// One of a choice's values.
fn choice(value: Value, values: &[&str]) -> Result<String, ArgError> {
    let Value::String(text) = value else {
        return Err(ArgError::wrong_type(
            "one of the listed values (a string)",
            &value,
        ));
    };
    if values.contains(&text.as_str()) {
        return Ok(text);
    }
    Err(ArgError::new(Problem::NotOneOf {
        values: values.iter().map(|name| name.to_string()).collect(),
        got: text,
    }))
}

#[cfg(test)]
mod tests {
    //! The texts are those serde's derive gave (`arg_errors.rs` tests the same words from
    //! serde's messages), so clients see no change.

    use serde_json::json;

    use super::*;
    use crate::spec::params::Globals;

    fn argv(params: &'static [Param], arguments: Value) -> Result<Vec<String>, String> {
        let command = Command {
            path: &["cmd"],
            globals: Globals::NONE,
            params,
        };
        let object = arguments.as_object().cloned().unwrap_or_default();
        command_argv(&command, object)
            .map(Argv::into_vec)
            .map_err(|error| error.to_string())
    }

    fn error(ty: Type, value: Value) -> String {
        let params: &'static [Param] = Box::leak(Box::new([Param::flag("p", ty)]));
        match argv(params, json!({ "p": value })) {
            Ok(argv) => panic!("accepted: {argv:?}"),
            Err(error) => error,
        }
    }

    #[test]
    fn type_errors_say_what_was_expected_and_what_came() {
        assert_eq!(
            error(Type::I64, json!("nope")),
            "invalid arguments: property `p`: expected an integer, got the string \"nope\""
        );
        assert_eq!(
            error(Type::Bool, json!(1)),
            "invalid arguments: property `p`: expected true or false, got the number 1"
        );
        assert_eq!(
            error(Type::List(&Type::String), json!("a")),
            "invalid arguments: property `p`: expected a list, got the string \"a\""
        );
        assert_eq!(
            error(Type::I64, json!(1.5)),
            "invalid arguments: property `p`: expected an integer, got the number 1.5"
        );
        assert_eq!(
            error(Type::F64, json!({})),
            "invalid arguments: property `p`: expected a number, got an object"
        );
        static TITLE: &[Param] = &[Param::flag("title", Type::String).required()];
        assert_eq!(
            argv(TITLE, json!({ "title": null })),
            Err("invalid arguments: property `title`: expected a string, got null".to_string())
        );
    }

    #[test]
    fn ranges_elements_and_map_values_are_located() {
        assert_eq!(
            error(Type::U8, json!(300)),
            "invalid arguments: property `p`: expected an integer from 0 to 255, got the number 300"
        );
        assert_eq!(
            error(Type::U64, json!(-1)),
            "invalid arguments: property `p`: expected an integer of 0 or more, got the number -1"
        );
        assert_eq!(
            error(Type::List(&Type::I8), json!([1, 200])),
            "invalid arguments: property `p[1]`: expected an integer from -128 to 127, got the \
             number 200"
        );
        assert_eq!(
            error(Type::StringMap, json!({"k": 1})),
            "invalid arguments: property `p.k`: expected a string, got the number 1"
        );
        assert_eq!(
            error(Type::Duration, json!("1d")),
            "invalid arguments: property `p`: \"1d\" is not a duration such as 300ms, 1.5h or \
             2h45m (units ns, us, ms, s, m, h)"
        );
    }

    #[test]
    fn missing_unknown_and_null() {
        static PARAMS: &[Param] = &[
            Param::flag("a", Type::String),
            Param::flag("count", Type::U8).required(),
        ];
        assert_eq!(
            argv(PARAMS, json!({ "a": null, "cout": 1 })),
            Err("invalid arguments: property `count` is required".to_string())
        );
        assert_eq!(
            argv(PARAMS, json!({ "a": null, "count": 1, "cout": 1 })),
            Err(
                "invalid arguments: unknown property `cout` (the tool takes: a, count)".to_string()
            )
        );
        assert_eq!(
            argv(&[], json!({ "x": 1 })),
            Err(
                "invalid arguments: unknown property `x` (the tool takes no arguments)".to_string()
            )
        );
    }

    #[test]
    fn choices_name_the_allowed_values() {
        static LEVEL: &[Param] = &[Param::flag("level", Type::Choice(&["debug", "info"]))];
        assert_eq!(
            argv(LEVEL, json!({ "level": "info" })),
            Ok(vec!["cmd".to_string(), "--level=info".to_string()])
        );
        assert_eq!(
            argv(LEVEL, json!({ "level": "loud" })),
            Err(
                "invalid arguments: property `level`: must be one of \"debug\", \"info\", got \
                 \"loud\""
                    .to_string()
            )
        );
    }

    #[test]
    fn every_place_renders_as_fisk_parses_it() {
        static PARAMS: &[Param] = &[
            Param::switch("json"),
            Param::negatable("pem"),
            Param::flag("strict", Type::Bool),
            Param::flag("label", Type::List(&Type::String)),
            Param::flag("env", Type::StringMap),
            Param::flag("verbose", Type::Counter),
            Param::flag("name", Type::String),
            Param::hidden("secret", &["s"]),
            Param::arg("name", Type::String),
            Param::arg("ttl", Type::Duration).defaults(&["1h"]),
            Param::arg("count", Type::Counter),
        ];
        let arguments = json!({
            "json": false, "pem": false, "strict": false, "label": ["a", "b"], "env": {"b": "2", "a": "1"},
            "verbose": 2, "name": "--x", "count": 2,
        });
        assert_eq!(
            argv(PARAMS, arguments).expect("valid"),
            [
                "cmd",
                "--no-pem",
                "--strict=false",
                "--label=a",
                "--label=b",
                "--env=a=1",
                "--env=b=2",
                "--verbose",
                "--verbose",
                "--name=--x",
                "--",
                "s",
                "--x",
                "1h",
                "1",
                "1",
            ]
        );
        static ON: &[Param] = &[Param::switch_on("progress")];
        assert_eq!(
            argv(ON, json!({ "progress": false })),
            Err(
                "invalid arguments: property `progress`: cannot be set to false: the flag has no \
                 negation and defaults to true"
                    .to_string()
            )
        );
    }

    #[test]
    fn globals_come_first_less_the_shadowed_ones() {
        static GLOBALS: &[Param] = &[
            Param::flag("server", Type::String),
            Param::flag("context", Type::String),
        ];
        static PARAMS: &[Param] = &[Param::arg("context", Type::I64)];
        let command = Command {
            path: &["ls"],
            globals: Globals::new(GLOBALS).except(&["context"]),
            params: PARAMS,
        };
        let object = json!({ "server": "a", "context": 3 });
        let argv =
            command_argv(&command, object.as_object().cloned().unwrap_or_default()).expect("valid");
        assert_eq!(argv.into_vec(), ["ls", "--server=a", "--", "3"]);
    }
}
