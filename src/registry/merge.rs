//! `sanitize_registry_merge` (docs/registry.md "Merging registries"): registries folded in list order
//! with the reconciliation lattice (infer/merge.rs), so that the merge of
//! the probes of shards A and B is the probe of A followed by B.
//!
//! What the documents cannot say, and how the merge decides it:
//! - **Which versions are settled.** A probe may transform a version born
//!   in its own run (int64 into DOUBLE, a scalar into a list) but never one
//!   its starting registry had. Each version records the generation that
//!   created it (`since_generation`) and each registry the generation the
//!   run that last changed it started from (`base_generation`); the
//!   inputs' latest start is the start they share (a shard that changed
//!   nothing returns its start registry, which records an older one), and
//!   a version born no later is settled. Every
//!   other version was born in some shard's run, and the merge may
//!   transform it as one run over all the shards would have. The merged
//!   registry keeps that shared start, so merging in steps is merging at
//!   once (associativity).
//! - **Names.** Settled versions keep their names; the others are named
//!   again as one run would name them (a shard's `amount` may be the
//!   merge's `amount_v2_string`).
//! - **Generation.** The highest input generation: a known shape never
//!   bumps it, and shards that each drifted once from one start drifted
//!   once together.

use serde_json::{Map, Value};

use super::finalize::{finalize, FinalizeOptions};
use super::{parse_registry, Registry};
use crate::infer::{merge_struct, DepthLimits, InferStats, Rules, StructNode, TimeUnit};
use crate::options::ColumnOrder;
use crate::scalar::ScalarParsers;

/// Merges `documents` (registry JSON texts) in order; a `None` (SQL NULL)
/// is skipped, as aggregates skip NULLs. Errors name the (1-based) list
/// index: a document that is no registry, or one built under another
/// field-name policy or contract than an earlier one.
pub fn merge_registries(documents: &[Option<&str>]) -> Result<Registry, String> {
    let mut registries = Vec::with_capacity(documents.len());
    let mut positions = Vec::with_capacity(documents.len());
    for (i, text) in documents.iter().enumerate() {
        let Some(text) = text else { continue };
        registries.push(parse_registry(text).map_err(|e| format!("registries[{}]: {}", i + 1, e.message))?);
        positions.push(i + 1);
    }
    let Some(first) = registries.first() else {
        return Err("the list of registries is empty (or all NULL); pass at least one registry".into());
    };
    let policy = first.field_name_policy;
    let mut contract: Option<Map<String, Value>> = None;
    let mut partitions = Vec::new();
    for (r, &i) in registries.iter().zip(&positions) {
        if r.field_name_policy != policy {
            return Err(format!(
                "registries[{i}] was built with field_name_policy '{}' but registries[{}] with '{}'; registries of different contracts cannot be merged",
                r.field_name_policy.name(),
                positions[0],
                policy.name()
            ));
        }
        merge_contract(&mut contract, r.contract.as_ref(), i)?;
        for p in &r.partitions {
            match partitions.iter().find(|q: &&crate::source::PartitionColumn| q.key == p.key) {
                Some(q) if q.ty != p.ty => {
                    return Err(format!(
                        "registries[{i}] types the partition key '{}' as {} but an earlier registry as {}",
                        p.key,
                        p.ty.name(),
                        q.ty.name()
                    ))
                }
                Some(_) => {}
                None => partitions.push(p.clone()),
            }
        }
    }
    // The start the inputs share: the latest start any of them records (a
    // shard that changed nothing is its start registry itself, and records
    // an older one). Versions born no later are settled.
    let start = registries.iter().map(|r| r.base_generation).max().unwrap_or(0);
    let generation = registries.iter().map(|r| r.schema_generation).max().unwrap_or(0);
    let c = contract.clone().unwrap_or_default();
    let parsers = ScalarParsers::none();
    let rules = Rules {
        limits: DepthLimits {
            arrow_max_depth: number(&c, "arrow_max_depth", 32),
            parquet_max_depth: number(&c, "parquet_max_depth", 15),
        },
        scalar_object_key: c.get("scalar_object_key").and_then(Value::as_str).unwrap_or("default_key"),
        parsers: &parsers,
        timestamp_unit: match c.get("timestamp_precision").and_then(Value::as_str) {
            Some("TIMESTAMP_MILLIS") => TimeUnit::Millis,
            Some("TIMESTAMP_NANOS") => TimeUnit::Nanos,
            _ => TimeUnit::Micros,
        },
        policies: None,
        // The merge reads no input: the scans that use its registry apply the limit.
        columns: crate::infer::ColumnLimit::NONE,
    };
    let mut stats = InferStats::default();
    let mut trees = registries.into_iter().map(|mut r| {
        mark(&mut r.root, start);
        r.root
    });
    // The first tree whole (with the settled start); the others folded in.
    let mut root = trees.next().unwrap_or_default();
    root.families.iter_mut().for_each(|f| f.registry_position = None);
    for tree in trees {
        merge_struct(&mut root, &tree, &rules, &mut stats);
    }
    unname(&mut root, generation);
    let bigquery_names = c.get("bigquery_profile").and_then(Value::as_bool).unwrap_or(false);
    finalize(&mut root, &FinalizeOptions { policy, order: ColumnOrder::Alphabetically, bigquery_names })
        .map_err(|e| e.message)?;
    Ok(Registry {
        root,
        schema_generation: generation,
        field_name_policy: policy,
        contract,
        partitions,
        base_generation: start,
    })
}

