//! Compressed text inputs: gzip (`.gz`, concatenated members too, as `gzip
//! -c a b` writes them) and zstd (`.zst`), decompressed as they stream, so
//! memory stays that of a plain file. A corrupt or truncated stream is an
//! I/O error naming the codec and how many compressed bytes had been read
//! when it failed (the decoder reads ahead, so the damage lies at or before
//! that offset; the readers add the file).

use std::io::{self, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::options::Compression;

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
