//! Property tests of the engine's invariants (docs/architecture.md).

use proptest::prelude::*;
use serde_json::{Map, Value};

use super::tests::run;
use crate::formats::json::lines::JsonLinesReader;
use crate::formats::json::parse_value;
use crate::formats::{Batch, RecordReader};
use crate::options::ParamValue;
use crate::value::{write_compact_json, Tape};

/// Arbitrary JSON values, nested a few levels, over a small key alphabet so
/// that keys repeat across records and drift actually happens.
pub(crate) fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-1000i64..1000).prop_map(Value::from),
        (-1000.0f64..1000.0).prop_map(|f| Value::from((f * 4.0).round() / 4.0 + 0.25)),
        "[a-c ]{0,3}".prop_map(Value::from),
        // NaN and the infinities, which JSON lacks but Python writes: a
        // marker string that `to_lines` turns into the bare literal.
        prop_oneof![Just("NaN"), Just("Infinity"), Just("-Infinity")]
            .prop_map(|w| Value::from(format!("{NON_FINITE}{w}"))),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[abcAB_]{1,2}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Records whose strings are often ones a parser types ("7", "2.5",
/// "2026-01-31") beside ones it does not.
pub(crate) fn parsed_record() -> impl Strategy<Value = Map<String, Value>> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-5i64..5).prop_map(Value::from),
        prop::sample::select(vec!["7", "-3", "2.5", "2026-01-31", "s", "t"]).prop_map(Value::from),
    ];
    let value = leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[ab]", inner, 0..3).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    prop::collection::btree_map("[xy]", value, 0..4).prop_map(|m| m.into_iter().collect())
}

pub(crate) fn record() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map("[xyzXY ]{1,2}", json_value(), 0..5).prop_map(|m| m.into_iter().collect())
}

/// Marks a generated non-finite number (see `json_value`).
const NON_FINITE: &str = "\u{1}nonfinite:";

pub(crate) fn to_lines(records: &[Map<String, Value>]) -> String {
    records
        .iter()
        .map(|r| {
            let line = Value::Object(r.clone()).to_string();
            let line = ["NaN", "Infinity", "-Infinity"]
                .iter()
                .fold(line, |l, w| l.replace(&format!("\"\\u0001nonfinite:{w}\""), w));
            line + "\n"
        })
        .collect()
}

