//! End-to-end engine tests for Parquet's declared types: files written with
//! arrow-rs's own writer, read through the whole engine (probe, registry,
//! routing, column buffers), no DuckDB.

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BinaryArray, Decimal128Array, FixedSizeBinaryArray, Float32Array, Float64Array, Int16Array, Int32Array,
    Int64Array, Int8Array, MapBuilder, RecordBatch, StringBuilder, UInt64Array,
};
use arrow::datatypes::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use serde_json::{json, Value};

use super::tests::{rand_suffix, run_format, run_format_scan, Run};
use crate::options::{InputFormat, ParamValue};

struct Dir(std::path::PathBuf);

impl Dir {
    fn new() -> Dir {
        let d = std::env::temp_dir().join(format!("ss-pq-{}-{}", std::process::id(), rand_suffix()));
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }
    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
    /// Writes one batch of `columns` as `<name>.parquet`; returns its path.
    fn write(&self, name: &str, columns: Vec<(&str, ArrayRef)>) -> String {
        let fields: Vec<Field> = columns.iter().map(|(n, a)| Field::new(*n, a.data_type().clone(), true)).collect();
        self.write_with(name, fields, columns.into_iter().map(|(_, a)| a).collect())
    }
    fn write_with(&self, name: &str, fields: Vec<Field>, arrays: Vec<ArrayRef>) -> String {
        let schema = Arc::new(Schema::new(fields));
        let batch = RecordBatch::try_new(schema.clone(), arrays).unwrap();
        let path = self.0.join(format!("{name}.parquet"));
        let mut w = ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), schema, None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        path.to_str().unwrap().to_string()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the scan twice: planned by the full probe (every row) and by the
/// declared-schema probe the table functions use for Parquet; both must
/// give the same registry and the same rows.
fn parquet(path: &str, params: &[(&str, ParamValue)]) -> Run {
    let full = run_format("sanitize_parquet", InputFormat::Parquet, path, params).unwrap();
    let declared = run_format_scan("sanitize_parquet", InputFormat::Parquet, path, params).unwrap();
    assert!(declared.plan.declared_probe && !full.plan.declared_probe);
    assert_eq!(declared.plan.registry_json, full.plan.registry_json, "registry differs for {path}");
    assert_eq!(declared.names, full.names);
    assert_eq!(declared.rows, full.rows, "rows differ for {path}");
    assert_eq!(declared.plan.probe_stats.rows_emitted, full.plan.probe_stats.rows_emitted);
    full
}

fn directory(dir: &Dir, extra: &[(&str, ParamValue)]) -> Run {
    let mut params = vec![("input_mode", ParamValue::Str("directory".into()))];
    params.extend(extra.iter().cloned());
    parquet(dir.path(), &params)
}

/// The registry type of a top-level column.
fn kind_of(run: &Run, name: &str) -> Value {
    let reg = run.registry();
    let fields = reg["canonical_schema"]["fields"].as_array().unwrap().clone();
    fields.into_iter().find(|f| f["name"] == name).unwrap_or_else(|| panic!("no {name}"))["type"].clone()
}

/// A fixed-width cell (hex of its little-endian bytes) as an integer.
fn fixed_int(v: &Value) -> Option<i128> {
    let hex = v.as_str()?;
    let mut bytes = [0u8; 16];
    for (i, b) in (0..hex.len()).step_by(2).enumerate() {
        bytes[i] = u8::from_str_radix(&hex[b..b + 2], 16).unwrap();
    }
    let width = hex.len() / 2;
    // Sign-extend from the top byte.
    if bytes[width - 1] & 0x80 != 0 {
        bytes[width..].fill(0xff);
    }
    Some(i128::from_le_bytes(bytes))
}

fn ints(run: &Run, name: &str) -> Vec<Option<i128>> {
    run.column(name).iter().map(fixed_int).collect()
}

#[test]
fn declared_types_are_kept_with_their_values() {
    let dir = Dir::new();
    let uuid = [0x12u8, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 1, 2, 3, 4, 5, 6, 7, 8];
    let mut map = MapBuilder::new(None, StringBuilder::new(), Int32Array::builder(4));
    map.keys().append_value("k");
    map.values().append_value(5);
    map.append(true).unwrap();
    map.append(true).unwrap(); // an empty map: no evidence, NULL
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("i8", Arc::new(Int8Array::from(vec![Some(-3), None]))),
        ("i32", Arc::new(Int32Array::from(vec![Some(7), Some(i32::MIN)]))),
        ("u64", Arc::new(UInt64Array::from(vec![Some(u64::MAX), Some(1)]))),
        ("f32", Arc::new(Float32Array::from(vec![Some(1.5), None]))),
        ("dec", Arc::new(Decimal128Array::from(vec![Some(-1234), Some(5)]).with_precision_and_scale(10, 2).unwrap())),
        (
            "wide",
            Arc::new(
                Decimal128Array::from(vec![Some(12_345_678_901_234_567_890_123i128), None])
                    .with_precision_and_scale(30, 5)
                    .unwrap(),
            ),
        ),
        ("bin", Arc::new(BinaryArray::from(vec![Some(&b"\x00\xff"[..]), Some(&b""[..])]))),
        ("m", Arc::new(map.finish())),
    ];
    let mut fields: Vec<Field> = columns.iter().map(|(n, a)| Field::new(*n, a.data_type().clone(), true)).collect();
    let mut arrays: Vec<ArrayRef> = columns.into_iter().map(|(_, a)| a).collect();
    // The canonical UUID extension type, as arrow-rs writes Parquet UUID.
    let uuid_type = [("ARROW:extension:name".to_string(), "arrow.uuid".to_string())].into_iter().collect();
    fields.push(Field::new("id", DataType::FixedSizeBinary(16), true).with_metadata(uuid_type));
    arrays.push(Arc::new(FixedSizeBinaryArray::try_from_iter([uuid, [0u8; 16]].into_iter()).unwrap()));
    let path = dir.write_with("types", fields, arrays);
    let r = parquet(&path, &[("field_name_policy", ParamValue::Str("preserve".into()))]);

