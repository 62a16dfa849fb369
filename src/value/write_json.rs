//! Compact JSON text of a tape value (iterative: no recursion per nesting
//! level), and the ISO 8601 timestamp text the engine writes.

use super::{Node, ValueRef};

/// Writes a value as compact JSON text. Iterative, so a value nested 100,000
/// levels deep cannot overflow the stack.
pub fn write_compact_json(value: ValueRef<'_>, out: &mut String) {
    let tape = value.tape;
    let end = tape.skip(value.idx);
    // For each open container: (is_object, entries left to write).
    let mut stack: Vec<(bool, u32)> = Vec::new();
    // The previous token completed a value, so a sibling needs a comma.
    let mut after_value = false;
    for i in value.idx..end {
        let node = tape.nodes[i];
        let in_list = matches!(stack.last(), Some((false, _)));
        if after_value && (matches!(node, Node::Key { .. }) || in_list) {
            out.push(',');
        }
        match node {
            Node::Key { start, len } => {
                write_json_string(tape.text_of(start, len), out);
                out.push(':');
                after_value = false;
                continue;
            }
            Node::List { len, .. } | Node::Object { len, .. } | Node::Map { len, .. } => {
                let is_object = matches!(node, Node::Object { .. });
                out.push(if is_object { '{' } else { '[' });
                stack.push((is_object, len));
                after_value = false;
                if len > 0 {
                    continue;
                }
            }
            Node::Null => out.push_str("null"),
            Node::Bool(b) => out.push_str(if b { "true" } else { "false" }),
            Node::Int(n) => {
                use std::fmt::Write;
                let _ = write!(out, "{n}");
            }
            Node::Float(f) => write_float(f, out),
            Node::Str { start, len } => write_json_string(tape.text_of(start, len), out),
            Node::Declared { kind, bits } => super::declared_text::write_declared(kind, bits, tape, true, out),
            // Typed temporals are written as ISO 8601 strings.
            Node::Timestamp { value, unit } => {
                let (secs, nanos) = unit.split(value);
                out.push('"');
                write_iso_timestamp(secs, nanos, out);
                out.push('"');
            }
            Node::Date(days) => {
                let (y, m, d) = super::calendar::civil_from_days(days as i64);
                use std::fmt::Write;
                let _ = write!(out, "\"{y:04}-{m:02}-{d:02}\"");
            }
            Node::Time(nanos) => {
                use std::fmt::Write;
                let s = nanos.div_euclid(1_000_000_000);
                let frac = nanos.rem_euclid(1_000_000_000);
                let _ = write!(out, "\"{:02}:{:02}:{:02}.{frac:09}\"", s / 3600, s / 60 % 60, s % 60);
            }
        }
        // A value is complete (a scalar, or an empty container opened above).
        after_value = true;
        if matches!(node, Node::List { .. } | Node::Object { .. } | Node::Map { .. }) {
            // The empty container itself is on the stack; close it first.
            if let Some((is_object, _)) = stack.pop() {
                out.push(if is_object { '}' } else { ']' });
            }
        }
        if let Some(parent) = stack.last_mut() {
            parent.1 -= 1;
        }
        // Close every container whose entries are all written.
        while let Some(&(is_object, 0)) = stack.last() {
            stack.pop();
            out.push(if is_object { '}' } else { ']' });
            if let Some(parent) = stack.last_mut() {
                parent.1 -= 1;
            }
        }
    }
}

/// `2026-01-02T03:04:05.123456789Z` (nine fraction digits, UTC).
pub fn write_iso_timestamp(secs: i64, nanos: u32, out: &mut String) {
    use std::fmt::Write;
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = super::calendar::civil_from_days(days);
    let _ = write!(out, "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{nanos:09}Z", sod / 3600, sod / 60 % 60, sod % 60);
}

fn write_float(f: f64, out: &mut String) {
    if f.is_finite() {
        use std::fmt::Write;
        let _ = write!(out, "{f:?}");
    } else if f.is_nan() {
        // JSON has no infinities or NaN; these are the forms Python writes
        // and our reader and DuckDB's read_json accept, so no value is lost.
        out.push_str("NaN");
    } else if f > 0.0 {
        out.push_str("Infinity");
    } else {
        out.push_str("-Infinity");
    }
}

pub fn write_json_string(s: &str, out: &mut String) {
    out.push('"');
    let mut last = 0;
    for (i, b) in s.bytes().enumerate() {
        let escape: Option<&str> = match b {
            b'"' => Some("\\\""),
            b'\\' => Some("\\\\"),
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            0x00..=0x1f => None,
            _ => continue,
        };
        out.push_str(&s[last..i]);
        match escape {
            Some(e) => out.push_str(e),
            None => {
                use std::fmt::Write;
                let _ = write!(out, "\\u{:04x}", b);
            }
        }
        last = i + 1;
    }
    out.push_str(&s[last..]);
    out.push('"');
}
