//! Bytes in: resolving the `path` argument to the list of files to read,
//! and decoding text to UTF-8.

mod decode;
mod fetch;
mod remote;
mod spool;

pub use decode::{sniff_xml_encoding, TextDecoder};
pub use remote::parse_remote;
pub use spool::Spool;

use std::path::Path;

use crate::error::{Result, SanitizeError};
use crate::options::{InputFormat, InputMode};

/// The files of one scan: local paths to read, what `source_file` shows for
/// each, and the spool that holds staged remote objects (kept alive for as
/// long as the files are read).
#[derive(Debug)]
pub struct Resolved {
    pub files: Vec<String>,
    pub display: Vec<String>,
    pub spool: Option<Spool>,
}

/// Turns the user's path into the files to read, in deterministic order,
/// checking the format's extension before anything is read. Remote objects
/// are listed and staged into a local spool first.
pub fn resolve(function: &str, path: &str, format: InputFormat, mode: InputMode) -> Result<Resolved> {
    if let Some(uri) = parse_remote(path) {
        let check = |name: &str| check_extension(function, name, format);
        let staged = spool::stage(function, &uri, format, mode, &check)?;
        return Ok(Resolved { files: staged.files, display: staged.uris, spool: Some(staged.spool) });
    }
    if remote::is_remote_scheme(path) && file_uri_path(path).is_none() {
        let scheme = path.split("://").next().unwrap_or_default();
        if remote::REMOTE_SCHEMES.contains(&scheme.to_ascii_lowercase().as_str()) {
            return Err(SanitizeError::options(format!(
                "{function}: \"{path}\" has no bucket or container (expected {scheme}://<bucket>/<key>)"
            )));
        }
        return Err(SanitizeError::options(format!(
            "{function}: unsupported URI scheme \"{scheme}://\" in \"{path}\"; use a local path, file://, s3://, gs://, gcs://, az://, azure://, abfs(s)://, wasb(s):// or http(s)://"
        )));
    }
    let files = resolve_files(function, path, format, mode)?;
    let display = files.iter().map(|f| display_name(path, f)).collect();
    Ok(Resolved { files, display, spool: None })
}

/// The local files of a local path (see [`resolve`]).
pub fn resolve_files(function: &str, path: &str, format: InputFormat, mode: InputMode) -> Result<Vec<String>> {
    if path.is_empty() {
        return Err(SanitizeError::options(format!("{function}: the path argument is empty")));
    }
    let local = file_uri_path(path).unwrap_or(path);
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

/// The local path of a `file://` URI (`file:///data/x.csv`,
/// `file://localhost/data/x.csv`, any case of the scheme), or `None`.
pub fn file_uri_path(path: &str) -> Option<&str> {
    let rest = path.get(..7).filter(|s| s.eq_ignore_ascii_case("file://")).map(|_| &path[7..])?;
    Some(rest.strip_prefix("localhost").filter(|r| r.starts_with('/')).unwrap_or(rest))
}

/// What `source_file` shows for a file read from `local`: a `file://` URI
/// when the user gave one, else the path itself.
pub fn display_name(user_path: &str, local: &str) -> String {
    if file_uri_path(user_path).is_some() {
        format!("file://{local}")
    } else {
        local.to_string()
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
    fn file_uris() {
        assert_eq!(file_uri_path("file:///data/x.csv"), Some("/data/x.csv"));
        assert_eq!(file_uri_path("FILE:///data/x.csv"), Some("/data/x.csv"));
        assert_eq!(file_uri_path("file://localhost/data/x.csv"), Some("/data/x.csv"));
        assert_eq!(file_uri_path("/data/x.csv"), None);
        assert_eq!(display_name("file:///d", "/d/a.csv"), "file:///d/a.csv");
        assert_eq!(display_name("d", "d/a.csv"), "d/a.csv");
    }

    #[test]
    fn extension_is_checked_before_reading() {
        let e =
            resolve_files("sanitize_jsonl", "events.ndjson", InputFormat::Jsonl, InputMode::SingleFile).unwrap_err();
        assert!(e.message.contains("requires .jsonl, not .ndjson"), "{e}");
        let e = resolve_files("sanitize_parquet", "x.csv", InputFormat::Parquet, InputMode::SingleFile).unwrap_err();
        assert!(e.message.contains(".parquet or .pq"), "{e}");
    }
}
