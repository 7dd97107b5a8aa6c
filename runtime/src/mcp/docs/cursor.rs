//! The paginated lists of resources, resource templates and prompts, with the cursors of every
//! list (`fiskgen_contract::cursor`, the same codec as `tools/list`). A cursor this server did
//! not issue for this list is an invalid-params error (-32602), as the specification asks.

use fiskgen_contract::cursor::Cursors;
use rmcp::ErrorData;

use crate::mcp::listing::invalid_cursor;

/// A list's items, prepared once at start, and its cursors.
#[derive(Debug)]
pub(crate) struct Paged<T> {
    items: Vec<T>,
    cursors: Cursors,
}

impl<T: Clone> Paged<T> {
    /// The list `list` (the method, e.g. `resources/list`) of `items` of `what`, each named by
    /// `key` (its URI or name, unique in the list), in pages of `page_size`. The cursors name
    /// the list and its items, so a cursor of another list or another narrowing is refused.
    pub(crate) fn new(
        list: &str,
        what: &'static str,
        items: Vec<T>,
        key: impl Fn(&T) -> &str,
        page_size: usize,
    ) -> Self {
        let mut set = list.to_string();
        for item in &items {
            set.push('\n');
            set.push_str(key(item));
        }
        let cursors = Cursors::new(what, set.as_bytes(), items.len(), page_size);
        Self { items, cursors }
    }

    /// Every item, in order.
    pub(crate) fn items(&self) -> &[T] {
        &self.items
    }

    /// The page `cursor` asks for (the first without one), and the cursor of the next page.
    pub(crate) fn page(&self, cursor: Option<&str>) -> Result<(Vec<T>, Option<String>), ErrorData> {
        let index = self.cursors.page(cursor).map_err(invalid_cursor)?;
        let items = self.items[self.cursors.range(index)].to_vec();
        Ok((items, self.cursors.next(index)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paged(list: &str, items: &[&'static str]) -> Paged<&'static str> {
        Paged::new(list, "resources", items.to_vec(), |item| item, 3)
    }

    #[test]
    fn pages_follow_each_other_and_cover_the_list_exactly_once() {
        let items = ["a", "b", "c", "d", "e", "f", "g"];
        let list = paged("resources/list", &items);
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let (page, next) = list.page(cursor.as_deref()).expect("page");
            assert!(page.len() <= 3);
            seen.extend(page);
            match next {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        assert_eq!(seen, items);
    }

    #[test]
    fn a_cursor_of_another_list_or_another_set_is_invalid_params() {
        let items = ["a", "b", "c", "d", "e", "f", "g"];
        let list = paged("resources/list", &items);
        let (_, next) = list.page(None).expect("first page");
        let next = next.expect("a second page");
        let other_list = paged("prompts/list", &items);
        let narrowed = paged("resources/list", &items[1..]);
        for other in [&other_list, &narrowed] {
            let error = other.page(Some(&next)).expect_err(&next);
            assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS);
            assert!(
                error.message.starts_with(&format!(
                    "invalid cursor {next:?}: this server did not issue it (it lists its \
                     resources in "
                )),
                "{}",
                error.message
            );
        }
        assert!(list.page(Some(&next)).is_ok());
    }
}
