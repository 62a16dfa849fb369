//! The functions whose rows the engine computes, as data: each one's name,
//! positional arguments, named parameters, result columns and the builder
//! of its rows (src/ffi/rows.rs registers them and hands the rows to
//! DuckDB): the partition plan, the latest registry, the pipeline, the
//! BigQuery helpers and the rejects.

use super::{Cell, FixedRows, RowSource, RunContext};
use crate::options::ParamValue;

/// The type of a result column.
#[derive(Clone, Copy, Debug)]
pub enum ColumnType {
    Varchar,
    Bigint,
    Boolean,
}

/// Makes a rows function's source from its positional VARCHAR arguments,
/// its named parameters and what the connection grants.
pub type BuildRows = fn(&[String], &[(&str, ParamValue)], &RunContext) -> Result<Box<dyn RowSource>, String>;

/// A rows function: its name, its positional VARCHAR arguments (named for
/// messages), its named parameters (all ANY: the builder's own checks name
/// them), its columns, and the function making its rows.
pub struct RowsFunction {
    pub name: &'static str,
    pub positional: &'static [&'static str],
    pub named: fn() -> Vec<&'static str>,
    pub columns: &'static [(&'static str, ColumnType)],
    pub build: BuildRows,
    /// Reads or writes files: the paths its arguments name are checked
    /// against DuckDB's access rules at bind and again when it runs.
    pub touches_files: bool,
}

/// `sanitize_partitions(source_prefix, ...)` (partitions/plan.rs).
static PARTITIONS: RowsFunction = RowsFunction {
    name: crate::functions::sanitize_partitions::FUNCTION,
    positional: &["source_prefix"],
    named: || crate::functions::sanitize_partitions::PARAMETERS.to_vec(),
    columns: &[
        ("partition_key", ColumnType::Varchar),
        ("source_path", ColumnType::Varchar),
        ("output_path", ColumnType::Varchar),
        ("files", ColumnType::Bigint),
        ("bytes", ColumnType::Bigint),
        ("status", ColumnType::Varchar),
    ],
    build: partition_rows,
    touches_files: true,
};

fn partition_rows(
    arguments: &[String],
    params: &[(&str, crate::options::ParamValue)],
    _context: &RunContext,
) -> Result<Box<dyn RowSource>, String> {
    use crate::functions::sanitize_partitions::{discover, plan, PlanOptions};
    use crate::functions::Cell::{Int, Text};
    let source_prefix = &arguments[0];
    let options = PlanOptions::parse(params).map_err(|e| e.message)?;
    let partitions = plan(source_prefix, &options);
    let found = discover(&partitions, &options).map_err(|e| e.message)?;
    Ok(fixed(
        partitions
            .into_iter()
            .zip(found)
            .map(|(p, f)| {
                // Shown without the credentials a URI may carry (source/redact.rs).
                let shown = |path: &str| crate::source::display_uri(path).into_owned();
                vec![
                    Text(Some(p.key)),
                    Text(Some(shown(&p.source_path))),
                    Text(p.output_path.as_deref().map(shown)),
                    Int(Some(f.files.len() as i64)),
                    Int(i64::try_from(f.bytes).ok()),
                    Text(Some(f.status.name().to_string())),
                ]
            })
            .collect(),
    ))
}

fn fixed(rows: Vec<Vec<Cell>>) -> Box<dyn RowSource> {
    Box::new(FixedRows(rows.into()))
}

/// `sanitize_latest_registry(output_prefix, ...)` (functions/sanitize_partitions.rs).
static LATEST_REGISTRY: RowsFunction = RowsFunction {
    name: crate::functions::sanitize_partitions::LATEST_FUNCTION,
    positional: &["output_prefix"],
    named: || crate::functions::sanitize_partitions::LATEST_PARAMETERS.to_vec(),
    columns: &[
        ("partition_key", ColumnType::Varchar),
        ("path", ColumnType::Varchar),
        ("registry", ColumnType::Varchar),
    ],
    build: latest_registry_rows,
    touches_files: true,
};

fn latest_registry_rows(
    arguments: &[String],
    params: &[(&str, crate::options::ParamValue)],
    context: &RunContext,
) -> Result<Box<dyn RowSource>, String> {
    use crate::functions::Cell::Text;
    let found = crate::functions::sanitize_partitions::latest_registry(&arguments[0], params, &context.opener)
        .map_err(|e| e.message)?;
    Ok(fixed(
        found
            .into_iter()
            .map(|(key, path, registry)| vec![Text(Some(key)), Text(Some(path)), Text(Some(registry))])
            .collect(),
    ))
}

