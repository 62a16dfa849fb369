//! A scan's chunk as an Arrow record batch, typed as DuckDB types the same
//! columns (ffi/types.rs), so that the parquet crate writes what DuckDB's
//! `COPY ... TO (FORMAT parquet)` writes for them: TIMESTAMPTZ as
//! `TIMESTAMP(MICROS, isAdjustedToUTC = true)`, standard 3-level lists named
//! `list`/`element`, maps as `key_value`, UUIDs as 16-byte UUIDs.
//!
//! The columns are copied once per chunk (an allocation per column, never
//! per value): Arrow wants its own buffers, and the chunk's are reused by
//! the scan for the next chunk.

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, FixedSizeBinaryArray, Float32Array,
    Float64Array, Int16Array, Int32Array, Int64Array, Int8Array, ListArray, MapArray, RecordBatch, StringArray,
    StructArray, Time64MicrosecondArray, TimestampMicrosecondArray, TimestampMillisecondArray,
    TimestampNanosecondArray, TimestampSecondArray, UInt16Array, UInt32Array, UInt64Array, UInt8Array,
};
use arrow::buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema, SchemaRef, TimeUnit as ArrowUnit};

use crate::error::{Result, SanitizeError};
use crate::infer::{Declared, ScalarKind, StructNode, TimeUnit, TypeNode};
use crate::registry::naming::EtlColumn;
use crate::route::{Column, ColumnData};
use crate::scan::{Chunk, ColumnSource, ScanPlan};

/// The time zone of TIMESTAMPTZ columns (the engine's timestamps are UTC).
const UTC: &str = "UTC";

/// The Arrow schema of a plan's output: its result columns
/// (scan/layout.rs), as a scan declares them to DuckDB.
pub fn arrow_schema(plan: &ScanPlan) -> Result<SchemaRef> {
    let mut fields: Vec<Field> = Vec::new();
    for column in plan.result_columns() {
        fields.push(field(column.name, &column.ty, true).map_err(|why| unwritable(column.name, &why))?);
    }
    Ok(Arc::new(Schema::new(fields)))
}

fn unwritable(column: &str, why: &str) -> SanitizeError {
    SanitizeError::input(format!("column \"{column}\" cannot be written to Parquet: {why}"))
}

/// The chunk's rows as a record batch of `schema` (made by
/// [`arrow_schema`] for the same plan). `first`: the chunk holds the
/// output's first row, which carries the registry and the drift events.
pub fn chunk_batch(plan: &ScanPlan, schema: &SchemaRef, chunk: &Chunk, first: bool) -> Result<RecordBatch> {
    let rows = chunk.rows;
    let mut arrays: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
    let first_only = |text: &str| StringArray::from_iter((0..rows).map(|i| (first && i == 0).then_some(text)));
    for (column, field) in plan.result_columns().into_iter().zip(schema.fields()) {
        let array: ArrayRef = match column.source {
            ColumnSource::Chunk(i) => {
                let data = chunk.columns.get(i).ok_or_else(|| SanitizeError::internal("a chunk without a column"))?;
                column_array(&column.ty, data).map_err(|why| unwritable(field.name(), &why))?
            }
            ColumnSource::Etl(EtlColumn::SourceFile) => {
                let runs = chunk.file_runs();
                let bytes = runs.iter().map(|&(file, n)| plan.display_files[file].len() * n).sum();
                let mut names = arrow::array::StringBuilder::with_capacity(rows, bytes);
                for &(file, n) in runs {
                    (0..n).for_each(|_| names.append_value(&plan.display_files[file]));
                }
                Arc::new(names.finish())
            }
            ColumnSource::Etl(EtlColumn::IngestionTimestamp) => {
                Arc::new(TimestampMicrosecondArray::from(vec![plan.started_at_micros; rows]).with_timezone(UTC))
            }
            ColumnSource::Etl(EtlColumn::SchemaRegistry) => Arc::new(first_only(&plan.registry_json)),
            ColumnSource::Etl(EtlColumn::SchemaDrifts) => Arc::new(first_only(&plan.drifts_json)),
        };
        arrays.push(array);
    }
    RecordBatch::try_new(Arc::clone(schema), arrays)
        .map_err(|e| SanitizeError::internal(format!("a chunk does not fit its Arrow schema: {e}")))
}

