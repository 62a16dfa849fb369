//! A pinned field's values (`pin_types`, infer/policy.rs): each converted
//! to the pinned type when that loses nothing.

use crate::infer::{Classified, ScalarKind, ValueClass};
use crate::scalar::{Instant, Parsed, ScalarParsers};
use crate::value::Node;

/// A pinned field's value as its pinned type, if it converts without loss;
/// `None`: it does not (the caller rescues or nulls it, and records it).
/// Strings are read with `parsers` (every rule on); numbers convert when
/// exact (an integer to DOUBLE up to 2^53, an integral DOUBLE to BIGINT);
/// a date is a timestamp at midnight UTC. VARCHAR and JSON pins are
/// written as text by the caller: see [`PinnedValue`].
pub(super) fn pinned_value(kind: ScalarKind, c: &Classified<'_>, parsers: &ScalarParsers) -> Option<PinnedValue> {
    let node = c.value.node();
    match kind {
        ScalarKind::Json => return Some(PinnedValue::Text),
        ScalarKind::Str => {
            let container = matches!(c.class, ValueClass::List | ValueClass::Object | ValueClass::Map)
                || matches!(node, Node::List { .. } | Node::Object { .. });
            return (!container).then_some(PinnedValue::Text);
        }
        _ => {}
    }
    let parsed = match node {
        Node::Bool(b) => Parsed::Bool(b),
        Node::Int(n) => Parsed::Int(n),
        Node::Float(f) => Parsed::Float(f),
        Node::Str { start, len } => match c.parsed {
            Parsed::None => parsers.parse(c.value.tape.text_of(start, len)),
            p => p,
        },
        _ => c.parsed,
    };
    let converted = match (kind, parsed) {
        (ScalarKind::Bool, Parsed::Bool(b)) => Parsed::Bool(b),
        (ScalarKind::Int, Parsed::Int(n)) => Parsed::Int(n),
        (ScalarKind::Int, Parsed::Float(f)) if f.fract() == 0.0 && (-9.2e18..9.2e18).contains(&f) => {
            Parsed::Int(f as i64)
        }
        (ScalarKind::Float, Parsed::Float(f)) => Parsed::Float(f),
        (ScalarKind::Float, Parsed::Int(n)) if n.unsigned_abs() <= 1 << 53 => Parsed::Float(n as f64),
        (ScalarKind::Timestamp(unit), Parsed::Timestamp(t)) => {
            unit.ticks(t.secs, t.nanos)?;
            Parsed::Timestamp(t)
        }
        (ScalarKind::Timestamp(unit), Parsed::Date(d)) => {
            let t = Instant { secs: i64::from(d) * 86_400, nanos: 0 };
            unit.ticks(t.secs, t.nanos)?;
            Parsed::Timestamp(t)
        }
        (ScalarKind::Date, Parsed::Date(d)) => Parsed::Date(d),
        (ScalarKind::Time, Parsed::Time(t)) => Parsed::Time(t),
        _ => return None,
    };
    Some(PinnedValue::Parsed(converted))
}

/// How a pinned value is written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum PinnedValue {
    /// As text: a string as it is, any other scalar as its JSON text (a
    /// JSON pin: any value as compact JSON).
    Text,
    /// As this parsed value of the pinned type.
    Parsed(Parsed),
}
