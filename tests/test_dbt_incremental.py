"""dbt-duckdb incremental runs that lose nothing (docs/dbt.md).

The example project examples/dbt is copied to tmp_path and run for two days
with its own profiles.yml (the extension INSTALLed by name from
build/repository). Day 2 has nested drift (`device.os` an integer instead of
a string, a new `device.model`, a new field in the structs of the `items`
list and in the nested `device.screen`), a new top-level field and a type
change of a top-level field (`amount`). After each run, every value of every
source record must be in the relation, at the place the registry maps its
source path to, with nothing added: checked for the `events` view (one
Parquet file per day, unioned by name) and the `events_table` incremental
table (sanitizer_widen strategy). A plain incremental model, added to the
copy only, shows the loss the example avoids: DuckDB's INSERT drops the new
struct fields without an error.
"""
from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from conftest import EXTENSION_NAME, sql_literal

DAY1 = [
    {"id": 1, "Customer Name": "Ana", "amount": 10, "device": {"os": "ios", "screen": {"w": 1170, "h": 2532}},
     "items": [{"sku": "a1", "qty": 1}], "tags": ["new"]},
    {"id": 2, "Customer Name": "Luis", "amount": 25, "device": {"os": "android"},
     "items": [{"sku": "b2", "qty": 3}, {"sku": "c3", "qty": 1}]},
    {"id": 3, "Customer Name": None, "amount": 7, "device": {"os": "web", "screen": {"w": 1920, "h": 1080}}},
]
DAY2 = [
    # device.os an integer, a new device.model, a new field in device.screen and
    # in the items' structs, amount a string, a new top-level field.
    {"id": 4, "Customer Name": "Marta", "amount": "12.50 EUR",
     "device": {"os": 17, "model": "pixel 8", "screen": {"w": 1080, "h": 2400, "dpi": 420.5}},
     "items": [{"sku": "d4", "qty": 2, "gift": True}], "country": "PT"},
    {"id": 5, "Customer Name": "Joao", "amount": 40, "device": {"os": "ios", "model": "iphone 15"},
     "tags": ["vip", "b2b"], "country": "ES"},
    {"id": 6, "Customer Name": "Rui", "amount": "n/a", "device": {"os": 18},
     "items": [{"sku": "e5", "qty": 1}, {"sku": "f6", "qty": 4, "gift": False}]},
]
DAYS = [("2026-07-01", DAY1), ("2026-07-02", DAY2)]

# A plain incremental model, the way a user writes it: the registry
# carried, on_schema_change='append_new_columns'. Only in the test's copy.
NAIVE_MODEL = """\
{{ config(materialized='incremental', on_schema_change='append_new_columns') }}
select * from sanitize_jsonl(
    {{ sanitizer_literal(sanitizer_source_path()) }},
    registry := {{ sanitizer_registry_in(this) if is_incremental() else 'NULL' }})
"""

ETL_COLUMNS = {"source_file", "ingestion_timestamp", "schema_registry", "schema_drifts"}


@pytest.fixture(scope="module")
def dbt_command() -> list[str]:
    if importlib.util.find_spec("dbt.adapters.duckdb") is None:
        pytest.fail(
            "dbt-duckdb is not installed in this venv; it is pinned in scripts/requirements-test.txt "
            "(run `bash scripts/setup.sh`)",
            pytrace=False,
        )
    dbt = Path(sys.executable).parent / "dbt"
    return [str(dbt)] if dbt.is_file() else [sys.executable, "-m", "dbt.cli.main"]


# ---- the check: every source value, at its place, and nothing else ----------

def _tagged(value):
    """A scalar with its JSON kind, so that True never equals 1 and "17" never equals 17."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        return ("number", value)
    return ("string", value)


def source_leaves(value, path=()):
    """(source path, value) of every scalar of a JSON document. null, [] and {}
    carry no value (docs/engine.md: they are NULL in the output)."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield from source_leaves(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from source_leaves(child, (*path, index))
    elif value is not None:
        yield path, _tagged(value)


def row_leaves(value: dict, fields: list, path=()):
    """(source path, value) of every non-NULL scalar of a row or struct, each
    output name mapped back to its source key by the registry's
    canonical_schema (every version of a family maps to the same key)."""
    for field in fields:
        yield from _typed_leaves(value.get(field["name"]), field["type"], (*path, field["source_key"]))


