//! Staging remote objects into local files (the "spool", docs/remote.md): every
//! remote input is downloaded once, at bind, streamed to a private temporary
//! directory, and then read by the same local readers as any file. The probe
//! and the scan read the staged copy, so nothing is downloaded twice, and
//! memory stays that of one network buffer per download. The directory is
//! removed when the scan's plan is dropped.
//!
//! The storage backends (one object_store client per scheme, with each
//! provider's environment variables and credential chain, and a GCS
//! emulator's JSON API) and the tuning variables live in source/fetch.rs.

use std::path::{Path, PathBuf};

use futures::{StreamExt, TryStreamExt};

use super::fetch::{DownloadError, Settings, Store};
use super::remote::{Backend, RemoteUri};
use crate::error::{Result, SanitizeError};
use crate::options::{InputFormat, InputMode};

/// An I/O error whose text may quote a storage client's message (which
/// may name the request's URL, query included): every URI in it is shown
/// without its secrets (source/redact.rs).
fn io_error(message: String) -> SanitizeError {
    SanitizeError::io(super::redact_text(&message).into_owned())
}

/// A private temporary directory holding staged objects; removed on drop.
#[derive(Debug)]
pub struct Spool {
    dir: PathBuf,
}

impl Drop for Spool {
    fn drop(&mut self) {
        live_spools().remove(&self.dir);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The spool directories this process made and still holds: the one place
/// whose files the extension reads with `std::fs` (its own staged copies),
/// not through DuckDB's file system.
fn live_spools() -> std::sync::MutexGuard<'static, std::collections::HashSet<PathBuf>> {
    static LIVE: std::sync::OnceLock<std::sync::Mutex<std::collections::HashSet<PathBuf>>> = std::sync::OnceLock::new();
    LIVE.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether `path` is a staged copy in a live spool of this process.
pub fn is_staged(path: &str) -> bool {
    let path = std::path::Path::new(path);
    live_spools().iter().any(|dir| path.starts_with(dir))
}

/// Remote inputs staged locally: `files[i]` is the local copy of `uris[i]`.
#[derive(Debug)]
pub struct Staged {
    pub files: Vec<String>,
    pub uris: Vec<String>,
    pub spool: Spool,
}

/// Lists (directory mode, or a glob) and downloads the remote input.
/// `check_name` validates a file name's extension before anything is
/// downloaded.
pub fn stage(
    uri: &RemoteUri,
    format: InputFormat,
    mode: InputMode,
    check_name: &dyn Fn(&str) -> Result<()>,
) -> Result<Staged> {
    let settings = Settings::from_env();
    // Messages never show a URL's query: it may hold a signature.
    let user_path = &uri.object_uri(&uri.key);
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        io_error(format!("cannot {what} \"{user_path}\" ({}): {e}", uri.backend.name()))
    };
    // Everything that needs no request is decided first: the mode, the
    // extension, the HTTP listing refusal, the glob's syntax.
    let glob = if super::glob::is_glob(&uri.key) {
        if uri.backend == Backend::Http {
            return Err(SanitizeError::options(format!(
                "globs are not supported for http(s):// paths: HTTP has no portable listing (\"{user_path}\")"
            )));
        }
        Some(super::glob::matcher(&uri.key).map_err(|e| SanitizeError::options(e.to_string()))?)
    } else {
        None
    };
    match mode {
        _ if glob.is_some() => {}
        InputMode::SingleFile => {
            if uri.key.is_empty() || uri.key.ends_with('/') {
                return Err(SanitizeError::options(format!(
                    "\"{user_path}\" names a directory; pass input_mode := 'directory' to read its files"
                )));
            }
            check_name(&uri.key)?;
        }
        InputMode::Directory if uri.backend == Backend::Http => {
            return Err(SanitizeError::options(format!(
                "input_mode 'directory' is not supported for http(s):// paths: HTTP has no portable directory listing (\"{user_path}\")"
            )));
        }
        InputMode::Directory => {}
    }
    let source = Store::new(uri, &settings).map_err(|e| fail("open", &e))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| fail("start the download runtime for", &e))?;
    let keys: Vec<String> = match mode {
        // A glob lists every key below its literal prefix, at any depth,
        // and keeps the matches: sorted by key, byte order, as local globs.
        _ if glob.is_some() => {
            let matcher = glob.as_ref().expect("checked above");
            let prefix = super::glob::literal_prefix(&uri.key);
            let matched: Vec<String> = runtime
                .block_on(source.list(&prefix, super::glob::needs_recursion(&uri.key)))
                .map_err(|e| fail("list", &e))?
                .into_iter()
                .filter(|k| matcher.is_match(k))
                .collect();
            if matched.is_empty() {
                return Err(io_error(format!("no file matches \"{user_path}\"")));
            }
            let n = matched.len();
            let mut keys: Vec<String> = matched.into_iter().filter(|k| check_name(k).is_ok()).collect();
            keys.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
            if keys.is_empty() {
                return Err(SanitizeError::options(format!(
                    "{n} file(s) match \"{user_path}\" but none has the extension input_format '{}' requires ({}); pass validate_extension := false to read them anyway",
                    format.name(),
                    format.extensions().join(" or ")
                )));
            }
            keys
        }
        InputMode::SingleFile => vec![uri.key.clone()],
        InputMode::Directory => {
            let prefix = uri.key.trim_end_matches('/');
            let mut keys: Vec<String> = runtime
                .block_on(source.list(prefix, false))
                .map_err(|e| fail("list", &e))?
                .into_iter()
                .filter(|k| check_name(k).is_ok())
                .collect();
            keys.sort();
            if keys.is_empty() {
                return Err(SanitizeError::input(format!(
                    "directory \"{user_path}\" has no {} files (direct children only, never recursive)",
                    format.extensions().join(" or ")
                )));
            }
            keys
        }
    };
    let spool = new_spool(&settings.spool_root).map_err(|e| fail("create a spool directory for", &e))?;
    let files: Vec<PathBuf> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| spool.dir.join(format!("{i:06}_{}", k.rsplit('/').next().unwrap_or(k))))
        .collect();
    let downloads = keys.iter().zip(&files).map(|(key, file)| source.download(key, file));
    runtime
        .block_on(futures::stream::iter(downloads).buffer_unordered(settings.concurrency).try_collect::<Vec<()>>())
        .map_err(|(key, e)| {
            let shown = uri.object_uri(&key);
            match e {
                // The store's message carries the whole response body; the URI says enough.
                DownloadError::Store(object_store::Error::NotFound { .. }) | DownloadError::NotFound => {
                    io_error(format!("no such file \"{shown}\" ({})", uri.backend.name()))
                }
                e => io_error(format!("cannot download \"{shown}\" ({}): {e}", uri.backend.name())),
            }
        })?;
    Ok(Staged {
        files: files.iter().map(|f| f.to_string_lossy().into_owned()).collect(),
        uris: keys.iter().map(|k| uri.object_uri(k)).collect(),
        spool,
    })
}

