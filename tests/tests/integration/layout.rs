//! The layout rules of the crates that ship (fiskgen, the runtime, the contract), checked on
//! their sources: no module imports form a cycle (followed through `crate::` and `super::`
//! paths, braced groups included), the runtime's layers import only downward
//! ([`RUNTIME_LAYERS`], docs/runtime.md "Layers"), no file is over 500 lines of code (tests
//! aside), and no comment cites a document outside this repository (they point into docs/).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use fiskgen_tests::apps::workspace_root;

/// The crates whose `src/` the rules cover.
const CRATES: [&str; 3] = ["fiskgen", "runtime", "contract"];

/// The runtime's top-level modules, from the top layer down: a module may name its own
/// layer's modules and those below, never one above.
const RUNTIME_LAYERS: [&[&str]; 7] = [
    &["cli", "fuzzing"],
    &["transport"],
    &["mcp"],
    &["builtins", "nats", "telemetry"],
    &["spec", "principal"],
    &["logging"],
    &["process"],
];

/// Most lines of code in one file: non-blank, non-comment lines before its tests.
const MAX_CODE_LINES: usize = 500;

/// Every `.rs` file below `dir`, sorted.
fn sources(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).with_context(|| format!("listing {}", dir.display()))? {
            let path = entry?.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// A file's text before its unit tests, without comment lines.
fn code_of(text: &str) -> Vec<&str> {
    let before_tests = text.split("#[cfg(test)]").next().unwrap_or_default();
    before_tests
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("//"))
        .collect()
}

/// A file's module path inside its crate: `src/mcp/server.rs` -> `mcp::server`, `src/lib.rs`
/// -> the root (empty).
fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let parts: Vec<String> = relative
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .filter(|part| part != "mod")
        .collect();
    match parts.as_slice() {
        [only] if only == "lib" || only == "main" => String::new(),
        _ => parts.join("::"),
    }
}

/// Each module of the crate in `src` and its code (comments and unit tests left out).
fn module_texts(src: &Path) -> Result<BTreeMap<String, String>> {
    let mut texts = BTreeMap::new();
    for file in sources(src)? {
        let text = fs::read_to_string(&file)?;
        texts.insert(module_of(src, &file), code_of(&text).join(" "));
    }
    Ok(texts)
}

/// The paths a `crate::` or `super::` at the start of `text` names, braced groups expanded:
/// `a::{b::C, d}` -> `a::b::C`, `a::d`.
fn paths_in(text: &str) -> Vec<String> {
    let head: String = text
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
        .collect();
    let Some(group) = text[head.len()..].strip_prefix('{') else {
        return vec![head];
    };
    if !head.is_empty() && !head.ends_with("::") {
        return vec![head];
    }
    // The group's items, split at its own commas, up to its closing brace.
    let mut depth = 0;
    let mut items = vec![String::new()];
    for c in group.chars() {
        match c {
            '}' if depth == 0 => break,
            ',' if depth == 0 => {
                items.push(String::new());
                continue;
            }
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if let Some(item) = items.last_mut() {
            item.push(c);
        }
    }
    items
        .iter()
        .map(|item| item.trim())
        .filter(|item| !item.is_empty())
        .flat_map(paths_in)
        .map(|path| format!("{head}{path}"))
        .collect()
}

/// The module graph of one crate, from each module's code: each module and the other modules
/// it names with `crate::...` or `super::...` (a module's own ancestors and descendants
/// aside).
fn module_graph(texts: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<&String> = texts.keys().collect();
    let mut graph = BTreeMap::new();
    for (module, text) in texts {
        let mut uses = BTreeSet::new();
        for keyword in ["crate::", "super::"] {
            for (at, _) in text.match_indices(keyword) {
                let before = text[..at].chars().next_back();
                if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                    continue;
                }
                for path in paths_in(&text[at + keyword.len()..]) {
                    let mut parts: Vec<&str> = path.split("::").filter(|p| !p.is_empty()).collect();
                    if keyword == "super::" {
                        let mut base: Vec<&str> =
                            module.split("::").filter(|p| !p.is_empty()).collect();
                        base.pop();
                        while parts.first() == Some(&"super") {
                            parts.remove(0);
                            base.pop();
                        }
                        base.extend(parts);
                        parts = base;
                    }
                    // The longest prefix that is a module.
                    let target = (1..=parts.len())
                        .rev()
                        .map(|n| parts[..n].join("::"))
                        .find(|candidate| modules.contains(candidate));
                    if let Some(target) = target {
                        let related = module.is_empty()
                            || target == *module
                            || module.starts_with(&format!("{target}::"))
                            || target.starts_with(&format!("{module}::"));
                        if !related {
                            uses.insert(target);
                        }
                    }
                }
            }
        }
        graph.insert(module.clone(), uses);
    }
    graph
}

