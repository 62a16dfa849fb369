//! Safe handles over the raw DuckDB pointers a callback receives. Each is
//! made once, by an `unsafe fn from_raw` whose contract is "the pointer
//! DuckDB passed to the callback that is running", and is then used only
//! through safe methods: no safe function outside this module and
//! `vectors.rs` takes a raw DuckDB handle.

use std::ffi::{c_void, CStr, CString};
use std::marker::PhantomData;

use duckdb::ffi;

use super::types::LogicalType;
use crate::options::{ParamType, ParamValue};
use crate::scan::scan_log::Session;

/// A C string for DuckDB's names and error setters (interior NULs would
/// truncate it).
fn c_message(message: &str) -> CString {
    CString::new(message.replace('\0', " ")).unwrap_or_default()
}

/// A connection DuckDB lent us for registering functions, with the token
/// of the database it belongs to (scan_log::Session): every table
/// function registered through it carries the token to its bind.
pub struct Connection {
    raw: ffi::duckdb_connection,
    database: u64,
}

impl Connection {
    /// # Safety
    /// `raw` is an open connection that outlives this handle.
    pub unsafe fn from_raw(raw: ffi::duckdb_connection, database: u64) -> Self {
        Connection { raw, database }
    }
}

/// A table function's extra info as DuckDB holds it: the definition the
/// callbacks read ([`BindInfo::extra_info`]) and the database token
/// ([`ClientInfo::session`]). Boxed per registration, freed by DuckDB
/// with the function.
struct Registered {
    /// A `&'static T` of the registration's `T`, or null.
    def: *const c_void,
    database: u64,
}

/// The callbacks of one table function.
pub struct TableCallbacks {
    pub bind: unsafe extern "C" fn(ffi::duckdb_bind_info),
    pub init: unsafe extern "C" fn(ffi::duckdb_init_info),
    pub scan: unsafe extern "C" fn(ffi::duckdb_function_info, ffi::duckdb_data_chunk),
    /// The per-thread state of a scan DuckDB may run on several threads
    /// ([`InitInfo::set_max_threads`]); `None`: no thread-local state.
    pub local_init: Option<unsafe extern "C" fn(ffi::duckdb_init_info)>,
    /// DuckDB passes the columns a query uses (`InitInfo::projection`), and
    /// the output chunk holds only those.
    pub projection_pushdown: bool,
}

