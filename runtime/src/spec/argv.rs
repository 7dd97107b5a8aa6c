//! Arguments → argv, with exactly fisk's `ArgsFromJSON` rules, after typed validation.
//!
//! [`command_argv`](crate::spec::arguments::command_argv) reads a call's arguments through
//! the command's parameter table and renders each onto an [`Argv`] that starts with the command
//! path: flags in declaration order as single `--name=value` tokens (so a value can never become
//! a flag), then `--` and the positional arguments. The rules for positionals (fill earlier ones from their defaults, stop after the
//! last one given) live in `Argv::positionals`.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::DeserializeOwned;

use crate::JsonObject;
use crate::spec::arg_errors::Problem;

/// Arguments that do not fit a tool's input type: a tool error the model can correct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidArguments {
    message: String,
}

impl InvalidArguments {
    /// An error about one property, in the words of `arg_errors.rs`.
    pub fn property(name: &str, problem: impl fmt::Display) -> Self {
        Self::from_problem(name, &Problem::Other(problem.to_string()))
    }

    /// A described problem of one property (empty: of the arguments as a whole).
    pub(crate) fn from_problem(property: &str, problem: &Problem) -> Self {
        Self {
            message: problem.describe(property),
        }
    }

    /// The message, without the `invalid arguments:` prefix.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// `invalid arguments for <tool>: <problem>`, the text a client gets.
    pub(crate) fn for_tool(&self, tool: &str) -> String {
        format!("invalid arguments for {tool}: {}", self.message)
    }
}

impl fmt::Display for InvalidArguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid arguments: {}", self.message)
    }
}

impl std::error::Error for InvalidArguments {}

/// Deserializes a built-in's arguments into its argument struct; errors name the property.
pub(crate) fn parse_arguments<T: DeserializeOwned>(
    arguments: JsonObject,
) -> Result<T, InvalidArguments> {
    let value = serde_json::Value::Object(arguments);
    serde_path_to_error::deserialize(value).map_err(|error| {
        let path = error.path().to_string();
        InvalidArguments {
            message: crate::spec::arg_errors::from_serde(&path, &error.into_inner().to_string()),
        }
    })
}

/// A value that renders as one command-line token.
pub(crate) trait ArgValue {
    /// The token fisk parses back into this value.
    fn to_arg(&self) -> String;
}

macro_rules! display_arg_value {
    ($($t:ty),*) => {$(
        impl ArgValue for $t {
            fn to_arg(&self) -> String {
                self.to_string()
            }
        }
    )*};
}

display_arg_value!(String, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, bool);

/// One positional argument, as its parameter describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Positional {
    /// The argument's name (for errors).
    pub(crate) name: &'static str,
    /// Its tokens when the call gave it (an array gives one token per element).
    pub(crate) tokens: Option<Vec<String>>,
    /// Its declared defaults, used when a later argument is given and this one is not.
    pub(crate) defaults: &'static [&'static str],
}

/// An argv under construction: command path, flags, then `--` and positionals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Argv {
    tokens: Vec<String>,
    positionals: Vec<String>,
}

impl Argv {
    /// Starts with the command path.
    pub(crate) fn new(command: &[&str]) -> Self {
        Self {
            tokens: command.iter().map(|segment| segment.to_string()).collect(),
            positionals: Vec::new(),
        }
    }

    /// `--name=value`.
    pub(crate) fn value(&mut self, name: &str, token: &str) {
        self.tokens.push(format!("--{name}={token}"));
    }

    /// One `--name=value` per element, in order.
    pub(crate) fn values(&mut self, name: &str, tokens: &[String]) {
        for token in tokens {
            self.value(name, token);
        }
    }

    /// One `--name=key=value` per entry, keys sorted.
    pub(crate) fn map(&mut self, name: &str, map: &BTreeMap<String, String>) {
        for (key, value) in map {
            self.tokens.push(format!("--{name}={key}={value}"));
        }
    }

    /// A negatable boolean: `--name` or `--no-name`.
    pub(crate) fn negatable(&mut self, name: &str, value: bool) {
        self.tokens.push(if value {
            format!("--{name}")
        } else {
            format!("--no-{name}")
        });
    }

    /// An un-negatable boolean: `--name` for true; false is only possible when the default is
    /// false (fisk offers no way to turn it off).
    pub(crate) fn switch(
        &mut self,
        name: &str,
        value: bool,
        defaults_to_true: bool,
    ) -> Result<(), InvalidArguments> {
        if value {
            self.tokens.push(format!("--{name}"));
        } else if defaults_to_true {
            return Err(InvalidArguments::property(
                name,
                "cannot be set to false: the flag has no negation and defaults to true",
            ));
        }
        Ok(())
    }

    /// A counter: `--name` repeated `count` times.
    pub(crate) fn counter(&mut self, name: &str, count: u8) {
        for _ in 0..count {
            self.tokens.push(format!("--{name}"));
        }
    }

