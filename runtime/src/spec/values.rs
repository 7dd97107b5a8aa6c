//! String values that fisk's schemas constrain with a pattern: validated when a call's arguments
//! are deserialized, so a bad value is refused before anything runs.

use std::fmt;

use serde::{Deserialize, Deserializer};

use crate::spec::argv::ArgValue;

macro_rules! pattern_string {
    ($(#[$doc:meta])* $name:ident, $check:ident, $expected:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $name(String);

        impl $name {
            /// Validates `text`.
            pub fn parse(text: &str) -> Result<Self, String> {
                if $check(text) {
                    Ok(Self(text.to_string()))
                } else {
                    Err(format!("{text:?} is not {}", $expected))
                }
            }

            /// The value as given.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = String::deserialize(deserializer)?;
                Self::parse(&text).map_err(serde::de::Error::custom)
            }
        }

        impl ArgValue for $name {
            fn to_arg(&self) -> String {
                self.0.clone()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

pattern_string!(
    /// A Go duration as fisk's schema admits it: `^(0|[-+]?(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+)$`.
    GoDuration,
    is_go_duration,
    "a duration such as 300ms, 1.5h or 2h45m (units ns, us, ms, s, m, h)"
);

pattern_string!(
    /// A byte size as fisk's schema admits it: `^(0|[-+]?(\d+(\.\d+)?[a-zA-Z]+)+)$`.
    ByteSize,
    is_byte_size,
    "a size with a unit such as 512KiB or 1.5GB"
);

pattern_string!(
    /// Hex-encoded bytes: `^([0-9a-fA-F]{2})*$`.
    HexBytes,
    is_hex_bytes,
    "hex-encoded bytes (pairs of 0-9a-f)"
);

/// `0`, or an optional sign and one or more `<number><unit>` parts.
fn units_pattern(text: &str, unit: fn(&str) -> usize) -> bool {
    if text == "0" {
        return true;
    }
    let rest = text.strip_prefix(['-', '+']).unwrap_or(text);
    let mut rest = rest;
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let Some(after_number) = number(rest) else {
            return false;
        };
        let unit_len = unit(after_number);
        if unit_len == 0 {
            return false;
        }
        rest = &after_number[unit_len..];
    }
    true
}

/// `\d+(\.\d+)?`: returns what follows it.
fn number(text: &str) -> Option<&str> {
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    let whole = digits(text);
    if whole == 0 {
        return None;
    }
    let rest = &text[whole..];
    match rest.strip_prefix('.') {
        Some(fraction) if digits(fraction) > 0 => Some(&fraction[digits(fraction)..]),
        _ => Some(rest),
    }
}

fn duration_unit(text: &str) -> usize {
    // Longest first, so `ms` is not read as `m` followed by `s`.
    ["ns", "us", "µs", "ms", "s", "m", "h"]
        .iter()
        .find(|unit| text.starts_with(**unit))
        .map_or(0, |unit| unit.len())
}

fn letters(text: &str) -> usize {
    text.bytes().take_while(u8::is_ascii_alphabetic).count()
}

fn is_go_duration(text: &str) -> bool {
    units_pattern(text, duration_unit)
}

fn is_byte_size(text: &str) -> bool {
    units_pattern(text, letters)
}

fn is_hex_bytes(text: &str) -> bool {
    text.len().is_multiple_of(2) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_follow_the_schema_pattern() {
        for good in [
            "0",
            "1s",
            "300ms",
            "1.5h",
            "2h45m",
            "-1m",
            "+3us",
            "4µs",
            "1h2m3s4ms",
        ] {
            assert!(is_go_duration(good), "{good}");
        }
        for bad in [
            "", "1", "1d", "s", "1.s", ".5s", "1 s", "--1s", "1sx", "+", "00",
        ] {
            assert!(!is_go_duration(bad), "{bad}");
        }
    }

    #[test]
    fn sizes_and_hex() {
        for good in ["0", "512KiB", "1.5GB", "10B", "1MB512KiB"] {
            assert!(is_byte_size(good), "{good}");
        }
        for bad in ["1024", "KiB", "1.KiB", "1 KiB"] {
            assert!(!is_byte_size(bad), "{bad}");
        }
        assert!(is_hex_bytes("") && is_hex_bytes("00ff") && is_hex_bytes("AbCd"));
        assert!(!is_hex_bytes("0") && !is_hex_bytes("zz"));
    }

    #[test]
    fn a_bad_value_is_a_deserialization_error() {
        let error = serde_json::from_str::<GoDuration>("\"1d\"").expect_err("refused");
        assert!(error.to_string().contains("is not a duration"), "{error}");
        let ok: GoDuration = serde_json::from_str("\"90s\"").expect("valid");
        assert_eq!(ok.to_arg(), "90s");
    }
}
