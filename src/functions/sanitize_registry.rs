//! `sanitize_registry()`, `sanitize_registry(registry)`, `sanitize_registry_merge` and
//! `sanitize_registry_from_parquet`: the SQL names over output/footer_registry.rs and registry/.

use crate::error::{Result, SanitizeError};

/// `sanitize_registry_merge(registries)`: the registries folded in list
/// order (registry/merge.rs); NULLs are skipped. Its aggregate form is
/// `sanitize_registry_merge(list(registry ORDER BY ...))` (docs/registry.md).
pub const REGISTRY_MERGE: &str = "sanitize_registry_merge";

/// `None` when the list holds no registry (empty, or NULLs only), as an
/// aggregate over no values is NULL.
pub fn merge_registry_list(function: &str, documents: &[Option<&str>]) -> Result<Option<String>> {
    if documents.iter().all(Option::is_none) {
        return Ok(None);
    }
    crate::registry::merge_registries(documents)
        .map(|r| Some(r.json_text()))
        .map_err(|m| SanitizeError::options(format!("{function}: {m}")))
}

pub use crate::output::{canonical_registry, empty_registry, registry_from_parquet_with};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_registry_round_trips() {
        let e = empty_registry();
        assert_eq!(canonical_registry(&e).unwrap(), e);
        assert!(e.contains("\"schema_generation\":0"));
    }

    #[test]
    fn invalid_registries_name_the_problem() {
        for (bad, needle) in [
            ("nope", "not valid JSON"),
            ("[]", "JSON object"),
            (r#"{"registry_version":2}"#, "registry_version 2"),
            (
                r#"{"registry_version":1,"schema_generation":0,"field_name_policy":"x","canonical_schema":{"fields":[]}}"#,
                "field_name_policy",
            ),
            (
                r#"{"registry_version":1,"schema_generation":0,"field_name_policy":"lower_alpha","canonical_schema":{"fields":[{"name":"a","source_key":"a","version":1,"type":{"kind":"uint128"}}]}}"#,
                "canonical_schema.fields[0].type.kind 'uint128'",
            ),
        ] {
            let e = canonical_registry(bad).unwrap_err();
            assert!(e.message.contains(needle), "{bad}: {e}");
        }
    }
}
