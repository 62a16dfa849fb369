//! The engine's error. Every message is final text for a DuckDB error: it
//! names the function, the parameter or the file and line, then the cause.

use std::fmt;

/// An error whose message is final text for a DuckDB error. The
/// constructors name the kind at the call site (a bad option, bad input,
/// failed I/O, our own bug); DuckDB's C API takes a message only, so the
/// kind lives in the words: only `internal` changes them, adding "please
/// report".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SanitizeError {
    pub message: String,
    /// A strict-mode violation that ended a scan run with
    /// `Options::drift_ends_scan` (sanitize_pipeline's strict attempt): the
    /// caller redoes the input additively instead of reporting it.
    pub drift: bool,
}

impl SanitizeError {
    /// A bad named parameter or argument, raised at bind time.
    pub fn options(message: impl Into<String>) -> Self {
        Self { message: message.into(), drift: false }
    }
    /// Bad input data (a malformed file, a strict-mode violation, ...).
    pub fn input(message: impl Into<String>) -> Self {
        Self { message: message.into(), drift: false }
    }
    /// The file system or a remote store failed.
    pub fn io(message: impl Into<String>) -> Self {
        Self { message: message.into(), drift: false }
    }
    /// A broken invariant of ours: always a bug.
    pub fn internal(message: impl Into<String>) -> Self {
        Self { message: format!("internal error (please report): {}", message.into()), drift: false }
    }
    /// A record the registry does not take, in a scan that asked to stop
    /// there and fall back (`Options::drift_ends_scan`).
    pub fn drift(message: impl Into<String>) -> Self {
        Self { message: message.into(), drift: true }
    }
    /// Prefixes the message with the SQL function's name, DuckDB style.
    pub fn in_function(mut self, function: &str) -> Self {
        if !self.message.starts_with(function) {
            self.message = format!("{function}: {}", self.message);
        }
        self
    }
}

impl fmt::Display for SanitizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SanitizeError {}

pub type Result<T, E = SanitizeError> = std::result::Result<T, E>;
