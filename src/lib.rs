//! schema_sanitizer: a DuckDB extension that turns messy files into stable,
//! typed tables with a versioned schema registry.
//!
//! Everything but `ffi` and `functions` is a plain Rust engine with no DuckDB
//! in sight; `cargo test` builds it without the `extension` feature.

pub mod error;
pub mod formats;
pub mod functions;
pub mod infer;
pub mod options;
pub mod pipeline;
pub mod quiet;
pub mod registry;
pub mod route;
pub mod scalar;
pub mod source;
pub mod value;

#[cfg(feature = "extension")]
mod ffi;

#[cfg(test)]
mod test_support {
    /// Property-test cases: the default, or `PROPTEST_CASES` for longer runs.
    pub fn cases(default: u32) -> u32 {
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
    }
}
