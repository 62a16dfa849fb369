//! Property test of the flat paths (`Batch::flat_keys`): the probe's flat
//! shape keys (infer/shapes.rs `absorb_flat`) and the router's placing by
//! position (route `write_flat_record`) give exactly what the general paths
//! give: rows, names, registry, drifts and counters, over files whose
//! headers differ, under parsers, pins, a rescue column, projections and
//! bad records.

use proptest::prelude::*;
use serde_json::Value;

use super::proptests::{comparable_scan, Comparable};
use super::tests::{projected_rows, run_threads_as};
use crate::formats::FLAT_KEYS_OFF;
use crate::options::{InputFormat, ParamValue};

/// Cells the parsers tell apart, and some that sit between them.
fn cell() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "",
        "1",
        "-7",
        "2.5",
        "1e3",
        " 3 ",
        "x",
        "true",
        "no",
        "2026-01-01T00:00:00Z",
        "2026-01-01 10:00:00",
        "9999-12-31T23:59:59Z",
        "1,5",
        "9223372036854775808",
        "\"q,x\"",
        "\"\"",
        "\"7\"",
        "\"x\"\"y\"",
        "007",
        "NaN",
        "-0",
    ])
    .prop_map(str::to_string)
}

/// Records of `width` cells, a few of the wrong width.
fn records(width: usize) -> impl Strategy<Value = String> {
    let record = prop_oneof![
        12 => prop::collection::vec(cell(), width..=width),
        1 => prop::collection::vec(cell(), 1..width + 2),
    ]
    .prop_map(|cells| cells.join(",") + "\n");
    prop::collection::vec(record, 0..25).prop_map(|records| records.concat())
}

/// The files of one run, and whether they have a header: with one, every
/// file has the same one (distinct names from a small pool, in any order:
/// directory mode's rule); without, each file's width is its own, so
/// files name different columns (`column_a`, ...) and a file may lack a
/// column of the run.
fn files() -> impl Strategy<Value = (Vec<String>, bool)> {
    prop_oneof![
        prop::sample::subsequence(vec!["a", "b", "c", "d", "A", "a b"], 1..=4).prop_shuffle().prop_flat_map(|names| {
            let header = names.join(",") + "\n";
            prop::collection::vec(records(names.len()), 1..4)
                .prop_map(move |bodies| (bodies.into_iter().map(|b| header.clone() + &b).collect(), true))
        }),
        prop::collection::vec((1usize..5).prop_flat_map(records), 1..4).prop_map(|bodies| (bodies, false)),
    ]
}

fn options() -> impl Strategy<Value = Vec<(&'static str, ParamValue)>> {
    // (`pin_types` names `a`, which headerless files lack: no pin then.)
    (
        any::<(bool, bool, bool)>(),
        prop::option::of(prop::sample::select(vec!["BIGINT", "VARCHAR", "DOUBLE", "TIMESTAMP"])),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.2),
        prop::sample::select(vec!["skip_row", "emit_null_row"]),
    )
        .prop_map(|((ints, floats, stamps), pin, rescue, tokens, nanos, on_error)| {
            let mut p = vec![
                ("parse_integers", ParamValue::Bool(ints)),
                ("parse_floats", ParamValue::Bool(floats)),
                ("parse_iso_timestamps", ParamValue::Bool(stamps)),
                ("on_error", ParamValue::Str(on_error.into())),
            ];
            if let Some(ty) = pin {
                p.push(("pin_types", ParamValue::Map(vec![("a".into(), ParamValue::Str(ty.into()))])));
            }
            if rescue {
                p.push(("rescue_column", ParamValue::Str("_rescued".into())));
            }
            if tokens {
                p.push(("true_tokens", ParamValue::List(vec![ParamValue::Str("x".into())])));
            }
            if nanos {
                p.push(("timestamp_precision", ParamValue::Str("TIMESTAMP_NANOS".into())));
            }
            p
        })
}

/// `files` as `0.csv`, `1.csv`, ... in a new directory, and their glob.
fn written_files(files: &[String]) -> (std::path::PathBuf, String) {
    let dir = crate::test_support::scratch_dir("flat");
    for (i, text) in files.iter().enumerate() {
        std::fs::write(dir.join(format!("{i}.csv")), text).unwrap();
    }
    let glob = dir.join("*.csv").to_string_lossy().into_owned();
    (dir, glob)
}

