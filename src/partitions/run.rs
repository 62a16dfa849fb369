//! `sanitize_pipeline(source_prefix, output_prefix, ...)`: the seed's
//! partition pipeline (Example 7: "Pipeline Flow", "Warm-Up Semantics") in
//! one statement. It plans and discovers the partitions as
//! `sanitize_partitions` does, runs an additive warm-up over a second range
//! when asked, then writes one Parquet file per partition in time order,
//! carrying the registry from each partition into the next: strict first
//! when a registry exists, redone additively when a record does not fit.
//! One report row per step, returned as each step finishes
//! (docs/partitions.md).

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use super::pass::{strict_then_additive, write_plan, Failure, Written};
use super::plan::{discover, plan, Found, Partition, PlanOptions, Status};
use crate::error::{Result, SanitizeError};
use crate::options::{InputMode, OnError, Options, ParamValue, RowParams, SchemaMode, OPTION_SPECS};
use crate::output::ParquetCompression;
use crate::scan::RunContext;
use crate::scan::{plan_with, RunSettings};
use crate::source::output_exists;

pub const FUNCTION: &str = "sanitize_pipeline";

/// The pipeline's own named parameters, beyond the plan's; every scan
/// option is taken too ([`named_parameters`]).
pub const OWN_PARAMETERS: &[&str] = &[
    "warm_up_start_date",
    "warm_up_end_date",
    "warm_up_start_hour",
    "warm_up_end_hour",
    "overwrite",
    "compression",
    "input_compression",
];

/// The plan's parameters, as `sanitize_partitions` takes them: all of its
/// own but the output prefix (the second argument here) and `compression`
/// (the output's codec here; the input's is `input_compression`).
pub fn is_plan_parameter(name: &str) -> bool {
    super::plan::PARAMETERS.contains(&name) && !matches!(name, "output_prefix" | "compression")
}

/// The result columns, in order (all VARCHAR but the counts).
pub const COLUMNS: &[(&str, bool)] = &[
    ("phase", false),
    ("partition_key", false),
    ("status", false),
    ("pass", false),
    ("rows_read", true),
    ("rows_written", true),
    ("rows_skipped", true),
    ("rows_nulled", true),
    ("rows_rescued", true),
    ("output_path", false),
    ("output_bytes", true),
    ("schema_generation", true),
    ("drifts", false),
    ("registry", false),
    ("elapsed_ms", true),
    ("error", false),
];

fn bad(parameter: &str, why: impl std::fmt::Display) -> SanitizeError {
    RowParams::new(FUNCTION, &[]).bad(parameter, why)
}

