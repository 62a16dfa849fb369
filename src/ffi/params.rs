//! Reading bind parameters into the engine's [`ParamValue`].

use std::ffi::{CStr, CString};

use duckdb::ffi;

use crate::options::{ParamType, ParamValue};

/// Converts and destroys a `duckdb_value` of the declared type.
pub unsafe fn take_value(mut value: ffi::duckdb_value, ty: ParamType) -> ParamValue {
    if value.is_null() {
        return ParamValue::Null;
    }
    let out = unsafe { read_value(value, ty) };
    unsafe { ffi::duckdb_destroy_value(&mut value) };
    out
}

unsafe fn read_value(value: ffi::duckdb_value, ty: ParamType) -> ParamValue {
    if unsafe { ffi::duckdb_is_null_value(value) } {
        return ParamValue::Null;
    }
    match ty {
        ParamType::Boolean => ParamValue::Bool(unsafe { ffi::duckdb_get_bool(value) }),
        ParamType::Integer | ParamType::Bigint => ParamValue::Int(unsafe { ffi::duckdb_get_int64(value) }),
        ParamType::Varchar => ParamValue::Str(unsafe { varchar(value) }),
        ParamType::VarcharList => {
            let n = unsafe { ffi::duckdb_get_list_size(value) };
            let mut items = Vec::with_capacity(n as usize);
            for i in 0..n {
                let child = unsafe { ffi::duckdb_get_list_child(value, i) };
                items.push(unsafe { take_value(child, ParamType::Varchar) });
            }
            ParamValue::List(items)
        }
    }
}

unsafe fn varchar(value: ffi::duckdb_value) -> String {
    let ptr = unsafe { ffi::duckdb_get_varchar(value) };
    if ptr.is_null() {
        return String::new();
    }
    let s = unsafe { CStr::from_ptr(ptr) }.to_string_lossy().into_owned();
    unsafe { ffi::duckdb_free(ptr as *mut _) };
    s
}

/// A named parameter, or `None` when the query did not pass it.
pub unsafe fn named(info: ffi::duckdb_bind_info, name: &str, ty: ParamType) -> Option<ParamValue> {
    let c = CString::new(name).ok()?;
    let value = unsafe { ffi::duckdb_bind_get_named_parameter(info, c.as_ptr()) };
    if value.is_null() {
        return None;
    }
    Some(unsafe { take_value(value, ty) })
}
