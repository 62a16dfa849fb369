//! Every named parameter once: its name, SQL type, default and validation.
//! Registration (src/ffi) and parsing both read [`OPTION_SPECS`], so a
//! parameter cannot be registered without being parsed, or the reverse.

use crate::error::{Result, SanitizeError};
use crate::scalar::{CustomPatterns, FloatFormat, ScalarParsers};

/// A named-parameter value as DuckDB handed it over, free of FFI types.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    Null,
    Bool(bool),
    Int(i64),
    Str(String),
    List(Vec<ParamValue>),
}

/// The SQL type a parameter is registered with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    Varchar,
    Boolean,
    Integer,
    Bigint,
    VarcharList,
}

pub struct OptionSpec {
    pub name: &'static str,
    pub ty: ParamType,
}

macro_rules! specs {
    ($($name:literal : $ty:ident),* $(,)?) => {
        &[$(OptionSpec { name: $name, ty: ParamType::$ty }),*]
    };
}

/// The named parameters of every `sanitize_*` table function, in the order of
/// the SQL surface contract (`input_format` is added for `sanitize` and
/// `sanitize_probe` only).
pub const OPTION_SPECS: &[OptionSpec] = specs![
    "input_mode": Varchar,
    "schema_mode": Varchar,
    "column_order": Varchar,
    "field_name_policy": Varchar,
    "timestamp_precision": Varchar,
    "parse_integers": Boolean,
    "parse_floats": Boolean,
    "parse_float_decimal_separator": Varchar,
    "parse_float_thousands_separator": Varchar,
    "parse_iso_timestamps": Boolean,
    "parse_iso_dates": Boolean,
    "parse_iso_times": Boolean,
    "true_tokens": VarcharList,
    "false_tokens": VarcharList,
    "custom_timestamp_patterns": VarcharList,
    "custom_date_patterns": VarcharList,
    "custom_time_patterns": VarcharList,
    "arrow_max_depth": Integer,
    "parquet_max_depth": Integer,
    "scalar_object_key": Varchar,
    "csv_has_header": Boolean,
    "csv_delimiter": Varchar,
    "input_text_encoding": Varchar,
    "xml_row_tag": Varchar,
    "on_error": Varchar,
    "batch_memory_limit_bytes": Bigint,
    "read_chunk_bytes": Bigint,
    "registry": Varchar,
];

/// Upper bound of `arrow_max_depth` and `parquet_max_depth`: inference and
/// materialization recurse once per container level below the limit, so the
/// limit also bounds their stack use (deeper values are flattened to text).
pub const MAX_DEPTH_LIMIT: i64 = 255;

pub const INPUT_FORMAT_SPEC: OptionSpec = OptionSpec { name: "input_format", ty: ParamType::Varchar };

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputFormat {
    Csv,
    Json,
    JsonArray,
    Jsonl,
    Ndjson,
    Xml,
    Parquet,
}

