//! A registry's output schema as BigQuery columns: the type each column
//! has when BigQuery reads the Parquet file the pipeline (or DuckDB's
//! `COPY`) writes for it, and the refusals for what BigQuery cannot hold
//! (docs/bigquery.md, "Types").

use super::quote_ident;
use crate::error::{Result, SanitizeError};
use crate::infer::{Declared, ScalarKind, StructNode, TimeUnit, TypeNode};
use crate::registry::naming::RESERVED_COLUMNS;
use crate::registry::{finalize, parse_registry, FinalizeOptions};

/// BigQuery's deepest RECORD nesting.
pub const MAX_RECORD_DEPTH: usize = 15;

/// BigQuery's longest column name.
pub const MAX_NAME_CHARS: usize = 300;

/// Name prefixes BigQuery reserves (compared case-insensitively).
pub use crate::registry::naming::BIGQUERY_RESERVED_PREFIXES as RESERVED_PREFIXES;

/// One column of the table: its name and its BigQuery type, rendered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub ty: String,
}

/// The columns of a registry's output schema, in registry order, then the
/// four ETL columns; names in `partition_names` are the table's Hive
/// partition columns and may not be among them. Every refusal names the
/// column.
/// `list_inference`: the table's `enable_list_inference`; without it
/// BigQuery reads a Parquet list as the record `list` of repeated records
/// `element`, as the file lays it out.
pub fn registry_columns(registry: &str, partition_names: &[String], list_inference: bool) -> Result<Vec<Column>> {
    let mut registry = parse_registry(registry)?;
    let opts = FinalizeOptions {
        policy: registry.field_name_policy,
        order: crate::options::ColumnOrder::SchemaContractFirst,
        bigquery_names: false,
    };
    finalize(&mut registry.root, &opts)?;
    let refuse = |path: &str, why: String| {
        SanitizeError::options(format!("column \"{path}\" cannot be a BigQuery column: {why}"))
    };
    let mut columns =
        struct_columns(&registry.root, "", 0, list_inference).map_err(|(path, why)| refuse(&path, why))?;
    // The ETL columns every scan adds (the pipeline's files hold them).
    for (name, ty) in RESERVED_COLUMNS.iter().zip(["STRING", "TIMESTAMP", "STRING", "STRING"]) {
        columns.push(Column { name: name.to_string(), ty: ty.to_string() });
    }
    check_unique(columns.iter().map(|c| c.name.as_str()), "").map_err(|(path, why)| refuse(&path, why))?;
    for p in partition_names {
        if let Some(c) = columns.iter().find(|c| c.name.eq_ignore_ascii_case(p)) {
            return Err(refuse(
                &c.name,
                format!("it has the name of the Hive partition column \"{p}\" (BigQuery refuses files that repeat a partition key)"),
            ));
        }
    }
    Ok(columns)
}

/// A refusal: the column's path and why.
type Refusal = (String, String);

fn struct_columns(s: &StructNode, parent: &str, depth: usize, li: bool) -> std::result::Result<Vec<Column>, Refusal> {
    let mut out = Vec::new();
    for v in s.output_versions() {
        let path = if parent.is_empty() { v.output_name.clone() } else { format!("{parent}.{}", v.output_name) };
        check_name(&v.output_name).map_err(|why| (path.clone(), why))?;
        out.push(Column { ty: bigquery_type(&v.ty, &path, depth, li)?, name: v.output_name.clone() });
    }
    check_unique(out.iter().map(|c| c.name.as_str()), parent)?;
    Ok(out)
}

/// The BigQuery type of a column of engine type `t`; `depth`: the RECORD
/// levels around it.
fn bigquery_type(t: &TypeNode, path: &str, depth: usize, li: bool) -> std::result::Result<String, Refusal> {
    let refuse = |why: &str| (path.to_string(), why.to_string());
    Ok(match t {
        TypeNode::Scalar(k) => scalar_type(*k).map_err(|why| refuse(&why))?,
        TypeNode::List(e) => match e.as_ref() {
            // (A list of maps is a list of records: a MAP reads as one.)
            TypeNode::List(_) => {
                return Err(refuse(
                    "it is a list of lists, and BigQuery has no ARRAY<ARRAY<...>> (bigquery_profile := true makes it a list of structs)",
                ))
            }
            e if li => format!("ARRAY<{}>", bigquery_type(e, path, depth, li)?),
            // Without list inference: the file's own 3-level layout, two
            // RECORD levels.
            e => {
                if depth + 2 > MAX_RECORD_DEPTH {
                    return Err(refuse(&too_deep(depth + 2)));
                }
                let element = bigquery_type(e, &format!("{path}.list.element"), depth + 2, li)?;
                format!("STRUCT<`list` ARRAY<STRUCT<`element` {element}>>>")
            }
        },
        // Parquet's MAP reads as a record holding the repeated key/value
        // records (`key_value`): two RECORD levels.
        // A map whose entry is not exactly key and value is a list of
        // records in DuckDB and in the file.
        TypeNode::Map(entry) if TypeNode::map_key_value(entry).is_none() => {
            bigquery_type(&TypeNode::List(entry.clone()), path, depth, li)?
        }
        TypeNode::Map(entry) => match entry.as_ref() {
            TypeNode::Struct(_) => {
                if depth + 1 > MAX_RECORD_DEPTH {
                    return Err(refuse(&too_deep(depth + 1)));
                }
                format!("STRUCT<`key_value` ARRAY<{}>>", bigquery_type(entry, &format!("{path}.key_value"), depth + 1, li)?)
            }
            _ => return Err(refuse("a map whose entries are not records")),
        },
        TypeNode::Struct(s) => {
            if depth + 1 > MAX_RECORD_DEPTH {
                return Err(refuse(&too_deep(depth + 1)));
            }
            let fields = struct_columns(s, path, depth + 1, li)?;
            if fields.is_empty() {
                return Err(refuse("a STRUCT without fields"));
            }
            let inner: Vec<String> = fields.iter().map(|f| format!("{} {}", quote_ident(&f.name), f.ty)).collect();
            format!("STRUCT<{}>", inner.join(", "))
        }
    })
}

