//! The reconciliation rules, in one place.
//!
//! A value meets a family of versions. Each version either accepts it as it
//! is ([`Growth::None`]), accepts it after evolving ([`Growth::Allowed`]:
//! new struct children, or, for versions born in this scan, widening), or
//! rejects it; a rejected value opens a new version. Preference among the
//! versions that accept:
//!
//! | value      | preferred (best first)                                      |
//! |------------|-------------------------------------------------------------|
//! | integer    | integer version, float version, wrapping (list / struct)    |
//! | float      | float version, wrapping                                     |
//! | string     | string version, wrapping, JSON-text fallback                |
//! | boolean    | boolean version, wrapping                                   |
//! | array      | list versions (only they take arrays)                       |
//! | object     | struct versions and list-of-struct versions alike           |
//! | declared   | the same type, a type holding it without loss ([`holds`]),  |
//! |            | wrapping; maps take only maps whose entries fit unchanged   |
//!
//! Ties go to the highest version number. A version that needs no growth is
//! always preferred over one that would have to evolve, so an exact
//! historical variant keeps receiving its data during reprocessing, and
//! otherwise the newest compatible container evolves.
//!
//! Versions born in this scan (not `established`) may also be transformed
//! (integer → float, or any two numeric types to the narrowest type holding
//! both ([`join`]), scalar → struct under `scalar_object_key`, value → list
//! of that value), which makes inference within one scan a join over the
//! lattice rather than a pile of versions.

use super::classify::{classify, value_list_depth, Classified, Level, Rules, ValueClass};
use super::declared::{holds, join};
use super::policy::PolicyNode;
use super::schema::{Family, ScalarKind, StructNode, TypeNode, Version};
use super::width;
use crate::value::ValueRef;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Growth {
    /// Materialization and strict mode: the schema may not change.
    None,
    /// Additive inference: versions may evolve and new ones may open.
    Allowed,
}

/// How well a version fits a value; higher is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Fit {
    /// Only by transforming a version born in this scan.
    Transform = 0,
    /// Only as text (the JSON fallback column).
    Fallback = 1,
    /// Wrapped: a singleton into a list, a scalar into a struct.
    Wrap = 2,
    /// Integer into a float version.
    Widen = 3,
    Exact = 4,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InferStats {
    pub max_depth_seen: usize,
    pub values_flattened: u64,
    pub duplicate_keys: u64,
    /// The schema's width as the probe counts it (infer/width.rs
    /// `running_width`), kept up to date as versions are made; once past
    /// `Rules::columns`, absorbing stops where it is.
    pub columns: usize,
}
pub struct Ctx<'a> {
    pub rules: Rules<'a>,
    pub stats: InferStats,
    /// Where the record being absorbed is in the policy tree (`pin_types`,
    /// `freeze`); `None` without policies, or off every policy path.
    policy: Option<&'a PolicyNode>,
    /// Inside a value that its version takes as it is (no growth): a
    /// parsed string below grows nothing, so that a version's nested
    /// families do not open a typed version for a string the version's
    /// choice already took as text (other values grow as always).
    as_is: bool,
    /// Versions made now count in `stats.columns`: false inside a struct
    /// born in this scan while maps may still be made of it (infer/width.rs).
    counting: bool,
}

impl Ctx<'_> {
    /// Past `max_columns`: stop absorbing (the probe fails the scan).
    fn over(&self) -> bool {
        self.stats.columns > self.rules.columns.max
    }

    fn count(&mut self, versions: usize) {
        if self.counting {
            self.stats.columns += versions;
        }
    }

    /// Takes off what was counted for versions just dropped.
    fn uncount(&mut self, versions: usize) {
        if self.counting {
            self.stats.columns = self.stats.columns.saturating_sub(versions);
        }
    }

    /// Entering the fields of a struct version: whether they count (see
    /// infer/width.rs). Returns the state to restore on leaving.
    fn enter_struct(&mut self, established: bool) -> bool {
        let outer = self.counting;
        self.counting &= established || !self.rules.columns.maps_later;
        outer
    }

    /// [`width::inside_width`] as this context counts it.
    fn counted_inside(&self, ty: &TypeNode) -> usize {
        if self.counting {
            width::inside_width(ty, false, !self.rules.columns.maps_later)
        } else {
            0
        }
    }
}

