//! Where a decoder's bytes come from. In the extension every file is opened
//! through DuckDB's own file system (src/ffi/files.rs), so that DuckDB's
//! rules apply as they do to `read_json`: `enable_external_access`,
//! `allowed_directories` and `allowed_paths`, `disabled_filesystems`, and
//! the file systems httpfs or Python register. The engine and its tests
//! open files with [`LocalFiles`] (`std::fs`).
//!
//! A [`ByteSource`] is read in order (`Read`) and repositioned (`Seek`) for
//! byte ranges; [`SharedSource`] gives one to readers that read at offsets
//! (Parquet's footer, page headers and column chunks) by seeking under a
//! lock, in large reads.

use std::io::{self, Read, Seek, SeekFrom, Write};
use std::sync::{Arc, Mutex};

/// An open file: read in order, repositioned by seeks, with a size.
pub trait ByteSource: Read + Seek + Send {
    /// The file's size in bytes, as its file system reports it.
    fn size(&mut self) -> io::Result<u64>;
}

impl ByteSource for std::fs::File {
    fn size(&mut self) -> io::Result<u64> {
        self.metadata().map(|m| m.len())
    }
}

/// Bytes already in memory (a remote file's tail).
impl ByteSource for io::Cursor<Vec<u8>> {
    fn size(&mut self) -> io::Result<u64> {
        Ok(self.get_ref().len() as u64)
    }
}

/// A file being written: bytes in order, then made durable.
pub trait ByteSink: Write + Send {
    /// Makes what was written durable (fsync).
    fn sync(&mut self) -> io::Result<()>;
}

impl ByteSink for std::fs::File {
    fn sync(&mut self) -> io::Result<()> {
        self.sync_all()
    }
}

/// Opens files by path: the one way a scan reaches a file's bytes, and the
/// one way the extension creates a file it writes.
pub trait Opener: Send + Sync {
    fn open(&self, path: &str) -> io::Result<Box<dyn ByteSource>>;
    /// Creates `path` for writing; an error if it exists already (an
    /// exclusive create), or if the file system refuses it. A missing
    /// directory is `NotFound`; a path the file system's rules refuse is
    /// `PermissionDenied`, checked before anything else.
    fn create_new(&self, path: &str) -> io::Result<Box<dyn ByteSink>>;
    /// What `sanitize_stats()` shows as the file system that served a scan.
    fn name(&self) -> &'static str;
    /// Whether it opens URIs of schemes object_store does not serve (a
    /// Python-registered fsspec file system's `memory://`, ...): DuckDB's
    /// file system does.
    fn serves_other_schemes(&self) -> bool {
        false
    }
    /// Whether a DuckDB extension that serves `scheme` (httpfs for `s3`,
    /// `gs`, `http`, ...; azure for `az`, `abfss`, ...) is loaded: then
    /// DuckDB's file system reads that scheme, with the user's secrets.
    fn serves_scheme(&self, _scheme: &str) -> bool {
        false
    }
}

/// `std::fs`: the engine's own files (staged copies of remote objects) and
/// every file in tests.
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalFiles;

impl Opener for LocalFiles {
    fn open(&self, path: &str) -> io::Result<Box<dyn ByteSource>> {
        Ok(Box::new(std::fs::File::open(path)?))
    }

    fn create_new(&self, path: &str) -> io::Result<Box<dyn ByteSink>> {
        Ok(Box::new(std::fs::File::options().write(true).create_new(true).open(path)?))
    }

    fn name(&self) -> &'static str {
        "local"
    }
}

/// The opener a scan uses, shared by its threads; `Debug` for `Options`.
#[derive(Clone)]
pub struct FileOpener(pub Arc<dyn Opener>);

impl Default for FileOpener {
    fn default() -> Self {
        FileOpener(Arc::new(LocalFiles))
    }
}

impl std::fmt::Debug for FileOpener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FileOpener({})", self.0.name())
    }
}

impl FileOpener {
    pub fn open(&self, path: &str) -> io::Result<Box<dyn ByteSource>> {
        self.0.open(path)
    }

    pub fn serves_other_schemes(&self) -> bool {
        self.0.serves_other_schemes()
    }

    pub fn create_new(&self, path: &str) -> io::Result<Box<dyn ByteSink>> {
        self.0.create_new(path)
    }