fn too_deep(levels: usize) -> String {
    format!(
        "it nests RECORDs {levels} levels deep, deeper than BigQuery's {MAX_RECORD_DEPTH} (parquet_max_depth flattens deeper values to JSON text)"
    )
}

/// The BigQuery type of a scalar, as BigQuery reads the Parquet type the
/// writer gives it (docs/bigquery.md has the table and the sources).
fn scalar_type(k: ScalarKind) -> std::result::Result<String, String> {
    Ok(match k {
        ScalarKind::Bool => "BOOL",
        ScalarKind::Int => "INT64",
        ScalarKind::Float => "FLOAT64",
        // Flattened over-depth values and mixed-array elements are JSON text.
        ScalarKind::Str | ScalarKind::Json => "STRING",
        ScalarKind::Date => "DATE",
        ScalarKind::Time => "TIME",
        // TIMESTAMP(isAdjustedToUTC = true) is BigQuery's TIMESTAMP.
        ScalarKind::Timestamp(TimeUnit::Micros) => "TIMESTAMP",
        // TIMESTAMP_MS / _S are written as TIMESTAMP(MILLIS, isAdjustedToUTC
        // = false); BigQuery's Parquet table reads TIMESTAMP MILLIS as
        // TIMESTAMP whatever the flag (the local time taken as UTC).
        ScalarKind::Timestamp(TimeUnit::Millis | TimeUnit::Seconds) => "TIMESTAMP",
        ScalarKind::Timestamp(TimeUnit::Nanos) => {
            return Err("TIMESTAMP_NS: BigQuery does not read nanosecond timestamps (use timestamp_precision := 'us', or bigquery_profile := true)".into())
        }
        ScalarKind::Declared(d) => match d {
            // Every INT(n, signed or not) reads as INT64; a UINT_64 value
            // above 2^63-1 fails the load (docs/bigquery.md).
            Declared::Int8
            | Declared::Int16
            | Declared::Int32
            | Declared::UInt8
            | Declared::UInt16
            | Declared::UInt32
            | Declared::UInt64 => "INT64",
            Declared::Float32 => "FLOAT64",
            Declared::Decimal { precision, scale } => return decimal_type(precision, scale),
            Declared::Blob => "BYTES",
            // A 16-byte FIXED_LEN_BYTE_ARRAY.
            Declared::Uuid => "BYTES",
            Declared::Interval => {
                return Err("INTERVAL: neither Parquet's INTERVAL nor BigQuery's reads DuckDB's microseconds (cast it to VARCHAR)".into())
            }
        },
    }
    .to_string())
}

/// DECIMAL(p, s): NUMERIC when BigQuery's NUMERIC holds it (scale ≤ 9 and
/// at most 29 integer digits), else BIGNUMERIC (scale ≤ 38, at most 38
/// integer digits), else refused.
pub fn decimal_type(precision: u8, scale: u8) -> std::result::Result<String, String> {
    let integer_digits = precision.saturating_sub(scale);
    if scale <= 9 && integer_digits <= 29 {
        Ok(format!("NUMERIC({precision}, {scale})"))
    } else if scale <= 38 && integer_digits <= 38 {
        Ok(format!("BIGNUMERIC({precision}, {scale})"))
    } else {
        Err(format!("DECIMAL({precision},{scale}) is beyond BIGNUMERIC's 38 digits on either side of the point"))
    }
}

/// BigQuery's column-name rules that a sanitized name can break.
pub fn check_name(name: &str) -> std::result::Result<(), String> {
    if name.is_empty() {
        return Err("an empty name".into());
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(format!("its name is longer than BigQuery's {MAX_NAME_CHARS} characters"));
    }
    // External tables take no flexible column names.
    let mut chars = name.chars();
    let starts_well = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !starts_well || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err("BigQuery external tables take names of letters, digits and underscores that start with a letter or underscore (field_name_policy := 'lower_alpha' or bigquery_profile := true make such names)".into());
    }
    let upper = name.to_ascii_uppercase();
    if let Some(prefix) = RESERVED_PREFIXES.iter().find(|p| upper.starts_with(*p)) {
        return Err(format!("its name starts with {prefix}, a prefix BigQuery reserves"));
    }
    Ok(())
}

/// Names of one record must differ case-insensitively.
fn check_unique<'a>(names: impl Iterator<Item = &'a str>, parent: &str) -> std::result::Result<(), Refusal> {
    let mut seen: std::collections::HashMap<String, &str> = std::collections::HashMap::new();
    for name in names {
        if let Some(first) = seen.insert(name.to_lowercase(), name) {
            let path = if parent.is_empty() { name.to_string() } else { format!("{parent}.{name}") };
            return Err((
                path,
                format!("its name differs from \"{first}\" only in case, and BigQuery names are case-insensitive"),
            ));
        }
    }
    Ok(())
}