/// Registers a table function: positional parameters, named parameters,
/// an optional `'static` extra info the callbacks read back with
/// [`BindInfo::extra_info`] (kept in a [`Registered`] with the
/// connection's database token), and the callbacks. The one place table
/// functions are created.
pub fn register_table_function<T: 'static>(
    con: &Connection,
    name: &str,
    parameters: &[LogicalType],
    named: &[(&str, LogicalType)],
    extra: Option<&'static T>,
    callbacks: TableCallbacks,
) -> Result<(), String> {
    let c_name = CString::new(name).map_err(|e| e.to_string())?;
    let named: Vec<(CString, &LogicalType)> = named
        .iter()
        .map(|(n, t)| CString::new(*n).map(|c| (c, t)).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let registered = Box::new(Registered {
        def: extra.map_or(std::ptr::null(), |e| e as *const T as *const c_void),
        database: con.database,
    });
    // SAFETY: the table function is created, configured and destroyed here;
    // every pointer handed to DuckDB (names, types) lives across the calls
    // that read it, and DuckDB copies what it keeps. The extra info is a
    // box DuckDB owns from here on and frees with `drop_box`; the callbacks
    // are `extern "C"` functions with the signatures DuckDB expects.
    unsafe {
        let mut tf = ffi::duckdb_create_table_function();
        ffi::duckdb_table_function_set_name(tf, c_name.as_ptr());
        for ty in parameters {
            ffi::duckdb_table_function_add_parameter(tf, ty.raw());
        }
        for (n, ty) in &named {
            ffi::duckdb_table_function_add_named_parameter(tf, n.as_ptr(), ty.raw());
        }
        ffi::duckdb_table_function_set_extra_info(
            tf,
            Box::into_raw(registered) as *mut c_void,
            Some(drop_box::<Registered>),
        );
        ffi::duckdb_table_function_set_bind(tf, Some(callbacks.bind));
        ffi::duckdb_table_function_set_init(tf, Some(callbacks.init));
        if let Some(local_init) = callbacks.local_init {
            ffi::duckdb_table_function_set_local_init(tf, Some(local_init));
        }
        ffi::duckdb_table_function_set_function(tf, Some(callbacks.scan));
        ffi::duckdb_table_function_supports_projection_pushdown(tf, callbacks.projection_pushdown);
        let rc = ffi::duckdb_register_table_function(con.raw, tf);
        ffi::duckdb_destroy_table_function(&mut tf);
        if rc != ffi::DuckDBSuccess {
            return Err(format!("registering table function {name} failed"));
        }
    }
    Ok(())
}

/// The callback of one scalar function overload.
pub type ScalarCallback = unsafe extern "C" fn(ffi::duckdb_function_info, ffi::duckdb_data_chunk, ffi::duckdb_vector);

/// Registers a scalar function set: one overload per (parameters, callback),
/// all returning `returns`.
pub fn register_scalar_function_set(
    con: &Connection,
    name: &str,
    returns: &LogicalType,
    overloads: &[(&[LogicalType], ScalarCallback)],
    init: Option<ScalarInit>,
) -> Result<(), String> {
    let c_name = c_message(name);
    // SAFETY: as in register_table_function: everything created here is
    // destroyed here, and the pointers passed live across the calls.
    unsafe {
        let mut set = ffi::duckdb_create_scalar_function_set(c_name.as_ptr());
        for (parameters, callback) in overloads {
            let mut f = ffi::duckdb_create_scalar_function();
            ffi::duckdb_scalar_function_set_name(f, c_name.as_ptr());
            for ty in *parameters {
                ffi::duckdb_scalar_function_add_parameter(f, ty.raw());
            }
            ffi::duckdb_scalar_function_set_return_type(f, returns.raw());
            ffi::duckdb_scalar_function_set_function(f, Some(*callback));
            if let Some(init) = init {
                // A function that reads files at execution: never folded
                // into a constant when a statement is planned (prepared
                // before a lockdown, or before the file changed).
                ffi::duckdb_scalar_function_set_init(f, Some(init));
                ffi::duckdb_scalar_function_set_volatile(f);
            }
            ffi::duckdb_add_scalar_function_to_set(set, f);
            ffi::duckdb_destroy_scalar_function(&mut f);
        }
        let rc = ffi::duckdb_register_scalar_function_set(con.raw, set);
        ffi::duckdb_destroy_scalar_function_set(&mut set);
        if rc != ffi::DuckDBSuccess {
            return Err(format!("registering {name} failed"));
        }
    }
    Ok(())
}

/// The init callback of a scalar function: runs when a statement executes.
pub type ScalarInit = unsafe extern "C" fn(ffi::duckdb_init_info);

/// What a scalar function that reads files takes from the client that
/// runs it: DuckDB's file system (its rules apply when each file opens)
/// and `enable_external_access`, for the remote paths object_store reads.
pub struct ScalarFiles {
    pub opener: crate::formats::byte_source::FileOpener,
    pub external_access: bool,
}

/// The init of a scalar function that reads files: takes the executing
/// client's file system, so that a statement prepared before a lockdown
/// is held to it when it runs ([`FunctionInfo::scalar_files`]).
///
/// # Safety
/// `info` is the init info DuckDB passed to the running scalar init callback.
pub unsafe extern "C" fn scalar_files_init(info: ffi::duckdb_init_info) {
    let made = std::panic::catch_unwind(|| {
        let mut ctx: ffi::duckdb_client_context = std::ptr::null_mut();
        // SAFETY: a live scalar init info; the context returned is ours.
        unsafe { ffi::duckdb_scalar_function_init_get_client_context(info, &mut ctx) };
        if ctx.is_null() {
            return ScalarFiles { opener: Default::default(), external_access: true };
        }
        // SAFETY: a live client context, read before `from_context` takes it.
        let access = unsafe { config_option(ctx, "enable_external_access") };
        // SAFETY: the context we own; `from_context` destroys it with the
        // file system (or at once when there is none).
        let files = unsafe { super::files::DuckFiles::from_context(ctx) };
        ScalarFiles {
            opener: files.map(|f| crate::formats::byte_source::FileOpener(std::sync::Arc::new(f))).unwrap_or_default(),
            external_access: access != ParamValue::Bool(false),
        }
    });
    match made {
        Ok(state) => {
            let state = Box::into_raw(Box::new(state));
            // SAFETY: a live init info; DuckDB frees the state with drop_box.
            unsafe { ffi::duckdb_scalar_function_init_set_state(info, state.cast(), Some(drop_box::<ScalarFiles>)) };
        }
        Err(_) => {
            let m = c_message("schema_sanitizer: cannot take the client's file system");
            // SAFETY: a live init info; DuckDB copies the message.
            unsafe { ffi::duckdb_scalar_function_init_set_error(info, m.as_ptr()) };
        }
    }
}

/// Frees a value we boxed and handed to DuckDB (bind or init data).
unsafe extern "C" fn drop_box<T>(ptr: *mut c_void) {
    if !ptr.is_null() {
        // A panic in a destructor must not unwind into DuckDB either.
        // SAFETY: DuckDB calls this once, with the pointer Box::into_raw gave.
        let _ = std::panic::catch_unwind(|| drop(unsafe { Box::from_raw(ptr as *mut T) }));
    }
}

/// What a bind callback may learn about the client: the
/// `enable_external_access` setting and who is calling.
pub struct ClientInfo {
    /// `enable_external_access`; `true` when the setting cannot be read.
    pub external_access: bool,
    /// The connection and its database; `None` when DuckDB gives no client
    /// context.
    pub session: Option<Session>,
    /// DuckDB's `threads` setting; `None` when it cannot be read.
    pub threads: Option<u64>,
    /// `preserve_insertion_order`; `true` when the setting cannot be read.
    pub keeps_insertion_order: bool,
    /// `home_directory` and `file_search_path`, for [`crate::source::locate`].
    pub paths: crate::source::PathSettings,
}

impl ClientInfo {
    /// The local paths the user wrote, as DuckDB's readers resolve them
    /// (`~`, `file_search_path`).
    pub fn locate(&self, paths: Vec<String>) -> Vec<String> {
        paths.into_iter().map(|p| crate::source::locate(&p, &self.paths)).collect()
    }
}

impl ClientInfo {
    /// DuckDB's `threads` setting, or the machine's cores when it cannot be
    /// read; at least one (scan/ordered.rs counts DuckDB's thread in it).
    pub fn thread_budget(&self) -> usize {
        self.threads
            .and_then(|t| usize::try_from(t).ok())
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .max(1)
    }
}

/// The bind info of a running bind callback.
pub struct BindInfo {
    raw: ffi::duckdb_bind_info,
}

impl BindInfo {
    /// # Safety
    /// `raw` is the bind info DuckDB passed to the bind callback that is
    /// running, and the handle does not outlive that call.
    pub unsafe fn from_raw(raw: ffi::duckdb_bind_info) -> Self {
        BindInfo { raw }
    }

    /// The extra info the function was registered with.
    ///
    /// # Safety
    /// The function was registered by [`register_table_function`] with an
    /// extra info of type `T`.
    pub unsafe fn extra_info<T>(&self) -> Option<&'static T> {
        // SAFETY: by this function's contract the registration's `def` is a
        // `&'static T` or null.
        self.registered().and_then(|r| unsafe { (r.def as *const T).as_ref() })
    }

    /// What [`register_table_function`] stored: every table function of
    /// ours has one, which DuckDB keeps alive while the function exists.
    fn registered(&self) -> Option<&Registered> {
        // SAFETY: a live bind info of a function registered by
        // register_table_function, whose extra info is a `Registered` that
        // DuckDB frees only with the function.
        unsafe { (ffi::duckdb_bind_get_extra_info(self.raw) as *const Registered).as_ref() }
    }

    /// Positional parameter `index`, read as `ty`.
    pub fn parameter(&self, index: u64, ty: ParamType) -> ParamValue {
        // SAFETY: a live bind info; the value returned is ours to destroy,
        // which take_value does.
        unsafe { take_value(ffi::duckdb_bind_get_parameter(self.raw, index), ty) }
    }

    /// The first positional argument as paths: a VARCHAR is one path (a
    /// file, a directory or a glob), a VARCHAR[] several. `Err` names what
    /// was given instead (NULL, a NULL element, another type).
    pub fn paths_argument(&self) -> Result<Vec<String>, &'static str> {
        // SAFETY: a live bind info; the value returned is ours to destroy,
        // which take_value does (after reading its type, which the value
        // owns; the list's child type is ours and destroyed here).
        unsafe {
            let mut value = ffi::duckdb_bind_get_parameter(self.raw, 0);
            if value.is_null() {
                return Err("NULL");
            }
            if ffi::duckdb_is_null_value(value) {
                ffi::duckdb_destroy_value(&mut value);
                return Err("NULL");
            }
            let ty = ffi::duckdb_get_value_type(value);
            let kind = match ffi::duckdb_get_type_id(ty) {
                ffi::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR => Some(ParamType::Varchar),
                ffi::DUCKDB_TYPE_DUCKDB_TYPE_SQLNULL => return Err("NULL"),
                ffi::DUCKDB_TYPE_DUCKDB_TYPE_LIST => {
                    let mut child = ffi::duckdb_list_type_child_type(ty);
                    let id = ffi::duckdb_get_type_id(child);
                    ffi::duckdb_destroy_logical_type(&mut child);
                    // An empty list literal has no element type of its own.
                    matches!(id, ffi::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR | ffi::DUCKDB_TYPE_DUCKDB_TYPE_SQLNULL)
                        .then_some(ParamType::VarcharList)
                }
                _ => None,
            };
            let Some(kind) = kind else {
                ffi::duckdb_destroy_value(&mut value);
                return Err("another type");
            };
            match take_value(value, kind) {
                ParamValue::Str(s) => Ok(vec![s]),
                ParamValue::List(items) => items
                    .into_iter()
                    .map(|i| match i {
                        ParamValue::Str(s) => Ok(s),
                        _ => Err("a list holding NULL"),
                    })
                    .collect(),
                _ => Err("NULL"),
            }
        }
    }

    /// A named parameter, or `None` when the query did not pass it.
    pub fn named_parameter(&self, name: &str, ty: ParamType) -> Option<ParamValue> {
        let c = CString::new(name).ok()?;
        // SAFETY: a live bind info and a NUL-terminated name; the value
        // returned (if any) is ours to destroy, which take_value does.
        let value = unsafe { ffi::duckdb_bind_get_named_parameter(self.raw, c.as_ptr()) };
        if value.is_null() {
            return None;
        }
        // SAFETY: a non-null value we own.
        Some(unsafe { take_value(value, ty) })
    }

    pub fn add_result_column(&self, name: &str, ty: &LogicalType) {
        let n = c_message(name);
        // SAFETY: a live bind info; DuckDB copies the name and the type.
        unsafe { ffi::duckdb_bind_add_result_column(self.raw, n.as_ptr(), ty.raw()) };
    }

    pub fn set_cardinality(&self, rows: u64, exact: bool) {
        // SAFETY: a live bind info.
        unsafe { ffi::duckdb_bind_set_cardinality(self.raw, rows, exact) };
    }

    /// Hands `data` to DuckDB as the bind data; it is dropped with the query.
    pub fn set_bind_data<T: 'static>(&self, data: T) {
        let ptr = Box::into_raw(Box::new(data)) as *mut c_void;
        // SAFETY: a live bind info; DuckDB frees the pointer with drop_box::<T>,
        // the destructor that matches the box.
        unsafe { ffi::duckdb_bind_set_bind_data(self.raw, ptr, Some(drop_box::<T>)) };
    }

    pub fn set_error(&self, message: &str) {
        let m = c_message(message);
        // SAFETY: a live bind info; DuckDB copies the message.
        unsafe { ffi::duckdb_bind_set_error(self.raw, m.as_ptr()) };
    }

    /// DuckDB's file system for this bind's client, kept with the plan so
    /// that scans open their files through it when they run (ffi/files.rs);
    /// `None` when DuckDB gives no client context.
    pub fn file_system(&self) -> Option<super::files::DuckFiles> {
        let mut ctx: ffi::duckdb_client_context = std::ptr::null_mut();
        // SAFETY: a live bind info; the context returned is ours, and
        // `from_context` takes it over.
        unsafe {
            ffi::duckdb_table_function_get_client_context(self.raw, &mut ctx);
            super::files::DuckFiles::from_context(ctx)
        }
    }

    /// What a row function's run takes from this bind's client: its thread
    /// budget, who calls, and DuckDB's file system.
    pub fn run_context(&self, client: &ClientInfo) -> crate::functions::RunContext {
        crate::functions::RunContext {
            threads: client.thread_budget(),
            session: client.session,
            opener: self
                .file_system()
                .map(|files| crate::formats::byte_source::FileOpener(std::sync::Arc::new(files)))
                .unwrap_or_default(),
        }
    }

    pub fn client_info(&self) -> ClientInfo {
        let mut out = ClientInfo {
            external_access: true,
            session: None,
            threads: None,
            keeps_insertion_order: true,
            paths: crate::source::PathSettings::of(None, None),
        };
        let mut ctx: ffi::duckdb_client_context = std::ptr::null_mut();
        // SAFETY: a live bind info; the context returned is ours to destroy.
        unsafe { ffi::duckdb_table_function_get_client_context(self.raw, &mut ctx) };
        if ctx.is_null() {
            return out;
        }
        // SAFETY: a live client context (destroyed at the end of this function).
        let connection = unsafe { ffi::duckdb_client_context_get_connection_id(ctx) };
        out.session = self.registered().map(|r| Session { database: r.database, connection });
        // SAFETY: a live client context (destroyed below).
        let (threads, access) =
            unsafe { (config_option(ctx, "threads"), config_option(ctx, "enable_external_access")) };
        if let ParamValue::Int(n) = threads {
            out.threads = u64::try_from(n).ok();
        }
        if let ParamValue::Bool(b) = access {
            out.external_access = b;
        }
        // SAFETY: a live client context (destroyed below).
        if let ParamValue::Bool(b) = unsafe { config_option(ctx, "preserve_insertion_order") } {
            out.keeps_insertion_order = b;
        }
        // SAFETY: a live client context (destroyed below).
        let (home, search) = unsafe { (config_option(ctx, "home_directory"), config_option(ctx, "file_search_path")) };
        let text = |v: &ParamValue| match v {
            ParamValue::Str(s) => Some(s.clone()),
            _ => None,
        };
        out.paths = crate::source::PathSettings::of(text(&home).as_deref(), text(&search).as_deref());
        // SAFETY: the context we own, destroyed once.
        unsafe { ffi::duckdb_destroy_client_context(&mut ctx) };
        out
    }
}

