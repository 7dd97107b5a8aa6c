//! Characters that can break or disguise text: one rule for the generator (doc comments and
//! names it writes into Rust source, the names it warns about) and the servers (command lines
//! and client input they quote in logs and error texts).

/// Whether `c` is a control character or an invisible formatting character that can disguise
/// text: bidirectional controls (U+202A-U+202E, U+2066-U+2069, U+061C, U+200E, U+200F; rustc
/// refuses them in comments and literals), zero-width characters, word joiners and invisible
/// operators, line and paragraph separators, the soft hyphen, the Mongolian vowel separator,
/// the byte-order mark, interlinear annotation controls and tag characters.
pub fn is_disguising(c: char) -> bool {
    c.is_control()
        || matches!(
            u32::from(c),
            0x00AD
                | 0x061C
                | 0x180E
                | 0x200B..=0x200F
                | 0x2028..=0x202E
                | 0x2060..=0x206F
                | 0xFEFF
                | 0xFFF9..=0xFFFB
                | 0xE0000..=0xE007F
        )
}

/// `text` with every [`is_disguising`] character written as a visible `\u{...}` escape (and
/// a backslash before such an escape's own backslash is not needed: the text is for reading).
pub fn escape_disguising(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(is_disguising) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_disguising(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidi_controls_zero_width_and_controls_are_escaped_visibly() {
        assert_eq!(escape_disguising("plain text"), "plain text");
        assert_eq!(escape_disguising("a\u{202E}b"), "a\\u{202e}b");
        assert_eq!(escape_disguising("x\u{200B}y\u{7}"), "x\\u{200b}y\\u{7}");
        assert_eq!(escape_disguising("\u{2066}\u{FEFF}"), "\\u{2066}\\u{feff}");
        // Letters of other scripts are text, not disguise.
        assert_eq!(escape_disguising("café а"), "café а");
    }
}
