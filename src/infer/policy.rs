//! Per-field policies (docs/registry.md "Per-field policies"):
//! `pin_types` fixes a field's type, `freeze` stops additive growth under a
//! path. Both name fields by source-key paths (`payload.ts`); list levels
//! are transparent (`items[].sku` is `items.sku`), as a key path through
//! the elements of a list of structs is still one field.
//!
//! Inference walks a [`PolicyNode`] cursor beside the record (only when
//! policies exist, so a scan without them pays nothing), and the router
//! converts a pinned field's values (route/pin.rs).

use super::schema::{ScalarKind, StructNode, TypeNode};
use crate::scalar::ScalarParsers;

/// The compiled policies of a scan.
#[derive(Clone, Debug, Default)]
pub struct Policies {
    pub root: PolicyNode,
    /// Parsers for pinned conversions: every string rule on (integers,
    /// floats with the scan's separators, ISO temporals, the scan's tokens,
    /// formats and patterns), whatever the `parse_*` options say: a pin
    /// takes `"7"` into a DOUBLE by the string parsers' rules.
    pub parsers: ScalarParsers,
    /// Some path is frozen: the router may not trust that the schema took
    /// every value of an additive scan.
    pub any_frozen: bool,
}

/// One source key of a policy path, with the policies below it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PolicyNode {
    children: Vec<(String, PolicyNode)>,
    /// `pin_types`: the field's one type.
    pub pin: Option<ScalarKind>,
    /// `freeze`: no new children and no new versions at or under this field
    /// once it has a shape from the registry.
    pub frozen: bool,
}

impl PolicyNode {
    pub fn child(&self, key: &str) -> Option<&PolicyNode> {
        self.children.iter().find(|(k, _)| k == key).map(|(_, n)| n)
    }

    fn child_mut(&mut self, key: &str) -> &mut PolicyNode {
        match self.children.iter().position(|(k, _)| k == key) {
            Some(i) => &mut self.children[i].1,
            None => {
                self.children.push((key.to_string(), PolicyNode::default()));
                &mut self.children.last_mut().expect("just pushed").1
            }
        }
    }
}

/// A policy path's source keys (value/path.rs: `a.b`, `items[].sku`,
/// `['id.orig_h']` for a key with a dot), list markers dropped.
pub fn path_keys(path: &str) -> Result<Vec<String>, String> {
    crate::value::path::parse(path)
}

impl Policies {
    /// Compiles `pin_types` (path → type) and `freeze` (paths). A path both
    /// pinned and frozen, or pinned twice, is an error naming it.
    pub fn compile(
        pins: &[(String, ScalarKind)],
        freeze: &[String],
        parsers: ScalarParsers,
    ) -> Result<Option<Policies>, String> {
        if pins.is_empty() && freeze.is_empty() {
            return Ok(None);
        }
        let mut root = PolicyNode::default();
        for (path, kind) in pins {
            let keys = path_keys(path).map_err(|e| format!("\"pin_types\": {e}"))?;
            let node = keys.iter().fold(&mut root, |n, k| n.child_mut(k));
            if node.pin.is_some() {
                return Err(format!("the \"pin_types\" path '{path}' is pinned twice"));
            }
            node.pin = Some(*kind);
        }
        for path in freeze {
            let keys = path_keys(path).map_err(|e| format!("\"freeze\": {e}"))?;
            let node = keys.iter().fold(&mut root, |n, k| n.child_mut(k));
            if node.pin.is_some() {
                return Err(format!(
                    "the path '{path}' is both pinned (\"pin_types\") and frozen (\"freeze\"); a pin already fixes it"
                ));
            }
            node.frozen = true;
        }
        Ok(Some(Policies { root, parsers, any_frozen: !freeze.is_empty() }))
    }

    /// Marks the families of `schema` (a registry's) that a pin names, and
    /// checks that each has a version of the pinned type: a pin creates no
    /// version, so pinning a field the registry has only as other types is
    /// an error naming the path and the types it has.
    pub fn apply_pins(&self, schema: &mut StructNode) -> Result<(), String> {
        mark(schema, &self.root, "")
    }
}

