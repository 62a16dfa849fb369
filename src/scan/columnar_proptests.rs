//! Property test of the columnar path (route/columnar.rs): Parquet files
//! whose columns are written whole give exactly what the same files give
//! row by row from the tape: rows, names, registry, drifts and counters,
//! over files whose column types differ (drift, versions), NULLs, empty
//! lists, structs without values, struct fields some files lack, instants
//! a unit cannot hold, projections and thread counts.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Float32Array, Float64Array, Int16Array,
    Int32Array, Int64Array, ListArray, NullArray, RecordBatch, StringArray, StructArray, TimestampMicrosecondArray,
    TimestampMillisecondArray, TimestampNanosecondArray, TimestampSecondArray, UInt64Array,
};
use arrow::buffer::{NullBuffer, OffsetBuffer};
use arrow::datatypes::{DataType, Field, Fields, Schema};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use proptest::prelude::*;

use super::proptests::{comparable_scan, Comparable};
use super::tests::{projected_rows, run_planned_with, run_threads_as, Planner};
use crate::formats::COLUMNS_OFF;
use crate::options::{InputFormat, ParamValue};

/// The column types the files are made of.
#[derive(Clone, Copy, Debug)]
enum Kind {
    I64,
    I32,
    I16,
    U64,
    F64,
    F32,
    Bool,
    Text,
    Date,
    Seconds,
    Millis,
    Micros,
    Nanos,
    Blob,
    /// DECIMAL(10, 2) and (38, 4), at times with more digits than the
    /// precision allows (writers do not all check).
    Decimal10,
    Decimal38,
    Null,
    ListI64,
    ListText,
    ListStruct,
    /// A struct of `x` (BIGINT), `y` (VARCHAR) and, when set, `z`, a
    /// struct of one DOUBLE `w`.
    Struct {
        with_z: bool,
    },
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::I64),
        Just(Kind::I32),
        Just(Kind::I16),
        Just(Kind::U64),
        Just(Kind::F64),
        Just(Kind::F32),
        Just(Kind::Bool),
        Just(Kind::Text),
        Just(Kind::Date),
        Just(Kind::Seconds),
        Just(Kind::Millis),
        Just(Kind::Micros),
        Just(Kind::Nanos),
        Just(Kind::Blob),
        Just(Kind::Decimal10),
        Just(Kind::Decimal38),
        Just(Kind::Null),
        Just(Kind::ListI64),
        Just(Kind::ListText),
        Just(Kind::ListStruct),
        any::<bool>().prop_map(|with_z| Kind::Struct { with_z }),
    ]
}

/// A seed's value: every fifth is NULL, the others spread over a small
/// range so that values repeat and extremes appear.
fn valid(seeds: &[u8]) -> Vec<bool> {
    seeds.iter().map(|s| s % 5 != 0).collect()
}

fn int(s: u8) -> i64 {
    match s % 7 {
        0 => i64::MIN,
        1 => i64::MAX,
        _ => i64::from(s) - 100,
    }
}

fn text(s: u8) -> String {
    match s % 6 {
        0 => String::new(),
        1 => "ü€ 𝄞".to_string(),
        _ => format!("t{}", s / 3),
    }
}

fn struct_array(seeds: &[u8], with_z: bool) -> StructArray {
    let x: ArrayRef = Arc::new(Int64Array::from_iter(seeds.iter().map(|&s| (s % 3 != 0).then(|| int(s)))));
    let y: ArrayRef = Arc::new(StringArray::from_iter(seeds.iter().map(|&s| (s % 4 == 1).then(|| text(s)))));
    let mut fields = vec![Field::new("x", DataType::Int64, true), Field::new("y", DataType::Utf8, true)];
    let mut arrays = vec![x, y];
    if with_z {
        let w: ArrayRef =
            Arc::new(Float64Array::from_iter(seeds.iter().map(|&s| (s % 2 == 0).then(|| f64::from(s) / 4.0))));
        let z = StructArray::new(
            Fields::from(vec![Field::new("w", DataType::Float64, true)]),
            vec![w],
            Some(NullBuffer::from(seeds.iter().map(|s| s % 11 != 0).collect::<Vec<_>>())),
        );
        fields.push(Field::new("z", z.data_type().clone(), true));
        arrays.push(Arc::new(z));
    }
    StructArray::new(Fields::from(fields), arrays, Some(NullBuffer::from(valid(seeds))))
}

