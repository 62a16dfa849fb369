//! CSV (RFC 4180) decoder: one object per record, keyed by the header's
//! column names (or `column_a`, `column_b`, ... without a header).
//!
//! Our own small tokenizer, because the engine needs what general CSV
//! readers drop: an unquoted empty cell is NULL, a quoted empty cell `""` is
//! the empty string. Every other cell is a string; typing is the engine's job.
//!
//! - Records end at LF, CR or CRLF outside quotes, wherever each occurs (a
//!   file may mix them), as `read_csv` and Python's `csv` read them; line
//!   numbers count each of the three as one line end, inside quoted cells
//!   too, and a quoted line break is data.
//! - A cell that starts with `"` is quoted: it may hold the delimiter,
//!   newlines and `""` (one quote). A cell with text after its closing
//!   quote is kept exactly as written (`"ab"cd` is `"ab"cd`); a quote inside
//!   an unquoted cell is data.
//! - Blank lines are not records.
//! - Lines dropped by `skip_lines` that are neither blank nor comments are
//!   records of their own, marked [`SKIPPED_LINE`]: the pipeline counts
//!   them as skipped and shows them, but never makes them rows.
//! - Bad records (wrong cell count, an unterminated quote at end of input,
//!   invalid UTF-8) are null roots with `meta.error`, for `on_error`.
//!
//! The tokenizer is resumable: when a record spans chunks its scan state
//! (positions relative to the record's start) survives the refill, so every
//! byte is scanned once whatever `chunk_bytes` is.

pub mod dialect;
pub mod range;
pub mod sniff;

use std::io::Read;

use super::byte_search::{first_of_three, first_of_two, split_line};
use super::chunks::Chunks;
use super::{BadRecord, Batch, RecordFault, RecordMeta};
use crate::error::{Result, SanitizeError};
use crate::value::{Node, Tape};
pub use dialect::CsvOptions;

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
    /// Inside quotes, just after the escape byte: the next byte is data.
    EscapeNext,
    /// After an unquoted comment byte: the rest of the line is skipped.
    CommentTail,
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
    /// Line ends inside quoted cells (the terminator is not counted).
    newlines: u64,
    /// Bytes of the line end that ended it: 1 (LF or CR), 2 (CRLF), or 0
    /// at the end of input.
    term: usize,
    /// An unterminated quote: the newlines before its opening quote.
    unterminated: Option<u64>,
}

impl RecordEnd {
    /// A comment line: no cells at all.
    fn is_comment(&self, cells: &[Cell]) -> bool {
        cells.is_empty() && self.len > 0
    }
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
    /// `names` shared with the batches that hold records keyed by them
    /// (`Batch::flat_keys`); made when first needed.
    shared_names: Option<std::sync::Arc<[String]>>,
    width: Option<usize>,
    /// One column (with a name that is not whitespace): a blank line is a NULL value.
    blank_is_null: bool,
    /// Blank lines before the first record of a file without a header, as
    /// runs of (line, byte, count): NULL values if that record has one
    /// column, else nothing (`read_csv` reads them so). Held while the
    /// width is unknown; once that record fixed it (one column), what is
    /// left here is written before the record.
    leading_blanks: std::collections::VecDeque<(u64, u64, u64)>,
    /// The last record scanned ended at a comment byte after data (for the sniffer).
    mid_comment: bool,
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
    /// Lines of `skip_lines` not passed over yet.
    skip_left: u64,
    /// The last byte `pass_over_scanned` dropped was a CR: an LF right
    /// after it ends no second line.
    dropped_cr: bool,
    /// Reading one byte range of the file (formats/csv/range.rs); offsets
    /// are then the file's raw ones.
    bounds: Option<RangeBounds>,
    /// A guessed range stopped inside a record past its read-ahead cap.
    cut: bool,
    /// The current record ran past `max_record_bytes`: where it started
    /// (line, reported byte). Its scanned bytes are dropped as they come.
    oversized: Option<(u64, u64)>,
    /// A header cell that did not decode, for the scan to report.
    header_notice: Option<super::HeaderNotice>,
    /// Plain records are read in one pass ([`CsvReader::scan_plain_record`]);
    /// off only where tests compare that pass with the state machine.
    one_pass: bool,
    /// Records read by that pass, for the tests that check it is taken.
    one_pass_records: u64,
    /// The number of `names` on the probe's flat board (`Batch::known_flat`),
    /// looked up once per batch: `None` before, `Some(None)` when the list
    /// is not posted yet.
    flat_number: Option<Option<u32>>,
}

/// What passing over one of the `skip_lines` lines found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SkipLine {
    /// No line left to skip (or the input ended).
    Done,
    /// A blank or comment line: nothing to report.
    Quiet,
    /// A line with text, at (line, byte): reported as skipped.
    Line(u64, u64),
}

/// The cause of a record that is a line `skip_lines` dropped before the
/// header: not a bad record, never a row, whatever `on_error` says; the
/// scan counts it in `rows_skipped` and shows it in
/// `sanitize_rejects()` as kind `skipped_line` (a skip the sniffer chose
/// would otherwise lose lines in silence).
pub const SKIPPED_LINE: &str = "a line before the header, dropped by csv_skip_lines";

/// What the records after a file's header share, read from the file's head
/// for a reader of a later byte range (formats/csv/range.rs).
#[derive(Clone, Debug)]
pub struct CsvLayout {
    header: Option<Vec<String>>,
    names: Vec<String>,
    width: Option<usize>,
    blank_is_null: bool,
    /// Offset (after a byte-order mark) of the first line after the skipped
    /// lines and the header: the first place a record can start.
    pub data_start: u64,
    /// Without a header: the offset of the first record, which fixes the
    /// width. A range starting before it skips blank lines as the file's
    /// start does, and takes the width from that record itself.
    width_from: Option<u64>,
}

