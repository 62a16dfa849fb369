//! The only code that touches DuckDB. Every callback runs inside
//! [`guard::contain`], so neither a Rust panic nor an error crosses the C
//! boundary: both become DuckDB errors.

mod files;
mod guard;
mod handles;
mod ingest;
mod rows;
mod scalar;
mod table;
mod types;
mod vectors;

use std::ffi::CString;

use duckdb::ffi;

use crate::functions::{Cell, FixedRows, RowSource, RunContext, TABLE_FUNCTIONS};

const C_API_VERSION: &str = env!("SCHEMA_SANITIZER_C_API_VERSION");

/// The entry point DuckDB looks up by the file name: `<name>_init_c_api`.
///
/// # Safety
/// Called by DuckDB with valid `info` and `access` pointers.
#[no_mangle]
pub unsafe extern "C" fn schema_sanitizer_init_c_api(
    info: ffi::duckdb_extension_info,
    access: *const ffi::duckdb_extension_access,
) -> bool {
    // SAFETY: DuckDB's pointers, valid for this call (the function's contract).
    let result = guard::catch(|| unsafe { init(info, access) });
    match result {
        Ok(loaded) => loaded,
        Err(message) => {
            // SAFETY: `access` is valid for this call; set_error copies the message.
            if let Some(set_error) = unsafe { (*access).set_error } {
                let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
                // SAFETY: DuckDB's setter with DuckDB's info and a NUL-terminated message.
                unsafe { set_error(info, text.as_ptr()) };
            }
            false
        }
    }
}

/// # Safety
/// `info` and `access` are DuckDB's, valid for the entry point's call.
unsafe fn init(info: ffi::duckdb_extension_info, access: *const ffi::duckdb_extension_access) -> Result<bool, String> {
    // SAFETY: DuckDB's pointers; the call fills the C API function table.
    let have_api =
        unsafe { ffi::duckdb_rs_extension_api_init(info, access, C_API_VERSION) }.map_err(|e| e.to_string())?;
    if !have_api {
        // DuckDB has already recorded why (an older C API than we need).
        return Ok(false);
    }
    // SAFETY: `access` is valid for this call.
    let get_database = unsafe { (*access).get_database }.ok_or("DuckDB gave no get_database function")?;
    // SAFETY: DuckDB's function with DuckDB's info.
    let db = unsafe { get_database(info) };
    if db.is_null() {
        return Err("DuckDB gave no database to register the functions in".into());
    }
    let mut con: ffi::duckdb_connection = std::ptr::null_mut();
    // SAFETY: a live database; the connection is ours, closed below.
    if unsafe { ffi::duckdb_connect(*db, &mut con) } != ffi::DuckDBSuccess {
        return Err("could not open a connection to register the functions".into());
    }
    // A load into one database: its token tells its connections from
    // another database's connections of the same id (scan_log::Session).
    let database = NEXT_DATABASE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    // SAFETY: the connection stays open until after registration.
    let registered = register_all(&unsafe { handles::Connection::from_raw(con, database) });
    // SAFETY: our connection, closed once.
    unsafe { ffi::duckdb_disconnect(&mut con) };
    registered.map(|_| true)
}

/// The token of the next database the extension is loaded into.
static NEXT_DATABASE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn register_all(con: &handles::Connection) -> Result<(), String> {
    for def in TABLE_FUNCTIONS {
        table::register(con, def)?;
    }
    scalar::register_sanitize_registry(con)?;
    table::register_stats(con)?;
    rows::register(con, &PARTITIONS)?;
    rows::register(con, &LATEST_REGISTRY)?;
    rows::register(con, &PIPELINE)?;
    ingest::register(con)?;
    rows::register(con, &BIGQUERY_DDL)?;
    rows::register(con, &BIGQUERY_REGISTRY_QUERY)?;
    rows::register(con, &PARSE_PARTITION_KEY)?;
    rows::register(con, &REJECTS)?;
    scalar::register_bigquery_sidecar(con)?;
    scalar::register_registry_from_parquet(con)?;
    scalar::register_registry_merge(con)?;
    guard::install_quiet_panic_hook();
    if std::env::var_os("SCHEMA_SANITIZER_PANIC_PROBE").is_some() {
        // Test-only: proves that a panic inside a callback becomes an error.
        table::register_panic_probe(con)?;
    }
    Ok(())
}

