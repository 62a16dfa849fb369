//! Materialization: each source value goes to the one version of its family
//! that [`choose_version`] picks, and is written into that version's column.
//! Every other member of the family gets NULL for the row.

mod choice_memo;
mod column;
mod columnar;
mod direct;
mod key_order;
mod pin;
mod rescue;

pub use column::{columns_for_struct, Column, ColumnData};
#[cfg(test)]
pub use direct::DIRECT_OFF;
#[cfg(test)]
pub use direct::DIRECT_WRITES;
pub use rescue::{RescueKind, Rescued, Rescuer};

use crate::infer::{
    choose_version, classify, classify_told, has_duplicate_keys, schema_string, string_keyed_value, type_takes,
    Classified, Growth, Level, Rules, ScalarKind, ShapeSet, StructNode, TypeNode, ValueClass,
};
use crate::scalar::Parsed;
use crate::value::ValueRef;
use pin::{pinned_value, PinnedValue};

/// Counters and scratch space of one materialization pass.
pub struct Router {
    /// The schema was inferred from this same data (additive mode), so a
    /// single-version family skips the version choice: it took every value.
    /// Writing still checks each value against the type (`encode_declared`
    /// refuses an integer out of range), so a wrong trust costs a counted
    /// NULL (`values_nulled`), never a wrong number.
    pub trusted: bool,
    /// Values that no version could take (strict mode): written as NULL.
    pub values_nulled: u64,
    /// Keys repeated within one object (the last one wins).
    pub duplicate_keys: u64,
    /// Values written as JSON text because they lie past a depth limit.
    pub values_flattened: u64,
    /// Reused per-row slots: which value each family received.
    scratch: Vec<usize>,
    /// The record's columns a query uses (projection pushdown); `None`: all.
    wanted: Option<Vec<bool>>,
    /// The next `write_slots` call is the record's own level.
    top_level: bool,
    /// `rescue_column`: values no column took are kept here, not lost.
    pub rescue: Option<Rescuer>,
    /// `bigquery_profile`: a list element no type takes is dropped, not
    /// written as NULL (BigQuery has no NULL array elements).
    drop_null_elements: bool,
    /// Elements so dropped.
    pub list_nulls_dropped: u64,
    /// Finds which values a record lost ([`Router::nulled_values`]); made
    /// the first time a record loses one.
    finder: Option<Box<(Router, Vec<Column>)>>,
    /// Strict mode: the shapes of records this router wrote without a
    /// misfit (infer/shapes.rs). A value's kind decides whether it fits
    /// (no string parser, no typed value), so a record of such a shape
    /// needs no check and is written as `trusted` (scan/scanner.rs).
    pub checked_shapes: Option<ShapeSet>,
    /// Where the keys of flat records go ([`Router::write_flat_record`]),
    /// for the last key list seen; dropped by [`Router::project`].
    flat: Option<Box<FlatLayout>>,
    /// The families of the last objects' keys by position (route/key_order.rs).
    key_orders: key_order::KeyOrders,
    /// Where the arrow columns of the last columnar batch go
    /// ([`Router::write_columns`]); dropped by [`Router::project`].
    columnar: Option<Box<columnar::ColumnarLayout>>,
    /// How records are written straight from their text
    /// ([`Router::write_text_record`]), made for the root struct seen last.
    direct: Option<Box<direct::DirectLayout>>,
    /// The one scalar a direct write has read, as the parser puts it.
    text_scratch: crate::value::Tape,
}

/// Where each key of a flat record layout (a CSV file's columns) goes in
/// the record struct's columns: made once per layout, so a value is placed
/// by its position, without a key lookup or a slot table per record.
struct FlatLayout {
    /// The keys, in record order, this layout was made for.
    keys: std::sync::Arc<[String]>,
    /// The address of the struct it was made for (only compared: a router
    /// serves one plan).
    root: usize,
    /// `None` when two keys name one family (the last would win), which
    /// the general path handles.
    places: Option<FlatPlaces>,
}

struct FlatPlaces {
    /// Per key: where its value goes.
    slots: Vec<Place>,
    /// (column, version) of the wanted outputs, grouped by family.
    columns: Vec<(usize, usize)>,
    /// Wanted columns of families no key names: NULL in every row.
    absent: Vec<usize>,
    /// What a cell's bytes tell of its parse, for the kind a
    /// [`Place::Versions`] memo is keyed by.
    quick: crate::scalar::QuickParse,
}

/// Where one key of a flat layout puts its value.
#[derive(Clone, Debug, PartialEq)]
enum Place {
    /// A key the struct does not have: a value there is nulled.
    Unknown,
    /// Family `family`, whose wanted outputs are `columns[range]` (empty:
    /// none is wanted, the value is not looked at).
    Family(usize, std::ops::Range<usize>),
    /// A family of one wanted version of a scalar kind, no pin: a string
    /// is parsed for that kind alone and written straight into `column`
    /// (the trusted one-version case [`Router::choose`] would take); any
    /// other outcome goes the way of `Family`.
    Direct { family: usize, column: usize, kind: ScalarKind, range: std::ops::Range<usize> },
    /// A family of two or more scalar versions, no pin: the version a
    /// value goes to is remembered per kind of value (route/choice_memo.rs),
    /// and the value is written into that version's column, NULL into the
    /// others, as [`Router::choose`] and [`Router::write_output`] would.
    Versions { family: usize, range: std::ops::Range<usize>, memo: choice_memo::ChoiceMemo },
}

