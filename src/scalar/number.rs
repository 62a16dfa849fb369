//! Integer and float grammars for string values.
//!
//! Integers: `[+-]?digits`, no grouping, no leading zeros (`"007"` stays a
//! string: zero-padded codes are identifiers, not numbers), within i64.
//! Floats: `[+-]?` integer part with optional strict grouping (first group
//! 1–3 digits, every later group exactly 3), optional decimal part, optional
//! exponent of at most three digits (hex-looking ids such as
//! `0e82755886128064` stay strings); the separators are configurable.

/// Parses an integer; `None` for anything else, including overflow (no
/// silent wrapping or rounding).
// Always inlined: called per cell by the whole parse and by a BIGINT
// column's `int_alone`, it was left a call of its own in both (117 M of
// a `COPY` of the bench CSV's 19 MB slice, callgrind); its slow path,
// past 18 digits, is a call to `str::parse`.
#[inline(always)]
pub fn parse_int(s: &str) -> Option<i64> {
    parse_int_bytes(s.as_bytes())
}

/// [`parse_int`] of a text's bytes: the hot paths slice a cell's bytes,
/// which costs no check that the cut falls between characters (the
/// grammar is ASCII).
#[inline(always)]
pub fn parse_int_bytes(b: &[u8]) -> Option<i64> {
    let (negative, digits) = match b.first()? {
        b'-' => (true, &b[1..]),
        b'+' => (false, &b[1..]),
        _ => (false, b),
    };
    if digits.is_empty() || (digits.len() > 1 && digits[0] == b'0') {
        return None;
    }
    // Up to 18 digits cannot overflow: the value is taken in the pass
    // that checks the digits (most integers of a file), where a check and
    // then `str::parse` read each twice.
    if digits.len() <= 18 {
        let mut value = 0i64;
        for &c in digits {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            value = value * 10 + i64::from(d);
        }
        return Some(if negative { -value } else { value });
    }
    if !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // i64's own parser accepts a leading '+', and reports overflow (the
    // bytes are a sign and digits: ASCII, so UTF-8).
    std::str::from_utf8(b).ok()?.parse::<i64>().ok()
}

/// Separators of the float grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FloatFormat {
    pub decimal: u8,
    pub thousands: u8,
}

impl Default for FloatFormat {
    fn default() -> Self {
        FloatFormat { decimal: b'.', thousands: b',' }
    }
}

/// Parses a float under `fmt`. Validates the shape first; text already in
/// Rust's own syntax (no grouping, `.` as the decimal point: nearly every
/// float of a data file) is parsed as it is, and only other text is
/// rewritten into a stack buffer first. No allocation either way, and no
/// buffer to clear on the common path (measured on CSV under parsers).
#[inline]
pub fn parse_float(s: &str, fmt: FloatFormat) -> Option<f64> {
    parse_float_as(s.as_bytes(), fmt, false)
}

/// [`parse_float`] of a text's bytes (see [`parse_int_bytes`]).
#[inline]
pub fn parse_float_bytes(b: &[u8], fmt: FloatFormat) -> Option<f64> {
    parse_float_as(b, fmt, false)
}