/// `sanitize_partitions(source_prefix, ...)` (functions/sanitize_partitions.rs).
static PARTITIONS: rows::RowsFunction = rows::RowsFunction {
    name: crate::functions::sanitize_partitions::FUNCTION,
    positional: &["source_prefix"],
    named: || crate::functions::sanitize_partitions::PARAMETERS.to_vec(),
    columns: &[
        ("partition_key", rows::ColumnType::Varchar),
        ("source_path", rows::ColumnType::Varchar),
        ("output_path", rows::ColumnType::Varchar),
        ("files", rows::ColumnType::Bigint),
        ("bytes", rows::ColumnType::Bigint),
        ("status", rows::ColumnType::Varchar),
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
static LATEST_REGISTRY: rows::RowsFunction = rows::RowsFunction {
    name: crate::functions::sanitize_partitions::LATEST_FUNCTION,
    positional: &["output_prefix"],
    named: || crate::functions::sanitize_partitions::LATEST_PARAMETERS.to_vec(),
    columns: &[
        ("partition_key", rows::ColumnType::Varchar),
        ("path", rows::ColumnType::Varchar),
        ("registry", rows::ColumnType::Varchar),
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

/// `sanitize_pipeline(source_prefix, output_prefix, ...)` (functions/sanitize_pipeline.rs).
static PIPELINE: rows::RowsFunction = rows::RowsFunction {
    name: crate::functions::sanitize_pipeline::FUNCTION,
    positional: &["source_prefix", "output_prefix"],
    named: crate::functions::sanitize_pipeline::named_parameters,
    columns: &PIPELINE_COLUMNS,
    build: pipeline_rows,
    touches_files: true,
};

const PIPELINE_COLUMNS: [(&str, rows::ColumnType); crate::functions::sanitize_pipeline::COLUMNS.len()] = {
    let names = crate::functions::sanitize_pipeline::COLUMNS;
    let mut out = [("", rows::ColumnType::Varchar); crate::functions::sanitize_pipeline::COLUMNS.len()];
    let mut i = 0;
    while i < names.len() {
        out[i] = (names[i].0, if names[i].1 { rows::ColumnType::Bigint } else { rows::ColumnType::Varchar });
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
static BIGQUERY_DDL: rows::RowsFunction = rows::RowsFunction {
    name: crate::functions::sanitize_bigquery::DDL,
    positional: &["registry"],
    named: || crate::functions::sanitize_bigquery::DDL_PARAMETERS.to_vec(),
    columns: &[("ddl", rows::ColumnType::Varchar)],
    build: |arguments, params, _| {
        let ddl = crate::functions::sanitize_bigquery::ddl(&arguments[0], params).map_err(|e| e.message)?;
        Ok(fixed(vec![vec![Cell::Text(Some(ddl))]]))
    },
    touches_files: false,
};

/// `sanitize_bigquery_registry_query(external_table, ...)`: one row per query.
static BIGQUERY_REGISTRY_QUERY: rows::RowsFunction = rows::RowsFunction {
    name: crate::functions::sanitize_bigquery::REGISTRY_QUERY,
    positional: &["external_table"],
    named: || crate::functions::sanitize_bigquery::REGISTRY_QUERY_PARAMETERS.to_vec(),
    columns: &[("kind", rows::ColumnType::Varchar), ("query", rows::ColumnType::Varchar)],
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
static PARSE_PARTITION_KEY: rows::RowsFunction = rows::RowsFunction {
    name: crate::functions::sanitize_bigquery::PARSE_KEY,
    positional: &["key"],
    named: || crate::functions::sanitize_bigquery::PARSE_KEY_PARAMETERS.to_vec(),
    columns: &[
        ("valid", rows::ColumnType::Boolean),
        ("partition_values", rows::ColumnType::Varchar),
        ("reason", rows::ColumnType::Varchar),
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
static REJECTS: rows::RowsFunction = rows::RowsFunction {
    name: "sanitize_rejects",
    positional: &[],
    named: || vec!["all_connections"],
    columns: &[
        ("scan_id", rows::ColumnType::Bigint),
        ("function", rows::ColumnType::Varchar),
        ("file", rows::ColumnType::Varchar),
        ("line", rows::ColumnType::Bigint),
        ("byte", rows::ColumnType::Bigint),
        ("record_index", rows::ColumnType::Bigint),
        ("path", rows::ColumnType::Varchar),
        ("source_key", rows::ColumnType::Varchar),
        ("kind", rows::ColumnType::Varchar),
        ("action", rows::ColumnType::Varchar),
        ("raw", rows::ColumnType::Varchar),
        ("raw_bytes", rows::ColumnType::Bigint),
        ("message", rows::ColumnType::Varchar),
        ("connection_id", rows::ColumnType::Bigint),
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
