//! One scan from end to end, free of FFI: [`plan`] (bind: resolve files, run
//! the probe, finalize the registry) and [`Scanner`] (produce chunks).

mod bad_records;
mod budget;
mod clock;
#[cfg(test)]
mod columnar_proptests;
#[cfg(test)]
mod csv_range_proptests;
#[cfg(test)]
mod csv_skip_tests;
#[cfg(test)]
mod direct_proptests;
#[cfg(test)]
mod flat_proptests;
#[cfg(test)]
mod join_tests;
mod layout;
#[cfg(test)]
mod list_depth_tests;
#[cfg(test)]
mod lossless_tests;
#[cfg(test)]
mod max_columns_tests;
#[cfg(test)]
mod merge_proptests;
mod ordered;
#[cfg(test)]
mod parquet_tests;
#[cfg(test)]
mod plain_proptests;
mod plan_cache;
#[cfg(test)]
mod policy_tests;
#[cfg(test)]
pub(crate) mod proptests;
mod ranges;
mod readers;
pub mod rejects;
#[cfg(test)]
mod rescue_proptests;
pub mod scan_log;
mod scanner;
mod stats;
mod tally;
#[cfg(test)]
mod tally_tests;
#[cfg(test)]
pub(crate) mod tests;

pub(crate) use bad_records::BadRecords;
pub use clock::{format_utc_micros, now_utc_micros};
pub use layout::ColumnSource;
pub use ordered::StepOnce;
pub use plan_cache::cached_plan;
pub use readers::open_reader;
#[cfg(test)]
pub use readers::text_reader;
pub use scanner::{partition_kind, Chunk, Scanner};
pub use stats::Stats;

use crate::error::{Result, SanitizeError};
use crate::formats::Batch;
use crate::infer::{
    absorb_record, check_paths_name_fields, has_map, infer_maps, running_width, schema_width, widest_object,
    ColumnLimit, DepthLimits, InferStats, MapRules, Rules, ShapeCache, StructNode, TimeUnit,
};
use crate::options::{InputFormat, Options, Origin, SchemaMode};
use crate::registry::naming::{empty_name, sanitize, RESERVED_COLUMNS};
use crate::registry::{finalize, parse_registry, DriftEvent, FinalizeOptions, Registry};
use crate::source::{plan_partitions, resolve, Partitions, Spool};

/// What the calling connection grants a function (from DuckDB's settings).
#[derive(Clone, Debug)]
pub struct RunContext {
    /// DuckDB's `threads`.
    pub threads: usize,
    /// Who calls: for `sanitize_stats()` and `sanitize_rejects()`.
    pub session: Option<scan_log::Session>,
    /// How the function's scans open their files: DuckDB's file system of
    /// the calling client (ffi/files.rs); `std::fs` in tests.
    pub opener: crate::formats::byte_source::FileOpener,
}

/// How a scan runs, set by its caller and never by the user (the user's
/// choices are [`Options`]): owned by the plan, so that options parsed again
/// (a registry's contract, a pipeline's partition) cannot lose it.
#[derive(Clone, Debug)]
pub struct RunSettings {
    /// Threads a probe or scan may run at once, the caller's included
    /// (scan/ordered.rs): DuckDB's `threads` setting in the extension.
    pub threads: usize,
    /// How the scan opens its files: DuckDB's file system in the extension
    /// (set at bind), `std::fs` in the engine's tests.
    pub opener: crate::formats::byte_source::FileOpener,
    /// The pipeline's strict attempt: the first strict-mode violation ends
    /// the scan with a drift error (`SanitizeError::drift`) whatever
    /// `on_error` says, and the partition is redone additively.
    pub drift_ends_scan: bool,
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings { threads: 2, opener: Default::default(), drift_ends_scan: false }
    }
}

/// Records decoded per batch; one DuckDB vector's worth.
pub const BATCH_RECORDS: usize = 2048;

