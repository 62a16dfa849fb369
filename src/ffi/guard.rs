//! Panic containment for every callback DuckDB makes into us.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

/// Keeps the extension silent: a panic inside our callbacks becomes a DuckDB
/// error, so the default hook's message on stderr would only be noise in
/// the host's terminal. Panics elsewhere in the process go to the hook that
/// was installed before us, unchanged.
pub fn install_quiet_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !crate::quiet::is_ours() {
                previous(info);
            }
        }));
    });
}

/// Runs `f`, turning a panic into an error message. A panic means a bug of
/// ours; the message says so instead of taking the host process down.
pub fn catch<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    let quiet = crate::quiet::enter();
    let result = catch_unwind(AssertUnwindSafe(f));
    drop(quiet);
    match result {
        Ok(r) => r,
        Err(payload) => {
            let detail = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(format!("schema_sanitizer internal error (please report): {detail}"))
        }
    }
}

/// A C string for DuckDB's error setters (interior NULs would truncate it).
pub fn c_message(message: &str) -> std::ffi::CString {
    std::ffi::CString::new(message.replace('\0', " ")).unwrap_or_default()
}

/// The callback shapes DuckDB calls: each runs `f` under [`catch`] and hands
/// an error (or a contained panic) to the matching error setter.
pub fn guard_bind(info: duckdb::ffi::duckdb_bind_info, f: impl FnOnce() -> Result<(), String>) {
    if let Err(message) = catch(f) {
        let m = c_message(&message);
        unsafe { duckdb::ffi::duckdb_bind_set_error(info, m.as_ptr()) };
    }
}

pub fn guard_init(info: duckdb::ffi::duckdb_init_info, f: impl FnOnce() -> Result<(), String>) {
    if let Err(message) = catch(f) {
        let m = c_message(&message);
        unsafe { duckdb::ffi::duckdb_init_set_error(info, m.as_ptr()) };
    }
}

pub fn guard_scan(info: duckdb::ffi::duckdb_function_info, f: impl FnOnce() -> Result<(), String>) {
    if let Err(message) = catch(f) {
        let m = c_message(&message);
        unsafe { duckdb::ffi::duckdb_function_set_error(info, m.as_ptr()) };
    }
}
