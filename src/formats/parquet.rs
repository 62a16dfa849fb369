//! Parquet input through arrow-rs: each row becomes a record on the tape,
//! typed by its declared Parquet/Arrow type, so the engine reconciles and
//! versions Parquet columns with the same rules as every other format.
//!
//! Mapping (docs/formats.md has the table): integers → integers (a UInt64
//! beyond int64 becomes its exact text), floats → doubles, decimals with
//! precision ≤ 15 → doubles (exact at that precision) and wider decimals →
//! their exact text, strings → strings, binary → base64 text, dates, times
//! and timestamps keep their type, lists → lists, structs → objects, maps →
//! lists of `{key, value}` objects, dictionaries → their values, intervals and
//! durations → their text. Empty lists and structs without values are no
//! evidence and materialize as NULL, like `[]` and `{}` in JSON.

use std::fs::File;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::datatypes::{
    DataType, Date32Type, Date64Type, Decimal128Type, Float16Type, Float32Type, Float64Type, Int16Type, Int32Type,
    Int64Type, Int8Type, Time32MillisecondType, Time32SecondType, Time64MicrosecondType, Time64NanosecondType,
    TimeUnit, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType,
    UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};

use super::{Batch, RecordMeta, RecordReader};
use crate::error::{Result, SanitizeError};
use crate::value::{Node, Tape, Ticks};

pub struct ParquetReader {
    file: String,
    function: String,
    reader: Option<ParquetRecordBatchReader>,
    /// Rows of the current arrow batch not yet handed out.
    current: Option<(RecordBatch, usize)>,
    rows_seen: u64,
    bytes: u64,
    /// Reused text buffer for values written as text.
    scratch: String,
}

impl ParquetReader {
    /// Opens the file and reads its footer; a truncated file or a corrupt
    /// footer is an error naming the file.
    pub fn open(file: File, path: &str, function: &str, batch_rows: usize) -> Result<Self> {
        let bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
        let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| {
            SanitizeError::input(format!(
                "{function}: cannot read Parquet file \"{path}\": {e} (truncated or not a Parquet file?)"
            ))
        })?;
        let reader = builder
            .with_batch_size(batch_rows.max(1))
            .build()
            .map_err(|e| SanitizeError::input(format!("{function}: cannot read Parquet file \"{path}\": {e}")))?;
        Ok(ParquetReader {
            file: path.to_string(),
            function: function.to_string(),
            reader: Some(reader),
            current: None,
            rows_seen: 0,
            bytes,
            scratch: String::new(),
        })
    }
}

impl RecordReader for ParquetReader {
    fn next_batch(&mut self, batch: &mut Batch, max_records: usize) -> Result<usize> {
        let mut added = 0;
        while added < max_records {
            if self.current.as_ref().is_none_or(|(b, next)| *next >= b.num_rows()) {
                let Some(reader) = self.reader.as_mut() else { break };
                match reader.next() {
                    None => {
                        self.reader = None;
                        break;
                    }
                    Some(Err(e)) => {
                        self.reader = None;
                        return Err(SanitizeError::input(format!(
                            "{}: cannot read Parquet file \"{}\" after row {}: {e}",
                            self.function, self.file, self.rows_seen
                        )));
                    }
                    Some(Ok(b)) => self.current = Some((b, 0)),
                }
                continue;
            }
            let Some((rb, next)) = self.current.as_mut() else { break };
            let row = *next;
            *next += 1;
            self.rows_seen += 1;
            let tape = &mut batch.tape;
            let root = tape.nodes.len();
            let open = tape.open(true);
            let mut evidence = false;
            let schema = rb.schema();
            for (field, column) in schema.fields().iter().zip(rb.columns()) {
                tape.push_key(field.name());
                evidence |= write_value(column, row, tape, &mut self.scratch);
            }
            tape.close(open, rb.num_columns() as u32, evidence);
            tape.push_root(root);
            // Parquet has no lines: `line` is the 1-based row number.
            batch.meta.push(RecordMeta { line: self.rows_seen, byte: 0, error: None });
            added += 1;
        }
        Ok(added)
    }

