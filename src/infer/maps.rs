//! Objects keyed by data (ids, dates, hashes) become `MAP(VARCHAR, T)`
//! instead of hundreds of columns (docs/engine.md, "Maps").
//!
//! After the probe has seen every record, a struct born in this scan turns
//! into a map when it has more distinct keys than `map_inference_threshold`
//! (DuckDB's `read_json` default: 200) and its fields' types reconcile to
//! one value type, or when its path is in `map_paths` (then values that do
//! not reconcile are kept as JSON text). A struct the registry already has
//! stays a struct (its columns are a contract), and a map the registry has
//! stays a map: objects are read into it, never back into a struct.

use super::declared::join;
use super::schema::{Family, ScalarKind, StructNode, TypeNode, Version};

/// When a struct becomes a map.
#[derive(Clone, Debug)]
pub struct MapRules<'a> {
    /// More distinct keys than this at one path makes a map; `None`: never
    /// by count.
    pub threshold: Option<usize>,
    /// Source-key paths (`payload.counts`; a list's elements have their
    /// list's path) that are maps whatever their key count.
    pub paths: &'a [String],
    /// `bigquery_profile`: the deepest RECORD level allowed (15). A map is
    /// two RECORD levels for BigQuery (the map and its `key_value`
    /// entries), one more than the struct it replaces, so a struct whose
    /// subtree would then pass the limit stays a struct.
    pub record_limit: Option<usize>,
}

/// Applies the rules to every struct below `root` (the record itself stays
/// a struct: it is the table). Returns the paths that became maps.
pub fn infer_maps(root: &mut StructNode, rules: &MapRules<'_>) -> Vec<String> {
    let mut made = Vec::new();
    visit_families(root, "", false, rules, &mut made, 0);
    made
}

/// The RECORD levels of a type, itself included (a map counts two, as
/// BigQuery reads it).
fn record_height(ty: &TypeNode) -> usize {
    match ty {
        TypeNode::Struct(s) => {
            1 + s.families.iter().flat_map(|f| &f.versions).map(|v| record_height(&v.ty)).max().unwrap_or(0)
        }
        TypeNode::Map(e) => 1 + record_height(e),
        TypeNode::List(e) => record_height(e),
        TypeNode::Scalar(_) => 0,
    }
}

/// A field that already has a map version gets map versions only: a map
/// never turns back into a struct.
/// `depth`: the RECORD levels around `s`'s fields (0 at the record).
fn visit_families(
    s: &mut StructNode,
    prefix: &str,
    established: bool,
    rules: &MapRules<'_>,
    made: &mut Vec<String>,
    depth: usize,
) {
    for family in &mut s.families {
        let path = crate::value::path::join(prefix, &family.source_key);
        let was_map = family.versions.iter().any(|v| matches!(v.ty, TypeNode::Map(_)));
        for v in &mut family.versions {
            visit(&mut v.ty, established || v.established, was_map, &path, rules, made, depth);
        }
    }
}

fn visit(
    ty: &mut TypeNode,
    established: bool,
    was_map: bool,
    path: &str,
    rules: &MapRules<'_>,
    made: &mut Vec<String>,
    depth: usize,
) {
    let fits = rules.record_limit.is_none_or(|limit| depth + record_height(ty) < limit);
    match ty {
        TypeNode::Struct(s) => {
            let forced = was_map || rules.paths.iter().any(|p| p == path);
            let by_count = rules.threshold.is_some_and(|t| s.families.len() > t);
            if !established && !s.families.is_empty() && (forced || by_count) && fits {
                if let Some(value) = value_type(s).or_else(|| forced.then_some(TypeNode::Scalar(ScalarKind::Json))) {
                    *ty = map_of(value);
                    made.push(path.to_string());
                    return;
                }
            }
            visit_families(s, path, established, rules, made, depth + 1);
        }
        TypeNode::List(e) => visit(e, established, was_map, path, rules, made, depth),
        TypeNode::Map(e) => visit(e, established, was_map, path, rules, made, depth + 1),
        TypeNode::Scalar(_) => {}
    }
}