impl InputFormat {
    pub const ALL: [(&'static str, InputFormat); 7] = [
        ("csv", InputFormat::Csv),
        ("json", InputFormat::Json),
        ("json_array", InputFormat::JsonArray),
        ("jsonl", InputFormat::Jsonl),
        ("ndjson", InputFormat::Ndjson),
        ("xml", InputFormat::Xml),
        ("parquet", InputFormat::Parquet),
    ];

    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, f)| *f == self).map(|(n, _)| *n).unwrap_or("?")
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputMode {
    SingleFile,
    Directory,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaMode {
    Additive,
    Strict,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnOrder {
    Alphabetically,
    SchemaContractFirst,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldNamePolicy {
    LowerAlpha,
    LowerSnake,
    Preserve,
}

impl FieldNamePolicy {
    pub fn name(self) -> &'static str {
        match self {
            FieldNamePolicy::LowerAlpha => "lower_alpha",
            FieldNamePolicy::LowerSnake => "lower_snake",
            FieldNamePolicy::Preserve => "preserve",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "lower_alpha" => Some(Self::LowerAlpha),
            "lower_snake" => Some(Self::LowerSnake),
            "preserve" => Some(Self::Preserve),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimestampPrecision {
    Millis,
    Micros,
    Nanos,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnError {
    Stop,
    SkipRow,
    EmitNullRow,
}

/// Parsed, validated options of one scan. Immutable after bind.
#[derive(Clone, Debug)]
pub struct Options {
    pub input_format: InputFormat,
    pub input_mode: InputMode,
    pub schema_mode: SchemaMode,
    pub column_order: ColumnOrder,
    pub field_name_policy: FieldNamePolicy,
    pub timestamp_precision: TimestampPrecision,
    pub arrow_max_depth: usize,
    pub parquet_max_depth: usize,
    pub scalar_object_key: String,
    pub on_error: OnError,
    pub batch_memory_limit_bytes: Option<u64>,
    pub read_chunk_bytes: usize,
    /// The registry JSON given with `registry :=`, if any.
    pub registry: Option<String>,
    /// String-to-scalar parsing, compiled.
    pub parsers: ScalarParsers,
    pub csv_has_header: bool,
    /// One of `,` `;` `\t` `|`.
    pub csv_delimiter: u8,
    pub input_text_encoding: TextEncoding,
    /// Stream each direct child element with this tag as a row; `None`: the
    /// whole document is one row.
    pub xml_row_tag: Option<String>,
    /// The parameters the user gave (not NULL): an explicit choice differs
    /// from a default (on_error, the registry contract).
    pub given: Vec<(&'static str, ParamValue)>,
    /// `parse_float_decimal_separator` and `_thousands_separator` as given
    /// (kept even with `parse_floats` off: they are part of the contract).
    pub float_separators: (u8, u8),
    /// The `custom_timestamp/date/time_patterns` as written.
    pub custom_patterns: [Vec<String>; 3],
}

/// The options that decide a value's type or route. They are the
/// registry's contract: stored in its `contract` section and applied by the
/// next run that does not give them (docs/registry.md). The CSV dialect
/// counts only for CSV scans.
pub const CONTRACT_OPTIONS: &[&str] = &[
    "parse_integers",
    "parse_floats",
    "parse_float_decimal_separator",
    "parse_float_thousands_separator",
    "parse_iso_timestamps",
    "parse_iso_dates",
    "parse_iso_times",
    "true_tokens",
    "false_tokens",
    "custom_timestamp_patterns",
    "custom_date_patterns",
    "custom_time_patterns",
    "timestamp_precision",
    "scalar_object_key",
    "arrow_max_depth",
    "parquet_max_depth",
    "csv_has_header",
    "csv_delimiter",
];

impl Options {
    /// Whether the user gave the parameter `name` (with a value other than NULL).
    pub fn is_given(&self, name: &str) -> bool {
        self.given.iter().any(|(n, _)| *n == name)
    }

    fn is_contract_option(&self, name: &str) -> bool {
        CONTRACT_OPTIONS.contains(&name) && (self.input_format == InputFormat::Csv || !name.starts_with("csv_"))
    }

    /// This scan's contract options with their values, as the registry's
    /// `contract` section stores them (the SQL values a user would pass).
    pub fn contract_json(&self) -> serde_json::Map<String, serde_json::Value> {
        use serde_json::Value;
        let p = &self.parsers;
        let sep = |b: u8| Value::from((b as char).to_string());
        let list = |v: &[String]| Value::from(v.to_vec());
        let precision = match self.timestamp_precision {
            TimestampPrecision::Millis => "TIMESTAMP_MILLIS",
            TimestampPrecision::Micros => "TIMESTAMP_MICROS",
            TimestampPrecision::Nanos => "TIMESTAMP_NANOS",
        };
        let mut m = serde_json::Map::new();
        for name in CONTRACT_OPTIONS.iter().copied().filter(|n| self.is_contract_option(n)) {
            let v = match name {
                "parse_integers" => Value::from(p.integers),
                "parse_floats" => Value::from(p.floats.is_some()),
                "parse_float_decimal_separator" => sep(self.float_separators.0),
                "parse_float_thousands_separator" => sep(self.float_separators.1),
                "parse_iso_timestamps" => Value::from(p.iso_timestamps),
                "parse_iso_dates" => Value::from(p.iso_dates),
                "parse_iso_times" => Value::from(p.iso_times),
                "true_tokens" => list(&p.true_tokens),
                "false_tokens" => list(&p.false_tokens),
                "custom_timestamp_patterns" => list(&self.custom_patterns[0]),
                "custom_date_patterns" => list(&self.custom_patterns[1]),
                "custom_time_patterns" => list(&self.custom_patterns[2]),
                "timestamp_precision" => Value::from(precision),
                "scalar_object_key" => Value::from(self.scalar_object_key.as_str()),
                "arrow_max_depth" => Value::from(self.arrow_max_depth as u64),
                "parquet_max_depth" => Value::from(self.parquet_max_depth as u64),
                "csv_has_header" => Value::from(self.csv_has_header),
                "csv_delimiter" => sep(self.csv_delimiter),
                _ => continue,
            };
            m.insert(name.to_string(), v);
        }
        m
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
        let mine = self.contract_json();
        let mut params: Vec<(&str, ParamValue)> = self.given.iter().map(|(n, v)| (*n, v.clone())).collect();
        let mut adopted = false;
        for (name, theirs) in contract {
            let Some(&name) = CONTRACT_OPTIONS.iter().find(|n| **n == name.as_str()) else { continue };
            if !self.is_contract_option(name) {
                continue;
            }
            if self.is_given(name) {
                if mine.get(name) != Some(theirs) {
                    let ours = mine.get(name).map(|v| v.to_string()).unwrap_or_default();
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
            adopted = true;
        }
        if !adopted {
            return Ok(self);
        }
        // Parse again with the registry's values: the same validation as
        // for values the user types.
        let mut o = Options::parse(function, Some(self.input_format), &params).map_err(|e| {
            SanitizeError::options(format!("{} (a value taken from the registry's contract)", e.message))
        })?;
        // Contract values are not the user's choices.
        o.given.retain(|(n, _)| self.is_given(n));
        Ok(o)
    }

    pub fn defaults(input_format: InputFormat) -> Self {
        Options {
            input_format,
            input_mode: InputMode::SingleFile,
            schema_mode: SchemaMode::Additive,
            column_order: ColumnOrder::Alphabetically,
            field_name_policy: FieldNamePolicy::LowerAlpha,
            timestamp_precision: TimestampPrecision::Micros,
            arrow_max_depth: 32,
            parquet_max_depth: 15,
            scalar_object_key: "default_key".to_string(),
            on_error: OnError::EmitNullRow,
            batch_memory_limit_bytes: None,
            read_chunk_bytes: 1 << 20,
            registry: None,
            parsers: ScalarParsers::default(),
            csv_has_header: true,
            csv_delimiter: b',',
            input_text_encoding: TextEncoding::Utf8,
            xml_row_tag: None,
            given: Vec::new(),
            float_separators: (b'.', b','),
            custom_patterns: [Vec::new(), Vec::new(), Vec::new()],
        }
    }

    /// Parses named parameters. `fixed_format` is the format implied by the
    /// function name; `None` means `input_format` is required.
    pub fn parse(function: &str, fixed_format: Option<InputFormat>, params: &[(&str, ParamValue)]) -> Result<Self> {
        let err = |m: String| SanitizeError::options(format!("{function}: {m}"));
        let input_format = match fixed_format {
            Some(f) => f,
            None => parse_input_format(function, params.iter().find(|(n, _)| *n == "input_format").map(|(_, v)| v))?,
        };
        let mut o = Options::defaults(input_format);
        let (mut parse_floats, mut decimal, mut thousands) = (false, b'.', b',');
        let (mut timestamp_patterns, mut date_patterns, mut time_patterns) = (Vec::new(), Vec::new(), Vec::new());
        for (name, value) in params {
            if matches!(value, ParamValue::Null) && *name != "input_format" {
                // DuckDB passes NULL for `name := NULL`: keep the default, as
                // a Python `None` does in the library the SQL surface follows (xml_row_tag, batch_memory_limit_bytes, registry).
                continue;
            }
            if let Some(spec) = OPTION_SPECS.iter().find(|s| s.name == *name) {
                o.given.push((spec.name, value.clone()));
            }
            match *name {
                "input_format" => {
                    if fixed_format.is_some() {
                        return Err(err(format!(
                            "the \"input_format\" parameter is only accepted by sanitize() and sanitize_probe(); {function} always reads '{}'",
                            input_format.name()
                        )));
                    }
                }
                "input_mode" => {
                    o.input_mode = choice(
                        function,
                        name,
                        value,
                        &[("single_file", InputMode::SingleFile), ("directory", InputMode::Directory)],
                    )?
                }
                "schema_mode" => {
                    o.schema_mode = choice(
                        function,
                        name,
                        value,
                        &[("additive", SchemaMode::Additive), ("strict", SchemaMode::Strict)],
                    )?
                }
                "column_order" => {
                    o.column_order = choice(
                        function,
                        name,
                        value,
                        &[
                            ("alphabetically", ColumnOrder::Alphabetically),
                            ("schema_contract_first", ColumnOrder::SchemaContractFirst),
                        ],
                    )?
                }
                "field_name_policy" => {
                    o.field_name_policy = choice(
                        function,
                        name,
                        value,
                        &[
                            ("lower_alpha", FieldNamePolicy::LowerAlpha),
                            ("lower_snake", FieldNamePolicy::LowerSnake),
                            ("preserve", FieldNamePolicy::Preserve),
                        ],
                    )?
                }
                "timestamp_precision" => {
                    o.timestamp_precision = choice(
                        function,
                        name,
                        value,
                        &[
                            ("TIMESTAMP_MILLIS", TimestampPrecision::Millis),
                            ("TIMESTAMP_MICROS", TimestampPrecision::Micros),
                            ("TIMESTAMP_NANOS", TimestampPrecision::Nanos),
                        ],
                    )?
                }
                "arrow_max_depth" => o.arrow_max_depth = positive(function, name, value, 1, MAX_DEPTH_LIMIT)? as usize,
                "parquet_max_depth" => {
                    o.parquet_max_depth = positive(function, name, value, 1, MAX_DEPTH_LIMIT)? as usize
                }
                "scalar_object_key" => {
                    let key = string(function, name, value)?;
                    if key.is_empty() {
                        return Err(err("the \"scalar_object_key\" parameter must not be empty".into()));
                    }
                    o.scalar_object_key = key;
                }
                "on_error" => {
                    o.on_error = choice(
                        function,
                        name,
                        value,
                        &[
                            ("stop", OnError::Stop),
                            ("skip_row", OnError::SkipRow),
                            ("emit_null_row", OnError::EmitNullRow),
                        ],
                    )?
                }
                "batch_memory_limit_bytes" => {
                    o.batch_memory_limit_bytes = Some(positive(function, name, value, 1, i64::MAX)? as u64)
                }
                "read_chunk_bytes" => o.read_chunk_bytes = positive(function, name, value, 1, 1 << 30)? as usize,
                "registry" => o.registry = Some(string(function, name, value)?),
                "parse_integers" => o.parsers.integers = boolean(function, name, value)?,
                "parse_floats" => parse_floats = boolean(function, name, value)?,
                "parse_float_decimal_separator" => decimal = separator(function, name, value)?,
                "parse_float_thousands_separator" => thousands = separator(function, name, value)?,
                "parse_iso_timestamps" => o.parsers.iso_timestamps = boolean(function, name, value)?,
                "parse_iso_dates" => o.parsers.iso_dates = boolean(function, name, value)?,
                "parse_iso_times" => o.parsers.iso_times = boolean(function, name, value)?,
                "true_tokens" => o.parsers.true_tokens = tokens(function, name, value)?,
                "false_tokens" => o.parsers.false_tokens = tokens(function, name, value)?,
                "custom_timestamp_patterns" => timestamp_patterns = strings(function, name, value)?,
                "custom_date_patterns" => date_patterns = strings(function, name, value)?,
                "custom_time_patterns" => time_patterns = strings(function, name, value)?,
                "csv_has_header" => o.csv_has_header = boolean(function, name, value)?,
                "csv_delimiter" => {
                    let d = string(function, name, value)?;
                    o.csv_delimiter = match d.as_str() {
                        "," | ";" | "\t" | "|" => d.as_bytes()[0],
                        _ => {
                            return Err(err(format!(
                                "the \"csv_delimiter\" parameter must be one of ',', ';', '\\t' (a tab, E'\\t' or chr(9)), '|', not '{}'",
                                d.escape_debug()
                            )))
                        }
                    };
                }
                "input_text_encoding" => {
                    let e = string(function, name, value)?;
                    o.input_text_encoding = TextEncoding::parse(&e).ok_or_else(|| {
                        err(format!(
                            "the \"input_text_encoding\" parameter must name 'utf-8', 'utf-16' (or 'utf-16-le' / 'utf-16-be'), 'latin-1' or 'windows-1252' (Python codec names and aliases are accepted), not '{e}'"
                        ))
                    })?;
                }
                "xml_row_tag" => {
                    let t = string(function, name, value)?;
                    // An element name, or a slash path of names from the root's children.
                    let bad_name =
                        |c: &str| c.is_empty() || c.contains(|c: char| c.is_whitespace() || c == '<' || c == '>');
                    if t.split('/').any(bad_name) {
                        return Err(err(format!(
                            "the \"xml_row_tag\" parameter must be an XML element name or a slash path of names below the root such as 'channel/item', not '{t}'"
                        )));
                    }
                    o.xml_row_tag = Some(t);
                }
                other => return Err(err(format!("unknown parameter \"{other}\""))),
            }
        }
        o.float_separators = (decimal, thousands);
        o.custom_patterns = [timestamp_patterns.clone(), date_patterns.clone(), time_patterns.clone()];
        if decimal == thousands {
            return Err(err(format!(
                "\"parse_float_decimal_separator\" and \"parse_float_thousands_separator\" must differ, both are '{}'",
                decimal as char
            )));
        }
        if parse_floats {
            o.parsers.floats = Some(FloatFormat { decimal, thousands });
        }
        if let Some(t) = o.parsers.true_tokens.iter().find(|t| o.parsers.false_tokens.contains(t)) {
            return Err(err(format!(
                "the token '{t}' is in both \"true_tokens\" and \"false_tokens\" (tokens are case-insensitive)"
            )));
        }
        o.parsers.custom = CustomPatterns::compile(&timestamp_patterns, &date_patterns, &time_patterns).map_err(err)?;
        if o.schema_mode == SchemaMode::Strict && o.registry.is_none() {
            return Err(err(
                "schema_mode 'strict' requires a registry: pass registry := <registry JSON from a previous run>".into(),
            ));
        }
        Ok(o)
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
        _ => return None,
    })
}

fn parse_input_format(function: &str, value: Option<&ParamValue>) -> Result<InputFormat> {
    let valid = InputFormat::ALL.iter().map(|(n, _)| format!("'{n}'")).collect::<Vec<_>>().join(", ");
    match value {
        None | Some(ParamValue::Null) => Err(SanitizeError::options(format!(
            "{function}: the \"input_format\" parameter is required and must be one of {valid}; the format is never guessed"
        ))),
        Some(ParamValue::Str(s)) => InputFormat::ALL.iter().find(|(n, _)| n == s).map(|(_, f)| *f).ok_or_else(|| {
            let hint = if s == "auto" { " ('auto' is not supported: the format is never guessed)" } else { "" };
            SanitizeError::options(format!("{function}: \"input_format\" must be one of {valid}, not '{s}'{hint}"))
        }),
        Some(other) => Err(SanitizeError::options(format!("{function}: \"input_format\" must be a VARCHAR, not {other:?}"))),
    }
}

fn boolean(function: &str, name: &str, value: &ParamValue) -> Result<bool> {
    match value {
        ParamValue::Bool(b) => Ok(*b),
        other => Err(SanitizeError::options(format!(
            "{function}: the \"{name}\" parameter must be a BOOLEAN, not {other:?}"
        ))),
    }
}

/// One ASCII punctuation character.
fn separator(function: &str, name: &str, value: &ParamValue) -> Result<u8> {
    let s = string(function, name, value)?;
    match s.as_bytes() {
        [c] if c.is_ascii_punctuation() => Ok(*c),
        _ => Err(SanitizeError::options(format!(
            "{function}: the \"{name}\" parameter must be one ASCII punctuation character such as '.', ',' or '_', not '{s}'"
        ))),
    }
}

fn strings(function: &str, name: &str, value: &ParamValue) -> Result<Vec<String>> {
    match value {
        ParamValue::List(items) => items
            .iter()
            .map(|i| match i {
                ParamValue::Str(s) => Ok(s.clone()),
                _ => Err(SanitizeError::options(format!("{function}: the \"{name}\" list must not contain NULL"))),
            })
            .collect(),
        other => Err(SanitizeError::options(format!(
            "{function}: the \"{name}\" parameter must be a VARCHAR[] list, not {other:?}"
        ))),
    }
}

/// Tokens are compared case-insensitively, so they are stored lower-cased.
fn tokens(function: &str, name: &str, value: &ParamValue) -> Result<Vec<String>> {
    let list = strings(function, name, value)?;
    if list.iter().any(|t| t.is_empty()) {
        return Err(SanitizeError::options(format!("{function}: the \"{name}\" list must not contain an empty token")));
    }
    Ok(list.into_iter().map(|t| t.to_lowercase()).collect())
}

fn string(function: &str, name: &str, value: &ParamValue) -> Result<String> {
    match value {
        ParamValue::Str(s) => Ok(s.clone()),
        other => Err(SanitizeError::options(format!(
            "{function}: the \"{name}\" parameter must be a VARCHAR, not {other:?}"
        ))),
    }
}

fn choice<T: Copy>(function: &str, name: &str, value: &ParamValue, choices: &[(&str, T)]) -> Result<T> {
    let s = string(function, name, value)?;
    choices.iter().find(|(n, _)| *n == s).map(|(_, v)| *v).ok_or_else(|| {
        let valid = choices.iter().map(|(n, _)| format!("'{n}'")).collect::<Vec<_>>().join(", ");
        SanitizeError::options(format!("{function}: the \"{name}\" parameter must be one of {valid}, not '{s}'"))
    })
}

fn positive(function: &str, name: &str, value: &ParamValue, min: i64, max: i64) -> Result<i64> {
    match value {
        ParamValue::Int(n) if *n >= min && *n <= max => Ok(*n),
        ParamValue::Int(n) => Err(SanitizeError::options(format!(
            "{function}: the \"{name}\" parameter must be between {min} and {max}, not {n}"
        ))),
        other => Err(SanitizeError::options(format!(
            "{function}: the \"{name}\" parameter must be an integer, not {other:?}"
        ))),
    }
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
        let e = p(&[("csv_delimiter", ParamValue::Str("::".into()))]).unwrap_err();
        assert!(e.message.contains("csv_delimiter") && e.message.contains("'::'"), "{e}");
        assert_eq!(p(&[("csv_delimiter", ParamValue::Str("\t".into()))]).unwrap().csv_delimiter, b'\t');
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
        let o = p(&[
            ("parse_floats", ParamValue::Bool(true)),
            ("parse_float_decimal_separator", ParamValue::Str(",".into())),
            ("parse_float_thousands_separator", ParamValue::Str(".".into())),
        ])
        .unwrap();
        assert_eq!(o.parsers.floats, Some(FloatFormat { decimal: b',', thousands: b'.' }));
    }
}
