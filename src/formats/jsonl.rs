//! JSON Lines / NDJSON: one JSON object per line, read in chunks of
//! `read_chunk_bytes`. Blank lines are not records; a line that is not an
//! object, is not UTF-8 or is not JSON becomes a bad record for `on_error`.

use std::io::Read;

use super::chunks::Chunks;
use super::json::decode_line_records;
use super::Batch;
use crate::error::Result;

pub struct JsonLinesReader<R: Read> {
    input: Chunks<R>,
    /// Line number and file offset of `input.buf[input.start]`.
    line: u64,
    offset: u64,
}

impl<R: Read> JsonLinesReader<R> {
    pub fn new(reader: R, file: &str, chunk_bytes: usize) -> Self {
        JsonLinesReader { input: Chunks::new(reader, file, chunk_bytes), line: 1, offset: 0 }
    }

    /// Reads one more chunk; false at end of input. `searched` (bytes of the
    /// pending input already searched) shrinks if a byte-order mark is dropped.
    fn fill(&mut self, searched: &mut usize) -> Result<bool> {
        let more = self.input.fill()?.is_some();
        // A UTF-8 byte-order mark opens the file, not the first record.
        if more && self.offset == 0 && self.input.start == 0 && self.input.buf.starts_with(b"\xEF\xBB\xBF") {
            self.input.start = 3;
            self.offset = 3;
            *searched = searched.saturating_sub(3);
        }
        Ok(more)
    }
}

impl<R: Read> super::RecordReader for JsonLinesReader<R> {
    fn bytes_read(&self) -> u64 {
        self.input.bytes_read
    }

    /// Appends up to `max_records` records to `batch`; returns how many.
    /// Zero means the file is exhausted.
    fn next_batch(&mut self, batch: &mut Batch, max_records: usize) -> Result<usize> {
        let mut added = 0;
        // Bytes of the pending line already searched for '\n': a line longer
        // than a chunk is searched once, not once per chunk.
        let mut searched = 0;
        while added < max_records {
            let rest = self.input.pending();
            let (line_len, consumed) = match memchr::memchr(b'\n', &rest[searched..]) {
                Some(pos) => (searched + pos, searched + pos + 1),
                None => {
                    searched = rest.len();
                    if self.fill(&mut searched)? {
                        continue;
                    }
                    let rest = self.input.pending();
                    if rest.is_empty() {
                        break;
                    }
                    (rest.len(), rest.len())
                }
            };
            let line_no = self.line;
            let offset = self.offset;
            let raw = &self.input.buf[self.input.start..self.input.start + line_len];
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            let is_blank = raw.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'));
            if !is_blank {
                // Usually one record; a line with several objects gives one
                // each (so a batch may exceed `max_records` by that line's extra).
                added += decode_line_records(raw, batch, line_no, offset, "the line");
            }
            self.input.start += consumed;
            self.line += 1;
            self.offset += consumed as u64;
            searched = 0;
        }
        Ok(added)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::RecordReader;
    use crate::value::write_compact_json;

    fn read_all(input: &[u8], chunk: usize) -> Vec<(u64, u64, String)> {
        let mut r = JsonLinesReader::new(input, "t.jsonl", chunk);
        let mut out = Vec::new();
        loop {
            let mut batch = Batch::default();
            if r.next_batch(&mut batch, 2).unwrap() == 0 {
                break;
            }
            for i in 0..batch.len() {
                let mut s = String::new();
                write_compact_json(batch.tape.record(i), &mut s);
                let m = &batch.meta[i];
                out.push((m.line, m.byte, m.error.clone().unwrap_or(s)));
            }
        }
        out
    }

    #[test]
    fn same_records_for_every_chunk_size() {
        let input = b"\xEF\xBB\xBF{\"a\":1}\r\n\n  \n{\"b\":[1,2]}\nnot json\n[1]\n{\"c\":\"\xC3\xA9\"}";
        let expected = read_all(input, 1 << 20);
        assert_eq!(expected.len(), 5);
        assert_eq!(expected[0], (1, 3, "{\"a\":1}".to_string()));
        assert_eq!(expected[1].0, 4);
        assert!(expected[2].2.starts_with("malformed JSON"));
        assert!(expected[3].2.contains("not an object"));
        for chunk in [1, 3, 7, 64] {
            assert_eq!(read_all(input, chunk), expected, "chunk size {chunk}");
        }
    }

    #[test]
    fn invalid_utf8_is_a_bad_record_not_a_failure() {
        let out = read_all(b"{\"a\":\"\xFF\"}\n{\"a\":1}\n", 4);
        assert!(out[0].2.contains("invalid UTF-8"));
        assert_eq!(out[1].2, "{\"a\":1}");
    }
}
