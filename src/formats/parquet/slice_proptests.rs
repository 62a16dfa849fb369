//! A Parquet file read as byte ranges (`RowGroupSlice`) gives every row
//! once, in the file's order, wherever the cuts fall; a reader that
//! emits columns reads the ones asked for.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use proptest::prelude::*;

use super::{ParquetReader, RowGroupSlice, DEFAULT_MAX_PAGE_BYTES};
use crate::formats::{Batch, RecordReader};
use crate::value::Node;

/// A file of `rows` rows (an id and a text) in row groups of
/// `group_rows`, removed when dropped.
struct GroupedFile(std::path::PathBuf);

impl GroupedFile {
    fn new(rows: i64, group_rows: usize) -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("ss-pq-slices-{}-{n}.parquet", std::process::id()));
        let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..rows));
        let texts: ArrayRef = Arc::new(StringArray::from_iter_values((0..rows).map(|i| format!("row {i}"))));
        let batch = RecordBatch::try_from_iter([("id", ids), ("text", texts)]).unwrap();
        let props = WriterProperties::builder().set_max_row_group_row_count(Some(group_rows)).build();
        let mut writer =
            ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), Some(props)).unwrap();
        // A row group per write: arrow-rs's writer splits a larger batch by
        // calling itself once per row group, and an unoptimized (test)
        // build of 2,000 one-row groups overflows a test thread's stack.
        for start in (0..batch.num_rows()).step_by(group_rows) {
            writer.write(&batch.slice(start, group_rows.min(batch.num_rows() - start))).unwrap();
        }
        writer.close().unwrap();
        GroupedFile(path)
    }
    fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for GroupedFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// [`read_here`] on a thread of its own with a 64 MiB stack: an unoptimized
/// (test) build of arrow-rs's reader can take more than the 2 MiB of a test
/// thread on files of hundreds of row groups (the release build reads
/// 32,000 of them on a 2 MiB helper thread).
fn read(path: &std::path::Path, slice: Option<RowGroupSlice>) -> (Vec<i64>, Vec<u64>, u64) {
    let path = path.to_path_buf();
    std::thread::Builder::new().stack_size(64 << 20).spawn(move || read_here(&path, slice)).unwrap().join().unwrap()
}

/// The ids and row numbers one reader gives, and the bytes it reports.
fn read_here(path: &std::path::Path, slice: Option<RowGroupSlice>) -> (Vec<i64>, Vec<u64>, u64) {
    let mut reader = open(path, slice);
    let (mut ids, mut lines) = (Vec::new(), Vec::new());
    let mut batch = Batch::default();
    while let Some(n) = next(&mut reader, &mut batch) {
        for i in 0..n {
            let record = batch.tape.record(i);
            let id = record.entries().find(|(k, _)| *k == "id").map(|(_, v)| v.node());
            ids.push(match id {
                Some(Node::Int(i)) => i,
                _ => -1,
            });
            lines.push(batch.meta[i].line);
        }
    }
    (ids, lines, reader.bytes_read())
}

/// A reader of the file (a slice of it), in batches of 100 rows.
fn open(path: &std::path::Path, slice: Option<RowGroupSlice>) -> ParquetReader {
    let f = std::fs::File::open(path).unwrap();
    ParquetReader::open_with_page_limit(Box::new(f), "f", 100, DEFAULT_MAX_PAGE_BYTES, slice).unwrap()
}

/// The next batch of at most 64 records into `batch`: how many, `None` at the end.
fn next(reader: &mut ParquetReader, batch: &mut Batch) -> Option<usize> {
    batch.clear();
    let n = reader.next_batch(batch, 64).unwrap();
    (n > 0).then_some(n)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn ranges_of_a_parquet_file_read_each_row_once_in_order(
        rows in 1i64..2000,
        group_rows in 1usize..400,
        cuts in proptest::collection::vec(0.0f64..1.0, 0..6),
    ) {
        check_slices(rows, group_rows, &cuts)?;
    }
}

/// The proptest's deepest case, every time: the most row groups it makes.
#[test]
fn two_thousand_one_row_groups_read_each_row_once_in_order() {
    check_slices(1999, 1, &[0.1, 0.35, 0.5, 0.9]).unwrap();
}

