//! The materialization pass of a plan: chunks of at most 2048 rows, decoded
//! and routed by the ordered reader's threads, judged for bad records and
//! counted on DuckDB's thread, with the partition and ETL columns added
//! (docs/architecture.md "Data flow of one scan").

use std::sync::Arc;

use super::ordered::{Decode, OrderedReader, RangeWork, Step};
use super::{range_reader, BadRecords, Input, LineCursor, ScanPlan, Stats, BATCH_RECORDS};
use crate::error::{Result, SanitizeError};
use crate::formats::json::SkipKeys;
use crate::formats::{Batch, RecordMeta};
use crate::infer::{ScalarKind, TimeUnit, TypeNode};
use crate::options::HiveType;
use crate::options::OnError;
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

/// One output chunk: the data columns plus which files produced its rows.
/// A chunk is one decoded batch's rows, or several small batches' joined
/// ([`Scanner::next_chunk`]), so it may span files: `files` gives them as
/// runs in row order, and `source_file` is one value per run.
pub struct Chunk {
    pub columns: Vec<Column>,
    pub rows: usize,
    /// (file index, rows) runs covering the chunk's rows in order.
    files: Vec<(usize, usize)>,
}

impl Chunk {
    /// The data columns, then one per hive partition key.
    pub fn new(plan: &ScanPlan) -> Self {
        let mut columns = columns_for_struct(&plan.schema);
        columns
            .extend(plan.partitions.columns.iter().map(|c| Column::for_type(&TypeNode::Scalar(partition_kind(c.ty)))));
        if plan.options.rescue_column.is_some() {
            columns.push(Column::for_type(&TypeNode::Scalar(ScalarKind::Str)));
        }
        Chunk { columns, rows: 0, files: Vec::new() }
    }

    /// The files the rows came from: (file index, rows) runs in row order.
    pub fn file_runs(&self) -> &[(usize, usize)] {
        &self.files
    }

    /// Every row is of file `file`.
    fn of_one_file(&mut self, file: usize) {
        self.files.clear();
        self.files.push((file, self.rows));
    }

    /// Bytes the chunk's columns hold ([`Column::bytes`]).
    fn bytes(&self) -> usize {
        self.columns.iter().map(Column::bytes).sum()
    }

    /// Appends `other`'s rows, columns and runs (a chunk of the same plan).
    fn append(&mut self, other: &Chunk) {
        for (a, b) in self.columns.iter_mut().zip(&other.columns) {
            a.append(b);
        }
        self.rows += other.rows;
        for &(file, rows) in &other.files {
            match self.files.last_mut() {
                Some((last, n)) if *last == file => *n += rows,
                _ => self.files.push((file, rows)),
            }
        }
    }

    /// How many leading columns are the data columns (then the partition
    /// columns, then the rescue column when there is one).
    pub fn data_columns(&self, plan: &ScanPlan) -> usize {
        self.columns.len() - plan.partitions.columns.len() - usize::from(plan.options.rescue_column.is_some())
    }
    fn clear(&mut self) {
        self.columns.iter_mut().for_each(Column::clear);
        self.rows = 0;
        self.files.clear();
    }
}

/// Bytes a chunk joined from small pieces holds at most (a single piece
/// may hold more: it is never cut). A chunk of 2048 rows of the bench's
/// events holds about 1 MiB.
pub(crate) const JOIN_BYTES: usize = 8 << 20;

/// The materialization pass over every file of a plan: helpers decode
/// and route each range's batches into column chunks (`RouteWork`), and
/// the consumer takes the chunks in input order, judging their bad records
/// and counting (scan/ordered.rs).
pub struct Scanner {
    plan: Arc<ScanPlan>,
    /// The top-level data columns a query uses (projection pushdown).
    wanted: Option<Vec<bool>>,
    /// Opened at the first chunk.
    reader: Option<OrderedReader<RouteWork>>,
    lines: LineCursor,
    /// The piece just taken (its chunk is swapped out to the caller).
    routed: Routed,
    /// `routed` holds a piece taken, and counted, but not given yet: it
    /// did not fit the chunk it would have joined.
    held: bool,
    /// A failure found while taking pieces to join, given by the next
    /// call, after the rows before it.
    failed: Option<SanitizeError>,
    /// Routes the pieces a helper left unrouted for this thread.
    router: Router,
    pub stats: Stats,
    values_flattened: u64,
    /// Where the counters are published for `sanitize_stats()`.
    scan_id: Option<u64>,
    bad: BadRecords,
    /// Records of the current file before this piece (`record_index`).
    file_records: u64,
    current_file: Option<usize>,
    /// This scan's rejects, handed to `sanitize_rejects()` when the scan
    /// ends or is dropped; not when a drift ended it (sanitize_pipeline
    /// discards that attempt and reads the input again).
    rejects: Vec<super::rejects::Reject>,
    rejects_bytes: usize,
    discard_rejects: bool,
    /// Rows given from the probe's counts (scan/tally.rs): decided at
    /// the first chunk, for a scan that routes no data column.
    counting: Option<Counting>,
    /// The record's keys none of whose columns the query uses: their
    /// values are only checked, not decoded (formats/json/mod.rs `SkipKeys`).
    skip: Option<Arc<SkipKeys>>,
    /// The probe read these files whole, found no bad record and one
    /// record per line: JSON Lines may be kept as text for the router's
    /// direct writes (route/direct.rs).
    text_lines: bool,
    /// Shared with the ranges' routing (`TextPause`).
    text_pause: Arc<TextPause>,
}

/// Where a scan that takes the probe's counts is: the range, and the rows
/// of it still to give (`None`: the range not started).
#[derive(Default)]
struct Counting {
    range: usize,
    left: Option<u64>,
}

impl Drop for Scanner {
    fn drop(&mut self) {
        if !self.discard_rejects {
            super::rejects::record(std::mem::take(&mut self.rejects));
        }
    }
}

impl Scanner {
    pub fn new(plan: Arc<ScanPlan>) -> Self {
        Scanner {
            router: consumer_router(&plan, None),
            plan,
            wanted: None,
            reader: None,
            lines: LineCursor::default(),
            routed: Routed::default(),
            held: false,
            failed: None,
            stats: Stats::default(),
            values_flattened: 0,
            scan_id: None,
            bad: BadRecords::default(),
            file_records: 0,
            current_file: None,
            rejects: Vec::new(),
            rejects_bytes: 0,
            discard_rejects: false,
            counting: None,
            skip: None,
            text_lines: false,
            text_pause: Arc::default(),
        }
    }

