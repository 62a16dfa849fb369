//! Direct writes: a JSON record written into its row straight from its
//! text, with no tape between, for a scan whose schema took every value
//! (trusted) of input the probe read whole and found clean.
//!
//! The general way parses a record onto a tape, then walks the tape: each
//! key is looked up, each value parked in a slot, then every output column
//! visits its slot, chooses a version and writes. Here the text is read
//! once and each value goes to its column as it is read: a key finds its
//! family by position (route/key_order.rs, the same guess and check), a
//! scalar is put on a one-node scratch tape exactly as the parser puts it
//! and written by `write_plain`, the same call the general way makes for
//! it, an object of a struct family is written into the struct's children
//! in place, a list of one scalar type element by element.
//!
//! Only what gives the general way's result by construction is taken: a
//! family of one version (no pin) that is a scalar, a struct or a list of
//! scalars, each key once, every key known. Anything else (a second
//! version, a map, a key with an escape or unknown to the schema, a
//! repeated key, a list holding a container, a value `write_plain`
//! refuses, text the parser would refuse) declines the record: its
//! columns are cut back to the rows they had, and the caller parses and
//! routes it the general way, which decides and counts it. A value without
//! evidence (null, or a container with no non-null scalar in it) is NULL
//! for its family, as `classify` makes it; a container's evidence is only
//! known at its end, so a struct or list row written without any is cut
//! back and written as NULL.

use super::column::{Column, ColumnData};
use super::{key_order, write_plain, Router};
use crate::formats::json::cursor::JsonCursor;
use crate::infer::{Level, Rules, ScalarKind, StructNode, TypeNode};
use crate::value::{Tape, ValueRef};

/// Families a struct may have for its objects to be written directly: one
/// bit each in the mask of the keys an object named.
const MAX_FAMILIES: usize = 64;

/// How the families of one struct of the schema are written from text.
pub(super) struct DirectStruct {
    slots: Vec<Slot>,
    /// More families than the mask holds: an object here is declined.
    too_wide: bool,
}

enum Slot {
    /// One scalar version: `write_plain` into `column`.
    Plain { column: usize, kind: ScalarKind },
    /// One struct version: an object's entries into `column`'s children.
    Struct { column: usize, inner: DirectStruct },
    /// One version, a list of one scalar kind: its elements by `write_plain`.
    List { column: usize, kind: ScalarKind },
    /// Anything else: a value here declines the record.
    General,
}

/// One record's text being written: where the reading is, the scratch tape
/// a scalar is read onto, and the scan's rules.
struct TextReader<'t, 'r> {
    cursor: JsonCursor<'t>,
    scratch: Tape,
    rules: Rules<'r>,
}

impl TextReader<'_, '_> {
    /// The next value onto the emptied scratch tape (its root is node 0):
    /// a scalar only, or any value.
    fn read(&mut self, any: bool) -> Option<ValueRef<'_>> {
        self.scratch.nodes.clear();
        self.scratch.text.clear();
        if any {
            self.cursor.value(&mut self.scratch)?;
        } else {
            self.cursor.scalar(&mut self.scratch)?;
        }
        Some(ValueRef { tape: &self.scratch, idx: 0 })
    }
}

/// The layout for the schema's root struct, made once per router.
pub(super) struct DirectLayout {
    /// The address of the struct it was made for (only compared: a router
    /// serves one plan).
    root: usize,
    layout: DirectStruct,
}

impl DirectStruct {
    /// `level`: where the struct's entries sit, as the general way passes
    /// it down (`Level::inside_struct` for each struct above).
    fn new(s: &StructNode, level: Level, rules: &Rules<'_>) -> Self {
        let limits = rules.limits;
        let slots = s
            .families
            .iter()
            .enumerate()
            .map(|(fi, family)| {
                let ([version], None) = (family.versions.as_slice(), family.pin) else { return Slot::General };
                let Some(column) = s.outputs.iter().position(|&o| o == (fi, 0)) else { return Slot::General };
                // `classify` flattens a container past a depth limit: that
                // takes the general way.
                let too_deep_list = level.containers + 1 > limits.arrow_max_depth;
                match &version.ty {
                    TypeNode::Scalar(kind) => Slot::Plain { column, kind: *kind },
                    TypeNode::Struct(inner) if !too_deep_list && level.structs < limits.parquet_max_depth => {
                        Slot::Struct { column, inner: DirectStruct::new(inner, level.inside_struct(), rules) }
                    }
                    TypeNode::List(elem) if !too_deep_list => match elem.as_ref() {
                        TypeNode::Scalar(kind) => Slot::List { column, kind: *kind },
                        _ => Slot::General,
                    },
                    _ => Slot::General,
                }
            })
            .collect();
        DirectStruct { slots, too_wide: s.families.len() > MAX_FAMILIES }
    }
}

