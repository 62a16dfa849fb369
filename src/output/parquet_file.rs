//! One Parquet file written from a scan's chunks, published atomically:
//! rows go to a temporary file, and only a complete file reaches its final
//! path. Locally the temporary file sits in the target's directory and is
//! renamed over the target; for an object store it is staged in the spool
//! directory and uploaded in one multipart upload, which the store makes
//! visible only when it completes (source/upload.rs). A run killed midway
//! leaves at most a hidden `.<name>.<pid>-<time>-<n>.tmp` beside the target, never
//! a partial file at the final path; the next write into that directory
//! removes such files of processes that are gone ([`remove_stale_temps`]).
//!
//! A local temporary file is created and written through the scan's
//! opener: in the extension, DuckDB's file system, so a write is refused
//! where DuckDB's rules refuse `COPY ... TO` (`enable_external_access`,
//! `allowed_directories`, `disabled_filesystems`). A directory is created
//! only after DuckDB refused nothing but the directory's absence. The C
//! API has no rename, so the finished file is renamed with `std::fs`, within
//! the directory DuckDB allowed.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use arrow::datatypes::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, GzipLevel, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::schema::types::ColumnPath;

use super::arrow_batch::{arrow_schema, chunk_batch};
use crate::error::{Result, SanitizeError};
use crate::formats::byte_source::{ByteSink, FileOpener};
use crate::registry::PARQUET_REGISTRY_KEY;
use crate::scan::{Chunk, ScanPlan};
use crate::source::{file_uri_path, parse_remote, staging_root, upload_file};

/// Rows per row group at most: DuckDB's default `ROW_GROUP_SIZE`.
pub const ROW_GROUP_ROWS: usize = 122_880;

/// The codec of the written pages (`compression` of sanitize_pipeline).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParquetCompression {
    Zstd,
    Snappy,
    Gzip,
    Uncompressed,
}

impl ParquetCompression {
    pub const NAMES: &'static str = "'zstd', 'snappy', 'gzip' or 'uncompressed'";

    pub fn parse(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "zstd" => Some(Self::Zstd),
            "snappy" => Some(Self::Snappy),
            "gzip" => Some(Self::Gzip),
            "uncompressed" | "none" => Some(Self::Uncompressed),
            _ => None,
        }
    }

    fn codec(self) -> Compression {
        match self {
            // Level 3: zstd's own default, as DuckDB's writer uses it.
            Self::Zstd => Compression::ZSTD(ZstdLevel::try_new(3).unwrap_or_default()),
            Self::Snappy => Compression::SNAPPY,
            Self::Gzip => Compression::GZIP(GzipLevel::default()),
            Self::Uncompressed => Compression::UNCOMPRESSED,
        }
    }
}

/// A file written and published.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrittenFile {
    pub rows: u64,
    pub bytes: u64,
}

/// Where the finished file goes.
enum Target {
    Local(PathBuf),
    /// An object-store URI: uploaded from the temporary file.
    Remote(String),
}

/// An open Parquet file for one plan's rows. Dropping it unfinished
/// removes the temporary file: nothing reaches the target.
pub struct ParquetSink {
    target: Target,
    temp: PathBuf,
    /// Made at the first chunk, which decides the encodings
    /// ([`dictionary_choices`]); the file waits for it.
    writer: Option<ArrowWriter<BufWriter<CountedSink>>>,
    file: Option<CountedSink>,
    properties: Option<WriterProperties>,
    schema: SchemaRef,
    rows: u64,
}

/// Numbers temporary files within this process.
static TEMP_SEQUENCE: AtomicU64 = AtomicU64::new(0);

impl ParquetSink {
    /// Opens the temporary file for `output` (a local path, `file://` URI or
    /// object-store URI). The footer will carry the plan's registry under
    /// [`PARQUET_REGISTRY_KEY`].
    pub fn create(output: &str, plan: &ScanPlan, compression: ParquetCompression) -> Result<Self> {
        Self::create_with(output, plan, compression, &plan.run.opener)
    }