    /// Routes only the top-level data columns marked in `wanted` (one flag
    /// per output of the schema's root; projection pushdown): the others
    /// stay empty. Bad records are judged on the whole record as before.
    pub fn project(&mut self, wanted: Vec<bool>) {
        // The rescue column holds what the typed columns did not take, so
        // every column is routed to know it, whichever the query reads.
        if self.plan.options.rescue_column.is_some() {
            return;
        }
        self.router = consumer_router(&self.plan, Some(wanted.clone()));
        self.skip = skip_keys(&self.plan, &wanted).map(Arc::new);
        self.wanted = Some(wanted);
    }

    /// Steps the ranges' work for a thread waiting to take a chunk
    /// (`StepOnce`); `None` before the first chunk opens the reader.
    pub fn stepper(&self) -> Option<Arc<dyn super::ordered::StepOnce>> {
        self.reader.as_ref().map(OrderedReader::stepper)
    }

    /// This scan's id in the scan log, once [`Self::log_as`] made one.
    pub fn scan_id(&self) -> Option<u64> {
        self.scan_id
    }

    /// Publishes this scan's counters in the scan log (`sanitize_stats()`).
    pub fn log_as(&mut self, session: Option<super::scan_log::Session>) {
        let plan = &self.plan;
        let file_system = plan.file_systems();
        self.scan_id =
            Some(super::scan_log::begin(&plan.function, &plan.path, &file_system, session, plan.started_at_micros));
    }

    fn publish(&self, finished: bool) {
        if let Some(id) = self.scan_id {
            let mut stats = self.stats;
            // Depth is measured by the probe; the scan does not re-measure it.
            stats.max_depth_seen = self.plan.probe_stats.max_depth_seen;
            stats.values_flattened =
                if self.plan.declared_probe { self.values_flattened } else { self.plan.probe_stats.values_flattened };
            super::scan_log::update(id, &stats, finished);
        }
    }

    /// Fills `chunk` (made by [`Chunk::new`] for this plan) with the rows of
    /// the next decoded batches that have any, in input order: at most
    /// `BATCH_RECORDS` rows, small batches joined (`Chunk::file_runs` says
    /// whose rows are whose). Returns the row count; 0 only once every file
    /// is exhausted.
    pub fn next_chunk(&mut self, chunk: &mut Chunk) -> Result<usize> {
        // The one place a scan's messages get the function's name.
        let plan = Arc::clone(&self.plan);
        self.fill_chunk(chunk).map_err(|e| e.in_function(&plan.function))
    }

    fn fill_chunk(&mut self, chunk: &mut Chunk) -> Result<usize> {
        let plan = Arc::clone(&self.plan);
        if self.reader.is_none() && self.counting.is_none() {
            // The files are the ones the probe read, and it found no bad
            // record in them (scan/tally.rs).
            let tally = plan.tally.as_ref().filter(|t| t.still_holds(&plan.files));
            let clean = tally.is_some();
            let no_column = self.wanted.as_ref().is_some_and(|w| w.iter().all(|w| !w));
            if no_column && clean {
                self.counting = Some(Counting::default());
            } else if clean {
                // Every record parses: skipped values need no check.
                let one_per_line = tally.is_some_and(|t| t.one_record_per_line());
                self.skip = self.skip.take().map(|s| Arc::new((*s).clone().trusted(one_per_line)));
                self.text_lines = one_per_line;
            }
        }
        if self.counting.is_some() {
            return Ok(self.next_counted_chunk(chunk));
        }
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        // A piece held back by the last call comes first.
        let has_piece = std::mem::take(&mut self.held) || self.next_piece()?;
        let Some(routed) = self.routed.chunk.as_mut().filter(|_| has_piece) else {
            self.publish(true);
            super::rejects::record(std::mem::take(&mut self.rejects));
            // A probe that read the rows has checked this at bind.
            self.bad.check_not_all_bad(self.stats.rows_read, &plan.options)?;
            chunk.clear();
            return Ok(0);
        };
        // The caller's old chunk goes back to be reused by a decoder.
        std::mem::swap(chunk, routed);
        // Small pieces (each of 10,000 small files is one, and a range's
        // last) are joined up to a full chunk: DuckDB's sink and our copy
        // into its vectors cost per chunk as well as per row. Up to
        // `JOIN_BYTES` too, so that files of one huge record each are not
        // joined 2048 at a time; and not under a batch memory limit, whose
        // pieces are cut small on purpose.
        let mut bytes = chunk.bytes();
        while chunk.rows < BATCH_RECORDS && bytes < JOIN_BYTES && plan.options.batch_memory_limit_bytes.is_none() {
            match self.next_piece() {
                Ok(false) => break,
                // This chunk's rows come first: the failure is the next call's.
                Err(e) => {
                    self.failed = Some(e);
                    break;
                }
                Ok(true) => {
                    let Some(piece) = self.routed.chunk.as_ref() else { break };
                    let piece_bytes = piece.bytes();
                    if chunk.rows + piece.rows > BATCH_RECORDS || bytes + piece_bytes > JOIN_BYTES {
                        self.held = true;
                        break;
                    }
                    chunk.append(piece);
                    bytes += piece_bytes;
                }
            }
        }
        self.publish(false);
        Ok(chunk.rows)
    }

    /// Takes the next piece with rows into `self.routed`, counted and
    /// judged (`take_counts`), its partition values added; false once
    /// every range is done.
    fn next_piece(&mut self) -> Result<bool> {
        let plan = Arc::clone(&self.plan);
        loop {
            let reader = self.reader.get_or_insert_with(|| {
                let input =
                    Input { files: &plan.files, names: &plan.display_files, ranges: &plan.ranges, run: &plan.run };
                let (shared, wanted, skip) = (Arc::clone(&plan), self.wanted.clone(), self.skip.clone());
                let spares = SpareBatches::default();
                let (text_lines, pause) = (self.text_lines, Arc::clone(&self.text_pause));
                range_reader(&input, &plan.options, Vec::new(), move |decode, file_index| {
                    let decode = decode.skipping(skip.clone());
                    let work = RouteWork::new(decode, Arc::clone(&shared), wanted.clone(), file_index, spares.clone());
                    work.keeping_text(text_lines, Arc::clone(&pause))
                })
            });
            let range = match reader.next(&mut self.routed)? {
                None => return Ok(false),
                Some(Step::RangeEnd { range, bytes_read, lines }) => {
                    self.stats.bytes_read += bytes_read;
                    self.stats.files += u64::from(plan.ranges[range].end.is_none());
                    self.lines.range_ended(&plan.ranges, range, lines);
                    continue;
                }
                Some(Step::Piece { range }) => range,
            };
            let file_index = plan.ranges[range].file;
            if self.routed.deferred {
                // A helper left the routing to this thread, which was idle.
                let mut raw = std::mem::take(&mut self.routed.raw);
                let routed = route_batch(&plan, &mut self.router, &mut raw, file_index, &mut self.routed);
                self.routed.raw = raw;
                routed?;
                self.text_pause.routed(self.routed.text_written, self.routed.text_declined);
            }
            self.take_counts(file_index)?;
            let Some(routed) = self.routed.chunk.as_mut() else { continue };
            if routed.rows == 0 {
                continue;
            }
            routed.of_one_file(file_index);
            add_partition_values(&plan, routed, file_index);
            return Ok(true);
        }
    }

