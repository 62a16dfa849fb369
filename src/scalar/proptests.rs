//! Property tests: parsing never panics, and a formatted value parses back
//! to itself.

use proptest::prelude::*;

use super::strftime::format_for_test;
use super::*;
use crate::scan::format_utc_micros;
use crate::value::calendar::{civil_from_days, days_from_civil};

fn all_parsers() -> ScalarParsers {
    ScalarParsers {
        integers: true,
        floats: Some(FloatFormat::default()),
        true_tokens: vec!["yes".into(), "sí".into()],
        false_tokens: vec!["no".into()],
        iso_timestamps: true,
        iso_dates: true,
        iso_times: true,
        formats: DateFormats::compile(
            &["%a %b %d %H:%M:%S %z %Y".into(), "%d/%m/%Y %I:%M %p".into()],
            &["%d/%m/%Y".into(), "%e %B %y".into()],
            &["%H:%M:%S.%f".into()],
        )
        .unwrap(),
        custom: CustomPatterns::compile(
            &[r"(\d{4})/(\d{2})/(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z)?".into()],
            &[r"(\d+)#(\d+)#(\d+)".into()],
            &[r"(\d+)\|(\d+)\|(\d+)".into()],
        )
        .unwrap(),
    }
}

/// Groups the integer digits of `n` with `sep` every three digits.
fn grouped(n: u64, sep: char) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(sep);
        }
        out.push(c);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(512), .. ProptestConfig::default() })]

    #[test]
    fn parsing_never_panics(s in "\\PC{0,40}") {
        let p = all_parsers();
        let _ = p.parse(&s);
        let _ = parse_float(&s, FloatFormat { decimal: b',', thousands: b'.' });
    }

    #[test]
    fn parsing_never_panics_on_number_like_text(s in "[-+0-9.,eE: TZ/#|]{0,30}") {
        let _ = all_parsers().parse(&s);
    }

    /// The integer grammar, by its definition: an optional sign, then
    /// ASCII digits without a leading zero, within i64 (text of signs,
    /// zeros and digits around every length where overflow begins).
    #[test]
    fn integers_are_what_the_grammar_defines(
        sign in "[-+]?",
        body in prop_oneof!["[0-9a]{0,21}", "[1-9][0-9]{16,19}", "92[0-9]{17}"],
    ) {
        let s = format!("{sign}{body}");
        let digits_ok = !body.is_empty() && body.bytes().all(|c| c.is_ascii_digit()) && !(body.len() > 1 && body.starts_with('0'));
        let expected = if digits_ok { s.parse::<i64>().ok() } else { None };
        prop_assert_eq!(parse_int(&s), expected);
    }

    #[test]
    fn integers_round_trip(n in any::<i64>()) {
        prop_assert_eq!(parse_int(&n.to_string()), Some(n));
        prop_assert_eq!(all_parsers().parse(&format!(" {n}\t")), Parsed::Int(n));
    }

    #[test]
    fn floats_round_trip(f in any::<f64>().prop_filter("finite", |f| f.is_finite())) {
        // Rust's shortest round-trip formatting, in both exponent styles.
        prop_assert_eq!(parse_float(&format!("{f:?}"), FloatFormat::default()), Some(f));
        prop_assert_eq!(parse_float(&format!("{f:e}"), FloatFormat::default()), Some(f)); // exponents have ≤ 3 digits
    }

    #[test]
    fn grouped_floats_round_trip(int in 0u64..10_000_000_000, frac in 0u32..100) {
        let expected = int as f64 + frac as f64 / 100.0;
        let us = format!("{}.{frac:02}", grouped(int, ','));
        prop_assert_eq!(parse_float(&us, FloatFormat::default()), Some(expected));
        let eu = format!("{},{frac:02}", grouped(int, '.'));
        prop_assert_eq!(parse_float(&eu, FloatFormat { decimal: b',', thousands: b'.' }), Some(expected));
    }

    #[test]
    fn timestamps_round_trip(micros in -2_000_000_000_000_000i64..7_000_000_000_000_000, offset_min in -(23 * 60 + 59)..(23 * 60 + 59i64)) {
        // Format the instant in a local offset and parse it back to UTC.
        let local = micros + offset_min * 60_000_000;
        let text = format_utc_micros(local);
        let sign = if offset_min < 0 { '-' } else { '+' };
        let with_offset = format!("{}{sign}{:02}:{:02}", &text[..text.len() - 1], offset_min.abs() / 60, offset_min.abs() % 60);
        let t = parse_iso_timestamp(&with_offset).unwrap();
        prop_assert_eq!(t.secs * 1_000_000 + (t.nanos / 1000) as i64, micros);
    }

    #[test]
    fn dates_round_trip(days in -700_000i64..2_900_000) {
        let (y, m, d) = civil_from_days(days);
        prop_assume!((0..=9999).contains(&y));
        prop_assert_eq!(parse_iso_date(&format!("{y:04}-{m:02}-{d:02}")), Some(days as i32));
        prop_assert_eq!(days_from_civil(y, m, d), Some(days));
    }

    #[test]
    fn parsing_never_panics_on_date_like_text(s in "[-+0-9/:. %APMZaeinrtuyWdJFSOND]{0,34}") {
        let _ = all_parsers().parse(&s);
    }

    #[test]
    fn format_compilation_never_panics(p in "(%-?.|[ ./:a-z]){0,12}") {
        for kind in [PatternKind::Timestamp, PatternKind::Date, PatternKind::Time] {
            let list = [p.clone()];
            let none: [String; 0] = [];
            let compiled = match kind {
                PatternKind::Timestamp => DateFormats::compile(&list, &none, &none),
                PatternKind::Date => DateFormats::compile(&none, &list, &none),
                PatternKind::Time => DateFormats::compile(&none, &none, &list),
            };
            if let Ok(f) = compiled {
                let _ = f.parse(&p, kind);
                let _ = f.parse("Wed Aug 27 13:08:45 +0000 2008", kind);
            }
        }
    }

    /// DuckDB's strftime output of a random instant parses back to it:
    /// for timestamp formats with an offset, the instant in UTC.
    #[test]
    fn strftime_timestamps_round_trip(
        days in -719_162i64..2_932_896, // 0001-01-01 ..= 9999-12-31
        nanos_of_day in 0i64..86_400_000_000_000,
        offset_min in -(23 * 60 + 59)..(23 * 60 + 59i64),
        which in 0usize..5,
    ) {
        let (pattern, keep) = [
            ("%a %b %d %H:%M:%S %z %Y", 0),
            ("%A, %-d %B %Y - %I:%M:%S.%f %p %z", 6),
            ("%Y-%j %H:%M:%S.%n%z", 9),
            ("%d/%m/%Y %H:%M:%S.%g %Z", 3),
            ("%c", 0),
        ][which];
        let unit = 10i64.pow(9 - keep);
        let nanos_of_day = nanos_of_day / unit * unit;
        let offset = if pattern.contains("%z") { offset_min * 60 } else { 0 };
        let text = format_for_test(pattern, PatternKind::Timestamp, days, nanos_of_day, offset);
        let f = DateFormats::compile(&[pattern.into()], &[], &[]).unwrap();
        let want = Instant {
            secs: days * 86_400 + nanos_of_day / 1_000_000_000 - offset,
            nanos: (nanos_of_day % 1_000_000_000) as u32,
        };
        prop_assert_eq!(f.parse(&text, PatternKind::Timestamp), Some(Parsed::Timestamp(want)), "{}", text);
    }

    #[test]
    fn strftime_dates_and_times_round_trip(
        days in -719_162i64..2_932_896,
        nanos_of_day in 0i64..86_400_000_000_000,
        which in 0usize..4,
    ) {
        let date_pattern = ["%d/%m/%Y", "%Y%m%d", "%a %e %b %Y", "%y-%j %u"][which];
        let (y, _, _) = civil_from_days(days);
        let days = if date_pattern.contains("%y") { days_from_civil(1969 + y.rem_euclid(100), 1, 1).unwrap() + days.rem_euclid(365) } else { days };
        let text = format_for_test(date_pattern, PatternKind::Date, days, 0, 0);
        let f = DateFormats::compile(&[], &[date_pattern.into()], &["%I:%M:%S.%n %p".into(), "%H%M%S.%f".into()]).unwrap();
        prop_assert_eq!(f.parse(&text, PatternKind::Date), Some(Parsed::Date(days as i32)), "{}", text);
        let text = format_for_test("%I:%M:%S.%n %p", PatternKind::Time, 0, nanos_of_day, 0);
        prop_assert_eq!(f.parse(&text, PatternKind::Time), Some(Parsed::Time(nanos_of_day)), "{}", text);
        let micros = nanos_of_day / 1000 * 1000;
        let text = format_for_test("%H%M%S.%f", PatternKind::Time, 0, micros, 0);
        prop_assert_eq!(f.parse(&text, PatternKind::Time), Some(Parsed::Time(micros)), "{}", text);
    }
}

