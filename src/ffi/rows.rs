//! Table functions whose whole result is computed at bind (a plan, a list):
//! bind builds the rows, the scan hands them out a vector at a time.

use std::sync::Mutex;

use duckdb::ffi;

use super::guard::guard;
use super::handles::{
    register_table_function, BindInfo, Connection, DataChunk, FunctionInfo, InitInfo, TableCallbacks,
};
use super::types::LogicalType;
use crate::options::{ParamType, ParamValue};

/// One value of a result row.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Text(Option<String>),
    Int(Option<i64>),
}

/// The type of a result column.
#[derive(Clone, Copy, Debug)]
pub enum ColumnType {
    Varchar,
    Bigint,
}

/// Computes a rows function's result from its path argument and named parameters.
pub type BuildRows = fn(&str, &[(&str, ParamValue)]) -> Result<Vec<Vec<Cell>>, String>;

/// A rows function: its name, its one positional VARCHAR argument, its
/// named parameters (all ANY: the builder's own checks name them), its
/// columns, and the function computing its rows from the arguments.
pub struct RowsFunction {
    pub name: &'static str,
    pub named: &'static [&'static str],
    pub columns: &'static [(&'static str, ColumnType)],
    pub build: BuildRows,
}

struct RowsBind {
    rows: Vec<Vec<Cell>>,
    columns: usize,
}

struct RowsState {
    next: Mutex<usize>,
}

pub fn register(con: &Connection, def: &'static RowsFunction) -> Result<(), String> {
    let named: Vec<(&str, LogicalType)> =
        def.named.iter().map(|n| (*n, LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_ANY))).collect();
    register_table_function(
        con,
        def.name,
        &[LogicalType::varchar()],
        &named,
        Some(def),
        TableCallbacks { bind, init, scan, projection_pushdown: false },
    )
}

unsafe extern "C" fn bind(info: ffi::duckdb_bind_info) {
    // SAFETY: DuckDB passes the bind info of this call.
    let info = unsafe { BindInfo::from_raw(info) };
    guard(&info, || {
        // SAFETY: `register` gave every function using this callback its
        // `&'static RowsFunction` as extra info.
        let def = unsafe { info.extra_info::<RowsFunction>() }.ok_or("the function has no definition")?;
        if !info.client_info().external_access {
            return Err(format!(
                "{}: reading files is disabled by the setting enable_external_access = false",
                def.name
            ));
        }
        let ParamValue::Str(argument) = info.parameter(0, ParamType::Varchar) else {
            return Err(format!("{}: the first argument must be a path (VARCHAR), not NULL", def.name));
        };
        let mut params: Vec<(&str, ParamValue)> = Vec::new();
        for name in def.named {
            if let Some(v) = info.named_parameter(name, ParamType::Any) {
                params.push((name, v));
            }
        }
        let rows = (def.build)(&argument, &params)?;
        for (name, ty) in def.columns {
            let logical = match ty {
                ColumnType::Varchar => LogicalType::varchar(),
                ColumnType::Bigint => LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_BIGINT),
            };
            info.add_result_column(name, &logical);
        }
        info.set_bind_data(RowsBind { rows, columns: def.columns.len() });
        Ok(())
    });
}

unsafe extern "C" fn init(info: ffi::duckdb_init_info) {
    // SAFETY: DuckDB passes the init info of this call.
    let info = unsafe { InitInfo::from_raw(info) };
    guard(&info, || {
        info.set_init_data(RowsState { next: Mutex::new(0) });
        Ok(())
    });
}

unsafe extern "C" fn scan(info: ffi::duckdb_function_info, output: ffi::duckdb_data_chunk) {
    // SAFETY: DuckDB passes the function info and the output chunk of this call.
    let (info, output) = unsafe { (FunctionInfo::from_raw(info), DataChunk::from_raw(output)) };
    guard(&info, || {
        // SAFETY: this function's bind stored a RowsBind and its init a RowsState.
        let (bind, state) = unsafe { (info.bind_data::<RowsBind>(), info.init_data::<RowsState>()) };
        let mut next = state.next.lock().map_err(|_| "rows state poisoned".to_string())?;
        let start = *next;
        let n = bind.rows.len().saturating_sub(start).min(super::handles::vector_capacity());
        let rows = &bind.rows[start..start + n];
        for column in 0..bind.columns {
            let vector = output.vector(column);
            let mut valid = vec![true; n];
            for (r, row) in rows.iter().enumerate() {
                match &row[column] {
                    Cell::Text(Some(s)) => vector.set_string(r, s.as_bytes()),
                    Cell::Int(Some(v)) => vector.set_i64(r, *v),
                    Cell::Text(None) | Cell::Int(None) => valid[r] = false,
                }
            }
            vector.write_validity(&valid);
        }
        *next = start + n;
        output.set_size(n);
        Ok(())
    });
}
