//! A bounds check of every page header of a Parquet file before arrow-rs
//! reads the pages.
//!
//! arrow-rs sizes its buffers by the page header's `uncompressed_page_size`
//! (a decompression buffer, and brotli's window besides), and Rust aborts the
//! process when an allocation fails: under an address-space limit a corrupt
//! header claiming a gigabyte kills the host (found by
//! `src/formats/parquet/fuzz.rs`). So each column chunk's pages are walked
//! first, reading headers only: a page must lie inside its chunk and the
//! chunk inside the file, and a page larger than [`CHECKED_PAGE_BYTES`] is
//! reserved fallibly first. What this process cannot allocate becomes an
//! error naming the file, before anything is allocated from it.
//!
//! One tolerance, as pyarrow has it: a chunk whose declared length ends
//! inside its last page (parquet-mr before 1.2.9 did not count the
//! dictionary page header, PARQUET-816) is given the length its pages have,
//! if those pages hold exactly the chunk's values, grow it by at most
//! [`MAX_GROWTH`] bytes (the size of a page header; pyarrow pads by as
//! much) and do not reach into the next chunk. Anything else that runs past
//! its chunk stays an error (DuckDB's page_size_corruption.parquet).

use crate::formats::byte_source::SharedSource;

use parquet::file::metadata::ParquetMetaData;

use crate::formats::parquet::footer::{page_header_info, ChunkLength};

/// The most a chunk may grow to hold its last page (see the module doc).
const MAX_GROWTH: u64 = 100;

/// Pages up to this size are allocated without a trial reservation.
const CHECKED_PAGE_BYTES: i64 = 64 << 20;

/// Walks every page header of every column chunk; returns the chunks whose
/// declared length must grow to their pages' (see the module doc).
/// `data_end` is where the footer begins.
pub fn check_pages(
    file: &SharedSource,
    data_end: u64,
    meta: &ParquetMetaData,
    max_page_bytes: u64,
    row_groups: Option<&[usize]>,
) -> Result<PageCheck, String> {
    let mut corrections = Vec::new();
    let mut patches = Vec::new();
    let legacy_v2 = writes_legacy_v2_pages(meta.file_metadata().created_by());
    // Where chunks begin: a grown chunk must end before the next one.
    let mut starts: Vec<u64> = meta
        .row_groups()
        .iter()
        .flat_map(|g| g.columns())
        .filter_map(|c| u64::try_from(c.dictionary_page_offset().unwrap_or_else(|| c.data_page_offset())).ok())
        .collect();
    starts.sort_unstable();
    for (g, group) in meta.row_groups().iter().enumerate() {
        // A reader of some row groups (a range of the file) reads only
        // theirs; they are in increasing order (a search, not a scan: a
        // file may have 32,767 row groups).
        if row_groups.is_some_and(|only| only.binary_search(&g).is_err()) {
            continue;
        }
        for (c, column) in group.columns().iter().enumerate() {
            // As arrow-rs computes its byte range, without its assertion:
            // a negative offset or size is corrupt metadata, not a panic.
            let start = column.dictionary_page_offset().unwrap_or_else(|| column.data_page_offset());
            let (Ok(start), Ok(len)) = (u64::try_from(start), u64::try_from(column.compressed_size())) else {
                return Err(format!("column {} of row group {g} has a negative offset or size", column.column_path()));
            };
            let end = start.checked_add(len).filter(|e| *e <= data_end).ok_or_else(|| {
                format!(
                    "column {} of row group {g} claims bytes {start}..{} but the data ends at byte {data_end}, where the footer begins",
                    column.column_path(),
                    start.saturating_add(len)
                )
            })?;
            let next = starts.iter().copied().find(|s| *s > start).unwrap_or(data_end).min(data_end);
            let limit = next.min(end.saturating_add(MAX_GROWTH)).max(end);
            let compressed = legacy_v2 && column.compression() != parquet::basic::Compression::UNCOMPRESSED;
            let patch = compressed.then_some(&mut patches);
            let grown = check_chunk(file, start, end, limit, column.num_values(), max_page_bytes, patch)
                .map_err(|e| format!("column {} of row group {g} (chunk {c}): {e}", column.column_path()))?;
            if let Some(pages_end) = grown {
                corrections.push(ChunkLength { row_group: g, column: c, length: (pages_end - start) as i64 });
            }
        }
    }
    Ok(PageCheck { corrections, patches })
}

/// What the page walk found besides errors.
#[derive(Debug, Default)]
pub struct PageCheck {
    /// Chunks whose declared length must grow to their pages'.
    pub corrections: Vec<ChunkLength>,
    /// File offsets of V2 page headers' `is_compressed = false` that are
    /// wrong (see [`writes_legacy_v2_pages`]): each byte becomes `true`.
    pub patches: Vec<u64>,
}

