//! Every named parameter in one row of [`OPTION_SPECS`]: its name, SQL type,
//! default, parse-and-validate function and whether the registry contract
//! carries it. Registration (src/ffi), parsing, defaults and the contract
//! all read the rows, so an option cannot be registered without being parsed
//! or defaulted. Adding one is one row here, its field in [`Options`], and
//! its line in docs/options.md (a test checks the two agree).

use crate::error::{Result, SanitizeError};
use crate::scalar::{CustomPatterns, DateFormats, FloatFormat, ScalarParsers};
use crate::value::TimeUnit;

/// A named-parameter value as DuckDB handed it over, free of FFI types.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<ParamValue>),
    /// A STRUCT or a MAP, as (key, value) pairs in order (MAP keys as text).
    Map(Vec<(String, ParamValue)>),
}

impl ParamValue {
    /// The value as an error message shows it (`'x'`, `5`, `a list`).
    pub fn describe(&self) -> String {
        match self {
            ParamValue::Null => "NULL".into(),
            ParamValue::Bool(b) => b.to_string(),
            ParamValue::Int(n) => n.to_string(),
            ParamValue::Float(f) => f.to_string(),
            ParamValue::Str(s) => format!("'{s}'"),
            ParamValue::List(_) => "a list".into(),
            ParamValue::Map(_) => "a STRUCT or MAP".into(),
        }
    }

    /// The value as a JSON value: a STRUCT or MAP is an object, a list an
    /// array (a Python dict passed as `registry`, docs/options.md).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            ParamValue::Null => Value::Null,
            ParamValue::Bool(b) => Value::Bool(*b),
            ParamValue::Int(n) => Value::from(*n),
            ParamValue::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            ParamValue::Str(s) => Value::String(s.clone()),
            ParamValue::List(items) => Value::Array(items.iter().map(ParamValue::to_json).collect()),
            ParamValue::Map(pairs) => Value::Object(pairs.iter().map(|(k, v)| (k.clone(), v.to_json())).collect()),
        }
    }
}

/// The SQL type a parameter is registered with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    Varchar,
    Boolean,
    Integer,
    Bigint,
    VarcharList,
    /// Any value (a STRUCT, a MAP, a VARCHAR, ...): the parse function
    /// decides what it takes.
    Any,
}

impl ParamType {
    /// The type as SQL (and docs/options.md) writes it.
    #[cfg(test)]
    pub fn sql(self) -> &'static str {
        match self {
            ParamType::Varchar => "VARCHAR",
            ParamType::Boolean => "BOOLEAN",
            ParamType::Integer => "INTEGER",
            ParamType::Bigint => "BIGINT",
            ParamType::VarcharList => "VARCHAR[]",
            ParamType::Any => "ANY",
        }
    }
}

/// A parameter's default, as a value its parse function takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultValue {
    /// No value: the option stays unset (`NULL`).
    Null,
    Bool(bool),
    Int(i64),
    Str(&'static str),
    EmptyList,
    StrList(&'static [&'static str]),
}

impl DefaultValue {
    fn param(self) -> Option<ParamValue> {
        Some(match self {
            DefaultValue::Null => return None,
            DefaultValue::Bool(b) => ParamValue::Bool(b),
            DefaultValue::Int(n) => ParamValue::Int(n),
            DefaultValue::Str(s) => ParamValue::Str(s.to_string()),
            DefaultValue::EmptyList => ParamValue::List(Vec::new()),
            DefaultValue::StrList(items) => {
                ParamValue::List(items.iter().map(|s| ParamValue::Str(s.to_string())).collect())
            }
        })
    }

    /// The default as SQL writes it (`'x'`, `true`, `32`, `[]`, `NULL`).
    #[cfg(test)]
    pub fn sql(self) -> String {
        match self {
            DefaultValue::Null => "NULL".into(),
            DefaultValue::Bool(b) => b.to_string(),
            DefaultValue::Int(n) => n.to_string(),
            DefaultValue::Str(s) => format!("'{s}'"),
            DefaultValue::EmptyList => "[]".into(),
            DefaultValue::StrList(items) => {
                format!("[{}]", items.iter().map(|s| format!("'{s}'")).collect::<Vec<_>>().join(", "))
            }
        }
    }
}

/// Whether the registry's contract carries an option (docs/registry.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contract {
    No,
    Yes,
    /// Only for CSV scans (the CSV dialect).
    Csv,
}

type Apply = fn(&mut Options, &str, &ParamValue) -> std::result::Result<(), String>;
type ContractValue = fn(&Options) -> serde_json::Value;

/// One named parameter, whole (see the module doc).
pub struct OptionSpec {
    pub name: &'static str,
    /// The SQL type the option takes, as docs/options.md writes it, and
    /// the type it is registered with (src/ffi/table.rs): DuckDB casts a
    /// value to it, and `duckdb_functions()` and DuckDB's candidate lists
    /// show it. ANY where the option takes several types.
    pub ty: ParamType,
    pub default: DefaultValue,
    pub contract: Contract,
    /// Parses and validates a (non-NULL) value into the options; the error
    /// names the parameter, and the caller adds the function.
    apply: Apply,
    /// The value as the registry's contract stores it (the SQL value a user
    /// would pass); `None` unless `contract` says so.
    contract_value: Option<ContractValue>,
}

macro_rules! option {
    ($name:literal, $ty:ident, $default:expr, $apply:expr) => {
        OptionSpec {
            name: $name,
            ty: ParamType::$ty,
            default: $default,
            contract: Contract::No,
            apply: $apply,
            contract_value: None,
        }
    };
    ($name:literal, $ty:ident, $default:expr, $apply:expr, contract $scope:ident: $value:expr) => {
        OptionSpec {
            name: $name,
            ty: ParamType::$ty,
            default: $default,
            contract: Contract::$scope,
            apply: $apply,
            contract_value: Some($value),
        }
    };
}

use serde_json::Value as Json;
use DefaultValue::{Bool as B, EmptyList, Int as I, Null, Str as S, StrList};

