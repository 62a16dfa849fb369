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

/// Switches that tests turn on to compare a fast path with the general
/// path it must agree with. Outside tests a switch holds nothing and is
/// always off, so asking costs the extension nothing.
pub(crate) mod test_switch {
    #[cfg(test)]
    use std::sync::atomic::{AtomicBool, Ordering};

    pub struct TestSwitch {
        #[cfg(test)]
        on: AtomicBool,
    }

    impl TestSwitch {
        pub const fn new() -> Self {
            TestSwitch {
                #[cfg(test)]
                on: AtomicBool::new(false),
            }
        }

        #[inline]
        pub fn is_on(&self) -> bool {
            #[cfg(test)]
            return self.on.load(Ordering::Relaxed);
            #[cfg(not(test))]
            false
        }

        /// Runs `f` with the switch on, and turns it off again however `f`
        /// ends (which changes no result elsewhere: other tests running
        /// meanwhile only take the slower path).
        #[cfg(test)]
        pub fn on_for<T>(&self, f: impl FnOnce() -> T) -> T {
            struct Off<'a>(&'a AtomicBool);
            impl Drop for Off<'_> {
                fn drop(&mut self) {
                    self.0.store(false, Ordering::Relaxed);
                }
            }
            self.on.store(true, Ordering::Relaxed);
            let _off = Off(&self.on);
            f()
        }
    }

    #[cfg(test)]
    mod tests {
        use super::TestSwitch;

        #[test]
        fn a_switch_is_on_only_while_its_closure_runs_even_one_that_panics() {
            let switch = TestSwitch::new();
            assert!(!switch.is_on());
            assert!(switch.on_for(|| switch.is_on()));
            assert!(!switch.is_on());
            let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| switch.on_for(|| panic!("x"))));
            assert!(panicked.is_err());
            assert!(!switch.is_on());
        }
    }
}

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