/// Tests compare the direct writes with the general way (which gives the
/// same result, so other tests running meanwhile only lose speed).
pub static DIRECT_OFF: crate::test_switch::TestSwitch = crate::test_switch::TestSwitch::new();

/// Records written directly, counted for the tests that check the direct
/// way was taken at all (only ever added to).
#[cfg(test)]
pub static DIRECT_WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Router {
    /// Whether records may be written from their text at all: trusted, all
    /// of the record's columns wanted, nothing rescued, no list element
    /// dropped, and the plain writes on.
    pub fn writes_text(&self) -> bool {
        self.trusted && self.wanted.is_none() && !self.drop_null_elements && self.plain_writes() && !DIRECT_OFF.is_on()
    }

    /// Writes the record whose JSON text is `text` as one row of `columns`,
    /// as [`Router::write_record`] writes the record parsed; `false`, with
    /// `columns` as they were, where it takes the general way (module doc).
    pub fn write_text_record(
        &mut self,
        root: &StructNode,
        text: &str,
        columns: &mut [Column],
        rules: &Rules<'_>,
    ) -> bool {
        if !self.writes_text() {
            return false;
        }
        let address = root as *const StructNode as usize;
        let direct = match self.direct.take() {
            Some(d) if d.root == address => d,
            _ => Box::new(DirectLayout { root: address, layout: DirectStruct::new(root, Level::default(), rules) }),
        };
        let rows = columns.first().map_or(0, Column::len);
        let scratch = std::mem::take(&mut self.text_scratch);
        let mut reader = TextReader { cursor: JsonCursor::new(text), scratch, rules: *rules };
        let written = reader.cursor.peek() == Some(b'{')
            && self.object_from_text(&direct.layout, root, &mut reader, columns).is_some()
            && reader.cursor.at_end();
        self.text_scratch = reader.scratch;
        self.direct = Some(direct);
        if !written {
            columns.iter_mut().for_each(|c| c.truncate(rows));
        }
        #[cfg(test)]
        DIRECT_WRITES.fetch_add(u64::from(written), std::sync::atomic::Ordering::Relaxed);
        written
    }

    /// The object at the cursor's `{` (peeked) into one row of `columns`,
    /// `s`'s columns; whether a non-null scalar was in it (`None`: decline).
    fn object_from_text(
        &mut self,
        layout: &DirectStruct,
        s: &StructNode,
        r: &mut TextReader<'_, '_>,
        columns: &mut [Column],
    ) -> Option<bool> {
        if layout.too_wide {
            return None;
        }
        r.cursor.bump();
        // The struct's learned key order, held while its entries are read
        // (a nested struct has its own), then put back.
        let mut order = std::mem::take(self.key_orders.of(s));
        let entries = self.entries_from_text(layout, s, r, columns, &mut order);
        *self.key_orders.of(s) = order;
        let (written, evidence) = entries?;
        // The families the object did not write are NULL in every version.
        for (col, &(fi, _)) in columns.iter_mut().zip(&s.outputs) {
            if written & (1u64 << fi) == 0 {
                col.push_null();
            }
        }
        Some(evidence)
    }

    /// The entries of an object whose `{` is read, and its `}`: the mask
    /// of the families written, and whether a non-null scalar was in them.
    /// A value without evidence of a key the struct lacks, or of a family
    /// of several versions, is no value: the general way writes nothing
    /// for the one and NULL in every version of the other.
    fn entries_from_text(
        &mut self,
        layout: &DirectStruct,
        s: &StructNode,
        r: &mut TextReader<'_, '_>,
        columns: &mut [Column],
        order: &mut Vec<u32>,
    ) -> Option<(u64, bool)> {
        let (mut named, mut written, mut evidence) = (0u64, 0u64, false);
        if r.cursor.peek()? == b'}' {
            r.cursor.bump();
            return Some((written, evidence));
        }
        let mut position = 0;
        loop {
            if r.cursor.peek()? != b'"' {
                return None;
            }
            let key = r.cursor.key()?;
            let found = key_order::family_of(s, order, position, key);
            position += 1;
            let fi = match found {
                Some(fi) if !matches!(layout.slots[fi], Slot::General) => fi,
                _ => {
                    // A repeated key counts in the general way.
                    if let Some(fi) = found {
                        let bit = 1u64 << fi;
                        if named & bit != 0 {
                            return None;
                        }
                        named |= bit;
                    }
                    no_value_from_text(r)?;
                    match r.cursor.peek()? {
                        b',' => {
                            r.cursor.bump();
                            continue;
                        }
                        b'}' => {
                            r.cursor.bump();
                            return Some((written, evidence));
                        }
                        _ => return None,
                    }
                }
            };
            let bit = 1u64 << fi;
            if named & bit != 0 {
                return None;
            }
            named |= bit;
            written |= bit;
            evidence |= match &layout.slots[fi] {
                Slot::Plain { column, kind } => scalar_from_text(*kind, r, &mut columns[*column])?,
                Slot::Struct { column, inner } => {
                    let col = &mut columns[*column];
                    if r.cursor.peek()? != b'{' {
                        null_from_text(r, col)?
                    } else {
                        let TypeNode::Struct(inner_s) = &s.families[fi].versions[0].ty else { return None };
                        let ColumnData::Struct { children } = &mut col.data else { return None };
                        let row = col.valid.len();
                        let had = self.object_from_text(inner, inner_s, r, children)?;
                        col.valid.push(true);
                        if !had {
                            col.truncate(row);
                            col.push_null();
                        }
                        had
                    }
                }
                Slot::List { column, kind } => list_from_text(*kind, r, &mut columns[*column])?,
                Slot::General => return None,
            };
            match r.cursor.peek()? {
                b',' => r.cursor.bump(),
                b'}' => {
                    r.cursor.bump();
                    return Some((written, evidence));
                }
                _ => return None,
            }
        }
    }
}

