//! `json`: one JSON document per file is one row. `json_array`: a top-level
//! array whose elements are rows, split incrementally so that memory follows
//! the largest element, not the file.

use std::io::Read;

use crate::error::{Result, SanitizeError};
use crate::formats::chunks::Chunks;
use crate::formats::json::{decode_value_record, decode_whole_record, skip_json_ws, Decoded};
use crate::formats::{BadRecord, Batch, RecordFault, RecordMeta, RecordReader};
use crate::value::Node;

/// Chunked input shared by both readers, with the line and byte position
/// of `buf[start]`.
struct Input<R: Read> {
    chunks: Chunks<R>,
    line: u64,
    offset: u64,
}

impl<R: Read> std::ops::Deref for Input<R> {
    type Target = Chunks<R>;
    fn deref(&self) -> &Chunks<R> {
        &self.chunks
    }
}

impl<R: Read> std::ops::DerefMut for Input<R> {
    fn deref_mut(&mut self) -> &mut Chunks<R> {
        &mut self.chunks
    }
}

impl<R: Read> Input<R> {
    fn new(reader: R, file: &str, chunk_bytes: usize) -> Self {
        Input { chunks: Chunks::new(reader, file, chunk_bytes), line: 1, offset: 0 }
    }

    /// Consumes `n` bytes of the buffer, counting their newlines.
    fn consume(&mut self, n: usize) {
        let bytes = &self.buf[self.start..self.start + n];
        self.line += memchr::memchr_iter(b'\n', bytes).count() as u64;
        self.offset += n as u64;
        self.start += n;
    }

    /// Skips whitespace; false at end of input. (A byte-order mark is the
    /// text decoder's to drop, source/decode.rs.)
    fn skip_ws(&mut self) -> Result<bool> {
        loop {
            while self.start < self.buf.len() && matches!(self.buf[self.start], b' ' | b'\t' | b'\r' | b'\n') {
                self.consume(1);
            }
            if self.start < self.buf.len() {
                return Ok(true);
            }
            if self.fill()?.is_none() {
                return Ok(false);
            }
        }
    }
}

/// `json`: one JSON document per file is one row. Documents written back
/// to back (`{..} {..}`, or JSON Lines saved as `.json`) are each a row, as
/// DuckDB's `read_json` reads them.
///
/// The reader holds a window of the file that ends past the next document
/// (found by a scan of strings and brackets, [`DocumentEnd`]), or at the end
/// of the file; a document that grows past `max_record_bytes` before its end
/// is a bad record of kind `record_too_large`, passed over as it is scanned.
/// So memory follows the largest document, bounded by the limit, never the
/// file: a decompression bomb costs the limit.
pub struct JsonDocumentReader<R: Read> {
    input: Input<R>,
    /// `run` describes the UTF-8 text of the window from `input.start` on;
    /// `None` after the window moved.
    run: Option<Utf8Run>,
    /// The first document's leading whitespace is dropped.
    started: bool,
    done: bool,
    documents: u64,
    max_record: usize,
}

/// A stretch of the window that is UTF-8: it ends at `valid_end`, where
/// either the window ends or (`invalid`) bytes follow that are not UTF-8.
/// Such bytes end the document they fall in, not the file: reading
/// resumes after them. A character cut by the window's end is neither: the
/// run ends before it, and the next fill completes it.
#[derive(Clone, Copy)]
struct Utf8Run {
    valid_end: usize,
    invalid: bool,
}

/// A scan for where a document ends: after the bracket that closes its
/// first one, at the first whitespace after a scalar (strings and escapes
/// read, nothing validated: the parser does that). Its state survives
/// refills, so a long document costs one pass.
#[derive(Default)]
struct DocumentEnd {
    pos: usize,
    depth: i64,
    in_string: bool,
    escaped: bool,
}

impl DocumentEnd {
    /// Scans `bytes` (the window from the document's first byte) on from
    /// where the last call stopped; the document's length when its end is
    /// in them.
    fn find(&mut self, bytes: &[u8]) -> Option<usize> {
        while self.pos < bytes.len() {
            let c = bytes[self.pos];
            self.pos += 1;
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if c == b'\\' {
                    self.escaped = true;
                } else if c == b'"' {
                    self.in_string = false;
                    if self.depth == 0 {
                        return Some(self.pos);
                    }
                }
                continue;
            }
            match c {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth -= 1;
                    if self.depth <= 0 {
                        return Some(self.pos);
                    }
                }
                b' ' | b'\t' | b'\r' | b'\n' if self.depth == 0 => return Some(self.pos - 1),
                _ => {}
            }
        }
        None
    }
}

