//! Source-key paths, as messages, rejects and the rescue column show them
//! and as `pin_types`, `freeze` and `map_paths` take them: keys joined by
//! `.`, a list's elements marked `[]` (`items[].sku`).
//!
//! A key that holds a character of that syntax (`.`, `[`, `]`, `'`, `\`),
//! or is empty, is written in brackets and quotes, as JSONPath writes it:
//! Zeek's top-level key `"id.orig_h"` is `['id.orig_h']`, while the field
//! `orig_h` of the object `id` is `id.orig_h`. Inside the quotes `\'` is a
//! quote and `\\` a backslash. Every other key is written as it is, so
//! paths without such keys read as they always did.

/// Whether `key` must be written in brackets.
fn needs_brackets(key: &str) -> bool {
    key.is_empty() || key.bytes().any(|b| matches!(b, b'.' | b'[' | b']' | b'\'' | b'\\'))
}

/// Appends `key` to `path` as one more step below it.
pub fn push_key(path: &mut String, key: &str) {
    if needs_brackets(key) {
        path.push_str("['");
        for c in key.chars() {
            if matches!(c, '\'' | '\\') {
                path.push('\\');
            }
            path.push(c);
        }
        path.push_str("']");
    } else {
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
    }
}

/// `prefix` with `key` below it.
pub fn join(prefix: &str, key: &str) -> String {
    let mut path = String::with_capacity(prefix.len() + key.len() + 1);
    path.push_str(prefix);
    push_key(&mut path, key);
    path
}

/// The keys of a path, list markers dropped; an error for a path that is
/// empty, has an empty plain key (`a..b`) or an unclosed bracket.
pub fn parse(path: &str) -> Result<Vec<String>, String> {
    let bytes = path.as_bytes();
    let mut keys = Vec::new();
    let mut i = 0;
    // A step may start here: at the beginning, or after a '.'.
    let mut after_dot = true;
    while i < bytes.len() {
        match bytes[i] {
            b'[' if path[i..].starts_with("[]") => {
                if keys.is_empty() {
                    return Err(format!("the path '{path}' starts with '[]' (a list marker follows a key)"));
                }
                i += 2;
                after_dot = false;
            }
            b'[' if path[i..].starts_with("['") => {
                let mut key = String::new();
                let mut j = i + 2;
                let mut closed = false;
                let mut chars = path[j..].char_indices();
                while let Some((at, c)) = chars.next() {
                    match c {
                        '\\' => match chars.next() {
                            Some((_, escaped)) => key.push(escaped),
                            None => break,
                        },
                        '\'' if path[j + at + 1..].starts_with(']') => {
                            j += at + 2;
                            closed = true;
                            break;
                        }
                        c => key.push(c),
                    }
                }
                if !closed {
                    return Err(format!("the path '{path}' has an unclosed ['...'] key"));
                }
                keys.push(key);
                i = j;
                after_dot = false;
            }
            b'.' if !after_dot => {
                i += 1;
                after_dot = true;
                if i == bytes.len() || bytes[i] == b'.' {
                    return Err(format!("the path '{path}' has an empty key (write 'a.b', 'items[].sku' or ['a.b'] for a key with a dot)"));
                }
            }
            _ if after_dot => {
                let end = path[i..].find(['.', '[']).map_or(path.len(), |n| i + n);
                if end == i {
                    return Err(format!("the path '{path}' has an empty key (write 'a.b', 'items[].sku' or ['a.b'] for a key with a dot)"));
                }
                keys.push(path[i..end].to_string());
                i = end;
                after_dot = false;
            }
            _ => return Err(format!("the path '{path}' has '{}' where a '.' or '[' should be", &path[i..i + 1])),
        }
    }
    if keys.is_empty() {
        return Err(format!("the path '{path}' names no key"));
    }
    Ok(keys)
}

/// The path's keys written again without list markers (`items[].m` is
/// `items.m`): how the map inference names a struct's place.
pub fn keys_only(path: &str) -> Result<String, String> {
    Ok(parse(path)?.iter().fold(String::new(), |p, k| join(&p, k)))
}

/// The last key of a path (the field a reject is about).
pub fn last_key(path: &str) -> Option<String> {
    parse(path).ok().and_then(|mut keys| keys.pop())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_with_the_path_syntax_are_bracketed_and_read_back() {
        let mut p = String::new();
        push_key(&mut p, "id.orig_h");
        assert_eq!(p, "['id.orig_h']");
        assert_eq!(join("id", "orig_h"), "id.orig_h");
        assert_eq!(join("", "a"), "a");
        assert_eq!(join("a", "it's"), "a['it\\'s']");
        assert_eq!(join("a", ""), "a['']");
        assert_eq!(join("['x.y']", "z"), "['x.y'].z");
        for key in ["id.orig_h", "a[b]", "it's", "back\\slash", "", "plain", "é.ü"] {
            let path = join(&join("top", key), "leaf");
            assert_eq!(parse(&path).unwrap(), ["top", key, "leaf"], "{path}");
            assert_eq!(last_key(&join("top", key)).as_deref(), Some(key));
        }
    }

    #[test]
    fn list_markers_are_dropped_and_keys_written_one_way() {
        assert_eq!(parse("items[].sku").unwrap(), ["items", "sku"]);
        assert_eq!(parse("['a.b'][].c").unwrap(), ["a.b", "c"]);
        assert_eq!(keys_only("a['b'].c").unwrap(), "a.b.c");
        assert_eq!(keys_only("items[].sku").unwrap(), "items.sku");
        assert_eq!(keys_only("x['a.b'][].c").unwrap(), "x['a.b'].c");
    }

    #[test]
    fn malformed_paths_are_errors_naming_them() {
        for bad in ["", "a..b", "a.", ".a", "['open", "[]a", "a['b']c"] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(&format!("'{bad}'")), "{bad}: {e}");
        }
    }
}