/// The named parameters of every `sanitize_*` table function, in the order of
/// the SQL surface contract (`input_format`, [`INPUT_FORMAT_SPEC`], is added
/// for `sanitize` and `sanitize_probe` only).
pub const OPTION_SPECS: &[OptionSpec] = &[
    option!("input_mode", Varchar, S("single_file"), |o, n, v| set(&mut o.input_mode, choice(n, v)?)),
    option!("schema_mode", Varchar, S("additive"), |o, n, v| set(&mut o.schema_mode, choice(n, v)?)),
    option!("column_order", Varchar, S("alphabetically"), |o, n, v| set(&mut o.column_order, choice(n, v)?)),
    option!("field_name_policy", Varchar, S("lower_alpha"), |o, n, v| set(&mut o.field_name_policy, choice(n, v)?)),
    option!("timestamp_precision", Varchar, S("TIMESTAMP_MICROS"),
        |o, n, v| set(&mut o.timestamp_precision, choice(n, v)?),
        contract Yes: |o| Json::from(timestamp_precision_name(o.timestamp_precision))),
    option!("parse_integers", Boolean, B(false), |o, n, v| set(&mut o.parsers.integers, boolean(n, v)?),
        contract Yes: |o| Json::from(o.parsers.integers)),
    option!("parse_floats", Boolean, B(false), |o, n, v| set(&mut o.parse_floats, boolean(n, v)?),
        contract Yes: |o| Json::from(o.parse_floats)),
    option!("parse_float_decimal_separator", Varchar, S("."), |o, n, v| set(&mut o.float_separators.0, separator(n, v)?),
        contract Yes: |o| char_json(o.float_separators.0)),
    option!("parse_float_thousands_separator", Varchar, S(","), |o, n, v| set(&mut o.float_separators.1, separator(n, v)?),
        contract Yes: |o| char_json(o.float_separators.1)),
    option!("parse_iso_timestamps", Boolean, B(false), |o, n, v| set(&mut o.parsers.iso_timestamps, boolean(n, v)?),
        contract Yes: |o| Json::from(o.parsers.iso_timestamps)),
    option!("parse_iso_dates", Boolean, B(false), |o, n, v| set(&mut o.parsers.iso_dates, boolean(n, v)?),
        contract Yes: |o| Json::from(o.parsers.iso_dates)),
    option!("parse_iso_times", Boolean, B(false), |o, n, v| set(&mut o.parsers.iso_times, boolean(n, v)?),
        contract Yes: |o| Json::from(o.parsers.iso_times)),
    option!("true_tokens", VarcharList, EmptyList, |o, n, v| set(&mut o.parsers.true_tokens, tokens(n, v)?),
        contract Yes: |o| Json::from(o.parsers.true_tokens.clone())),
    option!("false_tokens", VarcharList, EmptyList, |o, n, v| set(&mut o.parsers.false_tokens, tokens(n, v)?),
        contract Yes: |o| Json::from(o.parsers.false_tokens.clone())),
    option!("custom_timestamp_patterns", VarcharList, EmptyList, |o, n, v| set(&mut o.custom_patterns[0], strings(n, v)?),
        contract Yes: |o| Json::from(o.custom_patterns[0].clone())),
    option!("custom_date_patterns", VarcharList, EmptyList, |o, n, v| set(&mut o.custom_patterns[1], strings(n, v)?),
        contract Yes: |o| Json::from(o.custom_patterns[1].clone())),
    option!("custom_time_patterns", VarcharList, EmptyList, |o, n, v| set(&mut o.custom_patterns[2], strings(n, v)?),
        contract Yes: |o| Json::from(o.custom_patterns[2].clone())),
    option!("timestamp_formats", VarcharList, EmptyList, |o, n, v| set(&mut o.date_formats[0], strings(n, v)?),
        contract Yes: |o| Json::from(o.date_formats[0].clone())),
    option!("date_formats", VarcharList, EmptyList, |o, n, v| set(&mut o.date_formats[1], strings(n, v)?),
        contract Yes: |o| Json::from(o.date_formats[1].clone())),
    option!("time_formats", VarcharList, EmptyList, |o, n, v| set(&mut o.date_formats[2], strings(n, v)?),
        contract Yes: |o| Json::from(o.date_formats[2].clone())),
    option!("arrow_max_depth", Integer, I(32), |o, n, v| set(&mut o.arrow_max_depth, integer(n, v, 1, MAX_DEPTH_LIMIT)? as usize),
        contract Yes: |o| Json::from(o.arrow_max_depth as u64)),
    option!("parquet_max_depth", Integer, I(15), |o, n, v| set(&mut o.parquet_max_depth, integer(n, v, 1, MAX_DEPTH_LIMIT)? as usize),
        contract Yes: |o| Json::from(o.parquet_max_depth as u64)),
    option!("scalar_object_key", Varchar, S("default_key"), |o, n, v| set(&mut o.scalar_object_key, non_empty(n, v)?),
        contract Yes: |o| Json::from(o.scalar_object_key.as_str())),
    option!("csv_has_header", Any, B(true), |o, n, v| set(&mut o.csv_has_header, csv_header(n, v)?),
        contract Csv: |o| o.csv_has_header.map_or(Json::from("auto"), Json::from)),
    option!("csv_delimiter", Varchar, S(","), |o, n, v| set(&mut o.csv_delimiter, csv_delimiter(n, v)?),
        contract Csv: |o| Json::from(String::from_utf8_lossy(&o.csv_delimiter).into_owned())),
    option!("csv_quote", Varchar, S("\""), |o, n, v| set(&mut o.csv_quote, csv_byte(n, v)?),
        contract Csv: |o| byte_json(o.csv_quote)),
    option!("csv_escape", Varchar, Null, |o, n, v| set(&mut o.csv_escape, csv_byte(n, v)?),
        contract Csv: |o| byte_json(o.csv_escape)),
    option!("csv_comment", Varchar, Null, |o, n, v| set(&mut o.csv_comment, csv_byte(n, v)?),
        contract Csv: |o| byte_json(o.csv_comment)),
    option!("csv_skip_lines", Bigint, I(0), |o, n, v| set(&mut o.csv_skip_lines, integer(n, v, 0, i64::MAX)? as u64),
        contract Csv: |o| Json::from(o.csv_skip_lines)),
    option!("csv_null_strings", VarcharList, StrList(&[""]), |o, n, v| set(&mut o.csv_null_strings, strings(n, v)?),
        contract Csv: |o| Json::from(o.csv_null_strings.clone())),
    option!("csv_null_padding", Boolean, B(false), |o, n, v| set(&mut o.csv_null_padding, boolean(n, v)?),
        contract Csv: |o| Json::from(o.csv_null_padding)),
    option!("csv_auto_detect", Boolean, B(false), |o, n, v| set(&mut o.csv_auto_detect, boolean(n, v)?)),
    option!("input_text_encoding", Varchar, S("utf-8"), |o, n, v| set(
        &mut o.input_text_encoding,
        text_encoding(n, v)?
    )),
    option!("xml_row_tag", Varchar, Null, |o, n, v| set(&mut o.xml_row_tag, Some(xml_row_tag(n, v)?))),
    option!("on_error", Varchar, S("emit_null_row"), |o, n, v| set(&mut o.on_error, choice(n, v)?)),
    option!("batch_memory_limit_bytes", Bigint, Null, |o, n, v| set(
        &mut o.batch_memory_limit_bytes,
        Some(integer(n, v, 1, i64::MAX)? as u64)
    )),
    option!("read_chunk_bytes", Bigint, I(1 << 20), |o, n, v| set(
        &mut o.read_chunk_bytes,
        integer(n, v, 1, 1 << 30)? as usize
    )),
    option!("max_record_bytes", Bigint, I(16 << 20), |o, n, v| set(
        &mut o.max_record_bytes,
        integer(n, v, 1, 1 << 40)? as usize
    )),
    option!("max_columns", Bigint, I(10_000), |o, n, v| set(&mut o.max_columns, integer(n, v, 1, i64::MAX)? as usize)),
    option!("scan_range_bytes", Bigint, Null, |o, n, v| set(
        &mut o.scan_range_bytes,
        Some(integer(n, v, 1, i64::MAX)? as u64)
    )),
    option!("registry", Any, Null, |o, n, v| set(&mut o.registry, Some(registry_text(n, v)?))),
    option!("compression", Varchar, S("auto"), |o, n, v| set(&mut o.compression, choice(n, v)?)),
    option!("validate_extension", Boolean, B(true), |o, n, v| set(&mut o.validate_extension, boolean(n, v)?)),
    option!("union_by_name", Boolean, B(false), |o, n, v| set(&mut o.union_by_name, boolean(n, v)?)),
    option!("map_inference_threshold", Bigint, I(200), |o, n, v| set(&mut o.map_inference_threshold, map_threshold(n, v)?),
        contract Yes: |o| Json::from(o.map_inference_threshold.map_or(-1, |t| t as i64))),
    option!("map_paths", VarcharList, EmptyList, |o, n, v| set(&mut o.map_paths, strings(n, v)?),
        contract Yes: |o| Json::from(o.map_paths.clone())),
    option!("hive_partitioning", Boolean, Null, |o, n, v| set(&mut o.hive_partitioning, Some(boolean(n, v)?))),
    option!("hive_types", Any, Null, |o, n, v| set(&mut o.hive_types, hive_types(n, v)?)),
    option!("hive_types_autocast", Boolean, B(true), |o, n, v| set(&mut o.hive_types_autocast, boolean(n, v)?)),
    option!("rescue_column", Varchar, Null, |o, n, v| set(&mut o.rescue_column, Some(rescue_name(n, v)?)),
        contract Yes: |o| o.rescue_column.as_deref().map_or(Json::Null, Json::from)),
    option!("max_rejects", Bigint, I(10_000), |o, n, v| set(
        &mut o.max_rejects,
        Some(integer(n, v, 0, i64::MAX)? as u64)
    )),
    option!("max_reject_bytes", Bigint, I(1024), |o, n, v| set(
        &mut o.max_reject_bytes,
        integer(n, v, 0, 1 << 30)? as usize
    )),
    option!("bigquery_profile", Boolean, B(false), |o, n, v| set(&mut o.bigquery_profile, boolean(n, v)?),
        contract Yes: |o| Json::from(o.bigquery_profile)),
    option!("pin_types", Any, Null, |o, n, v| set(&mut o.pin_types, pin_types(n, v)?),
    contract Yes: |o| if o.pin_types.is_empty() {
        Json::Null
    } else {
        Json::Object(o.pin_types.iter().map(|(p, t)| (p.clone(), Json::from(t.name()))).collect())
    }),
    option!("freeze", VarcharList, EmptyList, |o, n, v| set(&mut o.freeze, strings(n, v)?),
        contract Yes: |o| if o.freeze.is_empty() { Json::Null } else { Json::from(o.freeze.clone()) }),
];