impl<R: Read> JsonDocumentReader<R> {
    pub fn new(reader: R, file: &str, chunk_bytes: usize) -> Self {
        JsonDocumentReader {
            input: Input::new(reader, file, chunk_bytes),
            run: None,
            started: false,
            done: false,
            documents: 0,
            max_record: crate::formats::DEFAULT_MAX_RECORD_BYTES,
        }
    }

    /// Documents longer than `max` bytes are bad records of kind
    /// `record_too_large`, passed over without being held whole.
    pub fn with_max_record_bytes(mut self, max: usize) -> Self {
        self.max_record = max.max(1);
        self
    }

    /// Reads one more chunk into the window; false at the end of the file.
    fn refill(&mut self) -> Result<bool> {
        let more = self.input.fill()?.is_some();
        self.run = None;
        Ok(more)
    }

    /// Drops whitespace before the next document; false when the file
    /// has no more.
    fn next_document_start(&mut self) -> Result<bool> {
        loop {
            let at = skip_json_ws(&self.input.buf, self.input.start);
            self.input.consume(at - self.input.start);
            if self.input.start < self.input.buf.len() {
                return Ok(true);
            }
            if !self.refill()? {
                return Ok(false);
            }
        }
    }

    /// Makes the window hold the next document whole (or the rest of the
    /// file). True when the document is longer than `max_record_bytes`;
    /// `end` has then scanned what the window holds of it.
    fn load_document(&mut self, end: &mut DocumentEnd) -> Result<bool> {
        loop {
            if end.find(&self.input.buf[self.input.start..]).is_some() {
                return Ok(end.pos > self.max_record);
            }
            if end.pos > self.max_record {
                return Ok(true);
            }
            if !self.refill()? {
                return Ok(false);
            }
        }
    }

    /// Passes over the rest of a document longer than `max_record_bytes`,
    /// reading and dropping chunk by chunk.
    fn pass_over(&mut self, mut end: DocumentEnd) -> Result<()> {
        // `end` already scanned the window: its end, if found, is behind.
        end.pos = end.pos.min(self.input.buf.len() - self.input.start);
        loop {
            if let Some(len) = end.find(&self.input.buf[self.input.start..]) {
                self.input.consume(len);
                return Ok(());
            }
            self.input.consume(end.pos);
            end.pos = 0;
            if !self.refill()? {
                return Ok(());
            }
        }
    }

    /// The UTF-8 run at `input.start`, validated again once the window
    /// moved or the position passed the bytes that ended the last run.
    fn utf8_run(&mut self) -> Utf8Run {
        match self.run {
            Some(run) if self.input.start < run.valid_end || (run.invalid && self.input.start == run.valid_end) => run,
            _ => {
                let start = self.input.start;
                let window = &self.input.buf[start..];
                let run = match crate::formats::utf8::validate(window) {
                    Ok(_) => Utf8Run { valid_end: self.input.buf.len(), invalid: false },
                    // A character the window's end cuts: the next fill
                    // completes it (the file's end does not).
                    Err(at)
                        if !self.input.eof
                            && std::str::from_utf8(&window[at..]).is_err_and(|e| e.error_len().is_none()) =>
                    {
                        Utf8Run { valid_end: start + at, invalid: false }
                    }
                    Err(at) => Utf8Run { valid_end: start + at, invalid: true },
                };
                self.run = Some(run);
                run
            }
        }
    }

    /// Consumes up to the next line that starts with `{` at or after
    /// `from` bytes past `input.start` (the `\n` before it may be the byte
    /// at `from - 1`), or the rest of the file: where reading resumes after
    /// a malformed document or bytes that are not UTF-8. Searched across
    /// refills, so the result never depends on where the window ends.
    fn resume_after(&mut self, from: usize) -> Result<()> {
        let mut from = from.clamp(1, (self.input.buf.len() - self.input.start).max(1));
        loop {
            let window = &self.input.buf[self.input.start..];
            if let Some(i) = window.get(from - 1..).and_then(|w| memchr::memmem::find(w, b"\n{")) {
                self.input.consume(from - 1 + i + 1);
                return Ok(());
            }
            // Keep the last byte: it may be the `\n` of a `\n{` that the
            // window's end cuts.
            let keep = window.len().saturating_sub(1).max(from - 1).min(window.len());
            self.input.consume(keep);
            from = 1;
            if !self.refill()? {
                let rest = self.input.buf.len() - self.input.start;
                self.input.consume(rest);
                return Ok(());
            }
        }
    }

