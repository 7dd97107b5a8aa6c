//! The query language of `knowledge_enumerate`, as Fisk AI reads it: words side by side must
//! all appear in one document, a quoted phrase must be adjacent within one section, `-word`
//! excludes, `body:` and `heading:` scope a word. Operators, wildcards and a query of only
//! exclusions are refused with the fix, so a model never gets a wrong answer for a query it
//! meant otherwise.

use std::fmt::Write as _;

/// Words shorter than this (in characters) are not looked up.
const MIN_TERM_CHARS: usize = 2;
/// The most terms one query holds; further ones are ignored.
const MAX_TERMS: usize = 40;

/// The words the query language reserves, with what to write instead.
const RESERVED: [(&str, &str); 4] = [
    (
        "and",
        "terms are already required together, so write them side by side: deprecated api",
    ),
    (
        "or",
        "alternatives are not supported; run one query per term and compare",
    ),
    ("not", "use a leading minus to exclude: -deprecated"),
    (
        "near",
        "proximity is not supported; a quoted phrase requires the words adjacent in one section: \
         \"retention policy\"",
    ),
];

/// One compiled term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Term {
    /// As typed, without the field prefix or the leading minus.
    pub(super) surface: String,
    /// `None` for either column, else the column (`body` or `heading_path`).
    pub(super) column: Option<&'static str>,
    pub(super) negated: bool,
}

impl Term {
    /// The FTS5 expression: the surface as one quoted string, scoped to its column.
    pub(super) fn matching(&self) -> String {
        let quoted = format!("\"{}\"", self.surface.replace('"', "\"\""));
        match self.column {
            None => quoted,
            Some(column) => format!("{column}:{quoted}"),
        }
    }

    /// As the answer's `compiled` shows it.
    fn shown(&self) -> String {
        let mut out = String::new();
        if self.negated {
            out.push('-');
        }
        match self.column {
            Some("body") => out.push_str("body:"),
            Some(_) => out.push_str("heading:"),
            None => {}
        }
        let _ = write!(out, "\"{}\"", self.surface);
        out
    }
}

/// A compiled query.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Query {
    pub(super) positive: Vec<Term>,
    pub(super) negative: Vec<Term>,
    /// Words too short to look up.
    pub(super) dropped: Vec<String>,
}

impl Query {
    pub(super) fn compiled(&self) -> String {
        self.positive
            .iter()
            .chain(&self.negative)
            .map(Term::shown)
            .collect::<Vec<_>>()
            .join(" AND ")
    }
}

/// A query the language refuses, with the fix; the client reads it as the tool's error.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("knowledge_enumerate: {0}")]
pub(super) struct QueryError(pub(super) String);

/// Splits on whitespace outside quotes; `""` inside a quote is a literal quote.
fn split(query: &str) -> Result<Vec<(String, bool)>, QueryError> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut chars = query.chars().peekable();
    let flush = |current: &mut String, out: &mut Vec<(String, bool)>, was_quoted: bool| {
        let text = std::mem::take(current);
        let text = if was_quoted {
            text
        } else {
            text.trim().to_string()
        };
        if !text.is_empty() {
            out.push((text, was_quoted));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted => {
                if chars.peek() == Some(&'"') {
                    current.push('"');
                    chars.next();
                } else {
                    flush(&mut current, &mut out, true);
                    quoted = false;
                }
            }
            '"' => {
                flush(&mut current, &mut out, false);
                quoted = true;
            }
            c if c.is_whitespace() && !quoted => flush(&mut current, &mut out, false),
            c => current.push(c),
        }
    }
    if quoted {
        return Err(QueryError(
            "unbalanced quote in query; a phrase needs a closing quote, as in: \"retention \
             policy\""
                .into(),
        ));
    }
    flush(&mut current, &mut out, false);
    Ok(out)
}

fn reject_unsupported(text: &str) -> Result<(), QueryError> {
    if let Some((_, fix)) = RESERVED
        .iter()
        .find(|(word, _)| text.eq_ignore_ascii_case(word))
    {
        return Err(QueryError(format!(
            "{text:?} is not an operator here; {fix}"
        )));
    }
    if text.contains('*') {
        return Err(QueryError(format!(
            "{text:?} uses '*', which this command does not support; matching is by word stem \
             already, so deprecated finds deprecate and deprecation"
        )));
    }
    Ok(())
}

/// Compiles the query language of the tool's description.
pub(super) fn compile(query: &str) -> Result<Query, QueryError> {
    let mut out = Query::default();
    for (text, quoted) in split(query)? {
        let mut term = Term {
            surface: text.clone(),
            column: None,
            negated: false,
        };
        if !quoted {
            reject_unsupported(&text)?;
            let mut rest = text.as_str();
            if let Some(stripped) = rest.strip_prefix('-') {
                if stripped.is_empty() {
                    return Err(QueryError(
                        "a bare '-' excludes nothing; write it against a term, as in: -deprecated"
                            .into(),
                    ));
                }
                term.negated = true;
                rest = stripped;
            }
            if let Some((field, value)) = rest.split_once(':') {
                term.column = Some(match field.to_ascii_lowercase().as_str() {
                    "body" => "body",
                    "heading" => "heading_path",
                    _ => {
                        return Err(QueryError(format!(
                            "unknown field {field:?}; body: and heading: are the only fields \
                             this command knows"
                        )));
                    }
                });
                if value.is_empty() {
                    return Err(QueryError(format!(
                        "{rest:?} names a field but no term; write it as {field}:<word>"
                    )));
                }
                rest = value;
            }
            term.surface = rest.to_string();
        }
        reject_unsupported(&term.surface)?;
        if !quoted && term.surface.chars().count() < MIN_TERM_CHARS {
            out.dropped.push(term.surface);
        } else if term.negated {
            out.negative.push(term);
        } else {
            out.positive.push(term);
        }
        if out.positive.len() + out.negative.len() >= MAX_TERMS {
            break;
        }
    }
    if out.positive.is_empty() && !out.negative.is_empty() {
        return Err(QueryError(
            "a query of only exclusions has nothing to exclude from; add a term to match, as in: \
             api -deprecated"
                .into(),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(query: &str) -> String {
        compile(query).expect_err(query).0
    }

    #[test]
    fn the_query_language_compiles_as_fisk_ai_reads_it() {
        let query =
            compile("api heading:retention -deprecated \"retention policy\" x").expect("compiles");
        assert_eq!(
            query.compiled(),
            "\"api\" AND heading:\"retention\" AND \"retention policy\" AND -\"deprecated\""
        );
        assert_eq!(query.dropped, ["x"]);
        assert_eq!(query.positive[1].matching(), "heading_path:\"retention\"");
        assert_eq!(
            compile("\"say \"\"hi\"\"\"").expect("quote").positive[0].matching(),
            "\"say \"\"hi\"\"\""
        );
    }

    #[test]
    fn unsupported_syntax_is_refused_with_its_fix() {
        assert!(error("api OR web").contains("run one query per term"));
        assert!(error("dep*").contains("does not support"));
        assert!(error("-").contains("bare '-'"));
        assert!(error("-deprecated").contains("only exclusions"));
        assert!(error("title:x").contains("body: and heading:"));
        assert!(error("body:").contains("names a field but no term"));
        assert!(error("\"open").contains("unbalanced quote"));
    }
}
