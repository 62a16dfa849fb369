//! Panic containment for every callback DuckDB makes into us.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `f`, turning a panic into an error message. A panic means a bug of
/// ours; the message says so instead of taking the host process down.
pub fn catch<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
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
