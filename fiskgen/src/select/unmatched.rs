//! Filters that match nothing, and why a server would serve no tool: the warnings and the reason
//! `fiskgen info` and `fiskgen build` give instead of a silent "No tools are served".

use fiskgen_contract::surface::Stage;

use crate::config::Config;
use crate::ir::Builtin;
use crate::model;
use crate::settings::filter_stages;

/// What one filter stage removed, by tool name, for the "why no tools" reason.
#[derive(Debug, Default)]
pub(super) struct Removed {
    /// Commands tagged `ai:deny`.
    pub denied: Vec<String>,
    /// Per stage (its label), the tools it removed.
    pub stages: Vec<(String, Vec<String>)>,
}

impl Removed {
    /// What removed the command tool `name`: `ai:deny` or a filter stage's label.
    pub(super) fn by(&self, name: &str) -> Option<String> {
        if self.denied.iter().any(|denied| denied == name) {
            return Some(format!("its tag {}", fiskgen_contract::surface::DENY_TAG));
        }
        self.stages
            .iter()
            .find(|(_, dropped)| dropped.iter().any(|dropped| dropped == name))
            .map(|(label, _)| label.clone())
    }
}

/// A tool a filter could match: its name, and its tags for a command (`None` for a built-in,
/// which matches by name alone).
pub(super) struct Candidate<'a> {
    pub name: &'a str,
    pub tags: Option<&'a [String]>,
}

/// The warnings about every include/exclude pattern and tag that matches no leaf command and no
/// enabled built-in ([`unmatched_filter_entries`]).
pub(super) fn filter_warnings(
    config: &Config,
    candidates: &[super::Candidate<'_>],
    app: &str,
) -> Vec<String> {
    let builtins = enabled_builtin_names(config);
    let mut tools: Vec<Candidate<'_>> = candidates
        .iter()
        .map(|c| Candidate {
            name: &c.tool.name,
            tags: Some(c.tool.tags.as_slice()),
        })
        .collect();
    tools.extend(builtins.iter().map(|name| Candidate { name, tags: None }));
    unmatched_filter_entries(&filter_stages(config), &tools, app)
}

/// The names of the built-ins the config enables (before the filters).
fn enabled_builtin_names(config: &Config) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = config
        .harness
        .tools
        .iter()
        .filter_map(|entry| Builtin::from_name(&entry.name))
        .map(Builtin::name)
        .collect();
    if config.harness.knowledge.enabled {
        names.extend(Builtin::KNOWLEDGE.iter().map(|builtin| builtin.name()));
    }
    names
}

/// One warning for every pattern and tag of a filter stage that matches no command and no
/// enabled built-in (`include: {tools: ["^gte_"]}`): such an entry is almost always a typo, and
/// an include stage whose entries all match nothing serves nothing.
pub(super) fn unmatched_filter_entries(
    stages: &[Stage],
    candidates: &[Candidate<'_>],
    app: &str,
) -> Vec<String> {
    let mut warnings = Vec::new();
    let sample = sample_names(candidates);
    for stage in stages {
        for pattern in &stage.filter.tools {
            if !candidates.iter().any(|tool| pattern.is_match(tool.name)) {
                warnings.push(format!(
                    "{}.tools pattern \"{}\" matches no tool of \"{app}\" ({sample}); check it \
                     for a typo (`fiskgen info` lists every tool when the filter is removed)",
                    stage.label,
                    pattern.as_str()
                ));
            }
        }
        for tag in &stage.filter.tags {
            let matches = |tool: &Candidate<'_>| match tool.tags {
                Some(tags) if tag.is_empty() => tags.is_empty(),
                Some(tags) => tags.contains(tag),
                None => false,
            };
            if !candidates.iter().any(matches) {
                let what = if tag.is_empty() {
                    "\"\" (untagged commands), but every command carries a tag".to_string()
                } else {
                    format!("\"{tag}\", but no command of \"{app}\" carries that tag")
                };
                warnings.push(format!("{}.tags lists {what}", stage.label));
            }
        }
    }
    warnings
}

/// `its tools are a, b, c and 4 more`, or `it has no tools`.
fn sample_names(candidates: &[Candidate<'_>]) -> String {
    const SHOWN: usize = 5;
    let names: Vec<&str> = candidates.iter().map(|tool| tool.name).collect();
    match names.len() {
        0 => "it has no tools".to_string(),
        n if n <= SHOWN => format!("its tools: {}", names.join(", ")),
        n => format!(
            "its tools include {} and {} more",
            names[..SHOWN].join(", "),
            n - SHOWN
        ),
    }
}

impl super::Selection {
    /// Why no tool is served, when none is ([`why_empty`]), also said as a warning, in
    /// `fiskgen info` and in the server's banner.
    pub(super) fn empty_reason(
        &mut self,
        model: Option<&model::Application>,
        leaves: usize,
    ) -> Option<String> {
        if !self.tools.is_empty() {
            return None;
        }
        let reason = why_empty(model, leaves, &self.removed);
        let warning = format!("no tool is served: {reason}");
        self.start_warnings.push(warning.clone());
        self.warnings.push(warning);
        Some(reason)
    }
}

/// Why a server serves no tool: the application's shape, or which rule removed what.
fn why_empty(model: Option<&model::Application>, leaves: usize, removed: &Removed) -> String {
    let Some(model) = model else {
        return "the config names no application_path and enables no built-in tool (harness.tools \
                or harness.knowledge)"
            .to_string();
    };
    let app = &model.name;
    if leaves == 0 {
        let visible = model.commands.iter().filter(|c| !c.hidden).count();
        if model.commands.is_empty() {
            let args: Vec<&str> = model.args.iter().map(|arg| arg.name.as_str()).collect();
            let what = if args.is_empty() {
                String::new()
            } else {
                format!(
                    " (its arguments {} belong to the root command)",
                    args.join(", ")
                )
            };
            return format!(
                "only subcommands become tools, and \"{app}\" has none{what}: fiskgen serves \
                 each leaf command of a fisk application (`{app} <command> ...`) as a tool, never \
                 the application itself"
            );
        }
        if visible == 0 {
            return format!(
                "every command of \"{app}\" is hidden, and hidden commands are never served"
            );
        }
        return format!("no command of \"{app}\" has a name that is a valid MCP tool name");
    }
    let mut steps = Vec::new();
    if !removed.denied.is_empty() {
        steps.push(format!(
            "{} tagged ai:deny ({})",
            removed.denied.len(),
            short_list(&removed.denied)
        ));
    }
    for (label, names) in &removed.stages {
        if !names.is_empty() {
            steps.push(format!(
                "{label} removed {} ({})",
                names.len(),
                short_list(&names.iter().map(String::as_str).collect::<Vec<_>>())
            ));
        }
    }
    let commands = if leaves == 1 { "command" } else { "commands" };
    format!(
        "\"{app}\" has {leaves} {commands} that could be tools, and the filters removed every one: \
         {}",
        steps.join("; ")
    )
}

fn short_list<S: AsRef<str>>(names: &[S]) -> String {
    const SHOWN: usize = 5;
    let shown: Vec<&str> = names.iter().take(SHOWN).map(AsRef::as_ref).collect();
    if names.len() > SHOWN {
        format!("{}, ...", shown.join(", "))
    } else {
        shown.join(", ")
    }
}
