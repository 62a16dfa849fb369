//! `sanitize_ingest(source, output_prefix, ...)` and
//! `sanitize_ingest_log(checkpoint)` (functions/sanitize_ingest). The
//! first takes its source as the scans take their path, a VARCHAR or a
//! VARCHAR[], so it has a bind of its own; rows come as for every rows
//! function (ffi/rows.rs).

use duckdb::ffi;

use super::guard::guard;
use super::handles::{register_table_function, BindInfo, Connection, TableCallbacks};
use super::rows;
use super::types::LogicalType;
use crate::functions::rows::{columns, ColumnType};
use crate::functions::sanitize_ingest::{self as ingest, IngestRun};
use crate::options::{ParamType, ParamValue};

const INGEST_COLUMNS: [(&str, ColumnType); ingest::COLUMNS.len()] = columns(ingest::COLUMNS);

pub fn register(con: &Connection) -> Result<(), String> {
    let named: Vec<(&str, LogicalType)> = ingest::named_parameters()
        .into_iter()
        .map(|n| (n, super::table::param_type(crate::options::row_parameter_type(n))))
        .collect();
    // The source is a VARCHAR or a VARCHAR[]: ANY takes both, and bind
    // tells them apart (as the scans' path).
    register_table_function::<()>(
        con,
        ingest::FUNCTION,
        &[LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_ANY), LogicalType::varchar()],
        &named,
        None,
        TableCallbacks { bind, init: rows::init, scan: rows::scan, local_init: None, projection_pushdown: false },
    )?;
    Ok(())
}

unsafe extern "C" fn bind(info: ffi::duckdb_bind_info) {
    // SAFETY: DuckDB passes the bind info of this call.
    let info = unsafe { BindInfo::from_raw(info) };
    guard(&info, || bind_ingest(&info));
}

fn bind_ingest(info: &BindInfo) -> Result<(), String> {
    let function = ingest::FUNCTION;
    let client = info.client_info();
    let sources = info.paths_argument().map_err(|given| {
        format!("{function}: the source must be a path (VARCHAR) or a list of paths (VARCHAR[]), not {given}")
    })?;
    let ParamValue::Str(output_prefix) = info.parameter(1, ParamType::Varchar) else {
        return Err(format!("{function}: the argument output_prefix must be a VARCHAR, not NULL"));
    };
    let mut params: Vec<(&str, ParamValue)> = Vec::new();
    for name in ingest::named_parameters() {
        if let Some(v) = info.named_parameter(name, ParamType::Any) {
            params.push((name, v));
        }
    }
    let context = info.run_context(&client);
    let sources = client.locate(sources);
    let output_prefix = client.locate(vec![output_prefix]).remove(0);
    let mut paths = sources.clone();
    paths.push(output_prefix.clone());
    // Remote sources are listed and read outside DuckDB's file system: its
    // setting is honoured in the reach check, as for the scans' remote paths.
    let reach = rows::Reach::of(function, &paths, &params, &context.opener, client.external_access);
    reach.check()?;
    let run = IngestRun::start(sources, &output_prefix, &params, &context).map_err(|e| e.message)?;
    rows::set_source(info, &INGEST_COLUMNS, Box::new(run), Some(reach));
    Ok(())
}