/// Absorbs one record (an object) into the root struct. Returns false when
/// the record is not an object and so cannot be a row.
pub fn absorb_record(root: &mut StructNode, record: ValueRef<'_>, rules: &Rules<'_>, stats: &mut InferStats) -> bool {
    if !matches!(record.node(), crate::value::Node::Object { .. }) {
        return false;
    }
    // The record's fields are the table's columns: they always count.
    let mut ctx =
        Ctx { rules: *rules, stats: *stats, policy: rules.policies.map(|p| &p.root), as_is: false, counting: true };
    absorb_object_into_struct(root, record, Level::default(), &mut ctx);
    *stats = ctx.stats;
    true
}

fn absorb_object_into_struct(node: &mut StructNode, object: ValueRef<'_>, level: Level, ctx: &mut Ctx<'_>) {
    let duplicates = has_duplicate_keys(object);
    for (i, (key, child)) in object.entries().enumerate() {
        if ctx.over() {
            return;
        }
        // With duplicate keys the last one wins (as materialization does),
        // so an overwritten value is no evidence either.
        if duplicates && object.entries().skip(i + 1).any(|(k, _)| k == key) {
            ctx.stats.duplicate_keys += 1;
            continue;
        }
        let c = classify(child, level, &ctx.rules);
        note_depth(&c, ctx);
        if c.class == ValueClass::Nothing {
            continue;
        }
        let fi = match node.index.get(key) {
            Some(&i) => i,
            None => node.add_family(new_family(key)),
        };
        let Some(policy) = ctx.policy else {
            absorb_into_family(&mut node.families[fi], &c, ctx);
            continue;
        };
        let child = policy.child(key);
        let family = &mut node.families[fi];
        if let Some(kind) = child.and_then(|p| p.pin) {
            if pin_family(family, kind) {
                ctx.count(1);
            }
            continue;
        }
        if child.is_some_and(|p| p.frozen) && family.versions.iter().any(|v| v.established) {
            // Frozen with a shape from the registry: nothing grows here;
            // what does not fit is rescued or nulled when routed.
            continue;
        }
        ctx.policy = child;
        absorb_into_family(family, &c, ctx);
        ctx.policy = Some(policy);
    }
}

/// A pinned field: one version of the pinned type, opened by its first
/// value; values never change it (the router converts them). Returns
/// whether it opened the version.
fn pin_family(family: &mut Family, kind: ScalarKind) -> bool {
    family.pin = Some(kind);
    let ty = TypeNode::Scalar(kind);
    if family.versions.iter().any(|v| v.ty == ty) {
        return false;
    }
    let number = family.versions.iter().map(|v| v.number).max().unwrap_or(0) + 1;
    family.versions.push(Version { number, ty, established: false, output_name: String::new(), since: 0 });
    true
}

