//! Decoders: bytes in, records on a [`crate::value::Tape`] out, each with its
//! location. None of them infers or routes anything.

mod byte_search;
pub mod byte_source;
mod chunks;
pub mod csv;
#[cfg(test)]
mod fuzz;
#[cfg(test)]
pub(crate) mod harness;
pub mod json;
pub mod parquet;
#[cfg(feature = "parser-bench")]
pub mod parser_bench;
#[cfg(test)]
mod record_limit_tests;
pub mod utf8;
pub mod xml;

use crate::error::Result;

/// A decoder over one file: appends up to `max_records` records to a batch.
///
/// Contract for every implementation:
/// - each record is one tape root and one [`RecordMeta`] (`batch.meta.len()
///   == batch.tape.roots.len()` after every call);
/// - a record that cannot be decoded is still a record: its root is a
///   `Node::Null` and `meta.error` says why (1-based line, byte offset of
///   its start); `on_error` decides what happens to it, not the decoder;
/// - a good record's root is a `Node::Object`;
/// - the records are the same whatever `read_chunk_bytes` and `max_records`;
/// - I/O failures are `Err` (they are not row errors);
/// - returns 0 only when the file is exhausted.
pub trait RecordReader {
    fn next_batch(&mut self, batch: &mut Batch, max_records: usize) -> Result<usize>;
    /// Bytes consumed from the source so far.
    fn bytes_read(&self) -> u64;

    /// Lines consumed so far, where the line numbers of a later byte range
    /// of the same file depend on it (JSON Lines ranges); else 0.
    fn lines_read(&self) -> u64 {
        0
    }

    /// Where this range's first record starts, when that was guessed (a
    /// CSV range opened at a line end that may lie inside a quoted cell):
    /// the consumer checks it against where the previous range's records
    /// ended (scan/ordered.rs). `None`: the start is certain, or the
    /// range owns no record.
    fn guessed_start(&self) -> Option<u64> {
        None
    }

    /// Where the next range's records start, once this range is done
    /// (see [`RangeFollow`]).
    fn follow(&self) -> RangeFollow {
        RangeFollow::Unknown
    }

    /// What a typed source (Parquet) declares before any row is read;
    /// `None` for text formats. Call it before the first `next_batch`.
    fn declaration(&mut self) -> Option<Declaration> {
        None
    }

    /// Whether every value fits the type its [`RecordReader::declaration`]
    /// declares where the declaration alone cannot tell (its `exact` is
    /// false): then the declaration decides every value after all. Read
    /// only by a probe that would otherwise read every row; `false` when
    /// it cannot be told.
    fn declared_values_fit(&mut self) -> bool {
        false
    }

    /// What the files of one directory scan must share, read only as far
    /// as needed (the CSV header line; the XML root's start tag); `None`
    /// when the format has none or the file is empty. Call it on a fresh
    /// reader, instead of reading records.
    fn signature(&mut self) -> Result<Option<Signature>> {
        Ok(None)
    }

    /// A header cell whose bytes did not decode (CSV), once, after the
    /// `next_batch` that read the header; `None` for other formats.
    fn take_header_notice(&mut self) -> Option<HeaderNotice> {
        None
    }

    /// The arrow schema of the columns this reader could hand out whole
    /// ([`Batch::columns`]), with each top-level column's record key;
    /// `None` when it cannot (a text format, or Parquet columns that need
    /// more than one arrow column per value: VARIANT, INTERVAL, wide
    /// decimals).
    fn column_schema(&self) -> Option<(arrow::datatypes::SchemaRef, std::sync::Arc<[String]>)> {
        None
    }

    /// From the next batch on, fill [`Batch::columns`] instead of the tape
    /// (after [`RecordReader::column_schema`] said it can). `read[i]`:
    /// whether column i is needed; a reader may leave the others out of
    /// its batches (Parquet does, before its first batch).
    fn emit_columns(&mut self, _read: &[bool]) {}
}

/// A batch's records as arrow columns, handed out whole by a typed reader
/// (Parquet) for a router that writes columns without a tape
/// (route/columnar.rs); `keys[i]` is column i's record key.
#[derive(Debug)]
pub struct ColumnRows {
    pub rows: arrow::record_batch::RecordBatch,
    pub keys: std::sync::Arc<[String]>,
}

