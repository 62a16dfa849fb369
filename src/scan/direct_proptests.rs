//! Property test of the direct writes (route/direct.rs): JSON Lines the
//! probe found clean, written into their rows straight from the text, give
//! exactly what parsing them onto a tape and routing them gives: rows,
//! names, registry, drifts and counters, with and without parsers, at every
//! thread count, with projections, and with the records the direct way
//! declines (versions, repeated keys, escaped keys, containers in lists)
//! mixed in anywhere.

use proptest::prelude::*;

use super::plain_proptests::runs;
use super::tests::run_threads;
use crate::options::ParamValue;
use crate::route::{DIRECT_OFF, DIRECT_WRITES};

/// Held while a test here runs: it turns [`DIRECT_OFF`] on for a while.
static SWITCH: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A JSON scalar's text of the kind a key mostly holds, sometimes null or
/// of another kind (a second version).
fn scalar(kind: usize) -> impl Strategy<Value = String> {
    let own = match kind {
        0 => (-50i64..50).prop_map(|n| n.to_string()).boxed(),
        1 => prop_oneof![
            (-500i64..500).prop_map(|n| format!("{}.{}", n / 10, n.rem_euclid(10))),
            Just("1e2".to_string()),
            Just("-0.0".to_string()),
            Just("NaN".to_string()),
            Just("-Infinity".to_string()),
            (-9i64..9).prop_map(|n| n.to_string()),
        ]
        .boxed(),
        2 => prop::sample::select(vec![
            "\"a\"",
            "\"\"",
            "\"q\\\"t\"",
            "\"\\u00e9t\\u00e9\"",
            "\"\\ud83d\\ude00\"",
            "\"é\"",
            "\"7\"",
            "\"-3\"",
            "\"2.5\"",
            "\"2026-01-31\"",
            "\"2026-01-31T10:00:00Z\"",
            "\"a long string of more than sixteen bytes\"",
        ])
        .prop_map(str::to_string)
        .boxed(),
        _ => any::<bool>().prop_map(|b| b.to_string()).boxed(),
    };
    prop_oneof![
        48 => own,
        8 => Just("null".to_string()),
        1 => prop::sample::select(vec!["1", "\"x\"", "true", "2.5"]).prop_map(str::to_string),
    ]
}

/// A list of one scalar kind: empty, all null, or mixed with nulls;
/// rarely holding a container.
fn list(kind: usize) -> impl Strategy<Value = String> {
    prop_oneof![
        60 => prop::collection::vec(scalar(kind), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
        2 => Just("null".to_string()),
        6 => Just("[null,null]".to_string()),
        1 => Just("[[1]]".to_string()),
    ]
}

/// An object of the nested keys, possibly empty, all null, or missing keys.
fn nested(depth: u32) -> BoxedStrategy<String> {
    let inner = if depth == 0 { scalar(1).boxed() } else { nested(depth - 1) };
    let entries =
        (prop::option::of(scalar(0)), prop::option::of(scalar(2)), prop::option::of(inner), prop::option::of(list(0)));
    prop_oneof![
        8 => entries.prop_map(|(a, b, c, d)| {
            let parts: Vec<String> = [("a", a), ("b", b), ("c", c), ("d", d)]
                .into_iter()
                .filter_map(|(k, v)| v.map(|v| format!("\"{k}\":{v}")))
                .collect();
            format!("{{{}}}", parts.join(","))
        }),
        1 => Just("{}".to_string()),
        1 => Just("null".to_string()),
        1 => Just("{\"a\":null,\"c\":{}}".to_string()),
    ]
    .boxed()
}

/// A record of the template's keys in a shuffled-by-choice order, with the
/// forms the direct way declines now and then: an escaped key, a repeated
/// key, a key written with spaces around it.
fn record_line() -> impl Strategy<Value = String> {
    let values = (
        prop::option::of(scalar(0)),
        prop::option::of(scalar(1)),
        prop::option::of(scalar(2)),
        prop::option::of(scalar(3)),
        prop::option::of(nested(1)),
        prop::option::of(list(2)),
        prop::option::of(list(1)),
    );
    let odd = prop_oneof![40 => Just(""), 2 => Just("escape"), 1 => Just("repeat"), 4 => Just("spaces"), 4 => Just("reverse")];
    (values, odd).prop_map(|((id, amount, name, flag, obj, tags, scores), odd)| {
        let mut parts: Vec<(String, String)> = [
            ("id", id),
            ("amount", amount),
            ("name", name),
            ("flag", flag),
            ("obj", obj),
            ("tags", tags),
            ("scores", scores),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k.to_string(), v)))
        .collect();
        match odd {
            "escape" if !parts.is_empty() => {
                parts[0].0 = format!("\\u00{:x}{}", parts[0].0.as_bytes()[0], &parts[0].0[1..])
            }
            "repeat" if !parts.is_empty() => parts.push(parts[0].clone()),
            "reverse" => parts.reverse(),
            _ => {}
        }
        let sep = if odd == "spaces" { " , " } else { "," };
        let colon = if odd == "spaces" { " : " } else { ":" };
        let body: Vec<String> = parts.iter().map(|(k, v)| format!("\"{k}\"{colon}{v}")).collect();
        format!("{{{}}}\n", body.join(sep))
    })
}

