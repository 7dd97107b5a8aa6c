//! `read_file`: a text file below the roots, with the 64 KiB cap and truncation marker of command
//! output, and offset/length paging.
//!
//! Without `length`, up to 64 KiB from `offset` come back verbatim; when more remains, the first
//! and last 32 KiB around the marker, as for command output, with `truncated: true` and the
//! offset where the left-out middle starts. With `length` (at most 64 KiB), exactly that window.
//! A window never splits a UTF-8 character: a start inside one moves to the next character, an
//! end inside one moves back. Content with NUL bytes or invalid UTF-8 is refused as binary.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::error::ToolError;
use super::files::{self, Roots};
use crate::process::cmdline::{go_quote, quote};
use crate::process::output::{HALF, LIMIT, MARKER};
use crate::spec::app::FileAccess;

/// The arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    /// The file.
    pub(crate) path: String,
    /// First byte to read.
    pub(crate) offset: Option<u64>,
    /// Bytes to read (1 to 65536).
    pub(crate) length: Option<u64>,
}

/// The result.
#[derive(Debug, Serialize)]
struct Answer<'a> {
    path: &'a str,
    size: u64,
    offset: u64,
    content: String,
    truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_offset: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

/// `read_file <path> [offset=N] [length=N]`.
pub(crate) fn trace(args: &Args) -> String {
    let mut line = format!("read_file {}", quote(&args.path));
    if let Some(offset) = args.offset {
        line.push_str(&format!(" offset={offset}"));
    }
    if let Some(length) = args.length {
        line.push_str(&format!(" length={length}"));
    }
    line
}

/// Reads the file; the error is the client's text. The arguments were checked by
/// [`super::prepare`] (a `length` of 0 is refused there, with the property named).
pub(crate) fn run(args: &Args, access: &FileAccess, cwd: &Path) -> Result<String, ToolError> {
    let shown = go_quote(&args.path);
    let roots = Roots::resolve(access, cwd);
    let mut opened = files::open(&args.path, &roots, cwd)?;
    let size = opened.metadata.len();
    if let Some(max) = access.max_bytes
        && size > max
    {
        return Err(ToolError::TooLargeToRead { shown, size, max });
    }
    let offset = args.offset.unwrap_or(0);
    if offset > size {
        return Err(ToolError::PastTheEnd {
            offset,
            shown,
            size,
        });
    }
    let remaining = size - offset;
    let file = &mut opened.file;
    let read = |file: &mut std::fs::File, at: u64, len: u64| -> Result<Vec<u8>, ToolError> {
        let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0).min(LIMIT + 8));
        file.seek(SeekFrom::Start(at))
            .and_then(|_| file.take(len).read_to_end(&mut bytes))
            .map_err(|source| ToolError::Read {
                shown: shown.clone(),
                source,
            })?;
        Ok(bytes)
    };
    let binary = |why: &'static str| ToolError::Binary {
        shown: shown.clone(),
        why,
    };
    let limit = LIMIT as u64;

    let mut answer = Answer {
        path: &args.path,
        size,
        offset,
        content: String::new(),
        truncated: false,
        next_offset: None,
        note: None,
    };
    if args.length.is_none() && remaining > limit {
        let half = HALF as u64;
        let head = read(file, offset, half)?;
        let tail_at = size - half;
        let tail = read(file, tail_at, half)?;
        let (skip, head_text) = text(&head, offset > 0, false).map_err(binary)?;
        let (tail_skip, tail_text) = text(&tail, true, true).map_err(binary)?;
        let start = offset + skip as u64;
        let middle = start + head_text.len() as u64;
        let resume = tail_at + tail_skip as u64;
        answer.offset = start;
        answer.content = format!("{head_text}{MARKER}{tail_text}");
        answer.truncated = true;
        answer.next_offset = Some(middle);
        answer.note = Some(format!(
            "the file has {size} bytes: this shows bytes {start} to {middle} and {resume} to \
             {size}; read the rest with offset and length (at most {LIMIT} bytes a call)"
        ));
    } else {
        let want = args.length.unwrap_or(limit).min(limit).min(remaining);
        let bytes = read(file, offset, want)?;
        let at_end = offset + bytes.len() as u64 >= size;
        let (skip, content) = text(&bytes, offset > 0, at_end).map_err(binary)?;
        let start = offset + skip as u64;
        let end = start + content.len() as u64;
        answer.offset = start;
        answer.content = content.to_string();
        if end < size {
            answer.next_offset = Some(end);
        }
    }
    Ok(serde_json::to_string(&answer)?)
}

/// The text in a window of a file: leading UTF-8 continuation bytes skipped when the window does
/// not start the file, an incomplete last character dropped when it does not end it. Returns
/// the bytes skipped and the text, or why the content is binary.
fn text(bytes: &[u8], mid_file: bool, at_end: bool) -> Result<(usize, &str), &'static str> {
    let skip = if mid_file {
        bytes
            .iter()
            .take(3)
            .take_while(|byte| **byte & 0xC0 == 0x80)
            .count()
    } else {
        0
    };
    let rest = &bytes[skip..];
    if rest.contains(&0) {
        return Err("it contains NUL bytes");
    }
    match std::str::from_utf8(rest) {
        Ok(text) => Ok((skip, text)),
        Err(error) if error.error_len().is_none() && !at_end => {
            let valid = &rest[..error.valid_up_to()];
            // Valid by construction; an error here would be a bug, reported as binary.
            std::str::from_utf8(valid)
                .map(|text| (skip, text))
                .map_err(|_| "it is not valid UTF-8")
        }
        Err(_) => Err("it is not valid UTF-8"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_respect_characters() {
        let euro = "€".as_bytes();
        assert_eq!(text(&euro[1..], true, true), Ok((2, "")));
        assert_eq!(text(&euro[..2], false, false), Ok((0, "")));
        assert!(
            text(&euro[..2], false, true).is_err(),
            "a cut at the end of the file"
        );
        assert_eq!(text(b"a\0b", false, true), Err("it contains NUL bytes"));
        assert_eq!(
            text(&[0xff, b'a'], false, true),
            Err("it is not valid UTF-8")
        );
    }

    fn run_on(content: &[u8], offset: Option<u64>, length: Option<u64>) -> serde_json::Value {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("f.txt"), content).expect("write");
        let args = Args {
            path: "f.txt".into(),
            offset,
            length,
        };
        let access = FileAccess {
            roots: &[],
            max_bytes: None,
        };
        let text = run(&args, &access, dir.path()).expect("read");
        serde_json::from_str(&text).expect("json")
    }

    #[test]
    fn small_files_verbatim_large_ones_cut() {
        let out = run_on(b"hello\n", None, None);
        assert_eq!(out["content"], "hello\n");
        assert_eq!(out["truncated"], false);
        assert!(out.get("next_offset").is_none());

        let big: Vec<u8> = (0..200_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let out = run_on(&big, None, None);
        let content = out["content"].as_str().expect("content");
        assert_eq!(out["truncated"], true);
        assert_eq!(content.len(), LIMIT + MARKER.len());
        assert_eq!(out["next_offset"], HALF as u64);
        assert!(content.ends_with(std::str::from_utf8(&big[200_000 - HALF..]).expect("utf8")));

        let out = run_on(&big, Some(100), Some(10));
        assert_eq!(
            out["content"],
            std::str::from_utf8(&big[100..110]).expect("utf8")
        );
        assert_eq!(out["next_offset"], 110);
        let out = run_on(&big, Some(199_990), Some(100));
        assert_eq!(out["content"].as_str().map(str::len), Some(10));
        assert!(out.get("next_offset").is_none());
    }
}
