//! `sanitize_ingest(source, output_prefix, ...)`: continuous ingestion,
//! exactly once. Each run lists the source, takes the files no committed
//! entry of the checkpoint names, reads them from the last entry's
//! registry (strict first, additive on drift, as sanitize_pipeline does),
//! writes Parquet parts under staged names, and commits one numbered entry
//! to the checkpoint's log; the entry is the single commit point, and the
//! parts reach their final names only after it (docs/ingest.md).
//! `sanitize_ingest_log(checkpoint)` lists the committed entries.

pub mod log;
pub mod select;
mod write;

use std::path::{Path, PathBuf};
use std::time::Instant;

use self::log::{
    commit, complete_outputs, entry_file_name, garbage_staged, garbage_temp_entries, read_log, run_id, sync_dir,
    CommitError, Entry, FileRecord, Log, OutputRecord, ENTRY_FORMAT,
};
use self::select::{check_missing, select, FileOrder, OnChanged};
use self::write::{StagedFiles, Writer};
use super::{Cell, RowSource, RunContext};
use crate::error::{Result, SanitizeError};
use crate::options::{Options, ParamValue, RowParams, SchemaMode, INPUT_FORMAT_SPEC, OPTION_SPECS};
use crate::output::ParquetCompression;
use crate::scan::RunSettings;
use crate::source::process_alive;

pub const FUNCTION: &str = "sanitize_ingest";
pub const LOG_FUNCTION: &str = "sanitize_ingest_log";

/// The checkpoint folder under the output prefix when none is given.
pub const DEFAULT_CHECKPOINT: &str = "_sanitize_checkpoint";

/// The test hook's environment variable: `<phase>` or `<phase>:<ms>`
/// makes a run stop at that phase for that long (60 s by default), saying
/// so on stderr first, so a test can kill it there (docs/ingest.md).
pub const PAUSE_VARIABLE: &str = "SCHEMA_SANITIZER_INGEST_PAUSE";

/// The function's own named parameters; every scan option is taken too.
/// `order` is an SQL keyword: DuckDB takes it quoted (`"order" := 'path'`);
/// `file_order` is the same parameter without quotes.
const OWN_PARAMETERS: &[&str] =
    &["checkpoint", "order", "file_order", "max_files_per_run", "on_changed", "compression", "input_compression"];

/// Every named parameter: the run's and the scan options.
pub fn named_parameters() -> Vec<&'static str> {
    super::with_scan_options(OWN_PARAMETERS.to_vec())
}

/// The report's columns, in order, and whether each is a BIGINT (else VARCHAR).
pub const COLUMNS: &[(&str, bool)] = &[
    ("entry", true),
    ("status", false),
    ("pass", false),
    ("files_taken", true),
    ("files_failed", true),
    ("files_left", true),
    ("files_changed_skipped", true),
    ("rows_read", true),
    ("rows_written", true),
    ("rows_skipped", true),
    ("rows_nulled", true),
    ("rows_rescued", true),
    ("output_files", false),
    ("output_bytes", true),
    ("schema_generation", true),
    ("drifts", false),
    ("registry", false),
    ("failed_files", false),
    ("checkpoint_entry", false),
    ("elapsed_ms", true),
];

/// `sanitize_ingest_log`'s columns, as [`COLUMNS`].
pub const LOG_COLUMNS: &[(&str, bool)] = &[
    ("entry", true),
    ("committed_at", false),
    ("pass", false),
    ("files", true),
    ("files_failed", true),
    ("rows_read", true),
    ("rows_written", true),
    ("rows_skipped", true),
    ("rows_nulled", true),
    ("rows_rescued", true),
    ("output_files", false),
    ("source_files", false),
    ("schema_generation", true),
    ("registry", false),
    ("checkpoint_entry", false),
];

fn bad(parameter: &str, why: impl std::fmt::Display) -> SanitizeError {
    RowParams::new(FUNCTION, &[]).bad(parameter, why)
}

/// A name of `names` (case-insensitive), or an error listing them.
fn choice<T: Copy>(parameter: &str, value: Option<&ParamValue>, names: &[(&str, T)], default: T) -> Result<T> {
    let listed = names.iter().map(|(n, _)| format!("'{n}'")).collect::<Vec<_>>().join(", ");
    match value {
        None => Ok(default),
        Some(ParamValue::Str(s)) => names
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(s))
            .map(|(_, v)| *v)
            .ok_or_else(|| bad(parameter, format!("must be one of {listed}, not '{s}'"))),
        Some(v) => Err(bad(parameter, format!("must be a VARCHAR, not {}", v.describe()))),
    }
}

