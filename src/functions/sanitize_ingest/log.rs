//! The checkpoint: an append-only log of committed runs, one entry file per
//! run, numbered from 1 (`000000000001.json`), in one folder
//! (docs/ingest.md "The checkpoint").
//!
//! An entry is the single commit point of its run. It is written whole
//! under a temporary name, synced, and then given its number by a hard
//! link, which fails when the name exists: two runs can never both commit
//! entry N, and a reader never sees half an entry. The entry names the
//! run's source files (with their identity), its output files, its row
//! counts, and the registry after the run.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Result, SanitizeError};
use crate::source::Identity;

/// The `format` of every entry this version writes; an entry of another
/// format is refused rather than misread.
pub const ENTRY_FORMAT: &str = "schema_sanitizer.ingest.v1";

/// Digits of an entry's number in its file name: text order is number
/// order, and a thousand runs a day fill them in three billion years.
const DIGITS: usize = 12;

/// One source file of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    /// Absolute, links resolved (source/listing.rs).
    pub path: String,
    pub size: u64,
    pub modified_ns: i64,
    /// `ingested`, or `failed` (its input could not be read; `error` says why).
    pub status: String,
    /// Rows of this file in the run's outputs.
    pub rows_written: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The entry that took an earlier content of this file
    /// (`on_changed := 'reingest'`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces_entry: Option<u64>,
    /// A remote object's ETag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
}

impl FileRecord {
    pub fn identity(&self) -> Identity {
        Identity { size: self.size, modified_ns: self.modified_ns, etag: self.etag.clone() }
    }
}

/// One output file of a run: its final name in the output folder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputRecord {
    pub name: String,
    pub rows: u64,
    pub bytes: u64,
}

/// A run's row counts (as `sanitize_stats()` counts them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowCounts {
    pub read: u64,
    pub written: u64,
    pub skipped: u64,
    pub nulled: u64,
    pub rescued: u64,
}

/// A committed run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub format: String,
    pub entry: u64,
    /// The run that wrote it: its output files were staged under names
    /// holding this id ([`staged_name`]) until the entry committed them.
    pub run_id: String,
    pub committed_at: String,
    /// The source as given, and the absolute output folder.
    pub source: Vec<String>,
    pub output_dir: String,
    /// `strict`, `additive` or `strict_then_additive`; none when nothing
    /// was read (every file failed).
    pub pass: Option<String>,
    pub files: Vec<FileRecord>,
    pub outputs: Vec<OutputRecord>,
    pub rows: RowCounts,
    pub schema_generation: Option<u64>,
    /// The registry after the run (its exact text), which the next run
    /// starts from.
    pub registry: Option<String>,
}

impl Entry {
    /// The absolute path of each output file.
    pub fn output_paths(&self) -> Vec<String> {
        self.outputs.iter().map(|o| Path::new(&self.output_dir).join(&o.name).to_string_lossy().into_owned()).collect()
    }
}

/// The file name of entry `n`.
pub fn entry_file_name(n: u64) -> String {
    format!("{n:0DIGITS$}.json")
}

/// The number of an entry file's name, or `None` for any other name.
pub fn entry_number(name: &str) -> Option<u64> {
    let digits = name.strip_suffix(".json")?;
    if digits.len() != DIGITS || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|n| *n > 0)
}

/// The name of output part `part` of entry `entry`.
pub fn part_name(entry: u64, part: usize) -> String {
    format!("part-{entry:0DIGITS$}-{part:05}.parquet")
}

/// The entry number in an output part's final name, or `None`.
pub fn part_entry(name: &str) -> Option<u64> {
    let rest = name.strip_prefix("part-")?.strip_suffix(".parquet")?;
    let (entry, part) = rest.split_once('-')?;
    let numeric = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    (numeric(entry, DIGITS) && numeric(part, 5)).then(|| entry.parse().ok()).flatten()
}

/// A run's id: its process and the time it started, so two runs (two
/// processes, or one process twice) never share one.
pub fn run_id(pid: u32, nanos: u128) -> String {
    format!("{pid}-{nanos}")
}

/// The process of a run id.
fn run_pid(run_id: &str) -> Option<u32> {
    let (pid, nanos) = run_id.split_once('-')?;
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (numeric(pid) && numeric(nanos)).then(|| pid.parse().ok()).flatten()
}

/// Where a run writes an output file before its entry commits it: hidden,
/// holding the run's id (runs racing for one entry number never write one
/// file), and not ending in `.parquet`, so `read_parquet('out/*.parquet')`
/// and `'out/**/*.parquet'` never match it.
pub fn staged_name(final_name: &str, run_id: &str) -> String {
    format!(".{final_name}.{run_id}.staged")
}

