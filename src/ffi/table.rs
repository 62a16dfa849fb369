//! The generic table-function glue shared by every `sanitize_*` function:
//! bind (options, probe, output columns), init (the scan state), scan.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock, TryLockError};

use duckdb::ffi;

use super::guard::guard;
use super::handles::{
    register_table_function, BindInfo, Connection, DataChunk, FunctionInfo, InitInfo, TableCallbacks,
};
use super::types::LogicalType;
use crate::functions::sanitize_probe::probe_row;
use crate::functions::{TableFunctionDef, TableKind, PROBE_COLUMNS};
use crate::options::{ParamType, ParamValue, INPUT_FORMAT_SPEC, OPTION_SPECS};
use crate::registry::naming::EtlColumn;
use crate::scan::ColumnSource;
use crate::scan::{cached_plan, Chunk, ScanPlan, Scanner, StepOnce};

/// Output rows per call: DuckDB's vector size.
const VECTOR_SIZE: usize = 2048;

struct BindData {
    kind: TableKind,
    plan: Arc<ScanPlan>,
    session: Option<crate::scan::scan_log::Session>,
    /// `preserve_insertion_order` was off at bind: DuckDB's threads may
    /// take the chunks as they come.
    any_order: bool,
}

/// Global scan state, shared by the DuckDB threads that call the scan.
/// The scanner (whose helpers decode and route in parallel) hands out one
/// routed chunk per call under the mutex; writing it into DuckDB's vectors
/// happens outside it, on the calling thread, so where the plan above runs
/// in parallel (an aggregate, a `COPY` with `preserve_insertion_order =
/// false`) so do the writing and DuckDB's sink.
struct ScanState {
    inner: Mutex<ScanInner>,
    /// The ranges' work, for a DuckDB thread that finds another taking a
    /// chunk ([`lock_scan`]); set once the scanner opened its reader.
    stepper: OnceLock<Arc<dyn StepOnce>>,
    /// The result column of each output vector (projection pushdown).
    projection: Vec<usize>,
    /// Where each output vector's values come from (a scan's; `None`:
    /// count(*)'s row id, nothing to write).
    sources: Vec<Option<ColumnSource>>,
}

struct ScanInner {
    scanner: Scanner,
    /// The registry and drifts go on the first emitted row only.
    first_row_done: bool,
    done: bool,
}

/// One DuckDB thread's state: the chunk it swaps with the scanner's next
/// routed one (the old one goes back to a decoder to be reused). Only its
/// thread touches it; the mutex makes it `Sync` and is never contended.
struct ThreadState {
    chunk: Mutex<Chunk>,
    /// This thread has taken a chunk (and is counted in `sanitize_stats()`'s
    /// `duckdb_threads`).
    counted: std::sync::atomic::AtomicBool,
}

/// Registers one `sanitize_*` function: the path, and every option as a
/// named parameter (plus `input_format` for `sanitize`/`sanitize_probe`).
pub fn register(con: &Connection, def: &'static TableFunctionDef) -> Result<(), String> {
    let named: Vec<(&str, LogicalType)> = OPTION_SPECS
        .iter()
        .chain(def.format.is_none().then_some(&INPUT_FORMAT_SPEC))
        // Each option's own type: DuckDB casts what is given to it (a value
        // it cannot cast is DuckDB's error) and lists it in
        // duckdb_functions(); ANY where an option takes several types.
        .map(|spec| (spec.name, param_type(spec.ty)))
        .collect();
    // The path argument is a VARCHAR or a VARCHAR[]: ANY takes both, and
    // bind tells them apart.
    register_table_function(
        con,
        def.name,
        &[LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_ANY)],
        &named,
        Some(def),
        TableCallbacks { bind, init, scan, local_init: Some(local_init), projection_pushdown: true },
    )
}

unsafe extern "C" fn bind(info: ffi::duckdb_bind_info) {
    // SAFETY: DuckDB passes the bind info of this call.
    let info = unsafe { BindInfo::from_raw(info) };
    guard(&info, || {
        // SAFETY: `register` gave every function using this callback its
        // `&'static TableFunctionDef` as extra info.
        let def = unsafe { info.extra_info::<TableFunctionDef>() }.ok_or("the function has no definition")?;
        bind_scan(&info, def)
    });
}

