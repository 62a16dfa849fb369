//! Opening one byte range of a CSV file (scan/ranges.rs), so that the
//! threads of a scan share one large file.
//!
//! A CSV record ends at a line end outside quotes, and whether a byte is
//! inside quotes depends on everything before it. So a range after the
//! file's first *guesses*: its first record starts after the first line end
//! at or past the range's start. The guess is checked before any of its
//! records are used (scan/ordered.rs): it must be where the previous
//! range's records ended ([`RangeFollow::At`](crate::formats::RangeFollow)). A wrong
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
//! that record ([`RangeFollow::Cut`](crate::formats::RangeFollow)).

use std::io::{Read, Seek, SeekFrom};

use crate::error::{Result, SanitizeError};
use crate::formats::csv::{CsvLayout, CsvOptions, CsvReader, RangeBounds};
use crate::formats::{Batch, RangeFollow, RecordReader, Resume};

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
        None => match first_line_start(&mut file, range.start, range.end).map_err(io)? {
            Some(first) => {
                // A window of about the range's length (within bounds): a
                // file cut into tiny ranges does not read 64 KiB per range.
                let window = range
                    .end
                    .map_or(GUESS_WINDOW, |end| ((end - range.start) as usize).clamp(MIN_GUESS_WINDOW, GUESS_WINDOW));
                let first = better_guess(&mut file, first, range.end, window, &options, &layout).map_err(io)?;
                (first, 1, 0, true)
            }
            None => return Ok(Box::new(NoRecordStarts)),
        },
    };
    file.seek(SeekFrom::Start(first)).map_err(io)?;
    let cap = range.end.filter(|_| guessed).map(|end| end.saturating_add((end - range.start).max(MIN_READ_AHEAD)));
    let bounds = RangeBounds { first, end: range.end, bom: range.bom, bytes_before, guessed, cap };
    Ok(Box::new(CsvReader::in_range(file, name, chunk_bytes, options, Some(layout), bounds, line)))
}

/// The offset after the first line end (LF, CR or CRLF) that ends at or
/// past `start` (a line starting at `start` itself counts; a CRLF whose CR
/// is at `start - 1` ends after its LF), if it is before `end`; `None` when
/// no line starts in the range (one record of an earlier range spans it,
/// or the file ends first).
fn first_line_start<F: Read + Seek>(file: &mut F, start: u64, end: Option<u64>) -> std::io::Result<Option<u64>> {
    let mut at = start - 1;
    file.seek(SeekFrom::Start(at))?;
    let mut buf = vec![0u8; 64 << 10];
    // A CR found last in a read: its line starts after it, or after the
    // LF that may open the next read.
    let mut cr_at: Option<u64> = None;
    loop {
        if cr_at.is_none() && end.is_some_and(|end| at + 1 >= end) {
            return Ok(None);
        }
        let n = match file.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let first = if let Some(cr) = cr_at {
            Some(if n > 0 && buf[0] == b'\n' { cr + 2 } else { cr + 1 })
        } else if n == 0 {
            return Ok(None);
        } else {
            match memchr::memchr2(b'\n', b'\r', &buf[..n]) {
                Some(i) if buf[i] == b'\r' && i + 1 == n => {
                    cr_at = Some(at + i as u64);
                    at += n as u64;
                    continue;
                }
                Some(i) => Some(at + (i + line_end_len(&buf[..n], i)) as u64),
                None => None,
            }
        };
        if let Some(first) = first {
            return Ok(end.is_none_or(|end| first < end).then_some(first));
        }
        at += n as u64;
    }
}

/// The length of the line end at `bytes[i]` (an LF or a CR): 2 for a
/// CRLF, else 1 (a CR last in `bytes` counts alone).
fn line_end_len(bytes: &[u8], i: usize) -> usize {
    if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
        2
    } else {
        1
    }
}

/// Bytes after a guess that [`better_guess`] looks at, at most and at least.
const GUESS_WINDOW: usize = 64 << 10;
const MIN_GUESS_WINDOW: usize = 4 << 10;
/// Line starts it tries.
const GUESS_CANDIDATES: usize = 16;

