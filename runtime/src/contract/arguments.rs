//! A call's arguments, read property by property into a generated handler's typed struct.
//!
//! Generated handlers do not derive `Deserialize`: each field is one call of
//! [`Arguments::optional`] or [`Arguments::required`], whose value type implements [`FromArg`]
//! here (scalars, the pattern strings of `values.rs`, lists, string maps) or in the generated
//! crate (enums, through [`choice`]). This keeps serde's per-type machinery out of generated
//! crates (`docs/generated-code.md`, "Handlers") while every error still names the property in
//! the words of `mcp/arg_errors.rs`. [`Arguments::finish`] refuses properties no field asked for.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::JsonObject;
use crate::contract::argv::{Argv, InvalidArguments};
use crate::mcp::arg_errors::{Problem, got_value, range_phrase};

/// A command's generated handler: reads a call's arguments into the command's typed argument
/// struct and puts them on the command line, which already holds the command path.
pub type ArgvFn = fn(&mut Arguments, &mut Argv) -> Result<(), InvalidArguments>;

/// The command line of a command tool: its path, then what its generated handler puts on it;
/// properties the handler did not read are refused.
pub fn command_argv(
    command: &[&str],
    handler: ArgvFn,
    arguments: JsonObject,
) -> Result<Argv, InvalidArguments> {
    let mut arguments = Arguments::new(arguments);
    let mut argv = Argv::new(command);
    handler(&mut arguments, &mut argv)?;
    arguments.finish()?;
    Ok(argv)
}

/// The handler of a command that takes no arguments: [`command_argv`] refuses any property.
pub fn no_arguments(_: &mut Arguments, _: &mut Argv) -> Result<(), InvalidArguments> {
    Ok(())
}

/// A value that can be read from one JSON property.
pub trait FromArg: Sized {
    /// Converts the property's value (never `null` for an optional property: that is "not
    /// given").
    fn from_arg(value: Value) -> Result<Self, ArgError>;
}

/// Why a value does not convert: the problem, and where below the property it is (`[2]` for
/// a list element, `.key` for a map entry; empty for the value itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgError {
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

/// A call's arguments on their way into a typed struct.
#[derive(Debug)]
pub struct Arguments {
    object: JsonObject,
    known: Vec<&'static str>,
}

impl Arguments {
    /// The arguments a client sent.
    pub fn new(object: JsonObject) -> Self {
        Self {
            object,
            known: Vec::new(),
        }
    }

