//! Files opened through DuckDB's own file system (the C API's
//! `duckdb_client_context_get_file_system`), so that every rule the user
//! set for the database applies to our reads exactly as to `read_json`'s:
//! `enable_external_access` with `allowed_directories` and `allowed_paths`,
//! `disabled_filesystems`, and the file systems httpfs or Python's
//! `register_filesystem` add. DuckDB checks them when a file is opened, so
//! a statement prepared before a lockdown is refused when it runs.
//!
//! The engine sees an [`Opener`] (formats/byte_source.rs); this is its
//! DuckDB side. The file system is taken from the client context of the
//! bind that planned the scan, which lives as long as its connection, and
//! is kept with the plan so that the scan opens its files again when it
//! runs. Staged copies of remote objects are the extension's own files in
//! its private spool directory and are read with `std::fs`.

use std::ffi::{CStr, CString};
use std::io::{self, Read, Seek, SeekFrom, Write};

use duckdb::ffi;

use crate::formats::byte_source::{ByteSink, ByteSource, Opener};

/// DuckDB's file system of one client context, owned (destroyed on drop,
/// with the context it was taken from).
pub struct DuckFiles {
    context: ffi::duckdb_client_context,
    fs: ffi::duckdb_file_system,
    /// Schemes a loaded extension serves (httpfs, azure), as found when
    /// this value was made.
    loaded_schemes: Vec<&'static str>,
}

/// The schemes of an extension, and a setting only that extension
/// defines: the setting exists exactly when the extension is loaded.
const EXTENSION_SCHEMES: [(&str, &[&str]); 2] = [
    ("s3_region", &["s3", "s3a", "s3n", "r2", "gcs", "gs", "http", "https", "hf"]),
    ("azure_storage_connection_string", &["az", "azure", "abfs", "abfss"]),
];

// SAFETY: DuckDB's file systems are called from any thread (its own scans
// open files from every worker thread); the pointers are only dereferenced
// by DuckDB, and are destroyed once, in `drop`.
unsafe impl Send for DuckFiles {}
// SAFETY: as above: `open` is a call DuckDB's file systems take from
// several threads at once; nothing here mutates through `&self`.
unsafe impl Sync for DuckFiles {}

impl DuckFiles {
    /// # Safety
    /// `context` is a client context this call now owns (it is destroyed
    /// with the returned value), from `duckdb_table_function_get_client_context`
    /// or its like.
    pub unsafe fn from_context(context: ffi::duckdb_client_context) -> Option<DuckFiles> {
        if context.is_null() {
            return None;
        }
        // SAFETY: a live client context (the caller's contract).
        let fs = unsafe { ffi::duckdb_client_context_get_file_system(context) };
        if fs.is_null() {
            let mut context = context;
            // SAFETY: the context we own, destroyed once.
            unsafe { ffi::duckdb_destroy_client_context(&mut context) };
            return None;
        }
        let mut loaded_schemes = Vec::new();
        for (setting, schemes) in EXTENSION_SCHEMES {
            // SAFETY: a live client context (the caller's contract).
            if unsafe { config_option_exists(context, setting) } {
                loaded_schemes.extend_from_slice(schemes);
            }
        }
        Some(DuckFiles { context, fs, loaded_schemes })
    }

    /// The file system's last error, as text.
    fn error(&self) -> String {
        // SAFETY: our live file system; the error data is ours to destroy.
        unsafe {
            let mut data = ffi::duckdb_file_system_error_data(self.fs);
            let message = error_text(data);
            ffi::duckdb_destroy_error_data(&mut data);
            message
        }
    }
}

impl Drop for DuckFiles {
    fn drop(&mut self) {
        // SAFETY: both were created for this value and are destroyed once;
        // the file system first, as it was taken from the context.
        unsafe {
            ffi::duckdb_destroy_file_system(&mut self.fs);
            ffi::duckdb_destroy_client_context(&mut self.context);
        }
    }
}

