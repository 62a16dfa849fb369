//! Field-name policies and deterministic collision suffixes.

use crate::options::FieldNamePolicy;

/// The four ETL columns every scan appends, after the data, partition and
/// rescue columns (scan/layout.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EtlColumn {
    /// The file a row came from, as the user named it.
    SourceFile,
    /// When the scan started (TIMESTAMPTZ, UTC).
    IngestionTimestamp,
    /// The registry after the scan, on the first row only.
    SchemaRegistry,
    /// The scan's drift events, on the first row only.
    SchemaDrifts,
}

impl EtlColumn {
    pub const ALL: [EtlColumn; 4] =
        [EtlColumn::SourceFile, EtlColumn::IngestionTimestamp, EtlColumn::SchemaRegistry, EtlColumn::SchemaDrifts];

    pub const fn name(self) -> &'static str {
        match self {
            EtlColumn::SourceFile => "source_file",
            EtlColumn::IngestionTimestamp => "ingestion_timestamp",
            EtlColumn::SchemaRegistry => "schema_registry",
            EtlColumn::SchemaDrifts => "schema_drifts",
        }
    }
}

/// The output columns every scan appends; a top-level source field may not
/// take these names, before or after sanitizing.
pub const RESERVED_COLUMNS: [&str; 4] = [
    EtlColumn::SourceFile.name(),
    EtlColumn::IngestionTimestamp.name(),
    EtlColumn::SchemaRegistry.name(),
    EtlColumn::SchemaDrifts.name(),
];

/// Sanitizes one source key under a policy. May return an empty string; the
/// caller then falls back to [`empty_name`].
///
/// - `lower_alpha`: lowercase ASCII letters only (`"First Name"` → `firstname`).
/// - `lower_snake`: lowercase letters, digits and `_`; camelCase boundaries and
///   runs of other characters become one `_` (`"userId"`, `"user id"` → `user_id`);
///   leading and trailing `_` are dropped, and a name starting with a digit gets
///   a leading `_` so that it stays a valid BigQuery column name.
/// - `preserve`: the key unchanged, but for a NUL (U+0000), which no
///   DuckDB column name can hold: it becomes a space here, where the
///   collision suffixes see it (`"foo\u0000bar"` beside `"foo bar"` gives
///   two columns, never two of one name).
pub fn sanitize(key: &str, policy: FieldNamePolicy) -> String {
    match policy {
        FieldNamePolicy::Preserve => key.replace('\0', " "),
        FieldNamePolicy::LowerAlpha => {
            key.chars().filter(|c| c.is_ascii_alphabetic()).map(|c| c.to_ascii_lowercase()).collect()
        }
        FieldNamePolicy::LowerSnake => {
            let mut out = String::with_capacity(key.len());
            let mut pending_sep = false;
            let mut prev_lower_or_digit = false;
            for c in key.chars() {
                if c.is_ascii_alphanumeric() {
                    if c.is_ascii_uppercase() && prev_lower_or_digit {
                        pending_sep = true;
                    }
                    if pending_sep && !out.is_empty() {
                        out.push('_');
                    }
                    pending_sep = false;
                    out.push(c.to_ascii_lowercase());
                    prev_lower_or_digit = c.is_ascii_lowercase() || c.is_ascii_digit();
                } else {
                    // `_` and every other character separate words.
                    pending_sep = true;
                    prev_lower_or_digit = false;
                }
            }
            if out.starts_with(|c: char| c.is_ascii_digit()) {
                out.insert(0, '_');
            }
            out
        }
    }
}

/// Prefixes BigQuery reserves for its own columns (case-insensitive).
pub const BIGQUERY_RESERVED_PREFIXES: &[&str] = &[
    "_TABLE_",
    "_FILE_",
    "_PARTITION",
    "_ROW_TIMESTAMP",
    "__ROOT__",
    "_COLIDENTIFIER",
    "_CHANGE_SEQUENCE_NUMBER",
    "_CHANGE_TYPE",
    "_CHANGE_TIMESTAMP",
];

/// Longest base name under `bigquery_profile`: room for a collision
/// suffix and a version suffix within BigQuery's 300 characters.
const BIGQUERY_MAX_BASE: usize = 240;

/// A sanitized name made BigQuery-safe (`bigquery_profile`): letters,
/// digits and `_` only (others become `_`), starting with a letter or `_`
/// (else `_` is prepended), not starting with a reserved prefix (else `f`
/// is prepended), and at most 240 characters (else cut, with a hash of the
/// source key appended). Deterministic in the name and key.
pub fn bigquery_safe(name: &str, key: &str) -> String {
    let mut out: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if out.is_empty() {
        return empty_name(key);
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    let upper = out.to_ascii_uppercase();
    if BIGQUERY_RESERVED_PREFIXES.iter().any(|p| upper.starts_with(p)) {
        out.insert(0, 'f');
    }
    if out.len() > BIGQUERY_MAX_BASE {
        out.truncate(BIGQUERY_MAX_BASE - 9);
        out = collision_name(&out, key);
    }
    out
}

/// FNV-1a, 32 bits: a stable hash of the dirty key (std's hasher is seeded
/// per process and may change between Rust releases).
pub fn stable_hash(key: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in key.bytes() {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// Suffix that separates colliding names, derived only from the dirty key.
pub fn collision_name(base: &str, key: &str) -> String {
    format!("{base}_{:08x}", stable_hash(key))
}

/// The name of a key that sanitizes to nothing (`"$$$"` under `lower_alpha`).
pub fn empty_name(key: &str) -> String {
    format!("field_{:08x}", stable_hash(key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use FieldNamePolicy::*;

    #[test]
    fn policies() {
        assert_eq!(sanitize("First Name", LowerAlpha), "firstname");
        assert_eq!(sanitize("amount_2", LowerAlpha), "amount");
        assert_eq!(sanitize("First Name", LowerSnake), "first_name");
        assert_eq!(sanitize("userId", LowerSnake), "user_id");
        assert_eq!(sanitize("HTTPServer", LowerSnake), "httpserver");
        assert_eq!(sanitize("__a--b__", LowerSnake), "a_b");
        assert_eq!(sanitize("2nd place", LowerSnake), "_2nd_place");
        assert_eq!(sanitize("Já Vu", Preserve), "Já Vu");
        assert_eq!(sanitize("foo\0bar", Preserve), "foo bar");
        assert_eq!(sanitize("$$$", LowerAlpha), "");
    }

    #[test]
    fn bigquery_safe_names() {
        assert_eq!(bigquery_safe("Já Vu", "Já Vu"), "J__Vu");
        assert_eq!(bigquery_safe("2nd", "2nd"), "_2nd");
        assert_eq!(bigquery_safe("_PARTITIONTIME", "_PARTITIONTIME"), "f_PARTITIONTIME");
        assert_eq!(bigquery_safe("_file_name", "_file_name"), "f_file_name");
        let long = "a".repeat(400);
        let safe = bigquery_safe(&long, &long);
        assert_eq!(safe.len(), BIGQUERY_MAX_BASE);
        assert_eq!(safe, bigquery_safe(&long, &long));
        assert_eq!(bigquery_safe("amount", "amount"), "amount");
    }

    #[test]
    fn generated_names_are_stable() {
        assert_eq!(collision_name("name", "Name"), collision_name("name", "Name"));
        assert_ne!(collision_name("name", "Name"), collision_name("name", "NAME"));
        assert!(empty_name("$$$").starts_with("field_"));
    }
}
