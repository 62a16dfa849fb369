//! The version a family of scalar versions picks for a value, kept per
//! kind of value: a CSV column or flat JSON key that drifted (`geo_zip`
//! as BIGINT and `geo_zip_v2_string`) has its choice made once per kind
//! instead of once per value.
//!
//! Between scalar versions, without growth, [`crate::infer::choose_version`]
//! reads only the value's class and whether it is a string a parser typed
//! (`Classified::is_parsed_string`): the fit of a scalar type to a scalar
//! value is decided by those two (infer/lattice.rs `fits`). So the answer
//! for one value of a kind is the answer for every value of that kind,
//! and a memo keyed by the two gives what the full choice gives.

use crate::infer::{Classified, ValueClass};
use std::cell::Cell;

/// Classes a memo keeps (a declared type, a container or a flattened
/// value takes the full choice every time).
const CLASSES: [ValueClass; 7] = [
    ValueClass::Bool,
    ValueClass::Int,
    ValueClass::Float,
    ValueClass::Str,
    ValueClass::Timestamp,
    ValueClass::Date,
    ValueClass::Time,
];

/// A slot not yet filled.
const UNKNOWN: u8 = 0;
/// A slot whose answer is "no version".
const NONE: u8 = 1;
/// Versions a slot can name (`2 + version` fits in a byte).
pub const MAX_VERSIONS: usize = u8::MAX as usize - 2;

/// The memo of one family, filled as kinds of values arrive. `Cell`s: it
/// sits in a flat layout the router reads while it writes columns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChoiceMemo {
    slots: [Cell<u8>; 2 * CLASSES.len()],
}

impl ChoiceMemo {
    /// The remembered choice for a value of this kind: `None` when the
    /// memo does not know it (yet, or never: a class it does not keep).
    #[inline]
    pub fn get(&self, c: &Classified<'_>) -> Option<Option<usize>> {
        match self.slots[slot(c)?].get() {
            UNKNOWN => None,
            NONE => Some(None),
            code => Some(Some(usize::from(code - 2))),
        }
    }

    /// Remembers `chosen` for values of this kind (nothing for a class it
    /// does not keep, or a version past [`MAX_VERSIONS`]).
    pub fn put(&self, c: &Classified<'_>, chosen: Option<usize>) {
        let Some(i) = slot(c) else { return };
        let code = match chosen {
            None => NONE,
            Some(v) if v < MAX_VERSIONS => v as u8 + 2,
            Some(_) => return,
        };
        self.slots[i].set(code);
    }
}

#[inline]
fn slot(c: &Classified<'_>) -> Option<usize> {
    let class = CLASSES.iter().position(|k| *k == c.class)?;
    Some(2 * class + usize::from(c.is_parsed_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infer::Level;
    use crate::scalar::Parsed;
    use crate::value::{Node, Tape, ValueRef};

    fn classified<'t>(tape: &'t Tape, idx: usize, class: ValueClass, parsed: Parsed) -> Classified<'t> {
        Classified { value: ValueRef { tape, idx }, class, level: Level::default(), parsed }
    }

    #[test]
    fn a_kind_is_its_class_and_whether_a_parser_typed_a_string() {
        let mut tape = Tape::default();
        tape.push_string("7");
        tape.nodes.push(Node::Int(7));
        let memo = ChoiceMemo::default();
        let parsed = classified(&tape, 0, ValueClass::Int, Parsed::Int(7));
        let typed = classified(&tape, 1, ValueClass::Int, Parsed::None);
        assert_eq!(memo.get(&parsed), None);
        memo.put(&parsed, Some(1));
        assert_eq!(memo.get(&parsed), Some(Some(1)));
        // A JSON integer is another kind than a string parsed to one.
        assert_eq!(memo.get(&typed), None);
        memo.put(&typed, None);
        assert_eq!(memo.get(&typed), Some(None));
        assert_eq!(memo.get(&parsed), Some(Some(1)));
    }

    #[test]
    fn classes_it_does_not_keep_are_never_answered() {
        let mut tape = Tape::default();
        tape.nodes.push(Node::Null);
        let memo = ChoiceMemo::default();
        for class in [ValueClass::Nothing, ValueClass::Flattened, ValueClass::List, ValueClass::Object, ValueClass::Map]
        {
            let c = classified(&tape, 0, class, Parsed::None);
            memo.put(&c, Some(0));
            assert_eq!(memo.get(&c), None, "{class:?}");
        }
        let c = classified(&tape, 0, ValueClass::Bool, Parsed::None);
        memo.put(&c, Some(MAX_VERSIONS));
        assert_eq!(memo.get(&c), None, "a version past what a slot holds");
        memo.put(&c, Some(MAX_VERSIONS - 1));
        assert_eq!(memo.get(&c), Some(Some(MAX_VERSIONS - 1)));
    }
}