/// Whether an object repeats a key. Quadratic on narrow objects, and on
/// objects up to 128 keys a sort of fast key hashes with an exact check of
/// equal hashes only (no allocation, no SipHash: this runs once per record
/// of a wide CSV); hashed into a set beyond that.
pub fn has_duplicate_keys(object: ValueRef<'_>) -> bool {
    let n = match object.node() {
        crate::value::Node::Object { len, .. } => len as usize,
        _ => 0,
    };
    if n < 2 {
        return false;
    }
    if n <= 16 {
        let mut keys = [""; 16];
        for (slot, (k, _)) in keys.iter_mut().zip(object.entries()) {
            *slot = k;
        }
        (1..n).any(|i| keys[..i].contains(&keys[i]))
    } else if n <= 128 {
        use std::hash::BuildHasher;
        let hasher = std::hash::BuildHasherDefault::<super::hash::KeyHasher>::default();
        let mut hashes = [(0u64, 0usize); 128];
        for (i, (slot, (k, _))) in hashes.iter_mut().zip(object.entries()).enumerate() {
            *slot = (hasher.hash_one(k), i);
        }
        let hashes = &mut hashes[..n];
        hashes.sort_unstable();
        let key_at = |i: usize| object.entries().nth(i).map(|(k, _)| k);
        // Every pair inside a run of equal hashes (a run longer than two
        // needs a 64-bit collision, so this is all but never more than one pair).
        hashes
            .chunk_by(|a, b| a.0 == b.0)
            .any(|run| (1..run.len()).any(|j| (0..j).any(|i| key_at(run[i].1) == key_at(run[j].1))))
    } else {
        let mut seen = std::collections::HashSet::with_capacity(n);
        object.entries().any(|(k, _)| !seen.insert(k))
    }
}

fn new_family(key: &str) -> Family {
    Family {
        source_key: key.to_string(),
        name: String::new(),
        versions: Vec::new(),
        registry_position: None,
        pin: None,
    }
}

fn note_depth(c: &Classified<'_>, ctx: &mut Ctx<'_>) {
    let depth = c.level.containers + usize::from(matches!(c.class, ValueClass::List | ValueClass::Object));
    ctx.stats.max_depth_seen = ctx.stats.max_depth_seen.max(depth);
    if c.class == ValueClass::Flattened {
        ctx.stats.values_flattened += 1;
    }
}

fn absorb_into_family(family: &mut Family, c: &Classified<'_>, ctx: &mut Ctx<'_>) {
    // Only a parsed string is held to its enclosing choice: any other
    // value below an as-is choice grows as always (`5` beside a JSON-text
    // version still opens its BIGINT version).
    let held = ctx.as_is && c.is_parsed_string();
    let growth = if held { Growth::None } else { Growth::Allowed };
    match choose(family, c, growth, &ctx.rules) {
        Some((i, as_is)) => {
            let v = &mut family.versions[i];
            let outer = ctx.as_is;
            ctx.as_is |= as_is;
            absorb(&mut v.ty, v.established, c, ctx);
            ctx.as_is = outer;
        }
        // Taken as it is all the way down: nothing to open.
        None if held => {}
        None => {
            // Counted before its type is built, so that a struct growing
            // past the limit stops at the first field past it.
            ctx.count(1);
            match type_of(c, ctx) {
                Some(ty) => {
                    let number = family.versions.iter().map(|v| v.number).max().unwrap_or(0) + 1;
                    family.versions.push(Version {
                        number,
                        ty,
                        established: false,
                        output_name: String::new(),
                        since: 0,
                    });
                }
                None => ctx.uncount(1),
            }
        }
    }
}

/// Picks the version of `family` that should receive the value, or `None`
/// when no version can take it (inference then opens a new version; the
/// scan counts a violation).
pub fn choose_version(family: &Family, c: &Classified<'_>, growth: Growth, rules: &Rules<'_>) -> Option<usize> {
    choose(family, c, growth, rules).map(|(i, _)| i)
}