    fn declared_schema_sample(&mut self, batch: &mut Batch) -> bool {
        let Some(reader) = self.reader.as_ref() else { return false };
        let schema = arrow::record_batch::RecordBatchReader::schema(reader);
        let tape = &mut batch.tape;
        let root = tape.nodes.len();
        let open = tape.open(true);
        let mut evidence = false;
        for field in schema.fields() {
            tape.push_key(field.name());
            evidence |= write_type_sample(field.data_type(), tape);
        }
        tape.close(open, schema.fields().len() as u32, evidence);
        tape.push_root(root);
        batch.meta.push(RecordMeta { line: 0, byte: 0, error: None });
        true
    }

    fn bytes_read(&self) -> u64 {
        // Parquet is read by column chunks; report the file size once done.
        if self.reader.is_none() {
            self.bytes
        } else {
            0
        }
    }
}

/// Writes `array[row]` onto the tape; returns whether it is evidence (a
/// non-null scalar, or a container holding one).
fn write_value(array: &ArrayRef, row: usize, tape: &mut Tape, scratch: &mut String) -> bool {
    if array.is_null(row) {
        tape.push_null();
        return false;
    }
    let node = match array.data_type() {
        DataType::Null => Node::Null,
        DataType::Boolean => Node::Bool(array.as_boolean().value(row)),
        DataType::Int8 => Node::Int(array.as_primitive::<Int8Type>().value(row) as i64),
        DataType::Int16 => Node::Int(array.as_primitive::<Int16Type>().value(row) as i64),
        DataType::Int32 => Node::Int(array.as_primitive::<Int32Type>().value(row) as i64),
        DataType::Int64 => Node::Int(array.as_primitive::<Int64Type>().value(row)),
        DataType::UInt8 => Node::Int(array.as_primitive::<UInt8Type>().value(row) as i64),
        DataType::UInt16 => Node::Int(array.as_primitive::<UInt16Type>().value(row) as i64),
        DataType::UInt32 => Node::Int(array.as_primitive::<UInt32Type>().value(row) as i64),
        DataType::UInt64 => {
            let v = array.as_primitive::<UInt64Type>().value(row);
            match i64::try_from(v) {
                Ok(n) => Node::Int(n),
                Err(_) => return push_text(tape, &v.to_string()),
            }
        }
        DataType::Float16 => Node::Float(array.as_primitive::<Float16Type>().value(row).to_f64()),
        DataType::Float32 => Node::Float(array.as_primitive::<Float32Type>().value(row) as f64),
        DataType::Float64 => Node::Float(array.as_primitive::<Float64Type>().value(row)),
        DataType::Decimal128(precision, scale) => {
            let a = array.as_primitive::<Decimal128Type>();
            if *precision <= 15 {
                Node::Float(a.value(row) as f64 / 10f64.powi(*scale as i32))
            } else {
                return push_text(tape, &a.value_as_string(row));
            }
        }
        DataType::Utf8 => return push_text(tape, array.as_string::<i32>().value(row)),
        DataType::LargeUtf8 => return push_text(tape, array.as_string::<i64>().value(row)),
        DataType::Utf8View => return push_text(tape, array.as_string_view().value(row)),
        DataType::Binary => return push_base64(tape, array.as_binary::<i32>().value(row), scratch),
        DataType::LargeBinary => return push_base64(tape, array.as_binary::<i64>().value(row), scratch),
        DataType::BinaryView => return push_base64(tape, array.as_binary_view().value(row), scratch),
        DataType::FixedSizeBinary(_) => return push_base64(tape, array.as_fixed_size_binary().value(row), scratch),
        DataType::Date32 => Node::Date(array.as_primitive::<Date32Type>().value(row)),
        DataType::Date64 => Node::Date(array.as_primitive::<Date64Type>().value(row).div_euclid(86_400_000) as i32),
        DataType::Time32(TimeUnit::Second) => {
            Node::Time(array.as_primitive::<Time32SecondType>().value(row) as i64 * 1_000_000_000)
        }
        DataType::Time32(_) => Node::Time(array.as_primitive::<Time32MillisecondType>().value(row) as i64 * 1_000_000),
        DataType::Time64(TimeUnit::Nanosecond) => Node::Time(array.as_primitive::<Time64NanosecondType>().value(row)),
        DataType::Time64(_) => Node::Time(array.as_primitive::<Time64MicrosecondType>().value(row) * 1_000),
        DataType::Timestamp(unit, _) => {
            // Zoned and naive timestamps alike are instants in UTC here.
            let (value, unit) = match unit {
                TimeUnit::Second => (array.as_primitive::<TimestampSecondType>().value(row), Ticks::Seconds),
                TimeUnit::Millisecond => (array.as_primitive::<TimestampMillisecondType>().value(row), Ticks::Millis),
                TimeUnit::Microsecond => (array.as_primitive::<TimestampMicrosecondType>().value(row), Ticks::Micros),
                TimeUnit::Nanosecond => (array.as_primitive::<TimestampNanosecondType>().value(row), Ticks::Nanos),
            };
            Node::Timestamp { value, unit }
        }
        DataType::List(_) => return write_list(&array.as_list::<i32>().value(row), tape, scratch),
        DataType::LargeList(_) => return write_list(&array.as_list::<i64>().value(row), tape, scratch),
        DataType::FixedSizeList(_, _) => return write_list(&array.as_fixed_size_list().value(row), tape, scratch),
        DataType::Struct(fields) => {
            let s = array.as_struct();
            let open = tape.open(true);
            let mut evidence = false;
            for (field, column) in fields.iter().zip(s.columns()) {
                tape.push_key(field.name());
                evidence |= write_value(column, row, tape, scratch);
            }
            tape.close(open, fields.len() as u32, evidence);
            return evidence;
        }
        DataType::Map(_, _) => {
            // A map is a list of {key, value} objects (the engine has no MAP).
            let m = array.as_map();
            let entries = m.value(row);
            let open = tape.open(false);
            let mut evidence = false;
            for i in 0..entries.len() {
                let entry = tape.open(true);
                tape.push_key("key");
                let mut e = write_value(entries.column(0), i, tape, scratch);
                tape.push_key("value");
                e |= write_value(entries.column(1), i, tape, scratch);
                tape.close(entry, 2, e);
                evidence |= e;
            }
            tape.close(open, entries.len() as u32, evidence);
            return evidence;
        }
        DataType::Dictionary(key_type, _) => {
            let d = array.as_any_dictionary();
            let Some(key) = dictionary_key(d.keys(), key_type, row) else {
                tape.push_null();
                return false;
            };
            return write_value(d.values(), key, tape, scratch);
        }
        _ => {
            // Intervals, durations and anything newer: their display text.
            scratch.clear();
            let formatter = arrow::util::display::ArrayFormatter::try_new(array.as_ref(), &Default::default());
            match formatter {
                Ok(f) => {
                    use std::fmt::Write;
                    let _ = write!(scratch, "{}", f.value(row));
                }
                Err(_) => scratch.push_str("<unsupported Parquet value>"),
            }
            let text = std::mem::take(scratch);
            let e = push_text(tape, &text);
            *scratch = text;
            return e;
        }
    };
    let evidence = !matches!(node, Node::Null);
    tape.nodes.push(node);
    evidence
}