/// The Arrow type of an engine type (DuckDB's type of it, ffi/types.rs).
fn data_type(t: &TypeNode) -> std::result::Result<DataType, String> {
    Ok(match t {
        TypeNode::Scalar(k) => scalar_type(*k)?,
        TypeNode::List(e) => DataType::List(element_field(e)?),
        TypeNode::Map(entry) => match TypeNode::map_key_value(entry) {
            Some((k, v)) => DataType::Map(map_entries_field(k, v)?, false),
            None => DataType::List(element_field(entry)?),
        },
        TypeNode::Struct(s) => DataType::Struct(struct_fields(s)?),
    })
}

/// A field of type `t`; a UUID's field carries Arrow's canonical
/// `arrow.uuid` extension, which the parquet crate writes as Parquet's UUID.
fn field(name: &str, t: &TypeNode, nullable: bool) -> std::result::Result<Field, String> {
    let f = Field::new(name, data_type(t)?, nullable);
    Ok(match t {
        TypeNode::Scalar(ScalarKind::Declared(Declared::Uuid)) => {
            f.with_metadata([("ARROW:extension:name".to_string(), "arrow.uuid".to_string())].into_iter().collect())
        }
        _ => f,
    })
}

fn element_field(e: &TypeNode) -> std::result::Result<FieldRef, String> {
    Ok(Arc::new(field("element", e, true)?))
}

fn map_entries_field(k: &TypeNode, v: &TypeNode) -> std::result::Result<FieldRef, String> {
    let fields = Fields::from(vec![field("key", k, false)?, field("value", v, true)?]);
    Ok(Arc::new(Field::new("key_value", DataType::Struct(fields), false)))
}

fn struct_fields(s: &StructNode) -> std::result::Result<Fields, String> {
    if s.outputs.is_empty() {
        return Err("a STRUCT without fields (Parquet has no empty group)".into());
    }
    s.output_versions().map(|v| field(&v.output_name, &v.ty, true)).collect()
}

fn scalar_type(k: ScalarKind) -> std::result::Result<DataType, String> {
    Ok(match k {
        ScalarKind::Bool => DataType::Boolean,
        ScalarKind::Int => DataType::Int64,
        ScalarKind::Float => DataType::Float64,
        ScalarKind::Str | ScalarKind::Json => DataType::Utf8,
        ScalarKind::Date => DataType::Date32,
        ScalarKind::Time => DataType::Time64(ArrowUnit::Microsecond),
        // TIMESTAMPTZ; the other units are DuckDB's TIMESTAMP_MS/_NS/_S, local.
        ScalarKind::Timestamp(TimeUnit::Micros) => DataType::Timestamp(ArrowUnit::Microsecond, Some(UTC.into())),
        ScalarKind::Timestamp(TimeUnit::Millis) => DataType::Timestamp(ArrowUnit::Millisecond, None),
        ScalarKind::Timestamp(TimeUnit::Nanos) => DataType::Timestamp(ArrowUnit::Nanosecond, None),
        ScalarKind::Timestamp(TimeUnit::Seconds) => DataType::Timestamp(ArrowUnit::Second, None),
        ScalarKind::Declared(d) => match d {
            Declared::Int8 => DataType::Int8,
            Declared::Int16 => DataType::Int16,
            Declared::Int32 => DataType::Int32,
            Declared::UInt8 => DataType::UInt8,
            Declared::UInt16 => DataType::UInt16,
            Declared::UInt32 => DataType::UInt32,
            Declared::UInt64 => DataType::UInt64,
            Declared::Float32 => DataType::Float32,
            Declared::Decimal { precision, scale } => DataType::Decimal128(precision, scale as i8),
            Declared::Blob => DataType::Binary,
            Declared::Uuid => DataType::FixedSizeBinary(16),
            // DuckDB's INTERVAL has microseconds; Parquet's has milliseconds.
            Declared::Interval => {
                return Err("INTERVAL has microseconds, which Parquet's INTERVAL (milliseconds) cannot hold; cast it in a COPY instead".into())
            }
        },
    })
}

