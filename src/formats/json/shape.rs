//! The shape of a JSON record read straight from its text, with no tape:
//! what the probe's decoding threads read first, so that a record whose
//! shape the probe has absorbed before is not decoded at all
//! (value/shape.rs, infer/shapes.rs).
//!
//! The scanner accepts a subset of what the parser accepts, and for every
//! record it accepts it writes the bytes that infer/shapes.rs writes from
//! the parsed tape. Anything it is not sure of (an escape in a key, a
//! surrogate escape that is not half of a pair, an integer of 19 digits or more, `NaN`, nesting
//! deeper than [`MAX_DEPTH`], a value that is not an object) it declines,
//! and the record is parsed as always. So a record it accepts is valid
//! JSON with that shape: no bad record can pass through it unseen (unit
//! tests below, against the parser, on valid and damaged text).

use std::sync::Arc;

use crate::formats::json::{quote_or_backslash, skip_json_ws};
use crate::value::shape::{LookupTrial, ShapeBoard, BOOL, FLOAT, INT, KEY, LIST, NULL, OBJECT, STR};

/// Deeper records are left to the parser (they rarely repeat a shape).
pub const MAX_DEPTH: usize = 32;

/// A decoding thread's look at the probe's board: whether the record that
/// starts a text has a shape posted there.
pub struct KnownShapes {
    board: Arc<ShapeBoard>,
    key: Vec<u8>,
    trial: LookupTrial,
}

impl std::fmt::Debug for KnownShapes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnownShapes").field("trial", &self.trial).finish()
    }
}

impl KnownShapes {
    pub fn new(board: Arc<ShapeBoard>) -> Self {
        KnownShapes { board, key: Vec::new(), trial: LookupTrial::default() }
    }

    pub fn board(&self) -> &Arc<ShapeBoard> {
        &self.board
    }

    /// The bytes of the record that starts `text` when its shape is on
    /// the board (the probe needs nothing more of it); `None`: decode it.
    #[inline]
    pub fn known(&mut self, text: &[u8]) -> Option<usize> {
        if !self.trial.looking() || !self.board.worth_looking() {
            return None;
        }
        let end = scan_shape(text, &mut self.key).filter(|_| self.board.contains(&self.key));
        self.trial.looked(end.is_some());
        end
    }
}

/// An open container: where its count goes in the shape, its count so far,
/// and whether it is an object.
#[derive(Clone, Copy, Default)]
struct Open {
    at: usize,
    count: u32,
    is_object: bool,
}

/// Writes into `out` the shape of the JSON object that starts `text`
/// (after JSON whitespace) and returns the bytes it spans, as the parser's
/// prefix parse would (`json::parse_value_prefix`); `None` where it
/// declines (see the module doc).
// `key`, `string_end` and `number` are inlined into this loop: as calls
// (which `#[inline]` left them) they cost a fifth of the probe's scan.
// Never inlined into the decoder's loop: there it was slower (callgrind,
// the probe of the bench JSON Lines slice: about 50 M more).
#[inline(never)]
pub fn scan_shape(text: &[u8], out: &mut Vec<u8>) -> Option<usize> {
    out.clear();
    let b = text;
    let mut pos = skip_json_ws(b, 0);
    if b.get(pos) != Some(&b'{') {
        return None;
    }
    let mut stack = [Open::default(); MAX_DEPTH];
    let mut depth = 0usize;
    loop {
        // 1. One value at `pos`: a scalar, or a container's opening.
        match *b.get(pos)? {
            open @ (b'{' | b'[') => {
                if depth == MAX_DEPTH {
                    return None;
                }
                let is_object = open == b'{';
                out.push(if is_object { OBJECT } else { LIST });
                let at = out.len();
                out.extend_from_slice(&[0; 4]);
                pos = skip_json_ws(b, pos + 1);
                let close = if is_object { b'}' } else { b']' };
                if b.get(pos) == Some(&close) {
                    pos += 1;
                } else {
                    stack[depth] = Open { at, count: 0, is_object };
                    depth += 1;
                    if is_object {
                        pos = key(b, pos, out)?;
                    }
                    continue;
                }
            }
            b'"' => {
                pos = string_end(b, pos + 1)?;
                out.push(STR);
            }
            b't' => pos = literal(b, pos, b"true", BOOL, out)?,
            b'f' => pos = literal(b, pos, b"false", BOOL, out)?,
            b'n' => pos = literal(b, pos, b"null", NULL, out)?,
            b'-' | b'0'..=b'9' => pos = number(b, pos, out)?,
            _ => return None,
        }
        // 2. A value is complete: the next entry, or closings.
        loop {
            if depth == 0 {
                return Some(pos);
            }
            let top = &mut stack[depth - 1];
            top.count += 1;
            pos = skip_json_ws(b, pos);
            match b.get(pos) {
                Some(b',') => {
                    pos = skip_json_ws(b, pos + 1);
                    if top.is_object {
                        pos = key(b, pos, out)?;
                    }
                    break;
                }
                Some(b'}') if top.is_object => {}
                Some(b']') if !top.is_object => {}
                _ => return None,
            }
            pos += 1;
            out[top.at..top.at + 4].copy_from_slice(&top.count.to_le_bytes());
            depth -= 1;
        }
    }
}

