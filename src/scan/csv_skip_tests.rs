//! CSV scans end to end (probe and scan, no DuckDB): lines `csv_skip_lines`
//! drops are counted and shown, never rows and never lost in silence; the
//! sniffer's choices (a longer row, a doubled quote, a short row, two
//! tables) read no fewer rows than the right dialect given by hand; and
//! CR, LF and CRLF end records wherever they are.

use std::sync::Arc;

use serde_json::{json, Value};

use super::scan_log::{Scope, Session};
use super::tests::{run_threads_as, scan_rows, Run};
use super::{plan, Scanner, Stats};
use crate::options::{InputFormat, Options, ParamValue};

fn write(text: &str) -> (std::path::PathBuf, String) {
    let dir = crate::test_support::scratch_dir("csv-skip");
    let path = dir.join("in.csv");
    std::fs::write(&path, text).unwrap();
    let name = path.to_string_lossy().into_owned();
    (dir, name)
}

/// Rows and counters of a scan of `text` (two threads, whole ranges).
fn scan(text: &str, params: &[(&str, ParamValue)]) -> Result<(Run, Stats), String> {
    let (dir, path) = write(text);
    let result = run_threads_as("sanitize_csv", InputFormat::Csv, &path, params, 2);
    let _ = std::fs::remove_dir_all(dir);
    result
}

fn sniffed() -> (&'static str, ParamValue) {
    ("csv_auto_detect", ParamValue::Bool(true))
}

/// The rows as (column, value) maps, NULL values left out.
fn rows(run: &Run) -> Vec<Value> {
    run.rows
        .iter()
        .map(|row| {
            let map: serde_json::Map<String, Value> =
                run.names.iter().zip(row).filter(|(_, v)| !v.is_null()).map(|(n, v)| (n.clone(), v.clone())).collect();
            Value::Object(map)
        })
        .collect()
}

/// The rejects one logged scan of `text` records: (line, kind, action, raw).
fn rejects_of(text: &str, params: &[(&str, ParamValue)]) -> Vec<(u64, String, String, Option<String>)> {
    let (dir, path) = write(text);
    let options = Options::parse("sanitize_csv", Some(InputFormat::Csv), params).unwrap();
    let plan = Arc::new(plan("sanitize_csv", vec![path], options).unwrap());
    // A session no other test uses.
    let session = Session { database: u64::MAX - 77, connection: 7 };
    let mut scanner = Scanner::new(Arc::clone(&plan));
    scanner.log_as(Some(session));
    scan_rows(&mut scanner, &plan, |_| true).unwrap();
    drop(scanner);
    let _ = std::fs::remove_dir_all(dir);
    let latest = super::scan_log::snapshot(Scope::Connection(session)).last().map(|s| s.scan_id);
    super::rejects::snapshot(Scope::Connection(session))
        .into_iter()
        .filter(|r| Some(r.scan_id) == latest)
        .map(|r| (r.line, r.kind.to_string(), r.action.to_string(), r.raw))
        .collect()
}

#[test]
fn skipped_lines_are_counted_and_never_rows() {
    let text = "title\nby me, today\n\nid,v\n1,2\n3,4\n";
    for on_error in ["emit_null_row", "skip_row", "stop"] {
        let params = [("csv_skip_lines", ParamValue::Int(3)), ("on_error", ParamValue::Str(on_error.into()))];
        let (run, stats) = scan(text, &params).unwrap();
        assert_eq!(rows(&run), [json!({"id": "1", "v": "2"}), json!({"id": "3", "v": "4"})], "{on_error}");
        // Two lines with text skipped (the blank one is no line of text).
        assert_eq!(
            (stats.rows_read, stats.rows_emitted, stats.rows_skipped, stats.rows_nulled),
            (4, 2, 2, 0),
            "{on_error}"
        );
    }
    // Comment lines are not counted (they are no lines of the skip either).
    let text = "# a comment\ntitle\na,b\n1,2\n";
    let params = [("csv_skip_lines", ParamValue::Int(1)), ("csv_comment", ParamValue::Str("#".into()))];
    let (_, stats) = scan(text, &params).unwrap();
    assert_eq!((stats.rows_read, stats.rows_skipped), (2, 1));
}

#[test]
fn skipped_lines_are_rejects_of_their_own_kind() {
    let text = "title\r\nby me, today\r\nid,v\r\n1,2\r\n";
    let got = rejects_of(text, &[("csv_skip_lines", ParamValue::Int(2))]);
    assert_eq!(
        got,
        [
            (1, "skipped_line".to_string(), "row_skipped".to_string(), Some("title".to_string())),
            (2, "skipped_line".to_string(), "row_skipped".to_string(), Some("by me, today".to_string())),
        ]
    );
    // A CR line's text ends at its CR.
    let got = rejects_of("title\rid,v\r1,2\r", &[("csv_skip_lines", ParamValue::Int(1))]);
    assert_eq!(got, [(1, "skipped_line".to_string(), "row_skipped".to_string(), Some("title".to_string()))]);
}

