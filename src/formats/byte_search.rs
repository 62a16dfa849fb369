//! The first of two (or three) bytes in a short span: the search every
//! decoder runs once per key, string or cell. `memchr::memchr2`'s vector
//! search has a setup cost larger than most JSON keys and values and most
//! CSV cells, so the first 32 bytes are searched 8 at a time in a
//! register, and only a longer span goes to memchr2 (memchr3).
//!
//! [`split_line`] reads a whole CSV line the same way, eight bytes at a
//! time, finding every delimiter and the line end (or a quote) in one pass.

/// How far the register search goes before handing over to memchr2.
const SHORT: usize = 32;

/// The first `a` or `b` of `rest`, as `memchr::memchr2(a, b, rest)` finds it.
#[inline(always)]
pub fn first_of_two(a: u8, b: u8, rest: &[u8]) -> Option<usize> {
    let (wa, wb) = (splat(a), splat(b));
    let mut i = 0;
    while i + 8 <= rest.len() && i < SHORT {
        let w = word_at(&rest[i..i + 8]);
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
        let w = word_at(&rest[i..i + 8]);
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

/// Finds the first LF, CR or `stop` byte of `bytes` (the end of the line
/// it starts with, or a byte the caller must look at) and calls
/// `at_delimiter` with the position of each `delimiter` before it, in
/// order; `None` (after calling it for every delimiter in `bytes`) when
/// there is none. A delimiter that is also one of those bytes is one of
/// them.
///
/// The first [`SHORT`] bytes are tested for all four bytes; past them,
/// the end is found by `memchr3`'s vector search and the bytes before it
/// are tested for the delimiter alone: one compare instead of four, which
/// were most of the tokenizer's instructions on the bench CSV (lines of
/// 200 bytes), while a short line never pays `memchr3`'s setup. On x86-64
/// sixteen bytes at a time with SSE2 ([`short_by_vector`],
/// [`delimiters_by_vector`]), and eight at a time with exact flags
/// ([`equal_bytes`]) for what is left and on other targets.
#[inline(always)]
pub fn split_line(bytes: &[u8], delimiter: u8, stop: u8, mut at_delimiter: impl FnMut(usize)) -> Option<usize> {
    let (wd, lf, cr, ws) = (splat(delimiter), splat(b'\n'), splat(b'\r'), splat(stop));
    let mut i = 0;
    if let Some(end) = short_by_vector(bytes, delimiter, stop, &mut i, &mut at_delimiter) {
        return Some(end);
    }
    while i < SHORT {
        let Some(chunk) = bytes.get(i..i + 8) else {
            // Fewer than eight bytes left: byte by byte.
            for (j, &b) in bytes[i..].iter().enumerate() {
                if b == b'\n' || b == b'\r' || b == stop {
                    return Some(i + j);
                }
                if b == delimiter {
                    at_delimiter(i + j);
                }
            }
            return None;
        };
        let w = word_at(chunk);
        let mut delimiters = equal_bytes(w, wd);
        let ends = equal_bytes(w, lf) | equal_bytes(w, cr) | equal_bytes(w, ws);
        if ends != 0 {
            // The flags below the first stop's (its bit is 8k + 7).
            let first = ends.trailing_zeros();
            delimiters &= (1u64 << first) - 1;
            flagged(delimiters, i, &mut at_delimiter);
            return Some(i + (first / 8) as usize);
        }
        flagged(delimiters, i, &mut at_delimiter);
        i += 8;
    }
    let end = memchr::memchr3(b'\n', b'\r', stop, &bytes[i..]).map(|p| i + p);
    let line = &bytes[..end.unwrap_or(bytes.len())];
    i = delimiters_by_vector(line, i, delimiter, &mut at_delimiter);
    while let Some(chunk) = line.get(i..i + 8) {
        flagged(equal_bytes(word_at(chunk), wd), i, &mut at_delimiter);
        i += 8;
    }
    for (j, &b) in line[i..].iter().enumerate() {
        if b == delimiter {
            at_delimiter(i + j);
        }
    }
    end
}

/// Calls `at_delimiter` with the position of each `delimiter` in
/// `line[from..]`, sixteen bytes at a time with SSE2 (every x86-64 has
/// it): one compare and one mask a vector, where a word's exact flags
/// ([`equal_bytes`]) took eleven instructions for eight bytes, about
/// half of the tokenizer's own instructions on the bench CSV (callgrind).
/// Returns where it stopped: fewer than sixteen bytes before the line's
/// end, which the caller reads on.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn delimiters_by_vector(line: &[u8], from: usize, delimiter: u8, at_delimiter: &mut impl FnMut(usize)) -> usize {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    // SAFETY: SSE2 is part of the x86-64 baseline, so every CPU this code
    // runs on has the instruction.
    let needle = unsafe { _mm_set1_epi8(delimiter as i8) };
    let mut i = from;
    while let Some(chunk) = line.get(i..i + 16) {
        // SAFETY: SSE2 as above; `chunk` holds exactly sixteen readable
        // bytes, the width of the load, which has no alignment requirement.
        let found = unsafe {
            let bytes = _mm_loadu_si128(chunk.as_ptr().cast());
            _mm_movemask_epi8(_mm_cmpeq_epi8(bytes, needle)) as u32
        };
        lanes(found, i, at_delimiter);
        i += 16;
    }
    i
}

/// Elsewhere the words of the caller's loop do it all.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn delimiters_by_vector(_: &[u8], from: usize, _: u8, _: &mut impl FnMut(usize)) -> usize {
    from
}

