//! The ordered merge of schema trees (docs/registry.md "Merging registries"): folding the tree that
//! another probe inferred into this one, with the same lattice that absorbs
//! values, so that merging the probes of A and B gives the probe of A
//! followed by B.
//!
//! A version of the incoming tree stands for the values that built it. Each
//! is met, in version order (the order the values first came), as one
//! **witness**: a value of exactly that type (`1` for int64, `0.5` for a
//! double, `[w]` for a list of `w`, an object of its families' first
//! versions for a struct). The witness picks the version it would go to
//! ([`choose_version`], growth allowed), and that version absorbs it (a
//! join: int64 meets double as DOUBLE, a scalar meets a list as a list).
//! What a witness cannot carry (a struct's other children and their
//! versions) is then merged field by field; a version no existing one
//! takes is added whole, with the next number.

use super::classify::{classify, Level, Rules, ValueClass};
use super::lattice::{absorb_classified, choose_version, Growth, InferStats};
use super::schema::{Family, ScalarKind, StructNode, TypeNode, Version};
use crate::value::{Node, Tape, ValueRef};

/// Merges `incoming` into `acc` (the fields of a record). `acc` starts as
/// the first tree, whole; the versions of `incoming` marked `established`
/// (settled: from the start both share) are skipped.
pub fn merge_struct(acc: &mut StructNode, incoming: &StructNode, rules: &Rules<'_>, stats: &mut InferStats) {
    merge_fields(acc, incoming, Level::default(), rules, stats);
}

fn merge_fields(acc: &mut StructNode, incoming: &StructNode, level: Level, rules: &Rules<'_>, stats: &mut InferStats) {
    for family in &incoming.families {
        match acc.index.get(&family.source_key) {
            Some(&i) => merge_family(&mut acc.families[i], family, level, rules, stats),
            None => {
                // A field this tree never saw: as the other probe found it
                // (its settled versions were not seen here: see merge_family).
                let mut f = family.clone();
                f.registry_position = None;
                f.versions.retain(|v| !v.established);
                if !f.versions.is_empty() {
                    acc.add_family(f);
                }
            }
        }
    }
}

fn merge_family(acc: &mut Family, incoming: &Family, level: Level, rules: &Rules<'_>, stats: &mut InferStats) {
    let mut versions: Vec<&Version> = incoming.versions.iter().collect();
    versions.sort_by_key(|v| v.number);
    for v in versions {
        // A settled version is no evidence of this run's values: where the
        // accumulated tree has it (the same place) only what grew inside it
        // (a struct's new fields) is merged; elsewhere (a struct merged into
        // another version) it was not seen.
        let grown;
        let v = if v.established {
            // Only what grew inside it is evidence: the paths to the born
            // parts (a new field of a settled struct), as values that had
            // them, going wherever such values go.
            match born_part(&v.ty) {
                Some(ty) => {
                    grown = Version { ty, established: false, ..v.clone() };
                    &grown
                }
                None => continue,
            }
        } else {
            v
        };
        let tape = witness(&v.ty);
        let c = classify(ValueRef { tape: &tape, idx: 0 }, level, rules);
        if c.class == ValueClass::Nothing {
            continue;
        }
        match choose_version(acc, &c, Growth::Allowed, rules) {
            Some(i) => {
                let version = &mut acc.versions[i];
                merge_type(&mut version.ty, version.established, &v.ty, level, rules, stats);
            }
            None => {
                let number = acc.versions.iter().map(|v| v.number).max().unwrap_or(0) + 1;
                acc.versions.push(Version {
                    number,
                    ty: v.ty.clone(),
                    established: false,
                    output_name: String::new(),
                    since: v.since,
                });
            }
        }
    }
}

