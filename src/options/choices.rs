//! The options whose values are names (formats, modes, policies,
//! encodings, compressions, type names): one table gives both directions.

#[allow(unused_imports)]
use super::*;

/// An enumeration whose values are SQL strings: one table gives both
/// directions, and parsing ignores case.
macro_rules! named_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        // Not every enumeration is read in both directions.
        #[allow(dead_code)]
        impl $name {
            /// Every value with its SQL name, in documentation order.
            pub const NAMES: &'static [(&'static str, $name)] = &[$(($text, $name::$variant)),+];

            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// The value named `s`, ignoring case.
            pub fn parse(s: &str) -> Option<Self> {
                Self::NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(s)).map(|(_, v)| *v)
            }
        }

        impl Named for $name {
            fn names() -> &'static [(&'static str, Self)] {
                Self::NAMES
            }
        }
    };
}

/// What [`choice`] needs of a [`named_enum!`].
pub(crate) trait Named: Copy + 'static {
    fn names() -> &'static [(&'static str, Self)];
}

named_enum!(InputFormat {
    Csv = "csv",
    Json = "json",
    JsonArray = "json_array",
    Jsonl = "jsonl",
    Ndjson = "ndjson",
    Xml = "xml",
    Parquet = "parquet",
});

impl InputFormat {
    /// Whether files of this format carry a signature that the files of one
    /// directory scan must share (`RecordReader::signature`: the CSV header,
    /// the XML root), so directory mode opens each file to compare them.
    pub fn has_signature(self) -> bool {
        matches!(self, InputFormat::Csv | InputFormat::Xml)
    }

    /// File extensions (lower case, with the dot) this format accepts.
    pub fn extensions(self) -> &'static [&'static str] {
        match self {
            InputFormat::Csv => &[".csv"],
            InputFormat::Json | InputFormat::JsonArray => &[".json"],
            InputFormat::Jsonl => &[".jsonl"],
            InputFormat::Ndjson => &[".ndjson"],
            InputFormat::Xml => &[".xml"],
            InputFormat::Parquet => &[".parquet", ".pq"],
        }
    }
}

named_enum!(InputMode { SingleFile = "single_file", Directory = "directory" });
named_enum!(SchemaMode { Additive = "additive", Strict = "strict" });
named_enum!(ColumnOrder {
    Alphabetically = "alphabetically",
    SchemaContractFirst = "schema_contract_first",
    Source = "source",
});
named_enum!(FieldNamePolicy { LowerAlpha = "lower_alpha", LowerSnake = "lower_snake", Preserve = "preserve" });
/// `timestamp_precision` names three of the engine's time units.
pub(crate) const TIMESTAMP_PRECISIONS: &[(&str, TimeUnit)] = &[
    ("TIMESTAMP_MILLIS", TimeUnit::Millis),
    ("TIMESTAMP_MICROS", TimeUnit::Micros),
    ("TIMESTAMP_NANOS", TimeUnit::Nanos),
];

impl Named for TimeUnit {
    fn names() -> &'static [(&'static str, Self)] {
        TIMESTAMP_PRECISIONS
    }
}

/// The `timestamp_precision` name of a unit (TIMESTAMP_MICROS for one it has no name for).
pub fn timestamp_precision_name(unit: TimeUnit) -> &'static str {
    TIMESTAMP_PRECISIONS.iter().find(|(_, u)| *u == unit).map_or("TIMESTAMP_MICROS", |(n, _)| n)
}
named_enum!(
    /// A hive partition column's type (`hive_types`), by DuckDB's name.
    HiveType {
        Varchar = "VARCHAR",
        Date = "DATE",
        Timestamp = "TIMESTAMP",
        Bigint = "BIGINT",
        Integer = "INTEGER",
        Double = "DOUBLE",
        Boolean = "BOOLEAN",
    }
);
named_enum!(
    /// A type `pin_types` may fix a field to, by DuckDB's name.
    PinType {
        Boolean = "BOOLEAN",
        Bigint = "BIGINT",
        Double = "DOUBLE",
        Varchar = "VARCHAR",
        Date = "DATE",
        Timestamp = "TIMESTAMP",
        Time = "TIME",
        Json = "JSON",
    }
);

