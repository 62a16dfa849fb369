//! Parquet input through arrow-rs: each row becomes a record on the tape,
//! typed by its declared Parquet/Arrow type, so the engine reconciles and
//! versions Parquet columns with the same rules as every other format.
//!
//! Declared types are kept where DuckDB has them (docs/formats.md has the
//! table): TINYINT … UBIGINT, FLOAT, DECIMAL(p, s) up to 38 digits, BLOB,
//! UUID, INTERVAL and MAP stay what they are; BIGINT, DOUBLE, VARCHAR,
//! BOOLEAN, DATE, TIME, lists and structs are the engine's own types (docs/engine.md); a Parquet
//! ENUM is read as text (as DuckDB reads it), timestamps follow
//! `timestamp_precision`, decimals wider than 38 digits keep their exact
//! text. Empty lists, maps and structs without values are no evidence and
//! materialize as NULL, like `[]` and `{}` in JSON.
//!
//! arrow-rs reads a Parquet INTERVAL as days and milliseconds only (its
//! month part would be lost), so files with INTERVAL columns are read a
//! second time, projected to those columns with the months as the type, and
//! the two halves are joined per value.

mod footer;
pub use footer::{claimed_length, MAX_FOOTER_BYTES};
#[cfg(test)]
mod fuzz;
mod pages;
#[cfg(test)]
mod slice_proptests;
mod variant;

use super::byte_source::{ByteSource, PatchedSource, SharedSource};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::datatypes::{
    DataType, Date32Type, Date64Type, Decimal128Type, Decimal256Type, Decimal32Type, Decimal64Type, Field, FieldRef,
    Fields, Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, IntervalDayTimeType,
    IntervalMonthDayNanoType, IntervalUnit, IntervalYearMonthType, Schema, Time32MillisecondType, Time32SecondType,
    Time64MicrosecondType, Time64NanosecondType, TimeUnit, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;
use parquet::basic::{ConvertedType, LogicalType};
use parquet::file::metadata::{FileMetaData, ParquetMetaData, ParquetMetaDataBuilder, ParquetMetaDataReader};
use parquet::schema::types::ColumnDescPtr;

use super::{dedupe_names, Batch, Declaration, RecordMeta, RecordReader};
use crate::error::{Result, SanitizeError};
use crate::value::Declared;
use crate::value::{Node, Tape};
// arrow has a TimeUnit of its own: the tape's is called Ticks here.
use crate::value::TimeUnit as Ticks;

pub struct ParquetReader {
    file: String,
    reader: Option<ParquetRecordBatchReader>,
    /// The INTERVAL columns again, with their months (see the module doc).
    months_reader: Option<ParquetRecordBatchReader>,
    /// For each column of the main batch, its column in the months batch.
    months_column: Vec<Option<usize>>,
    /// Rows of the current arrow batch not yet handed out, with its months batch.
    current: Option<(RecordBatch, Option<RecordBatch>, usize)>,
    rows_seen: u64,
    /// Rows of the row groups before this reader's first (a range of the
    /// file): its rows are numbered in the file, from there.
    first_row: u64,
    /// Rows the footer declares (for this reader's row groups).
    declared_rows: u64,
    bytes: u64,
    /// Reused text buffer for values written as text.
    scratch: String,
    /// The record keys of the top-level columns: the schema's names made
    /// unique (a schema may repeat a name; no column may vanish).
    keys: Vec<String>,
    /// A decimal column whose values may hold more digits than its
    /// precision: the probe must read the rows (see `Declaration::exact`).
    has_decimals: bool,
    /// For each top-level column, the scale of a DECIMAL wider than arrow-rs
    /// reads (precision > 76): its raw bytes are written as exact text.
    wide_decimal_scale: Vec<Option<i32>>,
    /// For each top-level column, whether it is a VARIANT group: its rows
    /// are decoded (formats/parquet/variant.rs), not read as raw columns.
    variant: Vec<bool>,
    /// Set by [`RecordReader::emit_columns`]: batches carry the arrow
    /// columns with these keys, not rows on the tape.
    column_keys: Option<Arc<[String]>>,
    /// What reading fewer columns needs, until the first batch.
    projectable: Option<Projectable>,
}

/// Whether a value of this arrow type holds a DECIMAL.
fn holds_decimal(ty: &DataType) -> bool {
    match ty {
        DataType::Decimal32(..) | DataType::Decimal64(..) | DataType::Decimal128(..) | DataType::Decimal256(..) => true,
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) | DataType::Map(f, _) => {
            holds_decimal(f.data_type())
        }
        DataType::Struct(fields) => fields.iter().any(|f| holds_decimal(f.data_type())),
        DataType::Dictionary(_, v) => holds_decimal(v),
        _ => false,
    }
}

/// Whether every DECIMAL value in `array` has at most its precision in
/// digits (what `write_decimal` keeps as a decimal, not as text). Values
/// under a NULL list or struct are checked too: a refusal only sends the
/// file's rows to the probe.
fn decimals_within_precision(array: &dyn Array) -> bool {
    fn fit<T: arrow::datatypes::ArrowPrimitiveType>(
        array: &dyn Array,
        p: u8,
        wide: impl Fn(T::Native) -> i128,
    ) -> bool {
        let limit = 10u128.pow(u32::from(p));
        let a = array.as_primitive::<T>();
        a.iter().all(|v| v.is_none_or(|v| wide(v).unsigned_abs() < limit))
    }
    match array.data_type() {
        DataType::Decimal32(p, _) if *p <= 38 => fit::<Decimal32Type>(array, *p, i128::from),
        DataType::Decimal64(p, _) if *p <= 38 => fit::<Decimal64Type>(array, *p, i128::from),
        DataType::Decimal128(p, _) if *p <= 38 => fit::<Decimal128Type>(array, *p, |v| v),
        DataType::Decimal32(..) | DataType::Decimal64(..) | DataType::Decimal128(..) | DataType::Decimal256(..) => {
            false
        }
        DataType::List(_) => decimals_within_precision(array.as_list::<i32>().values().as_ref()),
        DataType::LargeList(_) => decimals_within_precision(array.as_list::<i64>().values().as_ref()),
        DataType::FixedSizeList(..) => decimals_within_precision(array.as_fixed_size_list().values().as_ref()),
        DataType::Map(..) => array.as_map().entries().columns().iter().all(|c| decimals_within_precision(c.as_ref())),
        DataType::Struct(_) => array.as_struct().columns().iter().all(|c| decimals_within_precision(c.as_ref())),
        DataType::Dictionary(..) => decimals_within_precision(array.as_any_dictionary().values().as_ref()),
        _ => true,
    }
}

/// What a reader of some of the file's top-level columns is built from
/// ([`ParquetReader::project`], [`ParquetReader::decimals_fit`]).
struct Projectable {
    source: PatchedSource,
    metadata: ArrowReaderMetadata,
    groups: Option<Vec<usize>>,
    batch_rows: usize,
}

impl Projectable {
    /// A reader of the top-level columns `roots` of the same row groups;
    /// `None` when the Parquet roots are not the arrow fields one for one
    /// (arrow-rs leaves out empty groups), or the reader cannot be built.
    fn reader(&self, roots: impl IntoIterator<Item = usize>) -> Option<ParquetRecordBatchReader> {
        let schema = self.metadata.parquet_schema();
        if schema.root_schema().get_fields().len() != self.metadata.schema().fields().len() {
            return None;
        }
        let mask = ProjectionMask::roots(schema, roots);
        let builder = ParquetRecordBatchReaderBuilder::new_with_metadata(self.source.clone(), self.metadata.clone());
        let builder = match &self.groups {
            Some(groups) => builder.with_row_groups(groups.clone()),
            None => builder,
        };
        guarded(|| builder.with_projection(mask).with_batch_size(self.batch_rows).build()).ok()?.ok()
    }
}

