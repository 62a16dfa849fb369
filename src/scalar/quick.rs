//! What the whole parse gives a text, told from its bytes alone where they
//! decide it: the probe's shape key of a CSV record needs each cell's kind,
//! not its value, and the whole parse tries the parsers in turn (a
//! timestamp fails the integer and float grammars first, a name goes
//! through the token, numeric and temporal switches). Most cells of a data
//! file are a plain integer, a plain decimal, an ISO timestamp or text that
//! starts with a letter; anything else is left to the whole parse.

use super::{parse_iso_timestamp_bytes, trims_at, FloatFormat, Instant, ScalarParsers};

/// The kinds a text is told to have; each is what
/// [`ScalarParsers::parse`] gives it (`Text`: `Parsed::None`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QuickKind {
    Text,
    Int,
    Float,
    Timestamp(Instant),
}

/// Which kinds a parser set lets the bytes tell, decided once.
#[derive(Clone, Copy, Debug, Default)]
pub struct QuickParse {
    ints: bool,
    floats: bool,
    stamps: bool,
    text: bool,
}

/// Numbers of at most this many bytes are told: far below the length at
/// which a decimal's value would overflow to infinity (which the float
/// parser refuses).
const MAX_NUMBER_BYTES: usize = 32;

impl QuickParse {
    /// Nothing is told where a Boolean token may take any text, or the
    /// float grammar has other separators than `.` and `,` (a separator
    /// that is a sign or a digit changes what a number looks like). Text
    /// is told only without strftime formats and custom patterns, which
    /// may take text of any first byte.
    pub fn of(parsers: &ScalarParsers) -> Self {
        let standard = parsers.floats.is_none_or(|f| f == FloatFormat::default());
        if !parsers.no_tokens() || !standard {
            return QuickParse::default();
        }
        QuickParse {
            ints: parsers.integers,
            floats: parsers.floats.is_some(),
            stamps: parsers.iso_timestamps,
            text: parsers.formats.is_empty() && parsers.custom.is_empty(),
        }
    }

    /// The kind [`ScalarParsers::parse`] gives the text of bytes `s` (a
    /// cell's, sliced without a check that the cut falls between
    /// characters), or `None` where the bytes alone do not tell it.
    ///
    /// - Text: the first byte starts no number (nor ISO value: those start
    ///   with a digit) and neither end is a space the parse would trim.
    /// - An integer: `[+-]?` and 1–18 digits without a leading zero, the
    ///   integer parser's grammar where it cannot overflow.
    /// - A decimal: `[+-]?digits.digits`, either part possibly empty but
    ///   not both, no leading zero; the integer parser refuses the `.`.
    /// - A timestamp: four digits and `-` (which both number grammars
    ///   refuse under these separators), then the ISO parser's own answer.
    /// - Text again: a sign or digits, then a letter other than `e`.
    #[inline(always)]
    pub fn kind(&self, b: &[u8]) -> Option<QuickKind> {
        let first = *b.first()?;
        if !first.is_ascii_digit() && !matches!(first, b'-' | b'+' | b'.') {
            let spaced = trims_at(b.first()) || trims_at(b.last());
            return (self.text && !spaced).then_some(QuickKind::Text);
        }
        if b.len() > MAX_NUMBER_BYTES {
            return None;
        }
        let sign = usize::from(matches!(first, b'-' | b'+'));
        let int_end = sign + b[sign..].iter().take_while(|c| c.is_ascii_digit()).count();
        let int_digits = int_end - sign;
        let leading_zero = int_digits > 1 && b[sign] == b'0';
        if int_end == b.len() {
            return (self.ints && (1..=18).contains(&int_digits) && !leading_zero).then_some(QuickKind::Int);
        }
        match b[int_end] {
            b'.' if self.floats && !leading_zero => {
                let frac_digits = b[int_end + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
                let whole = int_end + 1 + frac_digits == b.len();
                (whole && int_digits + frac_digits > 0).then_some(QuickKind::Float)
            }
            b'-' if self.stamps && sign == 0 && int_digits == 4 => {
                parse_iso_timestamp_bytes(b).map(QuickKind::Timestamp)
            }
            // A letter right after the leading digits ends both number
            // grammars but an exponent's, and sits where every ISO value
            // has a digit or a separator: an id such as `288c2222`, an
            // address such as `5th Avenue`.
            c if c.is_ascii_alphabetic() && !matches!(c, b'e' | b'E') => {
                (self.text && !trims_at(b.last())).then_some(QuickKind::Text)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalar::parse_iso_timestamp;

    /// The kinds of a data file's cells are told (this is no stub that
    /// leaves every text to the whole parse), and what a token, a trim or
    /// a pattern may take is not.
    #[test]
    fn plain_cells_are_told_and_the_rest_is_left() {
        let on = ScalarParsers {
            integers: true,
            floats: Some(FloatFormat::default()),
            iso_timestamps: true,
            ..ScalarParsers::none()
        };
        let quick = QuickParse::of(&on);
        assert_eq!(quick.kind(b"2999964"), Some(QuickKind::Int));
        assert_eq!(quick.kind(b"-65.05830"), Some(QuickKind::Float));
        assert_eq!(quick.kind(b".5"), Some(QuickKind::Float));
        assert_eq!(quick.kind(b"purchase"), Some(QuickKind::Text));
        assert_eq!(
            quick.kind(b"2026-01-01T00:00:02Z"),
            parse_iso_timestamp("2026-01-01T00:00:02Z").map(QuickKind::Timestamp)
        );
        assert!(quick.kind(b"2026-01-01T00:00:02Z").is_some());
        assert_eq!(quick.kind(b"288c22220148a245"), Some(QuickKind::Text));
        assert_eq!(quick.kind(b"5th Avenue"), Some(QuickKind::Text));
        for left in ["007", "1e5", " 7", "x ", "5th ", "0e82755886128064", "1,000", "2026-01-01", "", "-", "."] {
            assert_eq!(quick.kind(left.as_bytes()), None, "{left:?}");
        }
        let tokens = ScalarParsers { true_tokens: vec!["yes".into()], ..on.clone() };
        assert_eq!(QuickParse::of(&tokens).kind(b"7"), None, "a token may take any text");
        let comma = ScalarParsers { floats: Some(FloatFormat { decimal: b',', thousands: b'.' }), ..on };
        assert_eq!(QuickParse::of(&comma).kind(b"7"), None);
    }
}