/// `pin_types`: a STRUCT or MAP of source-key path to type name.
fn pin_types(name: &str, value: &ParamValue) -> Parsed<Vec<(String, PinType)>> {
    type_map(name, value, "a MAP or STRUCT of field path to type name such as MAP {'amount': 'DOUBLE'}", "", "'DOUBLE'")
}

/// `rescue_column`: a non-empty name without NUL.
fn rescue_name(name: &str, value: &ParamValue) -> Parsed<String> {
    match value {
        ParamValue::Str(s) if !s.is_empty() && !s.contains('\0') => Ok(s.clone()),
        other => {
            Err(format!("the \"{name}\" parameter must be a non-empty column name (VARCHAR), not {}", other.describe()))
        }
    }
}

/// BigQuery's deepest RECORD nesting, the profile's `parquet_max_depth` bound.
const BIGQUERY_MAX_DEPTH: usize = 15;

/// `input_format`, for `sanitize` and `sanitize_probe` only: required, so
/// parsed before every other option (see [`Options::parse`]).
pub const INPUT_FORMAT_SPEC: OptionSpec = option!("input_format", Varchar, Null, |_, _, _| Ok(()));

/// Upper bound of `arrow_max_depth` and `parquet_max_depth`: inference and
/// materialization recurse once per container level below the limit, so the
/// limit also bounds their stack use (deeper values are flattened to text).
pub const MAX_DEPTH_LIMIT: i64 = 255;

fn set<T>(slot: &mut T, value: T) -> std::result::Result<(), String> {
    *slot = value;
    Ok(())
}

