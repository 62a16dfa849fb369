//! The scalar types a typed source (Parquet) declares and DuckDB has, as the
//! tape records them next to a value's bits (`Node::Declared`). How they
//! reconcile with each other and with inferred kinds is the schema's
//! business (`infer/declared.rs`); this is only the vocabulary.

/// A declared scalar type (see the module doc). Integers of 64 bits and
/// doubles are the engine's own `Int` and `Float` (docs/engine.md).
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
    pub fn int_range(self) -> Option<(i128, i128)> {
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

    /// The semantic suffix for versioned names (docs/engine.md, "Routing").
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
