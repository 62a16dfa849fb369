//! A run's files read and written as staged Parquet parts, as
//! sanitize_pipeline writes a partition: strict first from the registry so
//! far, redone additively when a record does not fit, through the same
//! plan, scanner and Parquet writer. The files are read as one input (one
//! part); when that input cannot be read and `on_error` reads past bad
//! input, each file is read on its own, so one unreadable file never
//! blocks the files after it: it is recorded as failed.

use std::path::PathBuf;
use std::sync::Arc;

use super::log::{part_name, staged_name, RowCounts};
use super::select::Taken;
use super::{pause, IngestOptions, FUNCTION};
use crate::error::{Result, SanitizeError};
use crate::options::{OnError, SchemaMode};
use crate::partitions::pass::{strict_then_additive, write_plan, Failure};
use crate::scan::plan_with;

/// A part written under its staged name.
#[derive(Debug)]
pub struct Part {
    pub name: String,
    pub rows: u64,
    pub bytes: u64,
}

/// What became of one taken file.
#[derive(Debug)]
pub struct FileOutcome {
    pub taken: Taken,
    pub rows_written: u64,
    /// Why its input could not be read (it is recorded as failed).
    pub error: Option<String>,
}

/// A run's reads and writes.
#[derive(Debug, Default)]
pub struct Scanned {
    pub parts: Vec<Part>,
    /// The files taken, in order; a file gone before it was read is not here.
    pub files: Vec<FileOutcome>,
    pub rows: RowCounts,
    pub registry: Option<String>,
    pub drifts: Vec<serde_json::Value>,
    pub pass: Option<&'static str>,
}

/// The staged files of a run: removed when the run ends without committing
/// them (an error, a lost race), kept once its entry names them.
#[derive(Debug, Default)]
pub struct StagedFiles {
    paths: Vec<PathBuf>,
    kept: bool,
}

impl StagedFiles {
    pub fn keep(&mut self) {
        self.kept = true;
    }
}

