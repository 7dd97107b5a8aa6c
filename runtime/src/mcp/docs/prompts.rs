//! `prompts/list` and `prompts/get`: one prompt per cheat of the application.

use std::collections::HashMap;

use fiskgen_contract::docs as uris;
use rmcp::ErrorData;
use rmcp::model::{GetPromptResult, ListPromptsResult, PromptMessage, Role};

use super::{Docs, MARKDOWN, invalid, listing};
use crate::spec::app::CheatSpec;

/// The longest argument value accepted, in bytes (a prompt is text for a model, not a file).
pub(crate) const MAX_ARGUMENT_BYTES: usize = 4096;

impl Docs {
    /// One page of prompts.
    pub(crate) fn list_prompts(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let (items, next) = self.lists().prompts.page(cursor)?;
        let mut result = ListPromptsResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    /// A cheat as a prompt: its text with the given arguments filled in, then, when the cheat
    /// belongs to a served tool, that tool's help as an embedded resource.
    pub(crate) fn get_prompt(
        &self,
        name: &str,
        arguments: Option<&serde_json::Map<String, serde_json::Value>>,
    ) -> Result<GetPromptResult, ErrorData> {
        let cheat = self.cheat(name)?;
        let mut values: HashMap<&str, String> = HashMap::new();
        for (key, value) in arguments.into_iter().flatten() {
            if !cheat.arguments.iter().any(|argument| argument.name == key) {
                return Err(invalid(format!(
                    "prompt {} has no argument {}; its arguments: {}",
                    crate::logging::echo(name),
                    crate::logging::echo(key),
                    listing(cheat.arguments.iter().map(|argument| argument.name))
                )));
            }
            let value = match value {
                serde_json::Value::String(text) => text.clone(),
                serde_json::Value::Null => continue,
                other => other.to_string(),
            };
            if value.len() > MAX_ARGUMENT_BYTES {
                return Err(invalid(format!(
                    "argument {} of prompt {} is {} bytes; at most {MAX_ARGUMENT_BYTES} are \
                     accepted",
                    crate::logging::echo(key),
                    crate::logging::echo(name),
                    value.len()
                )));
            }
            values.insert(key.as_str(), value);
        }
        let text = uris::fill(cheat.text, |placeholder| values.get(placeholder).cloned());
        let mut messages = vec![PromptMessage::new_text(Role::User, text)];
        if let Some(help) = cheat.tool.and_then(|tool| self.help_of(tool)) {
            messages.push(PromptMessage::new_resource(
                Role::User,
                uris::help_uri(self.identity(), help.tool),
                Some(MARKDOWN.to_string()),
                Some(help.markdown.to_string()),
                None,
                None,
                None,
            ));
        }
        let mut result = GetPromptResult::new(messages);
        result.description = Some(cheat.description.to_string());
        Ok(result)
    }

    /// A served cheat by label, or a specific error.
    pub(super) fn cheat(&self, name: &str) -> Result<&'static CheatSpec, ErrorData> {
        self.lists().cheats.get(name).copied().ok_or_else(|| {
            let known = if self.lists().prompts.items().is_empty() {
                "this server has no prompts".to_string()
            } else {
                format!(
                    "its prompts: {}",
                    listing(
                        self.lists()
                            .prompts
                            .items()
                            .iter()
                            .map(|prompt| prompt.name.as_str())
                    )
                )
            };
            invalid(format!(
                "unknown prompt: {:?} ({known})",
                crate::logging::label(name)
            ))
        })
    }
}