impl ColumnRows {
    /// The bytes of these rows' values (of the slice, not of the buffers
    /// it shares with the rest of its arrow batch).
    pub fn bytes(&self) -> usize {
        use arrow::array::Array;
        self.rows.columns().iter().map(|c| c.to_data().get_slice_memory_size().unwrap_or(0)).sum()
    }
}

/// A CSV header cell whose bytes were not text in the encoding the file
/// was read as: its column's name holds U+FFFD in their place. A header is
/// no record (there is no row to skip or null), so it reaches the scan on
/// the batch ([`Batch::header_notice`]), which records it as a reject: a
/// name read wrong is the first sign of a file in another encoding.
#[derive(Clone, Debug, PartialEq)]
pub struct HeaderNotice {
    /// Where the header starts.
    pub line: u64,
    pub byte: u64,
    /// The cell, 1-based.
    pub cell: usize,
    /// The cell's text as read, U+FFFD and all.
    pub name: String,
    /// The encoding the file was read as, when not UTF-8.
    pub encoding: Option<crate::options::TextEncoding>,
}

impl HeaderNotice {
    /// What the reject says: the file is probably not in the encoding it
    /// was read as, and which option reads it right.
    pub fn cause(&self) -> String {
        let (cell, name) = (self.cell, &self.name);
        let read_as = self.encoding.map_or("utf-8", |e| e.name());
        let others = match self.encoding {
            None | Some(crate::options::TextEncoding::Utf8) => "'windows-1252' or 'latin-1'",
            Some(_) => "'utf-8', 'windows-1252' or 'latin-1'",
        };
        let text = if read_as == "utf-8" { "UTF-8".to_string() } else { read_as.to_string() };
        format!(
            "the CSV header's cell {cell} holds bytes that are not {text} text, read as \"{name}\" (U+FFFD in their place): the file is not {text}; pass input_text_encoding := {others}, whichever it is in, to read its names and values"
        )
    }
}

/// How a byte range's records meet the next range's, for formats whose
/// ranges start at a guessed record boundary (CSV: a line end may lie
/// inside a quoted cell). Offsets are the file's raw byte offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeFollow {
    /// Nothing to check: a whole file, or a JSON Lines range (every line
    /// end is a record end).
    Unknown,
    /// The record after this range's last starts here.
    At(u64),
    /// No record started in the range (a record of an earlier range spans
    /// it): the next record starts where the previous range said.
    AsBefore,
    /// The range stopped inside a record that ran further past its end than
    /// a guessed start may read ahead (memory stays bounded when a guess is
    /// wrong): the consumer goes on from here once the guess is confirmed.
    Cut(Resume),
}

/// A certain place to (re)start a range's reading: the raw offset of a
/// record boundary, the range's line number there (1 at the range's first
/// line) and the bytes of the range before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resume {
    pub offset: u64,
    pub line: u64,
    pub bytes: u64,
}

/// A typed source's declaration (see [`RecordReader::declaration`]).
pub struct Declaration {
    /// One synthetic record whose values have the declared column types,
    /// so that inference keeps declared columns even when every value is
    /// null or empty. Never a row.
    pub sample: Batch,
    /// The rows the metadata states.
    pub rows: u64,
    /// True when the declared schema alone decides every value's column:
    /// no value can fall outside its declared type. False when values may
    /// not fit their declaration (a Parquet decimal holding more digits than
    /// its precision), so the probe must read the rows.
    pub exact: bool,
}

/// What files must share to be read as one input (directory mode, globs,
/// lists) unless `union_by_name` is given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Signature {
    /// A CSV header's cells.
    CsvHeader(Vec<String>),
    /// An XML document's root element name.
    XmlRoot(String),
}

impl Signature {
    /// The message when `file`'s signature is `self` and `first`'s is
    /// `expected`: it names `union_by_name`, which reads them anyway.
    pub fn mismatch(&self, file: &str, expected: &Signature, first: &str) -> String {
        match (self, expected) {
            (Signature::XmlRoot(root), Signature::XmlRoot(want)) => format!(
                "the root element of \"{file}\" is <{root}> but the root of \"{first}\" is <{want}>; documents read as one input must share one root element: pass union_by_name := true to read them together anyway"
            ),
            (Signature::CsvHeader(h), Signature::CsvHeader(want)) => format!(
                "the header of \"{file}\" ({}) differs from the header of \"{first}\" ({}); files read as one input must share one header: pass union_by_name := true to match their columns by name",
                h.join(","),
                want.join(",")
            ),
            _ => format!("\"{file}\" and \"{first}\" are different kinds of file"),
        }
    }
}

