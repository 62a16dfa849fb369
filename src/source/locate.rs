//! Where a local path the user wrote points, as DuckDB's own readers
//! resolve it: a leading `~` is the home directory (DuckDB's
//! `home_directory` setting, else `HOME`), and a relative path that names
//! nothing from the working directory is looked for in each directory of
//! `file_search_path`, in order. URIs are left as they are.

use std::path::Path;

/// What the calling client says about paths.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathSettings {
    /// The home directory `~` stands for; `None`: none is known.
    pub home: Option<String>,
    /// `file_search_path`'s directories (empty: not set).
    pub search_path: Vec<String>,
}

impl PathSettings {
    /// From DuckDB's settings: `home_directory` (empty: `HOME`) and the
    /// comma-separated `file_search_path`.
    pub fn of(home_directory: Option<&str>, file_search_path: Option<&str>) -> Self {
        let home = home_directory.filter(|h| !h.is_empty()).map(str::to_string).or_else(|| std::env::var("HOME").ok());
        let search_path = file_search_path
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(str::to_string)
            .collect();
        PathSettings { home, search_path }
    }
}

/// The path `path` stands for under `settings` (see the module doc).
pub fn locate(path: &str, settings: &PathSettings) -> String {
    if super::remote::is_remote_scheme(path) {
        return path.to_string();
    }
    let expanded = match (path.strip_prefix('~'), &settings.home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => format!("{home}{rest}"),
        _ => path.to_string(),
    };
    if Path::new(&expanded).is_absolute() || settings.search_path.is_empty() || names_something(&expanded) {
        return expanded;
    }
    for dir in &settings.search_path {
        let candidate = Path::new(dir).join(&expanded).to_string_lossy().into_owned();
        if names_something(&candidate) {
            return candidate;
        }
    }
    expanded
}

/// Whether a file or directory is there, or, for a glob, something matches.
fn names_something(path: &str) -> bool {
    Path::new(path).exists() || (super::glob::is_glob(path) && super::glob::expand(path).is_ok_and(|m| !m.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_and_search_path_resolve_as_duckdb_does() {
        let root = crate::test_support::scratch_dir("locate");
        std::fs::create_dir_all(root.join("b")).unwrap();
        std::fs::write(root.join("b/x.jsonl"), "{}\n").unwrap();
        let dir = |d: &str| root.join(d).to_string_lossy().into_owned();
        let settings = PathSettings { home: Some(dir("b")), search_path: vec![dir("a"), dir("b")] };
        assert_eq!(locate("~/x.jsonl", &settings), format!("{}/x.jsonl", dir("b")));
        assert_eq!(locate("x.jsonl", &settings), format!("{}/x.jsonl", dir("b")));
        assert_eq!(locate("*.jsonl", &settings), format!("{}/*.jsonl", dir("b")));
        // Nothing anywhere: the path as written, for the error to name.
        assert_eq!(locate("missing.jsonl", &settings), "missing.jsonl");
        // `~user` is not the home directory; URIs are untouched.
        assert_eq!(locate("~other/x", &settings), "~other/x");
        assert_eq!(locate("s3://b/~/x", &settings), "s3://b/~/x");
        let none = PathSettings { home: None, search_path: vec![] };
        assert_eq!(locate("~/x.jsonl", &none), "~/x.jsonl");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
