//! Globs in local paths: `*` and `?` within one path segment, `[...]`
//! classes, and `**` for any number of directories, as DuckDB's glob reads
//! them. Matches are regular files, sorted by full path in byte order, so
//! every machine reads them in the same order (and with it, gives the same
//! version numbers and drift events).

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};

/// The matcher of a path pattern: `*` and `?` stop at `/`, `\` escapes.
/// Braces are literal: DuckDB's globs have no `{a,b}` alternation.
pub fn matcher(pattern: &str) -> Result<GlobMatcher, String> {
    let escaped = pattern.replace('{', "\\{").replace('}', "\\}");
    Ok(GlobBuilder::new(&escaped)
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

/// Whether a listing for `pattern` must go below the literal prefix's
/// direct children (a `**`, or glob segments after the first).
pub fn needs_recursion(pattern: &str) -> bool {
    let components: Vec<&str> = pattern.split('/').collect();
    let literal = components.iter().take_while(|c| !is_glob(c)).count();
    let rest = &components[literal..];
    rest.len() > 1 || rest.contains(&"**")
}

/// Whether `path` holds a glob character.
pub fn is_glob(path: &str) -> bool {
    path.contains(['*', '?', '['])
}

/// The regular files matching `pattern`, in DuckDB's `glob()` order (see
/// [`glob_order`]).
/// Only directories that the pattern's segments can match are entered:
/// below the literal prefix, a directory must match its segment (any
/// directory once a `**` is reached), so `raw/2026-*/x/*.jsonl` never walks
/// `raw/other`.
pub fn expand(pattern: &str) -> Result<Vec<String>, String> {
    let matcher = matcher(pattern)?;
    let components: Vec<&str> = pattern.split('/').collect();
    let literal = components.iter().take_while(|c| !is_glob(c)).count();
    let base = components[..literal].join("/");
    let rest = &components[literal..];
    // One matcher per directory segment (the last segment names files).
    // A trailing `**` also enters directories (everything below matches).
    let directory_segments = if rest.last() == Some(&"**") { rest.len() } else { rest.len().saturating_sub(1) };
    let segments: Vec<Option<GlobMatcher>> = rest[..directory_segments]
        .iter()
        .map(|c| if *c == "**" { Ok(None) } else { self::matcher(c).map(Some) })
        .collect::<Result<_, _>>()?;
    let (root, prefix) = match base.as_str() {
        "" if pattern.starts_with('/') => (PathBuf::from("/"), "/".to_string()),
        "" => (PathBuf::from("."), String::new()),
        b => (PathBuf::from(b), format!("{b}/")),
    };
    let mut found = Vec::new();
    // Explicit stack: (directory, its path as the pattern spells it, the
    // segment its children stand at, whether a `**` was reached).
    let mut stack = vec![(root, prefix, 0usize, false)];
    while let Some((dir, shown, segment, any_depth)) = stack.pop() {
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
                continue;
            }
            if !kind.is_dir() {
                continue;
            }
            let next = format!("{path}/");
            match segments.get(segment) {
                _ if any_depth => stack.push((entry.path(), next, segment, true)),
                // `**`: this directory and everything below it.
                Some(None) => {
                    stack.push((entry.path(), next, segment + 1, true));
                }
                Some(Some(m)) if m.is_match(&name) => stack.push((entry.path(), next, segment + 1, false)),
                _ => {}
            }
        }
    }
    found.sort_unstable_by(|a, b| glob_order(a, b));
    Ok(found)
}

/// DuckDB's `glob()` order: a directory's files (in byte order) before the
/// files below its subdirectories, which follow subdirectory by
/// subdirectory in byte order; at one depth this is plain byte order.
///
/// Decided at the first byte where the paths differ, without splitting
/// them: the components before it are equal, and the one holding it
/// decides (a sort of 10,000 paths called this 140,000 times).
pub fn glob_order(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let Some(i) = x.iter().zip(y).position(|(p, q)| p != q) else {
        // One path is the other's start: it has fewer components, or a
        // shorter last one, and comes first.
        return x.len().cmp(&y.len());
    };
    // The differing component is the last of its path when no `/` follows.
    let last = |path: &[u8]| !path[i..].contains(&b'/');
    match (last(x), last(y)) {
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        // Byte order of the two components: a `/` ends the shorter one.
        _ => match (x[i], y[i]) {
            (b'/', _) => Ordering::Less,
            (_, b'/') => Ordering::Greater,
            (p, q) => p.cmp(&q),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The order by components, spelled out: what the comparator must agree with.
    fn by_components(a: &str, b: &str) -> std::cmp::Ordering {
        let (mut ac, mut bc) = (a.split('/').peekable(), b.split('/').peekable());
        loop {
            match (ac.next(), bc.next()) {
                (Some(x), Some(y)) if x == y => {}
                (Some(x), Some(y)) => {
                    return match (ac.peek().is_none(), bc.peek().is_none()) {
                        (true, false) => std::cmp::Ordering::Less,
                        (false, true) => std::cmp::Ordering::Greater,
                        _ => x.as_bytes().cmp(y.as_bytes()),
                    };
                }
                (x, y) => return x.is_some().cmp(&y.is_some()),
            }
        }
    }

    proptest! {
        /// Paths of few letters, so that shared starts, equal components
        /// and bytes below and above `/` (`-`, `.`, `0`, `a`) are common.
        #[test]
        fn the_first_difference_decides_as_the_components_do(a in "[a0./-]{0,8}", b in "[a0./-]{0,8}") {
            prop_assert_eq!(glob_order(&a, &b), by_components(&a, &b), "{:?} {:?}", a, b);
        }
    }

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
        // As DuckDB's glob(): a directory's files before its subdirectories'.
        assert_eq!(
            names(&root, "**/*.jsonl"),
            ["[lit].jsonl", "a.jsonl", "b.jsonl", "d/x.jsonl", "d/e/y.jsonl", "d/e/f/z.jsonl"]
        );
        assert_eq!(names(&root, "d/**/*.jsonl"), ["d/x.jsonl", "d/e/y.jsonl", "d/e/f/z.jsonl"]);
        assert_eq!(names(&root, "\\[lit\\].jsonl"), ["[lit].jsonl"]);
        assert!(names(&root, "nothing*").is_empty());
        // Braces are literal, as in DuckDB.
        assert!(names(&root, "{a,b}.jsonl").is_empty());
        // Directories that cannot match a segment are not entered.
        assert_eq!(names(&root, "[d]/e/*.jsonl"), ["d/e/y.jsonl"]);
        assert_eq!(names(&root, "d/**"), ["d/x.jsonl", "d/e/y.jsonl", "d/e/f/z.jsonl"]);
        assert!(
            needs_recursion("raw/**/*.jsonl") && needs_recursion("raw/*/x.jsonl") && !needs_recursion("raw/*.jsonl")
        );
        assert!(expand("[").is_err());
        std::fs::remove_dir_all(root).unwrap();
    }
}
