//! The JSON parser comparison: our tape parser
//! against simd-json and sonic-rs (and serde_json for reference), one
//! JSON Lines record at a time, on the bench files.
//!
//! Built only with the `parser-bench` feature, which brings in the two
//! candidate crates: the extension and its tests never compile them.
//! `cargo bench --features parser-bench --bench parsers -- FILE...`
//! (docs/performance.md "JSON parsers").
//!
//! "End to end" for a candidate means what adopting it would cost the
//! engine, which reads records from our [`Tape`]: the candidate's parse
//! *and* the copy of its result into a tape (`*_into_tape`). Its bare
//! parse is timed too, as the bound no adoption could beat.

use std::time::Instant;

use super::json::parse_value_skipping;
use super::utf8;
use crate::value::{Node, Tape};

/// Records per tape before it is cleared, as a scan batch holds them.
const BATCH_RECORDS: usize = 2048;

/// One way of reading every record of a file; returns a checksum (nodes
/// made) so that no work can be optimized away and the methods that fill
/// a tape can be checked against each other.
struct Method {
    name: &'static str,
    run: fn(&[&[u8]]) -> u64,
}

const METHODS: &[Method] = &[
    Method { name: "ours: tape parser (UTF-8 check + parse)", run: ours },
    Method { name: "simd-json: tape only", run: simd_tape },
    Method { name: "simd-json: tape, copied into our tape", run: simd_into_tape },
    Method { name: "sonic-rs: Value only", run: sonic_value },
    Method { name: "sonic-rs: Value, copied into our tape", run: sonic_into_tape },
    Method { name: "serde_json: Value only", run: serde_value },
];

/// The lines of a JSON Lines file, blank ones left out.
fn lines(data: &[u8]) -> Vec<&[u8]> {
    data.split(|b| *b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.iter().all(|b| b.is_ascii_whitespace()))
        .collect()
}

fn ours(records: &[&[u8]]) -> u64 {
    let mut tape = Tape::default();
    let mut made = 0u64;
    for chunk in records.chunks(BATCH_RECORDS) {
        tape.clear();
        for raw in chunk {
            let text = utf8::validate(raw).expect("bench input is UTF-8");
            parse_value_skipping(text, &mut tape, None).expect("bench input is valid JSON");
        }
        made += tape.nodes.len() as u64;
    }
    made
}

fn simd_tape(records: &[&[u8]]) -> u64 {
    let mut buffers = simd_json::Buffers::new(1 << 16);
    let mut copy = Vec::new();
    let mut made = 0u64;
    for raw in records {
        // simd-json parses in place: the record is copied, as a scan of a
        // shared read buffer would have to.
        copy.clear();
        copy.extend_from_slice(raw);
        let tape = simd_json::to_tape_with_buffers(&mut copy, &mut buffers).expect("valid JSON");
        made += tape.0.len() as u64;
    }
    made
}

fn simd_into_tape(records: &[&[u8]]) -> u64 {
    let mut buffers = simd_json::Buffers::new(1 << 16);
    let mut copy = Vec::new();
    let mut tape = Tape::default();
    let mut made = 0u64;
    for chunk in records.chunks(BATCH_RECORDS) {
        tape.clear();
        for raw in chunk {
            copy.clear();
            copy.extend_from_slice(raw);
            let theirs = simd_json::to_tape_with_buffers(&mut copy, &mut buffers).expect("valid JSON");
            let mut at = 0;
            simd_node(&theirs.0, &mut at, &mut tape);
        }
        made += tape.nodes.len() as u64;
    }
    made
}

