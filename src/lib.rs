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
pub(crate) mod partitions;
pub(crate) mod quiet;
pub(crate) mod registry;
pub(crate) mod route;
pub(crate) mod scalar;
pub(crate) mod scan;
pub(crate) mod source;
pub(crate) mod value;

#[cfg(feature = "extension")]
mod ffi;

/// The JSON parser comparison (benches/parsers.rs), with the candidates
/// it needs; not part of the extension.
#[cfg(feature = "parser-bench")]
pub use formats::parser_bench;

#[cfg(test)]
mod test_support {
    /// Property-test cases: the default, or `PROPTEST_CASES` for longer runs.
    pub fn cases(default: u32) -> u32 {
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
    }

    /// A new empty directory under the system's temporary directory, named
    /// for the test (`tag`), the process and a counter.
    pub fn scratch_dir(tag: &str) -> std::path::PathBuf {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let dir =
            std::env::temp_dir().join(format!("ss-{tag}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
