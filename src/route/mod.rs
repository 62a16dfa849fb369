//! Materialization: each source value goes to the one version of its family
//! that [`choose_version`] picks, and is written into that version's column.
//! Every other member of the family gets NULL for the row.

mod column;

pub use column::{columns_for_struct, Column, ColumnData};

use crate::infer::{
    choose_version, classify, Classified, DepthLimits, Growth, Level, ScalarKind, StructNode,
    TypeNode, ValueClass,
};
use crate::value::{write_compact_json, Node, ValueRef};

/// Settings and counters of one materialization pass.
pub struct Router {
    pub limits: DepthLimits,
    pub scalar_object_key: String,
    /// The schema was inferred from this same data (additive mode), so a
    /// single-version family needs no compatibility check: it took every value.
    pub trusted: bool,
    /// Values that no version could take (strict mode): written as NULL.
    pub values_nulled: u64,
    /// Reused per-row slots: which value each family received.
    scratch: Vec<usize>,
}

const NO_VALUE: usize = usize::MAX;

impl Router {
    pub fn new(limits: DepthLimits, scalar_object_key: &str, trusted: bool) -> Self {
        Router {
            limits,
            scalar_object_key: scalar_object_key.to_string(),
            trusted,
            values_nulled: 0,
            scratch: Vec::new(),
        }
    }

    /// Writes one record (an object) as one row of `columns`.
    pub fn write_record(
        &mut self,
        root: &StructNode,
        record: ValueRef<'_>,
        columns: &mut [Column],
    ) {
        self.write_entries(root, record, Level::default(), columns);
    }

    /// Counts the values of a record that the schema cannot take, without
    /// writing anything (strict mode decides on_error with it).
    pub fn count_violations(&self, root: &StructNode, record: ValueRef<'_>) -> u64 {
        self.violations_in(root, record, Level::default())
    }

    fn violations_in(&self, s: &StructNode, object: ValueRef<'_>, level: Level) -> u64 {
        let mut n = 0;
        for (key, v) in object.entries() {
            let c = classify(v, level, self.limits);
            if c.class == ValueClass::Nothing {
                continue;
            }
            match s.family(key) {
                None => n += 1,
                Some(f) => {
                    if choose_version(f, &c, Growth::None, self.limits, &self.scalar_object_key)
                        .is_none()
                    {
                        n += 1;
                    }
                }
            }
        }
        n
    }

    fn write_entries(
        &mut self,
        s: &StructNode,
        object: ValueRef<'_>,
        level: Level,
        columns: &mut [Column],
    ) {
        let base = self.scratch.len();
        self.scratch.resize(base + s.families.len(), NO_VALUE);
        for (key, v) in object.entries() {
            match s.index.get(key) {
                // Duplicate keys: the last one wins, as in most JSON readers.
                Some(&fi) => self.scratch[base + fi] = v.idx,
                None => {
                    if !ValueRef::is_empty_or_null(&v) {
                        self.values_nulled += 1;
                    }
                }
            }
        }
        self.write_slots(s, object, level, columns, base);
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
                    let c = classify(
                        ValueRef {
                            tape: any.tape,
                            idx,
                        },
                        level,
                        self.limits,
                    );
                    if c.class != ValueClass::Nothing {
                        let family = &s.families[fi];
                        chosen = if self.trusted && family.versions.len() == 1 {
                            Some(0)
                        } else {
                            choose_version(
                                family,
                                &c,
                                Growth::None,
                                self.limits,
                                &self.scalar_object_key,
                            )
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
                    self.write_value(ty, &c, col);
                }
                _ => col.push_null(),
            }
        }
    }

    fn write_value(&mut self, ty: &TypeNode, c: &Classified<'_>, col: &mut Column) {
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
                    self.write_entries(s, c.value, c.level.inside_struct(), children);
                } else {
                    // A scalar wrapped under scalar_object_key.
                    let base = self.scratch.len();
                    self.scratch.resize(base + s.families.len(), NO_VALUE);
                    if let Some(&fi) = s.index.get(self.scalar_object_key.as_str()) {
                        self.scratch[base + fi] = c.value.idx;
                    }
                    self.write_slots(s, c.value, c.level, children, base);
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
                        let ec = classify(e, c.level.inside_list(), self.limits);
                        // An empty element keeps its position as a NULL element.
                        self.write_value(elem, &ec, child);
                    }
                } else {
                    // A singleton becomes a one-element list.
                    self.write_value(elem, c, child);
                }
                offsets.push(child.len() as u32);
            }
        }
    }

    fn write_scalar(&mut self, kind: ScalarKind, c: &Classified<'_>, col: &mut Column) {
        let node = c.value.node();
        match (&mut col.data, kind) {
            (ColumnData::Bool(v), ScalarKind::Bool) => {
                if let Node::Bool(b) = node {
                    v.push(b);
                    col.valid.push(true);
                    return;
                }
            }
            (ColumnData::Int(v), ScalarKind::Int) => {
                if let Node::Int(n) = node {
                    v.push(n);
                    col.valid.push(true);
                    return;
                }
            }
            (ColumnData::Float(v), ScalarKind::Float) => {
                let f = match node {
                    Node::Float(f) => Some(f),
                    Node::Int(n) => Some(n as f64),
                    _ => None,
                };
                if let Some(f) = f {
                    v.push(f);
                    col.valid.push(true);
                    return;
                }
            }
            (ColumnData::Str { offsets, bytes }, ScalarKind::Str | ScalarKind::Json) => {
                match (node, c.class) {
                    (Node::Str { start, len }, _) => {
                        bytes.push_str(c.value.tape.text_of(start, len))
                    }
                    (_, ValueClass::Flattened) => write_compact_json(c.value, bytes),
                    _ if kind == ScalarKind::Json => write_compact_json(c.value, bytes),
                    _ => {
                        col.push_null();
                        self.values_nulled += 1;
                        return;
                    }
                }
                offsets.push(bytes.len() as u32);
                col.valid.push(true);
                return;
            }
            _ => {}
        }
        // The chosen version cannot hold this value: a broken invariant, but
        // never a reason to crash the host; count it as nulled.
        col.push_null();
        self.values_nulled += 1;
    }
}