/// Evolves `acc` (a version's type, which the witness of `incoming` chose)
/// so that it takes every value behind `incoming`.
fn merge_type(
    acc: &mut TypeNode,
    established: bool,
    incoming: &TypeNode,
    level: Level,
    rules: &Rules<'_>,
    stats: &mut InferStats,
) {
    match (&mut *acc, incoming) {
        (TypeNode::Struct(a), TypeNode::Struct(b)) => merge_fields(a, b, level.inside_struct(), rules, stats),
        (TypeNode::List(a), TypeNode::List(b)) => merge_type(a, established, b, level.inside_list(), rules, stats),
        // A singleton goes into a list version as one element.
        (TypeNode::List(a), b) if !matches!(b, TypeNode::Map(_)) => merge_type(a, established, b, level, rules, stats),
        _ => {
            let tape = witness(incoming);
            let c = classify(ValueRef { tape: &tape, idx: 0 }, level, rules);
            absorb_classified(acc, established, &c, rules, stats);
            // A transform may have made the shapes meet (a scalar became a
            // struct or a list): merge what the witness could not carry.
            if matches!(
                (&*acc, incoming),
                (TypeNode::Struct(_), TypeNode::Struct(_)) | (TypeNode::List(_), TypeNode::List(_))
            ) {
                merge_type(acc, established, incoming, level, rules, stats);
            }
        }
    }
}

/// The part of a settled type that was born in a run: the paths to its
/// born versions (each path's versions counted as born: a value had them),
/// or `None` when nothing inside was born.
fn born_part(ty: &TypeNode) -> Option<TypeNode> {
    match ty {
        TypeNode::Struct(s) => {
            let mut part = StructNode::default();
            for f in &s.families {
                let versions: Vec<Version> = f
                    .versions
                    .iter()
                    .filter_map(|v| {
                        let ty = if v.established { born_part(&v.ty)? } else { v.ty.clone() };
                        Some(Version { ty, established: false, ..v.clone() })
                    })
                    .collect();
                if !versions.is_empty() {
                    part.add_family(Family { versions, ..f.clone() });
                }
            }
            (!part.is_empty()).then_some(TypeNode::Struct(part))
        }
        TypeNode::List(e) => born_part(e).map(|e| TypeNode::List(Box::new(e))),
        TypeNode::Scalar(_) | TypeNode::Map(_) => None,
    }
}

/// A value of exactly type `ty`, alone on a new tape (node 0).
fn witness(ty: &TypeNode) -> Tape {
    let mut tape = Tape::default();
    write_witness(ty, &mut tape);
    tape
}

fn write_witness(ty: &TypeNode, tape: &mut Tape) {
    match ty {
        TypeNode::Scalar(k) => {
            let node = match *k {
                ScalarKind::Bool => Node::Bool(true),
                ScalarKind::Int => Node::Int(1),
                ScalarKind::Float => Node::Float(0.5),
                // No parser takes a lone control character: it stays text.
                ScalarKind::Str | ScalarKind::Json => {
                    tape.push_string("\u{1}");
                    return;
                }
                ScalarKind::Timestamp(unit) => Node::Timestamp { value: 0, unit },
                ScalarKind::Date => Node::Date(0),
                ScalarKind::Time => Node::Time(0),
                // Only the kind is read when a declared value is matched.
                ScalarKind::Declared(kind) => Node::Declared { kind, bits: 0 },
            };
            tape.nodes.push(node);
        }
        // Elements that share no type (JSON text): an integer and a string,
        // which only such a list takes.
        TypeNode::List(e) if **e == TypeNode::Scalar(ScalarKind::Json) => {
            let open = tape.open(false);
            tape.nodes.push(Node::Int(1));
            tape.push_string("\u{1}");
            tape.close(open, 2, true);
        }
        TypeNode::List(e) => {
            let open = tape.open(false);
            write_witness(e, tape);
            tape.close(open, 1, true);
        }
        TypeNode::Map(entry) => {
            let open = tape.open_map();
            write_witness(entry, tape);
            tape.close(open, 1, true);
        }
        TypeNode::Struct(s) => {
            let open = tape.open(true);
            let mut len = 0;
            for f in &s.families {
                let Some(first) = f.versions.iter().min_by_key(|v| v.number) else { continue };
                tape.push_key(&f.source_key);
                write_witness(&first.ty, tape);
                len += 1;
            }
            tape.close(open, len, len > 0);
        }
    }
}
