//! The registry a Parquet file carries in its footer, read back: by
//! `sanitize_registry_from_parquet`, by the pipeline resuming over a
//! partition already written, and by `sanitize_latest_registry`. It is the
//! entry [`crate::output`]'s writer puts there, read with the scans'
//! checked footer reader; and what makes a registry text canonical.

use crate::error::{Result, SanitizeError};
use crate::options::FieldNamePolicy;
use crate::registry::{finalize, parse_registry, FinalizeOptions, Registry, PARQUET_REGISTRY_KEY};

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

/// `sanitize_registry_from_parquet(path)`: the registry in a Parquet file's
/// footer key-value metadata, validated and in canonical form; `None` when
/// the footer has no such key. Reads the footer only, with the scans'
/// checked footer reader: locally through `opener` (DuckDB's file system
/// when SQL calls it: its lockdowns apply), remotely by range requests for
/// the file's last bytes.
pub fn registry_from_parquet_with(
    path: &str,
    opener: &crate::formats::byte_source::FileOpener,
) -> Result<Option<String>> {
    let source = footer_source(path, opener)?;
    let Some(text) =
        crate::formats::parquet::footer_value(&source, PARQUET_REGISTRY_KEY).map_err(|e| not_parquet(path, &e))?
    else {
        return Ok(None);
    };
    canonical_registry(&text).map(Some).map_err(|e| {
        let path = crate::source::display_uri(path);
        SanitizeError::input(format!("the registry in the footer of \"{path}\" is invalid: {}", e.message))
    })
}

fn not_parquet(path: &str, e: &dyn std::fmt::Display) -> SanitizeError {
    let path = crate::source::display_uri(path);
    SanitizeError::input(format!("cannot read the Parquet footer of \"{path}\": {e}"))
}

/// Bytes read at first from the end of a remote file: most footers fit, so
/// one request usually does.
const FOOTER_GUESS_BYTES: u64 = 64 << 10;

/// What the footer is read from: a local file opened through `opener`, or
/// a remote file's tail that holds its whole footer (a second request when
/// the first tail was too short).
fn footer_source(
    path: &str,
    opener: &crate::formats::byte_source::FileOpener,
) -> Result<crate::formats::byte_source::SharedSource> {
    use crate::formats::byte_source::SharedSource;
    let shared = |source| SharedSource::new(source).map_err(|e| not_parquet(path, &e));
    if let Some(mut tail) = crate::source::remote_tail(path, FOOTER_GUESS_BYTES)? {
        let n = tail.len();
        if let Some(claimed) = crate::formats::parquet::claimed_length(&tail) {
            // The footer, its length and both magics.
            let needed = claimed + 12;
            if needed > crate::formats::parquet::MAX_FOOTER_BYTES + 12 {
                return Err(not_parquet(
                    path,
                    &format!(
                        "the footer claims {} bytes, more than the {} bytes read at most",
                        needed - 12,
                        crate::formats::parquet::MAX_FOOTER_BYTES
                    ),
                ));
            }
            if needed > n as u64 && n as u64 == FOOTER_GUESS_BYTES {
                tail = crate::source::remote_tail(path, needed)?.unwrap_or_default();
            }
        }
        return shared(Box::new(std::io::Cursor::new(tail)));
    }
    let local = crate::source::file_uri_path(path).unwrap_or(path);
    let file = opener.open(local).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => SanitizeError::io(format!("no such file \"{path}\"")),
        _ => SanitizeError::io(format!("cannot open file \"{path}\": {e}")),
    })?;
    shared(file)
}
