//! The registry document (docs/registry.md): parsing and validating its
//! JSON, and writing it back in canonical form with its contract, partition
//! columns and derived `variants` index.

use serde_json::{json, Map, Value};

use super::finalize::{version_path, DriftEvent};
use crate::error::{Result, SanitizeError};
use crate::infer::{
    schema_string, Declared, Family, ScalarKind, StructNode, TimeUnit, TypeNode, Version, MAX_DECIMAL_PRECISION,
};
use crate::options::{FieldNamePolicy, HiveType};
use crate::source::PartitionColumn;

pub const REGISTRY_VERSION: u64 = 1;

/// A registry in memory: the schema tree plus its document metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct Registry {
    pub root: StructNode,
    pub schema_generation: u64,
    pub field_name_policy: FieldNamePolicy,
    /// The options that decide types and routes, by parameter name
    /// (`Options::contract_json`); `None` in registries written before the
    /// section existed, and in a new empty registry.
    pub contract: Option<Map<String, Value>>,
    /// Hive partition columns (docs/formats.md, "Hive partitions"): never
    /// versioned; a later scan types a key as recorded here.
    pub partitions: Vec<PartitionColumn>,
    /// The `schema_generation` of the registry the run started from (0:
    /// none); versions with a higher `since` were born after it.
    pub base_generation: u64,
}

impl Registry {
    pub fn empty(policy: FieldNamePolicy) -> Self {
        Registry {
            root: StructNode::default(),
            schema_generation: 0,
            field_name_policy: policy,
            contract: None,
            partitions: Vec::new(),
            base_generation: 0,
        }
    }

    /// The registry document. `root` must be finalized (names and output order set).
    pub fn to_json(&self) -> Value {
        let mut variants = Map::new();
        collect_variants(&self.root, "", &mut variants);
        let mut doc = json!({
            "registry_version": REGISTRY_VERSION,
            "schema_generation": self.schema_generation,
            "base_generation": self.base_generation,
            "field_name_policy": self.field_name_policy.name(),
            "canonical_schema": { "fields": fields_json(&self.root) },
            "variants": Value::Object(variants),
        });
        if let (Some(contract), Some(obj)) = (&self.contract, doc.as_object_mut()) {
            obj.insert("contract".into(), Value::Object(contract.clone()));
        }
        if let (false, Some(obj)) = (self.partitions.is_empty(), doc.as_object_mut()) {
            let columns =
                self.partitions.iter().map(|c| json!({"key": c.key, "name": c.name, "type": c.ty.name()})).collect();
            obj.insert("partition_columns".into(), Value::Array(columns));
        }
        doc
    }

    /// After a run that started from a registry of generation `start` and
    /// finalized its tree: records the start, and stamps every version the
    /// run created with the run's generation.
    pub fn stamp_run(&mut self, start: u64) {
        let generation = self.schema_generation;
        self.base_generation = start;
        self.root.for_each_family_mut(&mut |f| {
            for v in f.versions.iter_mut().filter(|v| !v.established) {
                v.since = generation;
            }
        });
    }

    pub fn json_text(&self) -> String {
        self.to_json().to_string()
    }
}

impl DriftEvent {
    pub fn to_json(&self, detected_at: &str) -> Value {
        json!({
            "detected_at": detected_at,
            "source_path": self.source_path,
            "source_key": self.source_key,
            "output_name": self.output_name,
            "drift_type": self.drift_type,
            "previous_schema": self.previous_schema,
            "new_schema": self.new_schema,
        })
    }
}

fn fields_json(s: &StructNode) -> Vec<Value> {
    s.outputs
        .iter()
        .map(|&(fi, vi)| {
            let f = &s.families[fi];
            let v = &f.versions[vi];
            json!({
                "name": v.output_name,
                "source_key": f.source_key,
                "version": v.number,
                "nullable": true,
                "type": type_json(&v.ty),
                "since_generation": v.since,
            })
        })
        .collect()
}

