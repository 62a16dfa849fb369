//! Fuzzing every decoder with proptest (the stable toolchain has no
//! cargo-fuzz): arbitrary bytes and near-valid text must never panic, must
//! keep one meta per record, must give objects for good records, and must
//! decode the same records whatever the chunk size. CI runs the default
//! case count; `PROPTEST_CASES=100000 cargo test formats::fuzz` runs longer.

use proptest::prelude::*;

use super::csv::{CsvOptions, CsvReader};
use super::json_document::{JsonArrayReader, JsonDocumentReader};
use super::jsonl::JsonLinesReader;
use super::xml::{XmlOptions, XmlReader};
use super::{Batch, RecordReader};
use crate::options::TextEncoding;
use crate::source::TextDecoder;
use crate::value::{write_compact_json, Node};

#[derive(Debug, Clone, Copy)]
enum Format {
    Jsonl,
    Json,
    JsonArray,
    Csv,
    Xml,
    XmlRows,
}

fn reader<'a>(format: Format, bytes: &'a [u8], chunk: usize) -> Box<dyn RecordReader + 'a> {
    let text = TextDecoder::new(bytes, TextEncoding::Utf8, chunk);
    match format {
        Format::Jsonl => Box::new(JsonLinesReader::new(text, "f", chunk)),
        Format::Json => Box::new(JsonDocumentReader::new(text, "f", chunk, "fuzz")),
        Format::JsonArray => Box::new(JsonArrayReader::new(text, "f", chunk, "fuzz")),
        Format::Csv => Box::new(CsvReader::new(text, "f", chunk, CsvOptions { has_header: true, delimiter: b',' })),
        Format::Xml => {
            Box::new(XmlReader::new(text, "f", chunk, XmlOptions { row_tag: None, scalar_object_key: "v".into() }))
        }
        Format::XmlRows => Box::new(XmlReader::new(
            text,
            "f",
            chunk,
            XmlOptions { row_tag: Some("r".into()), scalar_object_key: "v".into() },
        )),
    }
}

/// Every record as (line, byte, JSON text or error); `Err` for I/O-class
/// failures, which these in-memory readers only give for wrong formats.
fn decode(format: Format, bytes: &[u8], chunk: usize, max: usize) -> Result<Vec<(u64, u64, String)>, String> {
    let mut r = reader(format, bytes, chunk);
    let mut out = Vec::new();
    for _ in 0..100_000 {
        let mut batch = Batch::default();
        let n = r.next_batch(&mut batch, max).map_err(|e| e.message)?;
        assert_eq!(batch.meta.len(), batch.tape.roots.len(), "one meta per record");
        assert_eq!(n, batch.len());
        if n == 0 {
            return Ok(out);
        }
        for i in 0..n {
            let m = &batch.meta[i];
            match &m.error {
                Some(e) => out.push((m.line, m.byte, format!("error: {e}"))),
                None => {
                    let root = batch.tape.record(i);
                    assert!(matches!(root.node(), Node::Object { .. }), "a good record is an object");
                    let mut s = String::new();
                    write_compact_json(root, &mut s);
                    out.push((m.line, m.byte, s));
                }
            }
        }
    }
    panic!("the reader never finished");
}

fn any_format() -> impl Strategy<Value = Format> {
    prop_oneof![
        Just(Format::Jsonl),
        Just(Format::Json),
        Just(Format::JsonArray),
        Just(Format::Csv),
        Just(Format::Xml),
        Just(Format::XmlRows),
    ]
}

/// Text made of each format's syntax characters, so that the fuzzer spends
/// its time near the interesting states rather than on random bytes.
fn near_valid() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            Just("{".to_string()),
            Just("}".to_string()),
            Just("[".to_string()),
            Just("]".to_string()),
            Just(",".to_string()),
            Just(":".to_string()),
            Just("\"".to_string()),
            Just("\\".to_string()),
            Just("\n".to_string()),
            Just("\r\n".to_string()),
            Just("<r>".to_string()),
            Just("</r>".to_string()),
            Just("<a x=\"1\">".to_string()),
            Just("</a>".to_string()),
            Just("<![CDATA[".to_string()),
            Just("]]>".to_string()),
            Just("&amp;".to_string()),
            Just("&lol;".to_string()),
            Just("<!DOCTYPE d [<!ENTITY e \"x\">]>".to_string()),
            Just("\u{FEFF}".to_string()),
            Just("\"a\"".to_string()),
            "[a-z0-9 .-]{0,4}",
            any::<u8>().prop_map(|b| String::from_utf8_lossy(&[b]).into_owned()),
        ],
        0..40,
    )
    .prop_map(|parts| parts.concat().into_bytes())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(256), .. ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(format in any_format(), bytes in prop::collection::vec(any::<u8>(), 0..200), chunk in 1usize..16) {
        let _ = decode(format, &bytes, chunk, 3);
    }

    #[test]
    fn near_valid_text_decodes_alike_for_every_chunk_size(format in any_format(), bytes in near_valid(), chunk in 1usize..9, max in 1usize..5) {
        let small = decode(format, &bytes, chunk, max);
        let large = decode(format, &bytes, 1 << 20, 2048);
        prop_assert_eq!(small, large);
    }
}