/// The message of an error data, or a generic text without one.
///
/// # Safety
/// `data` is a live error data (or null).
unsafe fn error_text(data: ffi::duckdb_error_data) -> String {
    if data.is_null() {
        return "the file system gave no error message".into();
    }
    // SAFETY: a live error data (the caller's contract); its message is a
    // NUL-terminated string it owns, copied here.
    unsafe {
        if !ffi::duckdb_error_data_has_error(data) {
            return "the file system gave no error message".into();
        }
        let message = ffi::duckdb_error_data_message(data);
        if message.is_null() {
            return "the file system gave no error message".into();
        }
        CStr::from_ptr(message).to_string_lossy().into_owned()
    }
}

impl DuckFiles {
    /// Opens `path` with the given `duckdb_file_flag`s: DuckDB checks its
    /// access rules first, then its file system for the scheme opens it.
    fn open_with(&self, path: &str, flags: &[ffi::duckdb_file_flag]) -> io::Result<DuckFile> {
        let c_path =
            CString::new(path).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in the path"))?;
        let mut handle: ffi::duckdb_file_handle = std::ptr::null_mut();
        // SAFETY: our live file system; the options are created, set and
        // destroyed here; `handle` receives a handle we then own.
        let state = unsafe {
            let mut options = ffi::duckdb_create_file_open_options();
            for flag in flags {
                ffi::duckdb_file_open_options_set_flag(options, *flag, true);
            }
            let state = ffi::duckdb_file_system_open(self.fs, c_path.as_ptr(), options, &mut handle);
            ffi::duckdb_destroy_file_open_options(&mut options);
            state
        };
        if state != ffi::DuckDBSuccess || handle.is_null() {
            if !handle.is_null() {
                // SAFETY: a handle DuckDB gave us, destroyed once.
                unsafe { ffi::duckdb_destroy_file_handle(&mut handle) };
            }
            let message = self.error();
            return Err(io::Error::new(error_kind(&message), message));
        }
        Ok(DuckFile { handle })
    }
}

/// The `io::ErrorKind` of a file-system error message: DuckDB's errors
/// reach the C API as text only.
fn error_kind(message: &str) -> io::ErrorKind {
    if message.contains("Permission") || message.contains("disabled") {
        io::ErrorKind::PermissionDenied
    } else if message.contains("No such file") || message.contains("does not exist") {
        io::ErrorKind::NotFound
    } else if message.contains("File exists") || message.contains("already exists") {
        io::ErrorKind::AlreadyExists
    } else {
        io::ErrorKind::Other
    }
}

impl Opener for DuckFiles {
    fn open(&self, path: &str) -> io::Result<Box<dyn ByteSource>> {
        // The spool holds the extension's own copies of remote objects,
        // already fetched under the rules that applied to their URIs.
        if crate::source::is_staged(path) {
            return Ok(Box::new(std::fs::File::open(path)?));
        }
        Ok(Box::new(self.open_with(path, &[ffi::duckdb_file_flag_DUCKDB_FILE_FLAG_READ])?))
    }

    fn create_new(&self, path: &str) -> io::Result<Box<dyn ByteSink>> {
        if crate::source::is_staged(path) {
            return Ok(Box::new(std::fs::File::options().write(true).create_new(true).open(path)?));
        }
        // CREATE_NEW is DuckDB's exclusive create (O_EXCL locally); it
        // creates only with CREATE beside it.
        let flags = [
            ffi::duckdb_file_flag_DUCKDB_FILE_FLAG_WRITE,
            ffi::duckdb_file_flag_DUCKDB_FILE_FLAG_CREATE,
            ffi::duckdb_file_flag_DUCKDB_FILE_FLAG_CREATE_NEW,
        ];
        Ok(Box::new(self.open_with(path, &flags)?))
    }

    fn name(&self) -> &'static str {
        "duckdb"
    }

    fn serves_other_schemes(&self) -> bool {
        true
    }

    fn serves_scheme(&self, scheme: &str) -> bool {
        self.loaded_schemes.iter().any(|s| s.eq_ignore_ascii_case(scheme))
    }
}

