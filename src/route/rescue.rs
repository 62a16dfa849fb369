//! The rescue column (`rescue_column`, docs/errors.md "The rescue column"): the values of a record
//! that no typed column took, kept as a JSON object keyed by their source
//! path (`{"device.model": "15"}`) instead of being lost. The router
//! tracks where it is (a stack of source keys, reused) only when rescuing.

use crate::value::{write_compact_json, ValueRef};

/// Why a value was rescued (a reject's kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RescueKind {
    /// The registry has no such field (strict mode).
    UnknownField,
    /// No version takes the value's type (strict mode).
    TypeMismatch,
    /// The chosen type cannot hold the value (a number out of range).
    OutOfRange,
}

impl RescueKind {
    pub fn name(self) -> &'static str {
        match self {
            RescueKind::UnknownField => "unknown_field",
            RescueKind::TypeMismatch => "type_mismatch",
            RescueKind::OutOfRange => "out_of_range",
        }
    }
}

/// One rescued value: its path, its JSON text and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rescued {
    pub path: String,
    pub json: String,
    pub kind: RescueKind,
}

/// The rescue state of a router: where it is, and what the current record
/// gave up.
#[derive(Debug, Default)]
pub struct Rescuer {
    /// Source keys from the record's root; `[]` for list elements.
    path: Vec<String>,
    depth: usize,
    pub values: Vec<Rescued>,
}

impl Rescuer {
    /// Enters a field (or `[]`, a list's elements); the segment's buffer
    /// is reused, so a steady state allocates nothing.
    pub fn enter(&mut self, key: &str) {
        if self.path.len() == self.depth {
            self.path.push(String::new());
        }
        let segment = &mut self.path[self.depth];
        segment.clear();
        segment.push_str(key);
        self.depth += 1;
    }

    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Keeps `value`, found at the current path plus `key` (when given).
    pub fn keep(&mut self, key: Option<&str>, value: ValueRef<'_>, kind: RescueKind) {
        // Keys holding the path syntax are bracketed (value/path.rs): a
        // top-level "id.orig_h" and the field orig_h of `id` stay apart.
        let mut path = String::new();
        for segment in self.path[..self.depth].iter().map(String::as_str).chain(key) {
            if segment == "[]" {
                path.push_str("[]");
            } else {
                crate::value::path::push_key(&mut path, segment);
            }
        }
        let mut json = String::new();
        write_compact_json(value, &mut json);
        self.values.push(Rescued { path, json, kind });
    }

    /// The record's rescued values as a JSON object (a path given twice,
    /// by list elements, holds an array of its values), or `None`; the
    /// state is cleared for the next record.
    pub fn take_object(&mut self) -> Option<String> {
        self.depth = 0;
        if self.values.is_empty() {
            return None;
        }
        let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
        for r in &self.values {
            match groups.iter_mut().find(|(p, _)| *p == r.path) {
                Some((_, values)) => values.push(&r.json),
                None => groups.push((&r.path, vec![&r.json])),
            }
        }
        let members: Vec<String> = groups
            .iter()
            .map(|(path, values)| {
                let key = serde_json::Value::from(*path).to_string();
                match values.as_slice() {
                    [one] => format!("{key}:{one}"),
                    many => format!("{key}:[{}]", many.join(",")),
                }
            })
            .collect();
        Some(format!("{{{}}}", members.join(",")))
    }
}
