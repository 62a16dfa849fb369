//! Declared types: the scalar types a typed source (Parquet) states and
//! DuckDB has, beyond the engine's logical types (docs/engine.md). They are kept as declared
//! (an INTEGER column stays INTEGER, DECIMAL(10,2) stays DECIMAL(10,2)) and
//! reconcile with each other and with the engine's types by one rule: a
//! version takes a value its type holds without loss; within one scan two
//! numeric types join to the narrowest type holding both (docs/formats.md).

use super::schema::ScalarKind;
use crate::value::Declared;

/// The numeric range of a kind as (integer range) for integer kinds.
fn int_range(k: ScalarKind) -> Option<(i128, i128)> {
    match k {
        ScalarKind::Int => Some((i64::MIN as i128, i64::MAX as i128)),
        ScalarKind::Declared(d) => d.int_range(),
        _ => None,
    }
}

fn is_float(k: ScalarKind) -> bool {
    matches!(k, ScalarKind::Float | ScalarKind::Declared(Declared::Float32))
}

/// Whether a version of kind `version` takes every value of kind `value`
/// without loss (an established DOUBLE also takes 64-bit integers, as the
/// int → float rule of docs/engine.md says).
pub fn holds(version: ScalarKind, value: ScalarKind) -> bool {
    if version == value {
        return true;
    }
    match (version, value) {
        (ScalarKind::Float, v) => int_range(v).is_some() || is_float(v),
        (
            ScalarKind::Declared(Declared::Decimal { precision: p1, scale: s1 }),
            ScalarKind::Declared(Declared::Decimal { precision: p2, scale: s2 }),
        ) => s2 <= s1 && p2 - s2 <= p1 - s1,
        (a, b) => match (int_range(a), int_range(b)) {
            (Some((lo_a, hi_a)), Some((lo_b, hi_b))) => lo_a <= lo_b && hi_b <= hi_a,
            _ => false,
        },
    }
}

/// The narrowest kind holding both, for versions born in this scan; `None`
/// when there is none (the value then opens a new version).
pub fn join(a: ScalarKind, b: ScalarKind) -> Option<ScalarKind> {
    if holds(a, b) {
        return Some(a);
    }
    if holds(b, a) {
        return Some(b);
    }
    if let (Some((lo_a, hi_a)), Some((lo_b, hi_b))) = (int_range(a), int_range(b)) {
        let (lo, hi) = (lo_a.min(lo_b), hi_a.max(hi_b));
        let candidates = [
            ScalarKind::Declared(Declared::Int16),
            ScalarKind::Declared(Declared::Int32),
            ScalarKind::Int,
            ScalarKind::Declared(Declared::UInt16),
            ScalarKind::Declared(Declared::UInt32),
        ];
        return candidates.into_iter().find(|k| int_range(*k).is_some_and(|(l, h)| l <= lo && hi <= h));
    }
    // Integers and floats meet in DOUBLE (docs/engine.md, "Reconciliation").
    let numeric = |k| int_range(k).is_some() || is_float(k);
    if numeric(a) && numeric(b) {
        return Some(ScalarKind::Float);
    }
    if let (
        ScalarKind::Declared(Declared::Decimal { precision: p1, scale: s1 }),
        ScalarKind::Declared(Declared::Decimal { precision: p2, scale: s2 }),
    ) = (a, b)
    {
        let scale = s1.max(s2);
        let precision = (p1 - s1).max(p2 - s2) + scale;
        return Declared::decimal(precision as u32, scale as i32).map(ScalarKind::Declared);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const I8: ScalarKind = ScalarKind::Declared(Declared::Int8);
    const I16: ScalarKind = ScalarKind::Declared(Declared::Int16);
    const I32: ScalarKind = ScalarKind::Declared(Declared::Int32);
    const U8: ScalarKind = ScalarKind::Declared(Declared::UInt8);
    const U32: ScalarKind = ScalarKind::Declared(Declared::UInt32);
    const U64: ScalarKind = ScalarKind::Declared(Declared::UInt64);
    const F32: ScalarKind = ScalarKind::Declared(Declared::Float32);

    fn dec(p: u8, s: u8) -> ScalarKind {
        ScalarKind::Declared(Declared::Decimal { precision: p, scale: s })
    }

    #[test]
    fn integers_hold_narrower_ranges_only() {
        assert!(holds(I32, I8));
        assert!(holds(I32, U8));
        assert!(holds(ScalarKind::Int, U32));
        assert!(!holds(ScalarKind::Int, U64));
        assert!(!holds(I8, U8));
        assert!(!holds(U32, I8));
        assert!(!holds(I32, ScalarKind::Int));
    }

    #[test]
    fn joins_pick_the_narrowest_common_type() {
        assert_eq!(join(I8, U8), Some(I16));
        assert_eq!(join(I32, U32), Some(ScalarKind::Int));
        assert_eq!(join(I32, ScalarKind::Int), Some(ScalarKind::Int));
        assert_eq!(join(ScalarKind::Int, U64), None);
        assert_eq!(join(I32, F32), Some(ScalarKind::Float));
        assert_eq!(join(F32, ScalarKind::Float), Some(ScalarKind::Float));
        assert_eq!(join(I16, ScalarKind::Str), None);
    }

    #[test]
    fn decimals_widen_to_hold_both_sides() {
        assert!(holds(dec(12, 2), dec(10, 2)));
        assert!(holds(dec(12, 4), dec(10, 2)));
        assert!(!holds(dec(12, 4), dec(12, 2)));
        assert_eq!(join(dec(10, 2), dec(8, 4)), Some(dec(12, 4)));
        assert_eq!(join(dec(38, 0), dec(38, 10)), None);
        assert_eq!(join(dec(10, 2), ScalarKind::Float), None);
    }

    #[test]
    fn decimal_widths_follow_duckdb() {
        assert_eq!(Declared::Decimal { precision: 4, scale: 0 }.width(), 2);
        assert_eq!(Declared::Decimal { precision: 9, scale: 0 }.width(), 4);
        assert_eq!(Declared::Decimal { precision: 18, scale: 0 }.width(), 8);
        assert_eq!(Declared::Decimal { precision: 19, scale: 0 }.width(), 16);
        assert_eq!(Declared::decimal(39, 0), None);
        assert_eq!(Declared::decimal(10, -1), None);
    }
}
