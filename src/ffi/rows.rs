//! Table functions whose rows the engine computes (functions/): a plan or
//! a list made whole at bind, or a run that makes its rows as it goes
//! (`sanitize_pipeline`). Bind parses the arguments into a `RowSource`; the
//! scan asks it for the next rows.

use std::sync::Mutex;

use duckdb::ffi;

use super::guard::guard;
use super::handles::{
    register_table_function, BindInfo, Connection, DataChunk, FunctionInfo, InitInfo, TableCallbacks,
};
use super::types::LogicalType;
use crate::functions::{Cell, RowSource, RunContext};
use crate::options::{ParamType, ParamValue};

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
    /// Reads or writes files: refused without `enable_external_access`.
    pub touches_files: bool,
}

struct RowsBind {
    /// Taken by the one init of this bind.
    source: Mutex<Option<Box<dyn RowSource>>>,
    columns: usize,
}

struct RowsState {
    source: Mutex<Option<Box<dyn RowSource>>>,
}

pub fn register(con: &Connection, def: &'static RowsFunction) -> Result<(), String> {
    let named: Vec<(&str, LogicalType)> =
        (def.named)().into_iter().map(|n| (n, LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_ANY))).collect();
    let positional: Vec<LogicalType> = def.positional.iter().map(|_| LogicalType::varchar()).collect();
    register_table_function(
        con,
        def.name,
        &positional,
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
        let client = info.client_info();
        if def.touches_files && !client.external_access {
            return Err(format!(
                "{}: reading files is disabled by the setting enable_external_access = false",
                def.name
            ));
        }
        let mut arguments = Vec::with_capacity(def.positional.len());
        for (i, name) in def.positional.iter().enumerate() {
            let ParamValue::Str(argument) = info.parameter(i as u64, ParamType::Varchar) else {
                return Err(format!("{}: the argument {name} must be a VARCHAR, not NULL", def.name));
            };
            arguments.push(argument);
        }
        let mut params: Vec<(&str, ParamValue)> = Vec::new();
        for name in (def.named)() {
            if let Some(v) = info.named_parameter(name, ParamType::Any) {
                params.push((name, v));
            }
        }
        let context = info.run_context(&client);
        let source = (def.build)(&arguments, &params, &context)?;
        for (name, ty) in def.columns {
            let logical = match ty {
                ColumnType::Varchar => LogicalType::varchar(),
                ColumnType::Bigint => LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_BIGINT),
                ColumnType::Boolean => LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_BOOLEAN),
            };
            info.add_result_column(name, &logical);
        }
        info.set_bind_data(RowsBind { source: Mutex::new(Some(source)), columns: def.columns.len() });
        Ok(())
    });
}

/// Declares `columns` and hands `source` to this bind's scan: the end of
/// the bind of a rows function that reads its arguments itself
/// (ffi/ingest.rs: a path or a list of paths first).
pub(super) fn set_source(info: &BindInfo, columns: &[(&str, ColumnType)], source: Box<dyn RowSource>) {
    for (name, ty) in columns {
        let logical = match ty {
            ColumnType::Varchar => LogicalType::varchar(),
            ColumnType::Bigint => LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_BIGINT),
            ColumnType::Boolean => LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_BOOLEAN),
        };
        info.add_result_column(name, &logical);
    }
    info.set_bind_data(RowsBind { source: Mutex::new(Some(source)), columns: columns.len() });
}

pub(super) unsafe extern "C" fn init(info: ffi::duckdb_init_info) {
    // SAFETY: DuckDB passes the init info of this call.
    let info = unsafe { InitInfo::from_raw(info) };
    guard(&info, || {
        // SAFETY: this function's bind stored a RowsBind.
        let bind = unsafe { info.bind_data::<RowsBind>() };
        // A bind is scanned once; a second init (a plan that scans the
        // function twice) finds the rows taken and returns none.
        let source = bind.source.lock().map_err(|_| "rows state poisoned".to_string())?.take();
        info.set_init_data(RowsState { source: Mutex::new(source) });
        Ok(())
    });
}

pub(super) unsafe extern "C" fn scan(info: ffi::duckdb_function_info, output: ffi::duckdb_data_chunk) {
    // SAFETY: DuckDB passes the function info and the output chunk of this call.
    let (info, output) = unsafe { (FunctionInfo::from_raw(info), DataChunk::from_raw(output)) };
    guard(&info, || {
        // SAFETY: this function's bind stored a RowsBind and its init a RowsState.
        let (bind, state) = unsafe { (info.bind_data::<RowsBind>(), info.init_data::<RowsState>()) };
        let mut source = state.source.lock().map_err(|_| "rows state poisoned".to_string())?;
        let rows = match source.as_mut() {
            Some(source) => source.next_rows(super::handles::vector_capacity()).map_err(|e| e.message)?,
            None => Vec::new(),
        };
        let n = rows.len();
        for column in 0..bind.columns {
            let vector = output.vector(column);
            let mut valid = vec![true; n];
            for (r, row) in rows.iter().enumerate() {
                match &row[column] {
                    Cell::Text(Some(s)) => vector.set_string(r, s),
                    Cell::Int(Some(v)) => vector.set_i64(r, *v),
                    Cell::Bool(Some(b)) => vector.set_bool(r, *b),
                    Cell::Text(None) | Cell::Int(None) | Cell::Bool(None) => valid[r] = false,
                }
            }
            vector.write_validity(&valid);
        }
        output.set_size(n);
        Ok(())
    });
}