/// [`parse_float`], with `rewrite` forcing the rewritten path (for the
/// property test that both paths agree).
#[inline(always)]
fn parse_float_as(b: &[u8], fmt: FloatFormat, rewrite: bool) -> Option<f64> {
    if b.is_empty() || b.len() > 400 {
        return None;
    }
    let mut i = usize::from(matches!(b[0], b'+' | b'-'));
    // The digits as one integer while it stays exact (at most 19 digits),
    // for the exact path at the end.
    let mut mantissa = 0u64;
    let mut digits = 0usize;
    // Integer part, with optional grouping.
    let int_start = i;
    let mut group_len = 0usize;
    let mut grouped = false;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() {
            mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
            digits += 1;
            group_len += 1;
            i += 1;
        } else if c == fmt.thousands {
            // The first group has 1–3 digits; later groups exactly 3.
            if group_len == 0 || (grouped && group_len != 3) || (!grouped && group_len > 3) {
                return None;
            }
            grouped = true;
            group_len = 0;
            i += 1;
        } else {
            break;
        }
    }
    if grouped && group_len != 3 {
        return None;
    }
    let int_digits = i - int_start;
    if int_digits > 1 && b[int_start] == b'0' && !grouped {
        return None; // leading zero, as for integers
    }
    let mut frac_digits = 0;
    if i < b.len() && b[i] == fmt.decimal {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(b[i] - b'0'));
            digits += 1;
            i += 1;
            frac_digits += 1;
        }
    }
    if int_digits == 0 && frac_digits == 0 {
        return None;
    }
    let plain = i == b.len();
    if plain && !rewrite {
        if let Some(f) = exact_decimal(mantissa, digits, frac_digits, b[0] == b'-') {
            return Some(f);
        }
    }
    if i < b.len() && matches!(b[i], b'e' | b'E') {
        i += 1;
        if i < b.len() && matches!(b[i], b'+' | b'-') {
            i += 1;
        }
        let exp_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        // At most three exponent digits: "0e82755886128064" is an id, not 0.0.
        if i == exp_start || i - exp_start > 3 {
            return None;
        }
    }
    if i != b.len() {
        return None;
    }
    // Rust's grammar takes the validated text as it is (a sign, `.5`, `5.`,
    // `e` or `E`) unless it is grouped or has another decimal point.
    // (Validated, the text is ASCII: UTF-8.)
    let f: f64 = if !grouped && fmt.decimal == b'.' && !rewrite {
        std::str::from_utf8(b).ok()?.parse().ok()?
    } else {
        in_rust_syntax(b, fmt)?
    };
    // "1e400" is not a number we can keep.
    f.is_finite().then_some(f)
}

/// The double nearest the decimal `mantissa / 10^frac_digits` (negated
/// when `negative`; `digits` is how many digits `mantissa` was read from,
/// so that a wrapped one is never taken), when Clinger's fast path applies:
/// the mantissa and the power of ten are both exact doubles, and IEEE
/// division rounds their quotient correctly, so this is the double nearest
/// the text, as Rust's parser gives it, without reading the text a second
/// time (most floats of a data file: "12.5", "-0.0042"). `None`: parse the
/// text.
#[inline]
pub fn exact_decimal(mantissa: u64, digits: usize, frac_digits: usize, negative: bool) -> Option<f64> {
    (digits <= 19 && mantissa <= MAX_EXACT_MANTISSA && frac_digits < EXACT_POWERS_OF_TEN.len()).then(|| {
        let magnitude = mantissa as f64 / EXACT_POWERS_OF_TEN[frac_digits];
        if negative {
            -magnitude
        } else {
            magnitude
        }
    })
}

/// The largest integer every smaller one of which is an exact double (2^53).
const MAX_EXACT_MANTISSA: u64 = 1 << 53;

/// 10^0 ..= 10^22: the powers of ten that are exact doubles.
const EXACT_POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
    1e21, 1e22,
];

