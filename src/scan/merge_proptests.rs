//! The laws of `sanitize_registry_merge` (docs/registry.md "Merging registries"), over random record
//! sequences: the merge of the probes of A and B is the probe of A followed
//! by B; the merge is associative; one registry, or a registry with itself,
//! merges to itself; a known shape never bumps `schema_generation`.

use proptest::prelude::*;
use serde_json::{Map, Value};

use super::proptests::to_lines;
use super::tests::run;
use crate::registry::merge_registries;

/// Values whose arrays hold one kind of element (mixed arrays become
/// `list<json>`, which the laws leave out: see `lossy`), nested a few levels.
fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-100i64..100).prop_map(Value::from),
        (-40i32..40).prop_map(|n| Value::from(f64::from(n) / 4.0 + 0.125)),
        "[a-c]{0,2}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            prop::collection::vec(any::<bool>().prop_map(Value::Bool), 0..3).prop_map(Value::Array),
            prop::collection::vec((-100i64..100).prop_map(Value::from), 0..3).prop_map(Value::Array),
            prop::collection::vec(inner.clone(), 0..2).prop_map(Value::Array),
            prop::collection::btree_map("[a_A]", inner, 0..3).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn record() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map("[xyzX]", value(), 0..4).prop_map(|m| m.into_iter().collect())
}

fn probe(records: &[Map<String, Value>]) -> String {
    run(&to_lines(records), &[]).unwrap().plan.registry_json.clone()
}

/// The two shapes a registry records as a join that no longer says what
/// the values were (docs/registry.md, "Merging registries"): a list of
/// elements that shared no type (`json`), and a struct that wrapped bare
/// scalars under `scalar_object_key`. A merge that must transform another
/// shard's version to meet them cannot know those values; such cases are
/// left out of the laws.
fn lossy(registry: &str) -> bool {
    registry.contains("\"kind\":\"json\"") || registry.contains("\"source_key\":\"default_key\"")
}

fn merge(docs: &[&str]) -> String {
    let docs: Vec<Option<&str>> = docs.iter().map(|d| Some(*d)).collect();
    merge_registries(&docs).unwrap().json_text()
}

fn doc(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: crate::test_support::cases(128),
        // Cases with the lossy shapes are left out (see `lossy`): allow many.
        max_global_rejects: 1_000_000,
        .. ProptestConfig::default()
    })]

    #[test]
    fn the_merge_of_two_probes_is_the_probe_of_both(
        a in prop::collection::vec(record(), 0..6),
        b in prop::collection::vec(record(), 0..6),
    ) {
        let both: Vec<_> = a.iter().chain(&b).cloned().collect();
        let (ra, rb) = (probe(&a), probe(&b));
        prop_assume!(!lossy(&ra) && !lossy(&rb));
        let merged = merge(&[&ra, &rb]);
        prop_assert_eq!(doc(&merged), doc(&probe(&both)), "A {:?} B {:?}", to_lines(&a), to_lines(&b));
    }

    #[test]
    fn the_merge_is_associative(
        a in prop::collection::vec(record(), 0..4),
        b in prop::collection::vec(record(), 0..4),
        c in prop::collection::vec(record(), 0..4),
    ) {
        let (ra, rb, rc) = (probe(&a), probe(&b), probe(&c));
        prop_assume!(![&ra, &rb, &rc].iter().any(|r| lossy(r)));
        let (ab, bc) = (merge(&[&ra, &rb]), merge(&[&rb, &rc]));
        // Merges may build the lossy shapes too (a scalar and a struct meet).
        prop_assume!(!lossy(&ab) && !lossy(&bc));
        let left = merge(&[&ab, &rc]);
        let right = merge(&[&ra, &bc]);
        let flat = merge(&[&ra, &rb, &rc]);
        prop_assert_eq!(doc(&left), doc(&flat));
        prop_assert_eq!(doc(&right), doc(&flat));
    }

    #[test]
    fn one_registry_and_a_registry_with_itself_merge_to_it(a in prop::collection::vec(record(), 0..6)) {
        let r = probe(&a);
        prop_assert_eq!(doc(&merge(&[&r])), doc(&r));
        prop_assert_eq!(doc(&merge(&[&r, &r])), doc(&r));
    }

    /// Shards probed from one starting registry: their merge is the probe
    /// of all of them from that start, and a shard that saw only known
    /// shapes moves nothing.
    #[test]
    fn shards_from_one_start_merge_to_the_run_over_all(
        start in prop::collection::vec(record(), 1..4),
        a in prop::collection::vec(record(), 0..4),
        b in prop::collection::vec(record(), 0..4),
    ) {
        let base = probe(&start);
        let from_base = |records: &[Map<String, Value>]| {
            run(&to_lines(records), &[("registry", crate::options::ParamValue::Str(base.clone()))]).unwrap().plan.registry_json.clone()
        };
        let both: Vec<_> = a.iter().chain(&b).cloned().collect();
        let (ra, rb) = (from_base(&a), from_base(&b));
        prop_assume!(!lossy(&ra) && !lossy(&rb));
        let merged = merge(&[&ra, &rb]);
        prop_assert_eq!(doc(&merged), doc(&from_base(&both)));
        // Known shapes only: the start again, generation and all.
        prop_assert_eq!(doc(&merge(&[&base, &from_base(&start)])), doc(&base));
    }
}
