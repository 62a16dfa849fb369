//! Typed column buffers for one output chunk (at most 2048 rows), shaped like
//! the output schema. They are cleared, not freed, between chunks, so a
//! steady-state scan allocates nothing per value.

use crate::infer::{Classified, Declared, ScalarKind, StructNode, TypeNode, ValueClass};
use crate::scalar::Parsed;
use crate::source::PartitionValue;
use crate::value::{decimal_value, sixteen, write_compact_json, DeclaredBits, Node};

#[derive(Debug, Clone, PartialEq)]
pub enum ColumnData {
    Bool(Vec<bool>),
    /// BIGINT, and timestamps and times in their unit.
    Int(Vec<i64>),
    /// DATE: days since the epoch.
    Date(Vec<i32>),
    Float(Vec<f64>),
    /// UTF-8 text; row i is `bytes[offsets[i]..offsets[i + 1]]`.
    Str {
        offsets: Vec<u32>,
        bytes: String,
    },
    /// Declared fixed-width values in DuckDB's physical layout, `width`
    /// bytes per row (TINYINT … UBIGINT, FLOAT, DECIMAL, UUID, INTERVAL).
    Fixed {
        width: usize,
        data: Vec<u8>,
    },
    /// BLOB; row i is `bytes[offsets[i]..offsets[i + 1]]`.
    Binary {
        offsets: Vec<u32>,
        bytes: Vec<u8>,
    },
    /// Row i holds child rows `offsets[i]..offsets[i + 1]` (lists and maps).
    List {
        offsets: Vec<u32>,
        child: Box<Column>,
    },
    Struct {
        children: Vec<Column>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub valid: Vec<bool>,
    pub data: ColumnData,
}

impl Column {
    pub fn for_type(t: &TypeNode) -> Column {
        let data = match t {
            TypeNode::Scalar(k) => match k {
                ScalarKind::Bool => ColumnData::Bool(Vec::new()),
                ScalarKind::Int | ScalarKind::Timestamp(_) | ScalarKind::Time => ColumnData::Int(Vec::new()),
                ScalarKind::Date => ColumnData::Date(Vec::new()),
                ScalarKind::Float => ColumnData::Float(Vec::new()),
                ScalarKind::Str | ScalarKind::Json => ColumnData::Str { offsets: vec![0], bytes: String::new() },
                ScalarKind::Declared(Declared::Blob) => ColumnData::Binary { offsets: vec![0], bytes: Vec::new() },
                ScalarKind::Declared(d) => ColumnData::Fixed { width: d.width(), data: Vec::new() },
            },
            TypeNode::List(e) | TypeNode::Map(e) => {
                ColumnData::List { offsets: vec![0], child: Box::new(Column::for_type(e)) }
            }
            TypeNode::Struct(s) => ColumnData::Struct { children: columns_for_struct(s) },
        };
        Column { valid: Vec::new(), data }
    }

    pub fn len(&self) -> usize {
        self.valid.len()
    }

    /// Empties the column, keeping its capacity.
    pub fn clear(&mut self) {
        self.valid.clear();
        match &mut self.data {
            ColumnData::Bool(v) => v.clear(),
            ColumnData::Int(v) => v.clear(),
            ColumnData::Date(v) => v.clear(),
            ColumnData::Float(v) => v.clear(),
            ColumnData::Fixed { data, .. } => data.clear(),
            ColumnData::Str { offsets, bytes } => {
                offsets.truncate(1);
                bytes.clear();
            }
            ColumnData::Binary { offsets, bytes } => {
                offsets.truncate(1);
                bytes.clear();
            }
            ColumnData::List { offsets, child } => {
                offsets.truncate(1);
                child.clear();
            }
            ColumnData::Struct { children } => children.iter_mut().for_each(Column::clear),
        }
    }

