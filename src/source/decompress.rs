//! Compressed text inputs: gzip (`.gz`, concatenated members too, as `gzip
//! -c a b` writes them) and zstd (`.zst`), decompressed as they stream, so
//! memory stays that of a plain file. A corrupt or truncated stream is an
//! I/O error naming the codec and how many compressed bytes had been read
//! when it failed (the decoder reads ahead, so the damage lies at or before
//! that offset; the readers add the file).

use std::io::{self, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::options::Compression;

/// The compressed format whose magic number begins `head` (a file's first
/// ten bytes), with what to do about it: a compressed file read as text
/// would be bytes of garbage, one bad record or a header of U+FFFD.
/// gzip's, zstd's and xz's magic numbers hold a byte that cannot begin
/// UTF-8 text; bz2's is checked to its block header (`BZh91AY&SY`), and
/// zip's and lz4's begin with control bytes no text file begins with.
/// Returns the codec's name and what the file is, with what to do.
pub fn compressed_mark(head: &[u8]) -> Option<(&'static str, &'static str)> {
    Some(match head {
        [0x1F, 0x8B, ..] => ("gzip", "gzip-compressed; name it .gz or pass compression := 'gzip'"),
        [0x28, 0xB5, 0x2F, 0xFD, ..] => ("zstd", "zstd-compressed; name it .zst or pass compression := 'zstd'"),
        [b'B', b'Z', b'h', b'1'..=b'9', 0x31, 0x41, 0x59, 0x26, 0x53, 0x59, ..] => {
            ("bzip2", "bzip2-compressed, which this reader cannot decompress (gzip and zstd only); decompress it first")
        }
        [0xFD, b'7', b'z', b'X', b'Z', 0x00, ..] => {
            ("xz", "xz-compressed, which this reader cannot decompress (gzip and zstd only); decompress it first")
        }
        [b'P', b'K', 0x03, 0x04, ..] => ("zip", "a zip archive, which this reader cannot open; extract it first"),
        [0x04, 0x22, 0x4D, 0x18, ..] => {
            ("lz4", "lz4-compressed, which this reader cannot decompress (gzip and zstd only); decompress it first")
        }
        _ => return None,
    })
}

/// `input` as the decompressed bytes of `compression` (already resolved
/// for the file: never `Auto`); `None` passes it through.
pub fn decompressing<R: Read + Send + 'static>(input: R, compression: Compression) -> io::Result<Box<dyn Read + Send>> {
    let consumed = Arc::new(AtomicU64::new(0));
    let counted = Counted { inner: input, consumed: Arc::clone(&consumed) };
    Ok(match compression {
        Compression::None | Compression::Auto => Box::new(counted),
        Compression::Gzip => Box::new(Located {
            inner: flate2::read::MultiGzDecoder::new(counted),
            codec: "gzip",
            consumed,
            done: false,
        }),
        Compression::Zstd => Box::new(Located {
            inner: zstd::stream::read::Decoder::new(counted)?,
            codec: "zstd",
            consumed,
            done: false,
        }),
    })
}

/// Where a compressed stream failed, for the bad record that stands for
/// the rest of its file (`on_error` other than `stop`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamFailure {
    pub message: String,
    /// 1-based line (of the decompressed text) where the lost rest begins.
    pub line: u64,
    /// Decompressed bytes delivered before it.
    pub byte: u64,
}

/// The slot a tolerant stream reports its failure in.
pub type FailureSlot = Arc<Mutex<Option<StreamFailure>>>;

/// Like [`decompressing`], but a corrupt or truncated stream ends the text
/// at its last complete line and reports the failure in the returned slot
/// instead of failing the read: the rows before the damage are kept and
/// the rest of the file is one bad record (the caller's to emit). A plain
/// input has no slot.
///
/// `by_line`: the format's records are lines (JSON Lines, CSV), so text is
/// held back to the last line end; other formats (one JSON document, an
/// array, XML) get the text as it comes, since their record spans the file.
/// A line longer than [`MAX_HELD_BACK`] is released unfinished rather than
/// held without bound.
pub fn decompressing_tolerant<R: Read + Send + 'static>(
    input: R,
    compression: Compression,
    by_line: bool,
) -> io::Result<(Box<dyn Read + Send>, Option<FailureSlot>)> {
    let stream = decompressing(input, compression)?;
    if matches!(compression, Compression::None | Compression::Auto) {
        return Ok((stream, None));
    }
    let slot: FailureSlot = Arc::new(Mutex::new(None));
    let held = HoldBack {
        inner: stream,
        pending: Vec::new(),
        start: 0,
        ready: 0,
        delivered: 0,
        newlines: 0,
        slot: Arc::clone(&slot),
        ended: false,
        by_line,
    };
    Ok((Box::new(held), Some(slot)))
}