/// How the top-level columns of an arrow batch become a record's entries.
struct RowColumns<'a> {
    keys: &'a [String],
    /// The INTERVAL columns read as months (see the module doc).
    months: Option<&'a RecordBatch>,
    months_column: &'a [Option<usize>],
    wide_decimal_scale: &'a [Option<i32>],
    variant: &'a [bool],
}

impl RowColumns<'_> {
    /// Writes row `row` of `rb` onto the tape as one record.
    fn write_row(&self, rb: &RecordBatch, row: usize, tape: &mut Tape, scratch: &mut String) {
        let root = tape.nodes.len();
        let open = tape.open(true);
        let mut evidence = false;
        let schema = rb.schema();
        for (i, (field, column)) in schema.fields().iter().zip(rb.columns()).enumerate() {
            tape.push_key(self.keys.get(i).map_or(field.name().as_str(), String::as_str));
            let month_column = match (self.months, self.months_column.get(i)) {
                (Some(m), Some(Some(j))) => Some(m.column(*j)),
                _ => None,
            };
            let value = Value { field, array: column, months: month_column };
            let is_variant = self.variant.get(i).copied().unwrap_or(false);
            evidence |= match self.wide_decimal_scale.get(i).copied().flatten() {
                Some(scale) => write_wide_decimal(column, row, scale, tape),
                None if is_variant => write_variant_or_raw(value, row, tape, scratch),
                None => write_value(value, row, tape, scratch),
            };
        }
        tape.close(open, rb.num_columns() as u32, evidence);
        tape.push_root(root);
    }
}

/// Writes the records of `rows` onto `tape`, as a reader that did not emit
/// columns would have (for a router that cannot write them whole).
pub fn rows_onto_tape(rows: &super::ColumnRows, tape: &mut Tape) {
    let columns =
        RowColumns { keys: &rows.keys, months: None, months_column: &[], wide_decimal_scale: &[], variant: &[] };
    let mut scratch = String::new();
    for row in 0..rows.rows.num_rows() {
        columns.write_row(&rows.rows, row, tape, &mut scratch);
    }
}

/// A byte range of a Parquet file cut into ranges (scan/ranges.rs): the
/// range reads the row groups whose first column chunk starts in it, so
/// the ranges of a file read each row group once, in the footer's order.
/// A footer whose row groups do not start in increasing order gives them
/// all to the range at the file's start (and none to the others).
#[derive(Clone, Copy, Debug)]
pub struct RowGroupSlice {
    pub start: u64,
    /// Exclusive; `None`: to the end of the file.
    pub end: Option<u64>,
}

impl RowGroupSlice {
    fn row_groups(self, meta: &ParquetMetaData) -> Vec<usize> {
        let starts: Vec<u64> = meta
            .row_groups()
            .iter()
            .map(|g| {
                g.columns()
                    .iter()
                    .map(|c| c.dictionary_page_offset().unwrap_or_else(|| c.data_page_offset()).max(0) as u64)
                    .min()
                    .unwrap_or(0)
            })
            .collect();
        if !starts.windows(2).all(|w| w[0] < w[1]) {
            return if self.start == 0 { (0..starts.len()).collect() } else { Vec::new() };
        }
        let owns = |at: u64| (self.start == 0 || at >= self.start) && self.end.is_none_or(|end| at < end);
        starts.iter().enumerate().filter(|(_, &at)| owns(at)).map(|(g, _)| g).collect()
    }
}

/// One key of a Parquet file's footer key-value metadata, read by the same
/// checked footer reader as a scan's: `None` when the footer has no such key
/// or no value for it. `file` is the whole file, or its last bytes when they
/// hold the whole footer and 4 bytes more (a remote file's tail).
pub fn footer_value(file: &SharedSource, key: &str) -> std::result::Result<Option<String>, String> {
    let footer = footer::read_footer(file, file.size())?;
    let metadata = guarded(|| ParquetMetaDataReader::decode_metadata(&footer.metadata))?.map_err(|e| e.to_string())?;
    let pairs = metadata.file_metadata().key_value_metadata();
    Ok(pairs.into_iter().flatten().find(|kv| kv.key == key).and_then(|kv| kv.value.clone()))
}

/// The largest page read, from `max_record_bytes`: a page holds records,
/// and arrow-rs holds a page decompressed whole, with its decoded values
/// besides, so a page of gigabytes (parquet-testing's
/// large_string_map.brotli: 2 GiB in 4 KB) is refused before anything is
/// decompressed. 64 records' worth: 1 GiB at the default limit, beyond any
/// writer's page; raise max_record_bytes to read larger ones.
pub fn max_page_bytes(max_record_bytes: usize) -> u64 {
    (max_record_bytes as u64).saturating_mul(64)
}

#[cfg(test)]
const DEFAULT_MAX_PAGE_BYTES: u64 = (super::DEFAULT_MAX_RECORD_BYTES as u64) * 64;

impl ParquetReader {
    /// Opens the file and reads its footer; a truncated file or a corrupt
    /// footer is an error naming the file.
    #[cfg(test)]
    pub fn open(file: std::fs::File, path: &str, batch_rows: usize) -> Result<Self> {
        Self::open_with_page_limit(Box::new(file), path, batch_rows, DEFAULT_MAX_PAGE_BYTES, None)
    }