/// Letters whose lower case is another length, another script, several
/// characters or depends on the context (the capital sigma), among ASCII.
const CASE_LETTERS: &str = "[aAsSkK\u{212a}\u{130}i\u{307}\u{3a3}\u{3c3}\u{3c2}\u{1e9e}\u{df}\u{c9}\u{e9} ]{0,8}";

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(2048), .. ProptestConfig::default() })]

    /// The token match without allocation answers as `to_lowercase` does,
    /// for tokens that are the string's lower case and for any other.
    #[test]
    fn lowercase_equals_is_to_lowercase(s in CASE_LETTERS, other in CASE_LETTERS, take_lower in any::<bool>()) {
        let lower = if take_lower { s.to_lowercase() } else { other };
        prop_assert_eq!(lowercase_equals(&s, &lower), s.to_lowercase() == lower, "{:?} against {:?}", s, lower);
    }
}

/// Parser sets the single-kind parsers are asked under: each of the
/// number and timestamp parsers on or off, tokens or none (a token that
/// looks like a number among them), and either float format.
fn parser_sets() -> impl Strategy<Value = ScalarParsers> {
    (
        any::<(bool, bool, bool, bool, bool)>(),
        prop::sample::select(vec![(b'.', b','), (b',', b'.'), (b'.', b'-'), (b'-', b'.')]),
    )
        .prop_map(|((integers, floats, stamps, tokens, patterns), (decimal, thousands))| {
            // Compiled once: compiling the patterns per case was most of
            // the time of the tests that draw from here.
            static ALL: std::sync::LazyLock<ScalarParsers> = std::sync::LazyLock::new(all_parsers);
            let all = ALL.clone();
            ScalarParsers {
                integers,
                floats: floats.then_some(FloatFormat { decimal, thousands }),
                true_tokens: if tokens { vec!["1".into(), "yes".into()] } else { Vec::new() },
                false_tokens: if tokens { vec!["0".into()] } else { Vec::new() },
                iso_timestamps: stamps,
                formats: if patterns { all.formats.clone() } else { DateFormats::default() },
                custom: if patterns { all.custom.clone() } else { CustomPatterns::default() },
                ..all
            }
        })
}