fn nulls(valid: &[bool]) -> Option<NullBuffer> {
    (!valid.iter().all(|v| *v)).then(|| NullBuffer::from(valid.to_vec()))
}

fn offsets(offsets: &[u32]) -> std::result::Result<OffsetBuffer<i32>, String> {
    let converted: Vec<i32> = offsets
        .iter()
        .map(|o| i32::try_from(*o).map_err(|_| "a chunk holds more than 2 GiB in one column".to_string()))
        .collect::<std::result::Result<_, _>>()?;
    Ok(OffsetBuffer::new(ScalarBuffer::from(converted)))
}

/// One column's rows as an Arrow array of [`data_type`]`(t)`.
fn column_array(t: &TypeNode, c: &Column) -> std::result::Result<ArrayRef, String> {
    let n = nulls(&c.valid);
    let arrow_error = |e: arrow::error::ArrowError| e.to_string();
    Ok(match (&c.data, t) {
        (ColumnData::Bool(v), _) => Arc::new(BooleanArray::new(BooleanBuffer::from(v.as_slice()), n)),
        (ColumnData::Int(v), TypeNode::Scalar(k)) => {
            let values = ScalarBuffer::from(v.clone());
            match k {
                ScalarKind::Timestamp(TimeUnit::Micros) => {
                    Arc::new(TimestampMicrosecondArray::new(values, n).with_timezone(UTC))
                }
                ScalarKind::Timestamp(TimeUnit::Millis) => Arc::new(TimestampMillisecondArray::new(values, n)),
                ScalarKind::Timestamp(TimeUnit::Nanos) => Arc::new(TimestampNanosecondArray::new(values, n)),
                ScalarKind::Timestamp(TimeUnit::Seconds) => Arc::new(TimestampSecondArray::new(values, n)),
                ScalarKind::Time => Arc::new(Time64MicrosecondArray::new(values, n)),
                _ => Arc::new(Int64Array::new(values, n)),
            }
        }
        (ColumnData::Date(v), _) => Arc::new(Date32Array::new(ScalarBuffer::from(v.clone()), n)),
        (ColumnData::Float(v), _) => Arc::new(Float64Array::new(ScalarBuffer::from(v.clone()), n)),
        (ColumnData::Str { offsets: o, bytes }, _) => {
            Arc::new(StringArray::try_new(offsets(o)?, Buffer::from(bytes.as_bytes()), n).map_err(arrow_error)?)
        }
        (ColumnData::Binary { offsets: o, bytes }, _) => {
            Arc::new(BinaryArray::try_new(offsets(o)?, Buffer::from(bytes.as_slice()), n).map_err(arrow_error)?)
        }
        (ColumnData::Fixed { data, .. }, TypeNode::Scalar(ScalarKind::Declared(d))) => fixed_array(*d, data, n)?,
        (ColumnData::List { offsets: o, child }, TypeNode::List(e)) => Arc::new(
            ListArray::try_new(element_field(e)?, offsets(o)?, column_array(e, child)?, n).map_err(arrow_error)?,
        ),
        (ColumnData::List { offsets: o, child }, TypeNode::Map(entry)) => match TypeNode::map_key_value(entry) {
            Some((k, v)) => {
                let field = map_entries_field(k, v)?;
                let ColumnData::Struct { children } = &child.data else {
                    return Err("a MAP whose entries are not key-value pairs".into());
                };
                let [keys, values] = children.as_slice() else {
                    return Err("a MAP entry without exactly a key and a value".into());
                };
                let DataType::Struct(fields) = field.data_type() else { unreachable!("map_entries_field is a struct") };
                let entries =
                    StructArray::try_new(fields.clone(), vec![column_array(k, keys)?, column_array(v, values)?], None)
                        .map_err(arrow_error)?;
                Arc::new(MapArray::try_new(field, offsets(o)?, entries, n, false).map_err(arrow_error)?)
            }
            None => Arc::new(
                ListArray::try_new(element_field(entry)?, offsets(o)?, column_array(entry, child)?, n)
                    .map_err(arrow_error)?,
            ),
        },
        (ColumnData::Struct { children }, TypeNode::Struct(s)) => {
            let fields = struct_fields(s)?;
            let arrays = s
                .output_versions()
                .zip(children)
                .map(|(v, child)| column_array(&v.ty, child))
                .collect::<std::result::Result<Vec<_>, _>>()?;
            Arc::new(StructArray::try_new(fields, arrays, n).map_err(arrow_error)?)
        }
        _ => return Err("its buffer does not match its type (please report)".into()),
    })
}