/// Column names made unique, as CSV headers and Parquet schemas need them:
/// an empty name becomes `column_<letters>` of its position, and a name
/// seen before gets `_2`, `_3`, ... (skipping names the input already has).
/// No column is dropped, so no column's values vanish under another's name.
pub fn dedupe_names(texts: &[String]) -> Vec<String> {
    use std::collections::{HashMap, HashSet};
    let bases: Vec<String> =
        texts.iter().enumerate().map(|(i, t)| if t.is_empty() { csv::column_name(i + 1) } else { t.clone() }).collect();
    let all: HashSet<&str> = bases.iter().map(String::as_str).collect();
    let mut used: HashSet<String> = HashSet::new();
    let mut next_suffix: HashMap<&str, usize> = HashMap::new();
    let mut names = Vec::with_capacity(bases.len());
    for base in &bases {
        let name = if used.contains(base) {
            let k = next_suffix.entry(base.as_str()).or_insert(2);
            loop {
                let candidate = format!("{base}_{k}");
                *k += 1;
                if !all.contains(candidate.as_str()) && !used.contains(&candidate) {
                    break candidate;
                }
            }
        } else {
            base.clone()
        };
        used.insert(name.clone());
        names.push(name);
    }
    names
}

/// Where a record starts, and why it is bad if it is.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecordMeta {
    /// 1-based line of the record's first byte.
    pub line: u64,
    /// Byte offset of the record's first byte in the file.
    pub byte: u64,
    /// Set when the record could not be decoded; its tape root is a null.
    pub error: Option<BadRecord>,
}

/// What is wrong with a bad record, said by the decoder where it finds it;
/// `sanitize_rejects()` shows it as the reject's `kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordFault {
    /// Not valid in its format: JSON syntax, a CSV cell count or quote, XML.
    Malformed,
    /// Bytes that are not text in the input's encoding.
    BadEncoding,
    /// A JSON string whose escapes spell no Unicode text (a lone
    /// surrogate): shown as `bad_encoding`, but no other encoding reads it.
    BadEscape,
    /// A JSON value that is not an object.
    NotAnObject,
    /// Longer than `max_record_bytes`.
    TooLarge,
    /// A CSV line before the header, dropped by `csv_skip_lines`: never a
    /// row, whatever `on_error` says.
    SkippedLine,
    /// A compressed stream that failed part way: the rest of its file is
    /// lost (shown as `malformed_record`).
    Damaged,
}

impl RecordFault {
    /// The reject kind (docs/errors.md "Rejects").
    pub fn kind(self) -> &'static str {
        match self {
            RecordFault::Malformed | RecordFault::Damaged => "malformed_record",
            RecordFault::BadEncoding | RecordFault::BadEscape => "bad_encoding",
            RecordFault::NotAnObject => "not_an_object",
            RecordFault::TooLarge => "record_too_large",
            RecordFault::SkippedLine => "skipped_line",
        }
    }
}

/// A record that could not be decoded: what is wrong, and the cause in
/// words (what `on_error := 'stop'` says).
#[derive(Clone, Debug, PartialEq)]
pub struct BadRecord {
    pub fault: RecordFault,
    pub cause: String,
}

impl BadRecord {
    pub fn new(fault: RecordFault, cause: impl Into<String>) -> Self {
        BadRecord { fault, cause: cause.into() }
    }
}

impl std::fmt::Display for BadRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.cause)
    }
}

/// `max_record_bytes`'s default: `read_json`'s `maximum_object_size`.
pub const DEFAULT_MAX_RECORD_BYTES: usize = 16 << 20;

/// The cause of a bad record longer than `max_record_bytes` (`what`: "the
/// line", "element 3", "the row element"). Its bytes were passed over, never
/// held whole (a bad record of [`RecordFault::TooLarge`]).
pub fn too_large_cause(what: &str, limit: usize) -> String {
    format!("{what} is longer than max_record_bytes ({limit} bytes); pass a larger max_record_bytes to read it")
}

impl Batch {
    /// Appends a record that could not be decoded: a null root and its
    /// cause (the [`RecordReader`] contract).
    pub fn push_bad(&mut self, line: u64, byte: u64, fault: RecordFault, cause: String) {
        self.tape.roots.push(self.tape.nodes.len() as u32);
        self.tape.nodes.push(crate::value::Node::Null);
        self.meta.push(RecordMeta { line, byte, error: Some(BadRecord::new(fault, cause)) });
    }
}