/// A value that must be no value: null, or a container without a non-null
/// scalar in it; `None` for anything else.
fn no_value_from_text(r: &mut TextReader<'_, '_>) -> Option<()> {
    r.read(true)?.is_empty_or_null().then_some(())
}

/// A scalar into `col` as `write_plain` writes it; whether it is non-null.
#[inline(always)]
fn scalar_from_text(kind: ScalarKind, r: &mut TextReader<'_, '_>, col: &mut Column) -> Option<bool> {
    let rules = r.rules;
    let value = r.read(false)?;
    let non_null = !matches!(value.node(), crate::value::Node::Null);
    write_plain(kind, value, col, &rules).then_some(non_null)
}

/// Only `null` where a container belongs: NULL.
fn null_from_text(r: &mut TextReader<'_, '_>, col: &mut Column) -> Option<bool> {
    if r.read(false)?.node() != crate::value::Node::Null {
        return None;
    }
    col.push_null();
    Some(false)
}

/// A list of scalars into a list column; `null`, `[]` and a list of nulls
/// (no evidence) are NULL.
fn list_from_text(kind: ScalarKind, r: &mut TextReader<'_, '_>, col: &mut Column) -> Option<bool> {
    if r.cursor.peek()? != b'[' {
        return null_from_text(r, col);
    }
    r.cursor.bump();
    let row = col.len();
    let ColumnData::List { offsets, child } = &mut col.data else { return None };
    let mut evidence = false;
    if r.cursor.peek()? == b']' {
        r.cursor.bump();
    } else {
        loop {
            evidence |= scalar_from_text(kind, r, child)?;
            match r.cursor.peek()? {
                b',' => r.cursor.bump(),
                b']' => {
                    r.cursor.bump();
                    break;
                }
                _ => return None,
            }
        }
    }
    offsets.push(child.len() as u32);
    col.valid.push(true);
    if !evidence {
        col.truncate(row);
        col.push_null();
    }
    Some(evidence)
}
