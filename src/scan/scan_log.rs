//! The counters of recent scans, so that SQL can see them after a scan
//! (`sanitize_stats()`): rows read, emitted, skipped and nulled, bytes,
//! files. Process-wide, bounded, and keyed by [`Session`] so that each
//! connection sees its own scans, and no database another's.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use super::Stats;

/// How many scans are remembered; older ones are dropped first.
pub const SCAN_LOG_CAPACITY: usize = 256;

/// The connection that ran a scan. DuckDB numbers connections per
/// database, so two databases of one process (two `duckdb.connect()` in
/// Python) both have a connection 1; `database` tells them apart: a token
/// taken each time the extension is loaded into a database (ffi/mod.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Session {
    pub database: u64,
    /// DuckDB's connection id (what the `connection_id` columns show).
    pub connection: u64,
}

/// Whose scans a listing (`sanitize_stats()`, `sanitize_rejects()`) shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The caller's connection only.
    Connection(Session),
    /// Every connection of the caller's database (`all_connections := true`).
    Database(u64),
    /// Everything: the host could not say who is asking.
    Everything,
}

impl Scope {
    pub fn of(caller: Option<Session>, all_connections: bool) -> Scope {
        match caller {
            Some(s) if all_connections => Scope::Database(s.database),
            Some(s) => Scope::Connection(s),
            None => Scope::Everything,
        }
    }

    pub fn shows(&self, session: Option<Session>) -> bool {
        match *self {
            Scope::Connection(s) => session == Some(s),
            Scope::Database(d) => session.is_some_and(|s| s.database == d),
            Scope::Everything => true,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ScanRecord {
    pub scan_id: u64,
    /// Who ran it, when the host could tell us.
    pub session: Option<Session>,
    pub function: String,
    pub path: String,
    /// Which file system served the scan's files: `duckdb` (DuckDB's own,
    /// with its rules, secrets and registered file systems), `object_store`
    /// (remote objects fetched by the extension) or `local` (`std::fs`,
    /// outside the extension only); several joined with `+`.
    pub file_system: String,
    pub started_at_micros: i64,
    /// The scan reached the end of its input (false while it runs, or when a
    /// LIMIT or an error stopped it early).
    pub finished: bool,
    pub stats: Stats,
    /// DuckDB's threads that took chunks of this scan: 1 with insertion
    /// order kept, up to `threads` without it (ffi/table.rs).
    pub duckdb_threads: u64,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static LOG: Mutex<VecDeque<ScanRecord>> = Mutex::new(VecDeque::new());

fn with_log<T>(f: impl FnOnce(&mut VecDeque<ScanRecord>) -> T) -> T {
    // A poisoned lock only means another thread panicked mid-update; the
    // counters are still usable.
    let mut guard = LOG.lock().unwrap_or_else(|p| p.into_inner());
    f(&mut guard)
}

/// Registers a scan that is starting; returns its id. `path` is recorded
/// without the credentials or signature a URI in it may carry: every
/// connection of the database may list it (`all_connections := true`).
pub fn begin(function: &str, path: &str, file_system: &str, session: Option<Session>, started_at_micros: i64) -> u64 {
    let scan_id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let record = ScanRecord {
        scan_id,
        session,
        function: function.to_string(),
        path: crate::source::redact_text(path).into_owned(),
        file_system: file_system.to_string(),
        started_at_micros,
        finished: false,
        stats: Stats::default(),
        duckdb_threads: 0,
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

/// One more of DuckDB's threads took chunks of the scan.
pub fn add_duckdb_thread(scan_id: u64) {
    with_log(|log| {
        if let Some(r) = log.iter_mut().rev().find(|r| r.scan_id == scan_id) {
            r.duckdb_threads += 1;
        }
    });
}

/// Who ran a logged scan.
pub fn session_of(scan_id: u64) -> Option<Session> {
    with_log(|log| log.iter().rev().find(|r| r.scan_id == scan_id).and_then(|r| r.session))
}

/// The remembered scans `scope` shows, oldest first.
pub fn snapshot(scope: Scope) -> Vec<ScanRecord> {
    with_log(|log| log.iter().filter(|r| scope.shows(r.session)).cloned().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_are_logged_per_connection_and_bounded() {
        let conn = Some(Session { database: u64::MAX - 7, connection: 1 });
        let a = begin("sanitize_jsonl", "a.jsonl", "local", conn, 1);
        let stats = Stats { rows_read: 3, rows_emitted: 2, rows_skipped: 1, ..Stats::default() };
        update(a, &stats, true);
        let mine = snapshot(Scope::of(conn, false));
        assert_eq!(mine.len(), 1);
        assert_eq!((mine[0].finished, mine[0].stats.rows_read), (true, 3));
        for i in 0..SCAN_LOG_CAPACITY + 5 {
            begin(
                "sanitize_csv",
                &format!("{i}.csv"),
                "local",
                Some(Session { database: u64::MAX - 8, connection: 1 }),
                0,
            );
        }
        assert!(snapshot(Scope::Everything).len() <= SCAN_LOG_CAPACITY);
        assert!(snapshot(Scope::of(conn, false)).is_empty(), "the oldest scans are dropped first");
    }

    #[test]
    fn a_logged_path_carries_no_secret() {
        let conn = Some(Session { database: u64::MAX - 9, connection: 1 });
        let id = begin("sanitize_jsonl", "http://user:s3cret@h/x.jsonl?X-Amz-Signature=abc", "object_store", conn, 0);
        let logged = snapshot(Scope::of(conn, false));
        let record = logged.iter().find(|r| r.scan_id == id).unwrap();
        assert_eq!(record.path, "http://h/x.jsonl");
    }

    #[test]
    fn a_connection_of_another_database_with_the_same_id_sees_nothing() {
        let mine = Session { database: u64::MAX - 20, connection: 3 };
        let twin = Session { database: u64::MAX - 21, connection: 3 };
        let sibling = Session { database: u64::MAX - 20, connection: 4 };
        let id = begin("sanitize_csv", "twin.csv", "local", Some(mine), 0);
        let ids = |scope| snapshot(scope).iter().map(|r| r.scan_id).filter(|s| *s == id).count();
        assert_eq!(ids(Scope::of(Some(mine), false)), 1);
        assert_eq!(ids(Scope::of(Some(twin), false)), 0, "same connection id, another database");
        assert_eq!(ids(Scope::of(Some(twin), true)), 0, "all_connections stays in its database");
        assert_eq!(ids(Scope::of(Some(sibling), false)), 0);
        assert_eq!(ids(Scope::of(Some(sibling), true)), 1, "all_connections sees its database's other connections");
        assert_eq!(ids(Scope::of(None, false)), 1);
        assert_eq!(session_of(id), Some(mine));
    }
}