/// Whether `created_by` names parquet-cpp before 3.0, which compressed V2
/// data pages whole (levels included) while writing `is_compressed =
/// false` in their headers; Arrow C++ reads such pages as compressed for
/// these writers (ARROW-17100 in arrow-testing), and so do we.
fn writes_legacy_v2_pages(created_by: Option<&str>) -> bool {
    let Some(version) = created_by.and_then(|c| c.strip_prefix("parquet-cpp version ")) else { return false };
    version.split('.').next().and_then(|major| major.parse::<u32>().ok()).is_some_and(|major| major < 3)
}

/// Walks one chunk's pages; `Some(end)` when its last page ends past the
/// declared `end`, but not past `limit`, and the pages hold exactly
/// `num_values` values.
fn check_chunk(
    file: &SharedSource,
    start: u64,
    end: u64,
    limit: u64,
    num_values: i64,
    max_page_bytes: u64,
    mut patches: Option<&mut Vec<u64>>,
) -> Result<Option<u64>, String> {
    let mut pos = start;
    let mut buf = Vec::new();
    let mut values = 0i64;
    while pos < end {
        let header = read_header(file, pos, limit, &mut buf)?;
        let (header_len, uncompressed, compressed) = (header.header_len, header.uncompressed, header.compressed);
        if compressed < 0 || uncompressed < 0 {
            return Err(format!("a page at byte {pos} declares a negative size"));
        }
        values = values.saturating_add(header.values.unwrap_or(0));
        if let (Some(patches), Some(at)) = (patches.as_deref_mut(), header.v2_not_compressed_at) {
            patches.push(pos + at as u64);
        }
        // arrow-rs sizes a dictionary's buffers by its declared entries:
        // each takes at least one bit of the page (booleans, bit-packed),
        // so more than eight per byte is a lie that asks for gigabytes.
        if let Some(entries) = header.dictionary_values {
            if entries < 0 || entries > uncompressed.saturating_mul(8) {
                return Err(format!(
                    "a dictionary page at byte {pos} declares {entries} entries in {uncompressed} bytes"
                ));
            }
        }
        let runs_past =
            || format!("a page at byte {pos} of {compressed} bytes runs past its column chunk (ends at {end})");
        let page_end = pos
            .checked_add(header_len as u64)
            .and_then(|p| p.checked_add(compressed as u64))
            .filter(|p| *p <= limit)
            .ok_or_else(runs_past)?;
        if page_end > end && values != num_values {
            return Err(runs_past());
        }
        if uncompressed as u64 > max_page_bytes {
            return Err(format!(
                "a page at byte {pos} decompresses to {uncompressed} bytes, more than max_record_bytes allows for a page ({max_page_bytes} bytes, 64 records); pass a larger max_record_bytes to read it"
            ));
        }
        if uncompressed > CHECKED_PAGE_BYTES {
            // arrow-rs holds the decompressed page, for brotli a window of
            // the same size, and then the values it decodes from it: reserve
            // three times the page, and give it back at once.
            let want = (uncompressed as usize).saturating_mul(3);
            let mut trial: Vec<u8> = Vec::new();
            trial.try_reserve_exact(want).map_err(|_| {
                format!(
                    "a page at byte {pos} needs {uncompressed} bytes decompressed, more than this process can allocate"
                )
            })?;
        }
        pos = page_end;
    }
    Ok((pos > end).then_some(pos))
}

/// Reads the page header at `pos`: its length and the two sizes. A header
/// is read in growing pieces (statistics can make it long), never past the
/// chunk.
fn read_header(
    file: &SharedSource,
    pos: u64,
    end: u64,
    buf: &mut Vec<u8>,
) -> Result<crate::formats::parquet::footer::PageHeaderInfo, String> {
    let mut want = 4096u64;
    loop {
        let n = want.min(end - pos) as usize;
        buf.resize(n, 0);
        file.read_exact_at(buf, pos).map_err(|e| format!("reading a page header at byte {pos}: {e}"))?;
        match page_header_info(buf) {
            Ok(info) => return Ok(info),
            // The header is longer than what was read: read more.
            Err(e) if (e.contains("ends inside") || e.contains("remain")) && (n as u64) < end - pos => {
                want = want.saturating_mul(16)
            }
            Err(e) => return Err(format!("corrupt page header at byte {pos}: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_parquet_cpp_before_3_writes_legacy_v2_pages() {
        use super::writes_legacy_v2_pages as legacy;
        assert!(legacy(Some("parquet-cpp version 1.5.1-SNAPSHOT")));
        assert!(!legacy(Some("parquet-cpp version 3.0.0")));
        assert!(!legacy(Some("parquet-cpp-arrow version 14.0.1")));
        assert!(!legacy(Some("parquet-mr version 1.12.3")));
        assert!(!legacy(None));
    }
}
