//! Hive partitions: `key=value` directories in a file's path become
//! columns (`raw/date=2026-06-25/hour=08/a.jsonl` gives `date` and `hour`).
//!
//! The rules follow DuckDB's `hive_partitioning` (docs/formats.md, "Hive
//! partitions"): detected when every file's path carries the same keys in
//! the same order; a key's type is the one `hive_types` names, else the one
//! the registry recorded, else the first of DATE, TIMESTAMP and BIGINT that
//! every value of the key has the form of (`hive_types_autocast`), else
//! VARCHAR. `__HIVE_DEFAULT_PARTITION__` and an empty value are NULL;
//! values are URL-decoded (`%20`), keys are not, as DuckDB reads them.

use crate::error::{Result, SanitizeError};
use crate::options::{HiveType, Options};
use crate::scalar::{parse_iso_date, parse_iso_timestamp};

/// The value Hive writes for a NULL partition key.
const DEFAULT_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// One partition column: the directory key, its output name and type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionColumn {
    pub key: String,
    /// The key through the field-name policy.
    pub name: String,
    pub ty: HiveType,
}

/// A partition value, typed; what every row of its file gets.
#[derive(Clone, Debug, PartialEq)]
pub enum PartitionValue {
    Null,
    Bool(bool),
    /// BIGINT and INTEGER.
    Int(i64),
    /// Days since the epoch.
    Date(i32),
    /// Microseconds since the epoch, UTC.
    Timestamp(i64),
    Float(f64),
    Text(String),
}

/// The partition columns of a scan and each file's values (one row of
/// `values` per file, in file order). Empty when partitioning is off.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Partitions {
    pub columns: Vec<PartitionColumn>,
    pub values: Vec<Vec<PartitionValue>>,
}

/// The `key=value` directory segments of a path (the file name itself is
/// never one), in path order. A URI's scheme and bucket are not directories.
pub fn key_values(path: &str) -> Vec<(&str, &str)> {
    let body = match path.find("://") {
        // Skip `scheme://bucket/`.
        Some(i) => path[i + 3..].split_once('/').map_or("", |(_, rest)| rest),
        None => path,
    };
    let Some((dirs, _file)) = body.rsplit_once('/') else { return Vec::new() };
    dirs.split('/').filter_map(|segment| segment.split_once('=')).filter(|(key, _)| !key.is_empty()).collect()
}