    /// Whether this scan took the probe's counts (tests).
    #[cfg(test)]
    pub fn counted(&self) -> bool {
        self.counting.is_some()
    }

    /// Whether this scan skips unwanted values by trust (tests).
    #[cfg(test)]
    pub fn skips_by_trust(&self) -> bool {
        self.skip.as_ref().is_some_and(|s| s.is_trusted())
    }

    /// [`Self::next_chunk`] from the probe's counts: rows of no data
    /// column, with their partition values, counted as a scan counts them.
    fn next_counted_chunk(&mut self, chunk: &mut Chunk) -> usize {
        let plan = Arc::clone(&self.plan);
        let (Some(tally), Some(at)) = (plan.tally.as_ref(), self.counting.as_mut()) else { return 0 };
        chunk.clear();
        loop {
            let Some(range) = plan.ranges.get(at.range) else {
                self.publish(true);
                return 0;
            };
            let counted = tally.ranges[at.range];
            let left = *at.left.get_or_insert(counted.records);
            if left == 0 {
                self.stats.bytes_read += counted.bytes;
                self.stats.files += u64::from(range.end.is_none());
                at.range += 1;
                at.left = None;
                continue;
            }
            let rows = left.min(super::BATCH_RECORDS as u64);
            at.left = Some(left - rows);
            let rows = rows as usize;
            chunk.rows = rows;
            chunk.of_one_file(range.file);
            add_partition_values(&plan, chunk, range.file);
            self.stats.batches += 1;
            self.stats.rows_read += rows as u64;
            self.stats.rows_emitted += rows as u64;
            self.publish(false);
            return rows;
        }
    }

    /// Counts the piece just taken and judges its bad records, in input
    /// order: `stop` fails here on the earliest one.
    fn take_counts(&mut self, file_index: usize) -> Result<()> {
        let plan = &self.plan;
        let (function, on_error) = (plan.function.as_str(), plan.options.on_error);
        let file = &plan.display_files[file_index];
        let routed = &mut self.routed;
        self.stats.batches += 1;
        self.stats.rows_read += routed.records;
        self.stats.rows_emitted += routed.routed;
        self.stats.values_nulled += routed.values_nulled;
        self.stats.duplicate_keys += routed.duplicate_keys;
        self.stats.list_nulls_dropped += routed.list_nulls_dropped;
        self.stats.values_rescued += routed.values_rescued;
        if routed.columnar {
            self.stats.rows_columnar += routed.routed;
        }
        self.stats.rows_direct += routed.text_written;
        self.values_flattened += routed.values_flattened;
        if self.current_file != Some(file_index) {
            self.current_file = Some(file_index);
            self.file_records = 0;
        }
        let before = self.file_records;
        self.file_records += routed.records;
        if let (Some(notice), Some(scan_id)) = (routed.header_notice.take(), self.scan_id) {
            if let Some(r) = header_reject(plan, scan_id, file_index, &notice, &mut self.stats) {
                // Within the store's budget, as the records' rejects below.
                if self.rejects_bytes >= super::rejects::REJECTS_BUDGET_BYTES {
                    self.stats.rejects_recorded -= 1;
                    self.stats.rejects_dropped += 1;
                } else {
                    self.rejects_bytes += r.size();
                    self.rejects.push(r);
                }
            }
        }
        for event in &mut routed.events {
            event.meta.line = self.lines.line(event.meta.line);
            // A bad record's message may carry a line of its range too.
            if event.meta.error.is_some() {
                self.lines.fix_message(&mut event.cause);
                if let Some(error) = event.meta.error.as_mut() {
                    self.lines.fix_message(&mut error.cause);
                }
            }
            if let Some(scan_id) = self.scan_id {
                if let Some(r) = reject(plan, scan_id, file_index, before, event, &mut self.stats) {
                    // Within the store's budget even under max_rejects := NULL.
                    if self.rejects_bytes >= super::rejects::REJECTS_BUDGET_BYTES {
                        self.stats.rejects_recorded -= 1;
                        self.stats.rejects_dropped += 1;
                    } else {
                        self.rejects_bytes += r.size();
                        self.rejects.push(r);
                    }
                }
            }
            if event.rescued.is_some() {
                continue;
            }
            if event.violation && plan.run.drift_ends_scan {
                self.discard_rejects = true;
                // The attempt ends here: shown as ended, without the rejects
                // it will not keep.
                self.stats.rejects_recorded = 0;
                if let Some(id) = self.scan_id {
                    super::scan_log::update(id, &self.stats, true);
                }
                let line = event.meta.line;
                return Err(crate::error::SanitizeError::drift(format!(
                    "{function}: the registry does not take a record of file \"{file}\" at line {line}: {}",
                    event.cause
                )));
            }
            if event.violation {
                self.bad.handle_violation(file, &event.meta, &event.cause, on_error, &mut self.stats)?;
            } else {
                // A bad record's event carries its decoder's fault.
                let fallback;
                let bad = match event.meta.error.as_ref() {
                    Some(bad) => bad,
                    None => {
                        fallback = crate::formats::BadRecord::new(crate::formats::RecordFault::Malformed, &event.cause);
                        &fallback
                    }
                };
                self.bad.handle(file, &event.meta, bad, on_error, &mut self.stats)?;
            }
        }
        Ok(())
    }
}

