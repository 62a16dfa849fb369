//! Hive partition columns of a BigQuery external table, and partition keys
//! (`year=2026/month=07/date=2026-07-05[/hour=08]`) checked against them.

use crate::error::Result;
use crate::options::{Granularity, ParamValue, RowParams};
use crate::value::calendar::days_from_civil;

/// The types BigQuery takes for a Hive partition key.
const PARTITION_TYPES: &[&str] = &["STRING", "INT64", "DATE", "TIMESTAMP"];

/// The partition columns, in key order: (name, BigQuery type).
pub type PartitionColumns = Vec<(String, String)>;

/// The seed's daily layout: `year` and `month` INT64 (BigQuery reads the
/// zero-padded `06` as 6), `date` DATE; hourly adds `hour` INT64.
pub fn default_partition_columns(hourly: bool) -> PartitionColumns {
    let mut out: PartitionColumns = [("year", "INT64"), ("month", "INT64"), ("date", "DATE")]
        .iter()
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .collect();
    if hourly {
        out.push(("hour".to_string(), "INT64".to_string()));
    }
    out
}

/// `partition_columns := MAP {'year': 'INT64', ...}` (or a STRUCT), else
/// the default of `granularity` (`'daily'` or `'hourly'`).
pub fn partition_columns(function: &str, params: &[(&str, ParamValue)]) -> Result<PartitionColumns> {
    let p = RowParams::new(function, params);
    let bad = |parameter: &str, why: String| p.bad(parameter, why);
    let hourly = p.choice::<Granularity>("granularity")? == Some(Granularity::Hourly);
    let Some(given) = p.get("partition_columns") else { return Ok(default_partition_columns(hourly)) };
    let ParamValue::Map(pairs) = given else {
        return Err(bad(
            "partition_columns",
            format!("must be a MAP of name to BigQuery type, not {}", given.describe()),
        ));
    };
    let mut out = PartitionColumns::new();
    for (name, ty) in pairs {
        let ParamValue::Str(ty) = ty else {
            return Err(bad(
                "partition_columns",
                format!("gives column \"{name}\" the type {}, not a type name", ty.describe()),
            ));
        };
        let ty = match ty.trim().to_ascii_uppercase().as_str() {
            "INTEGER" => "INT64".to_string(),
            t => t.to_string(),
        };
        if !PARTITION_TYPES.contains(&ty.as_str()) {
            return Err(bad(
                "partition_columns",
                format!(
                    "gives column \"{name}\" the type {ty}; a Hive partition key is one of {}",
                    PARTITION_TYPES.join(", ")
                ),
            ));
        }
        if name.is_empty() || name.contains(['/', '=']) {
            return Err(bad(
                "partition_columns",
                format!("has the column name \"{name}\", which cannot be a Hive key"),
            ));
        }
        if out.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
            return Err(bad("partition_columns", format!("names \"{name}\" twice")));
        }
        out.push((name.clone(), ty));
    }
    Ok(out)
}

/// A key's values, one per partition column, or why the key is not one of
/// this table's partitions.
pub fn parse_partition_key(key: &str, columns: &PartitionColumns) -> std::result::Result<Vec<String>, String> {
    let segments: Vec<&str> = key.trim_end_matches('/').split('/').collect();
    if segments.len() != columns.len() {
        return Err(format!(
            "it has {} segments, and the table has {} partition columns",
            segments.len(),
            columns.len()
        ));
    }
    let mut values = Vec::with_capacity(columns.len());
    for (segment, (name, ty)) in segments.iter().zip(columns) {
        let Some((k, v)) = segment.split_once('=') else {
            return Err(format!("the segment \"{segment}\" is not name=value"));
        };
        if k != name {
            return Err(format!("the segment \"{segment}\" should name \"{name}\""));
        }
        let fits = match ty.as_str() {
            "INT64" => {
                !v.is_empty()
                    && v.trim_start_matches('-').chars().all(|c| c.is_ascii_digit())
                    && v.parse::<i64>().is_ok()
            }
            "DATE" => is_date(v),
            // A date, then nothing or a time part (`T`/space, digits and
            // `:.-+Z`); byte slicing only after checking the boundary.
            "TIMESTAMP" => {
                v.get(..10).is_some_and(is_date) && v[10..].chars().all(|c| c.is_ascii_digit() || " T:.-+Z".contains(c))
            }
            _ => !v.is_empty(),
        };
        if !fits {
            return Err(format!("\"{v}\" is not a {ty} value for \"{name}\""));
        }
        values.push(v.to_string());
    }
    Ok(values)
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    match (s[..4].parse::<i64>(), s[5..7].parse::<u32>(), s[8..].parse::<u32>()) {
        (Ok(y), Ok(m), Ok(d)) => days_from_civil(y, m, d).is_some(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_checked_against_the_columns_in_order() {
        let daily = default_partition_columns(false);
        assert_eq!(
            parse_partition_key("year=2026/month=07/date=2026-07-05", &daily),
            Ok(vec!["2026".into(), "07".into(), "2026-07-05".into()])
        );
        let hourly = default_partition_columns(true);
        assert!(parse_partition_key("year=2026/month=07/date=2026-07-05/hour=08", &hourly).is_ok());
        for bad in [
            "",
            "year=2026/month=07",
            "month=07/year=2026/date=2026-07-05",
            "year=20x6/month=07/date=2026-07-05",
            "year=2026/month=07/date=2026-02-30",
            "year=2026/month=07/date2026-07-05",
            "year=2026/month=07/date=2026-07-05/hour=08",
        ] {
            assert!(parse_partition_key(bad, &daily).is_err(), "{bad}");
        }
        let ts = vec![("ts".to_string(), "TIMESTAMP".to_string())];
        assert!(parse_partition_key("ts=2026-07-05 08:00:00", &ts).is_ok());
        assert!(parse_partition_key("ts=2026-07-0é", &ts).is_err());
        assert!(parse_partition_key("ts=2026-07-05garbage", &ts).is_err());
        let custom = vec![("dt".to_string(), "STRING".to_string())];
        assert_eq!(parse_partition_key("dt=20260705", &custom), Ok(vec!["20260705".into()]));
    }

    #[test]
    fn partition_columns_come_from_the_map_or_the_granularity() {
        let map = ParamValue::Map(vec![
            ("dt".into(), ParamValue::Str("date".into())),
            ("region".into(), ParamValue::Str("string".into())),
        ]);
        assert_eq!(
            partition_columns("f", &[("partition_columns", map)]).unwrap(),
            vec![("dt".to_string(), "DATE".to_string()), ("region".to_string(), "STRING".to_string())]
        );
        assert_eq!(partition_columns("f", &[("granularity", ParamValue::Str("hourly".into()))]).unwrap().len(), 4);
        let bad = ParamValue::Map(vec![("x".into(), ParamValue::Str("FLOAT64".into()))]);
        let err = partition_columns("f", &[("partition_columns", bad)]).unwrap_err().message;
        assert!(err.contains("\"partition_columns\" parameter gives column \"x\" the type FLOAT64"), "{err}");
    }
}