/// The byte range a reader owns: the records that start in `first..end`.
#[derive(Clone, Copy, Debug)]
pub struct RangeBounds {
    /// Raw offset the reader's input starts at: a record boundary, certain
    /// or guessed.
    pub first: u64,
    /// Raw offset at which records stop being the range's.
    pub end: Option<u64>,
    /// Length of the file's byte-order mark: reported offsets do not count it.
    pub bom: u64,
    /// The range's bytes before `first` (a range continued after a cut).
    pub bytes_before: u64,
    /// `first` is a line end that may lie inside a quoted cell.
    pub guessed: bool,
    /// A guessed range stops inside a record reaching past this offset
    /// (see `RangeFollow::Cut`).
    pub cap: Option<u64>,
}

impl<R: Read> CsvReader<R> {
    pub fn new(reader: R, file: &str, chunk_bytes: usize, options: CsvOptions) -> Self {
        let skip_left = options.skip_lines;
        CsvReader {
            input: Chunks::new(reader, file, chunk_bytes),
            options,
            line: 1,
            offset: 0,
            header_read: false,
            header: None,
            names: Vec::new(),
            shared_names: None,
            flat_number: None,
            width: None,
            blank_is_null: false,
            leading_blanks: std::collections::VecDeque::new(),
            mid_comment: false,
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
            skip_left,
            dropped_cr: false,
            bounds: None,
            cut: false,
            oversized: None,
            header_notice: None,
            one_pass: true,
            one_pass_records: 0,
        }
    }

    /// A reader of the records starting in `bounds` (its input starts at
    /// `bounds.first`), numbering lines from `line`; a range after the
    /// file's first takes the header from `layout`.
    pub fn in_range(
        reader: R,
        file: &str,
        chunk_bytes: usize,
        options: CsvOptions,
        layout: Option<CsvLayout>,
        bounds: RangeBounds,
        line: u64,
    ) -> Self {
        let mut r = Self::new(reader, file, chunk_bytes, options);
        r.offset = bounds.first;
        r.line = line;
        r.bounds = Some(bounds);
        if let Some(layout) = layout {
            r.header = layout.header;
            r.header_read = true;
            if layout.width_from.is_none_or(|at| bounds.first.saturating_sub(bounds.bom) >= at) {
                r.names = layout.names;
                r.width = layout.width;
                r.blank_is_null = layout.blank_is_null;
            }
        }
        r
    }

    /// The layout a later range of this file needs: reads the skipped lines,
    /// the header and (without one) the first record, which fixes the width.
    pub fn layout(&mut self) -> Result<CsvLayout> {
        self.start_input()?;
        let data_start = self.offset;
        let mut width = self.width;
        let mut width_from = None;
        while width.is_none() {
            let Some(end) = self.scan_record()? else { break };
            if end.is_comment(&self.cells) || self.is_blank() {
                self.advance(&end);
                continue;
            }
            width = Some(self.cells.len());
            width_from = Some(self.offset);
        }
        let (names, blank_is_null) = match (self.width, width) {
            (None, Some(w)) => ((1..=w).map(column_name).collect(), w == 1),
            _ => (self.names.clone(), self.blank_is_null),
        };
        Ok(CsvLayout { header: self.header.clone(), names, width, blank_is_null, data_start, width_from })
    }

    /// Whether the next record starts at or past the range's end.
    fn past_end(&self) -> bool {
        // Blank lines before a headerless file's first record wait for it
        // (they are values only in a one-column file): the range holding
        // them reads on to that record, past its end, and the next range,
        // whose guess then misses, is read again from where this one stops.
        if self.width.is_none() && !self.leading_blanks.is_empty() {
            return false;
        }
        self.bounds.is_some_and(|b| b.end.is_some_and(|end| self.offset >= end))
    }

    /// A guessed range's current record reaches past its cap.
    fn over_cap(&self) -> bool {
        self.bounds.and_then(|b| b.cap).is_some_and(|cap| self.offset + self.input.pending().len() as u64 > cap)
    }

    /// The offset messages give: counted after the byte-order mark.
    fn reported_offset(&self) -> u64 {
        self.offset - self.bounds.map_or(0, |b| b.bom).min(self.offset)
    }

    /// The header's cell texts as read (None without a header, or for an
    /// empty file); reads the header if not read yet. Names used as keys may
    /// differ: empty ones become `column_<letters>`, duplicates get `_2`, ...
    pub fn header(&mut self) -> Result<Option<Vec<String>>> {
        self.start_input()?;
        Ok(self.header.clone())
    }

    /// Reads the header, once, after the lines to skip (passed over
    /// without a record: [`CsvReader::next_batch`] makes records of them
    /// first). (A byte-order mark is the text decoder's to drop,
    /// source/decode.rs.)
    fn start_input(&mut self) -> Result<()> {
        if !self.header_read {
            while self.skip_line()? != SkipLine::Done {}
            if self.options.has_header {
                self.read_header()?;
            }
            self.header_read = true;
        }
        Ok(())
    }

    /// Passes over the next of the `skip_lines` lines (records: a quoted
    /// line break does not end one), as `read_csv`'s `skip` does: blank
    /// lines count, comment lines do not.
    fn skip_line(&mut self) -> Result<SkipLine> {
        if self.skip_left == 0 {
            return Ok(SkipLine::Done);
        }
        let at = (self.line, self.reported_offset());
        let Some(end) = self.scan_record()? else {
            self.skip_left = 0;
            return Ok(SkipLine::Done);
        };
        let skipped = if end.is_comment(&self.cells) {
            SkipLine::Quiet
        } else {
            self.skip_left -= 1;
            if self.is_blank() {
                SkipLine::Quiet
            } else {
                // Where it started, even when it was too long to hold.
                let (line, byte) = self.oversized.unwrap_or(at);
                SkipLine::Line(line, byte)
            }
        };
        self.advance(&end);
        Ok(skipped)
    }