/// The whole run (probe and scan), and the scan of `mask`'s columns alone.
fn runs(
    glob: &str,
    params: &[(&str, ParamValue)],
    threads: usize,
    mask: &[bool],
) -> (Comparable, Option<Vec<Vec<Value>>>) {
    let whole = comparable_scan(run_threads_as("sanitize_csv", InputFormat::Csv, glob, params, threads));
    let projected = projected_rows("sanitize_csv", InputFormat::Csv, glob, params, (threads, super::plan_on), mask);
    (whole, projected)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(64), .. ProptestConfig::default() })]

    #[test]
    fn the_flat_paths_never_change_the_result(
        (files, header) in files(),
        params in options(),
        threads in 1usize..4,
        mask in prop::collection::vec(any::<bool>(), 0..8),
    ) {
        let (dir, glob) = written_files(&files);
        let mut params = params;
        params.push(("csv_has_header", ParamValue::Bool(header)));
        let flat = runs(&glob, &params, threads, &mask);
        let general = FLAT_KEYS_OFF.on_for(|| runs(&glob, &params, threads, &mask));
        let _ = std::fs::remove_dir_all(&dir);
        prop_assert_eq!(flat.0, general.0, "files {:?}", files);
        prop_assert_eq!(flat.1, general.1, "files {:?}", files);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(48), .. ProptestConfig::default() })]

    /// From three threads the probe's decoding threads write the records'
    /// shapes (infer/shapes.rs `ShapeWriter`): the whole run gives what it
    /// gives when the absorbing thread writes them all.
    #[test]
    fn written_shapes_never_change_the_result(
        (files, header) in files(),
        params in options(),
        threads in 3usize..6,
    ) {
        let (dir, glob) = written_files(&files);
        let mut params = params;
        params.push(("csv_has_header", ParamValue::Bool(header)));
        let written = comparable_scan(run_threads_as("sanitize_csv", InputFormat::Csv, &glob, &params, threads));
        let own = super::WRITER_OFF
            .on_for(|| comparable_scan(run_threads_as("sanitize_csv", InputFormat::Csv, &glob, &params, threads)));
        let _ = std::fs::remove_dir_all(&dir);
        prop_assert_eq!(written, own, "files {:?}", files);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(64), .. ProptestConfig::default() })]

    /// The probe's flat board (value/flat_shape.rs: a CSV reader leaves a
    /// record undecoded where the probe absorbed one of its shape) changes
    /// nothing: rows, names, registry, drifts and counters with it and
    /// without it, under parsers, units, tokens and NULL strings (no pin,
    /// which turns the boards off), at every thread count and range size
    /// (small ranges make many batches, whose records meet the shapes of
    /// earlier ones).
    #[test]
    fn the_flat_board_never_changes_the_result(
        (files, header) in files(),
        params in parsing_options(),
        on_error in prop::sample::select(vec!["skip_row", "emit_null_row"]),
        threads in 1usize..5,
        range in prop_oneof![1i64..48, Just(1 << 20)],
    ) {
        let (dir, glob) = written_files(&files);
        let mut params = params;
        params.push(("csv_has_header", ParamValue::Bool(header)));
        params.push(("on_error", ParamValue::Str(on_error.into())));
        params.push(("scan_range_bytes", ParamValue::Int(range)));
        let run = || comparable_scan(run_threads_as("sanitize_csv", InputFormat::Csv, &glob, &params, threads));
        let with_board = run();
        let without = crate::infer::BOARD_OFF.on_for(run);
        let _ = std::fs::remove_dir_all(&dir);
        prop_assert_eq!(with_board, without, "files {:?}", files);
    }
}

/// The string parsers and units of the probe's shapes.
fn parsing_options() -> impl Strategy<Value = Vec<(&'static str, ParamValue)>> {
    (any::<(bool, bool, bool, bool, bool)>(), prop::sample::select(vec!["", "x", "NaN"])).prop_map(
        |((ints, floats, stamps, tokens, nanos), null)| {
            let mut p = vec![
                ("parse_integers", ParamValue::Bool(ints)),
                ("parse_floats", ParamValue::Bool(floats)),
                ("parse_iso_timestamps", ParamValue::Bool(stamps)),
                ("csv_null_strings", ParamValue::List(vec![ParamValue::Str(null.into())])),
            ];
            if tokens {
                p.push(("true_tokens", ParamValue::List(vec![ParamValue::Str("x".into())])));
            }
            if nanos {
                p.push(("timestamp_precision", ParamValue::Str("TIMESTAMP_NANOS".into())));
            }
            p
        },
    )
}

