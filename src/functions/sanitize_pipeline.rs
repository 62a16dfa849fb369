//! `sanitize_pipeline(source_prefix, output_prefix, ...)`: its SQL surface
//! (name, named parameters, result columns and rows). The run itself, the
//! partition pipeline, is partitions/run.rs.

use super::{Cell, RowSource};
use crate::error::Result;
pub use crate::partitions::run::{PipelineRun, Report, COLUMNS, FUNCTION};

/// Every named parameter: the plan's, the warm-up's, the output's, and the
/// scan options.
pub fn named_parameters() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = crate::partitions::plan::PARAMETERS
        .iter()
        .copied()
        .filter(|n| crate::partitions::run::is_plan_parameter(n))
        .collect();
    names.extend(crate::partitions::run::OWN_PARAMETERS);
    super::with_scan_options(names)
}

impl Report {
    /// The report row as shown: the output path and the error without the
    /// credentials or signature a URI in them may carry (source/redact.rs).
    pub(crate) fn cells(self) -> Vec<Cell> {
        let int = |n: u64| Cell::Int(i64::try_from(n).ok());
        let output_path = self.output_path.map(|p| crate::source::display_uri(&p).into_owned());
        let error = self.error.map(|e| crate::source::redact_text(&e).into_owned());
        vec![
            Cell::Text(Some(self.phase.to_string())),
            Cell::Text(Some(self.partition_key)),
            Cell::Text(Some(self.status.to_string())),
            Cell::Text(self.pass.map(str::to_string)),
            int(self.rows_read),
            int(self.rows_written),
            int(self.rows_skipped),
            int(self.rows_nulled),
            int(self.rows_rescued),
            Cell::Text(output_path),
            Cell::Int(self.output_bytes.and_then(|n| i64::try_from(n).ok())),
            Cell::Int(self.schema_generation.and_then(|n| i64::try_from(n).ok())),
            Cell::Text(self.drifts),
            Cell::Text(self.registry),
            int(self.elapsed_ms),
            Cell::Text(error),
        ]
    }
}

impl RowSource for PipelineRun {
    /// One row per call: a client streaming the result sees each step as
    /// it finishes.
    fn next_rows(&mut self, _max: usize) -> Result<Vec<Vec<Cell>>> {
        Ok(self.next_report()?.map(|r| vec![r.cells()]).unwrap_or_default())
    }
}