/// Decides the partition columns of `files` (as `source_file` shows them)
/// and each file's values. `recorded` are the registry's partition columns
/// (their types win over autocast, so a table keeps its types); `name_of`
/// applies the field-name policy.
pub fn plan(
    files: &[String],
    options: &Options,
    recorded: &[PartitionColumn],
    name_of: impl Fn(&str) -> String,
) -> Result<Partitions> {
    if options.hive_partitioning == Some(false) || files.is_empty() {
        return Ok(Partitions::default());
    }
    let explicit = options.hive_partitioning == Some(true);
    let per_file: Vec<Vec<(&str, &str)>> = files.iter().map(|f| key_values(f)).collect();
    let first_keys = keys(&per_file[0]);
    if let Some(other) = per_file.iter().position(|kv| keys(kv) != first_keys) {
        if !explicit {
            // DuckDB's detection: partitioning is on only when every file agrees.
            return Ok(Partitions::default());
        }
        let show = |i: usize| {
            let k = keys(&per_file[i]);
            if k.is_empty() {
                "no key=value directories".to_string()
            } else {
                format!("keys {}", k.join(", "))
            }
        };
        return Err(SanitizeError::options(format!(
            "hive_partitioning needs the same key=value directories in every file, but \"{}\" has {} and \"{}\" has {}",
            files[0],
            show(0),
            files[other],
            show(other)
        )));
    }
    if first_keys.is_empty() {
        return Ok(Partitions::default());
    }
    if let Some(dup) = first_keys.iter().enumerate().find(|(i, k)| first_keys[..*i].contains(k)) {
        return Err(SanitizeError::options(format!("the partition key '{}' appears twice in \"{}\"", dup.1, files[0])));
    }
    for (key, _) in &options.hive_types {
        if !first_keys.contains(&key.as_str()) {
            return Err(SanitizeError::options(format!(
                "hive_types names the key '{key}', which is no partition key of \"{}\" (keys: {})",
                files[0],
                first_keys.join(", ")
            )));
        }
    }
    let mut columns = Vec::with_capacity(first_keys.len());
    for (k, key) in first_keys.iter().enumerate() {
        let given = options.hive_types.iter().find(|(name, _)| name == key).map(|(_, t)| *t);
        let ty = given.or_else(|| recorded.iter().find(|c| c.key == *key).map(|c| c.ty)).unwrap_or_else(|| {
            if options.hive_types_autocast {
                autocast(per_file.iter().map(|kv| kv[k].1))
            } else {
                HiveType::Varchar
            }
        });
        let name = name_of(key);
        if let Some(clash) = columns.iter().find(|c: &&PartitionColumn| c.name == name) {
            return Err(SanitizeError::options(format!(
                "the partition keys '{}' and '{key}' both clean to the column name \"{name}\" under the field-name policy",
                clash.key
            )));
        }
        columns.push(PartitionColumn { key: key.to_string(), name, ty });
    }
    let mut values = Vec::with_capacity(files.len());
    for (file, kv) in files.iter().zip(&per_file) {
        let mut row = Vec::with_capacity(columns.len());
        for (column, (_, text)) in columns.iter().zip(kv) {
            row.push(typed(text, column.ty).ok_or_else(|| {
                SanitizeError::input(format!(
                    "the partition value '{text}' of key '{}' in \"{file}\" is not a {} (the key's type{})",
                    column.key,
                    column.ty.name(),
                    if options.hive_types.iter().any(|(k, _)| *k == column.key) {
                        " given in hive_types"
                    } else {
                        " the registry recorded; pass hive_types to choose another"
                    }
                ))
            })?);
        }
        values.push(row);
    }
    Ok(Partitions { columns, values })
}

/// The keys of one file's `key=value` pairs, in path order.
fn keys<'a>(kv: &[(&'a str, &str)]) -> Vec<&'a str> {
    kv.iter().map(|(k, _)| *k).collect()
}

/// The first of DATE, TIMESTAMP and BIGINT that every non-NULL value has
/// the form of; VARCHAR otherwise (and when every value is NULL).
fn autocast<'a>(values: impl Iterator<Item = &'a str> + Clone) -> HiveType {
    let present = values.filter(|v| !is_null(v));
    if present.clone().next().is_none() {
        return HiveType::Varchar;
    }
    for ty in [HiveType::Date, HiveType::Timestamp] {
        if present.clone().all(|v| typed(v, ty).is_some()) {
            return ty;
        }
    }
    // An integer only when its text is the integer as written back:
    // `zip=01234` or `hour=08` as BIGINT would lose the text (1234, 8), so
    // such a key stays VARCHAR, as DuckDB's readers keep `08` and `+5`.
    // (`hive_types` can still ask for BIGINT, which takes `08`.)
    if present.clone().all(|v| is_canonical_integer(&url_decode(v))) {
        return HiveType::Bigint;
    }
    HiveType::Varchar
}

/// `text` is an integer written as Rust (and DuckDB) writes it back: no
/// sign but `-`, no leading zero, no `-0`.
fn is_canonical_integer(text: &str) -> bool {
    integer(text).is_some_and(|n| n.to_string() == text)
}

fn is_null(text: &str) -> bool {
    text.is_empty() || text == DEFAULT_PARTITION
}

