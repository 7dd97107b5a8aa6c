//! `completion/complete` for the prompts' arguments (the enum values and completion hints of
//! the flag or argument a placeholder is named after) and for the help template's `tool`
//! variable (the served tools' names).

use fiskgen_contract::docs as uris;
use rmcp::ErrorData;
use rmcp::model::{CompleteRequestParams, CompleteResult, CompletionInfo, Reference};

use super::{Docs, invalid, listing};

impl Docs {
    /// The values that start with what the client typed so far, at most 100 (with the total).
    pub(crate) fn complete(
        &self,
        request: &CompleteRequestParams,
    ) -> Result<CompleteResult, ErrorData> {
        let argument = &request.argument;
        let candidates: Vec<&str> = match &request.r#ref {
            Reference::Prompt(reference) => {
                let cheat = self.cheat(&reference.name)?;
                let Some(spec) = cheat.arguments.iter().find(|a| a.name == argument.name) else {
                    return Err(invalid(format!(
                        "prompt {:?} has no argument {:?} to complete; its arguments: {}",
                        reference.name,
                        crate::logging::label(&argument.name),
                        listing(cheat.arguments.iter().map(|a| a.name))
                    )));
                };
                spec.values.to_vec()
            }
            Reference::Resource(reference) => {
                let template = uris::help_template(self.identity());
                if self.lists().templates.items().is_empty() || reference.uri != template {
                    return Err(invalid(format!(
                        "unknown resource template {:?}; this server's templates: {}",
                        crate::logging::label(&reference.uri),
                        listing(
                            self.lists()
                                .templates
                                .items()
                                .iter()
                                .map(|t| t.uri_template.as_str())
                        )
                    )));
                }
                if argument.name != uris::HELP_VARIABLE {
                    return Err(invalid(format!(
                        "resource template {template:?} has no variable {:?} to complete; its \
                         variable: {}",
                        crate::logging::label(&argument.name),
                        uris::HELP_VARIABLE
                    )));
                }
                self.help.iter().map(|help| help.tool).collect()
            }
            // A reference kind a newer protocol may add.
            _ => return Err(invalid("unsupported completion reference".to_string())),
        };
        let typed = argument.value.to_lowercase();
        let matching: Vec<String> = candidates
            .into_iter()
            .filter(|value| value.to_lowercase().starts_with(&typed))
            .map(str::to_string)
            .collect();
        let total = matching.len();
        let shown: Vec<String> = matching
            .into_iter()
            .take(CompletionInfo::MAX_VALUES)
            .collect();
        let has_more = shown.len() < total;
        let info = CompletionInfo::with_pagination(shown, u32::try_from(total).ok(), has_more)
            .map_err(|error| ErrorData::internal_error(error, None))?;
        Ok(CompleteResult::new(info))
    }
}
