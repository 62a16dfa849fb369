//! Shape inference: the schema tree, how a value is classified, and the
//! reconciliation lattice that absorbs values into version families.
//!
//! The same [`choose_version`] serves inference (growth allowed) and
//! materialization (no growth), so the probe and the scan cannot disagree
//! about where a value goes.

mod classify;
mod declared;
// The fast key hasher lives with the tape (value/key_hash.rs), so that
// the decoders below `infer` use it too.
use crate::value::key_hash as hash;
mod lattice;
mod maps;
mod merge;
mod policy;
mod schema;
mod shapes;
mod width;

pub use crate::value::{Declared, MAX_DECIMAL_PRECISION};
pub use classify::{classify, classify_told, Classified, DepthLimits, Level, Rules, ValueClass};

pub use lattice::{
    absorb_record, choose_version, has_duplicate_keys, string_keyed_value, type_takes, wraps_whole, Growth, InferStats,
};
pub use maps::{infer_maps, MapRules};
pub use merge::merge_struct;
pub use policy::{check_paths_name_fields, Policies};
pub use schema::{schema_string, Family, ScalarKind, StructNode, TimeUnit, TypeNode, Version};
#[cfg(test)]
pub use shapes::BOARD_OFF;
pub use shapes::{ShapeCache, ShapeSet, ShapeWriter};
pub use width::{has_map, running_width, schema_width, widest_object, ColumnLimit};
