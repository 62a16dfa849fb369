//! Scans that route no data column take the probe's counts
//! (scan/tally.rs): the same rows and counters as decoding, and a
//! decode whenever the counts might not hold.

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::{Chunk, ScanPlan, Scanner, Stats};
use crate::options::{InputFormat, Options, ParamValue};

fn s(v: &str) -> ParamValue {
    ParamValue::Str(v.to_string())
}

/// Writes `text` to `path`, modified a minute ago (older than the two
/// seconds a racily clean file needs).
fn write_old(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut f = std::fs::File::create(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(60)).unwrap();
}

fn planned(path: &str, params: &[(&str, ParamValue)], threads: usize) -> Arc<ScanPlan> {
    let options = Options::parse("sanitize_jsonl", Some(InputFormat::Jsonl), params).unwrap();
    Arc::new(super::plan_on("sanitize_jsonl", path, options, threads).unwrap())
}

/// Scans with no data column (`wanted` all false) or every column; returns
/// the rows of each chunk's partition columns, the counters and whether
/// the probe's counts were taken.
fn scan(plan: &Arc<ScanPlan>, no_column: bool) -> Result<(Vec<Vec<serde_json::Value>>, Stats, bool), String> {
    let mut scanner = Scanner::new(Arc::clone(plan));
    if no_column {
        scanner.project(vec![false; plan.schema.outputs.len()]);
    }
    let mut chunk = Chunk::new(plan);
    let mut rows = Vec::new();
    loop {
        let n = scanner.next_chunk(&mut chunk).map_err(|e| e.message)?;
        if n == 0 {
            break;
        }
        let data = chunk.data_columns(plan);
        let files = chunk.file_runs().iter().flat_map(|&(file, rows)| std::iter::repeat_n(file, rows));
        for (r, file) in (0..n).zip(files) {
            let mut row: Vec<serde_json::Value> = chunk.columns[data..].iter().map(|c| c.row_json(r)).collect();
            row.push(serde_json::Value::from(file));
            rows.push(row);
        }
    }
    Ok((rows, scanner.stats, scanner.counted()))
}

/// The counters a count must match (batches differ: a count makes full
/// chunks).
fn comparable(mut stats: Stats) -> Stats {
    stats.batches = 0;
    // A count writes no row, so none from its text (route/direct.rs).
    stats.rows_direct = 0;
    stats
}

fn lines(n: usize) -> String {
    (0..n).map(|i| format!("{{\"id\":{i},\"v\":\"x{i}\"}}\n")).collect()
}

#[test]
fn a_count_takes_the_probes_counts_and_matches_a_decode() {
    let dir = crate::test_support::scratch_dir("tally");
    write_old(&dir.join("day=1/a.jsonl"), &lines(5000));
    write_old(&dir.join("day=2/b.jsonl"), &lines(3));
    write_old(&dir.join("day=2/c.jsonl"), "");
    let glob = format!("{}/*/*.jsonl", dir.display());
    // Small ranges: the big file is cut into several.
    for (threads, range) in [(1, "0"), (2, "4096"), (4, "1000")] {
        let mut params = vec![("hive_partitioning", ParamValue::Bool(true))];
        if range != "0" {
            params.push(("scan_range_bytes", ParamValue::Int(range.parse().unwrap())));
        }
        let plan = planned(&glob, &params, threads);
        let (counted_rows, counted_stats, counted) = scan(&plan, true).unwrap();
        let (decoded_rows, decoded_stats, decoded_counted) = scan(&plan, false).unwrap();
        assert!(counted, "threads {threads}: the counts were not taken");
        assert!(!decoded_counted);
        assert_eq!(counted_rows.len(), 5003);
        assert_eq!(counted_rows, decoded_rows, "threads {threads}");
        assert_eq!(comparable(counted_stats), comparable(decoded_stats), "threads {threads}");
    }
}