const NO_VALUE: usize = usize::MAX;

impl Router {
    pub fn new(trusted: bool) -> Self {
        Router {
            trusted,
            values_nulled: 0,
            duplicate_keys: 0,
            values_flattened: 0,
            scratch: Vec::new(),
            wanted: None,
            top_level: false,
            rescue: None,
            drop_null_elements: false,
            list_nulls_dropped: 0,
            finder: None,
            checked_shapes: None,
            flat: None,
            key_orders: key_order::KeyOrders::default(),
            columnar: None,
            direct: None,
            text_scratch: crate::value::Tape::default(),
        }
    }

    /// The values `record` loses when written (nulled: out of range, not
    /// fitting a pin or a frozen path, or strict mode's misfits), with their
    /// paths, for `sanitize_rejects()` when no rescue column keeps them. A
    /// second, rescuing pass into scratch columns: run only for a record
    /// whose writing nulled something, so a clean scan pays nothing.
    pub fn nulled_values(&mut self, root: &StructNode, record: ValueRef<'_>, rules: &Rules<'_>) -> Vec<Rescued> {
        let (trusted, drop) = (self.trusted, self.drop_null_elements);
        let finder = self.finder.get_or_insert_with(|| {
            Box::new((Router::new(trusted).rescuing(true).dropping_null_elements(drop), columns_for_struct(root)))
        });
        let (router, columns) = &mut **finder;
        router.write_record(root, record, columns, rules);
        columns.iter_mut().for_each(Column::clear);
        let Some(rescuer) = router.rescue.as_mut() else { return Vec::new() };
        rescuer.take_object();
        std::mem::take(&mut rescuer.values)
    }

    /// Drops the list elements that would be written as NULL
    /// (`bigquery_profile`).
    pub fn dropping_null_elements(mut self, on: bool) -> Self {
        self.drop_null_elements = on;
        self
    }

    /// Keeps the values no column takes (`rescue_column`) instead of
    /// nulling them.
    pub fn rescuing(mut self, on: bool) -> Self {
        self.rescue = on.then(Rescuer::default);
        self
    }

    /// Writes only the top-level columns marked `true` (projection
    /// pushdown); the others are left untouched.
    pub fn project(&mut self, wanted: Vec<bool>) {
        self.wanted = (!wanted.iter().all(|w| *w)).then_some(wanted);
        self.flat = None;
        self.columnar = None;
    }

    /// Whether columns of this schema can be written whole
    /// ([`Router::write_columns`]) into `root`'s outputs: each one's type
    /// is the one version of its family (route/columnar.rs).
    pub fn takes_columns(
        &mut self,
        root: &StructNode,
        schema: &arrow::datatypes::SchemaRef,
        keys: &std::sync::Arc<[String]>,
        rules: &Rules<'_>,
    ) -> bool {
        self.columnar_layout(root, schema, keys, rules);
        self.columnar.is_some()
    }

    /// Which columns of the schema [`Router::takes_columns`] last accepted
    /// the writing needs read (see `ColumnarLayout::columns_to_read`).
    pub fn columns_to_read(&self) -> Vec<bool> {
        self.columnar.as_ref().map(|l| l.columns_to_read()).unwrap_or_default()
    }

    /// Writes a batch's arrow columns whole, a column at a time, as
    /// [`Router::write_record`] would write its rows one by one; `false`,
    /// with nothing written, when the rows must take that path instead.
    /// Only for a router that nulls, rescues and drops nothing by itself
    /// (the scan checks its options: scan/scanner.rs).
    pub fn write_columns(
        &mut self,
        root: &StructNode,
        rows: &crate::formats::ColumnRows,
        columns: &mut [Column],
        rules: &Rules<'_>,
    ) -> bool {
        self.columnar_layout(root, rows.rows.schema_ref(), &rows.keys, rules);
        self.columnar.as_ref().is_some_and(|layout| layout.write(&rows.rows, columns, rules))
    }

    /// Makes `self.columnar` the layout for these columns, if there is one.
    fn columnar_layout(
        &mut self,
        root: &StructNode,
        schema: &arrow::datatypes::SchemaRef,
        keys: &std::sync::Arc<[String]>,
        rules: &Rules<'_>,
    ) {
        if self.columnar.as_ref().is_some_and(|l| l.serves(root, schema, keys)) {
            return;
        }
        self.columnar = columnar::ColumnarLayout::new(root, schema, keys, self.wanted.as_deref(), rules).map(Box::new);
    }

