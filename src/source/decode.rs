//! Text decoding: every text format reads UTF-8 from a [`TextDecoder`],
//! whatever `input_text_encoding` says.
//!
//! - `utf-8`: bytes pass through untouched (no copy beyond the read); a
//!   leading byte-order mark is dropped.
//! - `utf-16`: the byte-order mark decides little or big endian (little
//!   without one, as Python's codec does on little-endian machines);
//!   `utf-16-le` / `utf-16-be` force it. A lone surrogate is undecodable.
//! - `latin-1`: Python's ISO-8859-1: byte b is U+00bb, so 0x80–0x9F map to
//!   the C1 controls U+0080–U+009F, **not** to windows-1252 as the WHATWG
//!   label "latin1" would.
//!
//! Undecodable input becomes the byte 0xFF in the UTF-8 output: never valid
//! UTF-8, so the record decoder reports that record through `on_error`
//! instead of the whole file failing or the bytes vanishing silently.

use std::io::{self, Read};

use crate::options::TextEncoding;

/// Marks an undecodable unit in the UTF-8 output.
const INVALID: u8 = 0xFF;

pub struct TextDecoder<R: Read> {
    inner: R,
    encoding: TextEncoding,
    /// Raw input not yet decoded (a split UTF-16 unit or surrogate pair).
    pending: Vec<u8>,
    /// Decoded output not yet handed out.
    out: Vec<u8>,
    out_pos: usize,
    started: bool,
    little_endian: bool,
    raw: Vec<u8>,
    eof: bool,
}

impl<R: Read> TextDecoder<R> {
    pub fn new(inner: R, encoding: TextEncoding, chunk_bytes: usize) -> Self {
        TextDecoder {
            inner,
            encoding,
            pending: Vec::new(),
            out: Vec::new(),
            out_pos: 0,
            started: false,
            little_endian: encoding != TextEncoding::Utf16Be,
            raw: vec![0; chunk_bytes.clamp(4, 1 << 24)],
            eof: false,
        }
    }

    /// Reads and decodes one more raw chunk into `out`.
    fn refill(&mut self) -> io::Result<()> {
        self.out.clear();
        self.out_pos = 0;
        while self.out.is_empty() && !self.eof {
            let n = loop {
                match self.inner.read(&mut self.raw) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            };
            if n == 0 {
                self.eof = true;
            }
            let mut data = std::mem::take(&mut self.pending);
            data.extend_from_slice(&self.raw[..n]);
            let used = self.decode(&data);
            self.pending = data[used..].to_vec();
            if self.eof && !self.pending.is_empty() {
                // A truncated final unit.
                self.out.push(INVALID);
                self.pending.clear();
            }
        }
        Ok(())
    }

