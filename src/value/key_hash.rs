//! A fast hasher for the per-value key lookups of decoding, inference and
//! routing.
//! std's SipHash resists HashDoS, which matters for maps keyed by untrusted
//! input that grow without bound; ours are bounded by the schema's width and
//! built from the same keys they are probed with, and the lookup is on the
//! hot path of every value. The multiply-rotate scheme is FxHash's (rustc's).

use std::hash::{BuildHasherDefault, Hasher};

#[derive(Default, Clone, Copy)]
pub struct KeyHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl KeyHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for KeyHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            self.add(tail_word(rest));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// The 1-7 bytes after the last whole word, as one word, read with at most
/// two loads. Copying them into a zeroed buffer (the obvious way) compiled to
/// a `memcpy` call whose byte stores the next load could not take from the
/// store buffer: a stall on every key lookup of routing (perf, issue 13).
/// For a given length the word determines the bytes (the two loads of 4-7
/// bytes overlap but cover them all), and the length is folded into the top
/// bits so that `"aa"` and `"aaa"` differ.
#[inline]
fn tail_word(rest: &[u8]) -> u64 {
    let n = rest.len();
    let word = if n >= 4 {
        let lo = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as u64;
        let hi = u32::from_le_bytes([rest[n - 4], rest[n - 3], rest[n - 2], rest[n - 1]]) as u64;
        lo | (hi << 32)
    } else {
        rest[0] as u64 | (rest[n / 2] as u64) << 8 | (rest[n - 1] as u64) << 16
    };
    word ^ ((n as u64) << 61)
}

pub type KeyMap<V> = std::collections::HashMap<String, V, BuildHasherDefault<KeyHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    fn hash(s: &str) -> u64 {
        BuildHasherDefault::<KeyHasher>::default().hash_one(s)
    }

    /// Every string of 1 to 11 letters over a two-letter alphabet (all
    /// tail lengths, with and without a whole word before them) hashes
    /// apart from every other: the tail read loses no byte and tells
    /// lengths apart, where `"aa"` and `"aaa"` would read alike.
    #[test]
    fn short_keys_hash_apart() {
        let mut seen = std::collections::HashMap::new();
        for len in 1..=11u32 {
            for bits in 0..(1u32 << len) {
                let s: String = (0..len).map(|i| if bits >> i & 1 == 1 { 'b' } else { 'a' }).collect();
                assert_eq!(hash(&s), hash(&s.clone()));
                if let Some(other) = seen.insert(hash(&s), s.clone()) {
                    panic!("{s:?} and {other:?} hash alike");
                }
            }
        }
        assert_eq!(seen.len(), (1..=11).map(|l| 1usize << l).sum::<usize>());
    }
}
