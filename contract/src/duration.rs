//! Go durations, parsed and formatted once for the config reader, the generator and the
//! generated binary (its `--tool-timeout` flag and its messages).
//!
//! [`parse_nanos`] is Go's `time.ParseDuration`, exactly: the grammar every duration in a Fisk
//! AI config uses.
//!
//! `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+` with the units `ns`, `us`, `µs` (U+00B5), `μs` (U+03BC),
//! `ms`, `s`, `m`, `h`, or a bare `0`. No spaces, no `d`, no bare numbers other than `0`, and a
//! result that must fit in a signed 64-bit count of nanoseconds. Fractions are scaled the way Go
//! scales them (through `f64`), so `1.5h`, `.5s` and `1h30m` mean what they mean to `fisk mcp`.
//! [`parse`] is the same for limits, which must not be negative; [`format()`] is Go's
//! `Duration.String`, so an operator reads back the notation they configured.

use std::fmt;
use std::time::Duration;

/// Why a text is not a Go duration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DurationError {
    /// Empty, a stray character, no digits, or out of range.
    Invalid,
    /// A number without a unit (other than a bare `0`).
    MissingUnit,
    /// A unit Go does not know.
    UnknownUnit(String),
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const FORM: &str = "a number and a unit (ns, us, ms, s, m, h), e.g. 30s, 1m30s or 1.5h";
        match self {
            DurationError::Invalid => write!(f, "not a duration: expected {FORM}"),
            DurationError::MissingUnit => write!(f, "missing unit: expected {FORM}"),
            DurationError::UnknownUnit(unit) => {
                write!(f, "unknown unit {unit:?}: expected {FORM}")
            }
        }
    }
}

const NANOSECOND: u64 = 1;
const MICROSECOND: u64 = 1_000 * NANOSECOND;
const MILLISECOND: u64 = 1_000 * MICROSECOND;
const SECOND: u64 = 1_000 * MILLISECOND;
const MINUTE: u64 = 60 * SECOND;
const HOUR: u64 = 60 * MINUTE;

/// `1 << 63`: one past the largest positive duration, and the magnitude of the smallest.
const LIMIT: u64 = 1 << 63;

fn unit(name: &str) -> Option<u64> {
    Some(match name {
        "ns" => NANOSECOND,
        "us" | "µs" | "μs" => MICROSECOND,
        "ms" => MILLISECOND,
        "s" => SECOND,
        "m" => MINUTE,
        "h" => HOUR,
        _ => return None,
    })
}

/// Parses a limit such as `300ms`, `1.5h` or `2h45m` (see [`parse_nanos`]); negative values are
/// refused. The error names the text and says what is expected.
pub fn parse(text: &str) -> Result<Duration, String> {
    match parse_nanos(text) {
        Ok(nanos) => u64::try_from(nanos)
            .map(Duration::from_nanos)
            .map_err(|_| format!("invalid duration {text:?}: must not be negative")),
        Err(error) => Err(format!("invalid duration {text:?}: {error}")),
    }
}

/// Formats like Go's `Duration.String`: `1h2m3.5s`, `1.5s`, `100ms`, `0s`.
pub fn format(duration: Duration) -> String {
    let nanos = duration.as_nanos();
    if nanos == 0 {
        return "0s".into();
    }
    if nanos < 1_000 {
        return format!("{nanos}ns");
    }
    if nanos < 1_000_000 {
        return format!("{}µs", trim_fraction(nanos, 1_000));
    }
    if nanos < 1_000_000_000 {
        return format!("{}ms", trim_fraction(nanos, 1_000_000));
    }
    let hours = nanos / 3_600_000_000_000;
    let minutes = nanos / 60_000_000_000 % 60;
    let seconds = nanos % 60_000_000_000;
    let mut out = String::new();
    if hours > 0 {
        out.push_str(&format!("{hours}h"));
    }
    if hours > 0 || minutes > 0 {
        out.push_str(&format!("{minutes}m"));
    }
    out.push_str(&format!("{}s", trim_fraction(seconds, 1_000_000_000)));
    out
}

/// A short human form for logs and messages: tenths of a second below 10 s, else Go's form of
/// the whole seconds.
pub fn elapsed(duration: Duration) -> String {
    if duration < Duration::from_secs(10) {
        format!("{:.1}s", duration.as_secs_f64())
    } else {
        format(Duration::from_secs(duration.as_secs()))
    }
}

