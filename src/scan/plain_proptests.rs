//! Property test of the router's plain writes (route `write_plain`): a
//! JSON scalar written straight into the one scalar version of a trusted
//! family, or into the element column of a list of one scalar type, gives
//! exactly what the version choice and the general write give: rows, names,
//! registry, drifts and counters, with and without parsers, in additive
//! and strict mode, with projections.

use proptest::prelude::*;

use super::proptests::{comparable_scan, parsed_record, record, to_lines, Comparable};
use super::tests::{projected_rows, run_threads};
use crate::options::ParamValue;
use crate::route::PLAIN_OFF;

/// Held while a test here runs: it turns [`PLAIN_OFF`] on for a while.
pub(super) static SWITCH: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn options() -> impl Strategy<Value = (Vec<(&'static str, ParamValue)>, bool)> {
    (any::<bool>(), prop::bool::weighted(0.2), prop::bool::weighted(0.3)).prop_map(|(parsers, nanos, strict)| {
        let mut p = Vec::new();
        if parsers {
            for name in ["parse_integers", "parse_floats", "parse_iso_dates", "parse_iso_timestamps"] {
                p.push((name, ParamValue::Bool(true)));
            }
        }
        if nanos {
            p.push(("timestamp_precision", ParamValue::Str("TIMESTAMP_NANOS".into())));
        }
        (p, strict)
    })
}

/// The whole run and the scan of `mask`'s columns alone.
pub(super) fn runs(
    path: &str,
    params: &[(&str, ParamValue)],
    threads: usize,
    mask: &[bool],
) -> (Comparable, Option<Vec<Vec<serde_json::Value>>>) {
    let whole = comparable_scan(run_threads(path, params, threads));
    let jsonl = crate::options::InputFormat::Jsonl;
    let projected = projected_rows("sanitize_jsonl", jsonl, path, params, (threads, super::plan_on), mask);
    (whole, projected)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(64), .. ProptestConfig::default() })]

    #[test]
    fn plain_writes_never_change_the_result(
        records in prop::collection::vec(prop_oneof![record(), parsed_record()], 1..30),
        first in 1usize..30,
        (params, strict) in options(),
        threads in 1usize..4,
        mask in prop::collection::vec(any::<bool>(), 0..8),
    ) {
        let dir = crate::test_support::scratch_dir("plain");
        let path = dir.join("r.jsonl").to_string_lossy().into_owned();
        std::fs::write(&path, to_lines(&records)).unwrap();
        let mut params = params;
        if strict {
            // The registry of the first records alone: later ones may not fit.
            let head = dir.join("head.jsonl").to_string_lossy().into_owned();
            std::fs::write(&head, to_lines(&records[..first.min(records.len())])).unwrap();
            if let Ok((run, _)) = run_threads(&head, &params, 1) {
                params.push(("registry", ParamValue::Str(run.plan.registry_json.clone())));
                params.push(("schema_mode", ParamValue::Str("strict".into())));
                params.push(("on_error", ParamValue::Str("emit_null_row".into())));
            }
        }
        let _switch = SWITCH.lock().unwrap_or_else(|p| p.into_inner());
        let plain = runs(&path, &params, threads, &mask);
        let general = PLAIN_OFF.on_for(|| runs(&path, &params, threads, &mask));
        let _ = std::fs::remove_dir_all(&dir);
        prop_assert_eq!(plain.0, general.0, "records {:?}", records);
        prop_assert_eq!(plain.1, general.1, "records {:?}", records);
    }
}