/// The init info of a running init callback.
pub struct InitInfo {
    raw: ffi::duckdb_init_info,
}

impl InitInfo {
    /// # Safety
    /// `raw` is the init info DuckDB passed to the init callback that is
    /// running, and the handle does not outlive that call.
    pub unsafe fn from_raw(raw: ffi::duckdb_init_info) -> Self {
        InitInfo { raw }
    }

    /// The bind data.
    ///
    /// # Safety
    /// The bind callback stored a `T` with [`BindInfo::set_bind_data`].
    pub unsafe fn bind_data<T>(&self) -> &T {
        // SAFETY: by this function's contract the pointer is a live `T`,
        // owned by DuckDB until the query ends (after this call).
        unsafe { &*(ffi::duckdb_init_get_bind_data(self.raw) as *const T) }
    }

    /// The result columns the query uses, in output-chunk order (with
    /// projection pushdown on). An index past the result columns stands
    /// for none (DuckDB's row id, as `count(*)` asks for).
    pub fn projection(&self) -> Vec<u64> {
        // SAFETY: a live init info; indexes stay below the count DuckDB reports.
        unsafe {
            let n = ffi::duckdb_init_get_column_count(self.raw);
            (0..n).map(|i| ffi::duckdb_init_get_column_index(self.raw, i)).collect()
        }
    }