fn bind_scan(info: &BindInfo, def: &'static TableFunctionDef) -> Result<(), String> {
    let client = info.client_info();
    let paths = info.paths_argument().map_err(|given| {
        format!("{}: the path argument must be a path (VARCHAR) or a list of paths (VARCHAR[]), not {given}", def.name)
    })?;
    let paths = client.locate(paths);
    // Local files are opened through DuckDB's file system, which applies
    // the database's rules itself; remote objects go through object_store,
    // which must honour them here.
    check_remote_access(def.name, &paths, client.external_access)?;
    let mut params: Vec<(&str, ParamValue)> = Vec::new();
    for spec in OPTION_SPECS.iter().chain(def.format.is_none().then_some(&INPUT_FORMAT_SPEC)) {
        if let Some(v) = info.named_parameter(spec.name, ParamType::Any) {
            params.push((spec.name, v));
        }
    }
    let options = crate::options::Options::parse(def.name, def.format, &params).map_err(|e| e.message)?;
    // DuckDB's `threads` setting bounds the threads of a probe or scan,
    // DuckDB's own thread included (scan/ordered.rs); its file system
    // opens every file.
    let run = crate::scan::RunSettings {
        threads: client.thread_budget(),
        opener: info.file_system().map(|f| crate::formats::byte_source::FileOpener(Arc::new(f))).unwrap_or_default(),
        drift_ends_scan: false,
    };
    // A bind of the same call with unchanged files reuses the plan (scan/plan_cache.rs).
    let for_scan = def.kind == TableKind::Scan;
    let plan = cached_plan(def.name, &paths, options, run, for_scan, client.session).map_err(|e| e.message)?;
    match def.kind {
        TableKind::Scan => {
            for column in plan.result_columns() {
                info.add_result_column(column.name, &LogicalType::for_node(&column.ty));
            }
            info.set_cardinality(
                plan.probe_stats.rows_emitted,
                plan.options.schema_mode == crate::options::SchemaMode::Additive,
            );
        }
        TableKind::Probe => {
            for name in PROBE_COLUMNS {
                info.add_result_column(name, &LogicalType::varchar());
            }
        }
    }
    info.set_bind_data(BindData {
        kind: def.kind,
        plan: Arc::new(plan),
        session: client.session,
        any_order: !client.keeps_insertion_order,
    });
    Ok(())
}

/// The DuckDB type a parameter is registered with.
pub(super) fn param_type(ty: ParamType) -> LogicalType {
    match ty {
        ParamType::Varchar => LogicalType::varchar(),
        ParamType::Boolean => LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_BOOLEAN),
        ParamType::Integer => LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_INTEGER),
        ParamType::Bigint => LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_BIGINT),
        ParamType::VarcharList => LogicalType::list_of(&LogicalType::varchar()),
        ParamType::Any => LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_ANY),
    }
}

/// Remote paths are read by object_store, outside DuckDB's file system: they
/// are refused when `enable_external_access` is off, as DuckDB refuses them.
/// (`disabled_filesystems` cannot be honoured for them: DuckDB reports the
/// setting as empty to a client, and its file system has no HTTP or S3 file
/// system to refuse without httpfs; docs/remote.md.)
pub(crate) fn check_remote_access(function: &str, paths: &[String], external_access: bool) -> Result<(), String> {
    if external_access {
        return Ok(());
    }
    match paths.iter().find(|p| crate::source::parse_remote(p).is_some()) {
        Some(path) => Err(format!(
            "{function}: reading \"{}\" is refused: remote files need enable_external_access = true",
            crate::source::display_uri(path)
        )),
        None => Ok(()),
    }
}