/// Hands out decompressed text only up to its last line end until the
/// stream has ended cleanly, so a failure never leaves half a line behind.
struct HoldBack {
    inner: Box<dyn Read + Send>,
    pending: Vec<u8>,
    /// `pending[start..]` is not handed out yet.
    start: usize,
    /// `pending[start..start + ready]` may be handed out.
    ready: usize,
    delivered: u64,
    newlines: u64,
    slot: FailureSlot,
    ended: bool,
    by_line: bool,
}

/// The most text held back waiting for a line end.
pub const MAX_HELD_BACK: usize = 8 << 20;

impl Read for HoldBack {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.ready > 0 && !buf.is_empty() {
                let n = self.ready.min(buf.len());
                let out = &self.pending[self.start..self.start + n];
                buf[..n].copy_from_slice(out);
                self.newlines += memchr::memchr_iter(b'\n', out).count() as u64;
                self.delivered += n as u64;
                self.start += n;
                self.ready -= n;
                return Ok(n);
            }
            if self.ended || buf.is_empty() {
                return Ok(0);
            }
            // Drop what was handed out, then read more.
            self.pending.drain(..self.start);
            self.start = 0;
            let old = self.pending.len();
            self.pending.resize(old + (64 << 10), 0);
            match self.inner.read(&mut self.pending[old..]) {
                Ok(0) => {
                    self.pending.truncate(old);
                    self.ended = true;
                    self.ready = self.pending.len();
                }
                Ok(n) => {
                    self.pending.truncate(old + n);
                    // Only the new bytes can hold a later line end.
                    self.ready = match memchr::memrchr(b'\n', &self.pending[old..]) {
                        _ if !self.by_line || self.pending.len() > MAX_HELD_BACK => self.pending.len(),
                        Some(i) => old + i + 1,
                        None => 0,
                    };
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => self.pending.truncate(old),
                Err(e) => {
                    // The text after the last complete line is lost with the rest.
                    self.pending.clear();
                    self.ended = true;
                    let failure =
                        StreamFailure { message: e.to_string(), line: self.newlines + 1, byte: self.delivered };
                    if let Ok(mut slot) = self.slot.lock() {
                        *slot = Some(failure);
                    }
                    return Ok(0);
                }
            }
        }
    }
}

