//! The named parameters of a function that computes its rows (the
//! pipeline, the partition plan, ingestion, the BigQuery helpers), read by
//! name with the scans' own value parsers, so that every function says the
//! same thing of the same mistake: `<function>: the "<name>" parameter ...`.
//! A NULL value is an absent one. Their names and SQL types are in
//! [`ROW_PARAMETERS`] beside the scans' [`OPTION_SPECS`].

#[allow(unused_imports)]
use super::*;

/// A row function's parameters.
#[derive(Clone, Copy)]
pub struct RowParams<'a> {
    function: &'a str,
    params: &'a [(&'a str, ParamValue)],
}

impl<'a> RowParams<'a> {
    pub fn new(function: &'a str, params: &'a [(&'a str, ParamValue)]) -> Self {
        RowParams { function, params }
    }

    /// The value given for `name`, unless absent or NULL.
    pub fn get(&self, name: &str) -> Option<&'a ParamValue> {
        self.params.iter().find(|(n, v)| *n == name && *v != ParamValue::Null).map(|(_, v)| v)
    }

    /// An error about `name`: `<function>: the "<name>" parameter <why>`.
    pub fn bad(&self, name: &str, why: impl std::fmt::Display) -> SanitizeError {
        SanitizeError::options(format!("{}: the \"{name}\" parameter {why}", self.function))
    }

    /// A parser's message (which names the parameter) under the function.
    fn in_function(&self, message: String) -> SanitizeError {
        SanitizeError::options(format!("{}: {message}", self.function))
    }

    pub fn text(&self, name: &str) -> Result<Option<String>> {
        self.get(name).map(|v| string(name, v).map_err(|m| self.in_function(m))).transpose()
    }

    pub fn boolean(&self, name: &str) -> Result<Option<bool>> {
        self.get(name).map(|v| boolean(name, v).map_err(|m| self.in_function(m))).transpose()
    }

    /// One of a named enumeration's values, ignoring case.
    pub fn choice<T: Named>(&self, name: &str) -> Result<Option<T>> {
        self.get(name).map(|v| choice(name, v).map_err(|m| self.in_function(m))).transpose()
    }
}

/// The named parameters the row functions add to the scan options, with
/// the SQL type each is registered with (ANY where a parameter takes
/// several types); documented in docs/partitions.md, docs/ingest.md and
/// docs/bigquery.md.
pub const ROW_PARAMETERS: &[(&str, ParamType)] = &[
    ("start_date", ParamType::Varchar),
    ("end_date", ParamType::Varchar),
    ("granularity", ParamType::Varchar),
    ("start_hour", ParamType::Bigint),
    ("end_hour", ParamType::Bigint),
    ("partition_template", ParamType::Varchar),
    ("output_prefix", ParamType::Varchar),
    ("output_file_stem", ParamType::Varchar),
    ("warm_up_start_date", ParamType::Varchar),
    ("warm_up_end_date", ParamType::Varchar),
    ("warm_up_start_hour", ParamType::Bigint),
    ("warm_up_end_hour", ParamType::Bigint),
    ("overwrite", ParamType::Boolean),
    ("input_compression", ParamType::Varchar),
    ("checkpoint", ParamType::Varchar),
    ("order", ParamType::Varchar),
    ("file_order", ParamType::Varchar),
    ("max_files_per_run", ParamType::Bigint),
    ("on_changed", ParamType::Varchar),
    ("all_connections", ParamType::Boolean),
    ("partition_columns", ParamType::Any),
    ("table", ParamType::Varchar),
    ("table_name", ParamType::Varchar),
    ("source_uris", ParamType::Any),
    ("hive_uri_prefix", ParamType::Varchar),
    ("require_partition_filter", ParamType::Boolean),
    ("format", ParamType::Varchar),
    ("enable_list_inference", ParamType::Boolean),
    ("sidecar_table", ParamType::Varchar),
];

/// The SQL type a row function registers `name` with: a scan option's own,
/// else [`ROW_PARAMETERS`]'s, else ANY.
pub fn row_parameter_type(name: &str) -> ParamType {
    OPTION_SPECS
        .iter()
        .chain([&INPUT_FORMAT_SPEC])
        .find(|s| s.name == name)
        .map(|s| s.ty)
        .or_else(|| ROW_PARAMETERS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t))
        .unwrap_or(ParamType::Any)
}