def _typed_leaves(value, type_, path):
    if value is None:
        return
    if type_["kind"] == "struct":
        yield from row_leaves(value, type_["fields"], path)
    elif type_["kind"] == "list":
        for index, element in enumerate(value):
            yield from _typed_leaves(element, type_["element"], (*path, index))
    else:
        yield path, _tagged(value)


def losses(rows: list[dict], records_by_id: dict, registry: dict) -> dict:
    """{id: (missing source leaves, unexpected row leaves)} for every record
    whose row does not hold exactly its values; a missing row misses them all."""
    fields = registry["canonical_schema"]["fields"]
    by_id = {row["id"]: row for row in rows}
    found = {}
    for record_id, record in records_by_id.items():
        expected = dict(source_leaves(record))
        row = by_id.get(record_id)
        actual_list = list(row_leaves(row, fields)) if row is not None else []
        actual = dict(actual_list)
        # Two versions of one family both holding a value would be a duplicate path.
        assert len(actual) == len(actual_list), f"row {record_id}: one source value in two columns: {actual_list}"
        missing = {p: v for p, v in expected.items() if actual.get(p) != v}
        unexpected = {p: v for p, v in actual.items() if expected.get(p) != v}
        if missing or unexpected:
            found[record_id] = (missing, unexpected)
    return found


def newest_registry(con: duckdb.DuckDBPyConnection, relation_sql: str) -> dict:
    text = con.execute(
        f"SELECT schema_registry FROM {relation_sql} WHERE schema_registry IS NOT NULL "
        "ORDER BY json_extract(schema_registry, '$.schema_generation')::BIGINT DESC, ingestion_timestamp DESC LIMIT 1"
    ).fetchone()[0]
    return json.loads(text)


def fetch_rows(con: duckdb.DuckDBPyConnection, relation: str) -> list[dict]:
    result = con.execute(f"SELECT * FROM {relation} ORDER BY id")
    names = [d[0] for d in result.description]
    return [dict(zip(names, row)) for row in result.fetchall()]


def column_types(con: duckdb.DuckDBPyConnection, relation: str) -> dict[str, str]:
    return {name: ty for name, ty, *_ in con.execute(f"DESCRIBE {relation}").fetchall()}


# ---- the runs ----------------------------------------------------------------

