//! The engine's error. Every message is final text for a DuckDB error: it
//! names the function, the parameter or the file and line, then the cause.

use std::fmt;

/// What kind of error it is, set by the constructor where it arises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A bad named parameter or argument (bind time).
    Options,
    /// Bad input data: a malformed file, a strict-mode violation, a scan
    /// whose records were mostly bad.
    Input,
    /// The file system or a remote store failed.
    Io,
    /// A broken invariant of ours: always a bug.
    Internal,
    /// A record the registry does not take, in a scan that asked to stop
    /// there and fall back (`RunSettings::drift_ends_scan`, the pipeline's
    /// strict attempt): the caller redoes the input additively instead of
    /// reporting it.
    Drift,
}

/// An error whose message is final text for a DuckDB error, and its kind.
/// DuckDB's C API takes a message only (a bind error shows as a Binder
/// Error, an execution error as an Invalid Input Error: docs/errors.md),
/// so the kind decides what the engine does with an error, and the words
/// say what it is: only `internal` changes them, adding "please report".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SanitizeError {
    pub message: String,
    pub kind: ErrorKind,
}

impl SanitizeError {
    /// A bad named parameter or argument, raised at bind time.
    pub fn options(message: impl Into<String>) -> Self {
        Self { message: message.into(), kind: ErrorKind::Options }
    }
    /// Bad input data (a malformed file, a strict-mode violation, ...).
    pub fn input(message: impl Into<String>) -> Self {
        Self { message: message.into(), kind: ErrorKind::Input }
    }
    /// The file system or a remote store failed.
    pub fn io(message: impl Into<String>) -> Self {
        Self { message: message.into(), kind: ErrorKind::Io }
    }
    /// A broken invariant of ours: always a bug.
    pub fn internal(message: impl Into<String>) -> Self {
        Self { message: format!("internal error (please report): {}", message.into()), kind: ErrorKind::Internal }
    }
    /// A record the registry does not take, in a scan that asked to stop
    /// there and fall back (`RunSettings::drift_ends_scan`).
    pub fn drift(message: impl Into<String>) -> Self {
        Self { message: message.into(), kind: ErrorKind::Drift }
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
