//! Custom temporal patterns: user regexes whose capture groups are the
//! fields. Timestamps: 1 year, 2 month, 3 day, 4 hour, 5 minute, 6 second,
//! optional 7 fraction and 8 timezone; dates: 1–3 year, month, day; times:
//! 1–3 hour, minute, second. A pattern must match the whole value.

use regex::Regex;

use super::temporal::{days_from_civil, fraction_nanos, instant, offset_seconds, seconds_of_day};
use super::Parsed;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatternKind {
    Timestamp,
    Date,
    Time,
}

impl PatternKind {
    pub fn parameter(self) -> &'static str {
        match self {
            PatternKind::Timestamp => "custom_timestamp_patterns",
            PatternKind::Date => "custom_date_patterns",
            PatternKind::Time => "custom_time_patterns",
        }
    }
    fn required_groups(self) -> usize {
        match self {
            PatternKind::Timestamp => 6,
            PatternKind::Date | PatternKind::Time => 3,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct CustomPatterns {
    timestamp: Vec<Regex>,
    date: Vec<Regex>,
    time: Vec<Regex>,
}

impl CustomPatterns {
    pub const fn none() -> Self {
        CustomPatterns { timestamp: Vec::new(), date: Vec::new(), time: Vec::new() }
    }

    /// Compiles the patterns; an invalid regex, or one with too few capture
    /// groups, is an error naming the parameter and the pattern.
    pub fn compile(timestamp: &[String], date: &[String], time: &[String]) -> Result<Self, String> {
        let build = |kind: PatternKind, patterns: &[String]| -> Result<Vec<Regex>, String> {
            patterns
                .iter()
                .map(|p| {
                    let anchored = format!("^(?:{p})$");
                    let re = Regex::new(&anchored).map_err(|e| {
                        format!("the \"{}\" pattern '{p}' is not a valid regular expression: {e}", kind.parameter())
                    })?;
                    let groups = re.captures_len() - 1;
                    if groups < kind.required_groups() {
                        return Err(format!(
                            "the \"{}\" pattern '{p}' has {groups} capture group(s); it needs at least {}",
                            kind.parameter(),
                            kind.required_groups()
                        ));
                    }
                    Ok(re)
                })
                .collect()
        };
        Ok(CustomPatterns {
            timestamp: build(PatternKind::Timestamp, timestamp)?,
            date: build(PatternKind::Date, date)?,
            time: build(PatternKind::Time, time)?,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.timestamp.is_empty() && self.date.is_empty() && self.time.is_empty()
    }

    pub fn parse(&self, s: &str, kind: PatternKind) -> Option<Parsed> {
        let list = match kind {
            PatternKind::Timestamp => &self.timestamp,
            PatternKind::Date => &self.date,
            PatternKind::Time => &self.time,
        };
        if list.is_empty() || !s.bytes().any(|b| b.is_ascii_digit()) {
            return None; // no temporal value without a digit: skip the regex
        }
        list.iter().find_map(|re| {
            let c = re.captures(s)?;
            let num = |i: usize| -> Option<i64> { c.get(i)?.as_str().parse::<i64>().ok() };
            let small = |i: usize| -> Option<u32> { u32::try_from(num(i)?).ok() };
            match kind {
                PatternKind::Timestamp => {
                    let nanos = match c.get(7) {
                        Some(m) if !m.as_str().is_empty() => fraction_nanos(m.as_str().as_bytes())?,
                        _ => 0,
                    };
                    let offset = match c.get(8) {
                        Some(m) if !m.as_str().is_empty() => offset_seconds(m.as_str().as_bytes())?,
                        _ => 0,
                    };
                    instant((num(1)?, small(2)?, small(3)?), (small(4)?, small(5)?, small(6)?), nanos, offset)
                        .map(Parsed::Timestamp)
                }
                PatternKind::Date => {
                    days_from_civil(num(1)?, small(2)?, small(3)?).and_then(|d| i32::try_from(d).ok()).map(Parsed::Date)
                }
                PatternKind::Time => {
                    seconds_of_day(small(1)?, small(2)?, small(3)?).map(|s| Parsed::Time(s * 1_000_000_000))
                }
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
    fn bad_patterns_name_the_parameter() {
        let e = CustomPatterns::compile(&[], &["(unclosed".into()], &[]).unwrap_err();
        assert!(e.contains("custom_date_patterns") && e.contains("(unclosed"), "{e}");
        let e = CustomPatterns::compile(&[r"(\d+)-(\d+)".into()], &[], &[]).unwrap_err();
        assert!(e.contains("2 capture group(s); it needs at least 6"), "{e}");
    }
}
