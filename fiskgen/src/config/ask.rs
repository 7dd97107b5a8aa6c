//! `expose.agent.mcp.ask`: per tool, named questions, each a list of the tool's parameters
//! that the user answers instead of the model (docs/config.md, "ask"). Read here: the shape,
//! question names usable as `inputRequests` keys, no empty question, no parameter in two
//! questions of one tool. Whether the tool and its parameters exist and whether a form can
//! carry each parameter is checked when the commands are lowered (`crate::lower`).

use std::collections::BTreeMap;

use super::Question;
use super::reader::{Reader, Value};
use super::values::is_identity;

/// Reads `ask`: tool -> its questions, in the order written.
pub(super) fn read_ask(r: &mut Reader, v: Value<'_>) -> BTreeMap<String, Vec<Question>> {
    let mut tools = BTreeMap::new();
    r.map(
        v,
        "a mapping of tool names to {question: [parameters]}",
        |r, tool, questions| {
            let mut read: Vec<Question> = Vec::new();
            r.map(
                questions,
                "a mapping of question names to lists of parameter names",
                |r, name, params| {
                    if !is_identity(name) {
                        let message = format!(
                            "invalid question name {name:?} at {}: a question name is letters, \
                             digits, `_` and `-` (it is the key of the question in an MRTR \
                             inputRequests map)",
                            params.path
                        );
                        r.problem(params.path, params.key_pos, message);
                        return;
                    }
                    if name == "confirm" {
                        let message = format!(
                            "question name \"confirm\" at {} is reserved: it is the key of the \
                             approval question of a gated tool; choose another name",
                            params.path
                        );
                        r.problem(params.path, params.key_pos, message);
                        return;
                    }
                    let texts = r.string_or_strings(params);
                    let mut names: Vec<String> = Vec::new();
                    for text in texts {
                        let param = text.text.trim().to_string();
                        if param.is_empty() {
                            let message = format!("{} names no parameter", text.path);
                            r.problem(&text.path, text.pos, message);
                            continue;
                        }
                        let earlier = read
                            .iter()
                            .find(|q| q.params.contains(&param))
                            .map(|q| q.name.clone())
                            .or_else(|| names.contains(&param).then(|| name.to_string()));
                        if let Some(earlier) = earlier {
                            let message = format!(
                                "{}: parameter {param:?} is already asked by question \
                                 {earlier:?} of tool {tool:?}; a parameter is asked once",
                                text.path
                            );
                            r.problem(&text.path, text.pos, message);
                            continue;
                        }
                        names.push(param);
                    }
                    if names.is_empty() {
                        let message = format!(
                            "{} asks for no parameter: list the tool's parameters the user \
                             answers, e.g. `{name}: [name]`",
                            params.path
                        );
                        r.problem(params.path, params.key_pos, message);
                        return;
                    }
                    read.push(Question {
                        name: name.to_string(),
                        params: names,
                    });
                },
            );
            tools.insert(tool.to_string(), read);
        },
    );
    tools
}
