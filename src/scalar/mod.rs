//! String-to-scalar parsing: the `parse_*`, `*_tokens`, `*_formats` and
//! `custom_*_patterns` options. Only strings are parsed (CSV cells, XML text,
//! quoted JSON values); JSON numbers and booleans are typed by their syntax.
//!
//! Every enabled parser first tries the value unchanged, then once more
//! without surrounding ASCII whitespace (space, tab, CR, LF, FF, VT); the
//! trimmed attempt is a sub-slice, so nothing is allocated. A value no parser
//! takes stays the original string.

mod number;
mod patterns;
#[cfg(test)]
mod proptests;
mod quick;
mod strftime;
mod temporal;

pub use number::{exact_decimal, parse_float, parse_float_bytes, parse_int, parse_int_bytes, FloatFormat};
pub use patterns::{CustomPatterns, PatternKind};
pub use quick::{QuickKind, QuickParse};
pub use strftime::DateFormats;
pub use temporal::{parse_iso_date, parse_iso_time, parse_iso_timestamp, parse_iso_timestamp_bytes, Instant};

/// What a string parsed to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Parsed {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Timestamp(Instant),
    /// Days since the epoch.
    Date(i32),
    /// Nanoseconds since midnight.
    Time(i64),
}

/// The configured parsers, compiled once at bind.
#[derive(Clone, Debug, Default)]
pub struct ScalarParsers {
    pub integers: bool,
    pub floats: Option<FloatFormat>,
    /// Lower-cased tokens; empty means the rule is off.
    pub true_tokens: Vec<String>,
    pub false_tokens: Vec<String>,
    pub iso_timestamps: bool,
    pub iso_dates: bool,
    pub iso_times: bool,
    /// `timestamp_formats`, `date_formats`, `time_formats` (strftime).
    pub formats: DateFormats,
    pub custom: CustomPatterns,
}

/// The whitespace the parsers' trim-and-retry takes off a value's ends.
pub(crate) fn is_trim_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0c' | '\x0b')
}

/// Whether a text that ends with `end` (its first or last byte) has
/// something to trim there: the trimmed characters are ASCII, so a byte
/// tells, and a text whose end bytes are not is never walked again.
#[inline]
pub(crate) fn trims_at(end: Option<&u8>) -> bool {
    end.is_some_and(|&b| is_trim_space(char::from(b)))
}

impl ScalarParsers {
    /// Every parser off (usable in a `static`).
    pub const fn none() -> Self {
        ScalarParsers {
            integers: false,
            floats: None,
            true_tokens: Vec::new(),
            false_tokens: Vec::new(),
            iso_timestamps: false,
            iso_dates: false,
            iso_times: false,
            formats: DateFormats::none(),
            custom: CustomPatterns::none(),
        }
    }

    /// True when any parser is on; otherwise strings are never looked at.
    pub fn any(&self) -> bool {
        self.integers
            || self.floats.is_some()
            || !self.true_tokens.is_empty()
            || !self.false_tokens.is_empty()
            || self.iso_timestamps
            || self.iso_dates
            || self.iso_times
            || !self.formats.is_empty()
            || !self.custom.is_empty()
    }

    /// Parses a string: exact first, then trimmed. Inlined, so that the
    /// caller reads the result where [`ScalarParsers::parse_into`] wrote it.
    #[inline(always)]
    pub fn parse(&self, s: &str) -> Parsed {
        let mut out = Parsed::None;
        self.parse_into(s, &mut out);
        out
    }

    /// What [`ScalarParsers::parse`] gives the text of bytes `s` when that
    /// is an integer (bytes: a cell's, sliced without a check that the cut
    /// falls between characters),
    /// found by the integer parser alone (a BIGINT column's values need no
    /// other parser tried first): `Some(n)` only where `parse` gives
    /// `Parsed::Int(n)`; `None` where the text needs the whole parse to
    /// tell (a Boolean token may take it, or its trimmed text may parse).
    /// An integer's text starts with a digit or a sign and is no token when
    /// there are none, and the integer parser is the first `parse` tries
    /// then.
    #[inline]
    pub fn int_alone(&self, s: &[u8]) -> Option<i64> {
        (self.integers && self.no_tokens()).then(|| parse_int_bytes(s)).flatten()
    }

