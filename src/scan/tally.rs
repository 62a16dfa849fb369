//! What the probe saw of each range, so that a scan that needs no value of
//! any record (`count(*)`, or only partition and ETL columns) gives its
//! rows without decoding the input a second time.
//!
//! The probe decodes every record anyway. Where nothing but a bad record
//! could make a scan's rows differ from a plain count, and the probe found
//! none, a range's rows are its record count: so the scan takes the counts
//! when every file is still the file the probe read (same size,
//! modification time, inode and change time; a file modified in the two
//! seconds before the probe never qualifies, since it may change again
//! within the same timestamp tick). Anything else, and the scan decodes as
//! always.

use std::time::{SystemTime, UNIX_EPOCH};

/// A file modified more recently than this may change again unnoticed
/// (git's rule for "racily clean" files).
pub(super) const RACY: std::time::Duration = std::time::Duration::from_secs(2);

/// A file as `stat` sees it: its size, modification time and identity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct FileStamp {
    len: u64,
    modified_nanos: u128,
    identity: String,
}

#[cfg(test)]
thread_local! {
    /// Stamps this thread took (`FileStamp::of`), for tests that count them.
    pub(super) static STAMPS_TAKEN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl FileStamp {
    /// The stamp of a local file that has not been modified in the last
    /// [`RACY`]; `None` for anything else.
    pub(super) fn of(path: &str) -> Option<FileStamp> {
        #[cfg(test)]
        STAMPS_TAKEN.with(|n| n.set(n.get() + 1));
        let meta = std::fs::metadata(path).ok()?;
        let modified = meta.modified().ok()?;
        if SystemTime::now().duration_since(modified).map_or(true, |age| age < RACY) {
            return None;
        }
        let modified_nanos = modified.duration_since(UNIX_EPOCH).ok()?.as_nanos();
        Some(FileStamp { len: meta.len(), modified_nanos, identity: identity(&meta) })
    }
}

impl std::fmt::Display for FileStamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}\u{2}{}\u{2}{}", self.len, self.modified_nanos, self.identity)
    }
}

/// The file's inode and change time where the platform has them: a file
/// replaced by another of the same size and mtime is still another file.
#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> String {
    use std::os::unix::fs::MetadataExt;
    format!("{}:{}:{}", meta.ino(), meta.ctime(), meta.ctime_nsec())
}

#[cfg(not(unix))]
fn identity(_meta: &std::fs::Metadata) -> String {
    String::new()
}

/// One range as the probe read it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RangeTally {
    pub records: u64,
    pub bytes: u64,
    /// No bad record.
    pub clean: bool,
    /// No line held two records (JSON Lines; see formats/json/mod.rs `SkipKeys`).
    pub one_record_per_line: bool,
}

/// The probe's count of every range, and the files as they were before it
/// read them.
#[derive(Clone, Debug)]
pub struct ProbeTally {
    pub ranges: Vec<RangeTally>,
    stamps: Vec<FileStamp>,
}

impl ProbeTally {
    /// Stamps `files` before the probe reads them; `None` when one cannot
    /// be stamped (not local, or modified too recently).
    pub(super) fn before_probe(files: &[String], ranges: usize) -> Option<ProbeTally> {
        let stamps = files.iter().map(|f| FileStamp::of(f)).collect::<Option<Vec<_>>>()?;
        Some(ProbeTally::stamped(stamps, ranges))
    }

    /// With the files' stamps taken earlier, before the probe read any of
    /// them (the bind cache's key holds them).
    pub(super) fn stamped(stamps: Vec<FileStamp>, ranges: usize) -> ProbeTally {
        ProbeTally {
            ranges: vec![RangeTally { clean: true, one_record_per_line: true, ..RangeTally::default() }; ranges],
            stamps,
        }
    }

    /// Every range clean.
    pub(super) fn all_clean(&self) -> bool {
        self.ranges.iter().all(|r| r.clean)
    }

    /// No line of any range held two records.
    pub fn one_record_per_line(&self) -> bool {
        self.ranges.iter().all(|r| r.one_record_per_line)
    }

    /// Every file is still the one the probe read.
    pub fn still_holds(&self, files: &[String]) -> bool {
        files.len() == self.stamps.len()
            && files.iter().zip(&self.stamps).all(|(f, s)| FileStamp::of(f).as_ref() == Some(s))
    }
}