impl Drop for StagedFiles {
    fn drop(&mut self) {
        if !self.kept {
            for p in &self.paths {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}

/// One input written: its part and counts.
struct Written {
    part: Part,
    rows_by_file: Vec<u64>,
    rows: RowCounts,
    registry: String,
    drifts: String,
}

/// Writes the parts of run `entry` (`run_id`) into `output_dir`.
pub struct Writer<'a> {
    pub options: &'a IngestOptions,
    pub entry: u64,
    pub run_id: &'a str,
    pub session: Option<crate::scan::scan_log::Session>,
}

impl Writer<'_> {
    /// Reads `taken` in order from `registry` and writes the parts; files
    /// gone before they were read are dropped from the run (a deleted
    /// source is never a problem). Under `on_error := 'stop'` the first
    /// bad input fails the run.
    pub fn scan(&self, mut taken: Vec<Taken>, registry: Option<String>, staged: &mut StagedFiles) -> Result<Scanned> {
        let mut out = Scanned { registry: registry.clone(), ..Scanned::default() };
        // All files as one input: one part.
        loop {
            if taken.is_empty() {
                return Ok(out);
            }
            let paths: Vec<String> = taken.iter().map(|t| t.file.path.clone()).collect();
            match self.write_input(&paths, registry.as_deref(), 0, staged) {
                Ok((w, pass)) => {
                    out.pass = Some(pass);
                    out.files = taken
                        .into_iter()
                        .zip(w.rows_by_file.iter().copied().chain(std::iter::repeat(0)))
                        .map(|(taken, rows_written)| FileOutcome { taken, rows_written, error: None })
                        .collect();
                    out.add(w)?;
                    return Ok(out);
                }
                Err(Failure::Output(e)) => return Err(e),
                Err(Failure::Read(e)) => {
                    if drop_vanished(&mut taken)? {
                        continue;
                    }
                    if self.options.scan.on_error == OnError::Stop {
                        return Err(e);
                    }
                    break;
                }
            }
        }
        // One file at a time: the ones that cannot be read are recorded as
        // failed, the others written, each carrying the registry on.
        let mut passes = Vec::new();
        let mut registry = registry;
        for t in taken {
            let part = out.parts.len();
            match self.write_input(std::slice::from_ref(&t.file.path), registry.as_deref(), part, staged) {
                Ok((w, pass)) => {
                    passes.push(pass);
                    registry = Some(w.registry.clone());
                    let rows_written = w.rows_by_file.first().copied().unwrap_or(0);
                    out.files.push(FileOutcome { taken: t, rows_written, error: None });
                    out.add(w)?;
                }
                Err(Failure::Output(e)) => return Err(e),
                Err(Failure::Read(e)) => {
                    if crate::source::identity_now(&t.file.path).map_err(|e| e.in_function(FUNCTION))?.is_none() {
                        // Gone before it was read: not part of the run.
                        continue;
                    }
                    let message = e.message.strip_prefix(&format!("{FUNCTION}: ")).unwrap_or(&e.message).to_string();
                    out.files.push(FileOutcome { taken: t, rows_written: 0, error: Some(message) });
                }
            }
        }
        out.pass = combined_pass(&passes);
        Ok(out)
    }

    /// `paths` as one input, from `registry`: strict first when there is a
    /// registry (the first record it does not take ends that attempt,
    /// which writes nothing), then additively; strict only with
    /// `schema_mode := 'strict'`.
    fn write_input(
        &self,
        paths: &[String],
        registry: Option<&str>,
        part: usize,
        staged: &mut StagedFiles,
    ) -> Result<(Written, &'static str), Failure> {
        let strict_only = self.options.schema_mode == SchemaMode::Strict;
        strict_then_additive(registry.is_some(), strict_only, |mode, drift_ends_scan| {
            self.write(paths, registry, mode, drift_ends_scan, part, staged)
        })
    }

    /// One attempt: `paths` read in `mode` and written to part `part`'s
    /// staged name. Nothing reaches that name unless the whole input is
    /// read (the Parquet writer's own temporary file goes otherwise).
    fn write(
        &self,
        paths: &[String],
        registry: Option<&str>,
        mode: SchemaMode,
        drift_ends_scan: bool,
        part: usize,
        staged: &mut StagedFiles,
    ) -> Result<Written, Failure> {
        let options = self.options.scan_options(mode, registry).map_err(Failure::Read)?;
        let run = crate::scan::RunSettings { drift_ends_scan, ..self.options.run.clone() };
        let plan = Arc::new(plan_with(FUNCTION, paths, options, run, true).map_err(Failure::Read)?);
        let name = part_name(self.entry, part);
        let path = self.options.output_dir.join(staged_name(&name, self.run_id));
        let target = path.to_string_lossy().into_owned();
        // Registered before the file is written: a failure after the
        // writer's rename still removes it (a retry names the same file).
        if !staged.paths.contains(&path) {
            staged.paths.push(path);
        }
        let w = write_plan(FUNCTION, plan, &target, self.options.compression, self.session, || pause("scan"))?;
        Ok(Written {
            part: Part { name, rows: w.file.rows, bytes: w.file.bytes },
            rows_by_file: w.rows_by_file,
            rows: RowCounts {
                read: w.stats.rows_read,
                written: w.file.rows,
                skipped: w.stats.rows_skipped,
                nulled: w.stats.rows_nulled,
                rescued: w.rows_rescued,
            },
            registry: w.registry,
            drifts: w.drifts,
        })
    }
}

impl Scanned {
    fn add(&mut self, w: Written) -> Result<()> {
        self.rows.read += w.rows.read;
        self.rows.written += w.rows.written;
        self.rows.skipped += w.rows.skipped;
        self.rows.nulled += w.rows.nulled;
        self.rows.rescued += w.rows.rescued;
        let drifts: Vec<serde_json::Value> = serde_json::from_str(&w.drifts)
            .map_err(|e| SanitizeError::internal(format!("a scan's drift events are not a JSON array: {e}")))?;
        self.drifts.extend(drifts);
        self.registry = Some(w.registry);
        self.parts.push(w.part);
        Ok(())
    }
}

/// Drops the files that are gone; whether any was.
fn drop_vanished(taken: &mut Vec<Taken>) -> Result<bool> {
    let before = taken.len();
    let mut kept = Vec::with_capacity(before);
    for t in taken.drain(..) {
        if crate::source::identity_now(&t.file.path).map_err(|e| e.in_function(FUNCTION))?.is_some() {
            kept.push(t);
        }
    }
    *taken = kept;
    Ok(taken.len() != before)
}

/// The pass of a run read file by file: one pass when all agree; a run
/// that started without a registry is additive (as one additive read of
/// its files would be); otherwise some file drifted.
fn combined_pass(passes: &[&'static str]) -> Option<&'static str> {
    let first = *passes.first()?;
    if passes.iter().all(|p| *p == first) || first == "additive" {
        return Some(first);
    }
    Some("strict_then_additive")
}
