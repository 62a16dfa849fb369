//! What a value is for inference and routing: its class (evidence, kind,
//! a string parser's result), its depth against `arrow_max_depth` and
//! `parquet_max_depth` (docs/engine.md "Depth limits"), and the rules of one
//! scan that decide both.

use super::schema::{ScalarKind, TimeUnit};
use crate::scalar::{Parsed, QuickKind, QuickParse, ScalarParsers};
use crate::value::Declared;
use crate::value::{Node, ValueRef};

/// The depth limits (docs/engine.md, "Depth limits"): `arrow_max_depth` counts struct and list
/// levels, `parquet_max_depth` counts struct (RECORD) levels only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DepthLimits {
    pub arrow_max_depth: usize,
    pub parquet_max_depth: usize,
}

/// Everything that decides how a value is seen, fixed for one scan.
#[derive(Clone, Copy, Debug)]
pub struct Rules<'a> {
    pub limits: DepthLimits,
    pub scalar_object_key: &'a str,
    pub parsers: &'a ScalarParsers,
    /// Unit of timestamp versions born in this scan (`timestamp_precision`).
    pub timestamp_unit: TimeUnit,
    /// `pin_types` and `freeze` (infer/policy.rs); `None`: none given.
    pub policies: Option<&'a super::policy::Policies>,
    /// `max_columns`, as the probe counts the schema while it grows
    /// (infer/width.rs).
    pub columns: super::width::ColumnLimit,
}

/// How deep a value sits: containers and structs above it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Level {
    pub containers: usize,
    pub structs: usize,
}

impl Level {
    pub fn inside_list(self) -> Level {
        Level { containers: self.containers + 1, structs: self.structs }
    }
    pub fn inside_struct(self) -> Level {
        Level { containers: self.containers + 1, structs: self.structs + 1 }
    }
}

/// What a value is for inference and routing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueClass {
    /// null, `{}` or `[]`: no type evidence.
    Nothing,
    Bool,
    Int,
    Float,
    Str,
    Timestamp,
    Date,
    Time,
    /// A container past a depth limit: materialized as its compact JSON text,
    /// so it behaves like a string.
    Flattened,
    List,
    Object,
    /// A declared map (Parquet MAP).
    Map,
    /// A value of a declared type (Parquet INTEGER, DECIMAL, BLOB, ...).
    Declared(Declared),
}

#[derive(Clone, Copy, Debug)]
pub struct Classified<'t> {
    pub value: ValueRef<'t>,
    pub class: ValueClass,
    pub level: Level,
    /// What a string parsed to (`Parsed::None` for anything else).
    pub parsed: Parsed,
}

impl Classified<'_> {
    /// A string that a parser typed: it targets typed versions, and a
    /// string version takes it only as a fallback.
    pub fn is_parsed_string(&self) -> bool {
        self.parsed != Parsed::None && matches!(self.value.node(), Node::Str { .. })
    }
}

/// Inlined for the common scalars, so that the caller builds the result in
/// place: returned through memory, the large `Classified` was read back
/// right after the call, a stall on data just written that perf put at 5%
/// of a scan. Everything else is [`classify_rest`].
#[inline(always)]
pub fn classify<'t>(value: ValueRef<'t>, level: Level, rules: &Rules<'_>) -> Classified<'t> {
    let class = match value.node() {
        Node::Null => ValueClass::Nothing,
        Node::Bool(_) => ValueClass::Bool,
        Node::Int(_) => ValueClass::Int,
        Node::Float(_) => ValueClass::Float,
        Node::Str { .. } if !rules.parsers.any() => ValueClass::Str,
        _ => return classify_rest(value, level, rules),
    };
    Classified { value, class, level, parsed: Parsed::None }
}

/// [`classify`] of a top-level value (a CSV cell), with a string's parse
/// told from its bytes where they tell it (scalar/quick.rs): a drifted CSV
/// column's version memo (route/choice_memo.rs) needs each cell's class,
/// and the whole parse tries every parser before it calls a name text.
/// What the bytes tell is what the whole parse gives, so the result is
/// [`classify`]'s.
#[inline]
pub fn classify_told<'t>(quick: &QuickParse, value: ValueRef<'t>, rules: &Rules<'_>) -> Classified<'t> {
    if let Node::Str { start, len } = value.node() {
        let bytes = value.tape.bytes_of(start, len);
        let told = match quick.kind(bytes) {
            Some(QuickKind::Text) => Some(Parsed::None),
            // The number's value, by the parser the whole parse would take it
            // from: its digits are read a second time, since `QuickKind` keeps
            // no value (the probe's coder, which tells every numeric cell's
            // kind, would pay a multiply a digit for a value it drops).
            Some(QuickKind::Int) => rules.parsers.int_alone(bytes).map(Parsed::Int),
            Some(QuickKind::Float) => rules.parsers.float_alone(bytes).map(Parsed::Float),
            Some(QuickKind::Timestamp(t)) => Some(Parsed::Timestamp(t)),
            None => None,
        };
        if let Some(mut parsed) = told {
            let class = parsed_class(&mut parsed, rules.timestamp_unit);
            return Classified { value, class, level: Level::default(), parsed };
        }
    }
    classify(value, Level::default(), rules)
}