    /// An optional property: absent or `null` is `None`.
    pub fn optional<T: FromArg>(
        &mut self,
        name: &'static str,
    ) -> Result<Option<T>, InvalidArguments> {
        self.known.push(name);
        match self.object.remove(name) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => T::from_arg(value).map(Some).map_err(|error| error.at(name)),
        }
    }

    /// A required property: absent is refused, and so is `null`.
    pub fn required<T: FromArg>(&mut self, name: &'static str) -> Result<T, InvalidArguments> {
        self.known.push(name);
        match self.object.remove(name) {
            None => Err(InvalidArguments::from_problem(name, &Problem::Missing)),
            Some(value) => T::from_arg(value).map_err(|error| error.at(name)),
        }
    }

    /// Refuses the first property no field asked for, naming the ones the tool takes.
    pub fn finish(self) -> Result<(), InvalidArguments> {
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

pattern!(
    crate::contract::values::GoDuration,
    crate::contract::values::ByteSize,
    crate::contract::values::HexBytes
);

impl<T: FromArg> FromArg for Vec<T> {
    fn from_arg(value: Value) -> Result<Self, ArgError> {
        let Value::Array(items) = value else {
            return Err(ArgError::wrong_type("a list", &value));
        };
        items
            .into_iter()
            .enumerate()
            .map(|(index, item)| {
                T::from_arg(item).map_err(|error| error.within(format!("[{index}]")))
            })
            .collect()
    }
}

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

/// One of an enum's values, by its string: what a generated enum's [`FromArg`] calls.
pub fn choice<T: Copy>(value: Value, values: &[(&str, T)]) -> Result<T, ArgError> {
    let Value::String(text) = &value else {
        return Err(ArgError::wrong_type(
            "one of the listed values (a string)",
            &value,
        ));
    };
    values
        .iter()
        .find(|(name, _)| name == text)
        .map(|(_, variant)| *variant)
        .ok_or_else(|| {
            ArgError::new(Problem::NotOneOf {
                values: values.iter().map(|(name, _)| name.to_string()).collect(),
                got: text.clone(),
            })
        })
}

#[cfg(test)]
mod tests {
    //! The texts are those serde's derive gave (`arg_errors.rs` tests the same words from
    //! serde's messages), so clients see no change.

    use serde_json::json;

    use super::*;
    use crate::contract::values::GoDuration;

    fn arguments(value: Value) -> Arguments {
        Arguments::new(value.as_object().cloned().unwrap_or_default())
    }

    fn error<T: FromArg + std::fmt::Debug>(value: Value) -> String {
        let mut args = arguments(json!({ "p": value }));
        match args.optional::<T>("p") {
            Ok(value) => panic!("accepted: {value:?}"),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn type_errors_say_what_was_expected_and_what_came() {
        assert_eq!(
            error::<i64>(json!("nope")),
            "invalid arguments: property `p`: expected an integer, got the string \"nope\""
        );
        assert_eq!(
            error::<bool>(json!(1)),
            "invalid arguments: property `p`: expected true or false, got the number 1"
        );
        assert_eq!(
            error::<Vec<String>>(json!("a")),
            "invalid arguments: property `p`: expected a list, got the string \"a\""
        );
        assert_eq!(
            error::<i64>(json!(1.5)),
            "invalid arguments: property `p`: expected an integer, got the number 1.5"
        );
        assert_eq!(
            error::<f64>(json!({})),
            "invalid arguments: property `p`: expected a number, got an object"
        );
        let mut args = arguments(json!({ "title": null }));
        assert_eq!(
            args.required::<String>("title").map_err(|e| e.to_string()),
            Err("invalid arguments: property `title`: expected a string, got null".to_string())
        );
    }

    #[test]
    fn ranges_elements_and_map_values_are_located() {
        assert_eq!(
            error::<u8>(json!(300)),
            "invalid arguments: property `p`: expected an integer from 0 to 255, got the number 300"
        );
        assert_eq!(
            error::<u64>(json!(-1)),
            "invalid arguments: property `p`: expected an integer of 0 or more, got the number -1"
        );
        assert_eq!(
            error::<Vec<i8>>(json!([1, 200])),
            "invalid arguments: property `p[1]`: expected an integer from -128 to 127, got the \
             number 200"
        );
        assert_eq!(
            error::<BTreeMap<String, String>>(json!({"k": 1})),
            "invalid arguments: property `p.k`: expected a string, got the number 1"
        );
        assert_eq!(
            error::<GoDuration>(json!("1d")),
            "invalid arguments: property `p`: \"1d\" is not a duration such as 300ms, 1.5h or \
             2h45m (units ns, us, ms, s, m, h)"
        );
    }

    #[test]
    fn missing_unknown_and_null() {
        let mut args = arguments(json!({ "a": null, "cout": 1 }));
        assert_eq!(args.optional::<String>("a"), Ok(None));
        assert_eq!(
            args.required::<u8>("count").map_err(|e| e.to_string()),
            Err("invalid arguments: property `count` is required".to_string())
        );
        assert_eq!(
            args.finish().map_err(|e| e.to_string()),
            Err(
                "invalid arguments: unknown property `cout` (the tool takes: a, count)".to_string()
            )
        );
        let args = arguments(json!({ "x": 1 }));
        assert_eq!(
            args.finish().map_err(|e| e.to_string()),
            Err(
                "invalid arguments: unknown property `x` (the tool takes no arguments)".to_string()
            )
        );
    }

    #[test]
    fn choices_name_the_allowed_values() {
        #[derive(Debug, Clone, Copy, PartialEq)]
        enum Level {
            Debug,
            Info,
        }
        let values = [("debug", Level::Debug), ("info", Level::Info)];
        assert_eq!(choice(json!("info"), &values), Ok(Level::Info));
        let refused = choice(json!("loud"), &values).map_err(|error| error.at("level").to_string());
        assert_eq!(
            refused,
            Err(
                "invalid arguments: property `level`: must be one of \"debug\", \"info\", got \
                 \"loud\""
                    .to_string()
            )
        );
    }
}