/// A new directory only this process's user can read, created exclusively
/// (never an existing one someone else prepared). The first spool of a
/// process first removes the spools that processes no longer alive left
/// (a run killed midway keeps its copies otherwise).
fn new_spool(root: &Path) -> std::io::Result<Spool> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static SWEPT: std::sync::Once = std::sync::Once::new();
    std::fs::create_dir_all(root)?;
    SWEPT.call_once(|| {
        super::leftovers::remove_left_by_dead(
            root,
            spool_pid,
            super::leftovers::Kind::Dir,
            super::leftovers::process_alive,
        );
    });
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = root.join(format!("schema_sanitizer-{}-{n}-{nanos:08x}", std::process::id()));
        match builder.create(&dir) {
            Ok(()) => {
                live_spools().insert(dir.clone());
                return Ok(Spool { dir });
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// The pid in a spool directory's name (`schema_sanitizer-<pid>-<n>-<hex>`).
fn spool_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("schema_sanitizer-")?;
    let parts: Vec<&str> = rest.split('-').collect();
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    let hex = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_hexdigit());
    if parts.len() != 3 || !digits(parts[0]) || !digits(parts[1]) || !hex(parts[2]) {
        return None;
    }
    parts[0].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spools_of_processes_gone_are_removed_and_nothing_else() {
        let root = std::env::temp_dir().join(format!("ss-stale-spools-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        for name in ["schema_sanitizer-11-0-ab", "schema_sanitizer-22-1-cd", "schema_sanitizer-x-0-ab", "other"] {
            std::fs::create_dir_all(root.join(name)).unwrap();
            std::fs::write(root.join(name).join("000000_f0.jsonl"), b"{}").unwrap();
        }
        // 11 is gone, 22 alive.
        let removed =
            super::super::leftovers::remove_left_by_dead(&root, spool_pid, super::super::leftovers::Kind::Dir, |pid| {
                Some(pid == 22)
            });
        assert_eq!(removed, vec![root.join("schema_sanitizer-11-0-ab")]);
        for kept in ["schema_sanitizer-22-1-cd", "schema_sanitizer-x-0-ab", "other"] {
            assert!(root.join(kept).exists(), "{kept}");
        }
        // Not known whether alive: nothing goes.
        assert!(super::super::leftovers::remove_left_by_dead(
            &root,
            spool_pid,
            super::super::leftovers::Kind::Dir,
            |_| None
        )
        .is_empty());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_spool_is_private_new_and_removed() {
        let root = std::env::temp_dir().join(format!("ss-spool-test-{}", std::process::id()));
        let a = new_spool(&root).unwrap();
        let b = new_spool(&root).unwrap();
        assert_ne!(a.dir, b.dir);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&a.dir).unwrap().permissions().mode() & 0o777, 0o700);
        }
        let dir = a.dir.clone();
        drop(a);
        assert!(!dir.exists());
        drop(b);
        let _ = std::fs::remove_dir_all(&root);
    }
}

