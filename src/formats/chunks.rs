//! Chunked reading shared by the text decoders: input is read
//! `read_chunk_bytes` at a time into one buffer whose consumed prefix is
//! dropped before the next read, so a decoder holds at most its current
//! record plus one chunk.

use std::io::Read;
use std::ops::Deref;

use crate::error::{Result, SanitizeError};

pub struct Chunks<R: Read> {
    reader: R,
    pub file: String,
    chunk_bytes: usize,
    pub buf: Filled,
    /// Bytes of `buf` before this are consumed.
    pub start: usize,
    pub eof: bool,
    /// Raw bytes read from the source so far.
    pub bytes_read: u64,
    /// A read error that came after some bytes of a chunk, reported by the
    /// next [`Chunks::fill`].
    failed: Option<std::io::Error>,
}

/// The bytes read and not yet dropped (it reads as that slice), kept in
/// storage that stays initialized past them: a fill reads into that room
/// as it is, so the room is zeroed when the storage grows, not before
/// every read. A reader that only implements `read`, as DuckDB's files
/// and our decoding wrappers do, has `read_to_end` zero the room of every
/// chunk before it reads into it.
///
/// The first fill offers [`FIRST_READ`] bytes and doubles the offer while
/// reads fill it, as `read_to_end` does, so a small file zeroes and
/// touches about its own size, not a chunk. The storage is reserved once
/// with room for a chunk and a quarter more (at most [`KEPT_RESERVE`]) for
/// the partial record a fill keeps, so that the second fill does not move
/// the first chunk to a new allocation.
#[derive(Default)]
pub struct Filled {
    store: Vec<u8>,
    end: usize,
}

impl Deref for Filled {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.store[..self.end]
    }
}

impl Filled {
    /// Bytes the storage holds, read or not.
    #[cfg(test)]
    pub fn capacity(&self) -> usize {
        self.store.capacity()
    }

    /// Drops the first `n` bytes, moving the rest to the front.
    fn drop_front(&mut self, n: usize) {
        self.store.copy_within(n..self.end, 0);
        self.end -= n;
    }

    /// Room from the filled bytes up to `end`, zeroed only where the
    /// storage grows; the first call reserves for `chunk` bytes and the
    /// partial record a fill keeps.
    fn room_to(&mut self, end: usize, chunk: usize) -> &mut [u8] {
        if self.store.capacity() == 0 {
            self.store.reserve_exact(chunk.saturating_add((chunk / 4).min(KEPT_RESERVE)));
        }
        if self.store.len() < end {
            self.store.resize(end, 0);
        }
        &mut self.store[self.end..end]
    }
}

/// The first read of a buffer's first fill (`read_to_end`'s first read).
const FIRST_READ: usize = 8 << 10;

/// The most reserved past a chunk for the partial record a fill keeps, so
/// that a chunk of up to 1 GiB (`read_chunk_bytes`) reserves 64 KiB more,
/// not a quarter of a GiB; a larger partial record grows the storage as
/// any `Vec` grows.
const KEPT_RESERVE: usize = 64 << 10;

impl<R: Read> Chunks<R> {
    pub fn new(reader: R, file: &str, chunk_bytes: usize) -> Self {
        Chunks {
            reader,
            file: file.to_string(),
            chunk_bytes: chunk_bytes.max(1),
            buf: Filled::default(),
            start: 0,
            eof: false,
            bytes_read: 0,
            failed: None,
        }
    }

