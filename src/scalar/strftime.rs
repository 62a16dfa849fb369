//! strftime formats (`timestamp_formats`, `date_formats`, `time_formats`):
//! the specifiers of DuckDB's `strptime`, compiled once at bind into a list of
//! items and matched byte by byte without allocating. docs/parsing.md lists
//! the specifiers, the whitespace rules and where this differs from DuckDB.
//!
//! A format must match the whole value (whitespace at either end aside), and
//! the result is checked against the calendar: Feb 30, a day of the year past
//! the year's end and a weekday name that is not the date's weekday give no
//! value. A format with `%z` or `%Z` gives the instant in UTC, as an ISO
//! timestamp with an offset does; without them the time is taken as UTC.

use super::patterns::{PatternKind, PerKind};
use super::temporal::{days_from_civil, seconds_of_day, Instant};
use super::Parsed;

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];
const MONTHS_ABBR: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
/// Sunday first, as `%w` counts.
const WEEKDAYS: [&str; 7] = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];
const WEEKDAYS_ABBR: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
/// The zone names `%Z` accepts (ignoring case): there is no time-zone
/// database here, so only names of UTC itself.
const UTC_NAMES: [&str; 6] = ["utc", "gmt", "ut", "z", "etc/utc", "etc/gmt"];

/// A numeric field: at most `width` digits (greedy, at least one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Num {
    /// `%Y`: exactly four digits.
    Year4,
    /// `%y`: 69–99 are 1969–1999, 00–68 are 2000–2068 (DuckDB's and Python's pivot).
    Year2,
    Month,
    Day,
    DayOfYear,
    Hour24,
    Hour12,
    Minute,
    Second,
    /// `%g`, `%f`, `%n`: the first digits of the fraction (`5` is half a second).
    Fraction,
    /// `%w`: 0 = Sunday.
    WeekdaySun0,
    /// `%u`: 1 = Monday … 7 = Sunday.
    WeekdayIso,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Item {
    /// Bytes that must appear as written (case-sensitive).
    Literal(Box<[u8]>),
    /// A run of whitespace in the pattern: one or more whitespace bytes.
    Space,
    /// Zero or more whitespace bytes (before `%e` and `%Z`).
    OptSpace,
    Num(Num, u8),
    MonthName {
        full: bool,
    },
    WeekdayName {
        full: bool,
    },
    AmPm,
    /// `%z`: `Z`, `±HH`, `±HHMM` or `±HH:MM`.
    Offset,
    /// `%Z`: a zone name; only names of UTC match.
    ZoneName,
}

/// The value slots a specifier sets; each may be set once per pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Year,
    Month,
    Day,
    DayOfYear,
    Weekday,
    Hour,
    AmPm,
    Minute,
    Second,
    Fraction,
    Zone,
}

const SLOTS: usize = 11;

impl Slot {
    fn what(self) -> &'static str {
        match self {
            Slot::Year => "the year",
            Slot::Month => "the month",
            Slot::Day => "the day",
            Slot::DayOfYear => "the day of the year",
            Slot::Weekday => "the weekday",
            Slot::Hour => "the hour",
            Slot::AmPm => "AM/PM",
            Slot::Minute => "the minute",
            Slot::Second => "the second",
            Slot::Fraction => "the fraction of a second",
            Slot::Zone => "the time zone",
        }
    }

    fn is_date(self) -> bool {
        matches!(self, Slot::Year | Slot::Month | Slot::Day | Slot::DayOfYear | Slot::Weekday)
    }

    fn is_zone(self) -> bool {
        self == Slot::Zone
    }
}

/// One compiled format.
#[derive(Clone, Debug)]
pub struct Format {
    kind: PatternKind,
    items: Vec<Item>,
    /// The date comes from month and day (else from the day of the year;
    /// with both, they must agree).
    month_day: bool,
    day_of_year: bool,
}

/// What one match read; defaults for the fields a format does not have.
#[derive(Default)]
struct Fields {
    year: i64,
    month: u32,
    day: u32,
    day_of_year: u32,
    hour: u32,
    minute: u32,
    second: u32,
    nanos: u32,
    pm: Option<bool>,
    /// 0 = Sunday.
    weekday: Option<u32>,
    /// Seconds east of UTC.
    offset: i64,
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'\x0b')
}

fn skip_space(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && is_space(b[i]) {
        i += 1;
    }
    i
}