/// Everything bind decides; immutable afterwards.
#[derive(Debug)]
pub struct ScanPlan {
    pub function: String,
    /// How it runs (threads, file system, drift handling).
    pub run: RunSettings,
    /// The path argument as the user gave it, without the credentials or
    /// signature a URI may carry (a list joined with ", ", for
    /// sanitize_stats).
    pub path: String,
    pub options: Options,
    pub files: Vec<String>,
    /// `source_file` of each file: the path, or a `file://` URI when the
    /// user gave one.
    pub display_files: Vec<String>,
    /// The finalized output schema (the registry's tree after this scan).
    pub schema: StructNode,
    pub registry_json: String,
    pub drifts_json: String,
    /// The drift events behind `drifts_json` (a cached plan renders them
    /// again with its own `detected_at`).
    pub drift_events: Vec<DriftEvent>,
    pub probe_stats: Stats,
    /// Microseconds since the epoch, UTC: `ingestion_timestamp` and `detected_at`.
    pub started_at_micros: i64,
    /// Staged remote inputs: `files` point into them, so they live as long
    /// as the plan. Held, never read: dropping one deletes its staged files.
    pub _spools: Vec<Spool>,
    /// The probe read only the declared schemas (Parquet), not the rows, so
    /// the scan measures `values_flattened` itself.
    pub declared_probe: bool,
    /// Hive partition columns (after the data columns, before the ETL
    /// columns) and each file's values; empty when partitioning is off.
    pub partitions: Partitions,
    /// The input cut into units of parallel work, in input order.
    pub ranges: Vec<ranges::Range>,
    /// The probe's record count of every range, where a scan that needs
    /// no value may take it instead of decoding (scan/tally.rs).
    pub tally: Option<tally::ProbeTally>,
}

impl ScanPlan {
    /// The file systems that serve this plan's files, for
    /// `sanitize_stats()`: staged remote objects are object_store's, every
    /// other file the opener's; distinct names in input order, joined
    /// with `+`.
    pub fn file_systems(&self) -> String {
        let mut names: Vec<&str> = Vec::new();
        for file in &self.files {
            let name = if crate::source::is_staged(file) { "object_store" } else { self.run.opener.name() };
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names.join("+")
    }

    pub fn rules(&self) -> Rules<'_> {
        self.options.rules()
    }
}

static NO_PARSERS: crate::scalar::ScalarParsers = crate::scalar::ScalarParsers::none();

impl Options {
    /// How values are seen in this scan: depth limits, parsers, wrapping key.
    pub fn rules(&self) -> Rules<'_> {
        Rules {
            limits: DepthLimits { arrow_max_depth: self.arrow_max_depth, parquet_max_depth: self.parquet_max_depth },
            scalar_object_key: &self.scalar_object_key,
            // Parquet strings are declared strings, not text awaiting a type.
            parsers: if self.input_format == InputFormat::Parquet { &NO_PARSERS } else { &self.parsers },
            timestamp_unit: self.timestamp_precision,
            policies: self.policies.as_ref(),
            columns: ColumnLimit {
                max: self.max_columns,
                // Structs become maps after the probe except in Parquet
                // scans (declared structs); by count, or by path. A map
                // field of the registry makes maps too: the probe adds that.
                maps_later: self.input_format != InputFormat::Parquet
                    && (self.map_inference_threshold.is_some() || !self.map_paths.is_empty()),
            },
        }
    }
}

/// The plan of a registry probe (`sanitize_probe`; tests): the probe reads
/// every record, and its counters describe them all.
#[cfg(test)]
pub fn plan(function: &str, paths: impl Into<Paths>, options: Options) -> Result<ScanPlan> {
    plan_with(function, &paths.into().0, options, RunSettings::default(), false)
}

/// [`plan`] on `threads` threads (tests).
#[cfg(test)]
pub fn plan_on(function: &str, paths: impl Into<Paths>, options: Options, threads: usize) -> Result<ScanPlan> {
    plan_with(function, &paths.into().0, options, RunSettings { threads, ..RunSettings::default() }, false)
}

/// [`plan_scan`] on `threads` threads (tests).
#[cfg(test)]
pub fn plan_scan_on(function: &str, paths: impl Into<Paths>, options: Options, threads: usize) -> Result<ScanPlan> {
    plan_with(function, &paths.into().0, options, RunSettings { threads, ..RunSettings::default() }, true)
}

/// The path argument (tests): one path or a list of them.
#[cfg(test)]
pub struct Paths(pub Vec<String>);

#[cfg(test)]
impl From<&str> for Paths {
    fn from(path: &str) -> Self {
        Paths(vec![path.to_string()])
    }
}

#[cfg(test)]
impl From<Vec<String>> for Paths {
    fn from(paths: Vec<String>) -> Self {
        Paths(paths)
    }
}

/// The plan of a scan (tests; the SQL layer goes through [`cached_plan`]).
#[cfg(test)]
pub fn plan_scan(function: &str, paths: impl Into<Paths>, options: Options) -> Result<ScanPlan> {
    plan_with(function, &paths.into().0, options, RunSettings::default(), true)
}

