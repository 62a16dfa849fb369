//! `sanitize_registry()` and `sanitize_registry(VARCHAR)`, one function set;
//! `sanitize_registry_from_parquet(VARCHAR)`.

use duckdb::ffi;

use super::guard::{guard, Scalar};
use super::handles::{register_scalar_function_set, scalar_files_init, Connection, DataChunk, FunctionInfo, Vector};
use super::types::LogicalType;
use crate::functions::sanitize_registry::{canonical_registry, empty_registry, registry_from_parquet_with};

pub fn register_sanitize_registry(con: &Connection) -> Result<(), String> {
    let varchar = [LogicalType::varchar()];
    register_scalar_function_set(
        con,
        "sanitize_registry",
        &LogicalType::varchar(),
        &[(&[], empty_fn), (&varchar, canonical_fn)],
        None,
    )
}

/// `sanitize_registry_merge(registries VARCHAR[])` (docs/registry.md "Merging registries").
pub fn register_registry_merge(con: &Connection) -> Result<(), String> {
    use crate::functions::sanitize_registry::REGISTRY_MERGE;
    let list = [LogicalType::list_of(&LogicalType::varchar())];
    register_scalar_function_set(con, REGISTRY_MERGE, &LogicalType::varchar(), &[(&list, merge_fn)], None)
}

unsafe extern "C" fn merge_fn(
    info: ffi::duckdb_function_info,
    input: ffi::duckdb_data_chunk,
    output: ffi::duckdb_vector,
) {
    // SAFETY: DuckDB's pointers of this call.
    unsafe { scalar_call(info, input, output, merge_rows) }
}

/// Each row's list merged; a NULL list, or one without a registry, is NULL.
fn merge_rows(input: &DataChunk, output: &Vector<'_>) -> Result<(), String> {
    use crate::functions::sanitize_registry::{merge_registry_list, REGISTRY_MERGE};
    let rows = input.size();
    let vector = input.vector(0);
    let lists = vector.string_lists(rows);
    let mut valid = vec![true; rows];
    for (row, list) in lists.iter().enumerate() {
        let Some(items) = list else {
            valid[row] = false;
            continue;
        };
        let texts: Vec<Option<&str>> = items.iter().map(Option::as_deref).collect();
        match merge_registry_list(REGISTRY_MERGE, &texts).map_err(|e| e.message)? {
            Some(merged) => output.set_string(row, &merged),
            None => valid[row] = false,
        }
    }
    output.write_validity(&valid);
    Ok(())
}

/// `sanitize_registry_from_parquet(path)`: the registry in a Parquet
/// file's footer, or NULL (docs/registry.md).
pub fn register_registry_from_parquet(con: &Connection) -> Result<(), String> {
    let varchar = [LogicalType::varchar()];
    register_scalar_function_set(
        con,
        FROM_PARQUET,
        &LogicalType::varchar(),
        &[(&varchar, from_parquet_fn)],
        Some(scalar_files_init),
    )
}

const FROM_PARQUET: &str = "sanitize_registry_from_parquet";

unsafe extern "C" fn from_parquet_fn(
    info: ffi::duckdb_function_info,
    input: ffi::duckdb_data_chunk,
    output: ffi::duckdb_vector,
) {
    // SAFETY: DuckDB's pointers of this call; the function info lives as
    // long as the call.
    let files = unsafe { FunctionInfo::from_raw(info) };
    let Some(files) = files.scalar_files() else {
        // SAFETY: as above.
        return unsafe { scalar_call(info, input, output, |_, _| Err(format!("{FROM_PARQUET}: no file system"))) };
    };
    // SAFETY: DuckDB's pointers of this call.
    unsafe { scalar_call(info, input, output, |input, output| from_parquet(input, output, files)) }
}

/// Each path's registry: local files (and schemes DuckDB serves) opened
/// through the executing client's file system; remote objects read by
/// object_store only when external access is on, as DuckDB's readers.
fn from_parquet(input: &DataChunk, output: &Vector<'_>, files: &super::handles::ScalarFiles) -> Result<(), String> {
    each_text(input, output, FROM_PARQUET, "path", |path| {
        if !files.external_access && crate::source::parse_remote(path).is_some() {
            return Err(format!(
                "{FROM_PARQUET}: reading \"{}\" is refused: remote files need enable_external_access = true",
                crate::source::display_uri(path)
            ));
        }
        registry_from_parquet_with(path, &files.opener).map_err(|e| e.in_function(FROM_PARQUET).message)
    })
}

/// A VARCHAR → VARCHAR scalar body: `f` maps each row's text (`what` in
/// messages) to its result or NULL; a NULL row stays NULL.
fn each_text(
    input: &DataChunk,
    output: &Vector<'_>,
    function: &str,
    what: &str,
    f: impl Fn(&str) -> Result<Option<String>, String>,
) -> Result<(), String> {
    each_texts(input, output, function, &[what], |texts| f(texts[0]))
}