    /// [`ParquetSink::create`], the temporary file created by `opener`.
    pub fn create_with(
        output: &str,
        plan: &ScanPlan,
        compression: ParquetCompression,
        opener: &FileOpener,
    ) -> Result<Self> {
        let schema = arrow_schema(plan)?;
        let sequence = TEMP_SEQUENCE.fetch_add(1, Ordering::Relaxed);
        let (target, dir, name) = if let Some(uri) = parse_remote(output) {
            if uri.key.is_empty() || uri.key.ends_with('/') {
                let output = crate::source::display_uri(output);
                return Err(SanitizeError::options(format!("the output \"{output}\" names no object")));
            }
            let name = uri.key.rsplit('/').next().unwrap_or("part.parquet").to_string();
            let root = staging_root();
            std::fs::create_dir_all(&root).map_err(|e| {
                SanitizeError::io(format!("cannot create the spool directory \"{}\": {e}", root.display()))
            })?;
            (Target::Remote(output.to_string()), root, name)
        } else {
            if crate::source::is_remote_scheme(output) && file_uri_path(output).is_none() {
                let output = crate::source::display_uri(output);
                return Err(SanitizeError::options(format!(
                    "cannot write \"{output}\": outputs are local paths, file:// or object-store URIs (s3://, gs://, az://, ...)"
                )));
            }
            let local = PathBuf::from(file_uri_path(output).unwrap_or(output));
            let name = local
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .ok_or_else(|| SanitizeError::options(format!("the output \"{output}\" names no file")))?;
            let dir = local.parent().map(Path::to_path_buf).unwrap_or_default();
            (Target::Local(local), dir, name)
        };
        // The process, the time and a counter: a file a killed run left
        // (a container reuses its pid) never blocks the next run's.
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let temp = dir.join(temp_name(&name, std::process::id(), nanos, sequence));
        let file = match &target {
            // The spool is the extension's own directory.
            Target::Remote(_) => Box::new(File::options().write(true).create_new(true).open(&temp).map_err(|e| {
                SanitizeError::io(format!("cannot create the temporary file \"{}\": {e}", temp.display()))
            })?) as Box<dyn ByteSink>,
            Target::Local(_) => {
                let file = create_local(output, opener, &dir, &temp)?;
                // A killed run's leftovers go before this run adds its own
                // (the directory is one the file system lets us write).
                remove_stale_temps(&dir, crate::source::process_alive);
                file
            }
        };
        let file = CountedSink { inner: file, bytes: 0 };
        let properties = WriterProperties::builder()
            .set_dictionary_enabled(true)
            .set_compression(compression.codec())
            .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
            .set_writer_version(WriterVersion::PARQUET_1_0)
            // Standard names: lists `list`/`element`, maps `key_value`.
            .set_coerce_types(true)
            .set_key_value_metadata(Some(vec![KeyValue::new(
                PARQUET_REGISTRY_KEY.to_string(),
                plan.registry_json.clone(),
            )]))
            .set_created_by(format!("schema_sanitizer {}", env!("CARGO_PKG_VERSION")))
            .build();
        Ok(ParquetSink { target, temp, writer: None, file: Some(file), properties: Some(properties), schema, rows: 0 })
    }

    /// The Arrow writer, made at the first batch: a top-level column whose
    /// first batch is mostly distinct values is written PLAIN, without a
    /// dictionary (as DuckDB's writer decides by cardinality); a dictionary
    /// of unique values costs space and time and saves nothing.
    fn writer_for(&mut self, first: &arrow::array::RecordBatch) -> Result<&mut ArrowWriter<BufWriter<CountedSink>>> {
        if self.writer.is_none() {
            let (Some(file), Some(properties)) = (self.file.take(), self.properties.take()) else {
                return Err(SanitizeError::internal("a Parquet sink without its file"));
            };
            let mut builder = properties.into_builder();
            for (name, dictionary) in dictionary_choices(first) {
                builder = builder.set_column_dictionary_enabled(ColumnPath::from(name), dictionary);
            }
            let writer = ArrowWriter::try_new(
                BufWriter::with_capacity(1 << 20, file),
                self.schema.clone(),
                Some(builder.build()),
            )
            .map_err(|e| self.failed("cannot start the Parquet writer", &e))?;
            self.writer = Some(writer);
        }
        self.writer.as_mut().ok_or_else(|| SanitizeError::internal("a Parquet sink without its writer"))
    }

    fn failed(&self, what: &str, e: &dyn std::fmt::Display) -> SanitizeError {
        SanitizeError::io(format!("{what} (\"{}\"): {e}", self.temp.display()))
    }

    /// Appends a chunk's rows; `first`: it holds the file's first row.
    pub fn write(&mut self, plan: &ScanPlan, chunk: &Chunk, first: bool) -> Result<()> {
        let batch = chunk_batch(plan, &self.schema, chunk, first)?;
        if let Err(e) = self.writer_for(&batch)?.write(&batch) {
            return Err(self.failed("cannot write Parquet", &e));
        }
        self.rows += chunk.rows as u64;
        Ok(())
    }

