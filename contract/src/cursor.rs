//! The opaque cursors of every paginated list a server answers (`tools/list`,
//! `resources/list`, `resources/templates/list`, `prompts/list`), defined once: fiskgen writes
//! the `tools/list` cursors into the precomputed answer with it, and the runtime issues and
//! reads every list's cursors with it (docs/runtime.md, "Listing tools"; docs/resources.md).
//!
//! A cursor is `<tag>-<page>`: the tag is a short digest of the listed set (so a cursor from
//! another build, another narrowing or another list is refused rather than misread), and
//! `<page>` the 1-based number of the page it asks for (2 and up: the first page has none). A
//! cursor this server did not issue for this list is an [`InvalidCursor`], which servers answer
//! with invalid params (-32602), as the specification asks.

use std::ops::Range;

use sha2::{Digest, Sha256};

use crate::canonical;

/// The pages of one list and their cursors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursors {
    /// What the list holds, plural, for the error text (`tools`, `resources`, ...).
    what: &'static str,
    /// The digest of the listed set.
    tag: String,
    /// Items in the list.
    items: usize,
    /// Items per page (at least 1).
    page_size: usize,
}

/// A cursor this server did not issue for the list it was sent to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid cursor {shown:?}: this server did not issue it (it lists its {what} in {pages} \
     page(s) and issues cursors only in nextCursor); list again without a cursor"
)]
pub struct InvalidCursor {
    /// The cursor as sent, cut to its first 64 characters.
    pub shown: String,
    /// What the list holds.
    pub what: &'static str,
    /// Pages of the list.
    pub pages: usize,
}

impl Cursors {
    /// The cursors of a list of `items` items of `what`, in pages of `page_size` (at least 1).
    /// `set` identifies the listed set: the same bytes for the same set, other bytes for
    /// another set or another list.
    pub fn new(what: &'static str, set: &[u8], items: usize, page_size: usize) -> Cursors {
        let digest = canonical::hex(&Sha256::digest(set));
        Cursors {
            what,
            tag: digest.chars().take(12).collect(),
            items,
            page_size: page_size.max(1),
        }
    }

    /// The cursors of a list whose set's tag is known (from [`Cursors::tag`] of the list's
    /// cursors made with [`Cursors::new`], e.g. written into a build).
    pub fn tagged(what: &'static str, tag: &str, items: usize, page_size: usize) -> Cursors {
        Cursors {
            what,
            tag: tag.to_string(),
            items,
            page_size: page_size.max(1),
        }
    }

    /// The digest of the listed set that every cursor of the list starts with.
    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// Pages of the list: at least one (an empty list is one empty page).
    pub fn pages(&self) -> usize {
        self.items.div_ceil(self.page_size).max(1)
    }

    /// The items of page `index` (0-based; empty past the end).
    pub fn range(&self, index: usize) -> Range<usize> {
        let start = index.saturating_mul(self.page_size).min(self.items);
        start..start.saturating_add(self.page_size).min(self.items)
    }

    /// The cursor that asks for page `index` (0-based): `None` for the first page and past the
    /// last.
    pub fn cursor(&self, index: usize) -> Option<String> {
        (index > 0 && index < self.pages()).then(|| format!("{}-{}", self.tag, index + 1))
    }

    /// The cursor of the page after page `index` (`nextCursor`), when there is one.
    pub fn next(&self, index: usize) -> Option<String> {
        self.cursor(index.saturating_add(1))
    }

    /// The page (0-based) a request's cursor asks for: the first without one.
    pub fn page(&self, cursor: Option<&str>) -> Result<usize, InvalidCursor> {
        let Some(cursor) = cursor else {
            return Ok(0);
        };
        let index = cursor
            .strip_prefix(self.tag.as_str())
            .and_then(|rest| rest.strip_prefix('-'))
            .and_then(|number| number.parse::<usize>().ok())
            .and_then(|number| number.checked_sub(1))
            .filter(|&index| self.cursor(index).as_deref() == Some(cursor));
        index.ok_or_else(|| InvalidCursor {
            shown: cursor.chars().take(64).collect(),
            what: self.what,
            pages: self.pages(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_follow_each_other_and_cover_the_list_exactly_once() {
        for (items, page_size) in [(7, 3), (6, 3), (1, 5), (0, 2), (10, 1)] {
            let cursors = Cursors::new("prompts", b"set", items, page_size);
            let mut seen = Vec::new();
            let mut cursor: Option<String> = None;
            loop {
                let index = cursors.page(cursor.as_deref()).expect("an issued cursor");
                let range = cursors.range(index);
                assert!(range.len() <= page_size);
                seen.extend(range);
                match cursors.next(index) {
                    Some(next) => cursor = Some(next),
                    None => break,
                }
            }
            assert_eq!(
                seen,
                (0..items).collect::<Vec<_>>(),
                "{items} in {page_size}"
            );
        }
    }

    #[test]
    fn foreign_altered_or_stale_cursors_are_refused_with_what_the_list_holds() {
        let cursors = Cursors::new("resources", b"resources/list\nb\nc", 7, 3);
        let next = cursors.next(0).expect("a second page");
        let other_set = Cursors::new("resources", b"resources/list\nb", 7, 3);
        let tag = &next[..12];
        for bad in [
            "garbage!".to_string(),
            String::new(),
            format!("{next}x"),
            other_set.next(0).expect("a second page"),
            format!("{tag}-1"),
            format!("{tag}-4"),
            format!("{tag}-02"),
            format!("{tag}-+2"),
            format!("{tag}-99999999999999999999999"),
        ] {
            let error = cursors.page(Some(&bad)).expect_err(&bad);
            assert_eq!(error.pages, 3);
            assert_eq!(
                error.to_string(),
                format!(
                    "invalid cursor {:?}: this server did not issue it (it lists its resources \
                     in 3 page(s) and issues cursors only in nextCursor); list again without a \
                     cursor",
                    bad.chars().take(64).collect::<String>()
                )
            );
        }
        assert_eq!(cursors.page(Some(&next)), Ok(1));
        assert_eq!(cursors.page(Some(&format!("{tag}-3"))), Ok(2));
    }

    #[test]
    fn a_long_cursor_is_shown_cut() {
        let cursors = Cursors::new("tools", b"", 0, 1);
        let error = cursors
            .page(Some(&"x".repeat(500)))
            .expect_err("not issued");
        assert_eq!(error.shown.chars().count(), 64);
    }
}