/// [`classify`] of every value: strings under parsers, typed values and
/// containers (and the common scalars again, for completeness).
#[inline(never)]
fn classify_rest<'t>(value: ValueRef<'t>, level: Level, rules: &Rules<'_>) -> Classified<'t> {
    let limits = rules.limits;
    let mut parsed = Parsed::None;
    let class = match value.node() {
        Node::Null => ValueClass::Nothing,
        Node::Bool(_) => ValueClass::Bool,
        Node::Int(_) => ValueClass::Int,
        Node::Float(_) => ValueClass::Float,
        Node::Str { start, len } if rules.parsers.any() => {
            rules.parsers.parse_into(value.tape.text_of(start, len), &mut parsed);
            parsed_class(&mut parsed, rules.timestamp_unit)
        }
        Node::Str { .. } | Node::Key { .. } => ValueClass::Str,
        // Typed temporals (Parquet) carry their value in `parsed`, like a parsed string.
        Node::Timestamp { value: v, unit } => {
            let (secs, nanos) = unit.split(v);
            let t = crate::scalar::Instant { secs, nanos };
            if rules.timestamp_unit.ticks(t.secs, t.nanos).is_some() {
                parsed = Parsed::Timestamp(t);
                ValueClass::Timestamp
            } else {
                ValueClass::Str
            }
        }
        Node::Date(d) => {
            parsed = Parsed::Date(d);
            ValueClass::Date
        }
        Node::Time(t) => {
            parsed = Parsed::Time(t);
            ValueClass::Time
        }
        Node::Declared { kind, .. } => ValueClass::Declared(kind),
        // Containers without a non-null scalar inside are no evidence (the
        // empty-container rule of docs/engine.md, applied recursively).
        Node::List { evidence: false, .. }
        | Node::Object { evidence: false, .. }
        | Node::Map { evidence: false, .. } => ValueClass::Nothing,
        // A map is a list of entry structs: two containers, one RECORD level.
        Node::Map { .. } => {
            if level.containers + 2 > limits.arrow_max_depth || level.structs + 1 > limits.parquet_max_depth {
                ValueClass::Flattened
            } else {
                ValueClass::Map
            }
        }
        Node::List { .. } => {
            // A ragged list (lists beside scalars or objects) has no one
            // nesting a list type keeps: wrapping its scalars to the depth
            // of its lists would change the value, so it is its JSON text.
            if level.containers + 1 > limits.arrow_max_depth
                || list_depth(value, limits.arrow_max_depth - (level.containers + 1)).is_none()
            {
                ValueClass::Flattened
            } else {
                ValueClass::List
            }
        }
        Node::Object { .. } => {
            if level.containers + 1 > limits.arrow_max_depth || level.structs + 1 > limits.parquet_max_depth {
                ValueClass::Flattened
            } else {
                ValueClass::Object
            }
        }
    };
    Classified { value, class, level, parsed }
}

/// How many list levels a list value has, the same down every element
/// with evidence (null, `[]` and `{}` fit any depth); `None` for a ragged
/// list, whose elements differ in depth (`[1, [2]]`, `[[1], [[2]]]`).
/// `room` is how many container levels may still open inside it before
/// the depth limit flattens them to text ([`classify`]): a list past it is
/// text, so it counts as no list level here either.
pub fn list_depth(list: ValueRef<'_>, room: usize) -> Option<usize> {
    let mut depth: Option<usize> = None;
    for e in list.elements() {
        let d = match e.node() {
            Node::Null
            | Node::List { evidence: false, .. }
            | Node::Object { evidence: false, .. }
            | Node::Map { evidence: false, .. } => continue,
            Node::List { .. } if room > 0 => list_depth(e, room - 1)?,
            _ => 0,
        };
        match depth {
            None => depth = Some(d),
            Some(known) if known != d => return None,
            Some(_) => {}
        }
    }
    Some(1 + depth.unwrap_or(0))
}

/// The list depth of a classified list value (see [`list_depth`]).
pub fn value_list_depth(c: &Classified<'_>, rules: &Rules<'_>) -> usize {
    let room = rules.limits.arrow_max_depth.saturating_sub(c.level.containers + 1);
    list_depth(c.value, room).unwrap_or(1)
}