fn type_json(t: &TypeNode) -> Value {
    match t {
        TypeNode::Scalar(k) => match k {
            ScalarKind::Timestamp(unit) => json!({"kind": "timestamp", "unit": unit.name(), "timezone": "UTC"}),
            ScalarKind::Time => json!({"kind": "time", "unit": "us"}),
            ScalarKind::Declared(Declared::Decimal { precision, scale }) => {
                json!({"kind": "decimal", "precision": precision, "scale": scale})
            }
            _ => json!({"kind": scalar_kind_name(*k)}),
        },
        TypeNode::Struct(s) => json!({"kind": "struct", "fields": fields_json(s)}),
        TypeNode::List(e) => json!({"kind": "list", "element": type_json(e)}),
        // The entry's fields (`key`, `value`), as a struct lists them.
        TypeNode::Map(entry) => match entry.as_ref() {
            TypeNode::Struct(s) => json!({"kind": "map", "fields": fields_json(s)}),
            other => json!({"kind": "map", "fields": [], "entry": type_json(other)}),
        },
    }
}

fn scalar_kind_name(k: ScalarKind) -> &'static str {
    match k {
        ScalarKind::Bool => "boolean",
        ScalarKind::Int => "int64",
        ScalarKind::Float => "double",
        ScalarKind::Str => "string",
        ScalarKind::Json => "json",
        ScalarKind::Timestamp(_) => "timestamp",
        ScalarKind::Date => "date",
        ScalarKind::Time => "time",
        ScalarKind::Declared(d) => d.registry_name(),
    }
}

fn collect_variants(s: &StructNode, prefix: &str, out: &mut Map<String, Value>) {
    let mut seen = std::collections::HashSet::new();
    for &(fi, _) in &s.outputs {
        if !seen.insert(fi) {
            continue;
        }
        let f = &s.families[fi];
        let path = if prefix.is_empty() { f.name.clone() } else { format!("{prefix}.{}", f.name) };
        let newest = f.versions.iter().map(|v| v.number).max().unwrap_or(1);
        let mut versions: Vec<&Version> = f.versions.iter().collect();
        versions.sort_by_key(|v| v.number);
        let list: Vec<Value> = versions
            .iter()
            .map(|v| {
                json!({
                    "output_name": v.output_name,
                    "version": v.number,
                    "schema": schema_string(&v.ty),
                    "is_most_compatible_current_version": v.number == newest,
                })
            })
            .collect();
        out.insert(path.clone(), json!({"source_key": f.source_key, "versions": list}));
        for v in versions {
            let child_prefix = version_path(prefix, &v.output_name);
            collect_nested(&v.ty, &child_prefix, out);
        }
    }
}

fn collect_nested(t: &TypeNode, prefix: &str, out: &mut Map<String, Value>) {
    match t {
        TypeNode::Struct(s) => collect_variants(s, prefix, out),
        TypeNode::List(e) | TypeNode::Map(e) => collect_nested(e, &format!("{prefix}[]"), out),
        TypeNode::Scalar(_) => {}
    }
}

/// Parses and validates a registry document. Every error names the JSON
/// path of the problem.
pub fn parse_registry(text: &str) -> Result<Registry> {
    let bad = |m: String| SanitizeError::options(format!("invalid registry: {m}"));
    let doc: Value = serde_json::from_str(text).map_err(|e| bad(format!("not valid JSON ({e})")))?;
    let obj = doc.as_object().ok_or_else(|| bad("the document must be a JSON object".into()))?;
    match obj.get("registry_version").and_then(Value::as_u64) {
        Some(REGISTRY_VERSION) => {}
        Some(v) => {
            return Err(bad(format!(
                "registry_version {v} is not supported (this build reads version {REGISTRY_VERSION})"
            )))
        }
        None => return Err(bad("\"registry_version\" is missing or not an integer".into())),
    }
    let schema_generation = obj
        .get("schema_generation")
        .and_then(Value::as_u64)
        .ok_or_else(|| bad("\"schema_generation\" is missing or not a non-negative integer".into()))?;
    let policy_text = obj
        .get("field_name_policy")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("\"field_name_policy\" is missing or not a string".into()))?;
    let field_name_policy = FieldNamePolicy::parse(policy_text).ok_or_else(|| {
        bad(format!("\"field_name_policy\" must be 'lower_alpha', 'lower_snake' or 'preserve', not '{policy_text}'"))
    })?;
    let fields = obj
        .get("canonical_schema")
        .and_then(|c| c.get("fields"))
        .and_then(Value::as_array)
        .ok_or_else(|| bad("\"canonical_schema.fields\" is missing or not an array".into()))?;
    if let Some(v) = obj.get("variants") {
        if !v.is_object() {
            return Err(bad("\"variants\" must be an object".into()));
        }
    }
    let contract = match obj.get("contract") {
        None | Some(Value::Null) => None,
        Some(Value::Object(c)) => Some(c.clone()),
        Some(_) => return Err(bad("\"contract\" must be an object of option values".into())),
    };
    let partitions = match obj.get("partition_columns") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| parse_partition(item).ok_or_else(|| bad(format!(
                "\"partition_columns[{i}]\" must be an object with \"key\", \"name\" and \"type\" (VARCHAR, DATE, TIMESTAMP, BIGINT, INTEGER, DOUBLE or BOOLEAN)"
            ))))
            .collect::<Result<_>>()?,
        Some(_) => return Err(bad("\"partition_columns\" must be an array".into())),
    };
    let base_generation = match obj.get("base_generation") {
        None | Some(Value::Null) => 0,
        Some(v) => v.as_u64().ok_or_else(|| bad("\"base_generation\" must be a non-negative integer".into()))?,
    };
    let root = parse_fields(fields, "canonical_schema.fields").map_err(bad)?;
    Ok(Registry { root, schema_generation, field_name_policy, contract, partitions, base_generation })
}

