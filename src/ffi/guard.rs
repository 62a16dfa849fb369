//! Panic containment for every callback DuckDB makes into us.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

use super::handles::{BindInfo, FunctionInfo, InitInfo};

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

/// The callback shapes DuckDB calls: each runs `f` under [`catch`] and hands
/// an error (or a contained panic) to the matching error setter.
pub fn guard_bind(info: &BindInfo, f: impl FnOnce() -> Result<(), String>) {
    if let Err(message) = catch(f) {
        info.set_error(&message);
    }
}

pub fn guard_init(info: &InitInfo, f: impl FnOnce() -> Result<(), String>) {
    if let Err(message) = catch(f) {
        info.set_error(&message);
    }
}

pub fn guard_scan(info: &FunctionInfo, f: impl FnOnce() -> Result<(), String>) {
    if let Err(message) = catch(f) {
        info.set_error(&message);
    }
}

pub fn guard_scalar(info: &FunctionInfo, f: impl FnOnce() -> Result<(), String>) {
    if let Err(message) = catch(f) {
        info.set_scalar_error(&message);
    }
}