    /// Appends a null row (struct children get null rows too, so every
    /// child stays as long as its parent).
    pub fn push_null(&mut self) {
        self.valid.push(false);
        match &mut self.data {
            ColumnData::Bool(v) => v.push(false),
            ColumnData::Int(v) => v.push(0),
            ColumnData::Date(v) => v.push(0),
            ColumnData::Float(v) => v.push(0.0),
            ColumnData::Fixed { width, data } => data.resize(data.len() + *width, 0),
            ColumnData::Str { offsets, bytes } => offsets.push(bytes.len() as u32),
            ColumnData::Binary { offsets, bytes } => offsets.push(bytes.len() as u32),
            ColumnData::List { offsets, .. } => {
                let last = *offsets.last().unwrap_or(&0);
                offsets.push(last);
            }
            ColumnData::Struct { children } => children.iter_mut().for_each(Column::push_null),
        }
    }
}

impl Column {
    /// Keeps the first `rows` rows (and what they hold), whatever was
    /// appended after them, complete or not: a columnar write that gave up
    /// half way (route/columnar.rs) leaves children of unequal lengths.
    pub fn truncate(&mut self, rows: usize) {
        self.valid.truncate(rows);
        match &mut self.data {
            ColumnData::Bool(v) => v.truncate(rows),
            ColumnData::Int(v) => v.truncate(rows),
            ColumnData::Date(v) => v.truncate(rows),
            ColumnData::Float(v) => v.truncate(rows),
            ColumnData::Fixed { width, data } => data.truncate(rows * *width),
            ColumnData::Str { offsets, bytes: _ } if offsets.len() <= rows => {}
            ColumnData::Str { offsets, bytes } => {
                offsets.truncate(rows + 1);
                bytes.truncate(offsets[rows] as usize);
            }
            ColumnData::Binary { offsets, bytes: _ } if offsets.len() <= rows => {}
            ColumnData::Binary { offsets, bytes } => {
                offsets.truncate(rows + 1);
                bytes.truncate(offsets[rows] as usize);
            }
            ColumnData::List { offsets, child: _ } if offsets.len() <= rows => {}
            ColumnData::List { offsets, child } => {
                offsets.truncate(rows + 1);
                child.truncate(offsets[rows] as usize);
            }
            ColumnData::Struct { children } => children.iter_mut().for_each(|c| c.truncate(rows)),
        }
    }

    /// Appends every row of `other`, a column of the same type: the
    /// scan joins the small pieces of small files into one chunk this way
    /// (scan/scanner.rs). Offsets are moved past what this column holds.
    pub fn append(&mut self, other: &Column) {
        self.valid.extend_from_slice(&other.valid);
        match (&mut self.data, &other.data) {
            (ColumnData::Bool(a), ColumnData::Bool(b)) => a.extend_from_slice(b),
            (ColumnData::Int(a), ColumnData::Int(b)) => a.extend_from_slice(b),
            (ColumnData::Date(a), ColumnData::Date(b)) => a.extend_from_slice(b),
            (ColumnData::Float(a), ColumnData::Float(b)) => a.extend_from_slice(b),
            (ColumnData::Fixed { data: a, .. }, ColumnData::Fixed { data: b, .. }) => a.extend_from_slice(b),
            (ColumnData::Str { offsets, bytes }, ColumnData::Str { offsets: o, bytes: b }) => {
                append_offsets(offsets, o, bytes.len());
                bytes.push_str(b);
            }
            (ColumnData::Binary { offsets, bytes }, ColumnData::Binary { offsets: o, bytes: b }) => {
                append_offsets(offsets, o, bytes.len());
                bytes.extend_from_slice(b);
            }
            (ColumnData::List { offsets, child }, ColumnData::List { offsets: o, child: c }) => {
                append_offsets(offsets, o, child.len());
                child.append(c);
            }
            (ColumnData::Struct { children }, ColumnData::Struct { children: c }) => {
                children.iter_mut().zip(c).for_each(|(a, b)| a.append(b));
            }
            _ => unreachable!("columns of one chunk layout differ in type"),
        }
    }

    /// Bytes the column's rows hold (values, offsets and validity, nested
    /// columns included): what joining pieces into one chunk adds up.
    pub fn bytes(&self) -> usize {
        let data = match &self.data {
            ColumnData::Bool(v) => v.len(),
            ColumnData::Int(v) => v.len() * 8,
            ColumnData::Date(v) => v.len() * 4,
            ColumnData::Float(v) => v.len() * 8,
            ColumnData::Fixed { data, .. } => data.len(),
            ColumnData::Str { offsets, bytes } => offsets.len() * 4 + bytes.len(),
            ColumnData::Binary { offsets, bytes } => offsets.len() * 4 + bytes.len(),
            ColumnData::List { offsets, child } => offsets.len() * 4 + child.bytes(),
            ColumnData::Struct { children } => children.iter().map(Column::bytes).sum(),
        };
        self.valid.len() + data
    }