/// Everything a run needs, parsed at bind.
pub struct PipelineOptions {
    pub plan: PlanOptions,
    /// The warm-up range, planned with the same template and format.
    pub warm_up: Option<PlanOptions>,
    /// The scan options every partition is read with, as parsed.
    pub scan: Options,
    /// How every read runs: the bind's threads and file system.
    pub run: RunSettings,
    /// The scan options as given, to parse again per read with the
    /// pipeline's own choices in (`scan_options`).
    scan_params: Vec<(&'static str, ParamValue)>,
    pub overwrite: bool,
    pub compression: ParquetCompression,
}

impl PipelineOptions {
    pub fn parse(output_prefix: &str, params: &[(&str, ParamValue)], context: &RunContext) -> Result<Self> {
        let row_params = RowParams::new(FUNCTION, params);
        let get = |name: &str| row_params.get(name);
        if crate::source::parse_remote(output_prefix).is_some_and(|u| u.backend == crate::source::Backend::Http) {
            return Err(SanitizeError::options(format!(
                "{FUNCTION}: http(s):// URLs cannot be written (\"{}\"); write to a local path, s3://, gs:// or az://",
                crate::source::display_uri(output_prefix)
            )));
        }
        // The plan's parameters, as sanitize_partitions takes them.
        let mut plan_params: Vec<(&str, ParamValue)> =
            params.iter().filter(|(n, _)| is_plan_parameter(n)).cloned().collect();
        if let Some(v) = get("input_compression") {
            plan_params.push(("compression", v.clone()));
        }
        plan_params.push(("output_prefix", ParamValue::Str(output_prefix.to_string())));
        let in_pipeline =
            |e: SanitizeError| SanitizeError::options(e.message.replacen(super::plan::FUNCTION, FUNCTION, 1));
        let plan = PlanOptions::parse(&plan_params).map_err(in_pipeline)?;
        let warm_up = warm_up_options(params, &plan_params).map_err(in_pipeline)?;

        // The scan options: the user's, with the input's codec under its
        // scan name, and no hive columns unless asked for (the partition's
        // keys are in the output path; a BigQuery external table declares
        // them apart and refuses files that repeat them).
        let mut scan_params: Vec<(&'static str, ParamValue)> = Vec::new();
        for spec in OPTION_SPECS.iter().chain([&crate::options::INPUT_FORMAT_SPEC]) {
            let value = match spec.name {
                "compression" => get("input_compression"),
                name => get(name),
            };
            if let Some(v) = value {
                scan_params.push((spec.name, v.clone()));
            }
        }
        if get("hive_partitioning").is_none() {
            scan_params.push(("hive_partitioning", ParamValue::Bool(false)));
        }
        // The schema mode is the run's, not one read's: strict may start
        // from the warm-up's registry, which a scan's own check cannot see.
        let schema_mode = row_params.choice::<SchemaMode>("schema_mode")?.unwrap_or(SchemaMode::Additive);
        scan_params.retain(|(n, _)| *n != "schema_mode");
        let mut scan = Options::parse(FUNCTION, None, &scan_params)?;
        scan.schema_mode = schema_mode;
        let run =
            RunSettings { threads: context.threads.max(1), opener: context.opener.clone(), drift_ends_scan: false };
        if schema_mode == SchemaMode::Strict && scan.registry.is_none() && warm_up.is_none() {
            return Err(bad(
                "schema_mode",
                "'strict' needs a registry to hold the partitions to: pass registry := (for example sanitize_latest_registry's) or a warm-up range",
            ));
        }
        let overwrite = match get("overwrite") {
            None => true,
            Some(ParamValue::Bool(b)) => *b,
            Some(v) => return Err(bad("overwrite", format!("must be a BOOLEAN, not {}", v.describe()))),
        };
        let compression = super::pass::output_compression(&row_params)?;
        Ok(PipelineOptions { plan, warm_up, scan, run, scan_params, overwrite, compression })
    }

    /// The options of one read: the user's scan options with the schema
    /// mode, registry and input mode of this read given explicitly (a
    /// registry's contract fills in only what is not given, and parses the
    /// options again from what was).
    fn scan_options(&self, mode: SchemaMode, registry: Option<&str>, input_mode: InputMode) -> Result<Options> {
        let mut params: Vec<(&str, ParamValue)> = self
            .scan_params
            .iter()
            .filter(|(n, _)| !matches!(*n, "schema_mode" | "registry" | "input_mode"))
            .cloned()
            .collect();
        let mode_name = if mode == SchemaMode::Strict { "strict" } else { "additive" };
        params.push(("schema_mode", ParamValue::Str(mode_name.to_string())));
        let input_mode_name = if input_mode == InputMode::Directory { "directory" } else { "single_file" };
        params.push(("input_mode", ParamValue::Str(input_mode_name.to_string())));
        if let Some(registry) = registry {
            params.push(("registry", ParamValue::Str(registry.to_string())));
        }
        Options::parse(FUNCTION, None, &params)
    }
}

/// The warm-up range: both dates or neither; hours only with both dates
/// and with `granularity := 'hourly'` (the seed's rules). Planned by the
/// plan's own parser, so the same checks name the warm-up's parameters.
fn warm_up_options(params: &[(&str, ParamValue)], plan_params: &[(&str, ParamValue)]) -> Result<Option<PlanOptions>> {
    let given = |name: &str| params.iter().find(|(n, v)| *n == name && *v != ParamValue::Null).map(|(_, v)| v);
    let dates = (given("warm_up_start_date"), given("warm_up_end_date"));
    let hours_given = given("warm_up_start_hour").is_some() || given("warm_up_end_hour").is_some();
    let (start, end) = match dates {
        (None, None) if hours_given => {
            let name = if given("warm_up_start_hour").is_some() { "warm_up_start_hour" } else { "warm_up_end_hour" };
            return Err(bad(name, "needs both warm_up_start_date and warm_up_end_date"));
        }
        (None, None) => return Ok(None),
        (Some(_), None) => return Err(bad("warm_up_end_date", "is required with warm_up_start_date")),
        (None, Some(_)) => return Err(bad("warm_up_start_date", "is required with warm_up_end_date")),
        (Some(s), Some(e)) => (s.clone(), e.clone()),
    };
    let mut warm: Vec<(&str, ParamValue)> = plan_params
        .iter()
        .filter(|(n, _)| !matches!(*n, "start_date" | "end_date" | "start_hour" | "end_hour"))
        .cloned()
        .collect();
    warm.push(("start_date", start));
    warm.push(("end_date", end));
    for (from, to) in [("warm_up_start_hour", "start_hour"), ("warm_up_end_hour", "end_hour")] {
        if let Some(v) = given(from) {
            warm.push((to, v.clone()));
        }
    }
    // The plan's messages name its own parameters: name the warm-up's.
    PlanOptions::parse(&warm).map(Some).map_err(|e| {
        let mut message = e.message;
        for name in ["start_date", "end_date", "start_hour", "end_hour"] {
            message = message.replace(&format!("\"{name}\""), &format!("\"warm_up_{name}\""));
        }
        SanitizeError::options(message)
    })
}

/// One step of a run.
enum Step {
    WarmUp { key: String, partitions: Vec<(Partition, Found)> },
    Partition(Partition, Found),
}

/// A run in progress: the steps left, the registry so far, and the
/// partitions written.
pub struct PipelineRun {
    options: PipelineOptions,
    steps: VecDeque<Step>,
    registry: Option<String>,
    written: Vec<String>,
    session: Option<crate::scan::scan_log::Session>,
}

/// One report row.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Report {
    pub phase: &'static str,
    pub partition_key: String,
    pub status: &'static str,
    pub pass: Option<&'static str>,
    pub rows_read: u64,
    pub rows_written: u64,
    pub rows_skipped: u64,
    /// Rows written with NULLs forced by a bad record or a value that did
    /// not fit (`sanitize_stats()`'s `rows_nulled`).
    pub rows_nulled: u64,
    /// Rows whose rescue column holds something (`rescue_column`).
    pub rows_rescued: u64,
    pub output_path: Option<String>,
    pub output_bytes: Option<u64>,
    pub schema_generation: Option<u64>,
    pub drifts: Option<String>,
    pub registry: Option<String>,
    pub elapsed_ms: u64,
    pub error: Option<String>,
}

impl PipelineRun {
    /// Plans and discovers the partitions (and the warm-up's); nothing is
    /// read yet.
    pub fn start(
        source_prefix: &str,
        output_prefix: &str,
        params: &[(&str, ParamValue)],
        context: &RunContext,
    ) -> Result<Self> {
        let options = PipelineOptions::parse(output_prefix, params, context)?;
        let mut steps = VecDeque::new();
        // Whether the warm-up has anything to read.
        let mut warm_up_reads = false;
        let in_pipeline =
            |e: SanitizeError| SanitizeError { message: e.message.replacen(super::plan::FUNCTION, FUNCTION, 1), ..e };
        if let Some(warm) = &options.warm_up {
            let partitions = plan(source_prefix, warm);
            let found = discover(&partitions, warm).map_err(in_pipeline)?;
            let key = match (partitions.first(), partitions.last()) {
                (Some(a), Some(b)) if a.key != b.key => format!("{}..{}", a.key, b.key),
                (Some(a), _) => a.key.clone(),
                _ => String::new(),
            };
            warm_up_reads = found.iter().any(|f| f.status == Status::Ready);
            steps.push_back(Step::WarmUp { key, partitions: partitions.into_iter().zip(found).collect() });
        }
        let partitions = plan(source_prefix, &options.plan);
        let found = discover(&partitions, &options.plan).map_err(in_pipeline)?;
        // A run that finds none of its partitions would succeed having
        // written nothing: most often the template is not the lake's. A
        // warm-up that has data to read is a run of its own (its registry
        // is the result), so it keeps the run.
        if found.iter().all(|f| f.status == Status::Missing) && !warm_up_reads {
            let first = partitions.first().map_or(source_prefix, |p| p.source_path.as_str());
            return Err(SanitizeError::input(format!(
                "{FUNCTION}: no partition of the plan exists ({} planned; the first is \"{}\"){}",
                partitions.len(),
                crate::source::display_uri(first),
                super::plan::layout_hint(source_prefix, &options.plan)
            )));
        }
        steps.extend(partitions.into_iter().zip(found).map(|(p, f)| Step::Partition(p, f)));
        Ok(PipelineRun {
            registry: options.scan.registry.clone(),
            options,
            steps,
            written: Vec::new(),
            session: context.session,
        })
    }

