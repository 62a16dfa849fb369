//! End-to-end engine tests: JSONL text in, schema and rows out, no DuckDB.

use std::io::Write;
use std::sync::Arc;

use serde_json::{json, Value};

use super::{Chunk, ScanPlan, Scanner};
use crate::options::{InputFormat, Options, ParamValue};

#[derive(Debug)]
pub(crate) struct Run {
    pub plan: Arc<ScanPlan>,
    /// Column name → values, one per row.
    pub rows: Vec<Vec<Value>>,
    pub names: Vec<String>,
}

impl Run {
    pub fn column(&self, name: &str) -> Vec<Value> {
        let i =
            self.names.iter().position(|n| n == name).unwrap_or_else(|| panic!("no column {name} in {:?}", self.names));
        self.rows.iter().map(|r| r[i].clone()).collect()
    }
    pub fn registry(&self) -> Value {
        serde_json::from_str(&self.plan.registry_json).unwrap()
    }
    pub fn drifts(&self) -> Vec<Value> {
        serde_json::from_str::<Vec<Value>>(&self.plan.drifts_json).unwrap()
    }
}

pub(crate) fn run(lines: &str, params: &[(&str, ParamValue)]) -> Result<Run, String> {
    let dir = std::env::temp_dir().join(format!("ss-test-{}-{}", std::process::id(), rand_suffix()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("input.jsonl");
    std::fs::File::create(&path).unwrap().write_all(lines.as_bytes()).unwrap();
    let result = run_file(path.to_str().unwrap(), params);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

pub(crate) fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

pub(crate) fn run_file(path: &str, params: &[(&str, ParamValue)]) -> Result<Run, String> {
    run_format("sanitize_jsonl", InputFormat::Jsonl, path, params)
}

/// Runs `function` over `path` (a file, or a directory with `input_mode`).
pub(crate) fn run_format(
    function: &str,
    format: InputFormat,
    path: &str,
    params: &[(&str, ParamValue)],
) -> Result<Run, String> {
    run_planned(function, format, vec![path.to_string()], params, super::plan_on)
}

/// Like [`run_format`], with the plan a table function's scan uses (for
/// Parquet: a probe of the declared schemas only).
pub(crate) fn run_format_scan(
    function: &str,
    format: InputFormat,
    path: &str,
    params: &[(&str, ParamValue)],
) -> Result<Run, String> {
    run_planned(function, format, vec![path.to_string()], params, super::plan_scan_on)
}

pub(crate) type Planner = fn(&str, Vec<String>, Options, usize) -> crate::error::Result<super::ScanPlan>;

/// Runs `function` over `paths` (one path, a glob, or a list).
pub(crate) fn run_paths(paths: Vec<String>, params: &[(&str, ParamValue)]) -> Result<Run, String> {
    run_planned("sanitize_jsonl", InputFormat::Jsonl, paths, params, super::plan_on)
}

fn run_planned(
    function: &str,
    format: InputFormat,
    paths: Vec<String>,
    params: &[(&str, ParamValue)],
    planner: Planner,
) -> Result<Run, String> {
    run_planned_with(function, format, paths, params, planner, 2).map(|(run, _)| run)
}

/// Runs a JSON Lines file with `threads` threads (DuckDB's setting, which
/// no parameter gives); also returns the scan's counters.
pub(crate) fn run_threads(
    path: &str,
    params: &[(&str, ParamValue)],
    threads: usize,
) -> Result<(Run, super::Stats), String> {
    run_threads_as("sanitize_jsonl", InputFormat::Jsonl, path, params, threads)
}

/// [`run_threads`] for any format.
pub(crate) fn run_threads_as(
    function: &str,
    format: InputFormat,
    path: &str,
    params: &[(&str, ParamValue)],
    threads: usize,
) -> Result<(Run, super::Stats), String> {
    run_planned_with(function, format, vec![path.to_string()], params, super::plan_on, threads)
}

/// Runs `function` over `paths` planned by `planner` (`super::plan_on`, or
/// `super::plan_scan_on`: the plan a table function's scan uses) on
/// `threads` threads; also returns the scan's counters.
pub(crate) fn run_planned_with(
    function: &str,
    format: InputFormat,
    paths: Vec<String>,
    params: &[(&str, ParamValue)],
    planner: Planner,
    threads: usize,
) -> Result<(Run, super::Stats), String> {
    let options = Options::parse(function, Some(format), params).map_err(|e| e.message)?;
    let plan = Arc::new(planner(function, paths, options, threads).map_err(|e| e.message)?);
    let mut names: Vec<String> = plan.schema.output_versions().map(|v| v.output_name.clone()).collect();
    names.extend(plan.partitions.columns.iter().map(|c| c.name.clone()));
    names.extend(plan.options.rescue_column.clone());
    let mut scanner = Scanner::new(Arc::clone(&plan));
    let rows = scan_rows(&mut scanner, &plan, |_| true)?;
    assert_eq!(scanner.stats.rows_read, scanner.stats.rows_emitted + scanner.stats.rows_skipped);
    Ok((Run { plan, rows, names }, scanner.stats))
}

/// Every row `scanner` gives, each column `keep` keeps as JSON (a
/// projected scan leaves the other columns empty).
pub(crate) fn scan_rows(
    scanner: &mut Scanner,
    plan: &ScanPlan,
    keep: impl Fn(usize) -> bool,
) -> Result<Vec<Vec<Value>>, String> {
    let mut chunk = Chunk::new(plan);
    let mut rows = Vec::new();
    while scanner.next_chunk(&mut chunk).map_err(|e| e.message)? > 0 {
        rows.extend(
            (0..chunk.rows).map(|r| {
                chunk.columns.iter().enumerate().filter(|(i, _)| keep(*i)).map(|(_, c)| c.row_json(r)).collect()
            }),
        );
    }
    Ok(rows)
}

/// The rows of a scan of `mask`'s top-level columns alone (projection
/// pushdown: a column past the mask is wanted), planned by `planner`;
/// `None` when the options or the plan fail.
pub(crate) fn projected_rows(
    function: &str,
    format: InputFormat,
    path: &str,
    params: &[(&str, ParamValue)],
    (threads, planner): (usize, Planner),
    mask: &[bool],
) -> Option<Vec<Vec<Value>>> {
    let options = Options::parse(function, Some(format), params).ok()?;
    let plan = Arc::new(planner(function, vec![path.to_string()], options, threads).ok()?);
    let wanted: Vec<bool> = (0..plan.schema.outputs.len()).map(|i| mask.get(i).copied().unwrap_or(true)).collect();
    let mut scanner = Scanner::new(Arc::clone(&plan));
    scanner.project(wanted.clone());
    scan_rows(&mut scanner, &plan, |i| wanted.get(i).copied().unwrap_or(true)).ok()
}

fn s(v: &str) -> ParamValue {
    ParamValue::Str(v.to_string())
}

#[test]
fn flat_inference_types_and_nulls() {
    let r = run(
        "{\"i\":1,\"f\":1.5,\"b\":true,\"s\":\"x\",\"n\":null}\n{\"i\":2,\"f\":2,\"s\":null}\n{\"missing\":true}\n",
        &[],
    )
    .unwrap();
    assert_eq!(r.names, ["b", "f", "i", "missing", "s"]);
    assert_eq!(r.column("f"), [json!(1.5), json!(2.0), Value::Null]);
    assert_eq!(r.column("i"), [json!(1), json!(2), Value::Null]);
    assert_eq!(r.column("s"), [json!("x"), Value::Null, Value::Null]);
    // `n` was only ever null: no evidence, no column.
    assert!(!r.names.contains(&"n".to_string()));
}

#[test]
fn the_amount_family_routes_each_value_once() {
    let r = run("{\"amount\":\"unknown\"}\n{\"amount\":7}\n{\"amount\":2.5}\n{\"amount\":null}\n", &[]).unwrap();
    // Within one scan, 7 and 2.5 reconcile to one float version (v2).
    assert_eq!(r.names, ["amount", "amount_v2_float"]);
    assert_eq!(r.column("amount"), [json!("unknown"), Value::Null, Value::Null, Value::Null]);
    assert_eq!(r.column("amount_v2_float"), [Value::Null, json!(7.0), json!(2.5), Value::Null]);
    let d = r.drifts();
    assert_eq!(d[1]["drift_type"], "new_version_generated");
    assert_eq!(d[1]["output_name"], "amount_v2_float");
    assert_eq!(d[1]["previous_schema"], "string");
    assert_eq!(d[1]["new_schema"], "double");
}

#[test]
fn a_registry_carries_versions_into_the_next_run() {
    let first = run("{\"amount\":\"unknown\"}\n{\"amount\":7}\n", &[]).unwrap();
    assert_eq!(first.names, ["amount", "amount_v2_integer"]);
    let registry = first.plan.registry_json.clone();
    // The next run sees a float: an established integer column is a
    // contract and is not widened, so a third version appears.
    let second =
        run("{\"amount\":2.5}\n{\"amount\":8}\n{\"amount\":\"n/a\"}\n", &[("registry", s(&registry))]).unwrap();
    assert_eq!(second.names, ["amount", "amount_v2_integer", "amount_v3_float"]);
    assert_eq!(second.column("amount_v3_float"), [json!(2.5), Value::Null, Value::Null]);
    assert_eq!(second.column("amount_v2_integer"), [Value::Null, json!(8), Value::Null]);
    assert_eq!(second.column("amount"), [Value::Null, Value::Null, json!("n/a")]);
    assert_eq!(second.registry()["schema_generation"], json!(2));
    // Repeating a known shape changes nothing, not even the generation.
    let third = run("{\"amount\":9}\n", &[("registry", s(&second.plan.registry_json))]).unwrap();
    assert_eq!(third.plan.registry_json, second.plan.registry_json);
    assert_eq!(third.drifts(), Vec::<Value>::new());
}

#[test]
fn an_established_double_takes_integers_without_a_new_version() {
    let first = run("{\"x\":1.5}\n", &[]).unwrap();
    let second = run("{\"x\":3}\n", &[("registry", s(&first.plan.registry_json))]).unwrap();
    assert_eq!(second.names, ["x"]);
    assert_eq!(second.column("x"), [json!(3.0)]);
    assert_eq!(second.registry()["schema_generation"], json!(1));
}

#[test]
fn singletons_wrap_into_lists_and_scalars_into_structs() {
    let r = run("{\"t\":[1,2],\"o\":{\"a\":1}}\n{\"t\":3,\"o\":5}\n{\"t\":[],\"o\":{}}\n", &[]).unwrap();
    assert_eq!(r.names, ["o", "t"]);
    assert_eq!(r.column("t"), [json!([1, 2]), json!([3]), Value::Null]);
    // Struct children in alphabetical order: a, default_key → defaultkey (lower_alpha).
    assert_eq!(r.column("o"), [json!([1, null]), json!([null, 5]), Value::Null]);
    let reg = r.registry();
    let o = &reg["canonical_schema"]["fields"][0]["type"]["fields"];
    assert_eq!(o[1]["name"], "defaultkey");
    assert_eq!(o[1]["source_key"], "default_key");
}

#[test]
fn empty_containers_are_no_evidence_and_keep_list_positions() {
    let r = run("{\"e\":{},\"l\":[],\"x\":{\"y\":{}}}\n{\"l\":[[1],[],[2]]}\n", &[]).unwrap();
    assert_eq!(r.names, ["l"]);
    assert_eq!(r.column("l"), [Value::Null, json!([[1], null, [2]])]);
}

#[test]
fn drift_inside_a_struct_versions_the_child_not_the_struct() {
    let r = run(
        "{\"sentiment\":[{\"magnitude\":0.5}]}\n{\"sentiment\":[{\"magnitude\":\"high\"}]}\n",
        &[("field_name_policy", s("lower_snake"))],
    )
    .unwrap();
    assert_eq!(r.names, ["sentiment"]);
    assert_eq!(r.column("sentiment"), [json!([[0.5, null]]), json!([[null, "high"]])]);
    let t = &r.registry()["canonical_schema"]["fields"][0]["type"];
    assert_eq!(t["kind"], "list");
    assert_eq!(t["element"]["fields"][1]["name"], "magnitude_v2_string");
    let d = r.drifts();
    assert!(
        d.iter().any(|e| e["source_path"] == "sentiment[].magnitude" && e["output_name"] == "magnitude_v2_string"),
        "{d:?}"
    );
}

#[test]
fn an_established_struct_gets_a_list_version_and_singletons_route_to_it() {
    let first = run("{\"items\":{\"sku\":\"a\"}}\n", &[]).unwrap();
    let second = run(
        "{\"items\":[{\"sku\":\"b\"},{\"sku\":\"c\"}]}\n{\"items\":{\"sku\":\"d\"}}\n",
        &[("registry", s(&first.plan.registry_json))],
    )
    .unwrap();
    assert_eq!(second.names, ["items", "items_v2_struct_array"]);
    // Both the array and the compatible singleton object go to the list version.
    assert_eq!(second.column("items_v2_struct_array"), [json!([["b"], ["c"]]), json!([["d"]])]);
    assert_eq!(second.column("items"), [Value::Null, Value::Null]);
}

#[test]
fn reserved_top_level_names_fail_but_nested_ones_are_fine() {
    let e = run("{\"source_file\":1}\n", &[]).unwrap_err();
    assert!(e.contains("reserved column name \"source_file\""), "{e}");
    let e = run("{\"Schema Drifts\":1}\n", &[("field_name_policy", s("lower_snake"))]).unwrap_err();
    assert!(e.contains("schema_drifts"), "{e}");
    let r = run("{\"payload\":{\"source_file\":\"a.csv\"}}\n", &[]).unwrap();
    assert_eq!(r.column("payload"), [json!(["a.csv"])]);
}

#[test]
fn a_nul_in_a_preserved_key_never_makes_two_columns_of_one_name() {
    // A NUL cannot be in a DuckDB column name: the key's name has a space
    // there, and beside a key that has that space the two get suffixes.
    for lines in ["{\"foo\\u0000bar\": 1, \"foo bar\": 2}\n", "{\"s\": {\"foo\\u0000bar\": 1, \"foo bar\": 2}}\n"] {
        let r = run(lines, &[("field_name_policy", s("preserve"))]).unwrap();
        let reg = r.registry();
        let mut names: Vec<String> = Vec::new();
        fn collect(v: &Value, out: &mut Vec<String>) {
            if let Some(fields) = v["fields"].as_array() {
                for f in fields {
                    out.push(f["name"].as_str().unwrap_or_default().to_string());
                    collect(&f["type"], out);
                }
            }
        }
        collect(&reg["canonical_schema"], &mut names);
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        assert!(names.iter().all(|n| !n.contains('\0')), "{names:?}");
    }
    // Both values are kept, nested too.
    let r = run("{\"s\": {\"foo\\u0000bar\": 1, \"foo bar\": 2}}\n", &[("field_name_policy", s("preserve"))]).unwrap();
    let row = r.column("s");
    assert_eq!(row[0].as_array().map(|a| a.len()), Some(2), "{row:?}");
    assert!(row[0].as_array().unwrap().contains(&json!(1)), "{row:?}");
}

#[test]
fn collisions_get_suffixes_that_do_not_depend_on_order() {
    let a = run("{\"Name\":1,\"name\":2,\"NAME\":3}\n", &[]).unwrap();
    let b = run("{\"NAME\":3}\n{\"name\":2}\n{\"Name\":1}\n", &[]).unwrap();
    let mut na = a.names.clone();
    let mut nb = b.names.clone();
    na.sort();
    nb.sort();
    assert_eq!(na, nb);
    assert!(a.names.contains(&"name".to_string()), "the key spelled like the name keeps it: {:?}", a.names);
    let e = run("{\"$$$\":1}\n", &[]).unwrap();
    assert!(e.names[0].starts_with("field_"), "{:?}", e.names);
}

#[test]
fn depth_limits_flatten_to_json_text() {
    let r = run("{\"a\":{\"b\":{\"c\":[1,{\"d\":2}]}}}\n", &[("arrow_max_depth", ParamValue::Int(2))]).unwrap();
    // a (level 1) and b (level 2) stay structs; c would be level 3.
    assert_eq!(r.column("a"), [json!([["[1,{\"d\":2}]"]])]);
    assert_eq!(r.plan.probe_stats.values_flattened, 1);
    // parquet_max_depth counts structs only: the list adds no RECORD level,
    // so its element struct is level 1 and b would be level 2.
    let r = run("{\"a\":[{\"b\":{\"c\":1}}]}\n", &[("parquet_max_depth", ParamValue::Int(1))]).unwrap();
    assert_eq!(r.column("a"), [json!([["{\"c\":1}"]])]);
}

#[test]
fn bad_lines_follow_on_error() {
    let text = "{\"a\":1}\nnot json\n{\"a\":2}\n";
    let r = run(text, &[]).unwrap();
    assert_eq!(r.column("a"), [json!(1), Value::Null, json!(2)]);
    let r = run(text, &[("on_error", s("skip_row"))]).unwrap();
    assert_eq!(r.column("a"), [json!(1), json!(2)]);
    let e = run(text, &[("on_error", s("stop"))]).unwrap_err();
    assert!(e.contains("line 2") && e.contains("input.jsonl") && e.contains("on_error"), "{e}");
}

#[test]
fn strict_mode_uses_the_registry_and_nulls_what_does_not_fit() {
    let first = run("{\"a\":1,\"b\":\"x\"}\n", &[]).unwrap();
    let reg = first.plan.registry_json.clone();
    let params = |mode: &str| vec![("registry", s(&reg)), ("schema_mode", s("strict")), ("on_error", s(mode))];
    let text = "{\"a\":2,\"b\":\"y\"}\n{\"a\":\"oops\",\"b\":\"z\",\"c\":1}\n";
    let r = run(text, &params("emit_null_row")).unwrap();
    assert_eq!(r.names, ["a", "b"]);
    assert_eq!(r.column("a"), [json!(2), Value::Null]);
    assert_eq!(r.column("b"), [json!("y"), json!("z")]);
    let r = run(text, &params("skip_row")).unwrap();
    assert_eq!(r.column("a"), [json!(2)]);
    let e = run(text, &params("stop")).unwrap_err();
    assert!(e.contains("line 2") && e.contains("strict"), "{e}");
}

#[test]
fn registry_policy_must_match() {
    let first = run("{\"a\":1}\n", &[]).unwrap();
    let e = run("{\"a\":1}\n", &[("registry", s(&first.plan.registry_json)), ("field_name_policy", s("preserve"))])
        .unwrap_err();
    assert!(e.contains("field_name_policy 'lower_alpha'"), "{e}");
}

#[test]
fn schema_contract_first_keeps_registered_fields_first() {
    let first = run("{\"zeta\":1,\"alpha\":2}\n", &[("column_order", s("schema_contract_first"))]).unwrap();
    assert_eq!(first.names, ["alpha", "zeta"]);
    let second = run(
        "{\"beta\":1,\"zeta\":1,\"aardvark\":1}\n",
        &[("registry", s(&first.plan.registry_json)), ("column_order", s("schema_contract_first"))],
    )
    .unwrap();
    assert_eq!(second.names, ["alpha", "zeta", "aardvark", "beta"]);
}

#[test]
fn boundary_sizes_and_a_drift_in_the_last_row() {
    for n in [2047usize, 2048, 2049, 5000] {
        let mut text = String::new();
        for i in 0..n - 1 {
            text.push_str(&format!("{{\"i\":{i}}}\n"));
        }
        text.push_str("{\"i\":\"last\"}\n");
        let r = run(&text, &[]).unwrap();
        assert_eq!(r.rows.len(), n);
        assert_eq!(r.names, ["i", "i_v2_string"]);
        assert_eq!(r.column("i_v2_string")[n - 1], json!("last"));
        assert_eq!(r.column("i")[n - 2], json!(n as i64 - 2));
    }
}

#[test]
fn the_rescue_column_keeps_what_strict_mode_does_not_take_by_path() {
    let reg = run("{\"a\": {\"b\": 1}, \"items\": [1], \"n\": 1}\n", &[]).unwrap().plan.registry_json.clone();
    let params =
        [("registry", s(&reg)), ("schema_mode", s("strict")), ("rescue_column", s("_r")), ("on_error", s("skip_row"))];
    let r = run(
        "{\"a\": {\"b\": \"x\"}, \"items\": [1, \"y\", 2, \"z\"], \"n\": 2, \"new\": [1]}\n{\"a\": {\"b\": 3}, \"n\": 99999999999999999999}\n",
        &params,
    )
    .unwrap();
    // Present values that fit stay typed; the others are kept by path (in
    // the order they are met: unknown fields first), list elements
    // together under `items[]`.
    assert_eq!(r.column("n"), [json!(2), Value::Null]);
    assert_eq!(r.column("items"), [json!([1, null, 2, null]), Value::Null]);
    // (A struct row as its children in order.)
    assert_eq!(r.column("a"), [json!([null]), json!([3])]);
    assert_eq!(r.column("_r"), [json!(r#"{"new":[1],"a.b":"x","items[]":["y","z"]}"#), json!(r#"{"n":1e20}"#)]);
}

#[test]
fn under_the_bigquery_profile_a_list_element_no_type_takes_is_dropped_not_null() {
    let profile = ("bigquery_profile", ParamValue::Bool(true));
    let reg = run("{\"l\": [1, 2]}\n", std::slice::from_ref(&profile)).unwrap().plan.registry_json.clone();
    let params = [profile, ("registry", s(&reg)), ("schema_mode", s("strict")), ("on_error", s("emit_null_row"))];
    let r = run("{\"l\": [1, \"x\", 3]}\n", &params).unwrap();
    assert_eq!(r.column("l"), [json!([1, 3])]);
    // Without the profile (a registry without it) the element keeps its
    // place as a NULL.
    let plain = run("{\"l\": [1, 2]}\n", &[]).unwrap().plan.registry_json.clone();
    let params = [("registry", s(&plain)), ("schema_mode", s("strict")), ("on_error", s("emit_null_row"))];
    let r = run("{\"l\": [1, \"x\", 3]}\n", &params).unwrap();
    assert_eq!(r.column("l"), [json!([1, null, 3])]);
}

#[test]
fn an_integer_beside_json_text_opens_its_own_version_whatever_its_parents_versions() {
    // `f` has two versions when `{"x": 5}` comes, the struct taking it as
    // it is; `x`'s JSON-text version would take 5 only as text: it opens
    // x_v2 BIGINT, as it does when `f` has one version (no string parser:
    // the as-is rule of the lattice holds only parsed strings).
    let two = run("{\"f\": [1, \"a\"]}\n{\"f\": {\"x\": [1, \"a\"]}}\n{\"f\": {\"x\": 5}}\n", &[]).unwrap();
    let one = run("{\"f\": {\"x\": [1, \"a\"]}}\n{\"f\": {\"x\": 5}}\n", &[]).unwrap();
    for r in [&two, &one] {
        assert!(r.plan.registry_json.contains("\"output_name\":\"x_v2_integer\""), "{}", r.plan.registry_json);
    }
}

/// A UTF-16 file read without `input_text_encoding` (found by its first
/// bytes: source/decode.rs `head_mark`) gives the UTF-8 file's rows, at
/// every range size and thread count: such a file is never cut into byte
/// ranges, which would read its later ranges as UTF-8. Read as UTF-8, a
/// UTF-16 CSV file was valid text with a zero byte in every other place,
/// and gave clean-looking columns of garbage with nothing counted as bad.
#[test]
fn utf16_files_read_like_their_utf8_text_without_the_option() {
    let dir = std::env::temp_dir().join(format!("ss-utf16-{}-{}", std::process::id(), rand_suffix()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut csv = String::from("id,city\n");
    let mut jsonl = String::new();
    for i in 0..500 {
        csv.push_str(&format!("{i},\"Málaga, {i}\"\n"));
        jsonl.push_str(&format!("{{\"id\": {i}, \"city\": \"Málaga {i}\"}}\n"));
    }
    let write = |name: &str, bytes: Vec<u8>| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path.to_str().unwrap().to_string()
    };
    let le = |t: &str| t.encode_utf16().flat_map(|u| u.to_le_bytes()).collect::<Vec<u8>>();
    let be = |t: &str| t.encode_utf16().flat_map(|u| u.to_be_bytes()).collect::<Vec<u8>>();
    for (function, format, text, ext) in
        [("sanitize_csv", InputFormat::Csv, &csv, "csv"), ("sanitize_jsonl", InputFormat::Jsonl, &jsonl, "jsonl")]
    {
        let utf8 = write(&format!("utf8.{ext}"), text.as_bytes().to_vec());
        let expected = run_format(function, format, &utf8, &[]).unwrap().rows;
        assert_eq!(expected.len(), 500);
        let variants = [
            write(&format!("bom_le.{ext}"), [b"\xFF\xFE".to_vec(), le(text)].concat()),
            write(&format!("bom_be.{ext}"), [b"\xFE\xFF".to_vec(), be(text)].concat()),
            write(&format!("le.{ext}"), le(text)),
            write(&format!("be.{ext}"), be(text)),
        ];
        for path in &variants {
            for threads in [1, 2, 4] {
                let params = [("scan_range_bytes", ParamValue::Int(97))];
                let (r, _) = run_threads_as(function, format, path, &params, threads).unwrap();
                assert_eq!(r.rows, expected, "{path} at threads = {threads}");
            }
        }
        // Under a given 'utf-8' a UTF-16 byte-order mark is an error, not text.
        let params = [("input_text_encoding", s("utf-8"))];
        let e = run_format(function, format, &variants[0], &params).err().unwrap();
        assert!(e.contains("starts with a UTF-16 byte-order mark, but input_text_encoding is 'utf-8'"), "{e}");
        // UTF-32 (by its byte-order mark) is refused; a UTF-16 guess from
        // zero bytes yields to a given 'utf-8'.
        let utf32: Vec<u8> = text.chars().flat_map(|c| (c as u32).to_le_bytes()).collect();
        let utf32 = write(&format!("utf32.{ext}"), [b"\xFF\xFE\0\0".to_vec(), utf32].concat());
        let e = run_format(function, format, &utf32, &[]).err().unwrap();
        assert!(e.contains("starts with a UTF-32 byte-order mark"), "{e}");
        let params = [("input_text_encoding", s("utf-8")), ("on_error", s("skip_row"))];
        let as_given = run_format(function, format, &variants[2], &params);
        assert!(as_given.is_ok_and(|r| r.rows != expected), "read as UTF-8, not UTF-16");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A gzip stream inside a `.gz` file is named as compressed twice, not
/// told to be named `.gz` (it is).
#[test]
fn a_file_compressed_twice_is_named_as_such() {
    use std::io::Write as _;
    let gzip = |bytes: &[u8]| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    };
    let dir = std::env::temp_dir().join(format!("ss-twice-{}-{}", std::process::id(), rand_suffix()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("rows.csv.gz");
    std::fs::write(&path, gzip(&gzip(b"a,b\n1,2\n"))).unwrap();
    let e = run_format("sanitize_csv", InputFormat::Csv, path.to_str().unwrap(), &[]).err().unwrap();
    assert!(e.contains("holds gzip-compressed data inside its gzip stream (compressed twice)"), "{e}");
    assert!(!e.contains("name it .gz"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_lone_surrogate_makes_a_bad_record_of_its_encoding_in_every_json_format() {
    // Never a silent U+FFFD: the record is bad, and the records around it read.
    let text = "{\"a\":1,\"s\":\"x\"}\n{\"a\":2,\"s\":\"\\ud800\"}\n{\"a\":3,\"s\":\"\\ud83d\\ude00\"}\n";
    let r = run(text, &[]).unwrap();
    assert_eq!(r.column("a"), [json!(1), Value::Null, json!(3)]);
    assert_eq!(r.column("s"), [json!("x"), Value::Null, json!("😀")]);
    let r = run(text, &[("on_error", s("skip_row"))]).unwrap();
    assert_eq!(r.column("a"), [json!(1), json!(3)]);
    let e = run(text, &[("on_error", s("stop"))]).unwrap_err();
    assert!(
        e.contains(r#"at line 2 (byte 16): undecodable JSON string in the line: invalid \u escape: lone surrogate \ud800 (invalid UTF-16) at byte 12 of the record"#),
        "{e}"
    );
    // A JSON document read on after it, and a JSON array's element.
    let dir = std::env::temp_dir().join(format!("ss-surrogate-{}-{}", std::process::id(), rand_suffix()));
    std::fs::create_dir_all(&dir).unwrap();
    // A scan whose query does not use `s` reads its value for its syntax
    // only (projection pushdown), by the same code: the record is as bad.
    let lines = dir.join("l.jsonl");
    std::fs::write(&lines, text).unwrap();
    let r = run_file(lines.to_str().unwrap(), &[]).unwrap();
    let mut scanner = Scanner::new(Arc::clone(&r.plan));
    scanner.project(r.names.iter().map(|n| n == "a").collect());
    let rows = scan_rows(&mut scanner, &r.plan, |c| c == 0).unwrap();
    assert_eq!(rows.iter().map(|row| row[0].clone()).collect::<Vec<_>>(), [json!(1), Value::Null, json!(3)]);
    assert_eq!(scanner.stats.rows_nulled, 1);
    let doc = dir.join("d.json");
    std::fs::write(&doc, "{\n  \"a\": 1,\n  \"s\": \"\\udc00\"\n}\n{\n  \"a\": 2\n}\n").unwrap();
    let r = run_format("sanitize_json", InputFormat::Json, doc.to_str().unwrap(), &[]).unwrap();
    assert_eq!(r.column("a"), [Value::Null, json!(2)]);
    let array = dir.join("a.json");
    std::fs::write(&array, "[{\"a\": 1}, {\"a\": 2, \"s\": \"\\ud800\\u0041\"}, {\"a\": 3}]").unwrap();
    let r = run_format("sanitize_json_array", InputFormat::JsonArray, array.to_str().unwrap(), &[]).unwrap();
    assert_eq!(r.column("a"), [json!(1), Value::Null, json!(3)]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Three CSV files whose header grows, then shrinks and turns around: a
/// column added (`amount`), one dropped (`name`) and the rest reordered.
fn growing_csv_files(dir: &std::path::Path) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    let files = [
        ("day1.csv", "id,name\n1,a\n2,b\n".to_string()),
        ("day2.csv", "id,name,amount\n3,c,10\n".to_string()),
        // Enough rows, one with a quoted delimiter, that small ranges start
        // inside this file, past its header.
        (
            "day3.csv",
            format!("amount,id\n2.5,4\n,5\n\"1,5\",6\n{}", (7..40).map(|i| format!("{i}.5,{i}\n")).collect::<String>()),
        ),
    ];
    files
        .iter()
        .map(|(name, text)| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            path.to_string_lossy().into_owned()
        })
        .collect()
}

#[test]
fn csv_files_whose_headers_differ_are_read_by_name_with_union_by_name() {
    let dir = std::env::temp_dir().join(format!("ss-union-{}-{}", std::process::id(), rand_suffix()));
    let files = growing_csv_files(&dir);
    let glob = vec![format!("{}/*.csv", dir.to_string_lossy())];
    let csv = |paths: Vec<String>, params: &[(&str, ParamValue)]| {
        run_planned("sanitize_csv", InputFormat::Csv, paths, params, super::plan_on)
    };
    // Without the option: refused before any row, naming it. A glob, a
    // list and a directory alike.
    let directory = [("input_mode", s("directory"))];
    for (paths, params) in
        [(glob.clone(), &[][..]), (files.clone(), &[][..]), (vec![dir.to_string_lossy().into_owned()], &directory[..])]
    {
        let e = csv(paths, params).unwrap_err();
        assert!(
            e.ends_with(&format!(
                "the header of \"{}\" (id,name,amount) differs from the header of \"{}\" (id,name); files read as one input must share one header: pass union_by_name := true to match their columns by name",
                files[1], files[0]
            )),
            "{e}"
        );
    }
    let union = [("union_by_name", ParamValue::Bool(true))];
    let r = csv(glob.clone(), &union).unwrap();
    assert_eq!(r.names, ["amount", "id", "name"]);
    // Each file's cells under its own header's names; NULL where a file
    // has no such column.
    assert_eq!(r.column("id")[..6], [json!("1"), json!("2"), json!("3"), json!("4"), json!("5"), json!("6")]);
    assert_eq!(r.column("name")[..4], [json!("a"), json!("b"), json!("c"), Value::Null]);
    assert_eq!(
        r.column("amount")[..6],
        [Value::Null, Value::Null, json!("10"), json!("2.5"), Value::Null, json!("1,5")]
    );
    let registry = r.registry();
    let keys: Vec<&str> = registry["canonical_schema"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["source_key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["amount", "id", "name"]);
    // The same rows as a list or a directory.
    let as_list = csv(files.clone(), &union).unwrap();
    let mut in_directory = union.to_vec();
    in_directory.push(("input_mode", s("directory")));
    let as_directory = csv(vec![dir.to_string_lossy().into_owned()], &in_directory).unwrap();
    assert_eq!(as_list.rows, r.rows);
    assert_eq!(as_directory.rows, r.rows);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn each_byte_range_of_a_csv_file_takes_its_own_files_header() {
    let dir = std::env::temp_dir().join(format!("ss-union-ranges-{}-{}", std::process::id(), rand_suffix()));
    let files = growing_csv_files(&dir);
    let union = vec![("union_by_name", ParamValue::Bool(true)), ("parse_floats", ParamValue::Bool(true))];
    let scan = |params: &[(&str, ParamValue)], threads| {
        super::proptests::comparable_scan(run_planned_with(
            "sanitize_csv",
            InputFormat::Csv,
            files.clone(),
            params,
            super::plan_on,
            threads,
        ))
    };
    let whole = scan(&union, 1);
    let (rows, names, ..) = whole.as_ref().unwrap();
    // `"1,5"` is no number: text beside day 2's and day 3's numbers.
    assert_eq!(names, &["amount", "amount_v2_string", "id", "name"]);
    assert_eq!(rows.len(), 2 + 1 + 36);
    for range in [1, 3, 8, 13, 64] {
        for threads in [1, 2, 4] {
            let mut cut = union.clone();
            cut.push(("scan_range_bytes", ParamValue::Int(range)));
            assert_eq!(scan(&cut, threads), whole, "scan_range_bytes {range}, {threads} threads");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn what_the_csv_sniffer_decides_is_marked_sniffed() {
    use crate::options::Origin;
    let dir = crate::test_support::scratch_dir("sniffed-origin");
    let path = dir.join("a.csv");
    std::fs::write(&path, "id;name\n1;'x'\n2;'y'\n").unwrap();
    let options = Options::parse(
        "sanitize_csv",
        Some(InputFormat::Csv),
        &[("csv_auto_detect", ParamValue::Bool(true)), ("csv_quote", ParamValue::Str("'".into()))],
    )
    .unwrap();
    let plan = crate::scan::plan("sanitize_csv", path.to_str().unwrap(), options).unwrap();
    let origins = &plan.options.origins;
    assert_eq!((plan.options.csv_delimiter.as_slice(), origins.csv_delimiter), (&b";"[..], Origin::Sniffed));
    assert_eq!(origins.csv_quote, Origin::Given, "a given quote is not the sniffer's");
    assert_eq!(origins.csv_has_header, Origin::Sniffed);
    assert_eq!(origins.on_error, Origin::Default);
    let _ = std::fs::remove_dir_all(&dir);
}
