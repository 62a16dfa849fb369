//! Opens the decoder of a file for the scan's format. The probe and the
//! scan both come through here, so they read identical records.

use crate::formats::byte_source::ByteSource;
use std::io::{Cursor, Read};

use crate::error::{Result, SanitizeError};
use crate::formats::byte_source::FileOpener;
use crate::formats::csv::range::{open_csv_range, CsvRange};
use crate::formats::csv::{CsvLayout, CsvReader};
use crate::formats::json::document::{JsonArrayReader, JsonDocumentReader};
use crate::formats::json::lines::{JsonLinesReader, LineRange};
use crate::formats::parquet::{ParquetReader, RowGroupSlice};
use crate::formats::xml::{XmlOptions, XmlReader};
use crate::formats::RecordReader;
use crate::formats::{Batch, RecordMeta};
use crate::options::OnError;
use crate::options::TextEncoding;
use crate::options::{InputFormat, Options};
use crate::source::{
    compressed_mark, decompressing, decompressing_tolerant, head_mark, sniff_xml_encoding, FailureSlot, HeadMark,
    TextDecoder, HEAD_MARK_BYTES,
};
use crate::value::Node;

/// Opens local `file` for reading; messages call it `name` (a remote file's
/// URI rather than its staged copy).
pub fn open_reader(
    file: &str,
    name: &str,
    options: &Options,
    opener: &FileOpener,
) -> Result<Box<dyn RecordReader + Send>> {
    open_slice_reader(file, name, options, opener, None)
}

/// [`open_reader`]; a Parquet file with `slice` reads only the row groups
/// starting in that byte range.
fn open_slice_reader(
    file: &str,
    name: &str,
    options: &Options,
    opener: &FileOpener,
    slice: Option<RowGroupSlice>,
) -> Result<Box<dyn RecordReader + Send>> {
    let mut f = open(file, name, opener)?;
    match options.input_format {
        // Parquet is binary: input_text_encoding does not apply.
        InputFormat::Parquet => Ok(Box::new(ParquetReader::open_with_page_limit(
            f,
            name,
            super::BATCH_RECORDS,
            crate::formats::parquet::max_page_bytes(options.max_record_bytes),
            slice,
        )?)),
        _ => {
            // A small file is read in one small read: no `read_chunk_bytes`
            // buffer to allocate and zero for each of many small files.
            let size = f.size().ok();
            let chunk = size.map_or(options.read_chunk_bytes, |n| {
                options.read_chunk_bytes.min((n as usize).saturating_add(1).max(MIN_CHUNK_BYTES))
            });
            text_reader_with_chunk(f, name, options, chunk)
        }
    }
}

/// Opens the decoder of one range of the plan's input (scan/ranges.rs):
/// the whole file, or the lines of a byte range of a JSON Lines file.
/// The CSV heads already read, per file of the plan: every later range of
/// a file needs its header, and a file cut into thousands of ranges is
/// read at its head once.
#[derive(Default)]
pub struct CsvHeads(std::sync::Mutex<std::collections::HashMap<usize, CsvLayout>>);

impl CsvHeads {
    fn get_or_read(&self, file: usize, read: impl FnOnce() -> Result<CsvLayout>) -> Result<CsvLayout> {
        if let Some(layout) = self.0.lock().unwrap_or_else(|p| p.into_inner()).get(&file) {
            return Ok(layout.clone());
        }
        let layout = read()?;
        self.0.lock().unwrap_or_else(|p| p.into_inner()).insert(file, layout.clone());
        Ok(layout)
    }
}

