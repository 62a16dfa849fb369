//! Lists whose depth drifts: a list value shallower than its column's
//! list-of-lists type is one element, wrapped whole, never each of its
//! elements; a ragged list (elements of different depths) is its JSON
//! text. The routed value can always be turned back into the source value
//! by removing whole wraps, in every file order.

use proptest::prelude::*;
use serde_json::{json, Value};

use super::tests::run;
use crate::options::ParamValue;

fn lines(values: &[Value]) -> String {
    values.iter().map(|v| json!({ "c": v }).to_string() + "\n").collect()
}

fn column(values: &[Value]) -> (Vec<Value>, Vec<String>) {
    let r = run(&lines(values), &[]).unwrap();
    (r.column("c"), r.names.clone())
}

#[test]
fn a_shallower_list_is_wrapped_whole_in_either_order() {
    let deep = json!([[3.5, 4.5]]);
    let flat = json!([1.5, 2.5]);
    let (out, names) = column(&[deep.clone(), flat.clone()]);
    assert_eq!(names, ["c"]);
    assert_eq!(out, [deep.clone(), json!([[1.5, 2.5]])]);
    // The other order: the first record's DOUBLE[] grows a level, and the
    // earlier value is still one element, not [[1.5], [2.5]].
    let (out, names) = column(&[flat, deep.clone()]);
    assert_eq!(names, ["c"]);
    assert_eq!(out, [json!([[1.5, 2.5]]), deep]);
    // A value that is already a list of one-element lists stays as it is:
    // the two no longer read alike.
    let (out, _) = column(&[json!([[3.5, 4.5]]), json!([[1.5], [2.5]])]);
    assert_eq!(out[1], json!([[1.5], [2.5]]));
}

#[test]
fn geojson_polygons_beside_multipolygons_keep_their_geometry() {
    let polygon = json!([[[6.1, 49.5], [6.2, 49.6], [6.1, 49.5]]]);
    let multi = json!([[[[2.5, 51.0], [2.6, 51.1], [2.5, 51.0]]], [[[8.1, 43.0], [8.2, 43.1], [8.1, 43.0]]]]);
    for order in [[polygon.clone(), multi.clone()], [multi.clone(), polygon.clone()]] {
        let (out, names) = column(&order);
        assert_eq!(names, ["c"]);
        let polygon_out = if order[0] == polygon { &out[0] } else { &out[1] };
        // One polygon of the multipolygon: the same rings, one level deeper.
        assert_eq!(polygon_out, &json!([polygon]));
    }
}

#[test]
fn a_list_three_levels_short_is_wrapped_three_times_not_element_by_element() {
    let (out, _) = column(&[json!([[[[1.0]]]]), json!([2.5, 3.5])]);
    assert_eq!(out[1], json!([[[[2.5, 3.5]]]]));
    let (out, _) = column(&[json!([[[1.0]]]), json!([[2.5], [3.5]])]);
    assert_eq!(out[1], json!([[[2.5], [3.5]]]));
}

#[test]
fn a_ragged_list_is_its_json_text() {
    let (out, names) = column(&[json!([1, [2, 3]]), json!([[4]])]);
    assert_eq!(names, ["c", "c_v2_integer_array_array"]);
    assert_eq!(out[0], json!("[1,[2,3]]"));
    let (out, _) = column(&[json!([[1], [[2]]])]);
    assert_eq!(out[0], json!("[[1],[[2]]]"));
    // Nulls and empty containers fit any depth: no raggedness.
    let (out, names) = column(&[json!([null, [1], []])]);
    assert_eq!(names, ["c"]);
    assert_eq!(out[0], json!([null, [1], null]));
}

#[test]
fn a_registry_list_meets_a_deeper_value_with_a_version_and_a_drift_event() {
    let first = run(&lines(&[json!([1.5, 2.5])]), &[]).unwrap();
    let registry = ParamValue::Str(first.plan.registry_json.clone());
    let second = run(&lines(&[json!([[3.5, 4.5]]), json!([5.5])]), &[("registry", registry)]).unwrap();
    assert_eq!(second.names, ["c", "c_v2_float_array_array"]);
    assert_eq!(second.column("c"), [Value::Null, json!([5.5])]);
    assert_eq!(second.column("c_v2_float_array_array"), [json!([[3.5, 4.5]]), Value::Null]);
    assert!(second.drifts().iter().any(|d| d["output_name"] == "c_v2_float_array_array"), "{:?}", second.drifts());
}

/// A list of floats of exactly `depth` levels.
fn list_of_depth(depth: usize) -> BoxedStrategy<Value> {
    if depth == 0 {
        (-8i32..8).prop_map(|n| json!(f64::from(n) + 0.5)).boxed()
    } else {
        prop::collection::vec(list_of_depth(depth - 1), 1..3).prop_map(Value::Array).boxed()
    }
}

/// `out` with whole one-element wraps removed until it is `source`, if it
/// can be.
fn unwraps_to(out: &Value, source: &Value) -> bool {
    if out == source {
        return true;
    }
    match out {
        Value::Array(items) if items.len() == 1 => unwraps_to(&items[0], source),
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(64), ..ProptestConfig::default() })]

    /// Values of random depths, in both orders: each routed value is its
    /// source wrapped whole zero or more times, and the order of the
    /// records changes no value.
    #[test]
    fn routed_lists_unwrap_to_their_source_in_every_order(
        values in prop::collection::vec((1usize..5).prop_flat_map(list_of_depth), 1..5),
    ) {
        let (out, _) = column(&values);
        let reversed: Vec<Value> = values.iter().rev().cloned().collect();
        let (out_reversed, _) = column(&reversed);
        for (i, (source, got)) in values.iter().zip(&out).enumerate() {
            prop_assert!(unwraps_to(got, source), "{} is no wrap of {}", got, source);
            prop_assert_eq!(got, &out_reversed[values.len() - 1 - i]);
        }
    }
}
