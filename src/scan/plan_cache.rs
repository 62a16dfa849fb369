//! The bind cache: a plan made once is reused by the next bind of the same
//! call on the same connection while its files are unchanged. DuckDB's
//! Python relation API binds a query twice, and `DESCRIBE` followed by
//! the query, or a `LIMIT 10` look before the real read, bind the same
//! call again: each would run the whole probe again.
//!
//! The key is the connection (of its database: scan_log::Session), the
//! function, the kind of plan, the paths,
//! every option the user gave (the registry text included) and, for each
//! file the paths resolve to, its size, modification time, inode and change
//! time: a changed, added or removed file is a different key, and a file
//! modified in the last two seconds is not cached at all. Only local inputs are cached
//! (a remote file would need its ETag, and its staged copy is released with
//! the plan). A hit is the cached plan with a fresh `ingestion_timestamp`
//! and `detected_at`. At most [`CAPACITY`] plans are kept, the least
//! recently used leaving first, and none holding more than [`MAX_SCHEMA_BYTES`]
//! of registry text.

use std::sync::{Arc, Mutex};

use super::scan_log::Session;
use super::tally::FileStamp;
use super::{format_utc_micros, now_utc_micros, plan_named, plan_with, Prepared, RunSettings, ScanPlan};
use crate::error::Result;
use crate::options::Options;
use crate::source::{parse_remote, resolve};

/// Plans kept, over all connections.
const CAPACITY: usize = 16;
/// A plan whose registry text is larger is not kept.
const MAX_SCHEMA_BYTES: usize = 4 << 20;

struct Entry {
    key: String,
    plan: Arc<ScanPlan>,
}

/// Most recently used last.
static CACHE: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// The plan of a call: from the cache when the same connection made it
/// for the same arguments and the files have not changed, else made now
/// ([`plan_with`]) and kept. `connection: None` never caches. A plan
/// from the cache runs with this call's `run` (its file system above all:
/// the statement's own client opens the files).
pub fn cached_plan(
    function: &str,
    paths: &[String],
    options: Options,
    run: RunSettings,
    for_scan: bool,
    session: Option<Session>,
) -> Result<ScanPlan> {
    let key = match session {
        Some(s) => key_of(function, paths, &options, &run, for_scan, s),
        None => None,
    };
    let Some((key, prepared)) = key else { return plan_with(function, paths, options, run, for_scan) };
    if let Some(plan) = lookup(&key) {
        return Ok(refreshed(&plan, run));
    }
    // The files the key lists, and their stamps: planning needs both.
    let plan = plan_named(function, paths, options, run.clone(), for_scan, Some(prepared))
        .map_err(|e| e.in_function(function))?;
    if plan._spools.is_empty() && plan.registry_json.len() <= MAX_SCHEMA_BYTES {
        store(key, refreshed(&plan, run));
    }
    Ok(plan)
}

/// The cache key, or `None` when the call is not cached (a remote path,
/// or files that cannot be listed or stat'ed: the plan then reports it).
fn key_of(
    function: &str,
    paths: &[String],
    options: &Options,
    run: &RunSettings,
    for_scan: bool,
    session: Session,
) -> Option<(String, Prepared)> {
    if paths
        .iter()
        .any(|p| parse_remote(p).is_some() || p.contains("://") && !p.to_ascii_lowercase().starts_with("file://"))
    {
        return None;
    }
    let resolved = resolve(paths, options, &run.opener).ok()?;
    // Every parsed option (the format, the registry text, the compiled
    // parsers, ...): two calls that would plan differently never share a key.
    let Session { database, connection } = session;
    // The threads too: they decide the input's byte ranges.
    let threads = run.threads;
    let mut key =
        format!("{database}.{connection}\u{1}{function}\u{1}{for_scan}\u{1}{paths:?}\u{1}{options:?}\u{1}{threads}");
    let mut stamps = Vec::with_capacity(resolved.files.len());
    for file in &resolved.files {
        // None: a file modified in the last two seconds may change again
        // within the same timestamp tick at the same size: not cached.
        let stamp = FileStamp::of(file)?;
        key.push_str(&format!("\u{1}{file}\u{2}{stamp}"));
        stamps.push(stamp);
    }
    Some((key, Prepared { resolved, stamps }))
}

fn lookup(key: &str) -> Option<Arc<ScanPlan>> {
    let mut cache = CACHE.lock().ok()?;
    let i = cache.iter().position(|e| e.key == key)?;
    let entry = cache.remove(i);
    let plan = Arc::clone(&entry.plan);
    cache.push(entry);
    Some(plan)
}

fn store(key: String, plan: ScanPlan) {
    let Ok(mut cache) = CACHE.lock() else { return };
    cache.retain(|e| e.key != key);
    if cache.len() >= CAPACITY {
        cache.remove(0);
    }
    cache.push(Entry { key, plan: Arc::new(plan) });
}