    /// Removes the last row (and, for lists and structs, what it holds).
    pub fn pop_last(&mut self) {
        if self.valid.pop().is_none() {
            return;
        }
        match &mut self.data {
            ColumnData::Bool(v) => {
                v.pop();
            }
            ColumnData::Int(v) => {
                v.pop();
            }
            ColumnData::Date(v) => {
                v.pop();
            }
            ColumnData::Float(v) => {
                v.pop();
            }
            ColumnData::Fixed { width, data } => data.truncate(data.len().saturating_sub(*width)),
            ColumnData::Str { offsets, bytes } => {
                offsets.pop();
                bytes.truncate(*offsets.last().unwrap_or(&0) as usize);
            }
            ColumnData::Binary { offsets, bytes } => {
                offsets.pop();
                bytes.truncate(*offsets.last().unwrap_or(&0) as usize);
            }
            ColumnData::List { offsets, child } => {
                offsets.pop();
                let keep = *offsets.last().unwrap_or(&0) as usize;
                while child.len() > keep {
                    child.pop_last();
                }
            }
            ColumnData::Struct { children } => children.iter_mut().for_each(Column::pop_last),
        }
    }

    /// Appends one VARCHAR value (a map key).
    /// Appends an integer to a BIGINT (or timestamp or time) column;
    /// `false`, with nothing written, for a column of another layout.
    #[inline]
    pub fn push_i64(&mut self, n: i64) -> bool {
        let ColumnData::Int(v) = &mut self.data else { return false };
        v.push(n);
        self.valid.push(true);
        true
    }

    /// Appends a Boolean to a BOOLEAN column; `false`, with nothing
    /// written, for a column of another layout.
    #[inline]
    pub fn push_bool(&mut self, b: bool) -> bool {
        let ColumnData::Bool(v) = &mut self.data else { return false };
        v.push(b);
        self.valid.push(true);
        true
    }

    /// Appends a double to a DOUBLE column; `false`, with nothing written,
    /// for a column of another layout.
    #[inline]
    pub fn push_f64(&mut self, f: f64) -> bool {
        let ColumnData::Float(v) = &mut self.data else { return false };
        v.push(f);
        self.valid.push(true);
        true
    }

    /// Appends text to a VARCHAR (or JSON) column; `false`, with nothing
    /// written, for a column of another layout.
    #[inline]
    pub fn push_str(&mut self, text: &str) -> bool {
        let ColumnData::Str { offsets, bytes } = &mut self.data else { return false };
        bytes.push_str(text);
        offsets.push(bytes.len() as u32);
        self.valid.push(true);
        true
    }

    pub fn push_text(&mut self, text: &str) {
        if !self.push_str(text) {
            debug_assert!(false, "a text value in a column of another type");
            self.push_null();
        }
    }