/// A scalar body over VARCHAR arguments (named `whats` in messages): `f`
/// maps each row's texts to its result or NULL; a row with a NULL argument
/// is NULL.
fn each_texts(
    input: &DataChunk,
    output: &Vector<'_>,
    function: &str,
    whats: &[&str],
    f: impl Fn(&[&str]) -> Result<Option<String>, String>,
) -> Result<(), String> {
    let rows = input.size();
    let vectors: Vec<_> = (0..whats.len()).map(|i| input.vector(i)).collect();
    let columns: Vec<Vec<Option<&[u8]>>> = vectors.iter().map(|v| v.strings(rows)).collect();
    let mut valid = vec![true; rows];
    let mut texts: Vec<&str> = Vec::with_capacity(whats.len());
    for (row, valid_row) in valid.iter_mut().enumerate() {
        texts.clear();
        for (column, what) in columns.iter().zip(whats) {
            let Some(bytes) = column[row] else { break };
            texts.push(std::str::from_utf8(bytes).map_err(|_| format!("{function}: the {what} is not valid UTF-8"))?);
        }
        if texts.len() < whats.len() {
            *valid_row = false;
            continue;
        }
        match f(&texts)? {
            Some(result) => output.set_string(row, &result),
            None => *valid_row = false,
        }
    }
    output.write_validity(&valid);
    Ok(())
}

/// `sanitize_bigquery_sidecar_ddl(sidecar_table)` and
/// `sanitize_bigquery_sidecar_merge(sidecar_table, external_table,
/// partition_key)`: statement texts (docs/bigquery.md).
pub fn register_bigquery_sidecar(con: &Connection) -> Result<(), String> {
    use crate::functions::sanitize_bigquery::{SIDECAR_DDL, SIDECAR_MERGE};
    let one = [LogicalType::varchar()];
    register_scalar_function_set(con, SIDECAR_DDL, &LogicalType::varchar(), &[(&one, sidecar_ddl_fn)], None)?;
    let three = [LogicalType::varchar(), LogicalType::varchar(), LogicalType::varchar()];
    register_scalar_function_set(con, SIDECAR_MERGE, &LogicalType::varchar(), &[(&three, sidecar_merge_fn)], None)
}

unsafe extern "C" fn sidecar_ddl_fn(
    info: ffi::duckdb_function_info,
    input: ffi::duckdb_data_chunk,
    output: ffi::duckdb_vector,
) {
    use crate::functions::sanitize_bigquery::{sidecar_table_ddl, SIDECAR_DDL};
    // SAFETY: DuckDB's pointers of this call.
    unsafe {
        scalar_call(info, input, output, |input, output| {
            each_text(input, output, SIDECAR_DDL, "sidecar_table", |t| {
                sidecar_table_ddl(t).map(Some).map_err(|e| e.message)
            })
        })
    }
}

unsafe extern "C" fn sidecar_merge_fn(
    info: ffi::duckdb_function_info,
    input: ffi::duckdb_data_chunk,
    output: ffi::duckdb_vector,
) {
    use crate::functions::sanitize_bigquery::{sidecar_table_merge, SIDECAR_MERGE};
    // SAFETY: DuckDB's pointers of this call.
    unsafe {
        scalar_call(info, input, output, |input, output| {
            each_texts(input, output, SIDECAR_MERGE, &["sidecar_table", "external_table", "partition_key"], |t| {
                sidecar_table_merge(t[0], t[1], t[2]).map(Some).map_err(|e| e.message)
            })
        })
    }
}

/// The body of a scalar callback over safe handles, its errors (and
/// panics) reported through DuckDB.
///
/// # Safety
/// The three pointers are those DuckDB passed to the running scalar callback.
unsafe fn scalar_call(
    info: ffi::duckdb_function_info,
    input: ffi::duckdb_data_chunk,
    output: ffi::duckdb_vector,
    body: impl FnOnce(&DataChunk, &Vector<'_>) -> Result<(), String>,
) {
    // SAFETY: by this function's contract, the pointers of the running call.
    let (info, input, output) =
        unsafe { (FunctionInfo::from_raw(info), DataChunk::from_raw(input), Vector::from_raw(output)) };
    guard(&Scalar(&info), || body(&input, &output));
}

unsafe extern "C" fn empty_fn(
    info: ffi::duckdb_function_info,
    input: ffi::duckdb_data_chunk,
    output: ffi::duckdb_vector,
) {
    // SAFETY: DuckDB's pointers of this call.
    unsafe {
        scalar_call(info, input, output, |input, output| {
            output.fill_varchar(&empty_registry(), input.size().max(1));
            Ok(())
        })
    }
}

unsafe extern "C" fn canonical_fn(
    info: ffi::duckdb_function_info,
    input: ffi::duckdb_data_chunk,
    output: ffi::duckdb_vector,
) {
    // SAFETY: DuckDB's pointers of this call.
    unsafe { scalar_call(info, input, output, canonicalize) }
}

/// `sanitize_registry(json)`: each row's registry in canonical form; NULL stays NULL.
fn canonicalize(input: &DataChunk, output: &Vector<'_>) -> Result<(), String> {
    each_text(input, output, "sanitize_registry", "registry", |text| {
        canonical_registry(text).map(Some).map_err(|e| format!("sanitize_registry: {}", e.message))
    })
}