/// Everything bind decides. `for_scan`: the plan of a scan rather than of
/// `sanitize_probe`. For Parquet the declared schema of each file decides
/// the output schema exactly (every value of a column has the column's
/// declared type, and declared columns are kept even when empty), so a
/// scan's probe reads the footers only, not the rows: the scan then decodes
/// the data once instead of twice. Not with `TIMESTAMP_NANOS`, whose range
/// is narrower than Parquet's: there a value can still fall back to a
/// string version, which only the rows can tell. `sanitize_probe` reads
/// every record, and its counters describe them all.
pub(crate) fn plan_with(
    function: &str,
    paths: &[String],
    options: Options,
    run: RunSettings,
    for_scan: bool,
) -> Result<ScanPlan> {
    plan_named(function, paths, options, run, for_scan, None).map_err(|e| e.in_function(function))
}

/// What the bind cache found before planning (scan/plan_cache.rs): the
/// paths resolved, with the options that decide resolution (input format
/// and mode, compression, `validate_extension`; no registry contract
/// changes them), and every file's stamp, taken before any of them is
/// read. Planning takes them instead of listing the files and stamping
/// each again: with 10,000 files that was a sixth of the bind.
struct Prepared {
    resolved: crate::source::Resolved,
    stamps: Vec<tally::FileStamp>,
}

/// The plan; with `prepared`, from the paths already resolved and
/// stamped. Its callers give its messages the function's name
/// (`SanitizeError::in_function`).
fn plan_named(
    function: &str,
    paths: &[String],
    options: Options,
    run: RunSettings,
    for_scan: bool,
    prepared: Option<Prepared>,
) -> Result<ScanPlan> {
    let mut registry = match &options.registry {
        Some(text) => parse_registry(text).map_err(|e| e.in_function(function))?,
        None => Registry::empty(options.field_name_policy),
    };
    // The registry's contract decides the options this scan does not give.
    let mut options = options.with_contract(function, registry.contract.as_ref())?;
    // The name policy travels with the registry as the contract's options
    // do: a scan that does not give one continues the registry's (a
    // `lower_snake` registry without `field_name_policy :=` was refused).
    if options.origins.field_name_policy != Origin::Given {
        options.field_name_policy = registry.field_name_policy;
    }
    // After the contract: it may set timestamp_precision.
    if let Some(policies) = &options.policies {
        policies.apply_pins(&mut registry.root).map_err(|m| SanitizeError::options(format!("{function}: {m}")))?;
    }
    check_registry_width(&registry.root, &options)?;
    // A pin or a freeze decides value by value, which only the rows can tell.
    let declared_probe = for_scan
        && options.policies.is_none()
        && options.input_format == InputFormat::Parquet
        && options.schema_mode == SchemaMode::Additive
        && options.timestamp_precision != TimeUnit::Nanos;
    let (resolved, stamps) = match prepared {
        Some(p) => (p.resolved, Some(p.stamps)),
        None => (resolve(paths, &options, &run.opener).map_err(|e| e.in_function(function))?, None),
    };
    let files = resolved.files;
    let names = resolved.display;
    sniff_csv_dialect(&files, &names, &mut options, &run.opener)?;
    // After sniffing: the sniffed dialect is part of the contract.
    registry.contract = Some(options.contract_json());
    check_directory_consistency(&files, &names, &options, &run.opener)?;
    let policy = options.field_name_policy;
    let partitions = plan_partitions(&names, &options, &registry.partitions, |key| {
        let name = sanitize(key, policy);
        if name.is_empty() {
            empty_name(key)
        } else {
            name
        }
    })?;
    let started_at_micros = now_utc_micros();
    if registry.field_name_policy != options.field_name_policy {
        return Err(SanitizeError::options(format!(
            "{function}: the registry was built with field_name_policy '{}' but this scan uses '{}'; pass field_name_policy := '{}' to continue it",
            registry.field_name_policy.name(),
            options.field_name_policy.name(),
            registry.field_name_policy.name()
        )));
    }
    let ranges = plan_input_ranges(&files, &names, &options, &run);
    let mut stats = Stats::default();
    let mut tally = None;
    if options.schema_mode == SchemaMode::Additive {
        let input = Input { files: &files, names: &names, ranges: &ranges, run: &run };
        // Where only a bad record can make a row differ from a count
        // (no rescue column, pin, freeze or reshaping; a text format,
        // whose rows the probe decodes), a scan needing no value may take
        // the probe's counts.
        if options.input_format != InputFormat::Parquet
            && options.rescue_column.is_none()
            && options.policies.is_none()
            && !options.bigquery_profile
        {
            tally = match stamps.filter(|s| s.len() == files.len()) {
                Some(stamps) => Some(tally::ProbeTally::stamped(stamps, ranges.len())),
                None => tally::ProbeTally::before_probe(&files, ranges.len()),
            };
        }
        probe(&input, &options, declared_probe, &mut registry.root, &mut stats, tally.as_mut())?;
        // The router counts repeated keys while routing even no column.
        tally = tally.filter(|t| t.all_clean() && stats.duplicate_keys == 0);
    } else {
        stats.files = files.len() as u64;
    }
    // map_paths as the map inference names places: keys only, in the one
    // written form (value/path.rs).
    let map_paths = options
        .map_paths
        .iter()
        .map(|p| crate::value::path::keys_only(p))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| SanitizeError::options(format!("{function}: \"map_paths\": {e}")))?;
    if options.input_format != InputFormat::Parquet {
        // Objects keyed by data become maps; a Parquet struct is declared.
        let rules = MapRules {
            threshold: options.map_inference_threshold,
            paths: &map_paths,
            // BigQuery's 15 RECORD levels (the profile caps parquet_max_depth there too).
            record_limit: options.bigquery_profile.then_some(15),
        };
        infer_maps(&mut registry.root, &rules);
    }
    // The probe stopped at the first column past the limit that no map
    // could take; the fields of structs that might have become maps are
    // counted now that the maps are made.
    if schema_width(&registry.root) > options.max_columns {
        return Err(too_many_columns(&registry.root, &options));
    }
    // A policy path that names no field would silently not apply.
    let pinned: Vec<String> = options.pin_types.iter().map(|(p, _)| p.clone()).collect();
    for (option, paths) in [("pin_types", &pinned), ("freeze", &options.freeze), ("map_paths", &options.map_paths)] {
        check_paths_name_fields(&registry.root, option, paths)
            .map_err(|m| SanitizeError::options(format!("{function}: {m}")))?;
    }
    let events = finalize(
        &mut registry.root,
        &FinalizeOptions {
            policy: options.field_name_policy,
            order: options.column_order,
            bigquery_names: options.bigquery_profile,
        },
    )
    .map_err(|e| e.in_function(function))?;
    if !events.is_empty() {
        // A run that changed the registry records where it started and
        // when its versions were born; one that changed nothing leaves the
        // document as it was (a known shape changes nothing).
        let start_generation = registry.schema_generation;
        registry.schema_generation += 1;
        registry.stamp_run(start_generation);
    }
    check_rescue_name(&registry.root, &options)?;
    // A clash is an error when partitioning was asked for; detected, it
    // turns partitioning off (the data field keeps its name, as before).
    let partitions = match check_partition_names(&registry.root, &partitions) {
        Err(_) if options.hive_partitioning.is_none() => Partitions::default(),
        Err(e) => return Err(e),
        Ok(()) => partitions,
    };
    record_partitions(&mut registry.partitions, &partitions);
    let detected_at = format_utc_micros(started_at_micros);
    let drifts: Vec<serde_json::Value> = events.iter().map(|e| e.to_json(&detected_at)).collect();
    Ok(ScanPlan {
        function: function.to_string(),
        path: paths.iter().map(|p| crate::source::display_uri(p)).collect::<Vec<_>>().join(", "),
        registry_json: registry.json_text(),
        drifts_json: serde_json::Value::Array(drifts).to_string(),
        drift_events: events,
        schema: registry.root,
        options,
        run,
        display_files: names,
        files,
        _spools: resolved.spools,
        declared_probe,
        partitions,
        probe_stats: stats,
        started_at_micros,
        ranges,
        tally,
    })
}

