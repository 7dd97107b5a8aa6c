//! How a command line is shown to people: in results, confirmation prompts and logs.
//!
//! fisk-ai joins argv with spaces, which is ambiguous (`a b` could be one token or two) and
//! lets client-chosen bytes such as escape sequences reach the operator's terminal. Here every
//! token that is not plainly safe is shell-quoted, and any control or invisible formatting
//! character is written as an escape, so the display is unambiguous, paste-able into a POSIX
//! shell, and inert on a terminal.

use std::fmt::Write as _;

/// The argv (without the program) as one line, tokens quoted where needed.
pub(crate) fn display(argv: &[String]) -> String {
    argv.iter()
        .map(|token| quote(token))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One token in shell syntax: bare when safe, `'...'` when it only needs quoting, bash's
/// ANSI-C `$'...'` when it holds characters that must be escaped to be seen.
pub(crate) fn quote(token: &str) -> String {
    if !token.is_empty() && token.chars().all(is_bare) {
        return token.to_string();
    }
    if token.chars().any(needs_escape) {
        let mut out = String::from("$'");
        for c in token.chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                c if needs_escape(c) => {
                    let code = u32::from(c);
                    if code < 0x80 {
                        let _ = write!(out, "\\x{code:02x}");
                    } else if code <= 0xFFFF {
                        let _ = write!(out, "\\u{code:04x}");
                    } else {
                        let _ = write!(out, "\\U{code:08x}");
                    }
                }
                c => out.push(c),
            }
        }
        out.push('\'');
        return out;
    }
    format!("'{}'", token.replace('\'', r"'\''"))
}

/// Characters a POSIX shell reads literally outside quotes.
fn is_bare(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-_./:=,@%+".contains(c)
}

/// Control characters and the invisible formatting characters that can disguise text
/// (bidirectional controls, zero-width characters, byte-order mark, ...): the contract's rule.
pub(crate) fn needs_escape(c: char) -> bool {
    fiskgen_contract::text::is_disguising(c)
}

/// Go's `%q` (`strconv.Quote`): the form fisk-ai uses for `<cmd>` in confirmation texts.
pub(crate) fn go_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0C' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0B' => out.push_str("\\v"),
            c if needs_escape(c) => {
                let code = u32::from(c);
                if code < 0x80 {
                    let _ = write!(out, "\\x{code:02x}");
                } else if code <= 0xFFFF {
                    let _ = write!(out, "\\u{code:04x}");
                } else {
                    let _ = write!(out, "\\U{code:08x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(tokens: &[&str]) -> Vec<String> {
        tokens.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn safe_tokens_stay_bare() {
        assert_eq!(
            display(&argv(&["do", "--level=info", "--", "hello"])),
            "do --level=info -- hello"
        );
    }

    #[test]
    fn spaces_quotes_and_controls_are_quoted() {
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote("--x=a\nb"), r"$'--x=a\nb'");
        assert_eq!(quote("\x1b[31mred"), r"$'\x1b[31mred'");
        assert_eq!(quote("evil\u{202E}txt"), r"$'evil\u202etxt'");
        assert_eq!(quote("it's\n"), r"$'it\'s\n'");
        assert_eq!(quote("héllo"), "'héllo'");
    }

    #[test]
    fn go_quote_escapes_like_strconv() {
        assert_eq!(go_quote("deploy -- prod"), "\"deploy -- prod\"");
        assert_eq!(go_quote("say \"hi\"\n"), r#""say \"hi\"\n""#);
        assert_eq!(go_quote("\x1b"), r#""\x1b""#);
    }
}
