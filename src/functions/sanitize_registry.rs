//! `sanitize_registry()` and `sanitize_registry(registry)`.

use crate::error::{Result, SanitizeError};
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

/// The footer key under which a Parquet file carries its registry
/// (`COPY ... (KV_METADATA {'schema_sanitizer.registry': ...})`, or the
/// pipeline's writer).
pub const PARQUET_REGISTRY_KEY: &str = "schema_sanitizer.registry";

/// `sanitize_registry_from_parquet(path)`: the registry in a Parquet file's
/// footer key-value metadata, validated and in canonical form; `None` when
/// the footer has no such key. Reads the footer only (a remote file is
/// staged first, docs/remote.md).
pub fn registry_from_parquet(function: &str, path: &str) -> Result<Option<String>> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let mut options = crate::options::Options::defaults(crate::options::InputFormat::Parquet);
    options.validate_extension = false;
    let resolved = crate::source::resolve(function, &[path.to_string()], &options)?;
    let Some(file) = resolved.files.first() else { return Ok(None) };
    let io = |e: &dyn std::fmt::Display| {
        SanitizeError::input(format!("{function}: cannot read the Parquet footer of \"{path}\": {e}"))
    };
    let f = std::fs::File::open(file).map_err(|e| io(&e))?;
    let reader = SerializedFileReader::new(f).map_err(|e| io(&e))?;
    let metadata = reader.metadata().file_metadata().key_value_metadata();
    let Some(text) =
        metadata.into_iter().flatten().find(|kv| kv.key == PARQUET_REGISTRY_KEY).and_then(|kv| kv.value.clone())
    else {
        return Ok(None);
    };
    canonical_registry(&text).map(Some).map_err(|e| {
        SanitizeError::input(format!("{function}: the registry in the footer of \"{path}\" is invalid: {}", e.message))
    })
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