/// One decoded batch of a range, routed: what a decoder hands the consumer.
#[derive(Default)]
pub struct Routed {
    /// The rows (data columns; partition columns are the consumer's).
    chunk: Option<Chunk>,
    /// Records decoded.
    records: u64,
    /// Rows written by routing (good records, and strict-mode violations
    /// kept under `emit_null_row`).
    routed: u64,
    /// Bad records and strict-mode violations, in record order, for the
    /// consumer to count and judge ([`BadRecords`]); what `on_error` does to
    /// their rows is already done.
    events: Vec<Event>,
    values_nulled: u64,
    duplicate_keys: u64,
    values_flattened: u64,
    list_nulls_dropped: u64,
    /// Values kept in the rescue column.
    values_rescued: u64,
    /// The file's header had a cell that did not decode (a reject).
    header_notice: Option<crate::formats::HeaderNotice>,
    /// The rows were written from the batch's arrow columns whole.
    columnar: bool,
    /// The decoded records are in `raw`, not routed yet: the consumer
    /// routes them ([`RangeWork::step_for_idle_consumer`]).
    deferred: bool,
    raw: Batch,
    /// Records kept as text ([`Batch::defer_lines`]) that the router wrote
    /// from their text, and that it parsed and routed the general way.
    text_written: u64,
    text_declined: u64,
}

impl Routed {
    /// Empties the rows, counts, events and notice of the piece before,
    /// for a new piece.
    fn start_piece(&mut self) {
        if let Some(chunk) = self.chunk.as_mut() {
            chunk.clear();
        }
        self.records = 0;
        self.routed = 0;
        self.events.clear();
        self.values_nulled = 0;
        self.duplicate_keys = 0;
        self.values_flattened = 0;
        self.list_nulls_dropped = 0;
        self.values_rescued = 0;
        self.header_notice = None;
        self.columnar = false;
        self.text_written = 0;
        self.text_declined = 0;
    }
}

struct Event {
    meta: RecordMeta,
    cause: String,
    violation: bool,
    /// The record's position in its batch.
    index: usize,
    /// A strict-mode violation's value path (source keys).
    path: Option<String>,
    /// A violation of a field the registry lacks.
    unknown_field: bool,
    /// A value kept in the rescue column, or nulled (not a bad record).
    rescued: Option<crate::route::RescueKind>,
    /// For `rescued`: whether the rescue column kept it (else it was nulled).
    kept: bool,
    /// For `rescued`: the value as JSON (a reject's `raw`).
    value: Option<String>,
}

/// A range's work in a scan: decode a batch, then route each record into
/// the columns of the final schema (a pure function of the value and the
/// schema, so any thread can do it).
pub struct RouteWork {
    decode: Decode,
    batch: Batch,
    router: Router,
    plan: Arc<ScanPlan>,
    /// The file of the range (a rescued bad record's raw text is read back
    /// from it).
    file_index: usize,
    /// Where `batch` goes when the range is done, for the next range.
    spares: SpareBatches,
    text: TextLines,
    /// Records decoded and routed at a time into one piece of up to
    /// `BATCH_RECORDS` rows, where a batch of a whole piece's records
    /// would not stay in the core's cache between the two: see
    /// [`CSV_SUB_BATCH_RECORDS`]. `None`: one batch a piece.
    sub_batch: Option<usize>,
    /// A batch's failure after others joined a piece: the next step's.
    failed: Option<crate::error::SanitizeError>,
}

/// A CSV record of the bench's 23 cells is about 750 bytes of tape (a key
/// and a value node a cell) and 200 of text, so a batch of 2048 records
/// (about 2 MB) is out of a 512 KiB L2 cache by the time the router reads
/// it back; 256 at a time stay in it. Callgrind with a 512 KiB last level
/// (`COPY` of the bench CSV's slice): 20% fewer read and 26% fewer write
/// misses, the same instructions; on 2 cores the wall time is level (the
/// prefetcher hides most of a streamed tape), and on many cores the
/// traffic saved is shared bandwidth. Routed into one piece rather than
/// handed on as pieces of their own, which cost 12% at threads = 2. JSON
/// Lines batches stay whole: cut small they were slower.
const CSV_SUB_BATCH_RECORDS: usize = 256;

/// Whether a range's batches keep JSON Lines as text for the router to
/// write from it (route/direct.rs): only where the router can, and not for
/// a while after a batch whose records it mostly could not (its schema has
/// versions or maps those records use), where parsing them after a try
/// costs more than parsing them at once.
#[derive(Clone, Default)]
struct TextLines {
    on: bool,
    pause: Arc<TextPause>,
}

/// Batches of the whole scan still to read the usual way: shared by its
/// ranges and the consumer, whichever routes a batch.
#[derive(Default)]
pub(crate) struct TextPause(std::sync::atomic::AtomicU32);

impl TextPause {
    /// Batches read the usual way after one whose records were declined.
    const BATCHES: u32 = 64;