/// Whether the client knows the setting `name` at all (an extension's
/// setting exists once the extension is loaded).
///
/// # Safety
/// `ctx` is a live client context.
unsafe fn config_option_exists(ctx: ffi::duckdb_client_context, name: &str) -> bool {
    let Ok(name) = CString::new(name) else { return false };
    let mut scope: ffi::duckdb_config_option_scope = 0;
    // SAFETY: a live context and a NUL-terminated name; a value returned is
    // ours and destroyed here.
    unsafe {
        let mut value = ffi::duckdb_client_context_get_config_option(ctx, name.as_ptr(), &mut scope);
        if value.is_null() {
            return false;
        }
        ffi::duckdb_destroy_value(&mut value);
    }
    scope != ffi::duckdb_config_option_scope_DUCKDB_CONFIG_OPTION_SCOPE_INVALID
}

/// One open file of DuckDB's file system.
struct DuckFile {
    handle: ffi::duckdb_file_handle,
}

// SAFETY: a file handle is used by one thread at a time (`&mut self` for
// every call), and DuckDB's handles are not tied to the thread that opened
// them (its scans move them between workers).
unsafe impl Send for DuckFile {}

impl DuckFile {
    fn error(&self) -> io::Error {
        // SAFETY: our live handle; the error data is ours to destroy.
        let message = unsafe {
            let mut data = ffi::duckdb_file_handle_error_data(self.handle);
            let message = error_text(data);
            ffi::duckdb_destroy_error_data(&mut data);
            message
        };
        io::Error::other(message)
    }
}

impl Read for DuckFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let want = i64::try_from(buf.len()).unwrap_or(i64::MAX);
        // SAFETY: our live handle; DuckDB writes at most `want` bytes into
        // `buf`, which holds that many.
        let n = unsafe { ffi::duckdb_file_handle_read(self.handle, buf.as_mut_ptr().cast(), want) };
        usize::try_from(n).map_err(|_| self.error())
    }
}

impl Seek for DuckFile {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(p) => i64::try_from(p).ok(),
            SeekFrom::End(d) => self.size().ok().and_then(|s| i64::try_from(s).ok()).and_then(|s| s.checked_add(d)),
            SeekFrom::Current(d) => {
                // SAFETY: our live handle.
                let at = unsafe { ffi::duckdb_file_handle_tell(self.handle) };
                if at < 0 {
                    return Err(self.error());
                }
                at.checked_add(d)
            }
        };
        let Some(target) = target.filter(|t| *t >= 0) else {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "a seek before the start of the file"));
        };
        // SAFETY: our live handle.
        if unsafe { ffi::duckdb_file_handle_seek(self.handle, target) } != ffi::DuckDBSuccess {
            return Err(self.error());
        }
        Ok(target as u64)
    }
}

impl Write for DuckFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let size = i64::try_from(buf.len()).unwrap_or(i64::MAX);
        // SAFETY: our live handle; DuckDB reads at most `size` bytes from
        // `buf`, which holds that many.
        let n = unsafe { ffi::duckdb_file_handle_write(self.handle, buf.as_ptr().cast(), size) };
        usize::try_from(n).map_err(|_| self.error())
    }

    fn flush(&mut self) -> io::Result<()> {
        // Writes go straight to the handle; `sync` makes them durable.
        Ok(())
    }
}

impl ByteSink for DuckFile {
    fn sync(&mut self) -> io::Result<()> {
        // SAFETY: our live handle.
        if unsafe { ffi::duckdb_file_handle_sync(self.handle) } != ffi::DuckDBSuccess {
            return Err(self.error());
        }
        Ok(())
    }
}

impl ByteSource for DuckFile {
    fn size(&mut self) -> io::Result<u64> {
        // SAFETY: our live handle.
        let n = unsafe { ffi::duckdb_file_handle_size(self.handle) };
        u64::try_from(n).map_err(|_| self.error())
    }
}

impl Drop for DuckFile {
    fn drop(&mut self) {
        // SAFETY: our handle, closed and destroyed once.
        unsafe {
            ffi::duckdb_file_handle_close(self.handle);
            ffi::duckdb_destroy_file_handle(&mut self.handle);
        }
    }
}
