//! The schema registry: the JSON contract one run hands to the next.
//!
//! `canonical_schema` is authoritative: a tree of output fields, each naming
//! its `source_key` and `version`, from which the version families are
//! rebuilt. `variants` is a derived index by path for people and tools. See
//! docs/registry.md for the document field by field.

mod document;
mod finalize;
mod merge;
pub mod naming;

pub use document::{parse_registry, Registry};
pub use finalize::{finalize, DriftEvent, FinalizeOptions};
pub use merge::merge_registries;

/// The footer key-value entry that carries the registry of a Parquet file
/// the extension writes (`COPY ... (KV_METADATA {'schema_sanitizer.registry':
/// ...})` writes the same entry; docs/registry.md), and that
/// `sanitize_registry_from_parquet` and the pipeline read back.
pub const PARQUET_REGISTRY_KEY: &str = "schema_sanitizer.registry";
