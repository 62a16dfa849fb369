//! CSV (RFC 4180) decoder: one object per record, keyed by the header's
//! column names (or `column_a`, `column_b`, ... without a header).
//!
//! Our own small tokenizer, because the engine needs what general CSV
//! readers drop: an unquoted empty cell is NULL, a quoted empty cell `""` is
//! the empty string. Every other cell is a string; typing is the engine's job.
//!
//! - Records end at LF or CRLF outside quotes; a CR anywhere else is data.
//!   A file whose first line ends in a lone CR (classic Mac) ends its
//!   records at CR instead, as `read_csv` reads it.
//! - A cell that starts with `"` is quoted: it may hold the delimiter,
//!   newlines and `""` (one quote). Text after its closing quote is kept
//!   literally (`"ab"cd` is `abcd`); a quote inside an unquoted cell is data.
//! - Blank lines (empty or a lone CR) are not records.
//! - Bad records (wrong cell count, an unterminated quote at end of input,
//!   invalid UTF-8) are null roots with `meta.error`, for `on_error`.
//!
//! The tokenizer is resumable: when a record spans chunks its scan state
//! (positions relative to the record's start) survives the refill, so every
//! byte is scanned once whatever `chunk_bytes` is.

use std::io::Read;

use super::chunks::Chunks;
use super::{Batch, RecordMeta};
use crate::error::{Location, Result, SanitizeError};
use crate::value::{Node, Tape};

/// How to read a CSV file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CsvOptions {
    /// The first non-blank record names the columns.
    pub has_header: bool,
    /// Cell separator (the options layer allows `,` `;` `\t` `|`).
    pub delimiter: u8,
}

impl Default for CsvOptions {
    fn default() -> Self {
        CsvOptions { has_header: true, delimiter: b',' }
    }
}

/// Where the tokenizer is inside the current record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// At the first byte of a cell.
    CellStart,
    /// In an unquoted cell, or in the literal tail after a closing quote.
    Unquoted,
    /// Inside quotes.
    Quoted,
    /// Just after a quote inside quotes: `""` (an escaped quote) or the end.
    AfterQuote,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CellKind {
    /// Unquoted: the raw bytes are the value; empty means NULL.
    Plain,
    /// `"..."` with no `""` inside and nothing after the closing quote.
    Quoted,
    /// Quoted with `""` escapes or text after the closing quote: unescape.
    Escaped,
}

/// A cell's raw byte range, relative to the start of its record (for quoted
/// cells the range includes the quotes; a record's final CR is excluded).
#[derive(Clone, Copy, Debug)]
struct Cell {
    start: usize,
    end: usize,
    kind: CellKind,
}

/// A complete record: `buf[start..start + len]`, terminator included.
#[derive(Clone, Copy, Debug)]
struct RecordEnd {
    len: usize,
    /// Newlines inside quoted cells (the terminator is not counted).
    newlines: u64,
    /// Ended by a newline (rather than by the end of input).
    terminated: bool,
    /// An unterminated quote: the newlines before its opening quote.
    unterminated: Option<u64>,
}

pub struct CsvReader<R: Read> {
    /// The input; the current record starts at `input.start`.
    input: Chunks<R>,
    options: CsvOptions,
    /// Line number and stream offset of `buf[start]`.
    line: u64,
    offset: u64,
    bom_checked: bool,
    header_read: bool,
    /// The header's cell texts as read.
    header: Option<Vec<String>>,
    /// Column names used as keys (deduplicated); fixed by the header or by the first record.
    names: Vec<String>,
    width: Option<usize>,
    // Scan state of the current record (positions relative to `start`).
    state: State,
    pos: usize,
    cell_start: usize,
    cell_quoted: bool,
    escaped: bool,
    /// Position just after the current cell's last closing quote.
    close_end: usize,
    newlines: u64,
    quote_newlines: u64,
    cells: Vec<Cell>,
    keys: KeyCache,
    /// Reused for unescaping `""`.
    scratch: String,
    /// The record terminator: `\n` (LF and CRLF files) or `\r` (CR-only files).
    newline: u8,
}

impl<R: Read> CsvReader<R> {
    pub fn new(reader: R, file: &str, chunk_bytes: usize, options: CsvOptions) -> Self {
        CsvReader {
            input: Chunks::new(reader, file, chunk_bytes),
            options,
            line: 1,
            offset: 0,
            bom_checked: false,
            header_read: false,
            header: None,
            names: Vec::new(),
            width: None,
            state: State::CellStart,
            pos: 0,
            cell_start: 0,
            cell_quoted: false,
            escaped: false,
            close_end: 0,
            newlines: 0,
            quote_newlines: 0,
            cells: Vec::new(),
            keys: KeyCache::default(),
            scratch: String::new(),
            newline: b'\n',
        }
    }

    /// The header's cell texts as read (None without a header, or for an
    /// empty file); reads the header if not read yet. Names used as keys may
    /// differ: empty ones become `column_<letters>`, duplicates get `_2`, ...
    pub fn header(&mut self) -> Result<Option<Vec<String>>> {
        self.start_input()?;
        Ok(self.header.clone())
    }