/// Validated float text with its grouping dropped and its decimal point
/// written `.`, parsed. Only the digits between the sign and the exponent
/// are rewritten: a separator may be `-` or `+` (any ASCII punctuation is
/// taken), and the signs are not separators (rewritten, `-1-000` under
/// the thousands separator `-` was 1000 and `-10000000000000000` under
/// the decimal separator `-` was 0.1).
fn in_rust_syntax(b: &[u8], fmt: FloatFormat) -> Option<f64> {
    let sign = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let exponent = b.iter().position(|c| matches!(c, b'e' | b'E')).unwrap_or(b.len());
    let mut buf = [0u8; 400];
    buf[..sign].copy_from_slice(&b[..sign]);
    let mut n = sign;
    for &c in &b[sign..exponent] {
        if c == fmt.thousands {
            continue;
        }
        buf[n] = if c == fmt.decimal { b'.' } else { c };
        n += 1;
    }
    let tail = &b[exponent..];
    buf[n..n + tail.len()].copy_from_slice(tail);
    n += tail.len();
    std::str::from_utf8(&buf[..n]).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        assert_eq!(parse_int("42"), Some(42));
        assert_eq!(parse_int("-7"), Some(-7));
        assert_eq!(parse_int("+7"), Some(7));
        assert_eq!(parse_int("0"), Some(0));
        assert_eq!(parse_int("-0"), Some(0));
        assert_eq!(parse_int("9223372036854775807"), Some(i64::MAX));
        for bad in ["", "-", "007", "1.0", "1,000", " 1", "9223372036854775808", "12a", "١٢"] {
            assert_eq!(parse_int(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn floats_with_default_separators() {
        let f = FloatFormat::default();
        assert_eq!(parse_float("12.5", f), Some(12.5));
        assert_eq!(parse_float("1,234.56", f), Some(1234.56));
        assert_eq!(parse_float("1,234,567", f), Some(1234567.0));
        assert_eq!(parse_float("-0.5", f), Some(-0.5));
        assert_eq!(parse_float(".5", f), Some(0.5));
        assert_eq!(parse_float("5.", f), Some(5.0));
        assert_eq!(parse_float("1e3", f), Some(1000.0));
        assert_eq!(parse_float("42", f), Some(42.0));
        for bad in [
            "",
            ".",
            "1,23.4",
            "1,2345",
            ",123",
            "12,34,567",
            "1.2.3",
            "1e",
            "1e400",
            "007.5",
            "abc",
            "1 234",
            "0e82755886128064",
        ] {
            assert_eq!(parse_float(bad, f), None, "{bad:?}");
        }
    }

    #[test]
    fn floats_with_european_separators() {
        let f = FloatFormat { decimal: b',', thousands: b'.' };
        assert_eq!(parse_float("1.234,56", f), Some(1234.56));
        assert_eq!(parse_float("1234,56", f), Some(1234.56));
        assert_eq!(parse_float("1.234.567,8", f), Some(1234567.8));
        assert_eq!(parse_float("1,234.56", f), None);
        assert_eq!(parse_float("12.34", f), None);
    }

    proptest::proptest! {
        /// Plain decimal text of any length gives the double Rust's parser
        /// gives, bit for bit, on both sides of the exact path's limits.
        #[test]
        fn the_exact_path_gives_what_rusts_parser_gives(
            sign in "[+-]?", int in "[1-9][0-9]{0,19}|0", frac in "(\\.[0-9]{0,24})?"
        ) {
            let s = format!("{sign}{int}{frac}");
            let expected: Option<f64> = s.parse().ok();
            proptest::prop_assert_eq!(parse_float(&s, FloatFormat::default()).map(f64::to_bits), expected.map(f64::to_bits), "{:?}", s);
        }

        /// A number written under any two separators, `-` and `+` among
        /// them, with a sign, grouping and an exponent with its own sign,
        /// parses to the double its text in Rust's syntax gives.
        #[test]
        fn any_separators_keep_the_signs(
            sign in "[+-]?",
            int in "[1-9][0-9]{0,9}",
            frac in "[0-9]{1,4}",
            exp in proptest::option::of("[+-]?[0-9]{1,3}"),
            grouped: bool,
            seps in proptest::sample::select(vec![(b'-', b'.'), (b'.', b'-'), (b'+', b','), (b',', b'+'), (b'-', b'+'), (b'.', b',')]),
        ) {
            let (decimal, thousands) = seps;
            let fmt = FloatFormat { decimal, thousands };
            let exp = exp.map(|e| format!("e{e}")).unwrap_or_default();
            let digits = if grouped {
                let mut out = String::new();
                for (i, c) in int.chars().enumerate() {
                    if i > 0 && (int.len() - i) % 3 == 0 {
                        out.push(char::from(thousands));
                    }
                    out.push(c);
                }
                out
            } else {
                int.clone()
            };
            let text = format!("{sign}{digits}{}{frac}{exp}", char::from(decimal));
            let expected: f64 = format!("{sign}{int}.{frac}{exp}").parse().unwrap();
            // (A double past the finite range is no number kept: None.)
            let expected = expected.is_finite().then_some(expected.to_bits());
            proptest::prop_assert_eq!(parse_float(&text, fmt).map(f64::to_bits), expected, "{:?}", text);
        }

        /// Text parsed as it is gives what the rewritten text gives, for
        /// any mix of digits, signs, points, separators and exponents,
        /// under both separator conventions.
        #[test]
        fn parsing_the_text_as_it_is_agrees_with_rewriting_it(s in "[0-9+\\-.,eE]{0,12}", european: bool) {
            let fmt = if european { FloatFormat { decimal: b',', thousands: b'.' } } else { FloatFormat::default() };
            let (direct, rewritten) = (parse_float_as(s.as_bytes(), fmt, false), parse_float_as(s.as_bytes(), fmt, true));
            proptest::prop_assert_eq!(direct.map(f64::to_bits), rewritten.map(f64::to_bits), "{:?}", s);
        }
    }
}
