//! `bigquery_profile`'s reshaping of values, done on the tape right after
//! decoding so that the probe and the scan see the same values (and so the
//! same schema and routes): BigQuery has no ARRAY<ARRAY<...>> and no NULL
//! array elements.
//!
//! - A list directly inside a list becomes an object with one field,
//!   `element`, holding it: `[[1, 2], [3]]` is read as
//!   `[{"element": [1, 2]}, {"element": [3]}]`, which BigQuery reads as
//!   `ARRAY<STRUCT<element ARRAY<INT64>>>` (its documented workaround).
//! - A declared map (Parquet MAP) becomes the record BigQuery reads it as,
//!   `{"key_value": [{"key": ..., "value": ...}, ...]}`, so that depth
//!   limits count its two RECORD levels as BigQuery does.
//! - A list element that would be written as NULL is dropped and counted
//!   (BigQuery: "an array element in a table can never be NULL"): a null,
//!   and a container holding no value (`[]`, `{}`, `{"a": null}`), which
//!   the engine writes as NULL.

use super::tape::{Node, Tape};

/// The field that holds an inner list.
pub const WRAPPED_LIST_FIELD: &str = "element";

/// The field that holds a map's entries (Parquet's name for them).
pub const MAP_ENTRIES_FIELD: &str = "key_value";

/// Reshapes every record of `tape` in place (`scratch` is reused space);
/// returns the list elements dropped (nulls and value-less containers).
pub fn reshape_for_bigquery(tape: &mut Tape, scratch: &mut Vec<Node>) -> u64 {
    if !tape.nodes.iter().any(|n| matches!(n, Node::List { .. } | Node::Map { .. })) {
        return 0;
    }
    // The keys of the wrapping objects: appended once, so every text range
    // already on the tape stays valid.
    let key = Node::Key { start: tape.text.len() as u32, len: WRAPPED_LIST_FIELD.len() as u32 };
    tape.text.push_str(WRAPPED_LIST_FIELD);
    let entries_key = Node::Key { start: tape.text.len() as u32, len: MAP_ENTRIES_FIELD.len() as u32 };
    tape.text.push_str(MAP_ENTRIES_FIELD);
    let keys = Keys { element: key, entries: entries_key };
    scratch.clear();
    scratch.reserve(tape.nodes.len());
    let mut dropped = 0;
    for root in tape.roots.iter_mut() {
        let at = scratch.len() as u32;
        copy(&tape.nodes, *root as usize, false, keys, scratch, &mut dropped);
        *root = at;
    }
    std::mem::swap(&mut tape.nodes, scratch);
    dropped
}

/// When the value at `i` holds no value at all (a null, or a container
/// without evidence), the index past it.
fn valueless(src: &[Node], i: usize) -> Option<usize> {
    match src[i] {
        Node::Null => Some(i + 1),
        Node::List { end, evidence: false, .. }
        | Node::Object { end, evidence: false, .. }
        | Node::Map { end, evidence: false, .. } => Some(end as usize),
        _ => None,
    }
}

/// The keys the reshaping adds.
#[derive(Clone, Copy)]
struct Keys {
    element: Node,
    entries: Node,
}

