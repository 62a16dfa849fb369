//! The counters of recent scans, so that SQL can see them after a scan
//! (`sanitize_stats()`): rows read, emitted, skipped and nulled, bytes,
//! files. Process-wide, bounded, and keyed by DuckDB connection so that each
//! connection sees its own scans.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use super::Stats;

/// How many scans are remembered; older ones are dropped first.
pub const SCAN_LOG_CAPACITY: usize = 256;

#[derive(Clone, Debug, PartialEq)]
pub struct ScanRecord {
    pub scan_id: u64,
    /// DuckDB's connection id, when the host could tell us.
    pub connection_id: Option<u64>,
    pub function: String,
    pub path: String,
    pub started_at_micros: i64,
    /// The scan reached the end of its input (false while it runs, or when a
    /// LIMIT or an error stopped it early).
    pub finished: bool,
    pub stats: Stats,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static LOG: Mutex<VecDeque<ScanRecord>> = Mutex::new(VecDeque::new());

fn with_log<T>(f: impl FnOnce(&mut VecDeque<ScanRecord>) -> T) -> T {
    // A poisoned lock only means another thread panicked mid-update; the
    // counters are still usable.
    let mut guard = LOG.lock().unwrap_or_else(|p| p.into_inner());
    f(&mut guard)
}

/// Registers a scan that is starting; returns its id.
pub fn begin(function: &str, path: &str, connection_id: Option<u64>, started_at_micros: i64) -> u64 {
    let scan_id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let record = ScanRecord {
        scan_id,
        connection_id,
        function: function.to_string(),
        path: path.to_string(),
        started_at_micros,
        finished: false,
        stats: Stats::default(),
    };
    with_log(|log| {
        if log.len() == SCAN_LOG_CAPACITY {
            log.pop_front();
        }
        log.push_back(record);
    });
    scan_id
}

/// Records the counters of a running or finished scan.
pub fn update(scan_id: u64, stats: &Stats, finished: bool) {
    with_log(|log| {
        if let Some(r) = log.iter_mut().rev().find(|r| r.scan_id == scan_id) {
            r.stats = *stats;
            r.finished |= finished;
        }
    });
}

/// The connection of a logged scan.
pub fn connection_of(scan_id: u64) -> Option<u64> {
    with_log(|log| log.iter().rev().find(|r| r.scan_id == scan_id).and_then(|r| r.connection_id))
}

/// The remembered scans of one connection (all of them for `None`), oldest first.
pub fn snapshot(connection_id: Option<u64>) -> Vec<ScanRecord> {
    with_log(|log| {
        log.iter().filter(|r| connection_id.is_none() || r.connection_id == connection_id).cloned().collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_are_logged_per_connection_and_bounded() {
        let conn = Some(u64::MAX - 7);
        let a = begin("sanitize_jsonl", "a.jsonl", conn, 1);
        let stats = Stats { rows_read: 3, rows_emitted: 2, rows_skipped: 1, ..Stats::default() };
        update(a, &stats, true);
        let mine = snapshot(conn);
        assert_eq!(mine.len(), 1);
        assert_eq!((mine[0].finished, mine[0].stats.rows_read), (true, 3));
        for i in 0..SCAN_LOG_CAPACITY + 5 {
            begin("sanitize_csv", &format!("{i}.csv"), Some(u64::MAX - 8), 0);
        }
        assert!(snapshot(None).len() <= SCAN_LOG_CAPACITY);
        assert!(snapshot(conn).is_empty(), "the oldest scans are dropped first");
    }
}
