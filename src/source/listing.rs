//! A source listed with each file's identity, without reading any file
//! (sanitize_ingest): the same paths the scans resolve (a file, a folder,
//! a glob, or a list of them), each file named by its absolute canonical
//! path and identified by its size and modification time, so that a later
//! listing can tell a file already taken from a new one, and a file
//! rewritten in place from one left alone.
//!
//! Remote sources (`s3://`, `gs://`, `az://`) are listed by the same
//! storage layer as every remote read (fetch.rs), never downloaded here;
//! their identity adds the object's ETag.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use super::fetch::{ObjectIdentity, Settings, Store};
use super::remote::{Backend, RemoteUri};
use super::{file_uri_path, glob, parse_remote, Names};
use crate::error::{Result, SanitizeError};

/// What tells one content of a file from another: its size, its
/// modification time in nanoseconds since the epoch (negative before it),
/// and for a remote object its ETag.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Identity {
    pub size: u64,
    pub modified_ns: i64,
    pub etag: Option<String>,
}

impl Identity {
    /// The identity of the file `path` points to (a link is followed), or
    /// `None` when nothing is there (any more).
    pub fn of(path: &Path) -> Option<Identity> {
        let meta = std::fs::metadata(path).ok()?;
        if !meta.is_file() {
            return None;
        }
        let modified_ns = meta.modified().ok().map_or(0, |t| match t.duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
            Err(e) => -i64::try_from(e.duration().as_nanos()).unwrap_or(i64::MAX),
        });
        Some(Identity { size: meta.len(), modified_ns, etag: None })
    }

    fn of_object(object: &ObjectIdentity) -> Identity {
        Identity { size: object.size, modified_ns: object.modified_ns, etag: object.etag.clone() }
    }
}

/// The identity of a listed file now (a local path, or a remote URI as the
/// listing names it), or `None` when it is gone.
pub fn identity_now(path: &str) -> Result<Option<Identity>> {
    let Some(uri) = parse_remote(path) else { return Ok(Identity::of(Path::new(path))) };
    let remote = Remote::open(&uri)?;
    let object =
        remote.runtime.block_on(remote.store.head_identity(&uri.key)).map_err(|e| remote.failed("read", &e))?;
    Ok(object.as_ref().map(Identity::of_object))
}

/// One file of a listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    /// Absolute, links resolved: the same file by any spelling (a relative
    /// path from another working directory, `./`, a `file://` URI) is one.
    pub path: String,
    pub identity: Identity,
}

/// A source listed: its files (each once, in no particular order), and the
/// paths given by name (no glob) that name nothing.
#[derive(Debug, Default)]
pub struct SourceListing {
    pub files: Vec<Listed>,
    pub missing: Vec<String>,
}

/// Lists `paths` for `function`. A glob lists its matches, a folder every
/// file below it at any depth, a file itself; a name the format does not
/// take (by its extension, as the scans check) is passed over in a glob or
/// a folder and refused when named alone. Hidden names are passed over: a
/// file whose name starts with `.` (a producer's file in flight), and in a
/// folder any entry starting with `.` or `_` (`_sanitize_checkpoint`,
/// `_SUCCESS`, `_temporary`). A file that goes away while it is listed is
/// not in the listing.
pub fn list_with_identity(paths: &[String], names: &Names) -> Result<SourceListing> {
    if paths.is_empty() {
        return Err(SanitizeError::options("the list of sources is empty".to_string()));
    }
    let mut out = SourceListing::default();
    let mut seen = HashSet::new();
    for path in paths {
        if let Some(uri) = parse_remote(path) {
            match list_remote(&uri, names)? {
                Some(files) => {
                    for file in files {
                        if seen.insert(file.path.clone()) {
                            out.files.push(file);
                        }
                    }
                }
                None => out.missing.push(path.clone()),
            }
            continue;
        }
        if super::remote::is_remote_scheme(path) && file_uri_path(path).is_none() {
            return Err(SanitizeError::options(format!(
                "\"{}\" is not a path this function lists: use a local path, file://, s3://, gs:// or az://",
                super::display_uri(path)
            )));
        }
        let local = file_uri_path(path).unwrap_or(path);
        if local.is_empty() {
            return Err(SanitizeError::options("a source path is empty".to_string()));
        }
        let at = Path::new(local);
        let found: Vec<PathBuf> = if glob::is_glob(local) && !at.exists() {
            glob::expand(local)
                .map_err(|e| SanitizeError::options(e.to_string()))?
                .into_iter()
                .map(PathBuf::from)
                .filter(|p| !hidden(p, ".") && names.takes(&p.to_string_lossy()))
                .collect()
        } else if at.is_dir() {
            walk(at, names)?
        } else if at.is_file() {
            names.check(local)?;
            vec![at.to_path_buf()]
        } else {
            out.missing.push(path.clone());
            continue;
        };
        for file in found {
            // Gone since it was listed: not there, so not in the listing.
            let (Ok(canonical), Some(identity)) = (std::fs::canonicalize(&file), Identity::of(&file)) else {
                continue;
            };
            let path = canonical.to_string_lossy().into_owned();
            if seen.insert(path.clone()) {
                out.files.push(Listed { path, identity });
            }
        }
    }
    Ok(out)
}

