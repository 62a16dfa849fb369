//! Parquet VARIANT columns, decoded onto the tape as the values they hold.
//!
//! A VARIANT column is a group `{metadata, value, typed_value}`: `metadata`
//! is a key dictionary, `value` a value in the Variant binary encoding
//! (Parquet's VariantEncoding.md), and the optional `typed_value` holds
//! shredded parts of it as ordinary Parquet columns (VariantShredding.md).
//! Read as plain columns, a user would get two BLOBs per row; decoded, each
//! row is the object, list or scalar it stands for, so the engine infers,
//! reconciles and versions it like the same data in JSON (DuckDB's
//! `read_parquet` decodes them too).
//!
//! Every length and offset is checked against the bytes before it is used;
//! a value that does not decode is reported as `Malformed`, and the reader
//! then keeps the raw columns instead (no byte is lost).

use arrow::array::{Array, ArrayRef, AsArray, StructArray};
use arrow::datatypes::{DataType, Field};

use crate::value::{Declared, Node, Tape, TimeUnit};

/// Deeper nesting than this is treated as malformed: the decoder recurses,
/// and a crafted value must not exhaust the stack.
const MAX_DEPTH: usize = 512;

/// A value whose bytes do not follow the Variant encoding.
#[derive(Debug, PartialEq)]
pub struct Malformed;

type Decoded<T> = std::result::Result<T, Malformed>;

/// Writes a shredded column's primitive `typed_value` (an ordinary Parquet
/// value) at a row; returns whether it is evidence. The Parquet reader's own
/// writer, passed in so that both read typed values the same way.
pub type TypedWriter<'w> = dyn FnMut(&Field, &ArrayRef, usize, &mut Tape) -> bool + 'w;

/// Writes row `row` of the VARIANT column `column` onto the tape. Returns
/// whether the value is evidence (holds a non-null scalar). On `Malformed`
/// the tape may hold a partial value: the caller truncates it.
pub fn write_variant(column: &StructArray, row: usize, tape: &mut Tape, typed: &mut TypedWriter<'_>) -> Decoded<bool> {
    if column.is_null(row) {
        tape.push_null();
        return Ok(false);
    }
    let metadata = column.column_by_name("metadata").and_then(|m| bytes_at(m, row)).ok_or(Malformed)?;
    let keys = Dictionary::parse(metadata)?;
    let mut cx = Context { keys, typed, budget: 0 };
    match write_shredded(&mut cx, column, row, tape, 0)? {
        Some(evidence) => Ok(evidence),
        // Neither part holds a value: a missing value at the top is NULL.
        None => {
            tape.push_null();
            Ok(false)
        }
    }
}

struct Context<'a, 'w> {
    keys: Dictionary<'a>,
    typed: &'a mut TypedWriter<'w>,
    /// Values the current `value` bytes may still decode into. Each value
    /// of a valid encoding has a header byte of its own, so there are at
    /// most as many as bytes; object fields are found by offset, and
    /// hostile offsets that share one child would otherwise multiply the
    /// output (2^40 values from 280 bytes).
    budget: usize,
}

/// The bytes of a binary column at a row, `None` when NULL.
fn bytes_at(array: &ArrayRef, row: usize) -> Option<&[u8]> {
    if array.is_null(row) {
        return None;
    }
    match array.data_type() {
        DataType::Binary => Some(array.as_binary::<i32>().value(row)),
        DataType::LargeBinary => Some(array.as_binary::<i64>().value(row)),
        DataType::BinaryView => Some(array.as_binary_view().value(row)),
        DataType::FixedSizeBinary(_) => Some(array.as_fixed_size_binary().value(row)),
        _ => None,
    }
}