/// A local folder for the output or the checkpoint, made absolute (a run
/// and the log agree on it whatever the working directory).
fn local_folder(parameter: &str, path: &str) -> Result<PathBuf> {
    let shown = crate::source::display_uri(path);
    if crate::source::parse_remote(path).is_some() {
        return Err(bad(
            parameter,
            format!("is remote (\"{shown}\"), and this function writes to local folders only for now (docs/ingest.md)"),
        ));
    }
    let local = crate::source::file_uri_path(path).unwrap_or(path);
    if local.is_empty() {
        return Err(bad(parameter, "is empty"));
    }
    std::path::absolute(local).map_err(|e| bad(parameter, format!("(\"{shown}\") has no absolute form: {e}")))
}

/// Everything a run needs, parsed at bind.
pub struct IngestOptions {
    pub source: Vec<String>,
    pub output_dir: PathBuf,
    pub checkpoint: PathBuf,
    pub order: FileOrder,
    pub max_files: Option<usize>,
    pub on_changed: OnChanged,
    pub compression: ParquetCompression,
    /// The run's schema mode (a read's is chosen per attempt).
    pub schema_mode: SchemaMode,
    /// The scan options as parsed (on_error, the format, the registry
    /// that seeds a checkpoint's first run).
    pub scan: Options,
    /// How every read runs: the bind's threads, and its file system (files
    /// are opened as the scans open them, through DuckDB's in the extension).
    pub run: RunSettings,
    /// The scan options as given, parsed again per read with the read's
    /// schema mode and registry in.
    scan_params: Vec<(&'static str, ParamValue)>,
}

impl IngestOptions {
    pub fn parse(
        source: Vec<String>,
        output_prefix: &str,
        params: &[(&str, ParamValue)],
        context: &RunContext,
    ) -> Result<Self> {
        let row_params = RowParams::new(FUNCTION, params);
        let get = |name: &str| row_params.get(name);
        if source.is_empty() {
            return Err(SanitizeError::options(format!("{FUNCTION}: the list of sources is empty")));
        }
        let output_dir = local_folder("output_prefix", output_prefix)?;
        let checkpoint = match get("checkpoint") {
            None => output_dir.join(DEFAULT_CHECKPOINT),
            Some(ParamValue::Str(s)) => local_folder("checkpoint", s)?,
            Some(v) => return Err(bad("checkpoint", format!("must be a VARCHAR, not {}", v.describe()))),
        };
        let order = match (get("order"), get("file_order")) {
            (Some(_), Some(_)) => {
                return Err(bad("order", "and \"file_order\" are the same parameter: pass one of them"))
            }
            (Some(v), None) => choice("order", Some(v), FileOrder::NAMES, FileOrder::Path)?,
            (None, v) => choice("file_order", v, FileOrder::NAMES, FileOrder::Path)?,
        };
        let on_changed = choice("on_changed", get("on_changed"), OnChanged::NAMES, OnChanged::Error)?;
        let max_files = match get("max_files_per_run") {
            None => None,
            Some(ParamValue::Int(n)) if *n >= 1 => Some(usize::try_from(*n).unwrap_or(usize::MAX)),
            Some(v) => {
                return Err(bad("max_files_per_run", format!("must be a positive integer, not {}", v.describe())))
            }
        };
        let compression = crate::partitions::pass::output_compression(&row_params)?;
        if let Some(v) = get("input_mode") {
            return Err(bad(
                "input_mode",
                format!(
                    "does not apply ({}): the source names its files itself (a folder is listed whole, at any depth)",
                    v.describe()
                ),
            ));
        }
        // The scan options: the user's, with the input's codec under its
        // scan name.
        let mut scan_params: Vec<(&'static str, ParamValue)> = Vec::new();
        for spec in OPTION_SPECS.iter().chain([&INPUT_FORMAT_SPEC]) {
            let value = match spec.name {
                "compression" => get("input_compression"),
                name => get(name),
            };
            if let Some(v) = value {
                scan_params.push((spec.name, v.clone()));
            }
        }
        // The schema mode is the run's: strict may start from the
        // checkpoint's registry, which a scan's own check cannot see.
        let schema_mode = match get("schema_mode") {
            None => SchemaMode::Additive,
            Some(ParamValue::Str(s)) => SchemaMode::parse(s)
                .ok_or_else(|| bad("schema_mode", format!("must be 'additive' or 'strict', not '{s}'")))?,
            Some(v) => return Err(bad("schema_mode", format!("must be a VARCHAR, not {}", v.describe()))),
        };
        scan_params.retain(|(n, _)| *n != "schema_mode");
        let scan = Options::parse(FUNCTION, None, &scan_params)?;
        let run =
            RunSettings { threads: context.threads.max(1), opener: context.opener.clone(), drift_ends_scan: false };
        Ok(IngestOptions {
            source,
            output_dir,
            checkpoint,
            order,
            max_files,
            on_changed,
            compression,
            schema_mode,
            scan,
            run,
            scan_params,
        })
    }

    /// The options of one read: the user's scan options with this read's
    /// schema mode and registry (a registry's contract fills in only what
    /// is not given).
    fn scan_options(&self, mode: SchemaMode, registry: Option<&str>) -> Result<Options> {
        let mut params: Vec<(&str, ParamValue)> =
            self.scan_params.iter().filter(|(n, _)| !matches!(*n, "schema_mode" | "registry")).cloned().collect();
        let mode_name = if mode == SchemaMode::Strict { "strict" } else { "additive" };
        params.push(("schema_mode", ParamValue::Str(mode_name.to_string())));
        if let Some(registry) = registry {
            params.push(("registry", ParamValue::Str(registry.to_string())));
        }
        Options::parse(FUNCTION, None, &params)
    }
}

/// The test hook (see [`PAUSE_VARIABLE`]): at the named phase, say so on
/// stderr and sleep. Phases: `listing` (the files chosen, nothing
/// written), `scan` (a part's first rows written to its temporary file),
/// `write` (every part staged), `fsync` (the output folder synced),
/// `commit` (the entry written under its temporary name, not linked),
/// `rename` (the entry committed, no part renamed), `renaming` (after
/// each part's rename).
pub fn pause(phase: &str) {
    let Ok(value) = std::env::var(PAUSE_VARIABLE) else { return };
    let (wanted, millis) = match value.split_once(':') {
        Some((p, ms)) => (p.to_string(), ms.parse().unwrap_or(60_000)),
        None => (value, 60_000),
    };
    if wanted.split(',').any(|w| w.trim() == phase) {
        eprintln!("{FUNCTION}: paused at phase {phase} (pid {})", std::process::id());
        std::thread::sleep(std::time::Duration::from_millis(millis));
    }
}

/// One report row.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Report {
    pub entry: Option<u64>,
    pub status: &'static str,
    pub pass: Option<&'static str>,
    pub files_taken: u64,
    pub files_failed: u64,
    pub files_left: u64,
    pub files_changed_skipped: u64,
    pub rows: log::RowCounts,
    pub output_files: Vec<String>,
    pub output_bytes: u64,
    pub schema_generation: Option<u64>,
    pub drifts: String,
    pub registry: Option<String>,
    pub failed_files: Vec<(String, String)>,
    pub checkpoint_entry: Option<String>,
    pub elapsed_ms: u64,
}

fn int(n: u64) -> Cell {
    Cell::Int(i64::try_from(n).ok())
}

impl Report {
    pub fn cells(self) -> Vec<Cell> {
        let failed: Vec<serde_json::Value> = self
            .failed_files
            .iter()
            .map(|(path, error)| serde_json::json!({"path": path, "error": crate::source::redact_text(error)}))
            .collect();
        vec![
            Cell::Int(self.entry.and_then(|n| i64::try_from(n).ok())),
            Cell::Text(Some(self.status.to_string())),
            Cell::Text(self.pass.map(str::to_string)),
            int(self.files_taken),
            int(self.files_failed),
            int(self.files_left),
            int(self.files_changed_skipped),
            int(self.rows.read),
            int(self.rows.written),
            int(self.rows.skipped),
            int(self.rows.nulled),
            int(self.rows.rescued),
            Cell::Text(Some(serde_json::Value::from(self.output_files).to_string())),
            int(self.output_bytes),
            Cell::Int(self.schema_generation.and_then(|n| i64::try_from(n).ok())),
            Cell::Text(Some(self.drifts)),
            Cell::Text(self.registry),
            Cell::Text(Some(serde_json::Value::Array(failed).to_string())),
            Cell::Text(self.checkpoint_entry),
            int(self.elapsed_ms),
        ]
    }
}

/// A registry's `schema_generation`.
fn generation(registry: &str) -> Option<u64> {
    serde_json::from_str::<serde_json::Value>(registry).ok()?.get("schema_generation")?.as_u64()
}

/// A run, made at bind and run at the first scan call (so EXPLAIN or a
/// failed bind never writes).
pub struct IngestRun {
    options: IngestOptions,
    session: Option<crate::scan::scan_log::Session>,
    done: bool,
}

impl IngestRun {
    pub fn start(
        source: Vec<String>,
        output_prefix: &str,
        params: &[(&str, ParamValue)],
        context: &RunContext,
    ) -> Result<Self> {
        let options = IngestOptions::parse(source, output_prefix, params, context)?;
        Ok(IngestRun { options, session: context.session, done: false })
    }

