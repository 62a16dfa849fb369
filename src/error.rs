//! Error kinds of the engine. Every message is final text for a DuckDB error:
//! it names the function, the parameter or the file and line, then the cause.

use std::fmt;

/// Where in the input a record came from; used to point errors at their row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    /// 1-based line of the record's first byte (for line-oriented formats).
    pub line: u64,
    /// Byte offset of the record's first byte in the file.
    pub byte: u64,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "file \"{}\" at line {} (byte {})", self.file, self.line, self.byte)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A bad named parameter or argument, raised at bind time.
    Options,
    /// Bad input data (malformed record, strict-mode violation, ...).
    Input,
    /// The file system or a remote store failed.
    Io,
    /// A broken invariant of ours: always a bug.
    Internal,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SanitizeError {
    pub kind: ErrorKind,
    pub message: String,
}

impl SanitizeError {
    pub fn options(message: impl Into<String>) -> Self {
        Self { kind: ErrorKind::Options, message: message.into() }
    }
    pub fn input(message: impl Into<String>) -> Self {
        Self { kind: ErrorKind::Input, message: message.into() }
    }
    pub fn io(message: impl Into<String>) -> Self {
        Self { kind: ErrorKind::Io, message: message.into() }
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self { kind: ErrorKind::Internal, message: format!("internal error (please report): {}", message.into()) }
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