    /// Hands `data` to DuckDB as the scan's global state (from the init
    /// callback) or as one thread's state (from the local init callback,
    /// which sees the bind data but not the global state).
    pub fn set_init_data<T: 'static>(&self, data: T) {
        let ptr = Box::into_raw(Box::new(data)) as *mut c_void;
        // SAFETY: a live init info; DuckDB frees the pointer with the matching drop_box::<T>.
        unsafe { ffi::duckdb_init_set_init_data(self.raw, ptr, Some(drop_box::<T>)) };
    }

    /// How many of DuckDB's threads may call the scan at once (from the
    /// init callback). DuckDB uses them only where the plan above the scan
    /// runs in parallel; an order-keeping sink still runs one.
    pub fn set_max_threads(&self, threads: usize) {
        // SAFETY: a live init info of the (global) init callback.
        unsafe { ffi::duckdb_init_set_max_threads(self.raw, threads as ffi::idx_t) };
    }

    pub fn set_error(&self, message: &str) {
        let m = c_message(message);
        // SAFETY: a live init info; DuckDB copies the message.
        unsafe { ffi::duckdb_init_set_error(self.raw, m.as_ptr()) };
    }
}

/// The function info of a running scan or scalar callback.
pub struct FunctionInfo {
    raw: ffi::duckdb_function_info,
}