    /// A batch was routed: `written` of its kept records from their text,
    /// `declined` the general way.
    fn routed(&self, written: u64, declined: u64) {
        if declined * 8 > written + declined {
            self.0.store(Self::BATCHES, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Whether the next batch may be kept as text (one batch of the pause
    /// taken if not).
    fn take_turn(&self) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        self.0.fetch_update(Relaxed, Relaxed, |n| n.checked_sub(1)).is_err()
    }
}

impl TextLines {
    fn next_batch(&self) -> bool {
        self.on && self.pause.take_turn()
    }
}

impl RouteWork {
    fn new(
        decode: Decode,
        plan: Arc<ScanPlan>,
        wanted: Option<Vec<bool>>,
        file_index: usize,
        spares: SpareBatches,
    ) -> Self {
        let batch = spares.take();
        let mut router = consumer_router(&plan, wanted);
        let mut decode = decode;
        if let Some((schema, keys)) = decode.column_schema().filter(|_| writes_columns(&plan)) {
            if router.takes_columns(&plan.schema, &schema, &keys, &plan.rules()) {
                decode.emit_columns(&router.columns_to_read());
            }
        }
        let sub_batch = (plan.options.input_format == crate::options::InputFormat::Csv && !decode.budgeted())
            .then_some(CSV_SUB_BATCH_RECORDS);
        RouteWork {
            decode,
            batch,
            router,
            plan,
            file_index,
            spares,
            text: TextLines::default(),
            sub_batch,
            failed: None,
        }
    }

    /// Keeps each line as text for the router to write from (`lines`: the
    /// probe's tally allows it, see `Scanner::text_lines`), where the
    /// router can, with the scan's pause after declined batches.
    fn keeping_text(mut self, lines: bool, pause: Arc<TextPause>) -> Self {
        self.text = TextLines { on: lines && self.router.writes_text(), pause };
        self
    }
}

impl Drop for RouteWork {
    fn drop(&mut self) {
        self.spares.give(std::mem::take(&mut self.batch));
    }
}

/// The decode batches of finished ranges, kept for the ranges opened next:
/// without them a scan of many small files grows a new tape from nothing
/// for every file, and reallocation was the largest cost per file.
#[derive(Clone, Default)]
pub(crate) struct SpareBatches(Arc<std::sync::Mutex<Vec<Batch>>>);

impl SpareBatches {
    /// At most this many are kept: about as many ranges as are open at once.
    const KEPT: usize = 4;

    fn take(&self) -> Batch {
        self.0.lock().ok().and_then(|mut spares| spares.pop()).unwrap_or_default()
    }

    fn give(&self, batch: Batch) {
        if let Ok(mut spares) = self.0.lock() {
            if spares.len() < Self::KEPT {
                spares.push(batch);
            }
        }
    }
}

impl RangeWork for RouteWork {
    type Out = Routed;

    fn piece_bytes(piece: &Routed) -> usize {
        let raw = if piece.deferred { piece.raw.heap_bytes() } else { 0 };
        piece.chunk.as_ref().map_or(0, Chunk::bytes) + raw
    }

    fn step(&mut self, out: &mut Routed) -> Result<bool> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        self.batch.defer_lines = self.text.next_batch();
        if !self.decode.step_at_most(&mut self.batch, self.sub_batch.unwrap_or(usize::MAX))? {
            return Ok(false);
        }
        out.deferred = false;
        if out.raw.tape.nodes.capacity() > 0 {
            // A recycled piece that once carried a deferred batch: do not
            // keep that batch's memory alive in a routed piece.
            out.raw = Batch::default();
        }
        route_batch(&self.plan, &mut self.router, &mut self.batch, self.file_index, out)?;
        if let Some(sub) = self.sub_batch {
            // The next batches of the range join this piece while a whole
            // batch more fits, as `Scanner::fill_chunk` would join them.
            let room = |out: &Routed| {
                out.chunk.as_ref().is_some_and(|c| c.rows + sub <= BATCH_RECORDS && c.bytes() < JOIN_BYTES)
            };
            while room(out) {
                match self.decode.step_at_most(&mut self.batch, sub) {
                    Ok(true) => {
                        route_batch_onto(&self.plan, &mut self.router, &mut self.batch, self.file_index, out, false)?
                    }
                    Ok(false) => break,
                    // The rows before it are this piece's, as when it ended a batch.
                    Err(e) => {
                        self.failed = Some(e);
                        break;
                    }
                }
            }
        }
        self.text.pause.routed(out.text_written, out.text_declined);
        Ok(true)
    }

    fn step_for_idle_consumer(&mut self, out: &mut Routed) -> Result<bool> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        self.batch.defer_lines = self.text.next_batch();
        if !self.decode.step(&mut self.batch)? {
            return Ok(false);
        }
        std::mem::swap(&mut self.batch, &mut out.raw);
        out.deferred = true;
        Ok(true)
    }

    fn bytes_read(&self) -> u64 {
        self.decode.bytes_read()
    }

    fn lines_read(&self) -> u64 {
        self.decode.lines_read()
    }

    fn guessed_start(&self) -> Option<u64> {
        self.decode.guessed_start()
    }

    fn follow(&self) -> crate::formats::RangeFollow {
        self.decode.follow()
    }
}

/// The record's keys a scan may skip: those of the schema none of whose
/// columns the query uses. Only where nothing but the columns it writes
/// depends on the other values: an additive scan (strict mode judges the
/// whole record), without `bigquery_profile` (which counts the NULL list
/// elements of every value). Keys the schema lacks are always read.
fn skip_keys(plan: &ScanPlan, wanted: &[bool]) -> Option<SkipKeys> {
    let options = &plan.options;
    if options.schema_mode != SchemaMode::Additive || options.bigquery_profile || options.rescue_column.is_some() {
        return None;
    }
    // Where a written value may be nulled (a pin, a freeze, a declared
    // type it is out of range for), the record's other lost values are
    // found by routing it whole again (`Router::nulled_values`): every
    // value must be on the tape for its reject.
    if options.policies.is_some() || has_declared_types(&plan.schema) {
        return None;
    }
    let root = &plan.schema;
    let mut used = vec![false; root.families.len()];
    for (i, &(family, _)) in root.outputs.iter().enumerate() {
        if wanted.get(i).copied().unwrap_or(true) {
            used[family] = true;
        }
    }
    let (wanted, skipped): (Vec<_>, Vec<_>) = root.families.iter().zip(&used).partition(|(_, used)| **used);
    let key_of = |(f, _): (&crate::infer::Family, _)| f.source_key.clone();
    let keys = SkipKeys::new(skipped.into_iter().map(key_of).collect(), wanted.into_iter().map(key_of).collect());
    (!keys.is_empty()).then_some(keys)
}

/// Whether any version below `root` has a declared type (Parquet-born:
/// INTEGER, DECIMAL, ...), which a value may be out of range for.
fn has_declared_types(root: &crate::infer::StructNode) -> bool {
    fn declared(ty: &TypeNode) -> bool {
        match ty {
            TypeNode::Scalar(ScalarKind::Declared(_)) => true,
            TypeNode::Scalar(_) => false,
            TypeNode::List(e) | TypeNode::Map(e) => declared(e),
            TypeNode::Struct(s) => has_declared_types(s),
        }
    }
    root.families.iter().flat_map(|f| &f.versions).any(|v| declared(&v.ty))
}

/// A piece is one file's rows: it gets that file's partition values.
fn add_partition_values(plan: &ScanPlan, chunk: &mut Chunk, file: usize) {
    if !plan.partitions.columns.is_empty() {
        let data = chunk.data_columns(plan);
        for (column, value) in chunk.columns[data..].iter_mut().zip(&plan.partitions.values[file]) {
            column.push_partition(value, chunk.rows);
        }
    }
}

/// A router for this plan and projection.
fn consumer_router(plan: &ScanPlan, wanted: Option<Vec<bool>>) -> Router {
    // A frozen path's values were not all taken by the schema.
    let frozen = plan.options.policies.as_ref().is_some_and(|p| p.any_frozen);
    let mut router = Router::new(plan.options.schema_mode == SchemaMode::Additive && !frozen)
        .rescuing(plan.options.rescue_column.is_some())
        .dropping_null_elements(plan.options.bigquery_profile);
    if let Some(wanted) = wanted {
        router.project(wanted);
    }
    let options = &plan.options;
    // Where a value's kind alone decides whether it fits (infer/shapes.rs),
    // and nothing but a misfit makes a record differ from a clean one.
    if options.schema_mode == SchemaMode::Strict
        && options.rescue_column.is_none()
        && options.policies.is_none()
        && !options.bigquery_profile
        && !plan.rules().parsers.any()
    {
        router.checked_shapes = Some(crate::infer::ShapeSet::default());
    }
    router
}

/// Whether this scan's router may write a typed reader's columns whole
/// (route/columnar.rs): it nulls, rescues, converts and drops nothing of
/// its own accord, and no parser reads a string as another type.
fn writes_columns(plan: &ScanPlan) -> bool {
    let options = &plan.options;
    options.rescue_column.is_none()
        && options.policies.is_none()
        && !options.bigquery_profile
        && !plan.rules().parsers.any()
}

/// Routes a decoded batch into `out`: each good record into the columns of
/// the final schema, each bad record (and strict-mode violation) into
/// `out.events` with `on_error`'s action on its row already taken.
fn route_batch(
    plan: &ScanPlan,
    router: &mut Router,
    batch: &mut Batch,
    file_index: usize,
    out: &mut Routed,
) -> Result<()> {
    route_batch_onto(plan, router, batch, file_index, out, true)
}

/// [`route_batch`], onto a new piece (`fresh`) or after the rows and
/// events of the batches routed into `out` before (one piece of several
/// batches, see [`RouteWork::sub_batch`]): the counts add up, and an
/// event's record index counts from the piece's first record.
fn route_batch_onto(
    plan: &ScanPlan,
    router: &mut Router,
    batch: &mut Batch,
    file_index: usize,
    out: &mut Routed,
    fresh: bool,
) -> Result<()> {
    let rules = plan.rules();
    let strict = plan.options.schema_mode == SchemaMode::Strict;
    let emit_null = plan.options.on_error == OnError::EmitNullRow;
    if fresh {
        out.start_piece();
    }
    let chunk = out.chunk.get_or_insert_with(|| Chunk::new(plan));
    // The batch's first record, counted from the piece's.
    let first = out.records as usize;
    out.records += batch.len() as u64;
    if batch.header_notice.is_some() {
        out.header_notice.clone_from(&batch.header_notice);
    }
    let before = (router.values_nulled, router.duplicate_keys, router.values_flattened, router.list_nulls_dropped);
    let data_columns = chunk.data_columns(plan);
    let rescue_col = plan.options.rescue_column.is_some().then(|| chunk.columns.len() - 1);
    // A batch carries columns only where `RouteWork::new` found that this
    // plan's router may write them (`writes_columns`).
    if let Some(rows) = batch.columns.take() {
        let columns = &mut chunk.columns[..data_columns];
        // Whole columns start a piece: written after other rows, they go one by one.
        if fresh && router.write_columns(&plan.schema, &rows, columns, &rules) {
            chunk.rows = rows.rows.num_rows();
            out.routed = chunk.rows as u64;
            out.columnar = true;
            return Ok(());
        }
        // A value the columns cannot take as they are: the rows, one by one.
        crate::formats::parquet::rows_onto_tape(&rows, &mut batch.tape);
    }
    let record_nulled_values = plan.options.max_rejects != Some(0);
    for i in 0..batch.meta.len() {
        if batch.tape.roots[i] == crate::formats::DEFERRED && batch.meta[i].error.is_none() {
            let (start, len) = batch.deferred[i];
            let text = batch.tape.text_of(start, len);
            if router.write_text_record(&plan.schema, text, &mut chunk.columns[..data_columns], &rules) {
                out.text_written += 1;
                out.routed += 1;
                chunk.rows += 1;
                continue;
            }
            out.text_declined += 1;
            parse_kept_text(plan, batch, i, file_index)?;
        }
        let meta = &batch.meta[i];
        if let Some(err) = &meta.error {
            out.events.push(Event {
                meta: meta.clone(),
                cause: err.cause.clone(),
                violation: false,
                index: first + i,
                path: None,
                unknown_field: false,
                rescued: None,
                kept: false,
                value: None,
            });
            // A skipped line is never a row, not even a NULL one.
            if emit_null && err.fault != crate::formats::RecordFault::SkippedLine {
                chunk.columns[..data_columns].iter_mut().for_each(Column::push_null);
                if let Some(col) = rescue_col {
                    // The whole record, as its text.
                    match raw_record(plan, file_index, meta.byte) {
                        Some((text, _)) => {
                            let (raw, _) = super::rejects::cut(&text, plan.options.max_reject_bytes);
                            let object = format!("{{\"_raw\":{}}}", serde_json::Value::from(raw));
                            chunk.columns[col].push_text(&object);
                        }
                        None => chunk.columns[col].push_null(),
                    }
                }
                chunk.rows += 1;
            }
            continue;
        }
        let record = batch.tape.record(i);
        // With a rescue column, what strict mode does not take is rescued
        // by the router: the record is no bad record.
        // (sanitize_pipeline's strict attempt still stops at the first
        // value that does not fit, to read the partition again additively.)
        let nulled_before = router.values_nulled;
        let events_before = out.events.len();
        // Strict mode: a record whose shape was written before without a
        // misfit has none either (its kinds decide it), so it skips the
        // check and the version choice of single-version families.
        let shape_known = router.checked_shapes.as_mut().and_then(|shapes| shapes.lookup(record, &rules));
        let mut violated = false;
        if strict && shape_known != Some(true) && (rescue_col.is_none() || plan.run.drift_ends_scan) {
            if let Some(v) = router.first_violation(&plan.schema, record, &rules) {
                violated = true;
                out.events.push(Event {
                    meta: meta.clone(),
                    cause: v.to_string(),
                    violation: true,
                    index: first + i,
                    unknown_field: v.expected.is_none(),
                    path: Some(v.path),
                    rescued: None,
                    kept: false,
                    value: None,
                });
                if !emit_null {
                    continue;
                }
            }
        }
        if shape_known == Some(true) {
            router.trusted = true;
            router.write_record(&plan.schema, record, &mut chunk.columns[..data_columns], &rules);
            router.trusted = false;
        } else if let Some(keys) = batch.flat() {
            router.write_flat_record(&plan.schema, keys, record, &mut chunk.columns[..data_columns], &rules);
        } else {
            router.write_record(&plan.schema, record, &mut chunk.columns[..data_columns], &rules);
        }
        if let (Some(col), Some(rescuer)) = (rescue_col, router.rescue.as_mut()) {
            match rescuer.take_object() {
                Some(object) => chunk.columns[col].push_text(&object),
                None => chunk.columns[col].push_null(),
            }
            for r in rescuer.values.drain(..) {
                out.values_rescued += 1;
                out.events.push(Event {
                    meta: meta.clone(),
                    cause: format!("the value at {} ({}) was kept in the rescue column", r.path, r.kind.name()),
                    violation: false,
                    index: first + i,
                    path: Some(r.path),
                    unknown_field: false,
                    rescued: Some(r.kind),
                    kept: true,
                    value: Some(r.json),
                });
            }
        } else if router.values_nulled > nulled_before && record_nulled_values && !violated {
            // Without a rescue column the values are lost: which ones, for
            // sanitize_rejects() (a second pass over this record only).
            for r in router.nulled_values(&plan.schema, record, &rules) {
                out.events.push(Event {
                    meta: meta.clone(),
                    cause: format!("the value at {} ({}) was written as NULL", r.path, r.kind.name()),
                    violation: false,
                    index: first + i,
                    path: Some(r.path),
                    unknown_field: false,
                    rescued: Some(r.kind),
                    kept: false,
                    value: Some(r.json),
                });
            }
        }
        if shape_known == Some(false)
            && !violated
            && router.values_nulled == nulled_before
            && out.events.len() == events_before
        {
            if let Some(shapes) = router.checked_shapes.as_mut() {
                shapes.add_shape();
            }
        }
        out.routed += 1;
        chunk.rows += 1;
    }
    out.values_nulled += router.values_nulled - before.0;
    out.duplicate_keys += router.duplicate_keys - before.1;
    out.values_flattened += router.values_flattened - before.2;
    // Dropped when decoding (value/reshape.rs) or when routing.
    out.list_nulls_dropped += batch.list_nulls_dropped + (router.list_nulls_dropped - before.3);
    Ok(())
}

/// Parses record `i` of `batch`, kept as its text ([`Batch::defer_lines`]),
/// onto the batch's tape as the decoder would have: its root, or its bad
/// record. The probe found one record per line in the file; a line that
/// holds more now means the file changed while it was read.
fn parse_kept_text(plan: &ScanPlan, batch: &mut Batch, i: usize, file_index: usize) -> Result<()> {
    let (start, len) = batch.deferred[i];
    let text = batch.tape.text_of(start, len).to_string();
    let at = (batch.meta[i].line, batch.meta[i].byte);
    let (used, _) = crate::formats::json::decode_value_record(&text, batch, at, &"the line", true);
    let (Some(root), Some(meta)) = (batch.tape.roots.pop(), batch.meta.pop()) else {
        return Err(SanitizeError::internal("a kept line gave no record"));
    };
    if !text[used.min(text.len())..].bytes().all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
        return Err(SanitizeError::io(format!(
            "file \"{}\" changed while it was read: line {} holds more than one JSON value, where the schema was inferred from one per line; run the query again",
            plan.display_files[file_index], at.0
        )));
    }
    batch.tape.roots[i] = root;
    batch.meta[i] = meta;
    Ok(())
}