unsafe extern "C" fn init(info: ffi::duckdb_init_info) {
    // SAFETY: DuckDB passes the init info of this call.
    let info = unsafe { InitInfo::from_raw(info) };
    guard(&info, || {
        // SAFETY: this function's bind stored a BindData.
        let bind = unsafe { info.bind_data::<BindData>() };
        let plan = Arc::clone(&bind.plan);
        if bind.kind == TableKind::Probe {
            // The probe's answer was made at bind; a statement prepared
            // before a lockdown must still be refused when it runs, as the
            // readers' are: each file is opened again (and closed) here.
            for (file, name) in plan.files.iter().zip(&plan.display_files) {
                plan.run
                    .opener
                    .open(file)
                    .map_err(|e| format!("{}: cannot open file \"{name}\": {e}", plan.function))?;
            }
        }
        // An index past the result columns (count(*)'s row id) is none.
        let projection: Vec<usize> =
            info.projection().into_iter().map(|i| usize::try_from(i).unwrap_or(usize::MAX)).collect();
        // Only the data columns a query uses are routed and written.
        let data_outputs = plan.schema.outputs.len();
        let mut wanted = vec![false; data_outputs];
        for &p in &projection {
            if p < data_outputs {
                wanted[p] = true;
            }
        }
        let sources = match bind.kind {
            TableKind::Scan => {
                let columns = plan.result_columns();
                projection.iter().map(|&p| columns.get(p).map(|c| c.source)).collect()
            }
            TableKind::Probe => Vec::new(),
        };
        let mut scanner = Scanner::new(plan);
        scanner.project(wanted);
        if bind.kind == TableKind::Scan {
            scanner.log_as(bind.session);
        }
        if bind.kind == TableKind::Scan && bind.any_order {
            // The user let go of insertion order: DuckDB may call from
            // several threads where the plan above is parallel (a COPY's
            // sink among them), and chunks interleave. With order kept, one
            // thread calls, so every consumer (an order-dependent aggregate
            // too) sees the input's order: the C API has no batch index
            // that would let DuckDB restore it (docs/architecture.md).
            info.set_max_threads(bind.plan.run.threads);
        }
        info.set_init_data(ScanState {
            inner: Mutex::new(ScanInner { scanner, first_row_done: false, done: false }),
            stepper: OnceLock::new(),
            sources,
            projection,
        });
        Ok(())
    });
}

unsafe extern "C" fn local_init(info: ffi::duckdb_init_info) {
    // SAFETY: DuckDB passes the init info of this thread's local init.
    let info = unsafe { InitInfo::from_raw(info) };
    guard(&info, || {
        // SAFETY: this function's bind stored a BindData.
        let bind = unsafe { info.bind_data::<BindData>() };
        let chunk = Mutex::new(Chunk::new(&bind.plan));
        info.set_init_data(ThreadState { chunk, counted: std::sync::atomic::AtomicBool::new(false) });
        Ok(())
    });
}

unsafe extern "C" fn scan(info: ffi::duckdb_function_info, output: ffi::duckdb_data_chunk) {
    // SAFETY: DuckDB passes the function info and the output chunk of this call.
    let (info, output) = unsafe { (FunctionInfo::from_raw(info), DataChunk::from_raw(output)) };
    guard(&info, || {
        // SAFETY: this function's bind stored a BindData, its init a
        // ScanState and its local init this thread's ThreadState.
        let (bind, state, thread) = unsafe {
            (info.bind_data::<BindData>(), info.init_data::<ScanState>(), info.local_init_data::<ThreadState>())
        };
        scan_chunk(bind, state, thread, &output)
    });
}

