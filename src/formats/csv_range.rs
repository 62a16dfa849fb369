//! Opening one byte range of a CSV file (pipeline/ranges.rs), so that the
//! threads of a scan share one large file.
//!
//! A CSV record ends at a line end outside quotes, and whether a byte is
//! inside quotes depends on everything before it. So a range after the
//! file's first *guesses*: its first record starts after the first line end
//! at or past the range's start. The guess is checked before any of its
//! records are used (pipeline/ordered.rs): it must be where the previous
//! range's records ended ([`RangeFollow::At`](super::RangeFollow)). A wrong
//! guess (the line end was inside a quoted cell) is dropped and the range
//! read again from the right place, so the records are a sequential read's
//! whatever the ranges, and a file full of quoted newlines costs speed,
//! never rows. This is the check DuckDB's parallel CSV reader makes.
//!
//! A wrong guess can read a quote's inside as its outside, and a record
//! then runs on to the next quote, maybe to the end of the file. A guessed
//! range stops reading a record that reaches further past its end than
//! the range is long (at least [`MIN_READ_AHEAD`]), so memory stays what
//! one range needs; when the guess was right, the consumer goes on from
//! that record ([`RangeFollow::Cut`](super::RangeFollow)).

use std::io::{Read, Seek, SeekFrom};

use super::csv::{CsvLayout, CsvOptions, CsvReader, RangeBounds};
use super::{Batch, RangeFollow, RecordReader, Resume};
use crate::error::{Result, SanitizeError};

/// The least a guessed range reads past its end inside one record (in
/// tests a few bytes, so that small files are cut and continued too).
#[cfg(not(test))]
pub const MIN_READ_AHEAD: u64 = 8 << 20;
#[cfg(test)]
pub const MIN_READ_AHEAD: u64 = 4;

/// Where one range of a CSV file is: its raw byte range, the file's
/// byte-order mark and what the file's head says ([`CsvLayout`]; `None`
/// for the file's first range, which reads the head itself).
pub struct CsvRange {
    pub start: u64,
    pub end: Option<u64>,
    pub bom: u64,
    pub layout: Option<CsvLayout>,
}

/// The reader of `range` over `file` (any position), from `at` when that
/// is known for certain, else from a guessed start.
pub fn open_csv_range<F: Read + Seek + Send + 'static>(
    mut file: F,
    name: &str,
    chunk_bytes: usize,
    options: CsvOptions,
    range: CsvRange,
    at: Option<Resume>,
) -> Result<Box<dyn RecordReader + Send>> {
    let io = |e: std::io::Error| SanitizeError::io(format!("cannot read file \"{name}\": {e}"));
    let Some(layout) = range.layout.filter(|_| range.start > 0) else {
        // The file's first range: from its first byte after the mark, like
        // a whole file.
        file.seek(SeekFrom::Start(range.bom)).map_err(io)?;
        let bounds = RangeBounds {
            first: range.bom,
            end: range.end,
            bom: range.bom,
            bytes_before: 0,
            guessed: false,
            cap: None,
        };
        return Ok(Box::new(CsvReader::in_range(file, name, chunk_bytes, options, None, bounds, 1)));
    };
    let data_start = layout.data_start + range.bom;
    let (first, line, bytes_before, guessed) = match at {
        Some(at) => (at.offset, at.line, at.bytes, false),
        // No record starts before the header's end: the range owns nothing
        // or starts right there, for certain.
        None if range.end.is_some_and(|end| end <= data_start) => return Ok(Box::new(NoRecordStarts)),
        None if range.start <= data_start => (data_start, 1, 0, false),
        None => match first_line_start(&mut file, range.start, range.end, layout.newline()).map_err(io)? {
            Some(first) => (first, 1, 0, true),
            None => return Ok(Box::new(NoRecordStarts)),
        },
    };
    file.seek(SeekFrom::Start(first)).map_err(io)?;
    let cap = range.end.filter(|_| guessed).map(|end| end.saturating_add((end - range.start).max(MIN_READ_AHEAD)));
    let bounds = RangeBounds { first, end: range.end, bom: range.bom, bytes_before, guessed, cap };
    Ok(Box::new(CsvReader::in_range(file, name, chunk_bytes, options, Some(layout), bounds, line)))
}

/// The offset after the first `newline` byte at or past `start - 1` (a
/// line starting at `start` itself counts), if it is before `end`; `None`
/// when no line starts in the range (one record of an earlier range spans
/// it, or the file ends first).
fn first_line_start<F: Read + Seek>(
    file: &mut F,
    start: u64,
    end: Option<u64>,
    newline: u8,
) -> std::io::Result<Option<u64>> {
    let mut at = start - 1;
    file.seek(SeekFrom::Start(at))?;
    let mut buf = vec![0u8; 64 << 10];
    loop {
        if end.is_some_and(|end| at + 1 >= end) {
            return Ok(None);
        }
        let n = match file.read(&mut buf) {
            Ok(0) => return Ok(None),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if let Some(i) = memchr::memchr(newline, &buf[..n]) {
            let first = at + i as u64 + 1;
            return Ok(end.is_none_or(|end| first < end).then_some(first));
        }
        at += n as u64;
    }
}

/// A range in which no record starts: the record after it starts where
/// the previous range's next one does.
struct NoRecordStarts;

impl RecordReader for NoRecordStarts {
    fn next_batch(&mut self, _batch: &mut Batch, _max_records: usize) -> Result<usize> {
        Ok(0)
    }
    fn bytes_read(&self) -> u64 {
        0
    }
    fn follow(&self) -> RangeFollow {
        RangeFollow::AsBefore
    }
}
