//! `cargo bench --features parser-bench --bench parsers -- [--runs N] FILE...`:
//! our JSON tape parser against simd-json and sonic-rs, one JSON Lines
//! record at a time (src/formats/parser_bench.rs; docs/performance.md
//! "JSON parsers").

fn main() {
    let mut runs = 5;
    let mut files = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().and_then(|n| n.parse().ok()).expect("--runs N"),
            // cargo bench passes --bench to every bench binary.
            "--bench" => {}
            _ => files.push(arg),
        }
    }
    assert!(!files.is_empty(), "usage: parsers [--runs N] FILE...");
    schema_sanitizer::parser_bench::main(&files, runs);
}