/// The reject kind of a bad record's event: its decoder's fault.
fn record_kind(event: &Event) -> &'static str {
    event.meta.error.as_ref().map_or(crate::formats::RecordFault::Malformed.kind(), |e| e.fault.kind())
}

/// A reject of this scan for `sanitize_rejects()`, within `max_rejects`;
/// past it only the count grows.
fn reject(
    plan: &ScanPlan,
    scan_id: u64,
    file_index: usize,
    before: u64,
    event: &Event,
    stats: &mut Stats,
) -> Option<super::rejects::Reject> {
    use super::rejects::{cut, Reject};
    let options = &plan.options;
    if !reject_slot(options, stats) {
        return None;
    }
    let (function, file, meta) = (plan.function.as_str(), &plan.display_files[file_index], &event.meta);
    let (kind, action, message) = if let Some(kind) = event.rescued {
        (
            kind.name(),
            if event.kept { "value_rescued" } else { "value_nulled" },
            format!("{function}: in file \"{file}\" at line {} (byte {}): {}", meta.line, meta.byte, event.cause),
        )
    } else if event.violation {
        let kind = if event.unknown_field { "unknown_field" } else { "type_mismatch" };
        let action = match options.on_error {
            OnError::Stop => "scan_stopped",
            OnError::SkipRow => "row_skipped",
            OnError::EmitNullRow => "value_nulled",
        };
        let cause = format!("{} (schema_mode 'strict')", event.cause);
        (
            kind,
            action,
            format!("{function}: {}", super::bad_records::bad_record_message(file, meta.line, meta.byte, &cause)),
        )
    } else if event.meta.error.as_ref().is_some_and(|e| e.fault == crate::formats::RecordFault::SkippedLine) {
        // Skipped whatever `on_error` says: it stops nothing and is no row.
        let message = format!(
            "{function}: line {} (byte {}) of file \"{file}\" is before the header and was skipped (csv_skip_lines := {}{}); pass csv_skip_lines to read it",
            meta.line,
            meta.byte,
            options.csv_skip_lines,
            if options.origins.csv_skip_lines == crate::options::Origin::Sniffed {
                ", sniffed"
            } else {
                ""
            }
        );
        (record_kind(event), "row_skipped", message)
    } else {
        let action = match options.on_error {
            OnError::Stop => "scan_stopped",
            OnError::SkipRow => "row_skipped",
            OnError::EmitNullRow => "row_nulled",
        };
        let message =
            format!("{function}: {}", super::bad_records::bad_record_message(file, meta.line, meta.byte, &event.cause));
        (record_kind(event), action, message)
    };
    // A value's own text; a record's, read back from its file.
    let raw = match &event.value {
        Some(json) => Some((cut(json, options.max_reject_bytes).0, json.len() as u64)),
        None => {
            raw_record(plan, file_index, meta.byte).map(|(text, len)| (cut(&text, options.max_reject_bytes).0, len))
        }
    };
    let source_key = event.path.as_deref().and_then(crate::value::path::last_key);
    Some(Reject {
        scan_id,
        session: super::scan_log::session_of(scan_id),
        function: function.to_string(),
        file: file.clone(),
        line: meta.line,
        byte: meta.byte,
        record_index: Some(before + event.index as u64),
        path: event.path.clone(),
        source_key,
        kind,
        action,
        raw_bytes: raw.as_ref().map(|(_, n)| *n),
        raw: raw.map(|(t, _)| t),
        message,
    })
}

