//! `max_columns` end to end: the probe stops at the first column past the
//! limit, maps count once, a registry wider than the limit is refused
//! (docs/errors.md, "Limits").

use super::tests::{run, run_format, run_format_scan};
use crate::options::{InputFormat, ParamValue};

fn keys(n: usize, value: impl Fn(usize) -> String) -> String {
    let fields: Vec<String> = (0..n).map(|i| format!("\"k{i}\": {}", value(i))).collect();
    format!("{{{}}}", fields.join(", "))
}

fn limit(n: i64) -> (&'static str, ParamValue) {
    ("max_columns", ParamValue::Int(n))
}

#[test]
fn a_schema_exactly_at_the_limit_passes_and_one_more_column_fails() {
    // a, a_v2_string, s, s.x, s.y: five columns and struct fields.
    let input = "{\"a\": 1, \"s\": {\"x\": 1}}\n{\"a\": \"one\", \"s\": {\"y\": true}}\n";
    let r = run(input, &[limit(5)]).unwrap();
    assert_eq!(r.names, ["a", "a_v2_string", "s"]);
    let e = run(input, &[limit(4)]).unwrap_err();
    assert!(
        e.starts_with(
            "sanitize_jsonl: the input has more than 4 columns and struct fields (max_columns); an object keyed by ids should be a MAP: name its path in map_paths or lower map_inference_threshold"
        ),
        "{e}"
    );
    // Top-level keys alone.
    let wide = keys(10, |i| i.to_string());
    assert!(run(&wide, &[limit(10)]).is_ok());
    let e = run(&format!("{wide}\n{}", keys(11, |i| i.to_string())), &[limit(10)]).unwrap_err();
    assert!(e.contains("the widest object is the record itself, with 11 keys so far"), "{e}");
    assert!(e.contains("a record cannot become a MAP"), "{e}");
}

#[test]
fn the_default_limit_is_ten_thousand() {
    assert!(run(&keys(10_000, |i| i.to_string()), &[]).is_ok());
    let e = run(&keys(10_001, |i| i.to_string()), &[]).unwrap_err();
    assert!(e.contains("more than 10000 columns and struct fields (max_columns)"), "{e}");
}

#[test]
fn a_record_of_many_keys_fails_at_the_first_past_the_limit_without_building_the_rest() {
    // 200,000 keys (3.5 MB on one line); the probe stops at key 10,001,
    // so the scan fails in the time the parse of the line takes.
    let line = keys(200_000, |i| i.to_string());
    let e = run(&line, &[]).unwrap_err();
    // "so far": the count stopped at the first key past the limit; the
    // 189,999 keys after it were never made columns (no clock is read:
    // a busy machine must not fail the test).
    assert!(e.contains("with 10001 keys so far"), "{e}");
}

#[test]
fn an_object_keyed_by_ids_that_becomes_a_map_counts_once() {
    // 300 ids under `counts`: a map at the default threshold (200), so
    // the schema is id, counts and nothing inside the map's BIGINT value.
    let input = format!("{{\"id\": 1, \"counts\": {}}}\n", keys(300, |i| i.to_string()));
    let r = run(&input, &[limit(2)]).unwrap();
    assert_eq!(r.names, ["counts", "id"]);
    // Map values that are structs count their fields once: id, counts, n, m.
    let input = format!("{{\"id\": 1, \"counts\": {}}}\n", keys(300, |i| format!("{{\"n\": {i}, \"m\": \"x\"}}")));
    assert!(run(&input, &[limit(4)]).is_ok());
    let e = run(&input, &[limit(3)]).unwrap_err();
    assert!(e.contains("more than 3 columns"), "{e}");
}

#[test]
fn an_object_keyed_by_ids_that_stays_a_struct_is_counted_once_the_maps_are_made() {
    // Values of two types do not reconcile: `counts` stays a struct of
    // 300 fields, found wider than the limit after the probe, and named.
    let input =
        format!("{{\"id\": 1, \"counts\": {}}}\n", keys(300, |i| if i % 2 == 0 { "1".into() } else { "\"x\"".into() }));
    let e = run(&input, &[limit(100)]).unwrap_err();
    assert!(e.contains("(the widest object is \"counts\", with 300 keys)"), "{e}");
    // Named in map_paths, it is a map (of JSON text), and fits.
    let paths = ParamValue::List(vec![ParamValue::Str("counts".into())]);
    let r = run(&input, &[limit(100), ("map_paths", paths.clone())]).unwrap();
    assert_eq!(r.names, ["counts", "id"]);
    // Maps never inferred by count: map_paths alone keeps the path out of
    // the count, while the same object elsewhere counts as it grows.
    let never = ("map_inference_threshold", ParamValue::Int(-1));
    assert!(run(&input, &[limit(100), ("map_paths", paths), never.clone()]).is_ok());
    let e = run(&input, &[limit(100), never]).unwrap_err();
    assert!(e.contains("(the widest object is \"counts\", with 99 keys)"), "{e}");
}

#[test]
fn a_registry_wider_than_the_limit_is_refused_before_any_record() {
    let input = "{\"a\": 1, \"b\": 2, \"c\": 3}\n";
    let r = run(input, &[]).unwrap();
    let registry = ("registry", ParamValue::Str(r.plan.registry_json.clone()));
    assert!(run(input, &[registry.clone(), limit(3)]).is_ok());
    let e = run(input, &[registry.clone(), limit(2)]).unwrap_err();
    assert_eq!(
        e,
        "sanitize_jsonl: the registry has 3 columns and struct fields, more than max_columns (2); pass max_columns := 3 or more to scan with it"
    );
    // Strict mode too: its schema is the registry's.
    let strict = ("schema_mode", ParamValue::Str("strict".into()));
    assert!(run(input, &[registry, limit(2), strict]).unwrap_err().contains("the registry has 3 columns"));
}

#[test]
fn declared_parquet_columns_count_as_they_are_read_and_a_map_counts_once() {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Int64Array, Int64Builder, MapBuilder, RecordBatch, StringBuilder};
    use arrow::datatypes::{Field, Schema};

    // a BIGINT, m MAP(VARCHAR, BIGINT), b BIGINT: three columns (the map's
    // key and value are the map).
    let mut m = MapBuilder::new(None, StringBuilder::new(), Int64Builder::new());
    m.keys().append_value("x");
    m.values().append_value(1);
    m.append(true).unwrap();
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("a", Arc::new(Int64Array::from(vec![1]))),
        ("m", Arc::new(m.finish())),
        ("b", Arc::new(Int64Array::from(vec![2]))),
    ];
    let schema = Arc::new(Schema::new(
        columns.iter().map(|(n, a)| Field::new(*n, a.data_type().clone(), true)).collect::<Vec<_>>(),
    ));
    let batch = RecordBatch::try_new(schema.clone(), columns.into_iter().map(|(_, a)| a).collect()).unwrap();
    let dir = std::env::temp_dir().join(format!("ss-max-columns-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.parquet");
    let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let path = path.to_str().unwrap();
    // The probe of a scan (the footers) and the full probe (every row).
    for scan in [run_format_scan, run_format] {
        assert!(scan("sanitize_parquet", InputFormat::Parquet, path, &[limit(3)]).is_ok());
        let e = scan("sanitize_parquet", InputFormat::Parquet, path, &[limit(2)]).unwrap_err();
        assert!(e.starts_with("sanitize_parquet: the input has more than 2 columns"), "{e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
