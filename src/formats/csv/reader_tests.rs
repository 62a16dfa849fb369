//! Tests of the CSV decoder (formats/csv/mod.rs).

use super::*;
use crate::formats::harness;
use crate::formats::RecordReader;
use crate::options::InputFormat;
use crate::value::write_compact_json;
use proptest::prelude::*;

fn opts(has_header: bool, delimiter: u8) -> CsvOptions {
    CsvOptions { has_header, delimiter: vec![delimiter], ..CsvOptions::default() }
}

/// (line, byte, compact JSON or `ERR <message>`) of every record, through
/// the shared harness (formats/harness.rs: every chunk and batch size, the
/// reader contract checked).
fn read_with(input: &[u8], o: CsvOptions) -> Vec<(u64, u64, String)> {
    harness::records(InputFormat::Csv, input, |opt| {
        opt.csv_has_header = Some(o.has_header);
        opt.csv_delimiter = o.delimiter.clone();
        opt.csv_quote = o.quote;
        opt.csv_escape = o.escape;
        opt.csv_comment = o.comment;
        opt.csv_skip_lines = o.skip_lines;
        opt.csv_null_strings = o.null_strings.clone();
        opt.csv_null_padding = o.null_padding;
        opt.max_record_bytes = o.max_record_bytes;
    })
    .into_iter()
    .map(|(l, b, t)| (l, b, t.strip_prefix("ERROR: ").map(|e| format!("ERR {e}")).unwrap_or(t)))
    .collect()
}

fn read(input: &[u8]) -> Vec<(u64, u64, String)> {
    read_with(input, opts(true, b','))
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
}