/// (final name, run id) of a staged name, or `None`.
pub fn parse_staged(name: &str) -> Option<(&str, &str)> {
    let inner = name.strip_prefix('.')?.strip_suffix(".staged")?;
    let (final_name, run) = inner.rsplit_once('.')?;
    run_pid(run)?;
    part_entry(final_name)?;
    Some((final_name, run))
}

/// The temporary name entry `n` is written under before it is linked to
/// its number.
fn temp_entry_name(n: u64, run_id: &str) -> String {
    format!(".{}.{run_id}.tmp", entry_file_name(n))
}

/// (entry number, run id) of a temporary entry name, or `None`.
fn parse_temp_entry(name: &str) -> Option<(u64, &str)> {
    let inner = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (file, run) = inner.rsplit_once('.')?;
    run_pid(run)?;
    Some((entry_number(file)?, run))
}

/// The committed entries of a checkpoint, in order.
#[derive(Debug, Default)]
pub struct Log {
    pub entries: Vec<Entry>,
}

impl Log {
    /// The number of the last committed entry (0 for none).
    pub fn last_number(&self) -> u64 {
        self.entries.last().map_or(0, |e| e.entry)
    }

    pub fn last(&self) -> Option<&Entry> {
        self.entries.last()
    }
}

/// Reads every entry of `dir` (none when the folder does not exist). The
/// numbers must run from 1 without a gap, and each entry must parse and
/// carry its own number: a checkpoint missing an entry would take its
/// files again, so it is an error naming what is wrong.
pub fn read_log(dir: &Path) -> Result<Log> {
    let shown = dir.display();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Log::default()),
        Err(e) => return Err(SanitizeError::io(format!("cannot list the checkpoint \"{shown}\": {e}"))),
    };
    let mut numbers = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| SanitizeError::io(format!("cannot list the checkpoint \"{shown}\": {e}")))?;
        if let Some(n) = entry.file_name().to_str().and_then(entry_number) {
            numbers.push(n);
        }
    }
    numbers.sort_unstable();
    if let Some(gap) = first_gap(&numbers) {
        return Err(SanitizeError::input(format!(
            "the checkpoint \"{shown}\" has no entry {} (it has {} of entries 1 to {}): an entry was removed, and the files it took would be taken again; restore it, or start a new checkpoint with a new output folder",
            entry_file_name(gap),
            numbers.len(),
            numbers.last().copied().unwrap_or(0)
        )));
    }
    let mut log = Log::default();
    for n in numbers {
        let path = dir.join(entry_file_name(n));
        let text = std::fs::read_to_string(&path)
            .map_err(|e| SanitizeError::io(format!("cannot read the checkpoint entry \"{}\": {e}", path.display())))?;
        log.entries.push(parse_entry(&path, &text, n)?);
    }
    Ok(log)
}

/// The first number missing from `1..=max` of sorted `numbers`.
pub fn first_gap(numbers: &[u64]) -> Option<u64> {
    numbers.iter().enumerate().find(|(i, n)| **n != *i as u64 + 1).map(|(i, _)| i as u64 + 1)
}

/// An entry's text, checked: its format and its own number.
pub fn parse_entry(path: &Path, text: &str, number: u64) -> Result<Entry> {
    let bad = |why: String| {
        SanitizeError::input(format!("the checkpoint entry \"{}\" is not readable: {why}", path.display()))
    };
    let entry: Entry = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    if entry.format != ENTRY_FORMAT {
        return Err(bad(format!("its format is '{}', and this version reads '{ENTRY_FORMAT}'", entry.format)));
    }
    if entry.entry != number {
        return Err(bad(format!("it says it is entry {}", entry.entry)));
    }
    Ok(entry)
}

/// Why a commit did not happen.
#[derive(Debug)]
pub enum CommitError {
    /// Another run committed this number first.
    Taken,
    Io(SanitizeError),
}

