//! Generators of JSON text for the property tests that read it: the
//! skipping parser (json_skip_tests.rs), the shape scanner (json_shape.rs)
//! and the probe's shape cache (infer/shapes.rs). One generator, so that a
//! form added for one (an escape, a number's spelling) is there for all.

use std::ops::Range;

use proptest::prelude::*;

/// Scalars of every form the parser reads: literals, numbers of every
/// spelling (an integer past i64 too), escapes (a surrogate pair among
/// them), and `NaN`, which it refuses.
pub(crate) const SCALARS: &[&str] = &[
    "null",
    "true",
    "false",
    "-0.5e3",
    "1E+2",
    "-0",
    "12345678901234567890",
    "\"x\\\"y\\u00e9\\n\\/\"",
    "\"\\ud83d\\ude00\"",
    "\"plain\"",
    "NaN",
];

/// Leaves: the given JSON texts, and the integers of `ints` as often as
/// any one of the texts.
pub(crate) fn leaves(texts: &[&'static str], ints: Range<i64>) -> BoxedStrategy<String> {
    prop_oneof![
        texts.len() as u32 => prop::sample::select(texts.to_vec()).prop_map(str::to_string),
        1 => ints.prop_map(|n| n.to_string()),
    ]
    .boxed()
}

/// JSON values: `leaves` inside lists and objects up to `depth` levels,
/// with at most `width - 1` members each and about `size` nodes in all.
/// An object's keys are drawn from the regex `keys`, whose text is put
/// between the quotes as it is (so it may hold escapes). `spaced` puts
/// whitespace around the colons and commas.
pub(crate) struct JsonValues {
    pub leaves: BoxedStrategy<String>,
    pub keys: &'static str,
    pub depth: u32,
    pub size: u32,
    pub width: usize,
    pub spaced: bool,
}

impl JsonValues {
    pub fn strategy(self) -> BoxedStrategy<String> {
        let JsonValues { leaves, keys, depth, size, width, spaced } = self;
        let (colon, comma, open, close) = if spaced { (" :", " ,", "{ ", " }") } else { (":", ",", "{", "}") };
        leaves
            .prop_recursive(depth, size, width as u32, move |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..width).prop_map(|v| format!("[{}]", v.join(", "))),
                    prop::collection::vec((keys, inner), 0..width).prop_map(move |entries| {
                        let body: Vec<String> = entries.iter().map(|(k, v)| format!("\"{k}\"{colon}{v}")).collect();
                        format!("{open}{}{close}", body.join(comma))
                    }),
                ]
            })
            .boxed()
    }
}
