//! The generic table-function glue shared by every `sanitize_*` function:
//! bind (options, probe, output columns), init (the scan state), scan.

use std::ffi::{c_void, CString};
use std::sync::{Arc, Mutex};

use duckdb::ffi;

use super::guard::{c_message, guard_bind, guard_init, guard_scan};
use super::params::{named, take_value};
use super::types::LogicalType;
use super::vectors::{fill_i64, fill_varchar, first_row_only, write_column};
use crate::functions::sanitize_probe::probe_row;
use crate::functions::{TableFunctionDef, TableKind, ETL_COLUMNS, PROBE_COLUMNS};
use crate::options::{ParamType, ParamValue, INPUT_FORMAT_SPEC, OPTION_SPECS};
use crate::pipeline::{plan, plan_scan, Chunk, ScanPlan, Scanner};

/// Output rows per call: DuckDB's vector size.
const VECTOR_SIZE: usize = 2048;

struct BindData {
    kind: TableKind,
    plan: Arc<ScanPlan>,
    connection_id: Option<u64>,
}

/// Global scan state. Scans run on one thread (DuckDB's default for table
/// functions), so the mutex is never contended; it makes the state `Sync`.
struct ScanState {
    inner: Mutex<ScanInner>,
}

struct ScanInner {
    scanner: Scanner,
    chunk: Chunk,
    /// The registry and drifts go on the first emitted row only.
    first_row_done: bool,
    done: bool,
}

pub fn register(con: ffi::duckdb_connection, def: &'static TableFunctionDef) -> Result<(), String> {
    unsafe {
        let mut tf = ffi::duckdb_create_table_function();
        let name = CString::new(def.name).map_err(|e| e.to_string())?;
        ffi::duckdb_table_function_set_name(tf, name.as_ptr());
        let varchar = LogicalType::varchar();
        ffi::duckdb_table_function_add_parameter(tf, varchar.0);
        let specs = OPTION_SPECS.iter().chain(def.format.is_none().then_some(&INPUT_FORMAT_SPEC));
        for spec in specs {
            let ty = param_logical_type(spec.ty);
            let n = CString::new(spec.name).map_err(|e| e.to_string())?;
            ffi::duckdb_table_function_add_named_parameter(tf, n.as_ptr(), ty.0);
        }
        // The definition is 'static: no destructor needed for the extra info.
        ffi::duckdb_table_function_set_extra_info(tf, def as *const TableFunctionDef as *mut c_void, None);
        ffi::duckdb_table_function_set_bind(tf, Some(bind));
        ffi::duckdb_table_function_set_init(tf, Some(init));
        ffi::duckdb_table_function_set_function(tf, Some(scan));
        let rc = ffi::duckdb_register_table_function(con, tf);
        ffi::duckdb_destroy_table_function(&mut tf);
        if rc != ffi::DuckDBSuccess {
            return Err(format!("registering table function {} failed", def.name));
        }
    }
    Ok(())
}

fn param_logical_type(ty: ParamType) -> LogicalType {
    match ty {
        ParamType::Varchar => LogicalType::varchar(),
        ParamType::Boolean => LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_BOOLEAN),
        ParamType::Integer => LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_INTEGER),
        ParamType::Bigint => LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_BIGINT),
        ParamType::VarcharList => LogicalType::list_of(&LogicalType::varchar()),
    }
}

unsafe extern "C" fn bind(info: ffi::duckdb_bind_info) {
    guard_bind(info, || unsafe { bind_inner(info) });
}