    /// Decodes as much of `data` as forms whole units; returns bytes used.
    fn decode(&mut self, data: &[u8]) -> usize {
        let mut i = 0;
        if !self.started {
            let bom_needed = match self.encoding {
                TextEncoding::Utf8 => 3,
                TextEncoding::Utf16 | TextEncoding::Utf16Le | TextEncoding::Utf16Be => 2,
                TextEncoding::Latin1 | TextEncoding::Windows1252 => 0,
            };
            if data.len() < bom_needed && !self.eof {
                return 0; // wait for enough bytes to see a BOM
            }
            self.started = true;
            match self.encoding {
                TextEncoding::Utf8 if data.starts_with(b"\xEF\xBB\xBF") => i = 3,
                TextEncoding::Utf16 if data.starts_with(b"\xFF\xFE") => i = 2,
                TextEncoding::Utf16 if data.starts_with(b"\xFE\xFF") => {
                    self.little_endian = false;
                    i = 2;
                }
                TextEncoding::Utf16Le if data.starts_with(b"\xFF\xFE") => i = 2,
                TextEncoding::Utf16Be if data.starts_with(b"\xFE\xFF") => i = 2,
                _ => {}
            }
        }
        match self.encoding {
            TextEncoding::Utf8 => {
                self.out.extend_from_slice(&data[i..]);
                data.len()
            }
            TextEncoding::Latin1 => {
                for &b in &data[i..] {
                    let c = b as char; // U+0000..U+00FF, exactly Python's latin-1
                    let mut buf = [0u8; 2];
                    self.out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                data.len()
            }
            TextEncoding::Windows1252 => {
                for &b in &data[i..] {
                    match b {
                        0x80..=0x9F => match WINDOWS_1252_HIGH[(b - 0x80) as usize] {
                            0 => self.out.push(INVALID), // the five unassigned bytes, as Python's cp1252
                            c => push_char(&mut self.out, c as u32),
                        },
                        _ => push_char(&mut self.out, b as u32),
                    }
                }
                data.len()
            }
            _ => {
                let unit = |j: usize| {
                    let (a, b) = (data[j], data[j + 1]);
                    if self.little_endian {
                        u16::from_le_bytes([a, b])
                    } else {
                        u16::from_be_bytes([a, b])
                    }
                };
                while i + 2 <= data.len() {
                    let u = unit(i);
                    if (0xD800..0xDC00).contains(&u) {
                        if i + 4 > data.len() {
                            break; // the low surrogate is in the next chunk
                        }
                        let lo = unit(i + 2);
                        if (0xDC00..0xE000).contains(&lo) {
                            let c = 0x10000 + ((u as u32 - 0xD800) << 10) + (lo as u32 - 0xDC00);
                            push_char(&mut self.out, c);
                            i += 4;
                        } else {
                            self.out.push(INVALID);
                            i += 2;
                        }
                    } else if (0xDC00..0xE000).contains(&u) {
                        self.out.push(INVALID);
                        i += 2;
                    } else {
                        push_char(&mut self.out, u as u32);
                        i += 2;
                    }
                }
                i
            }
        }
    }
}

/// Code points of Windows-1252's bytes 0x80..=0x9F (0: unassigned).
const WINDOWS_1252_HIGH: [u16; 32] = [
    0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0, 0,
    0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
];

/// What the first bytes of a text file show about its encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeadMark {
    /// Nothing: the bytes are read as `input_text_encoding` says.
    Plain,
    /// UTF-16: a byte-order mark, or text whose every other byte is zero.
    Utf16(TextEncoding),
    /// A UTF-32 byte-order mark: UTF-32, which this reader cannot decode.
    Utf32,
    /// UTF-32 without a byte-order mark, in this byte order (`"LE"`,
    /// `"BE"`): read as UTF-8 it is text with a NUL after every character.
    Utf32Unmarked(&'static str),
}

/// Bytes of a file's head [`head_mark`] looks at for zero bytes.
pub const HEAD_MARK_BYTES: usize = 64;

/// Reads the encoding marks of a text file's first bytes `head` (the first
/// [`HEAD_MARK_BYTES`] of it are looked at).
///
/// A UTF-16 byte-order mark (`FF FE`, `FE FF`) cannot begin UTF-8 text
/// (neither byte occurs in UTF-8). Without one, zero bytes decide: UTF-8
/// text holds none, and UTF-16 text holds one in every character below
/// U+0100 (digits, delimiters, line ends, ASCII letters), always on the
/// same side of its unit. So a head whose zero bytes are all at odd
/// offsets is UTF-16LE, and all at even offsets UTF-16BE (as RFC 4627
/// told JSON's encodings apart), when there are three or more and they
/// are in half its units or more. Fewer (DuckDB's `nullterm.csv`,
/// `hello\n\0world\0\n`, and fuzzed `afl` files) or on both sides
/// (`afl/3977/case_72.csv` begins `5\0\0\0\0`) leave the file as it is. Read as UTF-8, UTF-16 text is valid text with zero bytes in
/// it: a CSV file of it read as clean columns of garbage, with nothing
/// counted as bad. UTF-32 is known by its byte-order mark (`FF FE 00 00`,
/// `00 00 FE FF`), or by its units without one ([`utf32_order`]): its zero
/// bytes fall on both sides of UTF-16's units, so it would otherwise read
/// as UTF-8 text full of NUL characters.
pub fn head_mark(head: &[u8]) -> HeadMark {
    if head.starts_with(b"\xFF\xFE\0\0") || head.starts_with(b"\0\0\xFE\xFF") {
        return HeadMark::Utf32;
    }
    if let Some(order) = utf32_order(&head[..head.len().min(HEAD_MARK_BYTES)]) {
        return HeadMark::Utf32Unmarked(order);
    }
    if head.starts_with(b"\xFF\xFE") || head.starts_with(b"\xFE\xFF") {
        return HeadMark::Utf16(TextEncoding::Utf16);
    }
    let head = &head[..head.len().min(HEAD_MARK_BYTES) & !1];
    let zeros_at = |parity: usize| head.iter().skip(parity).step_by(2).filter(|&&b| b == 0).count();
    // Enough evidence: three zero bytes or more, in half the units or more.
    let units = head.len() / 2;
    let enough = |zeros: usize| zeros >= 3 && 2 * zeros >= units;
    match (zeros_at(0), zeros_at(1)) {
        (0, odd) if enough(odd) => HeadMark::Utf16(TextEncoding::Utf16Le),
        (even, 0) if enough(even) => HeadMark::Utf16(TextEncoding::Utf16Be),
        _ => HeadMark::Plain,
    }
}

/// The byte order of UTF-32 text without a byte-order mark, if `head` is
/// that: two whole units or more, each a character other than NUL (at
/// most U+10FFFF, no surrogate), with the high byte zero. UTF-8 text has
/// no zero bytes, and UTF-16 text of ASCII has its zero bytes on one side
/// only, every other byte.
fn utf32_order(head: &[u8]) -> Option<&'static str> {
    let units: Vec<[u8; 4]> = head.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]).collect();
    if units.len() < 2 {
        return None;
    }
    let is_char = |c: u32| c != 0 && char::from_u32(c).is_some();
    if units.iter().all(|u| u[3] == 0 && is_char(u32::from_le_bytes(*u))) {
        return Some("LE");
    }
    if units.iter().all(|u| u[0] == 0 && is_char(u32::from_be_bytes(*u))) {
        return Some("BE");
    }
    None
}