/// [`choose_version`], and whether the version takes the value as it is
/// (found without growth; for a one-version family under growth, not
/// known: false).
fn choose(family: &Family, c: &Classified<'_>, growth: Growth, rules: &Rules<'_>) -> Option<(usize, bool)> {
    if growth == Growth::Allowed && family.versions.len() == 1 {
        // One version: whatever fits without growth also fits with it, so
        // the (recursive, costly) no-growth pass cannot change the answer.
        let v = &family.versions[0];
        return fits(&v.ty, v.established, c, growth, rules).filter(|f| *f != Fit::Fallback).map(|_| (0, false));
    }
    let best = |g: Growth| {
        let mut best: Option<(Fit, u32, usize)> = None;
        for (i, v) in family.versions.iter().enumerate() {
            let Some(fit) = fits(&v.ty, v.established, c, g, rules) else { continue };
            // While the schema may grow, a text fallback is no fit: a parsed
            // "7" beside a string version opens an integer version.
            if growth == Growth::Allowed && fit == Fit::Fallback {
                continue;
            }
            let candidate = (fit, v.number, i);
            if best.is_none_or(|b| (candidate.0, candidate.1) > (b.0, b.1)) {
                best = Some(candidate);
            }
        }
        best.map(|b| b.2)
    };
    match best(Growth::None) {
        Some(i) => Some((i, true)),
        None if growth == Growth::Allowed => best(Growth::Allowed).map(|i| (i, false)),
        None => None,
    }
}

/// Whether `ty` takes the value as it is (no growth): strict mode's check of
/// one list element against its element type.
pub fn type_takes(ty: &TypeNode, c: &Classified<'_>, rules: &Rules<'_>) -> bool {
    fits(ty, true, c, Growth::None, rules).is_some()
}

/// True when every element of an array fits `ty`.
fn elements_fit(ty: &TypeNode, established: bool, c: &Classified<'_>, growth: Growth, rules: &Rules<'_>) -> bool {
    c.value.elements().all(|e| {
        let ec = classify(e, c.level.inside_list(), rules);
        fits(ty, established, &ec, growth, rules).is_some()
    })
}

