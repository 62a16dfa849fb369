//! Per-field policies end to end (docs/registry.md "Per-field policies"): `pin_types` and `freeze`.

use serde_json::{json, Value};

use super::tests::run;
use crate::options::ParamValue;

fn s(v: &str) -> ParamValue {
    ParamValue::Str(v.to_string())
}

fn pins(pairs: &[(&str, &str)]) -> ParamValue {
    ParamValue::Map(pairs.iter().map(|(p, t)| (p.to_string(), s(t))).collect())
}

fn list(items: &[&str]) -> ParamValue {
    ParamValue::List(items.iter().map(|i| s(i)).collect())
}

#[test]
fn a_pinned_field_takes_what_converts_without_loss_and_opens_no_version() {
    let text = "{\"amount\": 1}\n{\"amount\": \"7\"}\n{\"amount\": 2.5}\n{\"amount\": \"x\"}\n{\"amount\": true}\n{\"amount\": \" 1,250.5 \"}\n{\"amount\": [1]}\n";
    let params = [("pin_types", pins(&[("amount", "DOUBLE")])), ("rescue_column", s("_r"))];
    let r = run(text, &params).unwrap();
    // The only column of the family; no amount_v2_*.
    assert_eq!(r.names, ["amount", "_r"]);
    assert_eq!(
        r.column("amount"),
        [json!(1.0), json!(7.0), json!(2.5), Value::Null, Value::Null, json!(1250.5), Value::Null]
    );
    assert_eq!(
        r.column("_r"),
        [
            Value::Null,
            Value::Null,
            Value::Null,
            json!(r#"{"amount":"x"}"#),
            json!(r#"{"amount":true}"#),
            Value::Null,
            json!(r#"{"amount":[1]}"#)
        ]
    );
    // The pin is part of the registry's contract.
    assert_eq!(r.registry()["contract"]["pin_types"], json!({"amount": "DOUBLE"}));
    // Without the pin the same data has versions.
    let plain = run(text, &[]).unwrap();
    assert!(plain.names.len() > 1, "{:?}", plain.names);
}

#[test]
fn pins_to_bigint_varchar_timestamp_and_json_convert_exactly() {
    let text = "{\"n\": \"7.0\", \"t\": 5, \"ts\": \"2024-01-02\", \"j\": {\"a\": 1}}\n{\"n\": 1.5, \"t\": {\"x\": 1}, \"ts\": \"nope\", \"j\": \"s\"}\n{\"n\": 9007199254740993, \"t\": 1.25, \"ts\": \"2024-01-02T03:04:05Z\", \"j\": [1, \"a\"]}\n";
    let params = [("pin_types", pins(&[("n", "BIGINT"), ("t", "varchar"), ("ts", "TIMESTAMP"), ("j", "JSON")]))];
    let r = run(text, &params).unwrap();
    assert_eq!(r.names, ["j", "n", "t", "ts"]);
    assert_eq!(r.column("n"), [json!(7), Value::Null, json!(9007199254740993i64)]);
    assert_eq!(r.column("t"), [json!("5"), Value::Null, json!("1.25")]);
    let day = 19_724i64 * 86_400 * 1_000_000;
    assert_eq!(r.column("ts"), [json!(day), Value::Null, json!(day + (3 * 3600 + 4 * 60 + 5) * 1_000_000)]);
    assert_eq!(r.column("j"), [json!(r#"{"a":1}"#), json!("s"), json!(r#"[1,"a"]"#)]);
}

#[test]
fn a_nested_pin_and_a_list_path_reach_the_field_inside() {
    let text =
        "{\"payload\": {\"ts\": 5}, \"items\": [{\"sku\": 1}, {\"sku\": \"a\"}]}\n{\"payload\": {\"ts\": \"x\"}}\n";
    let params = [("pin_types", pins(&[("payload.ts", "VARCHAR"), ("items[].sku", "VARCHAR")]))];
    let r = run(text, &params).unwrap();
    assert_eq!(r.column("payload"), [json!(["5"]), json!(["x"])]);
    assert_eq!(r.column("items"), [json!([["1"], ["a"]]), Value::Null]);
}

#[test]
fn a_pin_on_a_registry_field_needs_a_version_of_that_type() {
    let reg = run("{\"amount\": 1}\n", &[]).unwrap().plan.registry_json.clone();
    let e =
        run("{\"amount\": 2}\n", &[("registry", s(&reg)), ("pin_types", pins(&[("amount", "DOUBLE")]))]).unwrap_err();
    assert!(e.contains("pin_types") && e.contains("'amount'") && e.contains("int64"), "{e}");
    // A pin of a type the registry has routes every value there.
    let two = run("{\"amount\": 1}\n{\"amount\": \"s\"}\n", &[]).unwrap();
    assert_eq!(two.names, ["amount", "amount_v2_string"]);
    let reg = two.plan.registry_json.clone();
    let r = run(
        "{\"amount\": 3}\n{\"amount\": \"t\"}\n",
        &[("registry", s(&reg)), ("pin_types", pins(&[("amount", "VARCHAR")]))],
    )
    .unwrap();
    assert_eq!(r.column("amount_v2_string"), [json!("3"), json!("t")]);
    assert_eq!(r.column("amount"), [Value::Null, Value::Null]);
}

#[test]
fn strict_mode_keeps_the_pin_from_the_contract_and_judges_pinned_values_one_by_one() {
    let day1 = run("{\"amount\": 1, \"id\": 1}\n", &[("pin_types", pins(&[("amount", "DOUBLE")]))]).unwrap();
    let reg = day1.plan.registry_json.clone();
    let params = [("registry", s(&reg)), ("schema_mode", s("strict")), ("on_error", s("skip_row"))];
    let r = run(
        "{\"amount\": \"7\", \"id\": 2}\n{\"amount\": \"x\", \"id\": 3}\n{\"amount\": 1, \"id\": \"bad\"}\n",
        &params,
    )
    .unwrap();
    // "x" is nulled, not a bad record; the bad id is (skip_row).
    assert_eq!(r.column("id"), [json!(2), json!(3)]);
    assert_eq!(r.column("amount"), [json!(7.0), Value::Null]);
    // Giving another pin than the registry's contract is refused.
    let e = run("{}\n", &[("registry", s(&reg)), ("pin_types", pins(&[("amount", "VARCHAR")]))]).unwrap_err();
    assert!(e.contains("pin_types"), "{e}");
}

#[test]
fn a_frozen_path_grows_no_children_and_no_versions() {
    let day1 = run("{\"device\": {\"os\": \"ios\"}, \"n\": 1}\n", &[]).unwrap();
    let reg = day1.plan.registry_json.clone();
    let generation = day1.registry()["schema_generation"].clone();
    let text = "{\"device\": {\"os\": \"android\", \"model\": \"x\"}, \"n\": 2}\n{\"device\": {\"os\": 5}}\n{\"device\": \"flat\"}\n{\"device\": {\"os\": \"web\"}, \"new\": true}\n";
    let params = [("registry", s(&reg)), ("freeze", list(&["device"])), ("rescue_column", s("_r"))];
    let r = run(text, &params).unwrap();
    // `new` is outside the frozen path: it is added.
    assert_eq!(r.names, ["device", "n", "new", "_r"]);
    assert_eq!(r.column("device"), [json!(["android"]), json!([null]), Value::Null, json!(["web"])]);
    assert_eq!(
        r.column("_r"),
        [json!(r#"{"device.model":"x"}"#), json!(r#"{"device.os":5}"#), json!(r#"{"device":"flat"}"#), Value::Null]
    );
    assert_eq!(r.registry()["contract"]["freeze"], json!(["device"]));
    // Only `new` moved the generation.
    assert_eq!(r.registry()["schema_generation"], json!(generation.as_i64().unwrap() + 1));
    // Without freeze the same day grows the struct (model, an integer
    // os version, the wrapped scalar's key).
    let open = run(text, &[("registry", s(&reg))]).unwrap();
    assert_eq!(open.column("device")[0].as_array().map(Vec::len), Some(4), "{:?}", open.column("device"));
}

#[test]
fn a_frozen_path_without_a_registry_shape_is_shaped_by_its_first_scan() {
    let r = run("{\"device\": {\"os\": \"ios\"}}\n{\"device\": {\"model\": 1}}\n", &[("freeze", list(&["device"]))])
        .unwrap();
    assert_eq!(r.column("device"), [json!([null, "ios"]), json!([1, null])]);
}

#[test]
fn policy_paths_are_checked() {
    let e = run("{}\n", &[("pin_types", pins(&[("a..b", "DOUBLE")]))]).unwrap_err();
    assert!(e.contains("pin_types") && e.contains("a..b"), "{e}");
    let e = run("{}\n", &[("pin_types", pins(&[("a", "HUGEINT")]))]).unwrap_err();
    assert!(e.contains("pin_types") && e.contains("HUGEINT") && e.contains("DOUBLE"), "{e}");
    let e = run("{}\n", &[("pin_types", pins(&[("a", "DOUBLE")])), ("freeze", list(&["a"]))]).unwrap_err();
    assert!(e.contains("both pinned"), "{e}");
    let e = run("{}\n", &[("pin_types", s("amount"))]).unwrap_err();
    assert!(e.contains("pin_types") && e.contains("MAP"), "{e}");
}

#[test]
fn numbers_convert_only_when_exact() {
    let text = "{\"d\": 9007199254740992, \"b\": 1e3, \"t\": \"yes\"}\n{\"d\": 9007199254740993, \"b\": 1e30, \"t\": \"TRUE\"}\n{\"d\": -3, \"b\": -2.0, \"t\": 1}\n";
    let r = run(text, &[("pin_types", pins(&[("d", "DOUBLE"), ("b", "BIGINT"), ("t", "BOOLEAN")]))]).unwrap();
    assert_eq!(r.column("d"), [json!(9007199254740992.0), Value::Null, json!(-3.0)]);
    assert_eq!(r.column("b"), [json!(1000), Value::Null, json!(-2)]);
    // Without tokens, "true"/"false" in any case; a number is no boolean.
    assert_eq!(r.column("t"), [Value::Null, json!(true), Value::Null]);
    let r = run(text, &[("pin_types", pins(&[("t", "BOOLEAN")])), ("true_tokens", list(&["yes"]))]).unwrap();
    assert_eq!(r.column("t"), [json!(true), Value::Null, Value::Null]);
}
