//! Unit tests of the checkpoint log (log.rs): the entry format, numbering,
//! racing commits, garbage left by killed runs, and which files a run takes.

use super::*;

fn entry(n: u64, run: &str, dir: &Path) -> Entry {
    Entry {
        format: ENTRY_FORMAT.to_string(),
        entry: n,
        run_id: run.to_string(),
        committed_at: "2026-06-25T09:05:08.947122Z".to_string(),
        source: vec!["landing/".to_string()],
        output_dir: dir.to_string_lossy().into_owned(),
        pass: Some("additive".to_string()),
        files: vec![FileRecord {
            path: "/landing/a.jsonl".to_string(),
            size: 10,
            modified_ns: 1_782_378_308_947_122_153,
            status: "ingested".to_string(),
            rows_written: 2,
            error: None,
            replaces_entry: None,
            etag: None,
        }],
        outputs: vec![OutputRecord { name: part_name(n, 0), rows: 2, bytes: 100 }],
        rows: RowCounts { read: 2, written: 2, ..RowCounts::default() },
        schema_generation: Some(1),
        registry: Some("{\"schema_generation\":1}".to_string()),
    }
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[test]
fn entry_names_are_numbered_and_read_back() {
    assert_eq!(entry_file_name(1), "000000000001.json");
    assert_eq!(entry_file_name(123_456_789_012), "123456789012.json");
    assert_eq!(entry_number("000000000001.json"), Some(1));
    assert_eq!(entry_number("000000000042.json"), Some(42));
    for other in [
        "000000000000.json",
        "00000000001.json",
        "0000000000001.json",
        "00000000000a.json",
        "000000000001.json.tmp",
        ".000000000001.json.1-2.tmp",
        "000000000001.JSON",
    ] {
        assert_eq!(entry_number(other), None, "{other}");
    }
    // Text order is number order.
    assert!(entry_file_name(9) < entry_file_name(10));
}

#[test]
fn part_staged_and_temporary_names_read_back() {
    let part = part_name(7, 3);
    assert_eq!(part, "part-000000000007-00003.parquet");
    assert_eq!(part_entry(&part), Some(7));
    assert_eq!(part_entry("part-7-3.parquet"), None);
    assert_eq!(part_entry("events.parquet"), None);
    let run = run_id(4242, 1_700_000_000_000_000_000);
    assert_eq!(run, "4242-1700000000000000000");
    let staged = staged_name(&part, &run);
    assert_eq!(staged, ".part-000000000007-00003.parquet.4242-1700000000000000000.staged");
    // Hidden and never a `*.parquet` name.
    assert!(staged.starts_with('.') && !staged.ends_with(".parquet"));
    assert_eq!(parse_staged(&staged), Some((part.as_str(), run.as_str())));
    for other in [part.as_str(), ".x.parquet.1-2.staged", ".part-000000000007-00003.parquet.x-2.staged"] {
        assert_eq!(parse_staged(other), None, "{other}");
    }
    let temp = temp_entry_name(5, &run);
    assert_eq!(temp, ".000000000005.json.4242-1700000000000000000.tmp");
    assert_eq!(parse_temp_entry(&temp), Some((5, run.as_str())));
    assert_eq!(parse_temp_entry(".000000000005.json.tmp"), None);
}

#[test]
fn gaps_are_found() {
    assert_eq!(first_gap(&[]), None);
    assert_eq!(first_gap(&[1, 2, 3]), None);
    assert_eq!(first_gap(&[2, 3]), Some(1));
    assert_eq!(first_gap(&[1, 2, 4]), Some(3));
}

#[test]
fn an_entry_round_trips_and_is_checked() {
    let dir = crate::test_support::scratch_dir("ingest-entry");
    let e = entry(3, "1-2", &dir);
    let text = serde_json::to_string_pretty(&e).unwrap();
    let path = dir.join(entry_file_name(3));
    assert_eq!(parse_entry(&path, &text, 3).unwrap(), e);
    let err = parse_entry(&path, &text, 4).unwrap_err();
    assert!(err.message.contains("it says it is entry 3"), "{err}");
    let other = text.replace(ENTRY_FORMAT, "schema_sanitizer.ingest.v9");
    let err = parse_entry(&path, &other, 3).unwrap_err();
    assert!(err.message.contains("its format is 'schema_sanitizer.ingest.v9'"), "{err}");
    let err = parse_entry(&path, "{", 3).unwrap_err();
    assert!(err.message.contains("is not readable"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_number_is_committed_once_and_leaves_no_temporary_file() {
    let dir = crate::test_support::scratch_dir("ingest-commit");
    let checkpoint = dir.join("cp");
    let first = entry(1, "1-1", &dir);
    let path = commit(&checkpoint, &first, &|| Ok(())).unwrap();
    assert_eq!(path, checkpoint.join("000000000001.json"));
    // A second run with the same number loses, and its text never lands.
    let second = entry(1, "2-2", &dir);
    assert!(matches!(commit(&checkpoint, &second, &|| Ok(())), Err(CommitError::Taken)));
    assert_eq!(names_in(&checkpoint), ["000000000001.json"]);
    let log = read_log(&checkpoint).unwrap();
    assert_eq!(log.entries, [first]);
    assert_eq!(log.last_number(), 1);
    // A hook that fails before the link commits nothing.
    let third = entry(2, "3-3", &dir);
    let failing = || Err(SanitizeError::io("stop"));
    assert!(matches!(commit(&checkpoint, &third, &failing), Err(CommitError::Io(_))));
    assert_eq!(names_in(&checkpoint), ["000000000001.json"]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn racing_commits_of_one_number_have_one_winner() {
    let dir = crate::test_support::scratch_dir("ingest-race");
    let checkpoint = dir.join("cp");
    for round in 1..=20u64 {
        let winners: usize = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|i| {
                    let e = entry(round, &format!("{i}-{round}"), &dir);
                    let checkpoint = &checkpoint;
                    s.spawn(move || commit(checkpoint, &e, &|| Ok(())).is_ok())
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).filter(|won| *won).count()
        });
        assert_eq!(winners, 1, "round {round}");
    }
    let log = read_log(&checkpoint).unwrap();
    assert_eq!(log.entries.len(), 20);
    assert!(names_in(&checkpoint).iter().all(|n| entry_number(n).is_some()));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_missing_entry_is_an_error_naming_it() {
    let dir = crate::test_support::scratch_dir("ingest-gap");
    for n in [1, 2, 3] {
        commit(&dir, &entry(n, &format!("1-{n}"), &dir), &|| Ok(())).unwrap();
    }
    std::fs::remove_file(dir.join(entry_file_name(2))).unwrap();
    let e = read_log(&dir).unwrap_err();
    assert!(e.message.contains("has no entry 000000000002.json (it has 2 of entries 1 to 3)"), "{e}");
    // No folder: no entry yet.
    assert!(read_log(&dir.join("none")).unwrap().entries.is_empty());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn garbage_is_what_no_live_run_can_commit() {
    let committed = |n: u64| (n <= 3).then(|| format!("10-{n}"));
    let alive = |pid: u32| match pid {
        10..=19 => Some(true),
        20..=29 => Some(false),
        _ => None,
    };
    // Committed numbers: only the winner's files stay.
    assert!(!is_garbage(2, "10-2", committed, alive));
    assert!(is_garbage(2, "11-5", committed, alive));
    assert!(is_garbage(2, "25-5", committed, alive));
    // A number not committed yet: a live run's stay, a dead one's go, an
    // unknown one's stay.
    assert!(!is_garbage(4, "11-5", committed, alive));
    assert!(is_garbage(4, "21-5", committed, alive));
    assert!(!is_garbage(4, "31-5", committed, alive));

    let dir = crate::test_support::scratch_dir("ingest-garbage");
    let keep = [
        staged_name(&part_name(2, 0), "10-2"),
        staged_name(&part_name(4, 0), "11-5"),
        part_name(2, 0),
        "notes.txt".to_string(),
    ];
    let gone = [staged_name(&part_name(2, 0), "11-5"), staged_name(&part_name(4, 1), "21-5")];
    for name in keep.iter().chain(&gone) {
        std::fs::write(dir.join(name), b"x").unwrap();
    }
    let mut found: Vec<String> = garbage_staged(&dir, committed, alive)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    found.sort();
    let mut expected = gone.to_vec();
    expected.sort();
    assert_eq!(found, expected);
    let temps = [temp_entry_name(2, "10-2"), temp_entry_name(3, "11-1"), temp_entry_name(4, "12-1")];
    for name in &temps {
        std::fs::write(dir.join(name), b"{}").unwrap();
    }
    let mut found: Vec<String> = garbage_temp_entries(&dir, committed, alive)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    found.sort();
    // Entry 2's winner's temporary name is a leftover too (its link is the
    // entry); entry 4's live run may still link its own.
    assert_eq!(found, [temps[0].clone(), temps[1].clone()]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn outputs_are_completed_once_whoever_renames_them() {
    let dir = crate::test_support::scratch_dir("ingest-complete");
    let mut e = entry(1, "1-1", &dir);
    e.outputs.push(OutputRecord { name: part_name(1, 1), rows: 0, bytes: 1 });
    std::fs::write(dir.join(staged_name(&part_name(1, 0), "1-1")), b"a").unwrap();
    // Part 1 already renamed (by another run completing the entry).
    std::fs::write(dir.join(part_name(1, 1)), b"b").unwrap();
    assert!(complete_outputs(&e, &|| Ok(())).unwrap());
    assert_eq!(names_in(&dir), [part_name(1, 0), part_name(1, 1)]);
    // Again: nothing to do.
    assert!(!complete_outputs(&e, &|| Ok(())).unwrap());
    // A committed output at neither name is an error naming it.
    std::fs::remove_file(dir.join(part_name(1, 1))).unwrap();
    let err = complete_outputs(&e, &|| Ok(())).unwrap_err();
    assert!(err.message.contains("names the output") && err.message.contains(&part_name(1, 1)), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}