    pub fn serves_scheme(&self, scheme: &str) -> bool {
        self.0.serves_scheme(scheme)
    }

    /// What `sanitize_stats()` names as the file system of a local file.
    pub fn name(&self) -> &'static str {
        self.0.name()
    }

    /// Whether the file system lets a function reach `path`, a file or a
    /// directory (a glob stands for the directory before its first glob
    /// character), before anything there is listed, read or written: an
    /// error only when the file system refuses it (DuckDB's access rules:
    /// `enable_external_access` with `allowed_directories` and
    /// `allowed_paths`, `disabled_filesystems`). A directory is asked
    /// about through a name inside it, as DuckDB asks about a file there;
    /// that the name does not exist is no refusal.
    pub fn check_reach(&self, path: &str) -> io::Result<()> {
        let probe = reach_probe(path, std::path::Path::new(path).is_file());
        match self.open(&probe) {
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => Err(e),
            _ => Ok(()),
        }
    }
}

/// The name [`FileOpener::check_reach`] opens for `path`: the file itself,
/// or a name inside the directory (the part of a glob before its first
/// glob character, cut back to a directory).
fn reach_probe(path: &str, is_file: bool) -> String {
    const PROBE: &str = ".schema_sanitizer_access_check";
    if is_file {
        return path.to_string();
    }
    let dir = match path.find(['*', '?', '[', '{']) {
        Some(i) => &path[..path[..i].rfind('/').map_or(0, |j| j + 1)],
        None => path,
    };
    match dir {
        "" => PROBE.to_string(),
        d if d.ends_with('/') => format!("{d}{PROBE}"),
        d => format!("{d}/{PROBE}"),
    }
}

/// A source read at offsets by several holders: each read seeks and reads
/// under a lock. Parquet reads its footer, page headers and column chunks
/// this way (arrow-rs's `ChunkReader`).
#[derive(Clone)]
pub struct SharedSource {
    inner: Arc<Mutex<Box<dyn ByteSource>>>,
    len: u64,
}

impl SharedSource {
    pub fn new(mut source: Box<dyn ByteSource>) -> io::Result<Self> {
        let len = source.size()?;
        Ok(SharedSource { inner: Arc::new(Mutex::new(source)), len })
    }

    /// The file's size in bytes.
    pub fn size(&self) -> u64 {
        self.len
    }

    /// Fills `buf` from offset `pos`; an error when the file ends first.
    pub fn read_exact_at(&self, buf: &mut [u8], pos: u64) -> io::Result<()> {
        let mut source = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        source.seek(SeekFrom::Start(pos))?;
        source.read_exact(buf)
    }