/// The encoding an XML document declares for itself, read from its first
/// bytes as the XML spec's appendix F describes: a UTF-16 byte-order mark,
/// UTF-16 `<?` without one, or `encoding="..."` in the XML declaration.
/// `Ok(None)`: nothing declared (UTF-8); `Err(name)`: a declared encoding
/// this reader does not know.
pub fn sniff_xml_encoding(head: &[u8]) -> std::result::Result<Option<TextEncoding>, String> {
    if head.starts_with(b"\xFF\xFE") || head.starts_with(b"\xFE\xFF") {
        return Ok(Some(TextEncoding::Utf16));
    }
    if head.starts_with(b"<\0?\0") {
        return Ok(Some(TextEncoding::Utf16Le));
    }
    if head.starts_with(b"\0<\0?") {
        return Ok(Some(TextEncoding::Utf16Be));
    }
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    if !head.starts_with(b"<?xml") {
        return Ok(None);
    }
    let decl = &head[..memchr::memmem::find(head, b"?>").unwrap_or(head.len())];
    let Some(at) = memchr::memmem::find(decl, b"encoding") else { return Ok(None) };
    let rest = &decl[at + b"encoding".len()..];
    let rest =
        rest.iter().position(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'=')).map_or(&[][..], |i| &rest[i..]);
    let Some((&quote, body)) = rest.split_first().filter(|(q, _)| matches!(q, b'"' | b'\'')) else { return Ok(None) };
    let name = &body[..body.iter().position(|b| *b == quote).unwrap_or(body.len())];
    let name = String::from_utf8_lossy(name).into_owned();
    match TextEncoding::parse(&name) {
        // A UTF-16 declaration in a document that reads as ASCII is wrong;
        // the bytes decide (XML spec F.1).
        Some(TextEncoding::Utf16 | TextEncoding::Utf16Le | TextEncoding::Utf16Be) => Ok(None),
        Some(TextEncoding::Utf8) => Ok(None),
        Some(e) => Ok(Some(e)),
        None => Err(name),
    }
}