/// Commits `entry` into `dir`: written whole under a temporary name and
/// synced, then linked to its number (an exclusive create: it fails when
/// the number exists), and the folder synced so the link survives a crash.
/// `before_link` runs between the two (a test hook).
pub fn commit(dir: &Path, entry: &Entry, before_link: &dyn Fn() -> Result<()>) -> Result<PathBuf, CommitError> {
    let io = |what: &str, path: &Path, e: std::io::Error| {
        CommitError::Io(SanitizeError::io(format!("cannot {what} \"{}\": {e}", path.display())))
    };
    create_dir_durably(dir).map_err(|e| io("create the checkpoint folder", dir, e))?;
    let text = serde_json::to_string_pretty(entry)
        .map_err(|e| CommitError::Io(SanitizeError::internal(format!("an entry that does not serialize: {e}"))))?;
    let temp = dir.join(temp_entry_name(entry.entry, &entry.run_id));
    let target = dir.join(entry_file_name(entry.entry));
    let written = (|| {
        use std::io::Write;
        let mut file = std::fs::File::options().write(true).create_new(true).open(&temp)?;
        file.write_all(text.as_bytes())?;
        file.write_all(b"\n")?;
        file.sync_all()
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(io("write the checkpoint entry", &temp, e));
    }
    if let Err(e) = before_link() {
        let _ = std::fs::remove_file(&temp);
        return Err(CommitError::Io(e));
    }
    let linked = std::fs::hard_link(&temp, &target);
    let _ = std::fs::remove_file(&temp);
    match linked {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(CommitError::Taken),
        // The winner of this number removes the losers' temporary entries
        // once it has committed (they are garbage then), maybe before a
        // loser links its own.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && target.exists() => return Err(CommitError::Taken),
        Err(e) => return Err(io("commit the checkpoint entry", &target, e)),
    }
    sync_dir(dir).map_err(|e| io("sync the checkpoint folder", dir, e))?;
    Ok(target)
}

/// Syncs a folder, so the names created or renamed in it survive a crash.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

/// Creates `dir` and its missing parents, syncing the parent of each
/// folder it creates: a folder that vanished in a power loss would take
/// the entries or parts synced into it along.
pub fn create_dir_durably(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut missing = Vec::new();
    let mut at = Some(dir);
    while let Some(d) = at.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
        missing.push(d);
        at = d.parent();
    }
    std::fs::create_dir_all(dir)?;
    for d in missing.iter().rev() {
        if let Some(parent) = d.parent().filter(|p| !p.as_os_str().is_empty()) {
            sync_dir(parent)?;
        }
    }
    Ok(())
}

/// Whether a staged output or temporary entry of run `run` for entry
/// `number` is garbage: its number is committed by another run (it lost,
/// or was killed and its number taken since), or its process is known to
/// be gone (it can never commit). A live run's files for a number not yet
/// committed stay: that run may still commit them.
pub fn is_garbage(
    number: u64,
    run: &str,
    committed_run: impl Fn(u64) -> Option<String>,
    alive: impl Fn(u32) -> Option<bool>,
) -> bool {
    match committed_run(number) {
        Some(winner) => winner != run,
        None => run_pid(run).is_some_and(|pid| alive(pid) == Some(false)),
    }
}

/// The checkpoint's temporary entries that are garbage: those of a
/// committed number, whoever wrote them (the winner's was linked, and the
/// link is the entry), and the rest as [`is_garbage`] says.
pub fn garbage_temp_entries(
    dir: &Path,
    committed_run: impl Fn(u64) -> Option<String>,
    alive: impl Fn(u32) -> Option<bool>,
) -> Vec<PathBuf> {
    files_named(dir, |name| {
        parse_temp_entry(name)
            .is_some_and(|(n, run)| committed_run(n).is_some() || is_garbage(n, run, &committed_run, &alive))
    })
}

/// The output folder's staged files that are garbage ([`is_garbage`]).
pub fn garbage_staged(
    dir: &Path,
    committed_run: impl Fn(u64) -> Option<String>,
    alive: impl Fn(u32) -> Option<bool>,
) -> Vec<PathBuf> {
    files_named(dir, |name| {
        parse_staged(name)
            .is_some_and(|(name, run)| part_entry(name).is_some_and(|n| is_garbage(n, run, &committed_run, &alive)))
    })
}

/// The regular files of `dir` (links are not followed) whose names `keep`.
fn files_named(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| e.file_name().to_str().is_some_and(&keep))
        .map(|e| e.path())
        .collect()
}

/// Brings an entry's outputs to their final names: a staged file whose
/// entry is committed is renamed (by its run, or after a crash by the next
/// run); a final file already there is done. Renames are atomic, so two
/// runs completing one entry at once both succeed. A file at neither name
/// was removed by someone: an error, since the entry says it exists.
/// Returns whether anything was renamed (the folder then needs a sync).
pub fn complete_outputs(entry: &Entry, between: &dyn Fn() -> Result<()>) -> Result<bool> {
    let dir = Path::new(&entry.output_dir);
    let mut renamed = false;
    for output in &entry.outputs {
        let target = dir.join(&output.name);
        let staged = dir.join(staged_name(&output.name, &entry.run_id));
        match std::fs::rename(&staged, &target) {
            Ok(()) => {
                renamed = true;
                between()?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && target.is_file() => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(SanitizeError::input(format!(
                    "entry {} of the checkpoint names the output \"{}\", which is missing (and so is its staged copy): the output folder lost a committed file; restore it",
                    entry.entry,
                    target.display()
                )))
            }
            Err(e) => {
                return Err(SanitizeError::io(format!(
                    "cannot move \"{}\" to \"{}\": {e}",
                    staged.display(),
                    target.display()
                )))
            }
        }
    }
    Ok(renamed)
}

#[cfg(test)]
#[path = "log_tests.rs"]
mod tests;
