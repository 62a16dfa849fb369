//! Materialization: each source value goes to the one version of its family
//! that [`choose_version`] picks, and is written into that version's column.
//! Every other member of the family gets NULL for the row.

mod column;

pub use column::{columns_for_struct, Column, ColumnData};

use crate::infer::{
    choose_version, classify, Classified, Growth, Level, Rules, ScalarKind, StructNode, TypeNode, ValueClass,
};
use crate::scalar::Parsed;
use crate::value::{write_compact_json, Node, ValueRef};

/// Counters and scratch space of one materialization pass.
pub struct Router {
    /// The schema was inferred from this same data (additive mode), so a
    /// single-version family needs no compatibility check: it took every value.
    pub trusted: bool,
    /// Values that no version could take (strict mode): written as NULL.
    pub values_nulled: u64,
    /// Keys repeated within one object (the last one wins).
    pub duplicate_keys: u64,
    /// Reused per-row slots: which value each family received.
    scratch: Vec<usize>,
}

const NO_VALUE: usize = usize::MAX;

impl Router {
    pub fn new(trusted: bool) -> Self {
        Router { trusted, values_nulled: 0, duplicate_keys: 0, scratch: Vec::new() }
    }

    /// Writes one record (an object) as one row of `columns`.
    pub fn write_record(&mut self, root: &StructNode, record: ValueRef<'_>, columns: &mut [Column], rules: &Rules<'_>) {
        self.write_entries(root, record, Level::default(), columns, rules);
    }

    /// Counts the values of a record that the schema cannot take, without
    /// writing anything (strict mode decides on_error with it).
    pub fn count_violations(&self, root: &StructNode, record: ValueRef<'_>, rules: &Rules<'_>) -> u64 {
        let mut n = 0;
        for (key, v) in record.entries() {
            let c = classify(v, Level::default(), rules);
            if c.class == ValueClass::Nothing {
                continue;
            }
            let fits = root.family(key).is_some_and(|f| choose_version(f, &c, Growth::None, rules).is_some());
            n += u64::from(!fits);
        }
        n
    }

    fn write_entries(
        &mut self,
        s: &StructNode,
        object: ValueRef<'_>,
        level: Level,
        columns: &mut [Column],
        rules: &Rules<'_>,
    ) {
        let base = self.scratch.len();
        self.scratch.resize(base + s.families.len(), NO_VALUE);
        for (key, v) in object.entries() {
            match s.index.get(key) {
                // Duplicate keys: the last one wins, as in most JSON readers.
                Some(&fi) => {
                    if self.scratch[base + fi] != NO_VALUE {
                        self.duplicate_keys += 1;
                    }
                    self.scratch[base + fi] = v.idx;
                }
                None => {
                    if !v.is_empty_or_null() {
                        self.values_nulled += 1;
                    }
                }
            }
        }
        self.write_slots(s, object, level, columns, base, rules);
        self.scratch.truncate(base);
    }

    /// Writes the row for every output of `s` from the slots at `base`.
    fn write_slots(
        &mut self,
        s: &StructNode,
        any: ValueRef<'_>,
        level: Level,
        columns: &mut [Column],
        base: usize,
        rules: &Rules<'_>,
    ) {
        let mut current_family = usize::MAX;
        let mut chosen: Option<usize> = None;
        let mut classified: Option<Classified<'_>> = None;
        for (col, &(fi, vi)) in columns.iter_mut().zip(&s.outputs) {
            if fi != current_family {
                current_family = fi;
                let idx = self.scratch[base + fi];
                classified = None;
                chosen = None;
                if idx != NO_VALUE {
                    let c = classify(ValueRef { tape: any.tape, idx }, level, rules);
                    if c.class != ValueClass::Nothing {
                        let family = &s.families[fi];
                        chosen = if self.trusted && family.versions.len() == 1 {
                            Some(0)
                        } else {
                            choose_version(family, &c, Growth::None, rules)
                        };
                        if chosen.is_none() {
                            self.values_nulled += 1;
                        }
                        classified = Some(c);
                    }
                }
            }
            match (chosen, classified) {
                (Some(v), Some(c)) if v == vi => {
                    let ty = &s.families[fi].versions[vi].ty;
                    self.write_value(ty, &c, col, rules);
                }
                _ => col.push_null(),
            }
        }
    }

