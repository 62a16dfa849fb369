//! The only code that touches DuckDB. Every callback runs inside
//! [`guard::contain`], so neither a Rust panic nor an error crosses the C
//! boundary: both become DuckDB errors.

mod files;
mod guard;
mod handles;
mod ingest;
mod rows;
mod scalar;
mod table;
mod types;
mod vectors;

use std::ffi::CString;

use duckdb::ffi;

use crate::functions::rows::ROWS_FUNCTIONS;
use crate::functions::TABLE_FUNCTIONS;

const C_API_VERSION: &str = env!("SCHEMA_SANITIZER_C_API_VERSION");

/// The entry point DuckDB looks up by the file name: `<name>_init_c_api`.
///
/// # Safety
/// Called by DuckDB with valid `info` and `access` pointers.
#[no_mangle]
pub unsafe extern "C" fn schema_sanitizer_init_c_api(
    info: ffi::duckdb_extension_info,
    access: *const ffi::duckdb_extension_access,
) -> bool {
    // SAFETY: DuckDB's pointers, valid for this call (the function's contract).
    let result = guard::catch(|| unsafe { init(info, access) });
    match result {
        Ok(loaded) => loaded,
        Err(message) => {
            // SAFETY: `access` is valid for this call; set_error copies the message.
            if let Some(set_error) = unsafe { (*access).set_error } {
                let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
                // SAFETY: DuckDB's setter with DuckDB's info and a NUL-terminated message.
                unsafe { set_error(info, text.as_ptr()) };
            }
            false
        }
    }
}

/// # Safety
/// `info` and `access` are DuckDB's, valid for the entry point's call.
unsafe fn init(info: ffi::duckdb_extension_info, access: *const ffi::duckdb_extension_access) -> Result<bool, String> {
    // SAFETY: DuckDB's pointers; the call fills the C API function table.
    let have_api =
        unsafe { ffi::duckdb_rs_extension_api_init(info, access, C_API_VERSION) }.map_err(|e| e.to_string())?;
    if !have_api {
        // DuckDB has already recorded why (an older C API than we need).
        return Ok(false);
    }
    // SAFETY: `access` is valid for this call.
    let get_database = unsafe { (*access).get_database }.ok_or("DuckDB gave no get_database function")?;
    // SAFETY: DuckDB's function with DuckDB's info.
    let db = unsafe { get_database(info) };
    if db.is_null() {
        return Err("DuckDB gave no database to register the functions in".into());
    }
    let mut con: ffi::duckdb_connection = std::ptr::null_mut();
    // SAFETY: a live database; the connection is ours, closed below.
    if unsafe { ffi::duckdb_connect(*db, &mut con) } != ffi::DuckDBSuccess {
        return Err("could not open a connection to register the functions".into());
    }
    // A load into one database: its token tells its connections from
    // another database's connections of the same id (scan_log::Session).
    let database = NEXT_DATABASE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    // SAFETY: the connection stays open until after registration.
    let registered = register_all(&unsafe { handles::Connection::from_raw(con, database) });
    // SAFETY: our connection, closed once.
    unsafe { ffi::duckdb_disconnect(&mut con) };
    registered.map(|_| true)
}

/// The token of the next database the extension is loaded into.
static NEXT_DATABASE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn register_all(con: &handles::Connection) -> Result<(), String> {
    for def in TABLE_FUNCTIONS {
        table::register(con, def)?;
    }
    scalar::register_sanitize_registry(con)?;
    table::register_stats(con)?;
    for def in ROWS_FUNCTIONS {
        rows::register(con, def)?;
    }
    ingest::register(con)?;
    scalar::register_bigquery_sidecar(con)?;
    scalar::register_registry_from_parquet(con)?;
    scalar::register_registry_merge(con)?;
    guard::install_quiet_panic_hook();
    if std::env::var_os("SCHEMA_SANITIZER_PANIC_PROBE").is_some() {
        // Test-only: proves that a panic inside a callback becomes an error.
        table::register_panic_probe(con)?;
    }
    Ok(())
}
