//! Writing engine column buffers into DuckDB vectors. Every method checks
//! the rows it writes against the vector's capacity before any pointer is
//! touched, so the unsafe blocks below only rely on DuckDB's documented
//! vector layout.

use std::marker::PhantomData;

use duckdb::ffi;

use super::handles::Vector;
use crate::route::{Column, ColumnData};

/// The longest string DuckDB keeps inline in its `duckdb_string_t`.
const INLINE: usize = 12;

impl Vector<'_> {
    fn check_rows(&self, rows: usize) -> Result<(), String> {
        if rows > self.capacity {
            return Err(format!("internal error (please report): {rows} rows for a vector of {}", self.capacity));
        }
        Ok(())
    }

    /// Writes `col` (exactly `rows` rows) into the vector.
    pub fn write_column(&self, col: &Column, rows: usize) -> Result<(), String> {
        self.check_rows(rows)?;
        match &col.data {
            ColumnData::Bool(v) => self.copy_slice(&v[..rows]),
            ColumnData::Int(v) => self.copy_slice(&v[..rows]),
            ColumnData::Date(v) => self.copy_slice(&v[..rows]),
            ColumnData::Float(v) => self.copy_slice(&v[..rows]),
            // Already in DuckDB's physical layout: `width` bytes a row.
            ColumnData::Fixed { width, data } => {
                // SAFETY: the vector's type is the fixed-width type of this
                // column (bind declared it from the same schema), so its
                // data holds `capacity` rows of `width` bytes; `rows` fits.
                unsafe {
                    let dst = ffi::duckdb_vector_get_data(self.raw) as *mut u8;
                    std::ptr::copy_nonoverlapping(data.as_ptr(), dst, rows * width);
                }
            }
            // A `String` whose offsets fall between the texts pushed into
            // it: every row's slice is UTF-8 (`put_string`'s contract).
            ColumnData::Str { offsets, bytes } => self.write_strings(col, offsets, bytes.as_bytes(), rows),
            ColumnData::Binary { offsets, bytes } => self.write_strings(col, offsets, bytes, rows),
            ColumnData::List { offsets, child } => {
                // SAFETY: a LIST (or MAP) vector: its data is `capacity`
                // list entries; `rows` fits.
                unsafe {
                    let entries = ffi::duckdb_vector_get_data(self.raw) as *mut ffi::duckdb_list_entry;
                    for row in 0..rows {
                        let start = offsets[row] as u64;
                        *entries.add(row) =
                            ffi::duckdb_list_entry { offset: start, length: offsets[row + 1] as u64 - start };
                    }
                }
                let child_rows = offsets[rows] as usize;
                // SAFETY: a live LIST vector; both calls report failure in
                // their state, which is checked.
                let reserved = unsafe { ffi::duckdb_list_vector_reserve(self.raw, child_rows as u64) };
                // SAFETY: as above.
                let sized = unsafe { ffi::duckdb_list_vector_set_size(self.raw, child_rows as u64) };
                if reserved != ffi::DuckDBSuccess || sized != ffi::DuckDBSuccess {
                    return Err(format!("DuckDB could not make room for {child_rows} list elements"));
                }
                // SAFETY: the child of a live LIST vector, now holding
                // `child_rows` rows.
                let raw = unsafe { ffi::duckdb_list_vector_get_child(self.raw) };
                Vector { raw, capacity: child_rows, _chunk: PhantomData }.write_column(child, child_rows)?;
            }
            ColumnData::Struct { children } => {
                for (i, child) in children.iter().enumerate() {
                    // SAFETY: a STRUCT vector with one child per column of
                    // its type (bind declared it from the same schema); a
                    // child holds as many rows as its parent.
                    let raw = unsafe { ffi::duckdb_struct_vector_get_child(self.raw, i as u64) };
                    Vector { raw, capacity: self.capacity, _chunk: PhantomData }.write_column(child, rows)?;
                }
            }
        }
        self.write_validity(&col.valid[..rows]);
        Ok(())
    }

    fn copy_slice<T: Copy>(&self, values: &[T]) {
        debug_assert!(values.len() <= self.capacity);
        // SAFETY: the vector's physical type is `T` (bind declared it from
        // the same schema) and it holds `capacity` >= `values.len()` rows.
        unsafe {
            let data = ffi::duckdb_vector_get_data(self.raw) as *mut T;
            std::ptr::copy_nonoverlapping(values.as_ptr(), data, values.len());
        }
    }

    /// VARCHAR and BLOB rows (both are `duckdb_string_t`).
    fn write_strings(&self, col: &Column, offsets: &[u32], bytes: &[u8], rows: usize) {
        debug_assert!(rows <= self.capacity);
        // SAFETY: a VARCHAR/BLOB vector (bind declared it from the same
        // schema); its data is `capacity` duckdb_string_t, once per call.
        let data = unsafe { ffi::duckdb_vector_get_data(self.raw) } as *mut ffi::duckdb_string_t;
        // Two long strings are enough to know: the count stops there.
        let mut long = (0..rows).filter(|&r| col.valid[r] && (offsets[r + 1] - offsets[r]) as usize > INLINE);
        if long.nth(1).is_some() {
            // SAFETY: `data` is this vector's, and `rows` <= its capacity.
            unsafe { self.write_strings_as_one_run(data, col, offsets, bytes, rows) };
            return;
        }
        for row in 0..rows {
            if col.valid[row] {
                // SAFETY: `data` is this vector's and `row` < rows <= capacity.
                unsafe { self.put_string(data, row, &bytes[offsets[row] as usize..offsets[row + 1] as usize]) };
            }
        }
    }

    /// Writes the rows as [`Self::write_strings`] does, with the bytes of
    /// every row copied into the vector's string heap by one call, as one
    /// run, and each string of more than 12 bytes pointing into that copy
    /// (DuckDB's layout of such a string: its length, its first four bytes
    /// and a pointer), instead of one call per long string, each an
    /// allocation in the heap and a copy.
    /// The run is held by the vector's heap, which lives as long as the
    /// vector, as a string copied alone would be. A NULL row is written as
    /// the empty string.
    ///
    /// # Safety
    /// `data` is this VARCHAR/BLOB vector's data, `rows` is at most its
    /// capacity, some row holds more than 12 bytes, and `offsets` and
    /// `bytes` are the column's (every valid row's slice of a VARCHAR
    /// column is UTF-8).
    unsafe fn write_strings_as_one_run(
        &self,
        data: *mut ffi::duckdb_string_t,
        col: &Column,
        offsets: &[u32],
        bytes: &[u8],
        rows: usize,
    ) {
        let start = offsets[0] as usize;
        let run = &bytes[start..offsets[rows] as usize];
        // SAFETY: row 0 is a slot of this live vector; DuckDB copies the
        // run into the vector's heap (more than 12 bytes: some row's string
        // is in it) and points row 0 at the copy, which the loop below
        // rewrites. The run is UTF-8 for a VARCHAR column: whole rows of it.
        let copy = unsafe {
            ffi::duckdb_unsafe_vector_assign_string_element_len(self.raw, 0, run.as_ptr().cast(), run.len() as u64);
            (*data).value.pointer.ptr as *const std::os::raw::c_char
        };
        for row in 0..rows {
            let (from, to) = (offsets[row] as usize, offsets[row + 1] as usize);
            let s = if col.valid[row] { &bytes[from..to] } else { &[][..] };
            if s.len() <= INLINE {
                // SAFETY: `row` is a slot of `data` (rows <= capacity).
                unsafe { self.put_string(data, row, s) };
                continue;
            }
            let mut prefix = [0 as std::os::raw::c_char; 4];
            for (dst, src) in prefix.iter_mut().zip(s) {
                *dst = *src as std::os::raw::c_char;
            }
            // SAFETY: `from - start` + `s.len()` is within the run's copy,
            // which the vector's heap holds for the vector's life.
            let ptr = unsafe { copy.add(from - start) } as *mut std::os::raw::c_char;
            let value = ffi::duckdb_string_t {
                value: ffi::duckdb_string_t__bindgen_ty_1 {
                    pointer: ffi::duckdb_string_t__bindgen_ty_1__bindgen_ty_1 { length: s.len() as u32, prefix, ptr },
                },
            };
            // SAFETY: `row` is a slot of `data`.
            unsafe { *data.add(row) = value };
        }
    }

    /// Row `row` of a VARCHAR or BLOB vector.
    pub fn set_string(&self, row: usize, s: &str) {
        assert!(row < self.capacity, "row {row} of a vector of {}", self.capacity);
        // SAFETY: a VARCHAR/BLOB vector's data, and a row below its capacity;
        // `s` is a str, so UTF-8.
        unsafe {
            self.put_string(ffi::duckdb_vector_get_data(self.raw) as *mut ffi::duckdb_string_t, row, s.as_bytes())
        };
    }

    /// DuckDB keeps strings of at most 12 bytes inline in the vector's
    /// `duckdb_string_t` (length + 12 bytes, the C API's documented layout),
    /// so those are written directly; longer ones are copied into the
    /// vector's string heap by DuckDB, without checking their UTF-8 again
    /// (every text reaching here is a Rust `str`, already checked; the
    /// check was DuckDB's `Utf8Proc::Analyze`, about 1% of the thread that
    /// runs DuckDB's sink in a `COPY`).
    ///
    /// # Safety
    /// `data` is this VARCHAR/BLOB vector's data and `row` is below its
    /// capacity; for a VARCHAR vector `s` is UTF-8.
    unsafe fn put_string(&self, data: *mut ffi::duckdb_string_t, row: usize, s: &[u8]) {
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
            // SAFETY: by this function's contract `row` is a slot of `data`.
            unsafe { *data.add(row) = value };
        } else {
            // SAFETY: a live VARCHAR/BLOB vector and a row below its
            // capacity; DuckDB copies the bytes, which for VARCHAR are
            // UTF-8 by this function's contract.
            unsafe {
                ffi::duckdb_unsafe_vector_assign_string_element_len(
                    self.raw,
                    row as u64,
                    s.as_ptr() as *const _,
                    s.len() as u64,
                )
            };
        }
    }

    /// Row `row` of an 8-byte vector (BIGINT, TIMESTAMPTZ).
    pub fn set_i64(&self, row: usize, value: i64) {
        assert!(row < self.capacity, "row {row} of a vector of {}", self.capacity);
        // SAFETY: an 8-byte vector's data holds `capacity` i64; `row` is below it.
        unsafe { *(ffi::duckdb_vector_get_data(self.raw) as *mut i64).add(row) = value };
    }

    /// Row `row` of a BOOLEAN vector.
    pub fn set_bool(&self, row: usize, value: bool) {
        assert!(row < self.capacity, "row {row} of a vector of {}", self.capacity);
        // SAFETY: a BOOLEAN vector's data holds `capacity` bools; `row` is below it.
        unsafe { *(ffi::duckdb_vector_get_data(self.raw) as *mut bool).add(row) = value };
    }

    /// Marks the invalid rows; a vector with no nulls keeps DuckDB's fast path.
    pub fn write_validity(&self, valid: &[bool]) {
        assert!(valid.len() <= self.capacity, "{} rows of a vector of {}", valid.len(), self.capacity);
        if valid.iter().all(|v| *v) {
            return;
        }
        // SAFETY: after ensure_validity_writable the mask has one bit per
        // row of the vector's capacity, which `valid` does not exceed.
        unsafe {
            ffi::duckdb_vector_ensure_validity_writable(self.raw);
            let mask = ffi::duckdb_vector_get_validity(self.raw);
            for (row, ok) in valid.iter().enumerate() {
                if !ok {
                    *mask.add(row / 64) &= !(1u64 << (row % 64));
                }
            }
        }
    }

    /// Sets `rows` rows of a VARCHAR vector to the same text.
    pub fn fill_varchar(&self, text: &str, rows: usize) {
        assert!(rows <= self.capacity, "{rows} rows of a vector of {}", self.capacity);
        // SAFETY: a VARCHAR vector's data, fetched once; every row is below its capacity.
        let data = unsafe { ffi::duckdb_vector_get_data(self.raw) } as *mut ffi::duckdb_string_t;
        for row in 0..rows {
            // SAFETY: `data` is this vector's and `row` < rows <= capacity.
            unsafe { self.put_string(data, row, text.as_bytes()) };
        }
    }

    /// Writes each text of `runs` on its count of rows, one run after the
    /// other from row 0 (a chunk of several files' rows: each row's file).
    /// A run's text is stored once: its other rows refer to the same bytes.
    pub fn varchar_runs<'t>(&self, runs: impl Iterator<Item = (&'t str, usize)>) {
        // SAFETY: a VARCHAR vector's data, fetched once; rows past its
        // capacity are never written (checked below).
        let data = unsafe { ffi::duckdb_vector_get_data(self.raw) } as *mut ffi::duckdb_string_t;
        let mut row = 0;
        for (text, n) in runs.filter(|&(_, n)| n > 0) {
            assert!(row + n <= self.capacity, "{} rows of a vector of {}", row + n, self.capacity);
            // SAFETY: `data` is this vector's and `row` < its capacity.
            unsafe { self.put_string(data, row, text.as_bytes()) };
            for r in row + 1..row + n {
                // SAFETY: rows `row` and `r` are below the capacity; the
                // string at `row` is inlined or points into this vector's
                // own string heap, which lives as long as the vector, so
                // another row of it may hold the same value.
                unsafe { *data.add(r) = *data.add(row) };
            }
            row += n;
        }
    }

    /// Makes a VARCHAR vector a constant vector of `text`: every row of the
    /// chunk has it, and it is stored once (a file's name on each of 2,048
    /// rows was 2,048 string copies).
    pub fn constant_varchar(&self, text: &str) {
        // SAFETY: the value is created from a pointer and length that live
        // across the call (DuckDB copies the bytes), referenced by this
        // live vector (DuckDB keeps its own copy) and destroyed once.
        unsafe {
            let mut value = ffi::duckdb_create_varchar_length(text.as_ptr().cast(), text.len() as ffi::idx_t);
            ffi::duckdb_vector_reference_value(self.raw, value);
            ffi::duckdb_destroy_value(&mut value);
        }
    }

    /// Makes a TIMESTAMPTZ vector a constant vector of `micros` since the epoch.
    pub fn constant_timestamp_tz(&self, micros: i64) {
        // SAFETY: as in `constant_varchar`.
        unsafe {
            let mut value = ffi::duckdb_create_timestamp_tz(ffi::duckdb_timestamp { micros });
            ffi::duckdb_vector_reference_value(self.raw, value);
            ffi::duckdb_destroy_value(&mut value);
        }
    }

    /// Row 0 gets `text`, every other row NULL.
    pub fn first_row_only(&self, text: Option<&str>, rows: usize) {
        let mut valid = vec![false; rows];
        if let Some(t) = text {
            if rows > 0 {
                self.fill_varchar(t, 1);
                valid[0] = true;
            }
        }
        self.write_validity(&valid);
    }
}