    /// The run: recover, list, choose, read and write, commit, publish.
    pub fn run(&self) -> Result<Report> {
        let started = Instant::now();
        let o = &self.options;
        let dir = &o.output_dir;
        log::create_dir_durably(dir).map_err(|e| {
            SanitizeError::io(format!("{FUNCTION}: cannot create the output folder \"{}\": {e}", dir.display()))
        })?;
        let log = read_log(&o.checkpoint).map_err(|e| e.in_function(FUNCTION))?;
        recover(&log, dir, &o.checkpoint, None)?;

        let names = crate::source::Names::of(&o.scan);
        let mut listing = crate::source::list_with_identity(&o.source, &names).map_err(|e| e.in_function(FUNCTION))?;
        // A source above the output never takes the run's own parts or
        // entries (a Parquet source folder holding its output folder).
        let own: Vec<String> = [dir, &o.checkpoint]
            .iter()
            .filter_map(|d| std::fs::canonicalize(d).ok())
            .map(|d| format!("{}/", d.to_string_lossy().trim_end_matches('/')))
            .collect();
        listing.files.retain(|f| !own.iter().any(|d| f.path.starts_with(d.as_str())));
        check_missing(&listing.missing, &log).map_err(|e| e.in_function(FUNCTION))?;
        let selection =
            select(listing.files, &log, o.on_changed, o.order, o.max_files).map_err(|e| e.in_function(FUNCTION))?;
        pause("listing");
        let registry = log.last().and_then(|e| e.registry.clone()).or_else(|| o.scan.registry.clone());
        let mut report = Report {
            status: "up_to_date",
            files_left: selection.left as u64,
            files_changed_skipped: selection.changed_skipped as u64,
            drifts: "[]".to_string(),
            ..Report::default()
        };
        if selection.take.is_empty() {
            return Ok(self.finish(report, registry, started));
        }
        if o.schema_mode == SchemaMode::Strict && registry.is_none() {
            return Err(bad(
                "schema_mode",
                "'strict' needs a registry to hold the files to: the checkpoint has none yet, so pass registry := for its first run",
            ));
        }
        let number = log.last_number() + 1;
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let run = run_id(std::process::id(), nanos);
        let mut staged = StagedFiles::default();
        let writer = Writer { options: o, entry: number, run_id: &run, session: self.session };
        let scanned = writer.scan(selection.take, registry, &mut staged).map_err(|e| {
            let cause = e.message.strip_prefix(&format!("{FUNCTION}: ")).unwrap_or(&e.message).to_string();
            SanitizeError {
                message: format!("{FUNCTION}: {}. Nothing was committed", cause.trim_end_matches('.')),
                ..e
            }
        })?;
        if scanned.files.is_empty() {
            // Every file went away before it was read.
            return Ok(self.finish(report, scanned.registry, started));
        }
        // A file that changed while it was read holds rows its recorded
        // identity does not describe: nothing is committed.
        for f in &scanned.files {
            let now = crate::source::identity_now(&f.taken.file.path).map_err(|e| e.in_function(FUNCTION))?;
            if now.as_ref().is_some_and(|now| *now != f.taken.file.identity) {
                return Err(SanitizeError::input(format!(
                    "{FUNCTION}: \"{}\" changed while this run read it (it was {}, it is {}); nothing was committed. Producers must publish whole files: write elsewhere, then rename into the source",
                    f.taken.file.path,
                    select::describe(&f.taken.file.identity),
                    now.map(|n| select::describe(&n)).unwrap_or_default()
                )));
            }
        }
        pause("write");
        sync_dir(dir).map_err(|e| {
            SanitizeError::io(format!("{FUNCTION}: cannot sync the output folder \"{}\": {e}", dir.display()))
        })?;
        pause("fsync");

        let entry = Entry {
            format: ENTRY_FORMAT.to_string(),
            entry: number,
            run_id: run.clone(),
            committed_at: crate::scan::format_utc_micros(crate::scan::now_utc_micros()),
            source: o.source.clone(),
            output_dir: dir.to_string_lossy().into_owned(),
            pass: scanned.pass.map(str::to_string),
            files: scanned
                .files
                .iter()
                .map(|f| FileRecord {
                    path: f.taken.file.path.clone(),
                    size: f.taken.file.identity.size,
                    modified_ns: f.taken.file.identity.modified_ns,
                    status: if f.error.is_some() { "failed" } else { "ingested" }.to_string(),
                    rows_written: f.rows_written,
                    error: f.error.clone(),
                    replaces_entry: f.taken.replaces_entry,
                    etag: f.taken.file.identity.etag.clone(),
                })
                .collect(),
            outputs: scanned
                .parts
                .iter()
                .map(|p| OutputRecord { name: p.name.clone(), rows: p.rows, bytes: p.bytes })
                .collect(),
            rows: scanned.rows,
            schema_generation: scanned.registry.as_deref().and_then(generation),
            registry: scanned.registry.clone(),
        };
        let before_link = || {
            pause("commit");
            Ok(())
        };
        let committed = match commit(&o.checkpoint, &entry, &before_link) {
            Ok(path) => path,
            Err(CommitError::Taken) => {
                return Err(SanitizeError::io(format!(
                    "{FUNCTION}: another run committed entry {} of the checkpoint \"{}\" first, while this run read the same files; this run committed nothing and removed its output. Run again to take what that run left",
                    entry_file_name(number),
                    o.checkpoint.display()
                )))
            }
            Err(CommitError::Io(e)) => return Err(e.in_function(FUNCTION)),
        };
        staged.keep();
        pause("rename");
        // Committed: the parts go to their final names. A failure from here
        // on leaves a committed run whose parts the next run publishes.
        if complete_outputs(&entry, &|| {
            pause("renaming");
            Ok(())
        })
        .map_err(|e| e.in_function(FUNCTION))?
        {
            sync_dir(dir).map_err(|e| {
                SanitizeError::io(format!("{FUNCTION}: cannot sync the output folder \"{}\": {e}", dir.display()))
            })?;
        }
        // Losers of this number, and runs killed before it, leave files
        // that are garbage now.
        recover(&log, dir, &o.checkpoint, Some(&entry))?;

        report.status = "committed";
        report.entry = Some(number);
        report.pass = scanned.pass;
        report.files_taken = entry.files.len() as u64;
        report.files_failed = entry.files.iter().filter(|f| f.error.is_some()).count() as u64;
        report.failed_files = entry.files.iter().filter_map(|f| f.error.clone().map(|e| (f.path.clone(), e))).collect();
        report.rows = scanned.rows;
        report.output_files = entry.output_paths();
        report.output_bytes = scanned.parts.iter().map(|p| p.bytes).sum();
        report.drifts = serde_json::Value::Array(scanned.drifts).to_string();
        report.checkpoint_entry = Some(committed.to_string_lossy().into_owned());
        Ok(self.finish(report, scanned.registry, started))
    }

