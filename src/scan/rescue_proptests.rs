//! Nothing is lost with a rescue column (docs/errors.md "The rescue column"): for random records
//! and a registry probed from other random records, a strict scan's typed
//! values plus its rescued values give back every value of every record.
//!
//! Compared as multisets of (path, leaf) pairs: the path is the record's
//! source keys (list levels and the scalar wrapping key left out, as a
//! singleton may be wrapped into a list or a scalar into a struct), the
//! leaf its text (numbers as DOUBLE text: an integer routed into a DOUBLE
//! column, or a number pinned to VARCHAR, is the same value).

use proptest::prelude::*;
use serde_json::{Map, Value};

use super::tests::{run, Run};
use crate::formats::json::parse_value;
use crate::infer::{choose_version, classify, Growth, Level, ScalarKind, StructNode, TypeNode, ValueClass};
use crate::options::ParamValue;
use crate::value::{Tape, ValueRef};

const WRAP_KEY: &str = "default_key";

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-1000i64..1000).prop_map(Value::from),
        (-400i32..400).prop_map(|n| Value::from(f64::from(n) / 4.0 + 0.125)),
        "[a-c]{0,3}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[abc]", inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn record() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map("[xyz]", value(), 0..4).prop_map(|m| m.into_iter().collect())
}

fn lines(records: &[Map<String, Value>]) -> String {
    records.iter().map(|r| Value::Object(r.clone()).to_string() + "\n").collect()
}

fn leaf_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(format!("{:?}", n.as_f64().unwrap_or(f64::NAN))),
        // A VARCHAR pin writes any scalar as its text; the generated strings
        // never look like numbers or booleans, so text compares equal.
        Value::String(s) => Some(s.parse::<f64>().map_or_else(|_| s.clone(), |f| format!("{f:?}"))),
        _ => None,
    }
}

