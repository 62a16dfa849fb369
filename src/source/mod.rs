//! Bytes in: resolving the `path` argument to the list of files to read,
//! and decoding text to UTF-8.

mod decode;
mod decompress;
mod fetch;
mod glob;
mod hive;
mod leftovers;
mod listing;
mod locate;
mod redact;
mod remote;
mod spool;

pub use decode::{head_mark, sniff_xml_encoding, HeadMark, TextDecoder, HEAD_MARK_BYTES};
pub use decompress::{compressed_mark, decompressing, decompressing_tolerant, FailureSlot};
pub use hive::{plan as plan_partitions, PartitionColumn, PartitionValue, Partitions};
pub use leftovers::{process_alive, remove_left_by_dead, Kind as LeftoverKind};
pub use listing::{identity_now, list_with_identity, Identity, Listed};
pub use locate::{locate, PathSettings};
pub use redact::{display_uri, redact_text};
pub use remote::{is_remote_scheme, parse_remote, Backend};
pub use spool::{
    is_staged, list_partition_dirs, list_tree, output_exists, remote_tail, staging_root, upload_file, Listing, Spool,
};

use std::path::Path;

use crate::error::{Result, SanitizeError};
use crate::formats::byte_source::FileOpener;
use crate::options::{Compression, InputFormat, InputMode, Options};

/// The files of one scan: local paths to read, what `source_file` shows for
/// each, and the spools that hold staged remote objects (kept alive for as
/// long as the files are read).
#[derive(Debug, Default)]
pub struct Resolved {
    pub files: Vec<String>,
    pub display: Vec<String>,
    pub spools: Vec<Spool>,
}

/// Turns the user's paths (one, a glob, or a list of either) into the files
/// to read: list order, each glob's matches sorted by path; a file named
/// twice is read once, at its first place. The format's extension is
/// checked before anything is read.
pub fn resolve(paths: &[String], options: &Options, opener: &FileOpener) -> Result<Resolved> {
    if paths.is_empty() {
        return Err(SanitizeError::options("the list of paths is empty".to_string()));
    }
    let named = paths.len() > 1 || paths.iter().any(|p| glob::is_glob(p));
    if named && options.input_mode == InputMode::Directory {
        return Err(SanitizeError::options("input_mode 'directory' reads one directory's files, and a glob or a list names the files itself; use one or the other".to_string()));
    }
    let mut out = Resolved::default();
    let mut seen = std::collections::HashSet::new();
    let mut canonical = CanonicalPaths::default();
    for path in paths {
        let one = resolve_one(path, options, opener)?;
        for (file, display) in one.files.into_iter().zip(one.display) {
            // A local file by another spelling (`./a.jsonl`) is the same file;
            // a remote one is its URI (each staged copy is new).
            let key = match one.spools.is_empty() {
                true => canonical.of(&file).map_or(display.clone(), |p| p.to_string_lossy().into_owned()),
                false => display.clone(),
            };
            if !seen.insert(key) {
                continue;
            }
            out.files.push(file);
            out.display.push(display);
        }
        out.spools.extend(one.spools);
    }
    Ok(out)
}

/// Canonical paths of local files, each directory made canonical once: a
/// file that is no symbolic link is its directory's canonical path joined
/// with its name. `std::fs::canonicalize` walks every component of the
/// path it is given; here a directory's components are walked once for
/// all its files.
#[derive(Default)]
struct CanonicalPaths {
    directories: std::collections::HashMap<std::path::PathBuf, Option<std::path::PathBuf>>,
}

impl CanonicalPaths {
    /// `std::fs::canonicalize(file)`, `None` where it fails.
    fn of(&mut self, file: &str) -> Option<std::path::PathBuf> {
        let path = Path::new(file);
        // Only a plain last name is joined as it is (`.` and `..` are not).
        let name = file.rsplit('/').next().filter(|n| !matches!(*n, "" | "." | ".."));
        let is_link = std::fs::symlink_metadata(path).ok()?.file_type().is_symlink();
        let (Some(name), false) = (name, is_link) else { return std::fs::canonicalize(path).ok() };
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let directory =
            self.directories.entry(parent.to_path_buf()).or_insert_with(|| std::fs::canonicalize(parent).ok());
        directory.as_ref().map(|d| d.join(name))
    }
}

