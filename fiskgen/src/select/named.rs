//! The config keys that name served tools (`param_headers`, `ask`, `tasks.required`): each name
//! must be a served command, else a problem naming it with the nearest served one.

use std::collections::BTreeMap;
use std::path::Path;

use super::Selection;
use crate::config::{McpConfig, Question};
use crate::suggest::nearest;

/// What to say after "not a served command" about `name`: that it is the served name of a
/// command (the config names tools by their own names, `tool_names` and `tool_prefix` give the
/// served ones), else the nearest served command's own name.
fn suggestion(name: &str, served: &[&str], mcp: Option<&McpConfig>) -> String {
    let renamed = mcp.and_then(|mcp| {
        let by_rename = mcp.tool_names.iter().find(|(_, to)| to == name);
        let by_prefix = (!mcp.tool_prefix.is_empty())
            .then(|| name.strip_prefix(mcp.tool_prefix.as_str()))
            .flatten()
            .filter(|own| served.contains(own));
        by_rename
            .map(|(from, _)| from.text.clone())
            .or_else(|| by_prefix.map(str::to_string))
    });
    match renamed {
        Some(own) => format!(
            "; {name:?} is the name {own:?} is served as, and the config names tools by their \
             own names: write {own:?}"
        ),
        None => nearest(name, served.iter().copied())
            .map(|near| format!("; did you mean {near:?}?"))
            .unwrap_or_default(),
    }
}

impl Selection {
    /// Every tool `param_headers` names is a served command (one of `served`).
    pub(super) fn check_param_headers(
        &mut self,
        param_headers: &BTreeMap<String, BTreeMap<String, String>>,
        served: &[&str],
        mcp: Option<&McpConfig>,
    ) {
        for tool in param_headers.keys() {
            if !served.contains(&tool.as_str()) {
                let hint = suggestion(tool, served, mcp);
                self.problems.push(format!(
                    "expose.agent.mcp.param_headers names tool {tool:?}, which is not a served \
                     command{hint}"
                ));
            }
        }
    }

    /// Every tool `ask` names is a served command (one of `served`).
    pub(super) fn check_ask(
        &mut self,
        ask: &BTreeMap<String, Vec<Question>>,
        served: &[&str],
        mcp: Option<&McpConfig>,
    ) {
        for tool in ask.keys() {
            if !served.contains(&tool.as_str()) {
                let hint = suggestion(tool, served, mcp);
                self.problems.push(format!(
                    "expose.agent.mcp.ask names tool {tool:?}, which is not a served command \
                     (only a command's parameters can be asked){hint}"
                ));
            }
        }
    }

    /// Every tool `tasks.required` names is a served command (one of `served`); the error is
    /// located at the name.
    pub(super) fn check_task_required(&mut self, source: &Path, mcp: &McpConfig, served: &[&str]) {
        for name in &mcp.task_required {
            if !served.contains(&name.text.as_str()) {
                let hint = suggestion(&name.text, served, Some(mcp));
                self.problems.push(format!(
                    "{}:{}:{}: expose.agent.mcp.tasks.required names tool {:?}, which is not a \
                     served command (built-in tools always answer on their request){hint}",
                    source.display(),
                    name.line,
                    name.column,
                    name.text
                ));
            }
        }
    }

    /// Every tag under `group_tag_prefix` names a group (`fiskgen_contract::groups`): its rest
    /// is one URL path segment, since the group is served at `/mcp/<rest>`.
    pub(super) fn check_group_tags(&mut self, mcp: &McpConfig) {
        let prefix = mcp.group_tag_prefix.as_deref();
        for tool in &self.tools {
            let tags: Vec<&str> = tool.tags.iter().map(String::as_str).collect();
            for tag in fiskgen_contract::groups::unnamed_tags(&tags, prefix) {
                self.problems.push(format!(
                    "tool {:?} has the tag {tag:?}, under group_tag_prefix {:?}, but what follows \
                     the prefix cannot name a group (served at /mcp/<group>: 1 or more of A-Z a-z \
                     0-9 _ . -); change the prefix or the tag",
                    tool.name,
                    prefix.unwrap_or_default()
                ));
            }
        }
    }
}