impl PinType {
    /// The engine's type for the pin (timestamps in the scan's unit).
    pub fn kind(self, timestamp_unit: TimeUnit) -> crate::infer::ScalarKind {
        use crate::infer::ScalarKind as K;
        match self {
            PinType::Boolean => K::Bool,
            PinType::Bigint => K::Int,
            PinType::Double => K::Float,
            PinType::Varchar => K::Str,
            PinType::Date => K::Date,
            PinType::Timestamp => K::Timestamp(timestamp_unit),
            PinType::Time => K::Time,
            PinType::Json => K::Json,
        }
    }
}
named_enum!(OnError { Stop = "stop", SkipRow = "skip_row", EmitNullRow = "emit_null_row" });
named_enum!(
    /// A partitioned lake's grain (`granularity` of the partition and
    /// BigQuery functions).
    Granularity { Daily = "daily", Hourly = "hourly" }
);
named_enum!(
    /// How text input is compressed: `auto` goes by the file name's
    /// suffix (`.gz`, `.zst`).
    Compression { Auto = "auto", None = "none", Gzip = "gzip", Zstd = "zstd" }
);

impl Compression {
    /// The compression of a file named `name`: the forced one, or by suffix.
    pub fn of_file(self, name: &str) -> Compression {
        if self != Compression::Auto {
            return self;
        }
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".gz") {
            Compression::Gzip
        } else if lower.ends_with(".zst") {
            Compression::Zstd
        } else {
            Compression::None
        }
    }
}

/// `input_text_encoding`: what the bytes of a text file are (source/decode.rs
/// turns each into UTF-8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextEncoding {
    Utf8,
    /// Byte-order mark decides; little endian without one.
    Utf16,
    Utf16Le,
    Utf16Be,
    Latin1,
    /// Windows code page 1252: Latin-1 but for 0x80..0x9F (curly quotes, €, ...).
    Windows1252,
}

impl TextEncoding {
    /// The name messages use (one `input_text_encoding` takes).
    pub fn name(self) -> &'static str {
        match self {
            TextEncoding::Utf8 => "utf-8",
            TextEncoding::Utf16 => "utf-16",
            TextEncoding::Utf16Le => "utf-16-le",
            TextEncoding::Utf16Be => "utf-16-be",
            TextEncoding::Latin1 => "latin-1",
            TextEncoding::Windows1252 => "windows-1252",
        }
    }

    /// Python codec names and aliases, normalised as Python does (case and
    /// `-`/`_`/space insensitive).
    pub fn parse(name: &str) -> Option<Self> {
        let norm: String =
            name.trim().to_ascii_lowercase().chars().map(|c| if c == '_' || c == ' ' { '-' } else { c }).collect();
        Some(match norm.as_str() {
            "utf-8" | "utf8" | "u8" | "utf" | "cp65001" | "utf-8-sig" | "utf8-sig" => TextEncoding::Utf8,
            "utf-16" | "utf16" | "u16" => TextEncoding::Utf16,
            "utf-16-le" | "utf-16le" | "utf16le" | "utf16-le" => TextEncoding::Utf16Le,
            "utf-16-be" | "utf-16be" | "utf16be" | "utf16-be" => TextEncoding::Utf16Be,
            "latin-1" | "latin1" | "latin" | "l1" | "iso-8859-1" | "iso8859-1" | "8859" | "cp819" | "iso-ir-100"
            | "csisolatin1" | "iso-8859-1:1987" => TextEncoding::Latin1,
            "windows-1252" | "cp1252" | "windows1252" | "1252" => TextEncoding::Windows1252,
            // ASCII is a subset of UTF-8.
            "ascii" | "us-ascii" | "646" => TextEncoding::Utf8,
            _ => return None,
        })
    }
}