pub fn open_range_reader(
    (file, name): (&str, &str),
    options: &Options,
    opener: &FileOpener,
    range: &super::ranges::Range,
    at: Option<crate::formats::Resume>,
    heads: &CsvHeads,
) -> Result<Box<dyn RecordReader + Send>> {
    use std::io::{Seek, SeekFrom};
    if !range.is_split() {
        return open_reader(file, name, options, opener);
    }
    if options.input_format == InputFormat::Parquet {
        let slice = RowGroupSlice { start: range.start, end: range.end };
        return open_slice_reader(file, name, options, opener, Some(slice));
    }
    let mut f = open(file, name, opener)?;
    let io = |e: std::io::Error| SanitizeError::io(format!("cannot read file \"{name}\": {e}"));
    let mut head = [0u8; 3];
    let bom = match f.read_exact(&mut head) {
        Ok(()) if head == [0xEF, 0xBB, 0xBF] => 3,
        _ => 0,
    };
    // Reads sized to the range, as for JSON Lines below.
    let chunk = range.end.map_or(options.read_chunk_bytes, |end| {
        options
            .read_chunk_bytes
            .min(((end - range.start.saturating_sub(1)) as usize).saturating_add(1).max(MIN_CHUNK_BYTES))
    });
    if options.input_format == InputFormat::Csv {
        // A later range takes the header (and the first line's newline)
        // from the file's head, read as the first range reads it.
        let layout = if range.start > 0 {
            Some(heads.get_or_read(range.file, || {
                let mut head = open(file, name, opener)?;
                head.seek(SeekFrom::Start(bom)).map_err(io)?;
                CsvReader::new(head, name, CSV_HEAD_CHUNK_BYTES, options.csv_dialect()).layout()
            })?)
        } else {
            None
        };
        let place = CsvRange { start: range.start, end: range.end, bom, layout };
        return open_csv_range(f, name, chunk, options.csv_dialect(), place, at);
    }
    // From the byte before the range: if it ends a line, the line starting
    // at the range's first byte is this range's.
    let seek = range.start.saturating_sub(1);
    f.seek(SeekFrom::Start(seek)).map_err(io)?;
    let line_range = LineRange { start: seek, end: range.end, skip_partial: range.start > 0, bom };
    // Reads sized to the range: a range smaller than `read_chunk_bytes`
    // does not read (or allocate) a whole chunk past its end.
    Ok(Box::new(JsonLinesReader::for_range(f, name, chunk, line_range).with_max_record_bytes(options.max_record_bytes)))
}

/// The smallest read of a small file.
const MIN_CHUNK_BYTES: usize = 4096;

/// Reads of a CSV file's head, for its header: most headers fit one.
const CSV_HEAD_CHUNK_BYTES: usize = 64 << 10;

/// The decoder of a text format over `input`: decompression (by the name's
/// suffix or the `compression` option), the text decoder (the one place a
/// byte-order mark is dropped), then the format's reader. Files come here
/// through [`open_reader`]; the decoder tests (formats/harness.rs) give
/// bytes in memory.
#[cfg(test)]
pub fn text_reader<R: Read + Send + 'static>(
    input: R,
    name: &str,
    options: &Options,
) -> Result<Box<dyn RecordReader + Send>> {
    text_reader_with_chunk(input, name, options, options.read_chunk_bytes)
}

/// [`text_reader`] reading `chunk` bytes at a time.
fn text_reader_with_chunk<R: Read + Send + 'static>(
    input: R,
    name: &str,
    options: &Options,
    chunk: usize,
) -> Result<Box<dyn RecordReader + Send>> {
    let io = |e: std::io::Error| SanitizeError::io(format!("cannot read file \"{name}\": {e}"));
    // Under skip_row / emit_null_row a damaged compressed stream keeps the
    // rows before the damage, and the rest of the file is one bad record.
    let (mut input, failure) = if options.on_error == OnError::Stop {
        (decompressing(input, options.compression.of_file(name)).map_err(io)?, None)
    } else {
        let by_line = matches!(options.input_format, InputFormat::Jsonl | InputFormat::Ndjson | InputFormat::Csv);
        decompressing_tolerant(input, options.compression.of_file(name), by_line).map_err(io)?
    };
    let encoding = detect_encoding(&mut input, name, options)?;
    let text = TextDecoder::new(input, encoding, chunk);
    let reader: Box<dyn RecordReader + Send> = match options.input_format {
        InputFormat::Jsonl | InputFormat::Ndjson => {
            Box::new(JsonLinesReader::new(text, name, chunk).with_max_record_bytes(options.max_record_bytes))
        }
        InputFormat::Csv => Box::new(CsvReader::new(text, name, chunk, options.csv_dialect())),
        InputFormat::Json => {
            Box::new(JsonDocumentReader::new(text, name, chunk).with_max_record_bytes(options.max_record_bytes))
        }
        InputFormat::JsonArray => {
            Box::new(JsonArrayReader::new(text, name, chunk).with_max_record_bytes(options.max_record_bytes))
        }
        InputFormat::Xml => Box::new(XmlReader::new(
            text,
            name,
            chunk,
            XmlOptions {
                row_tag: options.xml_row_tag.clone(),
                scalar_object_key: options.scalar_object_key.clone(),
                max_record_bytes: options.max_record_bytes,
            },
        )),
        InputFormat::Parquet => {
            return Err(SanitizeError::internal("Parquet is not a text format".to_string()));
        }
    };
    // The decoders name what the text decoder could not decode "invalid
    // UTF-8" (source/decode.rs marks it with a byte UTF-8 never holds):
    // for another encoding the words are the encoding's.
    let reader = match encoding {
        TextEncoding::Utf8 => reader,
        _ => Box::new(Reworded { inner: reader, encoding }),
    };
    Ok(match failure {
        Some(slot) => Box::new(StreamChecked { inner: reader, slot, reported: false }),
        None => reader,
    })
}