    /// Drops the consumed prefix and reads one more chunk. Returns how far
    /// the buffer moved (positions kept relative to the old buffer must be
    /// shifted down by it), or `None` at end of input.
    pub fn fill(&mut self) -> Result<Option<usize>> {
        if self.eof {
            return Ok(None);
        }
        let shift = self.start;
        if shift > 0 {
            self.buf.drop_front(shift);
            self.start = 0;
        }
        let failed = |file: &str, e: std::io::Error| SanitizeError::io(format!("reading file \"{file}\" failed: {e}"));
        if let Some(e) = self.failed.take() {
            return Err(failed(&self.file, e));
        }
        // The chunk fills up to `chunk_bytes` or the end of the input. An
        // error after some bytes is kept for the next call: the bytes
        // before it are decoded first, as a read of its own gave them
        // before (under skip_row, the rows before the damage of a
        // truncated stream are kept).
        let target = self.buf.end + self.chunk_bytes;
        let mut offer = FIRST_READ.min(self.chunk_bytes);
        let mut n = 0;
        while self.buf.end < target {
            // Room already zeroed is offered whole: it costs nothing more.
            let end = self.buf.end.saturating_add(offer).max(self.buf.store.len()).min(target);
            let room = self.buf.room_to(end, self.chunk_bytes);
            match self.reader.read(room) {
                Ok(0) => break,
                Ok(k) => {
                    // A reader never gives more than it was offered.
                    let k = k.min(room.len());
                    if k == room.len() {
                        offer = offer.saturating_mul(2).min(self.chunk_bytes);
                    }
                    self.buf.end += k;
                    n += k;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if n > 0 => {
                    self.failed = Some(e);
                    break;
                }
                Err(e) => return Err(failed(&self.file, e)),
            }
        }
        self.bytes_read += n as u64;
        if n == 0 {
            self.eof = true;
            return Ok(None);
        }
        Ok(Some(shift))
    }

    /// The unconsumed input.
    pub fn pending(&self) -> &[u8] {
        &self.buf[self.start..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gives `data` a few bytes per read, then fails.
    struct FailsAfter {
        data: Vec<u8>,
        at: usize,
    }

    impl Read for FailsAfter {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            if self.at == self.data.len() {
                return Err(std::io::Error::other("the stream is damaged"));
            }
            let n = out.len().min(3).min(self.data.len() - self.at);
            out[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    #[test]
    fn a_chunk_fills_across_short_reads_and_an_error_comes_after_its_bytes() {
        let data: Vec<u8> = (0..20).collect();
        let mut chunks = Chunks::new(FailsAfter { data: data.clone(), at: 0 }, "f", 8);
        assert_eq!(chunks.fill().unwrap(), Some(0));
        assert_eq!(chunks.pending(), &data[..8]);
        chunks.start = 8;
        assert_eq!(chunks.fill().unwrap(), Some(8));
        assert_eq!(chunks.pending(), &data[8..16]);
        chunks.start = 8;
        // The last 4 bytes, then the error, on the next call.
        assert_eq!(chunks.fill().unwrap(), Some(8));
        assert_eq!(chunks.pending(), &data[16..]);
        let error = chunks.fill().unwrap_err().to_string();
        assert!(error.contains("reading file \"f\" failed: the stream is damaged"), "{error}");
        assert_eq!(chunks.bytes_read, 20);
    }

    /// Gives 0xFF bytes, `per_read` at a time, and notes every byte it was
    /// offered that was not zero (what an earlier read left there).
    struct Spy {
        left: usize,
        per_read: usize,
        stale_offered: usize,
    }

    impl Read for Spy {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            self.stale_offered += out.iter().filter(|&&b| b != 0).count();
            let n = out.len().min(self.per_read).min(self.left);
            out[..n].fill(0xFF);
            self.left -= n;
            Ok(n)
        }
    }

    #[test]
    fn a_fill_reads_into_the_room_as_it_is_without_zeroing_it() {
        let mut chunks = Chunks::new(Spy { left: 64, per_read: 4, stale_offered: 0 }, "f", 16);
        let mut read = 0;
        while chunks.fill().unwrap().is_some() {
            read += chunks.pending().len();
            chunks.start = chunks.buf.len();
        }
        assert_eq!(read, 64);
        assert_eq!(chunks.bytes_read, 64);
        // Every chunk after the first reads over the one before it, as it
        // was: zeroing the room first would offer no stale byte.
        assert!(chunks.reader.stale_offered >= 3 * 16, "{}", chunks.reader.stale_offered);
        assert!(chunks.buf.capacity() <= 32, "{}", chunks.buf.capacity());
    }

    #[test]
    fn a_small_input_zeroes_about_its_own_size_not_a_chunk() {
        let data = [7u8; 100];
        let mut chunks = Chunks::new(&data[..], "f", 1 << 20);
        assert_eq!(chunks.fill().unwrap(), Some(0));
        assert_eq!(chunks.pending(), &data[..]);
        assert!(chunks.buf.store.len() <= 2 * FIRST_READ, "{}", chunks.buf.store.len());
    }

    #[test]
    fn the_storage_is_reserved_once_for_a_chunk_and_a_kept_partial_record() {
        let data: Vec<u8> = (0..200u8).collect();
        let mut chunks = Chunks::new(&data[..], "f", 16);
        let mut consumed = Vec::new();
        let mut capacities = std::collections::BTreeSet::new();
        while chunks.fill().unwrap().is_some() {
            capacities.insert(chunks.buf.capacity());
            // A decoder keeps the last bytes, a record not yet complete.
            let take = chunks.pending().len().saturating_sub(3);
            consumed.extend_from_slice(&chunks.pending()[..take]);
            chunks.start += take;
        }
        consumed.extend_from_slice(chunks.pending());
        assert_eq!(consumed, data);
        assert_eq!(capacities.into_iter().collect::<Vec<_>>(), vec![20]);
    }

    #[test]
    fn the_end_of_the_input_is_an_empty_fill() {
        let mut chunks = Chunks::new(&b"abc"[..], "f", 2);
        assert_eq!(chunks.fill().unwrap(), Some(0));
        assert_eq!(chunks.fill().unwrap(), Some(0));
        assert_eq!(chunks.pending(), b"abc");
        assert_eq!(chunks.fill().unwrap(), None);
        assert!(chunks.eof);
    }
}
