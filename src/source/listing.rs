//! A source listed with each file's identity, without reading any file
//! (sanitize_ingest): the same paths the scans resolve (a file, a folder,
//! a glob, or a list of them), each file named by its absolute canonical
//! path and identified by its size and modification time, so that a later
//! listing can tell a file already taken from a new one, and a file
//! rewritten in place from one left alone.
//!
//! Local only for now: a remote source needs its listing's ETags, which the
//! storage layer (fetch.rs) does not return yet.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use super::{file_uri_path, glob, parse_remote, Names};
use crate::error::{Result, SanitizeError};

/// What tells one content of a file from another: its size, and its
/// modification time in nanoseconds since the epoch (negative before it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Identity {
    pub size: u64,
    pub modified_ns: i64,
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
        Some(Identity { size: meta.len(), modified_ns })
    }
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
pub fn list_with_identity(function: &str, paths: &[String], names: &Names) -> Result<SourceListing> {
    if paths.is_empty() {
        return Err(SanitizeError::options(format!("{function}: the list of sources is empty")));
    }
    let mut out = SourceListing::default();
    let mut seen = HashSet::new();
    for path in paths {
        if parse_remote(path).is_some() || (super::remote::is_remote_scheme(path) && file_uri_path(path).is_none()) {
            return Err(SanitizeError::options(format!(
                "{function}: \"{}\" is remote, and this function reads local sources only for now (docs/ingest.md)",
                super::display_uri(path)
            )));
        }
        let local = file_uri_path(path).unwrap_or(path);
        if local.is_empty() {
            return Err(SanitizeError::options(format!("{function}: a source path is empty")));
        }
        let at = Path::new(local);
        let found: Vec<PathBuf> = if glob::is_glob(local) && !at.exists() {
            glob::expand(local)
                .map_err(|e| SanitizeError::options(format!("{function}: {e}")))?
                .into_iter()
                .map(PathBuf::from)
                .filter(|p| !hidden(p, ".") && names.takes(&p.to_string_lossy()))
                .collect()
        } else if at.is_dir() {
            walk(function, at, names)?
        } else if at.is_file() {
            names.check(function, local)?;
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

/// Whether the last component of `path` starts with one of `marks`.
fn hidden(path: &Path, marks: &str) -> bool {
    path.file_name().and_then(|n| n.to_str()).and_then(|n| n.chars().next()).is_some_and(|c| marks.contains(c))
}

/// Every file below `root` that the format takes, passing over hidden
/// entries; links are followed, and a directory reached twice (a link
/// cycle) is walked once. An unreadable directory is an error, never a
/// listing silently short of its files.
fn walk(function: &str, root: &Path, names: &Names) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    let mut walked = HashSet::new();
    while let Some(dir) = pending.pop() {
        if !walked.insert(std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone())) {
            continue;
        }
        let cannot = |e: std::io::Error| {
            SanitizeError::io(format!("{function}: cannot list directory \"{}\": {e}", dir.display()))
        };
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
        let folder = list_with_identity("f", &[root.to_string_lossy().into_owned()], &names).unwrap();
        assert_eq!(relative(&root, &folder), ["a.jsonl", "b.jsonl.gz", "x/f.jsonl"]);
        // A glob keeps `_` names (the user named them) but never hidden ones.
        let glob = format!("{}/*.jsonl", root.display());
        let globbed = list_with_identity("f", std::slice::from_ref(&glob), &names).unwrap();
        assert_eq!(relative(&root, &globbed), ["_e.jsonl", "a.jsonl"]);
        // A list: each file once, whatever its spelling.
        let file = format!("file://{}/a.jsonl", root.display());
        let both = list_with_identity("f", &[glob, file], &names).unwrap();
        assert_eq!(relative(&root, &both), ["_e.jsonl", "a.jsonl"]);
        // A named file of another format is refused; a missing one is reported.
        let csv = root.join("c.csv").to_string_lossy().into_owned();
        let e = list_with_identity("f", &[csv], &names).unwrap_err();
        assert!(e.message.contains("requires .jsonl"), "{e}");
        let gone = root.join("gone.jsonl").to_string_lossy().into_owned();
        let listing = list_with_identity("f", std::slice::from_ref(&gone), &names).unwrap();
        assert!(listing.files.is_empty());
        assert_eq!(listing.missing, [gone]);
        // Remote sources wait for ETags.
        let e = list_with_identity("f", &["s3://bucket/raw/".to_string()], &names).unwrap_err();
        assert!(e.message.contains("local sources only"), "{e}");
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