/// A remote store and a runtime to drive its requests.
struct Remote<'a> {
    uri: &'a RemoteUri,
    store: Store,
    runtime: tokio::runtime::Runtime,
}

impl<'a> Remote<'a> {
    fn open(uri: &'a RemoteUri) -> Result<Remote<'a>> {
        let shown = uri.object_uri(&uri.key);
        if uri.backend == Backend::Http {
            return Err(SanitizeError::options(format!(
                "\"{shown}\" cannot be listed (HTTP has no listing, and no ETag a run could rely on): use s3://, gs:// or az://"
            )));
        }
        let fail = |e: &dyn std::fmt::Display| {
            SanitizeError::io(
                super::redact_text(&format!("cannot reach \"{shown}\" ({}): {e}", uri.backend.name())).into_owned(),
            )
        };
        let store = Store::new(uri, &Settings::from_env()).map_err(|e| fail(&e))?;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| fail(&e))?;
        Ok(Remote { uri, store, runtime })
    }

    fn failed(&self, what: &str, e: &dyn std::fmt::Display) -> SanitizeError {
        let shown = self.uri.object_uri(&self.uri.key);
        let message = format!("cannot {what} \"{shown}\" ({}): {e}", self.uri.backend.name());
        SanitizeError::io(super::redact_text(&message).into_owned())
    }

    fn list(&self, prefix: &str, recursive: bool) -> Result<Vec<ObjectIdentity>> {
        self.runtime.block_on(self.store.list_identities(prefix, recursive)).map_err(|e| self.failed("list", &e))
    }

    fn listed(&self, object: &ObjectIdentity) -> Listed {
        Listed { path: self.uri.object_uri(&object.key), identity: Identity::of_object(object) }
    }
}

/// A remote path's files: a glob's matches, every object below a prefix
/// (a key ending in `/`, the bucket's root, or a key that names no object),
/// or one object; `None` when it names nothing. The same names are passed
/// over as locally (hidden names; `.` and `_` below a prefix).
fn list_remote(uri: &RemoteUri, names: &Names) -> Result<Option<Vec<Listed>>> {
    let remote = Remote::open(uri)?;
    let key = uri.key.as_str();
    let base = |k: &str| k.rsplit('/').next().unwrap_or(k).to_string();
    if glob::is_glob(key) {
        let matcher = glob::matcher(key).map_err(|e| SanitizeError::options(e.to_string()))?;
        let objects = remote.list(&glob::literal_prefix(key), glob::needs_recursion(key))?;
        return Ok(Some(
            objects
                .iter()
                .filter(|o| matcher.is_match(&o.key) && !base(&o.key).starts_with('.') && names.takes(&o.key))
                .map(|o| remote.listed(o))
                .collect(),
        ));
    }
    if !key.is_empty() && !key.ends_with('/') {
        let object = remote.runtime.block_on(remote.store.head_identity(key)).map_err(|e| remote.failed("read", &e))?;
        if let Some(object) = object {
            names.check(key)?;
            return Ok(Some(vec![remote.listed(&object)]));
        }
    }
    // A prefix: every object below it, at any depth.
    let prefix = key.trim_end_matches('/');
    let objects = remote.list(prefix, true)?;
    if objects.is_empty() {
        return Ok(None);
    }
    let below = |k: &str| k.strip_prefix(prefix).unwrap_or(k).trim_start_matches('/').to_string();
    Ok(Some(
        objects
            .iter()
            .filter(|o| {
                let relative = below(&o.key);
                !relative.split('/').any(|segment| segment.starts_with(['.', '_'])) && names.takes(&o.key)
            })
            .map(|o| remote.listed(o))
            .collect(),
    ))
}