/// A copy of `plan` as made now: a fresh start time, and the drift events
/// rendered with it.
fn refreshed(plan: &ScanPlan, run: RunSettings) -> ScanPlan {
    let started_at_micros = now_utc_micros();
    let detected_at = format_utc_micros(started_at_micros);
    let drifts: Vec<serde_json::Value> = plan.drift_events.iter().map(|e| e.to_json(&detected_at)).collect();
    ScanPlan {
        function: plan.function.clone(),
        path: plan.path.clone(),
        options: plan.options.clone(),
        run,
        files: plan.files.clone(),
        display_files: plan.display_files.clone(),
        schema: plan.schema.clone(),
        registry_json: plan.registry_json.clone(),
        drifts_json: serde_json::Value::Array(drifts).to_string(),
        drift_events: plan.drift_events.clone(),
        probe_stats: plan.probe_stats,
        started_at_micros,
        _spools: Vec::new(),
        declared_probe: plan.declared_probe,
        partitions: plan.partitions.clone(),
        ranges: plan.ranges.clone(),
        tally: plan.tally.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::InputFormat;

    const S1: Session = Session { database: 70, connection: 7001 };
    const S2: Session = Session { database: 70, connection: 7002 };
    const TWIN: Session = Session { database: 71, connection: 7001 };

    #[test]
    fn a_second_bind_is_a_hit_until_a_file_changes() {
        let dir = std::env::temp_dir().join(format!("plan_cache_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("a.jsonl");
        std::fs::write(&file, "{\"a\": 1}\n").unwrap();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        std::fs::File::options().write(true).open(&file).unwrap().set_modified(old).unwrap();
        let paths = vec![file.to_string_lossy().into_owned()];
        let options = || Options::defaults(InputFormat::Jsonl);
        let first = cached_plan("f", &paths, options(), RunSettings::default(), true, Some(S1)).unwrap();
        let (key, _) = key_of("f", &paths, &options(), &RunSettings::default(), true, S1).unwrap();
        assert!(lookup(&key).is_some(), "the plan was kept");
        let again = cached_plan("f", &paths, options(), RunSettings::default(), true, Some(S1)).unwrap();
        assert_eq!((again.registry_json.clone(), again.files.clone()), (first.registry_json.clone(), first.files));
        assert!(again.started_at_micros >= first.started_at_micros);
        // Another connection is another key, and so is the same
        // connection id of another database.
        assert!(key_of("f", &paths, &options(), &RunSettings::default(), true, S2).unwrap().0 != key);
        assert!(key_of("f", &paths, &options(), &RunSettings::default(), true, TWIN).unwrap().0 != key);
        // A changed file is a new key: the plan sees the new field.
        std::fs::write(&file, "{\"a\": 1, \"b\": \"x\"}\n").unwrap();
        let changed = cached_plan("f", &paths, options(), RunSettings::default(), true, Some(S1)).unwrap();
        assert!(changed.registry_json.contains("\"b\""), "{}", changed.registry_json);
        // Just modified: not cached at all (it could change again unseen).
        assert!(key_of("f", &paths, &options(), &RunSettings::default(), true, S1).is_none());
        // Another format is another key (sanitize(..., input_format := ...)).
        let mut csv = options();
        csv.input_format = InputFormat::Csv;
        std::fs::File::options().write(true).open(&file).unwrap().set_modified(old).unwrap();
        assert_ne!(
            key_of("f", &paths, &csv, &RunSettings::default(), true, S1).map(|(k, _)| k),
            key_of("f", &paths, &options(), &RunSettings::default(), true, S1).map(|(k, _)| k)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A bind that misses the cache plans from the files and stamps its key
    /// took: each file is stamped once, not again before the probe, and
    /// the probe's tally (which a scan needing no value relies on) is
    /// still made from those stamps.
    #[test]
    fn a_missed_bind_stamps_each_file_once() {
        let dir = std::env::temp_dir().join(format!("plan_cache_once_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        for name in ["a", "b", "c"] {
            let file = dir.join(format!("{name}.jsonl"));
            std::fs::write(&file, "{\"a\": 1}\n").unwrap();
            std::fs::File::options().write(true).open(&file).unwrap().set_modified(old).unwrap();
        }
        let paths = vec![dir.join("*.jsonl").to_string_lossy().into_owned()];
        let options = Options::defaults(InputFormat::Jsonl);
        let session = Session { database: 72, connection: 7201 };
        let before = super::super::tally::STAMPS_TAKEN.with(|n| n.get());
        let plan = cached_plan("f", &paths, options, RunSettings::default(), true, Some(session)).unwrap();
        let taken = super::super::tally::STAMPS_TAKEN.with(|n| n.get()) - before;
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(plan.files.len(), 3);
        assert_eq!(taken, 3, "one stamp per file");
        assert!(plan.tally.is_some(), "the probe's tally is kept");
    }

    #[test]
    fn remote_paths_are_not_cached() {
        let options = Options::defaults(InputFormat::Jsonl);
        assert!(key_of("f", &["s3://b/k.jsonl".into()], &options, &RunSettings::default(), true, S1).is_none());
        assert!(key_of("f", &["https://h/k.jsonl".into()], &options, &RunSettings::default(), true, S1).is_none());
    }
}