#[test]
fn other_delimiters() {
    for d in [b';', b'\t', b'|'] {
        let dc = d as char;
        let input = format!("a{dc}b\n1{dc}\"x{dc}y\"\n,z\n");
        let out = read_with(input.as_bytes(), opts(true, d));
        let escaped = if d == b'\t' { "\\t".to_string() } else { dc.to_string() };
        let first = format!(r#"{{"a":"1","b":"x{escaped}y"}}"#);
        // `,z` holds no delimiter: one cell.
        assert_eq!(jsons(&out), [first.as_str(), "ERR expected 2 cells but found 1"], "{dc:?}");
    }
    // With `;` a comma is data.
    let out = read_with(b"a;b\n1,5;2\n", opts(true, b';'));
    assert_eq!(jsons(&out), [r#"{"a":"1,5","b":"2"}"#]);
}

#[test]
fn quotes_inside_unquoted_cells_and_cells_with_text_after_the_closing_quote_are_kept_as_written() {
    let out = read(
        b"a,b,c\nab\"c,\"x\"yz,  \"q\"\n\"p\" ,\"\"\"\"\"\",\"a\"\"b\"c\"d\"\r\n\"a,b\"c,\"Others\" includes,\"ok\"\n",
    );
    assert_eq!(
        jsons(&out),
        [
            r#"{"a":"ab\"c","b":"\"x\"yz","c":"  \"q\""}"#,
            r#"{"a":"\"p\" ","b":"\"\"","c":"\"a\"\"b\"c\"d\""}"#,
            // The quotes still protect the delimiter: one cell, its raw text.
            r#"{"a":"\"a,b\"c","b":"\"Others\" includes","c":"ok"}"#,
        ]
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
    let bad = batch.meta[0].error.as_ref().unwrap();
    assert_eq!((bad.fault, bad.cause.as_str()), (RecordFault::Malformed, "expected 7 cells but found 1"));
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
    let entries: Vec<(&str, &str)> = batch.tape.record(0).entries().map(|(k, v)| (k, v.as_str().unwrap())).collect();
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
    let out = read_with(b"\n1,2\n3\n4,5\n", opts(false, b','));
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
    let out = read_with(b"a,b\n1,2\n3\n4,5,6\n\"multi\nline\",x,y\n7,8\n", opts(true, b','));
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
    // Whitespace is data, and an empty quoted cell is a value, not a blank
    // line. In a one-column file a blank line is a NULL value, as read_csv reads it.
    let out = read(b"a\n \n\"\"\n\n");
    assert_eq!(jsons(&out), [r#"{"a":" "}"#, r#"{"a":""}"#, r#"{"a":null}"#]);
}

fn dialect(set: impl FnOnce(&mut CsvOptions)) -> CsvOptions {
    let mut o = CsvOptions::default();
    set(&mut o);
    o
}

#[test]
fn quote_and_escape_characters() {
    // Single quotes, doubled to escape.
    let o = dialect(|o| o.quote = Some(b'\''));
    assert_eq!(
        jsons(&read_with(b"a,b\n'x,y','it''s'\n\"q\",2\n", o)),
        [r#"{"a":"x,y","b":"it's"}"#, r#"{"a":"\"q\"","b":"2"}"#]
    );
    // A backslash escape: \" and \\ inside quotes; before anything else it is kept.
    let o = dialect(|o| o.escape = Some(b'\\'));
    let out = read_with(b"a,b\n\"say \\\"hi\\\"\",\"c:\\\\d\\n\"\n\"x\ny\",2\n", o);
    assert_eq!(jsons(&out), [r#"{"a":"say \"hi\"","b":"c:\\d\\n"}"#, r#"{"a":"x\ny","b":"2"}"#]);
    // An escaped newline-free quote does not end the cell; an escape at the very end is unterminated.
    let out = read_with(b"a\n\"x\\\"", dialect(|o| o.escape = Some(b'\\')));
    assert!(jsons(&out)[0].starts_with("ERR unterminated"), "{out:?}");
    // No quoting at all: quotes are data.
    let out = read_with(b"a,b\n\"x,y\"\n", dialect(|o| o.quote = None));
    assert_eq!(jsons(&out), [r#"{"a":"\"x","b":"y\""}"#]);
}

#[test]
fn comments_and_skipped_lines() {
    let o = dialect(|o| o.comment = Some(b'#'));
    let out = read_with(b"# generated\na,b\n#x,y,z\n1,2 # trailing\n3,4\n", o.clone());
    assert_eq!(jsons(&out), [r#"{"a":"1","b":"2 "}"#, r#"{"a":"3","b":"4"}"#]);
    assert_eq!(out.iter().map(|r| r.0).collect::<Vec<_>>(), [4, 5]);
    // A quoted # is data.
    assert_eq!(jsons(&read_with(b"a\n\"#1\"\n", o.clone())), [r##"{"a":"#1"}"##]);
    // Spaces before the marker: still a comment line, as read_csv reads it
    // (a tab is not: that line is data, here a bad record of one cell).
    let out = read_with(b"a,b\n # one\n   # three\n1,2\n\t# tab\n", o.clone());
    assert_eq!(jsons(&out)[0], r#"{"a":"1","b":"2"}"#);
    assert_eq!(out.len(), 2);
    assert!(out[1].2.starts_with("ERR expected 2 cells"), "{:?}", out[1]);
    // With a space as the delimiter, a leading space is an empty cell.
    let spaced = dialect(|o| {
        o.comment = Some(b'#');
        o.delimiter = vec![b' '];
    });
    assert_eq!(jsons(&read_with(b"a b\n #x\n", spaced)), [r#"{"a":null,"b":null}"#]);
    // skip_lines: blank lines count, comment lines do not, quoted newlines stay inside one line.
    let o = dialect(|o| {
        o.skip_lines = 3;
        o.comment = Some(b'#');
    });
    let out = read_with(b"title\n\n# note\n\"multi\nline\"\na,b\n1,2\n", o);
    // The skipped lines with text are records of their own, marked so
    // (the pipeline counts and shows them, and makes no row of them).
    let skipped = format!("ERR {SKIPPED_LINE}");
    assert_eq!(out, [(1, 0, skipped.clone()), (4, 14, skipped), (7, 31, r#"{"a":"1","b":"2"}"#.to_string())]);
}

#[test]
fn null_strings_apply_to_unquoted_cells() {
    let o = dialect(|o| o.null_strings = vec!["NA".into(), "null".into(), String::new()]);
    let out = read_with(b"a,b,c\nNA,\"NA\",null\n,x,\n", o);
    assert_eq!(jsons(&out), [r#"{"a":null,"b":"NA","c":null}"#, r#"{"a":null,"b":"x","c":null}"#]);
    // Without the empty string in the list, an empty cell is the empty string.
    let out = read_with(b"a,b\n,NA\n", dialect(|o| o.null_strings = vec!["NA".into()]));
    assert_eq!(jsons(&out), [r#"{"a":"","b":null}"#]);
}

#[test]
fn multi_byte_delimiters() {
    let o = dialect(|o| o.delimiter = b"||".to_vec());
    let out = read_with(b"a||b\nx|y||\"p||q\"\n1||2|\n", o.clone());
    assert_eq!(jsons(&out), [r#"{"a":"x|y","b":"p||q"}"#, r#"{"a":"1","b":"2|"}"#]);
    // A delimiter split across chunks (the harness reads with every chunk size).
    let o = dialect(|o| o.delimiter = "→".as_bytes().to_vec());
    assert_eq!(jsons(&read_with("a→b\n1→2\n".as_bytes(), o)), [r#"{"a":"1","b":"2"}"#]);
}

#[test]
fn null_padding_and_trailing_delimiters() {
    // A delimiter at the end of every row is an empty last cell, not a ragged row (bug_12596.csv).
    assert_eq!(jsons(&read(b"c1,c2\n1,2,\n3,4,\n")), [r#"{"c1":"1","c2":"2"}"#, r#"{"c1":"3","c2":"4"}"#]);
    // A non-empty extra cell is still a bad record; a short one is, without null_padding.
    assert_eq!(
        jsons(&read(b"a,b\n1,2,3\n1\n")),
        ["ERR expected 2 cells but found 3", "ERR expected 2 cells but found 1"]
    );
    let o = dialect(|o| o.null_padding = true);
    assert_eq!(
        jsons(&read_with(b"a,b,c\n1\n1,2\n", o)),
        [r#"{"a":"1","b":null,"c":null}"#, r#"{"a":"1","b":"2","c":null}"#]
    );
}

#[test]
fn bom_is_dropped() {
    // The text decoder drops it (source/decode.rs); offsets count from after it.
    let input = b"\xEF\xBB\xBFa,b\n1,2\n";
    assert_eq!(read_with(input, opts(true, b',')), [(2, 4, r#"{"a":"1","b":"2"}"#.to_string())]);
    assert_eq!(read_with(b"\xEF\xBB\xBF1\n", opts(false, b',')), [(1, 0, r#"{"column_a":"1"}"#.into())]);
    // Only a whole BOM is dropped.
    assert!(read_with(b"\xEF\xBB\n", opts(false, b','))[0].2.contains("invalid UTF-8"));
}

#[test]
fn invalid_utf8_is_a_bad_record_not_a_failure() {
    let out = read_with(b"a,b\n1,\xFF\n3,\"\xC3\xA9\"\n", opts(true, b','));
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
        assert!(read_with(input, opts(true, b',')).is_empty(), "{input:?}");
    }
    let mut r = CsvReader::new(&b"a,b"[..], "t.csv", 1, opts(true, b','));
    assert_eq!(r.header().unwrap().unwrap(), ["a", "b"]);
    let mut r = CsvReader::new(&b""[..], "t.csv", 1, opts(true, b','));
    assert_eq!(r.header().unwrap(), None);
    assert_eq!(r.next_batch(&mut Batch::default(), 10).unwrap(), 0);
    assert!(read_with(b"", opts(false, b',')).is_empty());
}

#[test]
fn trailing_delimiter_is_an_empty_cell() {
    assert_eq!(jsons(&read(b"a,b\n1,\n2,")), [r#"{"a":"1","b":null}"#, r#"{"a":"2","b":null}"#]);
    assert_eq!(jsons(&read(b"a,b\n1,\"\"")), [r#"{"a":"1","b":""}"#]);
}

#[test]
fn same_records_for_every_chunk_size_and_batch_size() {
    let input: &[u8] = b"\xEF\xBB\xBFid,name,note\r\n\r\n1,\"Smith, J\",\"said \"\"hi\"\"\nthen left\"\r\n2,,\"\"\n\
        3,x\n\n4,\"a\rb\",\xFF\n5,\"\"\"\",tail\"q\"\r\n6,\"x\"y,z,extra\n7,,\n8,\"unterminated\nstill";
    let expected = read_with(input, opts(true, b','));
    assert_eq!(expected.len(), 8);
    assert_eq!(expected[0], (3, 16, r#"{"id":"1","name":"Smith, J","note":"said \"hi\"\nthen left"}"#.into()));
    assert_eq!(expected[1].2, r#"{"id":"2","name":null,"note":""}"#);
    assert_eq!(expected[2], (6, 60, "ERR expected 3 cells but found 2".into()));
    assert!(expected[3].2.contains("invalid UTF-8"));
    assert_eq!(expected[3].0, 8);
    assert_eq!(expected[4].2, r#"{"id":"5","name":"\"","note":"tail\"q\""}"#);
    assert_eq!(expected[5].2, "ERR expected 3 cells but found 4");
    assert_eq!(expected[6].2, r#"{"id":"7","name":null,"note":null}"#);
    // The quoted CR of record 4 is a line end too (line 9).
    assert_eq!(expected[7], (13, 110, "ERR unterminated quoted cell starting at line 13".into()));
    // read_with (the harness) has compared every chunk and batch size.
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
    let out = read_with(input.as_bytes(), opts(true, b','));
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

/// Writes rows with proper quoting, row `r` ending with `ends[r % len]`;
/// returns the text and each row's (line, byte).
fn write_csv(
    rows: &[Vec<Option<String>>],
    delim: u8,
    ends: &[&str],
    final_newline: bool,
    force_quote: &[bool],
) -> (String, Vec<(u64, u64)>) {
    let d = delim as char;
    let mut out = String::new();
    let mut starts = Vec::new();
    let mut k = 0;
    for (r, row) in rows.iter().enumerate() {
        // Every LF, CR and CRLF is one line end, quoted ones too.
        let line = 1 + out.replace("\r\n", "\n").matches(['\n', '\r']).count() as u64;
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
            out.push_str(ends[r % ends.len()]);
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
        // LF, CRLF, CR, or all three in turn.
        ends in prop::sample::select(vec![vec!["\n"], vec!["\r\n"], vec!["\r"], vec!["\r", "\n", "\r\n"]]),
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
        let (text, starts) = write_csv(&rows, delim, &ends, final_newline, &force_quote);
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

#[test]
fn the_signature_is_the_header_and_reads_only_its_line() {
    let input = b"a,b\n1,2\n3,4\n";
    let mut r = CsvReader::new(&input[..], "t.csv", 1, opts(true, b','));
    assert_eq!(r.signature().unwrap(), Some(crate::formats::Signature::CsvHeader(vec!["a".into(), "b".into()])));
    assert!(r.bytes_read() < input.len() as u64, "{}", r.bytes_read());
    let mut r = CsvReader::new(&input[..], "t.csv", 1, opts(false, b','));
    assert_eq!(r.signature().unwrap(), None);
    assert_eq!(CsvReader::new(&b""[..], "t.csv", 1, opts(true, b',')).signature().unwrap(), None);
}

/// A cell cut from its record is found in it, at its offset; text in
/// another buffer (an unescaped cell) is not, even when empty or adjacent.
#[test]
fn offset_in_finds_only_slices_of_the_record() {
    let record = String::from("ab,\"c\"\"d\",");
    assert_eq!(offset_in(&record, &record[3..]), Some(3));
    assert_eq!(offset_in(&record, &record[..0]), Some(0));
    assert_eq!(offset_in(&record, &record[record.len()..]), Some(record.len()));
    let scratch = String::from("c\"d");
    assert_eq!(offset_in(&record, &scratch), None);
    assert_eq!(offset_in(&record[..2], &record[1..4]), None, "a slice running past the whole");
}

/// Line ends are found with the tokenizer's quote rules: a quote inside an
/// unquoted cell is data, `\` takes the next byte, `""` is one quote, and
/// a quoted LF or CR is data. Outside quotes every LF, CR and CRLF ends a
/// record, wherever it is (as `read_csv` and Python's `csv` read them).
#[test]
fn the_line_end_is_found_as_the_tokenizer_reads_quotes() {
    let no_header = opts(false, b',');
    // A quote inside an unquoted cell opens nothing: the CR after it ends
    // a record in a file of LF records.
    let out = read_with(b"ab\"c\nd\ne\"f\rg\n", no_header.clone());
    assert_eq!(
        jsons(&out),
        [r#"{"column_a":"ab\"c"}"#, r#"{"column_a":"d"}"#, r#"{"column_a":"e\"f"}"#, r#"{"column_a":"g"}"#]
    );
    // An escaped quote inside quotes.
    let escaped = CsvOptions { escape: Some(b'\\'), ..no_header.clone() };
    let out = read_with(b"\"\\\"x\"\nc\nd\"e\rf\n", escaped.clone());
    assert_eq!(
        jsons(&out),
        [r#"{"column_a":"\"x"}"#, r#"{"column_a":"c"}"#, r#"{"column_a":"d\"e"}"#, r#"{"column_a":"f"}"#]
    );
    // The other way round: an LF inside quotes after an escaped quote, CR lines.
    let out = read_with(b"\"a\\\"b\nc\"\rd\r", escaped);
    assert_eq!(jsons(&out), [r#"{"column_a":"a\"b\nc"}"#, r#"{"column_a":"d"}"#]);
    // A quote after a delimiter opens a cell: its lone CR is data.
    let out = read_with(b"x,\"a\rb\"\ny,z\n", no_header.clone());
    assert_eq!(jsons(&out), [r#"{"column_a":"x","column_b":"a\rb"}"#, r#"{"column_a":"y","column_b":"z"}"#]);
    // `""` inside quotes is one quote, not a close and an open.
    let out = read_with(b"\"x\"\"y\nz\"\rw\r", no_header);
    assert_eq!(jsons(&out), [r#"{"column_a":"x\"y\nz"}"#, r#"{"column_a":"w"}"#]);
}

/// Records end at CR, LF or CRLF wherever each occurs outside quotes,
/// whatever the file's first line end was: a file of CR records whose
/// last line ends in LF (fivethirtyeight's `bachelorette.csv`: its last
/// cell was read as "\n"), CR and CRLF records mixed (a cell started with
/// "\n"), an LF file with a CR record.
#[test]
fn every_line_end_outside_quotes_ends_a_record() {
    let out = read(b"a,b\r1,2\r3,\n");
    assert_eq!(jsons(&out), [r#"{"a":"1","b":"2"}"#, r#"{"a":"3","b":null}"#]);
    assert_eq!(out.iter().map(|r| (r.0, r.1)).collect::<Vec<_>>(), [(2, 4), (3, 8)]);
    let out = read(b"a,b\r1,2\r\n3,4\r");
    assert_eq!(jsons(&out), [r#"{"a":"1","b":"2"}"#, r#"{"a":"3","b":"4"}"#]);
    assert_eq!(out.iter().map(|r| (r.0, r.1)).collect::<Vec<_>>(), [(2, 4), (3, 9)]);
    let out = read(b"a,b\n1,2\r3,4\r\n5,6\n\r7,8");
    assert_eq!(
        jsons(&out),
        [r#"{"a":"1","b":"2"}"#, r#"{"a":"3","b":"4"}"#, r#"{"a":"5","b":"6"}"#, r#"{"a":"7","b":"8"}"#]
    );
    // LF then CR is two line ends: a blank line between them (line 5).
    assert_eq!(out.iter().map(|r| (r.0, r.1)).collect::<Vec<_>>(), [(2, 4), (3, 8), (4, 13), (6, 18)]);
    // A quoted cell keeps its line breaks as written, and each counts one
    // line: CRLF, LF CR (two), CR.
    let out = read(b"a,b\r\"x\r\ny\n\rz\rw\",1\r2,3\r");
    assert_eq!(jsons(&out), [r#"{"a":"x\r\ny\n\rz\rw","b":"1"}"#, r#"{"a":"2","b":"3"}"#]);
    assert_eq!(out.iter().map(|r| r.0).collect::<Vec<_>>(), [2, 7]);
    // A comment line ends at CR too, and so does the header.
    let o = dialect(|o| o.comment = Some(b'#'));
    let out = read_with(b"a,b\r# note\r1,2 # tail\r\n3,4\n", o);
    assert_eq!(jsons(&out), [r#"{"a":"1","b":"2 "}"#, r#"{"a":"3","b":"4"}"#]);
    assert_eq!(out.iter().map(|r| r.0).collect::<Vec<_>>(), [3, 4]);
    // A multi-byte delimiter cut by a line end is data.
    let out = read_with(b"a||b\r1|\r2||3\r", dialect(|o| o.delimiter = b"||".to_vec()));
    assert_eq!(jsons(&out), ["ERR expected 2 cells but found 1", r#"{"a":"2","b":"3"}"#]);
}

/// The record's text a reject shows, and the line ends `max_record_bytes`
/// leaves out: CR and CRLF as well as LF.
#[test]
fn max_record_bytes_leaves_out_every_kind_of_line_end() {
    for input in [&b"a\r12345\r1\r"[..], b"a\r\n12345\r\n1\r\n", b"a\n12345\n1\n"] {
        let o = dialect(|o| o.max_record_bytes = 5);
        let out = read_with(input, o);
        assert_eq!(jsons(&out), [r#"{"a":"12345"}"#, r#"{"a":"1"}"#], "{input:?}");
        let o = dialect(|o| o.max_record_bytes = 4);
        let out = read_with(input, o);
        assert!(out[0].2.contains("max_record_bytes"), "{input:?}: {out:?}");
        assert_eq!(out[1].2, r#"{"a":"1"}"#, "{input:?}");
    }
}

/// A headerless one-column file keeps its leading blank lines as NULL
/// values, as it keeps later ones (read_csv reads them so); with more
/// columns they are nothing.
#[test]
fn leading_blank_lines_of_a_one_column_file_are_null_values() {
    let out = read_with(b"\nZ\n\nW\n", opts(false, b','));
    assert_eq!(
        jsons(&out),
        [r#"{"column_a":null}"#, r#"{"column_a":"Z"}"#, r#"{"column_a":null}"#, r#"{"column_a":"W"}"#]
    );
    assert_eq!(out.iter().map(|r| r.0).collect::<Vec<_>>(), [1, 2, 3, 4]);
    let out = read_with(b"\r\n\r\n\nZ\r\n", opts(false, b','));
    assert_eq!(
        jsons(&out),
        [r#"{"column_a":null}"#, r#"{"column_a":null}"#, r#"{"column_a":null}"#, r#"{"column_a":"Z"}"#]
    );
    let out = read_with(b"\n\n1,2\n", opts(false, b','));
    assert_eq!(jsons(&out), [r#"{"column_a":"1","column_b":"2"}"#]);
}

/// Every record of `input` as (line, byte, compact JSON or `ERR` and the
/// cause), read with `chunk`-byte reads, the one-pass reading of plain
/// records on or off; and how many records that pass read. A whole-file
/// error is its message.
type Passes = Result<(Vec<(u64, u64, String)>, u64), String>;
fn read_passes(input: &[u8], chunk: usize, o: &CsvOptions, one_pass: bool) -> Passes {
    let mut r = CsvReader::new(input, "p.csv", chunk, o.clone());
    r.one_pass = one_pass;
    let mut out = Vec::new();
    let mut batch = Batch::default();
    loop {
        batch.clear();
        if r.next_batch(&mut batch, 3).map_err(|e| e.message)? == 0 {
            break;
        }
        for (i, m) in batch.meta.iter().enumerate() {
            let text = match &m.error {
                Some(e) => format!("ERR {}", e.cause),
                None => {
                    let mut s = String::new();
                    write_compact_json(batch.tape.record(i), &mut s);
                    s
                }
            };
            out.push((m.line, m.byte, text));
        }
    }
    Ok((out, r.one_pass_records))
}

#[test]
fn plain_records_are_read_in_one_pass_and_others_by_the_state_machine() {
    let o = opts(true, b',');
    // Three plain records, one whose cell starts with a quote, one whose
    // CR-less line end is the input's end.
    let input = b"a,b,c\n1,x y,\n2,,z\r\n\"q\",4,5\n6,in\"side,7\n8,9,10";
    let (records, one_pass) = read_passes(input, 1 << 20, &o, true).unwrap();
    assert_eq!(records.len(), 5);
    // 1 and 2; not the header, scanned before any input is read, nor a
    // record with a quote byte (the state machine reads on from the cell
    // holding it: a quoted cell, or data inside an unquoted one), nor the
    // last, whose end needs the end of input.
    assert_eq!(one_pass, 2);
    assert_eq!(read_passes(input, 1 << 20, &o, false), Ok((records, 0)));
    // A comment byte or a longer delimiter leaves every record to the state machine.
    let comment = read_passes(b"a,b\n1,2\n", 64, &dialect(|d| d.comment = Some(b'#')), true);
    assert_eq!(comment.map(|r| (r.0.len(), r.1)), Ok((1, 0)));
    let long = read_passes(b"a::b\n1::2\n", 64, &dialect(|d| d.delimiter = b"::".to_vec()), true);
    assert_eq!(long.map(|r| (r.0.len(), r.1)), Ok((1, 0)));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(512), .. ProptestConfig::default() })]

    /// Reading plain records in one pass changes nothing: for text made of
    /// the bytes the tokenizer acts on (delimiters, quotes, escapes, line
    /// ends, invalid UTF-8), any dialect, chunk size and record limit, the
    /// records, their lines and bytes and the bad records' causes are the
    /// state machine's alone.
    #[test]
    fn the_one_pass_reading_gives_what_the_state_machine_gives(
        picks in prop::collection::vec(0usize..12, 0..120),
        delim in prop::sample::select(vec![b',', b';', b'\t', b'|']),
        quote in prop::sample::select(vec![Some(b'"'), Some(b'\''), None]),
        escape in prop::sample::select(vec![None, Some(b'\\')]),
        has_header in any::<bool>(),
        null_padding in any::<bool>(),
        max_record_bytes in prop::sample::select(vec![4usize, 16, 1 << 20]),
        chunk in prop::sample::select(vec![1usize, 5, 16, 1 << 20]),
    ) {
        let pool: [&[u8]; 12] = [b",", b";", b"\t", b"|", b"\"", b"'", b"\\", b"\n", b"\r", b"ab", b"\xff", "\u{e9}".as_bytes()];
        let text: Vec<u8> = picks.iter().flat_map(|&p| pool[p].iter().copied()).collect();
        let o = dialect(|d| {
            d.has_header = has_header;
            d.delimiter = vec![delim];
            d.quote = quote;
            d.escape = escape;
            d.null_padding = null_padding;
            d.max_record_bytes = max_record_bytes;
        });
        let fast = read_passes(&text, chunk, &o, true).map(|r| r.0);
        let slow = read_passes(&text, chunk, &o, false);
        prop_assert_eq!(slow.as_ref().map(|r| r.1).unwrap_or(0), 0);
        prop_assert_eq!(fast, slow.map(|r| r.0));
    }
}