    assert_eq!(kind_of(&r, "i8"), json!({"kind": "int8"}));
    assert_eq!(kind_of(&r, "i32"), json!({"kind": "int32"}));
    assert_eq!(kind_of(&r, "u64"), json!({"kind": "uint64"}));
    assert_eq!(kind_of(&r, "f32"), json!({"kind": "float32"}));
    assert_eq!(kind_of(&r, "dec"), json!({"kind": "decimal", "precision": 10, "scale": 2}));
    assert_eq!(kind_of(&r, "wide"), json!({"kind": "decimal", "precision": 30, "scale": 5}));
    assert_eq!(kind_of(&r, "bin"), json!({"kind": "binary"}));
    assert_eq!(kind_of(&r, "id"), json!({"kind": "uuid"}));
    assert_eq!(kind_of(&r, "m")["kind"], "map");

    assert_eq!(ints(&r, "i8"), [Some(-3), None]);
    assert_eq!(ints(&r, "i32"), [Some(7), Some(i32::MIN as i128)]);
    // UBIGINT: 8 bytes, all ones (read back signed, so -1).
    assert_eq!(r.column("u64")[0], json!("ffffffffffffffff"));
    assert_eq!(ints(&r, "dec"), [Some(-1234), Some(5)]);
    assert_eq!(ints(&r, "wide"), [Some(12_345_678_901_234_567_890_123), None]);
    assert_eq!(r.column("f32")[0], json!(hex(&1.5f32.to_le_bytes())));
    assert_eq!(r.column("bin"), [json!([0, 255]), json!([])]);
    // DuckDB's UUID: the big-endian value with its top bit flipped, little endian.
    let expected = (u128::from_be_bytes(uuid) ^ (1 << 127)).to_le_bytes();
    assert_eq!(r.column("id")[0], json!(hex(&expected)));
    // The map: one entry (as a list of [key, value]), then the empty map as NULL.
    assert_eq!(r.column("m"), [json!([["k", "05000000"]]), Value::Null]);
    assert!(r.drifts().iter().all(|d| d["drift_type"] == "field_added"));
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn numeric_types_born_in_one_scan_join() {
    let dir = Dir::new();
    dir.write(
        "a",
        vec![
            ("x", Arc::new(Int32Array::from(vec![1]))),
            ("f", Arc::new(Float32Array::from(vec![0.5]))),
            ("d", Arc::new(Decimal128Array::from(vec![150]).with_precision_and_scale(10, 2).unwrap())),
            ("s", Arc::new(Int8Array::from(vec![-1]))),
        ],
    );
    dir.write(
        "b",
        vec![
            ("x", Arc::new(Int64Array::from(vec![1i64 << 40]))),
            ("f", Arc::new(Float64Array::from(vec![2.25]))),
            ("d", Arc::new(Decimal128Array::from(vec![12345]).with_precision_and_scale(12, 4).unwrap())),
            ("s", Arc::new(Int16Array::from(vec![300]))),
        ],
    );
    let r = directory(&dir, &[]);
    assert_eq!(kind_of(&r, "x"), json!({"kind": "int64"}));
    assert_eq!(kind_of(&r, "f"), json!({"kind": "double"}));
    // DECIMAL(10,2) and DECIMAL(12,4) meet in DECIMAL(12,4): 8 integer digits, 4 fraction digits.
    assert_eq!(kind_of(&r, "d"), json!({"kind": "decimal", "precision": 12, "scale": 4}));
    assert_eq!(kind_of(&r, "s"), json!({"kind": "int16"}));
    assert_eq!(r.column("x"), [json!(1), json!(1i64 << 40)]);
    assert_eq!(r.column("f"), [json!(0.5), json!(2.25)]);
    assert_eq!(ints(&r, "d"), [Some(15000), Some(12345)]);
    assert_eq!(ints(&r, "s"), [Some(-1), Some(300)]);
    assert_eq!(r.names, ["d", "f", "s", "x"], "one column per field, no versions");
}

#[test]
fn established_declared_types_are_a_contract() {
    let dir = Dir::new();
    let first = dir.write("first", vec![("x", Arc::new(Int32Array::from(vec![1])))]);
    let r1 = parquet(&first, &[]);
    let registry = ParamValue::Str(r1.plan.registry_json.clone());

    // The same file again: nothing changes.
    let again = parquet(&first, &[("registry", registry.clone())]);
    assert_eq!(again.plan.registry_json, r1.plan.registry_json);
    assert!(again.drifts().is_empty());

    // A narrower type is held by the established INTEGER column.
    let narrow = dir.write("narrow", vec![("x", Arc::new(Int16Array::from(vec![2])))]);
    let r2 = parquet(&narrow, &[("registry", registry.clone())]);
    assert_eq!(ints(&r2, "x"), [Some(2)]);
    assert!(r2.drifts().is_empty());

    // A wider one is not: it opens a BIGINT version.
    let wide = dir.write("wide", vec![("x", Arc::new(Int64Array::from(vec![3])))]);
    let r3 = parquet(&wide, &[("registry", registry)]);
    assert_eq!(r3.column("x_v2_integer"), [json!(3)]);
    assert_eq!(kind_of(&r3, "x"), json!({"kind": "int32"}));
    assert_eq!(r3.drifts()[0]["previous_schema"], "int32");
    assert_eq!(r3.drifts()[0]["new_schema"], "int64");
}

#[test]
fn a_map_whose_value_type_changes_gets_a_version() {
    let dir = Dir::new();
    let mut ints = MapBuilder::new(None, StringBuilder::new(), Int32Array::builder(1));
    ints.keys().append_value("a");
    ints.values().append_value(1);
    ints.append(true).unwrap();
    dir.write("a", vec![("m", Arc::new(ints.finish()))]);
    let mut strings = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
    strings.keys().append_value("b");
    strings.values().append_value("two");
    strings.append(true).unwrap();
    dir.write("b", vec![("m", Arc::new(strings.finish()))]);
    let r = directory(&dir, &[]);
    assert_eq!(r.column("m"), [json!([["a", "01000000"]]), Value::Null]);
    assert_eq!(r.column("m_v2_map"), [Value::Null, json!([["b", "two"]])]);
    let variants = &r.registry()["variants"];
    assert_eq!(variants["m"]["versions"][0]["schema"], "map<string, int32>");
    assert_eq!(variants["m"]["versions"][1]["schema"], "map<string, string>");
}

#[test]
fn a_parquet_enum_is_text_and_flattened_maps_are_json() {
    use parquet::data_type::{ByteArray, ByteArrayType};
    use parquet::file::writer::SerializedFileWriter;
    // arrow-rs has no writer for the ENUM annotation: write it with the
    // low-level writer, as Avro- and Thrift-based writers produce it.
    let dir = Dir::new();
    let path = dir.0.join("enum.parquet");
    let schema =
        Arc::new(parquet::schema::parser::parse_message_type("message m { required binary e (ENUM); }").unwrap());
    let mut writer =
        SerializedFileWriter::new(std::fs::File::create(&path).unwrap(), schema, Default::default()).unwrap();
    let mut group = writer.next_row_group().unwrap();
    let mut column = group.next_column().unwrap().unwrap();
    let values = [ByteArray::from("RED"), ByteArray::from("GREEN")];
    column.typed::<ByteArrayType>().write_batch(&values, None, None).unwrap();
    column.close().unwrap();
    group.close().unwrap();
    writer.close().unwrap();
    let r = parquet(path.to_str().unwrap(), &[]);
    assert_eq!(kind_of(&r, "e"), json!({"kind": "string"}));
    assert_eq!(r.column("e"), [json!("RED"), json!("GREEN")]);

    // A map past arrow_max_depth (a map is two levels: the list and its entry) is its JSON text.
    let mut map = MapBuilder::new(None, StringBuilder::new(), Int32Array::builder(1));
    map.keys().append_value("k");
    map.values().append_value(1);
    map.append(true).unwrap();
    let flat = dir.write("flat", vec![("m", Arc::new(map.finish()))]);
    let r = parquet(&flat, &[("arrow_max_depth", ParamValue::Int(1))]);
    assert_eq!(kind_of(&r, "m"), json!({"kind": "string"}));
    assert_eq!(r.column("m"), [json!("[{\"key\":\"k\",\"value\":1}]")]);
    let r = parquet(&flat, &[("arrow_max_depth", ParamValue::Int(2))]);
    assert_eq!(kind_of(&r, "m")["kind"], "map");
}

#[test]
fn a_map_meeting_a_list_of_maps_is_one_element_not_its_entries() {
    use arrow::array::{Int32Builder, ListBuilder};
    let dir = Dir::new();
    let mut lists = ListBuilder::new(MapBuilder::new(None, StringBuilder::new(), Int32Builder::new()));
    lists.values().keys().append_value("a");
    lists.values().values().append_value(1);
    lists.values().append(true).unwrap();
    lists.append(true);
    dir.write("a", vec![("m", Arc::new(lists.finish()))]);
    let mut map = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
    for (k, v) in [("b", 2), ("c", 3)] {
        map.keys().append_value(k);
        map.values().append_value(v);
    }
    map.append(true).unwrap();
    dir.write("b", vec![("m", Arc::new(map.finish()))]);
    let r = directory(&dir, &[]);
    // The map of b.parquet wraps into the list of maps as ONE map with both entries.
    assert_eq!(r.column("m"), [json!([[["a", "01000000"]]]), json!([[["b", "02000000"], ["c", "03000000"]]])]);
}

#[test]
fn a_decimal_beyond_its_declared_precision_is_refused_not_truncated() {
    // arrow-rs does not check values against the precision, so a writer can
    // store 12345.67 in a DECIMAL(4,2); it must not come out as a wrapped 16-bit value.
    let dir = Dir::new();
    let path = dir.write(
        "wide",
        vec![(
            "d",
            Arc::new(
                Decimal128Array::from(vec![Some(1_234_567), Some(-9_999)]).with_precision_and_scale(4, 2).unwrap(),
            ),
        )],
    );
    let r = parquet(&path, &[]);
    assert_eq!(kind_of(&r, "d"), json!({"kind": "decimal", "precision": 4, "scale": 2}));
    assert_eq!(ints(&r, "d"), [None, Some(-9_999)]);
}

/// A file's declared schema decides every value, so the table functions'
/// probe reads no row of it, when each DECIMAL value has at most its
/// precision in digits: the decimal columns alone are decoded to tell
/// (`declared_values_fit`), and only by that probe.
/// One value too wide, at the top level or in a list, and the rows are read.
#[test]
fn decimals_within_their_precision_need_no_row_read() {
    let dir = Dir::new();
    let decimals = |values: Vec<Option<i128>>| {
        Arc::new(Decimal128Array::from(values).with_precision_and_scale(6, 2).unwrap()) as ArrayRef
    };
    let in_list = |values: Vec<Option<i128>>| {
        let items = decimals(values);
        let field = Arc::new(Field::new("item", items.data_type().clone(), true));
        let offsets = arrow::buffer::OffsetBuffer::from_lengths([items.len()]);
        Arc::new(arrow::array::ListArray::new(field, offsets, items, None)) as ArrayRef
    };
    let exact = |name: &str, columns: Vec<(&str, ArrayRef)>| {
        let path = dir.write(name, columns);
        let file = std::fs::File::open(&path).unwrap();
        let mut reader = crate::formats::parquet::ParquetReader::open(file, &path, 100).unwrap();
        use crate::formats::RecordReader;
        assert!(!reader.declaration().unwrap().exact, "the footer alone cannot tell");
        let fit = reader.declared_values_fit();
        // Either way both probes give the same registry and rows; the
        // declared one decodes no batch of rows when the values fit.
        parquet(&path, &[]);
        let declared = run_format_scan("sanitize_parquet", InputFormat::Parquet, &path, &[]).unwrap();
        assert_eq!(declared.plan.probe_stats.batches == 0, fit, "{name}");
        fit
    };
    let id = || Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef;
    assert!(exact("fit", vec![("id", id()), ("d", decimals(vec![Some(999_999), None, Some(-5)]))]));
    assert!(!exact("wide", vec![("id", id()), ("d", decimals(vec![Some(1_000_000), None, Some(-5)]))]));
    assert!(exact("fit_in_list", vec![("l", in_list(vec![Some(1), Some(-999_999)]))]));
    assert!(!exact("wide_in_list", vec![("l", in_list(vec![Some(1), Some(-1_000_000)]))]));
}

/// Writes `message` with the low-level writer: one row group with `rows`
/// rows of the one leaf column `id` (an INT32), or none when `rows` is 0.
fn write_low_level(dir: &Dir, name: &str, message: &str, rows: usize) -> String {
    use parquet::data_type::Int32Type;
    use parquet::file::writer::SerializedFileWriter;
    let path = dir.0.join(format!("{name}.parquet"));
    let schema = Arc::new(parquet::schema::parser::parse_message_type(message).unwrap());
    let mut writer =
        SerializedFileWriter::new(std::fs::File::create(&path).unwrap(), schema, Default::default()).unwrap();
    if rows > 0 {
        let mut group = writer.next_row_group().unwrap();
        while let Some(mut column) = group.next_column().unwrap() {
            let values: Vec<i32> = (0..rows as i32).collect();
            column.typed::<Int32Type>().write_batch(&values, None, None).unwrap();
            column.close().unwrap();
        }
        group.close().unwrap();
    }
    writer.close().unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn an_empty_group_is_no_column_and_loses_no_row() {
    let dir = Dir::new();
    let path = write_low_level(&dir, "empty_group", "message m { required int32 id; optional group e { } }", 3);
    let r = parquet(&path, &[]);
    assert_eq!(r.names, ["id"]);
    // INTEGER values in DuckDB's little-endian layout.
    assert_eq!(r.column("id"), [json!("00000000"), json!("01000000"), json!("02000000")]);
}

#[test]
fn an_empty_file_with_an_unknown_annotation_reads_as_no_rows() {
    let dir = Dir::new();
    // BSON on a binary column: a converted type arrow-rs maps to no Arrow type of its own.
    let path = write_low_level(&dir, "bson", "message m { optional binary b (BSON); optional int32 id; }", 0);
    let r = parquet(&path, &[]);
    assert!(r.rows.is_empty());
}

#[test]
fn files_other_writers_ship_read_as_duckdb_reads_them() {
    let real = |name: &str| format!("{}/test/data/real/{name}", env!("CARGO_MANIFEST_DIR"));
    // An empty file whose columns carry ConvertedType 24 (unknown): no rows, no error.
    let r = parquet(&real("empty_unknown_converted_type.parquet"), &[]);
    assert!(r.rows.is_empty());
    // A footer with a mistyped ColumnMetaData field and a dictionary page at offset 0.
    let r = parquet(&real("dict-page-offset-zero.parquet"), &[]);
    assert_eq!(r.rows.len(), 39);
    // The file-level row count is 0; the row group holds 6.
    let r = parquet(&real("repeated_no_annotation.parquet"), &[]);
    assert_eq!(r.rows.len(), 6);
    // DECIMAL(77, 38): wider than arrow-rs reads; exact text, where DuckDB gives a DOUBLE.
    let r = parquet(&real("bigdecimal.parquet"), &[]);
    assert_eq!(kind_of(&r, "bigdec"), json!({"kind": "string"}));
    assert_eq!(r.column("bigdec")[0], json!("0.50000000000000000000000000000000000000"));
    assert_eq!(
        r.column("bigdec")[5],
        json!("-578960446186580977117854925043439539266.34992332820282019728792003956564819968")
    );
    // An embedded Arrow schema with an empty struct the Parquet schema lacks.
    let r = parquet(&real("empty_group_test.parquet"), &[]);
    assert_eq!(r.rows.len(), 1);
}
