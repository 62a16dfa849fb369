use std::sync::Arc;

use super::ordered::{OrderedReader, Step};
use super::{range_reader, BadAction, BadRecords, Input, LineCursor, ScanPlan, Stats};
use crate::error::Result;
use crate::formats::Batch;
use crate::infer::{ScalarKind, TimeUnit, TypeNode};
use crate::options::HiveType;
use crate::options::SchemaMode;
use crate::route::{columns_for_struct, Column, Router};

/// The engine type of a hive partition column (TIMESTAMP is read as UTC,
/// like every timestamp of the engine: TIMESTAMPTZ).
pub fn partition_kind(ty: HiveType) -> ScalarKind {
    match ty {
        HiveType::Varchar => ScalarKind::Str,
        HiveType::Date => ScalarKind::Date,
        HiveType::Timestamp => ScalarKind::Timestamp(TimeUnit::Micros),
        HiveType::Bigint => ScalarKind::Int,
        HiveType::Integer => ScalarKind::Declared(crate::value::Declared::Int32),
        HiveType::Double => ScalarKind::Float,
        HiveType::Boolean => ScalarKind::Bool,
    }
}

/// One output chunk: the data columns plus which file produced its rows (a
/// chunk never spans two files, so `source_file` is one value per chunk).
pub struct Chunk {
    pub columns: Vec<Column>,
    pub rows: usize,
    pub file_index: usize,
}

impl Chunk {
    /// The data columns, then one per hive partition key.
    pub fn new(plan: &ScanPlan) -> Self {
        let mut columns = columns_for_struct(&plan.schema);
        columns
            .extend(plan.partitions.columns.iter().map(|c| Column::for_type(&TypeNode::Scalar(partition_kind(c.ty)))));
        Chunk { columns, rows: 0, file_index: 0 }
    }
    fn clear(&mut self) {
        self.columns.iter_mut().for_each(Column::clear);
        self.rows = 0;
    }
}

/// The materialization pass over every file of a plan.
pub struct Scanner {
    plan: Arc<ScanPlan>,
    router: Router,
    /// The plan's ranges, decoded in parallel and read in order; opened at
    /// the first chunk.
    reader: Option<OrderedReader>,
    /// The file of the records in `batch`.
    file_index: Option<usize>,
    lines: LineCursor,
    batch: Batch,
    /// Next record of `batch` to materialize.
    cursor: usize,
    pub stats: Stats,
    /// Where the counters are published for `sanitize_stats()`.
    scan_id: Option<u64>,
    bad: BadRecords,
}

impl Scanner {
    pub fn new(plan: Arc<ScanPlan>) -> Self {
        let trusted = plan.options.schema_mode == SchemaMode::Additive;
        Scanner {
            router: Router::new(trusted),
            plan: Arc::clone(&plan),
            reader: None,
            file_index: None,
            lines: LineCursor::default(),
            batch: Batch::default(),
            cursor: 0,
            stats: Stats::default(),
            scan_id: None,
            bad: BadRecords::default(),
        }
    }

    /// Routes only the top-level data columns marked in `wanted` (one flag
    /// per output of the schema's root; projection pushdown): the others
    /// stay empty. Bad records are judged on the whole record as before.
    pub fn project(&mut self, wanted: Vec<bool>) {
        self.router.project(wanted);
    }

    /// Publishes this scan's counters in the scan log (`sanitize_stats()`).
    pub fn log_as(&mut self, connection_id: Option<u64>) {
        let plan = &self.plan;
        self.scan_id = Some(super::scan_log::begin(&plan.function, &plan.path, connection_id, plan.started_at_micros));
    }

    fn publish(&self, finished: bool) {
        if let Some(id) = self.scan_id {
            let mut stats = self.stats;
            // Depth is measured by the probe; the scan does not re-measure it.
            stats.max_depth_seen = self.plan.probe_stats.max_depth_seen;
            stats.values_flattened = if self.plan.declared_probe {
                self.router.values_flattened
            } else {
                self.plan.probe_stats.values_flattened
            };
            super::scan_log::update(id, &stats, finished);
        }
    }

