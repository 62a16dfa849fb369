//! After inference: names for new families and versions, column order, the
//! reserved-name check and the drift events relative to the starting registry.

use std::collections::{HashMap, HashSet};

use super::naming::{bigquery_safe, collision_name, empty_name, sanitize, RESERVED_COLUMNS};
use crate::error::{Result, SanitizeError};
use crate::infer::{schema_string, StructNode, TypeNode};
use crate::options::{ColumnOrder, FieldNamePolicy};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriftEvent {
    /// Path of the family in output names: `payload.source_file`,
    /// `items_v2_struct_array[].sku`.
    pub source_path: String,
    pub source_key: String,
    pub output_name: String,
    /// `field_added` or `new_version_generated` (docs/registry.md).
    pub drift_type: &'static str,
    pub previous_schema: Option<String>,
    pub new_schema: String,
}

pub struct FinalizeOptions {
    pub policy: FieldNamePolicy,
    pub order: ColumnOrder,
    /// `bigquery_profile`: new names are also BigQuery-safe
    /// (naming::bigquery_safe).
    pub bigquery_names: bool,
}

/// Names everything born in this scan, orders the output columns and
/// returns the drift events. Established names are never changed.
pub fn finalize(root: &mut StructNode, opts: &FinalizeOptions) -> Result<Vec<DriftEvent>> {
    check_reserved(root, opts.policy)?;
    let mut events = Vec::new();
    finalize_struct(root, opts, "", true, &mut events);
    Ok(events)
}

fn check_reserved(root: &StructNode, policy: FieldNamePolicy) -> Result<()> {
    for f in &root.families {
        // Case-insensitive, as DuckDB's column names are (`Source_File`
        // under field_name_policy 'preserve' is the reserved column).
        let clean = sanitize(&f.source_key, policy).to_lowercase();
        let key = f.source_key.to_lowercase();
        if let Some(r) = RESERVED_COLUMNS.iter().find(|r| **r == key || **r == clean) {
            return Err(SanitizeError::input(format!(
                "the source has a top-level field \"{}\" that is (or sanitizes to) the reserved column name \"{r}\"; the reserved names are {}. Rename the field upstream or nest it",
                f.source_key,
                RESERVED_COLUMNS.join(", ")
            )));
        }
    }
    Ok(())
}

/// The path prefix of the children of a version.
pub fn version_path(prefix: &str, output_name: &str) -> String {
    if prefix.is_empty() {
        output_name.to_string()
    } else {
        format!("{prefix}.{output_name}")
    }
}

fn finalize_struct(
    s: &mut StructNode,
    opts: &FinalizeOptions,
    prefix: &str,
    parent_established: bool,
    events: &mut Vec<DriftEvent>,
) {
    assign_family_names(s, opts.policy, opts.bigquery_names);
    assign_version_names(s);
    order_outputs(s, opts.order);

    // Events in column order, so they read like the table.
    let mut family_order: Vec<usize> = Vec::new();
    for &(fi, _) in &s.outputs {
        if family_order.last() != Some(&fi) {
            family_order.push(fi);
        }
    }
    for fi in family_order {
        let f = &mut s.families[fi];
        let family_is_new = f.versions.iter().all(|v| !v.established);
        let path = version_path(prefix, &f.name);
        // Children first: a struct's schema text needs its children's names.
        let mut child_events = Vec::new();
        for v in &mut f.versions {
            let child_prefix = version_path(prefix, &v.output_name);
            finalize_type(&mut v.ty, opts, &child_prefix, v.established, &mut child_events);
        }
        let mut schemas: Vec<(u32, String)> = f.versions.iter().map(|v| (v.number, schema_string(&v.ty))).collect();
        schemas.sort();
        let mut versions: Vec<&crate::infer::Version> = f.versions.iter().collect();
        versions.sort_by_key(|v| v.number);
        for v in versions.into_iter().filter(|v| !v.established) {
            let new_schema = schema_string(&v.ty);
            let event = |drift_type, previous_schema| DriftEvent {
                source_path: path.clone(),
                source_key: f.source_key.clone(),
                output_name: v.output_name.clone(),
                drift_type,
                previous_schema,
                new_schema: new_schema.clone(),
            };
            if v.number >= 2 {
                let previous = schemas.iter().rev().find(|(n, _)| *n < v.number).map(|(_, s)| s.clone());
                events.push(event("new_version_generated", previous));
            } else if family_is_new && parent_established {
                events.push(event("field_added", None));
            }
        }
        events.extend(child_events);
    }
}

