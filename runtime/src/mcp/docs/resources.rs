//! `resources/list`, `resources/templates/list`, `resources/read` and the legacy
//! `resources/subscribe` over the prepared [`Docs`].

use fiskgen_contract::docs as uris;
use rmcp::ErrorData;
use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, ResourceContents,
};

use super::{Docs, MARKDOWN};

impl Docs {
    /// One page of resources.
    pub(crate) fn list_resources(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let (items, next) = self.lists().resources.page(cursor)?;
        let mut result = ListResourcesResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    /// One page of resource templates.
    pub(crate) fn list_templates(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let (items, next) = self.lists().templates.page(cursor)?;
        let mut result = ListResourceTemplatesResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    /// A resource's Markdown. A URI this server does not offer is "not found" with the URI in
    /// `data` (-32002; rmcp sends -32602 to 2026-07-28 clients, SEP-2164).
    pub(crate) fn read(&self, uri: &str) -> Result<ReadResourceResult, ErrorData> {
        if let Some(text) = self.lists().contents.get(uri) {
            return Ok(ReadResourceResult::new(vec![
                ResourceContents::text(text.as_ref(), uri).with_mime_type(MARKDOWN),
            ]));
        }
        Err(self.not_found(uri))
    }

    /// `resources/subscribe` (2025 revisions): accepted for an offered URI. The resources are
    /// fixed at build time, so no update notification ever follows.
    pub(crate) fn subscribe(&self, uri: &str) -> Result<(), ErrorData> {
        if self.lists().contents.contains_key(uri) {
            Ok(())
        } else {
            Err(self.not_found(uri))
        }
    }

    fn not_found(&self, uri: &str) -> ErrorData {
        let hint = match uris::help_tool(self.identity(), uri) {
            Some(tool) => format!(
                ": this server serves no tool {:?} (its help is offered for: {})",
                crate::logging::label(&tool),
                super::listing(self.help.iter().map(|help| help.tool))
            ),
            None if self.lists().resources.items().is_empty() => {
                ": this server offers no resources".to_string()
            }
            None => " (resources/list names every URI this server offers)".to_string(),
        };
        // The URI comes back whole only when it is short (docs/runtime.md, "Limits").
        let data = match crate::logging::echo_head(uri) {
            None => serde_json::json!({ "uri": uri }),
            Some(head) => serde_json::json!({ "uri": head, "uriBytes": uri.len() }),
        };
        ErrorData::resource_not_found(format!("Resource not found{hint}"), Some(data))
    }
}