/// How `ty` takes the value, if it does. Objects prefer no kind of container
/// over another (docs/engine.md: a singleton object routes to a newer list-of-struct
/// version), so both count Exact.
fn fits(ty: &TypeNode, established: bool, c: &Classified<'_>, growth: Growth, rules: &Rules<'_>) -> Option<Fit> {
    let may_transform = growth == Growth::Allowed && !established;
    let key = rules.scalar_object_key;
    match (ty, c.class) {
        (_, ValueClass::Nothing) => Some(Fit::Exact),
        (TypeNode::Scalar(ScalarKind::Json), cl) => {
            Some(if cl.is_string_like() || c.is_parsed_string() { Fit::Exact } else { Fit::Fallback })
        }
        (TypeNode::Scalar(k), _) => {
            let numeric = c.class.numeric_kind();
            let direct = match (k, c.class) {
                (ScalarKind::Bool, ValueClass::Bool)
                | (ScalarKind::Timestamp(_), ValueClass::Timestamp)
                | (ScalarKind::Date, ValueClass::Date)
                | (ScalarKind::Time, ValueClass::Time) => Some(Fit::Exact),
                (ScalarKind::Declared(d), ValueClass::Declared(v)) if *d == v => Some(Fit::Exact),
                (ScalarKind::Str, cl) if cl.is_string_like() => Some(Fit::Exact),
                // Numbers: the same type, or one this version holds without
                // loss (an integer into a DOUBLE, INTEGER into BIGINT, ...).
                (_, _) if numeric == Some(*k) => Some(Fit::Exact),
                (_, _) if numeric.is_some_and(|n| holds(*k, n)) => Some(Fit::Widen),
                // A parsed string is still a string.
                (ScalarKind::Str, _) if c.is_parsed_string() => Some(Fit::Fallback),
                _ => None,
            };
            if direct.is_some() || !may_transform {
                return direct;
            }
            match (k, c.class) {
                // Numbers born in this scan join (integer and float → DOUBLE,
                // INTEGER and BIGINT → BIGINT, decimals widen).
                (_, _) if numeric.is_some_and(|n| join(*k, n).is_some()) => Some(Fit::Transform),
                // A scalar can become a struct holding it under scalar_object_key.
                (_, ValueClass::Object) => Some(Fit::Transform),
                // ... or a list whose elements take it and the array's elements.
                (_, ValueClass::List) => elements_fit(ty, false, c, growth, rules).then_some(Fit::Transform),
                _ => None,
            }
        }
        (TypeNode::Struct(s), ValueClass::Object) => {
            (growth == Growth::Allowed || struct_takes_object(s, c, rules)).then_some(Fit::Exact)
        }
        (TypeNode::Struct(_), ValueClass::List) => {
            // Only a struct born in this scan may turn into a list of itself.
            (may_transform && elements_fit(ty, false, c, growth, rules)).then_some(Fit::Transform)
        }
        // A map meets only maps whose entries its entry type takes as is.
        (TypeNode::Map(entry), ValueClass::Map) => {
            elements_fit(entry, established, c, Growth::None, rules).then_some(Fit::Exact)
        }
        // An object keyed by data meets a map of VARCHAR keys (infer/maps.rs)
        // when every value fits the map's value type.
        (TypeNode::Map(entry), ValueClass::Object) => {
            let value = string_keyed_value(entry)?;
            let inner = c.level.inside_struct();
            c.value
                .entries()
                .all(|(_, v)| fits(value, established, &classify(v, inner, rules), growth, rules).is_some())
                .then_some(Fit::Exact)
        }
        // A scalar or a list meets a VARCHAR-keyed map as one entry keyed
        // scalar_object_key, as a struct takes it under that key: a struct
        // that took a bare scalar may have become this map (infer/maps.rs),
        // and the scan must then put the value where the probe counted it.
        (TypeNode::Map(entry), _) if c.class != ValueClass::Map => {
            let value = string_keyed_value(entry)?;
            fits(value, established, c, growth, rules).map(|f| match f {
                Fit::Transform | Fit::Fallback => f,
                _ => Fit::Wrap,
            })
        }
        (TypeNode::Map(_), _) | (TypeNode::Struct(_), ValueClass::Map) => None,
        (TypeNode::Struct(s), _) => {
            // A scalar wraps into the struct under scalar_object_key.
            match s.family(key) {
                Some(f) if growth == Growth::Allowed || choose_version(f, c, growth, rules).is_some() => {
                    Some(Fit::Wrap)
                }
                None if growth == Growth::Allowed => Some(Fit::Wrap),
                _ => None,
            }
        }
        (TypeNode::List(elem), ValueClass::List) if wraps_whole(elem, c, rules) => {
            // Shallower than the type: the whole value is one element,
            // wrapped once, never each of its elements (that would change
            // its nesting: [1.5, 2.5] into DOUBLE[][] is [[1.5, 2.5]]).
            fits(elem, established, c, growth, rules).map(|f| match f {
                Fit::Transform | Fit::Fallback => f,
                _ => Fit::Wrap,
            })
        }
        (TypeNode::List(elem), ValueClass::List) => {
            elements_fit(elem, established, c, growth, rules).then_some(Fit::Exact)
        }
        (TypeNode::List(elem), _) => {
            // A singleton wraps into the list when the element type takes it.
            fits(elem, established, c, growth, rules).map(|f| match (c.class, f) {
                (ValueClass::Object, Fit::Exact) => Fit::Exact,
                (_, Fit::Transform) => Fit::Transform,
                (_, Fit::Fallback) => Fit::Fallback,
                _ => Fit::Wrap,
            })
        }
    }
}

/// How many list levels a type has at its top.
fn type_list_depth(ty: &TypeNode) -> usize {
    match ty {
        TypeNode::List(e) => 1 + type_list_depth(e),
        _ => 0,
    }
}

/// Whether the list value `c` goes into a list type of element `elem` as
/// one element (it has fewer list levels than the type: a singleton of
/// the element type, wrapped whole) rather than element by element. The
/// probe and the router ask the same question, so they place it alike.
pub fn wraps_whole(elem: &TypeNode, c: &Classified<'_>, rules: &Rules<'_>) -> bool {
    // Only a list of lists can be deeper than a list value: a list of
    // anything else takes a list value element by element.
    matches!(elem, TypeNode::List(_)) && value_list_depth(c, rules) < 1 + type_list_depth(elem)
}

