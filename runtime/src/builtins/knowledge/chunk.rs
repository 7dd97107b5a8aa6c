//! Heading-delimited, size-packed chunks, as Fisk AI cuts documents (so an index either program
//! builds cites the same `path#ordinal` for the same file).
//!
//! ATX headings (`#` to `######`) delimit sections and build the breadcrumb `A > B > C`, stored
//! as the chunk's `heading_path` and kept out of its `body` (so `body:` and `heading:` are
//! answerable apart); only the embedder sees the two folded together ([`Chunk::folded`]). Fenced code blocks and
//! blank-line-delimited blocks (which keeps tables together) are packed whole toward 1200 bytes;
//! a paragraph over 1500 bytes is split every 1200 bytes (on a character boundary here, where
//! Fisk AI may split a character), a code fence never. Text without headings is packed under an
//! empty breadcrumb.

/// The size a chunk is packed toward.
const TARGET_BYTES: usize = 1200;
/// A paragraph longer than this is split.
const MAX_BYTES: usize = 1500;

/// One chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Chunk {
    /// The section breadcrumb (`A > B`), empty before the first heading.
    pub(crate) heading_path: String,
    /// The section's text, without the breadcrumb.
    pub(crate) body: String,
}

impl Chunk {
    /// The breadcrumb, a blank line and the body: the text a chunk's vector is built from, as
    /// Fisk AI folds it (changing it changes every vector).
    pub(crate) fn folded(&self) -> String {
        if self.heading_path.is_empty() {
            self.body.clone()
        } else {
            format!("{}\n\n{}", self.heading_path, self.body)
        }
    }
}

/// Splits a document into chunks; empty input gives none.
pub(crate) fn chunk_document(content: &str) -> Vec<Chunk> {
    let content = content.replace("\r\n", "\n");
    let lines: Vec<&str> = content.split('\n').collect();
    let mut chunks = Vec::new();
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut packer = Packer::default();
    let mut i = 0;
    while i < lines.len() {
        let trimmed = lines[i].trim();
        if is_fence(trimmed) {
            let (block, next) = collect_fence(&lines, i);
            packer.add(&block, true);
            i = next;
            continue;
        }
        if let Some((level, text)) = parse_heading(trimmed) {
            packer.flush(&mut chunks);
            while stack.last().is_some_and(|(l, _)| *l >= level) {
                stack.pop();
            }
            stack.push((level, text.to_string()));
            packer = Packer {
                breadcrumb: stack
                    .iter()
                    .map(|(_, text)| text.as_str())
                    .collect::<Vec<_>>()
                    .join(" > "),
                ..Packer::default()
            };
            i += 1;
            continue;
        }
        if trimmed.is_empty() {
            i += 1;
            continue;
        }
        let (block, next) = collect_paragraph(&lines, i);
        packer.add(&block, false);
        i = next;
    }
    packer.flush(&mut chunks);
    chunks
}

/// The first heading (outside code fences), the document's title.
pub(crate) fn document_title(content: &str) -> String {
    let content = content.replace("\r\n", "\n");
    let lines: Vec<&str> = content.split('\n').collect();
    let mut i = 0;
    while i < lines.len() {
        let trimmed = lines[i].trim();
        if is_fence(trimmed) {
            i = collect_fence(&lines, i).1;
            continue;
        }
        if let Some((_, text)) = parse_heading(trimmed) {
            return text.to_string();
        }
        i += 1;
    }
    String::new()
}

/// Blocks of one section being packed.
#[derive(Debug, Default)]
struct Packer {
    breadcrumb: String,
    buf: Vec<String>,
    size: usize,
    done: Vec<Chunk>,
}

impl Packer {
    fn add(&mut self, block: &str, indivisible: bool) {
        let block = block.trim_end_matches('\n');
        if block.trim().is_empty() {
            return;
        }
        if !indivisible && block.len() > MAX_BYTES {
            let mut start = 0;
            while start < block.len() {
                let mut end = (start + TARGET_BYTES).min(block.len());
                while !block.is_char_boundary(end) {
                    end -= 1;
                }
                if end == start {
                    end = start + 1;
                    while !block.is_char_boundary(end) {
                        end += 1;
                    }
                }
                self.append(&block[start..end]);
                start = end;
            }
            return;
        }
        self.append(block);
    }

