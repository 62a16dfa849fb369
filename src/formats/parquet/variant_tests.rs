//! The VARIANT decoder against values encoded here by the spec
//! (VariantEncoding.md), shredded columns built with arrow, and every
//! truncation of a valid value (no panic, `Malformed` or a value).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BinaryArray, Int64Array, StringArray, StructArray};
use arrow::datatypes::{DataType, Field, Fields};
use proptest::prelude::*;

use super::{write_variant, Malformed};
use crate::value::{write_compact_json, Tape};

/// Metadata version 1 with 1-byte offsets and these keys.
fn metadata(keys: &[&str]) -> Vec<u8> {
    let mut m = vec![0x01, keys.len() as u8];
    let mut at = 0u8;
    m.push(0);
    for k in keys {
        at += k.len() as u8;
        m.push(at);
    }
    for k in keys {
        m.extend_from_slice(k.as_bytes());
    }
    m
}

fn short_string(s: &str) -> Vec<u8> {
    let mut v = vec![((s.len() as u8) << 2) | 1];
    v.extend_from_slice(s.as_bytes());
    v
}

fn primitive(type_id: u8, payload: &[u8]) -> Vec<u8> {
    let mut v = vec![type_id << 2];
    v.extend_from_slice(payload);
    v
}

/// An object of (key id, value) pairs, 1-byte ids and offsets.
fn object(fields: &[(u8, Vec<u8>)]) -> Vec<u8> {
    let mut v = vec![0x02, fields.len() as u8];
    v.extend(fields.iter().map(|(id, _)| *id));
    let mut at = 0u8;
    v.push(0);
    for (_, value) in fields {
        at += value.len() as u8;
        v.push(at);
    }
    for (_, value) in fields {
        v.extend_from_slice(value);
    }
    v
}

fn array(elements: &[Vec<u8>]) -> Vec<u8> {
    let mut v = vec![0x03, elements.len() as u8];
    let mut at = 0u8;
    v.push(0);
    for e in elements {
        at += e.len() as u8;
        v.push(at);
    }
    for e in elements {
        v.extend_from_slice(e);
    }
    v
}

fn binary(values: Vec<Option<Vec<u8>>>) -> ArrayRef {
    Arc::new(BinaryArray::from_iter(values))
}

fn unshredded(meta: Vec<u8>, values: Vec<Option<Vec<u8>>>) -> StructArray {
    let n = values.len();
    StructArray::from(vec![
        (Arc::new(Field::new("metadata", DataType::Binary, false)), binary(vec![Some(meta); n])),
        (Arc::new(Field::new("value", DataType::Binary, true)), binary(values)),
    ])
}

/// Decodes every row and writes each as compact JSON (typed primitives by
/// their Arrow display, standing in for the Parquet reader's writer).
fn decode(column: &StructArray) -> Vec<Result<String, Malformed>> {
    (0..column.len())
        .map(|row| {
            let mut tape = Tape::default();
            let mut typed = |_: &Field, a: &ArrayRef, r: usize, t: &mut Tape| {
                let text = arrow::util::display::ArrayFormatter::try_new(a.as_ref(), &Default::default())
                    .map(|f| f.value(r).to_string())
                    .unwrap_or_default();
                t.push_string(&format!("typed:{text}"));
                true
            };
            write_variant(column, row, &mut tape, &mut typed)?;
            tape.push_root(0);
            let mut out = String::new();
            write_compact_json(tape.record(0), &mut out);
            Ok(out)
        })
        .collect()
}

fn ok(s: &str) -> Result<String, Malformed> {
    Ok(s.to_string())
}

