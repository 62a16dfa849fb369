//! JSON Lines / NDJSON: one JSON object per line, read in chunks of
//! `read_chunk_bytes`. Blank lines are not records; a line that is not an
//! object, is not UTF-8 or is not JSON becomes a bad record for `on_error`.

use std::io::Read;

use crate::error::Result;
use crate::formats::chunks::Chunks;
use crate::formats::json::{decode_line_records, LineProgress};
use crate::formats::{Batch, RecordFault};

pub struct JsonLinesReader<R: Read> {
    input: Chunks<R>,
    /// Line number and file offset of `input.buf[input.start]`.
    line: u64,
    offset: u64,
    /// The values of the current line read so far, when a batch filled up
    /// in the middle of a line holding several.
    progress: LineProgress,
    /// A byte range of the file (scan/ranges.rs), else `None`.
    range: Option<LineRange>,
    /// The range's start has been dealt with ([`Self::enter_range`]).
    entered: bool,
    /// `max_record_bytes`: a longer line is a bad record, passed over.
    max_record: usize,
}

/// What a reader of one byte range of a file needs: where it started, the
/// lines it owns (those starting before `end`), the partial line before
/// its first own line to pass over, and the byte-order mark that offsets
/// are counted after.
#[derive(Clone, Copy, Debug)]
pub struct LineRange {
    /// Raw file offset the reader's input starts at (after
    /// [`JsonLinesReader::enter_range`]: where its first own line starts).
    pub start: u64,
    /// Raw file offset at which lines stop being this range's.
    pub end: Option<u64>,
    /// The input starts inside (or just after the end of) a line that an
    /// earlier range owns: everything up to the first `\n` is skipped.
    pub skip_partial: bool,
    /// Length of the file's byte-order mark (0 or 3): reported offsets
    /// do not count it, and the first line drops it.
    pub bom: u64,
}

impl<R: Read> JsonLinesReader<R> {
    pub fn new(reader: R, file: &str, chunk_bytes: usize) -> Self {
        JsonLinesReader {
            input: Chunks::new(reader, file, chunk_bytes),
            line: 1,
            offset: 0,
            progress: LineProgress::default(),
            range: None,
            entered: false,
            max_record: crate::formats::DEFAULT_MAX_RECORD_BYTES,
        }
    }

    /// Lines longer than `max` bytes (line end excluded) are bad records of
    /// kind `record_too_large`, passed over without being held whole.
    pub fn with_max_record_bytes(mut self, max: usize) -> Self {
        self.max_record = max.max(1);
        self
    }

    /// Passes over the rest of the current line, its line end included,
    /// reading and dropping chunk by chunk: memory stays one chunk however
    /// long the line runs (a decompression bomb of one line).
    fn pass_over_line(&mut self) -> Result<()> {
        loop {
            let pending = self.input.pending();
            if let Some(pos) = memchr::memchr(b'\n', pending) {
                self.input.start += pos + 1;
                self.offset += pos as u64 + 1;
                return Ok(());
            }
            let n = pending.len();
            self.input.start += n;
            self.offset += n as u64;
            if !self.fill()? {
                return Ok(());
            }
        }
    }

    /// A reader of the lines of `range`, over input that starts at
    /// `range.start` of the raw file. Line numbers count from 1 at the
    /// first line it owns (the caller adds the lines of earlier ranges);
    /// byte offsets are the file's.
    pub fn for_range(reader: R, file: &str, chunk_bytes: usize, range: LineRange) -> Self {
        let mut r = Self::new(reader, file, chunk_bytes);
        r.offset = range.start;
        r.range = Some(range);
        r
    }

    /// Passes over the partial line an earlier range owns. False when the
    /// input ended first.
    fn enter_range(&mut self) -> Result<bool> {
        let Some(range) = self.range.filter(|_| !self.entered) else { return Ok(true) };
        if range.skip_partial {
            loop {
                if let Some(pos) = memchr::memchr(b'\n', self.input.pending()) {
                    self.input.start += pos + 1;
                    self.offset += pos as u64 + 1;
                    break;
                }
                self.offset += self.input.pending().len() as u64;
                self.input.start = self.input.buf.len();
                // Past the range's end without a line end: no line starts in
                // it (one long line crosses it), so it owns nothing and need
                // not read that line to its end.
                if range.end.is_some_and(|end| self.offset >= end) || !self.fill()? {
                    // The file ends inside the partial line: this range owns nothing.
                    self.range = Some(LineRange { skip_partial: false, start: self.offset, ..range });
                    self.entered = true;
                    return Ok(false);
                }
            }
        }
        self.range = Some(LineRange { skip_partial: false, start: self.offset, ..range });
        self.entered = true;
        Ok(true)
    }

    /// Whether the next line starts at or past this range's end.
    fn past_end(&self) -> bool {
        self.range.is_some_and(|r| r.end.is_some_and(|end| self.offset >= end))
    }

    /// The offset messages give: counted after the byte-order mark.
    fn reported_offset(&self) -> u64 {
        self.offset - self.range.map_or(0, |r| r.bom).min(self.offset)
    }

    /// Lines consumed (read or passed as blank), not counting the partial
    /// line before a range's first own line.
    pub fn lines(&self) -> u64 {
        self.line - 1
    }