/// The index of the name in `names` (lower case) that `b[*i..]` starts
/// with, ignoring ASCII case.
fn name(b: &[u8], i: &mut usize, names: &[&str]) -> Option<u32> {
    let rest = &b[*i..];
    let found =
        names.iter().position(|n| rest.len() >= n.len() && rest[..n.len()].eq_ignore_ascii_case(n.as_bytes()))?;
    *i += names[found].len();
    Some(found as u32)
}

/// `Z`, `±HH`, `±HHMM` or `±HH:MM`: seconds east of UTC.
fn offset(b: &[u8], i: &mut usize) -> Option<i64> {
    let sign = match b.get(*i)? {
        b'Z' | b'z' => {
            *i += 1;
            return Some(0);
        }
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let two = |at: usize| -> Option<u32> {
        let d = b.get(at..at + 2)?;
        d.iter().all(u8::is_ascii_digit).then(|| ((d[0] - b'0') * 10 + (d[1] - b'0')) as u32)
    };
    let h = two(*i + 1)?;
    let mut j = *i + 3;
    let m = if b.get(j) == Some(&b':') {
        j += 3;
        two(j - 2)?
    } else if let Some(m) = two(j) {
        j += 2;
        m
    } else {
        0
    };
    if h > 23 || m > 59 {
        return None;
    }
    *i = j;
    Some(sign * (h * 3600 + m * 60) as i64)
}

impl Format {
    /// Compiles one pattern; the error says what is wrong (the caller names
    /// the parameter and the pattern).
    fn compile(kind: PatternKind, pattern: &str) -> Result<Self, String> {
        let mut c = Compiler { kind, items: Vec::new(), literal: Vec::new(), seen: [None; SLOTS] };
        c.pattern(pattern, true)?;
        c.flush();
        // The value's surrounding whitespace is skipped, so the pattern's is too.
        while matches!(c.items.first(), Some(Item::Space)) {
            c.items.remove(0);
        }
        while matches!(c.items.last(), Some(Item::Space | Item::OptSpace)) {
            c.items.pop();
        }
        let has = |s: Slot| c.seen[s as usize].is_some();
        if has(Slot::AmPm) != (has(Slot::Hour) && c.twelve_hour()) {
            return Err(if has(Slot::AmPm) {
                "has %p without %I (AM/PM goes with the 12-hour clock %I; %H is already 0-23)".into()
            } else {
                "has %I without %p (a 12-hour clock needs AM/PM)".into()
            });
        }
        let (mut month_day, mut day_of_year) = (false, false);
        match kind {
            PatternKind::Date | PatternKind::Timestamp => {
                if !has(Slot::Year) {
                    return Err("has no year (%Y or %y)".into());
                }
                match (has(Slot::Month), has(Slot::Day)) {
                    (true, true) => month_day = true,
                    (true, false) => return Err("has a month but no day (%d, %-d or %e)".into()),
                    (false, true) => return Err("has a day but no month (%m, %-m, %b, %B or %h)".into()),
                    (false, false) if !has(Slot::DayOfYear) => {
                        return Err("has no month and day (%m and %d, or %b and %d) and no day of the year (%j)".into())
                    }
                    (false, false) => {}
                }
                day_of_year = has(Slot::DayOfYear);
            }
            PatternKind::Time => {
                if !has(Slot::Hour) {
                    return Err("has no hour (%H, or %I with %p)".into());
                }
            }
        }
        Ok(Format { kind, items: c.items, month_day, day_of_year })
    }

    /// Matches the whole value (surrounding whitespace aside).
    pub fn parse(&self, s: &str) -> Option<Parsed> {
        let b = s.as_bytes();
        let mut i = skip_space(b, 0);
        let mut f = Fields::default();
        for item in &self.items {
            match item {
                Item::Literal(l) => {
                    if !b[i..].starts_with(l) {
                        return None;
                    }
                    i += l.len();
                }
                Item::Space => {
                    if !b.get(i).is_some_and(|&c| is_space(c)) {
                        return None;
                    }
                    i = skip_space(b, i);
                }
                Item::OptSpace => i = skip_space(b, i),
                Item::Num(num, width) => {
                    let start = i;
                    let mut v = 0u32;
                    while i < b.len() && i - start < *width as usize && b[i].is_ascii_digit() {
                        v = v * 10 + (b[i] - b'0') as u32;
                        i += 1;
                    }
                    let n = i - start;
                    if n == 0 {
                        return None;
                    }
                    let within = |lo: u32, hi: u32| (lo..=hi).contains(&v).then_some(v);
                    match num {
                        Num::Year4 if n == 4 => f.year = v as i64,
                        Num::Year4 => return None,
                        Num::Year2 => f.year = if v >= 69 { 1900 + v as i64 } else { 2000 + v as i64 },
                        Num::Month => f.month = within(1, 12)?,
                        Num::Day => f.day = within(1, 31)?,
                        Num::DayOfYear => f.day_of_year = within(1, 366)?,
                        Num::Hour24 => f.hour = within(0, 23)?,
                        Num::Hour12 => f.hour = within(1, 12)?,
                        Num::Minute => f.minute = within(0, 59)?,
                        Num::Second => f.second = within(0, 59)?,
                        Num::Fraction => f.nanos = v * 10u32.pow(9 - n as u32),
                        Num::WeekdaySun0 => f.weekday = Some(within(0, 6)?),
                        Num::WeekdayIso => f.weekday = Some(within(1, 7)? % 7),
                    }
                }
                Item::MonthName { full } => f.month = name(b, &mut i, if *full { &MONTHS } else { &MONTHS_ABBR })? + 1,
                Item::WeekdayName { full } => {
                    f.weekday = Some(name(b, &mut i, if *full { &WEEKDAYS } else { &WEEKDAYS_ABBR })?)
                }
                Item::AmPm => {
                    let pm = match b.get(i..i + 2)? {
                        [a, m] if m.eq_ignore_ascii_case(&b'm') => match a.to_ascii_lowercase() {
                            b'a' => false,
                            b'p' => true,
                            _ => return None,
                        },
                        _ => return None,
                    };
                    i += 2;
                    f.pm = Some(pm);
                }
                Item::Offset => f.offset = offset(b, &mut i)?,
                Item::ZoneName => {
                    let start = i;
                    while i < b.len() && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'_' | b'/' | b'+' | b'-')) {
                        i += 1;
                    }
                    let zone = &b[start..i];
                    if !UTC_NAMES.iter().any(|n| zone.eq_ignore_ascii_case(n.as_bytes())) {
                        return None;
                    }
                }
            }
        }
        if skip_space(b, i) != b.len() {
            return None;
        }
        self.value(&f)
    }

    fn value(&self, f: &Fields) -> Option<Parsed> {
        let hour = match f.pm {
            None => f.hour,
            Some(pm) => f.hour % 12 + if pm { 12 } else { 0 },
        };
        let sod = seconds_of_day(hour, f.minute, f.second)?;
        if self.kind == PatternKind::Time {
            return Some(Parsed::Time(sod * 1_000_000_000 + f.nanos as i64));
        }
        let days = if self.month_day {
            let days = days_from_civil(f.year, f.month, f.day)?;
            if self.day_of_year && days - days_from_civil(f.year, 1, 1)? + 1 != f.day_of_year as i64 {
                return None;
            }
            days
        } else {
            let days = days_from_civil(f.year, 1, 1)? + f.day_of_year as i64 - 1;
            if days > days_from_civil(f.year, 12, 31)? {
                return None; // day 366 of a common year
            }
            days
        };
        // 1970-01-01 was a Thursday (4, counting from Sunday = 0).
        if f.weekday.is_some_and(|w| (days + 4).rem_euclid(7) != w as i64) {
            return None;
        }
        match self.kind {
            PatternKind::Date => i32::try_from(days).ok().map(Parsed::Date),
            _ => Some(Parsed::Timestamp(Instant { secs: days * 86_400 + sod - f.offset, nanos: f.nanos })),
        }
    }
}

