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
use crate::error::{Result, SanitizeError};
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

    /// Reads the header, once. (A byte-order mark is the text decoder's to
    /// drop, source/decode.rs.)
    fn start_input(&mut self) -> Result<()> {
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
                return Err(SanitizeError::input(format!(
                    "file \"{}\" at line {} (byte {}): the CSV header has an unterminated quoted cell starting at line {}",
                    self.input.file,
                    self.line,
                    self.offset,
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

    /// The header's cells: files of one directory scan share them. Reads
    /// the header line only; `None` without a header or for an empty file.
    fn signature(&mut self) -> Result<Option<super::Signature>> {
        if !self.options.has_header {
            return Ok(None);
        }
        Ok(self.header()?.map(super::Signature::CsvHeader))
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
#[path = "csv_tests.rs"]
mod tests;