/// A `{value, typed_value}` group at a row: `None` when both are NULL (a
/// field missing from a shredded object).
fn write_shredded(
    cx: &mut Context<'_, '_>,
    group: &StructArray,
    row: usize,
    tape: &mut Tape,
    depth: usize,
) -> Decoded<Option<bool>> {
    if depth > MAX_DEPTH {
        return Err(Malformed);
    }
    let value = group.column_by_name("value").and_then(|v| bytes_at(v, row));
    let typed = group.column_by_name("typed_value").filter(|t| t.is_valid(row));
    let Some(typed) = typed else {
        return match value {
            Some(bytes) => {
                cx.budget = bytes.len();
                decode_value(cx, bytes, tape, depth).map(Some)
            }
            None => Ok(None),
        };
    };
    let field_index = group.fields().iter().position(|f| f.name() == "typed_value").ok_or(Malformed)?;
    let field = group.fields()[field_index].clone();
    match typed.data_type() {
        DataType::Struct(fields) => {
            let shredded = typed.as_struct();
            let open = tape.open(true);
            let mut len = 0u32;
            let mut evidence = false;
            for (f, child) in fields.iter().zip(shredded.columns()) {
                let DataType::Struct(_) = child.data_type() else { return Err(Malformed) };
                let child = child.as_struct();
                if child.is_null(row) {
                    continue;
                }
                tape.push_key(f.name());
                match write_shredded(cx, child, row, tape, depth + 1)? {
                    Some(e) => {
                        evidence |= e;
                        len += 1;
                    }
                    None => {
                        tape.nodes.pop();
                    }
                }
            }
            // A partly shredded object: the fields not shredded are in `value`.
            if let Some(bytes) = value {
                let skip = |key: &str| fields.iter().any(|f| f.name() == key);
                cx.budget = bytes.len();
                let (n, e) = decode_object_fields(cx, bytes, tape, depth, &skip)?;
                len += n;
                evidence |= e;
            }
            tape.close(open, len, evidence);
            Ok(Some(evidence))
        }
        DataType::List(_) | DataType::LargeList(_) => {
            let elements = match typed.data_type() {
                DataType::List(_) => typed.as_list::<i32>().value(row),
                _ => typed.as_list::<i64>().value(row),
            };
            let DataType::Struct(_) = elements.data_type() else { return Err(Malformed) };
            let elements = elements.as_struct();
            let open = tape.open(false);
            let mut evidence = false;
            for i in 0..elements.len() {
                match write_shredded(cx, elements, i, tape, depth + 1)? {
                    Some(e) => evidence |= e,
                    None => tape.push_null(),
                }
            }
            tape.close(open, elements.len() as u32, evidence);
            Ok(Some(evidence))
        }
        _ => Ok(Some((cx.typed)(&field, typed, row, tape))),
    }
}

/// The key dictionary of a variant's metadata.
struct Dictionary<'a> {
    offset_size: usize,
    count: usize,
    /// `count + 1` offsets of `offset_size` bytes each.
    offsets: &'a [u8],
    strings: &'a [u8],
}

impl<'a> Dictionary<'a> {
    fn parse(bytes: &'a [u8]) -> Decoded<Self> {
        let header = *bytes.first().ok_or(Malformed)?;
        if header & 0x0f != 1 {
            return Err(Malformed); // only version 1 exists
        }
        let offset_size = usize::from(header >> 6) + 1;
        let count = read_le(bytes, 1, offset_size)?;
        let offsets_start = 1 + offset_size;
        let offsets_len = count.checked_add(1).and_then(|n| n.checked_mul(offset_size)).ok_or(Malformed)?;
        let strings_start = offsets_start.checked_add(offsets_len).ok_or(Malformed)?;
        let offsets = bytes.get(offsets_start..strings_start).ok_or(Malformed)?;
        let strings = &bytes[strings_start..];
        Ok(Dictionary { offset_size, count, offsets, strings })
    }

    fn key(&self, id: usize) -> Decoded<&'a str> {
        if id >= self.count {
            return Err(Malformed);
        }
        let start = read_le(self.offsets, id * self.offset_size, self.offset_size)?;
        let end = read_le(self.offsets, (id + 1) * self.offset_size, self.offset_size)?;
        let bytes = self.strings.get(start..end).ok_or(Malformed)?;
        std::str::from_utf8(bytes).map_err(|_| Malformed)
    }
}

/// An unsigned little-endian integer of `width` (1 to 4) bytes at `at`.
fn read_le(bytes: &[u8], at: usize, width: usize) -> Decoded<usize> {
    let end = at.checked_add(width).ok_or(Malformed)?;
    let b = bytes.get(at..end).ok_or(Malformed)?;
    Ok(b.iter().rev().fold(0usize, |n, &x| (n << 8) | usize::from(x)))
}

