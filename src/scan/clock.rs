//! The wall clock of a scan: `ingestion_timestamp` and `detected_at` in UTC
//! microseconds, and their text.

use std::time::{SystemTime, UNIX_EPOCH};

pub use crate::value::calendar::civil_from_days;

pub fn now_utc_micros() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_micros() as i64,
        Err(e) => -(e.duration().as_micros() as i64),
    }
}

/// `2026-06-25T09:05:08.947122Z` from microseconds since the epoch.
pub fn format_utc_micros(micros: i64) -> String {
    let secs = micros.div_euclid(1_000_000);
    let frac = micros.rem_euclid(1_000_000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{frac:06}Z", sod / 3600, sod / 60 % 60, sod % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(format_utc_micros(0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(format_utc_micros(1_782_378_308_947_122), "2026-06-25T09:05:08.947122Z");
        assert_eq!(format_utc_micros(-1), "1969-12-31T23:59:59.999999Z");
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
    }
}
