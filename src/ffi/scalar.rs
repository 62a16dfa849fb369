//! `sanitize_registry()` and `sanitize_registry(VARCHAR)`, one function set.

use duckdb::ffi;

use super::guard::{c_message, catch};
use super::types::LogicalType;
use crate::functions::sanitize_registry::{canonical_registry, empty_registry};

pub fn register_sanitize_registry(con: ffi::duckdb_connection) -> Result<(), String> {
    unsafe {
        let name = c_message("sanitize_registry");
        let mut set = ffi::duckdb_create_scalar_function_set(name.as_ptr());
        for arity in [0, 1] {
            let mut f = ffi::duckdb_create_scalar_function();
            ffi::duckdb_scalar_function_set_name(f, name.as_ptr());
            if arity == 1 {
                ffi::duckdb_scalar_function_add_parameter(f, LogicalType::varchar().0);
            }
            ffi::duckdb_scalar_function_set_return_type(f, LogicalType::varchar().0);
            ffi::duckdb_scalar_function_set_function(f, Some(if arity == 0 { empty_fn } else { canonical_fn }));
            ffi::duckdb_add_scalar_function_to_set(set, f);
            ffi::duckdb_destroy_scalar_function(&mut f);
        }
        let rc = ffi::duckdb_register_scalar_function_set(con, set);
        ffi::duckdb_destroy_scalar_function_set(&mut set);
        if rc != ffi::DuckDBSuccess {
            return Err("registering sanitize_registry failed".into());
        }
    }
    Ok(())
}

unsafe extern "C" fn empty_fn(
    info: ffi::duckdb_function_info,
    input: ffi::duckdb_data_chunk,
    output: ffi::duckdb_vector,
) {
    let result = catch(|| {
        let rows = unsafe { ffi::duckdb_data_chunk_get_size(input) } as usize;
        let text = empty_registry();
        unsafe { super::vectors::fill_varchar(output, &text, rows.max(1)) };
        Ok(())
    });
    if let Err(m) = result {
        unsafe { ffi::duckdb_scalar_function_set_error(info, c_message(&m).as_ptr()) };
    }
}

unsafe extern "C" fn canonical_fn(
    info: ffi::duckdb_function_info,
    input: ffi::duckdb_data_chunk,
    output: ffi::duckdb_vector,
) {
    let result = catch(|| unsafe {
        let rows = ffi::duckdb_data_chunk_get_size(input) as usize;
        let arg = ffi::duckdb_data_chunk_get_vector(input, 0);
        let strings = ffi::duckdb_vector_get_data(arg) as *mut ffi::duckdb_string_t;
        let validity = ffi::duckdb_vector_get_validity(arg);
        let mut valid = vec![true; rows];
        for (row, ok) in valid.iter_mut().enumerate() {
            if !validity.is_null() && !ffi::duckdb_validity_row_is_valid(validity, row as u64) {
                *ok = false;
                continue;
            }
            let s = strings.add(row);
            let len = ffi::duckdb_string_t_length(*s) as usize;
            let data = ffi::duckdb_string_t_data(s) as *const u8;
            let bytes = std::slice::from_raw_parts(data, len);
            let text = std::str::from_utf8(bytes)
                .map_err(|_| "sanitize_registry: the registry is not valid UTF-8".to_string())?;
            let canonical = canonical_registry(text).map_err(|e| format!("sanitize_registry: {}", e.message))?;
            ffi::duckdb_vector_assign_string_element_len(
                output,
                row as u64,
                canonical.as_ptr() as *const _,
                canonical.len() as u64,
            );
        }
        super::vectors::write_validity(output, &valid);
        Ok(())
    });
    if let Err(m) = result {
        unsafe { ffi::duckdb_scalar_function_set_error(info, c_message(&m).as_ptr()) };
    }
}
