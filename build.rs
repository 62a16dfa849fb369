//! Reads `extension_config`, the one place that pins DuckDB, and
//! - hands the C API version and extension name to the entry point;
//! - fails the build when Cargo.toml's `duckdb` crate pin has drifted from it.

use std::collections::HashMap;

fn main() {
    println!("cargo:rerun-if-changed=extension_config");
    println!("cargo:rerun-if-changed=Cargo.toml");
    let text = std::fs::read_to_string("extension_config").expect("extension_config is missing");
    let config: HashMap<&str, &str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim(), v.trim()))
        .collect();
    let get = |k: &str| *config.get(k).unwrap_or_else(|| panic!("extension_config lacks {k}"));

    let duckdb = get("DUCKDB_VERSION");
    let parts: Vec<u32> = duckdb.split('.').map(|p| p.parse().expect("DUCKDB_VERSION is M.m.p")).collect();
    // duckdb-rs encodes DuckDB M.m.p as crate version 1.(M*10000 + m*100 + p).0
    let crate_version = format!("1.{}.0", parts[0] * 10000 + parts[1] * 100 + parts[2]);
    let cargo = std::fs::read_to_string("Cargo.toml").expect("Cargo.toml");
    let pin = format!("duckdb = {{ version = \"={crate_version}\"");
    if !cargo.contains(&pin) {
        panic!("Cargo.toml must pin {pin} to follow DUCKDB_VERSION={duckdb} in extension_config (run scripts/set_duckdb_version.sh)");
    }

    println!("cargo:rustc-env=SCHEMA_SANITIZER_C_API_VERSION={}", get("C_API_VERSION"));
    println!("cargo:rustc-env=SCHEMA_SANITIZER_EXTENSION_VERSION={}", get("EXTENSION_VERSION"));
    println!("cargo:rustc-env=SCHEMA_SANITIZER_DUCKDB_VERSION={duckdb}");
}
