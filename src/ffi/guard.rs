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

/// Where a callback reports its error: each handle's error setter.
pub trait ErrorSink {
    fn set_error(&self, message: &str);
}

impl ErrorSink for BindInfo {
    fn set_error(&self, message: &str) {
        BindInfo::set_error(self, message);
    }
}

impl ErrorSink for InitInfo {
    fn set_error(&self, message: &str) {
        InitInfo::set_error(self, message);
    }
}

/// A table function's scan.
impl ErrorSink for FunctionInfo {
    fn set_error(&self, message: &str) {
        FunctionInfo::set_error(self, message);
    }
}

/// A scalar function's callback, whose errors go through another setter.
pub struct Scalar<'a>(pub &'a FunctionInfo);

impl ErrorSink for Scalar<'_> {
    fn set_error(&self, message: &str) {
        self.0.set_scalar_error(message);
    }
}

/// Every callback DuckDB makes runs its body here: under [`catch`], with an
/// error (or a contained panic) handed to the callback's error setter.
/// Every message leaves through here, so here a URI quoted in one (by us or
/// by a storage client) loses its credentials and signature once for all
/// (source/redact.rs).
pub fn guard(sink: &impl ErrorSink, f: impl FnOnce() -> Result<(), String>) {
    if let Err(message) = catch(f) {
        sink.set_error(&crate::source::redact_text(&message));
    }
}
