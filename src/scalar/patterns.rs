//! Custom temporal patterns: user regexes whose capture groups are the
//! fields. A pattern must match the whole value.
//!
//! Without named groups the fields are positional, as they always were.
//! Timestamps: 1 year, 2 month, 3 day, 4 hour, 5 minute, 6 second, optional
//! 7 fraction and 8 timezone; dates: 1–3 year, month, day; times: 1–3 hour,
//! minute, second. A pattern with a named group (`(?P<day>\d{2})`) reads
//! every field by name, in any order, and its unnamed groups are plain
//! grouping: the names are those of [`FIELDS`] that its kind has, and it
//! must name all of its kind's required ones.

use regex::Regex;

use super::temporal::{days_from_civil, fraction_nanos, instant, offset_seconds, seconds_of_day};
use super::Parsed;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatternKind {
    Timestamp,
    Date,
    Time,
}

/// The group names a pattern may use, in positional order.
const FIELDS: [&str; 8] = ["year", "month", "day", "hour", "minute", "second", "fraction", "tz"];
const YEAR: usize = 0;
const MONTH: usize = 1;
const DAY: usize = 2;
const HOUR: usize = 3;
const MINUTE: usize = 4;
const SECOND: usize = 5;
const FRACTION: usize = 6;
const TZ: usize = 7;

impl PatternKind {
    /// The `custom_*_patterns` parameter of this kind.
    pub fn parameter(self) -> &'static str {
        match self {
            PatternKind::Timestamp => "custom_timestamp_patterns",
            PatternKind::Date => "custom_date_patterns",
            PatternKind::Time => "custom_time_patterns",
        }
    }

    /// The strftime `*_formats` parameter of this kind.
    pub fn format_parameter(self) -> &'static str {
        match self {
            PatternKind::Timestamp => "timestamp_formats",
            PatternKind::Date => "date_formats",
            PatternKind::Time => "time_formats",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            PatternKind::Timestamp => "timestamp",
            PatternKind::Date => "date",
            PatternKind::Time => "time",
        }
    }

    fn required_groups(self) -> usize {
        match self {
            PatternKind::Timestamp => 6,
            PatternKind::Date | PatternKind::Time => 3,
        }
    }

    /// The fields (indexes into [`FIELDS`]) a pattern of this kind may
    /// name, and how many of them, from the first, it must.
    fn fields(self) -> (&'static [usize], usize) {
        match self {
            PatternKind::Timestamp => (&[YEAR, MONTH, DAY, HOUR, MINUTE, SECOND, FRACTION, TZ], 6),
            PatternKind::Date => (&[YEAR, MONTH, DAY], 3),
            PatternKind::Time => (&[HOUR, MINUTE, SECOND, FRACTION], 3),
        }
    }

    /// The group of each field when the groups are positional.
    fn positional(self) -> [usize; 8] {
        match self {
            PatternKind::Timestamp => [1, 2, 3, 4, 5, 6, 7, 8],
            PatternKind::Date => [1, 2, 3, 0, 0, 0, 0, 0],
            PatternKind::Time => [0, 0, 0, 1, 2, 3, 0, 0],
        }
    }
}

/// One compiled pattern: the regex and the capture group of each field of
/// [`FIELDS`] (0: the pattern has none).
#[derive(Clone, Debug)]
pub struct Pattern {
    re: Regex,
    groups: [usize; 8],
}

impl Pattern {
    fn compile(kind: PatternKind, p: &str) -> Result<Self, String> {
        let fail = |why: String| format!("the \"{}\" pattern '{p}' {why}", kind.parameter());
        let re =
            Regex::new(&format!("^(?:{p})$")).map_err(|e| fail(format!("is not a valid regular expression: {e}")))?;
        let named: Vec<(usize, &str)> = re.capture_names().enumerate().filter_map(|(i, n)| n.map(|n| (i, n))).collect();
        if named.is_empty() {
            let groups = re.captures_len() - 1;
            if groups < kind.required_groups() {
                return Err(fail(format!(
                    "has {groups} capture group(s); it needs at least {}",
                    kind.required_groups()
                )));
            }
            return Ok(Pattern { re, groups: kind.positional() });
        }
        let (allowed, required) = kind.fields();
        let mut groups = [0; 8];
        for (index, name) in named {
            let field = allowed.iter().copied().find(|&f| FIELDS[f] == name).ok_or_else(|| {
                let names = allowed.iter().map(|&f| FIELDS[f]).collect::<Vec<_>>().join(", ");
                fail(format!("has a group named \"{name}\"; the groups of a {} pattern are named {names}", kind.noun()))
            })?;
            groups[field] = index; // the regex crate refuses a name used twice
        }
        if let Some(&missing) = allowed[..required].iter().find(|&&f| groups[f] == 0) {
            return Err(fail(format!("names its groups but has no group named \"{}\"", FIELDS[missing])));
        }
        Ok(Pattern { re, groups })
    }
}

