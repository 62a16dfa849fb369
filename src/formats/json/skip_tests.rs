//! Skipped values (`SkipKeys`, projection pushdown) are read by the same
//! parser with nothing written: the same records, the same bad records
//! with the same messages and offsets, and the record's evidence, as a full
//! parse; only each skipped value stands as a null.

use proptest::prelude::*;

use crate::formats::json::texts::{leaves, JsonValues, SCALARS};
use crate::formats::json::{parse_value_prefix, parse_value_prefix_skipping, skip_trusted_value, SkipKeys};
use crate::value::{Node, Tape};

/// Valid JSON values over the keys a, b and c (so that skipped keys occur
/// at every depth), with escapes, numbers of every form and literals.
fn value() -> impl Strategy<Value = String> {
    JsonValues { leaves: leaves(SCALARS, -99..99), keys: "[abc]", depth: 4, size: 32, width: 4, spaced: false }
        .strategy()
}

/// A record, possibly broken: a piece cut out, or a syntax character (or
/// a lone surrogate's escape, which only a string holds) put in, somewhere.
fn text() -> impl Strategy<Value = String> {
    let record = prop::collection::vec(("[abc]", value()), 0..5).prop_map(|entries| {
        let body: Vec<String> = entries.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
        format!("{{{}}} ", body.join(","))
    });
    let damage = prop_oneof![
        Just(None),
        (any::<prop::sample::Index>(), any::<prop::sample::Index>()).prop_map(|(a, b)| Some((a, b, ""))),
        (
            any::<prop::sample::Index>(),
            prop::sample::select(vec!["{", "}", "[", "]", ",", ":", "\"", "\\", "x", "1.", "\\ud800"])
        )
            .prop_map(|(a, t)| Some((a, a, t))),
    ];
    (record, damage).prop_map(|(text, damage)| match damage {
        None => text,
        Some((a, b, insert)) => {
            let (a, b) = (a.index(text.len() + 1), b.index(text.len() + 1));
            let (a, b) = (a.min(b), a.max(b));
            format!("{}{insert}{}", &text[..a], &text[b..])
        }
    })
}