/// A list per seed: NULL, empty, or up to three elements from `element`.
fn list_of(seeds: &[u8], element: impl Fn(&[u8]) -> ArrayRef) -> ListArray {
    let lengths: Vec<usize> = seeds.iter().map(|s| usize::from(s % 4)).collect();
    let element_seeds: Vec<u8> = seeds
        .iter()
        .zip(&lengths)
        .flat_map(|(&s, &n)| (0..n).map(move |i| s.wrapping_mul(31).wrapping_add(i as u8)))
        .collect();
    let values = element(&element_seeds);
    let field = Arc::new(Field::new("item", values.data_type().clone(), true));
    ListArray::new(field, OffsetBuffer::from_lengths(lengths), values, Some(NullBuffer::from(valid(seeds))))
}

fn array(kind: Kind, seeds: &[u8]) -> ArrayRef {
    let opt =
        |f: &dyn Fn(u8) -> i64| -> Vec<Option<i64>> { seeds.iter().map(|&s| (s % 5 != 0).then(|| f(s))).collect() };
    match kind {
        Kind::I64 => Arc::new(Int64Array::from(opt(&int))),
        Kind::I32 => {
            Arc::new(Int32Array::from_iter(opt(&|s| i64::from(s) * 1000).into_iter().map(|v| v.map(|v| v as i32))))
        }
        Kind::I16 => {
            Arc::new(Int16Array::from_iter(opt(&|s| i64::from(s) - 128).into_iter().map(|v| v.map(|v| v as i16))))
        }
        Kind::U64 => Arc::new(UInt64Array::from_iter(opt(&int).into_iter().map(|v| v.map(|v| v as u64)))),
        Kind::F64 => Arc::new(Float64Array::from_iter(seeds.iter().map(|&s| {
            (s % 5 != 0).then(|| match s % 9 {
                1 => f64::NAN,
                2 => -0.0,
                3 => f64::INFINITY,
                _ => f64::from(s) / 8.0,
            })
        }))),
        Kind::F32 => Arc::new(Float32Array::from_iter(seeds.iter().map(|&s| (s % 5 != 0).then(|| f32::from(s) / 3.0)))),
        Kind::Bool => Arc::new(BooleanArray::from_iter(seeds.iter().map(|&s| (s % 5 != 0).then_some(s % 2 == 0)))),
        Kind::Text => Arc::new(StringArray::from_iter(seeds.iter().map(|&s| (s % 5 != 0).then(|| text(s))))),
        Kind::Date => Arc::new(Date32Array::from_iter(
            opt(&|s| i64::from(s) * 400 - 40_000).into_iter().map(|v| v.map(|v| v as i32)),
        )),
        // Past what nanoseconds hold (year 2262) at times: such an instant is
        // text under TIMESTAMP_NANOS.
        Kind::Seconds => Arc::new(
            TimestampSecondArray::from(opt(&|s| i64::from(s) * 45_000_000 - 1_000_000_000)).with_timezone("UTC"),
        ),
        Kind::Millis => Arc::new(TimestampMillisecondArray::from(opt(&|s| i64::from(s) * 999_999_937))),
        Kind::Micros => {
            Arc::new(TimestampMicrosecondArray::from(opt(&|s| i64::from(s) * 123_456_789_011 - 7)).with_timezone("UTC"))
        }
        Kind::Nanos => Arc::new(TimestampNanosecondArray::from(opt(&|s| i64::from(s) * 1_000_000_007))),
        Kind::Blob => {
            Arc::new(BinaryArray::from_iter(seeds.iter().map(|&s| (s % 5 != 0).then(|| vec![s; usize::from(s % 4)]))))
        }
        Kind::Decimal10 | Kind::Decimal38 => {
            let (precision, scale) = if matches!(kind, Kind::Decimal10) { (10, 2) } else { (38, 4) };
            let unscaled = |s: u8| match s % 13 {
                // Eleven digits in a DECIMAL(10, 2).
                1 => 12_345_678_901_i128,
                2 => -(10_i128.pow(37)) * 3,
                _ => i128::from(s) * 1_234 - 50_000,
            };
            let values = seeds.iter().map(|&s| (s % 5 != 0).then(|| unscaled(s)));
            Arc::new(Decimal128Array::from_iter(values).with_precision_and_scale(precision, scale).unwrap())
        }
        Kind::Null => Arc::new(NullArray::new(seeds.len())),
        Kind::ListI64 => Arc::new(list_of(seeds, |e| array(Kind::I64, e))),
        Kind::ListText => Arc::new(list_of(seeds, |e| array(Kind::Text, e))),
        Kind::ListStruct => Arc::new(list_of(seeds, |e| Arc::new(struct_array(e, false)) as ArrayRef)),
        Kind::Struct { with_z } => Arc::new(struct_array(seeds, with_z)),
    }
}

