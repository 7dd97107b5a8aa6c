//! gzip for answers whose bulk never changes (docs/runtime.md, "Listing tools"): the fixed part
//! is compressed once, and each answer puts its own short head in front of it as a stored
//! (uncompressed) deflate block. One gzip member, one deflate stream, so every decoder reads it;
//! an answer costs a CRC combination, not a compression.
//!
//! The fixed part's deflate blocks end with a sync flush (byte-aligned, not final), and its
//! back-references only reach into itself, so they decode the same after any head. The stream
//! is: the gzip header, a stored block with the head, the fixed part's blocks, an empty final
//! stored block, then the CRC-32 and length of head and fixed part together (RFC 1951, 1952).

use std::io::Write;

use axum::body::Bytes;
use flate2::Compression;
use flate2::write::DeflateEncoder;

/// The gzip header: deflate, no flags, no time, no extra flags, unknown OS.
const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

/// An empty stored block with the final bit: the end of the deflate stream.
const LAST_BLOCK: [u8; 5] = [0x01, 0x00, 0x00, 0xff, 0xff];

/// The fixed part of an answer, compressed.
#[derive(Debug)]
pub(crate) struct Gzipped {
    /// Deflate blocks, ending with a sync flush.
    blocks: &'static [u8],
    /// The CRC-32 of the fixed part.
    crc: crc32fast::Hasher,
    /// Its length, uncompressed.
    len: u64,
}

impl Gzipped {
    /// Compresses `parts`, in order, once (the result lives as long as the process: it is
    /// served from then on).
    pub(crate) fn of(parts: &[&[u8]]) -> Gzipped {
        let len = parts.iter().map(|part| part.len()).sum::<usize>();
        let mut encoder = DeflateEncoder::new(Vec::with_capacity(len / 4), Compression::fast());
        let mut crc = crc32fast::Hasher::new();
        for part in parts {
            crc.update(part);
            // Into a Vec: writing cannot fail.
            let _ = encoder.write_all(part);
        }
        // A sync flush: the blocks end byte-aligned, and none is final.
        let _ = encoder.flush();
        let blocks = encoder.get_ref().clone();
        Gzipped {
            blocks: Box::leak(blocks.into_boxed_slice()),
            crc,
            len: len as u64,
        }
    }

    /// The gzip stream of `head` followed by the fixed part, as parts to send in order; `None`
    /// when `head` does not fit one stored block (64 KiB).
    pub(crate) fn after(&self, head: &[u8]) -> Option<[Bytes; 3]> {
        let stored = u16::try_from(head.len()).ok()?;
        let mut front = Vec::with_capacity(HEADER.len() + 5 + head.len());
        front.extend_from_slice(&HEADER);
        // A stored block, not final: three header bits, padded to the byte.
        front.push(0x00);
        front.extend_from_slice(&stored.to_le_bytes());
        front.extend_from_slice(&(!stored).to_le_bytes());
        front.extend_from_slice(head);
        let mut crc = crc32fast::Hasher::new();
        crc.update(head);
        crc.combine(&self.crc);
        let mut back = Vec::with_capacity(LAST_BLOCK.len() + 8);
        back.extend_from_slice(&LAST_BLOCK);
        back.extend_from_slice(&crc.finalize().to_le_bytes());
        // ISIZE: the length modulo 2^32.
        let total = (head.len() as u64).wrapping_add(self.len);
        back.extend_from_slice(&(total as u32).to_le_bytes());
        Some([
            Bytes::from(front),
            Bytes::from_static(self.blocks),
            Bytes::from(back),
        ])
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    fn decoded(parts: &[Bytes]) -> std::io::Result<Vec<u8>> {
        let stream: Vec<u8> = parts.iter().flat_map(|part| part.iter().copied()).collect();
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&stream[..]).read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn a_head_before_the_fixed_part_decodes_as_one_stream() -> std::io::Result<()> {
        // Repetitive enough that the fixed part's blocks hold back-references.
        let page = "{\"name\":\"tool\",\"inputSchema\":{\"type\":\"object\"}},".repeat(4000);
        let fixed = Gzipped::of(&[page.as_bytes(), b"]}", b"}"]);
        assert!(
            fixed.blocks.len() < page.len() / 10,
            "{}",
            fixed.blocks.len()
        );
        for head in ["", "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"tools\":["] {
            let parts = fixed.after(head.as_bytes()).expect("a short head fits");
            let expected = format!("{head}{page}]}}}}");
            assert_eq!(decoded(&parts)?, expected.as_bytes());
        }
        // The head may be long and hold what the fixed part does.
        let head = page[..60_000].to_string();
        let parts = fixed
            .after(head.as_bytes())
            .expect("60 KB fits one stored block");
        assert_eq!(decoded(&parts)?, format!("{head}{page}]}}}}").as_bytes());
        assert!(fixed.after(&vec![b'x'; 70_000]).is_none());
        Ok(())
    }
}