fn scan_chunk(bind: &BindData, state: &ScanState, thread: &ThreadState, output: &DataChunk) -> Result<(), String> {
    let mut chunk = thread.chunk.lock().map_err(|_| "scan state poisoned by an earlier failure".to_string())?;
    let (rows, first) = {
        let mut guard = lock_scan(state)?;
        let inner = &mut *guard;
        if inner.done {
            output.set_size(0);
            return Ok(());
        }
        if bind.kind == TableKind::Probe {
            inner.done = true;
            drop(guard);
            let row = probe_row(&bind.plan);
            for (j, &p) in state.projection.iter().enumerate() {
                if let Some(text) = row.get(p) {
                    output.vector(j).fill_varchar(text, 1);
                }
            }
            output.set_size(1);
            return Ok(());
        }
        // A failed scan ends for every thread.
        let rows = inner.scanner.next_chunk(&mut chunk).inspect_err(|_| inner.done = true).map_err(|e| e.message)?;
        if bind.any_order && state.stepper.get().is_none() {
            if let Some(stepper) = inner.scanner.stepper() {
                let _ = state.stepper.set(stepper);
            }
        }
        if rows > 0 && !thread.counted.swap(true, std::sync::atomic::Ordering::Relaxed) {
            if let Some(id) = inner.scanner.scan_id() {
                crate::scan::scan_log::add_duckdb_thread(id);
            }
        }
        inner.done = rows == 0;
        let first = rows > 0 && !inner.first_row_done;
        inner.first_row_done |= first;
        (rows, first)
    };
    if rows == 0 {
        output.set_size(0);
        return Ok(());
    }
    let plan = &bind.plan;
    for (j, source) in state.sources.iter().enumerate() {
        let v = output.vector(j);
        match source {
            Some(ColumnSource::Chunk(i)) => v.write_column(&chunk.columns[*i], rows)?,
            Some(ColumnSource::Etl(EtlColumn::SourceFile)) => match chunk.file_runs() {
                [(file, _)] => v.constant_varchar(&plan.display_files[*file]),
                // Every row written: a row left out would be an unset string.
                runs if runs.iter().map(|r| r.1).sum::<usize>() == rows => {
                    v.varchar_runs(runs.iter().map(|&(file, n)| (plan.display_files[file].as_str(), n)))
                }
                _ => {
                    return Err(
                        "internal error (please report): a chunk whose file runs do not cover its rows".to_string()
                    )
                }
            },
            Some(ColumnSource::Etl(EtlColumn::IngestionTimestamp)) => v.constant_timestamp_tz(plan.started_at_micros),
            Some(ColumnSource::Etl(EtlColumn::SchemaRegistry)) => {
                v.first_row_only(first.then_some(plan.registry_json.as_str()), rows)
            }
            Some(ColumnSource::Etl(EtlColumn::SchemaDrifts)) => {
                v.first_row_only(first.then_some(plan.drifts_json.as_str()), rows)
            }
            None => {}
        }
    }
    output.set_size(rows);
    Ok(())
}

/// The scan's state, for the thread that takes the next chunk. With
/// insertion order off DuckDB calls the scan from all its threads, and the
/// one taking a chunk may step a range itself or wait for the head range's
/// next piece; a thread that finds it so steps the ranges' work meanwhile
/// (`StepOnce`), as a helper would, instead of sleeping while a core may
/// idle, and sleeps on the lock only when there is nothing to step.
fn lock_scan(state: &ScanState) -> Result<MutexGuard<'_, ScanInner>, String> {
    let poisoned = |_| "scan state poisoned by an earlier failure".to_string();
    loop {
        match state.inner.try_lock() {
            Ok(guard) => return Ok(guard),
            Err(TryLockError::Poisoned(e)) => return Err(poisoned(e)),
            Err(TryLockError::WouldBlock) => {
                if !state.stepper.get().is_some_and(|s| s.step_once()) {
                    return state.inner.lock().map_err(poisoned);
                }
            }
        }
    }
}

/// `sanitize_stats()`: the counters of this connection's recent scans, one
/// row per scan (docs/errors.md).
pub fn register_stats(con: &Connection) -> Result<(), String> {
    register_table_function::<()>(
        con,
        "sanitize_stats",
        &[],
        &[("all_connections", LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_BOOLEAN))],
        None,
        TableCallbacks {
            bind: stats_bind,
            init: stats_init,
            scan: stats_scan,
            local_init: None,
            projection_pushdown: false,
        },
    )
}

/// Columns of `sanitize_stats()`: `function`, `path` and `file_system` are VARCHAR,
/// `started_at` TIMESTAMPTZ, `finished` BOOLEAN, the rest BIGINT.
const STATS_COLUMNS: [&str; 25] = [
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
    "list_nulls_dropped",
    "values_rescued",
    "rejects_recorded",
    "rejects_dropped",
    "connection_id",
    "file_system",
    "duckdb_threads",
    "rows_columnar",
    "rows_direct",
];

struct StatsBind {
    scope: crate::scan::scan_log::Scope,
}

struct StatsState {
    rows: Mutex<Option<Vec<crate::scan::scan_log::ScanRecord>>>,
}

unsafe extern "C" fn stats_bind(info: ffi::duckdb_bind_info) {
    // SAFETY: DuckDB passes the bind info of this call.
    let info = unsafe { BindInfo::from_raw(info) };
    guard(&info, || {
        for (i, name) in STATS_COLUMNS.iter().enumerate() {
            let ty = match i {
                1 | 2 | 21 => LogicalType::varchar(),
                3 => LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP_TZ),
                4 => LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_BOOLEAN),
                _ => LogicalType::of(ffi::DUCKDB_TYPE_DUCKDB_TYPE_BIGINT),
            };
            info.add_result_column(name, &ty);
        }
        // `all_connections := true`: every connection's scans (of this
        // database), so a second connection can watch a long run (a
        // sanitize_pipeline) of another.
        let all = info.named_parameter("all_connections", ParamType::Any) == Some(ParamValue::Bool(true));
        let scope = crate::scan::scan_log::Scope::of(info.client_info().session, all);
        info.set_bind_data(StatsBind { scope });
        Ok(())
    });
}

