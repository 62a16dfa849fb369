//! The pure parts (subtraction, ordering, changed files, missing sources)
//! and runs end to end on local folders, no DuckDB: commits, nothing to do,
//! drift, recovery of a run killed after its commit, garbage of runs that
//! never committed, bad input, limits.

use std::path::{Path, PathBuf};

use parquet::file::reader::{FileReader, SerializedFileReader};

use super::log::{part_name, staged_name, Entry, FileRecord, Log, RowCounts, ENTRY_FORMAT};
use super::select::{check_missing, format_modified, select, FileOrder, OnChanged};
use super::*;
use crate::functions::RunContext;
use crate::source::{Identity, Listed};

fn context() -> RunContext {
    RunContext { threads: 2, session: None, opener: Default::default() }
}

fn listed(path: &str, size: u64, modified_ns: i64) -> Listed {
    Listed { path: path.to_string(), identity: Identity { size, modified_ns, etag: None } }
}

fn log_of(files: &[&[(&str, u64, i64)]]) -> Log {
    let entries = files
        .iter()
        .enumerate()
        .map(|(i, files)| Entry {
            format: ENTRY_FORMAT.to_string(),
            entry: i as u64 + 1,
            run_id: format!("1-{i}"),
            committed_at: String::new(),
            source: Vec::new(),
            output_dir: "/out".to_string(),
            pass: None,
            files: files
                .iter()
                .map(|(path, size, modified_ns)| FileRecord {
                    path: path.to_string(),
                    size: *size,
                    modified_ns: *modified_ns,
                    status: "ingested".to_string(),
                    rows_written: 0,
                    error: None,
                    replaces_entry: None,
                    etag: None,
                })
                .collect(),
            outputs: Vec::new(),
            rows: RowCounts::default(),
            schema_generation: None,
            registry: None,
        })
        .collect();
    Log { entries }
}

fn taken_paths(selection: &super::select::Selection) -> Vec<&str> {
    selection.take.iter().map(|t| t.file.path.as_str()).collect()
}

#[test]
fn new_files_are_the_listing_minus_the_log_in_order() {
    let log = log_of(&[&[("/l/b", 1, 10)], &[("/l/d", 1, 40)]]);
    let listing = vec![listed("/l/e", 1, 5), listed("/l/a", 1, 50), listed("/l/b", 1, 10), listed("/l/c", 1, 20)];
    let s = select(listing.clone(), &log, OnChanged::Error, FileOrder::Path, None).unwrap();
    assert_eq!(taken_paths(&s), ["/l/a", "/l/c", "/l/e"]);
    assert_eq!((s.left, s.changed_skipped), (0, 0));
    let s = select(listing.clone(), &log, OnChanged::Error, FileOrder::Modified, None).unwrap();
    assert_eq!(taken_paths(&s), ["/l/e", "/l/c", "/l/a"]);
    // At most two: the first two in the order, the rest left.
    let s = select(listing.clone(), &log, OnChanged::Error, FileOrder::Path, Some(2)).unwrap();
    assert_eq!(taken_paths(&s), ["/l/a", "/l/c"]);
    assert_eq!(s.left, 1);
    // Equal times fall back to the path, whatever the listing's order.
    let same_time = vec![listed("/l/z", 1, 7), listed("/l/y", 1, 7), listed("/l/x", 1, 7)];
    let s = select(same_time, &Log::default(), OnChanged::Error, FileOrder::Modified, None).unwrap();
    assert_eq!(taken_paths(&s), ["/l/x", "/l/y", "/l/z"]);
    // Bytes, not characters, decide: upper case before lower case.
    let s = select(
        vec![listed("/l/b", 1, 1), listed("/l/B", 1, 1)],
        &Log::default(),
        OnChanged::Error,
        FileOrder::Path,
        None,
    )
    .unwrap();
    assert_eq!(taken_paths(&s), ["/l/B", "/l/b"]);
}

