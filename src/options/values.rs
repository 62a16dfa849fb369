//! Parsing and validating one parameter's value: each function names the
//! parameter in its error, and the caller adds the function's name.

#[allow(unused_imports)]
use super::*;

/// A contract value from a registry document as the parameter it stands for.
pub(crate) fn json_param(v: &serde_json::Value) -> Option<ParamValue> {
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

pub(crate) fn parse_input_format(value: Option<&ParamValue>) -> std::result::Result<InputFormat, String> {
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

pub(crate) type Parsed<T> = std::result::Result<T, String>;

/// A scan's named parameters arrive cast to their registered types
/// (src/ffi/table.rs); the row functions' (and the registry's contract)
/// still give any type, so these take what DuckDB would cast implicitly
/// (`'true'`, `0`/`1` for a BOOLEAN, `'12'` for an integer) and name the
/// parameter for anything else.
pub(crate) fn boolean(name: &str, value: &ParamValue) -> Parsed<bool> {
    match value {
        ParamValue::Bool(b) => Ok(*b),
        ParamValue::Str(s) if s.eq_ignore_ascii_case("true") => Ok(true),
        ParamValue::Str(s) if s.eq_ignore_ascii_case("false") => Ok(false),
        ParamValue::Int(n @ (0 | 1)) => Ok(*n == 1),
        other => Err(format!("the \"{name}\" parameter must be a BOOLEAN, not {}", other.describe())),
    }
}

/// One ASCII punctuation character.
pub(crate) fn separator(name: &str, value: &ParamValue) -> Parsed<u8> {
    let s = string(name, value)?;
    match s.as_bytes() {
        [c] if c.is_ascii_punctuation() => Ok(*c),
        _ => Err(format!(
            "the \"{name}\" parameter must be one ASCII punctuation character such as '.', ',' or '_', not '{s}'"
        )),
    }
}

pub(crate) fn strings(name: &str, value: &ParamValue) -> Parsed<Vec<String>> {
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
pub(crate) fn tokens(name: &str, value: &ParamValue) -> Parsed<Vec<String>> {
    let list = strings(name, value)?;
    if list.iter().any(|t| t.is_empty()) {
        return Err(format!("the \"{name}\" list must not contain an empty token"));
    }
    Ok(list.into_iter().map(|t| t.to_lowercase()).collect())
}

pub(crate) fn string(name: &str, value: &ParamValue) -> Parsed<String> {
    match value {
        ParamValue::Str(s) => Ok(s.clone()),
        other => Err(format!("the \"{name}\" parameter must be a VARCHAR, not {}", other.describe())),
    }
}

pub(crate) fn non_empty(name: &str, value: &ParamValue) -> Parsed<String> {
    let s = string(name, value)?;
    if s.is_empty() {
        return Err(format!("the \"{name}\" parameter must not be empty"));
    }
    Ok(s)
}

/// A value of a [`named_enum!`], case-insensitive; the error lists the valid ones.
pub(crate) fn choice<T: Named>(name: &str, value: &ParamValue) -> Parsed<T> {
    let s = string(name, value)?;
    let names = T::names();
    names.iter().find(|(n, _)| n.eq_ignore_ascii_case(&s)).map(|(_, v)| *v).ok_or_else(|| {
        let valid = names.iter().map(|(n, _)| format!("'{n}'")).collect::<Vec<_>>().join(", ");
        format!("the \"{name}\" parameter must be one of {valid}, not '{s}'")
    })
}

pub(crate) fn integer(name: &str, value: &ParamValue, min: i64, max: i64) -> Parsed<i64> {
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
pub(crate) fn map_threshold(name: &str, value: &ParamValue) -> Parsed<Option<usize>> {
    match integer(name, value, -1, i64::from(u32::MAX))? {
        -1 => Ok(None),
        n => Ok(Some(n as usize)),
    }
}

/// `registry`: the document as JSON text (a VARCHAR or JSON value) or as a
/// STRUCT/MAP value (a Python dict), turned into its JSON text.
pub(crate) fn registry_text(name: &str, value: &ParamValue) -> Parsed<String> {
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
pub(crate) fn hive_types(name: &str, value: &ParamValue) -> Parsed<Vec<(String, HiveType)>> {
    type_map(name, value, "a STRUCT or MAP of partition key to type name such as {'date': 'DATE'}", "key ", "'DATE'")
}

/// A STRUCT or MAP of key to a type name of `T` (any case), in order.
/// `shape` says what the parameter takes, `key_word` names a key in
/// messages (`key 'date'`), `example` is a type name.
pub(crate) fn type_map<T: Named>(
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
pub(crate) fn csv_delimiter(name: &str, value: &ParamValue) -> Parsed<Vec<u8>> {
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
pub(crate) fn csv_byte(name: &str, value: &ParamValue) -> Parsed<Option<u8>> {
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

pub(crate) fn byte_json(b: Option<u8>) -> Json {
    Json::from(b.map(|b| (b as char).to_string()).unwrap_or_default())
}

/// `csv_has_header`: a BOOLEAN, or `'auto'` (sniffed); `'true'`/`'false'` as text too.
pub(crate) fn csv_header(name: &str, value: &ParamValue) -> Parsed<Option<bool>> {
    match value {
        ParamValue::Bool(b) => Ok(Some(*b)),
        ParamValue::Str(s) if s.eq_ignore_ascii_case("auto") => Ok(None),
        ParamValue::Str(s) if s.eq_ignore_ascii_case("true") => Ok(Some(true)),
        ParamValue::Str(s) if s.eq_ignore_ascii_case("false") => Ok(Some(false)),
        other => Err(format!("the \"{name}\" parameter must be true, false or 'auto', not {}", other.describe())),
    }
}

pub(crate) fn text_encoding(name: &str, value: &ParamValue) -> Parsed<TextEncoding> {
    let e = string(name, value)?;
    TextEncoding::parse(&e).ok_or_else(|| {
        format!(
            "the \"{name}\" parameter must name 'utf-8', 'utf-16' (or 'utf-16-le' / 'utf-16-be'), 'latin-1' or 'windows-1252' (Python codec names and aliases are accepted), not '{e}'"
        )
    })
}

/// An element name, or a slash path of names from the root's children.
pub(crate) fn xml_row_tag(name: &str, value: &ParamValue) -> Parsed<String> {
    let t = string(name, value)?;
    let bad_name = |c: &str| c.is_empty() || c.contains(|c: char| c.is_whitespace() || c == '<' || c == '>');
    if t.split('/').any(bad_name) {
        return Err(format!(
            "the \"{name}\" parameter must be an XML element name or a slash path of names below the root such as 'channel/item', not '{t}'"
        ));
    }
    Ok(t)
}
