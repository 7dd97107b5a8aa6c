//! `skills/list` and `skills/get` (the Skills extension, SEP-2640): each cheat of the
//! application as a skill whose one file, `SKILL.md`, is its text under a YAML frontmatter
//! (`name`, `description`), served through `resources/read` at
//! `skill://<scheme>/<skill>/SKILL.md` (`fiskgen_contract::docs::skill_uri`). rmcp owns the
//! wire: the entries are its [`Skill`] type, checked by it before they are sent.

use std::collections::HashMap;

use fiskgen_contract::docs as uris;
use rmcp::ErrorData;
use rmcp::model::{
    GetSkillResult, JsonObject, ListSkillsResult, Resource, SKILLS_EXTENSION_ID,
    ServerCapabilities, Skill, SkillFrontmatter, SkillResource, SkillResources,
};

use super::{Docs, MARKDOWN, invalid, listing};
use crate::spec::app::{AppSpec, CheatSpec, HelpSpec};

/// One skill as served: its entry, its `SKILL.md` as a resource, and that file's text.
pub(super) struct Served {
    pub(super) skill: Skill,
    pub(super) resource: Resource,
    pub(super) text: String,
}

/// The skills of `app`'s cheats, in label order; `help` is the served tools' help (a skill
/// of a served tool's cheat points at it). Empty when skills are off.
pub(super) fn served(app: &AppSpec, help: &[&'static HelpSpec]) -> Vec<Served> {
    let spec = app.docs;
    if !spec.skills {
        return Vec::new();
    }
    let names = uris::skill_names(spec.cheats.iter().map(|cheat| cheat.label));
    spec.cheats
        .iter()
        .zip(names)
        .filter_map(|(cheat, name)| {
            let name = name?;
            let help = cheat
                .tool
                .and_then(|tool| help.iter().find(|help| help.tool == tool));
            Some(skill(app.identity, cheat, name, help.map(|help| help.tool)))
        })
        .collect()
}

/// The skill of `cheat`, named `name`; `tool` is the served tool whose help it points at.
fn skill(identity: &str, cheat: &CheatSpec, name: String, tool: Option<&str>) -> Served {
    let description = description(cheat);
    let uri = uris::skill_uri(identity, &name);
    // A JSON string is a YAML double-quoted scalar with the same value, so the frontmatter a
    // client parses from the file is exactly the entry's (SEP-2640 requires them identical).
    let quoted = serde_json::Value::String(description.clone()).to_string();
    let mut text = format!(
        "---\nname: {name}\ndescription: {quoted}\n---\n\n{}",
        cheat.text
    );
    if !text.ends_with('\n') {
        text.push('\n');
    }
    if let Some(tool) = tool {
        text.push_str(&format!(
            "\nThe tool `{tool}` runs this command; its full help is the resource `{}`.\n",
            uris::help_uri(identity, tool)
        ));
    }
    let resource = Resource::new(&uri, &name)
        .with_title(format!("Skill: {}", cheat.label))
        .with_description(&description)
        .with_mime_type(MARKDOWN)
        .with_size(text.len() as u64);
    let files = vec![SkillResource::from_bytes(&uri, text.as_bytes())];
    let skill = Skill::new(
        uri,
        SkillFrontmatter::new(name, description),
        SkillResources::Files(files),
    );
    Served {
        skill,
        resource,
        text,
    }
}

/// A cheat's description as a skill's: never empty, at most the Agent Skills limit of
/// characters.
fn description(cheat: &CheatSpec) -> String {
    let text = cheat.description.trim();
    let text = if text.is_empty() {
        format!("Cheat sheet \"{}\"", cheat.label)
    } else {
        text.to_string()
    };
    text.chars().take(uris::SKILL_DESCRIPTION_MAX).collect()
}

/// Whether `app` serves at least one skill (decided at start, before the lists are made).
pub(super) fn offers(app: &AppSpec) -> bool {
    app.docs.skills
        && app
            .docs
            .cheats
            .iter()
            .any(|cheat| uris::skill_name(cheat.label).is_some())
}

/// Declares the Skills extension (an empty settings object: no `resources/directory/read`,
/// a skill being one file) beside any other extension.
pub(super) fn declare(capabilities: &mut ServerCapabilities) {
    capabilities
        .extensions
        .get_or_insert_with(Default::default)
        .insert(SKILLS_EXTENSION_ID.to_string(), JsonObject::new());
}

/// The skills by `SKILL.md` URI, as indexes into the list.
pub(super) fn index(skills: &[Skill]) -> HashMap<String, usize> {
    skills
        .iter()
        .enumerate()
        .map(|(at, skill)| (skill.uri.clone(), at))
        .collect()
}

impl Docs {
    /// One page of skills (rmcp answers -32601 itself when the extension is not declared).
    pub(crate) fn list_skills(&self, cursor: Option<&str>) -> Result<ListSkillsResult, ErrorData> {
        let (items, next) = self.lists().skills.page(cursor)?;
        let mut result = ListSkillsResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    /// One skill by the URI of its `SKILL.md`; a URI this server serves no skill at is -32602
    /// naming the skills it serves, as SEP-2640 asks.
    pub(crate) fn get_skill(&self, uri: &str) -> Result<GetSkillResult, ErrorData> {
        let lists = self.lists();
        if let Some(&at) = lists.skill_at.get(uri) {
            return Ok(GetSkillResult::new(lists.skills.items()[at].clone()));
        }
        let known = if lists.skills.items().is_empty() {
            "this server serves no skills".to_string()
        } else {
            format!(
                "its skills: {}",
                listing(lists.skills.items().iter().map(|skill| skill.uri.as_str()))
            )
        };
        Err(invalid(format!(
            "unknown skill: {} ({known}; skills/list names them all)",
            crate::logging::echo(uri)
        )))
    }
}

#[cfg(test)]
mod tests;
