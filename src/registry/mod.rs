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
