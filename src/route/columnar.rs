//! Writing a typed reader's arrow columns (`Batch::columns`, Parquet)
//! straight into the column buffers, a column at a time, where each arrow
//! column's type is the one version its family has: no tape, no version
//! choice, no key lookup per value.
//!
//! The result is exactly what routing the same rows from the tape gives
//! (a property test compares the two, scan/columnar_proptests.rs): a NULL,
//! an empty list and a struct without a non-null value inside are NULL (the
//! empty-container rule of docs/engine.md; a Parquet list of NULLs is a
//! list, as the reader writes it), and struct children the schema has but
//! the file lacks are NULL. Anything the row path would count or judge
//! instead of writing (a field the schema lacks holding a value, a
//! timestamp its unit cannot hold, a decimal with more digits than its
//! precision) makes [`ColumnarLayout::write`] refuse the batch, whose rows
//! then take the row path.

use std::sync::Arc;

use arrow::array::{Array, AsArray, GenericByteArray};
use arrow::datatypes::{ArrowNativeType, ByteArrayType};
use arrow::datatypes::{
    DataType, Date32Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, Schema,
    TimeUnit as ArrowUnit, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};

use super::column::{Column, ColumnData};
use crate::infer::{Level, Rules, ScalarKind, StructNode, TypeNode};
use crate::value::{Declared, TimeUnit};

/// A selected row that is NULL whatever the array holds (its parent is).
const NULL_ROW: u32 = u32::MAX;

/// How one arrow column (or nested child) becomes one column buffer.
#[derive(Debug)]
enum Conv {
    /// An arrow column of type Null: NULL in every row.
    Null,
    Bool,
    Int,
    Float,
    /// UTF-8 text into a VARCHAR (or JSON) column.
    Text,
    Date,
    Timestamp {
        from: TimeUnit,
        to: TimeUnit,
    },
    /// A declared fixed-width type, by its little-endian bytes.
    Fixed(Declared),
    /// A DECIMAL of the arrow column's precision and scale into a
    /// version's DECIMAL, as the reader and `encode_declared` take it (see
    /// [`Rescale`]).
    Decimal(Rescale),
    Blob,
    List(Box<Conv>),
    Struct {
        /// Per arrow child field.
        children: Vec<Target>,
        /// Output children no arrow field fills: NULL.
        absent: Vec<usize>,
    },
}

/// Where one arrow column goes.
#[derive(Debug)]
enum Target {
    /// A field the schema lacks: its values must all be empty.
    Unknown,
    /// A field whose columns the query does not use. `check` is how it
    /// would be written when not every value of its type fits its version
    /// (an instant its unit cannot hold, or a decimal beyond its precision,
    /// is a strict-mode violation): its values are checked, not written.
    /// `None`: every value fits.
    Skipped {
        check: Option<Conv>,
    },
    Column {
        column: usize,
        conv: Conv,
    },
}

/// The plan for the columns of one arrow schema into one struct's outputs.
#[derive(Debug)]
pub struct ColumnarLayout {
    /// The schema, keys and root this layout was made for (compared by
    /// address: a router serves one plan, a reader one schema).
    schema: arrow::datatypes::SchemaRef,
    keys: Arc<[String]>,
    root: usize,
    fields: Vec<Target>,
    /// Wanted output columns of families no arrow column names: NULL.
    absent: Vec<usize>,
}

impl ColumnarLayout {
    /// The layout for these arrow columns (record keys `keys`) into the
    /// outputs of `root`, of which only the `wanted` are written; `None`
    /// unless every column's type is exactly the one version of its family
    /// (no pin), within the depth limits, each family named once.
    pub fn new(
        root: &StructNode,
        schema: &arrow::datatypes::SchemaRef,
        keys: &Arc<[String]>,
        wanted: Option<&[bool]>,
        rules: &Rules<'_>,
    ) -> Option<ColumnarLayout> {
        if keys.len() != schema.fields().len() {
            return None;
        }
        let fields_and_keys = schema.fields().iter().zip(keys.iter()).map(|(f, k)| (f.data_type(), k.as_str()));
        let (fields, absent) = struct_targets(root, fields_and_keys, wanted, Level::default(), rules)?;
        Some(ColumnarLayout {
            schema: Arc::clone(schema),
            keys: Arc::clone(keys),
            root: root as *const StructNode as usize,
            fields,
            absent,
        })
    }

    /// Per arrow column: whether writing needs it read. A column the query
    /// does not use is left unread when no value of it can change a row;
    /// at least one column is read, so that batches still count the rows.
    pub fn columns_to_read(&self) -> Vec<bool> {
        let mut read: Vec<bool> = self.fields.iter().map(|t| !matches!(t, Target::Skipped { check: None })).collect();
        if !read.contains(&true) {
            if let Some(first) = read.first_mut() {
                *first = true;
            }
        }
        read
    }