/// One path of [`resolve`]: a file, a directory (in directory mode), a
/// local glob, or a remote object or prefix.
fn resolve_one(path: &str, options: &Options, opener: &FileOpener) -> Result<Resolved> {
    let names = Names::of(options);
    let (format, mode) = (options.input_format, options.input_mode);
    if let Some(uri) = parse_remote(path) {
        if let Some(resolved) = remote_by_duckdb(path, &uri, options, opener, &names)? {
            return Ok(resolved);
        }
        let check = |name: &str| names.check(name);
        let staged = spool::stage(&uri, format, mode, &check)?;
        return Ok(Resolved { files: staged.files, display: staged.uris, spools: vec![staged.spool] });
    }
    if remote::is_remote_scheme(path) && file_uri_path(path).is_none() {
        let scheme = path.split("://").next().unwrap_or_default();
        let path = display_uri(path);
        if remote::REMOTE_SCHEMES.contains(&scheme.to_ascii_lowercase().as_str()) {
            return Err(SanitizeError::options(format!(
                "\"{path}\" has no bucket or container (expected {scheme}://<bucket>/<key>)"
            )));
        }
        let unsupported = |why: &str| {
            SanitizeError::options(format!(
                "unsupported URI scheme \"{scheme}://\" in \"{path}\"{why}; use a local path, file://, s3://, gs://, gcs://, az://, azure://, abfs(s)://, wasb(s):// or http(s)://, or a file system registered in DuckDB"
            ))
        };
        // A scheme DuckDB's file system serves (a registered one) opens
        // there; one it does not is the same error as ever.
        if opener.serves_other_schemes() && !glob::is_glob(&path) && options.input_mode != InputMode::Directory {
            match opener.open(&path) {
                Ok(_) => {}
                // DuckDB's local file system takes a path of a scheme no
                // file system serves as a local name: not found either way.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(unsupported(&format!(
                        " (no file system registered in DuckDB serves it, or it holds no such file: {e})"
                    )));
                }
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                    return Err(SanitizeError::io(format!("cannot open file \"{path}\": {e}")));
                }
                Err(e) => return Err(unsupported(&format!(" (DuckDB's file system cannot open it either: {e})"))),
            }
        }
        if let Some(resolved) = resolve_by_duckdb(&path, options, opener, &names)? {
            return Ok(resolved);
        }
        return Err(unsupported(""));
    }
    // A file whose name holds a glob character is read by that name, as
    // DuckDB reads `[lit].jsonl`; only a path that names no file is a glob.
    let files = if glob::is_glob(path) && !Path::new(file_uri_path(path).unwrap_or(path)).exists() {
        glob_files(path, &names)?
    } else {
        resolve_files(path, &names, mode)?
    };
    let display = files.iter().map(|f| display_name(path, f)).collect();
    Ok(Resolved { files, display, spools: Vec::new() })
}

/// A remote object read through DuckDB's file system instead of
/// object_store, so that the user's DuckDB secrets, settings and
/// registered file systems apply, and it is read by range, never spooled:
/// - when an extension that serves the scheme (httpfs, azure) is loaded;
/// - or when no environment variable configures object_store for the
///   provider (an fsspec file system registered in Python, or httpfs
///   loaded on demand, may serve it), if DuckDB opens it.
///
/// Only single objects: the C API cannot list. A glob or a directory of a
/// scheme only a loaded extension should serve is an error that says how
/// to list it with `glob()`; otherwise object_store lists it, as without
/// DuckDB. `None`: object_store reads the path.
fn remote_by_duckdb(
    path: &str,
    uri: &remote::RemoteUri,
    options: &Options,
    opener: &FileOpener,
    names: &Names,
) -> Result<Option<Resolved>> {
    if !opener.serves_other_schemes() {
        return Ok(None);
    }
    let scheme = path.split("://").next().unwrap_or_default();
    let loaded = opener.serves_scheme(scheme);
    if !loaded && (uri.backend == Backend::Http || fetch::configured_by_env(uri.backend)) {
        return Ok(None);
    }
    if options.input_mode != InputMode::Directory && (uri.key.is_empty() || uri.key.ends_with('/')) {
        // Names a directory in single-file mode: the error needs no request.
        return Ok(None);
    }
    if glob::is_glob(path) || options.input_mode == InputMode::Directory {
        // Neither can list it: object_store has no configuration for the
        // provider, and the C API gives no listing of DuckDB's.
        let why = match loaded {
            true => String::new(),
            false => format!(" (no environment variable configures the extension's own {} client)", uri.backend.name()),
        };
        return Err(cannot_list(&display_uri(path), &why));
    }
    match opener.open(path) {
        Ok(_) => {
            names.check(path)?;
            let files = vec![path.to_string()];
            let display = vec![display_uri(path).into_owned()];
            Ok(Some(Resolved { files, display, spools: Vec::new() }))
        }
        // DuckDB's file system served the scheme and found no such object.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(SanitizeError::io(format!("no such file \"{}\"", display_uri(path))))
        }
        Err(e) if loaded || e.kind() == std::io::ErrorKind::PermissionDenied => Err(SanitizeError::io(format!(
            "cannot open \"{}\" through DuckDB's file system: {}",
            display_uri(path),
            redact_text(&e.to_string())
        ))),
        Err(_) => Ok(None),
    }
}

