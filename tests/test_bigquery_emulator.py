"""Smoke tests of the BigQuery emulator fixtures (tests/bq_emulator.py): what
bqemulator does, through the official google-cloud-bigquery client, for the
statements a BigQuery sink needs. Where the emulator departs from BigQuery
the tests pin its actual behaviour and say so, so an upgrade that changes it
shows up here.
"""
from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import duckdb
import pytest
from google.api_core.exceptions import BadRequest
from google.cloud import bigquery
from google.cloud.bigquery import SchemaField

from bq_emulator import BQ_PROJECT, bq_client, bq_server  # noqa: F401 (fixtures)
from conftest import sql_literal


@pytest.fixture
def dataset(bq_client, request) -> str:
    """A fresh dataset, named after the test, in BQ_PROJECT; its id."""
    name = re.sub(r"\W", "_", request.node.name)
    bq_client.create_dataset(f"{BQ_PROJECT}.{name}")
    return name


def run(client: bigquery.Client, sql: str) -> tuple[list[dict], bigquery.QueryJob]:
    job = client.query(sql)
    rows = [dict(row) for row in job.result()]
    return rows, job


def write_parquet(path: Path, select: str) -> Path:
    with duckdb.connect() as con:
        con.execute(f"COPY ({select}) TO {sql_literal(str(path))} (FORMAT parquet)")
    return path


def load_parquet(client: bigquery.Client, table: str, path: Path) -> bigquery.LoadJob:
    config = bigquery.LoadJobConfig(source_format=bigquery.SourceFormat.PARQUET)
    # Sent as BigQuery expects it; bqemulator ignores parquetOptions and reads
    # Parquet LISTs as arrays anyway.
    options = bigquery.ParquetOptions()
    options.enable_list_inference = True
    config.parquet_options = options
    with open(path, "rb") as f:
        job = client.load_table_from_file(f, table, job_config=config)
    job.result()
    return job


def test_create_dataset(bq_client):
    created = bq_client.create_dataset(f"{BQ_PROJECT}.smoke_ds")
    assert (created.project, created.dataset_id) == (BQ_PROJECT, "smoke_ds")
    assert bq_client.get_dataset(f"{BQ_PROJECT}.smoke_ds").dataset_id == "smoke_ds"
    assert "smoke_ds" in [d.dataset_id for d in bq_client.list_datasets()]


SIDECAR_DDL = (
    "CREATE TABLE IF NOT EXISTS `{table}` "
    "(external_table_name STRING NOT NULL, last_ingested_partition STRING NOT NULL)"
)


def test_create_table_if_not_exists_enforces_not_null(bq_client, dataset):
    table = f"{BQ_PROJECT}.{dataset}.sidecar"
    run(bq_client, SIDECAR_DDL.format(table=table))
    run(bq_client, SIDECAR_DDL.format(table=table))  # IF NOT EXISTS: a no-op
    schema = bq_client.get_table(table).schema
    assert [(f.name, f.field_type, f.mode) for f in schema] == [
        ("external_table_name", "STRING", "REQUIRED"),
        ("last_ingested_partition", "STRING", "REQUIRED"),
    ]
    with pytest.raises(BadRequest, match="NOT NULL constraint failed: sidecar.external_table_name"):
        run(bq_client, f"INSERT INTO `{table}` VALUES (NULL, 'date=2026-06-01')")
    rows, _ = run(bq_client, f"SELECT COUNT(*) AS n FROM `{table}`")
    assert rows == [{"n": 0}]


MERGE = """
MERGE `{table}` T
USING (SELECT 'events' AS external_table_name, '{partition}' AS last_ingested_partition) S
ON T.external_table_name = S.external_table_name
WHEN MATCHED {condition} THEN
  UPDATE SET last_ingested_partition = S.last_ingested_partition
WHEN NOT MATCHED THEN
  INSERT (external_table_name, last_ingested_partition)
  VALUES (S.external_table_name, S.last_ingested_partition)
"""
CHANGED = "AND T.last_ingested_partition != S.last_ingested_partition"


def test_merge_upsert(bq_client, dataset):
    table = f"{BQ_PROJECT}.{dataset}.sidecar"
    run(bq_client, SIDECAR_DDL.format(table=table))

    def merge(partition: str, condition: str = "") -> int:
        _, job = run(bq_client, MERGE.format(table=table, partition=partition, condition=condition))
        return job.num_dml_affected_rows

    def pointer() -> list[dict]:
        return run(bq_client, f"SELECT * FROM `{table}` ORDER BY external_table_name")[0]

    assert merge("date=2026-06-01") == 1  # inserted
    # The identical MERGE again: still one row, but an unconditional
    # WHEN MATCHED rewrites it, and counts it (as BigQuery does).
    assert merge("date=2026-06-01") == 1
    assert pointer() == [{"external_table_name": "events", "last_ingested_partition": "date=2026-06-01"}]
    # With the UPDATE guarded by "the partition changed", a re-run is a no-op.
    assert merge("date=2026-06-01", CHANGED) == 0
    assert pointer() == [{"external_table_name": "events", "last_ingested_partition": "date=2026-06-01"}]
    # A newer partition moves the pointer.
    assert merge("date=2026-06-02", CHANGED) == 1
    assert pointer() == [{"external_table_name": "events", "last_ingested_partition": "date=2026-06-02"}]


