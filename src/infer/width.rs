//! `max_columns`: how wide a schema is, counted while it grows
//! (docs/errors.md, "Limits").
//!
//! A schema's width is its top-level columns plus the fields of its
//! structs: every version counts one (`amount` and `amount_v2_string` are
//! two), the fields of a list's element type count (the list is one
//! column), and a map counts one, with the fields of its key and value
//! types counted once, not once per key.
//!
//! The probe checks the width as each record is absorbed
//! (infer/lattice.rs keeps [`InferStats::columns`] up to date, adding a
//! version as it is made), so an input that would make a million columns
//! fails at the first one past the limit, having built no more. One
//! exception keeps that check from failing a scan whose schema ends up
//! narrow: a struct born in this scan may still become a map once the
//! probe has seen every record (infer/maps.rs), and a map's value type
//! counts once, so while maps may be inferred the fields inside such a
//! struct are not counted as they grow. The count during the probe is
//! then a lower bound of the final width, never more, and the finished
//! schema (maps made) is measured exactly by [`schema_width`].
//!
//! [`InferStats::columns`]: super::InferStats::columns

use super::schema::{StructNode, TypeNode};

/// `max_columns` as inference applies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnLimit {
    /// The widest schema allowed.
    pub max: usize,
    /// Structs born in this scan may still become maps (see the module
    /// doc): their fields are not counted while they grow.
    pub maps_later: bool,
}

impl ColumnLimit {
    /// No limit (tests, and the merge of registries, which reads no input).
    pub const NONE: ColumnLimit = ColumnLimit { max: usize::MAX, maps_later: false };
}

/// The width of a finished schema (see the module doc).
pub fn schema_width(root: &StructNode) -> usize {
    struct_width(root, true)
}

/// The width the probe counts for `root` under `limit` (see the module
/// doc): [`schema_width`] without the fields inside structs born in this
/// scan when `limit.maps_later`. What [`InferStats::columns`] starts from.
///
/// [`InferStats::columns`]: super::InferStats::columns
pub fn running_width(root: &StructNode, limit: ColumnLimit) -> usize {
    struct_width(root, !limit.maps_later)
}

fn struct_width(s: &StructNode, born_counted: bool) -> usize {
    s.families.iter().flat_map(|f| &f.versions).map(|v| 1 + inside_width(&v.ty, v.established, born_counted)).sum()
}

/// The fields counted inside a version's type `ty` (not the version
/// itself). `established`: the version came from the registry, so a
/// struct it is can never become a map; `born_counted`: the fields of a
/// struct born in this scan count. Mirrors what infer/lattice.rs counts as
/// it builds, so that a type it drops is taken off exactly.
pub(super) fn inside_width(ty: &TypeNode, established: bool, born_counted: bool) -> usize {
    match ty {
        TypeNode::Scalar(_) => 0,
        TypeNode::List(e) => inside_width(e, established, born_counted),
        // The entry's `key` and `value` are the map itself: only what is
        // inside their types counts.
        TypeNode::Map(entry) => match entry.as_ref() {
            TypeNode::Struct(e) => e
                .families
                .iter()
                .flat_map(|f| &f.versions)
                .map(|v| inside_width(&v.ty, established, born_counted))
                .sum(),
            other => inside_width(other, established, born_counted),
        },
        TypeNode::Struct(s) if established || born_counted => struct_width(s, born_counted),
        TypeNode::Struct(_) => 0,
    }
}

/// Whether the schema holds a map anywhere: a new struct version of a map
/// field becomes a map after the probe (infer/maps.rs), whatever
/// `map_inference_threshold` says.
pub fn has_map(root: &StructNode) -> bool {
    fn in_type(ty: &TypeNode) -> bool {
        match ty {
            TypeNode::Scalar(_) => false,
            TypeNode::Map(_) => true,
            TypeNode::List(e) => in_type(e),
            TypeNode::Struct(s) => has_map(s),
        }
    }
    root.families.iter().flat_map(|f| &f.versions).any(|v| in_type(&v.ty))
}

