//! "Did you mean ...?": the nearest known name to a misspelt one.

/// The candidate closest to `word`, if any is close enough to be a plausible typo: an
/// edit distance of at most a third of the word (at least 2), a case-only difference, or one
/// name containing the other (`timeout` for `tool_timeout`). Ties go to the earlier candidate.
pub(crate) fn nearest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let word_lower = word.to_lowercase();
    let limit = (word.chars().count() / 3).max(2);
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        let Some(score) = closeness(&word_lower, candidate, limit) else {
            continue;
        };
        if best.is_none_or(|(best_score, _)| score < best_score) {
            best = Some((score, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

/// How far `candidate` is from `word` (lower is closer), or `None` when it is too far.
fn closeness(word: &str, candidate: &str, limit: usize) -> Option<usize> {
    let candidate = candidate.to_lowercase();
    let distance = strsim::levenshtein(word, &candidate);
    if distance <= limit {
        return Some(distance);
    }
    let contains = word.len() >= 4 && candidate.contains(word)
        || candidate.len() >= 4 && word.contains(candidate.as_str());
    contains.then_some(limit + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_are_counted_in_characters() {
        assert_eq!(strsim::levenshtein("tool_timout", "tool_timeout"), 1);
        assert_eq!(strsim::levenshtein("µs", "us"), 1);
    }

    #[test]
    fn nearest_names() {
        let keys = [
            "port",
            "address",
            "tool_timeout",
            "max_concurrent_tools",
            "builtins",
        ];
        assert_eq!(nearest("tool_timout", keys), Some("tool_timeout"));
        assert_eq!(nearest("prot", keys), Some("port"));
        assert_eq!(nearest("timeout", keys), Some("tool_timeout"));
        assert_eq!(nearest("Address", keys), Some("address"));
        assert_eq!(nearest("zzz", keys), None);
        assert_eq!(nearest("identity", keys), None);
    }
}