def test_select_returns_rows(bq_client, dataset):
    table = f"{BQ_PROJECT}.{dataset}.t"
    run(bq_client, f"CREATE TABLE `{table}` (id INT64, name STRING)")
    _, job = run(bq_client, f"INSERT INTO `{table}` VALUES (2, 'b'), (1, 'a'), (3, NULL)")
    assert job.num_dml_affected_rows == 3
    rows, _ = run(bq_client, f"SELECT id, name FROM `{table}` WHERE id < 3 ORDER BY id")
    assert rows == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]
    # The dataset-qualified form resolves against the client's project.
    rows, _ = run(bq_client, f"SELECT COUNT(*) AS n, COUNTIF(name IS NULL) AS nulls FROM {dataset}.t")
    assert rows == [{"n": 3, "nulls": 1}]


def test_load_parquet_into_table_with_explicit_schema(bq_client, dataset, tmp_path):
    table = f"{BQ_PROJECT}.{dataset}.typed"
    bq_client.create_table(
        bigquery.Table(
            table,
            schema=[
                SchemaField("i", "INT64"),
                SchemaField("f", "FLOAT64"),
                SchemaField("s", "STRING"),
                SchemaField("b", "BOOL"),
                SchemaField("ts", "TIMESTAMP"),
                SchemaField("d", "DATE"),
                SchemaField("st", "RECORD", fields=[SchemaField("a", "INT64"), SchemaField("b", "STRING")]),
                SchemaField("arr", "STRING", mode="REPEATED"),
            ],
        )
    )
    # TIMESTAMPTZ is written as a UTC-adjusted TIMESTAMP(MICROS).
    path = write_parquet(
        tmp_path / "typed.parquet",
        """SELECT 42::BIGINT AS i, 1.5::DOUBLE AS f, 'héllo' AS s, true AS b,
                  TIMESTAMPTZ '2026-06-29 12:34:56.123456+00' AS ts, DATE '2026-06-29' AS d,
                  {'a': 7::BIGINT, 'b': 'x'} AS st, ['p', 'q']::VARCHAR[] AS arr
           UNION ALL
           SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, []::VARCHAR[]""",
    )
    job = load_parquet(bq_client, table, path)
    assert job.output_rows == 2
    rows, _ = run(bq_client, f"SELECT * FROM `{table}` ORDER BY i NULLS LAST")
    assert rows == [
        {
            "i": 42,
            "f": 1.5,
            "s": "héllo",
            "b": True,
            "ts": dt.datetime(2026, 6, 29, 12, 34, 56, 123456, tzinfo=dt.timezone.utc),
            "d": dt.date(2026, 6, 29),
            "st": {"a": 7, "b": "x"},
            "arr": ["p", "q"],
        },
        {"i": None, "f": None, "s": None, "b": None, "ts": None, "d": None, "st": None, "arr": []},
    ]
    assert bq_client.get_table(table).num_rows == 2