fn char_json(b: u8) -> Json {
    Json::from((b as char).to_string())
}

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
trait Named: Copy + 'static {
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
const TIMESTAMP_PRECISIONS: &[(&str, TimeUnit)] = &[
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

/// Parsed, validated options of one scan. Immutable after bind.
#[derive(Clone, Debug)]
pub struct Options {
    pub input_format: InputFormat,
    pub input_mode: InputMode,
    pub schema_mode: SchemaMode,
    pub column_order: ColumnOrder,
    pub field_name_policy: FieldNamePolicy,
    pub timestamp_precision: TimeUnit,
    pub arrow_max_depth: usize,
    pub parquet_max_depth: usize,
    pub scalar_object_key: String,
    pub on_error: OnError,
    pub batch_memory_limit_bytes: Option<u64>,
    pub read_chunk_bytes: usize,
    /// `max_record_bytes`: the largest record (a JSON Lines line, a JSON
    /// document or array element, a CSV record, an XML row) a decoder
    /// buffers; a longer one is a bad record of kind `record_too_large`.
    pub max_record_bytes: usize,
    /// `max_columns`: top-level columns plus struct fields one scan may
    /// infer; more is an error (docs/errors.md "Limits").
    pub max_columns: usize,
    /// How the scan opens its files: DuckDB's file system in the extension
    /// (set at bind), `std::fs` in the engine's tests. Not an option users
    /// give.
    pub opener: crate::formats::byte_source::FileOpener,
    /// Size of the byte ranges a JSON Lines file is cut into for parallel
    /// decoding (scan/ranges.rs); `None`: sized to the file and threads.
    pub scan_range_bytes: Option<u64>,
    /// The registry JSON given with `registry :=`, if any.
    pub registry: Option<String>,
    /// String-to-scalar parsing, compiled.
    pub parsers: ScalarParsers,
    /// `None`: sniffed (`'auto'`); bind resolves it (docs/formats.md, "CSV").
    pub csv_has_header: Option<bool>,
    /// 1 to 4 bytes.
    pub csv_delimiter: Vec<u8>,
    /// `None`: no quoting.
    pub csv_quote: Option<u8>,
    /// `None`: the quote escapes itself (`""`).
    pub csv_escape: Option<u8>,
    pub csv_comment: Option<u8>,
    pub csv_skip_lines: u64,
    pub csv_null_strings: Vec<String>,
    pub csv_null_padding: bool,
    /// Sniff the dialect options not given (nor taken from the registry).
    pub csv_auto_detect: bool,
    /// The options a registry's contract supplied (`with_contract`): like
    /// given ones, the sniffer leaves them alone.
    pub adopted: Vec<&'static str>,
    /// Threads a probe or scan may run at once, the caller's included
    /// (scan/ordered.rs); no parameter: the SQL layer sets it from
    /// DuckDB's `threads` setting.
    pub threads: usize,
    pub input_text_encoding: TextEncoding,
    /// Stream each direct child element with this tag as a row; `None`: the
    /// whole document is one row.
    pub xml_row_tag: Option<String>,
    /// The parameters the user gave (not NULL): an explicit choice differs
    /// from a default (on_error, the registry contract).
    pub given: Vec<(&'static str, ParamValue)>,
    /// `parse_floats` as given; `parsers.floats` holds the compiled format.
    pub parse_floats: bool,
    /// `parse_float_decimal_separator` and `_thousands_separator` as given
    /// (kept even with `parse_floats` off: they are part of the contract).
    pub float_separators: (u8, u8),
    /// The `custom_timestamp/date/time_patterns` as written.
    pub custom_patterns: [Vec<String>; 3],
    /// The `timestamp/date/time_formats` (strftime) as written.
    pub date_formats: [Vec<String>; 3],
    /// `compression`: of text inputs; Parquet only takes `auto`.
    pub compression: Compression,
    /// `validate_extension`: false reads any file name as the format.
    pub validate_extension: bool,
    /// `union_by_name`: files read as one input need not share a header
    /// (CSV) or a root element (XML); their records are keyed by name
    /// either way, so nothing else changes (docs/formats.md "Many files").
    pub union_by_name: bool,
    /// `map_inference_threshold`: a struct with more distinct keys becomes
    /// a MAP (infer/maps.rs); `None` (-1): never by count.
    pub map_inference_threshold: Option<usize>,
    /// `map_paths`: source-key paths that are maps whatever their key count.
    pub map_paths: Vec<String>,
    /// `hive_partitioning`: `None` detects it (on when every file's path
    /// has the same `key=value` directories).
    pub hive_partitioning: Option<bool>,
    /// `hive_types`: the type of each partition key the user named.
    pub hive_types: Vec<(String, HiveType)>,
    /// `hive_types_autocast`: other keys get DATE, TIMESTAMP or BIGINT
    /// when every value has that form (else VARCHAR).
    pub hive_types_autocast: bool,
    /// No parameter: sanitize_pipeline's strict attempt sets it, so the
    /// first strict-mode violation ends the scan with a drift error
    /// (`SanitizeError::drift`) whatever `on_error` says, and the partition
    /// is redone additively.
    pub drift_ends_scan: bool,
    /// `bigquery_profile`: output BigQuery always accepts (docs/bigquery.md,
    /// "The profile"): lists in lists wrapped, NULL list elements dropped,
    /// BigQuery-safe names, microsecond timestamps, depth at most 15.
    pub bigquery_profile: bool,
    /// `max_rejects`: rejects kept per scan for `sanitize_rejects()`
    /// (0: none); `None` (the parameter given as NULL): no limit.
    pub max_rejects: Option<u64>,
    /// `max_reject_bytes`: a reject's raw text is cut there.
    pub max_reject_bytes: usize,
    /// `rescue_column`: the name of the column that keeps the values no
    /// typed column took (docs/errors.md "The rescue column"); `None`: off.
    pub rescue_column: Option<String>,
    /// `pin_types`: source-key path → the one type of that field.
    pub pin_types: Vec<(String, PinType)>,
    /// `freeze`: source-key paths under which additive mode adds nothing.
    pub freeze: Vec<String>,
    /// Both compiled (`finish`); `None` when neither is given.
    pub policies: Option<crate::infer::Policies>,
}

impl Options {
    /// Whether the user gave the parameter `name` (with a value other than NULL).
    pub fn is_given(&self, name: &str) -> bool {
        self.given.iter().any(|(n, _)| *n == name)
    }

    /// The contract options of this scan's format, with their values.
    fn contract_specs(&self) -> impl Iterator<Item = (&'static OptionSpec, ContractValue)> + '_ {
        OPTION_SPECS.iter().filter_map(move |spec| {
            let applies = match spec.contract {
                Contract::No => false,
                Contract::Yes => true,
                Contract::Csv => self.input_format == InputFormat::Csv,
            };
            spec.contract_value.filter(|_| applies).map(|value| (spec, value))
        })
    }

    /// This scan's contract options with their values, as the registry's
    /// `contract` section stores them (the SQL values a user would pass).
    pub fn contract_json(&self) -> serde_json::Map<String, serde_json::Value> {
        self.contract_specs().map(|(spec, value)| (spec.name.to_string(), value(self))).collect()
    }

    /// Applies a registry's contract: an option the scan does not give takes
    /// the registry's value; one it gives with another value is an error
    /// naming the option and both values. `None` (a registry written before
    /// contracts existed) applies nothing.
    pub fn with_contract(
        self,
        function: &str,
        contract: Option<&serde_json::Map<String, serde_json::Value>>,
    ) -> Result<Self> {
        let Some(contract) = contract else { return Ok(self) };
        let mut params: Vec<(&str, ParamValue)> = self.given.iter().map(|(n, v)| (*n, v.clone())).collect();
        let mut adopted_names = Vec::new();
        for (spec, value) in self.contract_specs() {
            let name = spec.name;
            let Some(theirs) = contract.get(name) else { continue };
            // A null in the contract (an option that was off, such as
            // rescue_column) constrains nothing.
            if theirs.is_null() {
                continue;
            }
            if self.is_given(name) {
                let ours = value(&self);
                if &ours != theirs {
                    return Err(SanitizeError::options(format!(
                        "{function}: the registry was built with {name} = {theirs} but this scan gives {name} = {ours}; leave {name} out to continue the registry with its value, or start a new registry"
                    )));
                }
                continue;
            }
            let value = json_param(theirs).ok_or_else(|| {
                SanitizeError::options(format!(
                    "{function}: invalid registry: contract.{name} has an unusable value {theirs}"
                ))
            })?;
            params.push((name, value));
            adopted_names.push(name);
        }
        if adopted_names.is_empty() {
            return Ok(self);
        }
        // Parse again with the registry's values: the same validation as
        // for values the user types.
        let mut o = Options::parse(function, Some(self.input_format), &params).map_err(|e| {
            SanitizeError::options(format!("{} (a value taken from the registry's contract)", e.message))
        })?;
        // Contract values are not the user's choices.
        o.given.retain(|(n, _)| self.is_given(n));
        o.adopted = adopted_names;
        // Not parameters: set by the caller, kept (the opener above all:
        // without it the scan would read outside DuckDB's file system).
        o.threads = self.threads;
        o.drift_ends_scan = self.drift_ends_scan;
        o.opener = self.opener;
        Ok(o)
    }

    /// Every option at its row's default.
    pub fn defaults(input_format: InputFormat) -> Self {
        // Placeholders only: each field with a parameter is set from its
        // row's default below, so the defaults live in OPTION_SPECS alone.
        let mut o = Options {
            input_format,
            input_mode: InputMode::SingleFile,
            schema_mode: SchemaMode::Additive,
            column_order: ColumnOrder::Alphabetically,
            field_name_policy: FieldNamePolicy::LowerAlpha,
            timestamp_precision: TimeUnit::Micros,
            arrow_max_depth: 0,
            parquet_max_depth: 0,
            scalar_object_key: String::new(),
            on_error: OnError::EmitNullRow,
            batch_memory_limit_bytes: None,
            read_chunk_bytes: 0,
            max_record_bytes: 0,
            max_columns: 0,
            opener: crate::formats::byte_source::FileOpener::default(),
            scan_range_bytes: None,
            registry: None,
            parsers: ScalarParsers::default(),
            csv_has_header: None,
            csv_delimiter: Vec::new(),
            csv_quote: None,
            csv_escape: None,
            csv_comment: None,
            csv_skip_lines: 0,
            csv_null_strings: Vec::new(),
            csv_null_padding: false,
            csv_auto_detect: false,
            adopted: Vec::new(),
            threads: 2,
            input_text_encoding: TextEncoding::Utf8,
            xml_row_tag: None,
            given: Vec::new(),
            parse_floats: false,
            float_separators: (0, 0),
            custom_patterns: [Vec::new(), Vec::new(), Vec::new()],
            date_formats: [Vec::new(), Vec::new(), Vec::new()],
            compression: Compression::Auto,
            validate_extension: true,
            union_by_name: false,
            map_inference_threshold: None,
            map_paths: Vec::new(),
            hive_partitioning: None,
            hive_types: Vec::new(),
            hive_types_autocast: true,
            drift_ends_scan: false,
            bigquery_profile: false,
            max_rejects: Some(10_000),
            max_reject_bytes: 1024,
            rescue_column: None,
            pin_types: Vec::new(),
            freeze: Vec::new(),
            policies: None,
        };
        for spec in OPTION_SPECS {
            if let Some(value) = spec.default.param() {
                // A default its own parser refuses is a bug caught by the tests.
                let applied = (spec.apply)(&mut o, spec.name, &value);
                debug_assert!(applied.is_ok(), "default of {}: {applied:?}", spec.name);
            }
        }
        o
    }

    /// Parses named parameters. `fixed_format` is the format implied by the
    /// function name; `None` means `input_format` is required.
    pub fn parse(function: &str, fixed_format: Option<InputFormat>, params: &[(&str, ParamValue)]) -> Result<Self> {
        let err = |m: String| SanitizeError::options(format!("{function}: {m}"));
        let format_param = params.iter().find(|(n, _)| *n == INPUT_FORMAT_SPEC.name).map(|(_, v)| v);
        let input_format = match (fixed_format, format_param) {
            (Some(f), None) => f,
            (Some(f), Some(_)) => {
                return Err(err(format!(
                    "the \"input_format\" parameter is only accepted by sanitize() and sanitize_probe(); {function} always reads '{}'",
                    f.name()
                )))
            }
            (None, value) => parse_input_format(value).map_err(err)?,
        };
        let mut o = Options::defaults(input_format);
        for (name, value) in params {
            if *name == INPUT_FORMAT_SPEC.name {
                continue;
            }
            let Some(spec) = OPTION_SPECS.iter().find(|s| s.name == *name) else {
                return Err(err(format!("unknown parameter \"{name}\"")));
            };
            // DuckDB passes NULL for `name := NULL`: keep the default, as a
            // Python `None` does in the library the SQL surface follows;
            // but `max_rejects := NULL` means no limit (docs/errors.md "Rejects").
            if matches!(value, ParamValue::Null) {
                if spec.name == "max_rejects" {
                    o.max_rejects = None;
                }
                continue;
            }
            o.given.push((spec.name, value.clone()));
            (spec.apply)(&mut o, spec.name, value).map_err(err)?;
        }
        o.finish().map_err(err)?;
        Ok(o)
    }

    /// The checks and compilations that involve several options.
    fn finish(&mut self) -> std::result::Result<(), String> {
        let (decimal, thousands) = self.float_separators;
        if decimal == thousands {
            return Err(format!(
                "\"parse_float_decimal_separator\" and \"parse_float_thousands_separator\" must differ, both are '{}'",
                decimal as char
            ));
        }
        self.parsers.floats = self.parse_floats.then_some(FloatFormat { decimal, thousands });
        if let Some(t) = self.parsers.true_tokens.iter().find(|t| self.parsers.false_tokens.contains(t)) {
            return Err(format!(
                "the token '{t}' is in both \"true_tokens\" and \"false_tokens\" (tokens are case-insensitive)"
            ));
        }
        let [timestamps, dates, times] = &self.custom_patterns;
        self.parsers.custom = CustomPatterns::compile(timestamps, dates, times)?;
        let [timestamps, dates, times] = &self.date_formats;
        self.parsers.formats = DateFormats::compile(timestamps, dates, times)?;
        self.check_csv_dialect()?;
        if self.input_format == InputFormat::Parquet && self.compression != Compression::Auto {
            return Err(format!(
                "\"compression\" applies to text formats; Parquet compresses its own pages, so it takes only 'auto', not '{}'",
                self.compression.name()
            ));
        }
        if self.schema_mode == SchemaMode::Strict && self.registry.is_none() {
            return Err(
                "schema_mode 'strict' requires a registry: pass registry := <registry JSON from a previous run>".into(),
            );
        }
        if self.bigquery_profile {
            // BigQuery reads microseconds at most and 15 RECORD levels.
            if self.timestamp_precision != TimeUnit::Micros {
                if self.is_given("timestamp_precision") {
                    return Err("bigquery_profile := true needs timestamp_precision 'TIMESTAMP_MICROS' (BigQuery has no nanosecond timestamps)".into());
                }
                self.timestamp_precision = TimeUnit::Micros;
            }
            if self.parquet_max_depth > BIGQUERY_MAX_DEPTH {
                if self.is_given("parquet_max_depth") {
                    return Err(format!(
                        "bigquery_profile := true needs parquet_max_depth at most {BIGQUERY_MAX_DEPTH} (BigQuery's RECORD nesting), not {}",
                        self.parquet_max_depth
                    ));
                }
                self.parquet_max_depth = BIGQUERY_MAX_DEPTH;
            }
        }
        // Last: a TIMESTAMP pin takes the unit decided above.
        self.compile_policies()
    }
}

impl Options {
    /// `pin_types` and `freeze` as the engine's policy tree, with parsers
    /// that read any string a pin may take (every rule on, this scan's
    /// separators, tokens, formats and patterns).
    fn compile_policies(&mut self) -> std::result::Result<(), String> {
        let (decimal, thousands) = self.float_separators;
        let mut parsers = self.parsers.clone();
        parsers.integers = true;
        parsers.floats = Some(FloatFormat { decimal, thousands });
        parsers.iso_timestamps = true;
        parsers.iso_dates = true;
        parsers.iso_times = true;
        if parsers.true_tokens.is_empty() && parsers.false_tokens.is_empty() {
            parsers.true_tokens = vec!["true".into()];
            parsers.false_tokens = vec!["false".into()];
        }
        let pins: Vec<_> = self.pin_types.iter().map(|(p, t)| (p.clone(), t.kind(self.timestamp_precision))).collect();
        self.policies = crate::infer::Policies::compile(&pins, &self.freeze, parsers)?;
        Ok(())
    }

    /// The quote, escape and comment bytes must differ from each other and
    /// from the delimiter's bytes, or a cell could not be read one way.
    pub fn check_csv_dialect(&self) -> std::result::Result<(), String> {
        let roles = [("csv_quote", self.csv_quote), ("csv_escape", self.csv_escape), ("csv_comment", self.csv_comment)];
        for (i, (name, byte)) in roles.iter().enumerate() {
            let Some(b) = byte else { continue };
            if self.csv_delimiter.contains(b) {
                return Err(format!("\"{name}\" '{}' is also in \"csv_delimiter\"", *b as char));
            }
            // The escape may be the quote (RFC 4180's `""`).
            for (other, o) in &roles[i + 1..] {
                let same_role = (*name, *other) == ("csv_quote", "csv_escape");
                if Some(*b) == *o && !same_role {
                    return Err(format!("\"{name}\" and \"{other}\" are both '{}'", *b as char));
                }
            }
        }
        Ok(())
    }

    /// The CSV dialect the reader uses (`csv_has_header` resolved: bind
    /// sniffs `'auto'`; unresolved, the seed's default, a header, holds).
    pub fn csv_dialect(&self) -> crate::formats::csv::CsvOptions {
        crate::formats::csv::CsvOptions {
            has_header: self.csv_has_header.unwrap_or(true),
            delimiter: self.csv_delimiter.clone(),
            quote: self.csv_quote,
            escape: self.csv_escape,
            comment: self.csv_comment,
            skip_lines: self.csv_skip_lines,
            null_strings: self.csv_null_strings.clone(),
            null_padding: self.csv_null_padding,
            max_record_bytes: self.max_record_bytes,
        }
    }
}

/// A contract value from a registry document as the parameter it stands for.
fn json_param(v: &serde_json::Value) -> Option<ParamValue> {
    use serde_json::Value;
    Some(match v {
        Value::Bool(b) => ParamValue::Bool(*b),
        Value::Number(n) => ParamValue::Int(n.as_i64()?),
        Value::String(s) => ParamValue::Str(s.clone()),
        Value::Array(items) => ParamValue::List(
            items.iter().map(|i| i.as_str().map(|s| ParamValue::Str(s.to_string()))).collect::<Option<Vec<_>>>()?,
        ),
        // `pin_types`: path → type name.
        Value::Object(members) => ParamValue::Map(
            members
                .iter()
                .map(|(k, v)| v.as_str().map(|s| (k.clone(), ParamValue::Str(s.to_string()))))
                .collect::<Option<Vec<_>>>()?,
        ),
        _ => return None,
    })
}

fn parse_input_format(value: Option<&ParamValue>) -> std::result::Result<InputFormat, String> {
    let valid = InputFormat::NAMES.iter().map(|(n, _)| format!("'{n}'")).collect::<Vec<_>>().join(", ");
    match value {
        None | Some(ParamValue::Null) => Err(format!(
            "the \"input_format\" parameter is required and must be one of {valid}; the format is never guessed"
        )),
        Some(ParamValue::Str(s)) => InputFormat::parse(s).ok_or_else(|| {
            let hint = if s == "auto" { " ('auto' is not supported: the format is never guessed)" } else { "" };
            format!("\"input_format\" must be one of {valid}, not '{s}'{hint}")
        }),
        Some(other) => Err(format!("\"input_format\" must be a VARCHAR, not {}", other.describe())),
    }
}

type Parsed<T> = std::result::Result<T, String>;

/// A scan's named parameters arrive cast to their registered types
/// (src/ffi/table.rs); the row functions' (and the registry's contract)
/// still give any type, so these take what DuckDB would cast implicitly
/// (`'true'`, `0`/`1` for a BOOLEAN, `'12'` for an integer) and name the
/// parameter for anything else.
fn boolean(name: &str, value: &ParamValue) -> Parsed<bool> {
    match value {
        ParamValue::Bool(b) => Ok(*b),
        ParamValue::Str(s) if s.eq_ignore_ascii_case("true") => Ok(true),
        ParamValue::Str(s) if s.eq_ignore_ascii_case("false") => Ok(false),
        ParamValue::Int(n @ (0 | 1)) => Ok(*n == 1),
        other => Err(format!("the \"{name}\" parameter must be a BOOLEAN, not {}", other.describe())),
    }
}

/// One ASCII punctuation character.
fn separator(name: &str, value: &ParamValue) -> Parsed<u8> {
    let s = string(name, value)?;
    match s.as_bytes() {
        [c] if c.is_ascii_punctuation() => Ok(*c),
        _ => Err(format!(
            "the \"{name}\" parameter must be one ASCII punctuation character such as '.', ',' or '_', not '{s}'"
        )),
    }
}

fn strings(name: &str, value: &ParamValue) -> Parsed<Vec<String>> {
    match value {
        ParamValue::List(items) => items
            .iter()
            .map(|i| match i {
                ParamValue::Str(s) => Ok(s.clone()),
                ParamValue::Null => Err(format!("the \"{name}\" list must not contain NULL")),
                other => Err(format!("the \"{name}\" list must hold VARCHAR values, not {}", other.describe())),
            })
            .collect(),
        other => Err(format!("the \"{name}\" parameter must be a VARCHAR[] list, not {}", other.describe())),
    }
}

/// Tokens are compared case-insensitively, so they are stored lower-cased.
fn tokens(name: &str, value: &ParamValue) -> Parsed<Vec<String>> {
    let list = strings(name, value)?;
    if list.iter().any(|t| t.is_empty()) {
        return Err(format!("the \"{name}\" list must not contain an empty token"));
    }
    Ok(list.into_iter().map(|t| t.to_lowercase()).collect())
}

fn string(name: &str, value: &ParamValue) -> Parsed<String> {
    match value {
        ParamValue::Str(s) => Ok(s.clone()),
        other => Err(format!("the \"{name}\" parameter must be a VARCHAR, not {}", other.describe())),
    }
}

fn non_empty(name: &str, value: &ParamValue) -> Parsed<String> {
    let s = string(name, value)?;
    if s.is_empty() {
        return Err(format!("the \"{name}\" parameter must not be empty"));
    }
    Ok(s)
}

/// A value of a [`named_enum!`], case-insensitive; the error lists the valid ones.
fn choice<T: Named>(name: &str, value: &ParamValue) -> Parsed<T> {
    let s = string(name, value)?;
    let names = T::names();
    names.iter().find(|(n, _)| n.eq_ignore_ascii_case(&s)).map(|(_, v)| *v).ok_or_else(|| {
        let valid = names.iter().map(|(n, _)| format!("'{n}'")).collect::<Vec<_>>().join(", ");
        format!("the \"{name}\" parameter must be one of {valid}, not '{s}'")
    })
}

fn integer(name: &str, value: &ParamValue, min: i64, max: i64) -> Parsed<i64> {
    let n = match value {
        ParamValue::Int(n) => Some(*n),
        ParamValue::Str(s) => s.trim().parse::<i64>().ok(),
        ParamValue::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e18 => Some(*f as i64),
        _ => None,
    };
    match n {
        Some(n) if n >= min && n <= max => Ok(n),
        Some(n) => Err(format!("the \"{name}\" parameter must be between {min} and {max}, not {n}")),
        None => Err(format!("the \"{name}\" parameter must be an integer, not {}", value.describe())),
    }
}

/// `map_inference_threshold`: a key count (0 or more), or -1 for never, as
/// `read_json`'s option of that name.
fn map_threshold(name: &str, value: &ParamValue) -> Parsed<Option<usize>> {
    match integer(name, value, -1, i64::from(u32::MAX))? {
        -1 => Ok(None),
        n => Ok(Some(n as usize)),
    }
}

/// `registry`: the document as JSON text (a VARCHAR or JSON value) or as a
/// STRUCT/MAP value (a Python dict), turned into its JSON text.
fn registry_text(name: &str, value: &ParamValue) -> Parsed<String> {
    match value {
        ParamValue::Str(s) => Ok(s.clone()),
        ParamValue::Map(_) => Ok(value.to_json().to_string()),
        other => Err(format!(
            "the \"{name}\" parameter must be the registry document as JSON or VARCHAR text, or as a STRUCT/MAP value, not {}",
            other.describe()
        )),
    }
}

/// `hive_types := {'date': 'DATE', 'hour': 'INTEGER'}`: a STRUCT or a MAP
/// of key to type name.
fn hive_types(name: &str, value: &ParamValue) -> Parsed<Vec<(String, HiveType)>> {
    type_map(name, value, "a STRUCT or MAP of partition key to type name such as {'date': 'DATE'}", "key ", "'DATE'")
}

/// A STRUCT or MAP of key to a type name of `T` (any case), in order.
/// `shape` says what the parameter takes, `key_word` names a key in
/// messages (`key 'date'`), `example` is a type name.
fn type_map<T: Named>(
    name: &str,
    value: &ParamValue,
    shape: &str,
    key_word: &str,
    example: &str,
) -> Parsed<Vec<(String, T)>> {
    let ParamValue::Map(pairs) = value else {
        return Err(format!("the \"{name}\" parameter must be {shape}, not {}", value.describe()));
    };
    let valid = || T::names().iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ");
    pairs
        .iter()
        .map(|(key, ty)| match ty {
            ParamValue::Str(t) => T::names()
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(t.trim()))
                .map(|(_, v)| (key.clone(), *v))
                .ok_or_else(|| {
                    format!("the \"{name}\" type of {key_word}'{key}' must be one of {}, not '{t}'", valid())
                }),
            other => Err(format!(
                "the \"{name}\" type of {key_word}'{key}' must be a type name such as {example}, not {}",
                other.describe()
            )),
        })
        .collect()
}

/// 1 to 4 bytes (as `read_csv`), not a line break; the two characters
/// `\t` are a tab, as `read_csv` reads them.
fn csv_delimiter(name: &str, value: &ParamValue) -> Parsed<Vec<u8>> {
    let d = string(name, value)?;
    let d = if d == "\\t" { "\t".to_string() } else { d };
    if d.is_empty() || d.len() > 4 || d.contains(['\n', '\r']) {
        return Err(format!(
            "the \"{name}\" parameter must be 1 to 4 bytes and no line break, such as ',', ';', '|', '\\t' (a tab) or '||', not '{}'",
            d.escape_debug()
        ));
    }
    Ok(d.into_bytes())
}

/// One ASCII byte (not a line break), or `''` for none.
fn csv_byte(name: &str, value: &ParamValue) -> Parsed<Option<u8>> {
    let t = string(name, value)?;
    match t.as_bytes() {
        [] => Ok(None),
        [b] if b.is_ascii() && *b != b'\n' && *b != b'\r' => Ok(Some(*b)),
        _ => Err(format!(
            "the \"{name}\" parameter must be one ASCII character (not a line break), or '' for none, not '{}'",
            t.escape_debug()
        )),
    }
}

fn byte_json(b: Option<u8>) -> Json {
    Json::from(b.map(|b| (b as char).to_string()).unwrap_or_default())
}

/// `csv_has_header`: a BOOLEAN, or `'auto'` (sniffed); `'true'`/`'false'` as text too.
fn csv_header(name: &str, value: &ParamValue) -> Parsed<Option<bool>> {
    match value {
        ParamValue::Bool(b) => Ok(Some(*b)),
        ParamValue::Str(s) if s.eq_ignore_ascii_case("auto") => Ok(None),
        ParamValue::Str(s) if s.eq_ignore_ascii_case("true") => Ok(Some(true)),
        ParamValue::Str(s) if s.eq_ignore_ascii_case("false") => Ok(Some(false)),
        other => Err(format!("the \"{name}\" parameter must be true, false or 'auto', not {}", other.describe())),
    }
}

fn text_encoding(name: &str, value: &ParamValue) -> Parsed<TextEncoding> {
    let e = string(name, value)?;
    TextEncoding::parse(&e).ok_or_else(|| {
        format!(
            "the \"{name}\" parameter must name 'utf-8', 'utf-16' (or 'utf-16-le' / 'utf-16-be'), 'latin-1' or 'windows-1252' (Python codec names and aliases are accepted), not '{e}'"
        )
    })
}

/// An element name, or a slash path of names from the root's children.
fn xml_row_tag(name: &str, value: &ParamValue) -> Parsed<String> {
    let t = string(name, value)?;
    let bad_name = |c: &str| c.is_empty() || c.contains(|c: char| c.is_whitespace() || c == '<' || c == '>');
    if t.split('/').any(bad_name) {
        return Err(format!(
            "the \"{name}\" parameter must be an XML element name or a slash path of names below the root such as 'channel/item', not '{t}'"
        ));
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(params: &[(&str, ParamValue)]) -> Result<Options> {
        Options::parse("sanitize_jsonl", Some(InputFormat::Jsonl), params)
    }

    #[test]
    fn defaults_match_docs_options() {
        let o = p(&[]).unwrap();
        assert_eq!(o.field_name_policy, FieldNamePolicy::LowerAlpha);
        assert_eq!(o.on_error, OnError::EmitNullRow);
        assert_eq!((o.arrow_max_depth, o.parquet_max_depth, o.read_chunk_bytes), (32, 15, 1 << 20));
        assert_eq!(o.scalar_object_key, "default_key");
    }

    /// docs/options.md's table: (names, type, default text) per row.
    fn documented_rows() -> Vec<(Vec<String>, String, String)> {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/options.md")).unwrap();
        let table = doc.split("| parameter | type | default |").nth(1).expect("the parameter table");
        table
            .lines()
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .map(|l| {
                let cells: Vec<&str> = l.split(" | ").map(|c| c.trim_matches(|c: char| c == '|' || c == ' ')).collect();
                let names = cells[0].split(", ").map(|n| n.trim_matches('`').to_string()).collect();
                (names, cells[1].to_string(), cells[2].replace('`', ""))
            })
            .collect()
    }

    #[test]
    fn every_option_has_one_documented_row_with_its_type_and_default() {
        let rows = documented_rows();
        for spec in OPTION_SPECS {
            let found: Vec<_> = rows.iter().filter(|(names, _, _)| names.iter().any(|n| n == spec.name)).collect();
            assert_eq!(found.len(), 1, "{} must have exactly one row in docs/options.md", spec.name);
            let (_, ty, default) = found[0];
            assert_eq!(ty, spec.ty.sql(), "type of {} in docs/options.md", spec.name);
            assert!(
                default.starts_with(&spec.default.sql()),
                "default of {} in docs/options.md is '{default}', the row says {}",
                spec.name,
                spec.default.sql()
            );
        }
        for (names, _, _) in &rows {
            for n in names {
                assert!(
                    OPTION_SPECS.iter().any(|s| s.name == n),
                    "docs/options.md documents \"{n}\", which is no option"
                );
            }
        }
    }

    #[test]
    fn every_default_passes_its_own_parser_and_names_parse_in_any_case() {
        for spec in OPTION_SPECS {
            if let Some(v) = spec.default.param() {
                let mut o = Options::defaults(InputFormat::Csv);
                assert_eq!((spec.apply)(&mut o, spec.name, &v), Ok(()), "{}", spec.name);
            }
        }
        assert_eq!(OnError::parse("SKIP_ROW"), Some(OnError::SkipRow));
        let o = p(&[("timestamp_precision", ParamValue::Str("timestamp_nanos".into()))]).unwrap();
        assert_eq!(o.timestamp_precision, TimeUnit::Nanos);
        let o = p(&[("on_error", ParamValue::Str("Stop".into()))]).unwrap();
        assert_eq!(o.on_error, OnError::Stop);
        for (name, value) in InputFormat::NAMES {
            assert_eq!(InputFormat::parse(name), Some(*value));
            assert_eq!(value.name(), *name);
        }
    }

    #[test]
    fn the_contract_options_are_the_documented_ones() {
        let csv = Options::defaults(InputFormat::Csv).contract_json();
        let json = Options::defaults(InputFormat::Json).contract_json();
        assert_eq!(csv.len(), json.len() + 8);
        assert!(csv.contains_key("csv_delimiter") && !json.contains_key("csv_delimiter"));
        assert_eq!(json["timestamp_precision"], "TIMESTAMP_MICROS");
        assert_eq!(json["parse_float_thousands_separator"], ",");
    }

    #[test]
    fn enumerations_name_the_parameter_and_the_bad_value() {
        let e = p(&[("on_error", ParamValue::Str("ignore".into()))]).unwrap_err();
        assert!(
            e.message.contains("\"on_error\"") && e.message.contains("'ignore'") && e.message.contains("'skip_row'"),
            "{e}"
        );
        let e = p(&[("arrow_max_depth", ParamValue::Int(0))]).unwrap_err();
        assert!(e.message.contains("arrow_max_depth"), "{e}");
    }

    #[test]
    fn input_format_is_required_and_never_auto() {
        let e = Options::parse("sanitize", None, &[]).unwrap_err();
        assert!(e.message.contains("required"), "{e}");
        let e = Options::parse("sanitize", None, &[("input_format", ParamValue::Str("auto".into()))]).unwrap_err();
        assert!(e.message.contains("never guessed"), "{e}");
        let o = Options::parse("sanitize", None, &[("input_format", ParamValue::Str("ndjson".into()))]).unwrap();
        assert_eq!(o.input_format, InputFormat::Ndjson);
    }

    #[test]
    fn strict_requires_a_registry() {
        let e = p(&[("schema_mode", ParamValue::Str("strict".into()))]).unwrap_err();
        assert!(e.message.contains("requires a registry"), "{e}");
    }

    #[test]
    fn source_options_are_validated() {
        let e = p(&[("csv_delimiter", ParamValue::Str("::::x".into()))]).unwrap_err();
        assert!(e.message.contains("csv_delimiter") && e.message.contains("'::::x'"), "{e}");
        assert_eq!(p(&[("csv_delimiter", ParamValue::Str("\t".into()))]).unwrap().csv_delimiter, b"\t");
        assert_eq!(p(&[("csv_delimiter", ParamValue::Str("\\t".into()))]).unwrap().csv_delimiter, b"\t");
        assert_eq!(p(&[("csv_delimiter", ParamValue::Str("||".into()))]).unwrap().csv_delimiter, b"||");
        let e = p(&[("csv_delimiter", ParamValue::Str("abcde".into()))]).unwrap_err();
        assert!(e.message.contains("1 to 4 bytes"), "{e}");
        assert_eq!(p(&[("csv_quote", ParamValue::Str("".into()))]).unwrap().csv_quote, None);
        let e = p(&[("csv_escape", ParamValue::Str("ab".into()))]).unwrap_err();
        assert!(e.message.contains("csv_escape") && e.message.contains("one ASCII character"), "{e}");
        assert_eq!(p(&[("csv_has_header", ParamValue::Str("AUTO".into()))]).unwrap().csv_has_header, None);
        let e = p(&[("csv_has_header", ParamValue::Int(1))]).unwrap_err();
        assert!(e.message.contains("true, false or 'auto'"), "{e}");
        let e = p(&[("csv_quote", ParamValue::Str(",".into()))]).unwrap_err();
        assert!(e.message.contains("csv_quote") && e.message.contains("csv_delimiter"), "{e}");
        let e = p(&[("input_text_encoding", ParamValue::Str("ebcdic".into()))]).unwrap_err();
        assert!(e.message.contains("input_text_encoding") && e.message.contains("'ebcdic'"), "{e}");
        assert_eq!(
            p(&[("input_text_encoding", ParamValue::Str("ISO-8859-1".into()))]).unwrap().input_text_encoding,
            TextEncoding::Latin1
        );
    }

    #[test]
    fn parser_options_are_validated() {
        let e = p(&[("parse_float_decimal_separator", ParamValue::Str(",".into()))]).unwrap_err();
        assert!(
            e.message.contains("parse_float_decimal_separator")
                && e.message.contains("parse_float_thousands_separator"),
            "{e}"
        );
        let e = p(&[("parse_float_decimal_separator", ParamValue::Str("ab".into()))]).unwrap_err();
        assert!(e.message.contains("one ASCII punctuation character"), "{e}");
        let list = |v: &[&str]| ParamValue::List(v.iter().map(|s| ParamValue::Str(s.to_string())).collect());
        let e = p(&[("true_tokens", list(&["Yes"])), ("false_tokens", list(&["YES"]))]).unwrap_err();
        assert!(e.message.contains("'yes' is in both"), "{e}");
        let e = p(&[("custom_date_patterns", list(&["(\\d+"]))]).unwrap_err();
        assert!(e.message.contains("custom_date_patterns"), "{e}");
        let e = p(&[("time_formats", list(&["%H:%M", "%H:%q"]))]).unwrap_err();
        assert!(e.message.contains("\"time_formats\" pattern '%H:%q'") && e.message.contains("%q"), "{e}");
        let o = p(&[("date_formats", list(&["%d/%m/%Y"]))]).unwrap();
        assert_eq!(o.contract_json()["date_formats"], serde_json::json!(["%d/%m/%Y"]));
        assert_eq!(o.parsers.parse("28/01/2018"), crate::scalar::Parsed::Date(17_559));
        let o = p(&[
            ("parse_floats", ParamValue::Bool(true)),
            ("parse_float_decimal_separator", ParamValue::Str(",".into())),
            ("parse_float_thousands_separator", ParamValue::Str(".".into())),
        ])
        .unwrap();
        assert_eq!(o.parsers.floats, Some(FloatFormat { decimal: b',', thousands: b'.' }));
    }
}
