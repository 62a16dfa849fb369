//! `sanitize_registry()` and `sanitize_registry(registry)`.

use crate::error::Result;
use crate::options::FieldNamePolicy;
use crate::registry::{finalize, parse_registry, FinalizeOptions, Registry};

/// A new, empty registry (docs/registry.md), for the
/// default `lower_alpha` policy.
pub fn empty_registry() -> String {
    Registry::empty(FieldNamePolicy::LowerAlpha).json_text()
}

/// Validates a registry and returns it in canonical form: keys sorted,
/// fields in registry order, `variants` rebuilt from `canonical_schema`.
pub fn canonical_registry(text: &str) -> Result<String> {
    let mut registry = parse_registry(text)?;
    let opts =
        FinalizeOptions { policy: registry.field_name_policy, order: crate::options::ColumnOrder::SchemaContractFirst };
    // Every field is established, so finalizing only orders the outputs.
    finalize(&mut registry.root, &opts)?;
    Ok(registry.json_text())
}

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