/// A registry wider than `max_columns` is refused before any record is
/// read: the limit bounds the scan's schema, and a registry's columns are
/// all in it. A registry made under a larger `max_columns` (which is no
/// part of its contract) needs that larger value again.
fn check_registry_width(root: &StructNode, options: &Options) -> Result<()> {
    let width = schema_width(root);
    if width > options.max_columns {
        return Err(SanitizeError::options(format!(
            "the registry has {width} columns and struct fields, more than max_columns ({}); pass max_columns := {width} or more to scan with it",
            options.max_columns
        )));
    }
    Ok(())
}

/// The error of a schema grown past `max_columns`, naming the widest
/// object, which is usually the one keyed by ids.
fn too_many_columns(root: &StructNode, options: &Options) -> SanitizeError {
    let max = options.max_columns;
    let (path, keys) = widest_object(root);
    let mut message = format!(
        "the input has more than {max} columns and struct fields (max_columns); an object keyed by ids should be a MAP: name its path in map_paths or lower map_inference_threshold"
    );
    if path.is_empty() {
        // The record is the row: its keys are columns, never a map.
        message.push_str(&format!(
            ". Here the widest object is the record itself, with {keys} keys so far, and a record cannot become a MAP (it is the row): pass a larger max_columns to read them as columns"
        ));
    } else {
        message.push_str(&format!(" (the widest object is \"{path}\", with {keys} keys)"));
    }
    SanitizeError::input(message)
}