/// The object of the schema with the most keys: its source-key path (`""`
/// for the record itself; a list's elements have the list's path, as in
/// `map_paths`) and its key count. The first of equals in schema order.
pub fn widest_object(root: &StructNode) -> (String, usize) {
    fn visit_struct(s: &StructNode, path: &str, best: &mut (String, usize)) {
        if s.families.len() > best.1 {
            *best = (path.to_string(), s.families.len());
        }
        visit_fields(s, path, best);
    }
    fn visit_fields(s: &StructNode, path: &str, best: &mut (String, usize)) {
        for f in &s.families {
            let inner = crate::value::path::join(path, &f.source_key);
            for v in &f.versions {
                visit_type(&v.ty, &inner, best);
            }
        }
    }
    fn visit_type(ty: &TypeNode, path: &str, best: &mut (String, usize)) {
        match ty {
            TypeNode::Scalar(_) => {}
            TypeNode::List(e) => visit_type(e, path, best),
            // A map's entry is no object of the input; its value's are.
            TypeNode::Map(entry) => match entry.as_ref() {
                TypeNode::Struct(e) => visit_fields(e, path, best),
                other => visit_type(other, path, best),
            },
            TypeNode::Struct(s) => visit_struct(s, path, best),
        }
    }
    let mut best = (String::new(), 0);
    visit_struct(root, "", &mut best);
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::json::lines::JsonLinesReader;
    use crate::formats::{Batch, RecordReader};
    use crate::infer::shapes::plain_rules;
    use crate::infer::{absorb_record, infer_maps, InferStats, MapRules, Rules};

    /// Absorbs `lines` under `limit`, as the probe does: returns the tree,
    /// the running count, and the index of the record whose absorbing
    /// passed the limit, if one did.
    fn absorb_lines(lines: &[&str], limit: ColumnLimit, start: StructNode) -> (StructNode, usize, Option<usize>) {
        let rules = Rules { columns: limit, ..plain_rules(32, 15) };
        let mut root = start;
        let mut stats = InferStats { columns: running_width(&root, limit), ..InferStats::default() };
        let text = lines.join("\n");
        let mut reader = JsonLinesReader::new(text.as_bytes(), "w.jsonl", 1 << 16);
        let mut batch = Batch::default();
        let n = reader.next_batch(&mut batch, 1000).unwrap();
        assert_eq!(n, lines.len());
        for i in 0..n {
            assert!(batch.meta[i].error.is_none(), "{:?}", batch.meta[i].error);
            absorb_record(&mut root, batch.tape.record(i), &rules, &mut stats);
            if stats.columns > limit.max {
                return (root, stats.columns, Some(i));
            }
            // The count kept while absorbing is the count of the tree.
            assert_eq!(stats.columns, running_width(&root, limit), "after record {i}");
        }
        (root, stats.columns, None)
    }

    fn unlimited(maps_later: bool) -> ColumnLimit {
        ColumnLimit { max: usize::MAX, maps_later }
    }

    #[test]
    fn versions_list_elements_and_map_values_count_as_documented() {
        let lines = [
            r#"{"a": 1, "s": {"x": 1, "y": {"z": true}}, "l": [{"p": 1}, {"q": "r"}]}"#,
            // `a` gains a string version; `l` holds one more field.
            r#"{"a": "one", "l": [{"t": 2.5}]}"#,
        ];
        let (root, counted, over) = absorb_lines(&lines, unlimited(false), StructNode::default());
        assert_eq!(over, None);
        // a, a_v2_string; s, s.x, s.y, s.y.z; l, l[].p, l[].q, l[].t
        assert_eq!(counted, 10);
        assert_eq!(schema_width(&root), 10);
        // While maps may still be made, the fields of new structs wait.
        let (root, counted, _) = absorb_lines(&lines, unlimited(true), StructNode::default());
        assert_eq!(counted, 4);
        assert_eq!(schema_width(&root), 10);
    }

    #[test]
    fn a_map_counts_its_value_once() {
        let ids: Vec<String> = (0..50).map(|i| format!("\"id{i}\": {{\"n\": {i}, \"m\": \"x\"}}")).collect();
        let line = format!("{{\"k\": 1, \"by_id\": {{{}}}}}", ids.join(", "));
        let (mut root, counted, over) = absorb_lines(&[&line], unlimited(true), StructNode::default());
        assert_eq!((counted, over), (2, None));
        // Before maps: k, by_id, 50 ids, 2 fields each.
        assert_eq!(schema_width(&root), 2 + 50 * 3);
        let made = infer_maps(&mut root, &MapRules { threshold: Some(10), paths: &[], record_limit: None });
        assert_eq!(made, ["by_id"]);
        // k, by_id (the map), and its value's n and m.
        assert_eq!(schema_width(&root), 4);
        assert_eq!(running_width(&root, unlimited(true)), 2);
    }

    #[test]
    fn the_count_is_exact_through_every_change_of_a_type() {
        // Scalars wrapped into structs and lists, structs into lists of
        // themselves, elements that fall back to text, numbers that join:
        // the kept count stays the tree's (checked after every record).
        let lines = [
            r#"{"a": 1, "b": {"x": 1}, "c": [[1], "s"], "d": [1, {"k": 2}]}"#,
            r#"{"a": {"y": 2, "z": [3]}, "b": [{"x": 2, "w": 1}], "c": [{"u": 1}]}"#,
            r#"{"a": [{"y": "s"}], "b": {"v": {"deep": 1}}, "d": [[{"n": 1}], "t"]}"#,
            r#"{"e": [[{"m": 1}, 2], {"o": [1, "x"]}], "a": 2.5, "f": {"g": {"h": {"i": null}}}}"#,
        ];
        for maps_later in [false, true] {
            let (root, counted, over) = absorb_lines(&lines, unlimited(maps_later), StructNode::default());
            assert_eq!(over, None);
            assert_eq!(counted, running_width(&root, unlimited(maps_later)));
            assert!(counted <= schema_width(&root));
        }
    }

    #[test]
    fn the_limit_is_passed_by_the_first_column_past_it() {
        let keys = |n: usize| {
            let fields: Vec<String> = (0..n).map(|i| format!("\"k{i}\": {i}")).collect();
            format!("{{{}}}", fields.join(", "))
        };
        let at = keys(20);
        let limit = ColumnLimit { max: 20, maps_later: true };
        let (_, counted, over) = absorb_lines(&[&at], limit, StructNode::default());
        assert_eq!((counted, over), (20, None));
        let past = keys(21);
        let (root, counted, over) = absorb_lines(&[&at, &past], limit, StructNode::default());
        assert_eq!((counted, over), (21, Some(1)));
        // The absorb stopped there: the rest of a wide record is not built.
        let wide = keys(10_000);
        let (root_wide, counted, over) = absorb_lines(&[&wide], limit, StructNode::default());
        assert_eq!((counted, over), (21, Some(0)));
        assert_eq!(root_wide.families.len(), 21);
        assert_eq!(widest_object(&root), (String::new(), 21));
    }

    #[test]
    fn nested_fields_count_where_no_map_can_take_them() {
        // With maps never inferred (map_inference_threshold -1, no
        // map_paths), a nested struct's fields count as they grow, and
        // its absorb stops at the first past the limit.
        let fields: Vec<String> = (0..100).map(|i| format!("\"k{i}\": {i}")).collect();
        let line = format!("{{\"id\": 1, \"p\": {{\"q\": {{{}}}}}}}", fields.join(", "));
        let limit = ColumnLimit { max: 50, maps_later: false };
        let (root, counted, over) = absorb_lines(&[&line], limit, StructNode::default());
        assert_eq!((counted, over), (51, Some(0)));
        assert_eq!(widest_object(&root), ("p.q".to_string(), 48));
        // Where maps may be made, they wait for the finished schema.
        let (root, counted, over) =
            absorb_lines(&[&line], ColumnLimit { max: 50, maps_later: true }, StructNode::default());
        assert_eq!((counted, over), (2, None));
        assert_eq!(schema_width(&root), 103);
        assert_eq!(widest_object(&root), ("p.q".to_string(), 100));
    }

    #[test]
    fn fields_of_registry_structs_count_as_they_grow() {
        let (mut start, _, _) = absorb_lines(&[r#"{"s": {"a": 1}}"#], unlimited(true), StructNode::default());
        start.for_each_family_mut(&mut |f| f.versions.iter_mut().for_each(|v| v.established = true));
        assert_eq!(running_width(&start, unlimited(true)), 2);
        // A registry struct never becomes a map: its new fields count.
        let (root, counted, _) = absorb_lines(&[r#"{"s": {"b": 2, "c": {"d": 1}}}"#], unlimited(true), start.clone());
        // s, s.a, s.b, s.c (new, so its d waits for the maps).
        assert_eq!(counted, 4);
        assert_eq!(schema_width(&root), 5);
    }

    use proptest::prelude::*;

    use crate::formats::json::parse_value;
    use crate::formats::json::texts::{leaves, JsonValues};
    use crate::value::Tape;

    /// Records nested a few levels over few keys, so that versions open,
    /// scalars wrap into structs and lists, and lists fall back to text.
    fn record() -> impl Strategy<Value = String> {
        let value = JsonValues {
            leaves: leaves(&["null", "true", "2.5", "\"s\"", "\"7\""], -5..5),
            keys: "[abc]",
            depth: 4,
            size: 24,
            width: 4,
            spaced: false,
        }
        .strategy();
        prop::collection::vec(("[xyz]", value), 0..4).prop_map(|entries| {
            let body: Vec<String> = entries.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
            format!("{{{}}}", body.join(","))
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: crate::test_support::cases(256), .. ProptestConfig::default() })]

        /// The count kept while absorbing is the tree's after every
        /// record, and never more than the finished schema's width once
        /// maps are made: the probe's check cannot fail a scan whose
        /// schema fits.
        #[test]
        fn the_running_count_is_the_trees_and_a_lower_bound_of_the_finished_width(
            records in prop::collection::vec(record(), 1..12),
            threshold in prop::option::of(0usize..4),
            parse_integers in any::<bool>(),
        ) {
            let mut parsers = crate::scalar::ScalarParsers::none();
            parsers.integers = parse_integers;
            let limit = unlimited(threshold.is_some());
            let rules = Rules { columns: limit, parsers: &parsers, ..plain_rules(32, 15) };
            let mut root = StructNode::default();
            let mut stats = InferStats::default();
            for text in &records {
                let mut tape = Tape::default();
                let idx = parse_value(text, &mut tape).unwrap();
                tape.roots.push(idx);
                absorb_record(&mut root, tape.record(0), &rules, &mut stats);
                prop_assert_eq!(stats.columns, running_width(&root, limit), "after {}", text);
            }
            infer_maps(&mut root, &MapRules { threshold, paths: &[], record_limit: None });
            prop_assert!(stats.columns <= schema_width(&root));
        }
    }

    #[test]
    fn a_wide_object_in_a_list_is_found_at_the_list_path() {
        let (root, _, _) = absorb_lines(
            &[r#"{"l": [{"a": 1, "b": 2, "c": 3}], "m": {"x": 1, "y": 2}}"#],
            unlimited(false),
            StructNode::default(),
        );
        assert_eq!(widest_object(&root), ("l".to_string(), 3));
    }
}
