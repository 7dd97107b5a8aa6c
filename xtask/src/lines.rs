//! `cargo xtask lines [REV...]`: the runtime's code lines, the figure issue 34's acceptance
//! counts. A code line is a line of the `fiskgen-runtime` package's sources (`runtime/src/**/*.rs`
//! and `runtime/build.rs`) that holds something besides whitespace and comments (doc comments
//! included), outside a `#[cfg(test)]` item (a test module inline, or a test module's file).
//! String literals are code, whatever they hold. With revisions, each is read from git (`git
//! ls-tree`, `git show`), so a figure can be reproduced for any commit; without, the work tree.
//! `--changes COMMIT...` prints each commit's own change (against its first parent) and their
//! sum: what a set of commits did to the figure, whatever else landed between them.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The package's sources, relative to the workspace root.
const SOURCES: [&str; 2] = ["runtime/src", "runtime/build.rs"];

/// Runs the command: one line per revision (or the work tree), with the change from the first;
/// with `--changes` first, each commit's own change and their sum.
pub(crate) fn run(root: &Path, revisions: &[String]) -> Result<()> {
    if let Some((flag, commits)) = revisions.split_first()
        && flag == "--changes"
    {
        return changes(root, commits);
    }
    let mut first: Option<usize> = None;
    let targets: Vec<Option<&str>> = if revisions.is_empty() {
        vec![None]
    } else {
        revisions.iter().map(|r| Some(r.as_str())).collect()
    };
    for revision in targets {
        let files = match revision {
            Some(revision) => from_git(root, revision)?,
            None => from_work_tree(root)?,
        };
        let lines = count_package(&files);
        let label = match revision {
            Some(revision) => format!("{revision} ({})", describe(root, revision)?),
            None => "work tree".to_string(),
        };
        let change = match first {
            Some(first) => format!(
                ", {:+} from the first",
                i64::try_from(lines).unwrap_or(i64::MAX) - i64::try_from(first).unwrap_or(0)
            ),
            None => String::new(),
        };
        println!("{lines} code lines in the runtime at {label}{change}");
        first.get_or_insert(lines);
    }
    Ok(())
}

/// Each commit's change against its first parent, and the sum.
fn changes(root: &Path, commits: &[String]) -> Result<()> {
    if commits.is_empty() {
        bail!("--changes needs commits");
    }
    let mut sum: i64 = 0;
    for commit in commits {
        let before = count_package(&from_git(root, &format!("{commit}^1"))?);
        let after = count_package(&from_git(root, commit)?);
        let change = i64::try_from(after).unwrap_or(i64::MAX) - i64::try_from(before).unwrap_or(0);
        sum += change;
        let subject = git(root, &["show", "--no-patch", "--format=%h %s", commit])?;
        let subject: String = subject.trim().chars().take(90).collect();
        println!("{change:+6} {subject}");
    }
    println!("{sum:+6} in all ({} commits)", commits.len());
    Ok(())
}

/// `revision`'s short hash and date.
fn describe(root: &Path, revision: &str) -> Result<String> {
    let out = git(root, &["show", "--no-patch", "--format=%h %cs", revision])?;
    Ok(out.trim().to_string())
}