/// The first of the line starts from `first` on (before `end`, within a
/// window) whose first record reads as a good record, as DuckDB's parallel
/// CSV reader tries its start: a line end inside a quoted cell usually
/// gives a record of the wrong width or an unterminated quote. Only a
/// better guess: the consumer still checks it, so a wrong choice costs a
/// re-read, never a row. `first` itself when nothing in the window reads
/// well or nothing can be told (a record longer than the window).
fn better_guess<F: Read + Seek>(
    file: &mut F,
    first: u64,
    end: Option<u64>,
    window_bytes: usize,
    options: &CsvOptions,
    layout: &CsvLayout,
) -> std::io::Result<u64> {
    file.seek(SeekFrom::Start(first))?;
    let mut window = Vec::with_capacity(window_bytes);
    file.by_ref().take(window_bytes as u64).read_to_end(&mut window)?;
    let mut at = 0usize;
    for _ in 0..GUESS_CANDIDATES {
        if end.is_some_and(|end| first + at as u64 >= end) || at >= window.len() {
            break;
        }
        // A window shorter than asked for ends where the file does.
        let whole = window.len() < window_bytes;
        match first_record_reads_well(&window[at..], whole, options, layout) {
            Some(true) => return Ok(first + at as u64),
            // A record longer than the rest of the window: nothing to tell.
            None => break,
            Some(false) => {}
        }
        match memchr::memchr2(b'\n', b'\r', &window[at..]) {
            // A CR last in a window the file goes on after: whether a
            // CRLF follows is unknown, so no later start is tried.
            Some(i) if window[at + i] == b'\r' && at + i + 1 == window.len() && !whole => break,
            Some(i) => at += i + line_end_len(&window[at..], i),
            None => break,
        }
    }
    Ok(first)
}

/// Whether the first record of `bytes` is a good one (`None`: it does not
/// end inside `bytes` and the file goes on, or `bytes` holds no record).
fn first_record_reads_well(bytes: &[u8], to_the_end: bool, options: &CsvOptions, layout: &CsvLayout) -> Option<bool> {
    let bounds = RangeBounds { first: 0, end: None, bom: 0, bytes_before: 0, guessed: false, cap: None };
    let mut reader = CsvReader::in_range(
        std::io::Cursor::new(bytes),
        "",
        bytes.len().max(1),
        options.clone(),
        Some(layout.clone()),
        bounds,
        1,
    );
    let mut batch = Batch::default();
    let n = reader.next_batch(&mut batch, 1).ok()?;
    // Ended before the window's end (or the file's): a whole record, not
    // one cut short.
    (n == 1 && (to_the_end || reader.bytes_read() < bytes.len() as u64)).then(|| batch.meta[0].error.is_none())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn layout_of(text: &str) -> CsvLayout {
        CsvReader::new(std::io::Cursor::new(text.as_bytes().to_vec()), "t.csv", 64, CsvOptions::default())
            .layout()
            .unwrap()
    }

    #[test]
    fn a_guess_inside_quotes_moves_to_the_next_line_that_reads_as_a_record() {
        let text = "id,body,n\n1,\"one\ntwo\nthree\",7\n2,\"x\",8\n";
        let layout = layout_of(text);
        let mut file = std::io::Cursor::new(text.as_bytes().to_vec());
        // The line end after "one" is inside quotes: "two" and "three\",7"
        // read as records of the wrong width; "2,..." is the true start.
        let inside = text.find("two").unwrap() as u64;
        let truth = text.find("2,").unwrap() as u64;
        let got = better_guess(&mut file, inside, None, GUESS_WINDOW, &CsvOptions::default(), &layout).unwrap();
        assert_eq!(got, truth);
        // A right guess stays.
        assert_eq!(better_guess(&mut file, truth, None, GUESS_WINDOW, &CsvOptions::default(), &layout).unwrap(), truth);
        // Nothing that reads well before the range's end: the first guess stays.
        assert_eq!(
            better_guess(&mut file, inside, Some(truth), GUESS_WINDOW, &CsvOptions::default(), &layout).unwrap(),
            inside
        );
    }
}