    /// Runs the next step; `None` when every step has run.
    pub fn next_report(&mut self) -> Result<Option<Report>> {
        let Some(step) = self.steps.pop_front() else { return Ok(None) };
        let started = Instant::now();
        let mut report = match step {
            Step::WarmUp { key, partitions } => self.warm_up(key, &partitions)?,
            Step::Partition(p, found) => self.partition(&p, &found)?,
        };
        report.elapsed_ms = started.elapsed().as_millis() as u64;
        if report.registry.is_none() {
            report.registry = self.registry.clone();
        }
        report.schema_generation = report.registry.as_deref().and_then(generation);
        Ok(Some(report))
    }

    /// The warm-up: every ready partition of the range read together, as
    /// one additive probe from the registry so far; nothing is written.
    fn warm_up(&mut self, key: String, partitions: &[(Partition, Found)]) -> Result<Report> {
        let files: Vec<String> = partitions
            .iter()
            .filter(|(_, f)| f.status == Status::Ready)
            .flat_map(|(_, f)| f.files.iter().cloned())
            .collect();
        let mut report = Report { phase: "warm_up", partition_key: key, pass: Some("additive"), ..Report::default() };
        if files.is_empty() {
            let any_empty = partitions.iter().any(|(_, f)| f.status == Status::Empty);
            report.status = if any_empty { "skipped_empty" } else { "skipped_missing" };
            return Ok(report);
        }
        // A list of files: each is read as one file, all as one input.
        let options =
            self.options.scan_options(SchemaMode::Additive, self.registry.as_deref(), InputMode::SingleFile)?;
        let plan = plan_with(FUNCTION, &files, options, self.options.run.clone(), false).map_err(|e| {
            SanitizeError { message: format!("{} (in the warm-up {})", e.message, report.partition_key), ..e }
        })?;
        report.status = "warmed";
        report.rows_read = plan.probe_stats.rows_read;
        report.rows_skipped = plan.probe_stats.rows_skipped;
        report.rows_nulled = plan.probe_stats.rows_nulled;
        report.drifts = Some(plan.drifts_json.clone());
        self.registry = Some(plan.registry_json.clone());
        Ok(report)
    }