/// A text reader over text decoded from an encoding other than UTF-8: its
/// bad records' causes and its header notice say which encoding the bytes
/// did not decode in, where the decoders say "invalid UTF-8".
struct Reworded {
    inner: Box<dyn RecordReader + Send>,
    encoding: TextEncoding,
}

impl RecordReader for Reworded {
    fn next_batch(&mut self, batch: &mut Batch, max_records: usize) -> Result<usize> {
        let before = batch.meta.len();
        let n = self.inner.next_batch(batch, max_records)?;
        for meta in &mut batch.meta[before..] {
            if let Some(bad) = meta.error.as_mut() {
                if bad.cause.contains(INVALID_UTF8) {
                    bad.cause = reword(&bad.cause, self.encoding);
                }
            }
        }
        Ok(n)
    }

    fn bytes_read(&self) -> u64 {
        self.inner.bytes_read()
    }

    fn declaration(&mut self) -> Option<crate::formats::Declaration> {
        self.inner.declaration()
    }

    fn declared_values_fit(&mut self) -> bool {
        self.inner.declared_values_fit()
    }

    fn signature(&mut self) -> Result<Option<crate::formats::Signature>> {
        self.inner.signature()
    }

    fn take_header_notice(&mut self) -> Option<crate::formats::HeaderNotice> {
        let encoding = self.encoding;
        self.inner.take_header_notice().map(|n| crate::formats::HeaderNotice { encoding: Some(encoding), ..n })
    }
}

/// How the decoders begin the cause of text that did not decode.
const INVALID_UTF8: &str = "invalid UTF-8";

/// `cause` (a decoder's, about text that did not decode) in the words of
/// `encoding`, the one the file was read as. Still an encoding problem to
/// `rejects::record_kind` ("undecodable").
fn reword(cause: &str, encoding: TextEncoding) -> String {
    let what = match encoding {
        TextEncoding::Windows1252 => {
            "undecodable windows-1252 (one of the bytes 0x81, 0x8D, 0x8F, 0x90 and 0x9D, which it leaves undefined)"
                .to_string()
        }
        TextEncoding::Utf16 | TextEncoding::Utf16Le | TextEncoding::Utf16Be => {
            "undecodable UTF-16 (a lone surrogate, or a last unit cut in half)".to_string()
        }
        other => format!("undecodable {}", other.name()),
    };
    cause.replace(" (undecodable bytes for the input encoding)", "").replace(INVALID_UTF8, &what)
}

/// A text reader over a tolerant compressed stream: when the records run
/// out and the stream had failed, one more record, bad, stands for the rest
/// of the file (its line and byte are where the lost text begins).
struct StreamChecked {
    inner: Box<dyn RecordReader + Send>,
    slot: FailureSlot,
    reported: bool,
}

impl RecordReader for StreamChecked {
    fn next_batch(&mut self, batch: &mut Batch, max_records: usize) -> Result<usize> {
        let n = self.inner.next_batch(batch, max_records)?;
        if n > 0 || self.reported || max_records == 0 {
            return Ok(n);
        }
        self.reported = true;
        let failure = self.slot.lock().ok().and_then(|mut s| s.take());
        let Some(f) = failure else { return Ok(0) };
        batch.tape.roots.push(batch.tape.nodes.len() as u32);
        batch.tape.nodes.push(Node::Null);
        batch.meta.push(RecordMeta {
            line: f.line,
            byte: f.byte,
            error: Some(crate::formats::BadRecord::new(
                crate::formats::RecordFault::Damaged,
                format!("{}{}", f.message, super::bad_records::REST_OF_FILE_LOST),
            )),
        });
        Ok(1)
    }

    fn bytes_read(&self) -> u64 {
        self.inner.bytes_read()
    }

    fn declaration(&mut self) -> Option<crate::formats::Declaration> {
        self.inner.declaration()
    }