unsafe fn bind_inner(info: ffi::duckdb_bind_info) -> Result<(), String> {
    let def = unsafe { &*(ffi::duckdb_bind_get_extra_info(info) as *const TableFunctionDef) };
    let client = unsafe { super::context::client_info(info) };
    if !client.external_access {
        return Err(format!("{}: reading files is disabled by the setting enable_external_access = false", def.name));
    }
    let path = match unsafe { take_value(ffi::duckdb_bind_get_parameter(info, 0), ParamType::Varchar) } {
        ParamValue::Str(s) => s,
        _ => return Err(format!("{}: the path argument must not be NULL", def.name)),
    };
    let mut params: Vec<(&str, ParamValue)> = Vec::new();
    for spec in OPTION_SPECS.iter().chain(def.format.is_none().then_some(&INPUT_FORMAT_SPEC)) {
        if let Some(v) = unsafe { named(info, spec.name, spec.ty) } {
            params.push((spec.name, v));
        }
    }
    let options = crate::options::Options::parse(def.name, def.format, &params).map_err(|e| e.message)?;
    let plan = match def.kind {
        TableKind::Scan => plan_scan(def.name, &path, options),
        TableKind::Probe => plan(def.name, &path, options),
    }
    .map_err(|e| e.message)?;
    unsafe {
        match def.kind {
            TableKind::Scan => {
                for &(fi, vi) in &plan.schema.outputs {
                    let v = &plan.schema.families[fi].versions[vi];
                    add_column(info, &v.output_name, &LogicalType::for_node(&v.ty));
                }
                add_column(info, ETL_COLUMNS[0], &LogicalType::varchar());
                add_column(info, ETL_COLUMNS[1], &LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP_TZ));
                add_column(info, ETL_COLUMNS[2], &LogicalType::varchar());
                add_column(info, ETL_COLUMNS[3], &LogicalType::varchar());
            }
            TableKind::Probe => {
                for name in PROBE_COLUMNS {
                    add_column(info, name, &LogicalType::varchar());
                }
            }
        }
        if def.kind == TableKind::Scan {
            ffi::duckdb_bind_set_cardinality(
                info,
                plan.probe_stats.rows_emitted,
                plan.options.schema_mode == crate::options::SchemaMode::Additive,
            );
        }
        let data = Box::new(BindData { kind: def.kind, plan: Arc::new(plan), connection_id: client.connection_id });
        ffi::duckdb_bind_set_bind_data(info, Box::into_raw(data) as *mut c_void, Some(drop_box::<BindData>));
    }
    Ok(())
}

unsafe fn add_column(info: ffi::duckdb_bind_info, name: &str, ty: &LogicalType) {
    let n = c_message(name);
    unsafe { ffi::duckdb_bind_add_result_column(info, n.as_ptr(), ty.0) };
}

unsafe extern "C" fn drop_box<T>(ptr: *mut c_void) {
    if !ptr.is_null() {
        // A panic in a destructor must not unwind into DuckDB either.
        let _ = std::panic::catch_unwind(|| drop(unsafe { Box::from_raw(ptr as *mut T) }));
    }
}

unsafe extern "C" fn init(info: ffi::duckdb_init_info) {
    guard_init(info, || {
        let bind = unsafe { &*(ffi::duckdb_init_get_bind_data(info) as *const BindData) };
        let plan = Arc::clone(&bind.plan);
        let mut scanner = Scanner::new(plan);
        if bind.kind == TableKind::Scan {
            scanner.log_as(bind.connection_id);
        }
        let state = ScanState {
            inner: Mutex::new(ScanInner { chunk: Chunk::new(&bind.plan), scanner, first_row_done: false, done: false }),
        };
        unsafe {
            ffi::duckdb_init_set_init_data(
                info,
                Box::into_raw(Box::new(state)) as *mut c_void,
                Some(drop_box::<ScanState>),
            )
        };
        Ok(())
    });
}

unsafe extern "C" fn scan(info: ffi::duckdb_function_info, output: ffi::duckdb_data_chunk) {
    guard_scan(info, || unsafe { scan_inner(info, output) });
}

