//! Fuzzing every decoder with proptest (the stable toolchain has no
//! cargo-fuzz): arbitrary bytes and near-valid text must never panic, must
//! keep the reader contract (formats/harness.rs checks it on every batch),
//! and must decode the same records whatever the chunk size. CI runs the default
//! case count; `PROPTEST_CASES=100000 cargo test formats::fuzz` runs longer.

use proptest::prelude::*;

use super::harness;
use crate::options::{InputFormat, Options};

#[derive(Debug, Clone, Copy)]
enum Format {
    Jsonl,
    Json,
    JsonArray,
    Csv,
    Xml,
    XmlRows,
}

/// The options a user would pass for `format`.
fn options(format: Format, chunk: usize) -> Options {
    let input_format = match format {
        Format::Jsonl => InputFormat::Jsonl,
        Format::Json => InputFormat::Json,
        Format::JsonArray => InputFormat::JsonArray,
        Format::Csv => InputFormat::Csv,
        Format::Xml | Format::XmlRows => InputFormat::Xml,
    };
    let mut o = Options::defaults(input_format);
    o.read_chunk_bytes = chunk;
    o.scalar_object_key = "v".into();
    if let Format::XmlRows = format {
        o.xml_row_tag = Some("r".into());
    }
    o
}

/// Every record, through the shared harness (formats/harness.rs), which
/// checks the reader contract on every batch.
fn decode(format: Format, bytes: &[u8], chunk: usize, max: usize) -> Result<Vec<harness::Record>, String> {
    harness::read_once(&options(format, chunk), bytes, max)
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

/// A U+FEFF after the BOM (which the text decoder drops) is a character,
/// whatever the chunk size: quick-xml would drop it as a BOM only when it
/// saw its three bytes in its first buffer. Found by the fuzzer above.
#[test]
fn a_second_byte_order_mark_is_text_at_every_chunk_size() {
    let bytes = "\u{FEFF}\u{FEFF}<r/>".as_bytes();
    for format in [Format::Xml, Format::XmlRows] {
        let large = decode(format, bytes, 1 << 20, 2048).unwrap();
        assert!(large.len() == 1 && large[0].2.contains("text before the root element"), "{large:?}");
        for chunk in 1..8 {
            assert_eq!(decode(format, bytes, chunk, 1).unwrap(), large, "{format:?} chunk {chunk}");
        }
    }
}
