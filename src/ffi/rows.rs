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
use crate::functions::rows::{ColumnType, RowsFunction};
use crate::functions::{Cell, RowSource};
use crate::options::{ParamType, ParamValue};

struct RowsBind {
    /// Taken by the one init of this bind.
    source: Mutex<Option<Box<dyn RowSource>>>,
    columns: usize,
    /// Checked again when the run starts: a lockdown set after the bind (a
    /// prepared statement) applies.
    reach: Option<Reach>,
}

/// The paths a rows function touches, and the file system that answers
/// whether it may.
pub(super) struct Reach {
    function: &'static str,
    paths: Vec<String>,
    opener: crate::formats::byte_source::FileOpener,
    /// `enable_external_access` at bind, for the object-store paths
    /// DuckDB's file system does not see.
    external_access: bool,
}

impl Reach {
    /// The paths of `arguments` (every positional argument of a function
    /// that touches files is a path) and of the named path parameters.
    pub(super) fn of(
        function: &'static str,
        arguments: &[String],
        params: &[(&str, ParamValue)],
        opener: &crate::formats::byte_source::FileOpener,
        external_access: bool,
    ) -> Reach {
        let mut paths = arguments.to_vec();
        for (name, value) in params {
            if let (true, ParamValue::Str(p)) = (PATH_PARAMETERS.contains(name), value) {
                paths.push(p.clone());
            }
        }
        Reach { function, paths, opener: opener.clone(), external_access }
    }

    /// Refuses the first path DuckDB's file system refuses. Object-store
    /// paths are not DuckDB's to check: they are refused when external
    /// access was off at bind (`check_remote_access`), the named path
    /// parameters' too.
    pub(super) fn check(&self) -> Result<(), String> {
        super::table::check_remote_access(self.function, &self.paths, self.external_access)?;
        for path in &self.paths {
            if crate::source::parse_remote(path).is_some() {
                continue;
            }
            if crate::source::is_remote_scheme(path) && crate::source::file_uri_path(path).is_none() {
                return Err(format!(
                    "{}: \"{}\" is on a file system only DuckDB serves (a registered one), and an extension cannot list one or write there: use local paths or object-store URIs",
                    self.function,
                    crate::source::display_uri(path)
                ));
            }
            let local = crate::source::file_uri_path(path).unwrap_or(path);
            if let Err(e) = self.opener.check_reach(local) {
                return Err(format!(
                    "{}: \"{}\" is refused by DuckDB's file system: {e}",
                    self.function,
                    crate::source::display_uri(path)
                ));
            }
        }
        Ok(())
    }
}

/// Named parameters that hold a path a function reads or writes.
const PATH_PARAMETERS: [&str; 2] = ["output_prefix", "checkpoint"];

struct RowsState {
    source: Mutex<Option<Box<dyn RowSource>>>,
}

pub fn register(con: &Connection, def: &'static RowsFunction) -> Result<(), String> {
    // Each with its own SQL type (the scan options' and options::ROW_PARAMETERS').
    let named: Vec<(&str, LogicalType)> = (def.named)()
        .into_iter()
        .map(|n| (n, super::table::param_type(crate::options::row_parameter_type(n))))
        .collect();
    let positional: Vec<LogicalType> = def.positional.iter().map(|_| LogicalType::varchar()).collect();
    register_table_function(
        con,
        def.name,
        &positional,
        &named,
        Some(def),
        TableCallbacks { bind, init, scan, local_init: None, projection_pushdown: false },
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
        if def.touches_files {
            arguments = client.locate(arguments);
        }
        let reach = if def.touches_files {
            let reach = Reach::of(def.name, &arguments, &params, &context.opener, client.external_access);
            reach.check()?;
            Some(reach)
        } else {
            None
        };
        let source = (def.build)(&arguments, &params, &context)?;
        for (name, ty) in def.columns {
            let logical = match ty {
                ColumnType::Varchar => LogicalType::varchar(),
                ColumnType::Bigint => LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_BIGINT),
                ColumnType::Boolean => LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_BOOLEAN),
            };
            info.add_result_column(name, &logical);
        }
        info.set_bind_data(RowsBind { source: Mutex::new(Some(source)), columns: def.columns.len(), reach });
        Ok(())
    });
}

/// Declares `columns` and hands `source` to this bind's scan: the end of
/// the bind of a rows function that reads its arguments itself
/// (ffi/ingest.rs: a path or a list of paths first).
pub(super) fn set_source(
    info: &BindInfo,
    columns: &[(&str, ColumnType)],
    source: Box<dyn RowSource>,
    reach: Option<Reach>,
) {
    for (name, ty) in columns {
        let logical = match ty {
            ColumnType::Varchar => LogicalType::varchar(),
            ColumnType::Bigint => LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_BIGINT),
            ColumnType::Boolean => LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_BOOLEAN),
        };
        info.add_result_column(name, &logical);
    }
    info.set_bind_data(RowsBind { source: Mutex::new(Some(source)), columns: columns.len(), reach });
}

pub(super) unsafe extern "C" fn init(info: ffi::duckdb_init_info) {
    // SAFETY: DuckDB passes the init info of this call.
    let info = unsafe { InitInfo::from_raw(info) };
    guard(&info, || {
        // SAFETY: this function's bind stored a RowsBind.
        let bind = unsafe { info.bind_data::<RowsBind>() };
        if let Some(reach) = &bind.reach {
            reach.check()?;
        }
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
