//! Text of declared values, for the places where a declared value must
//! become text: a JSON-text fallback column, a value past a depth limit.
//! Numbers are JSON numbers; blobs are base64, UUIDs the canonical
//! 8-4-4-4-12 form and intervals ISO 8601 durations, all JSON strings.

use std::fmt::Write;

use super::tape::{DeclaredBits, Tape};
use super::Declared;

/// Writes the value; `json` quotes text-like values (blob, UUID, interval)
/// and writes non-finite floats as `null`.
pub fn write_declared(kind: Declared, bits: u64, tape: &Tape, json: bool, out: &mut String) {
    let quote = |out: &mut String| {
        if json {
            out.push('"');
        }
    };
    match kind {
        Declared::UInt64 => {
            let _ = write!(out, "{bits}");
        }
        d if d.is_integer() => {
            let _ = write!(out, "{}", bits as i64);
        }
        Declared::Float32 => {
            let f = f32::from_bits(bits as u32);
            if f.is_finite() || !json {
                let _ = write!(out, "{f:?}");
            } else {
                out.push_str("null");
            }
        }
        Declared::Decimal { precision, scale } => {
            write_decimal(decimal_value(precision, bits, tape), scale, out);
        }
        Declared::Blob => {
            let (start, end) = DeclaredBits::range(bits);
            quote(out);
            write_base64(&tape.bytes[start..end], out);
            quote(out);
        }
        Declared::Uuid => {
            let b = sixteen(tape, bits);
            quote(out);
            for (i, byte) in b.iter().enumerate() {
                if matches!(i, 4 | 6 | 8 | 10) {
                    out.push('-');
                }
                let _ = write!(out, "{byte:02x}");
            }
            quote(out);
        }
        Declared::Interval => {
            let b = sixteen(tape, bits);
            let months = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            let days = i32::from_le_bytes([b[4], b[5], b[6], b[7]]);
            let micros = i64::from_le_bytes([b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]]);
            quote(out);
            let _ = write!(out, "P{months}M{days}DT");
            write_decimal(micros as i128, 6, out);
            out.push('S');
            quote(out);
        }
        _ => {}
    }
}

/// The 16 bytes a wide declared value keeps in [`Tape::bytes`].
pub fn sixteen(tape: &Tape, bits: u64) -> [u8; 16] {
    let start = bits as usize;
    let mut b = [0u8; 16];
    if let Some(src) = tape.bytes.get(start..start + 16) {
        b.copy_from_slice(src);
    }
    b
}

/// The unscaled value of a decimal node.
pub fn decimal_value(precision: u8, bits: u64, tape: &Tape) -> i128 {
    if precision <= 18 {
        bits as i64 as i128
    } else {
        i128::from_le_bytes(sixteen(tape, bits))
    }
}

/// `unscaled / 10^scale` exactly: `-1234`, 2 → `-12.34`; trailing fraction
/// zeros are kept, as DuckDB prints DECIMAL(p, s).
pub fn write_decimal(unscaled: i128, scale: u8, out: &mut String) {
    let digits = unscaled.unsigned_abs().to_string();
    if unscaled < 0 {
        out.push('-');
    }
    let scale = scale as usize;
    if scale == 0 {
        out.push_str(&digits);
        return;
    }
    if digits.len() <= scale {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', scale - digits.len()));
        out.push_str(&digits);
    } else {
        let (int, frac) = digits.split_at(digits.len() - scale);
        out.push_str(int);
        out.push('.');
        out.push_str(frac);
    }
}

/// Standard base64 with padding.
pub fn write_base64(bytes: &[u8], out: &mut String) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for (k, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            out.push(if k <= chunk.len() { ALPHABET[(n >> shift & 63) as usize] as char } else { '=' });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard_alphabet() {
        for (input, expected) in
            [(&b""[..], ""), (b"f", "Zg=="), (b"fo", "Zm8="), (b"foo", "Zm9v"), (b"foobar", "Zm9vYmFy")]
        {
            let mut out = String::new();
            write_base64(input, &mut out);
            assert_eq!(out, expected);
        }
    }

    #[test]
    fn decimals_are_exact() {
        for (v, s, expected) in
            [(-1234i128, 2u8, "-12.34"), (5, 3, "0.005"), (120, 1, "12.0"), (7, 0, "7"), (-5, 1, "-0.5")]
        {
            let mut out = String::new();
            write_decimal(v, s, &mut out);
            assert_eq!(out, expected);
        }
    }

    #[test]
    fn uuid_and_interval_text() {
        let mut tape = Tape::default();
        let uuid = tape.push_bytes(&[0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 1, 2, 3, 4, 5, 6, 7, 8]);
        let mut out = String::new();
        write_declared(Declared::Uuid, uuid as u64, &tape, true, &mut out);
        assert_eq!(out, "\"12345678-9abc-def0-0102-030405060708\"");
        let mut interval = Vec::new();
        interval.extend_from_slice(&14i32.to_le_bytes());
        interval.extend_from_slice(&3i32.to_le_bytes());
        interval.extend_from_slice(&5_000_001i64.to_le_bytes());
        let at = tape.push_bytes(&interval);
        out.clear();
        write_declared(Declared::Interval, at as u64, &tape, false, &mut out);
        assert_eq!(out, "P14M3DT5.000001S");
    }
}