/// A value as Hive and DuckDB write it: `%XX` escapes decoded
/// (`ts=2024-01-15%2012%3A30%3A00`); a `%` not followed by two hex digits
/// stays as written.
fn url_decode(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('%') {
        return std::borrow::Cow::Borrowed(text);
    }
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (b[i], b.get(i + 1).and_then(|&c| hex(c)), b.get(i + 2).and_then(|&c| hex(c))) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    std::borrow::Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

/// `text` as a value of `ty`; `None` when it does not have that form.
fn typed(text: &str, ty: HiveType) -> Option<PartitionValue> {
    if is_null(text) {
        return Some(PartitionValue::Null);
    }
    let decoded = url_decode(text);
    let text = decoded.as_ref();
    Some(match ty {
        HiveType::Varchar => PartitionValue::Text(text.to_string()),
        HiveType::Date => PartitionValue::Date(parse_iso_date(text)?),
        HiveType::Timestamp => {
            let t = parse_iso_timestamp(text)?;
            PartitionValue::Timestamp(t.secs.checked_mul(1_000_000)?.checked_add(i64::from(t.nanos / 1000))?)
        }
        HiveType::Bigint => PartitionValue::Int(integer(text)?),
        HiveType::Integer => PartitionValue::Int(i64::from(i32::try_from(integer(text)?).ok()?)),
        HiveType::Double => PartitionValue::Float(text.trim().parse::<f64>().ok()?),
        HiveType::Boolean => PartitionValue::Bool(match text.to_ascii_lowercase().as_str() {
            "true" | "t" | "1" => true,
            "false" | "f" | "0" => false,
            _ => return None,
        }),
    })
}

/// An optionally signed decimal integer (leading zeros allowed: `hour=08`).
fn integer(text: &str) -> Option<i64> {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::InputFormat;

    fn files(paths: &[&str]) -> Vec<String> {
        paths.iter().map(|p| p.to_string()).collect()
    }

    fn run(paths: &[&str], set: impl Fn(&mut Options)) -> Result<Partitions> {
        let mut o = Options::defaults(InputFormat::Jsonl);
        set(&mut o);
        plan(&files(paths), &o, &[], |k| k.to_ascii_lowercase())
    }

    #[test]
    fn key_values_are_directories_only() {
        assert_eq!(key_values("raw/year=2026/month=06/a=b.jsonl"), vec![("year", "2026"), ("month", "06")]);
        assert_eq!(key_values("s3://b=x/date=2026-01-01/f.jsonl"), vec![("date", "2026-01-01")]);
        assert_eq!(key_values("a.jsonl"), vec![]);
        assert_eq!(key_values("/d/=x/k=/f.csv"), vec![("k", "")]);
    }

    #[test]
    fn detected_when_every_file_agrees_and_typed_by_autocast() {
        let p = run(
            &["r/date=2026-06-25/hour=08/a.jsonl", "r/date=2026-06-26/hour=__HIVE_DEFAULT_PARTITION__/b.jsonl"],
            |_| {},
        )
        .unwrap();
        let tys: Vec<_> = p.columns.iter().map(|c| (c.name.as_str(), c.ty)).collect();
        // `08` is text an integer would not give back: VARCHAR, as in DuckDB.
        assert_eq!(tys, vec![("date", HiveType::Date), ("hour", HiveType::Varchar)]);
        assert_eq!(p.values[0], vec![PartitionValue::Date(20_629), PartitionValue::Text("08".into())]);
        assert_eq!(p.values[1][1], PartitionValue::Null);
        // One file without keys: detection says off; explicit on is an error naming both.
        let mixed = ["r/date=2026-06-25/a.jsonl", "r/b.jsonl"];
        assert_eq!(run(&mixed, |_| {}).unwrap(), Partitions::default());
        let e = run(&mixed, |o| o.hive_partitioning = Some(true)).unwrap_err();
        assert!(e.message.contains("r/b.jsonl") && e.message.contains("keys date"), "{e}");
        assert_eq!(run(&["r/date=x/a.jsonl"], |o| o.hive_partitioning = Some(false)).unwrap(), Partitions::default());
    }

    #[test]
    fn autocast_falls_back_to_varchar_and_types_can_be_given() {
        let p = run(&["k=2026-01-01/a", "k=12/b"], |_| {}).unwrap();
        assert_eq!(p.columns[0].ty, HiveType::Varchar);
        assert_eq!(p.values[1][0], PartitionValue::Text("12".into()));
        let p = run(&["k=2026-01-01 10:00:00/a"], |_| {}).unwrap();
        assert_eq!(p.values[0][0], PartitionValue::Timestamp(1_767_261_600_000_000));
        // Text an integer would not give back stays text (DuckDB keeps
        // `08` and `+5` as VARCHAR too); asked for, BIGINT takes it.
        for kept in ["zip=01234/a", "zip=+5/a", "zip=-0/a", "zip=00/a"] {
            let p = run(&["zip=12/b", kept], |_| {}).unwrap();
            assert_eq!(p.columns[0].ty, HiveType::Varchar, "{kept}");
            assert_eq!(p.values[1][0], PartitionValue::Text(kept[4..kept.len() - 2].into()), "{kept}");
        }
        let p = run(&["zip=12/b", "zip=-3/a", "zip=0/c"], |_| {}).unwrap();
        assert_eq!((p.columns[0].ty, &p.values[1][0]), (HiveType::Bigint, &PartitionValue::Int(-3)));
        let p = run(&["hour=08/a"], |o| o.hive_types = vec![("hour".into(), HiveType::Bigint)]).unwrap();
        assert_eq!(p.values[0][0], PartitionValue::Int(8));
        let p = run(&["k=7/a"], |o| o.hive_types_autocast = false).unwrap();
        assert_eq!(p.columns[0].ty, HiveType::Varchar);
        let p = run(&["k=7/a"], |o| o.hive_types = vec![("k".into(), HiveType::Integer)]).unwrap();
        assert_eq!((p.columns[0].ty, &p.values[0][0]), (HiveType::Integer, &PartitionValue::Int(7)));
        let e = run(&["k=x/a"], |o| o.hive_types = vec![("k".into(), HiveType::Integer)]).unwrap_err();
        assert!(e.message.contains("'x'") && e.message.contains("INTEGER") && e.message.contains("hive_types"), "{e}");
        let e = run(&["k=1/a"], |o| o.hive_types = vec![("j".into(), HiveType::Date)]).unwrap_err();
        assert!(e.message.contains("'j'"), "{e}");
    }

    #[test]
    fn values_are_url_decoded() {
        let p = run(&["ts=2024-01-15%2012%3A30%3A00/city=S%C3%A3o%20Paulo/a.jsonl"], |_| {}).unwrap();
        assert_eq!(p.columns[0].ty, HiveType::Timestamp);
        assert_eq!(p.values[0][1], PartitionValue::Text("São Paulo".into()));
        assert_eq!(url_decode("100%"), "100%");
        assert_eq!(url_decode("a%zzb"), "a%zzb");
    }

    #[test]
    fn recorded_types_win_over_autocast() {
        let o = Options::defaults(InputFormat::Jsonl);
        let recorded = [PartitionColumn { key: "k".into(), name: "k".into(), ty: HiveType::Varchar }];
        let p = plan(&files(&["k=1/a"]), &o, &recorded, |k| k.into()).unwrap();
        assert_eq!(p.values[0][0], PartitionValue::Text("1".into()));
        let recorded = [PartitionColumn { key: "k".into(), name: "k".into(), ty: HiveType::Date }];
        let e = plan(&files(&["k=1/a"]), &o, &recorded, |k| k.into()).unwrap_err();
        assert!(e.message.contains("registry recorded"), "{e}");
    }

    #[test]
    fn keys_that_clean_to_one_name_are_refused() {
        let e = run(&["Date=1/date=2/a"], |_| {}).unwrap_err();
        assert!(e.message.contains("'Date' and 'date'"), "{e}");
    }
}