/// Every import of `graph` that points to a layer above its module's (`layers` from the top
/// down), as `module -> target`.
fn upward_imports(graph: &BTreeMap<String, BTreeSet<String>>, layers: &[&[&str]]) -> Vec<String> {
    let layer = |module: &str| {
        let top = module.split("::").next().unwrap_or_default();
        layers.iter().position(|names| names.contains(&top))
    };
    let mut upward = Vec::new();
    for (module, targets) in graph {
        for target in targets {
            if let (Some(from), Some(to)) = (layer(module), layer(target))
                && to < from
            {
                upward.push(format!("{module} -> {target}"));
            }
        }
    }
    upward
}

/// One cycle of `graph`, as the modules along it, if there is any.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        marks: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        marks.insert(node.to_string(), Mark::Open);
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            match marks.get(next) {
                Some(Mark::Open) => {
                    let start = path.iter().position(|n| n == next).unwrap_or(0);
                    let mut cycle = path[start..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Some(Mark::Done) => {}
                None => {
                    if let Some(cycle) = visit(next, graph, marks, path) {
                        return Some(cycle);
                    }
                }
            }
        }
        path.pop();
        marks.insert(node.to_string(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for node in graph.keys() {
        if !marks.contains_key(node)
            && let Some(cycle) = visit(node, graph, &mut marks, &mut Vec::new())
        {
            return Some(cycle);
        }
    }
    None
}

#[test]
fn no_module_imports_form_a_cycle() -> Result<()> {
    for name in CRATES {
        let graph = module_graph(&module_texts(&workspace_root().join(name).join("src"))?);
        assert!(graph.len() > 5, "{name}: too few modules found");
        if let Some(cycle) = find_cycle(&graph) {
            panic!("{name}: import cycle {}", cycle.join(" -> "));
        }
    }
    Ok(())
}

#[test]
fn the_runtime_imports_only_downward() -> Result<()> {
    let texts = module_texts(&workspace_root().join("runtime/src"))?;
    for module in texts.keys() {
        let top = module.split("::").next().unwrap_or_default();
        assert!(
            module.is_empty() || RUNTIME_LAYERS.iter().any(|names| names.contains(&top)),
            "{module} is in no layer of RUNTIME_LAYERS"
        );
    }
    let upward = upward_imports(&module_graph(&texts), &RUNTIME_LAYERS);
    assert!(upward.is_empty(), "upward imports: {upward:#?}");
    Ok(())
}

/// The modules fiskgen's emitters may not name: what the config file holds reaches them
/// through the IR (`crate::ir`), resolved once, never as the config read.
const NOT_FOR_EMITTERS: [&str; 3] = ["config", "select", "settings"];

/// Each import of an emitter (`emit` and below) in `graph` that names a module of
/// [`NOT_FOR_EMITTERS`], as `module -> target`.
fn emitters_beyond_the_ir(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let within = |module: &str, top: &str| module == top || module.starts_with(&format!("{top}::"));
    graph
        .iter()
        .filter(|(module, _)| within(module, "emit"))
        .flat_map(|(module, targets)| {
            targets
                .iter()
                .filter(|target| NOT_FOR_EMITTERS.iter().any(|top| within(target, top)))
                .map(move |target| format!("{module} -> {target}"))
        })
        .collect()
}

#[test]
fn fiskgens_emitters_read_the_ir_not_the_config() -> Result<()> {
    let graph = module_graph(&module_texts(&workspace_root().join("fiskgen/src"))?);
    let beyond = emitters_beyond_the_ir(&graph);
    assert!(
        beyond.is_empty(),
        "emitters reading the config: {beyond:#?}"
    );
    // The check finds one planted.
    let texts = planted(&[
        ("emit::app", "use crate::config::ConfirmMode;"),
        ("config", "pub enum ConfirmMode {}"),
        ("ir", ""),
    ]);
    assert_eq!(
        emitters_beyond_the_ir(&module_graph(&texts)),
        vec!["emit::app -> config".to_string()]
    );
    Ok(())
}

/// Planted sources: `(module, code)`.
fn planted(modules: &[(&str, &str)]) -> BTreeMap<String, String> {
    modules
        .iter()
        .map(|(module, code)| (module.to_string(), code.to_string()))
        .collect()
}

#[test]
fn the_checker_finds_a_cycle_through_super_and_braced_groups() {
    let texts = planted(&[
        ("", "mod mcp;"),
        ("mcp", "pub(crate) mod tasks;"),
        ("mcp::tasks", "mod live; mod log;"),
        (
            "mcp::tasks::live",
            "use super::log::Lines; pub struct Live;",
        ),
        ("mcp::tasks::log", "use super::{live::{Live, cut}, Other};"),
    ]);
    assert_eq!(
        find_cycle(&module_graph(&texts)),
        Some(vec![
            "mcp::tasks::live".to_string(),
            "mcp::tasks::log".into(),
            "mcp::tasks::live".into(),
        ])
    );
    // The same two files without the import back: no cycle.
    let texts = planted(&[
        ("mcp::tasks::live", "pub struct Live;"),
        ("mcp::tasks::log", "use super::{live::{Live, cut}, Other};"),
    ]);
    assert_eq!(find_cycle(&module_graph(&texts)), None);
    // Two levels up, and `crate::` inside a group.
    let texts = planted(&[
        ("a::b::c", "use super::super::d::X;"),
        ("a::d", "use crate::{a::b::c::Y, e};"),
        ("e", ""),
    ]);
    assert_eq!(
        find_cycle(&module_graph(&texts)),
        Some(vec!["a::b::c".to_string(), "a::d".into(), "a::b::c".into()])
    );
}

#[test]
fn the_checker_finds_an_upward_import() {
    let texts = planted(&[
        ("process::exec", "use crate::mcp::tasks::live::Live;"),
        ("mcp::tasks::live", "pub struct Live;"),
        ("mcp::call", "use crate::process::exec;"),
    ]);
    assert_eq!(
        upward_imports(&module_graph(&texts), &RUNTIME_LAYERS),
        vec!["process::exec -> mcp::tasks::live".to_string()]
    );
}

#[test]
fn the_cycle_check_finds_a_cycle() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(str::to_string).collect()))
    .collect();
    assert_eq!(
        find_cycle(&graph),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}