    /// Whether this layout was made for these columns and this root.
    pub fn serves(&self, root: &StructNode, schema: &Schema, keys: &Arc<[String]>) -> bool {
        self.root == root as *const StructNode as usize
            && (Arc::ptr_eq(&self.keys, keys) || *self.keys == **keys)
            && (std::ptr::eq(self.schema.as_ref(), schema) || *self.schema == *schema)
    }

    /// Appends the rows of `batch` to `columns` (the root's outputs);
    /// `false`, with the columns as they were, when a value needs the row
    /// path (see the module doc).
    pub fn write(&self, batch: &arrow::record_batch::RecordBatch, columns: &mut [Column], rules: &Rules<'_>) -> bool {
        let rows = batch.num_rows();
        if rows >= NULL_ROW as usize || batch.num_columns() != self.fields.len() {
            return false;
        }
        let lengths: Vec<usize> = columns.iter().map(Column::len).collect();
        let all: Vec<u32> = (0..rows as u32).collect();
        let mut ok = true;
        for (target, array) in self.fields.iter().zip(batch.columns()) {
            ok = match target {
                Target::Skipped { check: None } => true,
                Target::Skipped { check: Some(conv) } => fits(conv, array.as_ref(), rules),
                Target::Unknown => !any_evidence(array.as_ref()),
                Target::Column { column, conv } => match columns.get_mut(*column) {
                    Some(col) => write(conv, array.as_ref(), &all, col, rules),
                    None => false,
                },
            };
            if !ok {
                break;
            }
        }
        if ok {
            for &column in &self.absent {
                (0..rows).for_each(|_| columns[column].push_null());
            }
            return true;
        }
        for (col, &len) in columns.iter_mut().zip(&lengths) {
            col.truncate(len);
        }
        false
    }
}

/// The targets of a struct's arrow fields (type, key) among `s`'s outputs,
/// and the wanted outputs no field fills.
fn struct_targets<'a>(
    s: &StructNode,
    fields: impl Iterator<Item = (&'a DataType, &'a str)>,
    wanted: Option<&[bool]>,
    level: Level,
    rules: &Rules<'_>,
) -> Option<(Vec<Target>, Vec<usize>)> {
    let is_wanted = |output: usize| wanted.is_none_or(|w| w.get(output).copied().unwrap_or(true));
    let mut named = vec![false; s.families.len()];
    let mut targets = Vec::new();
    for (ty, key) in fields {
        let Some(&fi) = s.index.get(key) else {
            targets.push(Target::Unknown);
            continue;
        };
        if std::mem::replace(&mut named[fi], true) {
            return None;
        }
        // An unwanted column's type must agree too: strict mode judges the
        // whole record, whichever columns the query reads.
        let family = &s.families[fi];
        let ([version], None) = (family.versions.as_slice(), family.pin) else { return None };
        let output = s.outputs.iter().position(|&o| o == (fi, 0))?;
        let conv = conv_for(ty, &version.ty, level, rules)?;
        targets.push(match is_wanted(output) {
            true => Target::Column { column: output, conv },
            false => Target::Skipped { check: (!conv.total()).then_some(conv) },
        });
    }
    let absent = s.outputs.iter().enumerate().filter(|&(i, &(fi, _))| !named[fi] && is_wanted(i)).map(|(i, _)| i);
    Some((targets, absent.collect()))
}

/// How an arrow value of type `ty` at `level` is written into a column of
/// `version`; `None` when the row path must write it.
fn conv_for(ty: &DataType, version: &TypeNode, level: Level, rules: &Rules<'_>) -> Option<Conv> {
    let limits = rules.limits;
    Some(match (ty, version) {
        (DataType::Null, _) => Conv::Null,
        (DataType::Boolean, TypeNode::Scalar(ScalarKind::Bool)) => Conv::Bool,
        (DataType::Int64, TypeNode::Scalar(ScalarKind::Int)) => Conv::Int,
        (DataType::Float64, TypeNode::Scalar(ScalarKind::Float)) => Conv::Float,
        (DataType::Utf8 | DataType::LargeUtf8, TypeNode::Scalar(ScalarKind::Str | ScalarKind::Json)) => Conv::Text,
        (DataType::Date32, TypeNode::Scalar(ScalarKind::Date)) => Conv::Date,
        (DataType::Timestamp(unit, _), TypeNode::Scalar(ScalarKind::Timestamp(to))) => {
            let from = match unit {
                ArrowUnit::Second => TimeUnit::Seconds,
                ArrowUnit::Millisecond => TimeUnit::Millis,
                ArrowUnit::Microsecond => TimeUnit::Micros,
                ArrowUnit::Nanosecond => TimeUnit::Nanos,
            };
            Conv::Timestamp { from, to: *to }
        }
        (DataType::Binary | DataType::LargeBinary, TypeNode::Scalar(ScalarKind::Declared(Declared::Blob))) => {
            Conv::Blob
        }
        (
            DataType::Decimal32(p, s) | DataType::Decimal64(p, s) | DataType::Decimal128(p, s),
            TypeNode::Scalar(ScalarKind::Declared(Declared::Decimal { precision, scale })),
        ) => {
            let Some(Declared::Decimal { precision: p, scale: s }) = Declared::decimal(u32::from(*p), i32::from(*s))
            else {
                return None;
            };
            Conv::Decimal(Rescale::new((p, s), (*precision, *scale))?)
        }
        (_, TypeNode::Scalar(ScalarKind::Declared(d))) if declared_of(ty) == Some(*d) => Conv::Fixed(*d),
        (DataType::List(element) | DataType::LargeList(element), TypeNode::List(elem)) => {
            // A list of lists may hold lists shallower than its type, which
            // the row path wraps whole (infer::wraps_whole).
            if level.containers + 1 > limits.arrow_max_depth || matches!(**elem, TypeNode::List(_)) {
                return None;
            }
            Conv::List(Box::new(conv_for(element.data_type(), elem, level.inside_list(), rules)?))
        }
        (DataType::Struct(fields), TypeNode::Struct(s)) => {
            if level.containers + 1 > limits.arrow_max_depth || level.structs + 1 > limits.parquet_max_depth {
                return None;
            }
            let named = fields.iter().map(|f| (f.data_type(), f.name().as_str()));
            let (children, absent) = struct_targets(s, named, None, level.inside_struct(), rules)?;
            Conv::Struct { children, absent }
        }
        _ => return None,
    })
}