fn mark(s: &mut StructNode, policy: &PolicyNode, prefix: &str) -> Result<(), String> {
    for (key, child) in &policy.children {
        let Some(&fi) = s.index.get(key.as_str()) else { continue };
        let path = crate::value::path::join(prefix, key);
        let family = &mut s.families[fi];
        if let Some(kind) = child.pin {
            let wanted = TypeNode::Scalar(kind);
            if !family.versions.iter().any(|v| v.ty == wanted) {
                let had = family.versions.iter().map(|v| super::schema_string(&v.ty)).collect::<Vec<_>>().join(", ");
                return Err(format!(
                    "the \"pin_types\" path '{path}' pins {}, but the registry has that field only as {had}; a pin creates no version: pin one of those types or start a new registry",
                    super::schema_string(&wanted)
                ));
            }
            family.pin = Some(kind);
        }
        for v in &mut family.versions {
            if let Some(inner) = struct_of(&mut v.ty) {
                mark(inner, child, &path)?;
            }
        }
    }
    Ok(())
}

/// Checks that every path of `paths` (given to the option `option`) names a
/// field of `root`, the scan's schema (the registry's and what the probe
/// saw): a path that names nothing is a typo or a field that never came,
/// and ignoring it would let the policy it asks for silently not apply.
pub fn check_paths_name_fields(root: &StructNode, option: &str, paths: &[String]) -> Result<(), String> {
    for path in paths {
        let keys = path_keys(path).map_err(|e| format!("\"{option}\": {e}"))?;
        if let Err(depth) = resolve(root, &keys) {
            let missing = crate::value::path::join(
                &keys[..depth].iter().fold(String::new(), |p, k| crate::value::path::join(&p, k)),
                &keys[depth],
            );
            return Err(format!(
                "the \"{option}\" path '{path}' names no field of the input or the registry ({missing} is not there; a key that holds a dot is written ['a.b'])"
            ));
        }
    }
    Ok(())
}

/// `Ok` when `keys` lead to a field of `s` through some version of each
/// step; else the index of the first key not found.
fn resolve(s: &StructNode, keys: &[String]) -> Result<(), usize> {
    let mut deepest = 0;
    let found = step(s, keys, 0, &mut deepest);
    if found {
        Ok(())
    } else {
        Err(deepest)
    }
}

fn step(s: &StructNode, keys: &[String], at: usize, deepest: &mut usize) -> bool {
    let Some(key) = keys.get(at) else { return true };
    let Some(family) = s.family(key) else {
        *deepest = (*deepest).max(at);
        return false;
    };
    if at + 1 == keys.len() {
        return true;
    }
    *deepest = (*deepest).max(at + 1);
    family.versions.iter().any(|v| inside(&v.ty, keys, at + 1, deepest))
}

fn inside(ty: &TypeNode, keys: &[String], at: usize, deepest: &mut usize) -> bool {
    match ty {
        TypeNode::Struct(s) => step(s, keys, at, deepest),
        TypeNode::List(e) => inside(e, keys, at, deepest),
        TypeNode::Map(entry) => super::string_keyed_value(entry).is_some_and(|v| inside(v, keys, at, deepest)),
        TypeNode::Scalar(_) => false,
    }
}

/// The struct a version holds, through any list levels.
fn struct_of(ty: &mut TypeNode) -> Option<&mut StructNode> {
    match ty {
        TypeNode::Struct(s) => Some(s),
        TypeNode::List(e) => struct_of(e),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_ignore_list_markers_and_refuse_empty_keys() {
        assert_eq!(path_keys("items[].sku").unwrap(), ["items", "sku"]);
        assert_eq!(path_keys("a").unwrap(), ["a"]);
        assert_eq!(path_keys("['id.orig_h']").unwrap(), ["id.orig_h"]);
        assert!(path_keys("a..b").is_err());
        assert!(path_keys("").is_err());
    }

    #[test]
    fn compile_refuses_double_pins_and_pinned_frozen_paths() {
        let p = ScalarParsers::default();
        assert!(Policies::compile(&[], &[], p.clone()).unwrap().is_none());
        let pins = vec![("a.b".to_string(), ScalarKind::Float), ("a[].b".to_string(), ScalarKind::Str)];
        assert!(Policies::compile(&pins, &[], p.clone()).unwrap_err().contains("pinned twice"));
        let pins = vec![("a".to_string(), ScalarKind::Float)];
        assert!(Policies::compile(&pins, &["a".to_string()], p.clone()).unwrap_err().contains("both pinned"));
        let policies = Policies::compile(&pins, &["d".to_string()], p).unwrap().unwrap();
        assert_eq!(policies.root.child("a").unwrap().pin, Some(ScalarKind::Float));
        assert!(policies.root.child("d").unwrap().frozen);
        assert!(policies.any_frozen);
    }
}