    /// What a DOUBLE column takes of the text of bytes `s` by the float
    /// parser alone:
    /// `Some(f)` only where [`ScalarParsers::parse`] gives `Float(f)`, or
    /// `Int(n)` whose double is `f` (a decimal integer's text parses to the
    /// double nearest it, which is the integer's own; `-0` keeps its sign
    /// both ways, see `route::column::parsed_int_as_double`); `None` where
    /// the text needs the whole parse to tell, as for
    /// [`ScalarParsers::int_alone`].
    #[inline]
    pub fn float_alone(&self, s: &[u8]) -> Option<f64> {
        let fmt = self.floats.filter(|_| self.no_tokens())?;
        parse_float_bytes(s, fmt)
    }

    /// What a timestamp column takes of the text of bytes `s` by the ISO
    /// parser alone:
    /// `Some(t)` only where [`ScalarParsers::parse`] gives `Timestamp(t)`.
    /// An ISO timestamp (`YYYY-MM-DD` and a time) parses as no number: its
    /// fifth byte `-` follows four digits, which no integer takes and the
    /// float grammar refuses whatever its separators (a first group of
    /// four digits, or a decimal part followed by `T` or a space); the
    /// ISO timestamp is the first temporal parser `parse` tries.
    #[inline]
    pub fn iso_timestamp_alone(&self, s: &[u8]) -> Option<Instant> {
        (self.iso_timestamps && self.no_tokens()).then(|| parse_iso_timestamp_bytes(s)).flatten()
    }

    /// [`ScalarParsers::parse`] into `out` (which must hold `Parsed::None`).
    /// The hot paths read the result in place: a `Parsed` returned by
    /// value was copied with wider loads than the stores that wrote it, a
    /// stall on data just written that perf put at a third of the CSV
    /// router's own time.
    #[inline]
    pub fn parse_into(&self, s: &str, out: &mut Parsed) {
        self.parse_exact_into(s, out);
        if *out != Parsed::None {
            return;
        }
        // Most strings that parse as nothing (names, codes) have nothing to
        // trim, and are not walked again.
        if !trims_at(s.as_bytes().first()) && !trims_at(s.as_bytes().last()) {
            return;
        }
        let trimmed = s.trim_matches(is_trim_space);
        if trimmed.len() == s.len() || trimmed.is_empty() {
            return;
        }
        self.parse_exact_into(trimmed, out);
    }

    /// One attempt, in a fixed order: Boolean tokens, integers, floats,
    /// timestamps (ISO, then strftime formats, then custom patterns), dates,
    /// times. `out` is written where a parser takes the text: a `Parsed`
    /// returned and then copied into `out` cost 8 of this call's some 50
    /// instructions of its own per cell of a CSV (callgrind).
    #[inline(never)]
    fn parse_exact_into(&self, s: &str, out: &mut Parsed) {
        if s.is_empty() {
            return;
        }
        if let Some(b) = self.token(s) {
            *out = Parsed::Bool(b);
            return;
        }
        // Cheap shape test: every numeric and temporal grammar starts with a
        // digit, a sign or a decimal separator; formats and custom patterns
        // may not, but every temporal value has a digit somewhere.
        let first = s.as_bytes()[0];
        let numeric_start =
            first.is_ascii_digit() || first == b'+' || first == b'-' || self.floats.is_some_and(|f| first == f.decimal);
        if numeric_start {
            if self.integers {
                if let Some(n) = parse_int(s) {
                    *out = Parsed::Int(n);
                    return;
                }
            }
            if let Some(fmt) = self.floats {
                if let Some(f) = parse_float(s, fmt) {
                    *out = Parsed::Float(f);
                    return;
                }
            }
        }
        let iso_start = first.is_ascii_digit();
        let user = (!self.formats.is_empty() || !self.custom.is_empty()) && s.bytes().any(|b| b.is_ascii_digit());
        let temporal = |kind: PatternKind, iso_on: bool, iso: fn(&str) -> Option<Parsed>| {
            if iso_start && iso_on {
                if let Some(p) = iso(s) {
                    return Some(p);
                }
            }
            if !user {
                return None;
            }
            self.formats.parse(s, kind).or_else(|| self.custom.parse(s, kind))
        };
        let found =
            temporal(PatternKind::Timestamp, self.iso_timestamps, |s| parse_iso_timestamp(s).map(Parsed::Timestamp))
                .or_else(|| temporal(PatternKind::Date, self.iso_dates, |s| parse_iso_date(s).map(Parsed::Date)))
                .or_else(|| temporal(PatternKind::Time, self.iso_times, |s| parse_iso_time(s).map(Parsed::Time)));
        if let Some(parsed) = found {
            *out = parsed;
        }
    }

