//! `max_record_bytes` in every text format: a record of exactly the limit
//! is read, one byte more is a bad record of kind `record_too_large`, the
//! records around it are untouched, and the result is the same at every
//! read size (the harness reads each input with chunks of 1 byte to 1 MiB).

use proptest::prelude::*;

use super::harness::{self, Record};
use crate::options::InputFormat;

fn read(format: InputFormat, input: &[u8], limit: usize) -> Vec<Record> {
    harness::records(format, input, |o| o.max_record_bytes = limit)
}

fn is_too_large(record: &Record) -> bool {
    record.2.starts_with("ERROR: ") && record.2.contains("max_record_bytes")
}

/// A JSON object of exactly `len` bytes: `{"a":"xx…"}`.
fn object_of(len: usize) -> String {
    assert!(len >= 8);
    format!("{{\"a\":\"{}\"}}", "x".repeat(len - 8))
}

#[test]
fn json_lines_split_exactly_at_the_limit() {
    let input = format!("{}\n{}\r\n{}\n{{\"b\":1}}\n", object_of(20), object_of(21), object_of(20));
    let out = read(InputFormat::Jsonl, input.as_bytes(), 20);
    assert_eq!(out.len(), 4, "{out:?}");
    assert_eq!(out[0].2, object_of(20));
    assert!(is_too_large(&out[1]), "{out:?}");
    // Its place is the line's start; the CR of its CRLF does not count.
    assert_eq!((out[1].0, out[1].1), (2, 21));
    assert_eq!((out[2].0, out[2].2.as_str()), (3, object_of(20).as_str()));
    assert_eq!(out[3].2, "{\"b\":1}");
    // Without the limit the long line is good: the limit alone made it bad.
    assert_eq!(read(InputFormat::Jsonl, input.as_bytes(), 1 << 20)[1].2, object_of(21));
}

#[test]
fn a_line_far_past_the_limit_is_passed_over_and_reading_goes_on() {
    let input = format!("{}\n{{\"b\":2}}", "y".repeat(10_000));
    let out = read(InputFormat::Jsonl, input.as_bytes(), 16);
    assert_eq!(out.len(), 2, "{out:?}");
    assert!(is_too_large(&out[0]), "{out:?}");
    assert_eq!((out[1].0, out[1].1, out[1].2.as_str()), (2, 10_001, "{\"b\":2}"));
    // A last line without a line end, far too long.
    let out = read(InputFormat::Jsonl, "z".repeat(5_000).as_bytes(), 16);
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(is_too_large(&out[0]));
}

#[test]
fn csv_records_split_exactly_at_the_limit_quoted_line_breaks_included() {
    // Records (line ends excluded): `1,"a\nb"` is 7 bytes, `22,"a\nbc"` 9.
    let input = b"n,s\n1,\"a\nb\"\n22,\"a\nbc\"\r\n3,ok\n";
    let out = read(InputFormat::Csv, input, 8);
    assert_eq!(out.len(), 3, "{out:?}");
    assert_eq!(out[0].2, "{\"n\":\"1\",\"s\":\"a\\nb\"}");
    assert!(is_too_large(&out[1]), "{out:?}");
    assert_eq!((out[1].0, out[1].1), (4, 12));
    // Line numbers go on counting the passed-over record's line breaks.
    assert_eq!((out[2].0, out[2].2.as_str()), (6, "{\"n\":\"3\",\"s\":\"ok\"}"));
    assert_eq!(read(InputFormat::Csv, input, 9).iter().filter(|r| is_too_large(r)).count(), 0);
}

#[test]
fn an_unterminated_csv_quote_is_bounded_by_the_limit() {
    let mut input = b"a,b\n1,2\n3,\"".to_vec();
    input.extend(std::iter::repeat_n(b'q', 4_000));
    input.extend_from_slice(b"\n4,5\n");
    let out = read(InputFormat::Csv, &input, 64);
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(out[0].2, "{\"a\":\"1\",\"b\":\"2\"}");
    assert!(is_too_large(&out[1]) && out[1].2.contains("unterminated"), "{out:?}");
}

#[test]
fn a_csv_header_past_the_limit_is_an_error() {
    let input = format!("{}\n1\n", "h".repeat(300));
    let e = harness::read(InputFormat::Csv, input.as_bytes(), |o| o.max_record_bytes = 100).unwrap_err();
    assert!(e.contains("CSV header is longer than max_record_bytes (100 bytes)"), "{e}");
}

