//! The emitters: the IR ([`ir::Server`]) becomes the files of a Rust crate that links `fiskgen-runtime`.
//!
//! Rust comes from `quote!` and goes through [`crate::format`]; every other text file comes
//! from an askama template in the repository's top-level `templates/` (`files.rs`), whose values
//! are escaped for their file by `filters.rs`. Output is a sorted map from
//! relative path to contents, byte-identical for the same inputs: no timestamps, no paths of
//! the build machine (the application path is the configured string), everything in a fixed
//! order.
//!
//! Layout of a generated crate:
//!
//! ```text
//! Cargo.toml          package and binary <identity>-mcp, fiskgen-runtime = "=<version>"
//! Cargo.lock          the lockfile fiskgen was tested with, naming the crate itself
//!                     (standalone crates only)
//! README.md           the tools, how to run, connect and regenerate
//! .gitignore          /target/ and /.fiskgen/ (the runtime's link)
//! ci/regenerate.sh    check, regenerate, rebuild and smoke-test: copy it next to the config
//! ci/github-workflow.yml   runs ci/regenerate.sh daily on GitHub Actions
//! model.json          the introspection document the crate was generated from
//! src/main.rs         the static AppSpec and `fn main`
//! src/docs.rs         the resources and prompts (tools' help, cheats) as data
//! src/listing.rs      the whole `tools/list` answer, every page in both eras
//! src/listing.json    every tool's `tools/list` entry, one JSON array on one line
//! src/tools/mod.rs    one module per top-level command group, TOOLS and the exposed globals
//! src/tools/<group>.rs
//! src/tools/schemas/<tool>.json   each command's input schema, included by its module
//! src/tools/forms/<tool>.<q>.json  the elicitation form of each question (`ask`)
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use fiskgen_contract::{canonical, identity};
use proc_macro2::{Literal, TokenStream};
use quote::quote;
use serde_json::{Map, Value};

use crate::ident::{self, Case, Namespace};
use crate::introspect::Introspection;
use crate::ir::{self, ToolKind};
use crate::lower::ParamsError;
use crate::{embedded, format};

mod app;
mod auth;
mod builtins;
mod docs;
mod files;
mod filters;
mod globals;
mod listing;
mod params;
mod tools;

/// How a crate is generated.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Emit the crate as a member of an enclosing workspace (this repository's goldens): no
    /// `[workspace]` table, no `[profile]` and no `Cargo.lock`. Otherwise the crate stands alone.
    pub workspace_member: bool,
    /// Add `[patch.crates-io] fiskgen-runtime = { path = ... }` so that a plain `cargo build`
    /// finds the runtime there (`fiskgen generate --runtime-path`).
    pub runtime_path: Option<String>,
}

/// A generated crate, in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedCrate {
    /// Package and binary name, `<identity>-mcp`.
    pub package: String,
    /// Relative path (`/`-separated) → contents.
    pub files: BTreeMap<String, String>,
    /// Schemas typed by a fallback, and similar things worth knowing.
    pub warnings: Vec<String>,
}

