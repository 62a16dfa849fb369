//! One scan from end to end, free of FFI: [`plan`] (bind: resolve files, run
//! the probe, finalize the registry) and [`Scanner`] (produce chunks).

mod bad_records;
mod budget;
mod clock;
#[cfg(test)]
mod lossless_tests;
#[cfg(test)]
mod parquet_tests;
mod plan_cache;
mod prefetch;
#[cfg(test)]
mod proptests;
mod readers;
pub mod scan_log;
mod scanner;
mod stats;
#[cfg(test)]
mod tests;

pub(crate) use bad_records::{BadAction, BadRecords};
pub use clock::{format_utc_micros, now_utc_micros};
pub use plan_cache::cached_plan;
pub use readers::open_reader;
#[cfg(test)]
pub use readers::text_reader;
pub use scanner::{partition_kind, Chunk, Scanner};
pub use stats::Stats;

use crate::error::{Result, SanitizeError};
use crate::formats::Batch;
use crate::infer::{absorb_record, infer_maps, DepthLimits, InferStats, MapRules, Rules, StructNode, TimeUnit};
use crate::options::{InputFormat, Options, SchemaMode};
use crate::registry::naming::{empty_name, sanitize, RESERVED_COLUMNS};
use crate::registry::{finalize, parse_registry, DriftEvent, FinalizeOptions, Registry};
use crate::source::{plan_partitions, resolve, Partitions, Spool};

/// Records decoded per batch; one DuckDB vector's worth.
pub const BATCH_RECORDS: usize = 2048;

/// Everything bind decides; immutable afterwards.
#[derive(Debug)]
pub struct ScanPlan {
    pub function: String,
    /// The path argument as the user gave it (a list joined with ", ",
    /// for sanitize_stats).
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
}

impl ScanPlan {
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
        }
    }
}

