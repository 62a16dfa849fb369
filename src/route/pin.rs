//! A pinned field's values (`pin_types`, infer/policy.rs): each converted
//! to the pinned type when that loses nothing.

use crate::infer::{Classified, ScalarKind, ValueClass};
use crate::scalar::{FloatFormat, Instant, Parsed, ScalarParsers};
use crate::value::Node;

/// A pinned field's value as its pinned type, if it converts without loss;
/// `None`: it does not (the caller rescues or nulls it, and records it).
/// Strings are read with `parsers` (every rule on); numbers convert when
/// exact (an integer to DOUBLE up to 2^53, an integral DOUBLE to BIGINT);
/// a date is a timestamp at midnight UTC. VARCHAR and JSON pins are
/// written as text by the caller: see [`PinnedValue`].
pub(super) fn pinned_value(kind: ScalarKind, c: &Classified<'_>, parsers: &ScalarParsers) -> Option<PinnedValue> {
    let node = c.value.node();
    match kind {
        ScalarKind::Json => return Some(PinnedValue::Text),
        ScalarKind::Str => {
            let container = matches!(c.class, ValueClass::List | ValueClass::Object | ValueClass::Map)
                || matches!(node, Node::List { .. } | Node::Object { .. });
            return (!container).then_some(PinnedValue::Text);
        }
        _ => {}
    }
    let parsed = match node {
        Node::Bool(b) => Parsed::Bool(b),
        Node::Int(n) => Parsed::Int(n),
        Node::Float(f) => Parsed::Float(f),
        Node::Str { start, len } => match c.parsed {
            Parsed::None => parsers.parse(c.value.tape.text_of(start, len)),
            p => p,
        },
        _ => c.parsed,
    };
    let converted = match (kind, parsed) {
        (ScalarKind::Bool, Parsed::Bool(b)) => Parsed::Bool(b),
        (ScalarKind::Int, Parsed::Int(n)) => Parsed::Int(n),
        (ScalarKind::Int, Parsed::Float(f)) if f.fract() == 0.0 && (-9.2e18..9.2e18).contains(&f) => {
            Parsed::Int(f as i64)
        }
        // A string's digits must all survive: `"9007199254740993"` or a
        // 23-digit id would round in silence (a number node was rounded by
        // the JSON parser already, as in read_json).
        (ScalarKind::Float, Parsed::Float(f)) => match node {
            Node::Str { start, len } if !float_text_is_exact(c.value.tape.text_of(start, len), f, parsers) => {
                return None
            }
            _ => Parsed::Float(f),
        },
        (ScalarKind::Float, Parsed::Int(n)) if n.unsigned_abs() <= 1 << 53 => Parsed::Float(n as f64),
        (ScalarKind::Timestamp(unit), Parsed::Timestamp(t)) => {
            unit.ticks(t.secs, t.nanos)?;
            Parsed::Timestamp(t)
        }
        (ScalarKind::Timestamp(unit), Parsed::Date(d)) => {
            let t = Instant { secs: i64::from(d) * 86_400, nanos: 0 };
            unit.ticks(t.secs, t.nanos)?;
            Parsed::Timestamp(t)
        }
        (ScalarKind::Date, Parsed::Date(d)) => Parsed::Date(d),
        (ScalarKind::Time, Parsed::Time(t)) => Parsed::Time(t),
        _ => return None,
    };
    Some(PinnedValue::Parsed(converted))
}

/// How a pinned value is written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum PinnedValue {
    /// As text: a string as it is, any other scalar as its JSON text (a
    /// JSON pin: any value as compact JSON).
    Text,
    /// As this parsed value of the pinned type.
    Parsed(Parsed),
}

/// Whether `f` is the number `text` writes: the same significant digits at
/// the same decimal place (`"0.10"` and `"1e-1"` are 0.1; `"9007199254740993"`
/// and `"0.1000000000000000000001"` are not what a DOUBLE holds). The text
/// is in the float grammar of `parsers` (its separators), maybe with
/// surrounding whitespace. No allocation: the double's shortest form is
/// written into a stack buffer.
fn float_text_is_exact(text: &str, f: f64, parsers: &ScalarParsers) -> bool {
    use std::io::Write;
    if !f.is_finite() {
        return false;
    }
    let fmt = parsers.floats.unwrap_or_default();
    let Some(written) = Decimal::of(text.trim_matches(crate::scalar::is_trim_space).as_bytes(), fmt) else {
        return false;
    };
    // `{:e}` is the shortest text that reads back as `f`.
    let mut buf = [0u8; 40];
    let mut out = &mut buf[..];
    if write!(out, "{:e}", f.abs()).is_err() {
        return false;
    }
    let used = 40 - out.len();
    let Some(held) = Decimal::of(&buf[..used], FloatFormat { decimal: b'.', thousands: b',' }) else { return false };
    written == held
}

