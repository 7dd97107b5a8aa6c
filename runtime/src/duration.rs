//! Go duration syntax (`time.ParseDuration`), which fisk users already write for `tool_timeout`,
//! and the matching `Duration.String` form used in messages, so an operator reads back exactly
//! the notation they configured.

use std::time::Duration;

/// Parses a Go duration such as `300ms`, `1.5h` or `2h45m` (units `ns`, `us`, `µs`, `ms`, `s`,
/// `m`, `h`; `0` alone is allowed). Negative values are refused: every duration the runtime reads
/// is a limit.
pub(crate) fn parse(text: &str) -> Result<Duration, String> {
    let invalid = || format!("invalid duration {text:?} (expected e.g. 30s, 1m30s, 500ms)");
    let mut rest = text;
    if let Some(stripped) = rest.strip_prefix('+') {
        rest = stripped;
    } else if rest.starts_with('-') {
        return Err(format!("invalid duration {text:?}: must not be negative"));
    }
    if rest == "0" {
        return Ok(Duration::ZERO);
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let whole_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let (whole, after) = rest.split_at(whole_len);
        let (fraction, after) = match after.strip_prefix('.') {
            Some(after_dot) => {
                let len = after_dot.bytes().take_while(u8::is_ascii_digit).count();
                after_dot.split_at(len)
            }
            None => ("", after),
        };
        if whole.is_empty() && fraction.is_empty() {
            return Err(invalid());
        }
        let unit_len = after
            .char_indices()
            .find(|(_, c)| *c == '.' || c.is_ascii_digit())
            .map_or(after.len(), |(index, _)| index);
        let (unit, after) = after.split_at(unit_len);
        let nanos_per_unit: f64 = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            "" => return Err(format!("invalid duration {text:?}: missing unit")),
            other => return Err(format!("invalid duration {text:?}: unknown unit {other:?}")),
        };
        let number: f64 = format!("{}.{}", if whole.is_empty() { "0" } else { whole }, {
            if fraction.is_empty() { "0" } else { fraction }
        })
        .parse()
        .map_err(|_| invalid())?;
        total += number * nanos_per_unit;
        rest = after;
    }
    // Go's limit (about 290 years) is far beyond any useful timeout; refuse rather than wrap.
    if !total.is_finite() || total > i64::MAX as f64 {
        return Err(format!("invalid duration {text:?}: too large"));
    }
    Ok(Duration::from_nanos(total.round() as u64))
}

/// Formats like Go's `Duration.String`: `1h2m3.5s`, `1.5s`, `100ms`, `0s`.
pub(crate) fn format(duration: Duration) -> String {
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

/// A short human form for logs and messages: milliseconds below 10 s, else Go's form.
pub(crate) fn elapsed(duration: Duration) -> String {
    if duration < Duration::from_secs(10) {
        format!("{:.1}s", duration.as_secs_f64())
    } else {
        format(Duration::from_secs(duration.as_secs()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_go_durations() {
        let ms = Duration::from_millis;
        for (text, expected) in [
            ("0", Duration::ZERO),
            ("30s", ms(30_000)),
            ("300ms", ms(300)),
            ("1.5h", ms(5_400_000)),
            ("2h45m", ms(9_900_000)),
            ("1m30s", ms(90_000)),
            (".5s", ms(500)),
            ("1.s", ms(1000)),
            ("+2s", ms(2000)),
            ("10us", Duration::from_micros(10)),
            ("10µs", Duration::from_micros(10)),
            ("7ns", Duration::from_nanos(7)),
        ] {
            assert_eq!(parse(text), Ok(expected), "{text}");
        }
        for bad in ["", "1", "s", "1d", "-1s", "1 s", ".s", "1.5", "abc", "+"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
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
    }
}