/// The ranges of this scan's files (scan/ranges.rs).
fn plan_input_ranges(files: &[String], names: &[String], options: &Options, run: &RunSettings) -> Vec<ranges::Range> {
    let row_groups = options.input_format == InputFormat::Parquet;
    let sizes: Vec<(Option<u64>, bool)> = files
        .iter()
        .zip(names)
        .map(|(file, name)| {
            let size = std::fs::metadata(file).ok().filter(|m| m.is_file()).map(|m| m.len());
            let cut = |size| ranges::would_cut(size, options.scan_range_bytes, run.threads, row_groups);
            // A UTF-16 file read under the default encoding is found by its
            // first bytes (scan/readers.rs `detect_encoding`); only the
            // whole-file reader sees them.
            let cuttable = ranges::splittable(options, name)
                && size.is_some_and(cut)
                && if row_groups {
                    readers::parquet_footer_allows_cuts(file, &run.opener)
                } else {
                    readers::head_is_plain(file, &run.opener)
                };
            (size, cuttable)
        })
        .collect();
    ranges::plan_ranges(&sizes, options.scan_range_bytes, run.threads, row_groups)
}

/// The input of a probe or scan: its files, their names in messages and
/// their ranges.
pub(crate) struct Input<'a> {
    pub files: &'a [String],
    pub names: &'a [String],
    pub ranges: &'a [ranges::Range],
    /// How the scan runs: its threads and file system.
    pub run: &'a RunSettings,
}

/// The ordered reader of the input's ranges (scan/ordered.rs), each
/// range's decoder wrapped by `work`; the files marked in `no_rows` give no
/// records (their declaration said it all).
pub(crate) fn range_reader<W: ordered::RangeWork>(
    input: &Input<'_>,
    options: &Options,
    no_rows: Vec<bool>,
    work: impl Fn(ordered::Decode, usize) -> W + Send + Sync + 'static,
) -> ordered::OrderedReader<W> {
    let (files, names, ranges, opts) =
        (input.files.to_vec(), input.names.to_vec(), input.ranges.to_vec(), options.clone());
    let (threads, file_system) = (input.run.threads, input.run.opener.clone());
    let heads = readers::CsvHeads::default();
    let opener: Box<ordered::Opener<W>> = Box::new(move |i, at| {
        let r = &ranges[i];
        let reader: ordered::SendReader = if no_rows.get(r.file).copied().unwrap_or(false) {
            Box::new(ordered::NoRecords)
        } else {
            readers::open_range_reader((&files[r.file], &names[r.file]), &opts, &file_system, r, at, &heads)?
        };
        Ok(work(ordered::Decode::new(reader, opts.batch_memory_limit_bytes).reshaping(opts.bigquery_profile), r.file))
    });
    let queued = ordered::queue_bound(options.batch_memory_limit_bytes);
    ordered::OrderedReader::new(input.ranges.len(), threads, queued, opener)
}

/// Where the records of the ranges of one file are in that file: the lines
/// of its earlier ranges, which the line numbers of a range's records do
/// not count (a range reader numbers from its own first line).
#[derive(Default)]
pub(crate) struct LineCursor {
    lines_before: u64,
}

impl LineCursor {
    /// Makes the line numbers of a batch of `range` the file's.
    pub fn fix(&self, batch: &mut Batch) {
        if self.lines_before > 0 {
            for m in batch.meta.iter_mut() {
                m.line += self.lines_before;
                if let Some(error) = m.error.as_mut() {
                    self.fix_message(&mut error.cause);
                }
            }
        }
    }

    /// Makes a line number inside a bad record's message the file's (a CSV
    /// reader's unterminated-quote message names the line the quote opened).
    pub fn fix_message(&self, message: &mut String) {
        if self.lines_before > 0 {
            crate::formats::csv::shift_error_line(message, self.lines_before);
        }
    }

    /// The line in the file of line `line` of the current range.
    pub fn line(&self, line: u64) -> u64 {
        line + self.lines_before
    }

    /// Range `range` of `ranges` ended after `lines` lines.
    pub fn range_ended(&mut self, ranges: &[ranges::Range], range: usize, lines: u64) {
        let next_same_file = ranges.get(range + 1).is_some_and(|n| n.file == ranges[range].file);
        self.lines_before = if next_same_file { self.lines_before + lines } else { 0 };
    }
}

