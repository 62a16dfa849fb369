//! Globs in local paths: `*` and `?` within one path segment, `[...]`
//! classes, and `**` for any number of directories, as DuckDB's glob reads
//! them. Matches are regular files, sorted by full path in byte order, so
//! every machine reads them in the same order (and with it, gives the same
//! version numbers and drift events).

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};

/// The matcher of a path pattern: `*` and `?` stop at `/`, `\\` escapes.
pub fn matcher(pattern: &str) -> Result<GlobMatcher, String> {
    Ok(GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| format!("\"{pattern}\" is not a valid glob: {}", e.kind()))?
        .compile_matcher())
}

/// The directories of `pattern` before its first glob segment (`raw/2026`
/// of `raw/2026/*/x.jsonl`), where a listing starts.
pub fn literal_prefix(pattern: &str) -> String {
    let components: Vec<&str> = pattern.split('/').collect();
    let literal = components.iter().take_while(|c| !is_glob(c)).count();
    components[..literal].join("/")
}

/// Whether `path` holds a glob character.
pub fn is_glob(path: &str) -> bool {
    path.contains(['*', '?', '['])
}

/// The regular files matching `pattern`, sorted by path (byte order).
/// Only the directories below the pattern's literal prefix are walked, and
/// no deeper than the pattern reaches unless it holds `**`.
pub fn expand(pattern: &str) -> Result<Vec<String>, String> {
    let matcher = matcher(pattern)?;
    let components: Vec<&str> = pattern.split('/').collect();
    let literal = components.iter().take_while(|c| !is_glob(c)).count();
    let base = components[..literal].join("/");
    let rest = &components[literal..];
    let any_depth = rest.contains(&"**");
    // Below the base: one level per remaining component.
    let max_depth = if any_depth { usize::MAX } else { rest.len() };
    let (root, prefix) = match base.as_str() {
        "" if pattern.starts_with('/') => (PathBuf::from("/"), "/".to_string()),
        "" => (PathBuf::from("."), String::new()),
        b => (PathBuf::from(b), format!("{b}/")),
    };
    let mut found = Vec::new();
    // Explicit stack: (directory, its path as the pattern spells it, depth).
    let mut stack = vec![(root, prefix, 1usize)];
    while let Some((dir, shown, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = format!("{shown}{name}");
            let Ok(kind) = entry.file_type() else { continue };
            // A link to a directory is not followed (no cycles); a link to
            // a file is a file.
            let is_file = kind.is_file() || (kind.is_symlink() && Path::new(&path).is_file());
            if is_file {
                if matcher.is_match(&path) {
                    found.push(path);
                }
            } else if kind.is_dir() && depth < max_depth {
                stack.push((entry.path(), format!("{path}/"), depth + 1));
            }
        }
    }
    found.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> PathBuf {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let root =
            std::env::temp_dir().join(format!("ss-glob-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
        for f in ["a.jsonl", "b.jsonl", "c.csv", "d/x.jsonl", "d/e/y.jsonl", "d/e/f/z.jsonl", "[lit].jsonl"] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, b"{}\n").unwrap();
        }
        root
    }

    fn names(root: &Path, pattern: &str) -> Vec<String> {
        let base = root.to_string_lossy();
        expand(&format!("{base}/{pattern}")).unwrap().into_iter().map(|p| p[base.len() + 1..].to_string()).collect()
    }

    #[test]
    fn globs_match_by_segment_and_any_depth_in_byte_order() {
        let root = tree();
        assert_eq!(names(&root, "*.jsonl"), ["[lit].jsonl", "a.jsonl", "b.jsonl"]);
        assert_eq!(names(&root, "?.jsonl"), ["a.jsonl", "b.jsonl"]);
        assert_eq!(names(&root, "[ab].jsonl"), ["a.jsonl", "b.jsonl"]);
        assert_eq!(names(&root, "*/*.jsonl"), ["d/x.jsonl"]);
        assert_eq!(names(&root, "d/*/*/*.jsonl"), ["d/e/f/z.jsonl"]);
        assert_eq!(
            names(&root, "**/*.jsonl"),
            ["[lit].jsonl", "a.jsonl", "b.jsonl", "d/e/f/z.jsonl", "d/e/y.jsonl", "d/x.jsonl"]
        );
        assert_eq!(names(&root, "d/**/*.jsonl"), ["d/e/f/z.jsonl", "d/e/y.jsonl", "d/x.jsonl"]);
        assert_eq!(names(&root, "\\[lit\\].jsonl"), ["[lit].jsonl"]);
        assert!(names(&root, "nothing*").is_empty());
        assert!(expand("[").is_err());
        std::fs::remove_dir_all(root).unwrap();
    }
}
