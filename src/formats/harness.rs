//! The one test harness for the text decoders. It builds each reader the
//! way a scan does (`scan::text_reader`: the text decoder, which drops
//! a byte-order mark, under the format's reader) over bytes in memory, and
//! checks the whole [`RecordReader`] contract on every batch:
//!
//! - `next_batch` returns at most `max_records`, and as many as it adds;
//! - one meta per record (`meta.len() == roots.len()`);
//! - a bad record is a NULL root, a good one an object;
//! - records come in file order: lines and byte offsets never decrease;
//! - once it returns 0 it keeps returning 0;
//! - the same records, errors and positions for every read-chunk size and
//!   every batch size.
//!
//! Byte offsets are in the decoded UTF-8 text after a dropped byte-order
//! mark (docs/formats.md), because that is what users see.

use std::io::Cursor;

use super::Batch;
use crate::options::{InputFormat, Options};
use crate::value::{write_compact_json, Node};

/// One record as the tests compare it: line, byte offset, and its compact
/// JSON, or `ERROR: <message>` for a bad record.
pub type Record = (u64, u64, String);

/// The read-chunk sizes and batch sizes every input is read with.
const CHUNKS: [usize; 4] = [1, 3, 7, 1 << 20];
const MAXES: [usize; 2] = [1, 1000];

/// Reads `input` as `format` with the options `configure` sets, with every
/// chunk and batch size (which must agree), checking the contract. `Err` is
/// a whole-file error (the reader's `Err`), its message.
pub fn read(format: InputFormat, input: &[u8], configure: impl Fn(&mut Options)) -> Result<Vec<Record>, String> {
    let mut options = Options::defaults(format);
    configure(&mut options);
    let mut first: Option<Result<Vec<Record>, String>> = None;
    for chunk in CHUNKS {
        for max in MAXES {
            options.read_chunk_bytes = chunk;
            let got = read_once(&options, input, max);
            match &first {
                None => first = Some(got),
                Some(expected) => assert_eq!(&got, expected, "read_chunk_bytes {chunk}, max_records {max}"),
            }
        }
    }
    first.expect("at least one read")
}

/// [`read`] for an input that must read without a whole-file error.
pub fn records(format: InputFormat, input: &[u8], configure: impl Fn(&mut Options)) -> Vec<Record> {
    read(format, input, configure).unwrap_or_else(|e| panic!("whole-file error: {e}"))
}

/// One read with `options` as they are, `max` records per batch.
pub fn read_once(options: &Options, input: &[u8], max: usize) -> Result<Vec<Record>, String> {
    let cursor = Cursor::new(input.to_vec());
    let mut reader = crate::scan::text_reader(cursor, "t", options).map_err(|e| e.message)?;
    let mut out: Vec<Record> = Vec::new();
    let mut batch = Batch::default();
    // A reader that never ends is a bug: give up after far more batches
    // than any test input has records.
    for _ in 0..1_000_000 {
        batch.clear();
        let n = reader.next_batch(&mut batch, max).map_err(|e| e.message)?;
        assert!(n <= max, "{n} records for max_records {max}");
        assert_eq!(n, batch.len(), "next_batch returns what it added");
        assert_eq!(batch.meta.len(), batch.tape.roots.len(), "one meta per record");
        if n == 0 {
            for _ in 0..2 {
                batch.clear();
                assert_eq!(reader.next_batch(&mut batch, max).map_err(|e| e.message)?, 0, "exhausted stays exhausted");
            }
            return Ok(out);
        }
        for i in 0..n {
            let m = &batch.meta[i];
            if let Some((line, byte, _)) = out.last() {
                assert!((m.line, m.byte) >= (*line, *byte), "records out of order: {out:?} then {m:?}");
            }
            let root = batch.tape.record(i);
            let text = match &m.error {
                Some(e) => {
                    assert_eq!(root.node(), Node::Null, "a bad record is NULL");
                    format!("ERROR: {e}")
                }
                None => {
                    assert!(matches!(root.node(), Node::Object { .. }), "a good record is an object");
                    let mut s = String::new();
                    write_compact_json(root, &mut s);
                    s
                }
            };
            out.push((m.line, m.byte, text));
        }
    }
    panic!("the reader never finished");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_byte_order_mark_is_dropped_in_one_place_for_every_text_format() {
        let cases: [(InputFormat, &[u8]); 5] = [
            (InputFormat::Jsonl, b"\xEF\xBB\xBF{\"a\":1}\n"),
            (InputFormat::Json, b"\xEF\xBB\xBF{\"a\":1}"),
            (InputFormat::JsonArray, b"\xEF\xBB\xBF[{\"a\":1}]"),
            (InputFormat::Csv, b"\xEF\xBB\xBFa\n1\n"),
            (InputFormat::Xml, b"\xEF\xBB\xBF<r><a>1</a></r>"),
        ];
        for (format, input) in cases {
            let got = records(format, input, |_| {});
            assert_eq!(got.len(), 1, "{format:?}: {got:?}");
            assert!(got[0].2.contains("\"a\":") && !got[0].2.contains('\u{feff}'), "{format:?}: {got:?}");
            // The same record, at the same line and byte, as without the mark.
            assert_eq!(records(format, &input[3..], |_| {}), got, "{format:?}");
        }
    }

    #[test]
    fn the_harness_catches_a_disagreement() {
        // Different inputs read differently; the harness must be able to see it.
        let a = records(InputFormat::Jsonl, b"{\"a\":1}\n", |_| {});
        let b = records(InputFormat::Jsonl, b"{\"a\":2}\n", |_| {});
        assert_ne!(a, b);
        let bad = records(InputFormat::Jsonl, b"{\"a\":\n", |_| {});
        assert!(bad[0].2.starts_with("ERROR: "), "{bad:?}");
    }
}
