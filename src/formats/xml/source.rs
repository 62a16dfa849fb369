//! The input as the XML reader sees it: bytes counted, newlines
//! remembered for line numbers, and the first character XML forbids found.

use std::collections::VecDeque;
use std::io::{self, Read};

/// The input as quick-xml sees it: counts the bytes taken from the source
/// and remembers where the not-yet-passed newlines are, so a record's line
/// can be told from its byte offset, and finds the first character XML
/// forbids. (A byte-order mark is the text decoder's to drop,
/// source/decode.rs: offsets count from the first byte after it.)
pub(super) struct Source<R> {
    inner: R,
    /// Bytes read from `inner`: the stream offset of the next byte.
    pub(super) raw: u64,
    /// Offsets of newlines handed out but not yet counted in `lines_before`.
    pub(super) newlines: VecDeque<u64>,
    lines_before: u64,
    /// The first character XML forbids anywhere in a document (a control
    /// character other than tab, LF and CR, or U+FFFE / U+FFFF): its
    /// stream offset and a description. quick-xml does not check it.
    pub(super) illegal: Option<(u64, String)>,
    /// Bytes of a possible U+FFFE/U+FFFF (EF BF BE/BF) split across reads.
    pending_ef: u8,
    /// Where the record (or, between records, the event) being read began:
    /// reading more than `window` bytes past it fails with [`TooLarge`], so
    /// quick-xml never buffers an event or the reader a row past
    /// `max_record_bytes` (plus one read-ahead buffer).
    pub(super) mark: u64,
    pub(super) window: u64,
}

/// The error [`Source`] reads fail with once a record outgrows its window.
#[derive(Debug)]
pub(super) struct TooLarge;

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a record is longer than max_record_bytes")
    }
}

impl std::error::Error for TooLarge {}

/// Whether `e` is [`Source`]'s [`TooLarge`].
pub(super) fn is_too_large(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<TooLarge>())
}

impl<R: Read> Source<R> {
    pub(super) fn new(inner: R) -> Self {
        Source {
            inner,
            raw: 0,
            newlines: VecDeque::new(),
            lines_before: 0,
            illegal: None,
            pending_ef: 0,
            mark: 0,
            window: u64::MAX,
        }
    }

    /// 1-based line of the byte at stream offset `pos`. Offsets must not
    /// decrease from call to call (earlier newlines are forgotten).
    pub(super) fn line_at(&mut self, pos: u64) -> u64 {
        while let Some(&nl) = self.newlines.front() {
            if nl >= pos {
                break;
            }
            self.newlines.pop_front();
            self.lines_before += 1;
        }
        self.lines_before + 1
    }
}

impl<R: Read> Read for Source<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // The first read hands out one byte. quick-xml drops a UTF-8 BOM it
        // sees in its first buffer, but the text decoder has already dropped
        // the file's BOM: a U+FEFF after it is a character (text before the
        // root element), and must not vanish only when the chunk size lets
        // quick-xml see its three bytes at once.
        if self.raw.saturating_sub(self.mark) > self.window {
            return Err(io::Error::other(TooLarge));
        }
        let want = if self.raw == 0 { buf.len().min(1) } else { buf.len() };
        let n = self.inner.read(&mut buf[..want])?;
        let base = self.raw;
        for i in memchr::memchr_iter(b'\n', &buf[..n]) {
            self.newlines.push_back(base + i as u64);
        }
        if self.illegal.is_none() {
            self.illegal = find_illegal_char(&buf[..n], &mut self.pending_ef)
                .map(|(i, what)| (base.saturating_add_signed(i), what));
        }
        self.raw += n as u64;
        Ok(n)
    }
}

/// The first character XML 1.0 forbids (production 2, Char): C0 controls
/// but tab, LF and CR, and the non-characters U+FFFE and U+FFFF. `pending`
/// carries how many bytes of `EF BF` ended the previous buffer. Returns the
/// offset of the character's first byte relative to `bytes` (negative when
/// it began in the previous buffer).
fn find_illegal_char(bytes: &[u8], pending: &mut u8) -> Option<(i64, String)> {
    for (i, &b) in bytes.iter().enumerate() {
        match (*pending, b) {
            (2, 0xBE | 0xBF) => {
                return Some((i as i64 - 2, format!("the non-character U+FFF{:X}", b - 0xB0)));
            }
            (1, 0xBF) => *pending = 2,
            (_, 0xEF) => *pending = 1,
            _ => *pending = 0,
        }
        if b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r') {
            return Some((i as i64, format!("the control character U+{b:04X}")));
        }
    }
    None
}