    /// The name of the next document in messages.
    fn what(&self) -> String {
        match self.documents + 1 {
            1 => "the document".to_string(),
            n => format!("document {n}"),
        }
    }
}

impl<R: Read> RecordReader for JsonDocumentReader<R> {
    fn next_batch(&mut self, batch: &mut Batch, max_records: usize) -> Result<usize> {
        if self.done || max_records == 0 {
            return Ok(0);
        }
        let mut added = 0;
        while added < max_records {
            if !self.started {
                self.started = true;
                if !self.input.skip_ws()? {
                    self.done = true;
                    break;
                }
            }
            if !self.next_document_start()? {
                self.done = true;
                break;
            }
            let (line, byte) = (self.input.line, self.input.offset);
            let what = self.what();
            let mut end = DocumentEnd::default();
            if self.load_document(&mut end)? {
                batch.push_bad(
                    line,
                    byte,
                    RecordFault::TooLarge,
                    crate::formats::too_large_cause(&what, self.max_record),
                );
                self.documents += 1;
                added += 1;
                self.pass_over(end)?;
                continue;
            }
            let run = self.utf8_run();
            if self.input.start >= run.valid_end {
                // Bytes that are not UTF-8 where a document would begin:
                // one bad record, up to the next line opening a document.
                batch.push_bad(
                    line,
                    byte,
                    RecordFault::BadEncoding,
                    format!("invalid UTF-8 at byte 0 of {what} (undecodable bytes for the input encoding)"),
                );
                self.documents += 1;
                added += 1;
                self.resume_after(1)?;
                continue;
            }
            // The bytes up to `valid_end` were checked to be UTF-8 in utf8_run().
            let text = std::str::from_utf8(&self.input.buf[self.input.start..run.valid_end]).unwrap_or("");
            let (used, decoded) = decode_value_record(text, batch, (line, byte), &what, false);
            if self.documents == 0 && matches!(decoded, Decoded::NotObject(Node::List { .. })) {
                // The wrong function, not a bad row: say which one reads arrays.
                return Err(SanitizeError::input(format!(
                    "file \"{}\" holds a top-level JSON array, not one object; use sanitize_json_array (input_format := 'json_array') to read its elements as rows",
                    self.input.file
                )));
            }
            self.documents += 1;
            added += 1;
            // A malformed document has no end to find: reading resumes at
            // the next line that starts with `{` in its first column (where
            // documents written one per line, or pretty-printed, begin), so
            // one damaged document does not take the rest of the file.
            match decoded {
                Decoded::Malformed => {
                    let text_len = text.len();
                    let next = next_document_line(text);
                    if next < text_len {
                        self.input.consume(next);
                    } else if run.invalid {
                        // The document runs into bytes that are not UTF-8:
                        // one bad record of its encoding, and reading
                        // resumes after those bytes, not at the end.
                        if let Some(meta) = batch.meta.last_mut() {
                            meta.error = Some(BadRecord::new(
                                RecordFault::BadEncoding,
                                format!(
                                    "invalid UTF-8 at byte {text_len} of {what} (undecodable bytes for the input encoding)"
                                ),
                            ));
                        }
                        self.resume_after(text_len + 1)?;
                    } else {
                        self.resume_after(text_len.max(1))?;
                    }
                }
                _ => self.input.consume(used.max(1).min(self.input.buf.len() - self.input.start)),
            }
        }
        Ok(added)
    }

    fn bytes_read(&self) -> u64 {
        self.input.chunks.bytes_read
    }
}

/// Where the next document may begin after a malformed one: the start of
/// the next line whose first byte is `{`, or the end of the text.
fn next_document_line(text: &str) -> usize {
    // By bytes: the text may start inside no character boundary's reach
    // (a document opening with a multi-byte character has none at 1).
    text.as_bytes().get(1..).and_then(|rest| memchr::memmem::find(rest, b"\n{")).map_or(text.len(), |i| i + 2)
}

