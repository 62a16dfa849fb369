//! Chunked reading shared by the text decoders: input is read
//! `read_chunk_bytes` at a time into one buffer whose consumed prefix is
//! dropped before the next read, so a decoder holds at most its current
//! record plus one chunk.

use std::io::Read;

use crate::error::{Result, SanitizeError};

pub struct Chunks<R: Read> {
    reader: R,
    pub file: String,
    chunk_bytes: usize,
    pub buf: Vec<u8>,
    /// Bytes of `buf` before this are consumed.
    pub start: usize,
    pub eof: bool,
    /// Raw bytes read from the source so far.
    pub bytes_read: u64,
    /// A read error that came after some bytes of a chunk, reported by the
    /// next [`Chunks::fill`].
    failed: Option<std::io::Error>,
}

impl<R: Read> Chunks<R> {
    pub fn new(reader: R, file: &str, chunk_bytes: usize) -> Self {
        Chunks {
            reader,
            file: file.to_string(),
            chunk_bytes: chunk_bytes.max(1),
            buf: Vec::new(),
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
            self.buf.drain(..shift);
            self.start = 0;
        }
        let old = self.buf.len();
        self.buf.reserve(self.chunk_bytes);
        // Read into the buffer's spare room as it is: a file reads into it
        // without zeroing it first (`read_to_end` uses `read_buf`), where
        // growing the buffer with zeros and reading over them cost a memset
        // of every chunk (3% of a JSON Lines scan). The chunk fills up to
        // `chunk_bytes` or the end of the input.
        // An error after some bytes is kept for the next call: the bytes
        // before it are decoded first, as a read of its own gave them before
        // (under skip_row, the rows before the damage of a truncated stream
        // are kept).
        let failed = |file: &str, e: std::io::Error| SanitizeError::io(format!("reading file \"{file}\" failed: {e}"));
        if let Some(e) = self.failed.take() {
            return Err(failed(&self.file, e));
        }
        let n = match (&mut self.reader).take(self.chunk_bytes as u64).read_to_end(&mut self.buf) {
            Ok(n) => n,
            Err(e) if self.buf.len() > old => {
                self.failed = Some(e);
                self.buf.len() - old
            }
            Err(e) => return Err(failed(&self.file, e)),
        };
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