struct Compiler {
    kind: PatternKind,
    items: Vec<Item>,
    /// Literal bytes not yet pushed.
    literal: Vec<u8>,
    /// The specifier that set each slot, as written.
    seen: [Option<&'static str>; SLOTS],
}

impl Compiler {
    fn twelve_hour(&self) -> bool {
        self.items.iter().any(|i| matches!(i, Item::Num(Num::Hour12, _)))
    }

    fn flush(&mut self) {
        if !self.literal.is_empty() {
            let l = std::mem::take(&mut self.literal);
            self.items.push(Item::Literal(l.into_boxed_slice()));
        }
    }

    /// Pushes an item; runs of whitespace items merge (a required run wins).
    fn push(&mut self, item: Item) {
        self.flush();
        match (self.items.last_mut(), &item) {
            (Some(Item::Space), Item::Space | Item::OptSpace) => {}
            (Some(last @ Item::OptSpace), Item::Space) => *last = Item::Space,
            (Some(Item::OptSpace), Item::OptSpace) => {}
            _ => self.items.push(item),
        }
    }

    fn set(&mut self, slot: Slot, spec: &'static str) -> Result<(), String> {
        if let Some(first) = self.seen[slot as usize] {
            return Err(format!("sets {} twice ({first} and {spec})", slot.what()));
        }
        let misfit = match self.kind {
            PatternKind::Timestamp => None,
            PatternKind::Date if slot.is_zone() => Some("a time zone"),
            PatternKind::Date if !slot.is_date() => Some("a time field"),
            PatternKind::Time if slot.is_zone() => Some("a time zone"),
            PatternKind::Time if slot.is_date() => Some("a date field"),
            PatternKind::Date | PatternKind::Time => None,
        };
        if let Some(class) = misfit {
            let parameter = self.kind.format_parameter();
            return Err(format!("has {spec}, {class}, which {parameter} cannot have (use timestamp_formats)"));
        }
        self.seen[slot as usize] = Some(spec);
        Ok(())
    }