    fn write_value(&mut self, ty: &TypeNode, c: &Classified<'_>, col: &mut Column, rules: &Rules<'_>) {
        if c.class == ValueClass::Nothing {
            col.push_null();
            return;
        }
        match ty {
            TypeNode::Scalar(kind) => self.write_scalar(*kind, c, col),
            TypeNode::Struct(s) => {
                let ColumnData::Struct { children } = &mut col.data else {
                    col.push_null();
                    return;
                };
                col.valid.push(true);
                if c.class == ValueClass::Object {
                    self.write_entries(s, c.value, c.level.inside_struct(), children, rules);
                } else {
                    // A scalar wrapped under scalar_object_key.
                    let base = self.scratch.len();
                    self.scratch.resize(base + s.families.len(), NO_VALUE);
                    if let Some(&fi) = s.index.get(rules.scalar_object_key) {
                        self.scratch[base + fi] = c.value.idx;
                    }
                    self.write_slots(s, c.value, c.level, children, base, rules);
                    self.scratch.truncate(base);
                }
            }
            TypeNode::List(elem) => {
                let ColumnData::List { offsets, child } = &mut col.data else {
                    col.push_null();
                    return;
                };
                col.valid.push(true);
                if c.class == ValueClass::List {
                    for e in c.value.elements() {
                        let ec = classify(e, c.level.inside_list(), rules);
                        // An empty element keeps its position as a NULL element.
                        self.write_value(elem, &ec, child, rules);
                    }
                } else {
                    // A singleton becomes a one-element list.
                    self.write_value(elem, c, child, rules);
                }
                offsets.push(child.len() as u32);
            }
        }
    }

    fn write_scalar(&mut self, kind: ScalarKind, c: &Classified<'_>, col: &mut Column) {
        let node = c.value.node();
        let ok = match (&mut col.data, kind) {
            (ColumnData::Str { offsets, bytes }, ScalarKind::Str | ScalarKind::Json) => {
                let wrote = match node {
                    // A string keeps its text even when a parser also typed it.
                    Node::Str { start, len } => {
                        bytes.push_str(c.value.tape.text_of(start, len));
                        true
                    }
                    // A typed temporal that its timestamp unit cannot hold
                    // (classified as text): its ISO text.
                    Node::Timestamp { .. } | Node::Date(_) | Node::Time(_) => {
                        let start = bytes.len();
                        write_compact_json(c.value, bytes);
                        // Drop the JSON quotes around the ISO text.
                        bytes.remove(start);
                        bytes.pop();
                        true
                    }
                    _ if c.class == ValueClass::Flattened || kind == ScalarKind::Json => {
                        write_compact_json(c.value, bytes);
                        true
                    }
                    _ => false,
                };
                if wrote {
                    offsets.push(bytes.len() as u32);
                }
                wrote
            }
            (ColumnData::Bool(v), ScalarKind::Bool) => push(
                v,
                match (node, c.parsed) {
                    (Node::Bool(b), _) | (_, Parsed::Bool(b)) => Some(b),
                    _ => None,
                },
            ),
            (ColumnData::Int(v), ScalarKind::Int) => push(
                v,
                match (node, c.parsed) {
                    (Node::Int(n), _) | (_, Parsed::Int(n)) => Some(n),
                    _ => None,
                },
            ),
            (ColumnData::Float(v), ScalarKind::Float) => push(
                v,
                match (node, c.parsed) {
                    (Node::Float(f), _) | (_, Parsed::Float(f)) => Some(f),
                    (Node::Int(n), _) | (_, Parsed::Int(n)) => Some(n as f64),
                    _ => None,
                },
            ),
            (ColumnData::Int(v), ScalarKind::Timestamp(unit)) => push(
                v,
                match c.parsed {
                    Parsed::Timestamp(t) => unit.from_instant(t),
                    _ => None,
                },
            ),
            (ColumnData::Int(v), ScalarKind::Time) => push(
                v,
                match c.parsed {
                    // DuckDB's TIME is microseconds of the day (truncated).
                    Parsed::Time(nanos) => Some(nanos / 1000),
                    _ => None,
                },
            ),
            (ColumnData::Date(v), ScalarKind::Date) => push(
                v,
                match c.parsed {
                    Parsed::Date(d) => Some(d),
                    _ => None,
                },
            ),
            _ => false,
        };
        if ok {
            col.valid.push(true);
        } else {
            // The chosen version cannot hold this value: never a reason to
            // crash the host; count it as nulled.
            col.push_null();
            self.values_nulled += 1;
        }
    }
}

fn push<T>(values: &mut Vec<T>, v: Option<T>) -> bool {
    match v {
        Some(v) => {
            values.push(v);
            true
        }
        None => false,
    }
}