    /// Drops a leading byte-order mark and reads the header, once.
    fn start_input(&mut self) -> Result<()> {
        while !self.bom_checked {
            if self.input.buf.len() - self.input.start >= 3 || self.input.eof {
                if self.input.buf[self.input.start..].starts_with(b"\xEF\xBB\xBF") {
                    self.input.start += 3;
                    self.offset += 3;
                }
                self.bom_checked = true;
            } else {
                self.input.fill()?;
            }
        }
        if !self.header_read {
            self.newline = self.detect_newline()?;
            if self.options.has_header {
                self.read_header()?;
            }
            self.header_read = true;
        }
        Ok(())
    }

    /// `\r` when the first line break of the file outside quotes is a lone
    /// CR (a classic Mac file), else `\n`.
    fn detect_newline(&mut self) -> Result<u8> {
        let mut quoted = false;
        let mut at = 0;
        loop {
            let buf = &self.input.buf[self.input.start..];
            while at < buf.len() {
                match buf[at] {
                    b'"' => quoted = !quoted,
                    b'\n' if !quoted => return Ok(b'\n'),
                    b'\r' if !quoted => match buf.get(at + 1) {
                        Some(b'\n') => return Ok(b'\n'),
                        Some(_) => return Ok(b'\r'),
                        // A CR last in the buffer: the next byte decides.
                        None => break,
                    },
                    _ => {}
                }
                at += 1;
            }
            if self.input.eof || self.input.fill()?.is_none() {
                return Ok(b'\n');
            }
        }
    }

    fn read_header(&mut self) -> Result<()> {
        while let Some(end) = self.scan_record()? {
            if self.is_blank() {
                self.advance(&end);
                continue;
            }
            if let Some(q) = end.unterminated {
                let loc = Location { file: self.input.file.clone(), line: self.line, byte: self.offset };
                return Err(SanitizeError::input(format!(
                    "{loc}: the CSV header has an unterminated quoted cell starting at line {}",
                    self.line + q
                )));
            }
            let rec = &self.input.buf[self.input.start..self.input.start + end.len];
            let mut texts = Vec::with_capacity(self.cells.len());
            for &cell in &self.cells {
                // A header is not a record and cannot be "bad": undecodable
                // bytes become U+FFFD rather than failing the file.
                let raw = String::from_utf8_lossy(&rec[cell.start..cell.end]);
                let mut value = String::new();
                texts.push(match cell_value(&raw, cell, &mut value) {
                    Some(v) => v.to_string(),
                    None => String::new(),
                });
            }
            self.names = header_names(&texts);
            self.width = Some(texts.len());
            self.header = Some(texts);
            self.advance(&end);
            return Ok(());
        }
        Ok(())
    }

    /// Scans the record at `buf[start..]`, reading more input as needed and
    /// resuming where the previous call stopped. `None` at end of input.
    fn scan_record(&mut self) -> Result<Option<RecordEnd>> {
        let delim = self.options.delimiter;
        loop {
            let buf = &self.input.buf[self.input.start..];
            let len = buf.len();
            match self.state {
                State::CellStart => {
                    if self.pos < len {
                        self.cell_start = self.pos;
                        self.escaped = false;
                        if buf[self.pos] == b'"' {
                            self.cell_quoted = true;
                            self.quote_newlines = self.newlines;
                            self.state = State::Quoted;
                            self.pos += 1;
                        } else {
                            self.cell_quoted = false;
                            self.state = State::Unquoted;
                        }
                        continue;
                    }
                }
                State::Unquoted => match memchr::memchr2(delim, self.newline, &buf[self.pos..]) {
                    Some(i) => {
                        let at = self.pos + i;
                        let newline = buf[at] == self.newline;
                        let cell = self.cell(buf, at, newline);
                        self.cells.push(cell);
                        self.pos = at + 1;
                        if newline {
                            return Ok(Some(self.record_end(true, None)));
                        }
                        self.state = State::CellStart;
                        continue;
                    }
                    None => self.pos = len,
                },
                State::Quoted => match memchr::memchr(b'"', &buf[self.pos..]) {
                    Some(i) => {
                        self.newlines += count_newlines(&buf[self.pos..self.pos + i], self.newline);
                        self.pos += i + 1;
                        self.close_end = self.pos;
                        self.state = State::AfterQuote;
                        continue;
                    }
                    None => {
                        self.newlines += count_newlines(&buf[self.pos..], self.newline);
                        self.pos = len;
                    }
                },
                State::AfterQuote => {
                    if self.pos < len {
                        if buf[self.pos] == b'"' {
                            self.escaped = true;
                            self.pos += 1;
                            self.state = State::Quoted;
                        } else {
                            // The delimiter, the newline or a literal tail.
                            self.state = State::Unquoted;
                        }
                        continue;
                    }
                }
            }
            if self.input.fill()?.is_some() {
                continue;
            }
            // End of input: whatever was scanned is the last record.
            let buf = &self.input.buf[self.input.start..];
            let len = buf.len();
            return Ok(match self.state {
                State::CellStart if self.cells.is_empty() => None,
                State::Quoted => {
                    self.cells.push(Cell { start: self.cell_start, end: len, kind: CellKind::Escaped });
                    self.pos = len;
                    Some(self.record_end(false, Some(self.quote_newlines)))
                }
                state => {
                    if state == State::CellStart {
                        // After a trailing delimiter: one more, empty cell.
                        self.cell_start = len;
                        self.cell_quoted = false;
                    }
                    let cell = self.cell(buf, len, true);
                    self.cells.push(cell);
                    self.pos = len;
                    Some(self.record_end(false, None))
                }
            });
        }
    }

