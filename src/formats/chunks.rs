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
        self.buf.resize(old + self.chunk_bytes, 0);
        let n = loop {
            match self.reader.read(&mut self.buf[old..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.buf.truncate(old);
                    return Err(SanitizeError::io(format!("reading file \"{}\" failed: {e}", self.file)));
                }
            }
        };
        self.buf.truncate(old + n);
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
