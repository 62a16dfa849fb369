//! What `on_error` skipped or nulled, row by row (`sanitize_rejects()`,
//! docs/errors.md "Rejects"): each scan logged in `sanitize_stats()` keeps up to
//! `max_rejects` of its rejects, in input order, with the raw text cut at
//! `max_reject_bytes`. Process-wide and bounded twice: per scan by
//! `max_rejects`, and in all by [`REJECTS_BUDGET_BYTES`], past which the
//! oldest scans' rows are dropped first. The exact counts stay in
//! `sanitize_stats()` (`rejects_recorded`, `rejects_dropped`).

use std::collections::VecDeque;
use std::sync::Mutex;

/// The bytes all remembered rejects may take; the oldest scans' rows go
/// first past it.
pub const REJECTS_BUDGET_BYTES: usize = 64 << 20;

/// One rejected record or value.
#[derive(Clone, Debug, PartialEq)]
pub struct Reject {
    pub scan_id: u64,
    pub session: Option<super::scan_log::Session>,
    pub function: String,
    /// As `source_file` shows it.
    pub file: String,
    pub line: u64,
    pub byte: u64,
    /// 0-based within the file; `None` for what is no record (a CSV
    /// header cell that did not decode).
    pub record_index: Option<u64>,
    /// The value's path (`device.model`, `items[].sku`); `None` for a
    /// whole record.
    pub path: Option<String>,
    pub source_key: Option<String>,
    pub kind: &'static str,
    pub action: &'static str,
    /// At most `max_reject_bytes` bytes (cut on a character boundary).
    pub raw: Option<String>,
    /// The raw text's length before the cut.
    pub raw_bytes: Option<u64>,
    /// What `on_error := 'stop'` would say.
    pub message: String,
}

impl Reject {
    /// Its memory, roughly (the store's budget counts it).
    pub fn size(&self) -> usize {
        std::mem::size_of::<Reject>()
            + self.function.len()
            + self.file.len()
            + self.path.as_ref().map_or(0, String::len)
            + self.source_key.as_ref().map_or(0, String::len)
            + self.raw.as_ref().map_or(0, String::len)
            + self.message.len()
    }
}

/// `text` cut at `max` bytes on a character boundary, and its full length.
pub fn cut(text: &str, max: usize) -> (String, u64) {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (text[..end].to_string(), text.len() as u64)
}

struct Store {
    /// Rows in scan order (a scan's rows together, in input order).
    rows: VecDeque<Reject>,
    bytes: usize,
}

static STORE: Mutex<Store> = Mutex::new(Store { rows: VecDeque::new(), bytes: 0 });

fn with_store<T>(f: impl FnOnce(&mut Store) -> T) -> T {
    let mut guard = STORE.lock().unwrap_or_else(|p| p.into_inner());
    f(&mut guard)
}

/// Keeps a scan's rejects (already limited by `max_rejects`); the oldest
/// rows go when the budget is exceeded.
pub fn record(rows: Vec<Reject>) {
    if rows.is_empty() {
        return;
    }
    with_store(|store| {
        for r in rows {
            store.bytes += r.size();
            store.rows.push_back(r);
        }
        while store.bytes > REJECTS_BUDGET_BYTES {
            match store.rows.pop_front() {
                Some(old) => store.bytes -= old.size(),
                None => break,
            }
        }
    });
}

/// The remembered rejects `scope` shows, in scan and input order.
pub fn snapshot(scope: super::scan_log::Scope) -> Vec<Reject> {
    with_store(|store| store.rows.iter().filter(|r| scope.shows(r.session)).cloned().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reject(scan_id: u64, raw: usize) -> Reject {
        Reject {
            scan_id,
            session: Some(super::super::scan_log::Session { database: u64::MAX - 3, connection: 0 }),
            function: "f".into(),
            file: "x".into(),
            line: 1,
            byte: 0,
            record_index: Some(0),
            path: None,
            source_key: None,
            kind: "malformed_record",
            action: "row_skipped",
            raw: Some("r".repeat(raw)),
            raw_bytes: Some(raw as u64),
            message: "m".into(),
        }
    }

    #[test]
    fn the_store_keeps_the_newest_rows_within_its_budget() {
        let big = REJECTS_BUDGET_BYTES / 4;
        for scan in 0..6 {
            record(vec![reject(u64::MAX - 100 + scan, big)]);
        }
        let kept = snapshot(super::super::scan_log::Scope::Connection(super::super::scan_log::Session {
            database: u64::MAX - 3,
            connection: 0,
        }));
        assert!(kept.len() <= 4 && !kept.is_empty());
        assert_eq!(kept.last().unwrap().scan_id, u64::MAX - 95, "the newest scan is kept");
    }

    #[test]
    fn raw_text_is_cut_on_a_character_boundary() {
        assert_eq!(cut("héllo", 2), ("h".to_string(), 6));
        assert_eq!(cut("abc", 10), ("abc".to_string(), 3));
    }
}