/// `sanitize_pipeline(source_prefix, output_prefix, ...)` (partitions/run.rs).
static PIPELINE: RowsFunction = RowsFunction {
    name: crate::functions::sanitize_pipeline::FUNCTION,
    positional: &["source_prefix", "output_prefix"],
    named: crate::functions::sanitize_pipeline::named_parameters,
    columns: &PIPELINE_COLUMNS,
    build: pipeline_rows,
    touches_files: true,
};

const PIPELINE_COLUMNS: [(&str, ColumnType); crate::functions::sanitize_pipeline::COLUMNS.len()] = {
    let names = crate::functions::sanitize_pipeline::COLUMNS;
    let mut out = [("", ColumnType::Varchar); crate::functions::sanitize_pipeline::COLUMNS.len()];
    let mut i = 0;
    while i < names.len() {
        out[i] = (names[i].0, if names[i].1 { ColumnType::Bigint } else { ColumnType::Varchar });
        i += 1;
    }
    out
};

fn pipeline_rows(
    arguments: &[String],
    params: &[(&str, crate::options::ParamValue)],
    context: &RunContext,
) -> Result<Box<dyn RowSource>, String> {
    let run = crate::functions::sanitize_pipeline::PipelineRun::start(&arguments[0], &arguments[1], params, context)
        .map_err(|e| e.message)?;
    Ok(Box::new(run))
}

/// `sanitize_bigquery_ddl(registry, table := ..., ...)` (functions/sanitize_bigquery.rs).
static BIGQUERY_DDL: RowsFunction = RowsFunction {
    name: crate::functions::sanitize_bigquery::DDL,
    positional: &["registry"],
    named: || crate::functions::sanitize_bigquery::DDL_PARAMETERS.to_vec(),
    columns: &[("ddl", ColumnType::Varchar)],
    build: |arguments, params, _| {
        let ddl = crate::functions::sanitize_bigquery::ddl(&arguments[0], params).map_err(|e| e.message)?;
        Ok(fixed(vec![vec![Cell::Text(Some(ddl))]]))
    },
    touches_files: false,
};

/// `sanitize_bigquery_registry_query(external_table, ...)`: one row per query.
static BIGQUERY_REGISTRY_QUERY: RowsFunction = RowsFunction {
    name: crate::functions::sanitize_bigquery::REGISTRY_QUERY,
    positional: &["external_table"],
    named: || crate::functions::sanitize_bigquery::REGISTRY_QUERY_PARAMETERS.to_vec(),
    columns: &[("kind", ColumnType::Varchar), ("query", ColumnType::Varchar)],
    build: |arguments, params, _| {
        let queries =
            crate::functions::sanitize_bigquery::registry_query(&arguments[0], params).map_err(|e| e.message)?;
        Ok(fixed(
            queries
                .into_iter()
                .map(|(kind, q)| vec![Cell::Text(Some(kind.to_string())), Cell::Text(Some(q))])
                .collect(),
        ))
    },
    touches_files: false,
};

/// `sanitize_parse_partition_key(key, ...)`: one row.
static PARSE_PARTITION_KEY: RowsFunction = RowsFunction {
    name: crate::functions::sanitize_bigquery::PARSE_KEY,
    positional: &["key"],
    named: || crate::functions::sanitize_bigquery::PARSE_KEY_PARAMETERS.to_vec(),
    columns: &[
        ("valid", ColumnType::Boolean),
        ("partition_values", ColumnType::Varchar),
        ("reason", ColumnType::Varchar),
    ],
    build: |arguments, params, _| {
        let (valid, values, reason) =
            crate::functions::sanitize_bigquery::parse_key(&arguments[0], params).map_err(|e| e.message)?;
        Ok(fixed(vec![vec![Cell::Bool(Some(valid)), Cell::Text(values), Cell::Text(reason)]]))
    },
    touches_files: false,
};