fn join(path: &str, key: &str) -> String {
    if key == WRAP_KEY {
        path.to_string()
    } else if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The leaves of a JSON value found at `path`.
fn flatten(v: &Value, path: &str, out: &mut Vec<(String, String)>) {
    match v {
        Value::Array(items) => items.iter().for_each(|i| flatten(i, path, out)),
        Value::Object(m) => m.iter().for_each(|(k, i)| flatten(i, &join(path, k), out)),
        leaf => out.extend(leaf_text(leaf).map(|t| (path.to_string(), t))),
    }
}

/// The leaves of a typed value (`row_json`'s form: a struct is its
/// children in output order) of type `ty` at `path`.
fn typed(ty: &TypeNode, v: &Value, path: &str, out: &mut Vec<(String, String)>) {
    match (ty, v) {
        (_, Value::Null) => {}
        (TypeNode::Struct(s), Value::Array(children)) => typed_struct(s, children, path, out),
        (TypeNode::List(e) | TypeNode::Map(e), Value::Array(items)) => {
            items.iter().for_each(|i| typed(e, i, path, out))
        }
        // A JSON-text column: the text is the value (strings as they are).
        // A ragged list is flattened to its JSON text (infer/classify.rs);
        // the generated strings never start with a bracket.
        (TypeNode::Scalar(ScalarKind::Str), Value::String(text)) if text.starts_with(['[', '{']) => {
            match serde_json::from_str::<Value>(text) {
                Ok(parsed) => flatten(&parsed, path, out),
                Err(_) => flatten(v, path, out),
            }
        }
        (TypeNode::Scalar(ScalarKind::Json), Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(parsed) => flatten(&parsed, path, out),
            Err(_) => flatten(v, path, out),
        },
        (_, leaf) => out.extend(leaf_text(leaf).map(|t| (path.to_string(), t))),
    }
}

fn typed_struct(s: &StructNode, children: &[Value], path: &str, out: &mut Vec<(String, String)>) {
    for (&(fi, vi), child) in s.outputs.iter().zip(children) {
        let family = &s.families[fi];
        typed(&family.versions[vi].ty, child, &join(path, &family.source_key), out);
    }
}

/// Checks that every leaf of every record is in its typed column or in
/// the rescue column, for a scan of `records` with `params` (which set the
/// rescue column `_r`).
fn nothing_lost(records: &[Map<String, Value>], params: &[(&str, ParamValue)]) -> Result<Run, TestCaseError> {
    let r = run(&lines(records), params).unwrap();
    prop_assert_eq!(r.rows.len(), records.len());
    let rescue = r.names.len() - 1;
    for (row, record) in r.rows.iter().zip(records) {
        let mut want = Vec::new();
        flatten(&Value::Object(record.clone()), "", &mut want);
        let mut got = Vec::new();
        typed_struct(&r.plan.schema, &row[..rescue], "", &mut got);
        if let Value::String(text) = &row[rescue] {
            let rescued: Map<String, Value> = serde_json::from_str(text).unwrap();
            for (path, v) in &rescued {
                // Rescue paths mark list levels; the comparison leaves them
                // out (and the wrapping key, as for typed values).
                let path = path
                    .split('.')
                    .map(|k| k.trim_end_matches("[]"))
                    .filter(|k| *k != WRAP_KEY)
                    .collect::<Vec<_>>()
                    .join(".");
                flatten(v, &path, &mut got);
            }
        }
        want.sort();
        got.sort();
        prop_assert_eq!(
            &got,
            &want,
            "record {} row {:?} schema {}",
            Value::Object(record.clone()),
            row,
            r.plan.registry_json
        );
    }
    Ok(r)
}

fn registry_of(history: &[Map<String, Value>]) -> String {
    let preserve = [("field_name_policy", ParamValue::Str("preserve".into()))];
    run(&lines(history), &preserve).unwrap().plan.registry_json.clone()
}

/// The rows of a strict scan of `records` as one file under the registry
/// of `history`, and those of one scan per record (where no shape of an
/// earlier record can be reused).
fn strict_scan_whole_and_one_by_one(
    history: &[Map<String, Value>],
    records: &[Map<String, Value>],
    emit_null: bool,
) -> (Vec<Vec<Value>>, Vec<Vec<Value>>) {
    let params = [
        ("field_name_policy", s("preserve")),
        ("registry", s(&registry_of(history))),
        ("schema_mode", s("strict")),
        ("on_error", s(if emit_null { "emit_null_row" } else { "skip_row" })),
    ];
    let whole = run(&lines(records), &params).unwrap().rows;
    let mut one_by_one = Vec::new();
    for record in records {
        one_by_one.extend(run(&lines(std::slice::from_ref(record)), &params).unwrap().rows);
    }
    (whole, one_by_one)
}

/// Records of few keys whose values are mostly lists of scalars of few
/// kinds, so that lists of other kinds meet at the same key.
fn list_record() -> impl Strategy<Value = Map<String, Value>> {
    let leaf = prop_oneof![
        Just(Value::Null),
        (-3i64..3).prop_map(Value::from),
        Just(Value::from(0.5)),
        "[ab]".prop_map(Value::from),
        any::<bool>().prop_map(Value::Bool),
    ];
    // Mostly lists of one kind: the kinds of a key's lists then differ
    // from record to record, and a registry's list often takes one kind.
    let value = prop_oneof![
        3 => (leaf.clone(), 0usize..4).prop_map(|(v, n)| Value::Array(vec![v; n])),
        1 => prop::collection::vec(leaf.clone(), 0..4).prop_map(Value::Array),
        1 => leaf,
    ];
    prop::collection::btree_map("[xy]", value, 1..3).prop_map(|m| m.into_iter().collect())
}

/// `v` with every non-empty list of scalars rebuilt from its own elements
/// in another number and order (chosen by `seed`): the same kinds, another
/// length.
fn relist(v: &Value, seed: u64) -> Value {
    match v {
        Value::Array(items) if !items.is_empty() && items.iter().all(|i| !i.is_array() && !i.is_object()) => {
            let len = 1 + (seed % 5) as usize;
            // Every element's kind stays: the first `items.len()` picks
            // take each element once, rotated.
            let n = len.max(items.len());
            Value::Array((0..n).map(|k| items[(k + (seed >> 8) as usize) % items.len()].clone()).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(|i| relist(i, seed.rotate_left(7))).collect()),
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, i)| (k.clone(), relist(i, seed.rotate_left(13)))).collect())
        }
        other => other.clone(),
    }
}