/// Counts the compressed bytes read, for error positions.
struct Counted<R> {
    inner: R,
    consumed: Arc<AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// A decompressor whose errors say where in the compressed stream they
/// happened, and whose end is checked: a stream that stops inside a frame
/// is truncated, not finished.
struct Located<R> {
    inner: R,
    codec: &'static str,
    consumed: Arc<AtomicU64>,
    done: bool,
}

impl<R: Read> Read for Located<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.done || buf.is_empty() {
            return Ok(0);
        }
        match self.inner.read(buf) {
            Ok(0) => {
                self.done = true;
                Ok(0)
            }
            Ok(n) => Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => {
                let at = self.consumed.load(Ordering::Relaxed);
                let what = if e.kind() == io::ErrorKind::UnexpectedEof {
                    "truncated (or not a stream of this kind)"
                } else {
                    "corrupt"
                };
                Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("the {} stream is {what}, found within its first {at} compressed bytes: {e}", self.codec),
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn compressed_files_are_known_by_their_magic_numbers() {
        let gz = {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            std::io::Write::write_all(&mut e, b"a,b\n").unwrap();
            e.finish().unwrap()
        };
        assert!(super::compressed_mark(&gz).unwrap().1.starts_with("gzip"));
        let zst = zstd::encode_all(&b"a,b\n"[..], 1).unwrap();
        assert!(super::compressed_mark(&zst).unwrap().1.starts_with("zstd"));
        assert!(super::compressed_mark(b"BZh91AY&SY\x00\x01").unwrap().1.starts_with("bzip2"));
        assert!(super::compressed_mark(b"\xFD7zXZ\x00\x00").unwrap().1.starts_with("xz"));
        assert!(super::compressed_mark(b"PK\x03\x04rest").unwrap().1.contains("zip archive"));
        assert!(super::compressed_mark(b"\x04\x22\x4D\x18").unwrap().1.starts_with("lz4"));
        // Text that starts like bz2, and plain text.
        for text in [b"BZh9 is a column\n".as_slice(), b"a,b\n", b"", b"PK,x\n"] {
            assert_eq!(super::compressed_mark(text), None, "{text:?}");
        }
    }
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn read_all(bytes: Vec<u8>, c: Compression) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        decompressing(std::io::Cursor::new(bytes), c)?.read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn gzip_members_and_zstd_frames_stream_back() {
        let mut two = gzip(b"{\"a\":1}\n");
        two.extend(gzip(b"{\"a\":2}\n"));
        assert_eq!(read_all(two, Compression::Gzip).unwrap(), b"{\"a\":1}\n{\"a\":2}\n");
        let z = zstd::encode_all(&b"x,y\n1,2\n"[..], 3).unwrap();
        assert_eq!(read_all(z, Compression::Zstd).unwrap(), b"x,y\n1,2\n");
        assert_eq!(read_all(b"plain".to_vec(), Compression::None).unwrap(), b"plain");
    }

    #[test]
    fn a_tolerant_stream_keeps_whole_lines_and_reports_the_failure() {
        let text: Vec<u8> = (0..5000).flat_map(|i| format!("{{\"a\":{i}}}\n").into_bytes()).collect();
        let g = gzip(&text);
        let (mut r, slot) =
            decompressing_tolerant(std::io::Cursor::new(g[..g.len() * 2 / 3].to_vec()), Compression::Gzip, true)
                .unwrap();
        let mut out = Vec::new();
        r.read_to_end(&mut out).unwrap();
        assert!(!out.is_empty() && out.len() < text.len() && out.ends_with(b"\n"), "{}", out.len());
        assert_eq!(&text[..out.len()], &out[..]);
        let failure = slot.unwrap().lock().unwrap().clone().unwrap();
        assert!(failure.message.contains("gzip stream is truncated"), "{failure:?}");
        assert_eq!(failure.byte, out.len() as u64);
        assert_eq!(failure.line, out.iter().filter(|&&b| b == b'\n').count() as u64 + 1);
        // A sound stream comes through whole (a last line without a line end too), with no failure.
        let (mut r, slot) =
            decompressing_tolerant(std::io::Cursor::new(gzip(b"x\ny")), Compression::Gzip, true).unwrap();
        let mut out = Vec::new();
        r.read_to_end(&mut out).unwrap();
        assert_eq!((out.as_slice(), slot.unwrap().lock().unwrap().is_none()), (&b"x\ny"[..], true));
        assert!(decompressing_tolerant(std::io::Cursor::new(b"p".to_vec()), Compression::None, true)
            .unwrap()
            .1
            .is_none());
        // Not by line: the text comes as it is decoded, up to the damage.
        let (mut r, slot) =
            decompressing_tolerant(std::io::Cursor::new(g[..g.len() * 2 / 3].to_vec()), Compression::Gzip, false)
                .unwrap();
        let mut whole = Vec::new();
        r.read_to_end(&mut whole).unwrap();
        assert!(whole.len() >= out.len() && slot.unwrap().lock().unwrap().is_some());
        assert_eq!(&text[..whole.len()], &whole[..]);
    }

    #[test]
    fn truncated_and_corrupt_streams_say_where() {
        let g = gzip(&b"{\"a\":1}\n".repeat(1000));
        let e = read_all(g[..g.len() / 2].to_vec(), Compression::Gzip).unwrap_err();
        assert!(e.to_string().contains("gzip stream is truncated"), "{e}");
        let mut bad = g.clone();
        bad[20] ^= 0xFF;
        bad[21] ^= 0xFF;
        let e = read_all(bad, Compression::Gzip).unwrap_err();
        assert!(e.to_string().contains("gzip stream is"), "{e}");
        let z = zstd::encode_all(&b"x,y\n1,2\n".repeat(1000)[..], 3).unwrap();
        let e = read_all(z[..z.len() / 2].to_vec(), Compression::Zstd).unwrap_err();
        assert!(e.to_string().contains("zstd stream is"), "{e}");
        let e = read_all(b"not gzip at all".to_vec(), Compression::Gzip).unwrap_err();
        assert!(e.to_string().contains("compressed bytes"), "{e}");
    }
}
