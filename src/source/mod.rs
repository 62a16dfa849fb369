//! Bytes in: resolving the `path` argument to the list of files to read,
//! and decoding text to UTF-8.

mod decode;

pub use decode::{TextDecoder, TextEncoding};

use std::path::Path;

use crate::error::{Result, SanitizeError};
use crate::options::{InputFormat, InputMode};

const REMOTE_SCHEMES: [&str; 11] = [
    "s3://", "gs://", "gcs://", "abfs://", "abfss://", "az://", "azure://", "wasb://", "wasbs://", "http://",
    "https://",
];

/// Turns the user's path into the files to read, in deterministic order,
/// checking the format's extension before anything is read.
pub fn resolve_files(function: &str, path: &str, format: InputFormat, mode: InputMode) -> Result<Vec<String>> {
    if path.is_empty() {
        return Err(SanitizeError::options(format!("{function}: the path argument is empty")));
    }
    if let Some(scheme) = REMOTE_SCHEMES.iter().find(|s| path.to_ascii_lowercase().starts_with(**s)) {
        return Err(SanitizeError::options(format!(
            "{function}: remote paths ({scheme}) are not supported by this build yet (see docs/status.md): \"{path}\""
        )));
    }
    let local = path.strip_prefix("file://").unwrap_or(path);
    match mode {
        InputMode::SingleFile => {
            let p = Path::new(local);
            if p.is_dir() {
                return Err(SanitizeError::options(format!(
                    "{function}: \"{path}\" is a directory; pass input_mode := 'directory' to read its files"
                )));
            }
            check_extension(function, local, format)?;
            if !p.exists() {
                return Err(SanitizeError::io(format!("{function}: no such file \"{path}\"")));
            }
            Ok(vec![local.to_string()])
        }
        InputMode::Directory => {
            let dir = Path::new(local);
            let entries = std::fs::read_dir(dir)
                .map_err(|e| SanitizeError::io(format!("{function}: cannot list directory \"{path}\": {e}")))?;
            let mut files = Vec::new();
            for entry in entries {
                let entry = entry
                    .map_err(|e| SanitizeError::io(format!("{function}: cannot list directory \"{path}\": {e}")))?;
                let p = entry.path();
                if p.is_file() && has_extension(&p.to_string_lossy(), format) {
                    files.push(p.to_string_lossy().into_owned());
                }
            }
            files.sort();
            if files.is_empty() {
                return Err(SanitizeError::input(format!(
                    "{function}: directory \"{path}\" has no {} files (direct children only, never recursive)",
                    format.extensions().join(" or ")
                )));
            }
            Ok(files)
        }
    }
}

fn has_extension(path: &str, format: InputFormat) -> bool {
    let lower = path.to_ascii_lowercase();
    format.extensions().iter().any(|e| lower.ends_with(e))
}

fn check_extension(function: &str, path: &str, format: InputFormat) -> Result<()> {
    if has_extension(path, format) {
        return Ok(());
    }
    let found = Path::new(path)
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_else(|| "no extension".into());
    Err(SanitizeError::options(format!(
        "{function}: input_format '{}' requires {}, not {found} (\"{path}\")",
        format.name(),
        format.extensions().join(" or ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extension_is_checked_before_reading() {
        let e =
            resolve_files("sanitize_jsonl", "events.ndjson", InputFormat::Jsonl, InputMode::SingleFile).unwrap_err();
        assert!(e.message.contains("requires .jsonl, not .ndjson"), "{e}");
        let e = resolve_files("sanitize_parquet", "x.csv", InputFormat::Parquet, InputMode::SingleFile).unwrap_err();
        assert!(e.message.contains(".parquet or .pq"), "{e}");
    }
}
