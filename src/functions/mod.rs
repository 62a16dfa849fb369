//! The SQL surface as data: which table functions exist, what format each
//! reads, and the logic of the small functions. Pure Rust; `src/ffi`
//! registers what is listed here.

pub mod rows;
pub mod sanitize_bigquery;
pub mod sanitize_ingest;
pub mod sanitize_partitions;
pub mod sanitize_pipeline;
pub mod sanitize_probe;
pub mod sanitize_registry;

use crate::options::InputFormat;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableKind {
    /// Returns the sanitized rows plus the four ETL columns.
    Scan,
    /// `sanitize_probe`: one row of registry, drifts and stats.
    Probe,
}

#[derive(Clone, Copy, Debug)]
pub struct TableFunctionDef {
    pub name: &'static str,
    /// `None`: the function takes `input_format :=` (required).
    pub format: Option<InputFormat>,
    pub kind: TableKind,
}

pub const TABLE_FUNCTIONS: &[TableFunctionDef] = &[
    TableFunctionDef { name: "sanitize", format: None, kind: TableKind::Scan },
    TableFunctionDef { name: "sanitize_csv", format: Some(InputFormat::Csv), kind: TableKind::Scan },
    TableFunctionDef { name: "sanitize_json", format: Some(InputFormat::Json), kind: TableKind::Scan },
    TableFunctionDef { name: "sanitize_json_array", format: Some(InputFormat::JsonArray), kind: TableKind::Scan },
    TableFunctionDef { name: "sanitize_jsonl", format: Some(InputFormat::Jsonl), kind: TableKind::Scan },
    TableFunctionDef { name: "sanitize_ndjson", format: Some(InputFormat::Ndjson), kind: TableKind::Scan },
    TableFunctionDef { name: "sanitize_xml", format: Some(InputFormat::Xml), kind: TableKind::Scan },
    TableFunctionDef { name: "sanitize_parquet", format: Some(InputFormat::Parquet), kind: TableKind::Scan },
    TableFunctionDef { name: "sanitize_probe", format: None, kind: TableKind::Probe },
];

/// The columns of `sanitize_probe`.
pub const PROBE_COLUMNS: [&str; 3] = ["schema_registry", "schema_drifts", "stats"];

/// One value of a result row of the functions whose rows are computed here
/// (src/ffi/rows.rs hands them to DuckDB).
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Text(Option<String>),
    Int(Option<i64>),
    Bool(Option<bool>),
}

/// `own` (a row function's parameters) and every scan option after them,
/// each name once: the named parameters of a function that runs scans.
pub fn with_scan_options(mut own: Vec<&'static str>) -> Vec<&'static str> {
    for spec in crate::options::OPTION_SPECS.iter().chain([&crate::options::INPUT_FORMAT_SPEC]) {
        if !own.contains(&spec.name) {
            own.push(spec.name);
        }
    }
    own
}

pub use crate::scan::RunContext;

/// A function's result rows, produced as the scan asks for them.
pub trait RowSource: Send {
    /// The next rows, at most `max`; none once the result is complete.
    fn next_rows(&mut self, max: usize) -> crate::error::Result<Vec<Vec<Cell>>>;
}

/// Rows computed whole at bind (a plan, a list).
pub struct FixedRows(pub std::collections::VecDeque<Vec<Cell>>);

impl RowSource for FixedRows {
    fn next_rows(&mut self, max: usize) -> crate::error::Result<Vec<Vec<Cell>>> {
        let n = max.min(self.0.len());
        Ok(self.0.drain(..n).collect())
    }
}
