//! Typed column buffers for one output chunk (at most 2048 rows), shaped like
//! the output schema. They are cleared, not freed, between chunks, so a
//! steady-state scan allocates nothing per value.

use crate::infer::{Declared, ScalarKind, StructNode, TypeNode};

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