/// Without growth, a struct takes an object when every entry with evidence
/// has a family with a version that takes it.
fn struct_takes_object(s: &StructNode, c: &Classified<'_>, rules: &Rules<'_>) -> bool {
    let inner = c.level.inside_struct();
    c.value.entries().all(|(k, v)| {
        let vc = classify(v, inner, rules);
        if vc.class == ValueClass::Nothing {
            return true;
        }
        match s.family(k) {
            Some(f) => choose_version(f, &vc, Growth::None, rules).is_some(),
            None => false,
        }
    })
}

/// The type a value would have on its own, or `None` without evidence.
fn type_of(c: &Classified<'_>, ctx: &mut Ctx<'_>) -> Option<TypeNode> {
    Some(match c.class {
        ValueClass::Nothing => return None,
        ValueClass::Bool => TypeNode::Scalar(ScalarKind::Bool),
        ValueClass::Int => TypeNode::Scalar(ScalarKind::Int),
        ValueClass::Float => TypeNode::Scalar(ScalarKind::Float),
        ValueClass::Str | ValueClass::Flattened => TypeNode::Scalar(ScalarKind::Str),
        ValueClass::Timestamp => TypeNode::Scalar(ScalarKind::Timestamp(ctx.rules.timestamp_unit)),
        ValueClass::Date => TypeNode::Scalar(ScalarKind::Date),
        ValueClass::Time => TypeNode::Scalar(ScalarKind::Time),
        ValueClass::Declared(d) => TypeNode::Scalar(ScalarKind::Declared(d)),
        ValueClass::Map => {
            let mut entry = StructNode::default();
            for e in c.value.elements() {
                if ctx.over() {
                    break;
                }
                let ec = classify(e, c.level.inside_list(), &ctx.rules);
                note_depth(&ec, ctx);
                if ec.class == ValueClass::Object {
                    absorb_object_into_struct(&mut entry, e, ec.level.inside_struct(), ctx);
                }
            }
            // The entry's `key` and `value` are the map itself, counted
            // once as its version (infer/width.rs).
            ctx.uncount(entry.families.iter().map(|f| f.versions.len()).sum());
            if entry.is_empty() {
                return None;
            }
            TypeNode::Map(Box::new(TypeNode::Struct(entry)))
        }
        ValueClass::Object => {
            let mut s = StructNode::default();
            let outer = ctx.enter_struct(false);
            absorb_object_into_struct(&mut s, c.value, c.level.inside_struct(), ctx);
            ctx.counting = outer;
            if s.is_empty() {
                return None;
            }
            TypeNode::Struct(s)
        }
        ValueClass::List => {
            let mut elem: Option<TypeNode> = None;
            for e in c.value.elements() {
                if ctx.over() {
                    break;
                }
                let ec = classify(e, c.level.inside_list(), &ctx.rules);
                note_depth(&ec, ctx);
                if ec.class == ValueClass::Nothing {
                    continue;
                }
                elem = Some(match elem.take() {
                    None => match type_of(&ec, ctx) {
                        Some(t) => t,
                        None => continue,
                    },
                    Some(mut t) => {
                        if fits(&t, false, &ec, Growth::Allowed, &ctx.rules).is_some() {
                            absorb_element(&mut t, false, &ec, ctx);
                            t
                        } else {
                            // The element type built so far is dropped.
                            let dropped = ctx.counted_inside(&t);
                            ctx.uncount(dropped);
                            if c.value.elements().all(|e| e.as_str().is_some() || e.is_empty_or_null()) {
                                // Strings that parse differently ("7", "a") stay strings.
                                TypeNode::Scalar(ScalarKind::Str)
                            } else {
                                // Elements that cannot share a type: keep them all as text.
                                TypeNode::Scalar(ScalarKind::Json)
                            }
                        }
                    }
                });
            }
            TypeNode::List(Box::new(elem?))
        }
    })
}

