//! Copies engine column buffers into DuckDB vectors.

use duckdb::ffi;

use crate::route::{Column, ColumnData};

/// Writes `col` (exactly `rows` rows) into `vector`.
pub unsafe fn write_column(vector: ffi::duckdb_vector, col: &Column, rows: usize) {
    unsafe {
        match &col.data {
            ColumnData::Bool(v) => copy_slice(vector, &v[..rows]),
            ColumnData::Int(v) => copy_slice(vector, &v[..rows]),
            ColumnData::Date(v) => copy_slice(vector, &v[..rows]),
            ColumnData::Float(v) => copy_slice(vector, &v[..rows]),
            // Already in DuckDB's physical layout.
            ColumnData::Fixed { width, data } => copy_slice(vector, &data[..rows * width]),
            ColumnData::Str { offsets, bytes } => write_strings(vector, col, offsets, bytes.as_bytes(), rows),
            ColumnData::Binary { offsets, bytes } => write_strings(vector, col, offsets, bytes, rows),
            ColumnData::List { offsets, child } => {
                let entries = ffi::duckdb_vector_get_data(vector) as *mut ffi::duckdb_list_entry;
                for row in 0..rows {
                    let start = offsets[row] as u64;
                    *entries.add(row) =
                        ffi::duckdb_list_entry { offset: start, length: offsets[row + 1] as u64 - start };
                }
                let child_rows = offsets[rows] as usize;
                ffi::duckdb_list_vector_reserve(vector, child_rows as u64);
                ffi::duckdb_list_vector_set_size(vector, child_rows as u64);
                let child_vector = ffi::duckdb_list_vector_get_child(vector);
                write_column(child_vector, child, child_rows);
            }
            ColumnData::Struct { children } => {
                for (i, child) in children.iter().enumerate() {
                    write_column(ffi::duckdb_struct_vector_get_child(vector, i as u64), child, rows);
                }
            }
        }
        write_validity(vector, &col.valid[..rows]);
    }
}

/// VARCHAR and BLOB rows (both are `duckdb_string_t`).
unsafe fn write_strings(vector: ffi::duckdb_vector, col: &Column, offsets: &[u32], bytes: &[u8], rows: usize) {
    unsafe {
        let data = ffi::duckdb_vector_get_data(vector) as *mut ffi::duckdb_string_t;
        for row in 0..rows {
            if col.valid[row] {
                write_string(vector, data, row, &bytes[offsets[row] as usize..offsets[row + 1] as usize]);
            }
        }
    }
}

/// DuckDB keeps strings of at most 12 bytes inline in the vector's
/// `duckdb_string_t` (length + 12 bytes, the C API's documented layout), so
/// those are written directly; longer ones are copied into the vector's
/// string heap by DuckDB.
unsafe fn write_string(vector: ffi::duckdb_vector, data: *mut ffi::duckdb_string_t, row: usize, s: &[u8]) {
    const INLINE: usize = 12;
    if s.len() <= INLINE {
        let mut inlined = [0 as std::os::raw::c_char; INLINE];
        for (dst, src) in inlined.iter_mut().zip(s) {
            *dst = *src as std::os::raw::c_char;
        }
        let value = ffi::duckdb_string_t {
            value: ffi::duckdb_string_t__bindgen_ty_1 {
                inlined: ffi::duckdb_string_t__bindgen_ty_1__bindgen_ty_2 { length: s.len() as u32, inlined },
            },
        };
        unsafe { *data.add(row) = value };
    } else {
        unsafe {
            ffi::duckdb_vector_assign_string_element_len(vector, row as u64, s.as_ptr() as *const _, s.len() as u64)
        };
    }
}

unsafe fn copy_slice<T: Copy>(vector: ffi::duckdb_vector, values: &[T]) {
    unsafe {
        let data = ffi::duckdb_vector_get_data(vector) as *mut T;
        std::ptr::copy_nonoverlapping(values.as_ptr(), data, values.len());
    }
}

/// Marks the invalid rows; a vector with no nulls keeps DuckDB's fast path.
pub unsafe fn write_validity(vector: ffi::duckdb_vector, valid: &[bool]) {
    if valid.iter().all(|v| *v) {
        return;
    }
    unsafe {
        ffi::duckdb_vector_ensure_validity_writable(vector);
        let mask = ffi::duckdb_vector_get_validity(vector);
        for (row, ok) in valid.iter().enumerate() {
            if !ok {
                *mask.add(row / 64) &= !(1u64 << (row % 64));
            }
        }
    }
}

/// Sets `rows` rows of a VARCHAR vector to the same text.
pub unsafe fn fill_varchar(vector: ffi::duckdb_vector, text: &str, rows: usize) {
    for row in 0..rows {
        unsafe {
            ffi::duckdb_vector_assign_string_element_len(
                vector,
                row as u64,
                text.as_ptr() as *const _,
                text.len() as u64,
            )
        };
    }
}

/// Sets `rows` rows of an 8-byte vector (BIGINT, TIMESTAMPTZ) to one value.
pub unsafe fn fill_i64(vector: ffi::duckdb_vector, value: i64, rows: usize) {
    unsafe {
        let data = ffi::duckdb_vector_get_data(vector) as *mut i64;
        for row in 0..rows {
            *data.add(row) = value;
        }
    }
}

/// Row 0 gets `text`, every other row NULL.
pub unsafe fn first_row_only(vector: ffi::duckdb_vector, text: Option<&str>, rows: usize) {
    let mut valid = vec![false; rows];
    if let Some(t) = text {
        if rows > 0 {
            unsafe { fill_varchar(vector, t, 1) };
            valid[0] = true;
        }
    }
    unsafe { write_validity(vector, &valid) };
}