/// [`split_line`]'s first [`SHORT`] bytes sixteen at a time with SSE2,
/// while sixteen are left: the delimiters before the first LF, CR or
/// `stop`, and that byte's position (`*i` is left where it stopped
/// otherwise, for the words of the caller's loop). Four compares a
/// vector, where the words took four exact flags each eight bytes.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn short_by_vector(
    bytes: &[u8],
    delimiter: u8,
    stop: u8,
    i: &mut usize,
    at_delimiter: &mut impl FnMut(usize),
) -> Option<usize> {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8};
    // SAFETY: SSE2 is part of the x86-64 baseline, so every CPU this code
    // runs on has the instruction.
    let (wd, lf, cr, ws) = unsafe {
        (
            _mm_set1_epi8(delimiter as i8),
            _mm_set1_epi8(b'\n' as i8),
            _mm_set1_epi8(b'\r' as i8),
            _mm_set1_epi8(stop as i8),
        )
    };
    while *i < SHORT {
        let chunk = bytes.get(*i..*i + 16)?;
        // SAFETY: SSE2 as above; `chunk` holds exactly sixteen readable
        // bytes, the width of the load, which has no alignment requirement.
        let (delimiters, ends) = unsafe {
            let v = _mm_loadu_si128(chunk.as_ptr().cast());
            let ends = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, lf), _mm_cmpeq_epi8(v, cr)), _mm_cmpeq_epi8(v, ws));
            (_mm_movemask_epi8(_mm_cmpeq_epi8(v, wd)) as u32, _mm_movemask_epi8(ends) as u32)
        };
        // The delimiters below the first end byte, if there is one.
        let first = ends.trailing_zeros();
        lanes(if ends != 0 { delimiters & ((1u32 << first) - 1) } else { delimiters }, *i, at_delimiter);
        if ends != 0 {
            return Some(*i + first as usize);
        }
        *i += 16;
    }
    None
}

/// Calls `f` with `base` plus the lane of each bit set in `mask` (a
/// vector compare's byte mask), lowest first.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn lanes(mut mask: u32, base: usize, f: &mut impl FnMut(usize)) {
    while mask != 0 {
        f(base + mask.trailing_zeros() as usize);
        mask &= mask - 1;
    }
}

