//! ISO 8601 timestamps, dates and times, and the values that custom patterns
//! capture. Everything is validated against the calendar: Feb 30 and hour 24
//! stay strings.

pub use crate::value::calendar::days_from_civil;

/// A point in time: seconds since the epoch (UTC) and nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instant {
    pub secs: i64,
    pub nanos: u32,
}

/// Reads exactly `n` ASCII digits at `*i`.
fn digits(b: &[u8], i: &mut usize, n: usize) -> Option<u32> {
    let s = b.get(*i..*i + n)?;
    let mut v = 0u32;
    for &c in s {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as u32;
    }
    *i += n;
    Some(v)
}

fn expect(b: &[u8], i: &mut usize, c: u8) -> Option<()> {
    (b.get(*i) == Some(&c)).then(|| *i += 1)
}

/// Nanoseconds from 1–9 fraction digits.
pub fn fraction_nanos(f: &[u8]) -> Option<u32> {
    if f.is_empty() || f.len() > 9 || !f.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v = 0u32;
    for &c in f {
        v = v * 10 + (c - b'0') as u32;
    }
    Some(v * 10u32.pow(9 - f.len() as u32))
}

/// Seconds east of UTC from `Z`, `±HH:MM`, `±HHMM` or `±HH`.
pub fn offset_seconds(t: &[u8]) -> Option<i64> {
    match t {
        b"Z" | b"z" => Some(0),
        [sign @ (b'+' | b'-'), rest @ ..] => {
            let mut i = 0;
            let h = digits(rest, &mut i, 2)?;
            let m = match rest.len() {
                2 => 0,
                4 => digits(rest, &mut i, 2)?,
                5 => {
                    expect(rest, &mut i, b':')?;
                    digits(rest, &mut i, 2)?
                }
                _ => return None,
            };
            if h > 23 || m > 59 {
                return None;
            }
            let s = (h * 3600 + m * 60) as i64;
            Some(if *sign == b'-' { -s } else { s })
        }
        _ => None,
    }
}

/// Seconds of the day from a validated hour, minute and second.
pub fn seconds_of_day(h: u32, m: u32, s: u32) -> Option<i64> {
    (h <= 23 && m <= 59 && s <= 59).then_some((h * 3600 + m * 60 + s) as i64)
}

/// Builds an instant from (year, month, day) and (hour, minute, second);
/// `offset` is seconds east of UTC (the instant is normalised to UTC).
pub fn instant(date: (i64, u32, u32), time: (u32, u32, u32), nanos: u32, offset: i64) -> Option<Instant> {
    let days = days_from_civil(date.0, date.1, date.2)?;
    let sod = seconds_of_day(time.0, time.1, time.2)?;
    Some(Instant { secs: days * 86_400 + sod - offset, nanos })
}

/// `YYYY-MM-DD`.
pub fn parse_iso_date(s: &str) -> Option<i32> {
    let b = s.as_bytes();
    if b.len() != 10 {
        return None;
    }
    let mut i = 0;
    let y = digits(b, &mut i, 4)?;
    expect(b, &mut i, b'-')?;
    let m = digits(b, &mut i, 2)?;
    expect(b, &mut i, b'-')?;
    let d = digits(b, &mut i, 2)?;
    i32::try_from(days_from_civil(y as i64, m, d)?).ok()
}

/// `HH:MM:SS` with an optional `.fraction` (1–9 digits): nanoseconds of the day.
pub fn parse_iso_time(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let mut i = 0;
    let (sod, nanos) = time_part(b, &mut i)?;
    (i == b.len()).then_some(sod * 1_000_000_000 + nanos as i64)
}

fn time_part(b: &[u8], i: &mut usize) -> Option<(i64, u32)> {
    let h = digits(b, i, 2)?;
    expect(b, i, b':')?;
    let m = digits(b, i, 2)?;
    expect(b, i, b':')?;
    let s = digits(b, i, 2)?;
    let sod = seconds_of_day(h, m, s)?;
    let nanos = fraction_at(b, i)?;
    Some((sod, nanos))
}

/// The nanoseconds of an optional `.fraction` at `*i` (0 without one),
/// moving `*i` past it.
#[inline]
fn fraction_at(b: &[u8], i: &mut usize) -> Option<u32> {
    if b.get(*i) != Some(&b'.') {
        return Some(0);
    }
    let start = *i + 1;
    let mut end = start;
    while end < b.len() && b[end].is_ascii_digit() {
        end += 1;
    }
    let nanos = fraction_nanos(&b[start..end])?;
    *i = end;
    Some(nanos)
}

/// Two ASCII digits as a number.
#[inline(always)]
fn pair(high: u8, low: u8) -> Option<u32> {
    let (h, l) = (high.wrapping_sub(b'0'), low.wrapping_sub(b'0'));
    (h <= 9 && l <= 9).then(|| u32::from(h) * 10 + u32::from(l))
}