/// The class of what a string parsed to; a timestamp `unit` cannot hold
/// becomes text again (`parsed` is reset).
#[inline]
fn parsed_class(parsed: &mut Parsed, unit: TimeUnit) -> ValueClass {
    match *parsed {
        Parsed::None => ValueClass::Str,
        Parsed::Bool(_) => ValueClass::Bool,
        Parsed::Int(_) => ValueClass::Int,
        Parsed::Float(_) => ValueClass::Float,
        Parsed::Timestamp(t) => {
            if unit.ticks(t.secs, t.nanos).is_some() {
                ValueClass::Timestamp
            } else {
                // Out of range for the unit (NANOS spans 1677–2262): stays a string.
                *parsed = Parsed::None;
                ValueClass::Str
            }
        }
        Parsed::Date(_) => ValueClass::Date,
        Parsed::Time(_) => ValueClass::Time,
    }
}

/// The class [`classify`] gives a string of this text under these
/// parsers (some of which the caller knows to be on) and timestamp unit,
/// without building its [`Classified`]: the probe's shape keys need the
/// class alone (infer/shapes.rs), per cell of a CSV record. Always
/// inlined: as a call that also checked every parser's switch, it cost
/// 40 M of the 2,919 M instructions of a `COPY` of the bench CSV's 19 MB
/// slice (callgrind).
#[inline(always)]
pub fn parsing_class(text: &str, parsers: &ScalarParsers, unit: TimeUnit) -> ValueClass {
    parsed_class(&mut parsers.parse(text), unit)
}

/// The class of a string whose kind its bytes told
/// (`scalar::QuickParse`): what [`parsing_class`] gives the same text.
#[inline(always)]
pub fn quick_class(kind: QuickKind, unit: TimeUnit) -> ValueClass {
    match kind {
        QuickKind::Text => ValueClass::Str,
        QuickKind::Int => ValueClass::Int,
        QuickKind::Float => ValueClass::Float,
        QuickKind::Timestamp(t) => parsed_class(&mut Parsed::Timestamp(t), unit),
    }
}

impl ValueClass {
    pub fn is_string_like(self) -> bool {
        matches!(self, ValueClass::Str | ValueClass::Flattened)
    }

    /// The scalar kind of a number, for the numeric rules of
    /// declared types (`src/infer/declared.rs`); `None` for anything else.
    pub fn numeric_kind(self) -> Option<ScalarKind> {
        match self {
            ValueClass::Int => Some(ScalarKind::Int),
            ValueClass::Float => Some(ScalarKind::Float),
            ValueClass::Declared(d) if !matches!(d, Declared::Blob | Declared::Uuid | Declared::Interval) => {
                Some(ScalarKind::Declared(d))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod fast_path_tests {
    use super::*;
    use crate::formats::json::parse_value_skipping;
    use crate::scalar::ScalarParsers;
    use crate::value::Tape;

    /// The inlined common cases give what the full classification gives,
    /// for every node of a record, with string parsers off and on.
    #[test]
    fn the_inlined_cases_agree_with_the_full_classification() {
        let mut tape = Tape::default();
        let text = r#"{"n":null,"b":true,"i":-3,"f":2.5,"s":"x","t":"2024-01-02T03:04:05Z","d":"12","e":[],"l":[1,"a"],"o":{"k":{}}}"#;
        parse_value_skipping(text, &mut tape, None).unwrap();
        let mut on = ScalarParsers::none();
        on.integers = true;
        on.iso_timestamps = true;
        for parsers in [ScalarParsers::none(), on] {
            let rules = Rules {
                limits: DepthLimits { arrow_max_depth: 32, parquet_max_depth: 15 },
                scalar_object_key: "v",
                parsers: &parsers,
                timestamp_unit: TimeUnit::Micros,
                policies: None,
                columns: crate::infer::ColumnLimit::NONE,
            };
            for idx in 0..tape.nodes.len() {
                let v = ValueRef { tape: &tape, idx };
                let (fast, full) = (classify(v, Level::default(), &rules), classify_rest(v, Level::default(), &rules));
                assert_eq!((fast.class, fast.parsed, fast.level), (full.class, full.parsed, full.level), "node {idx}");
            }
        }
    }

    /// A typed timestamp (Parquet's) is a timestamp where the scan's unit
    /// holds it, whatever its own unit, and text where it does not.
    #[test]
    fn a_typed_timestamp_is_judged_by_the_scans_unit() {
        let mut tape = Tape::default();
        // 2300-01-01 in microseconds: past the nanosecond range (1677-2262).
        let late = 10_413_792_000_000_000;
        tape.nodes.push(Node::Timestamp { value: late, unit: TimeUnit::Micros });
        let parsers = ScalarParsers::none();
        for (unit, class) in [(TimeUnit::Micros, ValueClass::Timestamp), (TimeUnit::Nanos, ValueClass::Str)] {
            let rules = Rules {
                limits: DepthLimits { arrow_max_depth: 32, parquet_max_depth: 15 },
                scalar_object_key: "v",
                parsers: &parsers,
                timestamp_unit: unit,
                policies: None,
                columns: crate::infer::ColumnLimit::NONE,
            };
            let value = ValueRef { tape: &tape, idx: 0 };
            assert_eq!(classify(value, Level::default(), &rules).class, class, "{unit:?}");
        }
    }
}