def test_daily_runs_keep_every_value(dbt_command, repo_root, repository, extension_dir, tmp_path, write_jsonl,
                                     subprocess_env):
    project = tmp_path / "project"
    shutil.copytree(repo_root / "examples" / "dbt", project,
                    ignore=shutil.ignore_patterns("target", "logs", "dbt_packages", "*.duckdb", "*.parquet"))
    (project / "models" / "events_naive.sql").write_text(NAIVE_MODEL)
    silver = tmp_path / "silver"
    silver.mkdir()
    database = tmp_path / "warehouse.duckdb"
    sources = {day: write_jsonl(tmp_path / "bronze" / f"events_{day}.jsonl", records) for day, records in DAYS}

    env = dict(subprocess_env, DBT_SEND_ANONYMOUS_USAGE_STATS="false", DO_NOT_TRACK="1",
               DBT_PROFILES_DIR=str(project),
               SANITIZER_DBT_DATABASE=str(database),
               SANITIZER_EXTENSION_REPOSITORY=str(repository),
               SANITIZER_EXTENSION_DIRECTORY=str(extension_dir))

    def dbt_run(day: str) -> None:
        variables = {"day": day, "source_path": str(sources[day]), "silver_dir": str(silver)}
        started = time.monotonic()
        proc = subprocess.run(
            [*dbt_command, "--no-send-anonymous-usage-stats", "--no-version-check", "run",
             "--project-dir", str(project), "--vars", json.dumps(variables)],
            cwd=project, capture_output=True, text=True, env=env, timeout=600,
        )
        assert proc.returncode == 0, (
            f"dbt run for {day} failed ({proc.returncode}, {time.monotonic() - started:.1f} s)\n"
            f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
        results = json.loads((project / "target" / "run_results.json").read_text())["results"]
        assert sorted((r["unique_id"], r["status"]) for r in results) == [
            ("model.schema_sanitizer_example.events", "success"),
            ("model.schema_sanitizer_example.events_day", "success"),
            ("model.schema_sanitizer_example.events_naive", "success"),
            ("model.schema_sanitizer_example.events_table", "success"),
        ]

    # ---- day 1 ----
    dbt_run("2026-07-01")
    assert list(extension_dir.rglob(f"{EXTENSION_NAME}.duckdb_extension")), "the profile did not install the extension"
    day1_ids = {r["id"]: r for r in DAY1}
    with duckdb.connect(str(database), read_only=True) as con:
        registry = newest_registry(con, "main.events_table")
        for relation in ("main.events", "main.events_table", "main.events_naive"):
            assert losses(fetch_rows(con, relation), day1_ids, registry) == {}, relation

    # ---- day 2: nested drift, a new field, a type change ----
    dbt_run("2026-07-02")
    all_ids = {r["id"]: r for _, records in DAYS for r in records}
    files = sorted(p.name for p in silver.glob("*.parquet"))
    assert files == ["events_2026-07-01.parquet", "events_2026-07-02.parquet"]

    def check_day2(con: duckdb.DuckDBPyConnection) -> None:
        kinds = dict(con.execute(
            "SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'main'").fetchall())
        assert kinds["events"] == "VIEW" and kinds["events_table"] == "BASE TABLE"

        # The registry was carried into day 2: the string `os` of day 1 kept its
        # name and type, the integers got a version; amount likewise.
        files_registry = newest_registry(
            con, f"read_parquet({sql_literal(str(silver / '*.parquet'))}, union_by_name = true)")
        table_registry = newest_registry(con, "main.events_table")
        for registry in (files_registry, table_registry):
            assert registry["schema_generation"] == 2
            device = next(f for f in registry["canonical_schema"]["fields"] if f["name"] == "device")
            os_versions = [(f["name"], f["type"]["kind"]) for f in device["type"]["fields"] if f["source_key"] == "os"]
            assert os_versions == [("os", "string"), ("os_v2_integer", "int64")]

        for relation, registry in (("main.events", files_registry), ("main.events_table", table_registry)):
            types = column_types(con, relation)
            assert types["amount"] == "BIGINT" and types["amount_v2_string"] == "VARCHAR", types
            assert types["country"] == "VARCHAR", types
            for piece in ("os VARCHAR", "os_v2_integer BIGINT", "model VARCHAR", "dpi DOUBLE"):
                assert piece in types["device"], (relation, types["device"])
            assert "gift BOOLEAN" in types["items"], (relation, types["items"])
            rows = fetch_rows(con, relation)
            assert sorted(row["id"] for row in rows) == sorted(all_ids), relation
            assert losses(rows, all_ids, registry) == {}, relation
            for day, records in DAYS:
                ids = {r["id"] for r in records}
                assert {row["source_file"] for row in rows if row["id"] in ids} == {str(sources[day])}
            assert all(row["ingestion_timestamp"] is not None for row in rows)
            by_id = {row["id"]: row for row in rows}
            # Spot checks of the nested values, read directly.
            assert by_id[4]["device"]["os_v2_integer"] == 17 and by_id[4]["device"]["os"] is None
            assert by_id[4]["device"]["model"] == "pixel 8" and by_id[4]["device"]["screen"]["dpi"] == 420.5
            assert by_id[1]["device"]["os"] == "ios" and by_id[1]["device"]["model"] is None
            assert by_id[4]["amount_v2_string"] == "12.50 EUR" and by_id[4]["amount"] is None

        # The plain incremental model kept STRUCT(os, screen) for device and
        # lost day 2's nested values without an error.
        naive_types = column_types(con, "main.events_naive")
        assert "model" not in naive_types["device"] and "os_v2_integer" not in naive_types["device"]
        naive = losses(fetch_rows(con, "main.events_naive"), all_ids, table_registry)
        assert set(naive) == {4, 5, 6}, naive
        missing_4 = naive[4][0]
        assert missing_4[("device", "os")] == ("number", 17)
        assert missing_4[("device", "model")] == ("string", "pixel 8")
        assert missing_4[("items", 0, "gift")] == ("bool", True)
        assert missing_4[("device", "screen", "dpi")] == ("number", 420.5)

    with duckdb.connect(str(database), read_only=True) as con:
        check_day2(con)

    # ---- day 2 again: a re-run replaces the day, it does not duplicate it ----
    dbt_run("2026-07-02")
    with duckdb.connect(str(database), read_only=True) as con:
        for relation in ("main.events", "main.events_table"):
            assert con.execute(f"SELECT count(*) FROM {relation}").fetchone()[0] == len(all_ids), relation
        for relation, registry_sql in (
            ("main.events", f"read_parquet({sql_literal(str(silver / '*.parquet'))}, union_by_name = true)"),
            ("main.events_table", "main.events_table"),
        ):
            assert losses(fetch_rows(con, relation), all_ids, newest_registry(con, registry_sql)) == {}, relation