    /// No Boolean token is given: no text parses as a Boolean.
    #[inline]
    pub(crate) fn no_tokens(&self) -> bool {
        self.true_tokens.is_empty() && self.false_tokens.is_empty()
    }

    fn token(&self, s: &str) -> Option<bool> {
        if self.no_tokens() {
            return None;
        }
        let ascii = s.is_ascii();
        let matches = |t: &String| {
            if ascii {
                t.len() == s.len() && t.eq_ignore_ascii_case(s)
            } else {
                lowercase_equals(s, t)
            }
        };
        if self.true_tokens.iter().any(matches) {
            Some(true)
        } else if self.false_tokens.iter().any(matches) {
            Some(false)
        } else {
            None
        }
    }
}

/// `s.to_lowercase() == lower`, without building the lower-cased string:
/// a Boolean parser looks at every non-ASCII string (a city, a note), and
/// one allocation per token per value was a hot path's cost. Only a
/// capital sigma lower-cases by its context (`str::to_lowercase` writes a
/// final sigma at a word's end); a string holding one takes the allocating
/// path, so the answer is `to_lowercase`'s for every string.
pub(crate) fn lowercase_equals(s: &str, lower: &str) -> bool {
    if s.contains('\u{3a3}') {
        return s.to_lowercase() == lower;
    }
    s.chars().flat_map(char::to_lowercase).eq(lower.chars())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_on() -> ScalarParsers {
        ScalarParsers {
            integers: true,
            floats: Some(FloatFormat::default()),
            true_tokens: vec!["yes".into(), "y".into()],
            false_tokens: vec!["no".into()],
            iso_timestamps: true,
            iso_dates: true,
            iso_times: true,
            formats: DateFormats::default(),
            custom: CustomPatterns::default(),
        }
    }

    #[test]
    fn trim_and_retry() {
        let p = all_on();
        assert_eq!(p.parse(" 123456"), Parsed::Int(123_456));
        assert_eq!(p.parse(" yes "), Parsed::Bool(true));
        assert_eq!(p.parse("YES"), Parsed::Bool(true));
        assert_eq!(p.parse(" 2026-01-02 "), Parsed::Date(parse_iso_date("2026-01-02").unwrap()));
        assert_eq!(p.parse("   "), Parsed::None);
        assert_eq!(p.parse(" abc "), Parsed::None);
        // An exact token with surrounding spaces matches before trimming.
        let q = ScalarParsers { true_tokens: vec![" on ".into()], ..ScalarParsers::default() };
        assert_eq!(q.parse(" on "), Parsed::Bool(true));
        assert_eq!(q.parse("on"), Parsed::None);
    }

    #[test]
    fn opt_in() {
        let off = ScalarParsers::default();
        assert!(!off.any());
        for s in ["42", "1.5", "2026-01-02", "yes"] {
            assert_eq!(off.parse(s), Parsed::None);
        }
        // parse_floats alone takes integer-looking strings as floats.
        let floats = ScalarParsers { floats: Some(FloatFormat::default()), ..ScalarParsers::default() };
        assert_eq!(floats.parse("42"), Parsed::Float(42.0));
    }
}