impl FunctionInfo {
    /// # Safety
    /// `raw` is the function info DuckDB passed to the callback that is
    /// running, and the handle does not outlive that call.
    pub unsafe fn from_raw(raw: ffi::duckdb_function_info) -> Self {
        FunctionInfo { raw }
    }

    /// # Safety
    /// The bind callback stored a `T` with [`BindInfo::set_bind_data`].
    pub unsafe fn bind_data<T>(&self) -> &T {
        // SAFETY: by this function's contract the pointer is a live `T`.
        unsafe { &*(ffi::duckdb_function_get_bind_data(self.raw) as *const T) }
    }

    /// # Safety
    /// The init callback stored a `T` with [`InitInfo::set_init_data`].
    pub unsafe fn init_data<T>(&self) -> &T {
        // SAFETY: by this function's contract the pointer is a live `T`.
        unsafe { &*(ffi::duckdb_function_get_init_data(self.raw) as *const T) }
    }

    /// The calling thread's state.
    ///
    /// # Safety
    /// The local init callback stored a `T` with [`InitInfo::set_init_data`].
    pub unsafe fn local_init_data<T>(&self) -> &T {
        // SAFETY: by this function's contract the pointer is a live `T`,
        // which DuckDB hands to this thread only.
        unsafe { &*(ffi::duckdb_function_get_local_init_data(self.raw) as *const T) }
    }