unsafe fn scan_inner(info: ffi::duckdb_function_info, output: ffi::duckdb_data_chunk) -> Result<(), String> {
    let bind = unsafe { &*(ffi::duckdb_function_get_bind_data(info) as *const BindData) };
    let state = unsafe { &*(ffi::duckdb_function_get_init_data(info) as *const ScanState) };
    let mut guard = state.inner.lock().map_err(|_| "scan state poisoned by an earlier failure".to_string())?;
    let inner = &mut *guard;
    if inner.done {
        unsafe { ffi::duckdb_data_chunk_set_size(output, 0) };
        return Ok(());
    }
    match bind.kind {
        TableKind::Probe => {
            let row = probe_row(&bind.plan);
            for (i, text) in row.iter().enumerate() {
                unsafe { fill_varchar(ffi::duckdb_data_chunk_get_vector(output, i as u64), text, 1) };
            }
            inner.done = true;
            unsafe { ffi::duckdb_data_chunk_set_size(output, 1) };
        }
        TableKind::Scan => {
            let rows = inner.scanner.next_chunk(&mut inner.chunk, VECTOR_SIZE).map_err(|e| e.message)?;
            if rows == 0 {
                inner.done = true;
                unsafe { ffi::duckdb_data_chunk_set_size(output, 0) };
                return Ok(());
            }
            let plan = &bind.plan;
            let n_data = inner.chunk.columns.len();
            unsafe {
                for (i, col) in inner.chunk.columns.iter().enumerate() {
                    write_column(ffi::duckdb_data_chunk_get_vector(output, i as u64), col, rows);
                }
                let vec = |k: usize| ffi::duckdb_data_chunk_get_vector(output, (n_data + k) as u64);
                fill_varchar(vec(0), &plan.display_files[inner.chunk.file_index], rows);
                fill_i64(vec(1), plan.started_at_micros, rows);
                let first = !inner.first_row_done;
                first_row_only(vec(2), first.then_some(plan.registry_json.as_str()), rows);
                first_row_only(vec(3), first.then_some(plan.drifts_json.as_str()), rows);
                inner.first_row_done = true;
                ffi::duckdb_data_chunk_set_size(output, rows as u64);
            }
        }
    }
    Ok(())
}

/// `sanitize_stats()`: the counters of this connection's recent scans, one
/// row per scan (docs/errors.md).
pub fn register_stats(con: ffi::duckdb_connection) -> Result<(), String> {
    unsafe {
        let mut tf = ffi::duckdb_create_table_function();
        let name = c_message("sanitize_stats");
        ffi::duckdb_table_function_set_name(tf, name.as_ptr());
        ffi::duckdb_table_function_set_bind(tf, Some(stats_bind));
        ffi::duckdb_table_function_set_init(tf, Some(stats_init));
        ffi::duckdb_table_function_set_function(tf, Some(stats_scan));
        let rc = ffi::duckdb_register_table_function(con, tf);
        ffi::duckdb_destroy_table_function(&mut tf);
        if rc != ffi::DuckDBSuccess {
            return Err("registering sanitize_stats failed".into());
        }
    }
    Ok(())
}

/// Columns of `sanitize_stats()`: (name, is_text); the rest are BIGINT
/// except `started_at` (TIMESTAMPTZ) and `finished` (BOOLEAN).
const STATS_COLUMNS: [&str; 16] = [
    "scan_id",
    "function",
    "path",
    "started_at",
    "finished",
    "rows_read",
    "rows_emitted",
    "rows_skipped",
    "rows_nulled",
    "values_nulled",
    "bytes_read",
    "files",
    "batches",
    "max_depth_seen",
    "values_flattened",
    "duplicate_keys",
];

struct StatsBind {
    connection_id: Option<u64>,
}

struct StatsState {
    rows: Mutex<Option<Vec<crate::pipeline::scan_log::ScanRecord>>>,
}

unsafe extern "C" fn stats_bind(info: ffi::duckdb_bind_info) {
    guard_bind(info, || unsafe {
        for (i, name) in STATS_COLUMNS.iter().enumerate() {
            let ty = match i {
                1 | 2 => LogicalType::varchar(),
                3 => LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP_TZ),
                4 => LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_BOOLEAN),
                _ => LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_BIGINT),
            };
            add_column(info, name, &ty);
        }
        let client = super::context::client_info(info);
        let data = Box::new(StatsBind { connection_id: client.connection_id });
        ffi::duckdb_bind_set_bind_data(info, Box::into_raw(data) as *mut c_void, Some(drop_box::<StatsBind>));
        Ok(())
    });
}

unsafe extern "C" fn stats_init(info: ffi::duckdb_init_info) {
    guard_init(info, || {
        let bind = unsafe { &*(ffi::duckdb_init_get_bind_data(info) as *const StatsBind) };
        let rows = crate::pipeline::scan_log::snapshot(bind.connection_id);
        let state = StatsState { rows: Mutex::new(Some(rows)) };
        unsafe {
            ffi::duckdb_init_set_init_data(
                info,
                Box::into_raw(Box::new(state)) as *mut c_void,
                Some(drop_box::<StatsState>),
            )
        };
        Ok(())
    });
}

