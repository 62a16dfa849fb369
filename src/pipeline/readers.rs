//! Opens the decoder of a file for the scan's format. The probe and the
//! scan both come through here, so they read identical records.

use std::fs::File;

use crate::error::{Result, SanitizeError};
use crate::formats::jsonl::JsonLinesReader;
use crate::formats::RecordReader;
use crate::options::{InputFormat, Options};
use crate::source::TextDecoder;

pub fn open_reader(function: &str, file: &str, options: &Options) -> Result<Box<dyn RecordReader>> {
    let f = open(function, file)?;
    let chunk = options.read_chunk_bytes;
    let text = || TextDecoder::new(f, options.input_text_encoding, chunk);
    Ok(match options.input_format {
        InputFormat::Jsonl | InputFormat::Ndjson => Box::new(JsonLinesReader::new(text(), file, chunk)),
        other => {
            return Err(SanitizeError::options(format!(
                "{function}: input_format '{}' is not supported by this build yet (see docs/status.md)",
                other.name()
            )))
        }
    })
}

pub(crate) fn open(function: &str, file: &str) -> Result<File> {
    File::open(file).map_err(|e| SanitizeError::io(format!("{function}: cannot open file \"{file}\": {e}")))
}