/// The plan of a registry probe (`sanitize_probe`; tests): the probe reads
/// every record, and its counters describe them all.
#[cfg(test)]
pub fn plan(function: &str, paths: impl Into<Paths>, options: Options) -> Result<ScanPlan> {
    plan_with(function, &paths.into().0, options, false)
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
    plan_with(function, &paths.into().0, options, true)
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
pub(crate) fn plan_with(function: &str, paths: &[String], options: Options, for_scan: bool) -> Result<ScanPlan> {
    let mut registry = match &options.registry {
        Some(text) => parse_registry(text).map_err(|e| e.in_function(function))?,
        None => Registry::empty(options.field_name_policy),
    };
    // The registry's contract decides the options this scan does not give.
    let mut options = options.with_contract(function, registry.contract.as_ref())?;
    // After the contract: it may set timestamp_precision.
    let declared_probe = for_scan
        && options.input_format == InputFormat::Parquet
        && options.schema_mode == SchemaMode::Additive
        && options.timestamp_precision != TimeUnit::Nanos;
    let resolved = resolve(function, paths, &options)?;
    let files = resolved.files;
    let names = resolved.display;
    sniff_csv_dialect(function, &files, &names, &mut options)?;
    // After sniffing: the sniffed dialect is part of the contract.
    registry.contract = Some(options.contract_json());
    check_directory_consistency(function, &files, &names, &options)?;
    let policy = options.field_name_policy;
    let partitions = plan_partitions(function, &names, &options, &registry.partitions, |key| {
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
    let mut stats = Stats::default();
    if options.schema_mode == SchemaMode::Additive {
        probe_files(function, &files, &names, &options, declared_probe, &mut registry.root, &mut stats)?;
    } else {
        stats.files = files.len() as u64;
    }
    if options.input_format != InputFormat::Parquet {
        // Objects keyed by data become maps; a Parquet struct is declared.
        let rules = MapRules { threshold: options.map_inference_threshold, paths: &options.map_paths };
        infer_maps(&mut registry.root, &rules);
    }
    let events = finalize(
        &mut registry.root,
        &FinalizeOptions { policy: options.field_name_policy, order: options.column_order },
    )
    .map_err(|e| e.in_function(function))?;
    if !events.is_empty() {
        registry.schema_generation += 1;
    }
    // A clash is an error when partitioning was asked for; detected, it
    // turns partitioning off (the data field keeps its name, as before).
    let partitions = match check_partition_names(function, &registry.root, &partitions) {
        Err(_) if options.hive_partitioning.is_none() => Partitions::default(),
        Err(e) => return Err(e),
        Ok(()) => partitions,
    };
    record_partitions(&mut registry.partitions, &partitions);
    let detected_at = format_utc_micros(started_at_micros);
    let drifts: Vec<serde_json::Value> = events.iter().map(|e| e.to_json(&detected_at)).collect();
    Ok(ScanPlan {
        function: function.to_string(),
        path: paths.join(", "),
        registry_json: registry.json_text(),
        drifts_json: serde_json::Value::Array(drifts).to_string(),
        drift_events: events,
        schema: registry.root,
        options,
        display_files: names,
        files,
        _spools: resolved.spools,
        declared_probe,
        partitions,
        probe_stats: stats,
        started_at_micros,
    })
}

/// Bytes of the first file the CSV sniffer reads at most.
const SNIFF_SAMPLE_BYTES: usize = 8 << 20;

/// `csv_auto_detect` (or `csv_has_header := 'auto'`): the dialect options
/// neither given nor taken from the registry are sniffed from the first
/// file that has any text (formats/csv_sniff.rs), as `read_csv` sniffs the
/// first file of a multi-file read.
fn sniff_csv_dialect(function: &str, files: &[String], names: &[String], options: &mut Options) -> Result<()> {
    use crate::formats::csv_sniff::{sniff, Fixed};
    if options.input_format != InputFormat::Csv || !(options.csv_auto_detect || options.csv_has_header.is_none()) {
        return Ok(());
    }
    let decided = |name: &str| options.is_given(name) || options.adopted.contains(&name) || !options.csv_auto_detect;
    let fixed = Fixed {
        delimiter: decided("csv_delimiter").then(|| options.csv_delimiter.clone()),
        quote: decided("csv_quote").then_some(options.csv_quote),
        escape: decided("csv_escape").then_some(options.csv_escape),
        comment: decided("csv_comment").then_some(options.csv_comment),
        skip_lines: decided("csv_skip_lines").then_some(options.csv_skip_lines),
        has_header: options
            .csv_has_header
            .filter(|_| options.is_given("csv_has_header") || options.adopted.contains(&"csv_has_header")),
        null_padding: options.csv_null_padding,
        null_strings: options.csv_null_strings.clone(),
    };
    let (mut sample, mut cut) = (Vec::new(), false);
    for (file, name) in files.iter().zip(names) {
        (sample, cut) = readers::text_sample(function, file, name, options, SNIFF_SAMPLE_BYTES)?;
        if sample.iter().any(|b| !b.is_ascii_whitespace()) {
            break;
        }
    }
    let d = sniff(&sample, cut, &fixed);
    options.csv_delimiter = d.delimiter;
    options.csv_quote = d.quote;
    options.csv_escape = d.escape;
    options.csv_comment = d.comment;
    options.csv_skip_lines = d.skip_lines;
    options.csv_has_header = Some(d.has_header);
    // The sniffed bytes must not clash with the ones given.
    options
        .check_csv_dialect()
        .map_err(|e| SanitizeError::options(format!("{function}: {e} (after csv_auto_detect)")))?;
    Ok(())
}

/// A partition column may not take a data column's name, nor an ETL
/// column's: the table would have two columns of one name.
fn check_partition_names(function: &str, root: &StructNode, partitions: &Partitions) -> Result<()> {
    for column in &partitions.columns {
        if RESERVED_COLUMNS.contains(&column.name.as_str()) {
            return Err(SanitizeError::options(format!(
                "{function}: the hive partition key '{}' makes the column \"{}\", which every scan already adds; pass hive_partitioning := false, or rename the directory key",
                column.key, column.name
            )));
        }
        if let Some(v) = root.output_versions().find(|v| v.output_name == column.name) {
            return Err(SanitizeError::options(format!(
                "{function}: a data field and the hive partition key '{}' both make the column \"{}\"; pass hive_partitioning := false to read the field without partition columns, or rename the field or the directory key",
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

/// Directory mode joins files into one table: CSV files must share their
/// header (each file's own header row is dropped), XML documents their root
/// element. Each format says what its files share (`RecordReader::signature`,
/// reading only that much); checked before any row.
fn check_directory_consistency(function: &str, files: &[String], names: &[String], options: &Options) -> Result<()> {
    if files.len() < 2 || !options.input_format.has_signature() {
        return Ok(());
    }
    // An empty file has no signature and agrees with anything.
    let mut reference: Option<(&String, crate::formats::Signature)> = None;
    for (path, file) in files.iter().zip(names) {
        let mut reader = open_reader(function, path, file, options)?;
        let Some(signature) = reader.signature().map_err(|e| e.in_function(function))? else { continue };
        match &reference {
            None => reference = Some((file, signature)),
            Some((first, expected)) if *expected != signature => {
                return Err(SanitizeError::input(format!("{function}: {}", signature.mismatch(file, expected, first))));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// The registry probe: a full scan that infers every record's shape. With
/// `declared_only` (see [`plan_scan`]) each file contributes its declared
/// schema and footer row count, and no row is decoded.
fn probe_files(
    function: &str,
    files: &[String],
    names: &[String],
    options: &Options,
    declared_only: bool,
    root: &mut StructNode,
    stats: &mut Stats,
) -> Result<()> {
    let mut infer_stats = InferStats::default();
    let mut batch = Batch::default();
    let rules = options.rules();
    let mut bad = BadRecords::default();
    for (path, file) in files.iter().zip(names) {
        let mut reader = prefetch::Prefetch::new(
            open_reader(function, path, file, options)?,
            options.batch_memory_limit_bytes,
            options.background_decode && !readers::is_small_file(path, options),
        );
        batch.clear();
        stats.files += 1;
        if let Some(declared) = reader.declaration() {
            // The sample is no row: its values are not counted (flattened,
            // duplicates), but its depth is the declared depth.
            let mut sample_stats = InferStats::default();
            absorb_record(root, declared.sample.tape.record(0), &rules, &mut sample_stats);
            // The footer plan covers a file only when its declared schema
            // decides every value's column; otherwise its rows are probed.
            if declared_only && declared.exact {
                infer_stats.max_depth_seen = infer_stats.max_depth_seen.max(sample_stats.max_depth_seen);
                stats.rows_read += declared.rows;
                stats.rows_emitted += declared.rows;
                continue;
            }
        }
        loop {
            let n = reader.next_batch(&mut batch).map_err(|e| e.in_function(function))?;
            if n == 0 {
                break;
            }
            stats.batches += 1;
            for i in 0..n {
                stats.rows_read += 1;
                let meta = &batch.meta[i];
                if let Some(err) = &meta.error {
                    bad.handle(function, file, meta, err, options.on_error, stats)?;
                    continue;
                }
                absorb_record(root, batch.tape.record(i), &rules, &mut infer_stats);
                stats.rows_emitted += 1;
            }
        }
        stats.bytes_read += reader.bytes_read();
    }
    bad.check_not_all_bad(function, stats.rows_read, options)?;
    stats.max_depth_seen = infer_stats.max_depth_seen as u64;
    stats.values_flattened = infer_stats.values_flattened;
    stats.duplicate_keys = infer_stats.duplicate_keys;
    Ok(())
}