    /// [`ParquetReader::open`], refusing pages that decompress to more than
    /// `max_page_bytes` (see [`max_page_bytes`]); with `slice`, only the
    /// row groups that start in that byte range of the file
    /// ([`RowGroupSlice`]).
    pub fn open_with_page_limit(
        file: Box<dyn ByteSource>,
        path: &str,
        batch_rows: usize,
        max_page_bytes: u64,
        slice: Option<RowGroupSlice>,
    ) -> Result<Self> {
        let cannot = |e: &dyn std::fmt::Display| {
            SanitizeError::input(format!("cannot read Parquet file \"{path}\": {e} (truncated or not a Parquet file?)"))
        };
        // Read at offsets through one handle (footer, page headers, column
        // chunks), in large reads: formats/byte_source.rs.
        let file = SharedSource::new(file).map_err(|e| cannot(&e))?;
        let bytes = file.size();
        // Nothing may be allocated from a size the footer's own bytes cannot
        // back (see parquet_footer): checked before arrow-rs decodes it.
        let mut footer = footer::read_footer(&file, bytes).map_err(|e| cannot(&format!("corrupt footer: {e}")))?;
        // A corrupt file can make the decoder panic (arrow-rs asserts on some
        // impossible values): that is bad input, not our bug.
        let decode = |footer: &footer::Footer| {
            guarded(|| {
                let m = Arc::new(with_row_group_total(ParquetMetaDataReader::decode_metadata(&footer.metadata)?));
                // An embedded Arrow schema that disagrees with the Parquet schema
                // (a writer's empty struct, which arrow-rs drops) is only a hint:
                // without it the file is read by its Parquet schema.
                ArrowReaderMetadata::try_new(Arc::clone(&m), ArrowReaderOptions::new()).or_else(|_| {
                    ArrowReaderMetadata::try_new(m, ArrowReaderOptions::new().with_skip_arrow_metadata(true))
                })
            })
            .map_err(|e| cannot(&e))?
            .map_err(|e| cannot(&e))
        };
        let mut plain = decode(&footer)?;
        let groups = slice.map(|s| s.row_groups(plain.metadata()));
        // Nor from a page size the file cannot back (see parquet_pages).
        let check_pages = |plain: &ArrowReaderMetadata, data_end: u64| {
            guarded(|| pages::check_pages(&file, data_end, plain.metadata(), max_page_bytes, groups.as_deref()))
                .map_err(|e| cannot(&e))?
                .map_err(|e| cannot(&format!("corrupt page: {e}")))
        };
        let checked = check_pages(&plain, footer.data_end)?;
        let grown = checked.corrections;
        if !grown.is_empty() {
            // Chunks whose declared length ends inside their last page
            // (PARQUET-816): the footer again, with their pages' lengths.
            footer =
                footer::read_footer_with(&file, bytes, &grown).map_err(|e| cannot(&format!("corrupt footer: {e}")))?;
            plain = decode(&footer)?;
            if !check_pages(&plain, footer.data_end)?.corrections.is_empty() {
                return Err(cannot(&"corrupt page: column chunk lengths do not settle"));
            }
        }
        let hinted = |months: bool| {
            let mut leaves = plain.parquet_schema().columns().iter();
            let mut intervals = Vec::new();
            let fields: Vec<FieldRef> = plain
                .schema()
                .fields()
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let mut found = false;
                    let f = hint_field(f, &mut leaves, months, &mut found);
                    if found {
                        intervals.push(i);
                    }
                    f
                })
                .collect();
            (Arc::new(Schema::new_with_metadata(fields, plain.schema().metadata().clone())), intervals)
        };
        let (schema, interval_roots) = hinted(false);
        let with_schema = |schema| {
            ArrowReaderMetadata::try_new(plain.metadata().clone(), ArrowReaderOptions::new().with_schema(schema))
                .map_err(|e| cannot(&e))
        };
        // Pages whose header wrongly says they are not compressed are read
        // as compressed (parquet_pages: parquet-cpp before 3.0).
        let patched = PatchedSource::new(file.clone(), checked.patches);
        let clone = || Ok::<_, SanitizeError>(patched.clone());
        let keys = dedupe_names(&schema.fields().iter().map(|f| f.name().clone()).collect::<Vec<_>>());
        let has_decimals = plain.parquet_schema().columns().iter().any(|c| {
            matches!(c.logical_type_ref(), Some(LogicalType::Decimal { .. }))
                || c.converted_type() == ConvertedType::DECIMAL
        });
        // arrow-rs refuses a supplied schema for a file with an empty group (a
        // struct without columns, which it drops from the Arrow schema): such
        // a file is read with its plain schema, without the read hints (64-bit
        // offsets, ENUM as text).
        // Without the hints an INTERVAL loses its months and an INT96
        // timestamp outside 1677-2262 wraps around: such a file is an error
        // rather than a silent change.
        let has_int96 =
            plain.parquet_schema().columns().iter().any(|c| c.physical_type() == parquet::basic::Type::INT96);
        let metadata = match with_schema(schema) {
            Ok(m) => m,
            Err(_) if interval_roots.is_empty() && !has_int96 => plain.clone(),
            Err(e) => return Err(e),
        };
        let variant = variant_columns(&plain);
        let batch_rows = rows_per_batch(plain.metadata(), batch_rows);
        let group_rows =
            |gs: &[usize]| gs.iter().map(|&g| plain.metadata().row_group(g).num_rows().max(0) as u64).sum::<u64>();
        let all_groups: Vec<usize> = (0..plain.metadata().num_row_groups()).collect();
        let first_row = group_rows(&all_groups[..groups.as_ref().and_then(|g| g.first().copied()).unwrap_or(0)]);
        let only = |builder: ParquetRecordBatchReaderBuilder<PatchedSource>| match &groups {
            Some(g) => builder.with_row_groups(g.clone()),
            None => builder,
        };
        let projectable = Projectable {
            source: patched.clone(),
            metadata: metadata.clone(),
            groups: groups.clone(),
            batch_rows: batch_rows.max(1),
        };
        let reader = only(ParquetRecordBatchReaderBuilder::new_with_metadata(clone()?, metadata))
            .with_batch_size(batch_rows.max(1))
            .build()
            .map_err(|e| cannot(&e))?;
        let mut months_column = Vec::new();
        let months_reader = if interval_roots.is_empty() {
            None
        } else {
            let (months_schema, _) = hinted(true);
            let mask = ProjectionMask::roots(plain.parquet_schema(), interval_roots.iter().copied());
            months_column =
                (0..plain.schema().fields().len()).map(|i| interval_roots.iter().position(|&r| r == i)).collect();
            Some(
                only(ParquetRecordBatchReaderBuilder::new_with_metadata(clone()?, with_schema(months_schema)?))
                    .with_projection(mask)
                    .with_batch_size(batch_rows.max(1))
                    .build()
                    .map_err(|e| cannot(&e))?,
            )
        };
        Ok(ParquetReader {
            file: path.to_string(),
            reader: Some(reader),
            months_reader,
            months_column,
            current: None,
            rows_seen: first_row,
            first_row,
            // The row groups' counts, as DuckDB reads them: some writers leave
            // the file-level num_rows at 0 (parquet-testing's repeated_no_annotation).
            declared_rows: group_rows(groups.as_deref().unwrap_or(&all_groups)),
            bytes: slice.map_or(bytes, |s| s.end.unwrap_or(bytes).min(bytes).saturating_sub(s.start)),
            scratch: String::new(),
            keys,
            // Wide decimals are decimals too, but always text: exact.
            wide_decimal_scale: (0..plain.schema().fields().len())
                .map(|i| footer.wide_decimals.iter().find(|w| w.column == i).map(|w| w.scale))
                .collect(),
            has_decimals,
            variant,
            column_keys: None,
            projectable: Some(projectable),
        })
    }

    /// Whether every DECIMAL value of the file (of this reader's row groups)
    /// has at most its column's precision in digits, so that the declared
    /// schema decides every value: read by decoding the columns that hold
    /// decimals alone, instead of every row through the probe. `false` when
    /// that cannot be told (no decimal column, a read failed, a layout it
    /// cannot project).
    fn decimals_fit(&self) -> bool {
        let Some(p) = self.projectable.as_ref() else { return false };
        let fields = p.metadata.schema().fields();
        let roots: Vec<usize> = (0..fields.len()).filter(|&i| holds_decimal(fields[i].data_type())).collect();
        if roots.is_empty() {
            return false;
        }
        let Some(mut reader) = p.reader(roots) else { return false };
        let mut rows = 0u64;
        // A panic in the decoder on corrupt data is caught here as in a
        // scan; the rows' own read reports it.
        while let Ok(Some(batch)) = guarded(|| reader.next()) {
            let Ok(batch) = batch else { return false };
            if !batch.columns().iter().all(|c| decimals_within_precision(c.as_ref())) {
                return false;
            }
            rows += batch.num_rows() as u64;
        }
        // A file that gives fewer rows than it declares (or whose decoder
        // failed) is read row by row, where that is the error naming it.
        rows == self.declared_rows
    }

    /// Reads only the top-level columns marked in `read` from now on (a
    /// scan that emits columns and needs no others); `false` when the
    /// reader stays as it is (nothing to leave out, or a schema whose
    /// Parquet roots are not its arrow fields one for one).
    fn project(&mut self, read: &[bool]) -> bool {
        let Some(p) = self.projectable.take() else { return false };
        if read.len() != p.metadata.schema().fields().len() || read.iter().all(|r| *r) || !read.contains(&true) {
            return false;
        }
        let Some(reader) = p.reader(read.iter().enumerate().filter(|(_, r)| **r).map(|(i, _)| i)) else {
            return false;
        };
        self.reader = Some(reader);
        self.keys = self.keys.iter().zip(read).filter(|(_, r)| **r).map(|(k, _)| k.clone()).collect();
        true
    }

    /// The next rows as arrow columns: a slice of the current arrow batch,
    /// at most `max_records` rows (never across two arrow batches).
    fn next_columns(&mut self, batch: &mut Batch, max_records: usize) -> Result<usize> {
        while self.current.as_ref().is_none_or(|(b, _, next)| *next >= b.num_rows()) {
            match self.next_arrow_batch()? {
                None => return Ok(0),
                Some((b, months)) => self.current = Some((b, months, 0)),
            }
        }
        let (Some((rb, _, next)), Some(keys)) = (self.current.as_mut(), self.column_keys.as_ref()) else {
            return Ok(0);
        };
        let n = (rb.num_rows() - *next).min(max_records.max(1));
        batch.columns = Some(super::ColumnRows { rows: rb.slice(*next, n), keys: Arc::clone(keys) });
        *next += n;
        for _ in 0..n {
            self.rows_seen += 1;
            batch.meta.push(RecordMeta { line: self.rows_seen, byte: 0, error: None });
        }
        Ok(n)
    }

    fn read_error(&self, e: &dyn std::fmt::Display) -> SanitizeError {
        SanitizeError::input(format!("cannot read Parquet file \"{}\" after row {}: {e}", self.file, self.rows_seen))
    }

    /// The next arrow batch and its months batch; `None` at the end, after
    /// checking that the file gave exactly the rows its footer declares.
    fn next_arrow_batch(&mut self) -> Result<Option<(RecordBatch, Option<RecordBatch>)>> {
        self.projectable = None;
        let Some(reader) = self.reader.as_mut() else { return Ok(None) };
        let next = match guarded(|| reader.next()) {
            Ok(next) => next,
            Err(panic) => {
                self.reader = None;
                return Err(self.read_error(&panic));
            }
        };
        let batch = match next {
            None => {
                self.reader = None;
                // Every earlier batch was handed out in full before this call:
                // a short file must never look like a short table.
                if self.rows_seen - self.first_row != self.declared_rows {
                    return Err(SanitizeError::input(format!(
                        "Parquet file \"{}\" gave {} rows but its footer declares {}; the file is corrupt or uses a layout this reader does not support",
                        self.file,
                        self.rows_seen - self.first_row,
                        self.declared_rows
                    )));
                }
                return Ok(None);
            }
            Some(Err(e)) => {
                self.reader = None;
                return Err(self.read_error(&e));
            }
            Some(Ok(b)) => b,
        };
        if self.rows_seen - self.first_row + batch.num_rows() as u64 > self.declared_rows {
            self.reader = None;
            return Err(SanitizeError::input(format!(
                "Parquet file \"{}\" gave more than the {} rows its footer declares; the file is corrupt",
                self.file, self.declared_rows
            )));
        }
        let months = match self.months_reader.as_mut().map(|r| guarded(|| r.next()).unwrap_or(None)) {
            None => None,
            Some(Some(Ok(m))) if m.num_rows() == batch.num_rows() => Some(m),
            Some(other) => {
                self.reader = None;
                let why = match other {
                    Some(Err(e)) => e.to_string(),
                    _ => "the INTERVAL months did not line up with the rows".to_string(),
                };
                return Err(self.read_error(&why));
            }
        };
        Ok(Some((batch, months)))
    }
}