    /// Positionals up to the last one given; earlier ones that are missing take their defaults.
    pub(crate) fn positionals(&mut self, args: &[Positional]) -> Result<(), InvalidArguments> {
        let Some(last) = args.iter().rposition(|arg| arg.tokens.is_some()) else {
            return Ok(());
        };
        for arg in args.iter().take(last + 1) {
            let tokens = match &arg.tokens {
                Some(tokens) => tokens.clone(),
                None if !arg.defaults.is_empty() => {
                    arg.defaults.iter().map(|d| d.to_string()).collect()
                }
                None => {
                    return Err(InvalidArguments::property(
                        arg.name,
                        "must be set because a later argument is set",
                    ));
                }
            };
            if tokens.iter().any(|token| token == "--") {
                return Err(InvalidArguments::property(
                    arg.name,
                    "the value \"--\" cannot be passed as an argument (fisk drops it)",
                ));
            }
            self.positionals.extend(tokens);
        }
        Ok(())
    }

    /// The finished argv (without the program).
    pub fn into_vec(self) -> Vec<String> {
        let mut argv = self.tokens;
        if !self.positionals.is_empty() {
            argv.push("--".to_string());
            argv.extend(self.positionals);
        }
        argv
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(
        name: &'static str,
        token: Option<&str>,
        defaults: &'static [&'static str],
    ) -> Positional {
        Positional {
            name,
            tokens: token.map(|token| vec![token.to_string()]),
            defaults,
        }
    }

    #[test]
    fn flags_then_separator_then_positionals() {
        let mut argv = Argv::new(&["deploy"]);
        argv.value("level", "warn");
        argv.value("replicas", "3");
        argv.values("label", &["a".to_string(), "b".to_string()]);
        argv.negatable("force", false);
        argv.positionals(&[
            one("target", Some("prod"), &[]),
            one("ttl", Some("2h"), &["1h"]),
        ])
        .expect("valid");
        assert_eq!(
            argv.into_vec(),
            [
                "deploy",
                "--level=warn",
                "--replicas=3",
                "--label=a",
                "--label=b",
                "--no-force",
                "--",
                "prod",
                "2h"
            ]
        );
    }

    #[test]
    fn positionals_fill_defaults_and_stop_after_the_last_given() {
        let mut argv = Argv::new(&[]);
        argv.positionals(&[
            one("first", None, &["one"]),
            one("second", Some("2"), &[]),
            one("third", None, &["three"]),
        ])
        .expect("valid");
        assert_eq!(argv.into_vec(), ["--", "one", "2"]);

        let mut argv = Argv::new(&[]);
        let error = argv
            .positionals(&[one("target", None, &[]), one("ttl", Some("2h"), &["1h"])])
            .expect_err("target has no default");
        assert_eq!(
            error.to_string(),
            "invalid arguments: property `target`: must be set because a later argument is set"
        );
    }

    #[test]
    fn no_positionals_means_no_separator_and_values_stay_single_tokens() {
        let mut argv = Argv::new(&["ls"]);
        argv.value("name", "--delete-everything\nx=1");
        argv.map(
            "env",
            &BTreeMap::from([("b".into(), "2".into()), ("a".into(), "1".into())]),
        );
        assert_eq!(
            argv.into_vec(),
            [
                "ls",
                "--name=--delete-everything\nx=1",
                "--env=a=1",
                "--env=b=2"
            ]
        );
    }

    #[test]
    fn unnegatable_false_is_nothing_unless_the_default_is_true() {
        let mut argv = Argv::new(&[]);
        argv.switch("json", false, false).expect("fine");
        argv.switch("json", true, false).expect("fine");
        assert_eq!(argv.clone().into_vec(), ["--json"]);
        let error = argv.switch("verbose", false, true).expect_err("refused");
        assert!(error.to_string().contains("cannot be set to false"));
    }

    #[test]
    fn a_literal_double_dash_positional_is_refused() {
        let mut argv = Argv::new(&[]);
        let error = argv
            .positionals(&[one("rest", Some("--"), &[])])
            .expect_err("refused");
        assert!(error.to_string().contains("\"--\""));
    }

    #[test]
    fn typed_errors_name_the_property() {
        #[derive(serde::Deserialize, Debug)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Args {
            count: Option<u8>,
        }
        let object = |value: serde_json::Value| value.as_object().cloned().unwrap_or_default();
        let error = parse_arguments::<Args>(object(serde_json::json!({"count": 300})))
            .expect_err("overflow");
        assert!(
            error.to_string().starts_with(
                "invalid arguments: property `count`: expected an integer from 0 to 255"
            ),
            "{error}"
        );
        let error =
            parse_arguments::<Args>(object(serde_json::json!({"cout": 1}))).expect_err("unknown");
        assert!(
            error
                .to_string()
                .contains("unknown property `cout` (the tool takes: count)"),
            "{error}"
        );
    }
}