fn has_evidence(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Array(a) => a.iter().any(has_evidence),
        Value::Object(o) => o.values().any(has_evidence),
        _ => true,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(64), .. ProptestConfig::default() })]

    /// Every top-level value with evidence lands in exactly one column of its
    /// family; a value without evidence leaves the whole family null.
    #[test]
    fn every_value_lands_in_exactly_one_column(records in prop::collection::vec(record(), 1..12)) {
        let r = run(&to_lines(&records), &[("field_name_policy", ParamValue::Str("preserve".into()))]).unwrap();
        let schema = &r.plan.schema;
        for (row, rec) in records.iter().enumerate() {
            for f in &schema.families {
                let cols: Vec<usize> = schema.outputs.iter().enumerate()
                    .filter(|(_, (fi, _))| schema.families[*fi].source_key == f.source_key)
                    .map(|(i, _)| i).collect();
                let non_null = cols.iter().filter(|&&c| !r.rows[row][c].is_null()).count();
                let expected = usize::from(rec.get(&f.source_key).is_some_and(has_evidence));
                prop_assert_eq!(non_null, expected, "row {} key {:?}", row, f.source_key);
            }
        }
        prop_assert_eq!(r.plan.probe_stats.values_nulled, 0);
    }

    /// The same under string parsers, where a trusted scan writes a string
    /// into a lone text column without parsing it (route/mod.rs
    /// `text_keeps`): every value still lands once, nothing is nulled, and
    /// such a column holds the source's text exactly ("7" stays "7").
    #[test]
    fn every_value_lands_once_under_parsers(records in prop::collection::vec(parsed_record(), 1..12)) {
        use crate::infer::{ScalarKind, TypeNode};
        let r = run(&to_lines(&records), &[
            ("field_name_policy", ParamValue::Str("preserve".into())),
            ("parse_integers", ParamValue::Bool(true)),
            ("parse_floats", ParamValue::Bool(true)),
            ("parse_iso_dates", ParamValue::Bool(true)),
        ]).unwrap();
        let schema = &r.plan.schema;
        for (row, rec) in records.iter().enumerate() {
            for (fi, f) in schema.families.iter().enumerate() {
                let cols: Vec<usize> = schema.outputs.iter().enumerate()
                    .filter(|(_, (of, _))| *of == fi).map(|(i, _)| i).collect();
                let non_null = cols.iter().filter(|&&c| !r.rows[row][c].is_null()).count();
                let source = rec.get(&f.source_key);
                prop_assert_eq!(non_null, usize::from(source.is_some_and(has_evidence)), "row {} key {:?}", row, f.source_key);
                if let ([v], Some(Value::String(s))) = (f.versions.as_slice(), source) {
                    if v.ty == TypeNode::Scalar(ScalarKind::Str) {
                        prop_assert_eq!(&r.rows[row][cols[0]], &Value::String(s.clone()), "row {}", row);
                    }
                }
            }
        }
        prop_assert_eq!(r.plan.probe_stats.values_nulled, 0);
    }

    /// Scanning the same data again with the registry changes nothing.
    #[test]
    fn registry_merge_is_idempotent(records in prop::collection::vec(record(), 1..10)) {
        let text = to_lines(&records);
        let first = run(&text, &[]).unwrap();
        let second = run(&text, &[("registry", ParamValue::Str(first.plan.registry_json.clone()))]).unwrap();
        prop_assert_eq!(&second.plan.registry_json, &first.plan.registry_json);
        prop_assert_eq!(second.drifts().len(), 0);
        prop_assert_eq!(&second.rows, &first.rows);
    }

    /// The same under string parsers, with strings they type beside
    /// strings they do not, in lists, structs and wrapped scalars (the
    /// shapes of docs/engine.md "Parsed strings inside lists").
    #[test]
    fn registry_merge_is_idempotent_under_parsers(records in prop::collection::vec(parsed_record(), 1..10)) {
        let text = to_lines(&records);
        let parsers = [
            ("parse_integers", ParamValue::Bool(true)),
            ("parse_floats", ParamValue::Bool(true)),
            ("parse_iso_dates", ParamValue::Bool(true)),
        ];
        let first = run(&text, &parsers).unwrap();
        let mut again = parsers.to_vec();
        again.push(("registry", ParamValue::Str(first.plan.registry_json.clone())));
        let second = run(&text, &again).unwrap();
        prop_assert_eq!(&second.plan.registry_json, &first.plan.registry_json);
        prop_assert_eq!(second.drifts().len(), 0);
        prop_assert_eq!(&second.rows, &first.rows);
    }

    /// Strict mode with the probe's registry takes every record the additive
    /// scan took, identically: probe and scan agree.
    #[test]
    fn strict_scan_agrees_with_the_probe(records in prop::collection::vec(record(), 1..10)) {
        let text = to_lines(&records);
        let additive = run(&text, &[]).unwrap();
        let strict = run(&text, &[
            ("registry", ParamValue::Str(additive.plan.registry_json.clone())),
            ("schema_mode", ParamValue::Str("strict".into())),
            ("on_error", ParamValue::Str("stop".into())),
        ]).unwrap();
        prop_assert_eq!(&strict.rows, &additive.rows);
        prop_assert_eq!(&strict.names, &additive.names);
    }

    /// The clean names depend on the set of keys, not on their order.
    #[test]
    fn names_do_not_depend_on_key_order(keys in prop::collection::btree_set("[a-cA-C $_]{1,3}", 1..8), seed in any::<u64>()) {
        let keys: Vec<String> = keys.into_iter().collect();
        let mut shuffled = keys.clone();
        // A deterministic shuffle from the seed.
        let mut s = seed;
        for i in (1..shuffled.len()).rev() {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            shuffled.swap(i, (s >> 33) as usize % (i + 1));
        }
        let line = |ks: &[String]| ks.iter().map(|k| format!("{{{}:1}}\n", Value::from(k.as_str()))).collect::<String>();
        for policy in ["lower_alpha", "lower_snake", "preserve"] {
            let p = [("field_name_policy", ParamValue::Str(policy.into()))];
            let a = run(&line(&keys), &p);
            let b = run(&line(&shuffled), &p);
            match (a, b) {
                (Ok(a), Ok(b)) => prop_assert_eq!(a.names, b.names),
                (Err(a), Err(b)) => prop_assert_eq!(a, b),
                (a, b) => prop_assert!(false, "{:?} vs {:?}", a.is_ok(), b.is_ok()),
            }
        }
    }

    /// The JSON parser never panics, and what it accepts it writes back
    /// as JSON that serde_json reads as the same value.
    #[test]
    fn json_parser_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        if let Ok(text) = std::str::from_utf8(&bytes) {
            let mut tape = Tape::default();
            if let Ok(root) = parse_value(text, &mut tape) {
                let mut out = String::new();
                write_compact_json(crate::value::ValueRef { tape: &tape, idx: root as usize }, &mut out);
                // NaN and the infinities are written bare (no JSON has them);
                // everything else is JSON that serde_json reads.
                let finite = !["NaN", "Infinity"].iter().any(|w| out.contains(w));
                prop_assert!(!finite || serde_json::from_str::<Value>(&out).is_ok(), "{}", out);
                // What we write, we read back to the same text.
                let mut again_tape = Tape::default();
                let again_root = parse_value(&out, &mut again_tape).map_err(|e| TestCaseError::fail(format!("{out}: {e:?}")))?;
                let mut again = String::new();
                write_compact_json(crate::value::ValueRef { tape: &again_tape, idx: again_root as usize }, &mut again);
                prop_assert_eq!(again, out);
            }
        }
    }

    #[test]
    fn json_round_trips(v in json_value()) {
        let text = v.to_string();
        let mut tape = Tape::default();
        let root = parse_value(&text, &mut tape).unwrap();
        let mut out = String::new();
        write_compact_json(crate::value::ValueRef { tape: &tape, idx: root as usize }, &mut out);
        prop_assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), v);
    }

    /// The JSON Lines decoder gives the same records for any chunk size.
    #[test]
    fn jsonl_decoder_is_chunk_size_independent(records in prop::collection::vec(record(), 0..8), chunk in 1usize..40, crlf in any::<bool>()) {
        let mut text = to_lines(&records);
        if crlf {
            text = text.replace('\n', "\r\n");
        }
        let decode = |chunk: usize| {
            let mut reader = JsonLinesReader::new(text.as_bytes(), "p.jsonl", chunk);
            let mut out = Vec::new();
            loop {
                let mut batch = Batch::default();
                if reader.next_batch(&mut batch, 3).unwrap() == 0 {
                    break;
                }
                for i in 0..batch.len() {
                    let mut s = String::new();
                    write_compact_json(batch.tape.record(i), &mut s);
                    out.push((batch.meta[i].line, batch.meta[i].byte, s));
                }
            }
            out
        };
        prop_assert_eq!(decode(chunk), decode(1 << 20));
    }
}

