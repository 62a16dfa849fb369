//! Writing a scan's rows as Parquet (sanitize_pipeline): a plan's chunks
//! become Arrow record batches typed as DuckDB types them (arrow_batch.rs)
//! and go through the parquet crate's Arrow writer into a file that is
//! published atomically, with the registry in its footer (parquet_file.rs).

mod arrow_batch;
mod footer_registry;
mod parquet_file;
#[cfg(test)]
mod tests;

pub use footer_registry::{canonical_registry, empty_registry, registry_from_parquet_with};
#[cfg(test)]
pub use parquet_file::ROW_GROUP_ROWS;
pub use parquet_file::{ParquetCompression, ParquetSink, WrittenFile};