unsafe extern "C" fn stats_init(info: ffi::duckdb_init_info) {
    // SAFETY: DuckDB passes the init info of this call.
    let info = unsafe { InitInfo::from_raw(info) };
    guard(&info, || {
        // SAFETY: stats_bind stored a StatsBind.
        let bind = unsafe { info.bind_data::<StatsBind>() };
        let rows = crate::scan::scan_log::snapshot(bind.scope);
        info.set_init_data(StatsState { rows: Mutex::new(Some(rows)) });
        Ok(())
    });
}

unsafe extern "C" fn stats_scan(info: ffi::duckdb_function_info, output: ffi::duckdb_data_chunk) {
    // SAFETY: DuckDB passes the function info and the output chunk of this call.
    let (info, output) = unsafe { (FunctionInfo::from_raw(info), DataChunk::from_raw(output)) };
    guard(&info, || {
        // SAFETY: stats_init stored a StatsState.
        let state = unsafe { info.init_data::<StatsState>() };
        let rows = state.rows.lock().map_err(|_| "stats state poisoned".to_string())?.take().unwrap_or_default();
        // The log holds at most SCAN_LOG_CAPACITY (< 2048) scans: one chunk.
        let n = rows.len().min(VECTOR_SIZE);
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
                s.list_nulls_dropped,
                s.values_rescued,
                s.rejects_recorded,
                s.rejects_dropped,
            ];
            output.vector(0).set_i64(row, r.scan_id as i64);
            output.vector(1).set_string(row, &r.function);
            output.vector(2).set_string(row, &r.path);
            output.vector(3).set_i64(row, r.started_at_micros);
            output.vector(4).set_bool(row, r.finished);
            for (k, v) in numbers.iter().enumerate() {
                output.vector(5 + k).set_i64(row, *v as i64);
            }
            output.vector(20).set_i64(row, r.session.map_or(0, |s| s.connection as i64));
            output.vector(21).set_string(row, &r.file_system);
            output.vector(22).set_i64(row, r.duckdb_threads as i64);
            output.vector(23).set_i64(row, s.rows_columnar as i64);
            output.vector(24).set_i64(row, s.rows_direct as i64);
        }
        let known: Vec<bool> = rows.iter().take(n).map(|r| r.session.is_some()).collect();
        output.vector(20).write_validity(&known);
        output.set_size(n);
        Ok(())
    });
}

/// `sanitize_debug_panic(where)`: panics in bind (`'bind'`) or in the scan
/// (`'scan'`). Registered only when SCHEMA_SANITIZER_PANIC_PROBE is set at
/// LOAD time, for the tests that prove panics are contained.
pub fn register_panic_probe(con: &Connection) -> Result<(), String> {
    register_table_function::<()>(
        con,
        "sanitize_debug_panic",
        &[LogicalType::varchar()],
        &[],
        None,
        TableCallbacks {
            bind: panic_bind,
            init: noop_init,
            scan: panic_scan,
            local_init: None,
            projection_pushdown: false,
        },
    )
}

unsafe extern "C" fn panic_bind(info: ffi::duckdb_bind_info) {
    // SAFETY: DuckDB passes the bind info of this call.
    let info = unsafe { BindInfo::from_raw(info) };
    guard(&info, || {
        if info.parameter(0, ParamType::Varchar) == ParamValue::Str("bind".into()) {
            panic!("deliberate panic in bind");
        }
        info.add_result_column("x", &LogicalType::varchar());
        Ok(())
    });
}

unsafe extern "C" fn noop_init(_info: ffi::duckdb_init_info) {}

unsafe extern "C" fn panic_scan(info: ffi::duckdb_function_info, _output: ffi::duckdb_data_chunk) {
    // SAFETY: DuckDB passes the function info of this call.
    let info = unsafe { FunctionInfo::from_raw(info) };
    guard(&info, || panic!("deliberate panic in scan"));
}