    fn declared_values_fit(&mut self) -> bool {
        self.inner.declared_values_fit()
    }

    fn signature(&mut self) -> Result<Option<crate::formats::Signature>> {
        self.inner.signature()
    }

    fn take_header_notice(&mut self) -> Option<crate::formats::HeaderNotice> {
        self.inner.take_header_notice()
    }
}

/// The encoding to decode a text file with, from its first bytes (read
/// from `input` and put back in front of it): `input_text_encoding` when
/// given, else UTF-16 where the bytes show it (source/decode.rs
/// [`head_mark`]) and an XML document's declaration. UTF-32, and a UTF-16
/// byte-order mark under a given `input_text_encoding` of 'utf-8', are
/// errors: such bytes read as UTF-8 give garbage, not bad records.
fn detect_encoding(input: &mut Box<dyn Read + Send>, name: &str, options: &Options) -> Result<TextEncoding> {
    let given = options.origins.input_text_encoding == crate::options::Origin::Given;
    let encoding = options.input_text_encoding;
    let mut head = Vec::with_capacity(512);
    let wanted = if options.input_format == InputFormat::Xml { 512 } else { HEAD_BYTES };
    let io = |e: std::io::Error| SanitizeError::io(format!("cannot read file \"{name}\": {e}"));
    input.by_ref().take(wanted).read_to_end(&mut head).map_err(io)?;
    let put_back = |input: &mut Box<dyn Read + Send>, head: Vec<u8>| {
        let rest = std::mem::replace(input, Box::new(std::io::empty()));
        *input = Box::new(Cursor::new(head).chain(rest));
    };
    if let Some((codec, what)) = compressed_mark(&head) {
        // Whatever the text encoding: compressed bytes are no text.
        let message = match options.compression.of_file(name) {
            crate::options::Compression::None => format!("file \"{name}\" is {what}"),
            outer => format!(
                "file \"{name}\" holds {codec}-compressed data inside its {} stream (compressed twice); decompress it once first",
                outer.name()
            ),
        };
        return Err(SanitizeError::input(message));
    }
    if given && encoding != TextEncoding::Utf8 {
        put_back(input, head);
        return Ok(encoding);
    }
    let refuse = |what: &str| {
        SanitizeError::input(format!(
            "file \"{name}\" {what}; pass input_text_encoding := 'utf-16' (or 'utf-16-le' / 'utf-16-be') if it is UTF-16, or convert it to UTF-8"
        ))
    };
    // A UTF-16 byte-order mark (the one mark `head_mark` reads as plain
    // `Utf16`; guesses from zero bytes name their byte order) cannot begin
    // UTF-8 text: under a given 'utf-8' it is an error, a guess yields.
    let chosen = match head_mark(&head) {
        HeadMark::Utf32 => Err(refuse("starts with a UTF-32 byte-order mark: UTF-32, which this reader cannot decode")),
        // A guess yields to a given encoding, as a UTF-16 guess does.
        HeadMark::Utf32Unmarked(order) if !given => Err(SanitizeError::input(format!(
            "file \"{name}\" looks like UTF-32{order} without a byte-order mark (four bytes a character, most of them zero), which this reader cannot decode; convert it to UTF-8 (iconv -f UTF-32{order} -t UTF-8)"
        ))),
        HeadMark::Utf16(TextEncoding::Utf16) if given => {
            Err(refuse("starts with a UTF-16 byte-order mark, but input_text_encoding is 'utf-8'"))
        }
        HeadMark::Utf16(utf16) if !given => Ok(utf16),
        _ if options.input_format == InputFormat::Xml && !given => {
            declared_xml_encoding(&head, name).map(|declared| declared.unwrap_or(encoding))
        }
        _ => Ok(encoding),
    };
    // The head goes back in front of the rest.
    put_back(input, head);
    chosen
}

/// The encoding an XML document declares (`<?xml ... encoding="..."?>` or
/// UTF-16 bytes) in its first bytes `head`, honoured when
/// `input_text_encoding` is not given.
fn declared_xml_encoding(head: &[u8], name: &str) -> Result<Option<TextEncoding>> {
    sniff_xml_encoding(head).map_err(|declared| {
        SanitizeError::input(format!(
            "file \"{name}\" declares encoding=\"{declared}\", which this reader cannot decode; convert it to UTF-8, or pass input_text_encoding := 'utf-8', 'utf-16', 'latin-1' or 'windows-1252' to read it as one of those"
        ))
    })
}