fn finalize_type(
    t: &mut TypeNode,
    opts: &FinalizeOptions,
    prefix: &str,
    established: bool,
    events: &mut Vec<DriftEvent>,
) {
    match t {
        TypeNode::Struct(s) => finalize_struct(s, opts, prefix, established, events),
        TypeNode::List(e) | TypeNode::Map(e) => finalize_type(e, opts, &format!("{prefix}[]"), established, events),
        TypeNode::Scalar(_) => {}
    }
}

/// New families get their sanitized key; when several keys sanitize to one
/// name (or an established family holds it), the key spelled exactly like
/// the name wins, else the smallest key, and the others get a suffix hashed
/// from their own key. The result depends only on the set of keys, never on
/// the order the source presented them.
fn assign_family_names(s: &mut StructNode, policy: FieldNamePolicy, bigquery: bool) {
    // DuckDB identifiers are case-insensitive, so names collide by lower case.
    let mut taken: HashSet<String> =
        s.families.iter().filter(|f| !f.name.is_empty()).map(|f| f.name.to_lowercase()).collect();
    let mut groups: HashMap<String, Vec<(usize, String)>> = HashMap::new();
    for (i, f) in s.families.iter().enumerate() {
        if f.name.is_empty() {
            let clean = sanitize(&f.source_key, policy);
            let clean = if clean.is_empty() { empty_name(&f.source_key) } else { clean };
            let clean = if bigquery { bigquery_safe(&clean, &f.source_key) } else { clean };
            groups.entry(clean.to_lowercase()).or_default().push((i, clean));
        }
    }
    let mut group_keys: Vec<String> = groups.keys().cloned().collect();
    group_keys.sort();
    for lower in group_keys {
        let mut members = groups.remove(&lower).unwrap_or_default();
        members.sort_by(|(a, ca), (b, cb)| {
            let (ka, kb) = (&s.families[*a].source_key, &s.families[*b].source_key);
            (ka != ca, ka).cmp(&(kb != cb, kb))
        });
        for (rank, (i, clean)) in members.into_iter().enumerate() {
            let key = s.families[i].source_key.clone();
            let mut name =
                if rank == 0 && !taken.contains(&lower) { clean.clone() } else { collision_name(&clean, &key) };
            // A second-order clash (a key literally spelled like a suffixed name).
            let mut salt = 1u32;
            while taken.contains(&name.to_lowercase()) {
                name = collision_name(&clean, &format!("{key}#{salt}"));
                salt += 1;
            }
            taken.insert(name.to_lowercase());
            s.families[i].name = name;
        }
    }
}

/// Version 1 is the family's name; version N is `<name>_vN_<semantic>`.
fn assign_version_names(s: &mut StructNode) {
    let mut taken: HashSet<String> = HashSet::new();
    for f in &s.families {
        taken.insert(f.name.to_lowercase());
        for v in &f.versions {
            if v.established {
                taken.insert(v.output_name.to_lowercase());
            }
        }
    }
    for f in &mut s.families {
        for v in &mut f.versions {
            if v.established {
                continue;
            }
            if v.number == 1 {
                v.output_name = f.name.clone();
                continue;
            }
            let mut name = format!("{}_v{}_{}", f.name, v.number, v.ty.semantic());
            let mut salt = 0u32;
            while taken.contains(&name.to_lowercase()) {
                name = collision_name(
                    &format!("{}_v{}_{}", f.name, v.number, v.ty.semantic()),
                    &format!("{}#{salt}", f.source_key),
                );
                salt += 1;
            }
            taken.insert(name.to_lowercase());
            v.output_name = name;
        }
    }
}

/// Families in column order, each followed by its versions in version order.
fn order_outputs(s: &mut StructNode, order: ColumnOrder) {
    let mut fams: Vec<usize> = (0..s.families.len()).filter(|&i| !s.families[i].versions.is_empty()).collect();
    match order {
        // Case-insensitive, as DuckDB compares identifiers; byte order breaks ties.
        ColumnOrder::Alphabetically => {
            fams.sort_by_cached_key(|&i| (s.families[i].name.to_lowercase(), s.families[i].name.clone()))
        }
        ColumnOrder::SchemaContractFirst => fams.sort_by_cached_key(|&i| {
            let f = &s.families[i];
            (f.registry_position.is_none(), f.registry_position, f.name.to_lowercase(), f.name.clone())
        }),
        // Families are kept in the order they were first seen: the
        // registry's fields in registry order, then new ones as the files
        // present them (a CSV header's order).
        ColumnOrder::Source => {
            fams.sort_by_key(|&i| (s.families[i].registry_position.is_none(), s.families[i].registry_position, i))
        }
    }
    s.outputs.clear();
    for fi in fams {
        let mut vs: Vec<usize> = (0..s.families[fi].versions.len()).collect();
        vs.sort_by_key(|&vi| s.families[fi].versions[vi].number);
        s.outputs.extend(vs.into_iter().map(|vi| (fi, vi)));
    }
}