fn push_char(out: &mut Vec<u8>, c: u32) {
    match char::from_u32(c) {
        Some(ch) => {
            let mut buf = [0u8; 4];
            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
        }
        None => out.push(INVALID),
    }
}

impl<R: Read> Read for TextDecoder<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.out_pos == self.out.len() {
            if self.encoding == TextEncoding::Utf8 && self.started {
                // Pass-through: no intermediate copy once the BOM is handled.
                return self.inner.read(buf);
            }
            self.refill()?;
        }
        let n = buf.len().min(self.out.len() - self.out_pos);
        buf[..n].copy_from_slice(&self.out[self.out_pos..self.out_pos + n]);
        self.out_pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(bytes: &[u8], enc: TextEncoding, chunk: usize) -> Vec<u8> {
        let mut d = TextDecoder::new(bytes, enc, chunk);
        let mut out = Vec::new();
        d.read_to_end(&mut out).unwrap();
        out
    }

    #[test]
    fn utf16_with_and_without_bom_for_every_chunk_size() {
        let text = "{\"a\": \"é😀\"}\n";
        let le: Vec<u8> = text.encode_utf16().flat_map(|u| u.to_le_bytes()).collect();
        let be: Vec<u8> = text.encode_utf16().flat_map(|u| u.to_be_bytes()).collect();
        for chunk in [1, 3, 7, 1 << 20] {
            assert_eq!(decode(&[b"\xFF\xFE".as_slice(), &le].concat(), TextEncoding::Utf16, chunk), text.as_bytes());
            assert_eq!(decode(&[b"\xFE\xFF".as_slice(), &be].concat(), TextEncoding::Utf16, chunk), text.as_bytes());
            assert_eq!(decode(&le, TextEncoding::Utf16, chunk), text.as_bytes());
            assert_eq!(decode(&be, TextEncoding::Utf16Be, chunk), text.as_bytes());
            assert_eq!(decode(&le, TextEncoding::Utf16Le, chunk), text.as_bytes());
        }
    }

    #[test]
    fn latin1_is_pythons_not_windows_1252() {
        assert_eq!(decode(b"caf\xE9 \x80", TextEncoding::Latin1, 2), "café \u{80}".as_bytes());
        assert_eq!(decode(b"\x93caf\xE9\x94 \x80", TextEncoding::Windows1252, 3), "“café” €".as_bytes());
    }

    #[test]
    fn head_marks_tell_utf16_and_utf32_from_text() {
        let le = |t: &str| t.encode_utf16().flat_map(|u| u.to_le_bytes()).collect::<Vec<u8>>();
        let be = |t: &str| t.encode_utf16().flat_map(|u| u.to_be_bytes()).collect::<Vec<u8>>();
        let text = "id,city\n1,Málaga";
        assert_eq!(head_mark(&[b"\xFF\xFE".as_slice(), &le(text)].concat()), HeadMark::Utf16(TextEncoding::Utf16));
        assert_eq!(head_mark(&[b"\xFE\xFF".as_slice(), &be(text)].concat()), HeadMark::Utf16(TextEncoding::Utf16));
        assert_eq!(head_mark(&le(text)), HeadMark::Utf16(TextEncoding::Utf16Le));
        assert_eq!(head_mark(&be(text)), HeadMark::Utf16(TextEncoding::Utf16Be));
        // Characters above U+00FF near the start (frictionless'
        // table-unicode-headers.csv re-encoded), a one-line file, a short one.
        for t in ["id,中国人\n1,english\n2,中国人\n", "2,中国人\n", "ab\n"] {
            assert_eq!(head_mark(&le(t)), HeadMark::Utf16(TextEncoding::Utf16Le), "{t}");
            assert_eq!(head_mark(&be(t)), HeadMark::Utf16(TextEncoding::Utf16Be), "{t}");
        }
        assert_eq!(head_mark(b"\xFF\xFE\0\0a\0\0\0"), HeadMark::Utf32);
        assert_eq!(head_mark(b"\0\0\xFE\xFF"), HeadMark::Utf32);
        // UTF-32 without a byte-order mark, both orders, non-ASCII too.
        let le32 = |t: &str| t.chars().flat_map(|c| (c as u32).to_le_bytes()).collect::<Vec<u8>>();
        let be32 = |t: &str| t.chars().flat_map(|c| (c as u32).to_be_bytes()).collect::<Vec<u8>>();
        for t in [text, "a\n", "id,中国人\n1,😀\n"] {
            assert_eq!(head_mark(&le32(t)), HeadMark::Utf32Unmarked("LE"), "{t}");
            assert_eq!(head_mark(&be32(t)), HeadMark::Utf32Unmarked("BE"), "{t}");
        }
        // Text, a UTF-8 BOM, short and empty heads, zero bytes on both
        // sides (DuckDB's fuzzed `afl` CSV files begin `5\0\0\0\0` and
        // `\0\0\0\x10;`), a single zero byte.
        for plain in [
            b"a,b\n".as_slice(),
            b"\xEF\xBB\xBFa,b",
            b"a\0",
            b"",
            b"ab\0c",
            b"5\0\0\0\x001;2\n\n",
            b"\0\0\0\x10;bob@email'1",
            b" \0\0\0 la;'1a# 1;",
            b"{\0\0\0",
            b"\0\0\0\0",
            // DuckDB's nullterm.csv; fuzzed afl/no_parameter/23.csv and 10.csv.
            b"hello\n\0world\0\n",
            b"32,14, \0,112,14, \0,15\",\"6,",
            b"\n\t\t\0O4,\0",
        ] {
            assert_eq!(head_mark(plain), HeadMark::Plain, "{plain:?}");
        }
    }

    #[test]
    fn utf8_bom_is_dropped_and_bytes_pass_through() {
        assert_eq!(decode(b"\xEF\xBB\xBFab\xFFc", TextEncoding::Utf8, 1), b"ab\xFFc");
        assert_eq!(decode(b"ab", TextEncoding::Utf8, 1), b"ab");
    }

    #[test]
    fn lone_surrogates_are_marked_undecodable() {
        let bytes = [0x00, 0xD8, 0x41, 0x00]; // lone high surrogate, then 'A' (LE)
        assert_eq!(decode(&bytes, TextEncoding::Utf16Le, 3), b"\xFFA");
        assert_eq!(decode(&[0x41], TextEncoding::Utf16Le, 3), b"\xFF"); // truncated unit
    }

    #[test]
    fn python_aliases() {
        for n in ["utf-8", "UTF8", "utf_8", "latin1", "ISO-8859-1", "l1", "utf_16", "UTF-16-LE", "utf-16be"] {
            assert!(TextEncoding::parse(n).is_some(), "{n}");
        }
        assert_eq!(TextEncoding::parse("cp1252"), Some(TextEncoding::Windows1252));
        assert_eq!(TextEncoding::parse("shift_jis"), None);
    }

    #[test]
    fn xml_declarations_name_the_encoding() {
        let sniff = |b: &[u8]| sniff_xml_encoding(b);
        assert_eq!(sniff(b"<?xml version='1.0' encoding='ISO-8859-1'?><a/>"), Ok(Some(TextEncoding::Latin1)));
        assert_eq!(sniff(b"<?xml version=\"1.0\" encoding = \"windows-1252\"?>"), Ok(Some(TextEncoding::Windows1252)));
        assert_eq!(sniff(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>"), Ok(None));
        assert_eq!(sniff(b"<?xml version=\"1.0\"?><a/>"), Ok(None));
        assert_eq!(sniff(b"<a/>"), Ok(None));
        assert_eq!(sniff(b"<\0?\0x\0m\0l\0"), Ok(Some(TextEncoding::Utf16Le)));
        assert_eq!(sniff(b"\xFE\xFF\0<"), Ok(Some(TextEncoding::Utf16)));
        assert_eq!(sniff(b"<?xml version='1.0' encoding='Shift_JIS'?>"), Err("Shift_JIS".to_string()));
    }
}
