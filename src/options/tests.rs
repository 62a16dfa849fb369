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
            assert!(OPTION_SPECS.iter().any(|s| s.name == n), "docs/options.md documents \"{n}\", which is no option");
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
        e.message.contains("parse_float_decimal_separator") && e.message.contains("parse_float_thousands_separator"),
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

fn csv(params: &[(&str, ParamValue)]) -> Result<Options> {
    Options::parse("sanitize_csv", Some(InputFormat::Csv), params)
}

#[test]
fn each_value_keeps_where_it_came_from() {
    let o = csv(&[("csv_delimiter", ParamValue::Str(";".into())), ("on_error", ParamValue::Null)]).unwrap();
    assert_eq!(o.origins.csv_delimiter, Origin::Given);
    assert_eq!(o.origins.on_error, Origin::Default, "NULL keeps the default");
    assert_eq!(o.origins.csv_quote, Origin::Default);
    assert!(o.origins.csv_delimiter.is_chosen() && !o.origins.csv_quote.is_chosen());
}

#[test]
fn a_contract_fills_what_is_not_given_without_parsing_again() {
    let o = csv(&[("csv_quote", ParamValue::Str("'".into()))]).unwrap();
    let contract: serde_json::Map<String, serde_json::Value> = serde_json::from_str(
        r#"{"csv_delimiter": "|", "csv_quote": "'", "parse_integers": true, "rescue_column": null}"#,
    )
    .unwrap();
    let o = o.with_contract("sanitize_csv", Some(&contract)).unwrap();
    assert_eq!((o.csv_delimiter.as_slice(), o.origins.csv_delimiter), (&b"|"[..], Origin::Contract));
    assert_eq!((o.csv_quote, o.origins.csv_quote), (Some(b'\''), Origin::Given), "the same value given stays given");
    assert!(o.parsers.integers && o.origins.parse_integers == Origin::Contract);
    assert_eq!(o.origins.rescue_column, Origin::Default, "a null constrains nothing");
    // A given value the contract contradicts is refused, naming both.
    let given = csv(&[("csv_quote", ParamValue::Str("\"".into()))]);
    let e = given.unwrap().with_contract("sanitize_csv", Some(&contract)).unwrap_err();
    assert!(e.message.starts_with("sanitize_csv: the registry was built with csv_quote"), "{e}");
    // A contract value that clashes with a given one across options fails
    // the checks a typed value fails, and says where it came from.
    let clash: serde_json::Map<String, serde_json::Value> = serde_json::from_str(r#"{"csv_delimiter": "'"}"#).unwrap();
    let quoted = csv(&[("csv_quote", ParamValue::Str("'".into()))]);
    let e = quoted.unwrap().with_contract("sanitize_csv", Some(&clash)).unwrap_err();
    assert!(e.message.ends_with("(a value taken from the registry's contract)"), "{e}");
}