    fn read_header(&mut self) -> Result<()> {
        while let Some(end) = self.scan_record()? {
            if self.is_blank() || end.is_comment(&self.cells) {
                self.advance(&end);
                continue;
            }
            if let Some((line, byte)) = self.too_large(&end) {
                return Err(SanitizeError::input(format!(
                    "file \"{}\" at line {line} (byte {byte}): the CSV header is longer than max_record_bytes ({} bytes); pass a larger max_record_bytes, or check the dialect (csv_quote, csv_delimiter)",
                    self.input.file, self.options.max_record_bytes
                )));
            }
            if let Some(q) = end.unterminated {
                return Err(SanitizeError::input(format!(
                    "file \"{}\" at line {} (byte {}): the CSV header has an unterminated quoted cell starting at line {}",
                    self.input.file,
                    self.line,
                    self.reported_offset(),
                    self.line + q
                )));
            }
            let rec = &self.input.buf[self.input.start..self.input.start + end.len];
            let mut texts = Vec::with_capacity(self.cells.len());
            for &cell in &self.cells {
                // A header is not a record and cannot be "bad": undecodable
                // bytes become U+FFFD rather than failing the file, and the
                // first such cell is reported (a reject of the scan).
                let raw = String::from_utf8_lossy(&rec[cell.start..cell.end]);
                let lossy = matches!(raw, std::borrow::Cow::Owned(_));
                let mut value = String::new();
                texts.push(match cell_value(&raw, cell, &self.options, &mut value) {
                    Some(v) => v.to_string(),
                    None => String::new(),
                });
                if lossy && self.header_notice.is_none() {
                    let name = texts.last().cloned().unwrap_or_default();
                    let (line, byte, cell) = (self.line, self.reported_offset(), texts.len());
                    self.header_notice = Some(super::HeaderNotice { line, byte, cell, name, encoding: None });
                }
            }
            self.names = header_names(&texts);
            self.width = Some(texts.len());
            self.blank_is_null = texts.len() == 1 && !texts[0].trim().is_empty();
            self.header = Some(texts);
            self.advance(&end);
            return Ok(());
        }
        Ok(())
    }