    /// Reads one more chunk; false at end of input. (A byte-order mark is
    /// the text decoder's to drop, source/decode.rs: offsets count from the
    /// first byte after it.)
    fn fill(&mut self) -> Result<bool> {
        Ok(self.input.fill()?.is_some())
    }
}

impl<R: Read> crate::formats::RecordReader for JsonLinesReader<R> {
    fn bytes_read(&self) -> u64 {
        match self.range {
            // The bytes of the lines this range owns: ranges overlap in what
            // they read, not in what they own.
            // (The byte-order mark is not text, as for a whole file.)
            Some(r) => self.offset.saturating_sub(r.start.max(r.bom)),
            None => self.input.bytes_read,
        }
    }

    fn lines_read(&self) -> u64 {
        self.lines()
    }

    /// Appends up to `max_records` records to `batch`; returns how many.
    /// Zero means the file is exhausted.
    fn next_batch(&mut self, batch: &mut Batch, max_records: usize) -> Result<usize> {
        let mut added = 0;
        // Bytes of the pending line already searched for '\n': a line longer
        // than a chunk is searched once, not once per chunk.
        let mut searched = 0;
        if !self.enter_range()? {
            return Ok(0);
        }
        while added < max_records && !self.past_end() {
            let rest = self.input.pending();
            let (line_len, consumed) = match memchr::memchr(b'\n', &rest[searched..]) {
                Some(pos) => (searched + pos, searched + pos + 1),
                // Longer than the limit with no line end in sight (allowing
                // for a CR before the line end and, at a range's start, a
                // byte-order mark, which do not count; a line just over the
                // limit is caught below once its end is read): a bad record
                // now, and the rest of the line is passed over, never held.
                None if rest.len() > self.max_record.saturating_add(4) => {
                    let cause = crate::formats::too_large_cause("the line", self.max_record);
                    batch.push_bad(self.line, self.reported_offset(), RecordFault::TooLarge, cause);
                    added += 1;
                    self.pass_over_line()?;
                    self.line += 1;
                    searched = 0;
                    continue;
                }
                None => {
                    searched = rest.len();
                    if self.fill()? {
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
            let offset = self.reported_offset();
            let raw = &self.input.buf[self.input.start..self.input.start + line_len];
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            // A range reader at the file's start drops the byte-order mark
            // (the text decoder's job when the file is read whole); the
            // first line, mark included, starts at byte 0 and is range 0's.
            let raw = match self.range {
                Some(r) if r.bom > 0 && self.offset == 0 => raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(raw),
                _ => raw,
            };
            let is_blank = raw.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'));
            if raw.len() > self.max_record && self.progress == LineProgress::default() {
                batch.push_bad(
                    line_no,
                    offset,
                    RecordFault::TooLarge,
                    crate::formats::too_large_cause("the line", self.max_record),
                );
                added += 1;
            } else if !is_blank {
                // Usually one record; a line with several objects gives one
                // each, the rest in the next batch once this one is full.
                let (n, done) = decode_line_records(
                    raw,
                    batch,
                    (line_no, offset),
                    "the line",
                    &mut self.progress,
                    max_records - added,
                );
                added += n;
                if !done {
                    // The line stays pending; `searched` already covers it.
                    break;
                }
                self.progress = LineProgress::default();
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
    use crate::formats::harness;
    use crate::options::InputFormat;

    fn read_all(input: &[u8]) -> Vec<harness::Record> {
        harness::records(InputFormat::Jsonl, input, |_| {})
    }

    #[test]
    fn same_records_for_every_chunk_size() {
        // The harness reads with every chunk and batch size and compares.
        let input = b"\xEF\xBB\xBF{\"a\":1}\r\n\n  \n{\"b\":[1,2]}\nnot json\n[1]\n{\"c\":\"\xC3\xA9\"}";
        let expected = read_all(input);
        assert_eq!(expected.len(), 5);
        // Offsets count from after the byte-order mark (docs/formats.md).
        assert_eq!(expected[0], (1, 0, "{\"a\":1}".to_string()));
        assert_eq!(expected[1].0, 4);
        assert!(expected[2].2.starts_with("ERROR: malformed JSON"), "{:?}", expected[2]);
        assert!(expected[3].2.contains("not an object"));
    }

    #[test]
    fn several_values_on_a_line_fill_batches_one_record_at_a_time() {
        let out = read_all(b"{\"a\":1} {\"a\":2}{\"a\":3}\n{\"a\":4}\n");
        let texts: Vec<&str> = out.iter().map(|r| r.2.as_str()).collect();
        assert_eq!(texts, ["{\"a\":1}", "{\"a\":2}", "{\"a\":3}", "{\"a\":4}"]);
        assert_eq!(out.iter().map(|r| (r.0, r.1)).collect::<Vec<_>>(), [(1, 0), (1, 8), (1, 15), (2, 23)]);
    }

    #[test]
    fn invalid_utf8_is_a_bad_record_not_a_failure() {
        let out = read_all(b"{\"a\":\"\xFF\"}\n{\"a\":1}\n");
        assert!(out[0].2.contains("invalid UTF-8"));
        assert_eq!(out[1].2, "{\"a\":1}");
    }
}
