//! A fast hasher for the per-value key lookups of decoding, inference and
//! routing.
//! std's SipHash resists HashDoS, which matters for maps keyed by untrusted
//! input that grow without bound; ours are bounded by the schema's width
//! (`max_columns`) or by the input (an object keyed by ids, held whole until
//! it becomes a map) and built from the same keys they are probed with, and
//! the lookup is on the hot path of every value. The multiply-rotate scheme
//! is FxHash's (rustc's), with a final rotation.

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

    /// The product's high bits are its well-mixed ones, but hashbrown takes
    /// a bucket from the low bits: without the rotation, the low bits of a
    /// short key's hash depend on its first bytes only, so a million ids
    /// (`"k0"` … `"k999999"`) had 289 distinct bucket indexes among 2^21
    /// and absorbing them took minutes. Rotated by 20 they have 754,000
    /// (random placement: 787,000); by 26, as rustc-hash 2 rotates its
    /// own scheme, 700,000 to 800,000 and fewer at 16 bits.
    #[inline]
    fn finish(&self) -> u64 {
        self.hash.rotate_left(20)
    }
}

/// The 1-7 bytes after the last whole word, as one word, read with at most
/// two loads. Copying them into a zeroed buffer (the obvious way) compiled to
/// a `memcpy` call whose byte stores the next load could not take from the
/// store buffer: a stall on every key lookup of routing (seen with perf).
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

/// Whether two keys are the same bytes, as `a == b` says. Keys are mostly
/// short, and `a == b` calls `memcmp` for any length the compiler cannot
/// see; a key of up to 16 bytes is compared here as two words that
/// overlap (two halves of 4 bytes up to 8, three bytes up to 3) loaded
/// from its two ends, which cover every byte.
#[inline(always)]
pub fn same_key(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n > 16 {
        return a == b;
    }
    if n >= 8 {
        return ends::<8>(a) == ends::<8>(b);
    }
    if n >= 4 {
        return ends::<4>(a) == ends::<4>(b);
    }
    n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1])
}

/// The first and the last `N` bytes of `s` (they overlap when `s` is
/// shorter than `2 * N`); zeros when it is shorter than `N`.
#[inline(always)]
fn ends<const N: usize>(s: &[u8]) -> ([u8; N], [u8; N]) {
    match (s.first_chunk::<N>(), s.last_chunk::<N>()) {
        (Some(first), Some(last)) => (*first, *last),
        _ => ([0; N], [0; N]),
    }
}

pub type KeyMap<V> = std::collections::HashMap<String, V, BuildHasherDefault<KeyHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    proptest::proptest! {
        /// Keys of every length around the word sizes, equal or differing
        /// in one byte anywhere: `same_key` says what `==` says.
        #[test]
        fn same_key_is_byte_equality(
            a in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40),
            flip in proptest::prelude::any::<proptest::sample::Index>(),
            bit in 0u8..8,
            longer in proptest::prelude::any::<bool>(),
        ) {
            proptest::prop_assert!(same_key(&a, &a.clone()));
            if !a.is_empty() {
                let mut b = a.clone();
                b[flip.index(a.len())] ^= 1 << bit;
                proptest::prop_assert!(!same_key(&a, &b));
            }
            let mut c = a.clone();
            if longer { c.push(0) } else { c.pop(); }
            proptest::prop_assert_eq!(same_key(&a, &c), a == c);
        }
    }

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

    /// Keys that differ only in their last bytes spread over the low bits,
    /// where a hash table takes its bucket.
    #[test]
    fn ids_spread_over_the_low_bits() {
        for prefix in ["k", "id_", "user-0000"] {
            let low: std::collections::HashSet<u64> =
                (0..65_536).map(|i| hash(&format!("{prefix}{i}")) & 0xffff).collect();
            // 65,536 keys thrown at random into 65,536 buckets fill 63% of
            // them (41,400); without the final rotation these fill 256 or fewer.
            assert!(low.len() > 35_000, "{prefix}: {} distinct low 16 bits", low.len());
        }
    }
}