#[test]
fn primitives_decode_to_their_values() {
    let values = vec![
        Some(primitive(0, &[])),
        Some(primitive(1, &[])),
        Some(primitive(3, &[0xfe])),
        Some(primitive(6, &1234567890123i64.to_le_bytes())),
        Some(primitive(7, &2.5f64.to_le_bytes())),
        Some(primitive(8, &[2, 0x39, 0x30, 0, 0])), // 123.45
        Some(primitive(11, &19000i32.to_le_bytes())),
        Some(primitive(13, &1_700_000_000_000_000i64.to_le_bytes())),
        Some(primitive(16, &[3, 0, 0, 0, b'a', b'b', b'c'])),
        Some(short_string("hé")),
        None,
    ];
    let got = decode(&unshredded(metadata(&[]), values));
    assert_eq!(
        got,
        vec![
            ok("null"),
            ok("true"),
            ok("-2"),
            ok("1234567890123"),
            ok("2.5"),
            ok("123.45"),
            ok("\"2022-01-08\""),
            ok("\"2023-11-14T22:13:20.000000000Z\""),
            ok("\"abc\""),
            ok("\"hé\""),
            ok("null"),
        ]
    );
}

#[test]
fn objects_and_arrays_nest_with_keys_from_the_dictionary() {
    let inner = object(&[(1, primitive(5, &7i32.to_le_bytes()))]);
    let list = array(&[short_string("x"), primitive(0, &[]), inner.clone()]);
    let value = object(&[(0, list), (2, inner)]);
    let got = decode(&unshredded(metadata(&["tags", "n", "obj"]), vec![Some(value)]));
    assert_eq!(got, vec![ok(r#"{"tags":["x",null,{"n":7}],"obj":{"n":7}}"#)]);
}

#[test]
fn a_decimal_wider_than_its_width_keeps_every_digit() {
    // decimal4 holding 10 digits (2147483647, scale 0): precision 18.
    let got = decode(&unshredded(metadata(&[]), vec![Some(primitive(8, &[0, 0xff, 0xff, 0xff, 0x7f]))]));
    assert_eq!(got, vec![ok("2147483647")]);
    let mut wide = vec![3u8];
    wide.extend_from_slice(&i128::MIN.to_le_bytes());
    let got = decode(&unshredded(metadata(&[]), vec![Some(primitive(10, &wide))]));
    assert_eq!(got, vec![ok("\"-170141183460469231731687303715884105.728\"")]);
}

#[test]
fn bad_bytes_are_malformed() {
    let cases = vec![
        primitive(6, &[1, 2]),                    // short int64
        primitive(42, &[]),                       // unknown type id
        vec![(10 << 2) | 1, b'a'],                // short string past the end
        object(&[(9, primitive(0, &[]))]),        // key id outside the dictionary
        primitive(16, &[0xff, 0xff, 0xff, 0x7f]), // string longer than the bytes
    ];
    for case in cases {
        let got = decode(&unshredded(metadata(&["k"]), vec![Some(case.clone())]));
        assert_eq!(got, vec![Err(Malformed)], "{case:?}");
    }
    let bad_metadata = unshredded(vec![0x02, 0], vec![Some(primitive(0, &[]))]);
    assert_eq!(decode(&bad_metadata), vec![Err(Malformed)]);
}

#[test]
fn deep_nesting_is_malformed_not_a_stack_overflow() {
    let mut value = primitive(0, &[]);
    for _ in 0..600 {
        // An array of one element, 4-byte count and offsets.
        let mut v = vec![0x03 | (0x07 << 2), 1, 0, 0, 0];
        v.extend_from_slice(&0u32.to_le_bytes());
        v.extend_from_slice(&(value.len() as u32).to_le_bytes());
        v.extend_from_slice(&value);
        value = v;
    }
    assert_eq!(decode(&unshredded(metadata(&[]), vec![Some(value)])), vec![Err(Malformed)]);
}

#[test]
fn fields_that_share_one_child_cannot_multiply_the_output() {
    // Each level: an object of two fields whose offsets both point at the
    // next level. 40 levels would decode to 2^40 values.
    let mut value = primitive(0, &[]);
    for _ in 0..40 {
        let mut v = vec![0x02, 2, 0, 1, 0, 0, 0];
        v.extend_from_slice(&value);
        value = v;
    }
    assert_eq!(decode(&unshredded(metadata(&["a", "b"]), vec![Some(value)])), vec![Err(Malformed)]);
}

/// `{metadata, value, typed_value: {a: {value, typed_value: int64}, b: {value, typed_value: string}}}`
fn shredded_object(
    meta: Vec<u8>,
    residual: Vec<Option<Vec<u8>>>,
    a: Vec<Option<i64>>,
    b: Vec<Option<&str>>,
    b_value: Vec<Option<Vec<u8>>>,
) -> StructArray {
    let n = residual.len();
    let field_group = |typed: ArrayRef, value: ArrayRef| {
        let ty = typed.data_type().clone();
        StructArray::from(vec![
            (Arc::new(Field::new("value", DataType::Binary, true)), value),
            (Arc::new(Field::new("typed_value", ty, true)), typed),
        ])
    };
    let a = field_group(Arc::new(Int64Array::from(a)), binary(vec![None; n]));
    let b = field_group(Arc::new(StringArray::from(b)), binary(b_value));
    let typed = StructArray::from(vec![
        (Arc::new(Field::new("a", a.data_type().clone(), false)), Arc::new(a) as ArrayRef),
        (Arc::new(Field::new("b", b.data_type().clone(), false)), Arc::new(b) as ArrayRef),
    ]);
    let typed_type = DataType::Struct(Fields::from(typed.fields().to_vec()));
    StructArray::from(vec![
        (Arc::new(Field::new("metadata", DataType::Binary, false)), binary(vec![Some(meta); n])),
        (Arc::new(Field::new("value", DataType::Binary, true)), binary(residual)),
        (Arc::new(Field::new("typed_value", typed_type, true)), Arc::new(typed) as ArrayRef),
    ])
}

#[test]
fn shredded_fields_merge_with_the_residual_object() {
    let meta = metadata(&["a", "b", "c"]);
    let column = shredded_object(
        meta,
        vec![Some(object(&[(2, short_string("rest"))])), None, None],
        vec![Some(1), None, Some(3)],
        vec![Some("x"), None, None],
        // Row 1: b did not fit the shredded type, its value is here; row 2: b is missing.
        vec![None, Some(primitive(7, &0.5f64.to_le_bytes())), None],
    );
    assert_eq!(
        decode(&column),
        vec![ok(r#"{"a":"typed:1","b":"typed:x","c":"rest"}"#), ok(r#"{"b":0.5}"#), ok(r#"{"a":"typed:3"}"#)]
    );
}

#[test]
fn a_row_with_neither_value_nor_typed_value_is_null() {
    let column = shredded_object(metadata(&[]), vec![None], vec![None], vec![None], vec![None]);
    // typed_value is a valid (non-null) struct whose fields are all missing: {}.
    assert_eq!(decode(&column), vec![ok("{}")]);
    let all_null = unshredded(metadata(&[]), vec![None]);
    assert_eq!(decode(&all_null), vec![ok("null")]);
}

proptest! {
    /// Every prefix and every one-byte change of a valid value decodes or is
    /// `Malformed`; none panics.
    #[test]
    fn damaged_values_never_panic(cut in 0usize..64, flip in 0usize..64, byte in any::<u8>()) {
        let inner = object(&[(1, primitive(5, &7i32.to_le_bytes())), (0, short_string("yy"))]);
        let full = array(&[inner.clone(), primitive(16, &[2, 0, 0, 0, b'o', b'k']), inner]);
        let mut value = full[..cut.min(full.len())].to_vec();
        if let Some(b) = value.get_mut(flip) {
            *b = byte;
        }
        let mut meta = metadata(&["k", "n"]);
        if let Some(b) = meta.get_mut(flip) {
            *b ^= byte & 0x0f;
        }
        let _ = decode(&unshredded(meta, vec![Some(value)]));
    }
}
