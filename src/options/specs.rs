//! Every named parameter in one row of [`OPTION_SPECS`]: its name, SQL
//! type, default, parse-and-validate function and whether the registry
//! contract carries it.

#[allow(unused_imports)]
use super::*;

/// Whether the registry's contract carries an option (docs/registry.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contract {
    No,
    Yes,
    /// Only for CSV scans (the CSV dialect).
    Csv,
}

pub(crate) type Apply = fn(&mut Options, &str, &ParamValue) -> std::result::Result<(), String>;
pub(crate) type ContractValue = fn(&Options) -> serde_json::Value;

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
    pub(crate) apply: Apply,
    /// The value as the registry's contract stores it (the SQL value a user
    /// would pass); `None` unless `contract` says so.
    pub(crate) contract_value: Option<ContractValue>,
    /// Where the option's current value came from: its field of
    /// [`Origins`], named as the option is.
    pub(crate) origin: fn(&mut Origins) -> &mut Origin,
}

macro_rules! option {
    ($name:ident, $ty:ident, $default:expr, $apply:expr) => {
        OptionSpec {
            name: stringify!($name),
            ty: ParamType::$ty,
            default: $default,
            contract: Contract::No,
            apply: $apply,
            contract_value: None,
            origin: |o| &mut o.$name,
        }
    };
    ($name:ident, $ty:ident, $default:expr, $apply:expr, contract $scope:ident: $value:expr) => {
        OptionSpec {
            name: stringify!($name),
            ty: ParamType::$ty,
            default: $default,
            contract: Contract::$scope,
            apply: $apply,
            contract_value: Some($value),
            origin: |o| &mut o.$name,
        }
    };
}

pub(crate) use serde_json::Value as Json;
use DefaultValue::{Bool as B, EmptyList, Int as I, Null, Str as S, StrList};

