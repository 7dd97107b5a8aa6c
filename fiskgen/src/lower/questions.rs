//! `expose.agent.mcp.ask`: the parameters the user answers, taken out of the advertised input
//! schema, and one elicitation form per question built from those parameters' own schemas
//! (type, help as description, default, enum; required when the parameter is). A form carries
//! only flat values: strings, numbers, integers, booleans, string enums and lists of enum
//! strings (docs/config.md, "ask").

use serde_json::{Map, Value, json};

use crate::config::Question as Asked;
use crate::ir::{Param, ParamType, Question};
use crate::model;

/// Takes the asked parameters out of `properties` and `required` and builds each question's
/// form; `Err` says which parameter cannot be asked and why.
pub(super) fn ask(
    properties: &mut Map<String, Value>,
    required: &mut Vec<String>,
    params: &[Param],
    command: &model::Command,
    globals: &[&model::Flag],
    asked: &[Asked],
) -> Result<Vec<Question>, String> {
    let mut questions = Vec::with_capacity(asked.len());
    for question in asked {
        let mut fields = Map::new();
        let mut needed = Vec::new();
        for name in &question.params {
            let Some(param) = params.iter().find(|param| &param.name == name) else {
                return Err(format!(
                    "ask: question \"{}\" names parameter \"{name}\", which the tool does not \
                     have (its parameters: {})",
                    question.name,
                    Param::names(params)
                ));
            };
            if let Some(kind) = unfit(&param.ty) {
                return Err(format!(
                    "ask: question \"{}\": parameter \"{name}\" is {kind}; an elicitation form \
                     carries only strings, numbers, integers, booleans, string enums and lists \
                     of enum strings",
                    question.name
                ));
            }
            let Some(Value::Object(property)) = properties.remove(name) else {
                return Err(format!(
                    "ask: parameter \"{name}\" has no property in the input schema"
                ));
            };
            let mut field = Map::new();
            for key in ["type", "enum", "items", "minimum", "maximum"] {
                if let Some(value) = property.get(key) {
                    field.insert(key.into(), value.clone());
                }
            }
            field.insert("title".into(), json!(name));
            if !param.description.is_empty() {
                field.insert("description".into(), json!(param.description));
            }
            if let Some(default) = default(name, &param.ty, command, globals) {
                field.insert("default".into(), default);
            }
            fields.insert(name.clone(), Value::Object(field));
            if let Some(at) = required.iter().position(|r| r == name) {
                required.remove(at);
                needed.push(json!(name));
            }
        }
        let mut form = Map::new();
        form.insert("type".into(), json!("object"));
        form.insert("properties".into(), Value::Object(fields));
        if !needed.is_empty() {
            form.insert("required".into(), Value::Array(needed));
        }
        questions.push(Question {
            name: question.name.clone(),
            params: question.params.clone(),
            form,
        });
    }
    Ok(questions)
}

/// What a parameter type is, when a form cannot carry it.
fn unfit(ty: &ParamType) -> Option<&'static str> {
    match ty {
        ParamType::Bool
        | ParamType::Int(_)
        | ParamType::F32
        | ParamType::F64
        | ParamType::String
        | ParamType::Enum(_) => None,
        ParamType::List(inner) if matches!(**inner, ParamType::Enum(_)) => None,
        ParamType::Duration => Some("a duration (a form's string cannot carry its pattern)"),
        ParamType::ByteSize => Some("a byte size (a form's string cannot carry its pattern)"),
        ParamType::HexBytes => Some("hex bytes (a form's string cannot carry its pattern)"),
        ParamType::List(_) => Some("a list of free values"),
        ParamType::StringMap => Some("a map"),
        ParamType::Counter => Some("a counter"),
    }
}