/// Whether another reject is kept within `max_rejects`: counted as
/// recorded if so, as dropped if not (the counts stay exact either way).
fn reject_slot(options: &crate::options::Options, stats: &mut Stats) -> bool {
    if options.max_rejects.is_some_and(|max| stats.rejects_recorded >= max) {
        stats.rejects_dropped += 1;
        return false;
    }
    stats.rejects_recorded += 1;
    true
}

/// The reject of a CSV header cell that did not decode: no record (its
/// index is NULL), the column's name as read in `path`, and the header
/// line as `raw`; within `max_rejects` like any other.
fn header_reject(
    plan: &ScanPlan,
    scan_id: u64,
    file_index: usize,
    notice: &crate::formats::HeaderNotice,
    stats: &mut Stats,
) -> Option<super::rejects::Reject> {
    let options = &plan.options;
    if !reject_slot(options, stats) {
        return None;
    }
    let (function, file) = (plan.function.as_str(), &plan.display_files[file_index]);
    let raw = raw_record(plan, file_index, notice.byte);
    Some(super::rejects::Reject {
        scan_id,
        session: super::scan_log::session_of(scan_id),
        function: function.to_string(),
        file: file.clone(),
        line: notice.line,
        byte: notice.byte,
        record_index: None,
        path: Some(notice.name.clone()),
        source_key: Some(notice.name.clone()),
        kind: "bad_encoding",
        action: "header_replaced",
        raw_bytes: raw.as_ref().map(|(_, n)| *n),
        raw: raw.map(|(text, _)| super::rejects::cut(&text, options.max_reject_bytes).0),
        message: format!(
            "{function}: file \"{file}\" at line {} (byte {}): {}",
            notice.line,
            notice.byte,
            notice.cause()
        ),
    })
}

