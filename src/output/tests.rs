//! The Parquet writer against the parquet crate's own reader: every row
//! arrives, row groups stay within DuckDB's size, the footer carries the
//! registry, types are DuckDB's, and an unfinished file never reaches its
//! path.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{LogicalType, TimeUnit};
use parquet::file::reader::{FileReader, SerializedFileReader};

use super::{ParquetCompression, ParquetSink, ROW_GROUP_ROWS};
use crate::options::{InputFormat, Options, ParamValue};
use crate::registry::PARQUET_REGISTRY_KEY;
use crate::scan::{plan_scan, Chunk, ScanPlan, Scanner};

fn scratch(name: &str) -> PathBuf {
    crate::test_support::scratch_dir(&format!("output-{name}"))
}

fn plan_of(dir: &Path, lines: impl Iterator<Item = String>, params: &[(&str, ParamValue)]) -> Arc<ScanPlan> {
    let input = dir.join("input.jsonl");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&input).unwrap());
    for line in lines {
        writeln!(f, "{line}").unwrap();
    }
    f.flush().unwrap();
    let options = Options::parse("sanitize_jsonl", Some(InputFormat::Jsonl), params).unwrap();
    Arc::new(plan_scan("sanitize_jsonl", input.to_str().unwrap(), options).unwrap())
}

/// Scans the plan into a sink at `target`; `stop_after` chunks, if given,
/// then drops the sink unfinished.
fn write(plan: &Arc<ScanPlan>, target: &Path, stop_after: Option<usize>) -> Option<super::WrittenFile> {
    let mut sink = ParquetSink::create(target.to_str().unwrap(), plan, ParquetCompression::Zstd).unwrap();
    let mut scanner = Scanner::new(Arc::clone(plan));
    let mut chunk = Chunk::new(plan);
    let mut n = 0;
    while scanner.next_chunk(&mut chunk).unwrap() > 0 {
        sink.write(plan, &chunk, n == 0).unwrap();
        n += 1;
        if stop_after == Some(n) {
            return None;
        }
    }
    Some(sink.finish().unwrap())
}

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

