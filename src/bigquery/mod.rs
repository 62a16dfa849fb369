//! BigQuery statements from a registry (docs/bigquery.md): the
//! external table over a silver Hive prefix, the registry sidecar table and
//! its MERGE, and the latest-registry queries. The extension cannot reach
//! BigQuery: these are exact texts a user runs with `bq`, the Python client
//! or DuckDB's `bigquery` extension. Pure text, no I/O.

mod columns;
mod partition_key;
mod statements;
#[cfg(test)]
mod tests;

pub use columns::registry_columns;
pub use partition_key::{parse_partition_key, partition_columns};
pub use statements::{external_table_ddl, registry_queries, sidecar_ddl, sidecar_merge, ExternalTable};

/// A GoogleSQL quoted identifier: backticks, with backslash escapes as in
/// string literals. A `project.dataset.table` path may be quoted whole.
pub fn quote_ident(name: &str) -> String {
    format!("`{}`", escape(name, '`'))
}

/// A GoogleSQL string literal: single quotes, backslash escapes.
pub fn quote_string(text: &str) -> String {
    format!("'{}'", escape(text, '\''))
}

fn escape(text: &str, quote: char) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// A table path `project.dataset.table` (or `dataset.table`), checked, for
/// `parameter` of `function`.
pub fn table_path(parameter: &str, path: &str) -> crate::error::Result<String> {
    let parts: Vec<&str> = path.split('.').collect();
    let ok = (2..=3).contains(&parts.len()) && parts.iter().all(|p| !p.trim().is_empty() && !p.contains('`'));
    if !ok {
        return Err(crate::error::SanitizeError::options(format!(
            "the \"{parameter}\" parameter must be a table path 'project.dataset.table' (or 'dataset.table'), not '{path}'"
        )));
    }
    Ok(path.to_string())
}