    /// Up to `buf.len()` bytes from offset `pos`; fewer only at the end.
    pub fn read_at(&self, buf: &mut [u8], pos: u64) -> io::Result<usize> {
        let mut source = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        source.seek(SeekFrom::Start(pos))?;
        let mut filled = 0;
        while filled < buf.len() {
            match source.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(filled)
    }

    /// A reader from offset `start` on, reading through the lock in
    /// blocks that grow from [`FIRST_READ_BLOCK`] to [`READ_BLOCK`] bytes.
    pub fn reader_at(&self, start: u64) -> SharedReader {
        SharedReader { source: self.clone(), pos: start, buf: Vec::new(), at: 0, block: FIRST_READ_BLOCK }
    }
}

/// The size of the reads a [`SharedReader`] grows to: large, so that a file
/// system with a cost per call (DuckDB's, a remote one) is called rarely.
pub const READ_BLOCK: usize = 1 << 20;

/// The size of a [`SharedReader`]'s first read, doubled at each read after
/// it: arrow-rs opens a reader for each page header, and a header is tens of
/// bytes, so a first read of `READ_BLOCK` read (and zeroed) a MiB per page
/// of a file of many small row groups (32,000 row groups took 10 s, not 1).
pub const FIRST_READ_BLOCK: usize = 8 << 10;

/// Reads a [`SharedSource`] in order from an offset.
pub struct SharedReader {
    source: SharedSource,
    pos: u64,
    buf: Vec<u8>,
    at: usize,
    /// The size of the next read.
    block: usize,
}

impl Read for SharedReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.at == self.buf.len() {
            let left = self.source.len.saturating_sub(self.pos);
            if left == 0 {
                return Ok(0);
            }
            let want = self.block.min(left as usize).max(1);
            self.block = (self.block * 2).min(READ_BLOCK);
            self.buf.resize(want, 0);
            let n = self.source.read_at(&mut self.buf, self.pos)?;
            self.buf.truncate(n);
            self.pos += n as u64;
            self.at = 0;
            if n == 0 {
                return Ok(0);
            }
        }
        let n = out.len().min(self.buf.len() - self.at);
        out[..n].copy_from_slice(&self.buf[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

impl parquet::file::reader::Length for SharedSource {
    fn len(&self) -> u64 {
        self.len
    }
}

impl parquet::file::reader::ChunkReader for SharedSource {
    type T = SharedReader;

    fn get_read(&self, start: u64) -> parquet::errors::Result<SharedReader> {
        Ok(self.reader_at(start))
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<bytes::Bytes> {
        let mut buf = Vec::new();
        buf.try_reserve_exact(length).map_err(|_| {
            parquet::errors::ParquetError::General(format!("cannot allocate {length} bytes for a column chunk"))
        })?;
        buf.resize(length, 0);
        self.read_exact_at(&mut buf, start).map_err(|e| parquet::errors::ParquetError::External(Box::new(e)))?;
        Ok(bytes::Bytes::from(buf))
    }
}

/// A [`SharedSource`] whose bytes at a few offsets read as `1`-flagged
/// values instead: a Parquet page header's short-form boolean field byte
/// `0x12` (false) becomes `0x11` (true), the same length, so no offset
/// moves. Used for V2 page headers that wrongly say their page is not
/// compressed (formats/parquet/pages.rs).
#[derive(Clone)]
pub struct PatchedSource {
    inner: SharedSource,
    /// Sorted file offsets of the bytes to set to true.
    patches: Arc<Vec<u64>>,
}

impl PatchedSource {
    pub fn new(inner: SharedSource, mut patches: Vec<u64>) -> Self {
        patches.sort_unstable();
        PatchedSource { inner, patches: Arc::new(patches) }
    }

    /// Applies the patches that fall in `buf`, which holds the bytes from `pos`.
    fn apply(&self, buf: &mut [u8], pos: u64) {
        let end = pos + buf.len() as u64;
        let first = self.patches.partition_point(|&p| p < pos);
        for &at in self.patches[first..].iter().take_while(|&&p| p < end) {
            let b = &mut buf[(at - pos) as usize];
            if *b == 0x12 {
                *b = 0x11;
            }
        }
    }
}

/// Reads a [`PatchedSource`] in order from an offset.
pub struct PatchedReader {
    source: PatchedSource,
    inner: SharedReader,
    pos: u64,
}

impl Read for PatchedReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(out)?;
        self.source.apply(&mut out[..n], self.pos);
        self.pos += n as u64;
        Ok(n)
    }
}

impl parquet::file::reader::Length for PatchedSource {
    fn len(&self) -> u64 {
        self.inner.len
    }
}

impl parquet::file::reader::ChunkReader for PatchedSource {
    type T = PatchedReader;

    fn get_read(&self, start: u64) -> parquet::errors::Result<PatchedReader> {
        Ok(PatchedReader { source: self.clone(), inner: self.inner.reader_at(start), pos: start })
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<bytes::Bytes> {
        let bytes = parquet::file::reader::ChunkReader::get_bytes(&self.inner, start, length)?;
        if self.patches.is_empty() {
            return Ok(bytes);
        }
        let mut owned = bytes.to_vec();
        self.apply(&mut owned, start);
        Ok(bytes::Bytes::from(owned))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source that counts the bytes it serves.
    struct Counted(io::Cursor<Vec<u8>>, Arc<std::sync::atomic::AtomicUsize>);

    impl Read for Counted {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.0.read(buf)?;
            self.1.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
            Ok(n)
        }
    }

    impl Seek for Counted {
        fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
            self.0.seek(pos)
        }
    }

    impl ByteSource for Counted {
        fn size(&mut self) -> io::Result<u64> {
            Ok(self.0.get_ref().len() as u64)
        }
    }

    #[test]
    fn a_short_read_fetches_a_small_block_and_long_reads_grow_to_the_large_one() {
        let served = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let bytes: Vec<u8> = (0..8 << 20).map(|i| (i % 251) as u8).collect();
        let source = SharedSource::new(Box::new(Counted(io::Cursor::new(bytes.clone()), Arc::clone(&served)))).unwrap();
        let count = || served.load(std::sync::atomic::Ordering::Relaxed);
        // A page header: tens of bytes from a fresh reader.
        let mut header = [0u8; 40];
        source.reader_at(1000).read_exact(&mut header).unwrap();
        assert_eq!(&header[..], &bytes[1000..1040]);
        assert!(count() <= 16 << 10, "a short read fetched {} bytes", count());
        // A long read: the blocks double up to READ_BLOCK, so 4 MiB takes
        // few calls and the bytes are the file's.
        let mut long = vec![0u8; 4 << 20];
        let mut reader = source.reader_at(5);
        reader.read_exact(&mut long).unwrap();
        assert_eq!(&long[..], &bytes[5..5 + (4 << 20)]);
        assert!(reader.block == READ_BLOCK, "the blocks grew to READ_BLOCK");
        assert!(count() < (4 << 20) + READ_BLOCK + (16 << 10), "no block read twice");
    }

    #[test]
    fn reach_is_asked_of_a_name_inside_the_directory() {
        assert_eq!(reach_probe("lake", false), "lake/.schema_sanitizer_access_check");
        assert_eq!(reach_probe("lake/", false), "lake/.schema_sanitizer_access_check");
        assert_eq!(reach_probe("/in/day=*/x.jsonl", false), "/in/.schema_sanitizer_access_check");
        assert_eq!(reach_probe("*.jsonl", false), ".schema_sanitizer_access_check");
        assert_eq!(reach_probe("/in/a.jsonl", true), "/in/a.jsonl");
    }
    use proptest::prelude::*;

    /// An in-memory file that gives at most `step` bytes a read, as a file
    /// system with short reads does.
    struct ShortReads {
        data: Vec<u8>,
        pos: u64,
        step: usize,
    }

    impl Read for ShortReads {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let start = (self.pos as usize).min(self.data.len());
            let n = out.len().min(self.step).min(self.data.len() - start);
            out[..n].copy_from_slice(&self.data[start..start + n]);
            self.pos += n as u64;
            Ok(n)
        }
    }

    impl Seek for ShortReads {
        fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
            self.pos = match to {
                SeekFrom::Start(p) => p,
                SeekFrom::End(d) => (self.data.len() as i64 + d) as u64,
                SeekFrom::Current(d) => (self.pos as i64 + d) as u64,
            };
            Ok(self.pos)
        }
    }

