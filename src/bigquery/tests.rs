//! The type mapping, table-driven over every type the engine emits, each
//! refusal, the quoting, and the statements' shapes.

use serde_json::{json, Value};

use super::*;

/// A registry of one field `x` of registry type `ty` (registry JSON).
fn registry_of(fields: Vec<(&str, Value)>) -> String {
    let fields: Vec<Value> = fields
        .into_iter()
        .map(|(name, ty)| json!({"name": name, "source_key": name, "version": 1, "type": ty}))
        .collect();
    json!({"registry_version": 1, "schema_generation": 1, "field_name_policy": "lower_alpha",
           "canonical_schema": {"fields": fields}})
    .to_string()
}

fn column_type(ty: Value) -> Result<String, String> {
    let columns = registry_columns(&registry_of(vec![("x", ty)]), &[], true).map_err(|e| e.message)?;
    Ok(columns.iter().find(|c| c.name == "x").unwrap().ty.clone())
}

fn scalar(kind: &str) -> Value {
    json!({"kind": kind})
}

fn field(name: &str, ty: Value) -> Value {
    json!({"name": name, "source_key": name, "version": 1, "type": ty})
}

#[test]
fn every_type_the_engine_emits_maps_or_is_refused_naming_the_column() {
    let cases: Vec<(Value, Result<&str, &str>)> = vec![
        (scalar("boolean"), Ok("BOOL")),
        (scalar("int64"), Ok("INT64")),
        (scalar("double"), Ok("FLOAT64")),
        (scalar("string"), Ok("STRING")),
        (scalar("json"), Ok("STRING")),
        (scalar("date"), Ok("DATE")),
        (scalar("time"), Ok("TIME")),
        (json!({"kind": "timestamp"}), Ok("TIMESTAMP")),
        (json!({"kind": "timestamp", "unit": "us"}), Ok("TIMESTAMP")),
        (json!({"kind": "timestamp", "unit": "ms"}), Ok("TIMESTAMP")),
        (json!({"kind": "timestamp", "unit": "ns"}), Err("TIMESTAMP_NS")),
        (scalar("int8"), Ok("INT64")),
        (scalar("int16"), Ok("INT64")),
        (scalar("int32"), Ok("INT64")),
        (scalar("uint8"), Ok("INT64")),
        (scalar("uint16"), Ok("INT64")),
        (scalar("uint32"), Ok("INT64")),
        (scalar("uint64"), Ok("INT64")),
        (scalar("float32"), Ok("FLOAT64")),
        (json!({"kind": "decimal", "precision": 18, "scale": 2}), Ok("NUMERIC(18, 2)")),
        (json!({"kind": "decimal", "precision": 38, "scale": 9}), Ok("NUMERIC(38, 9)")),
        (json!({"kind": "decimal", "precision": 38, "scale": 10}), Ok("BIGNUMERIC(38, 10)")),
        (json!({"kind": "decimal", "precision": 38, "scale": 0}), Ok("BIGNUMERIC(38, 0)")),
        (scalar("binary"), Ok("BYTES")),
        (scalar("uuid"), Ok("BYTES")),
        (scalar("interval"), Err("INTERVAL")),
        (json!({"kind": "list", "element": scalar("string")}), Ok("ARRAY<STRING>")),
        (
            json!({"kind": "list", "element": {"kind": "struct", "fields": [field("a", scalar("int64"))]}}),
            Ok("ARRAY<STRUCT<`a` INT64>>"),
        ),
        (json!({"kind": "list", "element": {"kind": "list", "element": scalar("int64")}}), Err("list of lists")),
        // A list of maps is a list of records (a MAP group reads as one).
        (
            json!({"kind": "list", "element": {"kind": "map", "fields": [field("key", scalar("string")), field("value", scalar("int64"))]}}),
            Ok("ARRAY<STRUCT<`key_value` ARRAY<STRUCT<`key` STRING, `value` INT64>>>>"),
        ),
        (
            json!({"kind": "struct", "fields": [field("b", scalar("boolean")), field("t", json!({"kind": "list", "element": scalar("date")}))]}),
            Ok("STRUCT<`b` BOOL, `t` ARRAY<DATE>>"),
        ),
        (
            json!({"kind": "map", "fields": [field("key", scalar("string")), field("value", scalar("double"))]}),
            Ok("STRUCT<`key_value` ARRAY<STRUCT<`key` STRING, `value` FLOAT64>>>"),
        ),
    ];
    for (ty, expected) in cases {
        let got = column_type(ty.clone());
        match expected {
            Ok(want) => assert_eq!(got.as_deref(), Ok(want), "{ty}"),
            Err(word) => {
                let err = got.unwrap_err();
                assert!(err.starts_with("column \"x\" cannot be a BigQuery column: "), "{err}");
                assert!(err.contains(word), "{ty}: {err}");
            }
        }
    }
}