impl RecordReader for ParquetReader {
    fn next_batch(&mut self, batch: &mut Batch, max_records: usize) -> Result<usize> {
        if self.column_keys.is_some() {
            return self.next_columns(batch, max_records);
        }
        let mut added = 0;
        while added < max_records {
            if self.current.as_ref().is_none_or(|(b, _, next)| *next >= b.num_rows()) {
                match self.next_arrow_batch()? {
                    None => break,
                    Some((b, months)) => self.current = Some((b, months, 0)),
                }
                continue;
            }
            let Some((rb, months, next)) = self.current.as_mut() else { break };
            let row = *next;
            *next += 1;
            self.rows_seen += 1;
            let columns = RowColumns {
                keys: &self.keys,
                months: months.as_ref(),
                months_column: &self.months_column,
                wide_decimal_scale: &self.wide_decimal_scale,
                variant: &self.variant,
            };
            columns.write_row(rb, row, &mut batch.tape, &mut self.scratch);
            // Parquet has no lines: `line` is the 1-based row number.
            batch.meta.push(RecordMeta { line: self.rows_seen, byte: 0, error: None });
            added += 1;
        }
        Ok(added)
    }

    fn column_schema(&self) -> Option<(arrow::datatypes::SchemaRef, Arc<[String]>)> {
        if super::COLUMNS_OFF.is_on() {
            return None;
        }
        let plain = self.months_reader.is_none()
            && !self.variant.contains(&true)
            && self.wide_decimal_scale.iter().all(Option::is_none);
        let reader = self.reader.as_ref().filter(|_| plain)?;
        Some((arrow::record_batch::RecordBatchReader::schema(reader), self.keys.iter().cloned().collect()))
    }

    fn emit_columns(&mut self, read: &[bool]) {
        if self.column_schema().is_none() {
            return;
        }
        // Offered only for plain columns (no INTERVAL months, VARIANT or
        // wide decimals), whose per-column lists stay empty once the
        // positions change.
        if self.current.is_none() && self.project(read) {
            self.months_column.clear();
            self.variant.clear();
            self.wide_decimal_scale.clear();
        }
        self.column_keys = Some(self.keys.iter().cloned().collect());
    }

    fn declaration(&mut self) -> Option<Declaration> {
        let reader = self.reader.as_ref()?;
        let schema = arrow::record_batch::RecordBatchReader::schema(reader);
        let mut sample = Batch::default();
        let tape = &mut sample.tape;
        let root = tape.nodes.len();
        let open = tape.open(true);
        let mut evidence = false;
        for (i, field) in schema.fields().iter().enumerate() {
            tape.push_key(self.keys.get(i).map_or(field.name().as_str(), String::as_str));
            let is_variant = self.variant.get(i).copied().unwrap_or(false);
            evidence |= match self.wide_decimal_scale.get(i).copied().flatten() {
                Some(_) => push_text(tape, ""),
                // A VARIANT declares no type: its rows decide.
                None if is_variant => {
                    tape.push_null();
                    false
                }
                None => write_type_sample(field, tape),
            };
        }
        tape.close(open, schema.fields().len() as u32, evidence);
        tape.push_root(root);
        sample.meta.push(RecordMeta { line: 0, byte: 0, error: None });
        // A decimal's storage (INT64, FIXED_LEN_BYTE_ARRAY) can hold more
        // digits than its declared precision (pandas writes such files):
        // those values keep their text in a string version, which only the
        // rows can reveal.
        // A VARIANT's types are in its rows alone.
        let exact = !self.has_decimals && !self.variant.contains(&true);
        Some(Declaration { sample, rows: self.declared_rows, exact })
    }

    /// A VARIANT's types are in its rows alone; decimals are told by
    /// [`ParquetReader::decimals_fit`].
    fn declared_values_fit(&mut self) -> bool {
        !self.variant.contains(&true) && self.decimals_fit()
    }

    fn bytes_read(&self) -> u64 {
        // Parquet is read by column chunks; report the file size once done.
        if self.reader.is_none() {
            self.bytes
        } else {
            0
        }
    }
}