    /// Writes one record whose entries are exactly `keys` in order, each a
    /// scalar (`Batch::flat_keys`: a CSV record), as [`Router::write_record`]
    /// writes it, placing each value by its position. Additive scans
    /// without a rescue column only (their values need no path for a
    /// reject); anything else, and a layout where two keys name one
    /// family, takes the general path.
    pub fn write_flat_record(
        &mut self,
        root: &StructNode,
        keys: &std::sync::Arc<[String]>,
        record: ValueRef<'_>,
        columns: &mut [Column],
        rules: &Rules<'_>,
    ) {
        let address = root as *const StructNode as usize;
        let layout = match self.flat.take() {
            Some(f) if f.root == address && std::sync::Arc::ptr_eq(&f.keys, keys) => f,
            Some(mut f) if f.root == address && f.keys == *keys => {
                // The same names from another reader: its list is compared
                // by address from now on, not name by name per record.
                f.keys = std::sync::Arc::clone(keys);
                f
            }
            _ => Box::new(self.flat_layout(root, keys, rules)),
        };
        // The promise of `flat_keys`, checked: value i sits at
        // `idx + 2 + 2i` (ValueRef::flat_width).
        let width = record.flat_width().unwrap_or(usize::MAX);
        let places = layout.places.as_ref().filter(|p| p.slots.len() == width);
        match places {
            Some(places) if self.trusted && self.rescue.is_none() => {
                self.write_placed(root, places, record, columns, rules)
            }
            _ => self.write_record(root, record, columns, rules),
        }
        self.flat = Some(layout);
    }

    fn write_placed(
        &mut self,
        root: &StructNode,
        places: &FlatPlaces,
        record: ValueRef<'_>,
        columns: &mut [Column],
        rules: &Rules<'_>,
    ) {
        let level = Level::default();
        for (i, slot) in places.slots.iter().enumerate() {
            // (write_flat_record checked the layout: ValueRef::flat_width.)
            let value = ValueRef { tape: record.tape, idx: record.idx + 2 + 2 * i };
            let key = match record.tape.nodes[value.idx - 1] {
                crate::value::Node::Key { start, len } if cfg!(debug_assertions) => record.tape.text_of(start, len),
                _ => "",
            };
            let (fi, range) = match slot {
                Place::Direct { family, column, kind, range } => {
                    debug_assert_eq!(key, root.families[*family].source_key);
                    if write_direct(*kind, value, &mut columns[*column], rules) {
                        continue;
                    }
                    (*family, range)
                }
                Place::Family(fi, range) => {
                    debug_assert_eq!(key, root.families[*fi].source_key);
                    (*fi, range)
                }
                Place::Versions { family, range, memo } => {
                    debug_assert_eq!(key, root.families[*family].source_key);
                    if self.write_remembered(
                        &root.families[*family],
                        memo,
                        classify_told(&places.quick, value, rules),
                        &places.columns[range.clone()],
                        columns,
                        rules,
                    ) {
                        continue;
                    }
                    (*family, range)
                }
                Place::Unknown => {
                    debug_assert!(!root.index.contains_key(key));
                    if !value.is_empty_or_null() {
                        self.values_nulled += 1;
                    }
                    continue;
                }
            };
            if range.is_empty() {
                continue;
            }
            let family = &root.families[fi];
            let (chosen, classified) = self.choose(family, Some(value), level, rules);
            for &(col, vi) in &places.columns[range.clone()] {
                self.write_output(family, vi, chosen, classified.as_ref(), &mut columns[col], rules);
            }
        }
        for &col in &places.absent {
            columns[col].push_null();
        }
    }

    /// Writes a value of a family of scalar versions ([`Place::Versions`]),
    /// classified, into `outputs`, the family's wanted (column, version) pairs, when the
    /// memo knows the version its kind goes to; `false`, with nothing
    /// written, when it does not (the general path then decides, and the
    /// choice it makes is remembered here next time).
    #[inline]
    fn write_remembered(
        &mut self,
        family: &crate::infer::Family,
        memo: &choice_memo::ChoiceMemo,
        c: Classified<'_>,
        outputs: &[(usize, usize)],
        columns: &mut [Column],
        rules: &Rules<'_>,
    ) -> bool {
        if c.class == ValueClass::Nothing {
            outputs.iter().for_each(|&(col, _)| columns[col].push_null());
            return true;
        }
        let chosen = match memo.get(&c) {
            Some(chosen) => chosen,
            None => {
                // What `choose` decides for a trusted family of several
                // versions (no partial version: that is for containers).
                memo.put(&c, choose_version(family, &c, Growth::None, rules));
                return false;
            }
        };
        if chosen.is_none() {
            self.values_nulled += 1;
        }
        for &(col, vi) in outputs {
            match (&family.versions[vi].ty, chosen == Some(vi)) {
                (TypeNode::Scalar(kind), true) => self.write_scalar(*kind, &c, &mut columns[col]),
                _ => columns[col].push_null(),
            }
        }
        true
    }

