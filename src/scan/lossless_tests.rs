//! Nothing lost in silence: NaN, several objects on a line, the all-bad
//! rule, strict mode value by value, the registry's contract.

use serde_json::{json, Value};

use super::tests::{run, run_format};
use crate::options::{InputFormat, ParamValue};

fn s(v: &str) -> ParamValue {
    ParamValue::Str(v.to_string())
}

#[test]
fn nan_and_infinities_are_doubles_and_keep_the_row() {
    let r = run("{\"id\": 1, \"x\": 1.5}\n{\"id\": 2, \"x\": NaN}\n{\"id\": 3, \"x\": -Infinity}\n", &[]).unwrap();
    assert_eq!(r.names, ["id", "x"]);
    assert_eq!(r.column("id"), [json!(1), json!(2), json!(3)]);
    assert_eq!(r.column("x"), [json!(1.5), json!("NaN"), json!("-inf")]);
    assert_eq!(r.plan.probe_stats.rows_nulled, 0);
}

#[test]
fn several_objects_on_one_line_are_one_record_each() {
    let r = run("{\"id\":1}{\"id\":2} {\"id\":3}\n{\"id\":4}\n", &[]).unwrap();
    assert_eq!(r.column("id"), [json!(1), json!(2), json!(3), json!(4)]);
    // Garbage after good values is one bad record; the good ones stay.
    let r = run("{\"id\":1} oops\n{\"id\":2}\n", &[("on_error", s("skip_row"))]).unwrap();
    assert_eq!(r.column("id"), [json!(1), json!(2)]);
    assert_eq!(r.plan.probe_stats.rows_skipped, 1);
}