/// Rows per arrow batch: `wanted`, fewer when the rows are big, so that a
/// batch stays near [`BATCH_BYTES`] of decoded data (by the row groups'
/// uncompressed sizes): memory per batch follows the data, and very large
/// values come a few rows at a time.
fn rows_per_batch(meta: &ParquetMetaData, wanted: usize) -> usize {
    const BATCH_BYTES: u64 = 256 << 20;
    let (bytes, rows) = meta.row_groups().iter().fold((0u64, 0u64), |(b, r), g| {
        (b.saturating_add(g.total_byte_size().max(0) as u64), r.saturating_add(g.num_rows().max(0) as u64))
    });
    if rows == 0 {
        return wanted;
    }
    let per_row = (bytes / rows).max(1);
    wanted.min((BATCH_BYTES / per_row).max(1) as usize)
}

/// The metadata with the file-level row count set to the row groups' sum,
/// the count DuckDB and pyarrow read. Some writers leave the file-level
/// count at 0 (parquet-testing's repeated_no_annotation), and arrow-rs caps
/// its batch size by it: such a file would read as no rows at all.
fn with_row_group_total(m: ParquetMetaData) -> ParquetMetaData {
    let total: i64 = m.row_groups().iter().map(|g| g.num_rows().max(0)).fold(0, i64::saturating_add);
    let f = m.file_metadata();
    if f.num_rows() == total {
        return m;
    }
    let fixed = FileMetaData::new(
        f.version(),
        total,
        f.created_by().map(str::to_string),
        f.key_value_metadata().cloned(),
        f.schema_descr_ptr(),
        f.column_orders().cloned(),
    );
    ParquetMetaDataBuilder::new(fixed).set_row_groups(m.row_groups().to_vec()).build()
}

/// Runs a call into arrow-rs; a panic there (an assertion on corrupt data)
/// becomes its message, to be reported as bad input naming the file.
fn guarded<T>(f: impl FnOnce() -> T) -> std::result::Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown cause".to_string());
        format!("the Parquet decoder failed on corrupt data ({what})")
    })
}

/// The read type of one field, walking the Parquet leaf columns in the same
/// depth-first order as the Arrow fields: a Parquet ENUM (bytes to arrow-rs)
/// is read as text, and with `months` an INTERVAL is read as its months.
/// `found` is set when the field holds an INTERVAL.
fn hint_field<'a>(
    field: &FieldRef,
    leaves: &mut impl Iterator<Item = &'a ColumnDescPtr>,
    months: bool,
    found: &mut bool,
) -> FieldRef {
    let ty = match field.data_type() {
        DataType::List(f) => DataType::List(hint_field(f, leaves, months, found)),
        DataType::LargeList(f) => DataType::LargeList(hint_field(f, leaves, months, found)),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(hint_field(f, leaves, months, found), *n),
        DataType::Map(f, sorted) => DataType::Map(hint_field(f, leaves, months, found), *sorted),
        DataType::Struct(fields) => {
            DataType::Struct(fields.iter().map(|f| hint_field(f, leaves, months, found)).collect::<Fields>())
        }
        leaf => {
            let column = leaves.next();
            let is_enum = column.is_some_and(|c| {
                matches!(c.logical_type_ref(), Some(LogicalType::Enum)) || c.converted_type() == ConvertedType::ENUM
            });
            let is_int96 = column.is_some_and(|c| c.physical_type() == parquet::basic::Type::INT96);
            match leaf {
                // INT96 as nanoseconds overflows outside 1677-2262 and wraps
                // around in silence (Spark writes 9999-12-31): microseconds
                // hold every INT96 date DuckDB reads.
                DataType::Timestamp(TimeUnit::Nanosecond, tz) if is_int96 => {
                    DataType::Timestamp(TimeUnit::Microsecond, tz.clone())
                }
                // 64-bit offsets: a batch of big strings must not overflow
                // (where arrow-rs takes the hint; it does not inside MAP keys).
                DataType::Binary if is_enum => DataType::LargeUtf8,
                DataType::Utf8 => DataType::LargeUtf8,
                DataType::Binary => DataType::LargeBinary,
                DataType::Interval(_) => {
                    *found = true;
                    if months {
                        DataType::Interval(IntervalUnit::YearMonth)
                    } else {
                        leaf.clone()
                    }
                }
                _ => leaf.clone(),
            }
        }
    };
    if &ty == field.data_type() {
        field.clone()
    } else {
        Arc::new(field.as_ref().clone().with_data_type(ty))
    }
}

/// One column (or nested child) of a batch: its field, its values and, for
/// columns holding an INTERVAL, the same column read as months.
#[derive(Clone, Copy)]
struct Value<'a> {
    field: &'a Field,
    array: &'a ArrayRef,
    months: Option<&'a ArrayRef>,
}

fn declared(tape: &mut Tape, kind: Declared, bits: u64) -> bool {
    tape.nodes.push(Node::Declared { kind, bits });
    true
}

fn declared_int(tape: &mut Tape, kind: Declared, v: i64) -> bool {
    declared(tape, kind, v as u64)
}

/// A decimal with its unscaled value; wider than DuckDB's 38 digits (or a
/// negative scale) becomes its exact text.
fn write_decimal(
    tape: &mut Tape,
    precision: u8,
    scale: i8,
    unscaled: Option<i128>,
    text: impl FnOnce() -> String,
) -> bool {
    // A value with more digits than the declared precision (writers do not
    // all check) keeps its exact text: the probe gives it a string version.
    let fits = |v: i128| precision <= 38 && v.unsigned_abs() < 10u128.pow(u32::from(precision));
    match (Declared::decimal(precision as u32, scale as i32), unscaled) {
        (Some(_), Some(v)) if !fits(v) => push_text(tape, &text()),
        (Some(kind), Some(v)) if precision <= 18 => declared(tape, kind, v as i64 as u64),
        (Some(kind), Some(v)) => {
            let at = tape.push_bytes(&v.to_le_bytes());
            declared(tape, kind, at as u64)
        }
        _ => push_text(tape, &text()),
    }
}

fn write_bytes(tape: &mut Tape, kind: Declared, bytes: &[u8]) -> bool {
    let at = tape.push_bytes(bytes) as u64;
    let bits = if kind == Declared::Blob { at | (bytes.len() as u64) << 32 } else { at };
    declared(tape, kind, bits)
}

fn write_interval(tape: &mut Tape, months: i32, days: i32, micros: i64) -> bool {
    let mut b = [0u8; 16];
    b[..4].copy_from_slice(&months.to_le_bytes());
    b[4..8].copy_from_slice(&days.to_le_bytes());
    b[8..].copy_from_slice(&micros.to_le_bytes());
    write_bytes(tape, Declared::Interval, &b)
}

fn is_uuid(field: &Field) -> bool {
    field.extension_type_name() == Some("arrow.uuid")
}