/// Folds a registry's contract into the merged one: an option both give
/// must have one value (a null gives nothing, as in a scan).
fn merge_contract(
    acc: &mut Option<Map<String, Value>>,
    next: Option<&Map<String, Value>>,
    index: usize,
) -> Result<(), String> {
    let Some(next) = next else { return Ok(()) };
    let Some(acc) = acc.as_mut() else {
        *acc = Some(next.clone());
        return Ok(());
    };
    for (name, value) in next {
        match acc.get(name) {
            Some(ours) if !ours.is_null() && !value.is_null() && ours != value => {
                return Err(format!(
                    "registries[{index}] was built with {name} = {value} but an earlier registry with {name} = {ours}; registries of different contracts cannot be merged"
                ))
            }
            Some(ours) if !ours.is_null() => {}
            _ => {
                acc.insert(name.clone(), value.clone());
            }
        }
    }
    Ok(())
}

fn number(c: &Map<String, Value>, name: &str, default: usize) -> usize {
    c.get(name).and_then(Value::as_u64).map_or(default, |n| n as usize)
}

/// Sets `established` everywhere in the tree: born no later than `start`.
fn mark(s: &mut StructNode, start: u64) {
    s.for_each_family_mut(&mut |f| f.versions.iter_mut().for_each(|v| v.established = v.since <= start));
}

/// Clears the names of what is not settled, so that finalize names it as
/// one run would (a family none of whose versions is settled is new), and
/// gives what the merge itself opened (no generation yet) the generation
/// one run over all the inputs would have: the highest.
fn unname(s: &mut StructNode, generation: u64) {
    s.for_each_family_mut(&mut |f| {
        if f.versions.iter().all(|v| !v.established) {
            f.name.clear();
        }
        for v in f.versions.iter_mut().filter(|v| !v.established) {
            v.output_name.clear();
            if v.since == 0 {
                v.since = generation;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::merge_registries;

    fn doc(contract: &str, fields: &str) -> String {
        format!(
            r#"{{"registry_version":1,"schema_generation":1,"field_name_policy":"lower_alpha","contract":{{{contract}}},"canonical_schema":{{"fields":[{fields}]}}}}"#
        )
    }

    const A: &str = r#"{"name":"a","source_key":"a","version":1,"since_generation":1,"type":{"kind":"int64"}}"#;

    #[test]
    fn errors_name_the_list_index_and_the_option() {
        let one = doc(r#""parse_floats":false"#, A);
        let two = doc(r#""parse_floats":true"#, A);
        let e = merge_registries(&[Some(&one), None, Some(&two)]).unwrap_err();
        assert!(e.contains("registries[3]") && e.contains("parse_floats"), "{e}");
        // A null gives nothing, so it conflicts with nothing.
        let none = doc(r#""rescue_column":null"#, A);
        let some = doc(r#""rescue_column":"_r""#, A);
        let merged = merge_registries(&[Some(&none), Some(&some)]).unwrap();
        assert_eq!(merged.contract.unwrap()["rescue_column"], "_r");
        let e = merge_registries(&[Some(&one), Some("{}")]).unwrap_err();
        assert!(e.starts_with("registries[2]: invalid registry"), "{e}");
        assert!(merge_registries(&[None]).unwrap_err().contains("empty"));
        let snake = one.replace("lower_alpha", "lower_snake");
        let e = merge_registries(&[Some(&one), Some(&snake)]).unwrap_err();
        assert!(e.contains("registries[2]") && e.contains("field_name_policy"), "{e}");
    }
}
