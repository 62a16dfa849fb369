//! Which listed files a run takes: every file no committed entry names,
//! and, by `on_changed`, those an entry names whose identity changed since;
//! in a deterministic order, at most `max_files_per_run` of them. Pure: a
//! listing and the log in, a choice out.

use std::collections::HashMap;

use super::log::Log;
use crate::error::{Result, SanitizeError};
use crate::source::{Identity, Listed};

/// `file_order`: how the new files are ordered (and so which go first when a
/// run takes only some).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileOrder {
    /// By absolute path, byte order (the scans' glob order).
    Path,
    /// By modification time, then path.
    Modified,
}

impl FileOrder {
    pub const NAMES: &'static [(&'static str, FileOrder)] =
        &[("path", FileOrder::Path), ("modified", FileOrder::Modified)];
}

/// `on_changed`: what a file an entry names becomes when its identity
/// (size, modification time) is no longer the one the entry recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnChanged {
    /// The run fails, naming the file and both identities.
    Error,
    /// The change is ignored: the file stays taken.
    Skip,
    /// The file is taken again, as a new file (its earlier rows stay).
    Reingest,
}

impl OnChanged {
    pub const NAMES: &'static [(&'static str, OnChanged)] =
        &[("error", OnChanged::Error), ("skip", OnChanged::Skip), ("reingest", OnChanged::Reingest)];
}

/// A file a run takes: as listed, and the entry that took an earlier
/// content of it (reingested).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Taken {
    pub file: Listed,
    pub replaces_entry: Option<u64>,
}

/// The choice of one run.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Selection {
    pub take: Vec<Taken>,
    /// New files past `max_files_per_run`, for a later run.
    pub left: usize,
    /// Changed files passed over (`on_changed := 'skip'`).
    pub changed_skipped: usize,
}

/// The identity each path had when an entry last took it, and that entry.
pub fn known_files(log: &Log) -> HashMap<&str, (u64, Identity)> {
    let mut known = HashMap::new();
    for entry in &log.entries {
        for f in &entry.files {
            known.insert(f.path.as_str(), (entry.entry, f.identity()));
        }
    }
    known
}

/// `2026-06-25T09:05:08.947122153Z` of nanoseconds since the epoch.
pub fn format_modified(ns: i64) -> String {
    let micros = ns.div_euclid(1_000);
    let text = crate::scan::format_utc_micros(micros);
    // Nanoseconds: the three digits microseconds drop.
    let extra = ns.rem_euclid(1_000);
    format!("{}{extra:03}Z", text.trim_end_matches('Z'))
}

/// An identity as messages show it.
pub fn describe(identity: &Identity) -> String {
    let etag = identity.etag.as_ref().map(|e| format!(", ETag {e}")).unwrap_or_default();
    format!("{} bytes, modified {}{etag}", identity.size, format_modified(identity.modified_ns))
}

/// Chooses the files of a run (see the module comment).
pub fn select(
    listed: Vec<Listed>,
    log: &Log,
    on_changed: OnChanged,
    order: FileOrder,
    max_files: Option<usize>,
) -> Result<Selection> {
    let known = known_files(log);
    let mut selection = Selection::default();
    let mut new: Vec<Taken> = Vec::new();
    let mut changed: Vec<(Listed, u64, Identity)> = Vec::new();
    for file in listed {
        match known.get(file.path.as_str()) {
            None => new.push(Taken { file, replaces_entry: None }),
            Some((_, identity)) if *identity == file.identity => {}
            Some((entry, identity)) => changed.push((file, *entry, identity.clone())),
        }
    }
    // The first changed file in path order is the one named, whatever the
    // listing's order.
    changed.sort_by(|a, b| a.0.path.as_bytes().cmp(b.0.path.as_bytes()));
    match on_changed {
        OnChanged::Error => {
            if let Some((file, entry, before)) = changed.first() {
                let more = match changed.len() {
                    1 => String::new(),
                    n => format!(" ({} more changed files)", n - 1),
                };
                return Err(SanitizeError::input(format!(
                    "\"{}\" changed since entry {entry} took it: then {}, now {}{more}; pass on_changed := 'skip' to leave it, or 'reingest' to take its new content as a new file",
                    file.path,
                    describe(before),
                    describe(&file.identity)
                )));
            }
        }
        OnChanged::Skip => selection.changed_skipped = changed.len(),
        OnChanged::Reingest => {
            new.extend(changed.into_iter().map(|(file, entry, _)| Taken { file, replaces_entry: Some(entry) }))
        }
    }
    sort(&mut new, order);
    let keep = max_files.unwrap_or(usize::MAX).min(new.len());
    selection.left = new.len() - keep;
    new.truncate(keep);
    selection.take = new;
    Ok(selection)
}

/// Orders files by `order`; ties (equal times) by path, so the order never
/// depends on the listing's.
pub fn sort(files: &mut [Taken], order: FileOrder) {
    match order {
        FileOrder::Path => files.sort_by(|a, b| a.file.path.as_bytes().cmp(b.file.path.as_bytes())),
        FileOrder::Modified => files.sort_by(|a, b| {
            a.file
                .identity
                .modified_ns
                .cmp(&b.file.identity.modified_ns)
                .then_with(|| a.file.path.as_bytes().cmp(b.file.path.as_bytes()))
        }),
    }
}

/// A path given by name that names nothing now: fine when the log names
/// it or a file below it (it was taken, then deleted: deleted sources are
/// never a problem), otherwise most likely a mistyped source.
pub fn check_missing(missing: &[String], log: &Log) -> Result<()> {
    let known = known_files(log);
    for path in missing {
        let local = crate::source::file_uri_path(path).unwrap_or(path);
        // Named as the listing names files: a remote URI as shown, a local
        // path absolute with links resolved.
        let absolute = match crate::source::parse_remote(path) {
            Some(uri) => uri.object_uri(&uri.key),
            None => canonical_missing(std::path::Path::new(local)),
        };
        let dir = format!("{}/", absolute.trim_end_matches('/'));
        let taken = known.keys().any(|k| *k == absolute || k.starts_with(&dir));
        if !taken {
            return Err(SanitizeError::io(format!(
                "no such file or folder \"{path}\" (and no committed entry took a file there)"
            )));
        }
    }
    Ok(())
}

/// A path that does not exist as the listing would have named it: its
/// deepest existing ancestor with links resolved, then the rest as given.
fn canonical_missing(path: &std::path::Path) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut rest = Vec::new();
    let mut at = absolute.as_path();
    loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            let mut out = real;
            out.extend(rest.iter().rev());
            return out.to_string_lossy().into_owned();
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = parent;
            }
            _ => return absolute.to_string_lossy().into_owned(),
        }
    }
}