    /// Fills `chunk` with up to `max_rows` rows of one file. Returns the row
    /// count; 0 only once every file is exhausted.
    pub fn next_chunk(&mut self, chunk: &mut Chunk, max_rows: usize) -> Result<usize> {
        chunk.clear();
        let rows = self.next_rows(chunk, max_rows)?;
        // A chunk is one file's rows: its partition values are constants.
        let partitions = &self.plan.partitions;
        if rows > 0 && !partitions.columns.is_empty() {
            let data = chunk.columns.len() - partitions.columns.len();
            for (column, value) in chunk.columns[data..].iter_mut().zip(&partitions.values[chunk.file_index]) {
                column.push_partition(value, rows);
            }
        }
        Ok(rows)
    }

    /// The data columns of [`Self::next_chunk`].
    fn next_rows(&mut self, chunk: &mut Chunk, max_rows: usize) -> Result<usize> {
        let plan = Arc::clone(&self.plan);
        let function = plan.function.as_str();
        let on_error = plan.options.on_error;
        let rules = plan.rules();
        let strict = plan.options.schema_mode == SchemaMode::Strict;
        let data_columns = chunk.columns.len() - plan.partitions.columns.len();
        loop {
            if self.cursor == self.batch.len() && !self.refill()? {
                self.publish(true);
                // A probe that read the rows has checked this at bind.
                self.bad.check_not_all_bad(function, self.stats.rows_read, &plan.options)?;
                return Ok(chunk.rows);
            }
            let Some(file_index) = self.file_index else {
                continue;
            };
            if chunk.rows > 0 && chunk.file_index != file_index {
                self.publish(false);
                return Ok(chunk.rows);
            }
            chunk.file_index = file_index;
            let file = &plan.display_files[file_index];
            while self.cursor < self.batch.len() && chunk.rows < max_rows {
                let i = self.cursor;
                self.cursor += 1;
                self.stats.rows_read += 1;
                let meta = &self.batch.meta[i];
                if let Some(err) = &meta.error {
                    if self.bad.handle(function, file, meta, err, on_error, &mut self.stats)? == BadAction::EmitNull {
                        chunk.columns[..data_columns].iter_mut().for_each(Column::push_null);
                        chunk.rows += 1;
                    }
                    continue;
                }
                let record = self.batch.tape.record(i);
                if strict {
                    if let Some(v) = self.router.first_violation(&plan.schema, record, &rules) {
                        let why = v.to_string();
                        if !self.bad.handle_violation(function, file, meta, &why, on_error, &mut self.stats)? {
                            continue;
                        }
                    }
                }
                self.router.write_record(&plan.schema, record, &mut chunk.columns[..data_columns], &rules);
                self.stats.rows_emitted += 1;
                chunk.rows += 1;
            }
            self.stats.values_nulled = self.router.values_nulled;
            self.stats.duplicate_keys = self.router.duplicate_keys;
            if chunk.rows >= max_rows {
                self.publish(false);
                return Ok(chunk.rows);
            }
        }
    }

    /// Takes the next decoded batch in input order. False when every
    /// range is done.
    fn refill(&mut self) -> Result<bool> {
        let plan = Arc::clone(&self.plan);
        let function = plan.function.as_str();
        let reader = self.reader.get_or_insert_with(|| {
            let input = Input { function, files: &plan.files, names: &plan.display_files, ranges: &plan.ranges };
            range_reader(&input, &plan.options, Vec::new())
        });
        self.cursor = 0;
        loop {
            match reader.next(&mut self.batch).map_err(|e| e.in_function(function))? {
                None => {
                    self.batch.clear();
                    return Ok(false);
                }
                Some(Step::Records { range, .. }) => {
                    self.lines.fix(&mut self.batch);
                    self.file_index = Some(plan.ranges[range].file);
                    self.stats.batches += 1;
                    return Ok(true);
                }
                Some(Step::RangeEnd { range, bytes_read, lines }) => {
                    self.stats.bytes_read += bytes_read;
                    self.stats.files += u64::from(plan.ranges[range].end.is_none());
                    self.lines.range_ended(&plan.ranges, range, lines);
                }
            }
        }
    }
}