/// Compares the value at `full` (of the fully parsed tape) with the value
/// at `skipped`; at the record's own level (`top`), a key in `skip` must
/// have a null in the skipped tape. Returns the next indexes.
/// With `dropped`, a skipped entry of the record is left out whole (a
/// trusted skip of a key without escapes).
fn same(f: &Tape, full: usize, s: &Tape, skipped: usize, skip: &SkipKeys, top: bool, dropped: bool) -> (usize, usize) {
    match (f.nodes[full], s.nodes[skipped]) {
        (Node::Object { len: a, evidence: ea, .. }, Node::Object { len: b, evidence: eb, .. })
        | (Node::List { len: a, evidence: ea, .. }, Node::List { len: b, evidence: eb, .. }) => {
            assert_eq!(ea, eb, "evidence");
            let is_object = matches!(f.nodes[full], Node::Object { .. });
            let (mut i, mut j) = (full + 1, skipped + 1);
            let mut kept = 0;
            for _ in 0..a {
                let mut skip_this = false;
                if is_object {
                    let Node::Key { start: fs, len: fl } = f.nodes[i] else { panic!("expected a key") };
                    skip_this = top && skip.is_skipped(f.text_of(fs, fl));
                    if skip_this && dropped {
                        (i, kept) = (f.skip(i + 1), kept);
                        continue;
                    }
                    let Node::Key { start: ss, len: sl } = s.nodes[j] else { panic!("expected a key") };
                    assert_eq!(f.text_of(fs, fl), s.text_of(ss, sl));
                    i += 1;
                    j += 1;
                }
                kept += 1;
                if skip_this {
                    assert_eq!(s.nodes[j], Node::Null, "a skipped value stands as a null");
                    (i, j) = (f.skip(i), j + 1);
                } else {
                    (i, j) = same(f, i, s, j, skip, false, dropped);
                }
            }
            assert_eq!(kept, b, "entries kept");
            (i, j)
        }
        (Node::Str { start: a, len: al }, Node::Str { start: b, len: bl }) => {
            assert_eq!(f.text_of(a, al), s.text_of(b, bl));
            (full + 1, skipped + 1)
        }
        (Node::Float(a), Node::Float(b)) => {
            assert!(a == b || a.is_nan() && b.is_nan());
            (full + 1, skipped + 1)
        }
        (a, b) => {
            assert_eq!(a, b);
            (full + 1, skipped + 1)
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(512), .. ProptestConfig::default() })]

    #[test]
    fn skipping_reads_like_a_full_parse(text in text(), keys in prop::collection::vec("[abc]", 0..3)) {
        let skip = SkipKeys::new(keys, Vec::new());
        let (mut full, mut skipped) = (Tape::default(), Tape::default());
        let a = parse_value_prefix(&text, &mut full);
        let b = parse_value_prefix_skipping(&text, &mut skipped, Some(&skip), false);
        match (a, b) {
            (Err(a), Err(b)) => {
                prop_assert_eq!(a, b);
                prop_assert!(skipped.nodes.is_empty() && skipped.text.is_empty());
            }
            (Ok((ra, ua)), Ok((rb, ub))) => {
                prop_assert_eq!(ua, ub);
                let (i, j) = same(&full, ra as usize, &skipped, rb as usize, &skip, true, false);
                prop_assert_eq!((i, j), (full.nodes.len(), skipped.nodes.len()));
            }
            (a, b) => prop_assert!(false, "full {:?} against skipping {:?} for {:?}", a, b, text),
        }
        // Trusted (the text parsed before): the same tape where the text is
        // valid; on other text, no panic (the trust is never given there).
        let mut trusted = Tape::default();
        let c = parse_value_prefix_skipping(&text, &mut trusted, Some(&skip.clone().trusted(false)), false);
        if let Ok((ra, ua)) = parse_value_prefix(&text, &mut Tape::default()) {
            let mut full = Tape::default();
            parse_value_prefix(&text, &mut full).unwrap();
            let (rc, uc) = c.unwrap();
            prop_assert_eq!(ua, uc);
            let (i, j) = same(&full, ra as usize, &trusted, rc as usize, &skip, true, true);
            prop_assert_eq!((i, j), (full.nodes.len(), trusted.nodes.len()));
        }
    }

    /// A trusted skip ends where the parser ends, with the same evidence.
    #[test]
    fn a_trusted_skip_ends_where_the_parser_ends(value in value(), pad in "[ \t]{0,2}") {
        let text = format!("{pad}{value}{pad},");
        let mut tape = Tape::default();
        let (root, used) = parse_value_prefix(&text, &mut tape).unwrap();
        let evidence = match tape.nodes[root as usize] {
            Node::Object { evidence, .. } | Node::List { evidence, .. } => evidence,
            Node::Null => false,
            _ => true,
        };
        prop_assert_eq!(skip_trusted_value(text.as_bytes(), 0), (used, evidence));
    }

    /// Where the text ends with its record, a trusted parse ends once every
    /// wanted key is read: its tape is the start of the whole trusted
    /// parse, to the wanted key read last, and it reports the whole text
    /// used. A record lacking a wanted key is parsed whole.
    #[test]
    fn a_record_read_to_its_last_wanted_key_is_the_start_of_the_whole(
        entries in prop::collection::vec(("[abcd]", value()), 0..6),
        skipped in prop::collection::vec("[abcd]", 0..3),
        wanted in prop::collection::vec("[abcd]", 1..3),
        pad in "[ \t]{0,2}",
    ) {
        // A trusted input repeats no key of the record.
        let mut seen = std::collections::HashSet::new();
        let body: Vec<String> =
            entries.iter().filter(|(k, _)| seen.insert(k.clone())).map(|(k, v)| format!("\"{k}\":{v}")).collect();
        let text = format!("{pad}{{{}}}{pad}", body.join(","));
        let wanted: Vec<String> = wanted.into_iter().filter(|k| !skipped.contains(k)).collect();
        let skip = SkipKeys::new(skipped, wanted.clone()).trusted(true);
        let (mut whole, mut stopped) = (Tape::default(), Tape::default());
        let (root, _) = parse_value_prefix_skipping(&text, &mut whole, Some(&skip), false).unwrap();
        let (sroot, used) = parse_value_prefix_skipping(&text, &mut stopped, Some(&skip), true).unwrap();
        prop_assert_eq!((root, sroot), (0, 0));
        let keys_of = |t: &Tape| -> Vec<String> { crate::value::ValueRef { tape: t, idx: 0 }.entries().map(|(k, _)| k.to_string()).collect() };
        let (all, read) = (keys_of(&whole), keys_of(&stopped));
        let stops = !wanted.is_empty() && wanted.iter().all(|k| seen.contains(k));
        if !stops {
            // Debug text: a NaN equals itself there.
            prop_assert_eq!(format!("{:?}", stopped.nodes), format!("{:?}", whole.nodes));
            prop_assert_eq!(&stopped.text, &whole.text);
            return Ok(());
        }
        prop_assert_eq!(used, text.len());
        // The entries read end with the wanted key read last.
        let last = all.iter().rposition(|k| wanted.contains(k)).unwrap();
        prop_assert_eq!(&read[..], &all[..=last]);
        let end = stopped.nodes.len();
        prop_assert_eq!(format!("{:?}", &stopped.nodes[1..]), format!("{:?}", &whole.nodes[1..end]));
        prop_assert!(whole.text.starts_with(stopped.text.as_str()));
    }

    #[test]
    fn a_trusted_skip_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..64), pos in 0usize..80) {
        let (end, _) = skip_trusted_value(&bytes, pos);
        prop_assert!(end >= pos.min(bytes.len()) || bytes.is_empty());
    }
}