/// One batch of `text` read by a CSV reader of `options`, looking at
/// `board` when given.
fn read_csv_batch(
    text: &str,
    options: &crate::options::Options,
    board: Option<std::sync::Arc<crate::value::flat_shape::FlatBoard>>,
) -> crate::formats::Batch {
    use crate::formats::RecordReader;
    let mut reader = crate::formats::csv::CsvReader::new(text.as_bytes(), "t.csv", 64, options.csv_dialect());
    let mut batch =
        crate::formats::Batch { known_flat: board.map(crate::value::flat_shape::KnownFlat::new), ..Default::default() };
    reader.next_batch(&mut batch, 100).unwrap();
    batch
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(256), .. ProptestConfig::default() })]

    /// A CSV reader leaves a record undecoded exactly when the probe's
    /// cache absorbed a record of its shape before: the shape the reader
    /// writes from the cells' text is the one the cache writes from the
    /// tape, under every parser, unit and NULL string, quoted and escaped
    /// cells included, in every dialect (a header or none, CRLF, another
    /// delimiter, quote and escape, a delimiter of two bytes), and with
    /// another key list numbered first. A short record, even one
    /// `csv_null_padding` makes good, is always decoded.
    #[test]
    fn the_reader_writes_the_shape_the_cache_writes(
        cells in (1usize..4).prop_flat_map(|width| prop::collection::vec((cell(), cell()), width..=width)),
        params in parsing_options(),
        (header, crlf, pad, another_list, short) in any::<(bool, bool, bool, bool, bool)>(),
        (delimiter, quote, escape) in prop::sample::select(vec![(",", "\"", "\""), (";", "'", "\\"), ("||", "\"", "\"")]),
    ) {
        let width = cells.len();
        let mut params = params;
        params.extend([
            ("csv_has_header", ParamValue::Bool(header)),
            ("csv_null_padding", ParamValue::Bool(pad)),
            ("csv_delimiter", ParamValue::Str(delimiter.into())),
            ("csv_quote", ParamValue::Str(quote.into())),
            ("csv_escape", ParamValue::Str(escape.into())),
        ]);
        let options = crate::options::Options::parse("sanitize_csv", Some(InputFormat::Csv), &params).unwrap();
        let rules = options.rules();
        let end = if crlf { "\r\n" } else { "\n" };
        let line = |cells: Vec<String>| cells.join(delimiter).replace('"', quote) + end;
        let head = if header { line((0..width).map(|i| format!("c{i}")).collect()) } else { String::new() };
        let first = head.clone() + &line(cells.iter().map(|c| c.0.clone()).collect());
        let mut second: Vec<String> = cells.iter().map(|c| c.1.clone()).collect();
        // Short only where the cells cannot split or join (a cell such as
        // `1,5` is two cells of its own).
        let plain = |c: &String| !c.contains(delimiter) && !c.contains('"');
        let short = short && width > 1 && second.iter().all(plain);
        if short {
            second.pop();
        }
        let second = head + &line(second);
        let mut cache = crate::infer::ShapeCache::new(&rules);
        let mut root = crate::infer::StructNode::default();
        let mut stats = crate::infer::InferStats::default();
        let absorb = |batch: &crate::formats::Batch, cache: &mut crate::infer::ShapeCache, root: &mut _, stats: &mut _| {
            let good = batch.meta.first().is_some_and(|m| m.error.is_none());
            if good {
                cache.absorb_flat(root, batch.flat_keys.as_ref().unwrap(), batch.tape.record(0), &rules, stats, None);
            }
            good
        };
        if another_list {
            // Key list 0 is another file's: this one's is number 1.
            let other = crate::options::Options::parse("sanitize_csv", Some(InputFormat::Csv), &[]).unwrap();
            prop_assert!(absorb(&read_csv_batch("zz\n7\n", &other, None), &mut cache, &mut root, &mut stats));
        }
        let first = read_csv_batch(&first, &options, None);
        prop_assume!(absorb(&first, &mut cache, &mut root, &mut stats));
        // (None only while another test has the boards off.)
        let Some(board) = cache.flat_board().cloned() else { return Ok(()) };
        let known = read_csv_batch(&second, &options, Some(board));
        let known = known.tape.roots.first() == Some(&crate::formats::KNOWN_SHAPE);
        // The cache's own answer: a hit for the second record's shape.
        let second = read_csv_batch(&second, &options, None);
        let hits = cache.hits();
        let absorbed = absorb(&second, &mut cache, &mut root, &mut stats);
        let hit = absorbed && cache.hits() == hits + 1;
        prop_assert_eq!(known, hit && !short, "cells {:?}", cells);
    }
}
