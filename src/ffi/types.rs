//! Engine types to DuckDB logical types (docs/engine.md, "Output columns and types", has the table).

use std::ffi::CString;

use duckdb::ffi;

use crate::infer::{Declared, ScalarKind, StructNode, TimeUnit, TypeNode};

/// An owned logical type, destroyed on drop. The raw handle stays inside:
/// only borrowed out (`raw`) for a call that copies it.
pub struct LogicalType(ffi::duckdb_logical_type);

impl Drop for LogicalType {
    fn drop(&mut self) {
        // SAFETY: we own the type (every constructor creates one) and drop
        // destroys it exactly once.
        unsafe { ffi::duckdb_destroy_logical_type(&mut self.0) };
    }
}

impl LogicalType {
    /// The handle, for a DuckDB call that copies the type; valid while `self` lives.
    pub fn raw(&self) -> ffi::duckdb_logical_type {
        self.0
    }

    pub fn of(id: ffi::DUCKDB_TYPE) -> Self {
        // SAFETY: creates a new type of a valid id; we own it.
        LogicalType(unsafe { ffi::duckdb_create_logical_type(id) })
    }

    pub fn varchar() -> Self {
        Self::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR)
    }

    pub fn list_of(child: &LogicalType) -> Self {
        // SAFETY: a live child type, which DuckDB copies; we own the result.
        LogicalType(unsafe { ffi::duckdb_create_list_type(child.0) })
    }

    pub fn for_node(t: &TypeNode) -> Self {
        match t {
            TypeNode::Scalar(k) => Self::for_scalar(*k),
            TypeNode::List(e) => Self::list_of(&Self::for_node(e)),
            // MAP has the vector layout of a list of {key, value} structs,
            // so the same buffers serve either type.
            TypeNode::Map(entry) => match TypeNode::map_key_value(entry) {
                Some((k, v)) => {
                    let (k, v) = (Self::for_node(k), Self::for_node(v));
                    // SAFETY: live key and value types, which DuckDB copies; we own the result.
                    LogicalType(unsafe { ffi::duckdb_create_map_type(k.0, v.0) })
                }
                None => Self::list_of(&Self::for_node(entry)),
            },
            TypeNode::Struct(s) => Self::for_struct(s),
        }
    }

    fn for_scalar(k: ScalarKind) -> Self {
        let id = match k {
            ScalarKind::Bool => ffi::DUCKDB_TYPE_DUCKDB_TYPE_BOOLEAN,
            ScalarKind::Int => ffi::DUCKDB_TYPE_DUCKDB_TYPE_BIGINT,
            ScalarKind::Float => ffi::DUCKDB_TYPE_DUCKDB_TYPE_DOUBLE,
            ScalarKind::Str | ScalarKind::Json => ffi::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR,
            // The SQL surface: MICROS → TIMESTAMPTZ (BigQuery TIMESTAMP), MILLIS → TIMESTAMP_MS, NANOS → TIMESTAMP_NS.
            ScalarKind::Timestamp(TimeUnit::Micros) => ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP_TZ,
            ScalarKind::Timestamp(TimeUnit::Millis) => ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP_MS,
            ScalarKind::Timestamp(TimeUnit::Nanos) => ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP_NS,
            // No scan makes a seconds column (timestamp_precision has no such value).
            ScalarKind::Timestamp(TimeUnit::Seconds) => ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP_S,
            ScalarKind::Date => ffi::DUCKDB_TYPE_DUCKDB_TYPE_DATE,
            ScalarKind::Time => ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIME,
            ScalarKind::Declared(Declared::Decimal { precision, scale }) => {
                // SAFETY: a precision of 1..=38 and a scale not above it
                // (Declared::decimal checks); we own the result.
                return LogicalType(unsafe { ffi::duckdb_create_decimal_type(precision, scale) });
            }
            ScalarKind::Declared(Declared::Int8) => ffi::DUCKDB_TYPE_DUCKDB_TYPE_TINYINT,
            ScalarKind::Declared(Declared::Int16) => ffi::DUCKDB_TYPE_DUCKDB_TYPE_SMALLINT,
            ScalarKind::Declared(Declared::Int32) => ffi::DUCKDB_TYPE_DUCKDB_TYPE_INTEGER,
            ScalarKind::Declared(Declared::UInt8) => ffi::DUCKDB_TYPE_DUCKDB_TYPE_UTINYINT,
            ScalarKind::Declared(Declared::UInt16) => ffi::DUCKDB_TYPE_DUCKDB_TYPE_USMALLINT,
            ScalarKind::Declared(Declared::UInt32) => ffi::DUCKDB_TYPE_DUCKDB_TYPE_UINTEGER,
            ScalarKind::Declared(Declared::UInt64) => ffi::DUCKDB_TYPE_DUCKDB_TYPE_UBIGINT,
            ScalarKind::Declared(Declared::Float32) => ffi::DUCKDB_TYPE_DUCKDB_TYPE_FLOAT,
            ScalarKind::Declared(Declared::Blob) => ffi::DUCKDB_TYPE_DUCKDB_TYPE_BLOB,
            ScalarKind::Declared(Declared::Uuid) => ffi::DUCKDB_TYPE_DUCKDB_TYPE_UUID,
            ScalarKind::Declared(Declared::Interval) => ffi::DUCKDB_TYPE_DUCKDB_TYPE_INTERVAL,
        };
        Self::of(id)
    }

    fn for_struct(s: &StructNode) -> Self {
        let children: Vec<LogicalType> = s.output_versions().map(|v| Self::for_node(&v.ty)).collect();
        let names: Vec<CString> =
            s.output_versions().map(|v| CString::new(v.output_name.replace('\0', " ")).unwrap_or_default()).collect();
        let mut raw_types: Vec<ffi::duckdb_logical_type> = children.iter().map(|c| c.0).collect();
        let mut raw_names: Vec<*const std::os::raw::c_char> = names.iter().map(|n| n.as_ptr()).collect();
        // SAFETY: two arrays of the same length of live types and
        // NUL-terminated names, which DuckDB copies; we own the result.
        LogicalType(unsafe {
            ffi::duckdb_create_struct_type(raw_types.as_mut_ptr(), raw_names.as_mut_ptr(), raw_types.len() as u64)
        })
    }
}
