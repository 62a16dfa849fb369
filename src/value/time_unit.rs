//! The one time-unit type: of a typed source's timestamps on the tape
//! (Parquet's seconds to nanoseconds), of a timestamp column, and of the
//! `timestamp_precision` option (which names three of them,
//! options/choices.rs).

/// Ticks of a timestamp: seconds, or milli-, micro-, nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimeUnit {
    Seconds,
    Millis,
    Micros,
    Nanos,
}

impl TimeUnit {
    pub fn per_second(self) -> i64 {
        match self {
            TimeUnit::Seconds => 1,
            TimeUnit::Millis => 1_000,
            TimeUnit::Micros => 1_000_000,
            TimeUnit::Nanos => 1_000_000_000,
        }
    }

    /// The registry's and the drift events' name (`s`, `ms`, `us`, `ns`).
    pub fn name(self) -> &'static str {
        match self {
            TimeUnit::Seconds => "s",
            TimeUnit::Millis => "ms",
            TimeUnit::Micros => "us",
            TimeUnit::Nanos => "ns",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [TimeUnit::Seconds, TimeUnit::Millis, TimeUnit::Micros, TimeUnit::Nanos].into_iter().find(|u| u.name() == s)
    }

    /// Seconds and nanoseconds of `value` ticks.
    pub fn split(self, value: i64) -> (i64, u32) {
        let per = self.per_second();
        let nanos_per_tick = 1_000_000_000 / per;
        (value.div_euclid(per), (value.rem_euclid(per) * nanos_per_tick) as u32)
    }

    /// An instant (`secs` since the epoch and `nanos` into that second) as
    /// a count of this unit, truncated toward the past to the unit; `None`
    /// when it does not fit in 64 bits.
    pub fn ticks(self, secs: i64, nanos: u32) -> Option<i64> {
        let per = self.per_second();
        let nanos_per_tick = (1_000_000_000 / per) as u32;
        secs.checked_mul(per)?.checked_add((nanos / nanos_per_tick) as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_and_split_are_inverse_and_names_round_trip() {
        for unit in [TimeUnit::Seconds, TimeUnit::Millis, TimeUnit::Micros, TimeUnit::Nanos] {
            assert_eq!(TimeUnit::parse(unit.name()), Some(unit));
            for (secs, nanos) in [(0i64, 0u32), (-1, 999_999_999), (1_700_000_000, 123_456_789)] {
                let t = unit.ticks(secs, nanos).unwrap();
                let (s, n) = unit.split(t);
                assert_eq!(s, secs, "{unit:?}");
                assert_eq!(n, nanos - nanos % (1_000_000_000 / unit.per_second()) as u32, "{unit:?}");
            }
        }
        assert_eq!(TimeUnit::Nanos.ticks(i64::MAX / 1000, 0), None);
    }
}