/// The plain writes' switch and ours, for a test that must run with
/// neither switched off by another: the plain one first (their test takes
/// only it), always in this order, so that two tests taking both never
/// deadlock.
fn both_switches() -> [std::sync::MutexGuard<'static, ()>; 2] {
    [
        super::plain_proptests::SWITCH.lock().unwrap_or_else(|p| p.into_inner()),
        SWITCH.lock().unwrap_or_else(|p| p.into_inner()),
    ]
}

/// Writes `text` to `path` dated a minute back: the probe trusts (and a
/// scan keeps as text) only a file older than a racy moment
/// (scan/tally.rs `RACY`).
fn write_settled(path: &str, text: &str) {
    std::fs::write(path, text).unwrap();
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(60)).unwrap();
}

fn options() -> impl Strategy<Value = Vec<(&'static str, ParamValue)>> {
    (any::<bool>(), prop::bool::weighted(0.2)).prop_map(|(parsers, nanos)| {
        let mut p = vec![("field_name_policy", ParamValue::Str("preserve".into()))];
        if parsers {
            for name in ["parse_integers", "parse_floats", "parse_iso_dates", "parse_iso_timestamps"] {
                p.push((name, ParamValue::Bool(true)));
            }
        }
        if nanos {
            p.push(("timestamp_precision", ParamValue::Str("TIMESTAMP_NANOS".into())));
        }
        p
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(64), .. ProptestConfig::default() })]

    #[test]
    fn direct_writes_never_change_the_result(
        lines in prop::collection::vec(record_line(), 1..40),
        params in options(),
        threads in 1usize..4,
        mask in prop::collection::vec(any::<bool>(), 0..8),
    ) {
        let dir = crate::test_support::scratch_dir("direct");
        let path = dir.join("r.jsonl").to_string_lossy().into_owned();
        write_settled(&path, &lines.concat());
        let _switch = SWITCH.lock().unwrap_or_else(|p| p.into_inner());
        let direct = runs(&path, &params, threads, &mask);
        let general = DIRECT_OFF.on_for(|| runs(&path, &params, threads, &mask));
        let _ = std::fs::remove_dir_all(&dir);
        prop_assert_eq!(direct.0, general.0, "lines {:?}", lines);
        prop_assert_eq!(direct.1, general.1, "lines {:?}", lines);
    }
}