    impl ByteSource for ShortReads {
        fn size(&mut self) -> io::Result<u64> {
            Ok(self.data.len() as u64)
        }
    }

    proptest! {
        /// For any split of a file into ranges, reading each range through
        /// the shared adapter (with short reads) gives the bytes std::fs
        /// gives for it.
        #[test]
        fn ranges_read_through_the_adapter_are_the_files_bytes(
            data in prop::collection::vec(any::<u8>(), 0..3000),
            cuts in prop::collection::vec(0usize..3000, 0..6),
            step in 1usize..700,
        ) {
            let dir = std::env::temp_dir().join(format!("ss-bytes-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join(format!("f-{}", data.len()));
            std::fs::write(&path, &data).unwrap();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(data.len())).collect();
            cuts.push(0);
            cuts.push(data.len());
            cuts.sort_unstable();
            let shared = SharedSource::new(Box::new(ShortReads { data: data.clone(), pos: 0, step })).unwrap();
            let mut file = std::fs::File::open(&path).unwrap();
            for pair in cuts.windows(2) {
                let (start, end) = (pair[0], pair[1]);
                let mut want = vec![0u8; end - start];
                file.seek(SeekFrom::Start(start as u64)).unwrap();
                file.read_exact(&mut want).unwrap();
                let mut got = vec![0u8; end - start];
                shared.read_exact_at(&mut got, start as u64).unwrap();
                prop_assert_eq!(&got, &want);
                let mut streamed = Vec::new();
                shared.reader_at(start as u64).take((end - start) as u64).read_to_end(&mut streamed).unwrap();
                prop_assert_eq!(&streamed, &want);
                let bytes = parquet::file::reader::ChunkReader::get_bytes(&shared, start as u64, end - start).unwrap();
                prop_assert_eq!(&bytes[..], &want[..]);
            }
            let _ = std::fs::remove_file(&path);
        }
    }
}