/// A value of the engine type that `ty` maps to (see the module doc), for
/// [`RecordReader::declared_schema_sample`]. Null-typed columns give NULL:
/// they declare no type.
fn write_type_sample(ty: &DataType, tape: &mut Tape) -> bool {
    let node = match ty {
        DataType::Null => Node::Null,
        DataType::Boolean => Node::Bool(false),
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64 => Node::Int(0),
        DataType::Float16 | DataType::Float32 | DataType::Float64 => Node::Float(0.0),
        DataType::Decimal128(p, _) if *p <= 15 => Node::Float(0.0),
        DataType::Date32 | DataType::Date64 => Node::Date(0),
        DataType::Time32(_) | DataType::Time64(_) => Node::Time(0),
        DataType::Timestamp(_, _) => Node::Timestamp { value: 0, unit: Ticks::Micros },
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            let open = tape.open(false);
            let evidence = write_type_sample(f.data_type(), tape);
            tape.close(open, 1, evidence);
            return evidence;
        }
        DataType::Struct(fields) => {
            let open = tape.open(true);
            let mut evidence = false;
            for f in fields {
                tape.push_key(f.name());
                evidence |= write_type_sample(f.data_type(), tape);
            }
            tape.close(open, fields.len() as u32, evidence);
            return evidence;
        }
        DataType::Map(entries, _) => {
            let DataType::Struct(kv) = entries.data_type() else { return false };
            let list = tape.open(false);
            let entry = tape.open(true);
            let mut evidence = false;
            for (name, f) in ["key", "value"].into_iter().zip(kv.iter()) {
                tape.push_key(name);
                evidence |= write_type_sample(f.data_type(), tape);
            }
            tape.close(entry, kv.len().min(2) as u32, evidence);
            tape.close(list, 1, evidence);
            return evidence;
        }
        DataType::Dictionary(_, values) => return write_type_sample(values, tape),
        // Strings, binary, wide decimals, intervals, durations: text.
        _ => return push_text(tape, ""),
    };
    let evidence = !matches!(node, Node::Null);
    tape.nodes.push(node);
    evidence
}