/// Text around every grammar the single-kind parsers share with the whole
/// parse: numbers with signs, groups, exponents and spaces, ISO
/// timestamps with their separators and offsets, and text between them.
fn kind_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[-+]?[0-9]{1,20}",
        "[-+]?[0-9]{0,4}[.,-][0-9]{0,4}([eE][-+]?[0-9]{1,4})?",
        " ?[-+]?[0-9]{1,3}([,.][0-9]{3}){0,3}([.,][0-9]{1,3})? ?",
        "[0-9]{4}-[0-9]{2}-[0-9]{2}[T t][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,10})?(Z|[-+][0-9]{2}(:?[0-9]{2})?)?",
        "[-+0-9.,eE:T Z]{0,24}",
        Just("-0".to_string()),
        Just("1".to_string()),
        Just("9007199254740993".to_string()),
        "[ \t]?[a-zA-Zé#][a-z0-9 ,]{0,8}[ \t]?",
        "[-+]?[0-9]{1,4}[a-zA-Z/ ][0-9a-f ]{0,12}",
        "[-+.][a-zA-Z]{1,5} ?",
        "[-+.]?[0-9]{0,36}(\\.[0-9]{0,6})?",
        "[-+]?9[2-9][0-9]{16,18}",
        Just("-9223372036854775808".to_string()),
        Just("9223372036854775808".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(2048), .. ProptestConfig::default() })]

    /// The single-kind parsers a column of one kind uses
    /// (`int_alone`, `float_alone`, `iso_timestamp_alone`) answer only what
    /// the whole parse answers: an integer's double is the float's, with
    /// `-0` keeping its sign as a DOUBLE column writes it.
    #[test]
    fn a_kind_parsed_alone_is_what_the_whole_parse_gives(parsers in parser_sets(), s in kind_text()) {
        let whole = parsers.parse(&s);
        if let Some(n) = parsers.int_alone(s.as_bytes()) {
            prop_assert_eq!(whole, Parsed::Int(n), "int_alone({:?})", s);
        }
        if let Some(f) = parsers.float_alone(s.as_bytes()) {
            let as_double = match whole {
                Parsed::Float(g) => Some(g),
                Parsed::Int(0) if s.trim_start().starts_with('-') => Some(-0.0),
                Parsed::Int(n) => Some(n as f64),
                _ => None,
            };
            prop_assert_eq!(as_double.map(f64::to_bits), Some(f.to_bits()), "float_alone({:?}) = {}, parse {:?}", s, f, whole);
        }
        if let Some(t) = parsers.iso_timestamp_alone(s.as_bytes()) {
            prop_assert_eq!(whole, Parsed::Timestamp(t), "iso_timestamp_alone({:?})", s);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(4096), .. ProptestConfig::default() })]

    /// The kind the probe tells from a text's bytes (`QuickParse::kind`)
    /// is the kind the whole parse gives it, and a timestamp its instant.
    #[test]
    fn a_kind_told_from_the_bytes_is_the_whole_parses(parsers in parser_sets(), s in kind_text()) {
        let whole = parsers.parse(&s);
        if let Some(kind) = QuickParse::of(&parsers).kind(s.as_bytes()) {
            let agrees = match (kind, whole) {
                (QuickKind::Text, Parsed::None) | (QuickKind::Int, Parsed::Int(_)) | (QuickKind::Float, Parsed::Float(_)) => true,
                (QuickKind::Timestamp(t), Parsed::Timestamp(u)) => t == u,
                _ => false,
            };
            prop_assert!(agrees, "{:?}: told {:?}, parsed {:?}", s, kind, whole);
        }
    }
}