impl Conv {
    /// Every value of the arrow type fits (see [`Target::Skipped`]).
    fn total(&self) -> bool {
        match self {
            Conv::Timestamp { .. } | Conv::Decimal(_) => false,
            Conv::List(element) => element.total(),
            Conv::Struct { children, .. } => children.iter().all(|c| match c {
                Target::Column { conv, .. } => conv.total(),
                Target::Skipped { check } => check.is_none(),
                // A field the schema lacks: any value of it is judged.
                Target::Unknown => false,
            }),
            _ => true,
        }
    }
}

/// The declared type of a fixed-width arrow column, as the Parquet reader
/// declares it (formats/parquet `write_value`).
fn declared_of(ty: &DataType) -> Option<Declared> {
    Some(match ty {
        DataType::Int8 => Declared::Int8,
        DataType::Int16 => Declared::Int16,
        DataType::Int32 => Declared::Int32,
        DataType::UInt8 => Declared::UInt8,
        DataType::UInt16 => Declared::UInt16,
        DataType::UInt32 => Declared::UInt32,
        DataType::UInt64 => Declared::UInt64,
        DataType::Float32 => Declared::Float32,
        _ => return None,
    })
}

/// Whether any row of `array` holds a non-null scalar (or a container
/// holding one): what the row path would route somewhere.
fn any_evidence(array: &dyn Array) -> bool {
    match array.data_type() {
        DataType::Null => false,
        DataType::Struct(_) => {
            let s = array.as_struct();
            let ev = evidence(s.columns().iter().map(|c| c.as_ref()), s.len(), |i| s.is_valid(i));
            ev.contains(&true)
        }
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(_, _) | DataType::Map(_, _) => {
            // A container's evidence is in its values; any value at all is
            // enough to refuse (the refusal is only ever conservative).
            array.null_count() < array.len() && !array.is_empty()
        }
        _ => array.null_count() < array.len(),
    }
}

/// Per row: valid, and some child has evidence in it.
fn evidence<'a>(
    children: impl Iterator<Item = &'a dyn Array>,
    rows: usize,
    valid: impl Fn(usize) -> bool,
) -> Vec<bool> {
    let mut ev = vec![false; rows];
    for child in children {
        let child_ev = row_evidence(child);
        for (e, c) in ev.iter_mut().zip(child_ev) {
            *e |= c;
        }
    }
    for (i, e) in ev.iter_mut().enumerate() {
        *e &= valid(i);
    }
    ev
}

/// Per row of `array`: whether it is evidence (the tape's `evidence` flag:
/// a non-null scalar, or a container holding one).
fn row_evidence(array: &dyn Array) -> Vec<bool> {
    match array.data_type() {
        DataType::Null => vec![false; array.len()],
        DataType::Struct(_) => {
            let s = array.as_struct();
            evidence(s.columns().iter().map(|c| c.as_ref()), s.len(), |i| s.is_valid(i))
        }
        DataType::List(_) => list_evidence(array.as_list::<i32>()),
        DataType::LargeList(_) => list_evidence(array.as_list::<i64>()),
        _ => match array.nulls().filter(|n| n.null_count() > 0) {
            Some(nulls) => nulls.iter().collect(),
            None => vec![true; array.len()],
        },
    }
}

/// A Parquet list is evidence when it has an element, NULL or not (the
/// reader's `write_list`: `[NULL]` is a list of one NULL, as DuckDB reads it).
fn list_evidence<O: arrow::array::OffsetSizeTrait>(list: &arrow::array::GenericListArray<O>) -> Vec<bool> {
    let offsets = list.value_offsets();
    (0..list.len()).map(|i| list.is_valid(i) && offsets[i + 1] > offsets[i]).collect()
}

