//! A bounds check of every page header of a Parquet file before arrow-rs
//! reads the pages.
//!
//! arrow-rs sizes its buffers by the page header's `uncompressed_page_size`
//! (a decompression buffer, and brotli's window besides), and Rust aborts the
//! process when an allocation fails: under an address-space limit a corrupt
//! header claiming a gigabyte kills the host (found by
//! `src/formats/parquet_fuzz.rs`). So each column chunk's pages are walked
//! first, reading headers only: a page must lie inside its chunk and the
//! chunk inside the file, and a page larger than [`CHECKED_PAGE_BYTES`] is
//! reserved fallibly first. What this process cannot allocate becomes an
//! error naming the file, before anything is allocated from it.

use std::fs::File;
use std::os::unix::fs::FileExt;

use parquet::file::metadata::ParquetMetaData;

use super::parquet_footer::page_header_sizes;

/// Pages up to this size are allocated without a trial reservation.
const CHECKED_PAGE_BYTES: i64 = 64 << 20;

/// Walks every page header of every column chunk.
pub fn check_pages(file: &File, file_len: u64, meta: &ParquetMetaData) -> Result<(), String> {
    for (g, group) in meta.row_groups().iter().enumerate() {
        for (c, column) in group.columns().iter().enumerate() {
            // As arrow-rs computes its byte range, without its assertion:
            // a negative offset or size is corrupt metadata, not a panic.
            let start = column.dictionary_page_offset().unwrap_or_else(|| column.data_page_offset());
            let (Ok(start), Ok(len)) = (u64::try_from(start), u64::try_from(column.compressed_size())) else {
                return Err(format!("column {} of row group {g} has a negative offset or size", column.column_path()));
            };
            let end = start.checked_add(len).filter(|e| *e <= file_len).ok_or_else(|| {
                format!(
                    "column {} of row group {g} claims bytes {start}..{} in a file of {file_len}",
                    column.column_path(),
                    start.saturating_add(len)
                )
            })?;
            check_chunk(file, start, end)
                .map_err(|e| format!("column {} of row group {g} (chunk {c}): {e}", column.column_path()))?;
        }
    }
    Ok(())
}

fn check_chunk(file: &File, start: u64, end: u64) -> Result<(), String> {
    let mut pos = start;
    let mut buf = Vec::new();
    while pos < end {
        let (header_len, uncompressed, compressed) = read_header(file, pos, end, &mut buf)?;
        if compressed < 0 || uncompressed < 0 {
            return Err(format!("a page at byte {pos} declares a negative size"));
        }
        let page_end = pos
            .checked_add(header_len as u64)
            .and_then(|p| p.checked_add(compressed as u64))
            .filter(|p| *p <= end)
            .ok_or_else(|| {
                format!("a page at byte {pos} of {compressed} bytes runs past its column chunk (ends at {end})")
            })?;
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
    Ok(())
}

/// Reads the page header at `pos`: its length and the two sizes. A header
/// is read in growing pieces (statistics can make it long), never past the
/// chunk.
fn read_header(file: &File, pos: u64, end: u64, buf: &mut Vec<u8>) -> Result<(usize, i64, i64), String> {
    let mut want = 4096u64;
    loop {
        let n = want.min(end - pos) as usize;
        buf.resize(n, 0);
        file.read_exact_at(buf, pos).map_err(|e| format!("reading a page header at byte {pos}: {e}"))?;
        match page_header_sizes(buf) {
            Ok(sizes) => return Ok(sizes),
            // The header is longer than what was read: read more.
            Err(e) if (e.contains("ends inside") || e.contains("remain")) && (n as u64) < end - pos => {
                want = want.saturating_mul(16)
            }
            Err(e) => return Err(format!("corrupt page header at byte {pos}: {e}")),
        }
    }
}