/// Why a crate cannot be generated.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GenerateError {
    /// The identity cannot name a package and binary (the config reader refuses it first, with
    /// its position; this guards plans built another way).
    #[error("{0}; set `identity:` in the config")]
    Identity(#[from] identity::IdentityError),
    /// A command's schema cannot be typed.
    #[error(transparent)]
    Params(#[from] ParamsError),
    /// The advertised schema and the argument struct disagree (a generator bug).
    #[error("tool \"{tool}\": the input schema and the argument struct disagree: {message}")]
    Drift {
        /// The tool.
        tool: String,
        /// How.
        message: String,
    },
    /// A template of `templates/` did not render (a generator bug).
    #[error("generated {file} did not render: {error}")]
    Template {
        /// The file.
        file: String,
        /// askama's error.
        error: askama::Error,
    },
    /// Emitted tokens did not parse (a generator bug).
    #[error("generated {file} does not parse: {error}")]
    Syntax {
        /// The file.
        file: String,
        /// syn's error.
        error: syn::Error,
    },
}

/// Generates the crate of `server`, with the `introspection` it was served against (`None`
/// without an application): the IR and that document are all the emitters read.
pub fn generate(
    server: &ir::Server,
    introspection: Option<&Introspection>,
    settings: &Settings,
) -> Result<GeneratedCrate, GenerateError> {
    identity::check(&server.identity)?;

    let items = server.tools.iter().filter_map(|tool| match &tool.kind {
        ToolKind::Command(command) => Some(params::CommandItem { tool, command }),
        ToolKind::Builtin { .. } => None,
    });

    // Modules: one per top-level command group, named in serving order.
    let mut module_names = Namespace::new(Case::Snake);
    module_names.reserve([
        "rt",
        "std",
        "core",
        "alloc",
        "serde",
        "fiskgen_runtime",
        "mod",
    ]);
    let mut groups: Vec<(String, String)> = Vec::new();
    let mut by_group: BTreeMap<String, Vec<params::CommandItem<'_>>> = BTreeMap::new();
    for item in items {
        let group = item.command.command.first().cloned().unwrap_or_default();
        if !groups.iter().any(|(_, g)| *g == group) {
            groups.push((module_names.claim(&group, "commands"), group.clone()));
        }
        by_group.entry(group).or_default().push(item);
    }

    let globals = globals::Globals::new(by_group.values().flatten());

    let mut files = BTreeMap::new();
    let mut emitted_specs: BTreeMap<String, (String, String)> = BTreeMap::new();
    for (module, group) in &groups {
        let items = by_group.get(group).map(Vec::as_slice).unwrap_or_default();
        let (tokens, emitted) = tools::module(group, items, &globals);
        for (item, emitted) in items.iter().zip(&emitted) {
            check_fields(item, emitted)?;
            emitted_specs.insert(emitted.name.clone(), (module.clone(), emitted.spec.clone()));
            files.insert(
                format!("src/tools/{}", tools::schema_file(&item.tool.name)),
                schema_file_text(&item.tool.input_schema),
            );
            for question in &item.command.questions {
                files.insert(
                    format!(
                        "src/tools/{}",
                        tools::form_file(&item.tool.name, &question.name)
                    ),
                    schema_file_text(&question.form),
                );
            }
        }
        let path = format!("src/tools/{}.rs", ident::unraw(module));
        files.insert(path.clone(), rust_file(&path, &tokens)?);
    }
    let builtin_tools: Vec<(&ir::Tool, ir::Builtin, &ir::FileAccess)> = server
        .tools
        .iter()
        .filter_map(|tool| match &tool.kind {
            ToolKind::Builtin { builtin, access } => Some((tool, *builtin, access)),
            ToolKind::Command(_) => None,
        })
        .collect();
    if !builtin_tools.is_empty() {
        let module = module_names.claim("builtins", "builtins");
        let (tokens, names) = builtins::module(&server.settings, &builtin_tools);
        for ((tool, _, _), name) in builtin_tools.iter().zip(names) {
            emitted_specs.insert(tool.name.clone(), (module.clone(), name));
        }
        let path = format!("src/tools/{}.rs", ident::unraw(&module));
        files.insert(path.clone(), rust_file(&path, &tokens)?);
        groups.push((module, String::new()));
    }
    let serving_order: Vec<(String, String)> = server
        .tools
        .iter()
        .filter_map(|tool| emitted_specs.get(&tool.name).cloned())
        .collect();
    let registry = globals::registry(&groups, &serving_order, &globals);
    files.insert(
        "src/tools/mod.rs".into(),
        rust_file("src/tools/mod.rs", &registry)?,
    );

    let docs = docs::docs_rs(&server.docs);
    for help in &server.docs.help {
        files.insert(
            format!("src/{}", docs::help_file(&help.tool)),
            help.markdown.clone(),
        );
    }
    files.insert("src/docs.rs".into(), rust_file("src/docs.rs", &docs)?);
    let listed: Vec<(&ir::Tool, String)> = server
        .tools
        .iter()
        .map(|tool| (tool, schema_text(&tool.input_schema)))
        .collect();
    let required: &[String] = server
        .tasks
        .as_ref()
        .map_or(&[], |tasks| tasks.required.as_slice());
    let (listing_rs, listing_json) = listing::files(&listed, &server.settings, required)?;
    files.insert(
        "src/listing.rs".into(),
        rust_file("src/listing.rs", &listing_rs)?,
    );
    files.insert(listing::JSON_FILE.into(), listing_json);

    let (main, commands_json) = app::main_rs(server, introspection);
    files.insert("src/main.rs".into(), rust_file("src/main.rs", &main)?);
    if let Some(commands_json) = commands_json {
        files.insert("src/commands.json".into(), commands_json);
    }

    let package = format!("{}-mcp", server.identity);
    for (path, text) in files::files(&package, server, settings)? {
        files.insert(path.to_string(), text);
    }
    if let Some(introspection) = introspection {
        files.insert(
            "model.json".into(),
            crate::introspect::to_pretty_json(&introspection.document),
        );
    }
    if !settings.workspace_member {
        files.insert("Cargo.lock".into(), embedded::lockfile_for(&package));
    }
    Ok(GeneratedCrate {
        package,
        files,
        warnings: server.warnings.clone(),
    })
}

fn rust_file(path: &str, tokens: &proc_macro2::TokenStream) -> Result<String, GenerateError> {
    format::rust(tokens).map_err(|error| GenerateError::Syntax {
        file: path.to_string(),
        error,
    })
}

/// The advertised schema's properties and `required` must match the parameter table's
/// properties one to one: same names, required exactly when the table says so.
fn check_fields(
    item: &params::CommandItem<'_>,
    emitted: &tools::EmittedTool,
) -> Result<(), GenerateError> {
    let drift = |message: String| GenerateError::Drift {
        tool: item.tool.name.clone(),
        message,
    };
    let text = schema_text(&item.tool.input_schema);
    let schema: Value = serde_json::from_str(&text).map_err(|error| drift(error.to_string()))?;
    let properties: Vec<&String> = schema["properties"]
        .as_object()
        .map(|properties| properties.keys().collect())
        .unwrap_or_default();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|required| required.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut fields: Vec<&String> = emitted.fields.iter().map(|field| &field.wire).collect();
    fields.sort();
    let mut sorted_properties = properties.clone();
    sorted_properties.sort();
    if fields != sorted_properties {
        return Err(drift(format!(
            "properties {sorted_properties:?}, parameters {fields:?}"
        )));
    }
    for field in &emitted.fields {
        let is_required = required.contains(&field.wire.as_str());
        if is_required == field.optional {
            return Err(drift(format!(
                "property \"{}\" is {} in the schema but not in the parameter table",
                field.wire,
                if is_required { "required" } else { "optional" },
            )));
        }
    }
    Ok(())
}

/// The advertised schema as compact JSON with sorted keys.
pub(crate) fn schema_text(schema: &Map<String, Value>) -> String {
    canonical::to_json(&Value::Object(schema.clone()))
}

/// A tool's schema file: pretty JSON with sorted keys and a final newline, so that a changed
/// parameter is a one-line diff.
fn schema_file_text(schema: &Map<String, Value>) -> String {
    crate::introspect::to_pretty_json(&Value::Object(schema.clone()))
}

/// A `const` expression for a duration, in the largest whole unit.
pub(super) fn duration(duration: Duration) -> TokenStream {
    let nanos = duration.subsec_nanos();
    let secs = Literal::u64_unsuffixed(duration.as_secs());
    if nanos == 0 {
        quote! { Duration::from_secs(#secs) }
    } else if nanos.is_multiple_of(1_000_000) {
        let millis = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
        let millis = Literal::u64_unsuffixed(millis);
        quote! { Duration::from_millis(#millis) }
    } else {
        let nanos = Literal::u32_unsuffixed(nanos);
        quote! { Duration::new(#secs, #nanos) }
    }
}