/// Appends the rows `rows` of `array` (each an index into it, or
/// [`NULL_ROW`]) to `col`; `false` when a value needs the row path.
fn write(conv: &Conv, array: &dyn Array, rows: &[u32], col: &mut Column, rules: &Rules<'_>) -> bool {
    // The null bitmap read directly: `Array::is_valid` per value is a call
    // through the trait object.
    let nulls = array.nulls().filter(|n| n.null_count() > 0);
    let valid = |r: u32| r != NULL_ROW && nulls.is_none_or(|n| n.is_valid(r as usize));
    if let Conv::Null = conv {
        rows.iter().for_each(|_| col.push_null());
        return true;
    }
    match (conv, &mut col.data) {
        (Conv::Bool, ColumnData::Bool(out)) => {
            let a = array.as_boolean();
            for &r in rows {
                let v = valid(r);
                out.push(v && a.value(r as usize));
                col.valid.push(v);
            }
        }
        (Conv::Int, ColumnData::Int(out)) => {
            push_primitive(array.as_primitive::<Int64Type>(), rows, out, &mut col.valid)
        }
        (Conv::Float, ColumnData::Float(out)) => {
            push_primitive(array.as_primitive::<Float64Type>(), rows, out, &mut col.valid)
        }
        (Conv::Date, ColumnData::Date(out)) => {
            push_primitive(array.as_primitive::<Date32Type>(), rows, out, &mut col.valid)
        }
        (Conv::Text, ColumnData::Str { offsets, bytes }) => {
            let var = (offsets, bytes, &mut col.valid);
            let ok = match array.data_type() {
                DataType::Utf8 => push_byte_array(array.as_string::<i32>(), rows, var),
                DataType::LargeUtf8 => push_byte_array(array.as_string::<i64>(), rows, var),
                _ => false,
            };
            if !ok {
                return false;
            }
        }
        (Conv::Blob, ColumnData::Binary { offsets, bytes }) => {
            let var = (offsets, bytes, &mut col.valid);
            let ok = match array.data_type() {
                DataType::Binary => push_byte_array(array.as_binary::<i32>(), rows, var),
                DataType::LargeBinary => push_byte_array(array.as_binary::<i64>(), rows, var),
                _ => false,
            };
            if !ok {
                return false;
            }
        }
        (Conv::Timestamp { from, to }, ColumnData::Int(out)) => {
            let Some(values) = timestamp_values(array) else { return false };
            for &r in rows {
                if !valid(r) {
                    out.push(0);
                    col.valid.push(false);
                    continue;
                }
                let Some(ticks) = instant_ticks(values[r as usize], *from, *to, rules) else { return false };
                out.push(ticks);
                col.valid.push(true);
            }
        }
        (Conv::Fixed(_) | Conv::Decimal(_), ColumnData::Fixed { width, data }) => {
            let w = *width;
            if matches!(conv, Conv::Fixed(d) if d.width() != w) {
                return false;
            }
            let rescale = match conv {
                Conv::Decimal(rescale) => Some(rescale),
                _ => None,
            };
            let valid = &mut col.valid;
            // Each width a call of its own: `put_fixed` inlined with a
            // constant width copies that many bytes, where a width known
            // only at run time is a `memcpy` call per value.
            let written = match w {
                1 => fixed_ints(array, rows, |v| put_fixed(v, rescale, 1, data, valid)),
                2 => fixed_ints(array, rows, |v| put_fixed(v, rescale, 2, data, valid)),
                4 => fixed_ints(array, rows, |v| put_fixed(v, rescale, 4, data, valid)),
                8 => fixed_ints(array, rows, |v| put_fixed(v, rescale, 8, data, valid)),
                _ => fixed_ints(array, rows, |v| put_fixed(v, rescale, w, data, valid)),
            };
            if !written {
                return false;
            }
        }
        (Conv::List(element), ColumnData::List { offsets, child }) => {
            let (ev, starts, values): (Vec<bool>, Vec<usize>, &dyn Array) = match array.data_type() {
                DataType::List(_) => {
                    let l = array.as_list::<i32>();
                    (list_evidence(l), l.value_offsets().iter().map(|o| o.as_usize()).collect(), l.values().as_ref())
                }
                DataType::LargeList(_) => {
                    let l = array.as_list::<i64>();
                    (list_evidence(l), l.value_offsets().iter().map(|o| o.as_usize()).collect(), l.values().as_ref())
                }
                _ => return false,
            };
            if values.len() >= NULL_ROW as usize {
                return false;
            }
            let mut elements = Vec::new();
            for &r in rows {
                let has = r != NULL_ROW && ev[r as usize];
                if has {
                    let i = r as usize;
                    elements.extend((starts[i]..starts[i + 1]).map(|e| e as u32));
                }
                let end = offsets.last().copied().unwrap_or(0) as usize
                    + if has { starts[r as usize + 1] - starts[r as usize] } else { 0 };
                if end > u32::MAX as usize {
                    return false;
                }
                offsets.push(end as u32);
                col.valid.push(has);
            }
            return write(element, values, &elements, child, rules);
        }
        (Conv::Struct { children, absent }, ColumnData::Struct { children: columns }) => {
            let s = array.as_struct();
            let ev = evidence(s.columns().iter().map(|c| c.as_ref()), s.len(), |i| s.is_valid(i));
            let inner: Vec<u32> =
                rows.iter().map(|&r| if r != NULL_ROW && ev[r as usize] { r } else { NULL_ROW }).collect();
            col.valid.extend(inner.iter().map(|&r| r != NULL_ROW));
            for (target, child) in children.iter().zip(s.columns()) {
                let ok = match target {
                    Target::Skipped { check: None } => true,
                    Target::Skipped { check: Some(conv) } => fits(conv, child.as_ref(), rules),
                    Target::Unknown => !any_evidence(child.as_ref()),
                    Target::Column { column, conv } => match columns.get_mut(*column) {
                        Some(out) => write(conv, child.as_ref(), &inner, out, rules),
                        None => false,
                    },
                };
                if !ok {
                    return false;
                }
            }
            for &column in absent {
                inner.iter().for_each(|_| columns[column].push_null());
            }
        }
        _ => return false,
    }
    true
}