fn parse_partition(item: &Value) -> Option<PartitionColumn> {
    let text = |k: &str| item.get(k).and_then(Value::as_str);
    Some(PartitionColumn {
        key: text("key")?.to_string(),
        name: text("name")?.to_string(),
        ty: HiveType::parse(text("type")?)?,
    })
}

fn parse_fields(fields: &[Value], path: &str) -> std::result::Result<StructNode, String> {
    let mut node = StructNode::default();
    let mut names = std::collections::HashSet::new();
    for (i, f) in fields.iter().enumerate() {
        let here = format!("{path}[{i}]");
        let name = f
            .get("name")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or(format!("{here}.name is missing or empty"))?;
        if !names.insert(name.to_lowercase()) {
            return Err(format!("{here}.name '{name}' appears twice at the same level (names are case-insensitive)"));
        }
        let source_key = f
            .get("source_key")
            .and_then(Value::as_str)
            .ok_or(format!("{here}.source_key is missing or not a string"))?;
        let number = f
            .get("version")
            .and_then(Value::as_u64)
            .filter(|n| *n >= 1 && *n <= u32::MAX as u64)
            .ok_or(format!("{here}.version is missing or not a positive integer"))? as u32;
        let ty = parse_type(f.get("type").ok_or(format!("{here}.type is missing"))?, &format!("{here}.type"))?;
        let fi = match node.index.get(source_key) {
            Some(&fi) => fi,
            None => node.add_family(Family {
                source_key: source_key.to_string(),
                name: String::new(),
                versions: Vec::new(),
                registry_position: Some(node.families.len()),
                pin: None,
            }),
        };
        let family = &mut node.families[fi];
        if family.versions.iter().any(|v| v.number == number) {
            return Err(format!("{here}: source_key '{source_key}' has version {number} twice"));
        }
        // Registries written before `since_generation` existed: from the start.
        let since = f.get("since_generation").and_then(Value::as_u64).unwrap_or(0);
        family.versions.push(Version { number, ty, established: true, output_name: name.to_string(), since });
    }
    // The family's base name is version 1's name; without a version 1 (it
    // can't happen in documents we write) fall back to the lowest version's.
    for f in &mut node.families {
        f.versions.sort_by_key(|v| v.number);
        f.name = f.versions[0].output_name.clone();
        if f.versions[0].number != 1 {
            // Strip `_vN_<semantic>` to recover the base name.
            if let Some(pos) = f.name.rfind(&format!("_v{}_", f.versions[0].number)) {
                f.name.truncate(pos);
            }
        }
    }
    Ok(node)
}