/// `MAP(VARCHAR, value)`: a map's entry is a struct of `key` and `value`.
pub fn map_of(value: TypeNode) -> TypeNode {
    let mut entry = StructNode::default();
    for (key, ty) in [("key", TypeNode::Scalar(ScalarKind::Str)), ("value", value)] {
        entry.add_family(Family {
            source_key: key.to_string(),
            name: String::new(),
            versions: vec![Version { number: 1, ty, established: false, output_name: String::new(), since: 0 }],
            registry_position: None,
            pin: None,
        });
    }
    TypeNode::Map(Box::new(TypeNode::Struct(entry)))
}

/// The one type every field of `s` reconciles to, if there is one (each
/// field must have a single version).
fn value_type(s: &StructNode) -> Option<TypeNode> {
    let mut types = s.families.iter().map(|f| match f.versions.as_slice() {
        [v] => Some(&v.ty),
        _ => None,
    });
    let first = types.next()??.clone();
    types.try_fold(first, |acc, t| merge(&acc, t?))
}

/// The narrowest type holding both, or `None`.
pub fn merge(a: &TypeNode, b: &TypeNode) -> Option<TypeNode> {
    Some(match (a, b) {
        (TypeNode::Scalar(x), TypeNode::Scalar(y)) if x == y => a.clone(),
        (TypeNode::Scalar(x), TypeNode::Scalar(y)) => TypeNode::Scalar(join(*x, *y)?),
        (TypeNode::List(x), TypeNode::List(y)) => TypeNode::List(Box::new(merge(x, y)?)),
        (TypeNode::Map(x), TypeNode::Map(y)) => TypeNode::Map(Box::new(merge(x, y)?)),
        (TypeNode::Struct(x), TypeNode::Struct(y)) => {
            let mut out = x.clone();
            for f in &y.families {
                let [theirs] = f.versions.as_slice() else { return None };
                match out.index.get(&f.source_key).copied() {
                    Some(i) => {
                        let [ours] = out.families[i].versions.as_mut_slice() else { return None };
                        ours.ty = merge(&ours.ty, &theirs.ty)?;
                    }
                    None => {
                        out.add_family(f.clone());
                    }
                }
            }
            TypeNode::Struct(out)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::json::lines::JsonLinesReader;
    use crate::formats::{Batch, RecordReader};
    use crate::infer::{absorb_record, DepthLimits, InferStats, Rules};
    use crate::scalar::ScalarParsers;

    fn probe(lines: &[&str]) -> StructNode {
        let parsers = ScalarParsers::none();
        let rules = Rules {
            limits: DepthLimits { arrow_max_depth: 32, parquet_max_depth: 15 },
            scalar_object_key: "v",
            parsers: &parsers,
            timestamp_unit: crate::infer::TimeUnit::Micros,
            policies: None,
            columns: crate::infer::ColumnLimit::NONE,
        };
        let mut root = StructNode::default();
        let mut stats = InferStats::default();
        let text = lines.join("\n");
        let mut reader = JsonLinesReader::new(text.as_bytes(), "m.jsonl", 1 << 16);
        let mut batch = Batch::default();
        let n = reader.next_batch(&mut batch, 100).unwrap();
        for i in 0..n {
            absorb_record(&mut root, batch.tape.record(i), &rules, &mut stats);
        }
        root
    }

    fn kind(root: &StructNode, key: &str) -> TypeNode {
        root.family(key).unwrap().versions[0].ty.clone()
    }

    #[test]
    fn under_a_record_limit_a_struct_that_would_pass_it_as_a_map_stays_a_struct() {
        // {"a": {"b": {"k1": 1, "k2": 2, "k3": 3}}}: `a.b` is at RECORD
        // level 2; as a map its entries would be level 3.
        let build = || {
            let mut root = StructNode::default();
            let mut inner = StructNode::default();
            for k in ["k1", "k2", "k3"] {
                inner.add_family(Family {
                    source_key: k.into(),
                    name: String::new(),
                    versions: vec![Version {
                        number: 1,
                        ty: TypeNode::Scalar(ScalarKind::Int),
                        established: false,
                        output_name: String::new(),
                        since: 0,
                    }],
                    registry_position: None,
                    pin: None,
                });
            }
            let mut a = StructNode::default();
            a.add_family(Family {
                source_key: "b".into(),
                name: String::new(),
                versions: vec![Version {
                    number: 1,
                    ty: TypeNode::Struct(inner),
                    established: false,
                    output_name: String::new(),
                    since: 0,
                }],
                registry_position: None,
                pin: None,
            });
            root.add_family(Family {
                source_key: "a".into(),
                name: String::new(),
                versions: vec![Version {
                    number: 1,
                    ty: TypeNode::Struct(a),
                    established: false,
                    output_name: String::new(),
                    since: 0,
                }],
                registry_position: None,
                pin: None,
            });
            root
        };
        let rules = |limit| MapRules { threshold: Some(2), paths: &[], record_limit: limit };
        assert_eq!(infer_maps(&mut build(), &rules(None)), ["a.b"]);
        assert_eq!(infer_maps(&mut build(), &rules(Some(3))), ["a.b"]);
        assert!(infer_maps(&mut build(), &rules(Some(2))).is_empty());
    }

    #[test]
    fn many_keys_of_one_type_make_a_map() {
        let wide: Vec<String> = (0..5).map(|i| format!("\"id{i}\": {i}")).collect();
        let line = format!("{{\"counts\": {{{}}}, \"small\": {{\"a\": 1}}}}", wide.join(","));
        let mut root = probe(&[&line, r#"{"counts": {"id9": 2.5}}"#]);
        let made = infer_maps(&mut root, &MapRules { threshold: Some(4), paths: &[], record_limit: None });
        assert_eq!(made, ["counts"]);
        assert_eq!(kind(&root, "counts"), map_of(TypeNode::Scalar(ScalarKind::Float)));
        assert!(matches!(kind(&root, "small"), TypeNode::Struct(_)));
    }

    #[test]
    fn values_that_do_not_reconcile_keep_the_struct_unless_forced() {
        let mut root = probe(&[r#"{"m": {"a": 1, "b": "x", "c": 2}}"#]);
        assert!(infer_maps(&mut root, &MapRules { threshold: Some(2), paths: &[], record_limit: None }).is_empty());
        let paths = ["m".to_string()];
        assert_eq!(infer_maps(&mut root, &MapRules { threshold: None, paths: &paths, record_limit: None }), ["m"]);
        assert_eq!(kind(&root, "m"), map_of(TypeNode::Scalar(ScalarKind::Json)));
    }

    #[test]
    fn nested_paths_and_struct_values_merge() {
        let mut root = probe(&[r#"{"p": {"c": {"x": {"n": 1}, "y": {"n": 2, "k": "a"}}}}"#]);
        let paths = ["p.c".to_string()];
        assert_eq!(infer_maps(&mut root, &MapRules { threshold: None, paths: &paths, record_limit: None }), ["p.c"]);
        let TypeNode::Struct(p) = kind(&root, "p") else { panic!() };
        let TypeNode::Map(entry) = &p.family("c").unwrap().versions[0].ty else { panic!() };
        let TypeNode::Struct(e) = entry.as_ref() else { panic!() };
        let TypeNode::Struct(value) = &e.family("value").unwrap().versions[0].ty else { panic!() };
        assert!(value.family("n").is_some() && value.family("k").is_some());
    }

    #[test]
    fn a_new_version_of_a_map_field_is_a_map() {
        let mut root = probe(&[r#"{"m": {"a": "x", "b": "y"}}"#]);
        let map = map_of(TypeNode::Scalar(ScalarKind::Int));
        root.families[0].versions[0] =
            Version { number: 1, ty: map, established: true, output_name: "m".into(), since: 0 };
        root.families[0].versions.push(Version {
            number: 2,
            ty: kind(&probe(&[r#"{"m": {"a": "x"}}"#]), "m"),
            established: false,
            output_name: String::new(),
            since: 0,
        });
        assert_eq!(infer_maps(&mut root, &MapRules { threshold: None, paths: &[], record_limit: None }), ["m"]);
        assert_eq!(root.families[0].versions[1].ty, map_of(TypeNode::Scalar(ScalarKind::Str)));
    }

    #[test]
    fn established_structs_stay_structs() {
        let mut root = probe(&[r#"{"m": {"a": 1, "b": 2, "c": 3}}"#]);
        root.families[0].versions[0].established = true;
        assert!(infer_maps(&mut root, &MapRules { threshold: Some(1), paths: &[], record_limit: None }).is_empty());
    }
}