/// Evolves `ty` so that it takes `c`, which `fits` accepted with growth
/// allowed (the merge's witnesses, infer/merge.rs).
pub(super) fn absorb_classified(
    ty: &mut TypeNode,
    established: bool,
    c: &Classified<'_>,
    rules: &Rules<'_>,
    stats: &mut InferStats,
) {
    let mut ctx = Ctx { rules: *rules, stats: *stats, policy: None, as_is: false, counting: true };
    absorb(ty, established, c, &mut ctx);
    *stats = ctx.stats;
}

/// Evolves `ty` so that it takes the value. Precondition: `fits` accepted it
/// with growth allowed.
fn absorb(ty: &mut TypeNode, established: bool, c: &Classified<'_>, ctx: &mut Ctx<'_>) {
    if c.class == ValueClass::Nothing {
        return;
    }
    let key = ctx.rules.scalar_object_key;
    match ty {
        TypeNode::Scalar(ScalarKind::Json) => {}
        TypeNode::Scalar(k) => {
            let kind = *k;
            match (kind, c.class) {
                (_, cl) if !established && cl.numeric_kind().is_some_and(|n| !holds(kind, n)) => {
                    if let Some(joined) = cl.numeric_kind().and_then(|n| join(kind, n)) {
                        *k = joined;
                    }
                }
                (_, ValueClass::Object) if !established => {
                    // scalar → struct { scalar_object_key: scalar }, then the object.
                    let outer = ctx.enter_struct(false);
                    ctx.count(1);
                    let mut s = StructNode::default();
                    let mut family = new_family(key);
                    family.versions.push(Version {
                        number: 1,
                        ty: TypeNode::Scalar(kind),
                        established: false,
                        output_name: String::new(),
                        since: 0,
                    });
                    s.add_family(family);
                    absorb_object_into_struct(&mut s, c.value, c.level.inside_struct(), ctx);
                    ctx.counting = outer;
                    *ty = TypeNode::Struct(s);
                }
                (_, ValueClass::List) if !established => {
                    let mut elem = TypeNode::Scalar(kind);
                    absorb_elements(&mut elem, false, c, ctx);
                    *ty = TypeNode::List(Box::new(elem));
                }
                // Everything else that fits needs no change.
                _ => {}
            }
        }
        TypeNode::Struct(s) => match c.class {
            ValueClass::Object => {
                let outer = ctx.enter_struct(established);
                absorb_object_into_struct(s, c.value, c.level.inside_struct(), ctx);
                ctx.counting = outer;
            }
            ValueClass::List if !established => {
                let mut elem = TypeNode::Struct(std::mem::take(s));
                absorb_elements(&mut elem, false, c, ctx);
                *ty = TypeNode::List(Box::new(elem));
            }
            _ => {
                // A scalar wraps under scalar_object_key.
                let fi = match s.index.get(key) {
                    Some(&i) => i,
                    None => s.add_family(new_family(key)),
                };
                let outer = ctx.enter_struct(established);
                absorb_into_family(&mut s.families[fi], c, ctx);
                ctx.counting = outer;
            }
        },
        TypeNode::List(elem) => match c.class {
            // As `fits` placed it: shallower than the type, it is one element.
            ValueClass::List if wraps_whole(elem, c, &ctx.rules) => absorb_element(elem, established, c, ctx),
            ValueClass::List => absorb_elements(elem, established, c, ctx),
            // A singleton: it becomes an element.
            _ => absorb_element(elem, established, c, ctx),
        },
        // An object's values go into the value type of a VARCHAR-keyed map.
        TypeNode::Map(entry) if c.class == ValueClass::Object => {
            if let Some(value) = string_keyed_value_mut(entry) {
                let inner = c.level.inside_struct();
                for (_, v) in c.value.entries() {
                    if ctx.over() {
                        break;
                    }
                    let vc = classify(v, inner, &ctx.rules);
                    note_depth(&vc, ctx);
                    absorb(value, established, &vc, ctx);
                }
            }
        }
        // Only maps whose entries fit unchanged reach here: nothing grows.
        TypeNode::Map(entry) if c.class == ValueClass::Map => absorb_elements(entry, established, c, ctx),
        // A scalar or a list: one entry keyed scalar_object_key (see `fits`).
        TypeNode::Map(entry) => {
            if let Some(value) = string_keyed_value_mut(entry) {
                absorb(value, established, c, ctx);
            }
        }
    }
}