fn git(root: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(root)
        .output()
        .context("running git")?;
    if !out.status.success() {
        bail!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    String::from_utf8(out.stdout).context("git's output is not UTF-8")
}

/// The package's Rust files at `revision`, by path.
fn from_git(root: &Path, revision: &str) -> Result<BTreeMap<PathBuf, String>> {
    let mut args = vec!["ls-tree", "-r", "--name-only", revision, "--"];
    args.extend(SOURCES);
    let mut files = BTreeMap::new();
    for path in git(root, &args)?.lines().filter(|p| p.ends_with(".rs")) {
        let text = git(root, &["show", &format!("{revision}:{path}")])?;
        files.insert(PathBuf::from(path), text);
    }
    if files.is_empty() {
        bail!("{revision} has no runtime sources");
    }
    Ok(files)
}

/// The package's Rust files in the work tree, by path relative to `root`.
fn from_work_tree(root: &Path) -> Result<BTreeMap<PathBuf, String>> {
    let mut files = BTreeMap::new();
    let mut pending: Vec<PathBuf> = SOURCES.iter().map(|s| root.join(s)).collect();
    while let Some(path) = pending.pop() {
        if path.is_dir() {
            for entry in fs::read_dir(&path).with_context(|| format!("{}", path.display()))? {
                pending.push(entry?.path());
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = fs::read_to_string(&path).with_context(|| format!("{}", path.display()))?;
            let relative = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
            files.insert(relative, text);
        }
    }
    Ok(files)
}

/// The code lines of `files`, leaving out the files of test modules their parents declare.
fn count_package(files: &BTreeMap<PathBuf, String>) -> usize {
    let counted: Vec<(&PathBuf, Count)> = files
        .iter()
        .map(|(path, text)| (path, count(text)))
        .collect();
    let mut test_files = Vec::new();
    for (path, count) in &counted {
        let dir = match path.file_name().and_then(|n| n.to_str()) {
            Some("mod.rs" | "lib.rs" | "main.rs" | "build.rs") | None => {
                path.parent().map(Path::to_path_buf).unwrap_or_default()
            }
            Some(_) => path.with_extension(""),
        };
        for module in &count.test_modules {
            test_files.push(dir.join(format!("{module}.rs")));
            test_files.push(dir.join(module).join("mod.rs"));
        }
    }
    counted
        .iter()
        .filter(|(path, _)| !test_files.contains(path))
        .map(|(_, count)| count.code)
        .sum()
}

/// One file's figures.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Count {
    /// Its code lines.
    pub(crate) code: usize,
    /// The modules it declares under `#[cfg(test)]` in files of their own (`mod tests;`).
    pub(crate) test_modules: Vec<String>,
}

/// Where the lexer is.
#[derive(Clone, Copy, PartialEq)]
enum State {
    Code,
    LineComment,
    /// A block comment, nested this deep.
    Block(u32),
    Str,
    /// A raw string closed by `"` and this many `#`.
    Raw(usize),
}

/// A `#[cfg(test)]` item being skipped: the brace depth it started at, and whether its body
/// has opened.
struct Skip {
    depth: i64,
    opened: bool,
    text: String,
}

/// Counts the code lines of one Rust source (formatted by rustfmt: a `#[cfg(test)]` attribute
/// stands on a line of its own).
pub(crate) fn count(text: &str) -> Count {
    let chars: Vec<char> = text.chars().collect();
    let mut result = Count::default();
    let mut state = State::Code;
    let mut depth: i64 = 0;
    let mut skip: Option<Skip> = None;
    let mut skip_ends = false;
    let mut has_code = false;
    let mut line_start = 0;
    let mut i = 0;
    while i < chars.len() {
        if i == line_start && state == State::Code && skip.is_none() {
            let end = chars[i..]
                .iter()
                .position(|c| *c == '\n')
                .map_or(chars.len(), |n| i + n);
            let line: String = chars[i..end].iter().collect();
            if line.trim() == "#[cfg(test)]" {
                skip = Some(Skip {
                    depth,
                    opened: false,
                    text: String::new(),
                });
                i = end;
                continue;
            }
        }
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            if skip.is_none() && has_code {
                result.code += 1;
            }
            if skip_ends {
                if let Some(done) = skip.take() {
                    let item = done.text.split_whitespace().collect::<Vec<_>>().join(" ");
                    let name = item
                        .strip_prefix("pub(crate) ")
                        .or_else(|| item.strip_prefix("pub "))
                        .unwrap_or(&item)
                        .strip_prefix("mod ")
                        .and_then(|rest| rest.strip_suffix(';'));
                    if let Some(name) = name {
                        result.test_modules.push(name.trim().to_string());
                    }
                }
                skip_ends = false;
            }
            has_code = false;
            if state == State::LineComment {
                state = State::Code;
            }
            i += 1;
            line_start = i;
            continue;
        }
        let mut step = 1;
        match state {
            State::LineComment => {}
            State::Block(n) => {
                if c == '/' && next == Some('*') {
                    state = State::Block(n + 1);
                    step = 2;
                } else if c == '*' && next == Some('/') {
                    state = if n == 1 {
                        State::Code
                    } else {
                        State::Block(n - 1)
                    };
                    step = 2;
                }
            }
            State::Str => {
                has_code = true;
                if c == '\\' && next != Some('\n') {
                    step = 2;
                } else if c == '"' {
                    state = State::Code;
                }
            }
            State::Raw(hashes) => {
                has_code = true;
                if c == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#')) {
                    state = State::Code;
                    step = 1 + hashes;
                }
            }
            State::Code => {
                if c == '/' && next == Some('/') {
                    state = State::LineComment;
                } else if c == '/' && next == Some('*') {
                    state = State::Block(1);
                    step = 2;
                } else if !c.is_whitespace() {
                    has_code = true;
                    if let Some(item) = skip.as_mut() {
                        item.text.push(c);
                    }
                    match c {
                        '"' => state = State::Str,
                        'r' if raw_start(&chars, i).is_some() => {
                            let hashes = raw_start(&chars, i).unwrap_or(0);
                            state = State::Raw(hashes);
                            step = 2 + hashes;
                        }
                        '\'' => step = char_literal(&chars, i),
                        '{' => {
                            depth += 1;
                            if let Some(item) = skip.as_mut() {
                                item.opened = true;
                            }
                        }
                        '}' => {
                            depth -= 1;
                            if skip.as_ref().is_some_and(|s| s.opened && depth == s.depth) {
                                skip_ends = true;
                            }
                        }
                        ';' if skip.as_ref().is_some_and(|s| !s.opened && depth == s.depth) => {
                            skip_ends = true;
                        }
                        _ => {}
                    }
                } else if let Some(item) = skip.as_mut() {
                    item.text.push(' ');
                }
            }
        }
        i += step;
    }
    if skip.is_none() && has_code {
        result.code += 1;
    }
    result
}

