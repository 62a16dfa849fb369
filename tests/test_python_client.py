"""The extension through the DuckDB Python client: INSTALL/LOAD, result shapes,
values, Arrow, the registry round trip, LOAD by path and error messages."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import duckdb
import pytest

from conftest import EXTENSION_NAME, sql_literal

ETL_COLUMNS = [
    ("source_file", "VARCHAR"),
    ("ingestion_timestamp", "TIMESTAMP WITH TIME ZONE"),
    ("schema_registry", "VARCHAR"),
    ("schema_drifts", "VARCHAR"),
]

# The content of examples/events.jsonl these tests were written against.
EVENTS = [
    {"event_id": 1, "User Name": "ana", "amount": 12, "tags": ["new"], "device": {"os": "ios", "version": 17}},
    {"event_id": 2, "User Name": "luis", "amount": 7.5, "tags": [], "device": {"os": "android"}},
    {"event_id": 3, "User Name": "marta", "amount": "unknown", "tags": "vip", "device": {"os": "web", "version": "beta"}},
    {"event_id": 4, "User Name": None, "amount": 3, "device": {}},
]

# An order file written by the tests, and what sanitize_jsonl must make of it:
# names under lower_alpha ("Order ID" -> orderid), sorted alphabetically; price
# mixes integers and a float, so it is DOUBLE; null and [] are absent values.
ORDERS = [
    {"Order ID": 1, "Customer Name": "Ana", "price": 10, "paid": True, "items": ["a", "b"]},
    {"Order ID": 2, "Customer Name": "Luis", "price": 2.5, "paid": False, "items": []},
    {"Order ID": 3, "Customer Name": None, "price": 4, "paid": True},
]
ORDER_COLUMNS = [
    ("customername", "VARCHAR"),
    ("items", "VARCHAR[]"),
    ("orderid", "BIGINT"),
    ("paid", "BOOLEAN"),
    ("price", "DOUBLE"),
]
ORDER_ROWS = [
    ("Ana", ["a", "b"], 1, True, 10.0),
    ("Luis", None, 2, False, 2.5),
    (None, None, 3, True, 4.0),
]


def columns(con, query: str, params=None) -> list[tuple[str, str]]:
    rel = con.execute(query, params) if params is not None else con.execute(query)
    return [(name, str(ty)) for name, ty, *_ in rel.description]


def test_install_by_name_and_load(con, repository: Path, extension_dir: Path):
    row = con.execute(
        "SELECT loaded, installed, install_path, installed_from FROM duckdb_extensions() WHERE extension_name = ?",
        [EXTENSION_NAME],
    ).fetchone()
    assert row is not None, "schema_sanitizer is not listed by duckdb_extensions()"
    loaded, installed, install_path, installed_from = row
    assert loaded and installed
    assert Path(install_path).is_relative_to(extension_dir), install_path
    assert Path(install_path).is_file()
    assert installed_from == str(repository)
    functions = {
        name
        for (name,) in con.execute(
            "SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_name LIKE 'sanitize%'"
        ).fetchall()
    }
    assert {"sanitize_jsonl", "sanitize_probe", "sanitize_registry"} <= functions
    # Only registered with SCHEMA_SANITIZER_PANIC_PROBE=1 at LOAD time.
    assert "sanitize_debug_panic" not in functions


def test_events_example_columns_and_types(con, repo_root: Path):
    path = repo_root / "examples" / "events.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == EVENTS, "examples/events.jsonl changed: update EVENTS and the expectations"
    query = f"SELECT * FROM sanitize_jsonl({sql_literal(str(path))})"
    rel = con.execute(query)
    types = {name: ty for name, ty, *_ in rel.description}
    # event_id: integers; "User Name": strings and null; amount: 12, 7.5, 3 make
    # a DOUBLE and "unknown" a second, string version; tags: lists of strings and
    # a bare string (wrapped into the list); device: objects whose "version" is
    # once an integer and once a string.
    assert list(types) == [
        "amount", "amount_v2_string", "device", "eventid", "tags", "username",
        *[name for name, _ in ETL_COLUMNS],
    ]
    assert types["amount"] == "DOUBLE"
    assert types["amount_v2_string"] == "VARCHAR"
    assert types["device"] == duckdb.struct_type({"os": "VARCHAR", "version": "BIGINT", "version_v2_string": "VARCHAR"})
    assert types["eventid"] == "BIGINT"
    assert types["tags"] == duckdb.list_type("VARCHAR")
    assert types["username"] == "VARCHAR"
    for name, ty in ETL_COLUMNS:
        assert types[name] == ty, name

    rows = con.execute(
        f"SELECT eventid, username, amount, amount_v2_string, tags, device FROM sanitize_jsonl({sql_literal(str(path))}) ORDER BY eventid"
    ).fetchall()
    assert rows == [
        (1, "ana", 12.0, None, ["new"], {"os": "ios", "version": 17, "version_v2_string": None}),
        (2, "luis", 7.5, None, None, {"os": "android", "version": None, "version_v2_string": None}),
        (3, "marta", None, "unknown", ["vip"], {"os": "web", "version": None, "version_v2_string": "beta"}),
        (4, None, 3.0, None, None, None),
    ]


def test_fetchall_exact_rows_and_etl_columns(con, tmp_path: Path, write_jsonl):
    path = write_jsonl(tmp_path / "orders.jsonl", ORDERS)
    before = datetime.now(timezone.utc)
    result = con.execute(f"SELECT * FROM sanitize_jsonl({sql_literal(str(path))})")
    cols = [(name, str(ty)) for name, ty, *_ in result.description]
    rows = result.fetchall()
    after = datetime.now(timezone.utc)

    assert cols == ORDER_COLUMNS + ETL_COLUMNS
    n = len(ORDER_COLUMNS)
    assert [row[:n] for row in rows] == ORDER_ROWS
    assert all(row[n] == str(path) for row in rows)

    stamps = {row[n + 1] for row in rows}
    assert len(stamps) == 1, "every row of one scan carries the same ingestion_timestamp"
    (stamp,) = stamps
    assert stamp.utcoffset() == timedelta(0)
    assert before - timedelta(seconds=1) <= stamp <= after + timedelta(seconds=1)

    registry_col = [row[n + 2] for row in rows]
    drifts_col = [row[n + 3] for row in rows]
    assert registry_col[0] is not None and drifts_col[0] is not None
    assert registry_col[1:] == [None] * (len(rows) - 1)
    assert drifts_col[1:] == [None] * (len(rows) - 1)

    registry = json.loads(registry_col[0])
    assert registry["schema_generation"] == 1
    assert registry["field_name_policy"] == "lower_alpha"
    fields = {f["name"]: f for f in registry["canonical_schema"]["fields"]}
    assert list(fields) == [name for name, _ in ORDER_COLUMNS]
    assert {name: f["source_key"] for name, f in fields.items()} == {
        "customername": "Customer Name", "items": "items", "orderid": "Order ID", "paid": "paid", "price": "price",
    }
    assert fields["price"]["type"] == {"kind": "double"}
    assert fields["items"]["type"] == {"kind": "list", "element": {"kind": "string"}}

    drifts = json.loads(drifts_col[0])
    assert isinstance(drifts, list)
    assert sorted((d["drift_type"], d["output_name"], d["source_key"]) for d in drifts) == [
        ("field_added", "customername", "Customer Name"),
        ("field_added", "items", "items"),
        ("field_added", "orderid", "Order ID"),
        ("field_added", "paid", "paid"),
        ("field_added", "price", "price"),
    ]


def test_arrow(con, tmp_path: Path, write_jsonl):
    pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed (scripts/requirements-test.txt pins it)")
    path = write_jsonl(tmp_path / "orders.jsonl", ORDERS)
    # The Arrow time zone of a TIMESTAMPTZ is the session's TimeZone; pin it.
    con.execute("SET TimeZone = 'UTC'")
    # A relation's .arrow() exists in every client this project tests (the
    # connection's result .arrow() is gone in DuckDB 2.0).
    result = con.sql(f"SELECT * FROM sanitize_jsonl({sql_literal(str(path))})").arrow()
    table = result.read_all() if isinstance(result, pa.RecordBatchReader) else result
    assert table.num_rows == len(ORDERS)
    assert table.schema.names == [name for name, _ in ORDER_COLUMNS + ETL_COLUMNS]
    assert table.schema.field("ingestion_timestamp").type == pa.timestamp("us", tz="UTC")
    assert table.schema.field("orderid").type == pa.int64()
    assert table.schema.field("price").type == pa.float64()
    assert table.schema.field("paid").type == pa.bool_()
    assert pa.types.is_list(table.schema.field("items").type)
    assert table.column("orderid").to_pylist() == [r[2] for r in ORDER_ROWS]
    assert table.column("price").to_pylist() == [r[4] for r in ORDER_ROWS]
    assert table.column("items").to_pylist() == [r[1] for r in ORDER_ROWS]
    assert table.column("schema_registry").null_count == len(ORDERS) - 1


@pytest.mark.parametrize("how", ["prepared_parameter", "string_literal"])
def test_registry_round_trip_opens_a_new_version(con, tmp_path: Path, write_jsonl, how: str):
    first = write_jsonl(tmp_path / "day1.jsonl", [{"id": 1, "amount": 5}, {"id": 2, "amount": 7}])
    second = write_jsonl(tmp_path / "day2.jsonl", [{"id": 3, "amount": "n/a"}, {"id": 4, "amount": 9}])

    day1 = con.execute(f"SELECT amount, id, schema_registry FROM sanitize_jsonl({sql_literal(str(first))})").fetchall()
    assert [r[:2] for r in day1] == [(5, 1), (7, 2)]
    registry1 = day1[0][2]
    assert json.loads(registry1)["schema_generation"] == 1

    if how == "prepared_parameter":
        query, params = f"SELECT * FROM sanitize_jsonl({sql_literal(str(second))}, registry := ?)", [registry1]
    else:
        query, params = f"SELECT * FROM sanitize_jsonl({sql_literal(str(second))}, registry := {sql_literal(registry1)})", None
    result = con.execute(query, params) if params is not None else con.execute(query)
    cols = [(name, str(ty)) for name, ty, *_ in result.description]
    rows = result.fetchall()

    # amount was established as an integer by day 1: day 2's string opens
    # version 2 next to it instead of changing its type.
    assert cols[:3] == [("amount", "BIGINT"), ("amount_v2_string", "VARCHAR"), ("id", "BIGINT")]
    assert [r[:3] for r in rows] == [(None, "n/a", 3), (9, None, 4)]
    registry2 = json.loads(rows[0][-2])
    assert registry2["schema_generation"] == 2
    amount_fields = [(f["name"], f["version"], f["type"]["kind"]) for f in registry2["canonical_schema"]["fields"] if f["source_key"] == "amount"]
    assert amount_fields == [("amount", 1, "int64"), ("amount_v2_string", 2, "string")]
    drifts = json.loads(rows[0][-1])
    assert [(d["drift_type"], d["output_name"], d["previous_schema"], d["new_schema"]) for d in drifts] == [
        ("new_version_generated", "amount_v2_string", "int64", "string"),
    ]

    # Without the registry the same file is a first run: no version 2.
    fresh = columns(con, f"SELECT * FROM sanitize_jsonl({sql_literal(str(second))})")
    assert "amount_v2_string" not in [name for name, _ in fresh]


def test_sanitize_registry_and_probe(con, tmp_path: Path, write_jsonl):
    empty = json.loads(con.execute("SELECT sanitize_registry()").fetchone()[0])
    assert empty["schema_generation"] == 0
    assert empty["canonical_schema"]["fields"] == []

    path = write_jsonl(tmp_path / "orders.jsonl", ORDERS)
    scan_registry = con.execute(f"SELECT schema_registry FROM sanitize_jsonl({sql_literal(str(path))}) LIMIT 1").fetchone()[0]
    canonical = con.execute("SELECT sanitize_registry(?)", [scan_registry]).fetchone()[0]
    assert json.loads(canonical) == json.loads(scan_registry)

    probe = con.execute(f"SELECT * FROM sanitize_probe({sql_literal(str(path))}, input_format := 'jsonl')")
    assert [d[0] for d in probe.description] == ["schema_registry", "schema_drifts", "stats"]
    probe_rows = probe.fetchall()
    assert len(probe_rows) == 1
    registry, drifts, stats = probe_rows[0]
    assert json.loads(registry) == json.loads(scan_registry)
    assert len(json.loads(drifts)) == len(ORDER_COLUMNS)
    stats = json.loads(stats)
    assert stats["rows_read"] == len(ORDERS)
    assert stats["rows_emitted"] == len(ORDERS)

    with pytest.raises(duckdb.Error, match="not valid JSON"):
        con.execute("SELECT sanitize_registry('nope')").fetchall()


def test_load_by_file_path(extension_file: Path, extension_dir: Path, tmp_path: Path, write_jsonl):
    path = write_jsonl(tmp_path / "t.jsonl", [{"A b": 1}, {"A b": 2}])
    with duckdb.connect(config={"allow_unsigned_extensions": "true"}) as con:
        con.execute(f"SET extension_directory = {sql_literal(str(extension_dir))}")
        con.execute(f"LOAD {sql_literal(str(extension_file))}")
        loaded = con.execute(
            "SELECT loaded FROM duckdb_extensions() WHERE extension_name = ?", [EXTENSION_NAME]
        ).fetchone()
        assert loaded == (True,)
        assert con.execute(f"SELECT ab FROM sanitize_jsonl({sql_literal(str(path))})").fetchall() == [(1,), (2,)]


def test_unsigned_extension_is_refused_without_the_setting(extension_file: Path, extension_dir: Path):
    with duckdb.connect() as con:
        con.execute(f"SET extension_directory = {sql_literal(str(extension_dir))}")
        with pytest.raises(duckdb.Error):
            con.execute(f"LOAD {sql_literal(str(extension_file))}")


@pytest.mark.parametrize(
    "function, file, extra, needles",
    [
        ("sanitize_jsonl", "x.ndjson", "", ["sanitize_jsonl", ".jsonl", ".ndjson"]),
        ("sanitize_jsonl", "missing.jsonl", "", ["sanitize_jsonl", "missing.jsonl"]),
        ("sanitize_jsonl", "t.jsonl", ", on_error := 'ignore'", ["sanitize_jsonl", "on_error", "'ignore'"]),
        ("sanitize_probe", "t.jsonl", "", ["sanitize_probe", "input_format"]),
    ],
)
def test_errors_name_the_function_and_the_problem(con, tmp_path: Path, write_jsonl, function, file, extra, needles):
    write_jsonl(tmp_path / "t.jsonl", [{"a": 1}])
    write_jsonl(tmp_path / "x.ndjson", [{"a": 1}])  # exists: only its extension is wrong
    with pytest.raises(duckdb.Error) as info:
        con.execute(f"SELECT * FROM {function}({sql_literal(str(tmp_path / file))}{extra})").fetchall()
    for needle in needles:
        assert needle in str(info.value)
    # The connection keeps working after the error.
    assert con.execute("SELECT 41 + 1").fetchone() == (42,)