fn fixed<const N: usize>(bytes: &[u8], at: usize) -> Decoded<[u8; N]> {
    let end = at.checked_add(N).ok_or(Malformed)?;
    bytes.get(at..end).and_then(|b| b.try_into().ok()).ok_or(Malformed)
}

/// A value in the Variant binary encoding; `bytes` starts at its header and
/// may run past its end (an object's fields are found by offset).
fn decode_value(cx: &mut Context<'_, '_>, bytes: &[u8], tape: &mut Tape, depth: usize) -> Decoded<bool> {
    if depth > MAX_DEPTH {
        return Err(Malformed);
    }
    cx.budget = cx.budget.checked_sub(1).ok_or(Malformed)?;
    let header = *bytes.first().ok_or(Malformed)?;
    let info = header >> 2;
    match header & 0x03 {
        0 => decode_primitive(info, &bytes[1..], tape),
        1 => {
            let text = bytes.get(1..1 + usize::from(info)).ok_or(Malformed)?;
            tape.push_string(std::str::from_utf8(text).map_err(|_| Malformed)?);
            Ok(true)
        }
        2 => {
            let open = tape.open(true);
            let (len, evidence) = decode_object_fields(cx, bytes, tape, depth, &|_| false)?;
            tape.close(open, len, evidence);
            Ok(evidence)
        }
        _ => {
            let offset_size = usize::from(info & 0x03) + 1;
            let count_size = if info & 0x04 != 0 { 4 } else { 1 };
            let count = read_le(bytes, 1, count_size)?;
            let offsets_start = 1 + count_size;
            let values = values_after(bytes, offsets_start, count, offset_size)?;
            let open = tape.open(false);
            let mut evidence = false;
            for i in 0..count {
                let start = read_le(bytes, offsets_start + i * offset_size, offset_size)?;
                let end = read_le(bytes, offsets_start + (i + 1) * offset_size, offset_size)?;
                let element = values.get(start..end).ok_or(Malformed)?;
                evidence |= decode_value(cx, element, tape, depth + 1)?;
            }
            tape.close(open, count as u32, evidence);
            Ok(evidence)
        }
    }
}

/// The fields of the object value at the start of `bytes`, as keys and
/// values on the tape (inside a container the caller opened), leaving out
/// the keys `skip` names. Returns how many it wrote and whether any is
/// evidence.
fn decode_object_fields(
    cx: &mut Context<'_, '_>,
    bytes: &[u8],
    tape: &mut Tape,
    depth: usize,
    skip: &dyn Fn(&str) -> bool,
) -> Decoded<(u32, bool)> {
    let header = *bytes.first().ok_or(Malformed)?;
    if header & 0x03 != 2 {
        return Err(Malformed);
    }
    let info = header >> 2;
    let offset_size = usize::from(info & 0x03) + 1;
    let id_size = usize::from((info >> 2) & 0x03) + 1;
    let count_size = if info & 0x10 != 0 { 4 } else { 1 };
    let count = read_le(bytes, 1, count_size)?;
    let ids_start = 1 + count_size;
    let offsets_start = count.checked_mul(id_size).and_then(|n| n.checked_add(ids_start)).ok_or(Malformed)?;
    let values = values_after(bytes, offsets_start, count, offset_size)?;
    let mut written = 0;
    let mut evidence = false;
    for i in 0..count {
        let key = cx.keys.key(read_le(bytes, ids_start + i * id_size, id_size)?)?;
        if skip(key) {
            continue;
        }
        let start = read_le(bytes, offsets_start + i * offset_size, offset_size)?;
        let value = values.get(start..).ok_or(Malformed)?;
        tape.push_key(key);
        evidence |= decode_value(cx, value, tape, depth + 1)?;
        written += 1;
    }
    Ok((written, evidence))
}

/// The values of a container: they follow its `count + 1` offsets of
/// `offset_size` bytes, which start at `offsets_start`.
fn values_after(bytes: &[u8], offsets_start: usize, count: usize, offset_size: usize) -> Decoded<&[u8]> {
    let start = count
        .checked_add(1)
        .and_then(|n| n.checked_mul(offset_size))
        .and_then(|n| n.checked_add(offsets_start))
        .ok_or(Malformed)?;
    bytes.get(start..).ok_or(Malformed)
}

fn declared(tape: &mut Tape, kind: Declared, bits: u64) -> Decoded<bool> {
    tape.nodes.push(Node::Declared { kind, bits });
    Ok(true)
}

