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
    let opts = FinalizeOptions {
        policy: registry.field_name_policy,
        order: crate::options::ColumnOrder::SchemaContractFirst,
        bigquery_names: false,
    };
    // Every field is established, so finalizing only orders the outputs.
    finalize(&mut registry.root, &opts)?;
    Ok(registry.json_text())
}

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

pub use crate::output::PARQUET_REGISTRY_KEY;

/// `sanitize_registry_from_parquet(path)`: the registry in a Parquet file's
/// footer key-value metadata, validated and in canonical form; `None` when
/// the footer has no such key. Reads the footer only: locally from the end
/// of the file, remotely by range requests for the file's last bytes. A
/// local file is opened with `opener` (DuckDB's file system when SQL calls
/// it: its lockdowns apply).
pub fn registry_from_parquet_with(
    function: &str,
    path: &str,
    opener: &crate::formats::byte_source::FileOpener,
) -> Result<Option<String>> {
    let footer = read_footer(function, path, opener)?;
    let footer = crate::formats::parquet::checked_metadata(&footer).map_err(|e| not_parquet(function, path, &e))?;
    let metadata = parquet::file::metadata::ParquetMetaDataReader::decode_metadata(&footer)
        .map_err(|e| not_parquet(function, path, &e))?;
    let pairs = metadata.file_metadata().key_value_metadata();
    let Some(text) =
        pairs.into_iter().flatten().find(|kv| kv.key == PARQUET_REGISTRY_KEY).and_then(|kv| kv.value.clone())
    else {
        return Ok(None);
    };
    canonical_registry(&text).map(Some).map_err(|e| {
        let path = crate::source::display_uri(path);
        SanitizeError::input(format!("{function}: the registry in the footer of \"{path}\" is invalid: {}", e.message))
    })
}

fn not_parquet(function: &str, path: &str, e: &dyn std::fmt::Display) -> SanitizeError {
    let path = crate::source::display_uri(path);
    SanitizeError::input(format!("{function}: cannot read the Parquet footer of \"{path}\": {e}"))
}

/// Bytes read at first from the end of a remote file: most footers fit, so
/// one request usually does.
const FOOTER_GUESS_BYTES: u64 = 64 << 10;

/// The thrift-encoded file metadata of a Parquet file (without the 8-byte
/// tail of length and magic).
fn read_footer(function: &str, path: &str, opener: &crate::formats::byte_source::FileOpener) -> Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let tail_of = |bytes: &[u8]| -> Result<u64> {
        let n = bytes.len();
        if n < 12 || &bytes[n - 4..] != b"PAR1" {
            return Err(not_parquet(function, path, &"no PAR1 magic at the end"));
        }
        Ok(u32::from_le_bytes([bytes[n - 8], bytes[n - 7], bytes[n - 6], bytes[n - 5]]) as u64)
    };
    if let Some(mut tail) = crate::source::remote_tail(function, path, FOOTER_GUESS_BYTES)? {
        let len = tail_of(&tail)?;
        if len + 8 > tail.len() as u64 {
            tail = crate::source::remote_tail(function, path, len + 8)?.unwrap_or_default();
        }
        let n = tail.len();
        if (len + 8) as usize > n {
            return Err(not_parquet(function, path, &"the footer is longer than the file"));
        }
        return Ok(tail[n - 8 - len as usize..n - 8].to_vec());
    }
    let local = crate::source::file_uri_path(path).unwrap_or(path);
    let mut f = opener.open(local).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => SanitizeError::io(format!("{function}: no such file \"{path}\"")),
        _ => SanitizeError::io(format!("{function}: cannot open file \"{path}\": {e}")),
    })?;
    let size = f.size().unwrap_or(0);
    let mut last = [0u8; 8];
    if size < 12 || f.seek(SeekFrom::End(-8)).is_err() || f.read_exact(&mut last).is_err() {
        return Err(not_parquet(function, path, &"the file is too short"));
    }
    let len = tail_of(&[b"PAR1".as_slice(), &last].concat())?;
    if len + 8 > size {
        return Err(not_parquet(function, path, &"the footer is longer than the file"));
    }
    let mut footer = vec![0u8; len as usize];
    f.seek(SeekFrom::End(-8 - len as i64))
        .and_then(|_| f.read_exact(&mut footer))
        .map_err(|e| not_parquet(function, path, &e))?;
    Ok(footer)
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