def test_load_parquet_where_the_emulator_departs_from_bigquery(bq_client, dataset, tmp_path):
    """bqemulator loads Parquet with `INSERT INTO t SELECT * FROM read_parquet(f)`
    on DuckDB, so it is laxer than BigQuery in ways a test must not rely on:

    * columns are matched by position, not by name;
    * an ARRAY with a NULL element is stored as is (BigQuery rejects it);
    * a list of lists loaded into ARRAY<STRING> is stored as the inner lists'
      text (BigQuery has no nested arrays, and needs a RECORD in between);
    * a TIMESTAMP that is not UTC-adjusted is read as UTC.

    An ARRAY of STRUCT loads as BigQuery loads it. A Parquet load into a table
    that does not exist fails unless the job carries a schema: there is no
    Parquet schema detection.
    """

    def load(name: str, schema: list[SchemaField], select: str) -> list[dict]:
        table = f"{BQ_PROJECT}.{dataset}.{name}"
        bq_client.create_table(bigquery.Table(table, schema=schema))
        load_parquet(bq_client, table, write_parquet(tmp_path / f"{name}.parquet", select))
        return run(bq_client, f"SELECT * FROM `{table}`")[0]

    assert load(
        "array_of_struct",
        [SchemaField("kv", "RECORD", mode="REPEATED", fields=[SchemaField("k", "STRING"), SchemaField("v", "INT64")])],
        "SELECT [{'k': 'a', 'v': 1::BIGINT}, {'k': 'b', 'v': 2::BIGINT}] AS kv",
    ) == [{"kv": [{"k": "a", "v": 1}, {"k": "b", "v": 2}]}]

    assert load(
        "null_element",
        [SchemaField("arr", "STRING", mode="REPEATED")],
        "SELECT ['a', NULL, 'c']::VARCHAR[] AS arr",
    ) == [{"arr": ["a", None, "c"]}]

    assert load(
        "list_of_lists",
        [SchemaField("arr", "STRING", mode="REPEATED")],
        "SELECT [['a', 'b'], ['c']]::VARCHAR[][] AS arr",
    ) == [{"arr": ["[a, b]", "[c]"]}]
    # ...and into the shape BigQuery would want (a REPEATED RECORD holding a
    # REPEATED field) it does not load at all.
    with pytest.raises(BadRequest, match=re.escape("Unimplemented type for cast (VARCHAR[] -> STRUCT(list VARCHAR[]))")):
        load(
            "list_of_lists_as_records",
            [SchemaField("arr", "RECORD", mode="REPEATED", fields=[SchemaField("list", "STRING", mode="REPEATED")])],
            "SELECT [['a', 'b'], ['c']]::VARCHAR[][] AS arr",
        )

    assert load(
        "naive_timestamp",
        [SchemaField("ts", "TIMESTAMP")],
        "SELECT TIMESTAMP '2026-06-29 12:34:56.123456' AS ts",
    ) == [{"ts": dt.datetime(2026, 6, 29, 12, 34, 56, 123456, tzinfo=dt.timezone.utc)}]

    with pytest.raises(BadRequest, match="Could not convert string 'x' to INT64 when casting from source column s"):
        load("by_position", [SchemaField("i", "INT64"), SchemaField("s", "STRING")], "SELECT 'x' AS s, 1::BIGINT AS i")

    with pytest.raises(BadRequest, match="Table with name no_such_table does not exist"):
        load_parquet(bq_client, f"{BQ_PROJECT}.{dataset}.no_such_table", tmp_path / "null_element.parquet")


def test_external_tables_are_not_supported(bq_client, dataset):
    """bqemulator has no external tables. The DDL a BigQuery sink would send,

        CREATE OR REPLACE EXTERNAL TABLE `p.ds.t` WITH PARTITION COLUMNS (...) OPTIONS (...)

    is not parsed (sqlglot falls back to a raw command, which DuckDB rejects):

        400 Query execution failed: Parser Error: syntax error at or near "EXTERNAL"

    Without a column list, plain `CREATE EXTERNAL TABLE t OPTIONS (...)` fails
    with "Parser Error: syntax error at end of input". With a column list (and
    no partition clause) it is accepted but makes an ordinary, empty, writable
    table: the OPTIONS (uris, format) are dropped. tables.insert with an
    externalDataConfiguration likewise makes a TABLE with no external
    configuration. Tests of external-table DDL therefore need real BigQuery or
    must check the generated SQL text only.
    """
    with pytest.raises(BadRequest, match='Parser Error: syntax error at or near "EXTERNAL"'):
        run(
            bq_client,
            f"""CREATE OR REPLACE EXTERNAL TABLE `{BQ_PROJECT}.{dataset}.events`
                WITH PARTITION COLUMNS (date STRING)
                OPTIONS (format = 'PARQUET', uris = ['gs://bucket/lake/events/*'],
                         hive_partition_uri_prefix = 'gs://bucket/lake/events')""",
        )
    with pytest.raises(BadRequest, match="Parser Error: syntax error at end of input"):
        run(bq_client, f"CREATE EXTERNAL TABLE `{dataset}.bare` OPTIONS (format = 'PARQUET', uris = ['gs://bucket/x.parquet'])")

    run(bq_client, f"CREATE EXTERNAL TABLE `{dataset}.with_columns` (a STRING) OPTIONS (format = 'PARQUET', uris = ['gs://bucket/x.parquet'])")
    table = bq_client.get_table(f"{BQ_PROJECT}.{dataset}.with_columns")
    assert (table.table_type, table.external_data_configuration) == ("TABLE", None)
    _, job = run(bq_client, f"INSERT INTO `{dataset}.with_columns` VALUES ('written')")
    assert job.num_dml_affected_rows == 1

    rest = bigquery.Table(f"{BQ_PROJECT}.{dataset}.via_rest")
    external = bigquery.ExternalConfig("PARQUET")
    external.source_uris = ["gs://bucket/lake/events/*"]
    rest.external_data_configuration = external
    created = bq_client.create_table(rest)
    assert (created.table_type, created.external_data_configuration) == ("TABLE", None)
