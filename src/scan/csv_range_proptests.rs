//! Property test of CSV ranges (formats/csv/range.rs): a CSV file cut into
//! byte ranges, each guessing where its first record starts, reads exactly
//! as the whole file does. The generator makes the guesses go wrong: quoted
//! cells hold newlines, delimiters and `""`, a quote may sit inside an
//! unquoted cell or after a closing quote, and records may be bad.

use proptest::prelude::*;

use super::proptests::{comparable_scan, cutting};
use super::tests::run_threads_as;
use crate::options::{InputFormat, ParamValue};

fn cell() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-c0-9 ]{0,3}",
        // Quoted, holding the delimiter, line ends and escaped quotes.
        3 => "[a-c,\n\"]{0,5}".prop_map(|s| format!("\"{}\"", s.replace('"', "\"\""))),
        1 => "[a\r\n]{0,3}".prop_map(|s| format!("\"{s}\"")),
        // A literal tail after the closing quote, and a quote inside an
        // unquoted cell: both data, and both break quote counting.
        1 => "[a-c\n]{0,3}".prop_map(|s| format!("\"{s}\"x")),
        1 => Just("a\"b".to_string()),
    ]
}

/// One line (or several, when a quoted cell holds line ends) of a file
/// whose records have `width` cells, ending with one of `ends`.
fn line(width: usize, ends: Vec<&'static str>) -> impl Strategy<Value = String> {
    let end = prop::sample::select(ends);
    prop_oneof![
        10 => (prop::collection::vec(cell(), width..=width), end.clone()).prop_map(|(c, e)| c.join(",") + e),
        // A bad record: too few or too many cells.
        1 => (prop::collection::vec(cell(), 1..width + 3), end.clone()).prop_map(|(c, e)| c.join(",") + e),
        1 => end.clone().prop_map(str::to_string),
        1 => ("#[a-c\"]{0,3}", end).prop_map(|(c, e)| c + e),
    ]
}

/// A file's line ends: LF, CRLF or CR throughout, or mixed line by line
/// (each of them ends a record wherever it is).
fn line_ends() -> impl Strategy<Value = Vec<&'static str>> {
    prop_oneof![Just(vec!["\n"]), Just(vec!["\r\n"]), Just(vec!["\r"]), Just(vec!["\n", "\r\n", "\r"]),]
}

fn file() -> impl Strategy<Value = (String, usize)> {
    (1usize..4, line_ends()).prop_flat_map(|(width, ends)| {
        (
            prop::collection::vec(line(width, ends), 0..30),
            // The file's last record: none, unterminated, or an open quote.
            prop_oneof![Just(String::new()), Just("z".to_string()), Just("\"open,\nquote".to_string())],
        )
            .prop_map(move |(lines, last)| (lines.concat() + &last, width))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(32), .. ProptestConfig::default() })]

    /// Cutting a CSV file into byte ranges read by several threads changes
    /// nothing: rows in order, registry, drifts, counters and the first bad
    /// record under `stop`, at every thread count, range size and read
    /// size, with and without a header, skipped lines, comments, a
    /// byte-order mark, and LF, CRLF, CR or mixed line ends.
    #[test]
    fn csv_ranges_never_change_the_result(
        (body, width) in file(),
        header in any::<bool>(),
        bom in any::<bool>(),
        header_end in prop::sample::select(vec!["\n", "\r\n", "\r"]),
        comment in any::<bool>(),
        skip in 0i64..3,
        (range, chunk, threads, on_error) in cutting(),
    ) {
        let mut text = String::new();
        if bom {
            text.push('\u{feff}');
        }
        if header {
            let names: Vec<String> = (0..width).map(|i| format!("h{i}")).collect();
            text.push_str(&(names.join(",") + header_end));
        }
        text.push_str(&body);
        let dir = std::env::temp_dir().join(format!("ss-csv-ranges-{}-{}", std::process::id(), super::tests::rand_suffix()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("in.csv");
        std::fs::write(&path, &text).unwrap();
        let path = path.to_string_lossy().into_owned();
        let mut base = vec![
            ("on_error", ParamValue::Str(on_error.into())),
            ("csv_auto_detect", ParamValue::Bool(false)),
            ("csv_has_header", ParamValue::Bool(header)),
            ("csv_skip_lines", ParamValue::Int(skip)),
        ];
        if comment {
            base.push(("csv_comment", ParamValue::Str("#".into())));
        }
        let mut cut = base.clone();
        cut.push(("scan_range_bytes", ParamValue::Int(range as i64)));
        cut.push(("read_chunk_bytes", ParamValue::Int(chunk)));
        let csv = |params: &[(&str, ParamValue)], threads| {
            run_threads_as("sanitize_csv", InputFormat::Csv, &path, params, threads)
        };
        let expected = comparable_scan(csv(&base, 1));
        let got = comparable_scan(csv(&cut, threads));
        let _ = std::fs::remove_dir_all(&dir);
        prop_assert_eq!(got, expected, "file {:?}", text);
    }
}
