//! Fuzzing the Parquet reader from real files: every Parquet fixture in
//! test/data is a seed, mutated by byte flips, overwritten words (sizes and
//! counts become huge or negative), truncation and splices. The reader must
//! never panic (arrow-rs panics are caught and become errors naming the
//! file), and a file it reads must give exactly the rows its row groups
//! declare. CI runs the default case count; a long run:
//! `ulimit -v 4000000; PROPTEST_CASES=200000 cargo test parquet_fuzz`
//! (the address-space limit turns any allocation taken from a corrupt size
//! into an abort, which fails the run).

use std::io::Write;
use std::path::PathBuf;

use proptest::prelude::*;

use crate::formats::parquet::ParquetReader;
use crate::formats::{Batch, RecordReader};

fn seeds() -> Vec<Vec<u8>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("test/data");
    let mut out = Vec::new();
    for dir in ["parquet", "real", "issue10"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            // large_string_map holds 2 GB of strings in 4 KB: every mutant
            // would decode gigabytes (tests/test_parquet_corpus.py reads it whole).
            let huge = p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("large_string_map"));
            if p.extension().is_some_and(|e| e == "parquet") && !huge {
                if let Ok(bytes) = std::fs::read(&p) {
                    if bytes.len() < 1 << 20 {
                        out.push(bytes);
                    }
                }
            }
        }
    }
    assert!(!out.is_empty(), "no Parquet seeds in test/data");
    out
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip { at: usize, bit: u8 },
    Word { at: usize, value: u32 },
    Truncate { keep: usize },
    Splice { at: usize, from: usize, len: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Mutation::Flip { at, bit }),
        (any::<usize>(), prop_oneof![Just(u32::MAX), Just(0x7fff_ffff), Just(0), Just(0x8000_0000), any::<u32>()])
            .prop_map(|(at, value)| Mutation::Word { at, value }),
        any::<usize>().prop_map(|keep| Mutation::Truncate { keep }),
        (any::<usize>(), any::<usize>(), 1usize..64).prop_map(|(at, from, len)| Mutation::Splice { at, from, len }),
    ]
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    let n = bytes.len().max(1);
    match *m {
        Mutation::Flip { at, bit } => {
            if let Some(b) = bytes.get_mut(at % n) {
                *b ^= 1 << bit;
            }
        }
        Mutation::Word { at, value } => {
            let at = at % n;
            for (i, b) in value.to_le_bytes().iter().enumerate() {
                if let Some(slot) = bytes.get_mut(at + i) {
                    *slot = *b;
                }
            }
        }
        Mutation::Truncate { keep } => bytes.truncate(keep % n),
        Mutation::Splice { at, from, len } => {
            let from = from % n;
            let piece: Vec<u8> = bytes[from..(from + len).min(bytes.len())].to_vec();
            let at = (at % n).min(bytes.len());
            bytes.splice(at..at, piece);
        }
    }
}

/// Reads a whole file; `Ok(rows)` or the reader's error.
fn read_all(bytes: &[u8]) -> Result<(u64, u64), String> {
    let mut f = tempfile_in_target();
    f.1.write_all(bytes).unwrap();
    let file = std::fs::File::open(&f.0).unwrap();
    let result = (|| {
        let mut reader = ParquetReader::open(file, "fuzz.parquet", 256).map_err(|e| e.message)?;
        let declared = reader.declaration().map_or(0, |d| d.rows);
        let mut batch = Batch::default();
        let mut rows = 0u64;
        loop {
            batch.clear();
            let n = reader.next_batch(&mut batch, 256).map_err(|e| e.message)?;
            assert_eq!(batch.meta.len(), batch.tape.roots.len(), "one meta per record");
            if n == 0 {
                return Ok((rows, declared));
            }
            rows += n as u64;
        }
    })();
    let _ = std::fs::remove_file(&f.0);
    result
}

fn tempfile_in_target() -> (PathBuf, std::fs::File) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!("ss-pqfuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}.parquet", N.fetch_add(1, Ordering::Relaxed)));
    let f = std::fs::File::create(&path).unwrap();
    (path, f)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(48), .. ProptestConfig::default() })]

    #[test]
    fn parquet_fuzz_mutated_real_files_never_panic_and_never_lose_rows(
        seed in any::<prop::sample::Index>(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let seeds = seeds();
        let mut bytes = seeds[seed.index(seeds.len())].clone();
        for m in &mutations {
            apply(&mut bytes, m);
        }
        if let Ok((rows, declared)) = read_all(&bytes) {
            prop_assert_eq!(rows, declared, "a file read without error gave other rows than it declares");
        }
    }
}

#[test]
fn every_parquet_fixture_gives_its_declared_rows_or_a_clear_error() {
    for bytes in seeds() {
        match read_all(&bytes) {
            Ok((rows, declared)) => assert_eq!(rows, declared),
            Err(e) => assert!(e.contains("fuzz.parquet") && !e.contains("internal error"), "{e}"),
        }
    }
}
