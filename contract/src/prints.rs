//! The fingerprints of a served surface as a generated crate carries them: `src/commands.json`,
//! a JSON array with one `[path, tool, structure, help]` per command and line (`tool` is `null`
//! for a command that is not served). fiskgen writes it, the runtime's check reads it back
//! (docs/drift.md).

use std::collections::BTreeMap;

use crate::surface::Print;

/// The file's text: one command per line, in path order, and a final newline.
pub fn to_json(commands: &BTreeMap<String, Print>) -> String {
    let mut text = String::from("[\n");
    let mut first = true;
    for (path, print) in commands {
        if !first {
            text.push_str(",\n");
        }
        first = false;
        let row = (path, &print.tool, &print.structure, &print.help);
        // A tuple of strings always serializes.
        text.push_str(&serde_json::to_string(&row).unwrap_or_default());
    }
    text.push_str("\n]\n");
    text
}

/// The commands of a file [`to_json`] wrote.
pub fn from_json(text: &str) -> Result<BTreeMap<String, Print>, serde_json::Error> {
    let rows: Vec<(String, Option<String>, String, String)> = serde_json::from_str(text)?;
    Ok(rows
        .into_iter()
        .map(|(path, tool, structure, help)| {
            (
                path,
                Print {
                    tool,
                    structure,
                    help,
                },
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_commands_file_reads_back_what_was_written_one_command_per_line() {
        let commands = BTreeMap::from([
            (
                "stream".to_string(),
                Print {
                    tool: None,
                    structure: "a".repeat(64),
                    help: "b".repeat(64),
                },
            ),
            (
                "stream \"odd\"\tname".to_string(),
                Print {
                    tool: Some("stream_odd".to_string()),
                    structure: "c".repeat(64),
                    help: "d".repeat(64),
                },
            ),
        ]);
        let text = to_json(&commands);
        assert_eq!(text.lines().count(), 4, "{text}");
        assert_eq!(from_json(&text).expect("valid"), commands);
        assert_eq!(from_json("[\n\n]\n").expect("empty"), BTreeMap::new());
        assert!(from_json("[[\"x\"]]").is_err());
    }
}