    fn append(&mut self, block: &str) {
        if !self.buf.is_empty() && self.size + block.len() + 2 > TARGET_BYTES {
            let chunk = self.take();
            self.done.push(chunk);
        }
        self.buf.push(block.to_string());
        self.size += block.len() + 2;
    }

    fn take(&mut self) -> Chunk {
        let body = self.buf.join("\n\n");
        self.buf.clear();
        self.size = 0;
        Chunk {
            heading_path: self.breadcrumb.clone(),
            body,
        }
    }

    fn flush(&mut self, out: &mut Vec<Chunk>) {
        out.append(&mut self.done);
        if !self.buf.is_empty() {
            let chunk = self.take();
            out.push(chunk);
        }
    }
}

fn is_fence(trimmed: &str) -> bool {
    trimmed.starts_with("```") || trimmed.starts_with("~~~")
}

/// The fenced block starting at `lines[i]` (through its closing fence or the end) and the index
/// after it.
fn collect_fence(lines: &[&str], i: usize) -> (String, usize) {
    let marker = if lines[i].trim().starts_with("~~~") {
        "~~~"
    } else {
        "```"
    };
    let mut block = lines[i].to_string();
    let mut j = i + 1;
    while j < lines.len() {
        block.push('\n');
        block.push_str(lines[j]);
        j += 1;
        if lines[j - 1].trim().starts_with(marker) {
            break;
        }
    }
    (block, j)
}

/// The run of non-blank lines starting at `lines[i]` and the index after it.
fn collect_paragraph(lines: &[&str], i: usize) -> (String, usize) {
    let mut block = String::new();
    let mut j = i;
    while j < lines.len() {
        let trimmed = lines[j].trim();
        if trimmed.is_empty() || is_fence(trimmed) || parse_heading(trimmed).is_some() {
            break;
        }
        if j > i {
            block.push('\n');
        }
        block.push_str(lines[j]);
        j += 1;
    }
    (block, j)
}

/// `## Title` -> (2, "Title").
fn parse_heading(trimmed: &str) -> Option<(usize, &str)> {
    let level = trimmed.bytes().take_while(|byte| *byte == b'#').count();
    if level == 0 || level > 6 {
        return None;
    }
    let text = trimmed[level..].trim();
    (!text.is_empty()).then_some((level, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_build_breadcrumbs() {
        let doc = "intro text\n\n# Guide\n\nfirst\n\n## Setup\n\nsecond\n\n### Deep\n\nthird\n\n## Use\n\nfourth\n";
        let chunks = chunk_document(doc);
        let summary: Vec<(&str, &str)> = chunks
            .iter()
            .map(|c| (c.heading_path.as_str(), c.body.as_str()))
            .collect();
        assert_eq!(
            summary,
            [
                ("", "intro text"),
                ("Guide", "first"),
                ("Guide > Setup", "second"),
                ("Guide > Setup > Deep", "third"),
                ("Guide > Use", "fourth"),
            ]
        );
        assert_eq!(chunks[0].folded(), "intro text");
        assert_eq!(chunks[2].folded(), "Guide > Setup\n\nsecond");
        assert_eq!(document_title(doc), "Guide");
        assert!(chunk_document("").is_empty());
    }

    #[test]
    fn packing_and_splitting() {
        let para = "word ".repeat(100); // 500 bytes
        let doc = format!("# A\n\n{para}\n\n{para}\n\n{para}\n");
        let chunks = chunk_document(&doc);
        assert_eq!(
            chunks.len(),
            2,
            "two paragraphs fit in 1200 bytes, the third does not"
        );
        let long = "x".repeat(3000);
        let chunks = chunk_document(&long);
        assert_eq!(
            chunks.iter().map(|c| c.body.len()).collect::<Vec<_>>(),
            [1200, 1200, 600]
        );
        let wide = "é".repeat(1000); // 2000 bytes, split on a character boundary
        assert!(chunk_document(&wide).iter().all(|c| !c.body.is_empty()));
    }

    #[test]
    fn fences_stay_whole_and_hide_headings() {
        let code = format!("```\n# not a heading\n{}\n```", "y".repeat(2000));
        let doc = format!("# T\n\n{code}\n\nafter\n");
        let chunks = chunk_document(&doc);
        assert_eq!(chunks[0].body, code);
        assert_eq!(chunks[1].body, "after");
        assert_eq!(document_title("```\n# no\n```\n# Yes\n"), "Yes");
    }
}