/// Rows as a sorted multiset of JSON texts; drift events without their time.
pub(crate) fn comparable(r: &super::tests::Run) -> (Vec<String>, Value, Vec<Value>) {
    let mut rows: Vec<String> = r.rows.iter().map(|row| Value::Array(row.clone()).to_string()).collect();
    rows.sort();
    let drifts = r
        .drifts()
        .into_iter()
        .map(|mut d| {
            d.as_object_mut().map(|o| o.remove("detected_at"));
            d
        })
        .collect();
    (rows, r.registry(), drifts)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(16), .. ProptestConfig::default() })]

    /// The same files spelled as a list, a glob or a directory give the
    /// same rows (as a multiset), registry and drift events.
    #[test]
    fn a_list_a_glob_and_a_directory_read_alike(files in prop::collection::vec(prop::collection::vec(record(), 1..4), 1..4)) {
        let dir = std::env::temp_dir().join(format!("ss-paths-{}-{}", std::process::id(), super::tests::rand_suffix()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut names = Vec::new();
        for (i, records) in files.iter().enumerate() {
            let path = dir.join(format!("part-{i:02}.jsonl"));
            std::fs::write(&path, to_lines(records)).unwrap();
            names.push(path.to_string_lossy().into_owned());
        }
        let base = dir.to_string_lossy().into_owned();
        let skip = [("on_error", ParamValue::Str("skip_row".into()))];
        let list = super::tests::run_paths(names.clone(), &skip).map(|r| comparable(&r));
        let glob = super::tests::run_paths(vec![format!("{base}/*.jsonl")], &skip).map(|r| comparable(&r));
        let mut directory_params = skip.to_vec();
        directory_params.push(("input_mode", ParamValue::Str("directory".into())));
        let directory = super::tests::run_paths(vec![base.clone()], &directory_params).map(|r| comparable(&r));
        let _ = std::fs::remove_dir_all(&dir);
        prop_assert_eq!(&list, &glob);
        prop_assert_eq!(&list, &directory);
        prop_assert!(list.is_ok(), "{:?}", list);
    }
}

/// A line of a messy JSON Lines file: a record, or what real files hold
/// between records.
/// How a ranges test cuts and reads a file: the range size, the read size,
/// the threads and `on_error`.
pub(crate) fn cutting() -> impl Strategy<Value = (u64, i64, usize, &'static str)> {
    (
        1u64..64,
        prop_oneof![1i64..40, Just(1 << 20)],
        1usize..9,
        prop_oneof![Just("skip_row"), Just("emit_null_row"), Just("stop")],
    )
}

/// What a ranges test compares of a run: rows in order, names, registry,
/// drifts and counters (or the error).
pub(crate) type Comparable = Result<(Vec<Vec<Value>>, Vec<String>, Value, Vec<Value>, super::Stats), String>;

/// The [`Comparable`] of a run.
pub(crate) fn comparable_scan(r: Result<(super::tests::Run, super::Stats), String>) -> Comparable {
    // `batches` counts decoded batches, and no batch spans two ranges: the
    // one counter that follows the cut. `rows_columnar` follows it too: a
    // batch with one value the columns cannot take goes row by row whole;
    // and `rows_direct`: a batch after one mostly declined is not kept as
    // text.
    r.map(|(run, stats)| {
        let (_, registry, drifts) = comparable(&run);
        (
            run.rows.clone(),
            run.names.clone(),
            registry,
            drifts,
            super::Stats { batches: 0, rows_columnar: 0, rows_direct: 0, ..stats },
        )
    })
}

fn messy_line() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => record().prop_map(|r| to_lines(&[r])),
        1 => Just("\n".to_string()),
        1 => Just("   \r\n".to_string()),
        1 => Just("{not json\n".to_string()),
        1 => Just("[1, 2]\n".to_string()),
        1 => (record(), record()).prop_map(|(a, b)| to_lines(&[a]).trim_end().to_string() + " " + &to_lines(&[b])),
        1 => record().prop_map(|r| to_lines(&[r]).replace('\n', "\r\n")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(24), .. ProptestConfig::default() })]

    /// Cutting a JSON Lines file into byte ranges decoded by several threads
    /// changes nothing: the same rows in the same order, registry, drifts,
    /// counters, and the same first bad record under `stop`, at every
    /// thread count, range size and read size.
    #[test]
    fn ranges_and_threads_never_change_the_result(
        lines in prop::collection::vec(messy_line(), 0..24),
        bom in any::<bool>(),
        no_final_newline in any::<bool>(),
        (range, chunk, threads, on_error) in cutting(),
    ) {
        let mut text = String::new();
        if bom {
            text.push('\u{feff}');
        }
        text.extend(lines);
        if no_final_newline {
            text = text.trim_end_matches(['\n', '\r']).to_string();
        }
        let dir = std::env::temp_dir().join(format!("ss-ranges-{}-{}", std::process::id(), super::tests::rand_suffix()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("in.jsonl");
        std::fs::write(&path, &text).unwrap();
        let path = path.to_string_lossy().into_owned();
        let base = [("on_error", ParamValue::Str(on_error.into()))];
        let mut cut = base.to_vec();
        cut.push(("scan_range_bytes", ParamValue::Int(range as i64)));
        cut.push(("read_chunk_bytes", ParamValue::Int(chunk)));
        let expected = comparable_scan(super::tests::run_threads(&path, &base, 1));
        let got = comparable_scan(super::tests::run_threads(&path, &cut, threads));
        let _ = std::fs::remove_dir_all(&dir);
        prop_assert_eq!(got, expected);
    }
}

/// Scans `plan` with the data columns marked in `wanted` (all: `None`):
/// each row's wanted columns, the counters, or the error.
fn scan_projected(
    plan: &std::sync::Arc<super::ScanPlan>,
    wanted: Option<&[bool]>,
) -> Result<(Vec<Vec<Value>>, super::Stats), String> {
    let mut scanner = super::Scanner::new(std::sync::Arc::clone(plan));
    if let Some(w) = wanted {
        scanner.project(w.to_vec());
    }
    let rows =
        super::tests::scan_rows(&mut scanner, plan, |i| wanted.is_none_or(|w| w.get(i).copied().unwrap_or(true)))?;
    // A projection writes no row from its text (route/direct.rs): the
    // count of those that were differs, nothing a query sees.
    Ok((rows, super::Stats { batches: 0, rows_direct: 0, ..scanner.stats }))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(64), .. ProptestConfig::default() })]

    /// Projection pushdown (the unwanted keys' values read for their syntax
    /// only, formats/json/mod.rs `SkipKeys`) changes nothing of what a query
    /// sees: the wanted columns of every row, the same bad records and
    /// counters (but `duplicate_keys`, counted only where a value is
    /// routed), and the same first bad record under `stop`.
    #[test]
    fn projection_never_changes_the_columns_a_query_reads(
        lines in prop::collection::vec(messy_line(), 1..24),
        mask in prop::collection::vec(any::<bool>(), 0..12),
        threads in 1usize..5,
        on_error in prop_oneof![Just("skip_row"), Just("emit_null_row"), Just("stop")],
    ) {
        let dir = crate::test_support::scratch_dir("projection");
        let path = dir.join("in.jsonl");
        std::fs::write(&path, lines.concat()).unwrap();
        let params = [("on_error", ParamValue::Str(on_error.into())), ("field_name_policy", ParamValue::Str("preserve".into()))];
        let options = crate::options::Options::parse("sanitize_jsonl", Some(crate::options::InputFormat::Jsonl), &params);
        let options = options.unwrap();
        let plan = match super::plan_on("sanitize_jsonl", path.to_str().unwrap(), options, threads) {
            Ok(plan) => std::sync::Arc::new(plan),
            // Every record bad, or stop at bind: nothing to project.
            Err(_) => return Ok(()),
        };
        let outputs = plan.schema.outputs.len();
        let wanted: Vec<bool> = (0..outputs).map(|i| mask.get(i).copied().unwrap_or(false)).collect();
        let full = scan_projected(&plan, None);
        let projected = scan_projected(&plan, Some(&wanted));
        let _ = std::fs::remove_dir_all(&dir);
        match (full, projected) {
            (Ok((full_rows, full_stats)), Ok((rows, stats))) => {
                let expected: Vec<Vec<Value>> = full_rows
                    .iter()
                    .map(|r| r.iter().enumerate().filter(|(i, _)| wanted.get(*i).copied().unwrap_or(true)).map(|(_, v)| v.clone()).collect())
                    .collect();
                prop_assert_eq!(rows, expected);
                prop_assert_eq!(super::Stats { duplicate_keys: 0, ..stats }, super::Stats { duplicate_keys: 0, ..full_stats });
            }
            (Err(a), Err(b)) => prop_assert_eq!(a, b),
            (a, b) => prop_assert!(false, "full {:?} against projected {:?}", a.map(|_| ()), b.map(|_| ())),
        }
    }
}

