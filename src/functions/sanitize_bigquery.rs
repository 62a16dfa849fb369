//! The BigQuery functions' parameters (src/bigquery has the statements):
//! `sanitize_bigquery_ddl`, `sanitize_bigquery_registry_query`,
//! `sanitize_parse_partition_key` (table functions: they take named
//! parameters), `sanitize_bigquery_sidecar_ddl` and
//! `sanitize_bigquery_sidecar_merge` (scalars).

use crate::bigquery::{
    external_table_ddl, parse_partition_key, partition_columns, registry_columns, registry_queries, sidecar_ddl,
    sidecar_merge, table_path, ExternalTable,
};
use crate::error::{Result, SanitizeError};
use crate::options::{ParamValue, RowParams};

pub const DDL: &str = "sanitize_bigquery_ddl";
pub const DDL_PARAMETERS: &[&str] = &[
    "table",
    "table_name",
    "source_uris",
    "hive_uri_prefix",
    "partition_columns",
    "granularity",
    "require_partition_filter",
    "format",
    "enable_list_inference",
];

pub const REGISTRY_QUERY: &str = "sanitize_bigquery_registry_query";
pub const REGISTRY_QUERY_PARAMETERS: &[&str] = &["partition_columns", "granularity", "sidecar_table"];

pub const PARSE_KEY: &str = "sanitize_parse_partition_key";
pub const PARSE_KEY_PARAMETERS: &[&str] = &["partition_columns", "granularity"];

pub const SIDECAR_DDL: &str = "sanitize_bigquery_sidecar_ddl";
pub const SIDECAR_MERGE: &str = "sanitize_bigquery_sidecar_merge";

/// `sanitize_bigquery_ddl(registry, "table" := ..., ...)`: the statement.
pub fn ddl(registry: &str, params: &[(&str, ParamValue)]) -> Result<String> {
    let p = RowParams::new(DDL, params);
    // `table` is a keyword of DuckDB's parser: it must be written
    // `"table" := ...`; `table_name` is the same parameter without quotes.
    let (name, table) = match (p.text("table")?, p.text("table_name")?) {
        (Some(_), Some(_)) => return Err(p.bad("table_name", "and \"table\" are the same parameter; give one")),
        (Some(t), None) => ("table", t),
        (None, Some(t)) => ("table_name", t),
        (None, None) => {
            return Err(p.bad(
                "table",
                "is required ('project.dataset.table'; write it \"table\" := ..., or table_name := ...)",
            ))
        }
    };
    let table = table_path(name, &table).map_err(|e| e.in_function(DDL))?;
    let hive_uri_prefix = p.text("hive_uri_prefix")?.map(|p| p.trim_end_matches('/').to_string());
    let source_uris = match p.get("source_uris") {
        None => match &hive_uri_prefix {
            Some(prefix) => vec![format!("{prefix}/*")],
            None => return Err(p.bad("source_uris", "is required when hive_uri_prefix is not given")),
        },
        Some(ParamValue::List(items)) if !items.is_empty() => items
            .iter()
            .map(|i| match i {
                ParamValue::Str(s) => Ok(s.clone()),
                v => Err(p.bad("source_uris", format!("must hold URIs (VARCHAR), not {}", v.describe()))),
            })
            .collect::<Result<_>>()?,
        Some(ParamValue::Str(s)) => vec![s.clone()],
        Some(v) => Err(p.bad("source_uris", format!("must be a non-empty VARCHAR[] of URIs, not {}", v.describe())))?,
    };
    let explicit_columns = p.get("partition_columns").is_some();
    let columns = partition_columns(DDL, params)?;
    // Without a Hive prefix there are no partition columns, unless named.
    let partition_columns = match (&hive_uri_prefix, explicit_columns && !columns.is_empty()) {
        (Some(_), _) => columns,
        (None, true) => return Err(p.bad("hive_uri_prefix", "is required with partition_columns")),
        (None, false) => Vec::new(),
    };
    let format = p.text("format")?.unwrap_or_else(|| "PARQUET".into()).to_ascii_uppercase();
    if format != "PARQUET" {
        return Err(p.bad(
            "format",
            format!("must be 'PARQUET' (the columns follow BigQuery's Parquet types), not '{format}'"),
        ));
    }
    let names: Vec<String> = partition_columns.iter().map(|(n, _)| n.clone()).collect();
    let enable_list_inference = p.boolean("enable_list_inference")?.unwrap_or(true);
    let columns = registry_columns(registry, &names, enable_list_inference).map_err(|e| e.in_function(DDL))?;
    let t = ExternalTable {
        table,
        source_uris,
        hive_uri_prefix,
        partition_columns,
        require_partition_filter: p.boolean("require_partition_filter")?.unwrap_or(false),
        format,
        enable_list_inference,
    };
    Ok(external_table_ddl(&t, &columns))
}

/// `sanitize_bigquery_registry_query(external_table, ...)`: `(kind, query)` rows.
pub fn registry_query(external: &str, params: &[(&str, ParamValue)]) -> Result<Vec<(&'static str, String)>> {
    let external = table_path("external_table", external).map_err(|e| e.in_function(REGISTRY_QUERY))?;
    let columns = partition_columns(REGISTRY_QUERY, params)?;
    let sidecar = RowParams::new(REGISTRY_QUERY, params)
        .text("sidecar_table")?
        .map(|s| table_path("sidecar_table", &s))
        .transpose()
        .map_err(|e| e.in_function(REGISTRY_QUERY))?;
    Ok(registry_queries(&external, &columns, sidecar.as_deref()))
}

/// `sanitize_parse_partition_key(key, ...)`: whether the key is one of
/// the table's partitions, its values as a JSON object, or why not.
pub fn parse_key(key: &str, params: &[(&str, ParamValue)]) -> Result<(bool, Option<String>, Option<String>)> {
    let columns = partition_columns(PARSE_KEY, params)?;
    Ok(match parse_partition_key(key, &columns) {
        Ok(values) => {
            // In the key's order (a serde_json map would sort the names).
            let members: Vec<String> = columns
                .iter()
                .zip(values)
                .map(|((n, _), v)| format!("{}:{}", serde_json::Value::from(n.as_str()), serde_json::Value::from(v)))
                .collect();
            (true, Some(format!("{{{}}}", members.join(","))), None)
        }
        Err(why) => (false, None, Some(why)),
    })
}

/// `sanitize_bigquery_sidecar_ddl(sidecar_table)`.
pub fn sidecar_table_ddl(sidecar: &str) -> Result<String> {
    Ok(sidecar_ddl(&table_path("sidecar_table", sidecar).map_err(|e| e.in_function(SIDECAR_DDL))?))
}

/// `sanitize_bigquery_sidecar_merge(sidecar_table, external_table, partition_key)`.
pub fn sidecar_table_merge(sidecar: &str, external: &str, key: &str) -> Result<String> {
    let sidecar = table_path("sidecar_table", sidecar).map_err(|e| e.in_function(SIDECAR_MERGE))?;
    let external = table_path("external_table", external).map_err(|e| e.in_function(SIDECAR_MERGE))?;
    let well_formed = !key.is_empty()
        && key
            .trim_end_matches('/')
            .split('/')
            .all(|s| s.split_once('=').is_some_and(|(k, v)| !k.is_empty() && !v.is_empty()));
    if !well_formed {
        return Err(SanitizeError::options(format!(
            "{SIDECAR_MERGE}: the partition_key '{key}' is not a Hive key (name=value/name=value...)"
        )));
    }
    Ok(sidecar_merge(&sidecar, &external, key.trim_end_matches('/')))
}