fn node(tape: &mut Tape, node: Node) -> Decoded<bool> {
    tape.nodes.push(node);
    Ok(true)
}

/// A primitive value of type id `type_id`; `b` starts after the header.
fn decode_primitive(type_id: u8, b: &[u8], tape: &mut Tape) -> Decoded<bool> {
    match type_id {
        0 => {
            tape.push_null();
            Ok(false)
        }
        1 => node(tape, Node::Bool(true)),
        2 => node(tape, Node::Bool(false)),
        3 => declared(tape, Declared::Int8, i8::from_le_bytes(fixed(b, 0)?) as i64 as u64),
        4 => declared(tape, Declared::Int16, i16::from_le_bytes(fixed(b, 0)?) as i64 as u64),
        5 => declared(tape, Declared::Int32, i32::from_le_bytes(fixed(b, 0)?) as i64 as u64),
        6 => node(tape, Node::Int(i64::from_le_bytes(fixed(b, 0)?))),
        7 => node(tape, Node::Float(f64::from_le_bytes(fixed(b, 0)?))),
        8 => decimal(tape, b, i32::from_le_bytes(fixed(b, 1)?).into()),
        9 => decimal(tape, b, i64::from_le_bytes(fixed(b, 1)?).into()),
        10 => decimal(tape, b, i128::from_le_bytes(fixed(b, 1)?)),
        11 => node(tape, Node::Date(i32::from_le_bytes(fixed(b, 0)?))),
        // With and without a time zone alike: instants in UTC, as the Parquet
        // reader reads its timestamps.
        12 | 13 => node(tape, Node::Timestamp { value: i64::from_le_bytes(fixed(b, 0)?), unit: TimeUnit::Micros }),
        14 => declared(tape, Declared::Float32, u32::from_le_bytes(fixed(b, 0)?) as u64),
        15 => {
            let bytes = sized(b)?;
            let at = tape.push_bytes(bytes) as u64;
            declared(tape, Declared::Blob, at | (bytes.len() as u64) << 32)
        }
        16 => {
            tape.push_string(std::str::from_utf8(sized(b)?).map_err(|_| Malformed)?);
            Ok(true)
        }
        17 => {
            let micros = i64::from_le_bytes(fixed(b, 0)?);
            node(tape, Node::Time(micros.saturating_mul(1_000).rem_euclid(86_400_000_000_000)))
        }
        18 | 19 => node(tape, Node::Timestamp { value: i64::from_le_bytes(fixed(b, 0)?), unit: TimeUnit::Nanos }),
        20 => {
            let uuid: [u8; 16] = fixed(b, 0)?;
            let at = tape.push_bytes(&uuid) as u64;
            declared(tape, Declared::Uuid, at)
        }
        _ => Err(Malformed),
    }
}

/// A binary or string primitive: a 4-byte length, then the bytes.
fn sized(b: &[u8]) -> Decoded<&[u8]> {
    let len = read_le(b, 0, 4)?;
    b.get(4..4usize.checked_add(len).ok_or(Malformed)?).ok_or(Malformed)
}

/// A decimal: its scale byte is `b[0]`. The precision is the narrowest of
/// the encoding's widths (9, 18, 38 digits) that holds the value; beyond 38
/// digits it keeps its exact text.
fn decimal(tape: &mut Tape, b: &[u8], unscaled: i128) -> Decoded<bool> {
    let scale = *b.first().ok_or(Malformed)?;
    if scale > 38 {
        return Err(Malformed);
    }
    let digits = unscaled.unsigned_abs().checked_ilog10().map_or(1, |d| d + 1) as u8;
    let Some(precision) = [9u8, 18, 38].into_iter().find(|&p| p >= digits.max(scale)) else {
        let mut text = String::new();
        crate::value::write_decimal(unscaled, scale, &mut text);
        tape.push_string(&text);
        return Ok(true);
    };
    let kind = Declared::Decimal { precision, scale };
    if precision <= 18 {
        declared(tape, kind, unscaled as i64 as u64)
    } else {
        let at = tape.push_bytes(&unscaled.to_le_bytes()) as u64;
        declared(tape, kind, at)
    }
}

#[cfg(test)]
#[path = "variant_tests.rs"]
mod tests;