#[test]
fn json_array_elements_split_exactly_at_the_limit() {
    let input = format!("[{},{},\n{}]", object_of(20), object_of(21), object_of(12));
    let out = read(InputFormat::JsonArray, input.as_bytes(), 20);
    assert_eq!(out.len(), 3, "{out:?}");
    assert_eq!(out[0].2, object_of(20));
    assert!(is_too_large(&out[1]) && out[1].2.contains("element 2"), "{out:?}");
    assert_eq!((out[2].0, out[2].2.as_str()), (2, object_of(12).as_str()));
    // Far past the limit, and the array left open.
    let input = format!("[{}", object_of(5_000));
    let out = read(InputFormat::JsonArray, input.as_bytes(), 64);
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(is_too_large(&out[0]));
}

#[test]
fn json_documents_split_exactly_at_the_limit() {
    let input = format!("{}\n{} {}\n", object_of(20), object_of(21), object_of(9));
    let out = read(InputFormat::Json, input.as_bytes(), 20);
    assert_eq!(out.len(), 3, "{out:?}");
    assert_eq!(out[0].2, object_of(20));
    assert!(is_too_large(&out[1]) && out[1].2.contains("document 2"), "{out:?}");
    assert_eq!(out[2].2, object_of(9));
    // Bytes that never end a document: one bad record, memory bounded.
    let out = read(InputFormat::Json, &vec![0u8; 5_000], 64);
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(is_too_large(&out[0]));
}

#[test]
fn json_documents_larger_than_a_read_still_read_whole() {
    // Many small documents in a file far larger than the limit: the window
    // moves, documents are read as from a file held whole.
    let mut input = String::new();
    for i in 0..300 {
        input.push_str(&format!("{{\"i\":{i},\"s\":\"{}\"}}\n", "é".repeat(i % 7)));
    }
    let out = read(InputFormat::Json, input.as_bytes(), 64);
    assert_eq!(out.len(), 300);
    assert!(out.iter().all(|r| !r.2.starts_with("ERROR")), "{out:?}");
}

#[test]
fn xml_rows_past_the_limit_end_the_file_with_one_bad_record() {
    let row = |n: usize| format!("<row><v>{}</v></row>", "x".repeat(n));
    // A row is 18 bytes + n: limit 28 takes n = 10, not n = 11.
    let input = format!("<r>{}{}{}</r>", row(10), row(11), row(1));
    let rows = |limit: usize| {
        harness::records(InputFormat::Xml, input.as_bytes(), |o| {
            o.max_record_bytes = limit;
            o.xml_row_tag = Some("row".into());
        })
    };
    let out = rows(28);
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(out[0].2, "{\"v\":\"xxxxxxxxxx\"}");
    assert!(is_too_large(&out[1]) && out[1].2.contains("<row>"), "{out:?}");
    assert_eq!(out[1].1, 31);
    assert_eq!(rows(29).len(), 3);
    // Without a row tag the document is the record.
    let out = read(InputFormat::Xml, input.as_bytes(), 28);
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(is_too_large(&out[0]), "{out:?}");
    // Text far past the limit, never closed: the same bad record.
    let input = format!("<r><row>{}", "t".repeat(5_000));
    let out = harness::records(InputFormat::Xml, input.as_bytes(), |o| {
        o.max_record_bytes = 64;
        o.xml_row_tag = Some("row".into());
    });
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(is_too_large(&out[0]), "{out:?}");
}

/// Records and a limit: which records the limit makes bad.
fn lines_and_limit() -> impl Strategy<Value = (Vec<usize>, usize)> {
    (prop::collection::vec(8usize..40, 1..12), 8usize..40)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// A random limit never changes which records are good: exactly those
    /// over it turn bad, in place, and every other record reads as without
    /// a limit.
    #[test]
    fn a_limit_changes_only_the_records_over_it((lengths, limit) in lines_and_limit()) {
        let jsonl: String = lengths.iter().map(|&n| object_of(n) + "\n").collect();
        let csv: String = std::iter::once("a\n".to_string())
            .chain(lengths.iter().map(|&n| format!("\"{}\"\n", "v".repeat(n - 2))))
            .collect();
        let array = format!("[{}]", lengths.iter().map(|&n| object_of(n)).collect::<Vec<_>>().join(","));
        for (format, input) in [
            (InputFormat::Jsonl, jsonl.as_str()),
            (InputFormat::Csv, csv.as_str()),
            (InputFormat::JsonArray, array.as_str()),
            (InputFormat::Json, jsonl.as_str()),
        ] {
            let unlimited = read(format, input.as_bytes(), 1 << 20);
            let limited = read(format, input.as_bytes(), limit);
            prop_assert_eq!(unlimited.len(), lengths.len());
            prop_assert_eq!(limited.len(), lengths.len());
            for ((n, free), capped) in lengths.iter().zip(&unlimited).zip(&limited) {
                if *n > limit {
                    prop_assert!(is_too_large(capped), "{:?} {} > {}: {:?}", format, n, limit, capped);
                    prop_assert_eq!((free.0, free.1), (capped.0, capped.1));
                } else {
                    prop_assert_eq!(free, capped);
                }
            }
        }
    }
}
