//! A command's parameters as generated code declares them: one static table per command, read
//! by one function here ([`command_argv`](crate::spec::arguments::command_argv)).
//!
//! A [`Param`] is a schema property with its value [`Type`] (what a client's JSON must be, and
//! how it becomes command-line tokens) and its [`Place`] on the command line. The table is in
//! command-line order: the exposed global flags ([`Globals`]), the command's flags in declaration
//! order, then its positional arguments (docs/generated-code.md, "Parameter tables"):
//!
//! ```
//! use fiskgen_runtime::__private as rt;
//!
//! static PARAMS: &[rt::Param] = &[
//!     rt::Param::switch("force"),
//!     rt::Param::flag("level", rt::Type::Choice(&["debug", "info"])),
//!     rt::Param::flag("label", rt::Type::List(&rt::Type::String)),
//!     rt::Param::negatable("pem"),
//!     rt::Param::arg("id", rt::Type::I64).required(),
//!     rt::Param::arg("ttl", rt::Type::Duration).defaults(&["1h"]),
//! ];
//! # assert_eq!(PARAMS.len(), 6);
//! ```

/// The type of a parameter's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    /// `true` or `false`.
    Bool,
    /// An integer from -128 to 127.
    I8,
    /// An integer from -32768 to 32767.
    I16,
    /// An integer from -2^31 to 2^31-1.
    I32,
    /// Any integer a 64-bit signed integer holds.
    I64,
    /// An integer from 0 to 255.
    U8,
    /// An integer from 0 to 65535.
    U16,
    /// An integer from 0 to 2^32-1.
    U32,
    /// An integer of 0 or more.
    U64,
    /// A number, as float32 (beyond its range is infinity, as serde_json reads it).
    F32,
    /// A number.
    F64,
    /// A string.
    String,
    /// One of these strings.
    Choice(&'static [&'static str]),
    /// A Go duration (`300ms`, `1.5h`, `2h45m`).
    Duration,
    /// A byte size (`1KB`, `5 MiB`).
    ByteSize,
    /// Hexadecimal bytes.
    HexBytes,
    /// A list of values of a scalar type.
    List(&'static Type),
    /// An object whose values are strings.
    StringMap,
    /// A fisk counter: how many times to repeat the flag (0 to 255).
    Counter,
}

/// Where a parameter goes on the command line. Every token is a single argv element, never
/// `--name value`, so a value can never become a flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A flag that takes a value: `--name=value`; one `--name=value` per element of a list;
    /// `--name=key=value` per entry of a map, keys sorted; `--name` repeated for a counter.
    Flag,
    /// A boolean flag without a negation: `--name` when true, nothing when false.
    Switch,
    /// A boolean flag with a negation: `--name` or `--no-name`.
    Negatable,
    /// A boolean flag without a negation that defaults to true: `--name`, and false is refused
    /// (fisk offers no way to turn it off).
    SwitchOn,
    /// A positional argument (after `--`): one token; one per element of a list; `key=value` per
    /// entry of a map; as many tokens as a counter counts. Positionals go up to the last one
    /// given; an earlier missing one takes its declared defaults, or the call is refused.
    Arg {
        /// Declared defaults.
        defaults: &'static [&'static str],
    },
    /// A hidden positional argument a client cannot set: its defaults fill its slot when a later
    /// argument is given.
    Hidden {
        /// Declared defaults.
        defaults: &'static [&'static str],
    },
}

/// One parameter of a command: a property of its input schema and its place on the command
/// line. A name may appear twice (a flag and an argument of one name): it is one property, read
/// once, rendered in both places.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    /// The property name (the flag's or argument's name).
    pub name: &'static str,
    /// The value's type.
    pub ty: Type,
    /// Listed in the schema's `required`.
    pub required: bool,
    /// Where it goes.
    pub place: Place,
}

impl Param {
    /// An optional flag (see [`Place::Flag`]).
    pub const fn flag(name: &'static str, ty: Type) -> Self {
        Self::new(name, ty, Place::Flag)
    }

    /// An optional boolean flag without a negation (see [`Place::Switch`]).
    pub const fn switch(name: &'static str) -> Self {
        Self::new(name, Type::Bool, Place::Switch)
    }

    /// An optional boolean flag with a negation (see [`Place::Negatable`]).
    pub const fn negatable(name: &'static str) -> Self {
        Self::new(name, Type::Bool, Place::Negatable)
    }

    /// An optional boolean flag without a negation that defaults to true (see
    /// [`Place::SwitchOn`]).
    pub const fn switch_on(name: &'static str) -> Self {
        Self::new(name, Type::Bool, Place::SwitchOn)
    }

    /// An optional positional argument without defaults (see [`Place::Arg`]).
    pub const fn arg(name: &'static str, ty: Type) -> Self {
        Self::new(name, ty, Place::Arg { defaults: &[] })
    }

    /// A hidden positional argument (see [`Place::Hidden`]).
    pub const fn hidden(name: &'static str, defaults: &'static [&'static str]) -> Self {
        Self::new(name, Type::String, Place::Hidden { defaults })
    }

    /// The same parameter, required.
    pub const fn required(self) -> Self {
        Self {
            required: true,
            ..self
        }
    }

    /// The same positional argument, with declared defaults (a flag has none on the command
    /// line: it is left out).
    pub const fn defaults(self, defaults: &'static [&'static str]) -> Self {
        let place = match self.place {
            Place::Arg { .. } => Place::Arg { defaults },
            Place::Hidden { .. } => Place::Hidden { defaults },
            other => other,
        };
        Self { place, ..self }
    }

    const fn new(name: &'static str, ty: Type, place: Place) -> Self {
        Self {
            name,
            ty,
            required: false,
            place,
        }
    }
}

/// The exposed global flags a command offers: declared once per crate, right after the command
/// path on every command line, less the ones a command's own flags or arguments shadow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Globals {
    /// Every exposed global flag, in command-line order.
    pub params: &'static [Param],
    /// The ones this command does not offer (its own parameters have their names).
    pub except: &'static [&'static str],
}

impl Globals {
    /// No exposed global flags.
    pub const NONE: Globals = Globals::new(&[]);

    /// These global flags, all offered.
    pub const fn new(params: &'static [Param]) -> Self {
        Self {
            params,
            except: &[],
        }
    }

    /// The same global flags, less these.
    pub const fn except(self, except: &'static [&'static str]) -> Self {
        Self { except, ..self }
    }

    /// The global flags offered.
    pub fn offered(&self) -> impl Iterator<Item = &'static Param> + '_ {
        let params: &'static [Param] = self.params;
        params
            .iter()
            .filter(|param| !self.except.contains(&param.name))
    }
}

/// A leaf command of the application: its path and what a call puts after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Command {
    /// The command path (`["stream", "info"]`).
    pub path: &'static [&'static str],
    /// The exposed global flags it offers.
    pub globals: Globals,
    /// Its own parameters, in command-line order.
    pub params: &'static [Param],
}
