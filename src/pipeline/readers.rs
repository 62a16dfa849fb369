//! Opens the decoder of a file for the scan's format. The probe and the
//! scan both come through here, so they read identical records.

use std::fs::File;
use std::io::{Cursor, Read};

use crate::error::{Result, SanitizeError};
use crate::formats::csv::CsvReader;
use crate::formats::json_document::{JsonArrayReader, JsonDocumentReader};
use crate::formats::jsonl::JsonLinesReader;
use crate::formats::parquet::ParquetReader;
use crate::formats::xml::{XmlOptions, XmlReader};
use crate::formats::RecordReader;
use crate::options::TextEncoding;
use crate::options::{InputFormat, Options};
use crate::source::{decompressing, sniff_xml_encoding, TextDecoder};

/// Opens local `file` for reading; messages call it `name` (a remote file's
/// URI rather than its staged copy).
pub fn open_reader(function: &str, file: &str, name: &str, options: &Options) -> Result<Box<dyn RecordReader + Send>> {
    let f = open(function, file, name)?;
    match options.input_format {
        // Parquet is binary: input_text_encoding does not apply.
        InputFormat::Parquet => Ok(Box::new(ParquetReader::open(f, name, function, super::BATCH_RECORDS)?)),
        _ => text_reader(function, f, name, options),
    }
}

/// The decoder of a text format over `input`: decompression (by the name's
/// suffix or the `compression` option), the text decoder (the one place a
/// byte-order mark is dropped), then the format's reader. Files come here
/// through [`open_reader`]; the decoder tests (formats/harness.rs) give
/// bytes in memory.
pub fn text_reader<R: Read + Send + 'static>(
    function: &str,
    input: R,
    name: &str,
    options: &Options,
) -> Result<Box<dyn RecordReader + Send>> {
    let chunk = options.read_chunk_bytes;
    let io = |e: std::io::Error| SanitizeError::io(format!("{function}: cannot read file \"{name}\": {e}"));
    let mut input = decompressing(input, options.compression.of_file(name)).map_err(io)?;
    let mut encoding = options.input_text_encoding;
    if options.input_format == InputFormat::Xml && !options.is_given("input_text_encoding") {
        // The head is read for the declaration and then put back in front.
        let mut head = Vec::with_capacity(512);
        input.by_ref().take(512).read_to_end(&mut head).map_err(io)?;
        encoding = declared_xml_encoding(function, &head, name)?.unwrap_or(encoding);
        input = Box::new(Cursor::new(head).chain(input));
    }
    let text = TextDecoder::new(input, encoding, chunk);
    Ok(match options.input_format {
        InputFormat::Jsonl | InputFormat::Ndjson => Box::new(JsonLinesReader::new(text, name, chunk)),
        InputFormat::Csv => Box::new(CsvReader::new(text, name, chunk, options.csv_dialect())),
        InputFormat::Json => Box::new(JsonDocumentReader::new(text, name, chunk, function)),
        InputFormat::JsonArray => Box::new(JsonArrayReader::new(text, name, chunk, function)),
        InputFormat::Xml => Box::new(XmlReader::new(
            text,
            name,
            chunk,
            XmlOptions { row_tag: options.xml_row_tag.clone(), scalar_object_key: options.scalar_object_key.clone() },
        )),
        InputFormat::Parquet => {
            return Err(SanitizeError::internal(format!("{function}: Parquet is not a text format")));
        }
    })
}

/// The encoding an XML document declares (`<?xml ... encoding="..."?>` or
/// UTF-16 bytes) in its first bytes `head`, honoured when
/// `input_text_encoding` is not given.
fn declared_xml_encoding(function: &str, head: &[u8], name: &str) -> Result<Option<TextEncoding>> {
    sniff_xml_encoding(head).map_err(|declared| {
        SanitizeError::input(format!(
            "{function}: file \"{name}\" declares encoding=\"{declared}\", which this reader cannot decode; convert it to UTF-8, or pass input_text_encoding := 'utf-8', 'utf-16', 'latin-1' or 'windows-1252' to read it as one of those"
        ))
    })
}

/// The first `max_bytes` of a text file as UTF-8 (decompressed and
/// decoded as the scan reads it), cut at the last line end unless it is
/// the whole file: the CSV sniffer's sample.
pub fn text_sample(function: &str, file: &str, name: &str, options: &Options, max_bytes: usize) -> Result<Vec<u8>> {
    let f = open(function, file, name)?;
    let io = |e: std::io::Error| SanitizeError::io(format!("{function}: cannot read file \"{name}\": {e}"));
    let input = decompressing(f, options.compression.of_file(name)).map_err(io)?;
    let mut text = TextDecoder::new(input, options.input_text_encoding, options.read_chunk_bytes);
    let mut sample = Vec::new();
    // One byte more than asked tells whether the file goes on.
    text.by_ref().take(max_bytes as u64 + 1).read_to_end(&mut sample).map_err(io)?;
    if sample.len() > max_bytes {
        let end = sample[..max_bytes].iter().rposition(|&b| b == b'\n' || b == b'\r').map_or(max_bytes, |i| i + 1);
        sample.truncate(end);
    }
    Ok(sample)
}

pub(crate) fn open(function: &str, file: &str, name: &str) -> Result<File> {
    File::open(file).map_err(|e| SanitizeError::io(format!("{function}: cannot open file \"{name}\": {e}")))
}