/// The named parameters of every `sanitize_*` table function, in the order of
/// the SQL surface contract (`input_format`, [`INPUT_FORMAT_SPEC`], is added
/// for `sanitize` and `sanitize_probe` only).
pub const OPTION_SPECS: &[OptionSpec] = &[
    option!(input_mode, Varchar, S("single_file"), |o, n, v| set(&mut o.input_mode, choice(n, v)?)),
    option!(schema_mode, Varchar, S("additive"), |o, n, v| set(&mut o.schema_mode, choice(n, v)?)),
    option!(column_order, Varchar, S("alphabetically"), |o, n, v| set(&mut o.column_order, choice(n, v)?)),
    option!(field_name_policy, Varchar, S("lower_alpha"), |o, n, v| set(&mut o.field_name_policy, choice(n, v)?)),
    option!(timestamp_precision, Varchar, S("TIMESTAMP_MICROS"),
        |o, n, v| set(&mut o.timestamp_precision, choice(n, v)?),
        contract Yes: |o| Json::from(timestamp_precision_name(o.timestamp_precision))),
    option!(parse_integers, Boolean, B(false), |o, n, v| set(&mut o.parsers.integers, boolean(n, v)?),
        contract Yes: |o| Json::from(o.parsers.integers)),
    option!(parse_floats, Boolean, B(false), |o, n, v| set(&mut o.parse_floats, boolean(n, v)?),
        contract Yes: |o| Json::from(o.parse_floats)),
    option!(parse_float_decimal_separator, Varchar, S("."), |o, n, v| set(&mut o.float_separators.0, separator(n, v)?),
        contract Yes: |o| char_json(o.float_separators.0)),
    option!(parse_float_thousands_separator, Varchar, S(","), |o, n, v| set(&mut o.float_separators.1, separator(n, v)?),
        contract Yes: |o| char_json(o.float_separators.1)),
    option!(parse_iso_timestamps, Boolean, B(false), |o, n, v| set(&mut o.parsers.iso_timestamps, boolean(n, v)?),
        contract Yes: |o| Json::from(o.parsers.iso_timestamps)),
    option!(parse_iso_dates, Boolean, B(false), |o, n, v| set(&mut o.parsers.iso_dates, boolean(n, v)?),
        contract Yes: |o| Json::from(o.parsers.iso_dates)),
    option!(parse_iso_times, Boolean, B(false), |o, n, v| set(&mut o.parsers.iso_times, boolean(n, v)?),
        contract Yes: |o| Json::from(o.parsers.iso_times)),
    option!(true_tokens, VarcharList, EmptyList, |o, n, v| set(&mut o.parsers.true_tokens, tokens(n, v)?),
        contract Yes: |o| Json::from(o.parsers.true_tokens.clone())),
    option!(false_tokens, VarcharList, EmptyList, |o, n, v| set(&mut o.parsers.false_tokens, tokens(n, v)?),
        contract Yes: |o| Json::from(o.parsers.false_tokens.clone())),
    option!(custom_timestamp_patterns, VarcharList, EmptyList, |o, n, v| set(&mut o.custom_patterns[0], strings(n, v)?),
        contract Yes: |o| Json::from(o.custom_patterns[0].clone())),
    option!(custom_date_patterns, VarcharList, EmptyList, |o, n, v| set(&mut o.custom_patterns[1], strings(n, v)?),
        contract Yes: |o| Json::from(o.custom_patterns[1].clone())),
    option!(custom_time_patterns, VarcharList, EmptyList, |o, n, v| set(&mut o.custom_patterns[2], strings(n, v)?),
        contract Yes: |o| Json::from(o.custom_patterns[2].clone())),
    option!(timestamp_formats, VarcharList, EmptyList, |o, n, v| set(&mut o.date_formats[0], strings(n, v)?),
        contract Yes: |o| Json::from(o.date_formats[0].clone())),
    option!(date_formats, VarcharList, EmptyList, |o, n, v| set(&mut o.date_formats[1], strings(n, v)?),
        contract Yes: |o| Json::from(o.date_formats[1].clone())),
    option!(time_formats, VarcharList, EmptyList, |o, n, v| set(&mut o.date_formats[2], strings(n, v)?),
        contract Yes: |o| Json::from(o.date_formats[2].clone())),
    option!(arrow_max_depth, Integer, I(32), |o, n, v| set(&mut o.arrow_max_depth, integer(n, v, 1, MAX_DEPTH_LIMIT)? as usize),
        contract Yes: |o| Json::from(o.arrow_max_depth as u64)),
    option!(parquet_max_depth, Integer, I(15), |o, n, v| set(&mut o.parquet_max_depth, integer(n, v, 1, MAX_DEPTH_LIMIT)? as usize),
        contract Yes: |o| Json::from(o.parquet_max_depth as u64)),
    option!(scalar_object_key, Varchar, S("default_key"), |o, n, v| set(&mut o.scalar_object_key, non_empty(n, v)?),
        contract Yes: |o| Json::from(o.scalar_object_key.as_str())),
    option!(csv_has_header, Any, B(true), |o, n, v| set(&mut o.csv_has_header, csv_header(n, v)?),
        contract Csv: |o| o.csv_has_header.map_or(Json::from("auto"), Json::from)),
    option!(csv_delimiter, Varchar, S(","), |o, n, v| set(&mut o.csv_delimiter, csv_delimiter(n, v)?),
        contract Csv: |o| Json::from(String::from_utf8_lossy(&o.csv_delimiter).into_owned())),
    option!(csv_quote, Varchar, S("\""), |o, n, v| set(&mut o.csv_quote, csv_byte(n, v)?),
        contract Csv: |o| byte_json(o.csv_quote)),
    option!(csv_escape, Varchar, Null, |o, n, v| set(&mut o.csv_escape, csv_byte(n, v)?),
        contract Csv: |o| byte_json(o.csv_escape)),
    option!(csv_comment, Varchar, Null, |o, n, v| set(&mut o.csv_comment, csv_byte(n, v)?),
        contract Csv: |o| byte_json(o.csv_comment)),
    option!(csv_skip_lines, Bigint, I(0), |o, n, v| set(&mut o.csv_skip_lines, integer(n, v, 0, i64::MAX)? as u64),
        contract Csv: |o| Json::from(o.csv_skip_lines)),
    option!(csv_null_strings, VarcharList, StrList(&[""]), |o, n, v| set(&mut o.csv_null_strings, strings(n, v)?),
        contract Csv: |o| Json::from(o.csv_null_strings.clone())),
    option!(csv_null_padding, Boolean, B(false), |o, n, v| set(&mut o.csv_null_padding, boolean(n, v)?),
        contract Csv: |o| Json::from(o.csv_null_padding)),
    option!(csv_auto_detect, Boolean, B(false), |o, n, v| set(&mut o.csv_auto_detect, boolean(n, v)?)),
    option!(input_text_encoding, Varchar, S("utf-8"), |o, n, v| set(&mut o.input_text_encoding, text_encoding(n, v)?)),
    option!(xml_row_tag, Varchar, Null, |o, n, v| set(&mut o.xml_row_tag, Some(xml_row_tag(n, v)?))),
    option!(on_error, Varchar, S("emit_null_row"), |o, n, v| set(&mut o.on_error, choice(n, v)?)),
    option!(batch_memory_limit_bytes, Bigint, Null, |o, n, v| set(
        &mut o.batch_memory_limit_bytes,
        Some(integer(n, v, 1, i64::MAX)? as u64)
    )),
    option!(read_chunk_bytes, Bigint, I(1 << 20), |o, n, v| set(
        &mut o.read_chunk_bytes,
        integer(n, v, 1, 1 << 30)? as usize
    )),
    option!(max_record_bytes, Bigint, I(16 << 20), |o, n, v| set(
        &mut o.max_record_bytes,
        integer(n, v, 1, 1 << 40)? as usize
    )),
    option!(max_columns, Bigint, I(10_000), |o, n, v| set(&mut o.max_columns, integer(n, v, 1, i64::MAX)? as usize)),
    option!(scan_range_bytes, Bigint, Null, |o, n, v| set(
        &mut o.scan_range_bytes,
        Some(integer(n, v, 1, i64::MAX)? as u64)
    )),
    option!(registry, Any, Null, |o, n, v| set(&mut o.registry, Some(registry_text(n, v)?))),
    option!(compression, Varchar, S("auto"), |o, n, v| set(&mut o.compression, choice(n, v)?)),
    option!(validate_extension, Boolean, B(true), |o, n, v| set(&mut o.validate_extension, boolean(n, v)?)),
    option!(union_by_name, Boolean, B(false), |o, n, v| set(&mut o.union_by_name, boolean(n, v)?)),
    option!(map_inference_threshold, Bigint, I(200), |o, n, v| set(&mut o.map_inference_threshold, map_threshold(n, v)?),
        contract Yes: |o| Json::from(o.map_inference_threshold.map_or(-1, |t| t as i64))),
    option!(map_paths, VarcharList, EmptyList, |o, n, v| set(&mut o.map_paths, strings(n, v)?),
        contract Yes: |o| Json::from(o.map_paths.clone())),
    option!(hive_partitioning, Boolean, Null, |o, n, v| set(&mut o.hive_partitioning, Some(boolean(n, v)?))),
    option!(hive_types, Any, Null, |o, n, v| set(&mut o.hive_types, hive_types(n, v)?)),
    option!(hive_types_autocast, Boolean, B(true), |o, n, v| set(&mut o.hive_types_autocast, boolean(n, v)?)),
    option!(rescue_column, Varchar, Null, |o, n, v| set(&mut o.rescue_column, Some(rescue_name(n, v)?)),
        contract Yes: |o| o.rescue_column.as_deref().map_or(Json::Null, Json::from)),
    option!(max_rejects, Bigint, I(10_000), |o, n, v| set(
        &mut o.max_rejects,
        Some(integer(n, v, 0, i64::MAX)? as u64)
    )),
    option!(max_reject_bytes, Bigint, I(1024), |o, n, v| set(
        &mut o.max_reject_bytes,
        integer(n, v, 0, 1 << 30)? as usize
    )),
    option!(bigquery_profile, Boolean, B(false), |o, n, v| set(&mut o.bigquery_profile, boolean(n, v)?),
        contract Yes: |o| Json::from(o.bigquery_profile)),
    option!(pin_types, Any, Null, |o, n, v| set(&mut o.pin_types, pin_types(n, v)?),
    contract Yes: |o| if o.pin_types.is_empty() {
        Json::Null
    } else {
        Json::Object(o.pin_types.iter().map(|(p, t)| (p.clone(), Json::from(t.name()))).collect())
    }),
    option!(freeze, VarcharList, EmptyList, |o, n, v| set(&mut o.freeze, strings(n, v)?),
        contract Yes: |o| if o.freeze.is_empty() { Json::Null } else { Json::from(o.freeze.clone()) }),
];