fn parse_type(t: &Value, path: &str) -> std::result::Result<TypeNode, String> {
    let kind = t.get("kind").and_then(Value::as_str).ok_or(format!("{path}.kind is missing or not a string"))?;
    Ok(match kind {
        "boolean" => TypeNode::Scalar(ScalarKind::Bool),
        "int64" => TypeNode::Scalar(ScalarKind::Int),
        "double" => TypeNode::Scalar(ScalarKind::Float),
        "string" => TypeNode::Scalar(ScalarKind::Str),
        "json" => TypeNode::Scalar(ScalarKind::Json),
        "timestamp" => {
            let unit = match t.get("unit") {
                None => TimeUnit::Micros,
                Some(u) => u
                    .as_str()
                    .and_then(TimeUnit::parse)
                    .filter(|u| *u != TimeUnit::Seconds)
                    .ok_or(format!("{path}.unit must be 'ms', 'us' or 'ns'"))?,
            };
            TypeNode::Scalar(ScalarKind::Timestamp(unit))
        }
        "date" => TypeNode::Scalar(ScalarKind::Date),
        "time" => TypeNode::Scalar(ScalarKind::Time),
        "struct" => {
            let fields = t.get("fields").and_then(Value::as_array).ok_or(format!("{path}.fields is missing or not an array"))?;
            let s = parse_fields(fields, &format!("{path}.fields"))?;
            if s.is_empty() {
                return Err(format!("{path}: a struct needs at least one field"));
            }
            TypeNode::Struct(s)
        }
        "decimal" => {
            let number = |name: &str| t.get(name).and_then(Value::as_u64);
            let d = match (number("precision"), number("scale")) {
                (Some(p), Some(s)) if p <= u32::MAX as u64 && s <= i32::MAX as u64 => Declared::decimal(p as u32, s as i32),
                _ => None,
            };
            TypeNode::Scalar(ScalarKind::Declared(d.ok_or(format!(
                "{path} needs integer \"precision\" (1 to {MAX_DECIMAL_PRECISION}) and \"scale\" (0 to precision)"
            ))?))
        }
        "map" => {
            let fields = t.get("fields").and_then(Value::as_array).ok_or(format!("{path}.fields is missing or not an array"))?;
            let s = parse_fields(fields, &format!("{path}.fields"))?;
            if s.is_empty() {
                return Err(format!("{path}: a map needs its key and value fields"));
            }
            TypeNode::Map(Box::new(TypeNode::Struct(s)))
        }
        "list" => TypeNode::List(Box::new(parse_type(t.get("element").ok_or(format!("{path}.element is missing"))?, &format!("{path}.element"))?)),
        other => match Declared::from_registry_name(other) {
            Some(d) => TypeNode::Scalar(ScalarKind::Declared(d)),
            None => return Err(format!(
                "{path}.kind '{other}' is not one of 'boolean', 'int64', 'double', 'string', 'json', 'timestamp', 'date', 'time', 'struct', 'list', 'map', 'decimal', 'int8', 'int16', 'int32', 'uint8', 'uint16', 'uint32', 'uint64', 'float32', 'binary', 'uuid', 'interval'"
            )),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(ty: &str) -> String {
        format!(
            r#"{{"registry_version":1,"schema_generation":1,"field_name_policy":"lower_alpha","canonical_schema":{{"fields":[{{"name":"x","source_key":"x","version":1,"type":{ty}}}]}}}}"#
        )
    }

    #[test]
    fn declared_kinds_round_trip() {
        for ty in [
            r#"{"kind":"decimal","precision":38,"scale":10}"#,
            r#"{"kind":"uint64"}"#,
            r#"{"kind":"interval"}"#,
            r#"{"kind":"map","fields":[{"name":"key","source_key":"key","version":1,"type":{"kind":"string"}},{"name":"value","source_key":"value","version":1,"type":{"kind":"uuid"}}]}"#,
        ] {
            let mut reg = parse_registry(&doc(ty)).unwrap();
            let opts = crate::registry::FinalizeOptions {
                policy: reg.field_name_policy,
                order: crate::options::ColumnOrder::SchemaContractFirst,
                bigquery_names: false,
            };
            crate::registry::finalize(&mut reg.root, &opts).unwrap();
            let written = reg.to_json();
            let expected: Value = serde_json::from_str(ty).unwrap();
            let mut got = written["canonical_schema"]["fields"][0]["type"].clone();
            // Written fields carry `nullable` and `since_generation`; compare
            // the kinds and parameters.
            if let Some(fields) = got.get_mut("fields").and_then(Value::as_array_mut) {
                for f in fields.iter_mut().filter_map(Value::as_object_mut) {
                    f.remove("nullable");
                    f.remove("since_generation");
                }
            }
            assert_eq!(got, expected);
        }
    }

    #[test]
    fn decimal_parameters_are_checked() {
        for ty in [
            r#"{"kind":"decimal","precision":39,"scale":0}"#,
            r#"{"kind":"decimal","precision":10,"scale":11}"#,
            r#"{"kind":"decimal","precision":10}"#,
        ] {
            let e = parse_registry(&doc(ty)).unwrap_err();
            assert!(e.message.contains("canonical_schema.fields[0].type needs integer \"precision\""), "{ty}: {e}");
        }
    }
}