/// `json_array`: `[ {...}, {...} ]`, each element a row.
pub struct JsonArrayReader<R: Read> {
    input: Input<R>,
    state: ArrayState,
    /// Elements seen so far, for messages ("element 3").
    elements: u64,
    /// The last element was a bad record (a truncated last element needs
    /// no second record saying the array is not closed).
    last_was_bad: bool,
    /// `max_record_bytes`: a longer element is a bad record, passed over.
    max_record: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ArrayState {
    BeforeArray,
    /// Expecting an element (or `]` right after `[`).
    Element {
        first: bool,
    },
    /// After an element: `,` continues, `]` ends the array. A state of its
    /// own so that a structure error found here is a record of the next
    /// turn of the loop, never one past `max_records`.
    AfterElement,
    Done,
}

impl<R: Read> JsonArrayReader<R> {
    pub fn new(reader: R, file: &str, chunk_bytes: usize) -> Self {
        JsonArrayReader {
            input: Input::new(reader, file, chunk_bytes),
            state: ArrayState::BeforeArray,
            elements: 0,
            last_was_bad: false,
            max_record: crate::formats::DEFAULT_MAX_RECORD_BYTES,
        }
    }

    /// Elements longer than `max` bytes (from their first byte to the `,` or
    /// `]` after them) are bad records of kind `record_too_large`, passed
    /// over without being held whole.
    pub fn with_max_record_bytes(mut self, max: usize) -> Self {
        self.max_record = max.max(1);
        self
    }

    /// Length of the element starting at `buf[start]`: scans strings and
    /// brackets only (the parser validates later), keeping its state across
    /// refills so that a huge element costs one pass. `None` at end of input.
    /// An element that grows past `max_record_bytes` is passed over as it
    /// is scanned (its bytes consumed, never held): then the second value is
    /// true and the length is that of its unconsumed end.
    fn element_len(&mut self) -> Result<Option<(usize, bool)>> {
        let (mut pos, mut depth, mut in_string, mut escaped) = (0usize, 0i64, false, false);
        let mut oversized = false;
        loop {
            let buf = &self.input.buf[self.input.start..];
            while pos < buf.len() {
                let c = buf[pos];
                if in_string {
                    if escaped {
                        escaped = false;
                    } else if c == b'\\' {
                        escaped = true;
                    } else if c == b'"' {
                        in_string = false;
                    }
                } else {
                    match c {
                        b'"' => in_string = true,
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' if depth > 0 => depth -= 1,
                        b',' | b']' | b'}' if depth == 0 => {
                            return Ok(Some((pos, oversized || pos > self.max_record)));
                        }
                        _ => {}
                    }
                }
                pos += 1;
            }
            if oversized || pos > self.max_record {
                self.input.consume(pos);
                pos = 0;
                oversized = true;
            }
            // `pos` is relative to `start`, which fill() moves to 0.
            if self.input.fill()?.is_none() {
                return Ok(if pos > 0 || oversized { Some((pos, oversized)) } else { None });
            }
        }
    }

    fn not_an_array(&self, found: &str) -> SanitizeError {
        SanitizeError::input(format!(
            "file \"{}\" does not start with a JSON array (found {found}); use sanitize_json (input_format := 'json') for one document per file",
            self.input.file
        ))
    }
}

impl<R: Read> RecordReader for JsonArrayReader<R> {
    fn next_batch(&mut self, batch: &mut Batch, max_records: usize) -> Result<usize> {
        let mut added = 0;
        while added < max_records {
            match self.state {
                ArrayState::Done => break,
                ArrayState::BeforeArray => {
                    if !self.input.skip_ws()? {
                        self.state = ArrayState::Done; // empty file: no rows
                        break;
                    }
                    let c = self.input.buf[self.input.start];
                    if c != b'[' {
                        let found = if c == b'{' { "an object".to_string() } else { format!("'{}'", c as char) };
                        return Err(self.not_an_array(&found));
                    }
                    self.input.consume(1);
                    self.state = ArrayState::Element { first: true };
                }
                ArrayState::Element { first } => {
                    if !self.input.skip_ws()? {
                        self.bad(batch, "the array is not closed (truncated file?)");
                        added += 1;
                        self.state = ArrayState::Done;
                        break;
                    }
                    if first && self.input.buf[self.input.start] == b']' {
                        self.input.consume(1);
                        self.finish(batch, &mut added)?;
                        continue;
                    }
                    let (line, byte) = (self.input.line, self.input.offset);
                    let Some((len, too_large)) = self.element_len()? else {
                        self.bad(batch, "the array is not closed (truncated file?)");
                        added += 1;
                        self.state = ArrayState::Done;
                        break;
                    };
                    self.elements += 1;
                    let n = self.elements;
                    if too_large {
                        batch.push_bad(
                            line,
                            byte,
                            RecordFault::TooLarge,
                            crate::formats::too_large_cause(&format!("element {n}"), self.max_record),
                        );
                        self.last_was_bad = true;
                        added += 1;
                        self.input.consume(len);
                        self.state = ArrayState::AfterElement;
                        continue;
                    }
                    let raw = &self.input.buf[self.input.start..self.input.start + len];
                    decode_whole_record(raw, batch, line, byte, &format_args!("element {n}"));
                    self.last_was_bad = batch.meta.last().is_some_and(|m| m.error.is_some());
                    added += 1;
                    self.input.consume(len);
                    self.state = ArrayState::AfterElement;
                }
                ArrayState::AfterElement => {
                    if !self.input.skip_ws()? {
                        // A truncated last element already is a bad record.
                        if !self.last_was_bad {
                            self.bad(batch, "the array is not closed (truncated file?)");
                            added += 1;
                        }
                        self.state = ArrayState::Done;
                        break;
                    }
                    match self.input.buf[self.input.start] {
                        b',' => {
                            self.input.consume(1);
                            self.state = ArrayState::Element { first: false };
                        }
                        b']' => {
                            self.input.consume(1);
                            self.finish(batch, &mut added)?;
                        }
                        _ => {
                            // A stray '}' at depth 0: the structure is broken.
                            self.bad(batch, "unexpected character after an element");
                            added += 1;
                            self.state = ArrayState::Done;
                        }
                    }
                }
            }
        }
        Ok(added)
    }