/// One list per kind of value (timestamps, dates, times), in the order
/// the user gave them: the shape of the custom patterns and of the
/// strftime formats (scalar/strftime.rs) alike.
#[derive(Clone, Debug)]
pub struct PerKind<T> {
    timestamp: Vec<T>,
    date: Vec<T>,
    time: Vec<T>,
}

impl<T> Default for PerKind<T> {
    fn default() -> Self {
        Self::none()
    }
}

impl<T> PerKind<T> {
    pub const fn none() -> Self {
        PerKind { timestamp: Vec::new(), date: Vec::new(), time: Vec::new() }
    }

    /// Each kind's texts compiled by `one`; the first error is returned.
    pub fn build(
        timestamp: &[String],
        date: &[String],
        time: &[String],
        one: impl Fn(PatternKind, &str) -> Result<T, String>,
    ) -> Result<Self, String> {
        let list = |kind: PatternKind, texts: &[String]| -> Result<Vec<T>, String> {
            texts.iter().map(|t| one(kind, t)).collect()
        };
        Ok(PerKind {
            timestamp: list(PatternKind::Timestamp, timestamp)?,
            date: list(PatternKind::Date, date)?,
            time: list(PatternKind::Time, time)?,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.timestamp.is_empty() && self.date.is_empty() && self.time.is_empty()
    }

    /// The list of `kind`.
    pub fn of(&self, kind: PatternKind) -> &[T] {
        match kind {
            PatternKind::Timestamp => &self.timestamp,
            PatternKind::Date => &self.date,
            PatternKind::Time => &self.time,
        }
    }
}

/// The compiled `custom_*_patterns`.
pub type CustomPatterns = PerKind<Pattern>;

impl CustomPatterns {
    /// Compiles the patterns; an invalid regex, one with too few capture
    /// groups, or one whose group names are unknown or incomplete, is an
    /// error naming the parameter and the pattern.
    pub fn compile(timestamp: &[String], date: &[String], time: &[String]) -> Result<Self, String> {
        PerKind::build(timestamp, date, time, Pattern::compile)
    }

    /// The first pattern of `kind` that matches, in the order given. The
    /// caller skips values without a digit (no temporal value has none).
    pub fn parse(&self, s: &str, kind: PatternKind) -> Option<Parsed> {
        self.of(kind).iter().find_map(|p| {
            let c = p.re.captures(s)?;
            // A field's text: `None` when the pattern has no such group or
            // the group took no part in the match.
            let text = |f: usize| -> Option<&str> {
                (p.groups[f] != 0).then(|| c.get(p.groups[f])).flatten().map(|m| m.as_str())
            };
            let num = |f: usize| -> Option<i64> { text(f)?.parse::<i64>().ok() };
            let small = |f: usize| -> Option<u32> { u32::try_from(num(f)?).ok() };
            let nanos = match text(FRACTION) {
                Some(m) if !m.is_empty() => fraction_nanos(m.as_bytes())?,
                _ => 0,
            };
            match kind {
                PatternKind::Timestamp => {
                    let offset = match text(TZ) {
                        Some(m) if !m.is_empty() => offset_seconds(m.as_bytes())?,
                        _ => 0,
                    };
                    instant(
                        (num(YEAR)?, small(MONTH)?, small(DAY)?),
                        (small(HOUR)?, small(MINUTE)?, small(SECOND)?),
                        nanos,
                        offset,
                    )
                    .map(Parsed::Timestamp)
                }
                PatternKind::Date => days_from_civil(num(YEAR)?, small(MONTH)?, small(DAY)?)
                    .and_then(|d| i32::try_from(d).ok())
                    .map(Parsed::Date),
                PatternKind::Time => seconds_of_day(small(HOUR)?, small(MINUTE)?, small(SECOND)?)
                    .map(|s| Parsed::Time(s * 1_000_000_000 + nanos as i64)),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_capture_fields() {
        let p = CustomPatterns::compile(
            &[r"(\d{4})/(\d{2})/(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})?".into()],
            &[r"(\d{4})#(\d{2})#(\d{2})".into()],
            &[r"(\d{2})\|(\d{2})\|(\d{2})".into()],
        )
        .unwrap();
        let Some(Parsed::Timestamp(t)) = p.parse("2026/01/02 03:04:05.5+01:00", PatternKind::Timestamp) else {
            panic!()
        };
        assert_eq!((t.secs, t.nanos), (1_767_323_045 - 3600, 500_000_000));
        assert_eq!(p.parse("2026#02#03", PatternKind::Date), Some(Parsed::Date(20_487)));
        assert_eq!(p.parse("2026#02#30", PatternKind::Date), None);
        assert_eq!(p.parse("01|02|03", PatternKind::Time), Some(Parsed::Time(3723 * 1_000_000_000)));
        assert_eq!(p.parse("x01|02|03", PatternKind::Time), None);
    }

    #[test]
    fn named_groups_in_any_order() {
        let p = CustomPatterns::compile(
            &[r"(?P<hour>\d{2}):(?P<minute>\d{2}):(?P<second>\d{2})(?:\.(?P<fraction>\d+))? (?P<day>\d{2})\.(?P<month>\d{2})\.(?P<year>\d{4})(?: (?P<tz>[+-]\d{2}:\d{2}))?".into()],
            // An unnamed group is plain grouping once the pattern names its groups.
            &[r"(?P<day>\d{2})(/|-)(?P<month>\d{2})(/|-)(?P<year>\d{4})".into()],
            &[r"(?P<second>\d{2})s(?P<minute>\d{2})m(?P<hour>\d{2})h(?:(?P<fraction>\d+))?".into()],
        )
        .unwrap();
        let Some(Parsed::Timestamp(t)) = p.parse("03:04:05.25 02.01.2026 +01:00", PatternKind::Timestamp) else {
            panic!()
        };
        assert_eq!((t.secs, t.nanos), (1_767_323_045 - 3600, 250_000_000));
        let Some(Parsed::Timestamp(t)) = p.parse("03:04:05 02.01.2026", PatternKind::Timestamp) else { panic!() };
        assert_eq!((t.secs, t.nanos), (1_767_323_045, 0));
        assert_eq!(p.parse("03/02-2026", PatternKind::Date), Some(Parsed::Date(20_487)));
        assert_eq!(p.parse("30/02/2026", PatternKind::Date), None);
        assert_eq!(p.parse("03s02m01h", PatternKind::Time), Some(Parsed::Time(3723 * 1_000_000_000)));
        assert_eq!(p.parse("03s02m01h5", PatternKind::Time), Some(Parsed::Time(3723 * 1_000_000_000 + 500_000_000)));
    }

    #[test]
    fn bad_patterns_name_the_parameter() {
        let e = CustomPatterns::compile(&[], &["(unclosed".into()], &[]).unwrap_err();
        assert!(e.contains("custom_date_patterns") && e.contains("(unclosed"), "{e}");
        let e = CustomPatterns::compile(&[r"(\d+)-(\d+)".into()], &[], &[]).unwrap_err();
        assert!(e.contains("2 capture group(s); it needs at least 6"), "{e}");
    }

    #[test]
    fn bad_group_names_are_named() {
        let e =
            CustomPatterns::compile(&[], &[r"(?P<year>\d{4})-(?P<mon>\d{2})-(?P<day>\d{2})".into()], &[]).unwrap_err();
        assert_eq!(
            e,
            r#"the "custom_date_patterns" pattern '(?P<year>\d{4})-(?P<mon>\d{2})-(?P<day>\d{2})' has a group named "mon"; the groups of a date pattern are named year, month, day"#
        );
        // A field of another kind is unknown here too.
        let e = CustomPatterns::compile(&[], &[], &[r"(?P<hour>\d+):(?P<minute>\d+):(?P<second>\d+) (?P<tz>Z)".into()])
            .unwrap_err();
        assert!(e.contains("custom_time_patterns") && e.contains("group named \"tz\""), "{e}");
        let e = CustomPatterns::compile(
            &[r"(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2}) (?P<hour>\d{2}):(?P<minute>\d{2})".into()],
            &[],
            &[],
        )
        .unwrap_err();
        assert!(e.contains("custom_timestamp_patterns") && e.contains("has no group named \"second\""), "{e}");
        let e = CustomPatterns::compile(&[], &[r"(?P<year>\d{4})-(\d{2})-(?P<day>\d{2})".into()], &[]).unwrap_err();
        assert!(e.contains("has no group named \"month\""), "{e}");
    }
}
