//! Small pieces joined into full chunks (`Scanner::next_chunk`): the rows,
//! their order and each row's file are what one chunk per piece gives.

use std::sync::Arc;

use super::scanner::JOIN_BYTES;
use super::tests::rand_suffix;
use super::{plan_on, Chunk, Scanner, BATCH_RECORDS};
use crate::options::{InputFormat, Options, ParamValue};

/// Files of JSON Lines records `{"f": <file>, "i": <record>}`, `sizes[f]`
/// records in file f, in a fresh directory; returns their paths in order.
fn files(sizes: &[usize]) -> (std::path::PathBuf, Vec<String>) {
    let dir = std::env::temp_dir().join(format!("ss-join-{}-{}", std::process::id(), rand_suffix()));
    std::fs::create_dir_all(&dir).unwrap();
    let paths = sizes
        .iter()
        .enumerate()
        .map(|(f, &n)| {
            let path = dir.join(format!("f{f:03}.jsonl"));
            let text: String = (0..n).map(|i| format!("{{\"f\": {f}, \"i\": {i}}}\n")).collect();
            std::fs::write(&path, text).unwrap();
            path.to_string_lossy().into_owned()
        })
        .collect();
    (dir, paths)
}

/// A row as (its `f` value, its `i` value, its file by `Chunk::file_runs`).
type Row = (i64, i64, usize);

/// Each chunk's rows, chunk by chunk.
fn chunks(paths: &[String], params: &[(&str, ParamValue)]) -> Result<Vec<Vec<Row>>, String> {
    let options = Options::parse("sanitize_jsonl", Some(InputFormat::Jsonl), params).map_err(|e| e.message)?;
    let plan = Arc::new(plan_on("sanitize_jsonl", paths.to_vec(), options, 2).map_err(|e| e.message)?);
    let names: Vec<String> = plan.schema.output_versions().map(|v| v.output_name.clone()).collect();
    let (f, i) = (names.iter().position(|n| n == "f").unwrap(), names.iter().position(|n| n == "i").unwrap());
    let mut scanner = Scanner::new(Arc::clone(&plan));
    let mut chunk = Chunk::new(&plan);
    let mut out = Vec::new();
    while scanner.next_chunk(&mut chunk).map_err(|e| e.message)? > 0 {
        let runs = chunk.file_runs();
        assert_eq!(runs.iter().map(|r| r.1).sum::<usize>(), chunk.rows, "runs cover the rows: {runs:?}");
        let file_of_row = runs.iter().flat_map(|&(file, n)| std::iter::repeat_n(file, n));
        let rows = (0..chunk.rows).zip(file_of_row).map(|(r, file)| {
            let value = |c: usize| chunk.columns[c].row_json(r).as_i64().unwrap();
            (value(f), value(i), file)
        });
        out.push(rows.collect());
    }
    Ok(out)
}

/// How many chunks joining whole files in order up to a full chunk makes
/// (each file here is one piece: fewer records than a batch).
fn greedy_chunks(sizes: &[usize]) -> usize {
    let (mut count, mut rows) = (0, 0);
    for &n in sizes.iter().filter(|&&n| n > 0) {
        if count == 0 || rows + n > BATCH_RECORDS {
            count += 1;
            rows = 0;
        }
        rows += n;
    }
    count
}

#[test]
fn small_files_are_joined_into_full_chunks_and_every_row_keeps_its_file() {
    // Sizes that fill a chunk exactly, overflow it (the piece waits for
    // the next chunk) and leave an empty file between others.
    let sizes: Vec<usize> = (0..40).map(|f| [7, 300, 1, 0, 1024, 1023, 60][f % 7]).collect();
    let (dir, paths) = files(&sizes);
    let got = chunks(&paths, &[]).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(got.len(), greedy_chunks(&sizes), "chunk sizes: {:?}", got.iter().map(Vec::len).collect::<Vec<_>>());
    assert!(got.iter().all(|c| !c.is_empty() && c.len() <= BATCH_RECORDS));
    let rows: Vec<Row> = got.into_iter().flatten().collect();
    let expected: Vec<Row> =
        sizes.iter().enumerate().flat_map(|(f, &n)| (0..n).map(move |i| (f as i64, i as i64, f))).collect();
    assert_eq!(rows, expected, "rows in input order, each with its own file");
}

/// Files of one huge record each: joined only while the chunk holds less
/// than `JOIN_BYTES`, not 2048 records at a time.
#[test]
fn pieces_are_joined_up_to_a_bound_of_bytes_not_only_of_rows() {
    let dir = std::env::temp_dir().join(format!("ss-join-big-{}-{}", std::process::id(), rand_suffix()));
    std::fs::create_dir_all(&dir).unwrap();
    // Three eighths of the bound each: two fit in a chunk, a third does not.
    let text = "x".repeat(JOIN_BYTES * 3 / 8);
    let paths: Vec<String> = (0..6)
        .map(|f| {
            let path = dir.join(format!("big{f}.jsonl"));
            std::fs::write(&path, format!("{{\"f\": {f}, \"i\": 0, \"s\": \"{text}\"}}\n")).unwrap();
            path.to_string_lossy().into_owned()
        })
        .collect();
    let got = chunks(&paths, &[]).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(got.iter().map(Vec::len).collect::<Vec<_>>(), [2, 2, 2]);
    let files: Vec<usize> = got
        .into_iter()
        .flatten()
        .map(|(f, _, file)| (f as usize, file))
        .map(|(f, file)| {
            assert_eq!(f, file);
            file
        })
        .collect();
    assert_eq!(files, [0, 1, 2, 3, 4, 5]);
}

#[test]
fn under_a_batch_memory_limit_each_piece_stays_its_own_chunk() {
    let sizes = [5, 9, 3, 12];
    let (dir, paths) = files(&sizes);
    let limit = [("batch_memory_limit_bytes", ParamValue::Int(64 << 20))];
    let got = chunks(&paths, &limit).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(got.iter().map(Vec::len).collect::<Vec<_>>(), sizes);
}

#[test]
fn a_failure_in_a_piece_that_would_have_joined_comes_after_the_rows_before_it() {
    let (dir, paths) = files(&[4, 3]);
    let options = Options::parse("sanitize_jsonl", Some(InputFormat::Jsonl), &[("on_error", s("stop"))]).unwrap();
    let plan = Arc::new(plan_on("sanitize_jsonl", paths.clone(), options, 2).unwrap());
    // The second file goes bad after the plan was made: the scan finds it.
    std::fs::write(&paths[1], "{\"f\": 1, \"i\": 0}\nnot json\n").unwrap();
    let mut scanner = Scanner::new(Arc::clone(&plan));
    let mut chunk = Chunk::new(&plan);
    let first = scanner.next_chunk(&mut chunk);
    let second = scanner.next_chunk(&mut chunk);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(first.map_err(|e| e.message), Ok(4), "the first file's rows come first");
    let error = second.expect_err("then the second file's bad record stops the scan").message;
    assert!(error.contains("f001.jsonl"), "{error}");
}

fn s(v: &str) -> ParamValue {
    ParamValue::Str(v.to_string())
}