/// `value / unit` as a decimal without trailing zeros.
fn trim_fraction(value: u128, unit: u128) -> String {
    let whole = value / unit;
    let fraction = value % unit;
    if fraction == 0 {
        return whole.to_string();
    }
    let width = unit.ilog10() as usize;
    let digits = format!("{fraction:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

/// Parses `text` as Go's `time.ParseDuration` does, returning signed nanoseconds.
pub fn parse_nanos(text: &str) -> Result<i64, DurationError> {
    let (negative, mut rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(DurationError::Invalid);
    }
    let mut total: u64 = 0;
    while !rest.is_empty() {
        let (nanos, remainder) = component(rest)?;
        total = total
            .checked_add(nanos)
            .filter(|&t| t <= LIMIT)
            .ok_or(DurationError::Invalid)?;
        rest = remainder;
    }
    signed(total, negative)
}

/// One `<number><unit>` component: its nanoseconds and the text after it.
fn component(text: &str) -> Result<(u64, &str), DurationError> {
    if !text.starts_with(|c: char| c == '.' || c.is_ascii_digit()) {
        return Err(DurationError::Invalid);
    }
    let (whole, rest) = leading_int(text)?;
    let had_whole = rest.len() != text.len();
    let (fraction, scale, rest, had_fraction) = match rest.strip_prefix('.') {
        Some(after) => {
            let (fraction, scale, rest) = leading_fraction(after);
            (fraction, scale, rest, rest.len() != after.len())
        }
        None => (0, 1.0, rest, false),
    };
    if !had_whole && !had_fraction {
        return Err(DurationError::Invalid);
    }
    let unit_len = rest
        .find(|c: char| c == '.' || c.is_ascii_digit())
        .unwrap_or(rest.len());
    if unit_len == 0 {
        return Err(DurationError::MissingUnit);
    }
    let (name, rest) = rest.split_at(unit_len);
    let unit = unit(name).ok_or_else(|| DurationError::UnknownUnit(name.to_string()))?;
    if whole > LIMIT / unit {
        return Err(DurationError::Invalid);
    }
    let mut nanos = whole * unit;
    if fraction > 0 {
        // Go converts through float64 here: nanosecond-exact for fractions of an hour.
        nanos += (fraction as f64 * (unit as f64 / scale)) as u64;
        if nanos > LIMIT {
            return Err(DurationError::Invalid);
        }
    }
    Ok((nanos, rest))
}

/// The leading `[0-9]*` of `text` as an integer; an error when it exceeds `1 << 63`.
fn leading_int(text: &str) -> Result<(u64, &str), DurationError> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let mut value: u64 = 0;
    for digit in text.bytes().take(digits) {
        if value > LIMIT / 10 {
            return Err(DurationError::Invalid);
        }
        value = value * 10 + u64::from(digit - b'0');
        if value > LIMIT {
            return Err(DurationError::Invalid);
        }
    }
    Ok((value, &text[digits..]))
}

/// The leading `[0-9]*` of `text` as a fraction `value / scale`; digits beyond what fits are
/// consumed but ignored, as Go does.
fn leading_fraction(text: &str) -> (u64, f64, &str) {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let (mut value, mut scale, mut overflow) = (0u64, 1.0f64, false);
    for digit in text.bytes().take(digits) {
        if overflow {
            continue;
        }
        if value > (LIMIT - 1) / 10 {
            overflow = true;
            continue;
        }
        let next = value * 10 + u64::from(digit - b'0');
        if next > LIMIT {
            overflow = true;
            continue;
        }
        value = next;
        scale *= 10.0;
    }
    (value, scale, &text[digits..])
}

fn signed(total: u64, negative: bool) -> Result<i64, DurationError> {
    if negative {
        // `total <= 1 << 63` here, so the negation always fits.
        return Ok(0i64.wrapping_sub_unsigned(total));
    }
    i64::try_from(total).map_err(|_| DurationError::Invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    #[test]
    fn accepts_what_go_accepts() {
        let cases: &[(&str, i64)] = &[
            ("0", 0),
            ("+0", 0),
            ("-0", 0),
            ("0s", 0),
            ("5s", 5 * S),
            ("30s", 30 * S),
            ("1478s", 1478 * S),
            ("-5s", -5 * S),
            ("+5s", 5 * S),
            ("-0s", 0),
            ("5.0s", 5 * S),
            ("5.6s", 5 * S + 600_000_000),
            ("5.s", 5 * S),
            (".5s", S / 2),
            ("1.0s", S),
            ("1.00s", S),
            ("1.004s", S + 4_000_000),
            ("1.0040s", S + 4_000_000),
            ("100.00100s", 100 * S + 1_000_000),
            ("10ns", 10),
            ("11us", 11_000),
            ("12µs", 12_000),
            ("12μs", 12_000),
            ("13ms", 13_000_000),
            ("14s", 14 * S),
            ("15m", 15 * 60 * S),
            ("16h", 16 * 3600 * S),
            ("3h30m", (3 * 3600 + 30 * 60) * S),
            ("10.5s4m", 4 * 60 * S + 10 * S + S / 2),
            ("-2m3.4s", -(2 * 60 * S + 3 * S + 400_000_000)),
            (
                "1h2m3s4ms5us6ns",
                3600 * S + 2 * 60 * S + 3 * S + 4_000_000 + 5_000 + 6,
            ),
            ("39h9m14.425s", (39 * 3600 + 9 * 60 + 14) * S + 425_000_000),
            ("52763797000ns", 52_763_797_000),
            ("0.3333333333333333333h", 20 * 60 * S),
            ("9007199254740993ns", (1 << 53) + 1),
            ("9223372036854775807ns", i64::MAX),
            ("9223372036854775.807us", i64::MAX),
            ("9223372036s854ms775us807ns", i64::MAX),
            ("-9223372036854775808ns", i64::MIN),
            ("-9223372036s854ms775us808ns", i64::MIN),
            ("0.100000000000000000000h", 6 * 60 * S),
            (
                "0.830103483285477580700h",
                49 * 60 * S + 48 * S + 372_539_827,
            ),
            ("1.5h", 90 * 60 * S),
            ("300ms", 300_000_000),
        ];
        for (text, want) in cases {
            assert_eq!(parse_nanos(text), Ok(*want), "{text}");
        }
    }

    #[test]
    fn refuses_what_go_refuses() {
        let cases: &[(&str, DurationError)] = &[
            ("", DurationError::Invalid),
            ("3", DurationError::MissingUnit),
            ("00", DurationError::MissingUnit),
            ("-", DurationError::Invalid),
            ("s", DurationError::Invalid),
            (".", DurationError::Invalid),
            ("-.", DurationError::Invalid),
            (".s", DurationError::Invalid),
            ("+.s", DurationError::Invalid),
            ("1d", DurationError::UnknownUnit("d".to_string())),
            ("1 s", DurationError::UnknownUnit(" s".to_string())),
            ("1S", DurationError::UnknownUnit("S".to_string())),
            ("1sec", DurationError::UnknownUnit("sec".to_string())),
            (" 1s", DurationError::Invalid),
            ("1s ", DurationError::UnknownUnit("s ".to_string())),
            ("1s-1s", DurationError::UnknownUnit("s-".to_string())),
            ("not-a-duration", DurationError::Invalid),
            ("1 day", DurationError::UnknownUnit(" day".to_string())),
            ("9223372036854775810ns", DurationError::Invalid),
            ("9223372036854775808ns", DurationError::Invalid),
            ("-9223372036854775809ns", DurationError::Invalid),
            ("9223372036854775.808us", DurationError::Invalid),
            ("3000000h", DurationError::Invalid),
        ];
        for (text, want) in cases {
            assert_eq!(parse_nanos(text).as_ref(), Err(want), "{text}");
        }
    }

    #[test]
    fn messages_say_what_is_expected() {
        assert_eq!(
            DurationError::UnknownUnit("d".to_string()).to_string(),
            "unknown unit \"d\": expected a number and a unit (ns, us, ms, s, m, h), e.g. 30s, \
             1m30s or 1.5h"
        );
        assert!(
            DurationError::MissingUnit
                .to_string()
                .starts_with("missing unit: ")
        );
    }

    #[test]
    fn limits_are_go_durations_that_are_not_negative() {
        let ms = Duration::from_millis;
        for (text, expected) in [
            ("0", Duration::ZERO),
            ("-0", Duration::ZERO),
            ("30s", ms(30_000)),
            ("1.5h", ms(5_400_000)),
            ("2h45m", ms(9_900_000)),
            (".5s", ms(500)),
            ("+2s", ms(2000)),
            ("10µs", Duration::from_micros(10)),
        ] {
            assert_eq!(parse(text), Ok(expected), "{text}");
        }
        for bad in ["", "1", "s", "1d", "1 s", ".s", "1.5", "abc", "+"] {
            let error = parse(bad).expect_err(bad);
            assert!(
                error.starts_with(&format!("invalid duration {bad:?}: ")),
                "{error}"
            );
        }
        assert_eq!(
            parse("-1s"),
            Err("invalid duration \"-1s\": must not be negative".to_string())
        );
    }

    #[test]
    fn formats_like_go() {
        let ms = Duration::from_millis;
        assert_eq!(format(ms(30_000)), "30s");
        assert_eq!(format(ms(100)), "100ms");
        assert_eq!(format(ms(1500)), "1.5s");
        assert_eq!(format(ms(90_000)), "1m30s");
        assert_eq!(format(ms(3_600_000)), "1h0m0s");
        assert_eq!(format(Duration::ZERO), "0s");
        assert_eq!(format(Duration::from_micros(1500)), "1.5ms");
        assert_eq!(format(Duration::from_nanos(7)), "7ns");
        assert_eq!(elapsed(ms(1234)), "1.2s");
        assert_eq!(elapsed(ms(61_500)), "1m1s");
    }

    #[test]
    fn formatting_reads_back() {
        for text in ["30s", "1m30s", "1h0m0s", "100ms", "1.5s", "7ns"] {
            let duration = parse(text).expect(text);
            assert_eq!(format(duration), text);
        }
    }
}