/// `sanitize_rejects()`: the rejected records and values of this
/// connection's recent scans (scan/rejects.rs); `all_connections :=
/// true` for every connection's of the database.
static REJECTS: RowsFunction = RowsFunction {
    name: "sanitize_rejects",
    positional: &[],
    named: || vec!["all_connections"],
    columns: &[
        ("scan_id", ColumnType::Bigint),
        ("function", ColumnType::Varchar),
        ("file", ColumnType::Varchar),
        ("line", ColumnType::Bigint),
        ("byte", ColumnType::Bigint),
        ("record_index", ColumnType::Bigint),
        ("path", ColumnType::Varchar),
        ("source_key", ColumnType::Varchar),
        ("kind", ColumnType::Varchar),
        ("action", ColumnType::Varchar),
        ("raw", ColumnType::Varchar),
        ("raw_bytes", ColumnType::Bigint),
        ("message", ColumnType::Varchar),
        ("connection_id", ColumnType::Bigint),
    ],
    build: |_, params, context| {
        let all = params.iter().any(|(n, v)| *n == "all_connections" && *v == crate::options::ParamValue::Bool(true));
        let rows = crate::scan::rejects::snapshot(crate::scan::scan_log::Scope::of(context.session, all));
        let int = |n: u64| Cell::Int(i64::try_from(n).ok());
        Ok(fixed(
            rows.into_iter()
                .map(|r| {
                    vec![
                        int(r.scan_id),
                        Cell::Text(Some(r.function)),
                        Cell::Text(Some(r.file)),
                        int(r.line),
                        int(r.byte),
                        Cell::Int(r.record_index.and_then(|n| i64::try_from(n).ok())),
                        Cell::Text(r.path),
                        Cell::Text(r.source_key),
                        Cell::Text(Some(r.kind.to_string())),
                        Cell::Text(Some(r.action.to_string())),
                        Cell::Text(r.raw),
                        Cell::Int(r.raw_bytes.and_then(|n| i64::try_from(n).ok())),
                        Cell::Text(Some(r.message)),
                        Cell::Int(r.session.and_then(|s| i64::try_from(s.connection).ok())),
                    ]
                })
                .collect(),
        ))
    },
    touches_files: false,
};

/// A column list of `N` (name, is BIGINT) pairs as rows function columns.
pub const fn columns<const N: usize>(names: &[(&'static str, bool)]) -> [(&'static str, ColumnType); N] {
    let mut out = [("", ColumnType::Varchar); N];
    let mut i = 0;
    while i < N {
        out[i] = (names[i].0, if names[i].1 { ColumnType::Bigint } else { ColumnType::Varchar });
        i += 1;
    }
    out
}

const LOG_COLUMNS: [(&str, ColumnType); super::sanitize_ingest::LOG_COLUMNS.len()] =
    columns(super::sanitize_ingest::LOG_COLUMNS);

/// `sanitize_ingest_log(checkpoint)`: VARCHAR arguments only, a rows
/// function like any other.
static INGEST_LOG: RowsFunction = RowsFunction {
    name: super::sanitize_ingest::LOG_FUNCTION,
    positional: &["checkpoint"],
    named: Vec::new,
    columns: &LOG_COLUMNS,
    build: |arguments, _, _| {
        Ok(Box::new(FixedRows(super::sanitize_ingest::log_rows(&arguments[0]).map_err(|e| e.message)?.into())))
    },
    touches_files: true,
};

/// Every rows function but `sanitize_ingest`, whose source argument takes
/// a VARCHAR or a VARCHAR[] (src/ffi/ingest.rs binds it).
pub static ROWS_FUNCTIONS: [&RowsFunction; 8] = [
    &PARTITIONS,
    &LATEST_REGISTRY,
    &PIPELINE,
    &BIGQUERY_DDL,
    &BIGQUERY_REGISTRY_QUERY,
    &PARSE_PARTITION_KEY,
    &REJECTS,
    &INGEST_LOG,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{INPUT_FORMAT_SPEC, OPTION_SPECS, ROW_PARAMETERS};

    #[test]
    fn every_row_function_parameter_is_declared_with_its_type() {
        let known = |name: &str| {
            OPTION_SPECS.iter().chain([&INPUT_FORMAT_SPEC]).any(|s| s.name == name)
                || ROW_PARAMETERS.iter().any(|(n, _)| *n == name)
        };
        let mut names: Vec<&str> = ROWS_FUNCTIONS.iter().flat_map(|f| (f.named)()).collect();
        names.extend(super::super::sanitize_ingest::named_parameters());
        let undeclared: Vec<&str> = names.into_iter().filter(|n| !known(n)).collect();
        assert!(undeclared.is_empty(), "parameters without a declared type: {undeclared:?}");
    }
}
