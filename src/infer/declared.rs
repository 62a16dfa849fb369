//! Declared types: the scalar types a typed source (Parquet) states and
//! DuckDB has, beyond the seed's logical types. They are kept as declared
//! (an INTEGER column stays INTEGER, DECIMAL(10,2) stays DECIMAL(10,2)) and
//! reconcile with each other and with the seed's types by one rule: a
//! version takes a value its type holds without loss; within one scan two
//! numeric types join to the narrowest type holding both (docs/formats.md).

use super::schema::ScalarKind;

/// A declared scalar type (see the module doc). Integers of 64 bits and
/// doubles are the seed's own `Int` and `Float`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Declared {
    Int8,
    Int16,
    Int32,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    /// 32-bit float (DuckDB FLOAT).
    Float32,
    /// DECIMAL(precision, scale), precision 1..=38, scale ≤ precision.
    Decimal {
        precision: u8,
        scale: u8,
    },
    Blob,
    Uuid,
    /// Months, days and microseconds (DuckDB INTERVAL).
    Interval,
}

/// DuckDB's widest decimal.
pub const MAX_DECIMAL_PRECISION: u8 = 38;

impl Declared {
    /// The integer range of an integer type.
    fn int_range(self) -> Option<(i128, i128)> {
        Some(match self {
            Declared::Int8 => (i8::MIN as i128, i8::MAX as i128),
            Declared::Int16 => (i16::MIN as i128, i16::MAX as i128),
            Declared::Int32 => (i32::MIN as i128, i32::MAX as i128),
            Declared::UInt8 => (0, u8::MAX as i128),
            Declared::UInt16 => (0, u16::MAX as i128),
            Declared::UInt32 => (0, u32::MAX as i128),
            Declared::UInt64 => (0, u64::MAX as i128),
            _ => return None,
        })
    }

    pub fn is_integer(self) -> bool {
        self.int_range().is_some()
    }

    /// The seed's semantic suffix for versioned names.
    pub fn semantic(self) -> &'static str {
        match self {
            d if d.is_integer() => "integer",
            Declared::Float32 => "float",
            Declared::Decimal { .. } => "decimal",
            Declared::Blob => "binary",
            Declared::Uuid => "uuid",
            _ => "interval",
        }
    }

    /// The registry's `kind` (decimals add precision and scale).
    pub fn registry_name(self) -> &'static str {
        match self {
            Declared::Int8 => "int8",
            Declared::Int16 => "int16",
            Declared::Int32 => "int32",
            Declared::UInt8 => "uint8",
            Declared::UInt16 => "uint16",
            Declared::UInt32 => "uint32",
            Declared::UInt64 => "uint64",
            Declared::Float32 => "float32",
            Declared::Decimal { .. } => "decimal",
            Declared::Blob => "binary",
            Declared::Uuid => "uuid",
            Declared::Interval => "interval",
        }
    }

    /// The registry kinds without parameters, for parsing.
    pub fn from_registry_name(name: &str) -> Option<Declared> {
        Some(match name {
            "int8" => Declared::Int8,
            "int16" => Declared::Int16,
            "int32" => Declared::Int32,
            "uint8" => Declared::UInt8,
            "uint16" => Declared::UInt16,
            "uint32" => Declared::UInt32,
            "uint64" => Declared::UInt64,
            "float32" => Declared::Float32,
            "binary" => Declared::Blob,
            "uuid" => Declared::Uuid,
            "interval" => Declared::Interval,
            _ => return None,
        })
    }

    /// Arrow-style type text for drift events and variants.
    pub fn arrow_name(self) -> String {
        match self {
            Declared::Float32 => "float".into(),
            Declared::Decimal { precision, scale } => format!("decimal128({precision}, {scale})"),
            Declared::Interval => "month_day_micro_interval".into(),
            other => other.registry_name().into(),
        }
    }

    /// A decimal type, when DuckDB has it.
    pub fn decimal(precision: u32, scale: i32) -> Option<Declared> {
        let ok = (1..=MAX_DECIMAL_PRECISION as u32).contains(&precision) && scale >= 0 && scale as u32 <= precision;
        ok.then_some(Declared::Decimal { precision: precision as u8, scale: scale as u8 })
    }

    /// Bytes per value in DuckDB's physical layout (fixed-width types).
    pub fn width(self) -> usize {
        match self {
            Declared::Int8 | Declared::UInt8 => 1,
            Declared::Int16 | Declared::UInt16 => 2,
            Declared::Int32 | Declared::UInt32 | Declared::Float32 => 4,
            Declared::UInt64 => 8,
            Declared::Decimal { precision, .. } => match precision {
                0..=4 => 2,
                5..=9 => 4,
                10..=18 => 8,
                _ => 16,
            },
            Declared::Uuid | Declared::Interval => 16,
            Declared::Blob => 0,
        }
    }
}

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
/// seed's int → float rule says).
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
    // Integers and floats meet in DOUBLE (the seed's rule).
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
