//! The source value model shared by every format: a flat "tape" of nodes.
//!
//! Decoders append records to a [`Tape`]; the engine walks them through
//! [`ValueRef`]. A tape is reused batch after batch, so a record costs no heap
//! allocation once the buffers have grown: strings live in one text buffer and
//! containers are ranges of the node vector, not boxed trees.

pub mod calendar;
mod declared;
mod declared_text;
pub mod flat_shape;
pub mod key_hash;
pub mod path;
mod reshape;
pub mod shape;
mod tape;
mod time_unit;
mod write_json;

pub use declared::{Declared, MAX_DECIMAL_PRECISION};
pub use declared_text::{decimal_value, sixteen, write_decimal};
pub use reshape::reshape_for_bigquery;
pub use tape::{DeclaredBits, Node, OpenContainer, Tape, ValueRef};
pub use time_unit::TimeUnit;
pub use write_json::write_compact_json;