#[test]
fn the_etl_columns_follow_the_data_columns() {
    let columns = registry_columns(&registry_of(vec![("id", scalar("int64"))]), &[], true).unwrap();
    let got: Vec<(&str, &str)> = columns.iter().map(|c| (c.name.as_str(), c.ty.as_str())).collect();
    assert_eq!(
        got,
        [
            ("id", "INT64"),
            ("source_file", "STRING"),
            ("ingestion_timestamp", "TIMESTAMP"),
            ("schema_registry", "STRING"),
            ("schema_drifts", "STRING")
        ]
    );
}

#[test]
fn record_nesting_deeper_than_15_is_refused_and_15_is_not() {
    let nest = |levels: usize| {
        let mut ty = scalar("int64");
        for _ in 0..levels {
            ty = json!({"kind": "struct", "fields": [field("n", ty)]});
        }
        ty
    };
    assert!(column_type(nest(15)).is_ok());
    let err = column_type(nest(16)).unwrap_err();
    // The 16th record is x and fifteen n's deep.
    let path = format!("x{}", ".n".repeat(15));
    assert!(err.contains(&format!("column \"{path}\"")) && err.contains("16 levels"), "{err}");
}

#[test]
fn names_bigquery_rejects_are_refused() {
    let long = "a".repeat(301);
    for (name, word) in [
        ("_partitiontime", "_PARTITION"),
        ("_file_name", "_FILE_"),
        (long.as_str(), "300 characters"),
        ("9lives", "start with a letter"),
        ("naïve", "letters, digits and underscores"),
    ] {
        let err = registry_columns(&registry_of(vec![(name, scalar("int64"))]), &[], true).unwrap_err().message;
        assert!(err.contains(word), "{name}: {err}");
    }
    // Case-insensitive collisions: a registry never holds them (its own
    // names are case-insensitive), and a data column may not take an ETL
    // column's name in another case.
    let err = registry_columns(&registry_of(vec![("Amount", scalar("int64")), ("amount", scalar("int64"))]), &[], true)
        .unwrap_err()
        .message;
    assert!(err.contains("case-insensitive"), "{err}");
    let nested = json!({"kind": "struct", "fields": [field("A", scalar("int64")), field("a", scalar("string"))]});
    let err = registry_columns(&registry_of(vec![("s", nested)]), &[], true).unwrap_err().message;
    assert!(err.contains("case-insensitive"), "{err}");
    // A data column named like a partition column.
    let err =
        registry_columns(&registry_of(vec![("Date", scalar("date"))]), &["date".into()], true).unwrap_err().message;
    assert!(err.contains("Hive partition column \"date\""), "{err}");
}

#[test]
fn identifiers_and_literals_are_quoted_and_escaped() {
    assert_eq!(quote_ident("a`b"), "`a\\`b`");
    assert_eq!(quote_ident("p.d.t"), "`p.d.t`");
    assert_eq!(quote_string("it's a \\ path\n"), "'it\\'s a \\\\ path\\n'");
}

#[test]
fn the_external_table_declares_partition_columns_apart() {
    let columns = registry_columns(&registry_of(vec![("id", scalar("int64"))]), &["year".into()], true).unwrap();
    let t = ExternalTable {
        table: "p.d.events".into(),
        source_uris: vec!["gs://silver/events/*".into()],
        hive_uri_prefix: Some("gs://silver/events".into()),
        partition_columns: vec![("year".into(), "INT64".into()), ("date".into(), "DATE".into())],
        require_partition_filter: true,
        format: "PARQUET".into(),
        enable_list_inference: true,
    };
    let ddl = external_table_ddl(&t, &columns);
    assert_eq!(
        ddl,
        "CREATE OR REPLACE EXTERNAL TABLE `p.d.events` (\n  `id` INT64,\n  `source_file` STRING,\n  `ingestion_timestamp` TIMESTAMP,\n  `schema_registry` STRING,\n  `schema_drifts` STRING\n)\nWITH PARTITION COLUMNS (\n  `year` INT64,\n  `date` DATE\n)\nOPTIONS (\n  format = 'PARQUET',\n  uris = ['gs://silver/events/*'],\n  hive_partition_uri_prefix = 'gs://silver/events',\n  require_hive_partition_filter = true,\n  enable_list_inference = true\n);"
    );
}