/// Clean JSON Lines (no bad record, no repeated key): records, blank
/// lines, CRLF lines and, where `pairs`, a line holding two records.
fn clean_line(pairs: bool) -> impl Strategy<Value = String> {
    prop_oneof![
        8 => record().prop_map(|r| to_lines(&[r])),
        1 => Just("\n".to_string()),
        1 => record().prop_map(|r| to_lines(&[r]).replace('\n', "\r\n")),
        if pairs { 1 } else { 0 } => (record(), record())
            .prop_map(|(a, b)| to_lines(&[a]).trim_end().to_string() + " " + &to_lines(&[b])),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(64), .. ProptestConfig::default() })]

    /// A projected scan of clean, unchanged input (skipped values passed
    /// over by trust, and each record's parse ended once its wanted keys
    /// are read, formats/json/mod.rs `SkipKeys`) gives the wanted columns of a
    /// full scan and its counters, at every thread count; a line with two
    /// records turns the early end off, never the result.
    #[test]
    fn a_trusted_projection_reads_what_a_full_scan_reads(
        lines in (any::<bool>()).prop_flat_map(|pairs| prop::collection::vec(clean_line(pairs), 1..24)),
        mask in prop::collection::vec(any::<bool>(), 0..12),
        threads in 1usize..5,
    ) {
        let dir = crate::test_support::scratch_dir("trusted-projection");
        let path = dir.join("in.jsonl");
        std::fs::write(&path, lines.concat()).unwrap();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(old).unwrap();
        let params = [("field_name_policy", ParamValue::Str("preserve".into()))];
        let options =
            crate::options::Options::parse("sanitize_jsonl", Some(crate::options::InputFormat::Jsonl), &params).unwrap();
        let Ok(plan) = super::plan_on("sanitize_jsonl", path.to_str().unwrap(), options, threads) else {
            let _ = std::fs::remove_dir_all(&dir);
            return Ok(());
        };
        let plan = std::sync::Arc::new(plan);
        prop_assert!(plan.tally.is_some(), "clean input is trusted");
        let outputs = plan.schema.outputs.len();
        let wanted: Vec<bool> = (0..outputs).map(|i| mask.get(i).copied().unwrap_or(false)).collect();
        let full = scan_projected(&plan, None).unwrap();
        let projected = scan_projected(&plan, Some(&wanted)).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let expected: Vec<Vec<Value>> = full
            .0
            .iter()
            .map(|r| r.iter().enumerate().filter(|(i, _)| wanted.get(*i).copied().unwrap_or(true)).map(|(_, v)| v.clone()).collect())
            .collect();
        prop_assert_eq!(projected.0, expected);
        prop_assert_eq!(projected.1, full.1);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(128), .. ProptestConfig::default() })]

    /// The probe's board (records whose shape was absorbed before are left
    /// undecoded by the decoding threads, value/shape.rs) changes nothing:
    /// the same rows, registry, drifts and counters with it and without
    /// it, at every thread count and range size. Most lines share a few
    /// keys in one order, with values of every kind, so that records of
    /// one shape and records that differ in one kind follow each other.
    #[test]
    fn the_shape_board_never_changes_the_result(
        lines in prop::collection::vec(prop_oneof![4 => pooled_line(), 1 => messy_line()], 1..40),
        (range, chunk, threads, on_error) in cutting(),
    ) {
        let params = [
            ("on_error", ParamValue::Str(on_error.into())),
            ("scan_range_bytes", ParamValue::Int(range as i64)),
            ("read_chunk_bytes", ParamValue::Int(chunk)),
        ];
        let (with_board, without) = scanned_on_and_off(&crate::infer::BOARD_OFF, &lines.concat(), &params, threads);
        prop_assert_eq!(with_board, without);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(64), .. ProptestConfig::default() })]

    /// From three threads the probe's decoding threads write the records'
    /// shapes (infer/shapes.rs `ShapeWriter`), with string parsers on or
    /// off: the same rows, registry, drifts and counters as when the
    /// absorbing thread writes them all, at every range size.
    #[test]
    fn written_shapes_never_change_the_result(
        lines in prop::collection::vec(prop_oneof![4 => pooled_line(), 1 => messy_line(), 1 => parsed_line()], 1..40),
        (range, chunk, threads, on_error) in cutting(),
        parsing in any::<bool>(),
    ) {
        let params = [
            ("on_error", ParamValue::Str(on_error.into())),
            ("scan_range_bytes", ParamValue::Int(range as i64)),
            ("read_chunk_bytes", ParamValue::Int(chunk)),
            ("parse_integers", ParamValue::Bool(parsing)),
            ("parse_iso_timestamps", ParamValue::Bool(parsing)),
        ];
        let threads = threads % 4 + 3;
        let (written, own) = scanned_on_and_off(&super::WRITER_OFF, &lines.concat(), &params, threads);
        prop_assert_eq!(written, own);
    }
}