#[test]
fn a_bad_record_a_repeated_key_or_a_changed_file_means_a_decode() {
    let dir = crate::test_support::scratch_dir("tally-decode");
    let bad = dir.join("bad.jsonl");
    write_old(&bad, &format!("{}not json\n{}", lines(10), lines(2)));
    let skip = [("on_error", s("skip_row"))];
    let plan = planned(bad.to_str().unwrap(), &skip, 2);
    let (rows, stats, counted) = scan(&plan, true).unwrap();
    assert!(!counted);
    assert_eq!((rows.len(), stats.rows_skipped), (12, 1));

    let dup = dir.join("dup.jsonl");
    write_old(&dup, "{\"a\":1,\"a\":2}\n{\"a\":3}\n");
    let plan = planned(dup.to_str().unwrap(), &[], 2);
    let (rows, stats, counted) = scan(&plan, true).unwrap();
    assert!(!counted);
    assert_eq!((rows.len(), stats.duplicate_keys), (2, 1));

    // Changed after bind: the count is the file's new one, by decoding.
    let changed = dir.join("changed.jsonl");
    write_old(&changed, &lines(4));
    let plan = planned(changed.to_str().unwrap(), &[], 2);
    write_old(&changed, &lines(7));
    let (rows, _, counted) = scan(&plan, true).unwrap();
    assert!(!counted);
    assert_eq!(rows.len(), 7);

    // Just written: it may still change within the same timestamp tick.
    let fresh = dir.join("fresh.jsonl");
    std::fs::write(&fresh, lines(4)).unwrap();
    let plan = planned(fresh.to_str().unwrap(), &[], 2);
    assert!(plan.tally.is_none());
    assert_eq!(scan(&plan, true).unwrap().0.len(), 4);
}

#[test]
fn strict_scans_and_rescue_columns_never_count() {
    let dir = crate::test_support::scratch_dir("tally-off");
    let file = dir.join("a.jsonl");
    write_old(&file, &lines(3));
    let path = file.to_str().unwrap();
    let registry = planned(path, &[], 1).registry_json.clone();
    let strict = [("schema_mode", s("strict")), ("registry", s(&registry))];
    assert!(planned(path, &strict, 1).tally.is_none());
    assert!(planned(path, &[("rescue_column", s("_r"))], 1).tally.is_none());
    assert!(planned(path, &[], 1).tally.is_some());
}

#[test]
fn a_projected_scan_of_a_clean_unchanged_file_skips_by_trust_and_reads_the_same() {
    let dir = crate::test_support::scratch_dir("tally-skip");
    let file = dir.join("a.jsonl");
    let mut text = String::new();
    for i in 0..300 {
        text.push_str(&format!(
            "{{\"id\":{i},\"s\":\"q\\\"{i}\\u00e9\",\"n\":null,\"deep\":{{\"l\":[1,{{\"k\":\"v\"}},[],{{}}],\"e\":[]}},\"f\":-1.5e{},\"b\":{}}}\n",
            i % 7,
            i % 2 == 0
        ));
    }
    write_old(&file, &text);
    let plan = planned(file.to_str().unwrap(), &[], 2);
    assert!(plan.tally.is_some());
    let outputs = plan.schema.outputs.len();
    let full = super::tests::scan_rows(&mut Scanner::new(Arc::clone(&plan)), &plan, |_| true).unwrap();
    // Each column alone: its values, every other key skipped by trust.
    for column in 0..outputs {
        let mut wanted = vec![false; outputs];
        wanted[column] = true;
        let mut scanner = Scanner::new(Arc::clone(&plan));
        scanner.project(wanted);
        let values: Vec<_> = super::tests::scan_rows(&mut scanner, &plan, |i| i == column)
            .unwrap()
            .into_iter()
            .map(|mut row| row.remove(0))
            .collect();
        assert!(scanner.skips_by_trust(), "column {column}");
        let expected: Vec<_> = full.iter().map(|row| row[column].clone()).collect();
        assert_eq!(values, expected, "column {column}");
    }
}