    fn pattern(&mut self, pattern: &str, top: bool) -> Result<(), String> {
        let mut chars = pattern.chars();
        while let Some(ch) = chars.next() {
            if ch != '%' {
                if ch.is_ascii() && is_space(ch as u8) {
                    self.push(Item::Space);
                } else {
                    let mut buf = [0; 4];
                    self.literal.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                continue;
            }
            let Some(mut spec) = chars.next() else {
                return Err("ends with a lone %".into());
            };
            let dash = spec == '-';
            if dash {
                spec = chars.next().ok_or("ends with a lone %-")?;
            }
            use Num::*;
            let (text, slot, item): (&'static str, Slot, Item) = match (dash, spec) {
                (false, '%') => {
                    self.literal.push(b'%');
                    continue;
                }
                (false, 'c' | 'x' | 'X' | 'T') if top => {
                    // DuckDB's ISO stand-ins for the locale's representations.
                    let sub = match spec {
                        'c' => "%Y-%m-%d %H:%M:%S",
                        'x' => "%Y-%m-%d",
                        _ => "%H:%M:%S",
                    };
                    self.pattern(sub, false)?;
                    continue;
                }
                (false, 'a') => ("%a", Slot::Weekday, Item::WeekdayName { full: false }),
                (false, 'A') => ("%A", Slot::Weekday, Item::WeekdayName { full: true }),
                (false, 'w') => ("%w", Slot::Weekday, Item::Num(WeekdaySun0, 1)),
                (false, 'u') => ("%u", Slot::Weekday, Item::Num(WeekdayIso, 1)),
                (false, 'b') => ("%b", Slot::Month, Item::MonthName { full: false }),
                (false, 'h') => ("%h", Slot::Month, Item::MonthName { full: false }),
                (false, 'B') => ("%B", Slot::Month, Item::MonthName { full: true }),
                (false, 'm') => ("%m", Slot::Month, Item::Num(Month, 2)),
                (true, 'm') => ("%-m", Slot::Month, Item::Num(Month, 2)),
                (false, 'd') => ("%d", Slot::Day, Item::Num(Day, 2)),
                (true, 'd') => ("%-d", Slot::Day, Item::Num(Day, 2)),
                (false, 'e') => {
                    self.push(Item::OptSpace);
                    ("%e", Slot::Day, Item::Num(Day, 2))
                }
                (false, 'j') => ("%j", Slot::DayOfYear, Item::Num(DayOfYear, 3)),
                (true, 'j') => ("%-j", Slot::DayOfYear, Item::Num(DayOfYear, 3)),
                (false, 'y') => ("%y", Slot::Year, Item::Num(Year2, 2)),
                (true, 'y') => ("%-y", Slot::Year, Item::Num(Year2, 2)),
                (false, 'Y') => ("%Y", Slot::Year, Item::Num(Year4, 4)),
                (false, 'H') => ("%H", Slot::Hour, Item::Num(Hour24, 2)),
                (true, 'H') => ("%-H", Slot::Hour, Item::Num(Hour24, 2)),
                (false, 'I') => ("%I", Slot::Hour, Item::Num(Hour12, 2)),
                (true, 'I') => ("%-I", Slot::Hour, Item::Num(Hour12, 2)),
                (false, 'p') => ("%p", Slot::AmPm, Item::AmPm),
                (false, 'M') => ("%M", Slot::Minute, Item::Num(Minute, 2)),
                (true, 'M') => ("%-M", Slot::Minute, Item::Num(Minute, 2)),
                (false, 'S') => ("%S", Slot::Second, Item::Num(Second, 2)),
                (true, 'S') => ("%-S", Slot::Second, Item::Num(Second, 2)),
                (false, 'g') => ("%g", Slot::Fraction, Item::Num(Fraction, 3)),
                (false, 'f') => ("%f", Slot::Fraction, Item::Num(Fraction, 6)),
                (false, 'n') => ("%n", Slot::Fraction, Item::Num(Fraction, 9)),
                (false, 'z') => ("%z", Slot::Zone, Item::Offset),
                (false, 'Z') => {
                    self.push(Item::OptSpace);
                    ("%Z", Slot::Zone, Item::ZoneName)
                }
                (false, 'U' | 'W' | 'V' | 'G') => {
                    return Err(format!("has %{spec}, a week-number specifier, which is not supported"))
                }
                (d, other) => return Err(format!("has an unknown specifier %{}{other}", if d { "-" } else { "" })),
            };
            self.set(slot, text)?;
            self.push(item);
        }
        Ok(())
    }
}

/// The compiled `timestamp_formats`, `date_formats` and `time_formats`.
pub type DateFormats = PerKind<Format>;

impl DateFormats {
    /// Compiles the formats; an invalid one is an error naming the
    /// parameter, the pattern and what is wrong with it.
    pub fn compile(timestamp: &[String], date: &[String], time: &[String]) -> Result<Self, String> {
        PerKind::build(timestamp, date, time, |kind, p| {
            Format::compile(kind, p).map_err(|e| format!("the \"{}\" pattern '{p}' {e}", kind.format_parameter()))
        })
    }

