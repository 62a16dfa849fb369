//! The statements: `CREATE OR REPLACE EXTERNAL TABLE`, the sidecar's
//! `CREATE TABLE IF NOT EXISTS` and `MERGE`, and the latest-registry
//! SELECTs (docs/bigquery.md).

use super::columns::Column;
use super::partition_key::PartitionColumns;
use super::{quote_ident, quote_string};

/// What the external table is over.
#[derive(Clone, Debug)]
pub struct ExternalTable {
    pub table: String,
    pub source_uris: Vec<String>,
    /// `None`: no Hive partitioning (and no partition columns).
    pub hive_uri_prefix: Option<String>,
    pub partition_columns: PartitionColumns,
    pub require_partition_filter: bool,
    pub format: String,
    pub enable_list_inference: bool,
}

/// `CREATE OR REPLACE EXTERNAL TABLE`: the columns, the Hive partition
/// columns declared apart, the options.
pub fn external_table_ddl(t: &ExternalTable, columns: &[Column]) -> String {
    let list = |items: Vec<String>| items.iter().map(|i| format!("  {i}")).collect::<Vec<_>>().join(",\n");
    let mut sql = format!("CREATE OR REPLACE EXTERNAL TABLE {} (\n", quote_ident(&t.table));
    sql.push_str(&list(columns.iter().map(|c| format!("{} {}", quote_ident(&c.name), c.ty)).collect()));
    sql.push_str("\n)\n");
    if t.hive_uri_prefix.is_some() && !t.partition_columns.is_empty() {
        sql.push_str("WITH PARTITION COLUMNS (\n");
        sql.push_str(&list(t.partition_columns.iter().map(|(n, ty)| format!("{} {ty}", quote_ident(n))).collect()));
        sql.push_str("\n)\n");
    }
    let mut options = vec![
        format!("format = {}", quote_string(&t.format)),
        format!("uris = [{}]", t.source_uris.iter().map(|u| quote_string(u)).collect::<Vec<_>>().join(", ")),
    ];
    if let Some(prefix) = &t.hive_uri_prefix {
        options.push(format!("hive_partition_uri_prefix = {}", quote_string(prefix)));
        options.push(format!("require_hive_partition_filter = {}", t.require_partition_filter));
    }
    if t.format == "PARQUET" {
        options.push(format!("enable_list_inference = {}", t.enable_list_inference));
        // Parquet DECIMAL reads as NUMERIC only, unless BIGNUMERIC is listed.
        if columns.iter().any(|c| c.ty.contains("BIGNUMERIC")) {
            options.push("decimal_target_types = ['NUMERIC', 'BIGNUMERIC']".to_string());
        }
    }
    sql.push_str("OPTIONS (\n");
    sql.push_str(&list(options));
    sql.push_str("\n);");
    sql
}

/// The sidecar table: exactly the two NOT NULL columns of the seed.
pub fn sidecar_ddl(sidecar: &str) -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS {} (\n  external_table_name STRING NOT NULL,\n  last_ingested_partition STRING NOT NULL\n);",
        quote_ident(sidecar)
    )
}

/// The idempotent upsert of the sidecar's pointer: one row per external
/// table; a second identical run changes nothing (0 rows affected), and a
/// re-run of a past date moves the pointer to that run's last partition.
pub fn sidecar_merge(sidecar: &str, external_table: &str, partition_key: &str) -> String {
    format!(
        "MERGE {} AS T\nUSING (SELECT {} AS external_table_name, {} AS last_ingested_partition) AS S\nON T.external_table_name = S.external_table_name\nWHEN MATCHED AND T.last_ingested_partition != S.last_ingested_partition THEN\n  UPDATE SET last_ingested_partition = S.last_ingested_partition\nWHEN NOT MATCHED THEN\n  INSERT (external_table_name, last_ingested_partition) VALUES (S.external_table_name, S.last_ingested_partition);",
        quote_ident(sidecar),
        quote_string(external_table),
        quote_string(partition_key)
    )
}

/// The latest non-null registry of the external table, newest first by
/// ingestion timestamp, registry generation, then the partition columns:
/// `("full", query)`, preceded with a sidecar by `("sidecar", query)`,
/// the same query constrained to the partition the sidecar points at (a
/// key that does not parse as this table's gives no row, so the client
/// falls back to `full`).
pub fn registry_queries(
    external: &str,
    columns: &PartitionColumns,
    sidecar: Option<&str>,
) -> Vec<(&'static str, String)> {
    let generation =
        |alias: &str| format!("SAFE_CAST(JSON_VALUE({alias}schema_registry, '$.schema_generation') AS INT64)");
    let mut order = vec!["ingestion_timestamp DESC".to_string(), format!("{} DESC", generation(""))];
    order.extend(columns.iter().map(|(n, _)| format!("{} DESC", quote_ident(n))));
    let full = format!(
        "SELECT schema_registry\nFROM {}\nWHERE schema_registry IS NOT NULL\nORDER BY {}\nLIMIT 1",
        quote_ident(external),
        order.join(", ")
    );
    let Some(sidecar) = sidecar else { return vec![("full", full)] };
    let mut on = Vec::new();
    for (i, (name, ty)) in columns.iter().enumerate() {
        // The whole key, this column's value captured.
        let pattern: Vec<String> = columns
            .iter()
            .enumerate()
            .map(|(j, (n, _))| format!("{}={}", regex::escape(n), if i == j { "([^/]+)" } else { "[^/]+" }))
            .collect();
        let extract = format!("REGEXP_EXTRACT(s.partition_key, {})", quote_string(&format!("^{}$", pattern.join("/"))));
        let value = if ty == "STRING" { extract } else { format!("SAFE_CAST({extract} AS {ty})") };
        on.push(format!("e.{} = {value}", quote_ident(name)));
    }
    let mut e_order = vec!["e.ingestion_timestamp DESC".to_string(), format!("{} DESC", generation("e."))];
    e_order.extend(columns.iter().map(|(n, _)| format!("e.{} DESC", quote_ident(n))));
    let constrained = format!(
        "SELECT e.schema_registry\nFROM {} AS e\nJOIN (\n  SELECT last_ingested_partition AS partition_key\n  FROM {}\n  WHERE external_table_name = {}\n) AS s\nON {}\nWHERE e.schema_registry IS NOT NULL\nORDER BY {}\nLIMIT 1",
        quote_ident(external),
        quote_ident(sidecar),
        quote_string(external),
        if on.is_empty() { "TRUE".to_string() } else { on.join("\n  AND ") },
        e_order.join(", ")
    );
    vec![("sidecar", constrained), ("full", full)]
}