/// The records of a clean file with one schema version per key are all
/// written from their text, and `rows_direct` counts them; a key with an
/// escape sends its record the general way, which reads it as the key it
/// spells. (A repeated key anywhere would keep the whole file from being
/// kept as text: the probe's tally then trusts nothing, scan/tally.rs.)
#[test]
fn clean_records_are_written_from_their_text_and_counted() {
    let _switches = both_switches();
    let dir = crate::test_support::scratch_dir("direct-count");
    let path = dir.join("r.jsonl").to_string_lossy().into_owned();
    let mut text = String::new();
    for i in 0..300 {
        text.push_str(&format!(
            "{{\"id\":{i},\"name\":\"n{i}\",\"obj\":{{\"a\":{i},\"c\":{{\"d\":1.5}}}},\"tags\":[\"x\",null],\"none\":null}}\n"
        ));
    }
    text.push_str("{\"\\u0069d\":7}\n");
    write_settled(&path, &text);
    let before = DIRECT_WRITES.load(std::sync::atomic::Ordering::Relaxed);
    let (run, stats) = run_threads(&path, &[], 1).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(run.rows.len(), 301);
    assert_eq!(stats.rows_direct, 300, "{stats:?}");
    assert_eq!(run.rows[300][run.names.iter().position(|n| n == "id").unwrap()], serde_json::json!(7));
    // Other tests may write directly meanwhile: at least these 300.
    assert!(DIRECT_WRITES.load(std::sync::atomic::Ordering::Relaxed) - before >= 300);
}

/// Each record the direct way declines leaves the columns exactly as they
/// were (the caller then parses it); each it takes adds the row the parsed
/// way adds. Some of these cannot reach it in a scan (a file with a
/// repeated key is never kept as text), so they are put to the router
/// itself.
#[test]
fn a_declined_record_leaves_the_columns_as_they_were() {
    use crate::route::{columns_for_struct, Router};
    let _switches = both_switches();
    let dir = crate::test_support::scratch_dir("direct-decline");
    let path = dir.join("r.jsonl").to_string_lossy().into_owned();
    write_settled(&path, "{\"id\":1,\"obj\":{\"a\":1,\"b\":\"x\"},\"tags\":[\"t\"],\"v\":1}\n{\"v\":\"s\"}\n");
    let options =
        crate::options::Options::parse("sanitize_jsonl", Some(crate::options::InputFormat::Jsonl), &[]).unwrap();
    let plan = super::plan_on("sanitize_jsonl", path.as_str(), options, 1).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let rules = plan.rules();
    let (mut direct, mut parsed) = (Router::new(true), Router::new(true));
    let (mut columns, mut expected) = (columns_for_struct(&plan.schema), columns_for_struct(&plan.schema));
    let cases = [
        (r#"{"id":2,"obj":{"b":"y"},"tags":[null,"u"],"v":null}"#, true),
        (r#" { "tags" : [] , "obj" : {"a":null} , "zz":null } "#, true),
        (r#"{"id":3,"id":4}"#, false),
        (r#"{"\u0069d":5}"#, false),
        (r#"{"id":6,"zz":1}"#, false),
        (r#"{"tags":[["t"]]}"#, false),
        (r#"{"obj":5}"#, false),
        (r#"{"v":2}"#, false),
        (r#"{"id":7} x"#, false),
        (r#"{"id":8,"obj":{"a":1"#, false),
        (r#"[1]"#, false),
    ];
    for (text, taken) in cases {
        let before = columns.clone();
        assert_eq!(direct.write_text_record(&plan.schema, text, &mut columns, &rules), taken, "{text}");
        if taken {
            let mut tape = crate::value::Tape::default();
            let (root, _) = crate::formats::json::parse_value_prefix(text, &mut tape).unwrap();
            let record = crate::value::ValueRef { tape: &tape, idx: root as usize };
            parsed.write_record(&plan.schema, record, &mut expected, &rules);
            assert_eq!(columns, expected, "{text}");
        } else {
            assert_eq!(columns, before, "{text}");
        }
    }
}
