//! The partition pipeline end to end on a local lake, no DuckDB: warm-up,
//! strict first with the additive fallback, the carried registry, the
//! files' schemas, reprocessing, failures and the parameters' rules.

use std::path::{Path, PathBuf};

use parquet::file::reader::{FileReader, SerializedFileReader};

use super::{PipelineRun, Report};
use crate::functions::RunContext;
use crate::options::{InputFormat, Options, ParamValue};

fn context() -> RunContext {
    RunContext { threads: 2, session: None, opener: Default::default() }
}

fn scratch(name: &str) -> PathBuf {
    crate::test_support::scratch_dir(&format!("pipeline-{name}"))
}

/// Ten daily partitions, 2026-06-01 to -10, five records each; day 5 adds
/// a field and gives `amount` a string.
fn lake(root: &Path) {
    for day in 1..=10 {
        let dir = root.join(format!("year=2026/month=06/date=2026-06-{day:02}"));
        std::fs::create_dir_all(&dir).unwrap();
        let mut text = String::new();
        for i in 0..5 {
            let amount = if day == 5 && i == 2 { "\"n/a\"".to_string() } else { format!("{}.5", i) };
            let extra = if day == 5 && i == 3 { r#", "extra": true"# } else { "" };
            text.push_str(&format!("{{\"id\": {}, \"amount\": {amount}{extra}}}\n", day * 100 + i));
        }
        std::fs::write(dir.join("events.jsonl"), text).unwrap();
    }
}

fn params(pairs: &[(&'static str, &str)]) -> Vec<(&'static str, ParamValue)> {
    let mut out: Vec<(&'static str, ParamValue)> = vec![("input_format", ParamValue::Str("jsonl".into()))];
    for (name, value) in pairs {
        let v = match *value {
            "true" => ParamValue::Bool(true),
            "false" => ParamValue::Bool(false),
            v => ParamValue::Str(v.to_string()),
        };
        out.push((name, v));
    }
    out
}

fn run(source: &Path, output: &Path, params: &[(&'static str, ParamValue)]) -> Result<Vec<Report>, String> {
    let mut run = PipelineRun::start(source.to_str().unwrap(), output.to_str().unwrap(), params, &context())
        .map_err(|e| e.message)?;
    let mut reports = Vec::new();
    while let Some(r) = run.next_report().map_err(|e| e.message)? {
        reports.push(r);
    }
    Ok(reports)
}

fn columns(file: &str) -> Vec<String> {
    let reader = SerializedFileReader::new(std::fs::File::open(file).unwrap()).unwrap();
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    schema.root_schema().get_fields().iter().map(|f| f.name().to_string()).collect()
}

fn footer_registry(file: &str) -> String {
    let reader = SerializedFileReader::new(std::fs::File::open(file).unwrap()).unwrap();
    let kv = reader.metadata().file_metadata().key_value_metadata().cloned().unwrap();
    kv.into_iter().find(|e| e.key == crate::registry::PARQUET_REGISTRY_KEY).and_then(|e| e.value).unwrap()
}

#[test]
fn a_drift_in_partition_5_of_10_is_redone_additively_and_the_new_registry_carried() {
    let root = scratch("drift");
    let (source, silver) = (root.join("bronze"), root.join("silver"));
    lake(&source);
    let reports = run(
        &source,
        &silver,
        &params(&[
            ("start_date", "2026-06-01"),
            ("end_date", "2026-06-10"),
            ("warm_up_start_date", "2026-06-01"),
            ("warm_up_end_date", "2026-06-04"),
        ]),
    )
    .unwrap();
    assert_eq!(reports.len(), 11);
    let warm = &reports[0];
    assert_eq!((warm.phase, warm.status, warm.rows_read, warm.rows_written), ("warm_up", "warmed", 20, 0));
    assert_eq!(warm.partition_key, "year=2026/month=06/date=2026-06-01..year=2026/month=06/date=2026-06-04");

    // The warm-up's registry is a probe of its partitions read together.
    let files: Vec<String> = (1..=4)
        .map(|d| {
            source.join(format!("year=2026/month=06/date=2026-06-{d:02}/events.jsonl")).to_string_lossy().into_owned()
        })
        .collect();
    let options =
        Options::parse("t", Some(InputFormat::Jsonl), &[("hive_partitioning", ParamValue::Bool(false))]).unwrap();
    let settings = crate::scan::RunSettings { threads: 2, ..Default::default() };
    let probe = crate::scan::plan_with("t", &files, options, settings, false).unwrap();
    assert_eq!(warm.registry.as_deref(), Some(probe.registry_json.as_str()));

    let passes: Vec<_> = reports[1..].iter().map(|r| (r.status, r.pass.unwrap_or(""))).collect();
    let mut expected = vec![("written", "strict"); 10];
    expected[4] = ("written", "strict_then_additive");
    assert_eq!(passes, expected);
    assert!(reports[1..].iter().all(|r| r.rows_read == 5 && r.rows_written == 5 && r.rows_skipped == 0));
    assert_eq!(reports[4].schema_generation, Some(1));
    assert_eq!(reports[5].schema_generation, Some(2));
    assert!(reports[5].drifts.as_deref().unwrap().contains("extra"));
    assert_eq!(reports[6].drifts.as_deref(), Some("[]"));

    let path = |r: &Report| r.output_path.clone().unwrap();
    let before = columns(&path(&reports[1]));
    assert!(!before.contains(&"extra".to_string()), "{before:?}");
    for r in &reports[1..5] {
        assert_eq!(columns(&path(r)), before);
    }
    let after = columns(&path(&reports[5]));
    assert!(after.contains(&"extra".to_string()) && after.contains(&"amount_v2_string".to_string()), "{after:?}");
    for r in &reports[5..] {
        assert_eq!(columns(&path(r)), after);
        assert_eq!(footer_registry(&path(r)), r.registry.clone().unwrap());
        assert!(r.output_bytes.unwrap() > 0);
    }

    // Reprocessing a past date with the latest registry: one strict pass,
    // the latest columns, the file replaced.
    let latest = footer_registry(&path(&reports[10]));
    let mut again = params(&[("start_date", "2026-06-03"), ("end_date", "2026-06-03")]);
    again.push(("registry", ParamValue::Str(latest.clone())));
    let redo = run(&source, &silver, &again).unwrap();
    assert_eq!((redo[0].status, redo[0].pass), ("written", Some("strict")));
    assert_eq!(columns(&path(&redo[0])), after);
    assert_eq!(footer_registry(&path(&redo[0])), latest);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn under_stop_a_bad_record_fails_naming_the_partition_and_what_is_complete() {
    let root = scratch("stop");
    let (source, silver) = (root.join("bronze"), root.join("silver"));
    lake(&source);
    let bad = source.join("year=2026/month=06/date=2026-06-03/events.jsonl");
    std::fs::write(&bad, "{\"id\": 1}\n{not json\n").unwrap();
    let err = run(
        &source,
        &silver,
        &params(&[("start_date", "2026-06-01"), ("end_date", "2026-06-05"), ("on_error", "stop")]),
    )
    .unwrap_err();
    assert!(err.starts_with("sanitize_pipeline: partition year=2026/month=06/date=2026-06-03 failed:"), "{err}");
    assert!(err.contains("complete: year=2026/month=06/date=2026-06-01, year=2026/month=06/date=2026-06-02."), "{err}");
    assert!(err.contains("line 2"), "{err}");
    assert!(silver.join("year=2026/month=06/date=2026-06-02/part_20260602.parquet").exists());
    assert!(!silver.join("year=2026/month=06/date=2026-06-03").join("part_20260603.parquet").exists());

    // skip_row reads past the bad line instead.
    let reports = run(
        &source,
        &silver,
        &params(&[("start_date", "2026-06-03"), ("end_date", "2026-06-03"), ("on_error", "skip_row")]),
    )
    .unwrap();
    assert_eq!(
        (reports[0].status, reports[0].rows_read, reports[0].rows_written, reports[0].rows_skipped),
        ("written", 2, 1, 1)
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_partition_that_cannot_be_read_is_failed_when_on_error_reads_past_bad_input() {
    let root = scratch("failed");
    let (source, silver) = (root.join("bronze"), root.join("silver"));
    lake(&source);
    let given = params(&[("start_date", "2026-06-01"), ("end_date", "2026-06-03"), ("on_error", "skip_row")]);
    let mut run = PipelineRun::start(source.to_str().unwrap(), silver.to_str().unwrap(), &given, &context()).unwrap();
    // Gone between discovery and the read (another job moved it).
    std::fs::remove_file(source.join("year=2026/month=06/date=2026-06-02/events.jsonl")).unwrap();
    let mut reports = Vec::new();
    while let Some(r) = run.next_report().unwrap() {
        reports.push(r);
    }
    let statuses: Vec<_> = reports.iter().map(|r| r.status).collect();
    assert_eq!(statuses, ["written", "failed", "written"]);
    assert!(reports[1].error.as_deref().unwrap().contains("events.jsonl"), "{:?}", reports[1].error);
    assert_eq!(reports[1].registry, reports[0].registry);
    assert!(!silver.join("year=2026/month=06/date=2026-06-02").join("part_20260602.parquet").exists());
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn an_output_that_cannot_be_written_fails_the_run_whatever_on_error_says() {
    let root = scratch("unwritable");
    let source = root.join("bronze");
    lake(&source);
    // A file where the output directory should be.
    let silver = root.join("silver");
    std::fs::write(&silver, "not a directory").unwrap();
    let err = run(
        &source,
        &silver,
        &params(&[("start_date", "2026-06-01"), ("end_date", "2026-06-02"), ("on_error", "skip_row")]),
    )
    .unwrap_err();
    assert!(
        err.starts_with(
            "sanitize_pipeline: partition year=2026/month=06/date=2026-06-01 failed: cannot create the temporary file"
        ) && err.contains("Not a directory"),
        "{err}"
    );
    assert!(err.contains("complete: none."), "{err}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn overwrite_false_keeps_a_written_partition_and_carries_its_registry() {
    let root = scratch("resume");
    let (source, silver) = (root.join("bronze"), root.join("silver"));
    lake(&source);
    let first = run(&source, &silver, &params(&[("start_date", "2026-06-04"), ("end_date", "2026-06-05")])).unwrap();
    let file = first[1].output_path.clone().unwrap();
    let modified = std::fs::metadata(&file).unwrap().modified().unwrap();
    let resumed = run(
        &source,
        &silver,
        &params(&[("start_date", "2026-06-05"), ("end_date", "2026-06-06"), ("overwrite", "false")]),
    )
    .unwrap();
    assert_eq!(resumed[0].status, "skipped_exists");
    assert_eq!(resumed[0].registry, first[1].registry);
    assert_eq!((resumed[1].status, resumed[1].pass), ("written", Some("strict")));
    assert_eq!(std::fs::metadata(&file).unwrap().modified().unwrap(), modified);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_skipped_partition_never_carries_an_older_registry_than_the_runs() {
    let root = scratch("older");
    let (source, silver) = (root.join("bronze"), root.join("silver"));
    lake(&source);
    // Day 4 written alone, from scratch: the first shape.
    run(&source, &silver, &params(&[("start_date", "2026-06-04"), ("end_date", "2026-06-04")])).unwrap();
    // A warm-up over days 1 to 5 learns day 5's drift in the same
    // generation; the existing day 4, no newer, must not replace it.
    let reports = run(
        &source,
        &silver,
        &params(&[
            ("start_date", "2026-06-04"),
            ("end_date", "2026-06-05"),
            ("overwrite", "false"),
            ("warm_up_start_date", "2026-06-01"),
            ("warm_up_end_date", "2026-06-05"),
        ]),
    )
    .unwrap();
    let got: Vec<_> = reports.iter().map(|r| (r.status, r.pass)).collect();
    assert_eq!(got, [("warmed", Some("additive")), ("skipped_exists", None), ("written", Some("strict"))]);
    assert_eq!(reports[1].registry, reports[0].registry, "the warm-up's registry is kept");
    assert!(reports[0].registry.as_deref().unwrap().contains("extra"));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn missing_and_empty_partitions_are_skipped_and_a_directory_partition_reads_every_file() {
    let root = scratch("skips");
    let (source, silver) = (root.join("bronze"), root.join("silver"));
    let day = |d: u32| source.join(format!("year=2026/month=06/date=2026-06-{d:02}"));
    std::fs::create_dir_all(day(1)).unwrap();
    std::fs::write(day(1).join("a.jsonl"), "{\"x\": 1}\n").unwrap();
    std::fs::write(day(1).join("b.jsonl"), "{\"x\": 2}\n{\"x\": 3}\n").unwrap();
    std::fs::create_dir_all(day(2)).unwrap();
    std::fs::write(day(2).join("notes.txt"), "not data").unwrap();
    let reports = run(
        &source,
        &silver,
        &params(&[("start_date", "2026-06-01"), ("end_date", "2026-06-03"), ("input_mode", "directory")]),
    )
    .unwrap();
    let got: Vec<_> = reports.iter().map(|r| (r.status, r.rows_written)).collect();
    assert_eq!(got, [("written", 3), ("skipped_empty", 0), ("skipped_missing", 0)]);
    // single_file mode refuses a partition of two files, naming it.
    let err = run(&source, &silver, &params(&[("start_date", "2026-06-01"), ("end_date", "2026-06-01")])).unwrap_err();
    assert!(err.starts_with("sanitize_pipeline: partition year=2026/month=06/date=2026-06-01 holds 2"), "{err}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn parameter_errors_name_the_parameter() {
    let root = scratch("params");
    let cases: &[(&[(&'static str, &str)], &str)] = &[
        (
            &[("start_date", "2026-06-01"), ("end_date", "2026-06-02"), ("warm_up_start_date", "2026-05-01")],
            "\"warm_up_end_date\" parameter is required",
        ),
        (
            &[("start_date", "2026-06-01"), ("end_date", "2026-06-02"), ("warm_up_start_hour", "3")],
            "\"warm_up_start_hour\" parameter needs both",
        ),
        (
            &[
                ("start_date", "2026-06-01"),
                ("end_date", "2026-06-02"),
                ("warm_up_start_date", "2026-05-02"),
                ("warm_up_end_date", "2026-05-01"),
            ],
            "\"warm_up_end_date\" parameter is before",
        ),
        (
            &[
                ("start_date", "2026-06-01"),
                ("end_date", "2026-06-02"),
                ("warm_up_start_date", "2026-05-01"),
                ("warm_up_end_date", "2026-05-02"),
                ("warm_up_start_hour", "1"),
            ],
            "\"warm_up_start_hour\" parameter is valid only with granularity",
        ),
        (
            &[("start_date", "2026-06-01"), ("end_date", "2026-06-02"), ("schema_mode", "strict")],
            "\"schema_mode\" parameter 'strict' needs a registry",
        ),
        (
            &[("start_date", "2026-06-01"), ("end_date", "2026-06-02"), ("compression", "lzo")],
            "\"compression\" parameter must be 'zstd'",
        ),
        (
            &[("start_date", "2026-06-02"), ("end_date", "2026-06-01")],
            "sanitize_pipeline: the \"end_date\" parameter is before start_date",
        ),
        (
            &[
                ("start_date", "2026-06-01"),
                ("end_date", "2026-06-01"),
                ("partition_template", "../../x/d={yyyy}{mm}{dd}"),
            ],
            "sanitize_pipeline: the \"partition_template\" parameter must stay below the prefixes",
        ),
    ];
    for (given, expected) in cases {
        let err = run(&root, &root.join("out"), &params(given)).unwrap_err();
        assert!(err.contains(expected), "{given:?}: {err}");
        assert!(err.starts_with("sanitize_pipeline: "), "{err}");
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn writing_a_partition_removes_the_temporary_files_a_killed_run_left_there_and_nothing_else() {
    let root = scratch("stale-temps");
    let (source, silver) = (root.join("bronze"), root.join("silver"));
    lake(&source);
    let dir = silver.join("year=2026/month=06/date=2026-06-01");
    std::fs::create_dir_all(&dir).unwrap();
    // A pid that is certainly gone: a child that has been waited for.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let stale = format!(".part_20260601.parquet.{dead}-1700000000000000000-0.tmp");
    let live = format!(".part_20260601.parquet.{}-1700000000000000000-9.tmp", std::process::id());
    let others = ["notes.txt", ".part_20260601.parquet.tmp", "keep.parquet.1-2-3.tmp"];
    for name in [stale.as_str(), live.as_str()].iter().chain(&others) {
        std::fs::write(dir.join(name), b"partial").unwrap();
    }
    let reports = run(&source, &silver, &params(&[("start_date", "2026-06-01"), ("end_date", "2026-06-01")])).unwrap();
    assert_eq!(reports[0].status, "written");
    let mut left: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    left.sort();
    let mut expected: Vec<String> = others.iter().map(|s| s.to_string()).collect();
    expected.extend([live, "part_20260601.parquet".to_string()]);
    expected.sort();
    if std::path::Path::new("/proc/self").exists() {
        assert_eq!(left, expected, "only the dead process's temporary file goes");
    } else {
        assert!(left.contains(&stale), "without /proc nothing is known dead, so nothing goes");
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_report_row_shows_no_credentials_or_signatures() {
    let report = Report {
        phase: "partition",
        partition_key: "d=20260601".into(),
        status: "failed",
        output_path: Some("s3://reader:s3cret@lake/silver/d=20260601/part_20260601.parquet".into()),
        error: Some("cannot download \"x\" (HTTP): error sending request for url (https://h/x?sig=s3cret)".into()),
        ..Report::default()
    };
    let cells = format!("{:?}", report.cells());
    assert!(!cells.contains("s3cret"), "{cells}");
    assert!(cells.contains("s3://lake/silver/d=20260601/part_20260601.parquet"), "{cells}");
}

#[test]
fn the_report_counts_the_rows_nulled_and_the_rows_rescued() {
    let root = scratch("nulled-rescued");
    let (source, silver) = (root.join("bronze"), root.join("silver"));
    lake(&source);
    // One bad line among six: written as a NULL row (the default on_error).
    let day3 = source.join("year=2026/month=06/date=2026-06-03/events.jsonl");
    let mut text = std::fs::read_to_string(&day3).unwrap();
    text.push_str("{not json\n");
    std::fs::write(&day3, text).unwrap();
    // Strict against days 1 to 4: day 5's "n/a" amount and new field are
    // kept in the rescue column, one row each.
    let reports = run(
        &source,
        &silver,
        &params(&[
            ("start_date", "2026-06-03"),
            ("end_date", "2026-06-05"),
            ("warm_up_start_date", "2026-06-01"),
            ("warm_up_end_date", "2026-06-04"),
            ("schema_mode", "strict"),
            ("rescue_column", "_rescued"),
        ]),
    )
    .unwrap();
    let got: Vec<_> =
        reports.iter().map(|r| (r.status, r.rows_read, r.rows_written, r.rows_nulled, r.rows_rescued)).collect();
    assert_eq!(
        got,
        [("warmed", 21, 0, 1, 0), ("written", 6, 6, 1, 1), ("written", 5, 5, 0, 0), ("written", 5, 5, 0, 2)]
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_plan_none_of_whose_partitions_exists_fails_naming_the_lake_layout() {
    let root = scratch("no-partition");
    let (source, silver) = (root.join("bronze"), root.join("silver"));
    for day in ["2026-06-01", "2026-06-02"] {
        std::fs::create_dir_all(source.join(format!("dt={day}"))).unwrap();
        std::fs::write(source.join(format!("dt={day}/events.jsonl")), "{\"id\": 1}\n").unwrap();
    }
    let dates = [("start_date", "2026-06-01"), ("end_date", "2026-06-03")];
    let err = run(&source, &silver, &params(&dates)).unwrap_err();
    assert!(err.starts_with("sanitize_pipeline: no partition of the plan exists (3 planned; the first is \""), "{err}");
    assert!(
        err.ends_with(
            "the prefix holds the key=value directories dt=2026-06-01, dt=2026-06-02, which partition_template 'year={yyyy}/month={mm}/date={yyyy}-{mm}-{dd}' does not describe: pass a partition_template that does, such as partition_template := 'dt={yyyy}-{mm}-{dd}'"
        ),
        "{err}"
    );
    assert!(!silver.exists(), "nothing written");
    // The template it names reads them.
    let mut given = params(&dates);
    given.push(("partition_template", ParamValue::Str("dt={yyyy}-{mm}-{dd}".into())));
    let statuses: Vec<_> = run(&source, &silver, &given).unwrap().iter().map(|r| r.status).collect();
    assert_eq!(statuses, ["written", "written", "skipped_missing"]);
    // A prefix that holds nothing at all.
    let err = run(&root.join("nowhere"), &silver, &params(&dates)).unwrap_err();
    assert!(
        err.starts_with("sanitize_pipeline: no partition of the plan exists (3 planned;") && err.ends_with(')'),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_warm_up_with_data_keeps_a_run_whose_partitions_are_all_missing() {
    let root = scratch("warm-only");
    let (source, silver) = (root.join("bronze"), root.join("silver"));
    lake(&source);
    let reports = run(
        &source,
        &silver,
        &params(&[
            ("start_date", "2026-07-01"),
            ("end_date", "2026-07-01"),
            ("warm_up_start_date", "2026-06-01"),
            ("warm_up_end_date", "2026-06-02"),
        ]),
    )
    .unwrap();
    let statuses: Vec<_> = reports.iter().map(|r| r.status).collect();
    assert_eq!(statuses, ["warmed", "skipped_missing"]);
    // A warm-up of nothing does not.
    let err = run(
        &source,
        &silver,
        &params(&[
            ("start_date", "2026-07-01"),
            ("end_date", "2026-07-01"),
            ("warm_up_start_date", "2026-07-02"),
            ("warm_up_end_date", "2026-07-03"),
        ]),
    )
    .unwrap_err();
    assert!(err.contains("none of them between start_date and end_date"), "{err}");
    let _ = std::fs::remove_dir_all(&root);
}
