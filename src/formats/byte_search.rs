//! The first of two (or three) bytes in a short span: the search every
//! decoder runs once per key, string or cell. `memchr::memchr2`'s vector
//! search has a setup cost larger than most JSON keys and values and most
//! CSV cells, so the first 32 bytes are searched 8 at a time in a
//! register, and only a longer span goes to memchr2 (memchr3).

/// How far the register search goes before handing over to memchr2.
const SHORT: usize = 32;

/// The first `a` or `b` of `rest`, as `memchr::memchr2(a, b, rest)` finds it.
#[inline(always)]
pub fn first_of_two(a: u8, b: u8, rest: &[u8]) -> Option<usize> {
    let (wa, wb) = (splat(a), splat(b));
    let mut i = 0;
    while i + 8 <= rest.len() && i < SHORT {
        let mut word = [0u8; 8];
        word.copy_from_slice(&rest[i..i + 8]);
        let w = u64::from_le_bytes(word);
        let found = zero_bytes(w ^ wa) | zero_bytes(w ^ wb);
        if found != 0 {
            // The lowest flag is the first match (a false flag can only
            // follow a true one, from the subtraction's borrow).
            return Some(i + (found.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    if i < SHORT {
        return rest[i..].iter().position(|&c| c == a || c == b).map(|p| i + p);
    }
    memchr::memchr2(a, b, &rest[i..]).map(|p| i + p)
}

/// The first `a`, `b` or `c` of `rest`, as `memchr::memchr3(a, b, c, rest)`
/// finds it: an unquoted CSV cell ends at its delimiter, LF or CR.
#[inline(always)]
pub fn first_of_three(a: u8, b: u8, c: u8, rest: &[u8]) -> Option<usize> {
    let (wa, wb, wc) = (splat(a), splat(b), splat(c));
    let mut i = 0;
    while i + 8 <= rest.len() && i < SHORT {
        let mut word = [0u8; 8];
        word.copy_from_slice(&rest[i..i + 8]);
        let w = u64::from_le_bytes(word);
        let found = zero_bytes(w ^ wa) | zero_bytes(w ^ wb) | zero_bytes(w ^ wc);
        if found != 0 {
            // As in first_of_two: the lowest flag is a true match.
            return Some(i + (found.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    if i < SHORT {
        return rest[i..].iter().position(|&x| x == a || x == b || x == c).map(|p| i + p);
    }
    memchr::memchr3(a, b, c, &rest[i..]).map(|p| i + p)
}

/// `byte` in each of a word's eight bytes.
#[inline(always)]
const fn splat(byte: u8) -> u64 {
    0x0101_0101_0101_0101 * byte as u64
}

/// The high bit of every zero byte of `x` (and maybe of bytes above the
/// first zero byte).
#[inline(always)]
fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(0x0101_0101_0101_0101) & !x & 0x8080_8080_8080_8080
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: crate::test_support::cases(1024), .. ProptestConfig::default() })]

        /// The short-span search finds what memchr2 finds, for any two
        /// bytes (equal ones too), among bytes one bit away from them and
        /// the bytes of a borrow (0, 0x80, 0xff), before and past the
        /// register search's 32 bytes.
        #[test]
        fn first_of_two_is_memchr2(
            a in any::<u8>(),
            b in any::<u8>(),
            picks in prop::collection::vec(0usize..8, 0..90),
            plain in 0usize..80,
        ) {
            let filler = if a == b'x' || b == b'x' { b'y' } else { b'x' };
            let pool = [a, b, a ^ 1, b ^ 0x80, 0, 0x80, 0xff, filler];
            let mut text = vec![filler; plain];
            text.extend(picks.iter().map(|&p| pool[p]));
            prop_assert_eq!(first_of_two(a, b, &text), memchr::memchr2(a, b, &text));
        }

        /// The same for three bytes (the CSV cell search: delimiter, LF, CR).
        #[test]
        fn first_of_three_is_memchr3(
            a in any::<u8>(),
            b in any::<u8>(),
            c in any::<u8>(),
            picks in prop::collection::vec(0usize..9, 0..90),
            plain in 0usize..80,
        ) {
            let filler = (b'x'..=b'z').find(|f| ![a, b, c].contains(f)).unwrap_or(b'w');
            let pool = [a, b, c, a ^ 1, c ^ 0x80, 0, 0x80, 0xff, filler];
            let mut text = vec![filler; plain];
            text.extend(picks.iter().map(|&p| pool[p]));
            prop_assert_eq!(first_of_three(a, b, c, &text), memchr::memchr3(a, b, c, &text));
        }
    }
}
