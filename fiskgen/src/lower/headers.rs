//! `expose.agent.mcp.param_headers`: parameters whose values a client mirrors in HTTP headers
//! (SEP-2243). Each named parameter gets `"x-mcp-header": "<Name>"` in the advertised schema,
//! so a 2026-07-28 client sends `Mcp-Param-<Name>` with the value, and the server's HTTP layer
//! rejects a request whose header is missing or differs from the body (-32020, HTTP 400;
//! docs/config.md, "param_headers").

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::ir::{Param, ParamType};

/// Annotates `properties` with the `headers` of one tool (parameter -> header name) and records
/// them on `params`; `Err` says which parameter cannot carry a header and why.
pub(super) fn annotate(
    properties: &mut Map<String, Value>,
    params: &mut [Param],
    headers: &BTreeMap<String, String>,
) -> Result<(), String> {
    for (name, header) in headers {
        let Some(index) = params.iter().position(|param| &param.name == name) else {
            return Err(format!(
                "param_headers names parameter \"{name}\", which the tool does not have (its \
                 parameters: {})",
                Param::names(params)
            ));
        };
        let param = &mut params[index];
        if let Some(kind) = unfit(&param.ty) {
            return Err(format!(
                "param_headers: parameter \"{name}\" is {kind}; a header carries one string, \
                 integer or boolean value (SEP-2243)"
            ));
        }
        let Some(Value::Object(property)) = properties.get_mut(name) else {
            return Err(format!(
                "param_headers: parameter \"{name}\" has no property in the input schema"
            ));
        };
        property.insert("x-mcp-header".into(), Value::String(header.clone()));
        param.header = Some(header.clone());
    }
    Ok(())
}

/// What a parameter type is, when it cannot be mirrored in a header.
fn unfit(ty: &ParamType) -> Option<&'static str> {
    match ty {
        ParamType::Bool
        | ParamType::Int(_)
        | ParamType::String
        | ParamType::Enum(_)
        | ParamType::Duration
        | ParamType::ByteSize
        | ParamType::HexBytes => None,
        ParamType::F32 | ParamType::F64 => Some("a number"),
        ParamType::List(_) => Some("a list"),
        ParamType::StringMap => Some("a map"),
        ParamType::Counter => Some("a counter"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn param(name: &str, ty: ParamType) -> Param {
        Param {
            name: name.into(),
            description: String::new(),
            required: false,
            ty,
            global: false,
            header: None,
        }
    }

    fn schema() -> Map<String, Value> {
        let Value::Object(map) = json!({
            "name": {"type": "string"},
            "ratio": {"type": "number"},
            "tags": {"type": "array", "items": {"type": "string"}},
        }) else {
            unreachable!("an object")
        };
        map
    }

    #[test]
    fn a_named_parameter_is_annotated_in_the_schema_and_the_ir() {
        let mut properties = schema();
        let mut params = vec![param("name", ParamType::String)];
        let headers = BTreeMap::from([("name".to_string(), "Name".to_string())]);
        annotate(&mut properties, &mut params, &headers).expect("annotated");
        assert_eq!(
            properties["name"],
            json!({"type": "string", "x-mcp-header": "Name"})
        );
        assert_eq!(params[0].header.as_deref(), Some("Name"));
    }

    #[test]
    fn an_unknown_or_unfit_parameter_is_refused_naming_it() {
        let mut params = vec![
            param("name", ParamType::String),
            param("ratio", ParamType::F64),
            param("tags", ParamType::List(Box::new(ParamType::String))),
        ];
        let one = |param: &str| BTreeMap::from([(param.to_string(), "H".to_string())]);
        let error = annotate(&mut schema(), &mut params, &one("nme")).expect_err("unknown");
        assert_eq!(
            error,
            "param_headers names parameter \"nme\", which the tool does not have (its \
             parameters: name, ratio, tags)"
        );
        let error = annotate(&mut schema(), &mut params, &one("ratio")).expect_err("number");
        assert!(error.contains("\"ratio\" is a number"), "{error}");
        let error = annotate(&mut schema(), &mut params, &one("tags")).expect_err("list");
        assert!(error.contains("\"tags\" is a list"), "{error}");
    }
}