/// A path of a scheme DuckDB's file system serves and object_store does not
/// (a Python-registered fsspec file system's `memory://`, ...): one file,
/// opened through DuckDB when it is read. Globs and directories need a
/// listing, which the C API does not give an extension (it has no glob
/// call): an error that says how to list them with DuckDB's own `glob()`.
/// `None` where DuckDB serves no other scheme (the engine's tests).
fn resolve_by_duckdb(path: &str, options: &Options, opener: &FileOpener, names: &Names) -> Result<Option<Resolved>> {
    if !opener.serves_other_schemes() {
        return Ok(None);
    }
    if glob::is_glob(path) || options.input_mode == InputMode::Directory {
        return Err(cannot_list(path, ""));
    }
    names.check(path)?;
    let files = vec![path.to_string()];
    Ok(Some(Resolved { display: files.clone(), files, spools: Vec::new() }))
}

/// A glob or directory only DuckDB's file system could list: the C API has
/// no listing, so the message says how to list it with DuckDB's `glob()`.
fn cannot_list(path: &str, why: &str) -> SanitizeError {
    SanitizeError::options(format!(
        "\"{path}\" is a glob or a directory of a file system only DuckDB serves{why}, and an extension cannot list one; list it with DuckDB's glob(): SET VARIABLE files = (SELECT list(file) FROM glob('{path}')), then pass getvariable('files')"
    ))
}

/// The files a local glob matches that the format takes; none is an error
/// naming the pattern (and the extension, when files matched without it).
fn glob_files(path: &str, names: &Names) -> Result<Vec<String>> {
    let pattern = file_uri_path(path).unwrap_or(path);
    let matched = glob::expand(pattern).map_err(|e| SanitizeError::options(e.to_string()))?;
    if matched.is_empty() {
        return Err(SanitizeError::io(format!("no file matches \"{path}\"")));
    }
    let n = matched.len();
    let files: Vec<String> = matched.into_iter().filter(|f| names.takes(f)).collect();
    if files.is_empty() {
        return Err(SanitizeError::options(format!(
            "{n} file(s) match \"{path}\" but none has the extension input_format '{}' requires ({}); pass validate_extension := false to read them anyway",
            names.format.name(),
            names.format.extensions().join(" or ")
        )));
    }
    Ok(files)
}

/// Which file names a scan takes: the format's extensions, after a
/// compression suffix, unless `validate_extension` is off.
#[derive(Clone, Debug)]
pub struct Names {
    format: InputFormat,
    compression: Compression,
    validate: bool,
}

impl Names {
    pub fn of(options: &Options) -> Names {
        Names { format: options.input_format, compression: options.compression, validate: options.validate_extension }
    }

    /// The name without the suffix of the compression it is read with.
    fn without_compression<'a>(&self, name: &'a str) -> &'a str {
        let lower = name.to_ascii_lowercase();
        let suffix = match self.compression.of_file(name) {
            Compression::Gzip if lower.ends_with(".gz") => 3,
            Compression::Zstd if lower.ends_with(".zst") => 4,
            _ => 0,
        };
        &name[..name.len() - suffix]
    }

    pub fn takes(&self, name: &str) -> bool {
        !self.validate || has_extension(self.without_compression(name), self.format)
    }

    /// Refuses a name the format does not take, before anything is read:
    /// the extension found is the one under any compression suffix, the
    /// file is named as the user wrote it.
    fn check(&self, name: &str) -> Result<()> {
        if self.takes(name) {
            return Ok(());
        }
        let extension = Path::new(self.without_compression(name)).extension().map(|e| e.to_string_lossy());
        // A compression this reader does not know: say so, not that the
        // format wants another extension.
        let unknown_codec = extension.as_deref().map(str::to_ascii_lowercase).filter(|e| {
            matches!(e.as_str(), "bz2" | "bz" | "xz" | "lz4" | "lzma" | "zip" | "7z" | "br" | "snappy" | "lzo" | "z")
        });
        if let Some(codec) = unknown_codec {
            return Err(SanitizeError::options(format!(
                "\"{name}\" is a .{codec} file, and this reader decompresses gzip (.gz) and zstd (.zst) only; decompress it first"
            )));
        }
        let format = self.format.name();
        // Where the file's extension has a reader of its own, name it: the
        // file is more likely in that format than misnamed.
        let lower = extension.as_deref().map(str::to_ascii_lowercase);
        let owner = InputFormat::NAMES
            .iter()
            .filter(|(_, f)| *f != self.format && lower.as_ref().is_some_and(|e| has_extension(&format!("x.{e}"), *f)))
            .map(|(n, _)| format!("sanitize_{n}"))
            .collect::<Vec<_>>();
        let found = extension.map(|e| format!(".{e}")).unwrap_or_else(|| "no extension".into());
        let reader = match owner.as_slice() {
            [] => String::new(),
            [one] => format!("{one} reads {found} files; "),
            many => format!("{} read {found} files; ", many.join(" and ")),
        };
        let tabs = if self.format == InputFormat::Csv && lower.as_deref() == Some("tsv") {
            " (with csv_delimiter := '\\t' for its tabs)"
        } else {
            ""
        };
        Err(SanitizeError::options(format!(
            "input_format '{format}' requires {}, not {found} (\"{name}\"); {reader}pass validate_extension := false to read it as {format} anyway{tabs}",
            self.format.extensions().join(" or ")
        )))
    }
}

