//! `fiskgen info`: the parameters the user answers instead of the model (`ask`).

use std::fmt::Write as _;

use crate::ir;

/// The questions section: empty when no tool asks; otherwise, per tool, its questions in the
/// order they are asked and the parameters each asks for.
pub fn render_questions(server: &ir::Server, width: usize) -> String {
    let asking: Vec<(&str, &[ir::Question])> = server
        .tools
        .iter()
        .filter_map(|tool| match &tool.kind {
            ir::ToolKind::Command(command) if !command.questions.is_empty() => {
                Some((tool.name.as_str(), command.questions.as_slice()))
            }
            _ => None,
        })
        .collect();
    if asking.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let text = "Questions (expose.agent.mcp.ask): these parameters are the user's, not the \
                model's: they are not in the tool's input schema, and each question is asked \
                with an elicitation form before the command runs (a client that cannot be \
                asked is refused).";
    let _ = writeln!(out, "\n{}", super::wrap(text, width, "", ""));
    for (tool, questions) in asking {
        let asked: Vec<String> = questions
            .iter()
            .map(|question| format!("{} [{}]", question.name, question.params.join(", ")))
            .collect();
        let line = format!("{tool}: {}", asked.join(", then "));
        let _ = writeln!(out, "{}", super::wrap(&line, width, "  ", "    "));
    }
    out
}