    fn flat_layout(&self, root: &StructNode, keys: &std::sync::Arc<[String]>, rules: &Rules<'_>) -> FlatLayout {
        let wanted = |i: usize| self.wanted.as_ref().is_none_or(|w| w.get(i).copied().unwrap_or(true));
        let mut named = vec![false; root.families.len()];
        let mut places = FlatPlaces {
            slots: Vec::with_capacity(keys.len()),
            columns: Vec::new(),
            absent: Vec::new(),
            quick: crate::scalar::QuickParse::of(rules.parsers),
        };
        let mut usable = true;
        for key in keys.iter() {
            let Some(&fi) = root.index.get(key.as_str()) else {
                places.slots.push(Place::Unknown);
                continue;
            };
            usable &= !std::mem::replace(&mut named[fi], true);
            let start = places.columns.len();
            for (i, &(f, vi)) in root.outputs.iter().enumerate() {
                if f == fi && wanted(i) {
                    places.columns.push((i, vi));
                }
            }
            let range = start..places.columns.len();
            let family = &root.families[fi];
            let direct = match (family.versions.as_slice(), &places.columns[range.clone()]) {
                ([version], &[(column, 0)]) if family.pin.is_none() => match version.ty {
                    TypeNode::Scalar(
                        kind @ (ScalarKind::Str
                        | ScalarKind::Json
                        | ScalarKind::Int
                        | ScalarKind::Float
                        | ScalarKind::Timestamp(_)),
                    ) => Some((column, kind)),
                    _ => None,
                },
                _ => None,
            };
            let versions = family.pin.is_none()
                && (2..=choice_memo::MAX_VERSIONS).contains(&family.versions.len())
                && family.versions.iter().all(|v| matches!(v.ty, TypeNode::Scalar(_)));
            places.slots.push(match direct {
                Some((column, kind)) => Place::Direct { family: fi, column, kind, range },
                None if versions && !range.is_empty() => {
                    Place::Versions { family: fi, range, memo: choice_memo::ChoiceMemo::default() }
                }
                None => Place::Family(fi, range),
            });
        }
        for (i, &(fi, _)) in root.outputs.iter().enumerate() {
            if !named[fi] && wanted(i) {
                places.absent.push(i);
            }
        }
        FlatLayout {
            keys: std::sync::Arc::clone(keys),
            root: root as *const StructNode as usize,
            places: usable.then_some(places),
        }
    }

    /// Writes one record (an object) as one row of `columns`.
    pub fn write_record(&mut self, root: &StructNode, record: ValueRef<'_>, columns: &mut [Column], rules: &Rules<'_>) {
        self.top_level = true;
        self.write_entries(root, record, Level::default(), columns, rules);
    }

