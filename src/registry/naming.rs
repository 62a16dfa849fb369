//! Field-name policies and deterministic collision suffixes.

use crate::options::FieldNamePolicy;

/// The output columns every scan appends; a top-level source field may not
/// take these names, before or after sanitizing.
pub const RESERVED_COLUMNS: [&str; 4] = ["source_file", "ingestion_timestamp", "schema_registry", "schema_drifts"];

/// Sanitizes one source key under a policy. May return an empty string; the
/// caller then falls back to [`empty_name`].
///
/// - `lower_alpha`: lowercase ASCII letters only (`"First Name"` → `firstname`).
/// - `lower_snake`: lowercase letters, digits and `_`; camelCase boundaries and
///   runs of other characters become one `_` (`"userId"`, `"user id"` → `user_id`);
///   leading and trailing `_` are dropped, and a name starting with a digit gets
///   a leading `_` so that it stays a valid BigQuery column name.
/// - `preserve`: the key unchanged.
pub fn sanitize(key: &str, policy: FieldNamePolicy) -> String {
    match policy {
        FieldNamePolicy::Preserve => key.to_string(),
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
        assert_eq!(sanitize("$$$", LowerAlpha), "");
    }

    #[test]
    fn generated_names_are_stable() {
        assert_eq!(collision_name("name", "Name"), collision_name("name", "Name"));
        assert_ne!(collision_name("name", "Name"), collision_name("name", "NAME"));
        assert!(empty_name("$$$").starts_with("field_"));
    }
}