/// The registry probe: every record's shape, absorbed in input order
/// while up to `threads` threads decode the ranges, so the schema is the
/// one a sequential read infers. A typed source's declared schema (Parquet)
/// is absorbed before its file's rows; with `declared_only` (see
/// [`plan_scan`]) a file whose declaration decides every value contributes
/// that and its footer row count, and no row of it is decoded.
fn probe(
    input: &Input<'_>,
    options: &Options,
    declared_only: bool,
    root: &mut StructNode,
    stats: &mut Stats,
    mut tally: Option<&mut tally::ProbeTally>,
) -> Result<()> {
    use ordered::Step;
    let mut rules = options.rules();
    // A new struct version of a map field becomes a map (infer/maps.rs).
    rules.columns.maps_later |= options.input_format != InputFormat::Parquet && has_map(root);
    let mut infer_stats = InferStats { columns: running_width(root, rules.columns), ..InferStats::default() };
    // Declarations are read first (footers only); absorbed in file order.
    let mut declarations = Vec::with_capacity(input.files.len());
    if options.input_format == InputFormat::Parquet {
        for (path, file) in input.files.iter().zip(input.names) {
            let mut reader = open_reader(path, file, options, &input.run.opener)?;
            let mut declared = reader.declaration();
            // Only a probe that reads no row needs to know it can skip them.
            if let Some(d) = declared.as_mut().filter(|d| declared_only && !d.exact) {
                d.exact = reader.declared_values_fit();
            }
            declarations.push(declared);
        }
    }
    let no_rows: Vec<bool> =
        declarations.iter().map(|d| declared_only && d.as_ref().is_some_and(|d| d.exact)).collect();
    let mut absorbed = 0;
    let mut absorb_declarations = |upto: usize, root: &mut StructNode, stats: &mut Stats, infer: &mut InferStats| {
        while absorbed <= upto && absorbed < declarations.len() {
            if let Some(declared) = &declarations[absorbed] {
                // The sample is no row: its values are not counted (flattened,
                // duplicates), but its depth is the declared depth; its
                // columns are columns.
                let mut sample_stats = InferStats { columns: infer.columns, ..InferStats::default() };
                if options.bigquery_profile {
                    // The rows will be reshaped: so is their declaration.
                    let mut tape = declared.sample.tape.clone();
                    crate::value::reshape_for_bigquery(&mut tape, &mut Vec::new());
                    absorb_record(root, tape.record(0), &rules, &mut sample_stats);
                } else {
                    absorb_record(root, declared.sample.tape.record(0), &rules, &mut sample_stats);
                }
                infer.columns = sample_stats.columns;
                if infer.columns > options.max_columns {
                    return Err(too_many_columns(root, options));
                }
                if no_rows[absorbed] {
                    infer.max_depth_seen = infer.max_depth_seen.max(sample_stats.max_depth_seen);
                    stats.rows_read += declared.rows;
                    stats.rows_emitted += declared.rows;
                }
            }
            absorbed += 1;
        }
        Ok(())
    };
    let mut batch = Batch::default();
    let mut bad = BadRecords::default();
    let mut shapes = ShapeCache::new(&rules);
    // The decoding threads write the shape keys (infer/shapes.rs
    // `ShapeWriter`) from three threads on, where two or more of them would
    // outpace an absorbing thread that writes every key itself. At two
    // threads both ways keep both cores busy (the absorbing thread decodes
    // while it would wait), and writing the keys here costs less CPU
    // (docs/performance.md "The probe on more threads").
    let writer =
        shapes.writer().filter(|_| input.run.threads >= MIN_THREADS_TO_WRITE_SHAPES_AHEAD && !WRITER_OFF.is_on());
    let (board, flat_board, writer) = (shapes.board().cloned(), shapes.flat_board().cloned(), writer.cloned());
    let mut reader = range_reader(input, options, no_rows.clone(), move |decode, _| {
        decode.knowing_shapes(board.clone()).knowing_flat_shapes(flat_board.clone()).writing_shapes(writer.clone())
    });
    let mut lines = LineCursor::default();
    while let Some(step) = reader.next(&mut batch)? {
        let range = match step {
            Step::Piece { range } => range,
            Step::RangeEnd { range, bytes_read, lines: consumed } => {
                if let Some(t) = tally.as_deref_mut() {
                    t.ranges[range].bytes = bytes_read;
                }
                absorb_declarations(input.ranges[range].file, root, stats, &mut infer_stats)?;
                stats.bytes_read += bytes_read;
                stats.files += u64::from(input.ranges[range].end.is_none());
                lines.range_ended(input.ranges, range, consumed);
                continue;
            }
        };
        let file_index = input.ranges[range].file;
        absorb_declarations(file_index, root, stats, &mut infer_stats)?;
        lines.fix(&mut batch);
        let file = &input.names[file_index];
        stats.batches += 1;
        stats.list_nulls_dropped += batch.list_nulls_dropped;
        if let Some(t) = tally.as_deref_mut() {
            let r = &mut t.ranges[range];
            r.records += batch.len() as u64;
            // A header reject is the scan's to record: it must decode.
            r.clean &= batch.meta.iter().all(|m| m.error.is_none()) && batch.header_notice.is_none();
            r.one_record_per_line &= !batch.multi_record_lines;
        }
        for i in 0..batch.len() {
            stats.rows_read += 1;
            let meta = &batch.meta[i];
            if let Some(err) = &meta.error {
                bad.handle(file, meta, err, options.on_error, stats)?;
                continue;
            }
            if batch.tape.roots[i] == crate::formats::KNOWN_SHAPE {
                // A decoding thread found its shape on the board.
                shapes.absorb_known();
            } else if let Some(keys) = batch.flat() {
                // `Batch::clear` empties the shapes: any here are this batch's.
                let shape = batch.record_shapes.get(i);
                shapes.absorb_flat(root, keys, batch.tape.record(i), &rules, &mut infer_stats, shape);
            } else {
                shapes.absorb(root, batch.tape.record(i), &rules, &mut infer_stats, batch.record_shapes.get(i));
            }
            if infer_stats.columns > options.max_columns {
                // Absorbing stopped at the first column past the limit:
                // the rest of the input would only make more.
                return Err(too_many_columns(root, options));
            }
            stats.rows_emitted += 1;
        }
    }
    bad.check_not_all_bad(stats.rows_read, options)?;
    stats.max_depth_seen = infer_stats.max_depth_seen as u64;
    stats.values_flattened = infer_stats.values_flattened;
    stats.duplicate_keys = infer_stats.duplicate_keys;
    Ok(())
}