    /// The first value of a record, in input order, that the schema cannot
    /// take (strict mode decides on_error with it); nothing is written.
    /// Objects and lists are searched inside, as [`Router::write_record`]
    /// nulls only the values that do not fit, at the lowest level.
    pub fn first_violation(&self, root: &StructNode, record: ValueRef<'_>, rules: &Rules<'_>) -> Option<Violation> {
        let c = classify(record, Level::default(), rules);
        struct_violation(root, &c, "", rules)
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
        let order = self.key_orders.of(s);
        // A counted position, not `enumerate()`: its `next` was left a call
        // per entry (callgrind).
        let mut position = 0;
        #[allow(clippy::explicit_counter_loop)]
        for (key, v) in object.entries() {
            let found = key_order::family_of(s, order, position, key);
            position += 1;
            match found {
                // Duplicate keys: the last one wins, as in most JSON readers.
                Some(fi) => {
                    if self.scratch[base + fi] != NO_VALUE {
                        self.duplicate_keys += 1;
                    }
                    self.scratch[base + fi] = v.idx;
                }
                None => {
                    if !v.is_empty_or_null() {
                        self.values_nulled += 1;
                        if let Some(r) = self.rescue.as_mut() {
                            r.keep(Some(key), v, RescueKind::UnknownField);
                        }
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
        // The projection applies to the record's own columns only.
        let top = std::mem::take(&mut self.top_level);
        let wanted = if top { self.wanted.take() } else { None };
        for (i, (col, &(fi, vi))) in columns.iter_mut().zip(&s.outputs).enumerate() {
            if wanted.as_ref().is_some_and(|w| !w.get(i).copied().unwrap_or(true)) {
                continue;
            }
            if fi != current_family {
                current_family = fi;
                let idx = self.scratch[base + fi];
                let value = (idx != NO_VALUE).then_some(ValueRef { tape: any.tape, idx });
                if let (Some(value), Some(kind)) = (value, self.plain_scalar(&s.families[fi])) {
                    if write_plain(kind, value, col, rules) {
                        // The family's one output is written.
                        current_family = usize::MAX;
                        continue;
                    }
                }
                (chosen, classified) = self.choose(&s.families[fi], value, level, rules);
            }
            self.write_output(&s.families[fi], vi, chosen, classified.as_ref(), col, rules);
        }
        if top {
            self.wanted = wanted;
        }
    }

    /// The kind of `family`'s one scalar version, when a value of it may be
    /// written without the version choice ([`write_plain`]): the schema
    /// took every value (trusted), no pin converts it, and nothing is
    /// rescued.
    #[inline]
    fn plain_scalar(&self, family: &crate::infer::Family) -> Option<ScalarKind> {
        if !self.trusted || family.pin.is_some() || !self.plain_writes() {
            return None;
        }
        match family.versions.as_slice() {
            [v] => match v.ty {
                TypeNode::Scalar(kind) => Some(kind),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether a value may take [`write_plain`] at all: nothing is rescued
    /// (a rescued value must pass the general path's bookkeeping), and
    /// the tests' switch is off.
    #[inline]
    fn plain_writes(&self) -> bool {
        self.rescue.is_none() && !PLAIN_OFF.is_on()
    }

    /// The version of `family` that takes `value` (`None`: no value), with
    /// the value's class; `(None, _)` writes NULL in every version. A value
    /// no version takes is counted as nulled (and rescued) here, once per
    /// family.
    fn choose<'t>(
        &mut self,
        family: &crate::infer::Family,
        value: Option<ValueRef<'t>>,
        level: Level,
        rules: &Rules<'_>,
    ) -> (Option<usize>, Option<Classified<'t>>) {
        let Some(value) = value else { return (None, None) };
        if self.trusted && family.pin.is_none() && text_keeps(family, value) {
            // The one text version took every value, and a string keeps its
            // text whatever a parser makes of it (Column::push_scalar): its
            // class is not needed, so its text is not parsed (CSV under
            // parsers).
            return (Some(0), Some(Classified { value, class: ValueClass::Str, level, parsed: Parsed::None }));
        }
        let c = classify(value, level, rules);
        if c.class == ValueClass::Nothing {
            return (None, None);
        }
        let chosen = if let Some(kind) = family.pin {
            // A pinned field has its one version; the value is converted
            // when written.
            family.versions.iter().position(|v| v.ty == TypeNode::Scalar(kind))
        } else if self.trusted && family.versions.len() == 1 {
            Some(0)
        } else {
            choose_version(family, &c, Growth::None, rules).or_else(|| partial_version(family, &c))
        };
        if chosen.is_none() {
            self.values_nulled += 1;
            if let Some(r) = self.rescue.as_mut() {
                r.keep(Some(&family.source_key), c.value, RescueKind::TypeMismatch);
            }
        }
        (chosen, Some(c))
    }

    /// Version `vi`'s column of `family` for this row: the value when
    /// [`Router::choose`] picked `vi`, else NULL.
    fn write_output(
        &mut self,
        family: &crate::infer::Family,
        vi: usize,
        chosen: Option<usize>,
        classified: Option<&Classified<'_>>,
        col: &mut Column,
        rules: &Rules<'_>,
    ) {
        // By reference: the value is not copied out for each output column.
        match (chosen, classified) {
            (Some(v), Some(c)) if v == vi => {
                if let Some(r) = self.rescue.as_mut() {
                    r.enter(&family.source_key);
                }
                match family.pin {
                    Some(kind) => self.write_pinned(kind, c, col, rules),
                    None => self.write_value(&family.versions[vi].ty, c, col, rules),
                }
                if let Some(r) = self.rescue.as_mut() {
                    r.leave();
                }
            }
            _ => col.push_null(),
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
                if c.class != ValueClass::Object && !s.index.contains_key(rules.scalar_object_key) {
                    // A scalar (or list) where the struct has no wrapping
                    // key to hold it: no column takes it.
                    col.push_null();
                    self.values_nulled += 1;
                    if let Some(r) = self.rescue.as_mut() {
                        r.keep(None, c.value, RescueKind::TypeMismatch);
                    }
                    return;
                }
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
            TypeNode::Map(entry) if c.class == ValueClass::Object => self.write_object_as_map(entry, c, col, rules),
            TypeNode::Map(entry) if c.class != ValueClass::Map => self.write_wrapped_into_map(entry, c, col, rules),
            TypeNode::List(elem) | TypeNode::Map(elem) => {
                let ColumnData::List { offsets, child } = &mut col.data else {
                    col.push_null();
                    return;
                };
                col.valid.push(true);
                // Only a value of the node's own kind is a sequence of
                // elements; anything else (a map into a list of maps) is a singleton.
                // A list shallower than a list of lists is one element too,
                // wrapped whole, as the probe placed it (infer::wraps_whole).
                let own_kind = match (ty, c.class) {
                    (TypeNode::List(elem), ValueClass::List) => !crate::infer::wraps_whole(elem, c, rules),
                    (TypeNode::Map(_), ValueClass::Map) => true,
                    _ => false,
                };
                if own_kind {
                    if let Some(r) = self.rescue.as_mut() {
                        r.enter("[]");
                    }
                    // Elements of one scalar type go straight into the
                    // element column as `write_scalar` would write them
                    // (`write_plain`): there is no version to choose inside
                    // a list, only the kind to check.
                    let plain = match elem.as_ref() {
                        TypeNode::Scalar(kind) if self.plain_writes() && !self.drop_null_elements => Some(*kind),
                        _ => None,
                    };
                    for e in c.value.elements() {
                        if plain.is_some_and(|kind| write_plain(kind, e, child, rules)) {
                            continue;
                        }
                        let ec = classify(e, c.level.inside_list(), rules);
                        // An empty element keeps its position as a NULL element.
                        self.write_value(elem, &ec, child, rules);
                        if self.drop_null_elements && child.valid.last() == Some(&false) {
                            child.pop_last();
                            self.list_nulls_dropped += 1;
                        }
                    }
                    if let Some(r) = self.rescue.as_mut() {
                        r.leave();
                    }
                } else {
                    // A singleton becomes a one-element list.
                    self.write_value(elem, c, child, rules);
                }
                offsets.push(child.len() as u32);
            }
        }
    }

    /// An object keyed by data into a `MAP(VARCHAR, T)` column: one entry
    /// per key, in the object's order; with a repeated key the last one
    /// wins, as for struct fields.
    fn write_object_as_map(&mut self, entry: &TypeNode, c: &Classified<'_>, col: &mut Column, rules: &Rules<'_>) {
        let (Some(value_ty), TypeNode::Struct(e), ColumnData::List { offsets, child }) =
            (string_keyed_value(entry), entry, &mut col.data)
        else {
            col.push_null();
            return;
        };
        let (Some(&kf), Some(&vf)) = (e.index.get("key"), e.index.get("value")) else {
            col.push_null();
            return;
        };
        // The entry struct's children in output order: where key and value are.
        let key_col = e.outputs.iter().position(|&(f, _)| f == kf);
        let value_col = e.outputs.iter().position(|&(f, _)| f == vf);
        let (Some(key_col), Some(value_col), ColumnData::Struct { children }) = (key_col, value_col, &mut child.data)
        else {
            col.push_null();
            return;
        };
        col.valid.push(true);
        let inner = c.level.inside_struct();
        // Allocation only for the rare object that repeats a key.
        let last: Option<std::collections::HashMap<&str, usize>> =
            has_duplicate_keys(c.value).then(|| c.value.entries().enumerate().map(|(i, (k, _))| (k, i)).collect());
        for (i, (k, v)) in c.value.entries().enumerate() {
            if last.as_ref().is_some_and(|l| l.get(k) != Some(&i)) {
                self.duplicate_keys += 1;
                continue;
            }
            child.valid.push(true);
            children[key_col].push_text(k);
            let vc = classify(v, inner, rules);
            self.write_value(value_ty, &vc, &mut children[value_col], rules);
        }
        offsets.push(child.len() as u32);
    }

    /// A scalar or a list in a VARCHAR-keyed map: one entry keyed
    /// `scalar_object_key`, as a struct holds it (infer/lattice.rs `fits`).
    /// A map of other keys cannot hold it: the map is NULL, and the value
    /// nulled, counted and rescued. Never a NULL entry: DuckDB's MAP has no
    /// such thing, and reading one back failed with an internal error.
    fn write_wrapped_into_map(&mut self, entry: &TypeNode, c: &Classified<'_>, col: &mut Column, rules: &Rules<'_>) {
        let wrapped = (|| {
            let value_ty = string_keyed_value(entry)?;
            let TypeNode::Struct(e) = entry else { return None };
            let (kf, vf) = (*e.index.get("key")?, *e.index.get("value")?);
            let key_col = e.outputs.iter().position(|&(f, _)| f == kf)?;
            let value_col = e.outputs.iter().position(|&(f, _)| f == vf)?;
            Some((value_ty, key_col, value_col))
        })();
        let (Some((value_ty, key_col, value_col)), ColumnData::List { offsets, child }) = (wrapped, &mut col.data)
        else {
            col.push_null();
            self.values_nulled += 1;
            if let Some(r) = self.rescue.as_mut() {
                r.keep(None, c.value, RescueKind::TypeMismatch);
            }
            return;
        };
        let ColumnData::Struct { children } = &mut child.data else {
            col.push_null();
            return;
        };
        col.valid.push(true);
        child.valid.push(true);
        children[key_col].push_text(rules.scalar_object_key);
        self.write_value(value_ty, c, &mut children[value_col], rules);
        offsets.push(child.len() as u32);
    }

    /// A pinned field's value, converted to the pinned type
    /// (infer/policy.rs); one that does not convert without loss is
    /// nulled, counted and rescued (a type mismatch).
    fn write_pinned(&mut self, kind: ScalarKind, c: &Classified<'_>, col: &mut Column, rules: &Rules<'_>) {
        let parsers = rules.policies.map_or(rules.parsers, |p| &p.parsers);
        let written = match pinned_value(kind, c, parsers) {
            // VARCHAR and JSON: a string as it is, anything else as JSON text.
            Some(PinnedValue::Text) => col.push_scalar(ScalarKind::Json, c).is_some(),
            Some(PinnedValue::Parsed(parsed)) => col.push_scalar(kind, &Classified { parsed, ..*c }).is_some(),
            None => false,
        };
        if !written {
            col.push_null();
            self.values_nulled += 1;
            if let Some(r) = self.rescue.as_mut() {
                r.keep(None, c.value, RescueKind::TypeMismatch);
            }
        }
    }

    fn write_scalar(&mut self, kind: ScalarKind, c: &Classified<'_>, col: &mut Column) {
        match col.push_scalar(kind, c) {
            Some(flattened) => self.values_flattened += u64::from(flattened),
            None => {
                // The chosen version cannot hold this value: never a reason
                // to crash the host; count it as nulled (and rescue it).
                col.push_null();
                self.values_nulled += 1;
                if let Some(r) = self.rescue.as_mut() {
                    r.keep(None, c.value, RescueKind::OutOfRange);
                }
            }
        }
    }
}

/// A value that does not fit the registry's schema (strict mode).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Source keys from the record's root, `items[]` for list elements.
    pub path: String,
    /// What the value is (`string`, `struct`, ...).
    pub seen: &'static str,
    /// What the registry has there (`int64`, `bool | string`), or `None`
    /// when the field is not in the registry at all.
    pub expected: Option<String>,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.expected {
            Some(t) => write!(f, "the value at {} ({}) does not fit the registry's type {t}", self.path, self.seen),
            None => write!(f, "the field {} ({}) is not in the registry", self.path, self.seen),
        }
    }
}

/// Without a version that takes the value whole, an object still goes to
/// the family's newest struct version and a list to its newest list version:
/// what fits inside is kept, and only what does not is nulled (strict mode
/// loses no sibling of a bad value). Additive scans never get here: their
/// schema took every value.
fn partial_version(family: &crate::infer::Family, c: &Classified<'_>) -> Option<usize> {
    let wanted = |ty: &TypeNode| match c.class {
        ValueClass::Object => matches!(ty, TypeNode::Struct(_)),
        ValueClass::List => matches!(ty, TypeNode::List(_)),
        _ => false,
    };
    family.versions.iter().enumerate().filter(|(_, v)| wanted(&v.ty)).max_by_key(|(_, v)| v.number).map(|(i, _)| i)
}

/// Writes a string (or null) into the one trusted version of kind `kind`
/// of its family, as [`Router::choose`] and [`Router::write_output`] would
/// write it: the text as it is for a text kind (a string keeps its text),
/// else what the parsers make of it when that is the kind's own value.
/// `false` when the value is anything else: nothing is written, and the
/// general path decides (and counts) it. Always inlined: as a call from
/// the CSV rows' placed writes, its arguments and frame cost 37 M of the
/// 2,956 M instructions of a `COPY` of the bench CSV's 19 MB slice.
#[inline(always)]
fn write_direct(kind: ScalarKind, value: ValueRef<'_>, col: &mut Column, rules: &Rules<'_>) -> bool {
    use crate::value::Node;
    let (start, len) = match value.node() {
        Node::Null => {
            col.push_null();
            return true;
        }
        Node::Str { start, len } => (start, len),
        _ => return false,
    };
    // The typed kinds' own parsers read the bytes: the text, cut as `&str`,
    // is checked to fall between characters, which the whole parse alone
    // needs (the tape's strings are UTF-8).
    let text = || value.tape.text_of(start, len);
    let bytes = || value.tape.bytes_of(start, len);
    match kind {
        ScalarKind::Str | ScalarKind::Json => col.push_str(text()),
        // Without parsers a string is text, which these kinds do not take.
        _ if !rules.parsers.any() => false,
        // The kind's own parser first, which gives what the whole parse
        // gives where it takes the text (ScalarParsers::int_alone); the
        // whole parse for the rest.
        ScalarKind::Int => match rules.parsers.int_alone(bytes()) {
            Some(n) => col.push_i64(n),
            None => match rules.parsers.parse(text()) {
                Parsed::Int(n) => col.push_i64(n),
                _ => false,
            },
        },
        ScalarKind::Float => match rules.parsers.float_alone(bytes()) {
            Some(f) => col.push_f64(f),
            None => match rules.parsers.parse(text()) {
                Parsed::Float(f) => col.push_f64(f),
                Parsed::Int(n) => col.push_f64(column::parsed_int_as_double(n, text())),
                _ => false,
            },
        },
        ScalarKind::Timestamp(unit) => {
            let instant = match rules.parsers.iso_timestamp_alone(bytes()) {
                Some(t) => Some(t),
                None => match rules.parsers.parse(text()) {
                    Parsed::Timestamp(t) => Some(t),
                    _ => None,
                },
            };
            match instant {
                // classify keeps a timestamp its rules' unit cannot hold as text.
                Some(t) if rules.timestamp_unit.ticks(t.secs, t.nanos).is_some() => {
                    unit.ticks(t.secs, t.nanos).is_some_and(|ticks| col.push_i64(ticks))
                }
                _ => false,
            }
        }
        _ => false,
    }
}

/// Writes a JSON scalar into the one scalar version of a trusted family
/// (see [`Router::plain_scalar`]), or into the element column of a list of
/// one scalar type, as the version choice and `Column::push_scalar` would:
/// a null is NULL, an integer goes to BIGINT or DOUBLE, a double to
/// DOUBLE, a Boolean to BOOLEAN, a string as [`write_direct`] writes it;
/// `false`, with nothing written, for anything else, which takes the
/// general path.
#[inline(always)]
fn write_plain(kind: ScalarKind, value: ValueRef<'_>, col: &mut Column, rules: &Rules<'_>) -> bool {
    use crate::value::Node;
    match (value.node(), kind) {
        (Node::Int(n), ScalarKind::Int) => col.push_i64(n),
        (Node::Int(n), ScalarKind::Float) => col.push_f64(n as f64),
        (Node::Float(f), ScalarKind::Float) => col.push_f64(f),
        (Node::Bool(b), ScalarKind::Bool) => col.push_bool(b),
        (Node::Null | Node::Str { .. }, _) => write_direct(kind, value, col, rules),
        _ => false,
    }
}

/// Tests compare the plain writes with the general path (which give the
/// same result, so other tests running meanwhile only lose speed).
pub static PLAIN_OFF: crate::test_switch::TestSwitch = crate::test_switch::TestSwitch::new();

/// Whether `value` is a string going to the single text version of
/// `family` (VARCHAR or JSON), where it is written as its text.
fn text_keeps(family: &crate::infer::Family, value: ValueRef<'_>) -> bool {
    matches!(family.versions.as_slice(), [v] if matches!(v.ty, TypeNode::Scalar(ScalarKind::Str | ScalarKind::Json)))
        && matches!(value.node(), crate::value::Node::Str { .. })
}

fn join_path(prefix: &str, key: &str) -> String {
    crate::value::path::join(prefix, key)
}

fn class_name(c: &Classified<'_>) -> &'static str {
    match c.class {
        ValueClass::Nothing => "null",
        ValueClass::Bool => "bool",
        ValueClass::Int => "int64",
        ValueClass::Float => "double",
        ValueClass::Str | ValueClass::Flattened => "string",
        ValueClass::Timestamp => "timestamp",
        ValueClass::Date => "date",
        ValueClass::Time => "time",
        ValueClass::List => "list",
        ValueClass::Object => "struct",
        ValueClass::Map => "map",
        ValueClass::Declared(d) => d.registry_name(),
    }
}

/// The first entry of an object that struct `s` cannot take.
fn struct_violation(s: &StructNode, c: &Classified<'_>, prefix: &str, rules: &Rules<'_>) -> Option<Violation> {
    let inner = if prefix.is_empty() { c.level } else { c.level.inside_struct() };
    for (key, v) in c.value.entries() {
        let vc = classify(v, inner, rules);
        if vc.class == ValueClass::Nothing {
            continue;
        }
        // The path is built only for a value that does not fit: no
        // allocation per value on the strict scan's path.
        let Some(family) = s.family(key) else {
            return Some(Violation { path: join_path(prefix, key), seen: class_name(&vc), expected: None });
        };
        // A pinned field's values are converted, or nulled one by one:
        // never a bad record.
        if family.pin.is_some() || choose_version(family, &vc, Growth::None, rules).is_some() {
            continue;
        }
        let path = join_path(prefix, key);
        if let Some(vi) = partial_version(family, &vc) {
            if let Some(inside) = type_violation(&family.versions[vi].ty, &vc, &path, rules) {
                return Some(inside);
            }
            continue;
        }
        let expected = family.versions.iter().map(|v| schema_string(&v.ty)).collect::<Vec<_>>().join(" | ");
        return Some(Violation { path, seen: class_name(&vc), expected: Some(expected) });
    }
    None
}

/// The first part of a value that `ty` (a struct or list version it was
/// routed to as a whole) cannot take.
fn type_violation(ty: &TypeNode, c: &Classified<'_>, path: &str, rules: &Rules<'_>) -> Option<Violation> {
    match (ty, c.class) {
        (TypeNode::Struct(s), ValueClass::Object) => struct_violation(s, c, path, rules),
        // Shallower than the type: routed whole into one element.
        (TypeNode::List(elem), ValueClass::List) if crate::infer::wraps_whole(elem, c, rules) => {
            type_violation(elem, c, &format!("{path}[]"), rules)
        }
        (TypeNode::List(elem), ValueClass::List) => {
            let path = format!("{path}[]");
            for e in c.value.elements() {
                let ec = classify(e, c.level.inside_list(), rules);
                if ec.class == ValueClass::Nothing || type_takes(elem, &ec, rules) {
                    continue;
                }
                if let (TypeNode::Struct(_), ValueClass::Object) | (TypeNode::List(_), ValueClass::List) =
                    (elem.as_ref(), ec.class)
                {
                    if let Some(inside) = type_violation(elem, &ec, &path, rules) {
                        return Some(inside);
                    }
                    continue;
                }
                return Some(Violation { path, seen: class_name(&ec), expected: Some(schema_string(elem)) });
            }
            None
        }
        _ => Some(Violation { path: path.to_string(), seen: class_name(c), expected: Some(schema_string(ty)) }),
    }
}