/// A key without escapes, its ':' and the whitespace after: the position
/// of its value.
#[inline(always)]
fn key(b: &[u8], pos: usize, out: &mut Vec<u8>) -> Option<usize> {
    if b.get(pos) != Some(&b'"') {
        return None;
    }
    let start = pos + 1;
    let len = quote_or_backslash(&b[start..])?;
    if b[start + len] != b'"' {
        return None;
    }
    out.push(KEY);
    out.extend_from_slice(&u32::try_from(len).ok()?.to_le_bytes());
    crate::value::shape::push_bytes(out, b, start, len);
    let colon = skip_json_ws(b, start + len + 1);
    if b.get(colon) != Some(&b':') {
        return None;
    }
    Some(skip_json_ws(b, colon + 1))
}

/// The end of a string value whose body starts at `pos`. Escapes are
/// checked as the parser checks them; of the `\u` escapes of surrogates
/// only a high one followed by a low one (a pair) is taken.
#[inline(always)]
fn string_end(b: &[u8], mut pos: usize) -> Option<usize> {
    loop {
        pos += quote_or_backslash(&b[pos..])?;
        if b[pos] == b'"' {
            return Some(pos + 1);
        }
        match *b.get(pos + 1)? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => pos += 2,
            b'u' => {
                let v = hex4(b, pos + 2)?;
                if (0xD800..0xDC00).contains(&v) {
                    // A high surrogate right before a low one is one
                    // character (emoji are written so), as the parser
                    // pairs them; any other surrogate is the parser's to
                    // judge.
                    if b.get(pos + 6..pos + 8) != Some(b"\\u") || !(0xDC00..0xE000).contains(&hex4(b, pos + 8)?) {
                        return None;
                    }
                    pos += 12;
                } else if (0xDC00..0xE000).contains(&v) {
                    return None;
                } else {
                    pos += 6;
                }
            }
            _ => return None,
        }
    }
}

/// The value of the four hex digits at `pos` (of a `\\u` escape).
#[inline(always)]
fn hex4(b: &[u8], pos: usize) -> Option<u32> {
    let mut v = 0u32;
    for &d in b.get(pos..pos + 4)? {
        v = v * 16 + (d as char).to_digit(16)?;
    }
    Some(v)
}

#[inline]
fn literal(b: &[u8], pos: usize, word: &[u8], code: u8, out: &mut Vec<u8>) -> Option<usize> {
    if !b[pos..].starts_with(word) {
        return None;
    }
    out.push(code);
    Some(pos + word.len())
}