    /// One partition: skipped, or written strict first and redone
    /// additively on drift.
    fn partition(&mut self, p: &Partition, found: &Found) -> Result<Report> {
        let mut report = Report {
            phase: "partition",
            partition_key: p.key.clone(),
            output_path: p.output_path.clone(),
            ..Report::default()
        };
        match found.status {
            Status::Missing => {
                report.status = "skipped_missing";
                return Ok(report);
            }
            Status::Empty => {
                report.status = "skipped_empty";
                return Ok(report);
            }
            Status::Ready => {}
        }
        let output = p
            .output_path
            .clone()
            .ok_or_else(|| SanitizeError::internal("a pipeline partition without an output path"))?;
        if !self.options.overwrite && output_exists(&output).map_err(|e| e.in_function(FUNCTION))? {
            // Resuming: the file there is complete (writes are atomic), and
            // its footer holds the registry after it.
            report.status = "skipped_exists";
            // Its registry is carried only when it is newer than the run's
            // (a warm-up's, or a later partition's, is not thrown away).
            let opener = &self.options.run.opener;
            if let Some(registry) =
                crate::output::registry_from_parquet_with(&output, opener).map_err(|e| e.in_function(FUNCTION))?
            {
                let newer = match self.registry.as_deref() {
                    None => true,
                    Some(current) => generation(&registry) > generation(current),
                };
                if newer {
                    self.registry = Some(registry);
                }
            }
            return Ok(report);
        }
        let paths = match self.options.plan.mode {
            InputMode::SingleFile => found.files.clone(),
            InputMode::Directory => vec![p.source_path.clone()],
        };
        let strict_only = self.options.scan.schema_mode == SchemaMode::Strict;
        let attempt = strict_then_additive(self.registry.is_some(), strict_only, |mode, drift_ends_scan| {
            self.write(&paths, &output, mode, drift_ends_scan)
        });
        match attempt {
            Ok((w, pass)) => {
                report.status = "written";
                report.pass = Some(pass);
                report.rows_read = w.stats.rows_read;
                report.rows_written = w.file.rows;
                report.rows_skipped = w.stats.rows_skipped;
                report.rows_nulled = w.stats.rows_nulled;
                report.rows_rescued = w.rows_rescued;
                report.output_bytes = Some(w.file.bytes);
                report.drifts = Some(w.drifts);
                self.registry = Some(w.registry);
                self.written.push(p.key.clone());
                Ok(report)
            }
            Err(Failure::Read(e)) if self.options.scan.on_error != OnError::Stop => {
                // The user chose to read past bad input: the partition is
                // reported failed, the registry stays as it was, and the
                // run goes on.
                report.status = "failed";
                report.error = Some(e.message);
                Ok(report)
            }
            // A file that cannot be written fails the run whatever
            // `on_error` says: on_error is about input, and a run that
            // writes nothing must not look like one that succeeded.
            Err(Failure::Read(e) | Failure::Output(e)) => Err(self.failure(p, e)),
        }
    }