/// One file: each of its columns a name from a small pool (so files share
/// columns, and a shared column's type may differ between them), a kind,
/// and whether it is dense (without the NULL every fifth seed gives); then
/// the seeds of its rows.
fn file() -> impl Strategy<Value = (Vec<(usize, Kind, bool)>, Vec<u8>)> {
    (prop::collection::vec((0usize..4, kind(), any::<bool>()), 1..5), prop::collection::vec(any::<u8>(), 0..120))
}

fn write_file(path: &std::path::Path, columns: &[(usize, Kind, bool)], seeds: &[u8], group_rows: usize) {
    let names = ["a", "b", "c", "d"];
    let mut fields = Vec::new();
    let mut arrays = Vec::new();
    for (i, &(name, kind, dense)) in columns.iter().enumerate() {
        // Each column's own values: the seeds turned by the column's place;
        // a dense column's moved off the multiples of five, which are NULL
        // (a column without NULLs is copied whole, route/columnar.rs).
        let turned = seeds.iter().map(|s| s.wrapping_add(i as u8 * 17));
        let own: Vec<u8> = turned.map(|s| if dense && s % 5 == 0 { s ^ 1 } else { s }).collect();
        let a = array(kind, &own);
        fields.push(Field::new(names[name], a.data_type().clone(), true));
        arrays.push(a);
    }
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(Arc::clone(&schema), arrays).unwrap();
    let props = WriterProperties::builder().set_max_row_group_row_count(Some(group_rows.max(1))).build();
    let mut writer = ArrowWriter::try_new(std::fs::File::create(path).unwrap(), schema, Some(props)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

/// The whole run, its columnar rows, and the scan of `mask`'s columns alone;
/// `declared`: planned as the table functions plan Parquet (a probe of the
/// declared schemas only, no rows read), else by a probe of every row.
fn runs(
    glob: &str,
    params: &[(&str, ParamValue)],
    threads: usize,
    mask: &[bool],
    declared: bool,
) -> (Comparable, u64, Option<Vec<Vec<serde_json::Value>>>) {
    let planner: Planner = if declared { super::plan_scan_on } else { super::plan_on };
    let parquet = InputFormat::Parquet;
    let run = run_planned_with("sanitize_parquet", parquet, vec![glob.to_string()], params, planner, threads);
    let columnar = run.as_ref().map_or(0, |(_, stats)| stats.rows_columnar);
    let projected = projected_rows("sanitize_parquet", parquet, glob, params, (threads, planner), mask);
    (comparable_scan(run), columnar, projected)
}

/// Held by each test here while it runs: one turns [`COLUMNS_OFF`] on
/// for a while, another counts the rows written whole.
static SWITCH: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn options() -> impl Strategy<Value = (Vec<(&'static str, ParamValue)>, Option<&'static str>)> {
    let strict = prop::option::weighted(0.3, prop::sample::select(vec!["skip_row", "emit_null_row"]));
    (prop::bool::weighted(0.3), prop::bool::weighted(0.2), prop::bool::weighted(0.2), strict).prop_map(
        |(nanos, budget, rescue, strict)| {
            let mut p = Vec::new();
            if nanos {
                p.push(("timestamp_precision", ParamValue::Str("TIMESTAMP_NANOS".into())));
            }
            if budget {
                // Small batches: slices of the reader's arrow batches.
                p.push(("batch_memory_limit_bytes", ParamValue::Int(64)));
            }
            if rescue {
                p.push(("rescue_column", ParamValue::Str("_rescued".into())));
            }
            (p, strict)
        },
    )
}

/// Strict mode under `on_error`, with the registry the first file alone
/// gives: the other files' columns may not fit it, or not be in it.
fn strict_params(
    first: &std::path::Path,
    params: &[(&'static str, ParamValue)],
    on_error: &'static str,
) -> Option<Vec<(&'static str, ParamValue)>> {
    let path = first.to_string_lossy();
    let (run, _) = run_threads_as("sanitize_parquet", InputFormat::Parquet, &path, params, 1).ok()?;
    let mut p = params.to_vec();
    p.push(("registry", ParamValue::Str(run.plan.registry_json.clone())));
    p.push(("schema_mode", ParamValue::Str("strict".into())));
    p.push(("on_error", ParamValue::Str(on_error.into())));
    Some(p)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::test_support::cases(64), .. ProptestConfig::default() })]

    #[test]
    fn columns_written_whole_give_what_the_rows_give(
        files in prop::collection::vec((file(), 1usize..80), 1..4),
        (params, strict) in options(),
        threads in 1usize..4,
        mask in prop::collection::vec(any::<bool>(), 0..8),
        declared in any::<bool>(),
    ) {
        let dir = crate::test_support::scratch_dir("columnar");
        for (i, ((columns, seeds), group_rows)) in files.iter().enumerate() {
            write_file(&dir.join(format!("{i}.parquet")), columns, seeds, *group_rows);
        }
        let glob = dir.join("*.parquet").to_string_lossy().into_owned();
        let params = match strict {
            Some(on_error) => strict_params(&dir.join("0.parquet"), &params, on_error).unwrap_or(params),
            None => params,
        };
        let _switch = SWITCH.lock().unwrap_or_else(|p| p.into_inner());
        let (whole, columnar, projected) = runs(&glob, &params, threads, &mask, declared);
        let (by_rows, none, by_rows_projected) = COLUMNS_OFF.on_for(|| runs(&glob, &params, threads, &mask, declared));
        let _ = std::fs::remove_dir_all(&dir);
        prop_assert_eq!(none, 0, "with the columns off every row goes by the tape");
        prop_assert_eq!(whole, by_rows, "files {:?}", files);
        prop_assert_eq!(projected, by_rows_projected, "files {:?}", files);
        // (Whether the columnar path ran is checked by the test below: here
        // a file may well drift, which sends it row by row.)
        let _ = columnar;
    }
}

/// A file of every kind the columnar path takes, under the defaults: every
/// row is written whole, and the same as row by row; with a rescue column
/// (whose router keeps what no column takes) none is.
#[test]
fn a_file_whose_types_agree_is_written_whole() {
    let dir = crate::test_support::scratch_dir("columnar-whole");
    let kinds =
        [(Kind::I64, true), (Kind::Text, false), (Kind::Struct { with_z: true }, false), (Kind::ListStruct, false)];
    let columns: Vec<(usize, Kind, bool)> = kinds.iter().enumerate().map(|(i, &(k, dense))| (i, k, dense)).collect();
    let seeds: Vec<u8> = (0..=255).collect();
    write_file(&dir.join("0.parquet"), &columns, &seeds, 100);
    let glob = dir.join("*.parquet").to_string_lossy().into_owned();
    let _switch = SWITCH.lock().unwrap_or_else(|p| p.into_inner());
    let (whole, columnar, _) = runs(&glob, &[], 2, &[], true);
    let rescued = [("rescue_column", ParamValue::Str("_rescued".into()))];
    let (_, rescue_columnar, _) = runs(&glob, &rescued, 2, &[], true);
    let (by_rows, _, _) = COLUMNS_OFF.on_for(|| runs(&glob, &[], 2, &[], true));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(columnar, 256, "every row written whole");
    assert_eq!(rescue_columnar, 0, "a rescue column routes every row");
    assert_eq!(whole, by_rows);
    let rows = whole.unwrap().0;
    assert_eq!(rows.len(), 256);
}