/// A number in JSON's grammar: an integer of at most 18 digits (which
/// always fits i64) is `INT`, one with a fraction or an exponent `FLOAT`;
/// a longer integer is declined (it may or may not fit).
#[inline(always)]
fn number(b: &[u8], mut pos: usize, out: &mut Vec<u8>) -> Option<usize> {
    if b[pos] == b'-' {
        pos += 1;
    }
    let digits = |from: usize| b[from.min(b.len())..].iter().take_while(|c| c.is_ascii_digit()).count();
    let int = digits(pos);
    if int == 0 || (int > 1 && b[pos] == b'0') {
        return None;
    }
    pos += int;
    let mut float = false;
    if b.get(pos) == Some(&b'.') {
        let frac = digits(pos + 1);
        if frac == 0 {
            return None;
        }
        pos += 1 + frac;
        float = true;
    }
    if matches!(b.get(pos), Some(b'e' | b'E')) {
        pos += 1;
        if matches!(b.get(pos), Some(b'+' | b'-')) {
            pos += 1;
        }
        let exp = digits(pos);
        if exp == 0 {
            return None;
        }
        pos += exp;
        float = true;
    }
    if !float && int > 18 {
        return None;
    }
    out.push(if float { FLOAT } else { INT });
    Some(pos)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::scan_shape;
    use crate::formats::json::parse_value_prefix;
    use crate::formats::json::texts::{leaves, JsonValues, SCALARS};
    use crate::infer::ShapeCache;
    use crate::value::Tape;

    /// The shape infer/shapes.rs writes for the record the parser reads
    /// from `text`, and the bytes it used; `None` where the parser fails or
    /// the value is no object.
    fn parsed_shape(text: &str) -> Option<(Vec<u8>, usize)> {
        let mut tape = Tape::default();
        let (root, used) = parse_value_prefix(text, &mut tape).ok()?;
        let record = crate::value::ValueRef { tape: &tape, idx: root as usize };
        let mut key = Vec::new();
        ShapeCache::plain_shape_of(record, &mut key).then_some((key, used))
    }

    fn check(text: &str) -> Result<bool, TestCaseError> {
        let mut out = Vec::new();
        let scanned = scan_shape(text.as_bytes(), &mut out);
        if let Some(end) = scanned {
            let parsed = parsed_shape(text);
            prop_assert!(parsed.is_some(), "the scanner accepted {:?}, the parser did not", text);
            prop_assert_eq!(parsed, Some((out, end)), "for {:?}", text);
        }
        Ok(scanned.is_some())
    }

    /// JSON values over a few keys, with the forms the scanner declines
    /// among them (escapes in keys, surrogates, long integers, NaN).
    fn value() -> impl Strategy<Value = String> {
        JsonValues {
            leaves: leaves(&[SCALARS, &["123456789012345678"]].concat(), -99..99),
            keys: "[ab]|c\\\\n|\"",
            depth: 5,
            size: 40,
            width: 4,
            spaced: true,
        }
        .strategy()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: crate::test_support::cases(2048), .. ProptestConfig::default() })]

        /// Whatever the scanner accepts, the parser accepts, with the same
        /// shape and end.
        #[test]
        fn the_scanner_agrees_with_the_parser(
            v in value(),
            cut in any::<prop::sample::Index>(),
            insert in prop::sample::select(vec!["", "{", "}", "[", "]", ",", ":", "\"", "\\", "x", "1.", "-", "e", " ", "0", "\\udc00", "\\ud83d", "\\ud83d\\u0041"]),
            tail in prop::sample::select(vec!["", " ", "\n", " {\"a\":1}", "x"]),
        ) {
            let text = format!("{v}{tail}");
            check(&text)?;
            let at = cut.index(text.len() + 1);
            let damaged = format!("{}{insert}{}", &text[..at], &text[at..]);
            check(&damaged)?;
            let cut_out = format!("{}{}", &text[..at], &text[(at + 1).min(text.len())..]);
            check(&cut_out)?;
        }

        #[test]
        fn the_scanner_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            let _ = scan_shape(&bytes, &mut Vec::new());
        }
    }

    #[test]
    fn plain_records_are_accepted_and_the_doubtful_are_declined() {
        for text in [
            r#"{"a":1,"b":"x","c":[1,2.5,{"d":null}],"e":{},"f":[],"g":true,"h":-0.0e-1}"#,
            " {\"s\":\"q\\\"\\n\\u00e9\"}  ",
            r#"{"n":123456789012345678}"#,
            r#"{"s":"a\ud83d\ude00b","t":"\uD83D\uDE00"}"#,
        ] {
            assert!(check(text).unwrap(), "{text}");
        }
        for text in [
            r#"[1]"#,
            r#"{"k\u0041":1}"#,
            r#"{"s":"\ud800"}"#,
            r#"{"s":"\ud83d"}"#,
            r#"{"s":"\ud83d\u0041"}"#,
            r#"{"s":"\ude00\ud83d"}"#,
            r#"{"s":"a\udc00"}"#,
            r#"{"s":"\ud83d\ude0g"}"#,
            r#"{"s":"\ud83d\n"}"#,
            r#"{"n":1234567890123456789}"#,
            r#"{"n":NaN}"#,
            r#"{"n":01}"#,
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            r#"{"a":tru}"#,
            r#"{"a":1"#,
        ] {
            assert!(!check(text).unwrap(), "{text}");
        }
        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(super::MAX_DEPTH), "]".repeat(super::MAX_DEPTH));
        assert!(!check(&deep).unwrap());
    }

    #[test]
    fn a_decoding_thread_leaves_a_record_with_a_posted_shape_undecoded() {
        use crate::formats::json::{decode_line_records, LineProgress};
        use crate::formats::{Batch, KNOWN_SHAPE};
        let board = std::sync::Arc::new(crate::value::shape::ShapeBoard::default());
        let mut shape = Vec::new();
        scan_shape(br#"{"a":1}"#, &mut shape).unwrap();
        board.post(&shape);
        let mut batch = Batch { known_shapes: Some(super::KnownShapes::new(board)), ..Default::default() };
        for line in [r#"{"a":2}"#, r#"{"a":"x"}"#, r#" {"a":3} {"a":-4}"#] {
            decode_line_records(line.as_bytes(), &mut batch, (1, 0), "the line", &mut LineProgress::default(), 10);
        }
        let roots: Vec<bool> = batch.tape.roots.iter().map(|&r| r == KNOWN_SHAPE).collect();
        assert_eq!(roots, [true, false, true, true]);
        assert!(batch.meta.iter().all(|m| m.error.is_none()));
        assert_eq!(batch.meta[3].byte, 9);
        assert!(batch.multi_record_lines);
        // The record that was decoded is whole on the tape.
        let mut json = String::new();
        crate::value::write_compact_json(batch.tape.record(1), &mut json);
        assert_eq!(json, r#"{"a":"x"}"#);
    }
}