#[test]
fn the_registry_queries_order_newest_first_and_the_sidecar_one_parses_the_key() {
    let columns = vec![("year".to_string(), "INT64".to_string()), ("dt".to_string(), "DATE".to_string())];
    let only = registry_queries("p.d.e", &columns, None);
    assert_eq!(only.len(), 1);
    assert_eq!(only[0].0, "full");
    assert!(only[0].1.contains("ORDER BY ingestion_timestamp DESC, SAFE_CAST(JSON_VALUE(schema_registry, '$.schema_generation') AS INT64) DESC, `year` DESC, `dt` DESC"), "{}", only[0].1);
    let both = registry_queries("p.d.e", &columns, Some("p.d.sidecar"));
    assert_eq!(both.iter().map(|(k, _)| *k).collect::<Vec<_>>(), ["sidecar", "full"]);
    let q = &both[0].1;
    assert!(
        q.contains("e.`year` = SAFE_CAST(REGEXP_EXTRACT(s.partition_key, '^year=([^/]+)/dt=[^/]+$') AS INT64)"),
        "{q}"
    );
    assert!(
        q.contains("e.`dt` = SAFE_CAST(REGEXP_EXTRACT(s.partition_key, '^year=[^/]+/dt=([^/]+)$') AS DATE)"),
        "{q}"
    );
    assert!(q.contains("WHERE external_table_name = 'p.d.e'"), "{q}");
}

#[test]
fn without_list_inference_a_list_is_the_files_own_records() {
    let list = json!({"kind": "list", "element": scalar("int64")});
    let columns = registry_columns(&registry_of(vec![("x", list)]), &[], false).unwrap();
    assert_eq!(columns[0].ty, "STRUCT<`list` ARRAY<STRUCT<`element` INT64>>>");
}

mod profile {
    use proptest::prelude::*;
    use serde_json::{Map, Value};

    use crate::bigquery::registry_columns;
    use crate::options::ParamValue;
    use crate::scan::proptests::{json_value, to_lines};
    use crate::scan::tests::run;

    /// A value nested `kinds.len()` containers deep (a list where the kind
    /// is true, else an object), around a generated value: deep enough to
    /// pass BigQuery's 15 levels, with lists directly in lists.
    fn deep_value() -> impl Strategy<Value = Value> {
        (prop::collection::vec(any::<bool>(), 0..22), json_value(), "[a-zA-Z_]{1,3}").prop_map(|(kinds, leaf, key)| {
            kinds.into_iter().fold(leaf, |v, list| {
                if list {
                    Value::Array(vec![v, Value::Null])
                } else {
                    Value::Object([(key.clone(), v)].into_iter().collect())
                }
            })
        })
    }

    /// Keys that BigQuery would refuse as names, or that collide in case.
    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-cA-C _$é0-9]{1,3}",
            Just("_PARTITIONTIME".to_string()),
            Just("_file_name".to_string()),
            "[a-b]{301}"
        ]
    }

    fn record() -> impl Strategy<Value = Map<String, Value>> {
        prop::collection::btree_map(key(), prop_oneof![json_value(), deep_value()], 0..5)
            .prop_map(|m| m.into_iter().collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::test_support::cases(96)))]

        /// Under bigquery_profile := true, sanitize_bigquery_ddl never
        /// refuses the registry, whatever the values and the name policy.
        #[test]
        fn the_ddl_never_refuses_a_registry_built_under_the_profile(
            records in prop::collection::vec(record(), 1..6),
            policy in prop_oneof![Just("lower_alpha"), Just("lower_snake"), Just("preserve")],
            // A low threshold makes objects into maps (two BigQuery RECORD levels).
            map_threshold in prop_oneof![Just(1i64), Just(2), Just(200)],
        ) {
            let params = [
                ("bigquery_profile", ParamValue::Bool(true)),
                ("field_name_policy", ParamValue::Str(policy.to_string())),
                ("on_error", ParamValue::Str("skip_row".into())),
                ("map_inference_threshold", ParamValue::Int(map_threshold)),
            ];
            let scanned = run(&to_lines(&records), &params);
            // A source field that sanitizes to an ETL column's name is
            // refused before BigQuery matters.
            if let Err(e) = &scanned {
                prop_assume!(!e.contains("reserved column name"), "{}", e);
            }
            let scanned = scanned.map_err(TestCaseError::fail)?;
            let columns = registry_columns(&scanned.plan.registry_json, &[], true);
            prop_assert!(columns.is_ok(), "{:?}\nregistry: {}", columns.err(), scanned.plan.registry_json);
        }
    }
}
