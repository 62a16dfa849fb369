//! The units of parallel work: the input cut into ranges, in input order.
//!
//! A range is a whole file, or, inside a local uncompressed UTF-8 JSON
//! Lines or CSV file, a byte range that owns the records *starting* in it
//! (a record that crosses the range's end is read to its end by this range;
//! the next range skips it), or, inside a local Parquet file, a byte range
//! that owns the row groups starting in it (formats/parquet
//! `RowGroupSlice`). Ranges are decoded by several threads but consumed in
//! range order (scan/ordered.rs), so the rows, their order, the
//! registry, the drifts and the first bad record are what a sequential read
//! gives, whatever the thread count or the range size.

use crate::options::{Compression, InputFormat, Options, TextEncoding};

/// One unit of work: `file` (index into the plan's files) from byte
/// `start` to byte `end` (exclusive; `None`: to the end of the file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub file: usize,
    pub start: u64,
    pub end: Option<u64>,
}

impl Range {
    fn whole(file: usize) -> Self {
        Range { file, start: 0, end: None }
    }

    /// True for a byte range of a file cut into several.
    pub fn is_split(&self) -> bool {
        self.start > 0 || self.end.is_some()
    }
}

/// Range size when `scan_range_bytes` is not given: a file is cut into
/// about sixteen ranges per thread, each between these bounds. Small ranges
/// balance the threads (the consumer works a range it took on alone, so a
/// large one would be a stretch without parallelism; docs/performance.md
/// "Notes on the figures" measured 2 MB ranges 1.3x faster than 20 MB ones
/// at 2 threads); 1 MiB keeps opening a range negligible next to reading
/// it.
const AUTO_MIN_RANGE_BYTES: u64 = 1 << 20;
const AUTO_MAX_RANGE_BYTES: u64 = 8 << 20;
const AUTO_RANGES_PER_THREAD: u64 = 16;

/// The most ranges one file is cut into, whatever `scan_range_bytes` says.
const MAX_RANGES_PER_FILE: u64 = 1 << 16;

/// A Parquet range reads the file's footer and its row groups' page
/// headers again, and a row group (DuckDB writes 122,880 rows, other
/// writers up to 128 MiB) is the smallest unit there is: a Parquet file is
/// cut into at most two ranges per thread, none under 8 MiB.
const PARQUET_RANGES_PER_THREAD: u64 = 2;
const PARQUET_MIN_RANGE_BYTES: u64 = 8 << 20;

/// Whether the files of this scan may be cut inside: JSON Lines (a line
/// end is a record boundary that needs no parsing to find) and CSV (a range
/// guesses its first record's start, and the guess is checked:
/// formats/csv/range.rs), not compressed (a compressed stream can only be
/// read from its start), and UTF-8 (a byte `\n` is a line end; UTF-16
/// would need the decoder).
/// Parquet files, whose row groups are the units, are cut too (locally:
/// their size must be known).
pub fn splittable(options: &Options, name: &str) -> bool {
    if options.input_format == InputFormat::Parquet {
        return true;
    }
    matches!(options.input_format, InputFormat::Jsonl | InputFormat::Ndjson | InputFormat::Csv)
        && options.compression.of_file(name) == Compression::None
        && options.input_text_encoding == TextEncoding::Utf8
}

/// The size of the ranges a file of `size` bytes is cut into.
fn range_step(size: u64, range_bytes: Option<u64>, threads: usize, row_groups: bool) -> u64 {
    let threads = threads.max(1) as u64;
    let step = if row_groups {
        range_bytes.unwrap_or(0).max(size.div_ceil(PARQUET_RANGES_PER_THREAD * threads)).max(PARQUET_MIN_RANGE_BYTES)
    } else {
        range_bytes.unwrap_or_else(|| {
            (size / (AUTO_RANGES_PER_THREAD * threads)).clamp(AUTO_MIN_RANGE_BYTES, AUTO_MAX_RANGE_BYTES)
        })
    };
    // At most MAX_RANGES_PER_FILE ranges: a tiny `scan_range_bytes` on a
    // large file would otherwise cost a range record (and a queue slot)
    // per few bytes.
    step.max(1).max(size.div_ceil(MAX_RANGES_PER_FILE))
}