    /// Scans the record at `buf[start..]`, reading more input as needed and
    /// resuming where the previous call stopped. `None` at end of input. A
    /// comment line is a record without cells. The record ends at the first
    /// LF, CR or CRLF outside quotes.
    fn scan_record(&mut self) -> Result<Option<RecordEnd>> {
        let delim = self.options.delimiter[0];
        let delim_len = self.options.delimiter.len();
        let quote = self.options.quote;
        let escape = self.options.distinct_escape();
        let comment = self.options.comment;
        let fresh =
            self.pos == 0 && self.state == State::CellStart && self.cells.is_empty() && self.oversized.is_none();
        if self.one_pass && fresh && delim_len == 1 && comment.is_none() {
            if let Some(end) = self.scan_plain_record(delim, quote) {
                return Ok(Some(end));
            }
        }
        loop {
            let buf = &self.input.buf[self.input.start..];
            let len = buf.len();
            let eof = self.input.eof;
            match self.state {
                State::CellStart => {
                    if self.pos < len {
                        self.cell_start = self.pos;
                        self.escaped = false;
                        let b = buf[self.pos];
                        if Some(b) == quote {
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
                State::Unquoted => {
                    let rest = &buf[self.pos..];
                    let hit = match comment {
                        // The comment byte only matters before the cell's
                        // end: a second search, over that span alone.
                        Some(c) => {
                            let end = first_of_three(delim, b'\n', b'\r', rest);
                            memchr::memchr(c, &rest[..end.unwrap_or(rest.len())]).or(end)
                        }
                        None => first_of_three(delim, b'\n', b'\r', rest),
                    };
                    match hit {
                        Some(i) => {
                            let at = self.pos + i;
                            let b = buf[at];
                            if b == b'\n' || b == b'\r' {
                                match line_end_len(buf, at, eof) {
                                    Some(term) => {
                                        let cell = self.cell(at);
                                        self.cells.push(cell);
                                        self.pos = at + term;
                                        return Ok(Some(self.record_end(term, None)));
                                    }
                                    // A CR last in the buffer: the next byte
                                    // says whether it is a CRLF.
                                    None => self.pos = at,
                                }
                            } else if Some(b) == comment && b != delim {
                                // A comment line has no cells (spaces before
                                // its marker included, as read_csv reads
                                // them, unless a space is the delimiter or
                                // the quote); a comment after data ends the
                                // record's last cell here.
                                let spaces_only =
                                    buf[..at].iter().all(|&c| c == b' ') && delim != b' ' && quote != Some(b' ');
                                if !(self.cells.is_empty() && self.cell_start == 0 && spaces_only) {
                                    let cell = self.cell(at);
                                    self.cells.push(cell);
                                    self.mid_comment = true;
                                }
                                self.pos = at + 1;
                                self.state = State::CommentTail;
                                continue;
                            } else {
                                // A one-byte delimiter is the byte found (the
                                // line ends and the comment byte went above):
                                // no slice compare per cell.
                                let delimiter = if delim_len == 1 {
                                    Some(true)
                                } else {
                                    buf.get(at..at + delim_len).map(|d| d == self.options.delimiter.as_slice())
                                };
                                match delimiter {
                                    Some(true) => {
                                        let cell = self.cell(at);
                                        self.cells.push(cell);
                                        self.pos = at + delim_len;
                                        self.state = State::CellStart;
                                        continue;
                                    }
                                    // A longer delimiter may go on in the next
                                    // chunk: read more and look again.
                                    None if !eof && self.options.delimiter.starts_with(&buf[at..]) => self.pos = at,
                                    // The first byte of a longer delimiter,
                                    // alone (or cut by the end of input): data.
                                    _ => {
                                        self.pos = at + 1;
                                        continue;
                                    }
                                }
                            }
                        }
                        None => self.pos = len,
                    }
                }
                State::Quoted => {
                    let q = quote.unwrap_or(b'"');
                    let rest = &buf[self.pos..];
                    let hit = first_of_two(q, escape.unwrap_or(q), rest);
                    let span = hit.unwrap_or(rest.len());
                    self.newlines += self.line_ends_in(self.pos, self.pos + span);
                    match hit {
                        Some(i) => {
                            let at = self.pos + i;
                            self.pos = at + 1;
                            if buf[at] == q {
                                self.close_end = self.pos;
                                self.state = State::AfterQuote;
                            } else {
                                self.escaped = true;
                                self.state = State::EscapeNext;
                            }
                            continue;
                        }
                        None => self.pos = len,
                    }
                }
                State::EscapeNext => {
                    if self.pos < len {
                        // The byte before an escaped LF is the escape byte,
                        // not a CR: either line break byte is a line end.
                        if matches!(buf[self.pos], b'\n' | b'\r') {
                            self.newlines += 1;
                        }
                        self.pos += 1;
                        self.state = State::Quoted;
                        continue;
                    }
                }
                State::AfterQuote => {
                    if self.pos < len {
                        if Some(buf[self.pos]) == quote && escape.is_none() {
                            self.escaped = true;
                            self.pos += 1;
                            self.state = State::Quoted;
                        } else {
                            // The delimiter, the line end or a literal tail.
                            self.state = State::Unquoted;
                        }
                        continue;
                    }
                }
                State::CommentTail => match memchr::memchr2(b'\n', b'\r', &buf[self.pos..]) {
                    Some(i) => {
                        let at = self.pos + i;
                        match line_end_len(buf, at, eof) {
                            Some(term) => {
                                self.pos = at + term;
                                return Ok(Some(self.record_end(term, None)));
                            }
                            None => self.pos = at,
                        }
                    }
                    None => self.pos = len,
                },
            }
            if self.over_cap() {
                self.cut = true;
                return Ok(None);
            }
            // Past the limit (a CR that may belong to the line end does not
            // count): the record is bad whatever follows, so what was
            // scanned of it is dropped before reading more.
            if self.pos > self.options.max_record_bytes.saturating_add(1) {
                self.pass_over_scanned();
            }
            if self.input.fill()?.is_some() {
                continue;
            }
            // A CR that waited for the next byte: at the end of input it is
            // a line end of its own (the next pass sees `eof`).
            if matches!(self.state, State::Unquoted | State::CommentTail)
                && self.input.pending().get(self.pos) == Some(&b'\r')
            {
                continue;
            }
            // End of input: whatever was scanned is the last record.
            let len = self.input.pending().len();
            return Ok(match self.state {
                State::CellStart if self.cells.is_empty() => None,
                State::CommentTail => {
                    self.pos = len;
                    Some(self.record_end(0, None))
                }
                State::Quoted | State::EscapeNext => {
                    self.cells.push(Cell { start: self.cell_start, end: len, kind: CellKind::Escaped });
                    self.pos = len;
                    Some(self.record_end(0, Some(self.quote_newlines)))
                }
                state => {
                    if state == State::CellStart {
                        // After a trailing delimiter: one more, empty cell.
                        self.cell_start = len;
                        self.cell_quoted = false;
                    }
                    let cell = self.cell(len);
                    self.cells.push(cell);
                    self.pos = len;
                    Some(self.record_end(0, None))
                }
            });
        }
    }

    /// The record at `buf[start..]` in one pass when it is plain: no quote
    /// byte before its line end, which is in the buffer and needs no next
    /// byte to tell a CRLF. Its cells are found by [`split_line`], as the
    /// state machine of [`CsvReader::scan_record`] finds them cell by cell.
    /// Otherwise the pass stops at the start of the cell holding the quote
    /// (or reaching past the buffer), with the cells before it kept and the
    /// position there: where the state machine would stand, which goes on
    /// from it (`None`). Only for a one-byte delimiter, no comment byte,
    /// and a record not yet begun.
    fn scan_plain_record(&mut self, delim: u8, quote: Option<u8>) -> Option<RecordEnd> {
        let buf = &self.input.buf[self.input.start..];
        let cells = &mut self.cells;
        let mut start = 0;
        // Without a quote byte, LF stands in (a line end stops it anyway).
        let found = split_line(buf, delim, quote.unwrap_or(b'\n'), |at| {
            cells.push(Cell { start, end: at, kind: CellKind::Plain });
            start = at + 1;
        });
        let end = found
            .filter(|&at| matches!(buf[at], b'\n' | b'\r'))
            .and_then(|at| line_end_len(buf, at, self.input.eof).map(|term| (at, term)));
        let Some((at, term)) = end else {
            // A quote (opening a quoted cell, or data inside an unquoted
            // one), or a line end not yet read: the state machine reads on
            // from the start of this cell, after the cells already found.
            self.pos = start;
            return None;
        };
        cells.push(Cell { start, end: at, kind: CellKind::Plain });
        self.pos = at + term;
        self.one_pass_records += 1;
        Some(self.record_end(term, None))
    }

    /// Line ends in `from..to` of the current record, inside quotes: each
    /// LF, CR or CRLF is one (an LF right after a CR is the CRLF's, also
    /// when the CR was the byte before `from`).
    fn line_ends_in(&self, from: usize, to: usize) -> u64 {
        let buf = &self.input.buf[self.input.start..];
        let span = &buf[from..to];
        let mut prev_cr = if from > 0 { buf[from - 1] == b'\r' } else { self.dropped_cr };
        let mut next = 0;
        let mut n = 0;
        for i in memchr::memchr2_iter(b'\n', b'\r', span) {
            let after_cr = prev_cr && i == next;
            if span[i] == b'\r' || !after_cr {
                n += 1;
            }
            prev_cr = span[i] == b'\r';
            next = i + 1;
        }
        n
    }

    /// The current cell, ending at `end` (the delimiter, the line end or
    /// the end of input).
    fn cell(&self, end: usize) -> Cell {
        let start = self.cell_start;
        let kind = if !self.cell_quoted {
            CellKind::Plain
        } else if !self.escaped && end == self.close_end {
            CellKind::Quoted
        } else {
            CellKind::Escaped
        };
        Cell { start, end, kind }
    }

    fn record_end(&self, term: usize, unterminated: Option<u64>) -> RecordEnd {
        RecordEnd { len: self.pos, newlines: self.newlines, term, unterminated }
    }

    /// An empty line: one unquoted empty cell.
    fn is_blank(&self) -> bool {
        matches!(self.cells.as_slice(), [Cell { start, end, kind: CellKind::Plain }] if start == end)
    }

    /// One blank line before a one-column file's first record, as the
    /// NULL value (or empty string, when `""` is no null string) that a
    /// later blank line is.
    fn push_blank(&mut self, batch: &mut Batch, line: u64, byte: u64) {
        let blank = [Cell { start: 0, end: 0, kind: CellKind::Plain }];
        let error =
            emit(b"", &blank, 1, &mut self.keys, &self.names, &self.options, &mut self.scratch, &mut batch.tape);
        batch.meta.push(RecordMeta { line, byte, error });
    }

    /// Whether the probe's flat board (`Batch::known_flat`) holds the
    /// shape of the well-formed record of `len` bytes at `input.start`
    /// and `width` cells, written from its cells' text as [`emit`] would
    /// put them on the tape and the probe's cache would then code them: a
    /// NULL string is NULL, any other cell its value (a quoted one
    /// unescaped). A short record (`null_padding`) or text that is not
    /// UTF-8 is not looked up: [`emit`] decodes it (and reports the last).
    fn known_flat(&mut self, batch: &mut Batch, len: usize, width: usize) -> bool {
        let Some(known) = batch.known_flat.as_mut() else { return false };
        if width == 0 || self.cells.len() != width {
            return false;
        }
        let names = &self.names;
        let Some(number) = *self.flat_number.get_or_insert_with(|| known.board().number_of(names)) else {
            return false;
        };
        // Asked before the text is validated: `emit` validates it again, so
        // a reader that is not looking must not.
        if !known.start(number) {
            return false;
        }
        let rec = &self.input.buf[self.input.start..self.input.start + len];
        let Ok(text) = super::utf8::validate(rec) else { return known.finish(false) };
        let nulls = self.options.nulls();
        let mut codes = known.cells();
        for &cell in &self.cells {
            // An unquoted cell is coded from its bytes: cut at ASCII
            // delimiters of valid UTF-8, they are its text.
            let Some(raw) = rec.get(cell.start..cell.end) else { return known.finish(false) };
            let value = match cell.kind {
                CellKind::Plain => Some(raw).filter(|raw| !nulls.hold(raw)),
                // (Cells end at ASCII bytes of valid UTF-8: never None.)
                _ => match text.get(cell.start..cell.end) {
                    Some(raw) => cell_value(raw, cell, &self.options, &mut self.scratch).map(str::as_bytes),
                    None => return known.finish(false),
                },
            };
            match value {
                Some(v) => codes.push_text(v),
                None => codes.push_null(),
            }
        }
        known.finish(true)
    }

    /// Tells `batch` that its records from `first` on are keyed by
    /// `names` in order, as `emit` and `push_blank` write every good
    /// record (`Batch::flat_keys`); a batch that already held records under
    /// other keys, or under no promise, gets none.
    fn share_names(&mut self, batch: &mut Batch, first: usize) {
        if self.names.is_empty() {
            batch.flat_keys = None;
            return;
        }
        let names = match &self.shared_names {
            Some(n) if **n == *self.names => std::sync::Arc::clone(n),
            _ => {
                let n: std::sync::Arc<[String]> = self.names.clone().into();
                self.shared_names = Some(std::sync::Arc::clone(&n));
                n
            }
        };
        let keeps = first == 0 || batch.flat_keys.as_ref().is_some_and(|k| **k == *names);
        batch.flat_keys = keeps.then_some(names);
    }

    /// Drops the scanned part of a record longer than `max_record_bytes`,
    /// keeping the tokenizer's state (inside quotes or not, line breaks
    /// counted), so the record's end is still found where it is.
    fn pass_over_scanned(&mut self) {
        if self.oversized.is_none() {
            self.oversized = Some((self.line, self.reported_offset()));
        }
        // The byte before the next one scanned is gone: whether it was a
        // CR still decides if an LF after it is a line end of its own.
        self.dropped_cr = self.pos > 0 && self.input.buf[self.input.start + self.pos - 1] == b'\r';
        self.input.start += self.pos;
        self.offset += self.pos as u64;
        self.pos = 0;
        self.cell_start = 0;
        self.close_end = 0;
        self.cells.clear();
    }

    /// The record's length without its line end (LF, CRLF or CR): what
    /// `max_record_bytes` measures.
    fn content_len(&self, end: &RecordEnd) -> usize {
        end.len - end.term
    }

    /// Where a record too long for `max_record_bytes` started, if this one
    /// is: passed over while scanned, or read whole and just over.
    fn too_large(&mut self, end: &RecordEnd) -> Option<(u64, u64)> {
        self.oversized.take().or_else(|| {
            (self.content_len(end) > self.options.max_record_bytes).then(|| (self.line, self.reported_offset()))
        })
    }

    /// Forgets the record just scanned, which the next scan reads again.
    fn unscan(&mut self) {
        self.state = State::CellStart;
        self.pos = 0;
        self.newlines = 0;
        self.cells.clear();
    }

    /// Consumes the scanned record and resets the scan state.
    fn advance(&mut self, end: &RecordEnd) {
        self.oversized = None;
        self.input.start += end.len;
        self.offset += end.len as u64;
        self.line += end.newlines + u64::from(end.term > 0);
        self.state = State::CellStart;
        self.pos = 0;
        self.newlines = 0;
        self.cells.clear();
    }
}

/// One record as the sniffer sees it (formats/csv/sniff.rs).
#[derive(Clone, Copy, Debug, Default)]
pub struct RawShape {
    /// A comment line (no cells).
    pub comment: bool,
    /// An empty line.
    pub blank: bool,
    /// Some cell was quoted.
    pub quoted: bool,
    /// The record ended inside quotes at the end of input.
    pub unterminated: bool,
    /// The last cell is an unquoted empty one (a trailing delimiter).
    pub last_empty: bool,
    /// A comment byte ended the record after data (`3,C#`).
    pub mid_comment: bool,
    /// An unquoted cell starts with `"` while `"` is not this reading's
    /// quote: the text was likely quoted with `"` (the sniffer's hint).
    pub stray_quote: bool,
    /// A quoted cell has text after its closing quote (`"a\"b"` read with
    /// `""` as the only escape): the escape is likely another.
    pub dirty_quote: bool,
    /// An unquoted cell holds this reading's quote byte (`a"b`): quoting
    /// that does not follow RFC 4180, a sign the reading is not the file's.
    pub inner_quote: bool,
    /// A quoted cell holds a doubled quote (`"Smith, ""Bob"""`) and closes
    /// at its end, read with `""` as the escape: evidence for RFC 4180
    /// escaping.
    pub doubled_quote: bool,
}

impl<R: Read> CsvReader<R> {
    /// The next record's cells as text (`None`: a null string), with its
    /// shape; `None` at end of input. For the sniffer: no header, no
    /// width, nothing is bad.
    pub fn next_raw(&mut self, texts: &mut Vec<Option<String>>) -> Result<Option<RawShape>> {
        self.start_input()?;
        let Some(end) = self.scan_record()? else { return Ok(None) };
        let shape = RawShape {
            comment: end.is_comment(&self.cells),
            blank: self.is_blank(),
            quoted: self.cells.iter().any(|c| c.kind != CellKind::Plain),
            unterminated: end.unterminated.is_some(),
            last_empty: self.cells.len() > 1
                && self.cells.last().is_some_and(|c| c.kind == CellKind::Plain && c.start == c.end),
            mid_comment: std::mem::take(&mut self.mid_comment),
            stray_quote: false,
            dirty_quote: false,
            inner_quote: false,
            doubled_quote: false,
        };
        let mut shape = shape;
        texts.clear();
        let rec = &self.input.buf[self.input.start..self.input.start + end.len];
        let (quote, escape) = (self.options.quote, self.options.distinct_escape());
        for cell in &self.cells {
            let raw = &rec[cell.start..cell.end];
            match cell.kind {
                CellKind::Plain => {
                    shape.stray_quote |= quote != Some(b'"') && raw.first() == Some(&b'"');
                    shape.inner_quote |= quote.is_some_and(|q| memchr::memchr(q, raw).is_some());
                }
                kind => {
                    let closes = closes_at_end(raw, quote.unwrap_or(b'"'), escape);
                    shape.dirty_quote |= !closes;
                    // Without a distinct escape, a quoted cell is `Escaped`
                    // only for a `""` inside or text after its close.
                    shape.doubled_quote |= closes && escape.is_none() && kind == CellKind::Escaped;
                }
            }
        }
        for &cell in &self.cells {
            let raw = String::from_utf8_lossy(&rec[cell.start..cell.end]);
            texts.push(cell_value(&raw, cell, &self.options, &mut self.scratch).map(str::to_string));
        }
        self.advance(&end);
        Ok(Some(shape))
    }
}

impl<R: Read> super::RecordReader for CsvReader<R> {
    fn take_header_notice(&mut self) -> Option<super::HeaderNotice> {
        self.header_notice.take()
    }

    fn bytes_read(&self) -> u64 {
        match self.bounds {
            // The bytes of the records the range owns (ranges overlap in
            // what they read, not in what they own).
            Some(b) => b.bytes_before + self.offset.saturating_sub(b.first.max(b.bom)),
            None => self.input.bytes_read,
        }
    }

    fn lines_read(&self) -> u64 {
        if self.bounds.is_some() {
            self.line - 1
        } else {
            0
        }
    }

    fn guessed_start(&self) -> Option<u64> {
        self.bounds.filter(|b| b.guessed).map(|b| b.first)
    }

    fn follow(&self) -> super::RangeFollow {
        match self.bounds {
            None => super::RangeFollow::Unknown,
            Some(_) if self.cut => super::RangeFollow::Cut(super::Resume {
                offset: self.offset,
                line: self.line,
                bytes: self.bytes_read(),
            }),
            Some(_) => super::RangeFollow::At(self.offset),
        }
    }

    /// Appends up to `max_records` records to `batch`; returns how many.
    /// Zero means the file is exhausted.
    fn next_batch(&mut self, batch: &mut Batch, max_records: usize) -> Result<usize> {
        if max_records == 0 || self.cut {
            return Ok(0);
        }
        let first = batch.len();
        let mut added = 0;
        self.flat_number = None;
        // The lines to skip come first, each line with text a record of its
        // own (never a row): a skip loses no line in silence. One at a
        // time, so a large `skip_lines` holds no list of them.
        while !self.header_read && added < max_records {
            match self.skip_line()? {
                SkipLine::Done => break,
                SkipLine::Quiet => {}
                SkipLine::Line(line, byte) => {
                    batch.push_bad(line, byte, RecordFault::SkippedLine, SKIPPED_LINE.to_string());
                    added += 1;
                }
            }
        }
        if added == max_records {
            self.share_names(batch, first);
            return Ok(added);
        }
        self.start_input()?;
        while added < max_records {
            // Leading blank lines of a one-column file are this range's,
            // wherever its end is.
            if self.width.is_some() {
                if let Some(run) = self.leading_blanks.front_mut() {
                    let (line, byte) = (run.0, run.1);
                    run.0 += 1;
                    run.2 -= 1;
                    if run.2 == 0 {
                        self.leading_blanks.pop_front();
                    }
                    self.push_blank(batch, line, byte);
                    added += 1;
                    continue;
                }
            }
            if self.past_end() {
                break;
            }
            let Some(end) = self.scan_record()? else { break };
            if let Some((line, byte)) = self.too_large(&end) {
                let what =
                    if end.unterminated.is_some() { "the record (an unterminated quoted cell)" } else { "the record" };
                batch.push_bad(
                    line,
                    byte,
                    RecordFault::TooLarge,
                    super::too_large_cause(what, self.options.max_record_bytes),
                );
                self.advance(&end);
                added += 1;
                continue;
            }
            // (Before the first record of a file without a header the width
            // is not known yet: see the match below.)
            if end.is_comment(&self.cells) || (self.is_blank() && !self.blank_is_null && self.width.is_some()) {
                // A blank line is no record, except in a one-column file,
                // where it is a NULL value (as `read_csv` reads it), unless
                // the column has no name but whitespace (a whitespace-only
                // file gives no rows).
                self.advance(&end);
                continue;
            }
            let width = match self.width {
                Some(w) => w,
                None => {
                    if self.is_blank() {
                        // Kept until the first record says whether a blank
                        // line is a value (one column) or nothing.
                        let (line, byte) = (self.line, self.reported_offset());
                        match self.leading_blanks.back_mut() {
                            Some((first, _, count)) if *first + *count == line => *count += 1,
                            _ => self.leading_blanks.push_back((line, byte, 1)),
                        }
                        self.advance(&end);
                        continue;
                    }
                    // Without a header the first record fixes the columns.
                    let w = self.cells.len();
                    self.names = (1..=w).map(column_name).collect();
                    self.width = Some(w);
                    self.blank_is_null = w == 1;
                    if w != 1 {
                        self.leading_blanks.clear();
                    } else if !self.leading_blanks.is_empty() {
                        // The blank lines come first, as many a batch as
                        // fit: this record is read again after them.
                        self.unscan();
                        continue;
                    }
                    w
                }
            };
            // Empty cells past the last column are trailing delimiters
            // (`1,2,` under a two-column header), not data: dropped.
            while self.cells.len() > width
                && self.cells.last().is_some_and(|c| c.kind == CellKind::Plain && c.start == c.end)
            {
                self.cells.pop();
            }
            let error = if let Some(q) = end.unterminated {
                Some(BadRecord::new(
                    RecordFault::Malformed,
                    format!("unterminated quoted cell starting at line {}", self.line + q),
                ))
            } else if self.cells.len() > width || (self.cells.len() < width && !self.options.null_padding) {
                Some(BadRecord::new(
                    RecordFault::Malformed,
                    format!("expected {width} cells but found {}", self.cells.len()),
                ))
            } else if self.known_flat(batch, end.len, width) {
                // The probe has this shape (value/flat_shape.rs): no tape.
                batch.tape.roots.push(super::KNOWN_SHAPE);
                None
            } else {
                emit(
                    &self.input.buf[self.input.start..self.input.start + end.len],
                    &self.cells,
                    width,
                    &mut self.keys,
                    &self.names,
                    &self.options,
                    &mut self.scratch,
                    &mut batch.tape,
                )
            };
            if error.is_some() {
                // Keep roots aligned with meta: a bad record is a null on the tape.
                batch.tape.roots.push(batch.tape.nodes.len() as u32);
                batch.tape.nodes.push(Node::Null);
            }
            batch.meta.push(RecordMeta { line: self.line, byte: self.reported_offset(), error });
            self.advance(&end);
            added += 1;
        }
        if added > 0 {
            self.share_names(batch, first);
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

/// Writes one well-formed record as an object of `width` entries (cells
/// past the record's last are NULL: `null_padding`); returns the error text
/// if the record is not UTF-8 (then nothing is written).
#[allow(clippy::too_many_arguments)]
fn emit(
    rec: &[u8],
    cells: &[Cell],
    width: usize,
    keys: &mut KeyCache,
    names: &[String],
    options: &CsvOptions,
    scratch: &mut String,
    tape: &mut Tape,
) -> Option<BadRecord> {
    let text = match super::utf8::validate(rec) {
        Ok(t) => t,
        Err(at) => {
            return Some(BadRecord::new(
                RecordFault::BadEncoding,
                format!("invalid UTF-8 at byte {at} of the record (undecodable bytes for the input encoding)"),
            ))
        }
    };
    keys.refresh(names, tape);
    // The record's text goes on the tape once, and a cell that is a part of
    // it is a range of it: one copy per record, not a call per cell. Only a
    // quoted cell with doubled quotes, unescaped into `scratch`, is copied.
    let (base, _) = tape.push_text(text);
    let root = tape.nodes.len();
    tape.nodes.reserve(2 * width + 1);
    let open = tape.open(true);
    let mut evidence = false;
    let nulls = options.nulls();
    for (i, &range) in keys.ranges.iter().enumerate().take(width) {
        let value = match cells.get(i) {
            // An unquoted cell is its bytes of the record: its range of the
            // text just pushed, found without slicing the text (the cells
            // end at ASCII bytes of valid UTF-8, so at character boundaries).
            Some(cell) if cell.kind == CellKind::Plain => {
                let raw = &rec[cell.start..cell.end];
                if nulls.hold(raw) {
                    Node::Null
                } else {
                    evidence = true;
                    Node::Str { start: base + cell.start as u32, len: raw.len() as u32 }
                }
            }
            Some(&cell) => match cell_value(&text[cell.start..cell.end], cell, options, scratch) {
                Some(v) => {
                    evidence = true;
                    let (start, len) = match offset_in(text, v) {
                        Some(offset) => (base + offset as u32, v.len() as u32),
                        None => tape.push_text(v),
                    };
                    Node::Str { start, len }
                }
                None => Node::Null,
            },
            None => Node::Null,
        };
        tape.push_entry(range, value);
    }
    tape.close(open, width as u32, evidence);
    tape.push_root(root);
    None
}

/// Where `part` starts in `whole` when it is a slice of it (a cell's text
/// cut from its record), by address; `None` for text elsewhere (an
/// unescaped cell in the scratch buffer).
fn offset_in(whole: &str, part: &str) -> Option<usize> {
    let offset = (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize);
    (offset <= whole.len() && part.len() <= whole.len() - offset).then_some(offset)
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
/// None for an unquoted cell that is one of the null strings (by default
/// only the empty one).
fn cell_value<'a>(raw: &'a str, cell: Cell, options: &CsvOptions, scratch: &'a mut String) -> Option<&'a str> {
    match cell.kind {
        CellKind::Plain if options.nulls().hold(raw.as_bytes()) => None,
        CellKind::Plain => Some(raw),
        CellKind::Quoted => Some(&raw[1..raw.len() - 1]),
        CellKind::Escaped => {
            unescape(raw, options.quote.unwrap_or(b'"'), options.distinct_escape(), scratch);
            Some(scratch.as_str())
        }
    }
}

/// Unescapes a quoted cell (`raw` starts at its opening quote). Inside the
/// quotes, `""` is one quote, or with a distinct escape byte (`\`) that
/// byte followed by the quote or by itself is that byte (before anything
/// else it is kept as written). A cell with text after its closing quote
/// is not one quoted value: it is its raw text, quotes and all.
fn unescape(raw: &str, quote: u8, escape: Option<u8>, out: &mut String) {
    out.clear();
    let bytes = raw.as_bytes();
    let mut seg = 1;
    let mut closed = false;
    loop {
        let hit = match escape {
            Some(e) => memchr::memchr2(quote, e, &bytes[seg..]),
            None => memchr::memchr(quote, &bytes[seg..]),
        };
        let Some(i) = hit else { break }; // unterminated: only for bad records
        let at = seg + i;
        out.push_str(&raw[seg..at]);
        if Some(bytes[at]) == escape {
            match bytes.get(at + 1) {
                Some(&next) if next == quote || Some(next) == escape => {
                    out.push(next as char);
                    seg = at + 2;
                }
                _ => {
                    out.push(bytes[at] as char);
                    seg = at + 1;
                }
            }
        } else if escape.is_none() && bytes.get(at + 1) == Some(&quote) {
            out.push(quote as char);
            seg = at + 2;
        } else {
            seg = at + 1;
            closed = true;
            break;
        }
    }
    if closed && seg < raw.len() {
        // Text after the closing quote: the cell is not one quoted value
        // (`"Others" includes`, a quote the sniffer could not see, or a
        // dialect's other escape). It is kept exactly as written; taking
        // the quotes out would change the value in silence.
        out.clear();
        out.push_str(raw);
        return;
    }
    out.push_str(&raw[seg..]);
}

/// Whether a quoted cell (`raw` from its opening quote) closes at its
/// last byte: no text after the closing quote (the sniffer's test of an
/// escape candidate).
fn closes_at_end(raw: &[u8], quote: u8, escape: Option<u8>) -> bool {
    let mut i = 1;
    while i < raw.len() {
        let b = raw[i];
        if Some(b) == escape && matches!(raw.get(i + 1), Some(&n) if n == quote || Some(n) == escape) {
            i += 2;
        } else if b == quote {
            if escape.is_none() && raw.get(i + 1) == Some(&quote) {
                i += 2;
            } else {
                return i + 1 == raw.len();
            }
        } else {
            i += 1;
        }
    }
    false
}

/// Makes the line in a bad record's message the file's: a range's reader
/// numbers lines from its own first line (scan/mod.rs `LineCursor`
/// adds the lines of the ranges before it, to the message too).
pub fn shift_error_line(error: &mut String, by: u64) {
    const PREFIX: &str = "unterminated quoted cell starting at line ";
    if let Some(line) = error.strip_prefix(PREFIX).and_then(|n| n.parse::<u64>().ok()) {
        *error = format!("{PREFIX}{}", line + by);
    }
}

/// The length of the line end at `buf[at]` (an LF or a CR): 2 for a
/// CRLF, else 1; `None` for a CR last in `buf` before the end of input
/// (the next byte decides).
fn line_end_len(buf: &[u8], at: usize, eof: bool) -> Option<usize> {
    match (buf[at], buf.get(at + 1)) {
        (b'\r', Some(b'\n')) => Some(2),
        (b'\r', None) if !eof => None,
        _ => Some(1),
    }
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
#[path = "reader_tests.rs"]
mod tests;