/// `YYYY-MM-DD[T| ]HH:MM:SS[.fraction][Z|±HH:MM|±HHMM|±HH]`. Without an
/// offset the time is taken as UTC.
pub fn parse_iso_timestamp(s: &str) -> Option<Instant> {
    parse_iso_timestamp_bytes(s.as_bytes())
}

/// [`parse_iso_timestamp`] of a text's bytes (the grammar is ASCII).
pub fn parse_iso_timestamp_bytes(b: &[u8]) -> Option<Instant> {
    // The date, its separator and the whole seconds sit at fixed places
    // in the first 19 bytes: read there as pairs of digits, they cost a
    // third of a walk byte by byte through `digits` and `expect` (a
    // timestamp column is parsed once by the probe and once by the scan).
    let head: &[u8; 19] = b.get(..19)?.try_into().ok()?;
    let at = |i: usize| pair(head[i], head[i + 1]);
    if head[4] != b'-'
        || head[7] != b'-'
        || !matches!(head[10], b'T' | b't' | b' ')
        || head[13] != b':'
        || head[16] != b':'
    {
        return None;
    }
    let y = at(0)? * 100 + at(2)?;
    let (mo, d) = (at(5)?, at(8)?);
    let sod = seconds_of_day(at(11)?, at(14)?, at(17)?)?;
    let mut i = 19;
    let nanos = fraction_at(b, &mut i)?;
    let offset = if i == b.len() { 0 } else { offset_seconds(&b[i..])? };
    let days = days_from_civil(y as i64, mo, d)?;
    Some(Instant { secs: days * 86_400 + sod - offset, nanos })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The reading byte by byte that `parse_iso_timestamp` reads at fixed
    /// places: the same grammar, walked with `digits` and `expect`.
    fn by_pieces(s: &str) -> Option<Instant> {
        let b = s.as_bytes();
        if b.len() < 19 {
            return None;
        }
        let mut i = 0;
        let y = digits(b, &mut i, 4)?;
        expect(b, &mut i, b'-')?;
        let mo = digits(b, &mut i, 2)?;
        expect(b, &mut i, b'-')?;
        let d = digits(b, &mut i, 2)?;
        if !matches!(b.get(i), Some(b'T' | b't' | b' ')) {
            return None;
        }
        i += 1;
        let (sod, nanos) = time_part(b, &mut i)?;
        let offset = if i == b.len() { 0 } else { offset_seconds(&b[i..])? };
        let days = days_from_civil(y as i64, mo, d)?;
        Some(Instant { secs: days * 86_400 + sod - offset, nanos })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: crate::test_support::cases(2048), .. ProptestConfig::default() })]

        /// Text near the grammar (a wrong separator or digit anywhere, a
        /// day past its month, a 24th hour, a fraction or offset of any
        /// length) reads the same at fixed places as piece by piece.
        #[test]
        fn fixed_places_read_what_pieces_read(
            s in "[0-9x]{4}[-/][01][0-9x]-[0-3][0-9][T t_][0-2][0-9]:[0-6][0-9][:.][0-6][0-9](\\.[0-9]{0,10})?(Z|z|[-+][0-9]{1,2}(:?[0-9]{2})?|x)?",
        ) {
            prop_assert_eq!(parse_iso_timestamp(&s), by_pieces(&s), "{:?}", s);
        }
    }

    #[test]
    fn iso_timestamps_normalise_to_utc() {
        let t = parse_iso_timestamp("2026-01-02T03:04:05Z").unwrap();
        assert_eq!(t, Instant { secs: 1_767_323_045, nanos: 0 });
        let t2 = parse_iso_timestamp("2026-01-02 04:04:05+01:00").unwrap();
        assert_eq!(t2, t);
        assert_eq!(parse_iso_timestamp("2026-01-02T03:04:05.123456789Z").unwrap().nanos, 123_456_789);
        assert_eq!(parse_iso_timestamp("2026-01-02T03:04:05-0130").unwrap().secs, t.secs + 5400);
        assert_eq!(parse_iso_timestamp("2026-01-02T03:04:05").unwrap(), t);
        for bad in [
            "2026-02-30T00:00:00Z",
            "2026-01-02T24:00:00Z",
            "2026-01-02T03:04Z",
            "2026-01-02",
            "2026-01-02T03:04:05+25:00",
            "2026-01-02T03:04:05.Z",
            "x026-01-02T03:04:05Z",
        ] {
            assert_eq!(parse_iso_timestamp(bad), None, "{bad}");
        }
    }

    #[test]
    fn dates_and_times() {
        assert_eq!(parse_iso_date("1970-01-01"), Some(0));
        assert_eq!(parse_iso_date("2024-02-29"), Some(19_782));
        assert_eq!(parse_iso_date("2023-02-29"), None);
        assert_eq!(parse_iso_date("2024-13-01"), None);
        assert_eq!(parse_iso_time("23:59:59"), Some(86_399 * 1_000_000_000));
        assert_eq!(parse_iso_time("00:00:00.5"), Some(500_000_000));
        assert_eq!(parse_iso_time("24:00:00"), None);
        assert_eq!(parse_iso_time("12:00"), None);
    }
}
