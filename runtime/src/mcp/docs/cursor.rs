//! Opaque cursors of the paginated lists (`resources/list`, `resources/templates/list`,
//! `prompts/list`): the list's name and the offset of the next page, base64url-encoded. A
//! cursor this server did not issue for this list is an invalid-params error (-32602), as the
//! specification asks.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::ErrorData;

/// One page of `items` after `cursor`, and the cursor of the next page.
pub(crate) fn page<T: Clone>(
    list: &str,
    items: &[T],
    page_size: usize,
    cursor: Option<&str>,
) -> Result<(Vec<T>, Option<String>), ErrorData> {
    let page_size = page_size.max(1);
    let start = match cursor {
        None => 0,
        Some(cursor) => offset(list, cursor, items.len()).ok_or_else(|| {
            ErrorData::invalid_params(
                format!(
                    "invalid cursor {:?} for {list}: pass back a nextCursor this server returned \
                     for {list}, or no cursor for the first page",
                    crate::logging::label(cursor)
                ),
                None,
            )
        })?,
    };
    let end = start.saturating_add(page_size).min(items.len());
    let next = (end < items.len()).then(|| encode(list, end));
    Ok((items[start..end].to_vec(), next))
}

fn encode(list: &str, offset: usize) -> String {
    URL_SAFE_NO_PAD.encode(format!("{list}:{offset}"))
}

/// The offset a cursor stands for, when it is one of ours for `list` and still within it.
fn offset(list: &str, cursor: &str, len: usize) -> Option<usize> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let (name, offset) = text.split_once(':')?;
    let offset: usize = offset.parse().ok()?;
    (name == list && offset > 0 && offset < len && encode(list, offset) == cursor).then_some(offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_follow_each_other_and_cover_the_list_exactly_once() {
        let items: Vec<u32> = (0..7).collect();
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let (page, next) = page("resources/list", &items, 3, cursor.as_deref()).expect("page");
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
    fn foreign_altered_or_stale_cursors_are_invalid_params() {
        let items: Vec<u32> = (0..7).collect();
        let (_, next) = page("resources/list", &items, 3, None).expect("first page");
        let next = next.expect("a second page");
        for bad in [
            "garbage!".to_string(),
            format!("{next}x"),
            encode("prompts/list", 3),
            encode("resources/list", 0),
            encode("resources/list", 7),
            URL_SAFE_NO_PAD.encode("resources/list:03"),
        ] {
            let error = page("resources/list", &items, 3, Some(&bad)).expect_err(&bad);
            assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS, "{bad}");
            assert!(
                error.message.contains("invalid cursor"),
                "{}",
                error.message
            );
        }
        assert!(page("resources/list", &items, 3, Some(&next)).is_ok());
    }
}