/// A decimal number as its significant digits (no leading or trailing
/// zeros) and the power of ten of the place after its last digit; the
/// sign is left out (a parsed value has the text's sign). At most 17
/// digits: a double's shortest form never has more, so a text with more
/// is not what a double holds (`None`).
#[derive(PartialEq, Eq)]
struct Decimal {
    digits: [u8; 17],
    len: usize,
    exponent: i64,
}

impl Decimal {
    fn of(text: &[u8], fmt: FloatFormat) -> Option<Decimal> {
        let mut d = Decimal { digits: [0; 17], len: 0, exponent: 0 };
        // Zeros after the last other digit: significant only if another
        // digit follows them.
        let mut zeros: i64 = 0;
        let mut i = usize::from(matches!(text.first(), Some(b'+' | b'-')));
        let mut after_point = false;
        while i < text.len() {
            match text[i] {
                b'0' => {
                    // A leading zero is no significant digit; after the
                    // point its place still counts.
                    zeros += i64::from(d.len > 0);
                    d.exponent -= i64::from(after_point);
                }
                c @ b'1'..=b'9' => {
                    for _ in 0..zeros {
                        *d.digits.get_mut(d.len)? = b'0';
                        d.len += 1;
                    }
                    zeros = 0;
                    *d.digits.get_mut(d.len)? = c;
                    d.len += 1;
                    d.exponent -= i64::from(after_point);
                }
                b'e' | b'E' => {
                    d.exponent += std::str::from_utf8(&text[i + 1..]).ok()?.parse::<i64>().ok()?;
                    break;
                }
                c if c == fmt.decimal && !after_point => after_point = true,
                c if c == fmt.thousands && !after_point => {}
                _ => return None,
            }
            i += 1;
        }
        // Trailing zeros move into the exponent.
        d.exponent += zeros;
        if d.len == 0 {
            d.exponent = 0;
        }
        Some(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(text: &str) -> bool {
        let parsers = ScalarParsers { floats: Some(FloatFormat::default()), ..ScalarParsers::none() };
        let f = crate::scalar::parse_float(text.trim(), FloatFormat::default()).unwrap();
        float_text_is_exact(text, f, &parsers)
    }

    #[test]
    fn a_pinned_double_takes_only_the_digits_it_holds() {
        for ok in [
            "0.1",
            "0.10",
            "1e-1",
            "-2.5",
            "1,234.5",
            " 3.25 ",
            "0",
            "-0.0",
            "1E5",
            "100000",
            "9007199254740992",
            "1.7976931348623157e308",
            // Zeros past 17 places that carry no digit, round numbers of
            // 30 digits, zeros between digits, after the point and leading.
            "1.000000000000000000000000000000",
            "100000000000000000000000000000",
            "1.05",
            "0.0012",
            "0.30000000000000004",
        ] {
            assert!(exact(ok), "{ok}");
        }
        for lossy in [
            "9007199254740993",
            "12345678901234567890123",
            "0.1000000000000000000001",
            "3.14159265358979323846",
            "1000000000000000000001",
        ] {
            assert!(!exact(lossy), "{lossy}");
        }
        let parsers = ScalarParsers { floats: Some(FloatFormat::default()), ..ScalarParsers::none() };
        assert!(!float_text_is_exact("1e400", f64::INFINITY, &parsers));
        // Other separators: 1.234,5 is 1234.5.
        let fmt = FloatFormat { decimal: b',', thousands: b'.' };
        let parsers = ScalarParsers { floats: Some(fmt), ..ScalarParsers::none() };
        assert!(float_text_is_exact("1.234,5", 1234.5, &parsers));
        assert!(!float_text_is_exact("1.234,5", 1234.0, &parsers));
    }
}