/// Threads from which the probe's decoding threads write the records'
/// shapes (see [`probe`]).
const MIN_THREADS_TO_WRITE_SHAPES_AHEAD: usize = 3;

/// Tests compare probes whose decoding threads write the records' shapes
/// with probes whose absorbing thread writes them all (the same result,
/// so other tests running meanwhile only lose speed).
pub static WRITER_OFF: crate::test_switch::TestSwitch = crate::test_switch::TestSwitch::new();

/// Bytes of the first file the CSV sniffer reads at most.
const SNIFF_SAMPLE_BYTES: usize = 8 << 20;

/// `csv_auto_detect` (or `csv_has_header := 'auto'`): the dialect options
/// neither given nor taken from the registry are sniffed from the first
/// file that has any text (formats/csv/sniff.rs), as `read_csv` sniffs the
/// first file of a multi-file read.
fn sniff_csv_dialect(
    files: &[String],
    names: &[String],
    options: &mut Options,
    opener: &crate::formats::byte_source::FileOpener,
) -> Result<()> {
    use crate::formats::csv::dialect::Fixed;
    use crate::formats::csv::sniff::sniff;
    if options.input_format != InputFormat::Csv || !(options.csv_auto_detect || options.csv_has_header.is_none()) {
        return Ok(());
    }
    // Given, taken from the contract, or not to be sniffed at all.
    let auto = options.csv_auto_detect;
    let o = &options.origins;
    let decided = |origin: Origin| origin.is_chosen() || !auto;
    let fixed = Fixed {
        delimiter: decided(o.csv_delimiter).then(|| options.csv_delimiter.clone()),
        quote: decided(o.csv_quote).then_some(options.csv_quote),
        escape: decided(o.csv_escape).then_some(options.csv_escape),
        comment: decided(o.csv_comment).then_some(options.csv_comment),
        skip_lines: decided(o.csv_skip_lines).then_some(options.csv_skip_lines),
        has_header: options.csv_has_header.filter(|_| o.csv_has_header.is_chosen()),
        null_padding: options.csv_null_padding,
        null_strings: options.csv_null_strings.clone(),
    };
    let (mut sample, mut cut) = (Vec::new(), false);
    for (file, name) in files.iter().zip(names) {
        (sample, cut) = readers::text_sample(file, name, options, opener, SNIFF_SAMPLE_BYTES)?;
        if sample.iter().any(|b| !b.is_ascii_whitespace()) {
            break;
        }
    }
    let d = sniff(&sample, cut, &fixed);
    // What `fixed` left open is the sniffer's, and marked so.
    let mark = |origin: &mut Origin, open: bool| {
        if open {
            *origin = Origin::Sniffed;
        }
    };
    let o = &mut options.origins;
    mark(&mut o.csv_delimiter, fixed.delimiter.is_none());
    mark(&mut o.csv_quote, fixed.quote.is_none());
    mark(&mut o.csv_escape, fixed.escape.is_none());
    mark(&mut o.csv_comment, fixed.comment.is_none());
    mark(&mut o.csv_skip_lines, fixed.skip_lines.is_none());
    mark(&mut o.csv_has_header, fixed.has_header.is_none());
    options.csv_delimiter = d.delimiter;
    options.csv_quote = d.quote;
    options.csv_escape = d.escape;
    options.csv_comment = d.comment;
    options.csv_skip_lines = d.skip_lines;
    options.csv_has_header = Some(d.has_header);
    // The sniffed bytes must not clash with the ones given.
    options.check_csv_dialect().map_err(|e| SanitizeError::options(format!("{e} (after csv_auto_detect)")))?;
    Ok(())
}