#[test]
fn json_documents_back_to_back_are_rows() {
    let dir = std::env::temp_dir().join(format!("ss-docs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ndjson.json");
    std::fs::write(&path, "{\"a\":1}\n{\"a\":2}\n\n{\"a\":3}").unwrap();
    let r = run_format("sanitize_json", InputFormat::Json, path.to_str().unwrap(), &[]).unwrap();
    assert_eq!(r.column("a"), [json!(1), json!(2), json!(3)]);
    std::fs::write(&path, "[{\"a\":1}]").unwrap();
    let e = run_format("sanitize_json", InputFormat::Json, path.to_str().unwrap(), &[]).unwrap_err();
    assert!(e.contains("sanitize_json_array"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_scan_whose_every_record_is_bad_is_an_error_unless_on_error_is_explicit() {
    let e = run("[1,2]\n[3]\n", &[]).unwrap_err();
    assert!(e.contains("every record read was bad (2 of 2)"), "{e}");
    assert!(e.contains("at line 1 (byte 0)") && e.contains("not an object") && e.contains("on_error"), "{e}");
    let r = run("[1,2]\n[3]\n", &[("on_error", s("emit_null_row"))]).unwrap();
    assert_eq!(r.rows.len(), 2);
    let r = run("[1,2]\n[3]\n", &[("on_error", s("skip_row"))]).unwrap();
    assert_eq!(r.rows.len(), 0);
    // One good record is enough; an empty file has none to judge.
    assert_eq!(run("[1,2]\n{\"a\":1}\n", &[]).unwrap().rows.len(), 2);
    assert_eq!(run("", &[]).unwrap().rows.len(), 0);
}

fn strict(day2: &str, day1: &str, on_error: &str) -> Result<super::tests::Run, String> {
    let first = run(day1, &[]).unwrap();
    run(
        day2,
        &[
            ("registry", ParamValue::Str(first.plan.registry_json.clone())),
            ("schema_mode", s("strict")),
            ("on_error", s(on_error)),
        ],
    )
}

#[test]
fn strict_mode_nulls_only_the_value_that_does_not_fit() {
    let day1 = "{\"device\": {\"os\": \"android\"}, \"n\": 1, \"tags\": [\"a\"]}\n";
    let day2 = "{\"device\": {\"os\": \"ios\", \"model\": \"15\"}, \"n\": 2}\n{\"device\": {\"os\": \"ios\"}, \"n\": \"three\", \"tags\": [\"b\", {\"x\": 1}]}\n";
    let r = strict(day2, day1, "emit_null_row").unwrap();
    assert_eq!(r.names, ["device", "n", "tags"]);
    // The new child is dropped; its sibling stays.
    assert_eq!(r.column("device"), [json!([json!("ios")]), json!([json!("ios")])]);
    assert_eq!(r.column("n"), [json!(2), Value::Null]);
    // A list keeps the elements that fit.
    assert_eq!(r.column("tags"), [Value::Null, json!(["b", null])]);
}

#[test]
fn strict_stop_names_the_first_value_that_does_not_fit() {
    let day1 = "{\"device\": {\"os\": \"android\"}, \"n\": 1, \"items\": [{\"sku\": 1}]}\n";
    let e = strict("{\"n\": 2, \"device\": {\"os\": \"ios\", \"model\": \"15\"}}\n", day1, "stop").unwrap_err();
    assert!(e.contains("the field device.model (string) is not in the registry"), "{e}");
    assert!(e.contains("at line 1 (byte 0)") && e.contains("strict"), "{e}");
    let e = strict("{\"n\": \"two\"}\n", day1, "stop").unwrap_err();
    assert!(e.contains("the value at n (string) does not fit the registry's type int64"), "{e}");
    let e = strict("{\"items\": [{\"sku\": 2}, {\"sku\": \"x\"}]}\n", day1, "stop").unwrap_err();
    assert!(e.contains("items[].sku (string)"), "{e}");
    // Fitting records pass.
    assert_eq!(strict("{\"n\": 5, \"device\": {\"os\": \"x\"}}\n", day1, "stop").unwrap().rows.len(), 1);
}

#[test]
fn the_registry_carries_its_contract_options() {
    let day1 = "{\"ts\": \"2024-01-01T10:00:00Z\"}\n";
    let first = run(day1, &[("parse_iso_timestamps", ParamValue::Bool(true))]).unwrap();
    let registry = first.registry();
    assert_eq!(registry["contract"]["parse_iso_timestamps"], json!(true));
    assert_eq!(registry["contract"]["timestamp_precision"], json!("TIMESTAMP_MICROS"));
    assert!(registry["contract"].get("csv_delimiter").is_none(), "the CSV dialect is for CSV scans only");
    // Without the option, the registry's value applies: no string version.
    let again = run(day1, &[("registry", ParamValue::Str(first.plan.registry_json.clone()))]).unwrap();
    assert_eq!(again.names, ["ts"]);
    assert!(again.drifts().is_empty(), "{:?}", again.drifts());
    assert_eq!(again.column("ts"), first.column("ts"));
    // Given with another value: an error naming the option and both values.
    let e = run(
        day1,
        &[
            ("registry", ParamValue::Str(first.plan.registry_json.clone())),
            ("parse_iso_timestamps", ParamValue::Bool(false)),
        ],
    )
    .unwrap_err();
    assert!(e.contains("parse_iso_timestamps = true") && e.contains("parse_iso_timestamps = false"), "{e}");
    // The same value given again is fine.
    run(
        day1,
        &[
            ("registry", ParamValue::Str(first.plan.registry_json.clone())),
            ("parse_iso_timestamps", ParamValue::Bool(true)),
        ],
    )
    .unwrap();
}

#[test]
fn an_old_registry_without_a_contract_still_loads() {
    let first = run("{\"a\": \"1\"}\n", &[]).unwrap();
    let mut doc = first.registry();
    doc.as_object_mut().unwrap().remove("contract");
    let old = doc.to_string();
    let r = run(
        "{\"a\": \"7\"}\n",
        &[("registry", ParamValue::Str(old.clone())), ("parse_integers", ParamValue::Bool(true))],
    )
    .unwrap();
    // The scan's own options apply, and the new registry records them.
    assert_eq!(r.registry()["contract"]["parse_integers"], json!(true));
    let bad =
        old.replacen("\"canonical_schema\"", "\"contract\":{\"arrow_max_depth\":\"deep\"},\"canonical_schema\"", 1);
    let e = run("{\"a\": 1}\n", &[("registry", ParamValue::Str(bad))]).unwrap_err();
    assert!(e.contains("arrow_max_depth") && e.contains("contract"), "{e}");
}