fn s(v: &str) -> ParamValue {
    ParamValue::Str(v.to_string())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(96), .. ProptestConfig::default() })]

    /// Strict mode: what the registry does not take is rescued.
    #[test]
    fn typed_plus_rescued_values_give_back_every_value(
        history in prop::collection::vec(record(), 1..6),
        records in prop::collection::vec(record(), 1..10),
    ) {
        let params = [
            ("field_name_policy", s("preserve")),
            ("registry", s(&registry_of(&history))),
            ("schema_mode", s("strict")),
            ("rescue_column", s("_r")),
            ("on_error", s("emit_null_row")),
        ];
        let r = nothing_lost(&records, &params)?;
        // A present value that its registry type takes as it is stays
        // typed: nothing under its key is rescued.
        let rules = r.plan.rules();
        let rescue = r.names.len() - 1;
        for (row, record) in r.rows.iter().zip(&records) {
            let rescued: Map<String, Value> = match &row[rescue] {
                Value::String(text) => serde_json::from_str(text).unwrap(),
                _ => Map::new(),
            };
            for (key, v) in record {
                let Some(family) = r.plan.schema.family(key) else { continue };
                let mut tape = Tape::default();
                let root = parse_value(&v.to_string(), &mut tape).unwrap();
                let c = classify(ValueRef { tape: &tape, idx: root as usize }, Level::default(), &rules);
                if c.class == ValueClass::Nothing || choose_version(family, &c, Growth::None, &rules).is_none() {
                    continue;
                }
                let under = |p: &String| p == key || p.starts_with(&format!("{key}.")) || p.starts_with(&format!("{key}[]"));
                prop_assert!(!rescued.keys().any(under), "{} fits but {:?} was rescued", v, rescued);
            }
        }
    }

    /// Additive mode with every field frozen or pinned: what the frozen
    /// shapes or the pins do not take is rescued.
    #[test]
    fn frozen_and_pinned_fields_lose_nothing_either(
        history in prop::collection::vec(record(), 1..6),
        records in prop::collection::vec(record(), 1..10),
        pin in prop_oneof![Just("DOUBLE"), Just("BIGINT"), Just("VARCHAR"), Just("BOOLEAN"), Just("JSON")],
    ) {
        // The registry has no z: a pin of a type it lacks is refused at bind.
        let history: Vec<_> = history.into_iter().map(|mut r| { r.remove("z"); r }).collect();
        // A policy path must name a field the registry or the input has
        // (a path that names nothing is an error, tested in infer/policy.rs).
        // One record more with a scalar in each, so that each path names
        // a field (an empty list or object alone makes none).
        let mut records = records;
        let mut named = Map::new();
        for (k, v) in [("x", Value::from(1)), ("y", Value::from("s")), ("z", Value::from(1.5))] {
            named.insert(k.to_string(), v);
        }
        records.push(named);
        let params = [
            ("field_name_policy", s("preserve")),
            ("registry", s(&registry_of(&history))),
            ("freeze", ParamValue::List(vec![s("x"), s("y")])),
            ("pin_types", ParamValue::Map(vec![("z".into(), s(pin))])),
            ("rescue_column", s("_r")),
        ];
        nothing_lost(&records, &params)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(96), .. ProptestConfig::default() })]

    /// Strict mode skips the check of a record whose shape it already
    /// wrote without a misfit (infer/shapes.rs, `Router::checked_shapes`).
    /// A scan of one record per file never has a shape to reuse: scanning
    /// the records as one file (shapes repeating, in any order) must give
    /// the rows and counters of those one-record scans.
    #[test]
    fn strict_shape_checks_never_change_the_scan(
        history in prop::collection::vec(record(), 1..6),
        pool in prop::collection::vec(record(), 1..5),
        picks in prop::collection::vec(0usize..5, 1..24),
        emit_null in any::<bool>(),
    ) {
        let records: Vec<Map<String, Value>> = picks.iter().map(|p| pool[p % pool.len()].clone()).collect();
        let (whole, one_by_one) = strict_scan_whole_and_one_by_one(&history, &records, emit_null);
        prop_assert_eq!(whole, one_by_one);
    }

    /// The same, where records differ from each other in the lengths and
    /// the order of their lists of scalars only (which strict mode's shapes
    /// leave out, infer/shapes.rs `ShapeSet`): a list's elements of the
    /// same kinds in another number and order must get the same verdict
    /// as the one-record scans give them.
    #[test]
    fn strict_shape_checks_never_change_the_scan_of_lists_that_differ_in_length(
        history in prop::collection::vec(list_record(), 1..6),
        pool in prop::collection::vec(list_record(), 2..5),
        picks in prop::collection::vec((0usize..5, any::<u64>()), 2..24),
        emit_null in any::<bool>(),
    ) {
        let records: Vec<Map<String, Value>> = picks
            .iter()
            .map(|&(p, seed)| match relist(&Value::Object(pool[p % pool.len()].clone()), seed) {
                Value::Object(m) => m,
                _ => unreachable!("an object stays an object"),
            })
            .collect();
        let (whole, one_by_one) = strict_scan_whole_and_one_by_one(&history, &records, emit_null);
        prop_assert_eq!(whole, one_by_one);
    }
}
