//! What a writer killed midway leaves behind (a temporary Parquet file, a
//! spool directory of downloaded copies), named with its process id, and
//! its removal once that process is known to be gone.

use std::path::{Path, PathBuf};

/// Whether the process `pid` is alive, where the system can say: Linux
/// lists every process of this pid namespace under /proc (a zombie too,
/// which counts as alive). Elsewhere, or without /proc, `None`: not known,
/// so nothing of it is removed. No signal is sent (kill(pid, 0) would need
/// unsafe code outside src/ffi, and /proc answers the same question).
pub fn process_alive(pid: u32) -> Option<bool> {
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return None;
    }
    Some(proc.join(pid.to_string()).exists())
}

/// What a leftover is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
}

/// Removes from `dir` the leftovers of writers that are gone: each entry
/// of `kind` (a link is never followed, nor taken for either) whose name
/// `pid_of` reads a pid from, owned by this process's user, and whose pid
/// `alive` says is gone. Anything else stays, a live or unknown writer's
/// entries above all. Best effort: what cannot be removed only costs
/// space. Returns what was removed.
pub fn remove_left_by_dead(
    dir: &Path,
    pid_of: impl Fn(&str) -> Option<u32>,
    kind: Kind,
    alive: impl Fn(u32) -> Option<bool>,
) -> Vec<PathBuf> {
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(&pid_of) else { continue };
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else { continue };
        let of_kind = match kind {
            Kind::File => meta.is_file(),
            Kind::Dir => meta.is_dir(),
        };
        if !of_kind || !owned_by_me(&meta) || alive(pid) != Some(false) {
            continue;
        }
        let gone = match kind {
            Kind::File => std::fs::remove_file(entry.path()),
            Kind::Dir => std::fs::remove_dir_all(entry.path()),
        };
        if gone.is_ok() {
            removed.push(entry.path());
        }
    }
    removed
}

#[cfg(unix)]
fn owned_by_me(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    // The process's own files tell its uid without a libc call.
    std::fs::metadata("/proc/self").is_ok_and(|me| me.uid() == meta.uid())
}

#[cfg(not(unix))]
fn owned_by_me(_: &std::fs::Metadata) -> bool {
    false
}