    /// The current cell, ending at `end` (the delimiter, newline or end of
    /// input); a record's last cell loses a trailing CR (CRLF).
    fn cell(&self, buf: &[u8], mut end: usize, last: bool) -> Cell {
        let start = self.cell_start;
        if last && end > start && buf[end - 1] == b'\r' {
            end -= 1;
        }
        let kind = if !self.cell_quoted {
            CellKind::Plain
        } else if !self.escaped && end == self.close_end {
            CellKind::Quoted
        } else {
            CellKind::Escaped
        };
        Cell { start, end, kind }
    }

    fn record_end(&self, terminated: bool, unterminated: Option<u64>) -> RecordEnd {
        RecordEnd { len: self.pos, newlines: self.newlines, terminated, unterminated }
    }

    /// An empty line (or a lone CR): one unquoted empty cell.
    fn is_blank(&self) -> bool {
        matches!(self.cells.as_slice(), [Cell { start, end, kind: CellKind::Plain }] if start == end)
    }

    /// Consumes the scanned record and resets the scan state.
    fn advance(&mut self, end: &RecordEnd) {
        self.input.start += end.len;
        self.offset += end.len as u64;
        self.line += end.newlines + u64::from(end.terminated);
        self.state = State::CellStart;
        self.pos = 0;
        self.newlines = 0;
        self.cells.clear();
    }
}

impl<R: Read> super::RecordReader for CsvReader<R> {
    fn bytes_read(&self) -> u64 {
        self.input.bytes_read
    }

    /// Appends up to `max_records` records to `batch`; returns how many.
    /// Zero means the file is exhausted.
    fn next_batch(&mut self, batch: &mut Batch, max_records: usize) -> Result<usize> {
        if max_records == 0 {
            return Ok(0);
        }
        self.start_input()?;
        let mut added = 0;
        while added < max_records {
            let Some(end) = self.scan_record()? else { break };
            if self.is_blank() {
                self.advance(&end);
                continue;
            }
            let width = match self.width {
                Some(w) => w,
                None => {
                    // Without a header the first record fixes the columns.
                    let w = self.cells.len();
                    self.names = (1..=w).map(column_name).collect();
                    self.width = Some(w);
                    w
                }
            };
            let error = if let Some(q) = end.unterminated {
                Some(format!("unterminated quoted cell starting at line {}", self.line + q))
            } else if self.cells.len() != width {
                Some(format!("expected {width} cells but found {}", self.cells.len()))
            } else {
                let rec = &self.input.buf[self.input.start..self.input.start + end.len];
                emit(rec, &self.cells, &mut self.keys, &self.names, &mut self.scratch, &mut batch.tape)
            };
            if error.is_some() {
                // Keep roots aligned with meta: a bad record is a null on the tape.
                batch.tape.roots.push(batch.tape.nodes.len() as u32);
                batch.tape.nodes.push(Node::Null);
            }
            batch.meta.push(RecordMeta { line: self.line, byte: self.offset, error });
            self.advance(&end);
            added += 1;
        }
        Ok(added)
    }
}

/// Writes one well-formed record as an object; returns the error text if the
/// record is not UTF-8 (then nothing is written).
fn emit(
    rec: &[u8],
    cells: &[Cell],
    keys: &mut KeyCache,
    names: &[String],
    scratch: &mut String,
    tape: &mut Tape,
) -> Option<String> {
    let text = match std::str::from_utf8(rec) {
        Ok(t) => t,
        Err(e) => {
            return Some(format!(
                "invalid UTF-8 at byte {} of the record (undecodable bytes for the input encoding)",
                e.valid_up_to()
            ))
        }
    };
    keys.refresh(names, tape);
    let root = tape.nodes.len();
    let open = tape.open(true);
    let mut evidence = false;
    for (&cell, &range) in cells.iter().zip(&keys.ranges) {
        tape.push_key_range(range);
        match cell_value(&text[cell.start..cell.end], cell, scratch) {
            Some(v) => {
                tape.push_string(v);
                evidence = true;
            }
            None => tape.push_null(),
        }
    }
    tape.close(open, cells.len() as u32, evidence);
    tape.push_root(root);
    None
}

/// The column names' text ranges on the current tape: written once per
/// batch instead of once per cell.
#[derive(Default)]
struct KeyCache {
    generation: u64,
    ranges: Vec<(u32, u32)>,
}

impl KeyCache {
    fn refresh(&mut self, names: &[String], tape: &mut Tape) {
        if self.generation != tape.generation() || self.ranges.len() != names.len() {
            self.ranges.clear();
            self.ranges.extend(names.iter().map(|n| tape.push_text(n)));
            self.generation = tape.generation();
        }
    }
}