/// The first `max_bytes` of a text file as UTF-8 (decompressed and
/// decoded as the scan reads it), cut at the last line end unless it is
/// the whole file: the CSV sniffer's sample.
/// Also says whether the sample was cut (the file goes on). A damaged
/// compressed stream gives the text before the damage (the scan decides
/// what the damage means, by `on_error`).
pub fn text_sample(
    file: &str,
    name: &str,
    options: &Options,
    opener: &FileOpener,
    max_bytes: usize,
) -> Result<(Vec<u8>, bool)> {
    let f = open(file, name, opener)?;
    let io = |e: std::io::Error| SanitizeError::io(format!("cannot read file \"{name}\": {e}"));
    let (mut input, _failure) = decompressing_tolerant(f, options.compression.of_file(name), true).map_err(io)?;
    let encoding = detect_encoding(&mut input, name, options)?;
    let mut text = TextDecoder::new(input, encoding, options.read_chunk_bytes);
    let mut sample = Vec::new();
    // One byte more than asked tells whether the file goes on.
    text.by_ref().take(max_bytes as u64 + 1).read_to_end(&mut sample).map_err(io)?;
    let cut = sample.len() > max_bytes;
    if cut {
        let end = sample[..max_bytes].iter().rposition(|&b| b == b'\n' || b == b'\r').map_or(max_bytes, |i| i + 1);
        sample.truncate(end);
    }
    Ok((sample, cut))
}

/// Whether local, uncompressed `file` begins with no mark of another
/// encoding ([`head_mark`]) and no compressed format's magic number
/// ([`compressed_mark`]): its bytes are the UTF-8 text a reader decodes,
/// so it may be cut into byte ranges and a record's text read back from
/// it. Anything else is read whole, through [`detect_encoding`]. Only a
/// regular file is looked at (reading a pipe's head would consume it; a
/// pipe is never cut); an unreadable one counts as plain (opening it
/// reports the error).
pub fn head_is_plain(file: &str, opener: &FileOpener) -> bool {
    if !std::fs::metadata(file).is_ok_and(|m| m.is_file()) {
        return true;
    }
    let mut head = Vec::with_capacity(HEAD_BYTES as usize);
    match opener.open(file) {
        Ok(f) => f
            .take(HEAD_BYTES)
            .read_to_end(&mut head)
            .map_or(true, |_| head_mark(&head) == HeadMark::Plain && compressed_mark(&head).is_none()),
        Err(_) => true,
    }
}

/// A Parquet file is cut into ranges only when its footer is at most this
/// long: each range decodes the footer again, so what one file can make a
/// scan hold is this much per open range, and a footer up to
/// `MAX_FOOTER_BYTES` is read once, by a file read whole.
const MAX_CUT_FOOTER_BYTES: u64 = 16 << 20;

/// Whether a Parquet file may be cut into ranges: its last 8 bytes end in
/// `PAR1` and give a footer length of at most [`MAX_CUT_FOOTER_BYTES`].
/// Anything else is read whole (and a bad tail is reported then).
pub fn parquet_footer_allows_cuts(file: &str, opener: &FileOpener) -> bool {
    use std::io::{Seek, SeekFrom};
    let Ok(mut f) = opener.open(file) else { return false };
    let Some(size) = f.size().ok().filter(|s| *s >= 12) else { return false };
    let mut tail = [0u8; 8];
    if f.seek(SeekFrom::Start(size - 8)).and_then(|_| f.read_exact(&mut tail)).is_err() {
        return false;
    }
    crate::formats::parquet::claimed_length(&tail).is_some_and(|claimed| claimed <= MAX_CUT_FOOTER_BYTES)
}

/// Whether the bytes of local, uncompressed `file` are the UTF-8 text its
/// reader decodes, so that a record's text can be read back from them
/// (rejects): [`head_is_plain`], and for an XML document without a given
/// `input_text_encoding`, no declaration of another encoding.
pub fn bytes_are_text(file: &str, options: &Options, opener: &FileOpener) -> bool {
    if !head_is_plain(file, opener) {
        return false;
    }
    if options.input_format != InputFormat::Xml || options.origins.input_text_encoding == crate::options::Origin::Given
    {
        return true;
    }
    let mut head = Vec::with_capacity(512);
    opener
        .open(file)
        .and_then(|f| f.take(512).read_to_end(&mut head))
        .is_ok_and(|_| sniff_xml_encoding(&head) == Ok(None))
}