/// `text` as a JSON Lines file, scanned as it comes and again with
/// `switch` (a test switch that turns a mechanism off) set.
fn scanned_on_and_off(
    switch: &crate::test_switch::TestSwitch,
    text: &str,
    params: &[(&str, ParamValue)],
    threads: usize,
) -> (Comparable, Comparable) {
    let dir = crate::test_support::scratch_dir("on-off");
    let path = dir.join("in.jsonl");
    std::fs::write(&path, text).unwrap();
    let path = path.to_string_lossy().into_owned();
    let on = comparable_scan(super::tests::run_threads(&path, params, threads));
    let off = switch.on_for(|| comparable_scan(super::tests::run_threads(&path, params, threads)));
    let _ = std::fs::remove_dir_all(&dir);
    (on, off)
}

/// A line whose strings the parsers type, or nearly.
fn parsed_line() -> impl Strategy<Value = String> {
    let value = prop::sample::select(vec![
        "\"7\"",
        "\"x\"",
        "\"2026-01-31T10:00:00Z\"",
        "\"2300-01-01T00:00:00Z\"",
        "\"-3\"",
        "\" 5\"",
    ]);
    prop::collection::vec(value, 2).prop_map(|v| format!("{{\"a\":{},\"b\":[{}]}}\n", v[0], v[1]))
}