    /// Completes the file (footer, flush, fsync) and publishes it at the
    /// target, replacing any file there.
    pub fn finish(mut self) -> Result<WrittenFile> {
        if self.writer.is_none() {
            // No row at all: the file still has the schema and the footer.
            let empty = arrow::array::RecordBatch::new_empty(self.schema.clone());
            self.writer_for(&empty)?;
        }
        let Some(writer) = self.writer.take() else {
            return Err(SanitizeError::internal("a Parquet sink finished twice"));
        };
        let buffered = writer.into_inner().map_err(|e| self.failed("cannot finish the Parquet file", &e))?;
        let mut file = buffered.into_inner().map_err(|e| self.failed("cannot flush the Parquet file", &e.error()))?;
        file.inner.sync().map_err(|e| self.failed("cannot sync the Parquet file", &e))?;
        let bytes = file.bytes;
        drop(file);
        match &self.target {
            Target::Local(path) => std::fs::rename(&self.temp, path).map_err(|e| {
                SanitizeError::io(format!("cannot move the finished file to \"{}\": {e}", path.display()))
            })?,
            Target::Remote(uri) => upload_file(&self.temp, uri)?,
        }
        Ok(WrittenFile { rows: self.rows, bytes })
    }
}

/// Creates the temporary file `temp` in `dir` through `opener`; when only
/// the directory is missing (the file system refused nothing else), the
/// directory is created and the file created again.
fn create_local(output: &str, opener: &FileOpener, dir: &Path, temp: &Path) -> Result<Box<dyn ByteSink>> {
    let temp_text = temp.to_string_lossy();
    let cannot =
        |e: std::io::Error| SanitizeError::io(format!("cannot create the temporary file \"{}\": {e}", temp.display()));
    match opener.create_new(&temp_text) {
        Ok(file) => Ok(file),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(if dir.as_os_str().is_empty() { Path::new(".") } else { dir })
                .map_err(|e| SanitizeError::io(format!("cannot create the directory of \"{output}\": {e}")))?;
            opener.create_new(&temp_text).map_err(cannot)
        }
        Err(e) => Err(cannot(e)),
    }
}

/// The file being written, counting its bytes (a file system's handle
/// may not report a size before it is closed).
struct CountedSink {
    inner: Box<dyn ByteSink>,
    bytes: u64,
}

impl Write for CountedSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The temporary name of the file `name` while this process writes it:
/// hidden, and ending in `.tmp` so that no `*.parquet` glob matches it
/// (DuckDB's `*` and `**` do match hidden files: `read_parquet('out/**/*.parquet')`
/// never sees it, `read_parquet('out/**')` would while a write runs).
fn temp_name(name: &str, pid: u32, nanos: u128, sequence: u64) -> String {
    format!(".{name}.{pid}-{nanos}-{sequence}.tmp")
}

/// The pid in a name [`temp_name`] made, or `None` for any other name.
fn temp_name_pid(file_name: &str) -> Option<u32> {
    let inner = file_name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (name, stamp) = inner.rsplit_once('.')?;
    let parts: Vec<&str> = stamp.split('-').collect();
    let numeric = |p: &&str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    if name.is_empty() || parts.len() != 3 || !parts.iter().all(numeric) {
        return None;
    }
    parts[0].parse().ok()
}

/// Removes from `dir` the temporary files of writers no longer alive (a
/// run killed midway): regular files named as [`temp_name`] names them,
/// whose pid `alive` says is gone (source/leftovers.rs).
fn remove_stale_temps(dir: &Path, alive: impl Fn(u32) -> Option<bool>) -> Vec<PathBuf> {
    crate::source::remove_left_by_dead(dir, temp_name_pid, crate::source::LeftoverKind::File, alive)
}

/// For each leaf column of the first batch (inside structs and lists
/// too): whether a dictionary pays, that is whether its values are few.
fn dictionary_choices(batch: &arrow::array::RecordBatch) -> Vec<(Vec<String>, bool)> {
    let mut out = Vec::new();
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        leaf_choices(vec![field.name().clone()], column.as_ref(), &mut out);
    }
    out
}