    fn finish(&self, mut report: Report, registry: Option<String>, started: Instant) -> Report {
        report.schema_generation = registry.as_deref().and_then(generation);
        report.registry = registry;
        report.elapsed_ms = started.elapsed().as_millis() as u64;
        report
    }
}

/// Recovery: the last committed entry's parts reach their final names (a
/// run killed after its commit left them staged; every earlier entry was
/// completed before the entry after it could commit), and the garbage of
/// uncommitted runs goes: staged parts and temporary entries whose number
/// another run committed, or whose process is gone. `just_committed`: an
/// entry this run committed after reading `log`.
fn recover(log: &Log, output_dir: &Path, checkpoint: &Path, just_committed: Option<&Entry>) -> Result<()> {
    if just_committed.is_none() {
        if let Some(last) = log.last() {
            if complete_outputs(last, &|| Ok(())).map_err(|e| e.in_function(FUNCTION))? {
                sync_dir(Path::new(&last.output_dir)).map_err(|e| {
                    SanitizeError::io(format!("{FUNCTION}: cannot sync the output folder \"{}\": {e}", last.output_dir))
                })?;
            }
        }
    }
    let committed_run = |n: u64| -> Option<String> {
        match just_committed {
            Some(e) if e.entry == n => Some(e.run_id.clone()),
            _ => n.checked_sub(1).and_then(|i| log.entries.get(i as usize)).map(|e| e.run_id.clone()),
        }
    };
    for path in garbage_staged(output_dir, committed_run, process_alive).into_iter().chain(garbage_temp_entries(
        checkpoint,
        committed_run,
        process_alive,
    )) {
        // Best effort: a file left only costs space, and the next run
        // tries again.
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

impl RowSource for IngestRun {
    fn next_rows(&mut self, _max: usize) -> Result<Vec<Vec<Cell>>> {
        if self.done {
            return Ok(Vec::new());
        }
        self.done = true;
        Ok(vec![self.run()?.cells()])
    }
}

/// The checkpoint folder `path` names: the folder itself when it holds an
/// entry, else its `_sanitize_checkpoint` when that does (an output prefix
/// given for its default checkpoint); `None` when neither holds one.
pub fn find_checkpoint(path: &str) -> Option<PathBuf> {
    if crate::source::parse_remote(path).is_some() {
        return None;
    }
    let given = Path::new(crate::source::file_uri_path(path).unwrap_or(path));
    // Absolute: the entry paths shown are those a run reports.
    let local = std::path::absolute(given).unwrap_or_else(|_| given.to_path_buf());
    let holds_entry = |dir: &Path| dir.join(entry_file_name(1)).is_file();
    [local.clone(), local.join(DEFAULT_CHECKPOINT)].into_iter().find(|d| holds_entry(d))
}

/// `sanitize_ingest_log(checkpoint)`: one row per committed entry, in
/// order. The argument is the checkpoint folder, or an output prefix with
/// the default checkpoint in it; one that holds no entry lists none.
pub fn log_rows(checkpoint: &str) -> Result<Vec<Vec<Cell>>> {
    let Some(dir) = find_checkpoint(checkpoint) else {
        if crate::source::parse_remote(checkpoint).is_some() {
            return Err(SanitizeError::options(format!(
                "{LOG_FUNCTION}: \"{}\" is remote, and checkpoints are local only for now (docs/ingest.md)",
                crate::source::display_uri(checkpoint)
            )));
        }
        return Ok(Vec::new());
    };
    let log = read_log(&dir).map_err(|e| e.in_function(LOG_FUNCTION))?;
    Ok(log
        .entries
        .iter()
        .map(|e| {
            let files: Vec<serde_json::Value> =
                e.files.iter().map(|f| serde_json::to_value(f).unwrap_or(serde_json::Value::Null)).collect();
            vec![
                int(e.entry),
                Cell::Text(Some(e.committed_at.clone())),
                Cell::Text(e.pass.clone()),
                int(e.files.len() as u64),
                int(e.files.iter().filter(|f| f.error.is_some()).count() as u64),
                int(e.rows.read),
                int(e.rows.written),
                int(e.rows.skipped),
                int(e.rows.nulled),
                int(e.rows.rescued),
                Cell::Text(Some(serde_json::Value::from(e.output_paths()).to_string())),
                Cell::Text(Some(serde_json::Value::Array(files).to_string())),
                Cell::Int(e.schema_generation.and_then(|n| i64::try_from(n).ok())),
                Cell::Text(e.registry.clone()),
                Cell::Text(Some(dir.join(entry_file_name(e.entry)).to_string_lossy().into_owned())),
            ]
        })
        .collect())
}

/// The registry of a checkpoint's last entry, for `sanitize_latest_registry`:
/// (`entry=<number>`, the entry file, the registry), or `None` when `path`
/// names no checkpoint (or its last entry has no registry).
pub fn latest_registry(function: &str, path: &str) -> Result<Option<(String, String, String)>> {
    let Some(dir) = find_checkpoint(path) else { return Ok(None) };
    let log = read_log(&dir).map_err(|e| e.in_function(function))?;
    Ok(log.entries.iter().rev().find_map(|e| {
        let registry = e.registry.clone()?;
        let file = dir.join(entry_file_name(e.entry)).to_string_lossy().into_owned();
        Some((format!("entry={:012}", e.entry), file, registry))
    }))
}

#[cfg(test)]
mod tests;