/// Writes `array[row]` onto the tape; returns whether it is evidence (a
/// non-null scalar, or a container holding one).
fn write_value(v: Value<'_>, row: usize, tape: &mut Tape, scratch: &mut String) -> bool {
    let array = v.array;
    if array.is_null(row) {
        tape.push_null();
        return false;
    }
    let node = match array.data_type() {
        DataType::Null => Node::Null,
        DataType::Boolean => Node::Bool(array.as_boolean().value(row)),
        DataType::Int8 => {
            return declared_int(tape, Declared::Int8, array.as_primitive::<Int8Type>().value(row) as i64)
        }
        DataType::Int16 => {
            return declared_int(tape, Declared::Int16, array.as_primitive::<Int16Type>().value(row) as i64)
        }
        DataType::Int32 => {
            return declared_int(tape, Declared::Int32, array.as_primitive::<Int32Type>().value(row) as i64)
        }
        DataType::Int64 => Node::Int(array.as_primitive::<Int64Type>().value(row)),
        DataType::UInt8 => {
            return declared_int(tape, Declared::UInt8, array.as_primitive::<UInt8Type>().value(row) as i64)
        }
        DataType::UInt16 => {
            return declared_int(tape, Declared::UInt16, array.as_primitive::<UInt16Type>().value(row) as i64)
        }
        DataType::UInt32 => {
            return declared_int(tape, Declared::UInt32, array.as_primitive::<UInt32Type>().value(row) as i64)
        }
        DataType::UInt64 => return declared(tape, Declared::UInt64, array.as_primitive::<UInt64Type>().value(row)),
        // DuckDB reads FLOAT16 as FLOAT.
        DataType::Float16 => {
            let f = array.as_primitive::<Float16Type>().value(row).to_f32();
            return declared(tape, Declared::Float32, f.to_bits() as u64);
        }
        DataType::Float32 => {
            return declared(tape, Declared::Float32, array.as_primitive::<Float32Type>().value(row).to_bits() as u64)
        }
        DataType::Float64 => Node::Float(array.as_primitive::<Float64Type>().value(row)),
        DataType::Decimal32(p, s) => {
            let a = array.as_primitive::<Decimal32Type>();
            let v = a.value(row) as i128;
            return write_decimal(tape, *p, *s, Some(v), || unscaled_text(&v.to_string(), *s));
        }
        DataType::Decimal64(p, s) => {
            let a = array.as_primitive::<Decimal64Type>();
            let v = a.value(row) as i128;
            return write_decimal(tape, *p, *s, Some(v), || unscaled_text(&v.to_string(), *s));
        }
        DataType::Decimal128(p, s) => {
            let a = array.as_primitive::<Decimal128Type>();
            let v = a.value(row);
            return write_decimal(tape, *p, *s, Some(v), || unscaled_text(&v.to_string(), *s));
        }
        DataType::Decimal256(p, s) => {
            let a = array.as_primitive::<Decimal256Type>();
            let v = a.value(row);
            return write_decimal(tape, *p, *s, v.to_i128(), || unscaled_text(&v.to_string(), *s));
        }
        DataType::Utf8 => return push_text(tape, array.as_string::<i32>().value(row)),
        DataType::LargeUtf8 => return push_text(tape, array.as_string::<i64>().value(row)),
        DataType::Utf8View => return push_text(tape, array.as_string_view().value(row)),
        DataType::Binary => return write_bytes(tape, Declared::Blob, array.as_binary::<i32>().value(row)),
        DataType::LargeBinary => return write_bytes(tape, Declared::Blob, array.as_binary::<i64>().value(row)),
        DataType::BinaryView => return write_bytes(tape, Declared::Blob, array.as_binary_view().value(row)),
        DataType::FixedSizeBinary(16) if is_uuid(v.field) => {
            return write_bytes(tape, Declared::Uuid, array.as_fixed_size_binary().value(row))
        }
        DataType::FixedSizeBinary(_) => {
            return write_bytes(tape, Declared::Blob, array.as_fixed_size_binary().value(row))
        }
        DataType::Date32 => Node::Date(array.as_primitive::<Date32Type>().value(row)),
        DataType::Date64 => Node::Date(array.as_primitive::<Date64Type>().value(row).div_euclid(86_400_000) as i32),
        DataType::Time32(TimeUnit::Second) => {
            time_of_day(array.as_primitive::<Time32SecondType>().value(row) as i64 * 1_000_000_000)
        }
        DataType::Time32(_) => time_of_day(array.as_primitive::<Time32MillisecondType>().value(row) as i64 * 1_000_000),
        DataType::Time64(TimeUnit::Nanosecond) => time_of_day(array.as_primitive::<Time64NanosecondType>().value(row)),
        DataType::Time64(_) => {
            time_of_day(array.as_primitive::<Time64MicrosecondType>().value(row).saturating_mul(1_000))
        }
        DataType::Timestamp(unit, _) => {
            // Zoned and naive timestamps alike are instants in UTC here.
            let (value, unit) = match unit {
                TimeUnit::Second => (array.as_primitive::<TimestampSecondType>().value(row), Ticks::Seconds),
                TimeUnit::Millisecond => (array.as_primitive::<TimestampMillisecondType>().value(row), Ticks::Millis),
                TimeUnit::Microsecond => (array.as_primitive::<TimestampMicrosecondType>().value(row), Ticks::Micros),
                TimeUnit::Nanosecond => (array.as_primitive::<TimestampNanosecondType>().value(row), Ticks::Nanos),
            };
            Node::Timestamp { value, unit }
        }
        DataType::Interval(IntervalUnit::DayTime) => {
            let dt = array.as_primitive::<IntervalDayTimeType>().value(row);
            let months = v
                .months
                .filter(|m| m.data_type() == &DataType::Interval(IntervalUnit::YearMonth) && m.is_valid(row))
                .map(|m| m.as_primitive::<IntervalYearMonthType>().value(row))
                .unwrap_or(0);
            return write_interval(tape, months, dt.days, dt.milliseconds as i64 * 1_000);
        }
        DataType::Interval(IntervalUnit::YearMonth) => {
            return write_interval(tape, array.as_primitive::<IntervalYearMonthType>().value(row), 0, 0)
        }
        DataType::Interval(IntervalUnit::MonthDayNano) => {
            let x = array.as_primitive::<IntervalMonthDayNanoType>().value(row);
            return write_interval(tape, x.months, x.days, x.nanoseconds.div_euclid(1_000));
        }
        DataType::List(f) => {
            let months = v.months.map(|m| m.as_list::<i32>().value(row));
            return write_list(f, &array.as_list::<i32>().value(row), months.as_ref(), tape, scratch);
        }
        DataType::LargeList(f) => {
            let months = v.months.map(|m| m.as_list::<i64>().value(row));
            return write_list(f, &array.as_list::<i64>().value(row), months.as_ref(), tape, scratch);
        }
        DataType::FixedSizeList(f, _) => {
            let months = v.months.map(|m| m.as_fixed_size_list().value(row));
            return write_list(f, &array.as_fixed_size_list().value(row), months.as_ref(), tape, scratch);
        }
        DataType::Struct(fields) => {
            let s = array.as_struct();
            let months = v.months.map(|m| m.as_struct());
            let open = tape.open(true);
            let mut evidence = false;
            for (i, (field, column)) in fields.iter().zip(s.columns()).enumerate() {
                tape.push_key(field.name());
                let child = Value { field, array: column, months: months.map(|m| m.column(i)) };
                evidence |= write_value(child, row, tape, scratch);
            }
            tape.close(open, fields.len() as u32, evidence);
            return evidence;
        }
        DataType::Map(entry_field, _) => {
            let entries = array.as_map().value(row);
            let months = v.months.map(|m| m.as_map().value(row));
            let DataType::Struct(kv) = entry_field.data_type() else { return false };
            let open = tape.open_map();
            let mut evidence = false;
            for i in 0..entries.len() {
                let entry = tape.open(true);
                let mut e = false;
                for (c, name) in ["key", "value"].into_iter().enumerate() {
                    let (Some(field), Some(column)) = (kv.get(c), entries.columns().get(c)) else { continue };
                    tape.push_key(name);
                    let child = Value { field, array: column, months: months.as_ref().map(|m| m.column(c)) };
                    e |= write_value(child, i, tape, scratch);
                }
                tape.close(entry, kv.len().min(2) as u32, e);
                evidence |= e;
            }
            tape.close(open, entries.len() as u32, evidence);
            return evidence;
        }
        DataType::Dictionary(key_type, _) => {
            let d = array.as_any_dictionary();
            let Some(key) = dictionary_key(d.keys(), key_type, row) else {
                tape.push_null();
                return false;
            };
            return write_value(Value { field: v.field, array: d.values(), months: None }, key, tape, scratch);
        }
        _ => {
            // Durations and anything newer: their display text.
            scratch.clear();
            let formatter = arrow::util::display::ArrayFormatter::try_new(array.as_ref(), &Default::default());
            match formatter {
                Ok(f) => {
                    use std::fmt::Write;
                    let _ = write!(scratch, "{}", f.value(row));
                }
                Err(_) => scratch.push_str("<unsupported Parquet value>"),
            }
            let text = std::mem::take(scratch);
            let e = push_text(tape, &text);
            *scratch = text;
            return e;
        }
    };
    let evidence = !matches!(node, Node::Null);
    tape.nodes.push(node);
    evidence
}