/// Whether the last component of `path` starts with one of `marks`.
fn hidden(path: &Path, marks: &str) -> bool {
    path.file_name().and_then(|n| n.to_str()).and_then(|n| n.chars().next()).is_some_and(|c| marks.contains(c))
}

/// Every file below `root` that the format takes, passing over hidden
/// entries; links are followed, and a directory reached twice (a link
/// cycle) is walked once. An unreadable directory is an error, never a
/// listing silently short of its files.
fn walk(root: &Path, names: &Names) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    let mut walked = HashSet::new();
    while let Some(dir) = pending.pop() {
        if !walked.insert(std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone())) {
            continue;
        }
        let cannot = |e: std::io::Error| SanitizeError::io(format!("cannot list directory \"{}\": {e}", dir.display()));
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            // Gone since its parent was listed.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(cannot(e)),
        };
        for entry in entries {
            let entry = entry.map_err(cannot)?;
            let path = entry.path();
            if hidden(&path, "._") {
                continue;
            }
            match std::fs::metadata(&path) {
                Ok(m) if m.is_dir() => pending.push(path),
                Ok(m) if m.is_file() && names.takes(&path.to_string_lossy()) => out.push(path),
                _ => {}
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{InputFormat, Options};

    fn root(name: &str) -> PathBuf {
        let root = std::env::temp_dir().join(format!("ss-listing-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        root
    }

    fn write(root: &Path, files: &[&str]) {
        for f in files {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, b"{}\n").unwrap();
        }
    }

    fn relative(root: &Path, listing: &SourceListing) -> Vec<String> {
        let base = std::fs::canonicalize(root).unwrap().to_string_lossy().into_owned();
        let mut out: Vec<String> =
            listing.files.iter().map(|f| f.path.strip_prefix(&format!("{base}/")).unwrap().to_string()).collect();
        out.sort();
        out
    }

    #[test]
    fn folders_globs_and_files_list_once_without_hidden_names() {
        let root = root("kinds");
        write(
            &root,
            &["a.jsonl", "b.jsonl.gz", "c.csv", ".d.jsonl", "_e.jsonl", "x/f.jsonl", "_skip/g.jsonl", ".h/i.jsonl"],
        );
        let names = Names::of(&Options::defaults(InputFormat::Jsonl));
        let folder = list_with_identity(&[root.to_string_lossy().into_owned()], &names).unwrap();
        assert_eq!(relative(&root, &folder), ["a.jsonl", "b.jsonl.gz", "x/f.jsonl"]);
        // A glob keeps `_` names (the user named them) but never hidden ones.
        let glob = format!("{}/*.jsonl", root.display());
        let globbed = list_with_identity(std::slice::from_ref(&glob), &names).unwrap();
        assert_eq!(relative(&root, &globbed), ["_e.jsonl", "a.jsonl"]);
        // A list: each file once, whatever its spelling.
        let file = format!("file://{}/a.jsonl", root.display());
        let both = list_with_identity(&[glob, file], &names).unwrap();
        assert_eq!(relative(&root, &both), ["_e.jsonl", "a.jsonl"]);
        // A named file of another format is refused; a missing one is reported.
        let csv = root.join("c.csv").to_string_lossy().into_owned();
        let e = list_with_identity(&[csv], &names).unwrap_err();
        assert!(e.message.contains("requires .jsonl"), "{e}");
        let gone = root.join("gone.jsonl").to_string_lossy().into_owned();
        let listing = list_with_identity(std::slice::from_ref(&gone), &names).unwrap();
        assert!(listing.files.is_empty());
        assert_eq!(listing.missing, [gone]);
        // HTTP has no listing.
        let e = list_with_identity(&["https://example.invalid/raw/".to_string()], &names).unwrap_err();
        assert!(e.message.contains("cannot be listed"), "{e}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn identity_follows_size_and_modification_time() {
        let root = root("identity");
        write(&root, &["a.jsonl"]);
        let a = root.join("a.jsonl");
        let before = Identity::of(&a).unwrap();
        assert_eq!(before.size, 3);
        std::fs::write(&a, b"{}\n{}\n").unwrap();
        let after = Identity::of(&a).unwrap();
        assert_ne!(before, after);
        assert_eq!(Identity::of(&root.join("none")), None);
        assert_eq!(Identity::of(&root), None);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
