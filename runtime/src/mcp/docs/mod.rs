//! The resources, prompts, skills and completions a server makes from its application's own
//! help (docs/resources.md): each served tool's help and the application's cheat sheets as
//! Markdown resources, a resource template for a tool's help by name, one prompt per cheat, one
//! skill per cheat (the Skills extension, SEP-2640, its `SKILL.md` a resource too), and
//! completions for the template's variable and the prompts' arguments.
//!
//! Everything is rendered at build time (see [`crate::spec::app::DocsSpec`]); the server
//! keeps only what belongs to the tools it actually serves (a narrowed server offers the help
//! of its narrowed set). At start it finds those tools and declares its capabilities; the
//! lists are prepared once, on the first request that reads them, and every request is
//! answered from them.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use fiskgen_contract::docs as uris;
use rmcp::ErrorData;
use rmcp::model::{
    JsonObject, Prompt, PromptArgument, Resource, ResourceTemplate, ServerCapabilities, Skill,
};

use crate::mcp::tools::Catalog;
use crate::spec::app::{AppSpec, CheatSpec, HelpSpec};
use cursor::Paged;

mod complete;
mod cursor;
mod prompts;
mod resources;
mod skills;

/// The MIME type of every resource.
const MARKDOWN: &str = "text/markdown";

/// Everything offered. The tools whose help is offered are found at start (the capabilities
/// depend on them); the lists themselves are made on the first request that reads them, so a
/// server's start, and a client that never asks for resources or prompts, does not pay for
/// them (docs/runtime.md, "Listing tools").
#[derive(Debug)]
pub(crate) struct Docs {
    /// The application (its identity is the URIs' scheme).
    app: &'static AppSpec,
    /// The tools whose help is offered, in serving order (the template's completions).
    help: Vec<&'static HelpSpec>,
    /// The lists, made once on first use ([`Docs::lists`]).
    lists: OnceLock<Lists>,
}

/// The prepared lists and what they point at.
#[derive(Debug)]
struct Lists {
    /// Help resources (serving order), then cheat sheets, then skills' `SKILL.md` (label
    /// order).
    resources: Paged<Resource>,
    /// The text behind every listed URI.
    contents: HashMap<String, Cow<'static, str>>,
    /// The help template, when there is help.
    templates: Paged<ResourceTemplate>,
    /// One prompt per cheat, in label order.
    prompts: Paged<Prompt>,
    /// The cheats served as prompts, by label.
    cheats: HashMap<&'static str, &'static CheatSpec>,
    /// One skill per cheat, in label order.
    skills: Paged<Skill>,
    /// The skills by the URI of their `SKILL.md`: indexes into `skills`.
    skill_at: HashMap<String, usize>,
}

impl Docs {
    /// What `app` offers, keeping only the help of the tools `catalog` serves.
    pub(crate) fn new(app: &'static AppSpec, catalog: &Catalog) -> Self {
        let help = app
            .docs
            .help
            .iter()
            .filter(|help| catalog.get(help.tool).is_some())
            .collect();
        Self {
            app,
            help,
            lists: OnceLock::new(),
        }
    }

    /// The lists, made on the first call.
    fn lists(&self) -> &Lists {
        self.lists.get_or_init(|| Lists::new(self.app, &self.help))
    }

    /// The server's identity, the URIs' scheme.
    fn identity(&self) -> &'static str {
        self.app.identity
    }

    /// Whether the cheats are served as prompts (there is at least one prompt).
    fn offers_prompts(&self) -> bool {
        self.app.docs.prompts && !self.app.docs.cheats.is_empty()
    }

    /// Whether anything can be completed (declares the `completions` capability): the help
    /// template's `tool` (there is help), or a prompt's arguments.
    pub(crate) fn completes(&self) -> bool {
        !self.help.is_empty() || self.offers_prompts()
    }

    /// Whether there are resources to subscribe to: help, cheat sheets, or skills' files.
    pub(crate) fn has_resources(&self) -> bool {
        let docs = self.app.docs;
        !self.help.is_empty() || (docs.cheat_sheets && !docs.cheats.is_empty()) || self.skills()
    }

    /// Whether the cheats are served as skills (declares the Skills extension).
    pub(crate) fn skills(&self) -> bool {
        skills::offers(self.app)
    }

    /// The help of a served tool.
    fn help_of(&self, tool: &str) -> Option<&'static HelpSpec> {
        self.help.iter().copied().find(|help| help.tool == tool)
    }
}