/// `pin_types`: a STRUCT or MAP of source-key path to type name.
pub(crate) fn pin_types(name: &str, value: &ParamValue) -> Parsed<Vec<(String, PinType)>> {
    type_map(name, value, "a MAP or STRUCT of field path to type name such as MAP {'amount': 'DOUBLE'}", "", "'DOUBLE'")
}

/// `rescue_column`: a non-empty name without NUL.
pub(crate) fn rescue_name(name: &str, value: &ParamValue) -> Parsed<String> {
    match value {
        ParamValue::Str(s) if !s.is_empty() && !s.contains('\0') => Ok(s.clone()),
        other => {
            Err(format!("the \"{name}\" parameter must be a non-empty column name (VARCHAR), not {}", other.describe()))
        }
    }
}

/// BigQuery's deepest RECORD nesting, the profile's `parquet_max_depth` bound.
pub(crate) const BIGQUERY_MAX_DEPTH: usize = 15;

/// `input_format`, for `sanitize` and `sanitize_probe` only: required, so
/// parsed before every other option (see [`Options::parse`]).
pub const INPUT_FORMAT_SPEC: OptionSpec = option!(input_format, Varchar, Null, |_, _, _| Ok(()));

/// Upper bound of `arrow_max_depth` and `parquet_max_depth`: inference and
/// materialization recurse once per container level below the limit, so the
/// limit also bounds their stack use (deeper values are flattened to text).
pub const MAX_DEPTH_LIMIT: i64 = 255;

pub(crate) fn set<T>(slot: &mut T, value: T) -> std::result::Result<(), String> {
    *slot = value;
    Ok(())
}

pub(crate) fn char_json(b: u8) -> Json {
    Json::from((b as char).to_string())
}
