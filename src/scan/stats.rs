//! The counters of a probe or a scan, as `sanitize_stats()` and the probe's
//! `stats` show them (docs/errors.md "Row accounting").

use serde::Serialize;

/// Counters of a probe or a scan. Invariant: `rows_read = rows_emitted + rows_skipped`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    pub rows_read: u64,
    pub rows_emitted: u64,
    pub rows_skipped: u64,
    /// Emitted rows with at least one value written as NULL because it could
    /// not be materialized (a bad record counts here with all its fields).
    pub rows_nulled: u64,
    /// Individual values written as NULL because no column could take them.
    pub values_nulled: u64,
    pub bytes_read: u64,
    pub files: u64,
    pub batches: u64,
    pub max_depth_seen: u64,
    pub values_flattened: u64,
    /// Keys repeated within one object; the last occurrence wins.
    pub duplicate_keys: u64,
    /// NULL list elements dropped under `bigquery_profile`.
    pub list_nulls_dropped: u64,
    /// Rejects kept for `sanitize_rejects()`, and those past `max_rejects`.
    pub rejects_recorded: u64,
    pub rejects_dropped: u64,
    /// Values kept in the rescue column instead of being nulled.
    pub values_rescued: u64,
    /// Emitted rows written from a typed reader's arrow columns whole
    /// (Parquet whose column types agree with the schema:
    /// route/columnar.rs), not value by value from the tape.
    pub rows_columnar: u64,
    /// Emitted rows written from their JSON text, with no tape between
    /// (JSON Lines the probe found clean: route/direct.rs).
    pub rows_direct: u64,
}

impl Stats {
    pub fn json_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_string())
    }
}