/// The rescue column may not take a data column's or an ETL column's name.
fn check_rescue_name(root: &StructNode, options: &Options) -> Result<()> {
    let Some(name) = &options.rescue_column else { return Ok(()) };
    let lower = name.to_lowercase();
    if RESERVED_COLUMNS.contains(&lower.as_str()) {
        return Err(SanitizeError::options(format!(
            "the \"rescue_column\" parameter names \"{name}\", a column every scan already adds"
        )));
    }
    if let Some(v) = root.output_versions().find(|v| v.output_name.to_lowercase() == lower) {
        return Err(SanitizeError::options(format!(
            "the \"rescue_column\" parameter names \"{name}\", and a data field already makes the column \"{}\"; choose another name",
            v.output_name
        )));
    }
    Ok(())
}

/// A partition column may not take a data column's name, nor an ETL
/// column's: the table would have two columns of one name.
fn check_partition_names(root: &StructNode, partitions: &Partitions) -> Result<()> {
    // By DuckDB's rules: column names are case-insensitive, so under
    // field_name_policy 'preserve' `COL1` and `col1` are one name.
    for column in &partitions.columns {
        let lower = column.name.to_lowercase();
        if RESERVED_COLUMNS.contains(&lower.as_str()) {
            return Err(SanitizeError::options(format!(
                "the hive partition key '{}' makes the column \"{}\", which every scan already adds; pass hive_partitioning := false, or rename the directory key",
                column.key, column.name
            )));
        }
        if let Some(v) = root.output_versions().find(|v| v.output_name.to_lowercase() == lower) {
            return Err(SanitizeError::options(format!(
                "a data field and the hive partition key '{}' both make the column \"{}\"; pass hive_partitioning := false to read the field without partition columns, or rename the field or the directory key",
                column.key, v.output_name
            )));
        }
    }
    Ok(())
}

/// The registry keeps every partition column it has seen: this scan's, in
/// its order, then earlier ones this scan did not have.
fn record_partitions(recorded: &mut Vec<crate::source::PartitionColumn>, partitions: &Partitions) {
    let mut all = partitions.columns.clone();
    all.extend(recorded.iter().filter(|r| !partitions.columns.iter().any(|c| c.key == r.key)).cloned());
    *recorded = all;
}

/// Files read as one input (directory mode, globs, lists) join into one
/// table: CSV files must share their header (each file's own header row is
/// dropped), XML documents their root element. Each format says what its
/// files share (`RecordReader::signature`, reading only that much); checked
/// before any row. `union_by_name` lifts the check: every reader keys its
/// records by its own file's names (a CSV range takes its file's header,
/// readers::CsvHeads), so files that differ need nothing more than that.
fn check_directory_consistency(
    files: &[String],
    names: &[String],
    options: &Options,
    opener: &crate::formats::byte_source::FileOpener,
) -> Result<()> {
    if files.len() < 2 || !options.input_format.has_signature() || options.union_by_name {
        return Ok(());
    }
    // An empty file has no signature and agrees with anything.
    let mut reference: Option<(&String, crate::formats::Signature)> = None;
    for (path, file) in files.iter().zip(names) {
        let mut reader = open_reader(path, file, options, opener)?;
        let Some(signature) = reader.signature()? else { continue };
        match &reference {
            None => reference = Some((file, signature)),
            Some((first, expected)) if *expected != signature => {
                return Err(SanitizeError::input(signature.mismatch(file, expected, first)));
            }
            Some(_) => {}
        }
    }
    Ok(())
}