/// Longest record text read back for a reject.
const RAW_SCAN_LIMIT: u64 = 16 << 20;

/// The text of the record at `byte` of the file, read back from the file
/// (only for rejects, so the hot path keeps no copy of any record): the
/// rest of the line for line formats (JSON Lines, CSV), else what follows
/// up to `max_reject_bytes`. `None` for Parquet, compressed files and
/// input in another encoding (given, found by its first bytes, or declared
/// by an XML document), whose bytes are not the record's text. With the text, its
/// length in bytes in the file.
fn raw_record(plan: &ScanPlan, file_index: usize, byte: u64) -> Option<(String, u64)> {
    use crate::options::{Compression, InputFormat, TextEncoding};
    use std::io::{BufRead, Read, Seek, SeekFrom};
    let options = &plan.options;
    let path = &plan.files[file_index];
    let compressed = options.compression.of_file(path) != Compression::None;
    if options.input_format == InputFormat::Parquet
        || compressed
        || options.input_text_encoding != TextEncoding::Utf8
        || !super::readers::bytes_are_text(path, options, &plan.run.opener)
    {
        return None;
    }
    let mut file = plan.run.opener.open(path).ok()?;
    file.seek(SeekFrom::Start(byte)).ok()?;
    let mut reader = std::io::BufReader::new(file).take(RAW_SCAN_LIMIT);
    let mut bytes = Vec::new();
    match options.input_format {
        InputFormat::Jsonl | InputFormat::Ndjson => {
            reader.read_until(b'\n', &mut bytes).ok()?;
            while bytes.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                bytes.pop();
            }
        }
        // A CSV line ends at a CR too (in a file of CR records the text
        // would run on over every later record).
        InputFormat::Csv => {
            reader.read_until(b'\n', &mut bytes).ok()?;
            if let Some(end) = memchr::memchr2(b'\n', b'\r', &bytes) {
                bytes.truncate(end);
            }
        }
        _ => {
            reader.take(options.max_reject_bytes as u64 + 4).read_to_end(&mut bytes).ok()?;
            // A JSON document ends where the reader resumes after a
            // malformed one: the next line opening with `{`.
            if options.input_format == InputFormat::Json {
                if let Some(i) = bytes.get(1..).and_then(|rest| rest.windows(2).position(|w| w == b"\n{")) {
                    bytes.truncate(i + 1);
                    while bytes.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                        bytes.pop();
                    }
                }
            }
        }
    }
    Some((String::from_utf8_lossy(&bytes).into_owned(), bytes.len() as u64))
}

#[cfg(test)]
mod text_pause_tests {
    use super::TextPause;

    /// A kept line the router declines is parsed as the decoder would have
    /// parsed it (its record, or its bad record); one that holds two
    /// records, which the probe did not see, fails the scan naming the
    /// file and the line, rather than lose the second.
    #[test]
    fn a_kept_line_is_parsed_as_the_decoder_would_and_two_records_fail_the_scan() {
        let dir = crate::test_support::scratch_dir("kept-line");
        let path = dir.join("r.jsonl").to_string_lossy().into_owned();
        std::fs::write(&path, "{\"a\":1}\n").unwrap();
        let options =
            crate::options::Options::parse("sanitize_jsonl", Some(crate::options::InputFormat::Jsonl), &[]).unwrap();
        let plan = super::super::plan_on("sanitize_jsonl", path.as_str(), options, 1).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let kept = |text: &str| {
            let mut batch = crate::formats::Batch::default();
            let range = batch.tape.push_text(text);
            batch.deferred.push(range);
            batch.tape.roots.push(crate::formats::DEFERRED);
            batch.meta.push(crate::formats::RecordMeta { line: 7, byte: 40, error: None });
            let parsed = super::parse_kept_text(&plan, &mut batch, 0, 0);
            (parsed, batch)
        };
        let (parsed, batch) = kept("{\"a\":2}  ");
        assert!(parsed.is_ok() && batch.meta[0].error.is_none());
        let entry = batch.tape.record(0).entries().next().map(|(k, v)| (k.to_string(), v.node()));
        assert_eq!(entry, Some(("a".to_string(), crate::value::Node::Int(2))));
        let (parsed, batch) = kept("[1]");
        assert!(parsed.is_ok());
        assert!(batch.meta[0].error.as_ref().is_some_and(|e| e.cause.contains("not an object")), "{:?}", batch.meta[0]);
        let (parsed, _) = kept("{\"a\":3} {\"a\":4}");
        let message = parsed.unwrap_err().message;
        assert!(message.contains("changed while it was read") && message.contains("line 7"), "{message}");
        assert!(message.contains("r.jsonl"), "{message}");
    }

    /// A batch with more than one record in eight declined stops the scan
    /// keeping lines as text for the next 64 batches, whoever routed it;
    /// one mostly written does not.
    #[test]
    fn a_mostly_declined_batch_pauses_the_text_for_64_batches() {
        let pause = TextPause::default();
        pause.routed(1000, 100);
        assert!(pause.take_turn());
        pause.routed(100, 20);
        let turns: Vec<bool> = (0..66).map(|_| pause.take_turn()).collect();
        assert!(turns[..64].iter().all(|t| !t), "{turns:?}");
        assert!(turns[64] && turns[65]);
    }
}
