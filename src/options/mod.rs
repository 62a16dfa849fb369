//! Every named parameter in one row of [`OPTION_SPECS`]: its name, SQL type,
//! default, parse-and-validate function and whether the registry contract
//! carries it. Registration (src/ffi), parsing, defaults and the contract
//! all read the rows, so an option cannot be registered without being parsed
//! or defaulted. Adding one is one row here, its field in [`Options`], and
//! its line in docs/options.md (a test checks the two agree).

use crate::error::{Result, SanitizeError};
use crate::scalar::{CustomPatterns, DateFormats, FloatFormat, ScalarParsers};
use crate::value::TimeUnit;

mod choices;
mod origins;
mod params;
mod row_params;
mod specs;
#[cfg(test)]
mod tests;
mod values;

pub(crate) use choices::*;
pub use origins::{Origin, Origins};
pub(crate) use params::*;
pub(crate) use row_params::*;
pub(crate) use specs::*;
pub(crate) use values::*;

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
    pub input_text_encoding: TextEncoding,
    /// Stream each direct child element with this tag as a row; `None`: the
    /// whole document is one row.
    pub xml_row_tag: Option<String>,
    /// Where each option's value came from (options/origins.rs): an
    /// explicit choice differs from a default (on_error, the registry
    /// contract, what the CSV sniffer may decide).
    pub origins: Origins,
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
    /// the registry's value (its origin then `Contract`); one it gives with
    /// another value is an error naming the option and both values. `None`
    /// (a registry written before contracts existed) applies nothing. The
    /// values go through each option's own parser and then the checks that
    /// involve several options, as values the user types do.
    pub fn with_contract(
        mut self,
        function: &str,
        contract: Option<&serde_json::Map<String, serde_json::Value>>,
    ) -> Result<Self> {
        let Some(contract) = contract else { return Ok(self) };
        let err =
            |m: String| SanitizeError::options(format!("{function}: {m} (a value taken from the registry's contract)"));
        let mut adopted = false;
        let specs: Vec<_> = self.contract_specs().collect();
        for (spec, value) in specs {
            let name = spec.name;
            let Some(theirs) = contract.get(name) else { continue };
            // A null in the contract (an option that was off, such as
            // rescue_column) constrains nothing.
            if theirs.is_null() {
                continue;
            }
            if *(spec.origin)(&mut self.origins) == Origin::Given {
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
            (spec.apply)(&mut self, name, &value).map_err(err)?;
            *(spec.origin)(&mut self.origins) = Origin::Contract;
            adopted = true;
        }
        if adopted {
            self.finish().map_err(err)?;
        }
        Ok(self)
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
            input_text_encoding: TextEncoding::Utf8,
            xml_row_tag: None,
            origins: Origins::default(),
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
            (spec.apply)(&mut o, spec.name, value).map_err(err)?;
            *(spec.origin)(&mut o.origins) = Origin::Given;
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
                if self.origins.timestamp_precision == Origin::Given {
                    return Err("bigquery_profile := true needs timestamp_precision 'TIMESTAMP_MICROS' (BigQuery has no nanosecond timestamps)".into());
                }
                self.timestamp_precision = TimeUnit::Micros;
            }
            if self.parquet_max_depth > BIGQUERY_MAX_DEPTH {
                if self.origins.parquet_max_depth == Origin::Given {
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
        crate::formats::csv::dialect::check_roles(
            &self.csv_delimiter,
            self.csv_quote,
            self.csv_escape,
            self.csv_comment,
        )
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