/// The file of `rows` rows in groups of `group_rows`, read whole and as
/// the byte ranges cut at `cuts` (fractions of its size).
fn check_slices(rows: i64, group_rows: usize, cuts: &[f64]) -> Result<(), TestCaseError> {
    let file = GroupedFile::new(rows, group_rows);
    let size = std::fs::metadata(file.path()).unwrap().len();
    let (whole, whole_lines, whole_bytes) = read(file.path(), None);
    prop_assert_eq!(&whole, &(0..rows).collect::<Vec<_>>());
    let mut points: Vec<u64> = cuts.iter().map(|c| (c * size as f64) as u64).filter(|p| *p > 0).collect();
    points.sort_unstable();
    points.dedup();
    let mut starts = vec![0];
    starts.extend(&points);
    let (mut ids, mut lines, mut bytes) = (Vec::new(), Vec::new(), 0);
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied();
        let (got, got_lines, got_bytes) = read(file.path(), Some(RowGroupSlice { start, end }));
        ids.extend(got);
        lines.extend(got_lines);
        bytes += got_bytes;
    }
    prop_assert_eq!(ids, whole);
    prop_assert_eq!(lines, whole_lines, "rows are numbered in the file");
    prop_assert_eq!(bytes, whole_bytes, "the ranges' bytes add up to the file's");
    Ok(())
}

/// Footer metadata of one INT64 column whose row groups start at `starts`.
fn groups_starting_at(starts: &[i64]) -> parquet::file::metadata::ParquetMetaData {
    use parquet::file::metadata::{ColumnChunkMetaData, FileMetaData, ParquetMetaDataBuilder, RowGroupMetaData};
    use parquet::schema::{parser::parse_message_type, types::SchemaDescriptor};
    let schema =
        Arc::new(SchemaDescriptor::new(Arc::new(parse_message_type("message m { required int64 id; }").unwrap())));
    let groups = starts
        .iter()
        .map(|&at| {
            let column = ColumnChunkMetaData::builder(schema.column(0)).set_data_page_offset(at).build().unwrap();
            RowGroupMetaData::builder(schema.clone()).set_num_rows(1).set_column_metadata(vec![column]).build().unwrap()
        })
        .collect();
    let file = FileMetaData::new(1, starts.len() as i64, None, None, schema, None);
    ParquetMetaDataBuilder::new(file).set_row_groups(groups).build()
}

#[test]
fn row_groups_out_of_order_all_go_to_the_first_range() {
    let slice = |start, end| RowGroupSlice { start, end };
    let ordered = groups_starting_at(&[4, 100, 200]);
    assert_eq!(slice(0, Some(100)).row_groups(&ordered), [0]);
    assert_eq!(slice(100, Some(200)).row_groups(&ordered), [1]);
    assert_eq!(slice(200, None).row_groups(&ordered), [2]);
    let shuffled = groups_starting_at(&[200, 4, 100]);
    assert_eq!(slice(0, Some(100)).row_groups(&shuffled), [0, 1, 2]);
    assert!(slice(100, None).row_groups(&shuffled).is_empty());
    // A start past every group: the range owns none.
    assert!(slice(300, None).row_groups(&ordered).is_empty());
}

/// A reader that emits columns reads only those asked for, before its
/// first batch; asking for all of them, or none, reads them all.
#[test]
fn emitted_columns_are_the_ones_asked_for() {
    let file = GroupedFile::new(300, 100);
    let columns = |read: &[bool]| {
        let mut reader = open(file.path(), None);
        reader.emit_columns(read);
        let (mut names, mut rows) = (Vec::new(), 0);
        let mut batch = Batch::default();
        while next(&mut reader, &mut batch).is_some() {
            let c = batch.columns.as_ref().unwrap();
            names = c.rows.schema().fields().iter().map(|f| f.name().clone()).collect::<Vec<_>>();
            assert_eq!(c.keys.len(), names.len());
            rows += c.rows.num_rows();
        }
        (names, rows)
    };
    assert_eq!(columns(&[false, true]), (vec!["text".to_string()], 300));
    assert_eq!(columns(&[true, false]), (vec!["id".to_string()], 300));
    assert_eq!(columns(&[true, true]), (vec!["id".to_string(), "text".to_string()], 300));
    assert_eq!(columns(&[false, false]), (vec!["id".to_string(), "text".to_string()], 300));
}