#[test]
fn a_changed_file_follows_on_changed() {
    let log = log_of(&[&[("/l/a", 10, 1_000_000_000)], &[("/l/b", 10, 2_000_000_000)]]);
    let listing = vec![listed("/l/a", 12, 3_000_000_123), listed("/l/b", 10, 2_000_000_000), listed("/l/c", 1, 1)];
    let e = select(listing.clone(), &log, OnChanged::Error, FileOrder::Path, None).unwrap_err();
    assert_eq!(
        e.message,
        "\"/l/a\" changed since entry 1 took it: then 10 bytes, modified 1970-01-01T00:00:01.000000000Z, now 12 bytes, modified 1970-01-01T00:00:03.000000123Z; pass on_changed := 'skip' to leave it, or 'reingest' to take its new content as a new file"
    );
    let s = select(listing.clone(), &log, OnChanged::Skip, FileOrder::Path, None).unwrap();
    assert_eq!(taken_paths(&s), ["/l/c"]);
    assert_eq!(s.changed_skipped, 1);
    let s = select(listing, &log, OnChanged::Reingest, FileOrder::Path, None).unwrap();
    assert_eq!(taken_paths(&s), ["/l/a", "/l/c"]);
    assert_eq!(s.take[0].replaces_entry, Some(1));
    assert_eq!(s.take[1].replaces_entry, None);
    // The latest entry naming a file holds its identity: a reingested
    // file is judged against its new content.
    let log = log_of(&[&[("/l/a", 10, 1)], &[("/l/a", 12, 3)]]);
    let s = select(vec![listed("/l/a", 12, 3)], &log, OnChanged::Error, FileOrder::Path, None).unwrap();
    assert!(s.take.is_empty());
    // Several changed: the first by path is named, with the count of the rest.
    let log = log_of(&[&[("/l/b", 1, 1), ("/l/a", 1, 1)]]);
    let e = select(vec![listed("/l/b", 2, 1), listed("/l/a", 2, 1)], &log, OnChanged::Error, FileOrder::Path, None)
        .unwrap_err();
    assert!(e.message.starts_with("\"/l/a\" changed") && e.message.contains("(1 more changed files)"), "{e}");
}