/// What one partition directory holds (sanitize_partitions): its direct
/// children's names and sizes.
#[derive(Debug, Default)]
pub struct Listing {
    pub files: Vec<(String, u64)>,
}

/// Lists each directory (local, `file://` or remote, ending with `/`):
/// `None` for one that does not exist (remote: nothing at all below the
/// prefix). Remote listings run concurrently, bounded by
/// `SCHEMA_SANITIZER_ASYNC_CONCURRENCY`.
pub fn list_partition_dirs(dirs: &[String]) -> Result<Vec<Option<Listing>>> {
    let mut out: Vec<Option<Listing>> = Vec::with_capacity(dirs.len());
    let mut remote: Vec<(usize, RemoteUri)> = Vec::new();
    for (i, dir) in dirs.iter().enumerate() {
        out.push(None);
        if let Some(uri) = super::parse_remote(dir) {
            if uri.backend == Backend::Http {
                return Err(SanitizeError::options(format!(
                    "http(s):// prefixes cannot be listed (HTTP has no portable listing): \"{}\"",
                    super::display_uri(dir)
                )));
            }
            remote.push((i, uri));
            continue;
        }
        let local = super::file_uri_path(dir).unwrap_or(dir);
        let cannot = |e: std::io::Error| io_error(format!("cannot list directory \"{dir}\": {e}"));
        // Only a directory that is not there is "missing"; any other failure
        // (permissions, I/O) is an error, never a partition shown as empty.
        let entries = match std::fs::read_dir(local) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(cannot(e)),
        };
        let mut listing = Listing::default();
        for entry in entries {
            let entry = entry.map_err(cannot)?;
            // Followed through a symbolic link, as directory mode and
            // DuckDB's globs read a linked file (DirEntry::metadata would
            // see the link, and the partition would look empty).
            let meta = std::fs::metadata(entry.path()).map_err(cannot)?;
            if meta.is_file() {
                listing.files.push((entry.path().to_string_lossy().into_owned(), meta.len()));
            }
        }
        out[i] = Some(listing);
    }
    if remote.is_empty() {
        return Ok(out);
    }
    let settings = Settings::from_env();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| io_error(format!("cannot start the listing runtime: {e}")))?;
    let listings = remote.iter().map(|(i, uri)| {
        let settings = &settings;
        async move {
            let shown = uri.object_uri(&uri.key);
            let fail = |e: String| io_error(format!("cannot list \"{shown}\" ({}): {e}", uri.backend.name()));
            let store = Store::new(uri, settings).map_err(fail)?;
            let sized = store.list_sized(uri.key.trim_end_matches('/'), false).await.map_err(fail)?;
            let listing = sized.any_below.then(|| Listing {
                files: sized.objects.into_iter().map(|(key, size)| (uri.object_uri(&key), size)).collect(),
            });
            Ok::<_, SanitizeError>((*i, listing))
        }
    });
    let done: Vec<(usize, Option<Listing>)> = runtime
        .block_on(futures::stream::iter(listings).buffer_unordered(settings.concurrency).try_collect::<Vec<_>>())?;
    for (i, listing) in done {
        out[i] = listing;
    }
    Ok(out)
}