#[test]
fn every_row_arrives_in_row_groups_of_duckdb_size_with_the_registry_in_the_footer() {
    let dir = scratch("rows");
    let rows = 250_000usize;
    let lines = (0..rows)
        .map(|i| format!(r#"{{"id": {i}, "tags": ["a", "{i}"], "at": "2026-06-01T10:00:00Z", "user": {{"n": {i}}}}}"#));
    let plan = plan_of(&dir, lines, &[("parse_iso_timestamps", ParamValue::Bool(true))]);
    let target = dir.join("out").join("part.parquet");
    let written = write(&plan, &target, None).unwrap();
    assert_eq!(written.rows, rows as u64);
    assert_eq!(written.bytes, std::fs::metadata(&target).unwrap().len());
    assert!(leftovers(target.parent().unwrap()).is_empty());

    let reader = SerializedFileReader::new(std::fs::File::open(&target).unwrap()).unwrap();
    let meta = reader.metadata();
    assert_eq!(meta.file_metadata().num_rows(), rows as i64);
    assert_eq!(meta.num_row_groups(), rows.div_ceil(ROW_GROUP_ROWS));
    assert!(meta.row_groups().iter().all(|g| g.num_rows() as usize <= ROW_GROUP_ROWS));
    let kv = meta.file_metadata().key_value_metadata().unwrap();
    let registry = kv.iter().find(|e| e.key == PARQUET_REGISTRY_KEY).and_then(|e| e.value.clone());
    assert_eq!(registry.as_deref(), Some(plan.registry_json.as_str()));

    // DuckDB's types: TIMESTAMPTZ is TIMESTAMP(MICROS, adjusted to UTC);
    // lists are 3-level `list`/`element`.
    let schema = meta.file_metadata().schema_descr();
    let column = |name: &str| schema.columns().iter().find(|c| c.path().string() == name).cloned().unwrap();
    for name in ["at", "ingestion_timestamp"] {
        assert_eq!(
            column(name).logical_type_ref().cloned(),
            Some(LogicalType::Timestamp { is_adjusted_to_u_t_c: true, unit: TimeUnit::MICROS })
        );
    }
    assert_eq!(column("tags.list.element").max_rep_level(), 1);

    // Values: every id once, the registry on the first row only.
    let batches: Vec<_> = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&target).unwrap())
        .unwrap()
        .build()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let (mut sum, mut registries, mut seen) = (0i64, 0usize, 0usize);
    for b in &batches {
        let ids = b.column_by_name("id").unwrap().as_any().downcast_ref::<arrow::array::Int64Array>().unwrap();
        sum += ids.iter().map(|v| v.unwrap()).sum::<i64>();
        registries += b.num_rows() - b.column_by_name("schema_registry").unwrap().null_count();
        seen += b.num_rows();
    }
    assert_eq!(seen, rows);
    assert_eq!(sum, (rows as i64 - 1) * rows as i64 / 2);
    assert_eq!(registries, 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unfinished_file_never_reaches_its_path_and_leaves_nothing() {
    let dir = scratch("unfinished");
    let plan = plan_of(&dir, (0..5000).map(|i| format!(r#"{{"id": {i}}}"#)), &[]);
    let target = dir.join("part.parquet");
    assert!(write(&plan, &target, Some(1)).is_none());
    assert!(!target.exists());
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn finishing_replaces_a_file_already_at_the_path() {
    let dir = scratch("replace");
    let plan = plan_of(&dir, (0..10).map(|i| format!(r#"{{"id": {i}}}"#)), &[]);
    let target = dir.join("part.parquet");
    std::fs::write(&target, b"an older partition").unwrap();
    let written = write(&plan, &target, None).unwrap();
    assert_eq!(written.rows, 10);
    let reader = SerializedFileReader::new(std::fs::File::open(&target).unwrap()).unwrap();
    assert_eq!(reader.metadata().file_metadata().num_rows(), 10);
    assert!(leftovers(&dir).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compression_names_parse_and_unknown_ones_do_not() {
    assert_eq!(ParquetCompression::parse("ZSTD"), Some(ParquetCompression::Zstd));
    assert_eq!(ParquetCompression::parse("snappy"), Some(ParquetCompression::Snappy));
    assert_eq!(ParquetCompression::parse("gzip"), Some(ParquetCompression::Gzip));
    assert_eq!(ParquetCompression::parse("uncompressed"), Some(ParquetCompression::Uncompressed));
    assert_eq!(ParquetCompression::parse("lzo"), None);
}

#[test]
fn a_column_of_mostly_distinct_values_gets_no_dictionary_and_a_repetitive_one_does() {
    use parquet::basic::Encoding;
    let dir = scratch("dictionary");
    let lines = (0..5000).map(|i| {
        format!(
            r#"{{"id": {i}, "kind": "k{}", "geo": {{"lat": {i}.5, "zone": "z{}"}}, "tags": ["t{}"]}}"#,
            i % 3,
            i % 2,
            i % 4
        )
    });
    let plan = plan_of(&dir, lines, &[]);
    let target = dir.join("part.parquet");
    write(&plan, &target, None).unwrap();
    let reader = SerializedFileReader::new(std::fs::File::open(&target).unwrap()).unwrap();
    let group = reader.metadata().row_group(0).clone();
    let dictionary = |path: &str| {
        let c = group.columns().iter().find(|c| c.column_path().string() == path).unwrap();
        c.encodings().any(|e| e == Encoding::RLE_DICTIONARY || e == Encoding::PLAIN_DICTIONARY)
    };
    assert!(!dictionary("id"));
    assert!(!dictionary("geo.lat"));
    assert!(dictionary("kind"));
    assert!(dictionary("geo.zone"));
    assert!(dictionary("tags.list.element"));
    assert!(dictionary("source_file"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Small files' rows share chunks (scan/scanner.rs): each row written
/// still names its own file.
#[test]
fn rows_of_small_files_sharing_a_chunk_each_name_their_own_file() {
    let dir = scratch("small-files");
    let files: Vec<String> = (0..30)
        .map(|f| {
            let path = dir.join(format!("f{f:02}.jsonl"));
            let text: String = (0..f % 7 + 1).map(|i| format!("{{\"f\": {f}, \"i\": {i}}}\n")).collect();
            std::fs::write(&path, text).unwrap();
            path.to_string_lossy().into_owned()
        })
        .collect();
    let options = Options::parse("sanitize_jsonl", Some(InputFormat::Jsonl), &[]).unwrap();
    let glob = dir.join("*.jsonl").to_string_lossy().into_owned();
    let plan = Arc::new(plan_scan("sanitize_jsonl", glob.as_str(), options).unwrap());
    let target = dir.join("out.parquet");
    write(&plan, &target, None).unwrap();
    let mut rows = Vec::new();
    for batch in
        ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&target).unwrap()).unwrap().build().unwrap()
    {
        let batch = batch.unwrap();
        let f = batch.column_by_name("f").unwrap().as_any().downcast_ref::<arrow::array::Int64Array>().unwrap().clone();
        let source = batch.column_by_name("source_file").unwrap();
        let source = source.as_any().downcast_ref::<arrow::array::StringArray>().unwrap();
        rows.extend((0..batch.num_rows()).map(|r| (f.value(r), source.value(r).to_string())));
    }
    let expected: Vec<(i64, String)> =
        files.iter().enumerate().flat_map(|(f, path)| (0..f % 7 + 1).map(move |_| (f as i64, path.clone()))).collect();
    assert_eq!(rows, expected);
    let _ = std::fs::remove_dir_all(&dir);
}