#[test]
fn no_source_file_is_over_500_lines_of_code() -> Result<()> {
    let mut over = Vec::new();
    for name in CRATES {
        let src = workspace_root().join(name).join("src");
        for file in sources(&src)? {
            let stem = file.file_stem().unwrap_or_default().to_string_lossy();
            // Unit tests kept in a file of their own (`mod tests;`) are tests.
            if stem == "tests" || stem.ends_with("_tests") {
                continue;
            }
            let lines = code_of(&fs::read_to_string(&file)?).len();
            if lines > MAX_CODE_LINES {
                over.push(format!("{} ({lines} lines of code)", file.display()));
            }
        }
    }
    assert!(over.is_empty(), "split these files: {over:#?}");
    Ok(())
}

#[test]
fn no_comment_cites_a_document_outside_the_repository() -> Result<()> {
    let root = workspace_root();
    let mut cited = Vec::new();
    for dir in [
        "fiskgen/src",
        "runtime/src",
        "contract/src",
        "templates",
        "tests/src",
    ] {
        for file in sources(&root.join(dir))? {
            for (number, line) in fs::read_to_string(&file)?.lines().enumerate() {
                let comment = line.trim_start().starts_with("//");
                let outside = [
                    "DESIGN.md",
                    "fisk-ai reference",
                    "reference section",
                    "shared/",
                ]
                .iter()
                .any(|needle| line.contains(needle));
                if comment && outside {
                    cited.push(format!(
                        "{}:{}: {}",
                        file.display(),
                        number + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    assert!(cited.is_empty(), "point these at docs/ instead: {cited:#?}");
    Ok(())
}

/// The fuzz crate enables the runtime's `fuzzing` feature (its internals for two fuzz targets).
/// As a member of this workspace, cargo's feature unification turned it on for every server a
/// `cargo build --workspace` or `cargo test --workspace` built; it is a workspace of its own
/// (docs/reliability.md). `cargo metadata` resolves the features the way those builds do: for
/// every member, every target, dev-dependencies included.
#[test]
fn no_build_of_the_workspace_compiles_the_runtime_with_fuzzing() -> Result<()> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = std::process::Command::new(cargo)
        .current_dir(workspace_root())
        .args(["metadata", "--format-version", "1", "--locked"])
        .output()
        .context("running cargo metadata")?;
    anyhow::ensure!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)?;
    let members: Vec<&str> = metadata["workspace_members"]
        .as_array()
        .context("workspace_members")?
        .iter()
        .filter_map(serde_json::Value::as_str)
        .collect();
    assert!(
        !members.iter().any(|id| id.contains("fiskgen-fuzz")),
        "fiskgen-fuzz is a member of the main workspace: {members:?}"
    );
    let nodes = metadata["resolve"]["nodes"]
        .as_array()
        .context("resolve.nodes")?;
    let runtime = nodes
        .iter()
        .find(|node| {
            node["id"]
                .as_str()
                .is_some_and(|id| id.contains("/runtime#"))
        })
        .context("the runtime in cargo metadata's resolve")?;
    let features: Vec<&str> = runtime["features"]
        .as_array()
        .context("the runtime's features")?
        .iter()
        .filter_map(serde_json::Value::as_str)
        .collect();
    assert!(
        features.contains(&"knowledge"),
        "resolved runtime features: {features:?}"
    );
    assert!(
        !features.contains(&"fuzzing"),
        "resolved runtime features: {features:?}"
    );
    Ok(())
}