/// Whether every value of `array` would be written by `conv` (the values
/// of a column the query does not use, checked as [`write`] would take
/// them, NULL parents or not: a refusal is only ever conservative).
fn fits(conv: &Conv, array: &dyn Array, rules: &Rules<'_>) -> bool {
    match (conv, array.data_type()) {
        (Conv::Timestamp { from, to }, _) => {
            let Some(values) = timestamp_values(array) else { return false };
            let nulls = array.nulls();
            values
                .iter()
                .enumerate()
                .all(|(i, &v)| nulls.is_some_and(|n| n.is_null(i)) || instant_ticks(v, *from, *to, rules).is_some())
        }
        (Conv::Decimal(rescale), _) => {
            let all: Vec<u32> = (0..array.len() as u32).collect();
            fixed_ints(array, &all, |v| v.is_none_or(|v| rescale.apply(v).is_some()))
        }
        (Conv::List(element), DataType::List(_)) => fits(element, array.as_list::<i32>().values().as_ref(), rules),
        (Conv::List(element), DataType::LargeList(_)) => fits(element, array.as_list::<i64>().values().as_ref(), rules),
        (Conv::Struct { children, .. }, DataType::Struct(_)) => {
            children.iter().zip(array.as_struct().columns()).all(|(target, child)| match target {
                Target::Column { conv, .. } | Target::Skipped { check: Some(conv) } => {
                    fits(conv, child.as_ref(), rules)
                }
                Target::Skipped { check: None } => true,
                Target::Unknown => !any_evidence(child.as_ref()),
            })
        }
        (Conv::List(_) | Conv::Struct { .. }, _) => false,
        _ => true,
    }
}

/// Calls `f` for the rows `rows` of a fixed-width integer, FLOAT or
/// DECIMAL column, in order, with each value as an integer (a FLOAT by its
/// bits, a DECIMAL unscaled; `None` where NULL), while `f` returns `true`;
/// `false` when it did not, or for another type.
fn fixed_ints(array: &dyn Array, rows: &[u32], f: impl FnMut(Option<i128>) -> bool) -> bool {
    use arrow::datatypes::{ArrowPrimitiveType, Decimal128Type, Decimal32Type, Decimal64Type};
    fn each<T: ArrowPrimitiveType>(
        array: &dyn Array,
        rows: &[u32],
        mut f: impl FnMut(Option<i128>) -> bool,
        int: impl Fn(T::Native) -> i128,
    ) -> bool {
        let a = array.as_primitive::<T>();
        let (values, nulls) = (a.values(), a.nulls().filter(|n| n.null_count() > 0));
        if nulls.is_none() && selects_all(rows, values.len()) {
            return values.iter().all(|&v| f(Some(int(v))));
        }
        rows.iter().all(|&r| {
            let valid = r != NULL_ROW && nulls.is_none_or(|n| n.is_valid(r as usize));
            f(valid.then(|| int(values[r as usize])))
        })
    }
    match array.data_type() {
        DataType::Int8 => each::<Int8Type>(array, rows, f, i128::from),
        DataType::Int16 => each::<Int16Type>(array, rows, f, i128::from),
        DataType::Int32 => each::<Int32Type>(array, rows, f, i128::from),
        DataType::UInt8 => each::<UInt8Type>(array, rows, f, i128::from),
        DataType::UInt16 => each::<UInt16Type>(array, rows, f, i128::from),
        DataType::UInt32 => each::<UInt32Type>(array, rows, f, i128::from),
        DataType::UInt64 => each::<UInt64Type>(array, rows, f, i128::from),
        DataType::Float32 => each::<Float32Type>(array, rows, f, |v| i128::from(v.to_bits())),
        DataType::Decimal32(..) => each::<Decimal32Type>(array, rows, f, i128::from),
        DataType::Decimal64(..) => each::<Decimal64Type>(array, rows, f, i128::from),
        DataType::Decimal128(..) => each::<Decimal128Type>(array, rows, f, |v| v),
        _ => false,
    }
}

