//! The schema tree (docs/engine.md "The schema tree"): a struct holds one
//! family per source key, a family its versions, a version one type (a
//! scalar kind, a struct, a list or a map).

use super::hash::KeyMap;

/// The scalar logical types (docs/engine.md, "The schema tree").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarKind {
    Bool,
    Int,
    Float,
    Str,
    /// A VARCHAR that takes any value as text: strings as they are, anything
    /// else as compact JSON. Only the elements of arrays whose elements
    /// disagree irreconcilably get it (the "fallback string conversion" of docs/engine.md).
    Json,
    /// An instant, normalised to UTC, in this unit.
    Timestamp(TimeUnit),
    Date,
    Time,
    /// A type a typed source declared (Parquet INTEGER, DECIMAL, BLOB, ...).
    Declared(crate::value::Declared),
}

pub use crate::value::TimeUnit;

#[derive(Clone, Debug, PartialEq)]
pub enum TypeNode {
    Scalar(ScalarKind),
    /// A list has one element type; irreconcilable arrays get a new version
    /// of the whole field instead.
    List(Box<TypeNode>),
    Struct(StructNode),
    /// A declared map (Parquet MAP): a list of entries, the entry being a
    /// struct whose families are `key` and `value`. It only meets other
    /// maps, and only ones whose entries it takes unchanged.
    Map(Box<TypeNode>),
}

/// The children of a struct (and the top-level record): one family per
/// source key, in discovery order until column ordering is applied.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StructNode {
    pub families: Vec<Family>,
    /// Source key → index in `families`.
    pub index: KeyMap<usize>,
    /// Output columns in column order: (family index, version index).
    pub outputs: Vec<(usize, usize)>,
}

/// All versions that one source key has taken at one place in the tree.
#[derive(Clone, Debug, PartialEq)]
pub struct Family {
    /// The key as the source spells it (the "dirty" key).
    pub source_key: String,
    /// The sanitized base name; version 1's output name.
    pub name: String,
    pub versions: Vec<Version>,
    /// Position in the starting registry, for `schema_contract_first`.
    pub registry_position: Option<usize>,
    /// `pin_types`: every value goes to the version of this type, converted
    /// (infer/policy.rs); the field gets no other version.
    pub pin: Option<ScalarKind>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Version {
    /// N of `_vN_`; 1 is the unsuffixed original.
    pub number: u32,
    pub ty: TypeNode,
    /// Came from the starting registry: its scalar types are a contract and
    /// may not be widened or replaced, only evolved additively.
    pub established: bool,
    pub output_name: String,
    /// The `schema_generation` of the run that created it (0: unknown, a
    /// registry written before it was recorded). The merge of registries
    /// (registry/merge.rs) tells a shared start from a shard's own growth by it.
    pub since: u64,
}

impl TypeNode {
    /// The `key` and `value` types of a map entry, when the entry has
    /// exactly those two columns in that order (else DuckDB's MAP cannot
    /// hold it and it stays a list of structs).
    pub fn map_key_value(entry: &TypeNode) -> Option<(&TypeNode, &TypeNode)> {
        let TypeNode::Struct(s) = entry else { return None };
        match s.outputs.as_slice() {
            [(kf, kv), (vf, vv)] if s.families[*kf].source_key == "key" && s.families[*vf].source_key == "value" => {
                Some((&s.families[*kf].versions[*kv].ty, &s.families[*vf].versions[*vv].ty))
            }
            _ => None,
        }
    }
}

impl StructNode {
    /// The output columns in column order: each version that has one.
    pub fn output_versions(&self) -> impl Iterator<Item = &Version> + '_ {
        self.outputs.iter().map(|&(fi, vi)| &self.families[fi].versions[vi])
    }

    pub fn family(&self, key: &str) -> Option<&Family> {
        self.index.get(key).map(|&i| &self.families[i])
    }

    pub fn add_family(&mut self, family: Family) -> usize {
        let i = self.families.len();
        self.index.insert(family.source_key.clone(), i);
        self.families.push(family);
        i
    }

    pub fn is_empty(&self) -> bool {
        self.families.is_empty()
    }

    /// Calls `f` on every family of the tree, a family before the families
    /// inside its versions (struct fields, through lists and maps).
    pub fn for_each_family_mut(&mut self, f: &mut dyn FnMut(&mut Family)) {
        for family in &mut self.families {
            f(family);
            for v in &mut family.versions {
                v.ty.for_each_family_mut(f);
            }
        }
    }
}

impl TypeNode {
    /// [`StructNode::for_each_family_mut`] over the structs inside a type.
    pub fn for_each_family_mut(&mut self, f: &mut dyn FnMut(&mut Family)) {
        match self {
            TypeNode::Struct(s) => s.for_each_family_mut(f),
            TypeNode::List(e) | TypeNode::Map(e) => e.for_each_family_mut(f),
            TypeNode::Scalar(_) => {}
        }
    }
}

impl TypeNode {
    /// The semantic suffix of docs/engine.md's table (`integer`, `struct_array`, ...).
    pub fn semantic(&self) -> String {
        match self {
            TypeNode::Scalar(k) => k.semantic().to_string(),
            TypeNode::Struct(_) => "struct".to_string(),
            TypeNode::List(e) => format!("{}_array", e.semantic()),
            TypeNode::Map(_) => "map".to_string(),
        }
    }
}

impl ScalarKind {
    pub fn semantic(self) -> &'static str {
        match self {
            ScalarKind::Bool => "boolean",
            ScalarKind::Int => "integer",
            ScalarKind::Float => "float",
            ScalarKind::Str | ScalarKind::Json => "string",
            ScalarKind::Timestamp(_) => "timestamp",
            ScalarKind::Date => "date",
            ScalarKind::Time => "time",
            ScalarKind::Declared(d) => d.semantic(),
        }
    }
}

/// Arrow-style type text, as drift events show them (docs/registry.md) (`string`, `double`,
/// `list<item: int64>`, `struct<a: int64, b: string>`).
pub fn schema_string(t: &TypeNode) -> String {
    match t {
        TypeNode::Scalar(k) => match k {
            ScalarKind::Bool => "bool".into(),
            ScalarKind::Int => "int64".into(),
            ScalarKind::Float => "double".into(),
            ScalarKind::Str | ScalarKind::Json => "string".into(),
            // Arrow spelling; only microseconds carry the UTC zone in DuckDB's types.
            ScalarKind::Timestamp(TimeUnit::Micros) => "timestamp[us, tz=UTC]".into(),
            ScalarKind::Timestamp(unit) => format!("timestamp[{}]", unit.name()),
            ScalarKind::Date => "date32[day]".into(),
            ScalarKind::Time => "time64[us]".into(),
            ScalarKind::Declared(d) => d.arrow_name(),
        },
        TypeNode::List(e) => format!("list<item: {}>", schema_string(e)),
        TypeNode::Map(entry) => match TypeNode::map_key_value(entry) {
            Some((k, v)) => format!("map<{}, {}>", schema_string(k), schema_string(v)),
            None => format!("list<item: {}>", schema_string(entry)),
        },
        TypeNode::Struct(s) => {
            let parts: Vec<String> = s
                .outputs
                .iter()
                .map(|&(fi, vi)| {
                    let v = &s.families[fi].versions[vi];
                    format!("{}: {}", v.output_name, schema_string(&v.ty))
                })
                .collect();
            format!("struct<{}>", parts.join(", "))
        }
    }
}