    /// The error of a table function's scan.
    pub fn set_error(&self, message: &str) {
        let m = c_message(message);
        // SAFETY: a live function info; DuckDB copies the message.
        unsafe { ffi::duckdb_function_set_error(self.raw, m.as_ptr()) };
    }

    /// The state [`scalar_files_init`] made for this execution, if the
    /// function was registered with it.
    pub fn scalar_files(&self) -> Option<&ScalarFiles> {
        // SAFETY: a live function info of a scalar function; its state is
        // a `ScalarFiles` (scalar_files_init) or null.
        unsafe { (ffi::duckdb_scalar_function_get_state(self.raw) as *const ScalarFiles).as_ref() }
    }

    /// The error of a scalar function.
    pub fn set_scalar_error(&self, message: &str) {
        let m = c_message(message);
        // SAFETY: a live function info of a scalar callback; DuckDB copies the message.
        unsafe { ffi::duckdb_scalar_function_set_error(self.raw, m.as_ptr()) };
    }
}

/// A data chunk DuckDB passed to a callback: the scan's output or a scalar
/// function's input.
pub struct DataChunk {
    raw: ffi::duckdb_data_chunk,
}

impl DataChunk {
    /// # Safety
    /// `raw` is the chunk DuckDB passed to the callback that is running, and
    /// the handle does not outlive that call.
    pub unsafe fn from_raw(raw: ffi::duckdb_data_chunk) -> Self {
        DataChunk { raw }
    }

    pub fn size(&self) -> usize {
        // SAFETY: a live chunk.
        unsafe { ffi::duckdb_data_chunk_get_size(self.raw) as usize }
    }

    /// Sets the rows written; at most the vector capacity.
    pub fn set_size(&self, rows: usize) {
        assert!(rows <= vector_capacity(), "{rows} rows in a chunk");
        // SAFETY: a live chunk, and no more rows than its vectors hold.
        unsafe { ffi::duckdb_data_chunk_set_size(self.raw, rows as u64) };
    }

    /// Column `index`, which must exist.
    pub fn vector(&self, index: usize) -> Vector<'_> {
        // SAFETY: a live chunk; the column count is DuckDB's.
        let columns = unsafe { ffi::duckdb_data_chunk_get_column_count(self.raw) } as usize;
        assert!(index < columns, "column {index} of {columns}");
        // SAFETY: a live chunk and an existing column; the vector lives as
        // long as the chunk, which the lifetime ties it to.
        let raw = unsafe { ffi::duckdb_data_chunk_get_vector(self.raw, index as u64) };
        Vector { raw, capacity: vector_capacity(), _chunk: PhantomData }
    }
}

/// Rows a chunk's vectors hold (DuckDB's STANDARD_VECTOR_SIZE).
pub fn vector_capacity() -> usize {
    // SAFETY: a pure query of a compile-time constant of DuckDB's.
    unsafe { ffi::duckdb_vector_size() as usize }
}

/// A vector of a chunk, or a child vector, with the rows it can hold: every
/// write is checked against `capacity` (see vectors.rs).
pub struct Vector<'a> {
    pub(super) raw: ffi::duckdb_vector,
    pub(super) capacity: usize,
    pub(super) _chunk: PhantomData<&'a DataChunk>,
}

impl Vector<'_> {
    /// A scalar function's output vector, which holds `capacity` rows.
    ///
    /// # Safety
    /// `raw` is the output vector DuckDB passed to the scalar callback that
    /// is running, and the handle does not outlive that call.
    pub unsafe fn from_raw(raw: ffi::duckdb_vector) -> Self {
        Vector { raw, capacity: vector_capacity(), _chunk: PhantomData }
    }

    /// The first `rows` VARCHAR values (`None` for NULL), borrowed from the
    /// vector.
    pub fn strings(&self, rows: usize) -> Vec<Option<&[u8]>> {
        assert!(rows <= self.capacity, "{rows} rows of a vector of {}", self.capacity);
        let mut out = Vec::with_capacity(rows);
        // SAFETY: a live VARCHAR vector of at least `rows` rows: its data is
        // `rows` duckdb_string_t, its validity (if any) covers them, and the
        // bytes each points at live as long as the vector.
        unsafe {
            let strings = ffi::duckdb_vector_get_data(self.raw) as *mut ffi::duckdb_string_t;
            let validity = ffi::duckdb_vector_get_validity(self.raw);
            for row in 0..rows {
                if !validity.is_null() && !ffi::duckdb_validity_row_is_valid(validity, row as u64) {
                    out.push(None);
                    continue;
                }
                let s = strings.add(row);
                let len = ffi::duckdb_string_t_length(*s) as usize;
                let data = ffi::duckdb_string_t_data(s) as *const u8;
                out.push(Some(std::slice::from_raw_parts(data, len)));
            }
        }
        out
    }
}