/// An instant of `from` ticks in a version's unit `to`, as the row path
/// takes it: one the scan's unit cannot hold is text there, and one the
/// version's unit cannot hold is nulled; `None` for either.
fn instant_ticks(v: i64, from: TimeUnit, to: TimeUnit, rules: &Rules<'_>) -> Option<i64> {
    let (secs, nanos) = from.split(v);
    rules.timestamp_unit.ticks(secs, nanos).and_then(|_| to.ticks(secs, nanos))
}

/// DECIMAL `(p, s)` values as DECIMAL `(precision, scale)`: the reader
/// keeps a value within its column's precision as a decimal (formats/parquet
/// `write_decimal`), and `encode_declared` rescales it and refuses one
/// beyond the version's precision. The bounds are worked out once.
#[derive(Debug)]
struct Rescale {
    /// The bound on a value's magnitude: below both the reader's bound,
    /// 10^p, and the version's, 10^precision / factor (a power of ten
    /// divides another exactly, so the scaled value is within 10^precision
    /// exactly when the value is within this).
    below: u128,
    factor: i128,
}

impl Rescale {
    fn new((p, s): (u8, u8), (precision, scale): (u8, u8)) -> Option<Rescale> {
        let within = 10u128.checked_pow(u32::from(p))?;
        let factor = 10u128.checked_pow(u32::from(scale.saturating_sub(s)))?;
        let fits = 10u128.checked_pow(u32::from(precision))?;
        Some(Rescale { below: within.min(fits / factor), factor: i128::try_from(factor).ok()? })
    }

    /// The unscaled value in the version's scale; `None`: the row path
    /// decides. One comparison: below the bound the product cannot
    /// overflow (it is under 10^38).
    #[inline]
    fn apply(&self, v: i128) -> Option<i128> {
        (v.unsigned_abs() < self.below).then(|| v * self.factor)
    }
}

/// The ticks of a timestamp column, in its own unit.
fn timestamp_values(array: &dyn Array) -> Option<&[i64]> {
    Some(match array.data_type() {
        DataType::Timestamp(ArrowUnit::Second, _) => array.as_primitive::<TimestampSecondType>().values(),
        DataType::Timestamp(ArrowUnit::Millisecond, _) => array.as_primitive::<TimestampMillisecondType>().values(),
        DataType::Timestamp(ArrowUnit::Microsecond, _) => array.as_primitive::<TimestampMicrosecondType>().values(),
        DataType::Timestamp(ArrowUnit::Nanosecond, _) => array.as_primitive::<TimestampNanosecondType>().values(),
        _ => return None,
    })
}

/// A column buffer of variable-width values (VARCHAR text, BLOB bytes).
trait VarBuffer {
    type Value: ?Sized;
    fn append(&mut self, value: &Self::Value);
    /// Appends the bytes of several values at once; `false`, with
    /// nothing appended, when they are not values of this buffer (text
    /// that is not UTF-8).
    fn append_run(&mut self, run: &[u8]) -> bool;
    fn bytes(&self) -> usize;
}

impl VarBuffer for String {
    type Value = str;
    fn append(&mut self, value: &str) {
        self.push_str(value);
    }
    fn append_run(&mut self, run: &[u8]) -> bool {
        // A run of a string array's values is UTF-8 (each value is);
        // checked anyway, once for the run, which costs far less than a
        // copy per value.
        std::str::from_utf8(run).map(|text| self.push_str(text)).is_ok()
    }
    fn bytes(&self) -> usize {
        self.len()
    }
}

impl VarBuffer for Vec<u8> {
    type Value = [u8];
    fn append(&mut self, value: &[u8]) {
        self.extend_from_slice(value);
    }
    fn append_run(&mut self, run: &[u8]) -> bool {
        self.extend_from_slice(run);
        true
    }
    fn bytes(&self) -> usize {
        self.len()
    }
}

/// Appends the selected rows of a string or binary array. A whole array
/// without NULLs (a top-level column: `rows` selects every row) is one run
/// of bytes, copied at once, with every offset moved by the same amount.
fn push_byte_array<T: ByteArrayType, B: VarBuffer<Value = T::Native> + ?Sized>(
    array: &GenericByteArray<T>,
    rows: &[u32],
    (offsets, buffer, valid_out): (&mut Vec<u32>, &mut B, &mut Vec<bool>),
) -> bool {
    let nulls = array.nulls().filter(|n| n.null_count() > 0);
    if nulls.is_none() && selects_all(rows, array.len()) {
        let value_offsets = array.value_offsets();
        let (Some(first), Some(last)) = (value_offsets.first(), value_offsets.last()) else { return true };
        let (first, base) = (first.as_usize(), buffer.bytes());
        let run = &array.value_data()[first..last.as_usize()];
        if base + run.len() > u32::MAX as usize || !buffer.append_run(run) {
            return false;
        }
        offsets.extend(value_offsets[1..].iter().map(|o| (base + o.as_usize() - first) as u32));
        valid_out.resize(valid_out.len() + array.len(), true);
        return true;
    }
    let valid = |r: u32| r != NULL_ROW && nulls.is_none_or(|n| n.is_valid(r as usize));
    push_var(rows, valid, |i| array.value(i), (offsets, buffer, valid_out))
}