    /// The statement's error for a partition that failed under `on_error
    /// := 'stop'`: which one, why, and what is already complete.
    fn failure(&self, p: &Partition, e: SanitizeError) -> SanitizeError {
        let cause = e.message.strip_prefix(&format!("{FUNCTION}: ")).unwrap_or(&e.message).to_string();
        let written = if self.written.is_empty() { "none".to_string() } else { self.written.join(", ") };
        SanitizeError::input(format!(
            "{FUNCTION}: partition {} failed: {cause}. Partitions written before it, complete: {written}. A run starting at {} resumes",
            p.key, p.key
        ))
    }

    /// Reads `paths` in `mode` from the registry so far and writes the rows
    /// to `output`. `drift_ends_scan`: the first record the registry does
    /// not take ends the attempt (nothing reaches `output`).
    fn write(
        &self,
        paths: &[String],
        output: &str,
        mode: SchemaMode,
        drift_ends_scan: bool,
    ) -> Result<Written, Failure> {
        let options =
            self.options.scan_options(mode, self.registry.as_deref(), self.options.plan.mode).map_err(Failure::Read)?;
        // Every read goes through the bind's file system, on its threads.
        let run = RunSettings { drift_ends_scan, ..self.options.run.clone() };
        let plan = Arc::new(plan_with(FUNCTION, paths, options, run, true).map_err(Failure::Read)?);
        write_plan(FUNCTION, plan, output, self.options.compression, self.session, || {})
    }
}

/// A registry's `schema_generation`.
fn generation(registry: &str) -> Option<u64> {
    serde_json::from_str::<serde_json::Value>(registry).ok()?.get("schema_generation")?.as_u64()
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
