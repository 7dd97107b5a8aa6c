//! The exposed global flags of a command, merged into its advertised schema
//! ([`merge_globals`]): fisk publishes no schema for application flags, so each gets one here.

use serde_json::{Map, Value, json};

use crate::model;

/// The command's restricted schema with a property for each exposed global flag it does not
/// shadow. The model's schema is copied, never changed.
pub fn merge_globals(schema: &Map<String, Value>, globals: &[&model::Flag]) -> Map<String, Value> {
    let mut merged = schema.clone();
    if globals.is_empty() {
        return merged;
    }
    let mut properties = match merged.remove("properties") {
        Some(Value::Object(properties)) => properties,
        _ => Map::new(),
    };
    let mut required: Vec<Value> = match merged.remove("required") {
        Some(Value::Array(required)) => required,
        _ => Vec::new(),
    };
    for flag in globals {
        if properties.contains_key(&flag.name) {
            continue;
        }
        properties.insert(flag.name.clone(), global_property(flag));
        let name = Value::String(flag.name.clone());
        if flag.required && !required.contains(&name) {
            required.push(name);
        }
    }
    merged.insert("properties".to_string(), Value::Object(properties));
    if !required.is_empty() {
        merged.insert("required".to_string(), Value::Array(required));
    }
    merged
}

/// A global flag's schema: fisk publishes no type for application flags, so booleans are
/// `boolean`, everything else `string` (with its completions as `enum`), arrays when repeatable.
fn global_property(flag: &model::Flag) -> Value {
    let description = if flag.help.is_empty() {
        "Global flag".to_string()
    } else {
        format!("Global flag: {}", flag.help)
    };
    let mut scalar = Map::new();
    if flag.boolean {
        scalar.insert("type".to_string(), json!("boolean"));
    } else {
        scalar.insert("type".to_string(), json!("string"));
        if !flag.completions.is_empty() && !flag.cumulative {
            scalar.insert("enum".to_string(), json!(flag.completions));
        }
    }
    let mut property = if flag.cumulative {
        let mut array = Map::new();
        array.insert("type".to_string(), json!("array"));
        array.insert("items".to_string(), Value::Object(scalar));
        array
    } else {
        scalar
    };
    property.insert("description".to_string(), json!(description));
    Value::Object(property)
}