/// Whether [`plan_ranges`] would cut a cuttable file of `size` bytes: a
/// file that stays whole needs no look at its bytes to decide (for many
/// small files, that look was an open and a read each at bind).
pub fn would_cut(size: u64, range_bytes: Option<u64>, threads: usize, row_groups: bool) -> bool {
    size > range_step(size, range_bytes, threads, row_groups)
}

/// The ranges of `files` (with their sizes, `None` when unknown, and
/// whether each may be cut), in input order; `row_groups`: the files are
/// Parquet, cut more coarsely.
pub fn plan_ranges(
    sizes: &[(Option<u64>, bool)],
    range_bytes: Option<u64>,
    threads: usize,
    row_groups: bool,
) -> Vec<Range> {
    let mut ranges = Vec::with_capacity(sizes.len());
    for (file, &(size, cuttable)) in sizes.iter().enumerate() {
        let Some(size) = size.filter(|_| cuttable) else {
            ranges.push(Range::whole(file));
            continue;
        };
        let step = range_step(size, range_bytes, threads, row_groups);
        if size <= step {
            ranges.push(Range::whole(file));
            continue;
        }
        let mut start = 0;
        while start < size {
            let end = start.saturating_add(step);
            ranges.push(Range { file, start, end: (end < size).then_some(end) });
            start = end;
        }
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_files_unless_cuttable_and_larger_than_a_range() {
        let r = plan_ranges(&[(Some(10), false), (None, true), (Some(5), true)], Some(5), 2, false);
        assert_eq!(r, [Range::whole(0), Range::whole(1), Range::whole(2)]);
    }

    #[test]
    fn cut_ranges_cover_the_file_in_order_and_the_last_runs_to_the_end() {
        let r = plan_ranges(&[(Some(11), true)], Some(4), 2, false);
        assert_eq!(
            r,
            [
                Range { file: 0, start: 0, end: Some(4) },
                Range { file: 0, start: 4, end: Some(8) },
                Range { file: 0, start: 8, end: None },
            ]
        );
        assert!(r.iter().all(Range::is_split));
    }

    #[test]
    fn auto_size_spreads_a_file_over_the_threads_within_bounds() {
        let size = 64u64 << 20;
        let r = plan_ranges(&[(Some(size), true)], None, 2, false);
        assert_eq!(r.len(), 32, "sixteen ranges per thread");
        let r = plan_ranges(&[(Some(size), true)], None, 64, false);
        assert_eq!(r.len(), 64, "no range below 1 MiB");
        let r = plan_ranges(&[(Some(16 * size), true)], None, 1, false);
        assert_eq!(r.len(), 128, "no range above 8 MiB");
        let r = plan_ranges(&[(Some(1 << 20), true)], None, 8, false);
        assert_eq!(r.len(), 1, "a file below the smallest range stays whole");
        let r = plan_ranges(&[(Some(1 << 30), true)], Some(1), 8, false);
        assert_eq!(r.len() as u64, MAX_RANGES_PER_FILE, "a tiny range size is capped by the count");
    }

    #[test]
    fn parquet_files_are_cut_into_at_most_two_ranges_per_thread_of_8_mib_or_more() {
        let size = 100u64 << 20;
        assert_eq!(plan_ranges(&[(Some(size), true)], None, 2, true).len(), 4);
        assert_eq!(plan_ranges(&[(Some(size), true)], Some(1), 2, true).len(), 4, "scan_range_bytes cannot cut finer");
        assert_eq!(plan_ranges(&[(Some(size), true)], None, 64, true).len(), 13, "none under 8 MiB");
        assert_eq!(plan_ranges(&[(Some(8 << 20), true)], None, 8, true).len(), 1);
        let r = plan_ranges(&[(Some(size), true)], None, 2, true);
        assert_eq!(r.last().map(|r| r.end), Some(None), "the last range runs to the end");
        assert!(r.windows(2).all(|w| w[0].end == Some(w[1].start)), "the ranges cover the file");
    }

    #[test]
    fn would_cut_agrees_with_the_plan() {
        for size in [0u64, 1, 1 << 20, (1 << 20) + 1, 9 << 20, 100 << 20] {
            for (bytes, threads, row_groups) in
                [(None, 2, false), (Some(7), 8, false), (None, 2, true), (Some(1), 64, true)]
            {
                let planned = plan_ranges(&[(Some(size), true)], bytes, threads, row_groups).len() > 1;
                assert_eq!(would_cut(size, bytes, threads, row_groups), planned, "size {size}, {bytes:?}, {threads}");
            }
        }
    }
}