/// Which top-level columns are VARIANT groups, by the Parquet schema's
/// logical type (arrow-rs reads them as plain structs). Matched by name:
/// arrow-rs leaves out empty groups, so positions may differ.
fn variant_columns(plain: &ArrowReaderMetadata) -> Vec<bool> {
    let roots = plain.parquet_schema().root_schema().get_fields();
    let is_variant = |name: &str| {
        roots.iter().any(|t| {
            t.name() == name && matches!(t.get_basic_info().logical_type_ref(), Some(LogicalType::Variant { .. }))
        })
    };
    plain
        .schema()
        .fields()
        .iter()
        .map(|f| matches!(f.data_type(), DataType::Struct(_)) && is_variant(f.name()))
        .collect()
}

/// A VARIANT column's value at a row, decoded; if its bytes do not follow
/// the Variant encoding, the raw `metadata`/`value` columns instead, so that
/// no byte is lost.
fn write_variant_or_raw(v: Value<'_>, row: usize, tape: &mut Tape, scratch: &mut String) -> bool {
    let (nodes, text, bytes) = (tape.nodes.len(), tape.text.len(), tape.bytes.len());
    let mut typed = |field: &Field, array: &ArrayRef, row: usize, tape: &mut Tape| {
        write_value(Value { field, array, months: None }, row, tape, scratch)
    };
    match variant::write_variant(v.array.as_struct(), row, tape, &mut typed) {
        Ok(evidence) => evidence,
        Err(_) => {
            tape.nodes.truncate(nodes);
            tape.text.truncate(text);
            tape.bytes.truncate(bytes);
            write_value(v, row, tape, scratch)
        }
    }
}

/// A value of the engine type that the field's type maps to (see the module
/// doc), for [`RecordReader::declaration`]. Null-typed columns
/// give NULL: they declare no type.
fn write_type_sample(field: &Field, tape: &mut Tape) -> bool {
    let node = match field.data_type() {
        DataType::Null => Node::Null,
        DataType::Boolean => Node::Bool(false),
        DataType::Int8 => return declared(tape, Declared::Int8, 0),
        DataType::Int16 => return declared(tape, Declared::Int16, 0),
        DataType::Int32 => return declared(tape, Declared::Int32, 0),
        DataType::UInt8 => return declared(tape, Declared::UInt8, 0),
        DataType::UInt16 => return declared(tape, Declared::UInt16, 0),
        DataType::UInt32 => return declared(tape, Declared::UInt32, 0),
        DataType::UInt64 => return declared(tape, Declared::UInt64, 0),
        DataType::Int64 => Node::Int(0),
        DataType::Float16 | DataType::Float32 => return declared(tape, Declared::Float32, 0),
        DataType::Float64 => Node::Float(0.0),
        DataType::Decimal32(p, s)
        | DataType::Decimal64(p, s)
        | DataType::Decimal128(p, s)
        | DataType::Decimal256(p, s) => return write_decimal(tape, *p, *s, Some(0), String::new),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
            return write_bytes(tape, Declared::Blob, &[])
        }
        DataType::FixedSizeBinary(16) if is_uuid(field) => return write_bytes(tape, Declared::Uuid, &[0; 16]),
        DataType::FixedSizeBinary(_) => return write_bytes(tape, Declared::Blob, &[]),
        DataType::Interval(_) => return write_interval(tape, 0, 0, 0),
        DataType::Date32 | DataType::Date64 => Node::Date(0),
        DataType::Time32(_) | DataType::Time64(_) => Node::Time(0),
        DataType::Timestamp(_, _) => Node::Timestamp { value: 0, unit: Ticks::Micros },
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            let open = tape.open(false);
            let evidence = write_type_sample(f, tape);
            tape.close(open, 1, evidence);
            return evidence;
        }
        DataType::Struct(fields) => {
            let open = tape.open(true);
            let mut evidence = false;
            for f in fields {
                tape.push_key(f.name());
                evidence |= write_type_sample(f, tape);
            }
            tape.close(open, fields.len() as u32, evidence);
            return evidence;
        }
        DataType::Map(entries, _) => {
            let DataType::Struct(kv) = entries.data_type() else { return false };
            let map = tape.open_map();
            let entry = tape.open(true);
            let mut evidence = false;
            for (name, f) in ["key", "value"].into_iter().zip(kv.iter()) {
                tape.push_key(name);
                evidence |= write_type_sample(f, tape);
            }
            tape.close(entry, kv.len().min(2) as u32, evidence);
            tape.close(map, 1, evidence);
            return evidence;
        }
        DataType::Dictionary(_, values) => {
            let inner = Field::new(field.name(), values.as_ref().clone(), true).with_metadata(field.metadata().clone());
            return write_type_sample(&inner, tape);
        }
        // Strings, wide decimals, durations: text.
        _ => return push_text(tape, ""),
    };
    let evidence = !matches!(node, Node::Null);
    tape.nodes.push(node);
    evidence
}

/// The dictionary index of `row` (one key, not all of them: this runs per value).
fn dictionary_key(keys: &dyn Array, key_type: &DataType, row: usize) -> Option<usize> {
    let k = match key_type {
        DataType::Int8 => keys.as_primitive::<Int8Type>().value(row) as i64,
        DataType::Int16 => keys.as_primitive::<Int16Type>().value(row) as i64,
        DataType::Int32 => keys.as_primitive::<Int32Type>().value(row) as i64,
        DataType::Int64 => keys.as_primitive::<Int64Type>().value(row),
        DataType::UInt8 => keys.as_primitive::<UInt8Type>().value(row) as i64,
        DataType::UInt16 => keys.as_primitive::<UInt16Type>().value(row) as i64,
        DataType::UInt32 => keys.as_primitive::<UInt32Type>().value(row) as i64,
        DataType::UInt64 => i64::try_from(keys.as_primitive::<UInt64Type>().value(row)).ok()?,
        _ => return None,
    };
    usize::try_from(k).ok()
}

/// A DECIMAL wider than 76 digits from its raw big-endian two's-complement
/// bytes, as its exact text (docs/formats.md: DuckDB's reader gives a
/// lossy DOUBLE here).
fn write_wide_decimal(array: &ArrayRef, row: usize, scale: i32, tape: &mut Tape) -> bool {
    if array.is_null(row) {
        tape.push_null();
        return false;
    }
    let bytes = match array.data_type() {
        DataType::Binary => array.as_binary::<i32>().value(row),
        DataType::LargeBinary => array.as_binary::<i64>().value(row),
        DataType::FixedSizeBinary(_) => array.as_fixed_size_binary().value(row),
        _ => {
            tape.push_null();
            return false;
        }
    };
    push_text(tape, &decimal_text(bytes, scale))
}