/// The flag's or argument's declared default, typed as the form field is.
fn default(
    name: &str,
    ty: &ParamType,
    command: &model::Command,
    globals: &[&model::Flag],
) -> Option<Value> {
    let flag = command
        .flags
        .iter()
        .chain(globals.iter().copied())
        .find(|flag| flag.name == name);
    let values: &[String] = match flag {
        Some(flag) => &flag.default,
        None => &command.args.iter().find(|arg| arg.name == name)?.default,
    };
    let first = values.first()?;
    match ty {
        ParamType::Bool => Some(json!(flag.is_some_and(model::Flag::defaults_to_true))),
        ParamType::Int(_) => first.parse::<i64>().ok().map(|n| json!(n)),
        ParamType::F32 | ParamType::F64 => first.parse::<f64>().ok().map(|n| json!(n)),
        ParamType::String => Some(json!(first)),
        ParamType::Enum(allowed) => allowed.contains(first).then(|| json!(first)),
        ParamType::List(_) => Some(json!(values)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::IntType;

    fn param(name: &str, ty: ParamType, required: bool) -> Param {
        Param {
            name: name.into(),
            description: format!("The {name}"),
            required,
            ty,
            global: false,
            header: None,
        }
    }

    fn command() -> model::Command {
        serde_json::from_value(json!({
            "name": "t",
            "flags": [
                {"name": "name", "default": ["John Doe"]},
                {"name": "age", "default": ["30"]},
                {"name": "score", "default": ["95.5"]},
                {"name": "status", "default": ["active"]},
                {"name": "verified", "boolean": true, "default": ["true"]},
                {"name": "wait", "default": ["1s"]}
            ]
        }))
        .expect("a command")
    }

    fn properties() -> Map<String, Value> {
        let Value::Object(map) = json!({
            "name": {"type": "string", "description": "The name"},
            "age": {"type": "integer", "description": "The age"},
            "score": {"type": "number", "description": "The score"},
            "status": {"type": "string", "enum": ["active", "inactive", "pending"]},
            "verified": {"type": "boolean"},
            "wait": {"type": "string", "pattern": "^x$"},
            "other": {"type": "string"},
        }) else {
            unreachable!("an object")
        };
        map
    }

    fn params() -> Vec<Param> {
        vec![
            param("name", ParamType::String, true),
            param("age", ParamType::Int(IntType::I64), false),
            param("score", ParamType::F64, false),
            param(
                "status",
                ParamType::Enum(vec!["active".into(), "inactive".into(), "pending".into()]),
                false,
            ),
            param("verified", ParamType::Bool, false),
            param("wait", ParamType::Duration, false),
            param("other", ParamType::String, false),
        ]
    }

    fn asked(name: &str, params: &[&str]) -> Asked {
        Asked {
            name: name.into(),
            params: params.iter().map(|p| p.to_string()).collect(),
        }
    }

    #[test]
    fn asked_parameters_leave_the_schema_for_a_form_with_their_types_and_defaults() {
        let mut properties = properties();
        let mut required = vec!["name".to_string(), "other".to_string()];
        let questions = ask(
            &mut properties,
            &mut required,
            &params(),
            &command(),
            &[],
            &[asked(
                "profile",
                &["name", "age", "score", "status", "verified"],
            )],
        )
        .expect("asked");
        assert_eq!(properties.keys().collect::<Vec<_>>(), ["other", "wait"]);
        assert_eq!(required, ["other"]);
        let form = Value::Object(questions[0].form.clone());
        assert_eq!(
            form,
            json!({"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string", "title": "name", "description": "The name", "default": "John Doe"},
                "age": {"type": "integer", "title": "age", "description": "The age", "default": 30},
                "score": {"type": "number", "title": "score", "description": "The score", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive", "pending"], "title": "status",
                    "description": "The status", "default": "active"},
                "verified": {"type": "boolean", "title": "verified", "description": "The verified", "default": true},
            }})
        );
    }

    #[test]
    fn an_unknown_or_unfit_parameter_is_refused_naming_it() {
        let run = |names: &[&str]| {
            ask(
                &mut properties(),
                &mut Vec::new(),
                &params(),
                &command(),
                &[],
                &[asked("q", names)],
            )
            .expect_err("refused")
        };
        let error = run(&["nme"]);
        assert!(
            error.starts_with(
                "ask: question \"q\" names parameter \"nme\", which the tool does not have (its \
                 parameters: name, age,"
            ),
            "{error}"
        );
        let error = run(&["wait"]);
        assert!(
            error.contains("parameter \"wait\" is a duration"),
            "{error}"
        );
    }
}