/// A declared fixed-width column (DuckDB's physical layout, little endian)
/// as its Arrow array.
fn fixed_array(d: Declared, data: &[u8], n: Option<NullBuffer>) -> std::result::Result<ArrayRef, String> {
    fn le<const W: usize>(data: &[u8]) -> impl Iterator<Item = [u8; W]> + '_ {
        data.chunks_exact(W).map(|c| c.try_into().unwrap_or([0; W]))
    }
    Ok(match d {
        Declared::Int8 => Arc::new(Int8Array::new(le::<1>(data).map(i8::from_le_bytes).collect(), n)),
        Declared::Int16 => Arc::new(Int16Array::new(le::<2>(data).map(i16::from_le_bytes).collect(), n)),
        Declared::Int32 => Arc::new(Int32Array::new(le::<4>(data).map(i32::from_le_bytes).collect(), n)),
        Declared::UInt8 => Arc::new(UInt8Array::new(le::<1>(data).map(u8::from_le_bytes).collect(), n)),
        Declared::UInt16 => Arc::new(UInt16Array::new(le::<2>(data).map(u16::from_le_bytes).collect(), n)),
        Declared::UInt32 => Arc::new(UInt32Array::new(le::<4>(data).map(u32::from_le_bytes).collect(), n)),
        Declared::UInt64 => Arc::new(UInt64Array::new(le::<8>(data).map(u64::from_le_bytes).collect(), n)),
        Declared::Float32 => Arc::new(Float32Array::new(le::<4>(data).map(f32::from_le_bytes).collect(), n)),
        Declared::Decimal { precision, scale } => {
            // Sign-extend DuckDB's 2-, 4-, 8- or 16-byte layout to i128.
            let width = d.width();
            let values: Vec<i128> = data
                .chunks_exact(width)
                .map(|c| {
                    let fill = if c[width - 1] & 0x80 != 0 { 0xFF } else { 0 };
                    let mut wide = [fill; 16];
                    wide[..width].copy_from_slice(c);
                    i128::from_le_bytes(wide)
                })
                .collect();
            Arc::new(
                Decimal128Array::new(ScalarBuffer::from(values), n)
                    .with_precision_and_scale(precision, scale as i8)
                    .map_err(|e| e.to_string())?,
            )
        }
        Declared::Uuid => {
            // DuckDB's layout flips the top bit of the 128-bit integer
            // (route/column.rs); Parquet's UUID is the 16 bytes in text order.
            let bytes: Vec<u8> =
                le::<16>(data).flat_map(|c| (u128::from_le_bytes(c) ^ (1u128 << 127)).to_be_bytes()).collect();
            Arc::new(FixedSizeBinaryArray::try_new(16, Buffer::from(bytes), n).map_err(|e| e.to_string())?)
        }
        Declared::Blob | Declared::Interval => {
            return Err(scalar_type(ScalarKind::Declared(d)).err().unwrap_or_default())
        }
    })
}
