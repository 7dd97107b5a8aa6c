//! Canonical JSON (compact, every object's keys sorted bytewise, as Go sorts map keys), the
//! SHA-256 fingerprints built on it, and hex.
//!
//! Sorting is done here, so the result never depends on serde_json's `preserve_order` feature
//! (which some dependency may switch on for the whole build).

use std::fmt;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Compact JSON with every object's keys sorted: the advertised schema text, and the form every
/// fingerprint hashes.
pub fn to_json(value: &Value) -> String {
    Canonical(value).to_string()
}

/// Stable pretty form for saving: sorted keys, 2-space indent, trailing newline.
pub fn to_pretty_json(value: &Value) -> String {
    format!("{:#}\n", sorted(value))
}

/// SHA-256 (lower-case hex) of the canonical JSON of `value`.
pub fn fingerprint(value: &Value) -> String {
    digest(to_json(value).as_bytes())
}

/// SHA-256 (lower-case hex) of raw bytes, such as what an application printed.
pub fn digest(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    hex::encode(bytes)
}

/// A copy of `value` with every object's keys in sorted order.
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(object) => {
            let mut entries: Vec<_> = object.iter().collect();
            entries.sort_by_key(|&(key, _)| key);
            Value::Object(
                entries
                    .into_iter()
                    .map(|(key, value)| (key.clone(), sorted(value)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// Writes a value as canonical JSON without building a sorted copy.
struct Canonical<'a>(&'a Value);

impl fmt::Display for Canonical<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Value::Object(map) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_by_key(|(key, _)| *key);
                f.write_str("{")?;
                for (index, (key, value)) in entries.into_iter().enumerate() {
                    if index > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{}:{}", Value::String(key.clone()), Canonical(value))?;
                }
                f.write_str("}")
            }
            Value::Array(items) => {
                f.write_str("[")?;
                for (index, item) in items.iter().enumerate() {
                    if index > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{}", Canonical(item))?;
                }
                f.write_str("]")
            }
            scalar => write!(f, "{scalar}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn canonical_json_sorts_keys_at_every_level() {
        let value = json!({"b": [{"z": 1, "a": "x<y"}], "a": 3.4028234663852886e38});
        assert_eq!(
            to_json(&value),
            r#"{"a":3.4028234663852886e+38,"b":[{"a":"x<y","z":1}]}"#
        );
        assert_eq!(fingerprint(&json!({})).len(), 64);
    }

    #[test]
    fn fingerprints_ignore_key_order_and_whitespace() {
        let a: Value =
            serde_json::from_str(r#"{"b": 1, "a": {"y": [1, 2], "x": "s"}}"#).expect("json");
        let b: Value =
            serde_json::from_str("{\"a\":{\"x\":\"s\",\"y\":[1,2]},\"b\":1}").expect("json");
        assert_eq!(fingerprint(&a), fingerprint(&b));
        assert_ne!(fingerprint(&a), fingerprint(&json!({"b": 2})));
    }

    #[test]
    fn pretty_json_is_sorted_and_ends_with_a_newline() {
        let value = json!({"b": 1, "a": {"d": 2, "c": 3}});
        assert_eq!(
            to_pretty_json(&value),
            "{\n  \"a\": {\n    \"c\": 3,\n    \"d\": 2\n  },\n  \"b\": 1\n}\n"
        );
        assert_eq!(hex(&[0, 15, 255]), "000fff");
        assert_eq!(
            digest(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
