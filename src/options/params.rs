//! A named parameter's value and SQL type as DuckDB hands them over (free
//! of FFI types), and an option's default.

#[allow(unused_imports)]
use super::*;

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
    pub(crate) fn param(self) -> Option<ParamValue> {
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
