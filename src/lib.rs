//! schema_sanitizer: a DuckDB extension that turns messy files into stable,
//! typed tables with a versioned schema registry.
//!
//! Everything but `ffi` and `functions` is a plain Rust engine with no DuckDB
//! in sight; `cargo test` builds it without the `extension` feature.
//!
//! Modules are crate-private: the only export is the entry point in `ffi`.
//! Without the `extension` feature nothing calls the engine but its tests,
//! so dead-code analysis means something only with the feature on (`make
//! check` runs clippy both ways).
#![cfg_attr(not(feature = "extension"), allow(dead_code, unused_imports))]

pub(crate) mod bigquery;
pub(crate) mod error;
pub(crate) mod formats;
pub(crate) mod functions;
pub(crate) mod infer;
pub(crate) mod options;
pub(crate) mod output;
pub(crate) mod pipeline;
pub(crate) mod quiet;
pub(crate) mod registry;
pub(crate) mod route;
pub(crate) mod scalar;
pub(crate) mod source;
pub(crate) mod value;

#[cfg(feature = "extension")]
mod ffi;

#[cfg(test)]
mod test_support {
    /// Property-test cases: the default, or `PROPTEST_CASES` for longer runs.
    pub fn cases(default: u32) -> u32 {
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
    }
}
