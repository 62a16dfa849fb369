//! Finding the family of an object's key by its position: records of one
//! source mostly spell their objects' keys in the same order, so the key
//! at position `j` of an object is most often the family the key at `j`
//! of the last object of that struct went to. One comparison of the key
//! with that family's source key then replaces hashing it and probing the
//! struct's index. A wrong guess costs the lookup it would have cost
//! anyway: every guess is checked against the key itself, so the family
//! found is always the index's.

use crate::infer::StructNode;

/// Struct nodes remembered at once (direct-mapped by address).
const SLOTS: usize = 64;
/// Slots looked at for one struct.
const PROBES: usize = 4;
/// Positions remembered per struct: wider objects look up the rest.
const MAX_POSITIONS: usize = 256;
const UNKNOWN: u32 = u32::MAX;

/// Per struct node of the schema (by address, only compared), the family
/// of each position of the last object written there.
pub(super) struct KeyOrders {
    slots: Vec<(usize, Vec<u32>)>,
}

impl Default for KeyOrders {
    fn default() -> Self {
        KeyOrders { slots: (0..SLOTS).map(|_| (0, Vec::new())).collect() }
    }
}

impl KeyOrders {
    /// The remembered order of `s`'s objects (emptied when its slot held
    /// another struct).
    #[inline]
    pub(super) fn of(&mut self, s: &StructNode) -> &mut Vec<u32> {
        let address = s as *const StructNode as usize;
        // Fibonacci hashing: the top bits of the product spread addresses
        // that differ only in low bits. Then up to `PROBES` slots on, so
        // that two structs of one record rarely take turns in one slot.
        let home = address.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (usize::BITS - SLOTS.trailing_zeros());
        let candidates = (0..PROBES).map(|i| (home + i) % SLOTS);
        let slot = candidates
            .clone()
            .find(|&i| self.slots[i].0 == address)
            .or_else(|| candidates.clone().find(|&i| self.slots[i].0 == 0))
            .unwrap_or(home);
        let (owner, order) = &mut self.slots[slot];
        if *owner != address {
            *owner = address;
            order.clear();
        }
        order
    }
}

/// The family of `key`, the entry at `position` of an object of `s`, as
/// `s.index` has it; `order` ([`KeyOrders::of`]) learns it.
#[inline]
pub(super) fn family_of(s: &StructNode, order: &mut Vec<u32>, position: usize, key: &str) -> Option<usize> {
    if let Some(&guess) = order.get(position) {
        if let Some(family) = s.families.get(guess as usize) {
            if crate::value::key_hash::same_key(family.source_key.as_bytes(), key.as_bytes()) {
                return Some(guess as usize);
            }
        }
    }
    let found = s.index.get(key).copied();
    if position < MAX_POSITIONS {
        if order.len() <= position {
            order.resize(position + 1, UNKNOWN);
        }
        order[position] = found.map_or(UNKNOWN, |f| f as u32);
    }
    found
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::infer::Family;

    fn struct_of(keys: &[String]) -> StructNode {
        let mut s = StructNode::default();
        for k in keys {
            if !s.index.contains_key(k.as_str()) {
                s.add_family(Family {
                    source_key: k.clone(),
                    name: k.clone(),
                    versions: Vec::new(),
                    registry_position: None,
                    pin: None,
                });
            }
        }
        s
    }

    proptest! {
        /// Objects of any keys in any order, over a few structs that share
        /// the orders' slots: every family found is the index's.
        #[test]
        fn the_family_found_by_position_is_the_index_family(
            schema_keys in prop::collection::vec(prop::collection::vec("[a-e]{1,2}", 0..8), 1..4),
            objects in prop::collection::vec((0usize..4, prop::collection::vec("[a-f]{1,2}", 0..10)), 1..40),
        ) {
            let structs: Vec<StructNode> = schema_keys.iter().map(|k| struct_of(k)).collect();
            let mut orders = KeyOrders::default();
            for (which, keys) in &objects {
                let s = &structs[which % structs.len()];
                let order = orders.of(s);
                for (position, key) in keys.iter().enumerate() {
                    prop_assert_eq!(family_of(s, order, position, key), s.index.get(key.as_str()).copied());
                }
            }
        }
    }

    #[test]
    fn a_repeated_order_is_found_without_the_index() {
        let keys: Vec<String> = ["id", "name", "tags"].iter().map(|k| k.to_string()).collect();
        let s = struct_of(&keys);
        let mut orders = KeyOrders::default();
        for key in keys.iter().chain(&keys) {
            let _ = family_of(&s, orders.of(&s), keys.iter().position(|k| k == key).unwrap(), key);
        }
        // The second object's keys were guessed: the order holds them all.
        assert_eq!(orders.of(&s).as_slice(), &[0, 1, 2]);
        // Another order is learnt, position by position.
        assert_eq!(family_of(&s, orders.of(&s), 0, "tags"), Some(2));
        assert_eq!(orders.of(&s).as_slice(), &[2, 1, 2]);
        assert_eq!(family_of(&s, orders.of(&s), 1, "nope"), None);
        assert_eq!(orders.of(&s).as_slice(), &[2, UNKNOWN, 2]);
    }
}