/// Copies the simd-json value at `nodes[*at]` into `tape`; returns whether
/// it holds a non-null scalar (our tape's `evidence`).
fn simd_node(nodes: &[simd_json::Node<'_>], at: &mut usize, tape: &mut Tape) -> bool {
    use simd_json::{Node as S, StaticNode as St};
    let node = nodes[*at];
    *at += 1;
    match node {
        S::String(s) => push_str(tape, s, false),
        S::Static(St::Null) => {
            tape.nodes.push(Node::Null);
            false
        }
        S::Static(St::Bool(b)) => push_scalar(tape, Node::Bool(b)),
        S::Static(St::I64(i)) => push_scalar(tape, Node::Int(i)),
        S::Static(St::U64(u)) => push_scalar(tape, i64::try_from(u).map(Node::Int).unwrap_or(Node::Float(u as f64))),
        S::Static(St::F64(f)) => push_scalar(tape, Node::Float(f)),
        S::Array { len, .. } => {
            let head = open(tape);
            let mut evidence = false;
            for _ in 0..len {
                evidence |= simd_node(nodes, at, tape);
            }
            close(tape, head, Node::List { len: len as u32, end: 0, evidence })
        }
        S::Object { len, .. } => {
            let head = open(tape);
            let mut evidence = false;
            for _ in 0..len {
                let S::String(key) = nodes[*at] else { unreachable!("simd-json object keys are strings") };
                *at += 1;
                push_str(tape, key, true);
                evidence |= simd_node(nodes, at, tape);
            }
            close(tape, head, Node::Object { len: len as u32, end: 0, evidence })
        }
    }
}

fn sonic_value(records: &[&[u8]]) -> u64 {
    use sonic_rs::JsonContainerTrait;
    let mut made = 0u64;
    for raw in records {
        let v: sonic_rs::Value = sonic_rs::from_slice(raw).expect("valid JSON");
        made += v.as_object().map_or(0, |o| o.len() as u64);
    }
    made
}

fn sonic_into_tape(records: &[&[u8]]) -> u64 {
    let mut tape = Tape::default();
    let mut made = 0u64;
    for chunk in records.chunks(BATCH_RECORDS) {
        tape.clear();
        for raw in chunk {
            let v: sonic_rs::Value = sonic_rs::from_slice(raw).expect("valid JSON");
            sonic_node(&v, &mut tape);
        }
        made += tape.nodes.len() as u64;
    }
    made
}

fn sonic_node(v: &sonic_rs::Value, tape: &mut Tape) -> bool {
    use sonic_rs::{JsonContainerTrait, JsonType, JsonValueTrait};
    match v.get_type() {
        JsonType::Null => {
            tape.nodes.push(Node::Null);
            false
        }
        JsonType::Boolean => push_scalar(tape, Node::Bool(v.as_bool().unwrap_or(false))),
        JsonType::Number => {
            let n = match (v.as_i64(), v.as_f64()) {
                (Some(i), _) => Node::Int(i),
                (None, f) => Node::Float(f.unwrap_or(f64::NAN)),
            };
            push_scalar(tape, n)
        }
        JsonType::String => push_str(tape, v.as_str().unwrap_or(""), false),
        JsonType::Array => {
            let items = v.as_array().expect("an array");
            let head = open(tape);
            let mut evidence = false;
            for item in items.iter() {
                evidence |= sonic_node(item, tape);
            }
            close(tape, head, Node::List { len: items.len() as u32, end: 0, evidence })
        }
        JsonType::Object => {
            let entries = v.as_object().expect("an object");
            let head = open(tape);
            let mut evidence = false;
            for (key, value) in entries.iter() {
                push_str(tape, key, true);
                evidence |= sonic_node(value, tape);
            }
            close(tape, head, Node::Object { len: entries.len() as u32, end: 0, evidence })
        }
    }
}

fn serde_value(records: &[&[u8]]) -> u64 {
    let mut made = 0u64;
    for raw in records {
        let v: serde_json::Value = serde_json::from_slice(raw).expect("valid JSON");
        made += v.as_object().map_or(0, |o| o.len() as u64);
    }
    made
}

/// A string value (or, with `key`, an object key) into the tape's text.
fn push_str(tape: &mut Tape, s: &str, key: bool) -> bool {
    let (start, len) = tape.push_text(s);
    tape.nodes.push(if key { Node::Key { start, len } } else { Node::Str { start, len } });
    true
}

fn push_scalar(tape: &mut Tape, node: Node) -> bool {
    tape.nodes.push(node);
    true
}

/// Reserves a container's node; [`close`] fills it in once its end is known.
fn open(tape: &mut Tape) -> usize {
    tape.nodes.push(Node::Null);
    tape.nodes.len() - 1
}

fn close(tape: &mut Tape, head: usize, node: Node) -> bool {
    let end = tape.nodes.len() as u32;
    tape.nodes[head] = match node {
        Node::List { len, evidence, .. } => Node::List { len, end, evidence },
        Node::Object { len, evidence, .. } => Node::Object { len, end, evidence },
        other => other,
    };
    matches!(node, Node::List { evidence: true, .. } | Node::Object { evidence: true, .. })
}

/// Times every method on every file (`runs` times each, interleaved so
/// that drift in the machine's speed hits all alike) and prints a
/// Markdown table of the medians.
pub fn main(files: &[String], runs: usize) {
    println!("| file | method | median s | MB/s | nodes |");
    println!("|---|---|---:|---:|---:|");
    for file in files {
        let data = std::fs::read(file).unwrap_or_else(|e| panic!("{file}: {e}"));
        let records = lines(&data);
        let mut times = vec![Vec::new(); METHODS.len()];
        let mut sums = vec![0u64; METHODS.len()];
        for _ in 0..runs {
            for (i, m) in METHODS.iter().enumerate() {
                let start = Instant::now();
                sums[i] = (m.run)(&records);
                times[i].push(start.elapsed().as_secs_f64());
            }
        }
        let name = std::path::Path::new(file).file_name().map_or(file.clone(), |n| n.to_string_lossy().into_owned());
        for (i, m) in METHODS.iter().enumerate() {
            times[i].sort_by(f64::total_cmp);
            let median = times[i][times[i].len() / 2];
            let mbs = data.len() as f64 / 1e6 / median;
            println!("| {name} | {} | {median:.3} | {mbs:.0} | {} |", m.name, sums[i]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The copies into our tape make the tape our parser makes: the
    /// comparison times the same result.
    #[test]
    fn every_copy_makes_the_tape_our_parser_makes() {
        let text = br#"{"a":1,"b":[1.5,"x\n",null,{"c":true}],"d":{},"e":[{}],"f":"\u00e9","g":-7}"#;
        let mut ours_tape = Tape::default();
        parse_value_skipping(std::str::from_utf8(text).unwrap(), &mut ours_tape, None).unwrap();

        let mut simd = Tape::default();
        let mut copy = text.to_vec();
        let theirs = simd_json::to_tape(&mut copy).unwrap();
        simd_node(&theirs.0, &mut 0, &mut simd);

        let mut sonic = Tape::default();
        sonic_node(&sonic_rs::from_slice(text).unwrap(), &mut sonic);

        for other in [&simd, &sonic] {
            assert_eq!(other.nodes, ours_tape.nodes);
            assert_eq!(other.text, ours_tape.text);
        }
    }
}