/// Appends the selected rows of a variable-width column (`value(i)`: row
/// i's value) to a buffer with its offsets and validity; `false` when the
/// buffer would outgrow its 32-bit offsets.
fn push_var<'a, B: VarBuffer + ?Sized>(
    rows: &[u32],
    valid: impl Fn(u32) -> bool,
    value: impl Fn(usize) -> &'a B::Value,
    (offsets, buffer, valid_out): (&mut Vec<u32>, &mut B, &mut Vec<bool>),
) -> bool
where
    B::Value: 'a,
{
    for &r in rows {
        let v = valid(r);
        if v {
            buffer.append(value(r as usize));
        }
        offsets.push(buffer.bytes() as u32);
        valid_out.push(v);
    }
    buffer.bytes() <= u32::MAX as usize
}

/// Whether `rows` is every row of an array of `len` rows, in order, which
/// the bulk paths copy whole: a top-level column's selection, and a struct
/// child's or a list's elements where no parent row is NULL or empty.
fn selects_all(rows: &[u32], len: usize) -> bool {
    rows.len() == len && rows.iter().enumerate().all(|(i, &r)| r as usize == i)
}

/// Appends one fixed-width value (`None`: NULL) as the `width` low bytes,
/// little endian, of its integer: DuckDB's layout of it (a FLOAT by its
/// bits, a DECIMAL unscaled and rescaled to the version's scale); `false`
/// when the value needs the row path.
#[inline(always)]
fn put_fixed(
    v: Option<i128>,
    rescale: Option<&Rescale>,
    width: usize,
    data: &mut Vec<u8>,
    valid: &mut Vec<bool>,
) -> bool {
    let Some(v) = v else {
        data.resize(data.len() + width, 0);
        valid.push(false);
        return true;
    };
    let Some(v) = rescale.map_or(Some(v), |r| r.apply(v)) else { return false };
    data.extend_from_slice(&v.to_le_bytes()[..width]);
    valid.push(true);
    true
}