impl Vector<'_> {
    /// The first `rows` values of a `VARCHAR[]` vector: per row `None` for
    /// a NULL list, else its elements (`None` for a NULL element), copied.
    ///
    /// DuckDB flattens a scalar function's input vectors but not a list's
    /// child, which may be a constant or dictionary vector (a literal
    /// `[NULL, NULL]` is a constant NULL child of two rows): read as flat,
    /// its second row would be memory past the constant. So the child is
    /// first copied, through DuckDB's own vector copy (which reads every
    /// vector kind), into a new flat vector, and read there.
    pub fn string_lists(&self, rows: usize) -> Vec<Option<Vec<Option<String>>>> {
        assert!(rows <= self.capacity, "{rows} rows of a vector of {}", self.capacity);
        let mut out = Vec::with_capacity(rows);
        // SAFETY: a live, flattened LIST(VARCHAR) vector of at least `rows`
        // rows: its data is `rows` duckdb_list_entry, each naming a range of
        // its child, which holds `duckdb_list_vector_get_size` values. The
        // flat copy is a new vector of the child's type and size that we
        // own: every row of it is written by the copy (sel = 0..n), its
        // validity covers them, and it is destroyed here after its strings
        // were copied out; the selection vector and the type likewise.
        unsafe {
            let entries = ffi::duckdb_vector_get_data(self.raw) as *const ffi::duckdb_list_entry;
            let validity = ffi::duckdb_vector_get_validity(self.raw);
            let child = ffi::duckdb_list_vector_get_child(self.raw);
            let child_rows = ffi::duckdb_list_vector_get_size(self.raw);
            let mut flat = std::ptr::null_mut();
            let mut ty = std::ptr::null_mut();
            if child_rows > 0 {
                ty = ffi::duckdb_vector_get_column_type(child);
                flat = ffi::duckdb_create_vector(ty, child_rows);
                let sel = ffi::duckdb_create_selection_vector(child_rows);
                let ids = ffi::duckdb_selection_vector_get_data_ptr(sel);
                for i in 0..child_rows {
                    *ids.add(i as usize) = i as ffi::sel_t;
                }
                ffi::duckdb_vector_copy_sel(child, flat, sel, child_rows, 0, 0);
                ffi::duckdb_destroy_selection_vector(sel);
            }
            let (strings, child_validity) = if flat.is_null() {
                (std::ptr::null_mut(), std::ptr::null_mut())
            } else {
                (ffi::duckdb_vector_get_data(flat) as *mut ffi::duckdb_string_t, ffi::duckdb_vector_get_validity(flat))
            };
            for row in 0..rows {
                if !validity.is_null() && !ffi::duckdb_validity_row_is_valid(validity, row as u64) {
                    out.push(None);
                    continue;
                }
                let entry = *entries.add(row);
                let mut items = Vec::with_capacity(entry.length as usize);
                for i in entry.offset..entry.offset + entry.length {
                    assert!(i < child_rows, "list element {i} of a child of {child_rows}");
                    if !child_validity.is_null() && !ffi::duckdb_validity_row_is_valid(child_validity, i) {
                        items.push(None);
                        continue;
                    }
                    let s = strings.add(i as usize);
                    let len = ffi::duckdb_string_t_length(*s) as usize;
                    let data = ffi::duckdb_string_t_data(s) as *const u8;
                    items.push(Some(String::from_utf8_lossy(std::slice::from_raw_parts(data, len)).into_owned()));
                }
                out.push(Some(items));
            }
            if !flat.is_null() {
                ffi::duckdb_destroy_vector(&mut flat);
                ffi::duckdb_destroy_logical_type(&mut ty);
            }
        }
        out
    }
}

/// A setting of the client context, read as any other value
/// ([`take_value`]); NULL when it cannot be read.
///
/// # Safety
/// `ctx` is a live client context.
unsafe fn config_option(ctx: ffi::duckdb_client_context, name: &str) -> ParamValue {
    let Ok(name) = CString::new(name) else { return ParamValue::Null };
    let mut scope: ffi::duckdb_config_option_scope = 0;
    // SAFETY: a live context and a NUL-terminated name; the value returned
    // (or null) is ours, and take_value destroys it.
    unsafe { take_value(ffi::duckdb_client_context_get_config_option(ctx, name.as_ptr(), &mut scope), ParamType::Any) }
}

/// Converts and destroys a `duckdb_value` of the declared type.
///
/// # Safety
/// `value` is null or a live value we own; it is destroyed here.
unsafe fn take_value(mut value: ffi::duckdb_value, ty: ParamType) -> ParamValue {
    if value.is_null() {
        return ParamValue::Null;
    }
    // SAFETY: a live value we own, read and then destroyed once.
    unsafe {
        let out = read_value(value, ty);
        ffi::duckdb_destroy_value(&mut value);
        out
    }
}

