//! UTF-8 validation of input text, the first thing every text decoder does
//! to each record. SIMD (simdutf8, already in the build through arrow) runs
//! several times faster than `std::str::from_utf8` on the mostly-ASCII text
//! of data files; the error position comes from std's validator, which runs
//! only on invalid input.

/// `bytes` as text, or the byte offset of the first invalid sequence.
#[inline]
pub fn validate(bytes: &[u8]) -> Result<&str, usize> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(_) => match std::str::from_utf8(bytes) {
            // Both validators implement the same definition; if they ever
            // disagree, std's answer stands.
            Ok(text) => Ok(text),
            Err(e) => Err(e.valid_up_to()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::validate;

    #[test]
    fn agrees_with_std_on_valid_and_invalid_text() {
        let cases: [&[u8]; 6] =
            [b"", b"plain ascii", "caf\u{e9} \u{1F600}".as_bytes(), b"ab\xffcd", b"\xe2\x82", b"ok\xc3\x28"];
        for bytes in cases {
            let ours = validate(bytes);
            let std = std::str::from_utf8(bytes).map_err(|e| e.valid_up_to());
            assert_eq!(ours, std, "{bytes:?}");
        }
    }
}