    /// Appends `rows` copies of one hive partition value. The column was
    /// made for the partition's type (`partition_kind`), so the value fits;
    /// NULL fits any column.
    pub fn push_partition(&mut self, value: &PartitionValue, rows: usize) {
        for _ in 0..rows {
            let fits = match (&mut self.data, value) {
                (_, PartitionValue::Null) => false,
                (ColumnData::Bool(v), PartitionValue::Bool(b)) => {
                    v.push(*b);
                    true
                }
                (ColumnData::Int(v), PartitionValue::Int(n) | PartitionValue::Timestamp(n)) => {
                    v.push(*n);
                    true
                }
                // INTEGER: a 4-byte fixed column (the value was range-checked).
                (ColumnData::Fixed { width: 4, data }, PartitionValue::Int(n)) => {
                    data.extend_from_slice(&(*n as i32).to_le_bytes());
                    true
                }
                (ColumnData::Date(v), PartitionValue::Date(d)) => {
                    v.push(*d);
                    true
                }
                (ColumnData::Float(v), PartitionValue::Float(f)) => {
                    v.push(*f);
                    true
                }
                (ColumnData::Str { offsets, bytes }, PartitionValue::Text(t)) => {
                    bytes.push_str(t);
                    offsets.push(bytes.len() as u32);
                    true
                }
                _ => {
                    debug_assert!(false, "partition value {value:?} in a column of another type");
                    false
                }
            };
            if fits {
                self.valid.push(true);
            } else {
                self.push_null();
            }
        }
    }
}

/// Appends the row ends of `other` (an offsets vector starting at 0) moved
/// past `base`, what the column already holds.
fn append_offsets(offsets: &mut Vec<u32>, other: &[u32], base: usize) {
    let base = base as u32;
    offsets.extend(other[1..].iter().map(|&end| base + end));
}

pub fn columns_for_struct(s: &StructNode) -> Vec<Column> {
    s.output_versions().map(|v| Column::for_type(&v.ty)).collect()
}

impl Column {
    /// Row `row` as JSON (NULL as `null`), for tests.
    #[cfg(test)]
    pub fn row_json(&self, row: usize) -> serde_json::Value {
        use serde_json::Value;
        if !self.valid[row] {
            return Value::Null;
        }
        match &self.data {
            ColumnData::Bool(v) => Value::Bool(v[row]),
            ColumnData::Int(v) => Value::from(v[row]),
            ColumnData::Date(v) => Value::from(v[row]),
            // JSON has no NaN or infinities: their text, so a test sees the value.
            ColumnData::Float(v) if !v[row].is_finite() => Value::from(format!("{:?}", v[row])),
            ColumnData::Float(v) => Value::from(v[row]),
            ColumnData::Str { offsets, bytes } => Value::from(&bytes[offsets[row] as usize..offsets[row + 1] as usize]),
            ColumnData::Fixed { width, data } => {
                Value::from(data[row * width..(row + 1) * width].iter().map(|b| format!("{b:02x}")).collect::<String>())
            }
            ColumnData::Binary { offsets, bytes } => {
                Value::from(bytes[offsets[row] as usize..offsets[row + 1] as usize].to_vec())
            }
            ColumnData::List { offsets, child } => {
                Value::Array((offsets[row] as usize..offsets[row + 1] as usize).map(|i| child.row_json(i)).collect())
            }
            ColumnData::Struct { children } => Value::Array(children.iter().map(|c| c.row_json(row)).collect()),
        }
    }
}

/// Value encoding: each scalar type's physical layout, in one place.
impl Column {
    /// Appends `c` as a value of `kind` (the version the router chose), in
    /// the column's physical layout. `None` when the value does not fit the
    /// type (nothing is appended then: the caller writes NULL); otherwise
    /// whether the value was flattened to JSON text past a depth limit.
    pub fn push_scalar(&mut self, kind: ScalarKind, c: &Classified<'_>) -> Option<bool> {
        let mut flattened = false;
        let node = c.value.node();
        let ok = match (&mut self.data, kind) {
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
                        flattened = c.class == ValueClass::Flattened;
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
            (ColumnData::Int(v), ScalarKind::Int) => push(v, integer_of(c).and_then(|n| i64::try_from(n).ok())),
            (ColumnData::Float(v), ScalarKind::Float) => push(
                v,
                match (node, c.parsed) {
                    (Node::Float(f), _) | (_, Parsed::Float(f)) => Some(f),
                    (Node::Declared { kind: Declared::Float32, bits }, _) => Some(f32::from_bits(bits as u32) as f64),
                    (Node::Str { start, len }, Parsed::Int(n)) => {
                        Some(parsed_int_as_double(n, c.value.tape.text_of(start, len)))
                    }
                    _ => integer_of(c).map(|n| n as f64),
                },
            ),
            (ColumnData::Fixed { width, data }, ScalarKind::Declared(d)) => {
                let start = data.len();
                let ok = encode_declared(d, c, data);
                debug_assert!(!ok || data.len() == start + *width);
                ok
            }
            (ColumnData::Binary { offsets, bytes }, ScalarKind::Declared(Declared::Blob)) => match node {
                Node::Declared { kind: Declared::Blob, bits } => {
                    let (start, end) = DeclaredBits::range(bits);
                    bytes.extend_from_slice(&c.value.tape.bytes[start..end]);
                    offsets.push(bytes.len() as u32);
                    true
                }
                _ => false,
            },
            (ColumnData::Int(v), ScalarKind::Timestamp(unit)) => push(
                v,
                match c.parsed {
                    Parsed::Timestamp(t) => unit.ticks(t.secs, t.nanos),
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
        if !ok {
            return None;
        }
        self.valid.push(true);
        Some(flattened)
    }
}

/// The integer a value holds: a JSON or parsed integer, or a declared one.
/// A string parsed as an integer, written to a DOUBLE column: `-0` keeps
/// its sign, as `parse_floats` alone and DuckDB's `'-0'::DOUBLE` give it
/// (the integer it parses to has none).
pub(crate) fn parsed_int_as_double(n: i64, text: &str) -> f64 {
    if n == 0 && text.trim_start().starts_with('-') {
        -0.0
    } else {
        n as f64
    }
}

fn integer_of(c: &Classified<'_>) -> Option<i128> {
    match (c.value.node(), c.parsed) {
        (Node::Int(n), _) | (_, Parsed::Int(n)) => Some(n as i128),
        (Node::Declared { kind: Declared::UInt64, bits }, _) => Some(bits as i128),
        (Node::Declared { kind, bits }, _) if kind.is_integer() => Some(bits as i64 as i128),
        _ => None,
    }
}

/// Appends the value in the physical layout of declared type `d`
/// (little endian, as DuckDB keeps it in memory). The version was chosen
/// because it holds the value's type, so the value fits; anything else is
/// refused rather than truncated.
fn encode_declared(d: Declared, c: &Classified<'_>, out: &mut Vec<u8>) -> bool {
    let tape = c.value.tape;
    let node = c.value.node();
    match d {
        Declared::Float32 => match node {
            Node::Declared { kind: Declared::Float32, bits } => {
                out.extend_from_slice(&(bits as u32).to_le_bytes());
                true
            }
            _ => false,
        },
        Declared::Decimal { precision, scale } => {
            let Node::Declared { kind: Declared::Decimal { precision: p, scale: s }, bits } = node else {
                return false;
            };
            // A value beyond the declared precision (a writer may store one:
            // arrow-rs does not validate) is refused, never truncated.
            let Some(unscaled) = 10i128
                .checked_pow(u32::from(scale.saturating_sub(s)))
                .and_then(|f| decimal_value(p, bits, tape).checked_mul(f))
                .filter(|v| v.unsigned_abs() < 10u128.pow(u32::from(precision)))
            else {
                return false;
            };
            write_le(unscaled, d.width(), out);
            true
        }
        Declared::Uuid => match node {
            Node::Declared { kind: Declared::Uuid, bits } => {
                // DuckDB keeps a UUID as a 128-bit integer with the top bit
                // flipped, so that integer order is UUID text order.
                let v = u128::from_be_bytes(sixteen(tape, bits)) ^ (1u128 << 127);
                out.extend_from_slice(&v.to_le_bytes());
                true
            }
            _ => false,
        },
        Declared::Interval => match node {
            Node::Declared { kind: Declared::Interval, bits } => {
                out.extend_from_slice(&sixteen(tape, bits));
                true
            }
            _ => false,
        },
        Declared::Blob => false,
        // In range or refused: the low bytes of a wider integer would be
        // another number.
        int => match (integer_of(c), int.int_range()) {
            (Some(n), Some((lo, hi))) if (lo..=hi).contains(&n) => {
                write_le(n, int.width(), out);
                true
            }
            _ => false,
        },
    }
}

/// The low `width` bytes of `n`, little endian (two's complement).
fn write_le(n: i128, width: usize, out: &mut Vec<u8>) {
    out.extend_from_slice(&n.to_le_bytes()[..width]);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infer::{classify, DepthLimits, Level, Rules, TimeUnit};
    use crate::scalar::ScalarParsers;
    use crate::value::Tape;

    fn encoded(d: Declared, value: i64) -> Option<Vec<u8>> {
        let mut tape = Tape::default();
        tape.nodes.push(Node::Int(value));
        tape.roots.push(0);
        let parsers = ScalarParsers::default();
        let limits = DepthLimits { arrow_max_depth: 32, parquet_max_depth: 15 };
        let rules = Rules {
            limits,
            scalar_object_key: "v",
            parsers: &parsers,
            timestamp_unit: TimeUnit::Micros,
            policies: None,
            columns: crate::infer::ColumnLimit::NONE,
        };
        let c = classify(tape.record(0), Level::default(), &rules);
        let mut out = Vec::new();
        encode_declared(d, &c, &mut out).then_some(out)
    }

    /// An empty column of every layout: a struct of each scalar layout, a
    /// list of lists and a struct holding a list.
    fn every_layout() -> Column {
        let empty = |data| Column { valid: Vec::new(), data };
        let text = || empty(ColumnData::Str { offsets: vec![0], bytes: String::new() });
        let list = |child: Column| empty(ColumnData::List { offsets: vec![0], child: Box::new(child) });
        empty(ColumnData::Struct {
            children: vec![
                empty(ColumnData::Bool(Vec::new())),
                empty(ColumnData::Int(Vec::new())),
                empty(ColumnData::Date(Vec::new())),
                empty(ColumnData::Float(Vec::new())),
                text(),
                empty(ColumnData::Fixed { width: 2, data: Vec::new() }),
                empty(ColumnData::Binary { offsets: vec![0], bytes: Vec::new() }),
                list(list(empty(ColumnData::Int(Vec::new())))),
                empty(ColumnData::Struct { children: vec![text(), list(text())] }),
            ],
        })
    }

    /// Pushes row `k` (a value made from k, NULL for some k) by hand.
    fn push_row(c: &mut Column, k: usize) {
        if k % 5 == 3 {
            c.push_null();
            return;
        }
        match &mut c.data {
            ColumnData::Bool(v) => v.push(k % 2 == 0),
            ColumnData::Int(v) => v.push(k as i64 * 7 - 3),
            ColumnData::Date(v) => v.push(k as i32 - 9),
            ColumnData::Float(v) => v.push(k as f64 / 4.0),
            ColumnData::Str { offsets, bytes } => {
                bytes.push_str(&"é".repeat(k % 3));
                offsets.push(bytes.len() as u32);
            }
            ColumnData::Fixed { width, data } => data.extend(std::iter::repeat_n(k as u8, *width)),
            ColumnData::Binary { offsets, bytes } => {
                bytes.extend(std::iter::repeat_n(k as u8, k % 4));
                offsets.push(bytes.len() as u32);
            }
            ColumnData::List { offsets, child } => {
                (0..k % 3).for_each(|j| push_row(child, k * 3 + j));
                offsets.push(child.len() as u32);
            }
            ColumnData::Struct { children } => children.iter_mut().enumerate().for_each(|(i, c)| push_row(c, k + i)),
        }
        c.valid.push(true);
    }

    /// Rows of every layout, nested ones included, appended from another
    /// column read as if pushed one after the other into one column.
    #[test]
    fn an_appended_column_reads_as_its_rows_pushed_after_the_first_ones() {
        let column_of = |rows: std::ops::Range<usize>| {
            let mut c = every_layout();
            rows.for_each(|k| push_row(&mut c, k));
            c
        };
        for cut in 0..=12 {
            let mut joined = column_of(0..cut);
            joined.append(&column_of(cut..12));
            let whole = column_of(0..12);
            assert_eq!(joined, whole, "cut at {cut}");
            assert!((0..12).all(|r| joined.row_json(r) == whole.row_json(r)));
        }
    }

    #[test]
    fn integers_out_of_their_declared_range_are_refused_not_truncated() {
        assert_eq!(encoded(Declared::Int8, 127), Some(vec![127]));
        assert_eq!(encoded(Declared::Int8, -128), Some(vec![0x80]));
        assert_eq!(encoded(Declared::Int8, 300), None);
        assert_eq!(encoded(Declared::UInt8, -1), None);
        assert_eq!(encoded(Declared::Int16, 40_000), None);
        assert_eq!(encoded(Declared::UInt32, 4_294_967_295), Some(vec![0xFF; 4]));
        assert_eq!(encoded(Declared::Int32, i64::MAX), None);
    }
}