#[test]
fn skipped_lines_do_not_hide_a_scan_of_bad_records() {
    // Every record bad (one cell where the header has two): still an error,
    // though the skipped lines were read too.
    let text = "title\nmore title\na,b\n1\n2\n";
    let e = scan(text, &[("csv_skip_lines", ParamValue::Int(2))]).unwrap_err();
    assert!(e.contains("bad"), "{e}");
}

/// What a scan of `text` reads sniffed and with `right` (the dialect a
/// person would give): the sniffed scan reads no fewer rows.
fn no_fewer_rows(text: &str, right: &[(&str, ParamValue)]) -> (Run, Stats) {
    let (run, stats) = scan(text, &[sniffed()]).unwrap();
    // By hand, mostly bad records are accepted (two tables read as one).
    let mut right = right.to_vec();
    right.push(("on_error", ParamValue::Str("emit_null_row".into())));
    let (_, by_hand) = scan(text, &right).unwrap();
    assert!(stats.rows_read >= by_hand.rows_read, "{text:?}: sniffed {stats:?}, by hand {by_hand:?}");
    assert!(
        stats.rows_emitted - stats.rows_nulled >= by_hand.rows_emitted - by_hand.rows_nulled,
        "{text:?}: sniffed {stats:?}, by hand {by_hand:?}"
    );
    (run, stats)
}

#[test]
fn a_longer_row_is_a_bad_record_not_the_header() {
    let (run, stats) = no_fewer_rows("id,name\n1,a\n2,b\n3,c\n4,d,e\n", &[]);
    assert_eq!(
        rows(&run),
        [json!({"id": "1", "name": "a"}), json!({"id": "2", "name": "b"}), json!({"id": "3", "name": "c"}), json!({}),]
    );
    assert_eq!((stats.rows_read, stats.rows_nulled, stats.rows_skipped), (4, 1, 0));
}

#[test]
fn a_doubled_quote_keeps_rfc_4180_escaping() {
    let text = "id,name,note\n1,\"Smith, \"\"Bob\"\"\",ok\n2,\"Jones \"\"Al\"\", Jr\"\n";
    let (run, stats) = no_fewer_rows(text, &[]);
    // The short row is a bad record, as it is with the dialect given.
    assert_eq!(rows(&run), [json!({"id": "1", "name": "Smith, \"Bob\"", "note": "ok"}), json!({})]);
    assert_eq!((stats.rows_read, stats.rows_nulled), (2, 1));
}

#[test]
fn a_polluted_row_with_fewer_delimiters_is_one_bad_record() {
    let text = "a,b,c\n1,2,3\n4,5\n6,7,8\n";
    let (run, stats) = no_fewer_rows(text, &[]);
    assert_eq!(run.names, ["a", "b", "c"]);
    assert_eq!((stats.rows_read, stats.rows_nulled), (3, 1));
    // With null_padding it is a row.
    let (run, _) = scan(text, &[sniffed(), ("csv_null_padding", ParamValue::Bool(true))]).unwrap();
    assert_eq!(rows(&run)[1], json!({"a": "4", "b": "5"}));
}

#[test]
fn two_tables_lose_no_line_in_silence() {
    // Of two tables as large, the later one is read and the earlier one's
    // lines are skipped lines, counted.
    let text = "a,b\n1,2\n3,4\n\nx,y,z\n5,6,7\n8,9,10\n";
    let (run, stats) = no_fewer_rows(text, &[]);
    assert_eq!(run.names, ["x", "y", "z"]);
    assert_eq!((stats.rows_read, stats.rows_emitted, stats.rows_skipped), (5, 2, 3));
    // The larger one is read; the other's rows are bad records.
    let text = "a,b\n1,2\n3,4\n5,6\n7,8\n\nx,y,z\n5,6,7\n";
    let (run, stats) = no_fewer_rows(text, &[]);
    assert_eq!(run.names, ["a", "b"]);
    assert_eq!((stats.rows_read, stats.rows_nulled, stats.rows_skipped), (6, 2, 0));
}

/// CR, LF and CRLF end records wherever they are, in every mode: the
/// whole file, byte ranges (of a few bytes, so that guesses fall between
/// a CR and its LF), and the sniffer.
#[test]
fn every_line_end_ends_a_record_in_every_mode() {
    let cases = [
        ("a,b\r1,2\r3,\n", json!([{"a": "1", "b": "2"}, {"a": "3"}])),
        ("a,b\r1,2\r\n3,4\r", json!([{"a": "1", "b": "2"}, {"a": "3", "b": "4"}])),
        (
            "a,b\n1,\"x\r\ny\"\r\n3,4\r5,6\n",
            json!([{"a": "1", "b": "x\r\ny"}, {"a": "3", "b": "4"}, {"a": "5", "b": "6"}]),
        ),
    ];
    for (text, expected) in cases {
        for params in [
            vec![],
            vec![sniffed()],
            vec![("scan_range_bytes", ParamValue::Int(3)), ("read_chunk_bytes", ParamValue::Int(2))],
        ] {
            let (run, _) = scan(text, &params).unwrap();
            assert_eq!(Value::Array(rows(&run)), expected, "{text:?} {params:?}");
        }
    }
}