/// Every file below a prefix, at any depth (sanitize_latest_registry): local
/// paths walked, remote keys listed (never downloaded). Empty when the
/// prefix does not exist.
pub fn list_tree(prefix: &str) -> Result<Vec<String>> {
    let Some(uri) = super::parse_remote(prefix) else {
        let local = super::file_uri_path(prefix).unwrap_or(prefix);
        let mut out = Vec::new();
        let mut pending = vec![PathBuf::from(local)];
        let mut walked = std::collections::HashSet::new();
        while let Some(dir) = pending.pop() {
            if !walked.insert(std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone())) {
                continue;
            }
            let cannot = |e: std::io::Error| io_error(format!("cannot list directory \"{}\": {e}", dir.display()));
            // A prefix that does not exist has no files; an unreadable
            // directory below it is an error, not a silently older answer.
            let entries = match std::fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(cannot(e)),
            };
            for entry in entries {
                let entry = entry.map_err(cannot)?;
                // Links followed, as for partitions; a directory reached
                // twice (a link cycle) is walked once.
                match std::fs::metadata(entry.path()) {
                    Ok(m) if m.is_dir() => pending.push(entry.path()),
                    Ok(m) if m.is_file() => out.push(entry.path().to_string_lossy().into_owned()),
                    _ => {}
                }
            }
        }
        return Ok(out);
    };
    if uri.backend == Backend::Http {
        return Err(SanitizeError::options(format!(
            "http(s):// prefixes cannot be listed (HTTP has no portable listing): \"{}\"",
            uri.object_uri(&uri.key)
        )));
    }
    let settings = Settings::from_env();
    let shown = uri.object_uri(&uri.key);
    let fail = |e: &dyn std::fmt::Display| io_error(format!("cannot list \"{shown}\" ({}): {e}", uri.backend.name()));
    let store = Store::new(&uri, &settings).map_err(|e| fail(&e))?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| fail(&e))?;
    let keys = runtime.block_on(store.list(uri.key.trim_end_matches('/'), true)).map_err(|e| fail(&e))?;
    Ok(keys.iter().map(|k| uri.object_uri(k)).collect())
}

/// The last `n` bytes of a remote object (a Parquet footer), or `None` for
/// a local path. Nothing else of the object is downloaded.
pub fn remote_tail(path: &str, n: u64) -> Result<Option<Vec<u8>>> {
    let Some(uri) = super::parse_remote(path) else { return Ok(None) };
    let settings = Settings::from_env();
    let shown = uri.object_uri(&uri.key);
    let fail = |e: &dyn std::fmt::Display| io_error(format!("cannot read \"{shown}\" ({}): {e}", uri.backend.name()));
    let store = Store::new(&uri, &settings).map_err(|e| fail(&e))?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| fail(&e))?;
    match runtime.block_on(store.tail(&uri.key, n)) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(DownloadError::Store(object_store::Error::NotFound { .. }) | DownloadError::NotFound) => {
            Err(io_error(format!("no such file \"{shown}\" ({})", uri.backend.name())))
        }
        Err(e) => Err(fail(&e)),
    }
}

/// Where outputs bound for an object store are staged before their upload:
/// `SCHEMA_SANITIZER_SPOOL_DIR`, else the system's temporary directory.
pub fn staging_root() -> PathBuf {
    Settings::from_env().spool_root
}

/// A remote URI with a store for it, and a runtime to drive its requests.
fn remote_store(uri: &RemoteUri) -> Result<(Store, tokio::runtime::Runtime, Settings)> {
    let settings = Settings::from_env();
    let shown = uri.object_uri(&uri.key);
    let fail = |e: &dyn std::fmt::Display| io_error(format!("cannot reach \"{shown}\" ({}): {e}", uri.backend.name()));
    if uri.backend == Backend::Http {
        return Err(SanitizeError::options(format!(
            "http(s):// URLs cannot be written (\"{shown}\"); write to a local path, s3://, gs:// or az://"
        )));
    }
    let store = Store::new(uri, &settings).map_err(|e| fail(&e))?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| fail(&e))?;
    Ok((store, runtime, settings))
}

/// Uploads the local file `local` to the object-store URI `uri`, atomically
/// (fetch.rs `Store::upload`).
pub fn upload_file(local: &Path, uri: &str) -> Result<()> {
    let Some(remote) = super::parse_remote(uri) else {
        return Err(SanitizeError::internal(format!("an upload to a local path \"{uri}\"")));
    };
    let (store, runtime, settings) = remote_store(&remote)?;
    runtime.block_on(store.upload(&remote.key, local, settings.concurrency)).map_err(|e| {
        io_error(format!("cannot upload \"{}\" ({}): {e}", remote.object_uri(&remote.key), remote.backend.name()))
    })
}

/// Whether a file exists at a local path, `file://` URI or object-store URI.
pub fn output_exists(path: &str) -> Result<bool> {
    let Some(remote) = super::parse_remote(path) else {
        return Ok(Path::new(super::file_uri_path(path).unwrap_or(path)).exists());
    };
    let (store, runtime, _) = remote_store(&remote)?;
    runtime.block_on(store.exists(&remote.key)).map_err(|e| {
        io_error(format!("cannot look up \"{}\" ({}): {e}", remote.object_uri(&remote.key), remote.backend.name()))
    })
}