/// Elsewhere the words of the caller's loop read the first bytes.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn short_by_vector(_: &[u8], _: u8, _: u8, _: &mut usize, _: &mut impl FnMut(usize)) -> Option<usize> {
    None
}

/// The eight bytes of `chunk` (exactly eight) as a little-endian word.
#[inline(always)]
fn word_at(chunk: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(chunk);
    u64::from_le_bytes(word)
}

/// Calls `f` with the position of each byte flagged in `flags` (high bits,
/// as [`equal_bytes`] sets them) of the word at `base`, lowest first.
#[inline(always)]
fn flagged(mut flags: u64, base: usize, f: &mut impl FnMut(usize)) {
    while flags != 0 {
        f(base + (flags.trailing_zeros() / 8) as usize);
        flags &= flags - 1;
    }
}

/// The high bit of exactly the bytes of `word` that equal the byte
/// `splatted` repeats: adding 0x7f to each byte's low seven bits sets its
/// high bit unless they are zero, and no sum carries into the next byte.
#[inline(always)]
fn equal_bytes(word: u64, splatted: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let x = word ^ splatted;
    !(((x & LOW7) + LOW7) | x | LOW7)
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

    /// `split_line`'s end and delimiters for `text`.
    fn split(text: &[u8], delimiter: u8, stop: u8) -> (Option<usize>, Vec<usize>) {
        let mut found = Vec::new();
        let end = split_line(text, delimiter, stop, |at| found.push(at));
        (end, found)
    }

    /// The same, read byte by byte: the first LF, CR or `stop`, and the
    /// delimiters before it.
    fn byte_by_byte(text: &[u8], delimiter: u8, stop: u8) -> (Option<usize>, Vec<usize>) {
        let end = text.iter().position(|&b| b == b'\n' || b == b'\r' || b == stop);
        let line = &text[..end.unwrap_or(text.len())];
        (end, line.iter().enumerate().filter(|&(_, &b)| b == delimiter).map(|(i, _)| i).collect())
    }

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

        /// The one-pass line split finds the delimiters and the first stop
        /// a byte-by-byte reading finds, for any delimiter and stop byte
        /// (LF and CR too), among bytes one bit away from them and the
        /// bytes a borrow or carry could confuse, in lines shorter and
        /// longer than a word.
        #[test]
        fn split_line_is_a_byte_by_byte_reading(
            delimiter in any::<u8>(),
            stop in any::<u8>(),
            picks in prop::collection::vec(0usize..11, 0..80),
        ) {
            let pool = [delimiter, b'\n', b'\r', stop, delimiter ^ 1, stop ^ 0x80, 0, 0x7f, 0x80, 0xff, b'x'];
            let text: Vec<u8> = picks.iter().map(|&p| pool[p]).collect();
            prop_assert_eq!(split(&text, delimiter, stop), byte_by_byte(&text, delimiter, stop));
        }

        /// The same for lines past the first 32 bytes, where the end is
        /// found by `memchr3` and the words before it tested for the
        /// delimiter alone: the bytes it acts on are rare, so most lines
        /// run long, and the buffer may end anywhere.
        #[test]
        fn split_line_reads_long_lines_byte_by_byte(
            delimiter in any::<u8>(),
            stop in any::<u8>(),
            picks in prop::collection::vec(0usize..400, 0..300),
        ) {
            let pool = [delimiter, b'\n', b'\r', stop, delimiter ^ 1, stop ^ 0x80, 0, 0x7f, 0x80, 0xff];
            let text: Vec<u8> = picks.iter().map(|&p| if p < 20 { delimiter } else { p.checked_sub(390).and_then(|k| pool.get(k)).copied().unwrap_or(b'x') }).collect();
            prop_assert_eq!(split(&text, delimiter, stop), byte_by_byte(&text, delimiter, stop));
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