unsafe extern "C" fn stats_scan(info: ffi::duckdb_function_info, output: ffi::duckdb_data_chunk) {
    guard_scan(info, || unsafe {
        let state = &*(ffi::duckdb_function_get_init_data(info) as *const StatsState);
        let rows = state.rows.lock().map_err(|_| "stats state poisoned".to_string())?.take().unwrap_or_default();
        // The log holds at most SCAN_LOG_CAPACITY (< 2048) scans: one chunk.
        let n = rows.len().min(VECTOR_SIZE);
        let vector = |k: usize| ffi::duckdb_data_chunk_get_vector(output, k as u64);
        for (row, r) in rows.iter().take(n).enumerate() {
            let s = &r.stats;
            let numbers = [
                s.rows_read,
                s.rows_emitted,
                s.rows_skipped,
                s.rows_nulled,
                s.values_nulled,
                s.bytes_read,
                s.files,
                s.batches,
                s.max_depth_seen,
                s.values_flattened,
                s.duplicate_keys,
            ];
            *(ffi::duckdb_vector_get_data(vector(0)) as *mut i64).add(row) = r.scan_id as i64;
            ffi::duckdb_vector_assign_string_element_len(
                vector(1),
                row as u64,
                r.function.as_ptr() as *const _,
                r.function.len() as u64,
            );
            ffi::duckdb_vector_assign_string_element_len(
                vector(2),
                row as u64,
                r.path.as_ptr() as *const _,
                r.path.len() as u64,
            );
            *(ffi::duckdb_vector_get_data(vector(3)) as *mut i64).add(row) = r.started_at_micros;
            *(ffi::duckdb_vector_get_data(vector(4)) as *mut bool).add(row) = r.finished;
            for (k, v) in numbers.iter().enumerate() {
                *(ffi::duckdb_vector_get_data(vector(5 + k)) as *mut i64).add(row) = *v as i64;
            }
        }
        ffi::duckdb_data_chunk_set_size(output, n as u64);
        Ok(())
    });
}

/// `sanitize_debug_panic(where)`: panics in bind (`'bind'`) or in the scan
/// (`'scan'`). Registered only when SCHEMA_SANITIZER_PANIC_PROBE is set at
/// LOAD time, for the tests that prove panics are contained.
pub fn register_panic_probe(con: ffi::duckdb_connection) -> Result<(), String> {
    unsafe {
        let mut tf = ffi::duckdb_create_table_function();
        let name = c_message("sanitize_debug_panic");
        ffi::duckdb_table_function_set_name(tf, name.as_ptr());
        ffi::duckdb_table_function_add_parameter(tf, LogicalType::varchar().0);
        ffi::duckdb_table_function_set_bind(tf, Some(panic_bind));
        ffi::duckdb_table_function_set_init(tf, Some(noop_init));
        ffi::duckdb_table_function_set_function(tf, Some(panic_scan));
        let rc = ffi::duckdb_register_table_function(con, tf);
        ffi::duckdb_destroy_table_function(&mut tf);
        if rc != ffi::DuckDBSuccess {
            return Err("registering sanitize_debug_panic failed".into());
        }
    }
    Ok(())
}

unsafe extern "C" fn panic_bind(info: ffi::duckdb_bind_info) {
    guard_bind(info, || {
        let at = unsafe { take_value(ffi::duckdb_bind_get_parameter(info, 0), ParamType::Varchar) };
        if at == ParamValue::Str("bind".into()) {
            panic!("deliberate panic in bind");
        }
        unsafe { add_column(info, "x", &LogicalType::varchar()) };
        Ok(())
    });
}

unsafe extern "C" fn noop_init(_info: ffi::duckdb_init_info) {}

unsafe extern "C" fn panic_scan(info: ffi::duckdb_function_info, _output: ffi::duckdb_data_chunk) {
    guard_scan(info, || panic!("deliberate panic in scan"));
}