/// The bytes [`detect_encoding`] reads of a file that is not XML: enough
/// for every mark and magic number it knows.
const HEAD_BYTES: u64 = HEAD_MARK_BYTES as u64;

/// Opens `file` through the scan's file system (DuckDB's in the extension:
/// its lockdowns and registered file systems apply, checked now, at bind
/// for the probe and again when a scan reads).
pub(crate) fn open(file: &str, name: &str, opener: &FileOpener) -> Result<Box<dyn ByteSource>> {
    opener.open(file).map_err(|e| SanitizeError::io(format!("cannot open file \"{name}\": {e}")))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_parquet_file_claiming_a_long_footer_is_not_cut() {
        let dir = std::env::temp_dir().join(format!("ss-footer-cut-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, footer_len: u32, magic: &[u8]| {
            let path = dir.join(name);
            let mut bytes = b"PAR1".to_vec();
            bytes.extend(std::iter::repeat_n(0u8, 64));
            bytes.extend(footer_len.to_le_bytes());
            bytes.extend(magic);
            std::fs::write(&path, bytes).unwrap();
            path.to_str().unwrap().to_string()
        };
        let opener = FileOpener::default();
        assert!(parquet_footer_allows_cuts(&write("small.parquet", 40, b"PAR1"), &opener));
        assert!(!parquet_footer_allows_cuts(&write("long.parquet", 100 << 20, b"PAR1"), &opener));
        assert!(!parquet_footer_allows_cuts(&write("bad.parquet", 40, b"PARX"), &opener));
        assert!(!parquet_footer_allows_cuts(&dir.join("missing.parquet").to_string_lossy(), &opener));
        let _ = std::fs::remove_dir_all(&dir);
    }

    use super::*;
    use crate::options::ParamValue;

    /// The header notice of CSV `bytes` read with `params`, and the rows.
    fn header_notice(bytes: &[u8], params: &[(&str, ParamValue)]) -> (Option<crate::formats::HeaderNotice>, usize) {
        let options = Options::parse("sanitize_csv", Some(InputFormat::Csv), params).unwrap();
        let mut reader = text_reader(Cursor::new(bytes.to_vec()), "h.csv", &options).unwrap();
        let mut batch = Batch::default();
        let rows = reader.next_batch(&mut batch, 100).unwrap();
        (reader.take_header_notice(), rows)
    }

    #[test]
    fn a_header_cell_that_does_not_decode_is_reported_once() {
        let (notice, rows) = header_notice(b"id,A\xf1o\n1,2\n", &[]);
        let notice = notice.unwrap();
        assert_eq!((notice.line, notice.byte, notice.cell, notice.name.as_str(), rows), (1, 0, 2, "A\u{FFFD}o", 1));
        assert!(
            notice.cause().starts_with("the CSV header's cell 2 holds bytes that are not UTF-8 text, read as \"A\u{FFFD}o\" (U+FFFD in their place): the file is not UTF-8; pass input_text_encoding := 'windows-1252' or 'latin-1'"),
            "{}",
            notice.cause()
        );
        // Read right, nothing to report.
        let latin1 = [("input_text_encoding", ParamValue::Str("latin-1".into()))];
        assert_eq!(header_notice(b"id,A\xf1o\n1,2\n", &latin1).0, None);
        assert_eq!(header_notice(b"id,name\n1,2\n", &[]).0, None);
        // Read as windows-1252, a byte it leaves undefined is its own.
        let cp1252 = [("input_text_encoding", ParamValue::Str("windows-1252".into()))];
        let notice = header_notice(b"id,x\x81\n1,2\n", &cp1252).0.unwrap();
        assert!(notice.cause().contains("bytes that are not windows-1252 text"), "{}", notice.cause());
        assert!(
            notice.cause().contains("the file is not windows-1252; pass input_text_encoding := 'utf-8',"),
            "{}",
            notice.cause()
        );
    }

    #[test]
    fn causes_of_undecodable_text_name_the_encoding_read() {
        let cause = "invalid UTF-8 at byte 3 of the record (undecodable bytes for the input encoding)";
        assert_eq!(
            reword(cause, TextEncoding::Utf16Le),
            "undecodable UTF-16 (a lone surrogate, or a last unit cut in half) at byte 3 of the record"
        );
        assert_eq!(
            reword("invalid UTF-8 in the text of <row>", TextEncoding::Latin1),
            "undecodable latin-1 in the text of <row>"
        );
    }
}