/// Appends primitive values (0 where NULL, as `Column::push_null` writes).
fn push_primitive<T: arrow::datatypes::ArrowPrimitiveType>(
    array: &arrow::array::PrimitiveArray<T>,
    rows: &[u32],
    out: &mut Vec<T::Native>,
    valid: &mut Vec<bool>,
) {
    let values = array.values();
    let nulls = array.nulls().filter(|n| n.null_count() > 0);
    if nulls.is_none() && selects_all(rows, values.len()) {
        out.extend_from_slice(values);
        valid.resize(valid.len() + values.len(), true);
        return;
    }
    for &r in rows {
        let v = r != NULL_ROW && nulls.is_none_or(|n| n.is_valid(r as usize));
        out.push(if v { values[r as usize] } else { T::Native::default() });
        valid.push(v);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, BinaryArray, Decimal128Array, Float64Array, Int32Array, Int64Array, StringArray};

    use super::*;
    use crate::infer::{ColumnLimit, DepthLimits};
    use crate::scalar::ScalarParsers;

    fn with_rules<T>(f: impl FnOnce(&Rules<'_>) -> T) -> T {
        let parsers = ScalarParsers::default();
        f(&Rules {
            limits: DepthLimits { arrow_max_depth: 32, parquet_max_depth: 15 },
            scalar_object_key: "v",
            parsers: &parsers,
            timestamp_unit: TimeUnit::Micros,
            policies: None,
            columns: ColumnLimit::NONE,
        })
    }

    /// `array` written whole (every row selected: the bulk copies) and the
    /// same rows written value by value (the first row, then the others:
    /// neither selection is the whole array), each into an empty column of
    /// `ty`; `None` where the writing refused the rows.
    fn whole_and_by_value(conv: &Conv, array: &ArrayRef, ty: &TypeNode) -> (Option<Column>, Option<Column>) {
        with_rules(|rules| {
            let n = array.len() as u32;
            let mut whole = Column::for_type(ty);
            let whole_ok = write(conv, array.as_ref(), &(0..n).collect::<Vec<_>>(), &mut whole, rules);
            let mut by_value = Column::for_type(ty);
            let by_value_ok = write(conv, array.as_ref(), &[0], &mut by_value, rules)
                && write(conv, array.as_ref(), &(1..n).collect::<Vec<_>>(), &mut by_value, rules);
            (whole_ok.then_some(whole), by_value_ok.then_some(by_value))
        })
    }

    fn decimal(values: &[Option<i128>], (p, s): (u8, u8)) -> ArrayRef {
        Arc::new(Decimal128Array::from(values.to_vec()).with_precision_and_scale(p, s as i8).unwrap())
    }

    fn declared(d: Declared) -> TypeNode {
        TypeNode::Scalar(ScalarKind::Declared(d))
    }

    #[test]
    fn a_column_written_whole_is_what_writing_it_value_by_value_gives() {
        let texts = StringArray::from(vec!["skipped", "", "ü€ 𝄞", "a longer text than twelve bytes", "z"]);
        // A slice: its first value does not start at byte 0 of the data.
        let sliced: ArrayRef = Arc::new(texts.slice(1, 4));
        let with_null: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), None, Some("bc")]));
        let blobs: ArrayRef = Arc::new(BinaryArray::from(vec![&b"\x00\xff"[..], b"", b"\x80"]).slice(1, 2));
        let ints: ArrayRef = Arc::new(Int64Array::from(vec![i64::MIN, -1, 0, i64::MAX]));
        let floats: ArrayRef = Arc::new(Float64Array::from(vec![Some(1.5), None, Some(-0.0)]));
        let int32: ArrayRef = Arc::new(Int32Array::from(vec![i32::MIN, 7, i32::MAX]));
        let d15 = (15, 2);
        let cents = decimal(&[Some(-99_999_999_999_999), Some(0), Some(12_345)], d15);
        let cents_null = decimal(&[Some(1), None, Some(-1)], d15);
        let dec = |(precision, scale): (u8, u8)| declared(Declared::Decimal { precision, scale });
        let rescale = |to: (u8, u8)| Conv::Decimal(Rescale::new(d15, to).unwrap());
        let cases: Vec<(&str, Conv, &ArrayRef, TypeNode)> = vec![
            ("text, a slice", Conv::Text, &sliced, TypeNode::Scalar(ScalarKind::Str)),
            ("text with a NULL", Conv::Text, &with_null, TypeNode::Scalar(ScalarKind::Str)),
            ("blob, a slice", Conv::Blob, &blobs, declared(Declared::Blob)),
            ("bigint", Conv::Int, &ints, TypeNode::Scalar(ScalarKind::Int)),
            ("double with a NULL", Conv::Float, &floats, TypeNode::Scalar(ScalarKind::Float)),
            ("integer", Conv::Fixed(Declared::Int32), &int32, declared(Declared::Int32)),
            ("decimal, same scale", rescale(d15), &cents, dec(d15)),
            ("decimal, rescaled", rescale((18, 4)), &cents, dec((18, 4))),
            ("decimal, rescaled to 16 bytes", rescale((38, 4)), &cents, dec((38, 4))),
            ("decimal with a NULL", rescale((18, 4)), &cents_null, dec((18, 4))),
        ];
        for (what, conv, array, ty) in cases {
            let (whole, by_value) = whole_and_by_value(&conv, array, &ty);
            let whole = whole.unwrap_or_else(|| panic!("{what}: refused whole"));
            assert_eq!(Some(&whole), by_value.as_ref(), "{what}");
            assert_eq!(whole.len(), array.len(), "{what}");
        }
        // A value beyond the version's precision is refused either way.
        let (whole, by_value) = whole_and_by_value(&rescale((15, 4)), &cents, &dec((15, 4)));
        assert_eq!((whole, by_value), (None, None));
    }

    /// The one comparison of [`Rescale::apply`] against its definition:
    /// within the reader's precision, and the rescaled value within the
    /// version's, around every power of ten where either bound falls.
    #[test]
    fn a_rescale_takes_exactly_the_values_within_both_precisions() {
        for (from, to) in
            [((15, 2), (15, 2)), ((15, 2), (18, 4)), ((15, 2), (16, 4)), ((9, 0), (38, 20)), ((38, 4), (38, 4))]
        {
            let rescale = Rescale::new(from, to).unwrap();
            let factor = 10i128.pow(u32::from(to.1 - from.1));
            for power in 0..=38u32 {
                let p = 10i128.pow(power);
                for v in [p - 1, p, p + 1, -p + 1, -p, -p - 1] {
                    let defined = (v.unsigned_abs() < 10u128.pow(u32::from(from.0)))
                        .then(|| v.checked_mul(factor))
                        .flatten()
                        .filter(|u| u.unsigned_abs() < 10u128.pow(u32::from(to.0)));
                    assert_eq!(rescale.apply(v), defined, "{v} from {from:?} to {to:?}");
                }
            }
        }
    }

    #[test]
    fn a_text_column_written_whole_keeps_each_value_at_its_own_offsets() {
        let texts = StringArray::from(vec!["skipped", "ab", "", "cde"]);
        let array: ArrayRef = Arc::new(texts.slice(1, 3));
        let mut col = Column::for_type(&TypeNode::Scalar(ScalarKind::Str));
        col.push_text("x");
        let ok = with_rules(|rules| write(&Conv::Text, array.as_ref(), &[0, 1, 2], &mut col, rules));
        assert!(ok);
        let ColumnData::Str { offsets, bytes } = &col.data else { panic!("a text column") };
        assert_eq!((offsets.as_slice(), bytes.as_str()), (&[0, 1, 3, 3, 6][..], "xabcde"));
        assert_eq!(col.valid, [true; 4]);
    }
}