impl Lists {
    /// The lists of `app`, whose served tools' help is `help`.
    fn new(app: &'static AppSpec, help: &[&'static HelpSpec]) -> Self {
        let spec = app.docs;
        let identity = app.identity;
        let mut resources = Vec::new();
        let mut contents = HashMap::new();
        for entry in help {
            let uri = uris::help_uri(identity, entry.tool);
            resources.push(
                Resource::new(&uri, entry.tool)
                    .with_title(format!("Help: {}", entry.title))
                    .with_description(entry.summary)
                    .with_mime_type(MARKDOWN)
                    .with_size(entry.markdown.len() as u64),
            );
            contents.insert(uri, Cow::Borrowed(entry.markdown));
        }
        if spec.cheat_sheets {
            for cheat in spec.cheats {
                let uri = uris::cheat_uri(identity, cheat.label);
                resources.push(
                    Resource::new(&uri, cheat.label)
                        .with_title(format!("Cheat sheet: {}", cheat.label))
                        .with_description(cheat.description)
                        .with_mime_type(MARKDOWN)
                        .with_size(cheat.text.len() as u64),
                );
                contents.insert(uri, Cow::Borrowed(cheat.text));
            }
        }
        let templates = if help.is_empty() {
            Vec::new()
        } else {
            vec![
                ResourceTemplate::new(uris::help_template(identity), "tool-help")
                    .with_title("Help of a tool")
                    .with_description(
                        "The full help of a served tool as Markdown: help, long help, flags, \
                         arguments, defaults, tags and cheats. `tool` is the tool's name.",
                    )
                    .with_mime_type(MARKDOWN),
            ]
        };
        let (prompts, cheats) = if spec.prompts {
            let prompts = spec.cheats.iter().map(prompt).collect();
            let cheats = spec
                .cheats
                .iter()
                .map(|cheat| (cheat.label, cheat))
                .collect();
            (prompts, cheats)
        } else {
            (Vec::new(), HashMap::new())
        };
        let mut skills = Vec::new();
        for served in skills::served(app, help) {
            resources.push(served.resource);
            contents.insert(served.skill.uri.clone(), Cow::Owned(served.text));
            skills.push(served.skill);
        }
        let skill_at = skills::index(&skills);
        let page_size = usize::try_from(spec.page_size).unwrap_or(usize::MAX);
        Self {
            resources: Paged::new(
                "resources/list",
                "resources",
                resources,
                |resource| resource.uri.as_str(),
                page_size,
            ),
            contents,
            templates: Paged::new(
                "resources/templates/list",
                "resource templates",
                templates,
                |template| template.uri_template.as_str(),
                page_size,
            ),
            prompts: Paged::new(
                "prompts/list",
                "prompts",
                prompts,
                |prompt| prompt.name.as_str(),
                page_size,
            ),
            cheats,
            skills: Paged::new(
                "skills/list",
                "skills",
                skills,
                |skill| skill.uri.as_str(),
                page_size,
            ),
            skill_at,
        }
    }
}

/// Adds what `docs` needs to the capabilities: `completions` when anything can be completed,
/// `resources.subscribe` when there are resources (legacy clients; nothing ever changes), the
/// Skills extension when there are skills (in `initialize` and `server/discover` alike, the
/// same for every client: SEP-2640 defines no client declaration, and a client that does not
/// know the extension sees the `skill://` files as ordinary resources).
pub(crate) fn declare(docs: &Docs, capabilities: &mut ServerCapabilities) {
    if docs.skills() {
        skills::declare(capabilities);
    }
    if docs.completes() {
        capabilities.completions = Some(JsonObject::new());
    }
    if docs.has_resources()
        && let Some(resources) = capabilities.resources.as_mut()
    {
        resources.subscribe = Some(true);
    }
}

/// Removes what 2026-07-28 dropped (`resources/subscribe`, replaced by `subscriptions/listen`)
/// from the capabilities `server/discover` declares.
pub(crate) fn undeclare_legacy(capabilities: &mut ServerCapabilities) {
    if let Some(resources) = capabilities.resources.as_mut() {
        resources.subscribe = None;
    }
}

/// The prompt of a cheat; its arguments are the cheat's placeholders, none required (an
/// unfilled placeholder stays in the text for the reader to fill in).
fn prompt(cheat: &CheatSpec) -> Prompt {
    let arguments = cheat
        .arguments
        .iter()
        .map(|argument| {
            PromptArgument::new(argument.name)
                .with_description(argument.description)
                .with_required(false)
        })
        .collect::<Vec<_>>();
    Prompt::new(
        cheat.label,
        Some(cheat.description),
        (!arguments.is_empty()).then_some(arguments),
    )
    .with_title(format!("Cheat: {}", cheat.label))
}

/// The names in `names`, for an error message: at most 20, then how many more.
fn listing<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.collect();
    if names.is_empty() {
        return "none".to_string();
    }
    let mut shown = names
        .iter()
        .take(20)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > 20 {
        shown.push_str(&format!(" and {} more", names.len() - 20));
    }
    shown
}

/// `-32602` with a message.
fn invalid(message: String) -> ErrorData {
    ErrorData::invalid_params(message, None)
}

#[cfg(test)]
mod tests;