#[test]
fn a_missing_source_is_fine_only_where_files_were_taken() {
    let root = crate::test_support::scratch_dir("ingest-missing");
    let base = std::fs::canonicalize(&root).unwrap().to_string_lossy().into_owned();
    let log = log_of(&[&[(&format!("{base}/gone/a.jsonl"), 1, 1), (&format!("{base}/b.jsonl"), 1, 1)]]);
    let missing = |p: &str| vec![format!("{}/{p}", root.display())];
    check_missing(&missing("gone"), &log).unwrap();
    check_missing(&missing("gone/"), &log).unwrap();
    check_missing(&missing("b.jsonl"), &log).unwrap();
    let e = check_missing(&missing("typo"), &log).unwrap_err();
    assert!(e.message.contains("no such file or folder") && e.message.contains("typo"), "{e}");
    assert!(check_missing(&missing("gon"), &log).is_err());
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn modification_times_show_nanoseconds() {
    assert_eq!(format_modified(0), "1970-01-01T00:00:00.000000000Z");
    assert_eq!(format_modified(1_782_378_308_947_122_153), "2026-06-25T09:05:08.947122153Z");
    assert_eq!(format_modified(-1), "1969-12-31T23:59:59.999999999Z");
}

// --- runs ----------------------------------------------------------------

fn scratch(name: &str) -> PathBuf {
    crate::test_support::scratch_dir(&format!("ingest-{name}"))
}

fn write(path: &Path, lines: &[&str]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
}

fn params(pairs: &[(&'static str, ParamValue)]) -> Vec<(&'static str, ParamValue)> {
    let mut out: Vec<(&'static str, ParamValue)> = pairs.to_vec();
    out.push(("input_format", ParamValue::Str("jsonl".into())));
    out
}

fn s(v: &str) -> ParamValue {
    ParamValue::Str(v.to_string())
}

fn ingest(source: &Path, output: &Path, pairs: &[(&'static str, ParamValue)]) -> Result<Report, String> {
    let run = IngestRun::start(
        vec![source.to_string_lossy().into_owned()],
        output.to_str().unwrap(),
        &params(pairs),
        &context(),
    )
    .map_err(|e| e.message)?;
    run.run().map_err(|e| e.message)
}

fn rows_of(path: &str) -> i64 {
    let file = std::fs::File::open(path).unwrap();
    SerializedFileReader::new(file).unwrap().metadata().file_metadata().num_rows()
}

/// The output folder's names, the checkpoint left out.
fn outputs(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != DEFAULT_CHECKPOINT)
        .collect();
    names.sort();
    names
}

#[test]
fn runs_commit_new_files_once_and_then_have_nothing_to_do() {
    let root = scratch("basic");
    let (landing, out) = (root.join("landing"), root.join("out"));
    write(&landing.join("a.jsonl"), &[r#"{"id": 1, "v": 10}"#, r#"{"id": 2, "v": 20}"#]);
    write(&landing.join("sub/b.jsonl"), &[r#"{"id": 3, "v": 30}"#]);
    write(&landing.join(".c.jsonl"), &[r#"{"id": 99}"#]);
    let first = ingest(&landing, &out, &[]).unwrap();
    assert_eq!((first.entry, first.status, first.pass), (Some(1), "committed", Some("additive")));
    assert_eq!((first.files_taken, first.files_failed, first.files_left), (2, 0, 0));
    assert_eq!((first.rows.read, first.rows.written), (3, 3));
    assert_eq!(first.output_files.len(), 1);
    assert_eq!(rows_of(&first.output_files[0]), 3);
    assert_eq!(outputs(&out), [part_name(1, 0)]);
    assert_eq!(first.schema_generation, Some(1));
    // Each file's rows, though both files' rows shared one chunk.
    let entry = std::fs::read_to_string(out.join("_sanitize_checkpoint").join("000000000001.json")).unwrap();
    let entry: serde_json::Value = serde_json::from_str(&entry).unwrap();
    let rows_by_file: Vec<(String, u64)> = entry["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (f["path"].as_str().unwrap().rsplit('/').next().unwrap().to_string(), f["rows_written"].as_u64().unwrap())
        })
        .collect();
    assert_eq!(rows_by_file, [("a.jsonl".to_string(), 2), ("b.jsonl".to_string(), 1)]);
    let second = ingest(&landing, &out, &[]).unwrap();
    assert_eq!((second.entry, second.status, second.files_taken), (None, "up_to_date", 0));
    assert_eq!(second.registry, first.registry);
    // A new file: strict from the checkpoint's registry.
    write(&landing.join("d.jsonl"), &[r#"{"id": 4, "v": 40}"#]);
    let third = ingest(&landing, &out, &[]).unwrap();
    assert_eq!((third.entry, third.pass, third.files_taken, third.rows.written), (Some(2), Some("strict"), 1, 1));
    assert_eq!(third.schema_generation, Some(1));
    // Drift: strict fails over to additive, and the generation moves on.
    write(&landing.join("e.jsonl"), &[r#"{"id": 5, "v": "n/a"}"#]);
    let fourth = ingest(&landing, &out, &[]).unwrap();
    assert_eq!((fourth.entry, fourth.pass), (Some(3), Some("strict_then_additive")));
    assert_eq!(fourth.schema_generation, Some(2));
    assert!(fourth.drifts.contains("v_v2_string") || fourth.drifts.contains("v_v2"), "{}", fourth.drifts);
    assert_eq!(outputs(&out), [part_name(1, 0), part_name(2, 0), part_name(3, 0)]);
    // The log lists the three entries; the latest registry is the last one's.
    let rows = log_rows(out.to_str().unwrap()).unwrap();
    assert_eq!(rows.len(), 3);
    let (key, file, registry) = latest_registry("f", out.to_str().unwrap()).unwrap().unwrap();
    assert_eq!(key, "entry=000000000003");
    assert!(file.ends_with("_sanitize_checkpoint/000000000003.json"), "{file}");
    assert_eq!(Some(registry), fourth.registry);
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn max_files_per_run_leaves_the_rest_in_order() {
    let root = scratch("limit");
    let (landing, out) = (root.join("landing"), root.join("out"));
    for i in 0..5 {
        write(&landing.join(format!("f{i}.jsonl")), &[&format!(r#"{{"id": {i}}}"#)]);
    }
    let limit = [("max_files_per_run", ParamValue::Int(2))];
    let mut taken = Vec::new();
    loop {
        let r = ingest(&landing, &out, &limit).unwrap();
        if r.status == "up_to_date" {
            assert_eq!(r.files_left, 0);
            break;
        }
        taken.push((r.files_taken, r.files_left));
    }
    assert_eq!(taken, [(2, 3), (2, 1), (1, 0)]);
    let log = super::log::read_log(&out.join(DEFAULT_CHECKPOINT)).unwrap();
    let order: Vec<String> = log
        .entries
        .iter()
        .flat_map(|e| e.files.iter().map(|f| Path::new(&f.path).file_name().unwrap().to_string_lossy().into_owned()))
        .collect();
    assert_eq!(order, ["f0.jsonl", "f1.jsonl", "f2.jsonl", "f3.jsonl", "f4.jsonl"]);
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn a_run_killed_after_its_commit_is_completed_and_garbage_goes() {
    let root = scratch("recover");
    let (landing, out) = (root.join("landing"), root.join("out"));
    write(&landing.join("a.jsonl"), &[r#"{"id": 1}"#]);
    let first = ingest(&landing, &out, &[]).unwrap();
    // As if killed between the commit and the rename: the part is staged.
    let log = super::log::read_log(&out.join(DEFAULT_CHECKPOINT)).unwrap();
    let run = log.entries[0].run_id.clone();
    std::fs::rename(&first.output_files[0], out.join(staged_name(&part_name(1, 0), &run))).unwrap();
    // A run that lost entry 1, one killed before committing entry 2 (its
    // process gone), and the temporary entry of the latter.
    let reaped = {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    };
    let dead_run = format!("{reaped}-5");
    let loser = staged_name(&part_name(1, 0), "999999-1");
    let killed = staged_name(&part_name(2, 0), &dead_run);
    std::fs::write(out.join(&loser), b"x").unwrap();
    std::fs::write(out.join(&killed), b"x").unwrap();
    let temp = out.join(DEFAULT_CHECKPOINT).join(format!(".000000000002.json.{dead_run}.tmp"));
    std::fs::write(&temp, b"{").unwrap();
    // The next run completes entry 1 and removes the rest before it starts:
    // with nothing new, it commits nothing.
    let second = ingest(&landing, &out, &[]).unwrap();
    assert_eq!(second.status, "up_to_date");
    assert_eq!(outputs(&out), [part_name(1, 0)]);
    assert!(!temp.exists());
    assert_eq!(rows_of(&first.output_files[0]), 1);
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn stop_names_the_bad_record_and_commits_nothing() {
    let root = scratch("stop");
    let (landing, out) = (root.join("landing"), root.join("out"));
    write(&landing.join("a.jsonl"), &[r#"{"id": 1}"#]);
    write(&landing.join("b.jsonl"), &[r#"{"id": 2}"#, r#"{"id": "#]);
    let e = ingest(&landing, &out, &[("on_error", s("stop"))]).unwrap_err();
    assert!(e.starts_with("sanitize_ingest: ") && e.contains("b.jsonl") && e.contains("line 2"), "{e}");
    assert!(e.contains("byte") && e.ends_with("to keep them as NULLs. Nothing was committed"), "{e}");
    assert!(outputs(&out).is_empty(), "{:?}", outputs(&out));
    assert!(!out.join(DEFAULT_CHECKPOINT).join("000000000001.json").exists());
    // Read past: the bad line is skipped, both files are taken.
    let r = ingest(&landing, &out, &[("on_error", s("skip_row"))]).unwrap();
    assert_eq!((r.files_taken, r.files_failed, r.rows.read, r.rows.written, r.rows.skipped), (2, 0, 3, 2, 1));
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn an_unreadable_file_is_recorded_failed_and_never_blocks_the_others() {
    let root = scratch("failed");
    let (landing, out) = (root.join("landing"), root.join("out"));
    write(&landing.join("a.jsonl"), &[r#"{"id": 1}"#]);
    // Without on_error, a damaged compressed stream, and a file whose
    // records are all bad, fail their read (docs/errors.md).
    std::fs::write(landing.join("b.jsonl.gz"), b"\x1f\x8b\x08\x00garbage").unwrap();
    write(&landing.join("c.jsonl"), &[r#"{"id": 3}"#]);
    write(&landing.join("d.jsonl"), &["not json", "nor this"]);
    write(&landing.join("e.jsonl"), &[r#"{"id": 5}"#]);
    let r = ingest(&landing, &out, &[]).unwrap();
    assert_eq!((r.status, r.files_taken, r.files_failed, r.rows.written), ("committed", 5, 2, 3));
    let failed: Vec<&str> = r.failed_files.iter().map(|(p, _)| p.rsplit('/').next().unwrap()).collect();
    assert_eq!(failed, ["b.jsonl.gz", "d.jsonl"]);
    assert!(r.failed_files.iter().all(|(_, e)| !e.is_empty()));
    // One part per readable file, read one by one.
    assert_eq!(outputs(&out), [part_name(1, 0), part_name(1, 1), part_name(1, 2)]);
    // The failed files are taken: the next run has nothing to do.
    assert_eq!(ingest(&landing, &out, &[]).unwrap().status, "up_to_date");
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn changed_files_error_skip_or_come_again() {
    let root = scratch("changed");
    let (landing, out) = (root.join("landing"), root.join("out"));
    let a = landing.join("a.jsonl");
    write(&a, &[r#"{"id": 1}"#]);
    ingest(&landing, &out, &[]).unwrap();
    write(&a, &[r#"{"id": 1}"#, r#"{"id": 2}"#]);
    let e = ingest(&landing, &out, &[]).unwrap_err();
    assert!(e.contains("a.jsonl\" changed since entry 1 took it: then 10 bytes") && e.contains("now 20 bytes"), "{e}");
    let skipped = ingest(&landing, &out, &[("on_changed", s("skip"))]).unwrap();
    assert_eq!((skipped.status, skipped.files_changed_skipped), ("up_to_date", 1));
    let again = ingest(&landing, &out, &[("on_changed", s("reingest"))]).unwrap();
    assert_eq!((again.entry, again.files_taken, again.rows.written), (Some(2), 1, 2));
    // Taken again: the new content is the known one now.
    assert_eq!(ingest(&landing, &out, &[]).unwrap().status, "up_to_date");
    let log = super::log::read_log(&out.join(DEFAULT_CHECKPOINT)).unwrap();
    assert_eq!(log.entries[1].files[0].replaces_entry, Some(1));
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn deleted_sources_are_never_a_problem_but_a_typo_is() {
    let root = scratch("deleted");
    let (landing, out) = (root.join("landing"), root.join("out"));
    write(&landing.join("a.jsonl"), &[r#"{"id": 1}"#]);
    ingest(&landing, &out, &[]).unwrap();
    std::fs::remove_dir_all(&landing).unwrap();
    assert_eq!(ingest(&landing, &out, &[]).unwrap().status, "up_to_date");
    let e = ingest(&root.join("landnig"), &out, &[]).unwrap_err();
    assert!(e.contains("no such file or folder"), "{e}");
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn parameters_are_checked_at_bind() {
    let root = scratch("params");
    let bad = |pairs: &[(&'static str, ParamValue)]| ingest(&root, &root.join("out"), pairs).unwrap_err();
    assert!(bad(&[("file_order", s("size"))])
        .contains("\"file_order\" parameter must be one of 'path', 'modified', not 'size'"));
    assert!(bad(&[("order", s("size"))]).contains("\"order\" parameter must be one of 'path', 'modified'"));
    assert!(bad(&[("order", s("path")), ("file_order", s("path"))]).contains("pass one of them"));
    assert!(bad(&[("on_changed", s("x"))]).contains("'error', 'skip', 'reingest'"));
    assert!(bad(&[("max_files_per_run", ParamValue::Int(0))]).contains("must be a positive integer"));
    assert!(bad(&[("compression", s("lz4"))]).contains("input_compression"));
    assert!(bad(&[("input_mode", s("directory"))]).contains("does not apply"));
    assert!(bad(&[("checkpoint", s("s3://b/cp/"))]).contains("local folders only"));
    let e = IngestRun::start(vec!["x".into()], "out", &[], &context()).err().unwrap().message;
    assert!(e.contains("\"input_format\" parameter is required"), "{e}");
    // Strict needs a registry to start from.
    write(&root.join("landing/a.jsonl"), &[r#"{"id": 1}"#]);
    let e = ingest(&root.join("landing"), &root.join("out"), &[("schema_mode", s("strict"))]).unwrap_err();
    assert!(e.contains("'strict' needs a registry"), "{e}");
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn a_source_above_the_output_never_takes_the_output() {
    let root = scratch("above");
    let lake = root.join("lake");
    std::fs::create_dir_all(lake.join("raw")).unwrap();
    {
        use arrow::array::{ArrayRef, Int64Array};
        let ids: ArrayRef = std::sync::Arc::new(Int64Array::from(vec![1]));
        let batch = arrow::array::RecordBatch::try_from_iter([("id", ids)]).unwrap();
        let file = std::fs::File::create(lake.join("raw/a.parquet")).unwrap();
        let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
    }
    // Parquet from the whole lake into a folder inside it.
    let parquet = [("input_format", s("parquet"))];
    let first = ingest(&lake, &lake.join("silver"), &parquet).unwrap();
    assert_eq!((first.files_taken, first.rows.written), (1, 1));
    assert_eq!(ingest(&lake, &lake.join("silver"), &parquet).unwrap().status, "up_to_date");
    std::fs::remove_dir_all(root).unwrap();
}