/// The local files of a local path (see [`resolve`]).
pub fn resolve_files(path: &str, names: &Names, mode: InputMode) -> Result<Vec<String>> {
    let format = names.format;
    if path.is_empty() {
        return Err(SanitizeError::options("the path argument is empty".to_string()));
    }
    let local = file_uri_path(path).unwrap_or(path);
    match mode {
        InputMode::SingleFile => {
            let p = Path::new(local);
            if p.is_dir() {
                return Err(SanitizeError::options(format!(
                    "\"{path}\" is a directory; pass input_mode := 'directory' to read its files"
                )));
            }
            names.check(local)?;
            if !p.exists() {
                return Err(SanitizeError::io(format!("no such file \"{path}\"")));
            }
            Ok(vec![local.to_string()])
        }
        InputMode::Directory => {
            let dir = Path::new(local);
            let entries = std::fs::read_dir(dir)
                .map_err(|e| SanitizeError::io(format!("cannot list directory \"{path}\": {e}")))?;
            let mut files = Vec::new();
            for entry in entries {
                let entry = entry.map_err(|e| SanitizeError::io(format!("cannot list directory \"{path}\": {e}")))?;
                let p = entry.path();
                if p.is_file() && names.takes(&p.to_string_lossy()) {
                    files.push(p.to_string_lossy().into_owned());
                }
            }
            files.sort();
            if files.is_empty() {
                return Err(SanitizeError::input(format!(
                    "directory \"{path}\" has no {} files (direct children only, never recursive)",
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

#[cfg(test)]
mod tests {
    /// Canonical paths through a directory's once-made canonical path are
    /// `std::fs::canonicalize`'s: relative, `..`, `.`, a linked file, a
    /// file in a linked directory, a link to a link, a missing file.
    #[cfg(unix)]
    #[test]
    fn canonical_paths_made_per_directory_are_the_file_systems_own() {
        let root = crate::test_support::scratch_dir("canonical");
        let real = root.join("real");
        std::fs::create_dir_all(real.join("sub")).unwrap();
        std::fs::write(real.join("a.jsonl"), "{}").unwrap();
        std::fs::write(real.join("sub/b.jsonl"), "{}").unwrap();
        std::os::unix::fs::symlink(real.join("a.jsonl"), real.join("link.jsonl")).unwrap();
        std::os::unix::fs::symlink(real.join("link.jsonl"), real.join("link2.jsonl")).unwrap();
        std::os::unix::fs::symlink(&real, root.join("linked_dir")).unwrap();
        let r = root.to_string_lossy();
        let paths = [
            format!("{r}/real/a.jsonl"),
            format!("{r}/real/./a.jsonl"),
            format!("{r}/real/sub/../a.jsonl"),
            format!("{r}/real/sub/b.jsonl"),
            format!("{r}/real/link.jsonl"),
            format!("{r}/real/link2.jsonl"),
            format!("{r}/linked_dir/a.jsonl"),
            format!("{r}/linked_dir/sub/b.jsonl"),
            format!("{r}/real/sub/.."),
            format!("{r}/real/missing.jsonl"),
            "Cargo.toml".to_string(),
            "./src/../Cargo.toml".to_string(),
        ];
        let mut canonical = super::CanonicalPaths::default();
        for path in &paths {
            assert_eq!(canonical.of(path), std::fs::canonicalize(path).ok(), "{path}");
        }
        let _ = std::fs::remove_dir_all(&root);
    }

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

    fn names(format: InputFormat, set: impl Fn(&mut Options)) -> Names {
        let mut o = Options::defaults(format);
        set(&mut o);
        Names::of(&o)
    }

    #[test]
    fn a_compression_this_reader_lacks_is_named_as_such() {
        let xml = names(InputFormat::Xml, |_| {});
        for name in ["cars.xml.bz2", "cars.xml.XZ", "cars.zip"] {
            let e = resolve_files(name, &xml, InputMode::SingleFile).unwrap_err();
            assert!(e.message.contains("this reader decompresses gzip (.gz) and zstd (.zst) only"), "{e}");
            assert!(!e.message.contains("requires"), "{e}");
        }
    }

    #[test]
    fn messages_about_a_uri_show_no_credentials_or_signature() {
        let jsonl = Options::defaults(InputFormat::Jsonl);
        let mut directory = Options::defaults(InputFormat::Jsonl);
        directory.input_mode = InputMode::Directory;
        // Each is refused before any request.
        for (path, options) in [
            ("ftp://reader:s3cret@h/x.jsonl", &jsonl),
            ("s3://reader:s3cret@/x.jsonl", &jsonl),
            ("http://reader:s3cret@127.0.0.1:9/raw?sig=s3cret", &directory),
            ("http://reader:s3cret@127.0.0.1:9/raw/*.jsonl?sig=s3cret", &jsonl),
            ("http://reader:s3cret@127.0.0.1:9/raw/x.csv?sig=s3cret", &jsonl),
        ] {
            let e = resolve(&[path.to_string()], options, &FileOpener::default()).unwrap_err();
            assert!(!e.message.contains("s3cret"), "{path}: {e}");
            // The name is the boundary's to add (scan::plan_with), once.
            let named = e.in_function("sanitize_jsonl").message;
            assert_eq!(named.matches("sanitize_jsonl").count(), 1, "{named}");
        }
    }

    #[test]
    fn extension_is_checked_before_reading() {
        let jsonl = names(InputFormat::Jsonl, |_| {});
        let e = resolve_files("events.ndjson", &jsonl, InputMode::SingleFile).unwrap_err();
        assert!(e.message.contains("requires .jsonl, not .ndjson"), "{e}");
        let parquet = names(InputFormat::Parquet, |_| {});
        let e = resolve_files("x.csv", &parquet, InputMode::SingleFile).unwrap_err();
        assert!(e.message.contains(".parquet or .pq"), "{e}");
        // The way out, and the function that reads the extension found.
        let e = resolve_files("events.json", &jsonl, InputMode::SingleFile).unwrap_err();
        assert!(
            e.message.ends_with(
                "requires .jsonl, not .json (\"events.json\"); sanitize_json and sanitize_json_array read .json files; pass validate_extension := false to read it as jsonl anyway"
            ),
            "{e}"
        );
        let e = resolve_files("x.csv", &parquet, InputMode::SingleFile).unwrap_err();
        assert!(e.message.contains("sanitize_csv reads .csv files; pass validate_extension := false"), "{e}");
        let csv = names(InputFormat::Csv, |_| {});
        let e = resolve_files("rows.tsv", &csv, InputMode::SingleFile).unwrap_err();
        assert!(
            e.message.ends_with(
                "pass validate_extension := false to read it as csv anyway (with csv_delimiter := '\\t' for its tabs)"
            ),
            "{e}"
        );
        let e = resolve_files("notes", &csv, InputMode::SingleFile).unwrap_err();
        assert!(
            e.message
                .ends_with("not no extension (\"notes\"); pass validate_extension := false to read it as csv anyway"),
            "{e}"
        );
    }

    #[test]
    fn a_compression_suffix_is_read_past_and_validation_can_be_off() {
        let jsonl = names(InputFormat::Jsonl, |_| {});
        assert!(jsonl.takes("a.jsonl.gz") && jsonl.takes("a.JSONL.ZST") && jsonl.takes("a.jsonl"));
        assert!(!jsonl.takes("a.json.gz") && !jsonl.takes("a.gz"));
        let e = jsonl.check("a.csv.gz").unwrap_err();
        assert!(e.message.contains("not .csv"), "{e}");
        // Forced gzip: only .gz is its suffix; 'none' reads names as they are.
        assert!(!names(InputFormat::Jsonl, |o| o.compression = Compression::Gzip).takes("a.jsonl.zst"));
        assert!(!names(InputFormat::Jsonl, |o| o.compression = Compression::None).takes("a.jsonl.gz"));
        let any = names(InputFormat::Csv, |o| o.validate_extension = false);
        assert!(any.takes("rows.tsv") && any.takes("notes.txt"));
    }
}
