//! One input written to one Parquet file, and the order of attempts that
//! `sanitize_pipeline` and `sanitize_ingest` share: strict from the
//! registry first (the first record it does not take ends that attempt,
//! which writes nothing), then additively; strict only under
//! `schema_mode := 'strict'`; additively when there is no registry.

use std::sync::Arc;

use crate::error::SanitizeError;
use crate::options::SchemaMode;
use crate::output::{ParquetCompression, ParquetSink, WrittenFile};
use crate::scan::{Chunk, ScanPlan, Scanner, Stats};

/// `compression`: the codec of the Parquet files written (zstd unless
/// given); the input's codec is `input_compression`.
pub fn output_compression(params: &crate::options::RowParams<'_>) -> crate::error::Result<ParquetCompression> {
    match params.text("compression")? {
        None => Ok(ParquetCompression::Zstd),
        Some(s) => ParquetCompression::parse(&s).ok_or_else(|| {
            params.bad(
                "compression",
                format!("must be {}, not '{s}' (the input's codec is input_compression)", ParquetCompression::NAMES),
            )
        }),
    }
}

/// Why an attempt failed: its input (which `on_error` may read past) or its
/// output (which always ends the run).
pub enum Failure {
    Read(SanitizeError),
    Output(SanitizeError),
}

/// What one pass wrote.
pub struct Written {
    pub file: WrittenFile,
    pub stats: Stats,
    /// Rows whose rescue column is not NULL.
    pub rows_rescued: u64,
    /// Rows written from each of the plan's files.
    pub rows_by_file: Vec<u64>,
    pub registry: String,
    pub drifts: String,
}

/// Reads `plan` and writes its rows to `output` (the Parquet writer's own
/// temporary file until the end: nothing reaches `output` unless the whole
/// input is read). `after_first_chunk` runs once the first chunk is written.
pub fn write_plan(
    function: &str,
    plan: Arc<ScanPlan>,
    output: &str,
    compression: ParquetCompression,
    session: Option<crate::scan::scan_log::Session>,
    mut after_first_chunk: impl FnMut(),
) -> Result<Written, Failure> {
    // The writer's messages are named here, once.
    let output_failure = |e: SanitizeError| Failure::Output(e.in_function(function));
    let mut sink = ParquetSink::create(output, &plan, compression).map_err(output_failure)?;
    let mut scanner = Scanner::new(Arc::clone(&plan));
    scanner.log_as(session);
    let mut chunk = Chunk::new(&plan);
    let mut first = true;
    let mut rows_rescued = 0;
    let mut rows_by_file = vec![0u64; plan.files.len()];
    let rescuing = plan.options.rescue_column.is_some();
    while scanner.next_chunk(&mut chunk).map_err(Failure::Read)? > 0 {
        sink.write(&plan, &chunk, first).map_err(output_failure)?;
        if first {
            after_first_chunk();
        }
        first = false;
        for &(file, rows) in chunk.file_runs() {
            if let Some(n) = rows_by_file.get_mut(file) {
                *n += rows as u64;
            }
        }
        // The rescue column is the chunk's last (scan/scanner.rs
        // `Chunk::new`).
        if let Some(rescue) = chunk.columns.last().filter(|_| rescuing) {
            rows_rescued += rescue.valid.iter().take(chunk.rows).filter(|v| **v).count() as u64;
        }
    }
    let file = sink.finish().map_err(output_failure)?;
    Ok(Written {
        file,
        stats: scanner.stats,
        rows_rescued,
        rows_by_file,
        registry: plan.registry_json.clone(),
        drifts: plan.drifts_json.clone(),
    })
}

/// Runs `attempt(mode, drift_ends_scan)` in the shared order (module doc);
/// the result and the pass's name (`strict`, `strict_then_additive`,
/// `additive`).
pub fn strict_then_additive<W>(
    has_registry: bool,
    strict_only: bool,
    mut attempt: impl FnMut(SchemaMode, bool) -> Result<W, Failure>,
) -> Result<(W, &'static str), Failure> {
    match (has_registry, strict_only) {
        (_, true) => attempt(SchemaMode::Strict, false).map(|w| (w, "strict")),
        (true, false) => match attempt(SchemaMode::Strict, true) {
            Err(Failure::Read(e)) if e.kind == crate::error::ErrorKind::Drift => {
                attempt(SchemaMode::Additive, false).map(|w| (w, "strict_then_additive"))
            }
            other => other.map(|w| (w, "strict")),
        },
        (false, false) => attempt(SchemaMode::Additive, false).map(|w| (w, "additive")),
    }
}