    fn bytes_read(&self) -> u64 {
        self.input.chunks.bytes_read
    }
}

impl<R: Read> JsonArrayReader<R> {
    /// A bad record at the current position (structure errors).
    fn bad(&mut self, batch: &mut Batch, cause: &str) {
        batch.tape.roots.push(batch.tape.nodes.len() as u32);
        batch.tape.nodes.push(Node::Null);
        let error = Some(BadRecord::new(RecordFault::Malformed, cause));
        batch.meta.push(RecordMeta { line: self.input.line, byte: self.input.offset, error });
    }

    /// After the closing bracket only whitespace may follow.
    fn finish(&mut self, batch: &mut Batch, added: &mut usize) -> Result<()> {
        self.state = ArrayState::Done;
        if self.input.skip_ws()? {
            self.bad(batch, "unexpected characters after the closing ']' of the array");
            *added += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::formats::harness::{self, Record};
    use crate::options::InputFormat;

    /// Every record through the shared harness (every chunk and batch
    /// size, the reader contract checked); messages without `ERROR: `.
    fn array(input: &[u8]) -> Result<Vec<Record>, String> {
        harness::read(InputFormat::JsonArray, input, |_| {}).map(strip)
    }

    fn doc(input: &[u8]) -> Result<Vec<Record>, String> {
        harness::read(InputFormat::Json, input, |_| {}).map(strip)
    }

    fn strip(records: Vec<Record>) -> Vec<Record> {
        records
            .into_iter()
            .map(|(l, b, t)| (l, b, t.strip_prefix("ERROR: ").map(str::to_string).unwrap_or(t)))
            .collect()
    }

    #[test]
    fn arrays_split_into_rows_for_every_chunk_size() {
        let input = b"\xEF\xBB\xBF [\n {\"a\": \"x,]}\\\"\"},\n {\"b\": [1, {\"c\": 2}]} ,\n 5, {\"d\": tru}, {}\n]\n";
        let expected = array(input).unwrap();
        assert_eq!(expected.len(), 5);
        // Offsets count from after the byte-order mark (docs/formats.md).
        assert_eq!(expected[0], (2, 4, "{\"a\":\"x,]}\\\"\"}".to_string()));
        assert_eq!(expected[1].2, "{\"b\":[1,{\"c\":2}]}");
        assert_eq!(expected[2].2, "element 3 is a JSON number, not an object");
        assert!(expected[3].2.starts_with("malformed JSON in element 4"), "{:?}", expected[3]);
        assert_eq!(expected[4].2, "{}");
    }

    #[test]
    fn empty_arrays_files_and_structure_errors() {
        assert_eq!(array(b" [ ] ").unwrap(), vec![]);
        assert_eq!(array(b"").unwrap(), vec![]);
        assert_eq!(array(b"  \n ").unwrap(), vec![]);
        let e = array(b"{\"a\":1}").unwrap_err();
        assert!(e.contains("use sanitize_json "), "{e}");
        let out = array(b"[{\"a\":1}, {\"b\":").unwrap();
        assert_eq!(out.len(), 2);
        assert!(out[1].2.contains("malformed JSON") || out[1].2.contains("not closed"), "{out:?}");
        let out = array(b"[{\"a\":1}] x").unwrap();
        assert!(out[1].2.contains("after the closing"), "{out:?}");
        // A structure error right after a full batch waits for the next one.
        let out = array(b"[&amp;}").unwrap();
        assert_eq!(out.len(), 2, "{out:?}");
    }

    #[test]
    fn documents_are_one_row() {
        assert_eq!(doc(b"\n {\"a\": {\"b\": [1]}}\n").unwrap(), vec![(2, 2, "{\"a\":{\"b\":[1]}}".to_string())]);
        assert_eq!(doc(b"  ").unwrap(), vec![]);
        let e = doc(b"[{\"a\": 1}]").unwrap_err();
        assert!(e.contains("use sanitize_json_array"), "{e}");
        let out = doc(b"{\"a\": }").unwrap();
        assert!(out[0].2.starts_with("malformed JSON in the document"), "{out:?}");
        let out = doc(b"\"text\"").unwrap();
        assert_eq!(out[0].2, "the document is a JSON string, not an object");
    }

    #[test]
    fn reading_resumes_after_a_malformed_document_at_the_next_line_opening_one() {
        // Document 2 is cut short; documents 3 and 4 (one pretty-printed,
        // whose indented inner `{` is no start) are still read.
        let text = b"{\"a\": 1}\n{\"a\": \n{\"a\": 3}\n{\n  \"b\": [\n  {\"c\": 1}]\n}\n";
        let out = doc(text).unwrap();
        assert_eq!(out.len(), 4, "{out:?}");
        assert_eq!((out[0].0, out[0].2.as_str()), (1, "{\"a\":1}"));
        assert!(out[1].2.starts_with("malformed JSON in document 2"), "{out:?}");
        assert_eq!((out[2].0, out[2].2.as_str()), (3, "{\"a\":3}"));
        assert_eq!((out[3].0, out[3].2.as_str()), (4, "{\"b\":[{\"c\":1}]}"));
        // Nothing opens a line after the damage: it is the rest of the file.
        let out = doc(b"{\"a\": 1}\n{\"a\": [\n  {\"b\": 2}\n").unwrap();
        assert_eq!(out.len(), 2, "{out:?}");
    }

    #[test]
    fn bytes_that_are_not_utf8_end_their_document_not_the_file() {
        // The document holding them is one bad record of its encoding (not
        // two: a malformed one and an encoding one), and the documents
        // after it are read (they once were lost, with no reject naming them).
        let out = doc(b"{\"a\":\"\xff\"}\n{\"b\":2}\n{\"c\":3}\n").unwrap();
        assert_eq!(out.len(), 3, "{out:?}");
        assert_eq!(out[0].0, 1);
        assert!(out[0].2.starts_with("invalid UTF-8 at byte 6 of the document"), "{out:?}");
        assert_eq!((out[1].0, out[1].2.as_str()), (2, "{\"b\":2}"));
        assert_eq!((out[2].0, out[2].2.as_str()), (3, "{\"c\":3}"));
        // Between documents, and twice in one file: each stretch is one
        // bad record, reading resumes at the next line opening a document.
        let out = doc(b"{\"a\":1}\xfe\xff\n{\"b\":2} {\"x\":\"\xc3\"}\n  {\"y\":1}\n{\"c\":3}").unwrap();
        assert_eq!(out.len(), 5, "{out:?}");
        assert_eq!(out[0].2, "{\"a\":1}");
        assert!(out[1].2.starts_with("invalid UTF-8 at byte 0 of document 2"), "{out:?}");
        assert_eq!(out[2].2, "{\"b\":2}");
        assert!(out[3].2.starts_with("invalid UTF-8 at byte 6 of document 4"), "{out:?}");
        assert_eq!((out[4].0, out[4].2.as_str()), (4, "{\"c\":3}"));
        // Nothing opens a line after them: the rest of the file is that record.
        let out = doc(b"{\"a\":1}\n{\"b\":\"\xff\",\n\"c\": 2}\n").unwrap();
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(out[1].2.starts_with("invalid UTF-8"), "{out:?}");
    }
}