    /// The first format of `kind` that matches, in the order given.
    pub fn parse(&self, s: &str, kind: PatternKind) -> Option<Parsed> {
        self.of(kind).iter().find_map(|f| f.parse(s))
    }
}

/// Formats a value with a compiled format, as DuckDB's `strftime` would
/// (for the round-trip property tests).
#[cfg(test)]
pub(crate) fn format_for_test(pattern: &str, kind: PatternKind, days: i64, nanos_of_day: i64, offset: i64) -> String {
    use crate::value::calendar::civil_from_days;
    let f = Format::compile(kind, pattern).unwrap();
    let (y, m, d) = civil_from_days(days);
    let jan1 = days_from_civil(y, 1, 1).unwrap();
    let weekday = (days + 4).rem_euclid(7) as usize;
    let secs = nanos_of_day / 1_000_000_000;
    let frac = nanos_of_day % 1_000_000_000;
    let (h, mi, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let mut out = String::new();
    let cap = |n: &str| n[..1].to_uppercase() + &n[1..];
    for item in &f.items {
        match item {
            Item::Literal(l) => out.push_str(std::str::from_utf8(l).unwrap()),
            Item::Space => out.push(' '),
            Item::OptSpace => {}
            Item::Num(num, _) => out.push_str(&match num {
                Num::Year4 => format!("{y:04}"),
                Num::Year2 => format!("{:02}", y % 100),
                Num::Month => format!("{m:02}"),
                Num::Day => format!("{d:02}"),
                Num::DayOfYear => format!("{:03}", days - jan1 + 1),
                Num::Hour24 => format!("{h:02}"),
                Num::Hour12 => format!("{:02}", if h % 12 == 0 { 12 } else { h % 12 }),
                Num::Minute => format!("{mi:02}"),
                Num::Second => format!("{s:02}"),
                Num::Fraction => {
                    let width = match f.items.iter().find_map(|i| match i {
                        Item::Num(Num::Fraction, w) => Some(*w),
                        _ => None,
                    }) {
                        Some(w) => w as usize,
                        None => 9,
                    };
                    format!("{:09}", frac)[..width].to_string()
                }
                Num::WeekdaySun0 => weekday.to_string(),
                Num::WeekdayIso => (if weekday == 0 { 7 } else { weekday }).to_string(),
            }),
            Item::MonthName { full } => {
                let n = if *full { MONTHS[m as usize - 1] } else { MONTHS_ABBR[m as usize - 1] };
                out.push_str(&cap(n));
            }
            Item::WeekdayName { full } => {
                out.push_str(&cap(if *full { WEEKDAYS[weekday] } else { WEEKDAYS_ABBR[weekday] }))
            }
            Item::AmPm => out.push_str(if h < 12 { "AM" } else { "PM" }),
            Item::Offset => {
                let sign = if offset < 0 { '-' } else { '+' };
                out.push_str(&format!("{sign}{:02}{:02}", offset.abs() / 3600, offset.abs() / 60 % 60));
            }
            Item::ZoneName => out.push_str("UTC"),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalar::parse_iso_timestamp;

    fn one(kind: PatternKind, p: &str) -> Format {
        Format::compile(kind, p).unwrap_or_else(|e| panic!("{p}: {e}"))
    }

    fn ts(p: &str, s: &str) -> Option<Instant> {
        match one(PatternKind::Timestamp, p).parse(s)? {
            Parsed::Timestamp(t) => Some(t),
            other => panic!("{other:?}"),
        }
    }

    fn date(p: &str, s: &str) -> Option<i32> {
        match one(PatternKind::Date, p).parse(s)? {
            Parsed::Date(d) => Some(d),
            other => panic!("{other:?}"),
        }
    }

    fn time(p: &str, s: &str) -> Option<i64> {
        match one(PatternKind::Time, p).parse(s)? {
            Parsed::Time(t) => Some(t),
            other => panic!("{other:?}"),
        }
    }

    fn iso(s: &str) -> Instant {
        parse_iso_timestamp(s).unwrap()
    }

    fn err(kind: PatternKind, p: &str) -> String {
        Format::compile(kind, p).unwrap_err()
    }

    #[test]
    fn twitter_created_at() {
        let p = "%a %b %d %H:%M:%S %z %Y";
        assert_eq!(ts(p, "Wed Aug 27 13:08:45 +0000 2008"), Some(iso("2008-08-27T13:08:45Z")));
        assert_eq!(ts(p, "Wed Aug 27 13:08:45 -0130 2008"), Some(iso("2008-08-27T14:38:45Z")));
        assert_eq!(ts(p, "wed AUG 27 13:08:45 +00:00 2008"), Some(iso("2008-08-27T13:08:45Z")));
        assert_eq!(ts(p, "Wed Aug 27 13:08:45 Z 2008"), Some(iso("2008-08-27T13:08:45Z")));
        // The weekday must be the date's; Feb 30 and hour 24 are no values.
        assert_eq!(ts(p, "Thu Aug 27 13:08:45 +0000 2008"), None);
        assert_eq!(ts(p, "Sat Feb 30 13:08:45 +0000 2008"), None);
        assert_eq!(ts(p, "Wed Aug 27 24:08:45 +0000 2008"), None);
        assert_eq!(ts(p, "Wed Aug 27 13:08:45 +2400 2008"), None);
        assert_eq!(ts(p, "Wed Aug 27 13:08:45 2008"), None);
    }

    #[test]
    fn numeric_fields_follow_duckdb() {
        assert_eq!(date("%d/%m/%Y", "28/01/2018"), date("%Y-%m-%d", "2018-01-28"));
        // Padded and unpadded read 1-2 digits alike, greedily.
        assert_eq!(date("%d/%m/%Y", "8/1/2018"), date("%Y-%m-%d", "2018-01-08"));
        assert_eq!(date("%-d/%-m/%Y", "08/01/2018"), date("%Y-%m-%d", "2018-01-08"));
        assert_eq!(date("%Y%m%d", "20180128"), date("%Y-%m-%d", "2018-01-28"));
        // %Y takes exactly four digits.
        assert_eq!(date("%d/%m/%Y", "28/01/18"), None);
        assert_eq!(date("%d/%m/%Y", "28/01/20188"), None);
        // %y pivots at 69.
        assert_eq!(date("%d/%m/%y", "28/01/68"), date("%Y-%m-%d", "2068-01-28"));
        assert_eq!(date("%d/%m/%y", "28/01/69"), date("%Y-%m-%d", "1969-01-28"));
        assert_eq!(date("%d/%m/%Y", "30/02/2018"), None);
        assert_eq!(date("%d/%m/%Y", "29/02/2024"), date("%Y-%m-%d", "2024-02-29"));
        assert_eq!(date("%d/%m/%Y", "00/01/2018"), None);
        assert_eq!(date("%d/%m/%Y", "28/13/2018"), None);
        assert_eq!(date("%e %B %Y", " 2 March 1992"), date("%Y-%m-%d", "1992-03-02"));
        assert_eq!(date("%A, %-d %B %Y", "Monday, 2 March 1992"), date("%Y-%m-%d", "1992-03-02"));
        assert_eq!(date("%A, %-d %B %Y", "Monday, 2 Mar 1992"), None);
        assert_eq!(date("%h %d %Y", "mar 02 1992"), date("%Y-%m-%d", "1992-03-02"));
        assert_eq!(date("%x", "1992-03-02"), date("%Y-%m-%d", "1992-03-02"));
        assert_eq!(date("%Y%%%m%%%d", "1992%03%02"), date("%Y-%m-%d", "1992-03-02"));
        assert_eq!(date("%d.%m.%Y", "02.03.1992"), date("%Y-%m-%d", "1992-03-02"));
        assert_eq!(date("%d/%m/%Y", "02-03-1992"), None);
        assert_eq!(date("%d/%m/%Y", "x2/03/1992"), None);
    }

    #[test]
    fn day_of_year_and_weekday_numbers() {
        assert_eq!(date("%Y-%j", "2024-060"), date("%Y-%m-%d", "2024-02-29"));
        assert_eq!(date("%Y-%j", "2024-366"), date("%Y-%m-%d", "2024-12-31"));
        assert_eq!(date("%Y-%j", "2023-366"), None);
        assert_eq!(date("%Y-%j", "2023-000"), None);
        assert_eq!(date("%Y-%m-%d %j", "2024-02-29 060"), date("%Y-%m-%d", "2024-02-29"));
        assert_eq!(date("%Y-%m-%d %j", "2024-02-29 061"), None);
        // 1992-03-02 was a Monday.
        assert_eq!(date("%Y-%m-%d %w", "1992-03-02 1"), date("%Y-%m-%d", "1992-03-02"));
        assert_eq!(date("%Y-%m-%d %u", "1992-03-01 7"), date("%Y-%m-%d", "1992-03-01"));
        assert_eq!(date("%Y-%m-%d %w", "1992-03-02 2"), None);
    }

    #[test]
    fn times_fractions_and_twelve_hour_clock() {
        let sec = 1_000_000_000i64;
        assert_eq!(time("%H:%M:%S", "13:08:45"), Some((13 * 3600 + 8 * 60 + 45) * sec));
        assert_eq!(time("%H:%M", "13:08"), Some((13 * 3600 + 8 * 60) * sec));
        assert_eq!(time("%X", "13:08:45"), time("%T", "13:08:45"));
        assert_eq!(time("%I:%M %p", "12:05 AM"), Some(5 * 60 * sec));
        assert_eq!(time("%I:%M %p", "12:05 pm"), Some((12 * 3600 + 5 * 60) * sec));
        assert_eq!(time("%I:%M %p", "01:05 PM"), Some((13 * 3600 + 5 * 60) * sec));
        assert_eq!(time("%I:%M %p", "13:05 PM"), None);
        assert_eq!(time("%I:%M %p", "00:05 AM"), None);
        assert_eq!(time("%H:%M:%S.%f", "00:00:01.5"), Some(sec + 500_000_000));
        assert_eq!(time("%H:%M:%S.%f", "00:00:01.000005"), Some(sec + 5_000));
        assert_eq!(time("%H:%M:%S.%f", "00:00:01.0000051"), None);
        assert_eq!(time("%H:%M:%S.%g", "00:00:01.123"), Some(sec + 123_000_000));
        assert_eq!(time("%H:%M:%S.%n", "00:00:01.123456789"), Some(sec + 123_456_789));
        assert_eq!(time("%H:%M:%S", "24:00:00"), None);
        assert_eq!(time("%H:%M:%S", "23:60:00"), None);
        assert_eq!(time("%H:%M:%S", "23:59:60"), None);
        assert_eq!(time("%-H:%M", "7:05"), Some((7 * 3600 + 5 * 60) * sec));
    }

    #[test]
    fn zones() {
        let p = "%Y-%m-%d %H:%M:%S %Z";
        assert_eq!(ts(p, "2026-01-02 03:04:05 UTC"), Some(iso("2026-01-02T03:04:05Z")));
        assert_eq!(ts(p, "2026-01-02 03:04:05 gmt"), Some(iso("2026-01-02T03:04:05Z")));
        assert_eq!(ts(p, "2026-01-02 03:04:05 Etc/UTC"), Some(iso("2026-01-02T03:04:05Z")));
        assert_eq!(ts(p, "2026-01-02 03:04:05 CET"), None);
        assert_eq!(ts(p, "2026-01-02 03:04:05 UTC+1"), None);
        assert_eq!(ts("%Y-%m-%dT%H:%M:%S%Z", "2026-01-02T03:04:05Z"), Some(iso("2026-01-02T03:04:05Z")));
        let z = "%Y-%m-%d %H:%M:%S%z";
        assert_eq!(ts(z, "2026-01-02 03:04:05+01"), Some(iso("2026-01-02T02:04:05Z")));
        assert_eq!(ts(z, "2026-01-02 03:04:05-01:30"), Some(iso("2026-01-02T04:34:05Z")));
        assert_eq!(ts(z, "2026-01-02 03:04:05+1"), None);
        assert_eq!(ts(z, "2026-01-02 03:04:05+01:3"), None);
        // Without a zone the time is taken as UTC; a date-only timestamp format is midnight.
        assert_eq!(ts("%d/%m/%Y %H:%M", "02/01/2026 03:04"), Some(iso("2026-01-02T03:04:00Z")));
        assert_eq!(ts("%d/%m/%Y", "02/01/2026"), Some(iso("2026-01-02T00:00:00Z")));
    }

    #[test]
    fn whitespace_runs_and_ends() {
        let p = "%d %m  %Y";
        let want = date("%Y-%m-%d", "2018-01-28");
        assert_eq!(date(p, "28 01 2018"), want);
        assert_eq!(date(p, "28\t 01 \n2018"), want);
        assert_eq!(date(p, "  28 01 2018 \t"), want);
        assert_eq!(date(p, "28012018"), None);
        assert_eq!(date(" %d/%m/%Y ", "28/01/2018"), want);
        assert_eq!(date(p, "28 01 2018 x"), None);
        assert_eq!(date("%d/%m/%Y", ""), None);
        assert_eq!(date("%d/%m/%Y", "é"), None);
    }

    #[test]
    fn bad_patterns_say_why() {
        use PatternKind::*;
        assert!(err(Date, "%d/%m/%Q").contains("unknown specifier %Q"));
        assert!(err(Date, "%d/%m/%-Q").contains("unknown specifier %-Q"));
        assert!(err(Date, "%d/%m/%Y%").contains("lone %"));
        assert!(err(Date, "%d/%m/%Y%-").contains("lone %-"));
        assert!(err(Date, "%Y-%V").contains("week-number"));
        assert!(err(Date, "%d/%m").contains("no year"));
        assert!(err(Date, "%m/%Y").contains("no day"));
        assert!(err(Date, "%d/%Y").contains("no month"));
        assert!(err(Date, "%Y").contains("no month and day"));
        assert!(err(Date, "").contains("no year"));
        assert!(err(Date, "%d/%m/%Y %H").contains("%H, a time field, which date_formats cannot have"));
        assert!(err(Time, "%H:%M %z").contains("%z, a time zone, which time_formats cannot have"));
        assert!(err(Time, "%Y %H:%M").contains("%Y, a date field"));
        assert!(err(Time, "%M:%S").contains("no hour"));
        assert!(err(Timestamp, "%d/%m/%Y %b").contains("sets the month twice (%m and %b)"));
        assert!(err(Timestamp, "%d/%m/%Y %H %z %Z").contains("sets the time zone twice (%z and %Z)"));
        assert!(err(Timestamp, "%c %H").contains("sets the hour twice (%H and %H)"));
        assert!(err(Timestamp, "%d/%m/%Y %I:%M").contains("%I without %p"));
        assert!(err(Timestamp, "%d/%m/%Y %H:%M %p").contains("%p without %I"));
        let e = DateFormats::compile(&[], &["%d/%m/%Q".into()], &[]).unwrap_err();
        assert_eq!(e, "the \"date_formats\" pattern '%d/%m/%Q' has an unknown specifier %Q");
    }

    #[test]
    fn formats_are_tried_in_order() {
        let f = DateFormats::compile(&[], &["%d/%m/%Y".into(), "%m/%d/%Y".into()], &[]).unwrap();
        // 01/02 is Feb 1 by the first format; 01/13 only fits the second.
        assert_eq!(
            f.parse("01/02/2020", PatternKind::Date),
            Some(Parsed::Date(date("%Y-%m-%d", "2020-02-01").unwrap()))
        );
        assert_eq!(
            f.parse("01/13/2020", PatternKind::Date),
            Some(Parsed::Date(date("%Y-%m-%d", "2020-01-13").unwrap()))
        );
        assert_eq!(f.parse("13/13/2020", PatternKind::Date), None);
        assert_eq!(f.parse("01/13/2020", PatternKind::Timestamp), None);
    }
}