/// A cell's value from its raw text (`raw` is exactly the cell's range):
/// None for an unquoted empty cell (NULL).
fn cell_value<'a>(raw: &'a str, cell: Cell, scratch: &'a mut String) -> Option<&'a str> {
    match cell.kind {
        CellKind::Plain if raw.is_empty() => None,
        CellKind::Plain => Some(raw),
        CellKind::Quoted => Some(&raw[1..raw.len() - 1]),
        CellKind::Escaped => {
            unescape(raw, scratch);
            Some(scratch.as_str())
        }
    }
}

/// Unescapes a quoted cell (`raw` starts at its opening quote): `""` inside
/// the quotes is one quote; after the closing quote the text is literal.
fn unescape(raw: &str, out: &mut String) {
    out.clear();
    let bytes = raw.as_bytes();
    let mut seg = 1;
    loop {
        match memchr::memchr(b'"', &bytes[seg..]) {
            None => break, // unterminated: only for bad records
            Some(i) => {
                let q = seg + i;
                out.push_str(&raw[seg..q]);
                if bytes.get(q + 1) == Some(&b'"') {
                    out.push('"');
                    seg = q + 2;
                } else {
                    seg = q + 1;
                    break;
                }
            }
        }
    }
    out.push_str(&raw[seg..]);
}

fn count_newlines(bytes: &[u8], newline: u8) -> u64 {
    memchr::memchr_iter(newline, bytes).count() as u64
}

/// `column_a` ... `column_z`, `column_aa`, ...: spreadsheet letters of a
/// 1-based position.
pub fn column_name(position: usize) -> String {
    let mut letters = Vec::new();
    let mut n = position;
    while n > 0 {
        n -= 1;
        letters.push(b'a' + (n % 26) as u8);
        n /= 26;
    }
    letters.reverse();
    let mut name = String::with_capacity(7 + letters.len());
    name.push_str("column_");
    name.extend(letters.iter().map(|&b| b as char));
    name
}