#[test]
fn a_skipped_value_keeps_nothing_of_itself() {
    let skip = SkipKeys::new(vec!["big".into()], Vec::new());
    let mut tape = Tape::default();
    let text = r#"{"id": 7, "big": {"deep": ["long text", 1.5, {"x": null}]}}"#;
    parse_value_prefix_skipping(text, &mut tape, Some(&skip), false).unwrap();
    assert_eq!(tape.text, "idbig");
    // Object, id, 7, big, null.
    assert_eq!(tape.nodes.len(), 5);
    assert!(matches!(tape.nodes[0], Node::Object { len: 2, evidence: true, .. }));
    // The evidence of a skipped value still counts for the record.
    let mut tape = Tape::default();
    parse_value_prefix_skipping(r#"{"big": [1], "n": null}"#, &mut tape, Some(&skip), false).unwrap();
    assert!(matches!(tape.nodes[0], Node::Object { evidence: true, .. }));
}

#[test]
fn an_early_end_needs_trust_and_a_text_that_ends_with_its_record() {
    let text = r#"{"id": 7, "big": [1, 2], "rest": "x"}"#;
    let skip = SkipKeys::new(vec!["big".into()], vec!["id".into()]);
    let entries = |skip: &SkipKeys, ends: bool| {
        let mut tape = Tape::default();
        let (_, used) = parse_value_prefix_skipping(text, &mut tape, Some(skip), ends).unwrap();
        let keys: Vec<String> =
            crate::value::ValueRef { tape: &tape, idx: 0 }.entries().map(|(k, _)| k.to_string()).collect();
        (keys, used)
    };
    // Untrusted: every entry, the skipped one a null.
    assert_eq!(entries(&skip, true), (vec!["id".into(), "big".into(), "rest".into()], text.len()));
    // Trusted, but more may follow the value: parsed to its end.
    let trusted = skip.clone().trusted(true);
    assert_eq!(entries(&trusted, false), (vec!["id".into(), "rest".into()], text.len()));
    // Trusted, and the text is the record's: done after "id".
    assert_eq!(entries(&trusted, true), (vec!["id".into()], text.len()));
    // Lines of two records: the line decoder never asks for the early end.
    let mut batch =
        crate::formats::Batch { skip: Some(std::sync::Arc::new(skip.trusted(false))), ..Default::default() };
    let line = format!("{text} {text}");
    let (n, done) = crate::formats::json::decode_line_records(
        line.as_bytes(),
        &mut batch,
        (1, 0),
        "the line",
        &mut crate::formats::json::LineProgress::default(),
        10,
    );
    assert_eq!((n, done, batch.multi_record_lines), (2, true, true));
}