/// The decimal text of an unscaled big-endian two's-complement integer of
/// any width, with `scale` digits after the point.
fn decimal_text(bytes: &[u8], scale: i32) -> String {
    let negative = bytes.first().is_some_and(|b| b & 0x80 != 0);
    // The magnitude, as big-endian bytes.
    let mut mag: Vec<u8> = bytes.to_vec();
    if negative {
        let mut carry = true;
        for b in mag.iter_mut().rev() {
            *b = !*b;
            if carry {
                let (v, c) = b.overflowing_add(1);
                *b = v;
                carry = c;
            }
        }
    }
    // Repeated division by 10^9 gives base-10^9 limbs, least significant first.
    let mut limbs: Vec<u32> = Vec::new();
    let mut rest: Vec<u8> = mag.into_iter().skip_while(|b| *b == 0).collect();
    while !rest.is_empty() {
        let mut remainder: u64 = 0;
        for b in rest.iter_mut() {
            let cur = (remainder << 8) | u64::from(*b);
            *b = (cur / 1_000_000_000) as u8;
            remainder = cur % 1_000_000_000;
        }
        limbs.push(remainder as u32);
        let zeros = rest.iter().take_while(|b| **b == 0).count();
        rest.drain(..zeros);
    }
    let mut digits = match limbs.split_last() {
        None => "0".to_string(),
        Some((top, lower)) => {
            let mut d = top.to_string();
            for limb in lower.iter().rev() {
                d.push_str(&format!("{limb:09}"));
            }
            d
        }
    };
    if negative {
        digits.insert(0, '-');
    }
    unscaled_text(&digits, scale)
}

/// The decimal text of an unscaled integer written in base 10 (`-1234567`)
/// under `scale`: every digit is kept, and the point goes `scale` digits
/// from the right (a negative scale appends zeros). Arrow's
/// `value_as_string` is not used: it cuts the digits to the declared
/// precision, and a value with more digits than its precision (pandas
/// writes such files; they take a string version for that reason) came
/// out 10^k times too small.
fn unscaled_text(unscaled: &str, scale: impl Into<i32>) -> String {
    let scale: i32 = scale.into();
    let (sign, digits) = match unscaled.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", unscaled),
    };
    if scale <= 0 {
        let zeros = if digits == "0" { 0 } else { scale.unsigned_abs() as usize };
        return format!("{sign}{digits}{}", "0".repeat(zeros));
    }
    let scale = scale as usize;
    let padded = if digits.len() <= scale {
        format!("{}{digits}", "0".repeat(scale + 1 - digits.len()))
    } else {
        digits.to_string()
    };
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

/// A TIME value as nanoseconds of the day. Writers store times outside the
/// day (negative ones, from UTC-adjusted times of day west of UTC): they are
/// taken modulo 24 hours, as DuckDB's reader takes them, never emitted as an
/// invalid TIME.
fn time_of_day(nanos: i64) -> Node {
    Node::Time(nanos.rem_euclid(86_400_000_000_000))
}

/// A list is evidence when it has elements, even if all of them are NULL:
/// its declared type is known, and `[NULL]` must keep its length. Only
/// `[]` follows the empty-container rule (NULL).
fn write_list(
    field: &Field,
    values: &ArrayRef,
    months: Option<&ArrayRef>,
    tape: &mut Tape,
    scratch: &mut String,
) -> bool {
    let open = tape.open(false);
    for i in 0..values.len() {
        write_value(Value { field, array: values, months }, i, tape, scratch);
    }
    let evidence = !values.is_empty();
    tape.close(open, values.len() as u32, evidence);
    evidence
}

fn push_text(tape: &mut Tape, s: &str) -> bool {
    tape.push_string(s);
    true
}

#[cfg(test)]
mod tests {
    use super::{decimal_text, unscaled_text, write_value, Value};
    use crate::value::{Node, Tape};
    use arrow::array::{ArrayRef, Decimal128Array, Decimal256Array};
    use arrow::datatypes::{i256, Field};
    use std::sync::Arc;

    /// The text a decimal array's rows go on the tape as (None: not text).
    fn texts_of(array: ArrayRef) -> Vec<Option<String>> {
        let field = Field::new("d", array.data_type().clone(), true);
        let mut tape = Tape::default();
        let mut scratch = String::new();
        (0..array.len())
            .map(|row| {
                let at = tape.nodes.len();
                write_value(Value { field: &field, array: &array, months: None }, row, &mut tape, &mut scratch);
                match tape.nodes[at] {
                    Node::Str { start, len } => Some(tape.text_of(start, len).to_string()),
                    _ => None,
                }
            })
            .collect()
    }

    #[test]
    fn a_decimal_with_more_digits_than_its_precision_keeps_every_digit() {
        // DECIMAL(5, 2) holding 12345.67 and -987654.32 (pandas writes such
        // values): arrow's value_as_string gave 123.45 and -987.65.
        let array: ArrayRef = Arc::new(
            Decimal128Array::from(vec![1_234_567i128, -98_765_432, 12_345])
                .with_precision_and_scale(5, 2)
                .unwrap_or_else(|e| panic!("{e}")),
        );
        assert_eq!(texts_of(array), vec![Some("12345.67".into()), Some("-987654.32".into()), None]);
        // DECIMAL(36, 17) as in DuckDB's pandas_decimal.parquet.
        let big: i128 = 92_233_720_368_547_758_070_092_230_685_477_500_000;
        let array: ArrayRef = Arc::new(
            Decimal128Array::from(vec![big]).with_precision_and_scale(36, 17).unwrap_or_else(|e| panic!("{e}")),
        );
        assert_eq!(texts_of(array), vec![Some("922337203685477580700.92230685477500000".into())]);
        // Wider than i128, in a 256-bit decimal of precision 40.
        let wide = i256::from_i128(i128::MAX).wrapping_mul(i256::from_i128(1000));
        let array: ArrayRef = Arc::new(
            Decimal256Array::from(vec![wide]).with_precision_and_scale(40, 3).unwrap_or_else(|e| panic!("{e}")),
        );
        assert_eq!(texts_of(array), vec![Some(format!("{}.000", i128::MAX))]);
    }

    #[test]
    fn unscaled_text_places_the_point_without_dropping_digits() {
        assert_eq!(unscaled_text("1234567", 2), "12345.67");
        assert_eq!(unscaled_text("-5", 3), "-0.005");
        assert_eq!(unscaled_text("0", 2), "0.00");
        assert_eq!(unscaled_text("42", 0), "42");
        assert_eq!(unscaled_text("-42", -2), "-4200");
        assert_eq!(unscaled_text("0", -2), "0");
    }

    #[test]
    fn wide_decimals_are_exact_text() {
        assert_eq!(decimal_text(&[0x00, 0x32], 2), "0.50");
        assert_eq!(decimal_text(&[0xFF, 0xCE], 2), "-0.50");
        assert_eq!(decimal_text(&[0x01, 0x00], 0), "256");
        assert_eq!(decimal_text(&[], 3), "0.000");
        // 2^255 - 1 and -2^255: wider than any native integer.
        let mut max = vec![0xFFu8; 32];
        max[0] = 0x7F;
        assert_eq!(
            decimal_text(&max, 38),
            "578960446186580977117854925043439539266.34992332820282019728792003956564819967"
        );
        let mut min = vec![0u8; 32];
        min[0] = 0x80;
        assert_eq!(
            decimal_text(&min, 38),
            "-578960446186580977117854925043439539266.34992332820282019728792003956564819968"
        );
    }
}