/// A line over the keys a, b and c, in that order, each there or not, with
/// values of every kind the shape tells apart (and some it declines).
fn pooled_line() -> impl Strategy<Value = String> {
    let value = prop::sample::select(vec![
        "1",
        "-7",
        "2.5",
        "1e3",
        "\"s\"",
        "\"q\\\"\\u00e9\"",
        "null",
        "true",
        "[1]",
        "[1.5]",
        "[]",
        "[1,2]",
        "{\"k\":1}",
        "{\"k\":\"x\"}",
        "{}",
        "12345678901234567890",
        "NaN",
    ]);
    prop::collection::vec(prop::option::of(value), 3).prop_map(|vals| {
        let body: Vec<String> =
            ["a", "b", "c"].iter().zip(vals).filter_map(|(k, v)| v.map(|v| format!("\"{k}\":{v}"))).collect();
        format!("{{{}}}\n", body.join(","))
    })
}

/// Values for the map property: objects with several keys (so that a low
/// `map_inference_threshold` makes maps of them) beside scalars and lists
/// at the same places, which a map must then hold too.
fn mappable_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-50i64..50).prop_map(Value::from),
        (-50i64..50).prop_map(|i| Value::from(i as f64 + 0.5)),
        "[a-d]{0,3}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-e]", inner, 1..5).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Every non-null scalar of `v` as canonical text (a number by its value,
/// so 1 and 1.0 agree); output strings that hold JSON text (the fallback
/// columns) are read back into their values.
fn leaves(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Null => {}
        Value::Bool(b) => out.push(b.to_string()),
        Value::Number(n) => out.push(format!("{}", n.as_f64().unwrap_or(f64::NAN))),
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(inner @ (Value::Array(_) | Value::Object(_) | Value::Number(_) | Value::Bool(_))) => leaves(&inner, out),
            _ => out.push(s.clone()),
        },
        Value::Array(a) => a.iter().for_each(|e| leaves(e, out)),
        Value::Object(o) => o.values().for_each(|e| leaves(e, out)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(96), .. ProptestConfig::default() })]

    /// Objects that become maps (a threshold of 1 or 2 keys) beside
    /// scalars and lists at the same path: an additive scan nulls nothing,
    /// and every scalar of the input is in the output. A scalar in such a
    /// map is one entry keyed scalar_object_key, as in a struct; it was
    /// dropped, leaving a NULL entry that DuckDB could not read back.
    #[test]
    fn values_beside_maps_are_kept(
        records in prop::collection::vec(prop::collection::btree_map("[mn]", mappable_value(), 0..3), 1..10),
        threshold in 1i64..3,
    ) {
        let records: Vec<Map<String, Value>> = records.into_iter().map(|m| m.into_iter().collect()).collect();
        let dir = std::env::temp_dir().join(format!("ss-maps-{}-{}", std::process::id(), super::tests::rand_suffix()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("in.jsonl");
        std::fs::write(&path, to_lines(&records)).unwrap();
        let result = super::tests::run_threads(
            path.to_str().unwrap(),
            &[("map_inference_threshold", ParamValue::Int(threshold))],
            1,
        );
        let _ = std::fs::remove_dir_all(&dir);
        let (r, stats) = result.unwrap();
        prop_assert_eq!(stats.values_nulled, 0);
        let mut source = Vec::new();
        records.iter().for_each(|rec| rec.values().for_each(|v| leaves(v, &mut source)));
        let mut output = Vec::new();
        r.rows.iter().for_each(|row| row.iter().for_each(|v| leaves(v, &mut output)));
        let mut have: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        output.iter().for_each(|v| *have.entry(v.as_str()).or_default() += 1);
        for v in &source {
            let n = have.entry(v.as_str()).or_default();
            prop_assert!(*n > 0, "{:?} is missing from the output of {}", v, to_lines(&records));
            *n -= 1;
        }
    }
}