/// # Safety
/// `value` is a live value.
unsafe fn read_value(value: ffi::duckdb_value, ty: ParamType) -> ParamValue {
    // SAFETY: a live value of the parameter's registered type, so the
    // getters for that type apply; list children are ours to destroy.
    unsafe {
        if ffi::duckdb_is_null_value(value) {
            return ParamValue::Null;
        }
        match ty {
            ParamType::Boolean => ParamValue::Bool(ffi::duckdb_get_bool(value)),
            ParamType::Integer | ParamType::Bigint => ParamValue::Int(ffi::duckdb_get_int64(value)),
            ParamType::Varchar => ParamValue::Str(varchar(value)),
            ParamType::VarcharList => {
                let n = ffi::duckdb_get_list_size(value);
                let mut items = Vec::with_capacity(n as usize);
                for i in 0..n {
                    items.push(take_value(ffi::duckdb_get_list_child(value, i), ParamType::Varchar));
                }
                ParamValue::List(items)
            }
            ParamType::Any => read_any(value),
        }
    }
}

/// A value of any type, by its own type: STRUCT and MAP become
/// [`ParamValue::Map`], lists [`ParamValue::List`], numbers and booleans
/// themselves, anything else its text.
///
/// # Safety
/// `value` is a live, non-NULL value.
unsafe fn read_any(value: ffi::duckdb_value) -> ParamValue {
    // SAFETY: the value's type belongs to the value (not destroyed here);
    // every child value and child name returned is ours and is destroyed
    // or freed once; indexes stay below the counts DuckDB reports.
    unsafe {
        let ty = ffi::duckdb_get_value_type(value);
        match ffi::duckdb_get_type_id(ty) {
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_BOOLEAN => ParamValue::Bool(ffi::duckdb_get_bool(value)),
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_TINYINT
            | ffi::DUCKDB_TYPE_DUCKDB_TYPE_SMALLINT
            | ffi::DUCKDB_TYPE_DUCKDB_TYPE_INTEGER
            | ffi::DUCKDB_TYPE_DUCKDB_TYPE_BIGINT
            | ffi::DUCKDB_TYPE_DUCKDB_TYPE_UTINYINT
            | ffi::DUCKDB_TYPE_DUCKDB_TYPE_USMALLINT
            | ffi::DUCKDB_TYPE_DUCKDB_TYPE_UINTEGER => ParamValue::Int(ffi::duckdb_get_int64(value)),
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_FLOAT | ffi::DUCKDB_TYPE_DUCKDB_TYPE_DOUBLE => {
                ParamValue::Float(ffi::duckdb_get_double(value))
            }
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_LIST => {
                let n = ffi::duckdb_get_list_size(value);
                ParamValue::List(
                    (0..n).map(|i| take_value(ffi::duckdb_get_list_child(value, i), ParamType::Any)).collect(),
                )
            }
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_STRUCT => {
                let n = ffi::duckdb_struct_type_child_count(ty);
                let mut pairs = Vec::with_capacity(n as usize);
                for i in 0..n {
                    let name_ptr = ffi::duckdb_struct_type_child_name(ty, i);
                    let name = if name_ptr.is_null() {
                        String::new()
                    } else {
                        let s = CStr::from_ptr(name_ptr).to_string_lossy().into_owned();
                        ffi::duckdb_free(name_ptr as *mut _);
                        s
                    };
                    pairs.push((name, take_value(ffi::duckdb_get_struct_child(value, i), ParamType::Any)));
                }
                ParamValue::Map(pairs)
            }
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_MAP => {
                let n = ffi::duckdb_get_map_size(value);
                let mut pairs = Vec::with_capacity(n as usize);
                for i in 0..n {
                    let key = match take_value(ffi::duckdb_get_map_key(value, i), ParamType::Any) {
                        ParamValue::Str(s) => s,
                        other => other.to_json().to_string(),
                    };
                    pairs.push((key, take_value(ffi::duckdb_get_map_value(value, i), ParamType::Any)));
                }
                ParamValue::Map(pairs)
            }
            _ => ParamValue::Str(varchar(value)),
        }
    }
}

/// # Safety
/// `value` is a live VARCHAR value.
unsafe fn varchar(value: ffi::duckdb_value) -> String {
    // SAFETY: the string returned is NUL-terminated and ours to free, once.
    unsafe {
        let ptr = ffi::duckdb_get_varchar(value);
        if ptr.is_null() {
            return String::new();
        }
        let s = CStr::from_ptr(ptr).to_string_lossy().into_owned();
        ffi::duckdb_free(ptr as *mut _);
        s
    }
}