/// The dictionary index of `row` (one key, not all of them: this runs per value).
fn dictionary_key(keys: &dyn Array, key_type: &DataType, row: usize) -> Option<usize> {
    let k = match key_type {
        DataType::Int8 => keys.as_primitive::<Int8Type>().value(row) as i64,
        DataType::Int16 => keys.as_primitive::<Int16Type>().value(row) as i64,
        DataType::Int32 => keys.as_primitive::<Int32Type>().value(row) as i64,
        DataType::Int64 => keys.as_primitive::<Int64Type>().value(row),
        DataType::UInt8 => keys.as_primitive::<UInt8Type>().value(row) as i64,
        DataType::UInt16 => keys.as_primitive::<UInt16Type>().value(row) as i64,
        DataType::UInt32 => keys.as_primitive::<UInt32Type>().value(row) as i64,
        DataType::UInt64 => i64::try_from(keys.as_primitive::<UInt64Type>().value(row)).ok()?,
        _ => return None,
    };
    usize::try_from(k).ok()
}

fn write_list(values: &ArrayRef, tape: &mut Tape, scratch: &mut String) -> bool {
    let open = tape.open(false);
    let mut evidence = false;
    for i in 0..values.len() {
        evidence |= write_value(values, i, tape, scratch);
    }
    tape.close(open, values.len() as u32, evidence);
    evidence
}

fn push_text(tape: &mut Tape, s: &str) -> bool {
    tape.push_string(s);
    true
}

/// Binary values as standard base64 text.
fn push_base64(tape: &mut Tape, bytes: &[u8], scratch: &mut String) -> bool {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    scratch.clear();
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for (k, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if k <= chunk.len() {
                scratch.push(ALPHABET[(n >> shift & 63) as usize] as char);
            } else {
                scratch.push('=');
            }
        }
    }
    tape.push_string(scratch);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard_alphabet() {
        let mut tape = Tape::default();
        let mut scratch = String::new();
        for (input, expected) in
            [(&b""[..], ""), (b"f", "Zg=="), (b"fo", "Zm8="), (b"foo", "Zm9v"), (b"foobar", "Zm9vYmFy")]
        {
            tape.clear();
            push_base64(&mut tape, input, &mut scratch);
            let Node::Str { start, len } = tape.nodes[0] else { panic!() };
            assert_eq!(tape.text_of(start, len), expected);
        }
    }
}
