//! What a table function may learn about the client at bind time: the
//! `enable_external_access` setting and the connection id.

use std::ffi::CString;

use duckdb::ffi;

pub struct ClientInfo {
    /// `enable_external_access`; `true` when the setting cannot be read.
    pub external_access: bool,
    pub connection_id: Option<u64>,
}

pub unsafe fn client_info(info: ffi::duckdb_bind_info) -> ClientInfo {
    let mut out = ClientInfo { external_access: true, connection_id: None };
    let mut ctx: ffi::duckdb_client_context = std::ptr::null_mut();
    unsafe { ffi::duckdb_table_function_get_client_context(info, &mut ctx) };
    if ctx.is_null() {
        return out;
    }
    out.connection_id = Some(unsafe { ffi::duckdb_client_context_get_connection_id(ctx) });
    if let Ok(name) = CString::new("enable_external_access") {
        let mut scope: ffi::duckdb_config_option_scope = 0;
        let mut value = unsafe { ffi::duckdb_client_context_get_config_option(ctx, name.as_ptr(), &mut scope) };
        if !value.is_null() {
            if !unsafe { ffi::duckdb_is_null_value(value) } {
                out.external_access = unsafe { ffi::duckdb_get_bool(value) };
            }
            unsafe { ffi::duckdb_destroy_value(&mut value) };
        }
    }
    unsafe { ffi::duckdb_destroy_client_context(&mut ctx) };
    out
}