/// The value type of a map whose keys are VARCHAR (the maps objects become).
pub fn string_keyed_value(entry: &TypeNode) -> Option<&TypeNode> {
    let TypeNode::Struct(s) = entry else { return None };
    let key = &s.family("key")?.versions.first()?.ty;
    (s.families.len() == 2 && *key == TypeNode::Scalar(ScalarKind::Str)).then_some(())?;
    Some(&s.family("value")?.versions.first()?.ty)
}

fn string_keyed_value_mut(entry: &mut TypeNode) -> Option<&mut TypeNode> {
    string_keyed_value(entry)?;
    let TypeNode::Struct(s) = entry else { return None };
    let i = *s.index.get("value")?;
    Some(&mut s.families[i].versions.first_mut()?.ty)
}

fn absorb_elements(elem: &mut TypeNode, established: bool, c: &Classified<'_>, ctx: &mut Ctx<'_>) {
    for e in c.value.elements() {
        if ctx.over() {
            return;
        }
        let ec = classify(e, c.level.inside_list(), &ctx.rules);
        note_depth(&ec, ctx);
        absorb_element(elem, established, &ec, ctx);
    }
}

/// [`absorb`] for one element of a list. Inside a list, strings that parse
/// differently share the string type (`["s", "7"]` is a list of VARCHAR);
/// that holds too once the element type is a struct that took the strings
/// under `scalar_object_key` (`[["s", "7"], {"a": true}]`): a parsed
/// string its wrapping family already takes without growth (as text)
/// opens no typed version there. Otherwise absorbing the same list again
/// would add a version the first pass did not (the schema would not be a
/// fixed point of its own input).
fn absorb_element(elem: &mut TypeNode, established: bool, c: &Classified<'_>, ctx: &mut Ctx<'_>) {
    if let TypeNode::Struct(s) = elem {
        if c.is_parsed_string() {
            if let Some(&fi) = s.index.get(ctx.rules.scalar_object_key) {
                if choose_version(&s.families[fi], c, Growth::None, &ctx.rules).is_some() {
                    // A version takes it as it is: nothing grows.
                    return;
                }
            }
        }
    }
    absorb(elem, established, c, ctx);
}

#[cfg(test)]
mod tests {
    use super::has_duplicate_keys;
    use crate::value::Tape;

    fn object(keys: &[String]) -> Tape {
        let mut tape = Tape::default();
        let open = tape.open(true);
        for k in keys {
            tape.push_key(k);
            tape.push_null();
        }
        tape.close(open, keys.len() as u32, false);
        tape.push_root(0);
        tape
    }

    #[test]
    fn duplicate_keys_are_found_at_every_width() {
        for n in [2usize, 16, 17, 23, 128, 129, 300] {
            let unique: Vec<String> = (0..n).map(|i| format!("k{i}")).collect();
            assert!(!has_duplicate_keys(object(&unique).record(0)), "{n} unique keys");
            for (a, b) in [(0, n - 1), (n / 2, n / 2 + 1 - usize::from(n == 2)), (1, n - 1)] {
                if a == b {
                    continue;
                }
                let mut dup = unique.clone();
                dup[b] = dup[a].clone();
                assert!(has_duplicate_keys(object(&dup).record(0)), "{n} keys, {a} repeated at {b}");
            }
        }
    }
}