fn leaf_choices(path: Vec<String>, column: &dyn arrow::array::Array, out: &mut Vec<(Vec<String>, bool)>) {
    use arrow::array::AsArray;
    use arrow::datatypes::DataType;
    use std::collections::HashSet;
    let values = column.len() - column.null_count();
    let distinct = match column.data_type() {
        DataType::Struct(fields) => {
            for (f, child) in fields.iter().zip(column.as_struct().columns()) {
                let mut p = path.clone();
                p.push(f.name().clone());
                leaf_choices(p, child.as_ref(), out);
            }
            return;
        }
        // Standard 3-level lists: `<name>.list.element`.
        DataType::List(_) => {
            let mut p = path;
            p.extend(["list".to_string(), "element".to_string()]);
            leaf_choices(p, column.as_list::<i32>().values().as_ref(), out);
            return;
        }
        _ if values < 64 => return, // too few to judge
        DataType::Utf8 => column.as_string::<i32>().iter().flatten().collect::<HashSet<_>>().len(),
        DataType::Binary => column.as_binary::<i32>().iter().flatten().collect::<HashSet<_>>().len(),
        t if t.is_primitive() => {
            // The values' bytes, whatever the width.
            let data = column.to_data();
            let width = t.primitive_width().unwrap_or(1).max(1);
            let bytes = &data.buffers()[0].as_slice()[data.offset() * width..(data.offset() + data.len()) * width];
            bytes
                .chunks_exact(width)
                .enumerate()
                .filter(|(i, _)| data.is_valid(*i))
                .map(|(_, v)| v)
                .collect::<HashSet<_>>()
                .len()
        }
        _ => return,
    };
    out.push((path, (distinct as f64) <= DICTIONARY_MAX_DISTINCT_SHARE * values as f64));
}

/// Above this share of distinct values in the first batch, a column gets
/// no dictionary.
const DICTIONARY_MAX_DISTINCT_SHARE: f64 = 0.5;

impl Drop for ParquetSink {
    fn drop(&mut self) {
        // Unfinished, or uploaded: the temporary file goes (after a local
        // rename there is nothing left to remove).
        self.writer = None;
        self.file = None;
        let _ = std::fs::remove_file(&self.temp);
    }
}

#[cfg(test)]
mod temp_tests {
    use super::*;

    #[test]
    fn temporary_names_are_hidden_never_parquet_and_read_back() {
        let name = temp_name("part_20260601.parquet", 4242, 1_700_000_000_000_000_000, 7);
        assert_eq!(name, ".part_20260601.parquet.4242-1700000000000000000-7.tmp");
        assert!(name.starts_with('.') && !name.ends_with(".parquet"));
        assert_eq!(temp_name_pid(&name), Some(4242));
        // A name with dots and dashes of its own.
        assert_eq!(temp_name_pid(&temp_name("a-b.c-d.parquet", 1, 2, 3)), Some(1));
        for other in [
            "part_20260601.parquet",
            ".part_20260601.parquet",
            ".part.parquet.tmp",
            ".part.parquet.12-34.tmp",
            ".part.parquet.12-34-5-6.tmp",
            ".part.parquet.12-x4-5.tmp",
            "..12-34-5.tmp",
            "part.parquet.12-34-5.tmp",
            ".part.parquet.12-34-5.tmp~",
            ".part.parquet.99999999999-34-5.tmp",
        ] {
            assert_eq!(temp_name_pid(other), None, "{other}");
        }
    }

    #[test]
    fn only_temporary_files_of_dead_processes_are_removed() {
        let dir = std::env::temp_dir().join(format!(
            "ss-stale-temps-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let dead = temp_name("part_20260601.parquet", 11, 5, 0);
        let dead_other_stem = temp_name("events_20260601.parquet", 12, 5, 1);
        let live = temp_name("part_20260601.parquet", 21, 5, 2);
        let unknown = temp_name("part_20260601.parquet", 31, 5, 3);
        let keep = ["part_20260601.parquet", ".part_20260601.parquet", "notes.tmp", ".x.1-2.tmp", ".hidden"];
        for name in [dead.as_str(), dead_other_stem.as_str(), live.as_str(), unknown.as_str()].iter().chain(&keep) {
            std::fs::write(dir.join(name), b"x").unwrap();
        }
        // A directory of that name is never removed.
        let dead_dir = temp_name("d.parquet", 13, 5, 4);
        std::fs::create_dir(dir.join(&dead_dir)).unwrap();
        let alive = |pid: u32| match pid {
            11..=19 => Some(false),
            21..=29 => Some(true),
            _ => None,
        };
        let mut removed: Vec<String> = remove_stale_temps(&dir, alive)
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        removed.sort();
        let mut expected = vec![dead.clone(), dead_other_stem.clone()];
        expected.sort();
        assert_eq!(removed, expected);
        let mut left: Vec<String> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        left.sort();
        let mut expected_left: Vec<String> = keep.iter().map(|s| s.to_string()).collect();
        expected_left.extend([live, unknown, dead_dir]);
        expected_left.sort();
        assert_eq!(left, expected_left);
        // A directory that is not there: nothing to do.
        assert!(remove_stale_temps(&dir.join("missing"), alive).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn this_process_is_alive_and_a_reaped_child_is_not() {
        if crate::source::process_alive(std::process::id()).is_none() {
            return; // no /proc here: nothing is ever removed
        }
        assert_eq!(crate::source::process_alive(std::process::id()), Some(true));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert_eq!(crate::source::process_alive(pid), Some(false));
    }
}