/// Copies the value at `i` into `out`, reshaped; returns the index past it.
fn copy(src: &[Node], i: usize, in_list: bool, keys: Keys, out: &mut Vec<Node>, dropped: &mut u64) -> usize {
    match src[i] {
        // A map is a list of entries under `key_value`.
        Node::Map { end, evidence, .. } => {
            let wrapper = out.len();
            out.push(Node::Object { len: 1, end: 0, evidence });
            out.push(keys.entries);
            let at = out.len();
            out.push(Node::List { len: 0, end: 0, evidence });
            let (mut j, mut len) = (i + 1, 0);
            while j < end as usize {
                j = copy(src, j, true, keys, out, dropped);
                len += 1;
            }
            let end_out = out.len() as u32;
            out[at] = Node::List { len, end: end_out, evidence };
            out[wrapper] = Node::Object { len: 1, end: end_out, evidence };
            end as usize
        }
        Node::List { end, evidence, .. } => {
            let wrapper = in_list.then(|| {
                out.push(Node::Object { len: 1, end: 0, evidence });
                out.push(keys.element);
                out.len() - 2
            });
            let at = out.len();
            out.push(Node::List { len: 0, end: 0, evidence });
            let (mut j, mut len) = (i + 1, 0);
            while j < end as usize {
                if let Some(next) = valueless(src, j) {
                    *dropped += 1;
                    j = next;
                    continue;
                }
                j = copy(src, j, true, keys, out, dropped);
                len += 1;
            }
            let end_out = out.len() as u32;
            out[at] = Node::List { len, end: end_out, evidence };
            if let Some(w) = wrapper {
                out[w] = Node::Object { len: 1, end: end_out, evidence };
            }
            end as usize
        }
        Node::Object { len, end, evidence } => {
            let at = out.len();
            out.push(src[i]);
            let mut j = i + 1;
            while j < end as usize {
                if matches!(src[j], Node::Key { .. }) {
                    out.push(src[j]);
                    j += 1;
                    continue;
                }
                j = copy(src, j, false, keys, out, dropped);
            }
            let end_out = out.len() as u32;
            out[at] = Node::Object { len, end: end_out, evidence };
            end as usize
        }
        scalar => {
            out.push(scalar);
            i + 1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::write_compact_json;

    fn record_json(tape: &Tape, i: usize) -> String {
        let mut s = String::new();
        write_compact_json(tape.record(i), &mut s);
        s
    }

    /// A tape of JSON records, decoded by hand (the value floor has no parser).
    fn tape_of(build: impl Fn(&mut Tape)) -> Tape {
        let mut t = Tape::default();
        build(&mut t);
        t
    }

    fn key(t: &mut Tape, k: &str) -> Node {
        let start = t.text.len() as u32;
        t.text.push_str(k);
        Node::Key { start, len: k.len() as u32 }
    }

    #[test]
    fn lists_in_lists_are_wrapped_and_null_elements_dropped() {
        // {"m": [[1, null], null, [2]], "s": "x"}, then {"k": [null]}
        let mut t = tape_of(|t| {
            let m = key(t, "m");
            let s_key = key(t, "s");
            let text_start = t.text.len() as u32;
            t.text.push('x');
            t.roots.push(0);
            t.nodes.extend([
                Node::Object { len: 2, end: 11, evidence: true },
                m,
                Node::List { len: 3, end: 9, evidence: true },
                Node::List { len: 2, end: 6, evidence: true },
                Node::Int(1),
                Node::Null,
                Node::Null,
                Node::List { len: 1, end: 9, evidence: true },
                Node::Int(2),
                s_key,
                Node::Str { start: text_start, len: 1 },
            ]);
            let k = key(t, "k");
            t.roots.push(11);
            t.nodes.extend([
                Node::Object { len: 1, end: 15, evidence: false },
                k,
                Node::List { len: 1, end: 15, evidence: false },
                Node::Null,
            ]);
        });
        assert_eq!(record_json(&t, 0), r#"{"m":[[1,null],null,[2]],"s":"x"}"#);
        let mut scratch = Vec::new();
        let dropped = reshape_for_bigquery(&mut t, &mut scratch);
        assert_eq!(dropped, 3);
        assert_eq!(record_json(&t, 0), r#"{"m":[{"element":[1]},{"element":[2]}],"s":"x"}"#);
        assert_eq!(record_json(&t, 1), r#"{"k":[]}"#);
    }

    #[test]
    fn list_elements_holding_no_value_are_dropped_too() {
        // {"m": [[4], [], {}]}
        let mut t = tape_of(|t| {
            let m = key(t, "m");
            t.roots.push(0);
            t.nodes.extend([
                Node::Object { len: 1, end: 7, evidence: true },
                m,
                Node::List { len: 3, end: 7, evidence: true },
                Node::List { len: 1, end: 5, evidence: true },
                Node::Int(4),
                Node::List { len: 0, end: 6, evidence: false },
                Node::Object { len: 0, end: 7, evidence: false },
            ]);
        });
        assert_eq!(record_json(&t, 0), r#"{"m":[[4],[],{}]}"#);
        let dropped = reshape_for_bigquery(&mut t, &mut Vec::new());
        assert_eq!(dropped, 2);
        assert_eq!(record_json(&t, 0), r#"{"m":[{"element":[4]}]}"#);
    }
}

#[cfg(test)]
mod map_tests {
    use super::*;
    use crate::value::write_compact_json;

    #[test]
    fn a_declared_map_becomes_its_key_value_record() {
        // {"m": MAP {"a": 1}}
        let mut t = Tape::default();
        let key = |t: &mut Tape, k: &str| {
            let start = t.text.len() as u32;
            t.text.push_str(k);
            Node::Key { start, len: k.len() as u32 }
        };
        let (m, k, v) = (key(&mut t, "m"), key(&mut t, "key"), key(&mut t, "value"));
        let a_start = t.text.len() as u32;
        t.text.push('a');
        t.roots.push(0);
        t.nodes.extend([
            Node::Object { len: 1, end: 8, evidence: true },
            m,
            Node::Map { len: 1, end: 8, evidence: true },
            Node::Object { len: 2, end: 8, evidence: true },
            k,
            Node::Str { start: a_start, len: 1 },
            v,
            Node::Int(1),
        ]);
        assert_eq!(reshape_for_bigquery(&mut t, &mut Vec::new()), 0);
        let mut s = String::new();
        write_compact_json(t.record(0), &mut s);
        assert_eq!(s, r#"{"m":{"key_value":[{"key":"a","value":1}]}}"#);
    }
}