/// The single-kind parsers answer the values of a data file (a test that
/// they are no stub that leaves every value to the whole parse), and
/// leave to it what a token or a trim may take.
#[test]
fn a_kind_parsed_alone_answers_plain_values() {
    let plain = ScalarParsers { true_tokens: Vec::new(), false_tokens: Vec::new(), ..all_parsers() };
    assert_eq!(plain.int_alone(b"2999964"), Some(2_999_964));
    assert_eq!(plain.float_alone(b"-65.05830"), Some(-65.0583));
    assert_eq!(plain.float_alone(b"12"), Some(12.0));
    assert_eq!(plain.iso_timestamp_alone(b"2026-01-01T00:00:02Z"), parse_iso_timestamp("2026-01-01T00:00:02Z"));
    assert!(plain.iso_timestamp_alone(b"2026-01-01T00:00:02Z").is_some());
    assert_eq!(plain.int_alone(b" 7"), None, "a trimmed value is the whole parse's");
    let tokens = all_parsers();
    assert_eq!(tokens.int_alone(b"7"), None, "a token may take the text");
    assert_eq!(tokens.float_alone(b"7.5"), None);
    assert_eq!(tokens.iso_timestamp_alone(b"2026-01-01T00:00:02Z"), None);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(4096), .. ProptestConfig::default() })]

    /// A CSV cell's class told from its bytes where they tell it
    /// (`classify_told`, the drifted column's version memo) is the class
    /// and parsed value `classify` gives it, at every timestamp unit (a
    /// year NANOS cannot hold stays text).
    #[test]
    fn a_class_told_from_the_bytes_is_classifys(
        parsers in parser_sets(),
        // Valid ISO timestamps of any year too, most of which NANOS cannot hold.
        s in prop_oneof![
            kind_text(),
            "[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])[T ][01][0-9]:[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,9})?Z?",
        ],
        unit in prop_oneof![
            Just(crate::value::TimeUnit::Seconds),
            Just(crate::value::TimeUnit::Millis),
            Just(crate::value::TimeUnit::Micros),
            Just(crate::value::TimeUnit::Nanos),
        ],
    ) {
        use crate::infer::{classify, classify_told, DepthLimits, Level, Rules};
        let mut tape = crate::value::Tape::default();
        tape.push_string(&s);
        let rules = Rules {
            limits: DepthLimits { arrow_max_depth: 32, parquet_max_depth: 15 },
            scalar_object_key: "v",
            parsers: &parsers,
            timestamp_unit: unit,
            policies: None,
            columns: crate::infer::ColumnLimit::NONE,
        };
        let value = crate::value::ValueRef { tape: &tape, idx: 0 };
        let told = classify_told(&QuickParse::of(&parsers), value, &rules);
        let whole = classify(value, Level::default(), &rules);
        prop_assert_eq!((told.class, told.parsed, told.level), (whole.class, whole.parsed, whole.level), "{:?}", s);
    }
}