/// One batch of decoded records: `meta[i]` describes `tape.roots[i]`.
#[derive(Default, Debug)]
pub struct Batch {
    pub tape: crate::value::Tape,
    pub meta: Vec<RecordMeta>,
    /// NULL list elements `bigquery_profile` dropped from these records.
    pub list_nulls_dropped: u64,
    /// Top-level keys whose values the scan does not need (JSON formats:
    /// json::SkipKeys); kept by `clear`.
    pub skip: Option<std::sync::Arc<json::SkipKeys>>,
    /// A line of JSON Lines gave two records or more (the probe's tally:
    /// where no line does, a line's end is its record's end).
    pub multi_record_lines: bool,
    /// The probe's board of shapes it needs no more (JSON Lines): a record
    /// with such a shape is left undecoded, its root [`KNOWN_SHAPE`].
    pub known_shapes: Option<json::shape::KnownShapes>,
    /// The probe's board of flat shapes it needs no more (CSV): a record
    /// with such a shape is left undecoded, its root [`KNOWN_SHAPE`].
    pub known_flat: Option<crate::value::flat_shape::KnownFlat>,
    /// Every good record of the batch is an object of exactly these keys,
    /// in this order, each value a string or null (CSV: the file's column
    /// names), so a router may place values by position
    /// (route::Router::write_flat_record). `None`: no such promise.
    pub flat_keys: Option<std::sync::Arc<[String]>>,
    /// The file's header had a cell that did not decode (CSV; set on the
    /// batch read after the header, see [`HeaderNotice`]).
    pub header_notice: Option<HeaderNotice>,
    /// The records as arrow columns, not on the tape (which stays empty;
    /// `meta` still has one entry per record): see
    /// [`RecordReader::emit_columns`].
    pub columns: Option<ColumnRows>,
    /// The records' shapes, written by the probe's decoding thread
    /// (infer/shapes.rs `ShapeWriter`); empty when none were written.
    pub record_shapes: crate::value::shape::RecordShapes,
    /// A scan of JSON Lines the probe read whole and found clean, one
    /// record per line: each line is kept as its text, not parsed, its root
    /// [`DEFERRED`], for the router to write straight from the text
    /// (route/direct.rs). Kept by `clear`.
    pub defer_lines: bool,
    /// Per record of a batch read with `defer_lines`: its text's range in
    /// `tape.text` (unused for a bad record).
    pub deferred: Vec<(u32, u32)>,
}

/// Tests compare the flat paths with the general ones (which give the
/// same result, so other tests running meanwhile only lose speed).
pub static FLAT_KEYS_OFF: crate::test_switch::TestSwitch = crate::test_switch::TestSwitch::new();

/// Tests compare the columnar path ([`Batch::columns`]) with the rows on
/// the tape: set, no reader offers its columns.
pub static COLUMNS_OFF: crate::test_switch::TestSwitch = crate::test_switch::TestSwitch::new();

/// The root of a record left undecoded because its shape was on the
/// probe's board (formats/json/shape.rs): it has no node, and only the
/// probe, which asked for such records, sees one.
pub const KNOWN_SHAPE: u32 = u32::MAX;

/// The root of a record kept as its text ([`Batch::defer_lines`]): it has
/// no node until the router parses it, where it does not write it from the
/// text.
pub const DEFERRED: u32 = u32::MAX - 1;

impl Batch {
    /// Bytes of memory the batch's records hold: its tape's buffers, or
    /// the arrow columns a typed reader handed out (a batch memory budget
    /// and the queues' bound count these).
    pub fn heap_bytes(&self) -> usize {
        self.tape.heap_bytes() + self.columns.as_ref().map_or(0, ColumnRows::bytes)
    }

    pub fn clear(&mut self) {
        self.tape.clear();
        self.meta.clear();
        self.list_nulls_dropped = 0;
        self.multi_record_lines = false;
        self.flat_keys = None;
        self.header_notice = None;
        self.columns = None;
        self.record_shapes.clear();
        self.deferred.clear();
    }
    pub fn len(&self) -> usize {
        self.meta.len()
    }

    /// [`Batch::flat_keys`], which the probe and the router use to take
    /// their flat paths; tests turn them off ([`FLAT_KEYS_OFF`]) to compare
    /// with the general paths.
    pub fn flat(&self) -> Option<&std::sync::Arc<[String]>> {
        if FLAT_KEYS_OFF.is_on() {
            return None;
        }
        self.flat_keys.as_ref()
    }
}