/// When `chars[i]` (an `r`) opens a raw string (`r"`, `r#"`, `br##"`, not part of a longer
/// identifier), how many `#` close it.
fn raw_start(chars: &[char], i: usize) -> Option<usize> {
    let before = i.checked_sub(1).and_then(|b| chars.get(b)).copied();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    match before {
        Some('b') => {
            let before_b = i.checked_sub(2).and_then(|b| chars.get(b)).copied();
            if before_b.is_some_and(ident) {
                return None;
            }
        }
        Some(c) if ident(c) => return None,
        _ => {}
    }
    let hashes = chars[i + 1..].iter().take_while(|c| **c == '#').count();
    (chars.get(i + 1 + hashes) == Some(&'"')).then_some(hashes)
}

/// How far to step past `chars[i]` (a `'`): past the whole literal when it opens a character
/// literal (`'x'`, `'\n'`, `'\u{1F600}'`), one for a lifetime's quote.
fn char_literal(chars: &[char], i: usize) -> usize {
    match (chars.get(i + 1), chars.get(i + 2)) {
        (Some('\\'), _) => chars
            .get(i + 3..)
            .and_then(|rest| rest.iter().position(|c| *c == '\''))
            .map_or(1, |n| n + 4),
        (Some(_), Some('\'')) => 3,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_blank_lines_and_test_items_are_not_code_lines() {
        let text = "//! Module doc.\n\
                    \n\
                    /// An item's doc.\n\
                    pub fn a() -> u8 {\n\
                    \x20   // a comment\n\
                    \x20   /* a block\n\
                    \x20      comment */ 1 // after code\n\
                    }\n\
                    \n\
                    #[cfg(test)]\n\
                    fn helper() {\n\
                    \x20   let _ = \"}\";\n\
                    }\n\
                    \n\
                    #[cfg(test)]\n\
                    mod tests {\n\
                    \x20   #[test]\n\
                    \x20   fn t() {\n\
                    \x20       assert_eq!(super::a(), 1);\n\
                    \x20   }\n\
                    }\n\
                    fn after() {}\n";
        assert_eq!(
            count(text),
            Count {
                code: 4,
                test_modules: Vec::new()
            }
        );
    }

    #[test]
    fn strings_holding_comment_or_brace_text_stay_code() {
        let text = "fn a() -> &'static str {\n\
                    \x20   let _c = '{';\n\
                    \x20   let _q = '\\'';\n\
                    \x20   let _raw = r#\"a \"quoted\" // not a comment\n\
                    \n\
                    }\"#;\n\
                    \x20   \"/* not a comment either {\"\n\
                    }\n\
                    #[cfg(test)]\n\
                    mod tests;\n\
                    fn after() {}\n";
        assert_eq!(
            count(text),
            Count {
                code: 8,
                test_modules: vec!["tests".to_string()]
            }
        );
    }

    #[test]
    fn a_test_modules_file_is_left_out_of_the_package() {
        let files = BTreeMap::from([
            (
                PathBuf::from("runtime/src/a.rs"),
                "fn a() {}\n#[cfg(test)]\nmod tests;\n".to_string(),
            ),
            (
                PathBuf::from("runtime/src/a/tests.rs"),
                "fn t() {}\n".to_string(),
            ),
            (
                PathBuf::from("runtime/src/lib.rs"),
                "mod a;\n#[cfg(test)]\nmod b;\n".to_string(),
            ),
            (PathBuf::from("runtime/src/b.rs"), "fn b() {}\n".to_string()),
        ]);
        assert_eq!(count_package(&files), 2);
    }
}