/// Keys from header texts: an empty name becomes `column_<letters>` of its
/// position; a repeated name gets `_2`, `_3`, ... (skipping any name that
/// the header or an earlier column already uses). The first occurrence keeps
/// its name.
fn header_names(texts: &[String]) -> Vec<String> {
    super::dedupe_names(texts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::RecordReader;
    use crate::value::write_compact_json;
    use proptest::prelude::*;

    fn opts(has_header: bool, delimiter: u8) -> CsvOptions {
        CsvOptions { has_header, delimiter }
    }

    /// (line, byte, compact JSON or error) of every record.
    fn read_with(input: &[u8], o: CsvOptions, chunk: usize, max: usize) -> Vec<(u64, u64, String)> {
        let mut r = CsvReader::new(input, "t.csv", chunk, o);
        let mut out = Vec::new();
        let mut batch = Batch::default();
        loop {
            batch.clear();
            let n = r.next_batch(&mut batch, max).unwrap();
            if n == 0 {
                break;
            }
            assert!(n <= max);
            assert_eq!(batch.meta.len(), batch.tape.roots.len());
            assert_eq!(n, batch.len());
            for i in 0..batch.len() {
                let m = &batch.meta[i];
                let node = batch.tape.nodes[batch.tape.roots[i] as usize];
                match &m.error {
                    Some(e) => {
                        assert_eq!(node, Node::Null);
                        out.push((m.line, m.byte, format!("ERR {e}")));
                    }
                    None => {
                        assert!(matches!(node, Node::Object { .. }));
                        let mut s = String::new();
                        write_compact_json(batch.tape.record(i), &mut s);
                        out.push((m.line, m.byte, s));
                    }
                }
            }
        }
        assert_eq!(r.bytes_read(), input.len() as u64);
        out
    }

    fn read(input: &[u8]) -> Vec<(u64, u64, String)> {
        read_with(input, opts(true, b','), 1 << 20, 1000)
    }

    fn jsons(records: &[(u64, u64, String)]) -> Vec<&str> {
        records.iter().map(|r| r.2.as_str()).collect()
    }

    #[test]
    fn rfc4180_quoting() {
        let input = b"a,b,c\r\n\"x,y\",\"he said \"\"hi\"\"\",\"line1\nline2\"\r\nplain,\"\"\"\",\"cr\rinside\"\r\n";
        let out = read(input);
        assert_eq!(
            out,
            vec![
                (2, 7, r#"{"a":"x,y","b":"he said \"hi\"","c":"line1\nline2"}"#.to_string()),
                (4, 45, r#"{"a":"plain","b":"\"","c":"cr\rinside"}"#.to_string()),
            ]
        );
    }

    #[test]
    fn crlf_and_lf_mixed_and_no_final_newline() {
        let out = read(b"a,b\r\n1,2\n3,4\r\n5,6");
        assert_eq!(jsons(&out), [r#"{"a":"1","b":"2"}"#, r#"{"a":"3","b":"4"}"#, r#"{"a":"5","b":"6"}"#]);
        assert_eq!(out.iter().map(|r| (r.0, r.1)).collect::<Vec<_>>(), [(2, 5), (3, 9), (4, 14)]);
        // A trailing CR at end of input is a line ending, too.
        assert_eq!(jsons(&read(b"a,b\n1,2\r")), [r#"{"a":"1","b":"2"}"#]);
    }

    #[test]
    fn cr_only_line_endings_read_like_lf() {
        let input = b"a,b\r1,\"x\ry\"\r3,4\r\r5,6";
        let out = read(input);
        assert_eq!(jsons(&out), [r#"{"a":"1","b":"x\ry"}"#, r#"{"a":"3","b":"4"}"#, r#"{"a":"5","b":"6"}"#]);
        // Lines count CRs: the quoted CR is inside line 2, the blank line is 5.
        assert_eq!(out.iter().map(|r| r.0).collect::<Vec<_>>(), [2, 4, 6]);
        for chunk in [1, 2, 5] {
            assert_eq!(read_with(input, opts(true, b','), chunk, 2), out, "chunk {chunk}");
        }
    }

    #[test]
    fn other_delimiters() {
        for d in [b';', b'\t', b'|'] {
            let dc = d as char;
            let input = format!("a{dc}b\n1{dc}\"x{dc}y\"\n,z\n");
            let out = read_with(input.as_bytes(), opts(true, d), 3, 10);
            let escaped = if d == b'\t' { "\\t".to_string() } else { dc.to_string() };
            let first = format!(r#"{{"a":"1","b":"x{escaped}y"}}"#);
            // `,z` holds no delimiter: one cell.
            assert_eq!(jsons(&out), [first.as_str(), "ERR expected 2 cells but found 1"], "{dc:?}");
        }
        // With `;` a comma is data.
        let out = read_with(b"a;b\n1,5;2\n", opts(true, b';'), 64, 10);
        assert_eq!(jsons(&out), [r#"{"a":"1,5","b":"2"}"#]);
    }

    #[test]
    fn quotes_inside_unquoted_cells_and_after_closing_quote_are_literal() {
        let out = read(b"a,b,c\nab\"c,\"x\"yz,  \"q\"\n\"p\" ,\"\"\"\"\"\",\"a\"\"b\"c\"d\"\r\n");
        assert_eq!(
            jsons(&out),
            [r#"{"a":"ab\"c","b":"xyz","c":"  \"q\""}"#, r#"{"a":"p ","b":"\"\"","c":"a\"bc\"d\""}"#]
        );
    }

    #[test]
    fn header_names_are_deduplicated_deterministically() {
        let mut r = CsvReader::new(&b"a,a,a,a_2,,b,\"\"\nx\n"[..], "t.csv", 4, opts(true, b','));
        assert_eq!(r.header().unwrap().unwrap(), ["a", "a", "a", "a_2", "", "b", ""]);
        assert_eq!(r.names, ["a", "a_3", "a_4", "a_2", "column_e", "b", "column_g"]);
        assert_eq!(header_names(&["a".into(), "a".into(), "a".into()]), ["a", "a_2", "a_3"]);
        // A generated name that a real header name already uses is deduplicated as well.
        assert_eq!(header_names(&["column_b".into(), "".into()]), ["column_b", "column_b_2"]);
        // Names are kept as written: no trimming, case-sensitive.
        assert_eq!(header_names(&[" A ".into(), "a".into(), "A".into()]), [" A ", "a", "A"]);
        // A header read through `header()` is not read again by the first batch.
        let mut batch = Batch::default();
        assert_eq!(r.next_batch(&mut batch, 10).unwrap(), 1);
        assert_eq!(batch.meta[0].error.as_deref(), Some("expected 7 cells but found 1"));
        assert_eq!(batch.meta[0].line, 2);
    }

    #[test]
    fn header_texts_are_unescaped() {
        let mut r = CsvReader::new(&b"\"x\"\"y\",\"a,b\",\"multi\nline\"\n1,2,3\n"[..], "t.csv", 1, opts(true, b','));
        assert_eq!(r.header().unwrap().unwrap(), ["x\"y", "a,b", "multi\nline"]);
        assert_eq!(r.header().unwrap().unwrap(), ["x\"y", "a,b", "multi\nline"]);
        let mut batch = Batch::default();
        r.next_batch(&mut batch, 10).unwrap();
        assert_eq!(batch.meta[0].line, 3);
        let mut s = String::new();
        write_compact_json(batch.tape.record(0), &mut s);
        assert_eq!(s, r#"{"x\"y":"1","a,b":"2","multi\nline":"3"}"#);
    }

    #[test]
    fn column_names_without_header() {
        assert_eq!(column_name(1), "column_a");
        assert_eq!(column_name(26), "column_z");
        assert_eq!(column_name(27), "column_aa");
        assert_eq!(column_name(28), "column_ab");
        assert_eq!(column_name(52), "column_az");
        assert_eq!(column_name(53), "column_ba");
        assert_eq!(column_name(702), "column_zz");
        assert_eq!(column_name(703), "column_aaa");
        let row: Vec<String> = (1..=28).map(|i| i.to_string()).collect();
        let input = format!("{}\n{}\n", row.join(","), row.join(","));
        let mut r = CsvReader::new(input.as_bytes(), "t.csv", 7, opts(false, b','));
        assert_eq!(r.header().unwrap(), None);
        let mut batch = Batch::default();
        assert_eq!(r.next_batch(&mut batch, 10).unwrap(), 2);
        let entries: Vec<(&str, &str)> =
            batch.tape.record(0).entries().map(|(k, v)| (k, v.as_str().unwrap())).collect();
        assert_eq!(entries.len(), 28);
        assert_eq!(entries[0], ("column_a", "1"));
        assert_eq!(entries[25], ("column_z", "26"));
        assert_eq!(entries[26], ("column_aa", "27"));
        assert_eq!(entries[27], ("column_ab", "28"));
        assert_eq!(batch.meta[0], RecordMeta { line: 1, byte: 0, error: None });
        assert_eq!(r.header().unwrap(), None);
    }

    #[test]
    fn no_header_width_comes_from_the_first_record() {
        let out = read_with(b"\n1,2\n3\n4,5\n", opts(false, b','), 2, 10);
        assert_eq!(
            out,
            [
                (2, 1, r#"{"column_a":"1","column_b":"2"}"#.to_string()),
                (3, 5, "ERR expected 2 cells but found 1".to_string()),
                (4, 7, r#"{"column_a":"4","column_b":"5"}"#.to_string()),
            ]
        );
    }

    #[test]
    fn empty_cell_is_null_and_quoted_empty_is_empty_string() {
        let input = b"a,b,c\n,\"\",x\n,,\n,\"\",\nx,,\n";
        let mut r = CsvReader::new(&input[..], "t.csv", 5, opts(true, b','));
        let mut batch = Batch::default();
        assert_eq!(r.next_batch(&mut batch, 10).unwrap(), 4);
        let render = |i: usize| {
            let mut s = String::new();
            write_compact_json(batch.tape.record(i), &mut s);
            s
        };
        assert_eq!(render(0), r#"{"a":null,"b":"","c":"x"}"#);
        assert_eq!(render(1), r#"{"a":null,"b":null,"c":null}"#);
        assert_eq!(render(2), r#"{"a":null,"b":"","c":null}"#);
        assert_eq!(render(3), r#"{"a":"x","b":null,"c":null}"#);
        let evidence: Vec<bool> = (0..4)
            .map(|i| match batch.tape.record(i).node() {
                Node::Object { evidence, len, .. } => {
                    assert_eq!(len, 3);
                    evidence
                }
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(evidence, [true, false, true, true]);
        assert!(batch.tape.record(1).is_empty_or_null());
    }

    #[test]
    fn ragged_rows_are_bad_records_and_later_rows_still_decode() {
        let out = read_with(b"a,b\n1,2\n3\n4,5,6\n\"multi\nline\",x,y\n7,8\n", opts(true, b','), 3, 2);
        assert_eq!(
            out,
            [
                (2, 4, r#"{"a":"1","b":"2"}"#.to_string()),
                (3, 8, "ERR expected 2 cells but found 1".to_string()),
                (4, 10, "ERR expected 2 cells but found 3".to_string()),
                (5, 16, "ERR expected 2 cells but found 3".to_string()),
                (7, 33, r#"{"a":"7","b":"8"}"#.to_string()),
            ]
        );
    }

    #[test]
    fn unterminated_quote_at_end_of_input() {
        let out = read(b"a,b\n1,2\n3,\"abc\ndef\n");
        assert_eq!(out[0].2, r#"{"a":"1","b":"2"}"#);
        assert_eq!(out[1], (3, 8, "ERR unterminated quoted cell starting at line 3".to_string()));
        assert_eq!(out.len(), 2);
        // The quote opens on a later line than the record starts.
        let out = read(b"a,b\n\"x\ny\",\"z\n\n");
        assert_eq!(out, [(2, 4, "ERR unterminated quoted cell starting at line 3".to_string())]);
        // A lone quote.
        assert_eq!(read(b"a\n\""), [(2, 2, "ERR unterminated quoted cell starting at line 2".to_string())]);
    }

    #[test]
    fn unterminated_quote_in_the_header_is_an_error() {
        let mut r = CsvReader::new(&b"a,\"b\n1,2\n"[..], "h.csv", 3, opts(true, b','));
        let e = r.header().unwrap_err();
        assert!(e.message.contains("h.csv") && e.message.contains("unterminated"), "{e}");
        let mut r = CsvReader::new(&b"\n\na,\"b\n1,2\n"[..], "h.csv", 3, opts(true, b','));
        let e = r.next_batch(&mut Batch::default(), 10).unwrap_err();
        assert!(e.message.contains("line 3"), "{e}");
    }

    #[test]
    fn blank_lines_are_skipped() {
        let out = read(b"\n\r\na,b\n\n1,2\r\n\r\n\n3,4\n\n");
        assert_eq!(out, [(5, 8, r#"{"a":"1","b":"2"}"#.to_string()), (8, 16, r#"{"a":"3","b":"4"}"#.to_string())]);
        // Whitespace is data, and an empty quoted cell is a value, not a blank line.
        let out = read(b"a\n \n\"\"\n\n");
        assert_eq!(jsons(&out), [r#"{"a":" "}"#, r#"{"a":""}"#]);
    }

    #[test]
    fn bom_is_dropped() {
        let input = b"\xEF\xBB\xBFa,b\n1,2\n";
        for chunk in [1, 2, 3, 4, 64] {
            let mut r = CsvReader::new(&input[..], "t.csv", chunk, opts(true, b','));
            assert_eq!(r.header().unwrap().unwrap(), ["a", "b"]);
            assert_eq!(read_with(input, opts(true, b','), chunk, 10), [(2, 7, r#"{"a":"1","b":"2"}"#.to_string())]);
        }
        assert_eq!(read_with(b"\xEF\xBB\xBF1\n", opts(false, b','), 1, 10), [(1, 3, r#"{"column_a":"1"}"#.into())]);
        // Only a whole BOM is dropped.
        assert!(read_with(b"\xEF\xBB\n", opts(false, b','), 1, 10)[0].2.contains("invalid UTF-8"));
    }

    #[test]
    fn invalid_utf8_is_a_bad_record_not_a_failure() {
        let out = read_with(b"a,b\n1,\xFF\n3,\"\xC3\xA9\"\n", opts(true, b','), 2, 10);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].0, 2);
        assert!(out[0].2.contains("invalid UTF-8") && out[0].2.contains("undecodable bytes"), "{}", out[0].2);
        assert_eq!(out[1].2, r#"{"a":"3","b":"é"}"#);
        // An undecodable header name is replaced, not fatal.
        let mut r = CsvReader::new(&b"a\xFF,b\n"[..], "t.csv", 2, opts(true, b','));
        assert_eq!(r.header().unwrap().unwrap(), ["a\u{FFFD}", "b"]);
    }

    #[test]
    fn header_only_and_empty_files_have_no_records() {
        for input in [&b"a,b\n"[..], b"a,b", b"a,b\r\n\r\n\n", b"", b"\n\n", b"\xEF\xBB\xBF"] {
            assert!(read(input).is_empty(), "{input:?}");
            assert!(read_with(input, opts(true, b','), 1, 1).is_empty(), "{input:?}");
        }
        let mut r = CsvReader::new(&b"a,b"[..], "t.csv", 1, opts(true, b','));
        assert_eq!(r.header().unwrap().unwrap(), ["a", "b"]);
        let mut r = CsvReader::new(&b""[..], "t.csv", 1, opts(true, b','));
        assert_eq!(r.header().unwrap(), None);
        assert_eq!(r.next_batch(&mut Batch::default(), 10).unwrap(), 0);
        assert!(read_with(b"", opts(false, b','), 1, 1).is_empty());
    }

    #[test]
    fn trailing_delimiter_is_an_empty_cell() {
        assert_eq!(jsons(&read(b"a,b\n1,\n2,")), [r#"{"a":"1","b":null}"#, r#"{"a":"2","b":null}"#]);
        assert_eq!(jsons(&read(b"a,b\n1,\"\"")), [r#"{"a":"1","b":""}"#]);
    }

    #[test]
    fn same_records_for_every_chunk_size_and_batch_size() {
        let input: &[u8] =
            b"\xEF\xBB\xBFid,name,note\r\n\r\n1,\"Smith, J\",\"said \"\"hi\"\"\nthen left\"\r\n2,,\"\"\n\
            3,x\n\n4,\"a\rb\",\xFF\n5,\"\"\"\",tail\"q\"\r\n6,\"x\"y,z,extra\n7,,\n8,\"unterminated\nstill";
        let expected = read_with(input, opts(true, b','), 1 << 20, 1000);
        assert_eq!(expected.len(), 8);
        assert_eq!(expected[0], (3, 19, r#"{"id":"1","name":"Smith, J","note":"said \"hi\"\nthen left"}"#.into()));
        assert_eq!(expected[1].2, r#"{"id":"2","name":null,"note":""}"#);
        assert_eq!(expected[2], (6, 63, "ERR expected 3 cells but found 2".into()));
        assert!(expected[3].2.contains("invalid UTF-8"));
        assert_eq!(expected[3].0, 8);
        assert_eq!(expected[4].2, r#"{"id":"5","name":"\"","note":"tail\"q\""}"#);
        assert_eq!(expected[5].2, "ERR expected 3 cells but found 4");
        assert_eq!(expected[6].2, r#"{"id":"7","name":null,"note":null}"#);
        assert_eq!(expected[7], (12, 113, "ERR unterminated quoted cell starting at line 12".into()));
        for chunk in [1, 2, 3, 7, 64, 1 << 20] {
            for max in [1, 2, 3, 1000] {
                assert_eq!(read_with(input, opts(true, b','), chunk, max), expected, "chunk {chunk}, max {max}");
            }
        }
    }

    #[test]
    fn memory_stays_bounded_by_record_and_chunk() {
        let mut input = String::from("a,b,c\n");
        for i in 0..5000 {
            input.push_str(&format!("{i},\"x,\"\"{i}\"\"\",\n"));
        }
        let mut r = CsvReader::new(input.as_bytes(), "t.csv", 64, opts(true, b','));
        let mut batch = Batch::default();
        let mut total = 0;
        loop {
            batch.clear();
            let n = r.next_batch(&mut batch, 100).unwrap();
            if n == 0 {
                break;
            }
            total += n;
            assert!(batch.meta.iter().all(|m| m.error.is_none()));
        }
        assert_eq!(total, 5000);
        assert!(r.input.buf.capacity() <= 256, "{}", r.input.buf.capacity());
        // One huge cell grows the buffer, and still decodes whole.
        let big = "y".repeat(100_000);
        let input = format!("a\n\"{big}\"\nz\n");
        let out = read_with(input.as_bytes(), opts(true, b','), 7, 10);
        assert_eq!(out[0].2, format!(r#"{{"a":"{big}"}}"#));
        assert_eq!(out[1], (3, 100_005, r#"{"a":"z"}"#.to_string()));
    }

    #[test]
    fn read_errors_are_errors() {
        struct Failing;
        impl Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("boom"))
            }
        }
        let mut r = CsvReader::new(Failing, "f.csv", 8, opts(false, b','));
        let e = r.next_batch(&mut Batch::default(), 10).unwrap_err();
        assert!(e.message.contains("f.csv") && e.message.contains("boom"), "{e}");
    }

    /// Writes rows with proper quoting; returns the text and each row's (line, byte).
    fn write_csv(
        rows: &[Vec<Option<String>>],
        delim: u8,
        crlf: bool,
        final_newline: bool,
        force_quote: &[bool],
    ) -> (String, Vec<(u64, u64)>) {
        let d = delim as char;
        let mut out = String::new();
        let mut starts = Vec::new();
        let mut k = 0;
        for (r, row) in rows.iter().enumerate() {
            let line = 1 + out.matches('\n').count() as u64;
            starts.push((line, out.len() as u64));
            for (c, cell) in row.iter().enumerate() {
                if c > 0 {
                    out.push(d);
                }
                if let Some(s) = cell {
                    let force = force_quote[k % force_quote.len()];
                    k += 1;
                    if force || s.is_empty() || s.contains([d, '"', '\n', '\r']) || s.starts_with('\u{feff}') {
                        out.push('"');
                        out.push_str(&s.replace('"', "\"\""));
                        out.push('"');
                    } else {
                        out.push_str(s);
                    }
                }
            }
            if r + 1 < rows.len() || final_newline {
                out.push_str(if crlf { "\r\n" } else { "\n" });
            }
        }
        (out, starts)
    }

    /// (key, value or NULL) of each cell, line, byte.
    type DecodedRow = (Vec<(String, Option<String>)>, u64, u64);

    fn cell_strategy() -> impl Strategy<Value = Option<String>> {
        prop_oneof![
            1 => Just(None),
            4 => "[ab\",;|\t\n\r ]{0,6}".prop_map(Some),
            2 => any::<String>().prop_map(Some),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

        #[test]
        fn quoted_cells_round_trip(
            width in 1usize..5,
            raw_rows in prop::collection::vec(prop::collection::vec(cell_strategy(), 5), 0..8),
            delim in prop::sample::select(vec![b',', b';', b'\t', b'|']),
            crlf in any::<bool>(),
            final_newline in any::<bool>(),
            force_quote in prop::collection::vec(any::<bool>(), 1..4),
            chunk in prop::sample::select(vec![1usize, 3, 7, 64]),
            max in 1usize..4,
        ) {
            // A row that is one NULL would be a blank line: not a record.
            let rows: Vec<Vec<Option<String>>> = raw_rows
                .into_iter()
                .map(|r| r[..width].to_vec())
                .filter(|r| !(width == 1 && r[0].is_none()))
                .collect();
            let (text, starts) = write_csv(&rows, delim, crlf, final_newline, &force_quote);
            let mut r = CsvReader::new(text.as_bytes(), "p.csv", chunk, opts(false, delim));
            let mut got: Vec<DecodedRow> = Vec::new();
            let mut batch = Batch::default();
            loop {
                batch.clear();
                if r.next_batch(&mut batch, max).unwrap() == 0 {
                    break;
                }
                for i in 0..batch.len() {
                    prop_assert_eq!(&batch.meta[i].error, &None);
                    let cells = batch
                        .tape
                        .record(i)
                        .entries()
                        .map(|(k, v)| {
                            let v = match v.node() {
                                Node::Null => None,
                                _ => Some(v.as_str().unwrap().to_string()),
                            };
                            (k.to_string(), v)
                        })
                        .collect();
                    got.push((cells, batch.meta[i].line, batch.meta[i].byte));
                }
            }
            let expected: Vec<DecodedRow> = rows
                .iter()
                .zip(&starts)
                .map(|(row, &(line, byte))| {
                    (row.iter().enumerate().map(|(c, v)| (column_name(c + 1), v.clone())).collect(), line, byte)
                })
                .collect();
            prop_assert_eq!(got, expected);
            prop_assert_eq!(r.bytes_read(), text.len() as u64);
        }
    }
}
