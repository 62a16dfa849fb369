//! Where each option's value came from, kept beside the value as DuckDB's
//! `CSVOption<T>` keeps it: the default, the user, the registry's contract,
//! or the CSV sniffer. One field per option of [`super::OPTION_SPECS`],
//! named as the option is, so code asks `options.origins.csv_delimiter`
//! rather than looking a name up.

/// The source of one option's value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Origin {
    /// The option's default (or a value another option implied).
    #[default]
    Default,
    /// Given by the user (not NULL).
    Given,
    /// Taken from the registry's contract.
    Contract,
    /// Decided by the CSV sniffer.
    Sniffed,
}

impl Origin {
    /// Given or taken from the contract: a choice the sniffer and the
    /// defaults leave alone.
    pub fn is_chosen(self) -> bool {
        matches!(self, Origin::Given | Origin::Contract)
    }
}

/// One [`Origin`] per option (see the module doc).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Origins {
    pub input_mode: Origin,
    pub schema_mode: Origin,
    pub column_order: Origin,
    pub field_name_policy: Origin,
    pub timestamp_precision: Origin,
    pub parse_integers: Origin,
    pub parse_floats: Origin,
    pub parse_float_decimal_separator: Origin,
    pub parse_float_thousands_separator: Origin,
    pub parse_iso_timestamps: Origin,
    pub parse_iso_dates: Origin,
    pub parse_iso_times: Origin,
    pub true_tokens: Origin,
    pub false_tokens: Origin,
    pub custom_timestamp_patterns: Origin,
    pub custom_date_patterns: Origin,
    pub custom_time_patterns: Origin,
    pub timestamp_formats: Origin,
    pub date_formats: Origin,
    pub time_formats: Origin,
    pub arrow_max_depth: Origin,
    pub parquet_max_depth: Origin,
    pub scalar_object_key: Origin,
    pub csv_has_header: Origin,
    pub csv_delimiter: Origin,
    pub csv_quote: Origin,
    pub csv_escape: Origin,
    pub csv_comment: Origin,
    pub csv_skip_lines: Origin,
    pub csv_null_strings: Origin,
    pub csv_null_padding: Origin,
    pub csv_auto_detect: Origin,
    pub input_text_encoding: Origin,
    pub xml_row_tag: Origin,
    pub on_error: Origin,
    pub batch_memory_limit_bytes: Origin,
    pub read_chunk_bytes: Origin,
    pub max_record_bytes: Origin,
    pub max_columns: Origin,
    pub scan_range_bytes: Origin,
    pub registry: Origin,
    pub compression: Origin,
    pub validate_extension: Origin,
    pub union_by_name: Origin,
    pub map_inference_threshold: Origin,
    pub map_paths: Origin,
    pub hive_partitioning: Origin,
    pub hive_types: Origin,
    pub hive_types_autocast: Origin,
    pub rescue_column: Origin,
    pub max_rejects: Origin,
    pub max_reject_bytes: Origin,
    pub bigquery_profile: Origin,
    pub pin_types: Origin,
    pub freeze: Origin,
    pub input_format: Origin,
}
